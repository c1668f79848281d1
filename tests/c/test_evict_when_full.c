/*
 * A write evicts another key's entry only if all its candidates held other
 * keys at one instant (mpidht.h), even where its probe, which looks at the
 * candidates one after another, is overtaken: another key moved from one
 * of its candidates to another meanwhile.
 *
 * Rank 0 hosts 3 buckets, 3 candidates, and the hash is a key's first 8
 * bytes, chosen (src/address.h) so that K's candidates are a, b, c in this
 * order, Y's first is a, and X's first is c, its second b. Rank 0 writes
 * Y (into a), a key Z into c, X (into b: c is taken), removes Z: a = Y,
 * b = X, c free. Then rank 0 writes K, and where its probe compares X's
 * key (in b) this program's memcmp, which the library calls, holds it
 * until rank 1 has removed X (freeing b) and written X again (into c, its
 * first). The probe goes on and sees a = Y, b = X (as it was), c = X: all
 * taken. But at every instant one of K's candidates was free: the write
 * must insert (outcome INSERTED, and X, Y and K all stay). It evicted Y
 * (or X, under MPIDHT_EVICT_LAST) before the write checked, holding the
 * bucket it chose, that every other candidate was taken at one instant.
 *
 * Fine and lock-free protocols (coarse writers hold the window lock, so
 * nothing can overtake the probe there, and rank 1 would wait for rank 0
 * forever), both eviction policies. The run fails if memcmp never met
 * X's key in that write: the schedule did not happen.
 *
 * usage: test_evict_when_full fine|lockfree (at 2 or more processes)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <time.h>

#include "test_candidates.h"
#include "test_util.h"

enum { KEY_SIZE = 16, VALUE_SIZE = 24, ROUNDS = 3 };

/* The key whose comparison holds rank 0 (armed), and the communicator
 * it tells rank 1 on. */
static unsigned char held_key[KEY_SIZE];
static bool armed;
static MPI_Comm signal_comm = MPI_COMM_NULL;
enum { GO_AHEAD = 1, NOT_MET = 0 };

/* Holds rank 0 where the armed key is compared: rank 1 acts, then says
 * so. Disarmed first: MPI may compare memory too. */
static void hold(void)
{
    armed = false;
    int go = GO_AHEAD, done = 0;
    MPI_Send(&go, 1, MPI_INT, 1, 0, signal_comm);
    MPI_Recv(&done, 1, MPI_INT, 1, 0, signal_comm, MPI_STATUS_IGNORE);
}

/* The memcmp the library calls (this program's, which takes precedence
 * over the C library's). A loop of its own: no call to memcmp. */
int memcmp(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *x = a, *y = b;
    int order = 0;
    for (size_t i = 0; i < n && order == 0; ++i)
        order = x[i] < y[i] ? -1 : x[i] > y[i] ? 1 : 0;
    if (armed && n == KEY_SIZE) {
        bool in_x = true, in_y = true;
        for (size_t i = 0; i < n; ++i) {
            in_x = in_x && x[i] == held_key[i];
            in_y = in_y && y[i] == held_key[i];
        }
        if (in_x || in_y)
            hold();
    }
    return order;
}

static void make_key(unsigned char *key, uint64_t hash, uint64_t tag)
{
    memset(key, 0, KEY_SIZE);
    for (size_t i = 0; i < sizeof hash; ++i) {
        key[i] = (unsigned char)(hash >> 8 * i);
        key[8 + i] = (unsigned char)(tag >> 8 * i);
    }
}

static void next_stamp(void)
{
    struct timespec ts = {0, 2000000L};
    nanosleep(&ts, NULL);
}

static void round_of(mpidht_t *table, uint64_t round)
{
    int rank = test_rank();
    enum { K, Y, Z, X, KEYS };
    unsigned char keys[KEYS][KEY_SIZE], value[VALUE_SIZE], got[VALUE_SIZE];
    uint32_t order[3];
    uint64_t h = 1000 + round * 10000, hashes[KEYS];
    hashes[K] = h;
    test_candidates3(h, order);
    hashes[Y] = test_hash_at(&h, order[0], 3);
    hashes[Z] = test_hash_at(&h, order[2], 3);
    hashes[X] = test_hash_at(&h, order[2], order[1]);
    for (int i = 0; i < KEYS; ++i)
        make_key(keys[i], hashes[i], round * KEYS + (uint64_t)i);
    test_fill(value, VALUE_SIZE, round, 7);
    mpidht_write_outcome_t outcome;
    if (rank == 0) {
        for (int i = Y; i <= X; ++i) {
            CHECK_OK(mpidht_write(table, keys[i], value, &outcome));
            CHECK(outcome == MPIDHT_WRITE_INSERTED);
            next_stamp();
        }
        CHECK_OK(mpidht_remove(table, keys[Z]));
        memcpy(held_key, keys[X], KEY_SIZE);
        armed = true;
        CHECK_OK(mpidht_write(table, keys[K], value, &outcome));
        bool met = !armed;
        armed = false;
        if (!met) { /* release rank 1, then fail */
            int go = NOT_MET;
            MPI_Send(&go, 1, MPI_INT, 1, 0, signal_comm);
        }
        CHECK(met);
        CHECK(outcome == MPIDHT_WRITE_INSERTED);
    } else if (rank == 1) {
        int go = NOT_MET, done = 1;
        MPI_Recv(&go, 1, MPI_INT, 0, 0, signal_comm, MPI_STATUS_IGNORE);
        CHECK(go == GO_AHEAD);
        CHECK_OK(mpidht_remove(table, keys[X]));
        CHECK_OK(mpidht_write(table, keys[X], value, &outcome));
        CHECK(outcome == MPIDHT_WRITE_INSERTED);
        MPI_Send(&done, 1, MPI_INT, 0, 0, signal_comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < KEYS; ++i) {
            TEST_CONTEXT("round %" PRIu64 ": key %d", round, i);
            CHECK_STATUS(mpidht_read(table, keys[i], got), i == Z ? MPIDHT_NOT_FOUND : MPIDHT_OK);
            if (i != Z)
                CHECK_OK(mpidht_remove(table, keys[i])); /* empty for the next round */
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2 && test_size() >= 2);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    CHECK(protocol != MPIDHT_PROTOCOL_COARSE);
    MPI_Comm_dup(MPI_COMM_WORLD, &signal_comm);
    mpidht_params_t p = test_params(protocol, KEY_SIZE, VALUE_SIZE, 0);
    size_t bucket = 0;
    CHECK_OK(mpidht_bucket_size(&p, &bucket));
    p.memory_per_process = test_rank() == 0 ? 3 * bucket : 0;
    p.candidates = 3;
    p.hash = test_hash_first_bytes;
    static const mpidht_eviction_t policies[] = {MPIDHT_EVICT_RECENCY, MPIDHT_EVICT_LAST};
    for (int e = 0; e < 2; ++e) {
        p.eviction = policies[e];
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
        for (uint64_t round = 0; round < ROUNDS; ++round) {
            TEST_CONTEXT("%s, eviction %s, round %" PRIu64, argv[1],
                         mpidht_eviction_name(p.eviction), round);
            round_of(table, round);
        }
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Comm_free(&signal_comm);
    MPI_Finalize();
    return 0;
}
