/*
 * Atomic update: every rank increments every one of a few counters many
 * times, one at a time with mpidht_update and in batches with
 * mpidht_update_batch (each counter twice per batch, so rows of one batch
 * depend on each other), while other ranks do the same. Every counter ends
 * at exactly ranks x increments. Then the other actions and their
 * outcomes: keep (absent stays absent), delete, an invalid action (refused,
 * key unchanged), and the arguments the function receives.
 *
 * usage: test_update_atomic coarse|fine|lockfree [ROUNDS]
 * (default 100, scaled by MPIDHT_TEST_SCALE; a round adds 3 to every
 * counter from every rank)
 */
#include "test_util.h"

enum { KEY_SIZE = 16, COUNTERS = 8 };

typedef struct {
    uint64_t count;
    uint64_t check; /* count * 3 + 1: a torn value would not agree */
} counter_t;

static mpidht_update_action_t increment(size_t index, const void *key, void *value,
                                        int present, void *user_data)
{
    counter_t *c = value;
    (void)index;
    (void)key;
    ++*(uint64_t *)user_data;
    if (!present) {
        c->count = 1;
    } else {
        CHECK(c->check == c->count * 3 + 1);
        c->count += 1;
    }
    c->check = c->count * 3 + 1;
    return MPIDHT_STORE;
}

typedef struct {
    mpidht_update_action_t action;
    int present;
    size_t index;
    unsigned char key[KEY_SIZE];
    counter_t value;
} probe_t;

/* Records what it was given and returns the action asked for. */
static mpidht_update_action_t record(size_t index, const void *key, void *value,
                                     int present, void *user_data)
{
    probe_t *p = user_data;
    p->index = index;
    p->present = present;
    memcpy(p->key, key, KEY_SIZE);
    memcpy(&p->value, value, sizeof p->value);
    if (p->action == MPIDHT_STORE)
        ((counter_t *)value)->count = 99;
    return p->action;
}

static void semantics(mpidht_t *table)
{
    unsigned char key[KEY_SIZE];
    counter_t got;
    mpidht_update_outcome_t outcome;
    probe_t probe = {.action = MPIDHT_KEEP};
    test_fill(key, KEY_SIZE, 1000, 9);
    CHECK_OK(mpidht_update(table, key, record, &probe, &outcome));
    CHECK(outcome == MPIDHT_UPDATE_KEPT && probe.present == 0 && probe.index == 0);
    CHECK(memcmp(probe.key, key, KEY_SIZE) == 0);
    CHECK(probe.value.count == 0 && probe.value.check == 0); /* zeroed when absent */
    CHECK_STATUS(mpidht_read(table, key, &got), MPIDHT_NOT_FOUND);

    probe.action = MPIDHT_STORE;
    CHECK_OK(mpidht_update(table, key, record, &probe, &outcome));
    CHECK(outcome == MPIDHT_UPDATE_INSERTED);
    CHECK_OK(mpidht_read(table, key, &got));
    CHECK(got.count == 99);
    CHECK_OK(mpidht_update(table, key, record, &probe, &outcome));
    CHECK(outcome == MPIDHT_UPDATE_UPDATED && probe.present == 1 && probe.value.count == 99);

    probe.action = (mpidht_update_action_t)7;
    CHECK_STATUS(mpidht_update(table, key, record, &probe, &outcome),
                 MPIDHT_ERR_UPDATE_ACTION);
    CHECK_OK(mpidht_read(table, key, &got));
    CHECK(got.count == 99);

    probe.action = MPIDHT_DELETE;
    CHECK_OK(mpidht_update(table, key, record, &probe, &outcome));
    CHECK(outcome == MPIDHT_UPDATE_REMOVED);
    CHECK_STATUS(mpidht_read(table, key, &got), MPIDHT_NOT_FOUND);
    CHECK_OK(mpidht_update(table, key, record, &probe, &outcome));
    CHECK(outcome == MPIDHT_UPDATE_KEPT && probe.present == 0); /* nothing to delete */

    /* Batch rows see their own index; NULL outcomes are allowed. */
    unsigned char keys[3][KEY_SIZE];
    for (int i = 0; i < 3; ++i)
        test_fill(keys[i], KEY_SIZE, 2000 + (uint64_t)i, 9);
    probe.action = MPIDHT_KEEP;
    CHECK_OK(mpidht_update_batch(table, 3, keys, record, &probe, NULL));
    CHECK(probe.index == 2 && memcmp(probe.key, keys[2], KEY_SIZE) == 0);
    CHECK_STATUS(mpidht_update(table, key, NULL, &probe, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_update_batch(table, 3, keys, NULL, &probe, NULL),
                 MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_OK(mpidht_update_batch(table, 0, NULL, record, &probe, NULL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 2);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    uint64_t rounds = test_scaled(argc >= 3 ? strtoull(argv[2], NULL, 10) : 100, 10);
    uint64_t increments = 3 * rounds;
    int rank = test_rank(), size = test_size();
    mpidht_params_t p = test_params(protocol, KEY_SIZE, sizeof(counter_t), 64 * 1024);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));

    unsigned char keys[2 * COUNTERS][KEY_SIZE];
    for (int i = 0; i < 2 * COUNTERS; ++i)
        test_fill(keys[i], KEY_SIZE, (uint64_t)(i % COUNTERS), 9);
    uint64_t calls = 0;
    for (uint64_t round = 0; round < rounds; ++round) {
        /* Each rank starts at another counter, so ranks collide on all. */
        for (int i = 0; i < COUNTERS; ++i) {
            int c = (i + rank) % COUNTERS;
            CHECK_OK(mpidht_update(table, keys[c], increment, &calls, NULL));
        }
        mpidht_update_outcome_t outcomes[2 * COUNTERS];
        CHECK_OK(mpidht_update_batch(table, 2 * COUNTERS, keys, increment, &calls,
                                     outcomes));
        for (int i = 0; i < 2 * COUNTERS; ++i)
            CHECK(outcomes[i] == MPIDHT_UPDATE_INSERTED ||
                  outcomes[i] == MPIDHT_UPDATE_UPDATED);
    }
    CHECK(calls == increments * COUNTERS);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < COUNTERS; ++c) {
        counter_t got;
        TEST_CONTEXT("%s: counter %d", argv[1], c);
        CHECK_OK(mpidht_read(table, keys[c], &got));
        CHECK(got.check == got.count * 3 + 1);
        CHECK(got.count == increments * (uint64_t)size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        semantics(table);
    MPI_Barrier(MPI_COMM_WORLD);
    mpidht_stats_t total = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_global(table, &total));
    if (rank == 0)
        printf("%s np=%d: %d counters at %" PRIu64 " each; %" PRIu64
               " lock retries\n", argv[1], size, COUNTERS, increments * (uint64_t)size,
               total.lock_retries);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
