/*
 * Helpers for the iteration and dump tests: filling a table with
 * numbered entries and summarising its whole content.
 */
#ifndef MPIDHT_TABLE_DIGEST_H
#define MPIDHT_TABLE_DIGEST_H

#include "test_util.h"

/* FNV-1a over len bytes, continuing from h. */
static inline uint64_t digest_bytes(uint64_t h, const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; ++i) {
        h ^= p[i];
        h *= 0x100000001b3u;
    }
    return h;
}

/* Content of the whole table, independent of where entries live: the
 * number of entries and the sum of a hash of each (key, value), summed
 * over all processes through mpidht_local_next. Collective (in the test's
 * sense: every rank calls it). */
typedef struct table_digest {
    uint64_t entries;
    uint64_t sum;
} table_digest_t;

static inline table_digest_t digest_table(mpidht_t *table, size_t key_size,
                                          size_t value_size)
{
    enum { ROWS = 37 }; /* odd, so that steps and rows do not align */
    unsigned char *keys = malloc(ROWS * key_size), *values = malloc(ROWS * value_size);
    CHECK(keys && values);
    uint64_t mine[2] = {0, 0}, all[2];
    uint64_t cursor = 0;
    size_t count = 0;
    do {
        CHECK_OK(mpidht_local_next(table, &cursor, ROWS, keys, values, &count));
        CHECK(count <= ROWS);
        for (size_t i = 0; i < count; ++i) {
            uint64_t h = digest_bytes(0xcbf29ce484222325u, keys + i * key_size, key_size);
            mine[1] += digest_bytes(h, values + i * value_size, value_size);
        }
        mine[0] += count;
    } while (count > 0);
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    free(keys);
    free(values);
    return (table_digest_t){all[0], all[1]};
}

/* The digest of entries ids [0, n) with values of the given salt, as
 * fill_ids writes them. */
static inline table_digest_t digest_ids(uint64_t n, size_t key_size, size_t value_size,
                                        uint64_t salt)
{
    unsigned char *key = malloc(key_size), *value = malloc(value_size);
    table_digest_t d = {n, 0};
    for (uint64_t id = 0; id < n; ++id) {
        test_fill(key, key_size, id, 1);
        test_fill(value, value_size, id, salt);
        d.sum += digest_bytes(digest_bytes(0xcbf29ce484222325u, key, key_size), value,
                              value_size);
    }
    free(key);
    free(value);
    return d;
}

/* Writes ids [0, n), dealt round-robin to the ranks, with values of the
 * given salt, in batches (few round trips: MPICH is slow with more ranks
 * than cores), every rank at once. Checks that nothing was evicted. */
static inline void fill_ids(mpidht_t *table, uint64_t n, size_t key_size,
                            size_t value_size, uint64_t salt)
{
    enum { BATCH = 256 };
    unsigned char *keys = malloc(BATCH * key_size), *values = malloc(BATCH * value_size);
    mpidht_write_outcome_t outcomes[BATCH];
    CHECK(keys && values);
    int rank = test_rank(), size = test_size();
    uint64_t evicted = 0, evicted_all = 0;
    size_t count = 0;
    for (uint64_t id = (uint64_t)rank; id < n; id += (uint64_t)size) {
        test_fill(keys + count * key_size, key_size, id, 1);
        test_fill(values + count * value_size, value_size, id, salt);
        if (++count < BATCH && id + (uint64_t)size < n)
            continue;
        CHECK_OK(mpidht_write_batch(table, count, keys, values, outcomes));
        for (size_t i = 0; i < count; ++i)
            evicted += outcomes[i] == MPIDHT_WRITE_EVICTED;
        count = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&evicted, &evicted_all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(evicted_all == 0);
    free(keys);
    free(values);
}

static inline bool digest_equal(table_digest_t a, table_digest_t b)
{
    return a.entries == b.entries && a.sum == b.sum;
}

#endif /* MPIDHT_TABLE_DIGEST_H */
