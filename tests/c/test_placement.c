/*
 * Placement by capacity: keys are spread over the processes in proportion
 * to the buckets each one hosts, so a table of very uneven budgets (and
 * processes hosting nothing) fills evenly. At 10 % load every key written
 * is read back, no write evicts, and no process is filled much beyond the
 * average.
 *
 * Budgets, by rank modulo 4: 1x, 100x, nothing, 25x a small unit (one
 * process alone hosts 1x).
 */
#include "test_util.h"

enum { KEY_SIZE = 24, VALUE_SIZE = 40 };

static const uint64_t factor[4] = {1, 100, 0, 25};

static void run(mpidht_protocol_t protocol, size_t unit_buckets)
{
    int rank = test_rank(), size = test_size();
    mpidht_params_t p = test_params(protocol, KEY_SIZE, VALUE_SIZE, 0);
    size_t bucket = 0;
    CHECK_OK(mpidht_bucket_size(&p, &bucket));
    p.memory_per_process = size == 1 ? unit_buckets * bucket
                                     : factor[rank % 4] * unit_buckets * bucket;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    CHECK(info.local_buckets == p.memory_per_process / bucket);

    /* 10 % of all buckets, every rank writing its share at once. */
    uint64_t keys = info.total_buckets / 10;
    uint64_t mine_first = keys * (uint64_t)rank / (uint64_t)size;
    uint64_t mine_end = keys * (uint64_t)(rank + 1) / (uint64_t)size;
    unsigned char key[KEY_SIZE], value[VALUE_SIZE], got[VALUE_SIZE];
    TEST_CONTEXT("%s: writing %" PRIu64 " keys into %" PRIu64 " buckets",
                 mpidht_protocol_name(protocol), keys, info.total_buckets);
    for (uint64_t id = mine_first; id < mine_end; ++id) {
        mpidht_write_outcome_t outcome;
        test_fill(key, KEY_SIZE, id, 11);
        test_fill(value, VALUE_SIZE, id, 12);
        CHECK_OK(mpidht_write(table, key, value, &outcome));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpidht_stats_t total = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_global(table, &total));
    CHECK(total.writes == keys);
    CHECK(total.evictions == 0);

    /* Every key reads back, from every rank's share. */
    TEST_CONTEXT("%s: reading back", mpidht_protocol_name(protocol));
    for (uint64_t id = mine_first; id < mine_end; ++id) {
        uint64_t other = (id * 7919 + (uint64_t)rank) % keys;
        test_fill(key, KEY_SIZE, other, 11);
        CHECK_OK(mpidht_read(table, key, got));
        test_fill(value, VALUE_SIZE, other, 12);
        CHECK(memcmp(got, value, VALUE_SIZE) == 0);
    }

    /* Each hosting process holds about its share: count its entries. */
    uint64_t cursor = 0, entries = 0;
    size_t count = 0;
    unsigned char keys_out[64][KEY_SIZE], values_out[64][VALUE_SIZE];
    do {
        CHECK_OK(mpidht_local_next(table, &cursor, 64, keys_out, values_out, &count));
        entries += count;
    } while (count > 0);
    uint64_t all = 0;
    MPI_Allreduce(&entries, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all == keys);
    if (info.local_buckets == 0) {
        CHECK(entries == 0);
    } else {
        /* Expected load 10 %: no process above 20 % of its buckets, and
         * one with at least 100 buckets not below 4 %. */
        double load = (double)entries / (double)info.local_buckets;
        TEST_CONTEXT("%s: rank %d holds %" PRIu64 " entries in %" PRIu64 " buckets",
                     mpidht_protocol_name(protocol), rank, entries, info.local_buckets);
        CHECK(load <= 0.2);
        CHECK(info.local_buckets < 100 || load >= 0.04);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p)
        run(test_protocols[p], (size_t)test_scaled(200, 100));
    MPI_Finalize();
    return 0;
}
