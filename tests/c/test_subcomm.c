/*
 * Tables live on any intracommunicator: one on each half of
 * MPI_COMM_WORLD and one on MPI_COMM_SELF, all at once. Each holds only
 * what was written to it, and the caller may free its communicator right
 * after creation (the table keeps its own duplicate).
 */
#include "test_util.h"

static void put_and_check(mpidht_t *mine, mpidht_t *other, uint64_t base)
{
    unsigned char key[16], value[16], out[16];
    test_fill(key, 16, base, 1);
    test_fill(value, 16, base, 2);
    CHECK_OK(mpidht_write(mine, key, value, NULL));
    CHECK_OK(mpidht_read(mine, key, out));
    CHECK(memcmp(out, value, 16) == 0);
    CHECK_STATUS(mpidht_read(other, key, out), MPIDHT_NOT_FOUND);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank();
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("protocol %s", mpidht_protocol_name(test_protocols[p]));
        mpidht_params_t params = test_params(test_protocols[p], 16, 16, 8192);
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        mpidht_t *half_table = NULL, *self_table = NULL;
        CHECK_OK(mpidht_create(half, &params, &half_table));
        MPI_Comm_free(&half);
        CHECK_OK(mpidht_create(MPI_COMM_SELF, &params, &self_table));

        mpidht_info_t info = MPIDHT_INFO_INIT;
        CHECK_OK(mpidht_get_info(self_table, &info));
        CHECK(info.comm_size == 1 && info.hosting_processes == 1);

        /* Keys differ per rank and per table. */
        put_and_check(self_table, half_table, 1000 + (uint64_t)rank);
        put_and_check(half_table, self_table, 2000 + (uint64_t)rank);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&self_table));
        CHECK_OK(mpidht_free(&half_table));
    }
    MPI_Finalize();
    return 0;
}
