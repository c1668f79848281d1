/*
 * A table used after MPI_Finalize (a caller's mistake: it should have
 * been freed before): every call that needs MPI or the table's window
 * returns MPIDHT_ERR_MPI_NOT_INITIALIZED, on every process, under every
 * protocol; none aborts, crashes or hangs. The calls that only read the
 * table's own fields (statistics, info) still answer, and mpidht_free
 * frees what is left of it (NULL afterwards) while saying MPI is gone.
 */
#include "test_util.h"

static mpidht_update_action_t keep(size_t index, const void *key, void *value, int present,
                                   void *user_data)
{
    (void)index;
    (void)key;
    (void)value;
    (void)present;
    (void)user_data;
    return MPIDHT_KEEP;
}

static void expect_refused(mpidht_t *table, const char *dump_path)
{
    const mpidht_status_t refused = MPIDHT_ERR_MPI_NOT_INITIALIZED;
    uint64_t key[2] = {1, 2}, value[2] = {0, 0}, cursor = 0;
    unsigned char found[2];
    mpidht_write_outcome_t written[2];
    mpidht_update_outcome_t updated[2];
    size_t count = 0;
    CHECK_STATUS(mpidht_read(table, key, value), refused);
    CHECK_STATUS(mpidht_write(table, key, value, NULL), refused);
    CHECK_STATUS(mpidht_remove(table, key), refused);
    CHECK_STATUS(mpidht_update(table, key, keep, NULL, NULL), refused);
    CHECK_STATUS(mpidht_read_batch(table, 2, key, value, found), refused);
    CHECK_STATUS(mpidht_write_batch(table, 2, key, value, written), refused);
    CHECK_STATUS(mpidht_update_batch(table, 2, key, keep, NULL, updated), refused);
    CHECK_STATUS(mpidht_progress(table), refused);
    CHECK_STATUS(mpidht_local_next(table, &cursor, 2, key, value, &count), refused);
    CHECK_STATUS(mpidht_dump(table, dump_path), refused);
    CHECK_STATUS(mpidht_restore(table, dump_path, NULL), refused);
    CHECK_STATUS(mpidht_clear(table), refused);
    mpidht_stats_t stats;
    stats.struct_size = sizeof stats;
    CHECK_STATUS(mpidht_stats_global(table, &stats), refused);

    CHECK_OK(mpidht_stats_local(table, &stats));
    CHECK_OK(mpidht_stats_reset(table));
    mpidht_info_t info;
    info.struct_size = sizeof info;
    CHECK_OK(mpidht_get_info(table, &info));
    /* Free says MPI is gone, and frees what is left (it kept the table,
     * which no call could free any more). */
    mpidht_t *gone = table;
    CHECK_STATUS(mpidht_free(&gone), refused);
    CHECK(gone == NULL);
    CHECK_STATUS(mpidht_free(&gone), MPIDHT_ERR_INVALID_HANDLE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mpidht_t *tables[TEST_PROTOCOL_COUNT];
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        mpidht_params_t params = test_params(test_protocols[p], 8, 8, 1 << 16);
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &tables[p]));
        uint64_t key = 1, value = 7;
        CHECK_OK(mpidht_write(tables[p], &key, &value, NULL));
    }
    MPI_Finalize();
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("protocol %s", mpidht_protocol_name(test_protocols[p]));
        expect_refused(tables[p], "after_finalize.mpidht");
    }
    return 0;
}
