/*
 * Remove: a removed key reads as a miss, removing it again reports
 * MPIDHT_NOT_FOUND, other keys are untouched, and the key can be written
 * again afterwards. Ranks remove each other's keys.
 */
#include "test_util.h"

enum { KEYS = 40 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank(), size = test_size();
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        mpidht_params_t params = test_params(test_protocols[p], 12, 20, 64 * 1024);
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        unsigned char key[12], value[20], out[20];
        for (uint64_t i = 0; i < KEYS; ++i) {
            test_fill(key, 12, (uint64_t)rank * KEYS + i, 1);
            test_fill(value, 20, (uint64_t)rank * KEYS + i, 2);
            CHECK_OK(mpidht_write(table, key, value, NULL));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* Remove the even keys of the next rank. */
        int other = (rank + 1) % size;
        for (uint64_t i = 0; i < KEYS; i += 2) {
            test_fill(key, 12, (uint64_t)other * KEYS + i, 1);
            CHECK_OK(mpidht_remove(table, key));
            CHECK_STATUS(mpidht_remove(table, key), MPIDHT_NOT_FOUND);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (uint64_t i = 0; i < KEYS; ++i) {
            uint64_t id = (uint64_t)rank * KEYS + i;
            test_fill(key, 12, id, 1);
            if (i % 2 == 0) {
                CHECK_STATUS(mpidht_read(table, key, out), MPIDHT_NOT_FOUND);
                test_fill(value, 20, id, 3);
                mpidht_write_outcome_t outcome;
                CHECK_OK(mpidht_write(table, key, value, &outcome));
                CHECK(outcome == MPIDHT_WRITE_INSERTED);
                CHECK_OK(mpidht_read(table, key, out));
                CHECK(memcmp(out, value, 20) == 0);
            } else {
                test_fill(value, 20, id, 2);
                CHECK_OK(mpidht_read(table, key, out));
                CHECK(memcmp(out, value, 20) == 0);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        test_fill(key, 12, UINT64_C(1) << 40, 1);
        CHECK_STATUS(mpidht_remove(table, key), MPIDHT_NOT_FOUND);
        mpidht_stats_t st = MPIDHT_STATS_INIT;
        CHECK_OK(mpidht_stats_local(table, &st));
        CHECK(st.removes == KEYS / 2);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
