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
 *  3. Three buckets on rank 0, three candidates, and a hash (the key's
 *     first 8 bytes) chosen so that keys A, B and C, written in turn, take
 *     the first, second and third candidate of rank 0's key (each its own
 *     first candidate, src/address.h). Rank 0's read of its key misses,
 *     then another rank changes B, which holds neither rank 0's first
 *     candidate (whose generation the miss kept) nor its lock, under both
 *     eviction policies:
 *       d. removes B: rank 0's write must insert into B's bucket, evicting
 *          nobody;
 *       e. (recency) A written again before the miss, so B is the least
 *          recent then, and B written again after it: rank 0's write must
 *          evict C, now the least recent, not B.
 *     Rank 0's read and write are single calls, or batches of one in
 *     every other round. A write that trusted the miss's choice evicted A
 *     (or C, under MPIDHT_EVICT_LAST) in d and B in e.
 *
 * usage: test_read_for_insert coarse|fine|lockfree ROUNDS
 * (ROUNDS scaled by MPIDHT_TEST_SCALE)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <time.h>

#include "test_candidates.h"
#include "test_util.h"

enum { KEY_SIZE = 24, VALUE_SIZE = 40, OWN_KEYS = 64 };

/* Sleeps long enough that the next recency stamp (milliseconds) is
 * larger than every stamp before. */
static void next_stamp(void)
{
    struct timespec ts = {0, 2000000L};
    nanosleep(&ts, NULL);
}

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

/* Part 3, one round of case d (recency_case false) or e under eviction:
 * see the top; rank 0's read and write of its key single calls, or
 * batches of one (batched). Every rank calls it. */
static void stale_choice(mpidht_t *table, bool recency_case, bool batched, uint64_t round)
{
    int rank = test_rank(), meddler = 1 % test_size();
    unsigned char keys[4][KEY_SIZE], values[4][VALUE_SIZE], got[VALUE_SIZE];
    enum { A, B, C, MINE };
    /* Rank 0's key's candidates in order, and A, B, C each first at one. */
    uint64_t h = round * 1000, hashes[4];
    uint32_t order[3];
    hashes[MINE] = ++h;
    test_candidates3(hashes[MINE], order);
    for (int i = A; i <= C; ++i)
        hashes[i] = test_hash_at(&h, order[i], 3);
    for (int i = A; i <= MINE; ++i) {
        test_fill(keys[i], KEY_SIZE, round * 4 + (uint64_t)i, 40);
        memcpy(keys[i], &hashes[i], sizeof hashes[i]);
        test_fill(values[i], VALUE_SIZE, round * 4 + (uint64_t)i, 41);
    }
    mpidht_write_outcome_t outcome;
    if (rank == 0) {
        for (int i = A; i <= C; ++i) {
            CHECK_OK(mpidht_write(table, keys[i], values[i], &outcome));
            CHECK(outcome == MPIDHT_WRITE_INSERTED);
            next_stamp();
        }
        if (recency_case) {
            CHECK_OK(mpidht_write(table, keys[A], values[A], &outcome));
            CHECK(outcome == MPIDHT_WRITE_UPDATED);
            next_stamp();
        }
        unsigned char found = 1;
        if (batched)
            CHECK_OK(mpidht_read_batch(table, 1, keys[MINE], got, &found));
        else
            CHECK_STATUS(mpidht_read(table, keys[MINE], got), MPIDHT_NOT_FOUND);
        CHECK(!batched || !found);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == meddler) {
        if (recency_case) {
            next_stamp();
            CHECK_OK(mpidht_write(table, keys[B], values[B], &outcome));
            CHECK(outcome == MPIDHT_WRITE_UPDATED);
        } else {
            CHECK_OK(mpidht_remove(table, keys[B]));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        if (batched)
            CHECK_OK(mpidht_write_batch(table, 1, keys[MINE], values[MINE], &outcome));
        else
            CHECK_OK(mpidht_write(table, keys[MINE], values[MINE], &outcome));
        CHECK(outcome == (recency_case ? MPIDHT_WRITE_EVICTED : MPIDHT_WRITE_INSERTED));
        /* Who is left: d: A, C and mine; e: A, B and mine. */
        int gone = recency_case ? C : B;
        for (int i = A; i <= MINE; ++i) {
            TEST_CONTEXT("round %" PRIu64 ", case %c: key %d", round, recency_case ? 'e' : 'd',
                         i);
            if (i == gone) {
                CHECK_STATUS(mpidht_read(table, keys[i], got), MPIDHT_NOT_FOUND);
                continue;
            }
            CHECK_OK(mpidht_read(table, keys[i], got));
            CHECK(memcmp(got, values[i], VALUE_SIZE) == 0);
            CHECK_OK(mpidht_remove(table, keys[i])); /* empty for the next round */
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
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

    /* 3. Three buckets on rank 0, three candidates, hashes chosen. */
    p.candidates = 3;
    p.memory_per_process = rank == 0 ? 3 * bucket : 0;
    p.hash = test_hash_first_bytes;
    static const mpidht_eviction_t policies[] = {MPIDHT_EVICT_RECENCY, MPIDHT_EVICT_LAST};
    uint64_t stale_rounds = rounds < 5 ? rounds : 5; /* each sleeps a few ms */
    for (int e = 0; e < 2; ++e) {
        p.eviction = policies[e];
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
        for (uint64_t round = 0; round < stale_rounds; ++round) {
            TEST_CONTEXT("%s, eviction %s: round %" PRIu64, argv[1],
                         mpidht_eviction_name(p.eviction), round);
            bool batched = round % 2 == 1;
            stale_choice(table, false, batched, round);
            if (p.eviction == MPIDHT_EVICT_RECENCY)
                stale_choice(table, true, batched, round);
        }
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
