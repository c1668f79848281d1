/*
 * Batched reads and writes give exactly the results of the same operations
 * one at a time: two tables with the same parameters receive the same
 * sequence of writes, one through mpidht_write, the other through
 * mpidht_write_batch in batches of uneven sizes. The table is small, so
 * keys collide and evict; keys repeat within a batch. Outcomes must match
 * write for write, and afterwards every key — written or not, several
 * times within one read batch — must read the same from both tables,
 * batched and single.
 *
 * usage: test_batch coarse|fine|lockfree [WRITES]
 * WRITES: writes per rank (default 600, at least 60); the key space, the
 * table and the reads scale with it.
 */
#include "test_util.h"

enum { KEY_SIZE = 24, VALUE_SIZE = 40, DEFAULT_WRITES = 600 };

/* Sizes of one run, all derived from the writes per rank. */
static size_t WRITES;     /* per rank */
static size_t KEY_SPACE;  /* ids written come from [0, KEY_SPACE) */
static size_t READ_SPACE; /* ids read: a quarter never written */
static size_t READ_ROWS;  /* every id read twice */

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Batch sizes cycle through these: single keys, odd sizes, a chunk. */
static const size_t batch_sizes[] = {1, 7, 64, 3, 200, 2, 33};

static mpidht_protocol_t parse_protocol(const char *name)
{
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p)
        if (strcmp(name, mpidht_protocol_name(test_protocols[p])) == 0)
            return test_protocols[p];
    CHECK(!"unknown protocol");
    return MPIDHT_PROTOCOL_COARSE;
}

/* This rank's writes: ids with many repeats, skewed to small ids. */
static void make_writes(unsigned char *keys, unsigned char *values, int rank)
{
    uint64_t state = 0x853c49e6748fea9bu + (uint64_t)rank * 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < WRITES; ++i) {
        uint64_t r = next_random(&state) % KEY_SPACE;
        uint64_t id = i % 3 == 0 ? r / 8 : r; /* a hot eighth */
        test_fill(keys + i * KEY_SIZE, KEY_SIZE, id, 5);
        test_fill(values + i * VALUE_SIZE, VALUE_SIZE, id * 1000 + i, (uint64_t)rank);
    }
}

static void write_both(mpidht_t *single, mpidht_t *batched, const unsigned char *keys,
                       const unsigned char *values)
{
    mpidht_write_outcome_t *one = calloc(WRITES, sizeof *one);
    mpidht_write_outcome_t *many = calloc(WRITES, sizeof *many);
    CHECK(one && many);
    for (size_t i = 0; i < WRITES; ++i)
        CHECK_OK(mpidht_write(single, keys + i * KEY_SIZE, values + i * VALUE_SIZE,
                              &one[i]));
    for (size_t i = 0, b = 0; i < WRITES; ++b) {
        size_t n = batch_sizes[b % (sizeof batch_sizes / sizeof *batch_sizes)];
        n = n < WRITES - i ? n : WRITES - i;
        CHECK_OK(mpidht_write_batch(batched, n, keys + i * KEY_SIZE,
                                    values + i * VALUE_SIZE, many + i));
        i += n;
    }
    size_t evicted = 0, updated = 0;
    for (size_t i = 0; i < WRITES; ++i) {
        TEST_CONTEXT("comparing the outcome of write %zu", i);
        CHECK(one[i] == many[i]);
        evicted += one[i] == MPIDHT_WRITE_EVICTED;
        updated += one[i] == MPIDHT_WRITE_UPDATED;
    }
    TEST_CONTEXT("checking the write mix");
    CHECK(evicted > 0 && updated > 0); /* the test covers both */
    free(one);
    free(many);
}

/* The id read in row i: every id twice, the second time in reverse. */
static uint64_t read_id(size_t i)
{
    return i < READ_SPACE ? i : READ_ROWS - 1 - i;
}

/* Reads the READ_ROWS keys from table, batched in uneven sizes or one at
 * a time. */
static void read_all(mpidht_t *table, bool batched, unsigned char *values,
                     unsigned char *found)
{
    unsigned char *keys = malloc(READ_ROWS * KEY_SIZE);
    CHECK(keys);
    for (size_t i = 0; i < READ_ROWS; ++i)
        test_fill(keys + i * KEY_SIZE, KEY_SIZE, read_id(i), 5);
    memset(values, 0, (size_t)READ_ROWS * VALUE_SIZE);
    if (!batched) {
        for (size_t i = 0; i < READ_ROWS; ++i) {
            mpidht_status_t st =
                mpidht_read(table, keys + i * KEY_SIZE, values + i * VALUE_SIZE);
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
            found[i] = st == MPIDHT_OK;
        }
        free(keys);
        return;
    }
    for (size_t i = 0, b = 0; i < READ_ROWS; ++b) {
        size_t n = batch_sizes[(b + 3) % (sizeof batch_sizes / sizeof *batch_sizes)];
        n = n < READ_ROWS - i ? n : READ_ROWS - i;
        CHECK_OK(mpidht_read_batch(table, n, keys + i * KEY_SIZE,
                                   values + i * VALUE_SIZE, found + i));
        i += n;
    }
    free(keys);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2 || argc == 3);
    mpidht_protocol_t protocol = parse_protocol(argv[1]);
    WRITES = argc == 3 ? strtoul(argv[2], NULL, 10) : DEFAULT_WRITES;
    CHECK(WRITES >= 60);
    KEY_SPACE = WRITES / 2;
    READ_SPACE = KEY_SPACE + KEY_SPACE / 3;
    READ_ROWS = 2 * READ_SPACE;
    int rank = test_rank(), size = test_size();
    mpidht_params_t params = test_params(protocol, KEY_SIZE, VALUE_SIZE, 0);
    /* Fewer buckets than keys written (160 for the default 600 writes). */
    params.memory_per_process = WRITES * 80 * 160 / 600 / (size_t)size;
    /* Recency stamps are milliseconds of wall time: two tables written at
     * different instants may evict different entries. Candidate order is
     * the same for both. */
    params.eviction = MPIDHT_EVICT_LAST;
    mpidht_t *single = NULL, *batched = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &single));
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &batched));

    unsigned char *keys = malloc(WRITES * KEY_SIZE), *values = malloc(WRITES * VALUE_SIZE);
    CHECK(keys && values);
    make_writes(keys, values, rank);
    /* One rank at a time: the two tables must see the same order. */
    for (int turn = 0; turn < size; ++turn) {
        if (turn == rank)
            write_both(single, batched, keys, values);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    unsigned char *got[4], *found[4];
    for (int v = 0; v < 4; ++v) {
        got[v] = malloc(READ_ROWS * VALUE_SIZE);
        found[v] = malloc(READ_ROWS);
        CHECK(got[v] && found[v]);
    }
    read_all(single, false, got[0], found[0]);
    read_all(single, true, got[1], found[1]);
    read_all(batched, false, got[2], found[2]);
    read_all(batched, true, got[3], found[3]);
    size_t hits = 0;
    for (size_t i = 0; i < READ_ROWS; ++i) {
        TEST_CONTEXT("comparing the reads of row %zu", i);
        for (int v = 1; v < 4; ++v) {
            CHECK(found[v][i] == found[0][i]);
            CHECK(memcmp(got[v] + i * VALUE_SIZE, got[0] + i * VALUE_SIZE, VALUE_SIZE) == 0);
        }
        hits += found[0][i];
        if (read_id(i) >= KEY_SPACE) /* never written */
            CHECK(!found[0][i]);
    }
    TEST_CONTEXT("checking hits and statistics");
    CHECK(hits > 0 && hits < READ_ROWS);

    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_local(batched, &stats));
    CHECK(stats.writes == WRITES);
    CHECK(stats.reads == 2 * READ_ROWS);
    CHECK(stats.hits == 2 * hits && stats.misses == 2 * (READ_ROWS - hits));

    MPI_Barrier(MPI_COMM_WORLD);
    for (int v = 0; v < 4; ++v) {
        free(got[v]);
        free(found[v]);
    }
    free(keys);
    free(values);
    CHECK_OK(mpidht_free(&single));
    CHECK_OK(mpidht_free(&batched));
    MPI_Finalize();
    return 0;
}
