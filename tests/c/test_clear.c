/*
 * mpidht_clear empties the whole table on every process: afterwards every
 * read misses, local iteration finds nothing, the table takes new entries
 * as before, and the statistics are kept.
 */
#include "test_util.h"

enum { KEY_SIZE = 12, VALUE_SIZE = 20 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank(), size = test_size();
    const uint64_t keys = test_scaled(300, 30); /* per rank; fewer under MPICH */
    CHECK_STATUS(mpidht_clear(NULL), MPIDHT_ERR_INVALID_HANDLE);
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("%s", mpidht_protocol_name(test_protocols[p]));
        mpidht_params_t params = test_params(test_protocols[p], KEY_SIZE, VALUE_SIZE,
                                             64 * 1024);
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        unsigned char key[KEY_SIZE], value[VALUE_SIZE];
        for (uint64_t i = 0; i < keys; ++i) {
            test_fill(key, KEY_SIZE, (uint64_t)rank * keys + i, 1);
            test_fill(value, VALUE_SIZE, i, 2);
            CHECK_OK(mpidht_write(table, key, value, NULL));
        }
        mpidht_stats_t before = MPIDHT_STATS_INIT, after = MPIDHT_STATS_INIT;
        CHECK_OK(mpidht_stats_local(table, &before));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_clear(table));
        CHECK_OK(mpidht_stats_local(table, &after));
        CHECK(after.writes == before.writes && after.reads == before.reads);
        for (uint64_t id = 0; id < (uint64_t)size * keys; ++id) {
            test_fill(key, KEY_SIZE, id, 1);
            CHECK_STATUS(mpidht_read(table, key, value), MPIDHT_NOT_FOUND);
        }
        uint64_t cursor = 0;
        size_t count = 1;
        unsigned char keys_out[8][KEY_SIZE], values_out[8][VALUE_SIZE];
        CHECK_OK(mpidht_local_next(table, &cursor, 8, keys_out, values_out, &count));
        CHECK(count == 0);
        MPI_Barrier(MPI_COMM_WORLD);
        mpidht_write_outcome_t outcome;
        test_fill(key, KEY_SIZE, (uint64_t)rank, 1);
        CHECK_OK(mpidht_write(table, key, value, &outcome));
        CHECK(outcome == MPIDHT_WRITE_INSERTED);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
