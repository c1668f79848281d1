/*
 * The worst case of every protocol: several ranks write the same hot keys
 * (a skewed, zipf-like choice among few keys, in a table small enough to
 * evict) while the others read them. Every value carries its own integrity
 * check: the key id, the writer and a sequence number, followed by bytes
 * derived from all three. A read that returns a torn value, or a value
 * written for another key, fails the test.
 *
 * In batch mode the same operations go through mpidht_write_batch and
 * mpidht_read_batch, GROUP at a time (hot keys repeat within a batch).
 *
 * usage: test_concurrency coarse|fine|lockfree
 *            [auto|shared|allocate|create [OPS [single|batch]]]
 * OPS: operations per rank (default 10000).
 */
#include "test_util.h"

enum { KEY_SIZE = 16, VALUE_SIZE = 72, HOT_KEYS = 64, DEFAULT_OPS = 10000, GROUP = 16 };

typedef struct {
    uint64_t key_id;
    uint32_t writer;
    uint32_t seq;
    unsigned char payload[VALUE_SIZE - 16];
} value_t;

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Key ids skewed towards 0: id = floor(HOT_KEYS * u^3). */
static uint64_t hot_key(uint64_t *state)
{
    double u = (double)(next_random(state) >> 11) / 9007199254740992.0;
    return (uint64_t)(HOT_KEYS * u * u * u);
}

static void make_value(value_t *v, uint64_t key_id, uint32_t writer, uint32_t seq)
{
    v->key_id = key_id;
    v->writer = writer;
    v->seq = seq;
    test_fill(v->payload, sizeof v->payload, key_id * 1000003u + writer, seq);
}

static void check_value(const value_t *got, uint64_t key_id, int size, uint32_t ops)
{
    value_t expect;
    CHECK(got->key_id == key_id);
    CHECK(got->writer < (uint32_t)size);
    CHECK(got->seq < ops);
    make_value(&expect, got->key_id, got->writer, got->seq);
    CHECK(memcmp(got, &expect, sizeof expect) == 0);
}

/* Reads the keys of ids[0..n), in one batch or one at a time, and checks
 * every value found; returns the number of hits. */
static uint64_t read_keys(mpidht_t *table, bool batch, const uint64_t *ids, size_t n,
                          int size, uint32_t ops)
{
    unsigned char keys[GROUP][KEY_SIZE] = {{0}}, found[GROUP] = {0};
    value_t values[GROUP];
    CHECK(n <= GROUP);
    for (size_t i = 0; i < n; ++i)
        test_fill(keys[i], KEY_SIZE, ids[i], 77);
    if (batch) {
        CHECK_OK(mpidht_read_batch(table, n, keys, values, found));
    } else {
        for (size_t i = 0; i < n; ++i) {
            mpidht_status_t st = mpidht_read(table, keys[i], &values[i]);
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
            found[i] = st == MPIDHT_OK;
        }
    }
    uint64_t hits = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!found[i])
            continue;
        check_value(&values[i], ids[i], size, ops);
        ++hits;
    }
    return hits;
}

/* Writes ids[i] with sequence number seqs[i] as rank, batched or not. */
static void write_keys(mpidht_t *table, bool batch, const uint64_t *ids,
                       const uint32_t *seqs, size_t n, int rank)
{
    unsigned char keys[GROUP][KEY_SIZE];
    value_t values[GROUP];
    CHECK(n <= GROUP);
    for (size_t i = 0; i < n; ++i) {
        test_fill(keys[i], KEY_SIZE, ids[i], 77);
        make_value(&values[i], ids[i], (uint32_t)rank, seqs[i]);
    }
    if (batch) {
        CHECK_OK(mpidht_write_batch(table, n, keys, values, NULL));
        return;
    }
    for (size_t i = 0; i < n; ++i)
        CHECK_OK(mpidht_write(table, keys[i], &values[i], NULL));
}

/* Reads ids [first, end) in groups, checking every hit; returns hits. */
static uint64_t read_range(mpidht_t *table, bool batch, uint64_t first, uint64_t end,
                           int size, uint32_t ops)
{
    uint64_t ids[GROUP], hits = 0;
    while (first < end) {
        size_t n = 0;
        while (n < GROUP && first < end)
            ids[n++] = first++;
        hits += read_keys(table, batch, ids, n, size, ops);
    }
    return hits;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 2 && argc <= 5);
    uint32_t ops = argc >= 4 ? (uint32_t)strtoul(argv[3], NULL, 10) : DEFAULT_OPS;
    CHECK(ops > 0);
    CHECK(argc < 5 || strcmp(argv[4], "single") == 0 || strcmp(argv[4], "batch") == 0);
    bool batch = argc == 5 && strcmp(argv[4], "batch") == 0;
    mpidht_protocol_t protocol = MPIDHT_PROTOCOL_COARSE;
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p)
        if (strcmp(argv[1], mpidht_protocol_name(test_protocols[p])) == 0)
            protocol = test_protocols[p];
    CHECK(strcmp(argv[1], mpidht_protocol_name(protocol)) == 0);
    mpidht_window_kind_t window = MPIDHT_WINDOW_AUTO;
    while (argc >= 3 && strcmp(argv[2], mpidht_window_name(window)) != 0) {
        CHECK(window != MPIDHT_WINDOW_CREATE); /* unknown kind named */
        window = (mpidht_window_kind_t)(window + 1);
    }

    int rank = test_rank(), size = test_size();
    /* The first half of the ranks (at least one) write 80 % of the time,
     * the others 10 %: writers race with writers, and readers with both. */
    unsigned write_percent = rank < (size + 1) / 2 ? 80 : 10;
    mpidht_params_t params = test_params(protocol, KEY_SIZE, VALUE_SIZE, 0);
    /* About 24 buckets in all, whatever the process count: keys collide. */
    params.memory_per_process = 24 * 96 / (size_t)size;
    params.window = window;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));

    uint64_t state = 0x9e3779b97f4a7c15u ^ (uint64_t)(rank + 1) * 0x2545f4914f6cdd1du;
    uint64_t hits = 0, reads = 0, writes = 0;
    /* One operation at a time, or GROUP of the same kind in a batch. */
    size_t group = batch ? GROUP : 1;
    for (uint32_t seq = 0, round = 0; seq < ops; ++round) {
        bool write = size == 1 ? round % 2 == 0 : next_random(&state) % 100 < write_percent;
        uint64_t ids[GROUP];
        uint32_t seqs[GROUP];
        size_t n = 0;
        for (; n < group && seq < ops; ++n, ++seq) {
            ids[n] = hot_key(&state);
            seqs[n] = seq;
        }
        if (write) {
            write_keys(table, batch, ids, seqs, n, rank);
            writes += n;
        } else {
            hits += read_keys(table, batch, ids, n, size, ops);
            reads += n;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Quiescent: everything still in the table is intact. */
    read_range(table, batch, 0, HOT_KEYS, size, ops);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Freshness: rank 0 rewrites every hot key with a final value, then
     * floods the table with other keys. A hot key may be evicted, but since
     * no protocol stores a key twice, it must not come back with an older
     * value. */
    uint32_t final_seq = ops - 1;
    if (rank == 0) {
        uint64_t ids[GROUP];
        uint32_t seqs[GROUP];
        for (uint64_t first = 0; first < 4 * HOT_KEYS; first += GROUP) {
            for (size_t i = 0; i < GROUP; ++i) {
                ids[i] = first + i;
                seqs[i] = final_seq;
            }
            write_keys(table, batch, ids, seqs, GROUP, rank);
        }
        writes += 4 * HOT_KEYS;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t fresh_hits = 0;
    for (uint64_t id = 0; id < 4 * HOT_KEYS; ++id) {
        unsigned char key[KEY_SIZE];
        value_t value;
        test_fill(key, KEY_SIZE, id, 77);
        mpidht_status_t st = mpidht_read(table, key, &value);
        CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
        if (st != MPIDHT_OK)
            continue;
        check_value(&value, id, size, ops);
        ++fresh_hits;
        CHECK(value.writer == 0 && value.seq == final_seq);
    }
    CHECK(fresh_hits > 0);
    MPI_Barrier(MPI_COMM_WORLD);
    mpidht_stats_t local = MPIDHT_STATS_INIT, total = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_local(table, &local));
    CHECK(local.writes == writes);
    CHECK(local.reads == reads + HOT_KEYS + 4 * HOT_KEYS);
    CHECK(local.hits + local.misses == local.reads);
    CHECK_OK(mpidht_stats_global(table, &total));
    uint64_t all_hits = 0;
    MPI_Allreduce(&hits, &all_hits, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all_hits > 0); /* the readers did meet the writers' data */
    if (rank == 0)
        printf("%s/%s/%s np=%d: reads %" PRIu64 " hits %" PRIu64 " writes %" PRIu64
               " evictions %" PRIu64 " checksum_retries %" PRIu64
               " lock_retries %" PRIu64 " timeouts %" PRIu64 "\n",
               argv[1], mpidht_window_name(window), batch ? "batch" : "single", size,
               total.reads, total.hits, total.writes,
               total.evictions, total.checksum_retries, total.lock_retries,
               total.timeouts);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
