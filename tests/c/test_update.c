/*
 * In-place updates: rewriting a present key reports MPIDHT_WRITE_UPDATED
 * and replaces the value, whether the same or another rank rewrites it;
 * the table never holds two values for the key.
 */
#include "test_util.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank(), size = test_size();
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        mpidht_params_t params = test_params(test_protocols[p], 24, 48, 64 * 1024);
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        unsigned char key[24], v1[48], v2[48], out[48];
        mpidht_write_outcome_t outcome;

        test_fill(key, sizeof key, (uint64_t)rank, 10);
        test_fill(v1, sizeof v1, (uint64_t)rank, 11);
        test_fill(v2, sizeof v2, (uint64_t)rank, 12);
        CHECK_OK(mpidht_write(table, key, v1, &outcome));
        CHECK(outcome == MPIDHT_WRITE_INSERTED);
        CHECK_OK(mpidht_write(table, key, v2, &outcome));
        CHECK(outcome == MPIDHT_WRITE_UPDATED);
        CHECK_OK(mpidht_read(table, key, out));
        CHECK(memcmp(out, v2, sizeof out) == 0);
        CHECK_OK(mpidht_write(table, key, v2, NULL)); /* outcome optional */
        MPI_Barrier(MPI_COMM_WORLD);
        /* The next rank overwrites this rank's key, all at once: updates
         * land in the bucket that holds the key, so they cannot race. */
        int victim = (rank + 1) % size;
        unsigned char vkey[24], v3[48];
        test_fill(vkey, sizeof vkey, (uint64_t)victim, 10);
        test_fill(v3, sizeof v3, (uint64_t)victim, 13);
        CHECK_OK(mpidht_write(table, vkey, v3, &outcome));
        CHECK(outcome == MPIDHT_WRITE_UPDATED);
        MPI_Barrier(MPI_COMM_WORLD);
        unsigned char expect[48];
        test_fill(expect, sizeof expect, (uint64_t)rank, 13);
        CHECK_OK(mpidht_read(table, key, out));
        CHECK(memcmp(out, expect, sizeof out) == 0);

        /* Removing it once leaves no older copy behind. */
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_remove(table, key));
        CHECK_STATUS(mpidht_read(table, key, out), MPIDHT_NOT_FOUND);

        mpidht_stats_t st = MPIDHT_STATS_INIT;
        CHECK_OK(mpidht_stats_local(table, &st));
        CHECK(st.updates == 3);
        CHECK(st.writes == 4);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
