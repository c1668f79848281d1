/*
 * Outcomes are exact under hot-key torture: every rank writes, removes and
 * reads (writing the key where the read misses) a few keys at random in a
 * table of 8 to 16 buckets (few keys and no evictions, or many keys and
 * evictions all the time). Afterwards the
 * entries in the table, counted by local iteration, equal the inserts
 * minus the removes that every rank was told about; no key is stored
 * twice; every entry is whole.
 *
 * usage: test_entry_count coarse|fine|lockfree KEYS BUCKETS OPS
 * (OPS per rank, scaled by MPIDHT_TEST_SCALE)
 */
#include "test_util.h"

enum { KEY_SIZE = 16, VALUE_SIZE = 48 };

static void make_value(unsigned char *v, uint64_t id, uint64_t writer)
{
    test_fill(v, VALUE_SIZE, id, writer);
    memcpy(v, &id, sizeof id);
    memcpy(v + 8, &writer, sizeof writer);
}

static void check_value(const unsigned char *v, uint64_t id)
{
    uint64_t got_id, writer;
    unsigned char expect[VALUE_SIZE];
    memcpy(&got_id, v, sizeof got_id);
    memcpy(&writer, v + 8, sizeof writer);
    CHECK(got_id == id);
    make_value(expect, id, writer);
    CHECK(memcmp(v, expect, VALUE_SIZE) == 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 5);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    uint64_t keys = strtoull(argv[2], NULL, 10);
    uint64_t buckets = strtoull(argv[3], NULL, 10);
    uint64_t ops = test_scaled(strtoull(argv[4], NULL, 10), 200);
    int rank = test_rank(), size = test_size();
    CHECK(keys > 0 && buckets >= (uint64_t)size);

    mpidht_params_t p = test_params(protocol, KEY_SIZE, VALUE_SIZE, 0);
    size_t bucket = 0;
    CHECK_OK(mpidht_bucket_size(&p, &bucket));
    uint64_t mine = buckets * (uint64_t)(rank + 1) / (uint64_t)size -
                    buckets * (uint64_t)rank / (uint64_t)size;
    p.memory_per_process = mine * bucket;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));

    uint64_t state = (uint64_t)rank * 0x2545f4914f6cdd1du + 7, inserts = 0, removes = 0;
    unsigned char key[KEY_SIZE], value[VALUE_SIZE];
    for (uint64_t op = 0; op < ops; ++op) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        uint64_t id = (state >> 8) % keys, kind = state % 10;
        test_fill(key, KEY_SIZE, id, 4);
        TEST_CONTEXT("%s: op %" PRIu64 " on key %" PRIu64, argv[1], op, id);
        if (kind < 5) {
            mpidht_write_outcome_t outcome;
            make_value(value, id, (uint64_t)rank);
            CHECK_OK(mpidht_write(table, key, value, &outcome));
            inserts += outcome == MPIDHT_WRITE_INSERTED;
        } else if (kind < 8) {
            mpidht_status_t st = mpidht_remove(table, key);
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
            removes += st == MPIDHT_OK;
        } else {
            /* A read, and where it misses a write of the key (the way a
             * surrogate cache is filled: the write may go where the miss
             * looked, engine.h's read-for-insert, while other ranks write
             * and evict the same keys). */
            mpidht_status_t st = mpidht_read(table, key, value);
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
            if (st == MPIDHT_OK) {
                check_value(value, id);
            } else {
                mpidht_write_outcome_t outcome;
                make_value(value, id, (uint64_t)rank);
                CHECK_OK(mpidht_write(table, key, value, &outcome));
                inserts += outcome == MPIDHT_WRITE_INSERTED;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Count and check what each process hosts. */
    uint64_t cursor = 0, entries = 0;
    size_t count = 0;
    unsigned char *keys_out = malloc(16 * KEY_SIZE), *values_out = malloc(16 * VALUE_SIZE);
    unsigned char *seen = calloc(keys, 1), *seen_all = calloc(keys, 1);
    CHECK(keys_out && values_out && seen && seen_all);
    do {
        CHECK_OK(mpidht_local_next(table, &cursor, 16, keys_out, values_out, &count));
        for (size_t i = 0; i < count; ++i) {
            uint64_t id = 0;
            memcpy(&id, keys_out + i * KEY_SIZE, sizeof id);
            CHECK(id < keys);
            test_fill(key, KEY_SIZE, id, 4);
            CHECK(memcmp(key, keys_out + i * KEY_SIZE, KEY_SIZE) == 0);
            check_value(values_out + i * VALUE_SIZE, id);
            CHECK(!seen[id]); /* not twice on this process */
            seen[id] = 1;
        }
        entries += count;
    } while (count > 0);
    /* Nor on two processes. */
    MPI_Allreduce(seen, seen_all, (int)keys, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
    for (uint64_t id = 0; id < keys; ++id)
        CHECK(seen_all[id] <= 1);

    uint64_t mine_counts[3] = {entries, inserts, removes}, all[3];
    MPI_Allreduce(mine_counts, all, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    TEST_CONTEXT("%s: %" PRIu64 " entries, %" PRIu64 " inserts, %" PRIu64 " removes",
                 argv[1], all[0], all[1], all[2]);
    CHECK(all[0] == all[1] - all[2]);
    mpidht_stats_t total = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_global(table, &total));
    if (rank == 0)
        printf("%s np=%d keys=%" PRIu64 " buckets=%" PRIu64 ": %" PRIu64 " entries = %" PRIu64
               " inserts - %" PRIu64 " removes; %" PRIu64 " evictions, %" PRIu64
               " lock retries\n", argv[1], size, keys, buckets, all[0], all[1], all[2],
               total.evictions, total.lock_retries);
    free(keys_out);
    free(values_out);
    free(seen);
    free(seen_all);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
