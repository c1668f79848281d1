/*
 * Updates act on the bucket that holds the key, whichever of its
 * candidates that is. A hash that gives every key the same value makes
 * the keys share one list of candidate buckets, so that each of
 * CANDIDATES keys lives in another candidate of that list (the first
 * one is the key lock's own bucket; the others are chosen under their
 * own lock and fetched again). Values are large (an update fetches the
 * keys of the other candidates, not their values). Every rank increments
 * every key, one at a time and in batches, all at once: each update must
 * see the value the last one stored (count and payload agree), and each
 * counter ends at ranks x increments, with no eviction.
 *
 * usage: test_update_candidates coarse|fine|lockfree [ROUNDS]
 * (default 50, scaled by MPIDHT_TEST_SCALE)
 */
#include "test_util.h"

enum { KEY_SIZE = 16, CANDIDATES = 6, PAYLOAD = 2048 / sizeof(uint64_t) };

typedef struct {
    uint64_t count;
    uint64_t payload[PAYLOAD]; /* each word count * (i + 1) + i */
} counter_t;

static bool consistent(const counter_t *c)
{
    for (uint64_t i = 0; i < PAYLOAD; ++i)
        if (c->payload[i] != c->count * (i + 1) + i)
            return false;
    return true;
}

static mpidht_update_action_t increment(size_t index, const void *key, void *value,
                                        int present, void *user_data)
{
    counter_t *c = value;
    (void)index;
    (void)key;
    ++*(uint64_t *)user_data;
    if (present)
        CHECK(consistent(c));
    c->count = present ? c->count + 1 : 1;
    for (uint64_t i = 0; i < PAYLOAD; ++i)
        c->payload[i] = c->count * (i + 1) + i;
    return MPIDHT_STORE;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 2);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    uint64_t rounds = test_scaled(argc >= 3 ? strtoull(argv[2], NULL, 10) : 50, 5);
    int rank = test_rank(), size = test_size();
    mpidht_params_t p = test_params(protocol, KEY_SIZE, sizeof(counter_t), 256 * 1024);
    p.hash = test_hash_constant;
    p.candidates = CANDIDATES;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));

    unsigned char keys[CANDIDATES][KEY_SIZE];
    for (int i = 0; i < CANDIDATES; ++i)
        test_fill(keys[i], KEY_SIZE, (uint64_t)i, 3);
    uint64_t calls = 0;
    for (uint64_t round = 0; round < rounds; ++round) {
        for (int i = 0; i < CANDIDATES; ++i) {
            int k = (i + rank) % CANDIDATES; /* ranks start at other keys */
            CHECK_OK(mpidht_update(table, keys[k], increment, &calls, NULL));
        }
        CHECK_OK(mpidht_update_batch(table, CANDIDATES, keys, increment, &calls, NULL));
    }
    CHECK(calls == 2 * rounds * CANDIDATES);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < CANDIDATES; ++k) {
        counter_t got;
        TEST_CONTEXT("%s: key %d", argv[1], k);
        CHECK_OK(mpidht_read(table, keys[k], &got));
        CHECK(consistent(&got));
        CHECK(got.count == 2 * rounds * (uint64_t)size);
    }
    mpidht_stats_t total = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_global(table, &total));
    CHECK(total.evictions == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
