/*
 * Processes with a memory budget of 0 use the table without hosting any
 * of it: here rank 0 (a master, say) hosts nothing, writes and reads keys
 * that live on the others, and no key is ever placed on it. If no process
 * hosts anything, creation fails everywhere with MPIDHT_ERR_NO_STORAGE.
 */
#include "test_util.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank(), size = test_size();
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        mpidht_params_t params = test_params(test_protocols[p], 16, 32,
                                             rank == 0 ? 0 : 64 * 1024);
        mpidht_t *table = NULL;
        if (size == 1) {
            CHECK_STATUS(mpidht_create(MPI_COMM_WORLD, &params, &table),
                         MPIDHT_ERR_NO_STORAGE);
            CHECK(table == NULL);
            continue;
        }
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        mpidht_info_t info = MPIDHT_INFO_INIT;
        CHECK_OK(mpidht_get_info(table, &info));
        CHECK(info.hosting_processes == size - 1);
        CHECK((info.local_buckets == 0) == (rank == 0));

        unsigned char key[16], value[32], out[32];
        for (uint64_t i = 0; i < 50; ++i) {
            test_fill(key, 16, (uint64_t)rank * 100 + i, 3);
            test_fill(value, 32, (uint64_t)rank * 100 + i, 4);
            CHECK_OK(mpidht_write(table, key, value, NULL));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 0; r < size; ++r) {
            for (uint64_t i = 0; i < 50; ++i) {
                test_fill(key, 16, (uint64_t)r * 100 + i, 3);
                test_fill(value, 32, (uint64_t)r * 100 + i, 4);
                CHECK_OK(mpidht_read(table, key, out));
                CHECK(memcmp(out, value, 32) == 0);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
