/*
 * Read-for-insert: a write after a miss of its key goes where the miss
 * looked (fine and lock-free protocols on a direct table), but never where
 * the miss's view has gone stale.
 *
 *  1. Each rank's own keys, single calls and a batch: a read misses, the
 *     write inserts, and the write reused the probe (probes_reused counts
 *     it) where the table keeps generations, not otherwise (coarse, or
 *     through MPI's one-sided calls).
 *  2. A table of one bucket (one candidate), rounds in which rank 0's
 *     read of its key misses, then another rank (rank 0 itself at one
 *     process) writes between the miss and rank 0's write:
 *       a. another key into the bucket: rank 0's write must evict it
 *          (outcome EVICTED, that key gone), not take the bucket for free;
 *       b. rank 0's key itself: rank 0's write must update it in place
 *          (outcome UPDATED), never store the key a second time;
 *       c. rank 0's key, then removes it again: the bucket is as the miss
 *          saw it, but rank 0's write must not reuse the probe (the
 *          generation moved on), and it inserts.
 *     A write that trusted the stale miss reports INSERTED in a and b.
 *
 * usage: test_read_for_insert coarse|fine|lockfree ROUNDS
 * (ROUNDS scaled by MPIDHT_TEST_SCALE)
 */
#include "test_util.h"

enum { KEY_SIZE = 24, VALUE_SIZE = 40, OWN_KEYS = 64 };

static uint64_t reused(const mpidht_t *table)
{
    mpidht_stats_t s = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_local(table, &s));
    return s.probes_reused;
}

/* Part 1: n keys of this rank, read (misses) and written, alone or in one
 * batch each; how many probes were reused. */
static uint64_t own_keys(mpidht_t *table, bool batched, uint64_t salt)
{
    int rank = test_rank();
    unsigned char keys[OWN_KEYS * KEY_SIZE], values[OWN_KEYS * VALUE_SIZE],
        got[OWN_KEYS * VALUE_SIZE], found[OWN_KEYS];
    mpidht_write_outcome_t outcomes[OWN_KEYS];
    for (int i = 0; i < OWN_KEYS; ++i) {
        test_fill(keys + i * KEY_SIZE, KEY_SIZE, (uint64_t)(rank * OWN_KEYS + i), salt);
        test_fill(values + i * VALUE_SIZE, VALUE_SIZE, (uint64_t)(rank * OWN_KEYS + i), salt + 1);
    }
    uint64_t before = reused(table);
    if (batched) {
        CHECK_OK(mpidht_read_batch(table, OWN_KEYS, keys, got, found));
        for (int i = 0; i < OWN_KEYS; ++i)
            CHECK(!found[i]);
        CHECK_OK(mpidht_write_batch(table, OWN_KEYS, keys, values, outcomes));
    } else {
        for (int i = 0; i < OWN_KEYS; ++i) {
            CHECK_STATUS(mpidht_read(table, keys + i * KEY_SIZE, got), MPIDHT_NOT_FOUND);
            CHECK_OK(mpidht_write(table, keys + i * KEY_SIZE, values + i * VALUE_SIZE,
                                  &outcomes[i]));
        }
    }
    uint64_t after = reused(table);
    for (int i = 0; i < OWN_KEYS; ++i) {
        CHECK(outcomes[i] == MPIDHT_WRITE_INSERTED);
        CHECK_OK(mpidht_read(table, keys + i * KEY_SIZE, got));
        CHECK(memcmp(got, values + i * VALUE_SIZE, VALUE_SIZE) == 0);
    }
    return after - before;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 3);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    uint64_t rounds = test_scaled(strtoull(argv[2], NULL, 10), 10);
    int rank = test_rank(), size = test_size();

    /* 1. A roomy table: every write finds a free candidate. */
    mpidht_params_t p = test_params(protocol, KEY_SIZE, VALUE_SIZE, (size_t)1 << 20);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    bool keeps = info.direct && protocol != MPIDHT_PROTOCOL_COARSE;
    /* Misses remember what they saw in a cache mapped by hash: of 64
     * keys, one may take the place of another (engine.c), rarely more. */
    for (int batched = 0; batched < 2; ++batched) {
        TEST_CONTEXT("%s, direct %d, batched %d", argv[1], info.direct, batched);
        uint64_t n = own_keys(table, batched, 1 + 2 * (uint64_t)batched);
        CHECK(keeps ? n >= OWN_KEYS - 4 && n <= OWN_KEYS : n == 0);
    }
    /* A clear drops what the misses saw: a miss before it is no guide
     * after it. */
    unsigned char key[KEY_SIZE], other[KEY_SIZE], value[VALUE_SIZE], got[VALUE_SIZE];
    test_fill(key, KEY_SIZE, (uint64_t)rank, 9);
    test_fill(value, VALUE_SIZE, (uint64_t)rank, 10);
    CHECK_STATUS(mpidht_read(table, key, got), MPIDHT_NOT_FOUND);
    CHECK_OK(mpidht_clear(table));
    uint64_t before = reused(table);
    mpidht_write_outcome_t outcome;
    CHECK_OK(mpidht_write(table, key, value, &outcome));
    CHECK(outcome == MPIDHT_WRITE_INSERTED);
    CHECK(reused(table) == before);
    CHECK_OK(mpidht_free(&table));

    /* 2. One bucket, on rank 0, one candidate. */
    p = test_params(protocol, KEY_SIZE, VALUE_SIZE, 0);
    size_t bucket = 0;
    CHECK_OK(mpidht_bucket_size(&p, &bucket));
    p.memory_per_process = rank == 0 ? bucket : 0;
    p.candidates = 1;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    int meddler = 1 % size; /* writes between rank 0's miss and write */
    for (uint64_t round = 0; round < rounds; ++round) {
        for (int kind = 0; kind < 3; ++kind) {
            TEST_CONTEXT("%s: round %" PRIu64 ", case %c", argv[1], round, 'a' + kind);
            test_fill(key, KEY_SIZE, round, 20);
            test_fill(other, KEY_SIZE, round, 21);
            test_fill(value, VALUE_SIZE, round, 22 + (uint64_t)kind);
            if (rank == 0)
                CHECK_STATUS(mpidht_read(table, key, got), MPIDHT_NOT_FOUND);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == meddler) {
                unsigned char theirs[VALUE_SIZE];
                test_fill(theirs, VALUE_SIZE, round, 30);
                CHECK_OK(mpidht_write(table, kind == 0 ? other : key, theirs, &outcome));
                CHECK(outcome == MPIDHT_WRITE_INSERTED);
                if (kind == 2)
                    CHECK_OK(mpidht_remove(table, key));
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                before = reused(table);
                CHECK_OK(mpidht_write(table, key, value, &outcome));
                CHECK(outcome == (kind == 0   ? MPIDHT_WRITE_EVICTED
                                  : kind == 1 ? MPIDHT_WRITE_UPDATED
                                              : MPIDHT_WRITE_INSERTED));
                CHECK(reused(table) == before);
                CHECK_OK(mpidht_read(table, key, got));
                CHECK(memcmp(got, value, VALUE_SIZE) == 0);
                CHECK_STATUS(mpidht_read(table, other, got), MPIDHT_NOT_FOUND);
                CHECK_OK(mpidht_remove(table, key)); /* empty for the next case */
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
