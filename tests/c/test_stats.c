/*
 * Statistics: a known sequence of operations gives exact local counters,
 * the global counters are their sum over the communicator, reset zeroes
 * the local ones, and every counter has a name and a description.
 */
#include "test_util.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank(), size = test_size();

    for (int i = 0; i < MPIDHT_STATS_COUNT; ++i) {
        CHECK(mpidht_stats_name(i) && *mpidht_stats_name(i));
        CHECK(mpidht_stats_description(i) && *mpidht_stats_description(i));
    }
    CHECK(mpidht_stats_name(-1) == NULL && mpidht_stats_name(MPIDHT_STATS_COUNT) == NULL);
    CHECK(strcmp(mpidht_stats_name(0), "reads") == 0);

    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        mpidht_params_t params = test_params(test_protocols[p], 8, 8, 64 * 1024);
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        unsigned char key[8], value[8];
        for (uint64_t i = 0; i < 3; ++i) {
            test_fill(key, 8, (uint64_t)rank * 10 + i, 0);
            CHECK_OK(mpidht_write(table, key, key, NULL));
        }
        CHECK_OK(mpidht_write(table, key, key, NULL)); /* update */
        MPI_Barrier(MPI_COMM_WORLD);
        for (uint64_t i = 0; i < 4; ++i) {
            test_fill(key, 8, (uint64_t)rank * 10 + i % 3, 0);
            CHECK_OK(mpidht_read(table, key, value));
        }
        test_fill(key, 8, 1000000 + (uint64_t)rank, 0);
        CHECK_STATUS(mpidht_read(table, key, value), MPIDHT_NOT_FOUND);
        CHECK_STATUS(mpidht_read(table, key, value), MPIDHT_NOT_FOUND);
        CHECK_STATUS(mpidht_remove(table, key), MPIDHT_NOT_FOUND);
        test_fill(key, 8, (uint64_t)rank * 10, 0);
        CHECK_OK(mpidht_remove(table, key));

        mpidht_stats_t local = MPIDHT_STATS_INIT, global = MPIDHT_STATS_INIT;
        CHECK_OK(mpidht_stats_local(table, &local));
        CHECK(local.reads == 6 && local.hits == 4 && local.misses == 2);
        CHECK(local.writes == 4 && local.updates == 1 && local.evictions == 0);
        CHECK(local.removes == 1);
        CHECK(local.checksum_retries == 0 && local.timeouts == 0 && local.atomic_updates == 0);
        CHECK(mpidht_stats_value(&local, 0) == local.reads);
        CHECK(mpidht_stats_value(&local, MPIDHT_STATS_COUNT) == 0);
        CHECK(mpidht_stats_value(NULL, 0) == 0);

        CHECK_OK(mpidht_stats_global(table, &global));
        for (int i = 0; i < MPIDHT_STATS_COUNT; ++i) {
            uint64_t mine = mpidht_stats_value(&local, i), sum = 0;
            MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
            CHECK(mpidht_stats_value(&global, i) == sum);
        }
        CHECK(global.reads == 6u * (uint64_t)size);

        CHECK_OK(mpidht_stats_reset(table));
        CHECK_OK(mpidht_stats_local(table, &local));
        for (int i = 0; i < MPIDHT_STATS_COUNT; ++i)
            CHECK(mpidht_stats_value(&local, i) == 0);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
