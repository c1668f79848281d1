/*
 * A hash function that returns the same value for every key sends all
 * keys to the same few buckets of one process. The table must stay
 * correct, only slow: reads return the right value or a miss, never
 * another key's value, under concurrent writers; and a key just written
 * by the only writer is always found.
 */
#include "test_util.h"

enum { KEYS = 64 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank(), size = test_size();
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        mpidht_params_t params = test_params(test_protocols[p], 16, 16, 16 * 1024);
        params.hash = test_hash_constant;
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        unsigned char key[16], value[16], out[16];

        for (uint64_t i = 0; i < KEYS; ++i) {
            uint64_t id = (uint64_t)rank * KEYS + i;
            test_fill(key, 16, id, 1);
            test_fill(value, 16, id, 2);
            CHECK_OK(mpidht_write(table, key, value, NULL));
            uint64_t other = (uint64_t)((rank + 1) % size) * KEYS + i / 2;
            test_fill(key, 16, other, 1);
            mpidht_status_t st = mpidht_read(table, key, out);
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
            if (st == MPIDHT_OK) {
                test_fill(value, 16, other, 2);
                CHECK(memcmp(out, value, 16) == 0);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (uint64_t i = 0; i < KEYS; ++i) {
                test_fill(key, 16, 100000 + i, 1);
                test_fill(value, 16, 100000 + i, 2);
                CHECK_OK(mpidht_write(table, key, value, NULL));
                CHECK_OK(mpidht_read(table, key, out));
                CHECK(memcmp(out, value, 16) == 0);
            }
            mpidht_stats_t st = MPIDHT_STATS_INIT;
            CHECK_OK(mpidht_stats_local(table, &st));
            CHECK(st.evictions > 0);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
