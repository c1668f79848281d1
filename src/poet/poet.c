/*
 * POET's DHT API (include/mpidht_poet.h) as a thin layer over mpidht.
 */
#include "mpidht_poet.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

struct DHT {
    mpidht_t *table;
    uint64_t (*hash_func)(int, void *);
    int key_size;
    int rank;
    mpidht_status_t last;
    uint64_t load_evictions; /* records DHT_from_file found no room for
                              * (all processes' on rank 0) */
};

/* POET's hash takes (key size, key); mpidht's (key, size, user data). */
static uint64_t call_poet_hash(const void *key, size_t key_size, void *user_data)
{
    const DHT *dht = user_data;
    return dht->hash_func((int)key_size, (void *)key);
}

DHT *DHT_create(MPI_Comm comm, unsigned int size_per_process, int data_size,
                int key_size, uint64_t (*hash_func)(int, void *))
{
    DHT *dht = calloc(1, sizeof *dht);
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.protocol = MPIDHT_PROTOCOL_COARSE;
    /* Negative sizes become 0, which mpidht_create refuses collectively. */
    p.key_size = key_size > 0 ? (size_t)key_size : 0;
    p.value_size = data_size > 0 ? (size_t)data_size : 0;
    size_t bucket = 0;
    if (mpidht_bucket_size(&p, &bucket) == MPIDHT_OK)
        p.memory_per_process = (size_t)size_per_process * bucket;
    if (dht && hash_func) {
        dht->hash_func = hash_func;
        p.hash = call_poet_hash;
        p.hash_user_data = dht;
    }
    mpidht_t *table = NULL;
    /* Without memory for dht, still take part, with parameters that fail. */
    if (!dht)
        p.key_size = 0;
    if (mpidht_create(comm, &p, &table) != MPIDHT_OK) {
        free(dht);
        return NULL;
    }
    dht->table = table;
    dht->key_size = key_size;
    MPI_Comm_rank(comm, &dht->rank);
    return dht;
}

int DHT_read(DHT *table, void *key, void *destination)
{
    if (!table)
        return DHT_MPI_ERROR;
    table->last = mpidht_read(table->table, key, destination);
    return table->last == MPIDHT_OK          ? DHT_SUCCESS
           : table->last == MPIDHT_NOT_FOUND ? DHT_READ_ERROR
                                             : DHT_MPI_ERROR;
}

int DHT_write(DHT *table, void *key, void *data)
{
    if (!table)
        return DHT_MPI_ERROR;
    mpidht_write_outcome_t outcome = MPIDHT_WRITE_INSERTED;
    table->last = mpidht_write(table->table, key, data, &outcome);
    if (table->last != MPIDHT_OK)
        return DHT_MPI_ERROR;
    return outcome == MPIDHT_WRITE_EVICTED ? DHT_WRITE_SUCCESS_WITH_COLLISION : DHT_SUCCESS;
}

int DHT_to_file(DHT *table, const char *filename)
{
    if (!table)
        return DHT_MPI_ERROR;
    table->last = mpidht_dump(table->table, filename);
    return table->last == MPIDHT_OK        ? DHT_SUCCESS
           : table->last == MPIDHT_ERR_FILE_IO ? DHT_FILE_WRITE_ERROR
                                           : DHT_MPI_ERROR;
}

int DHT_from_file(DHT *table, const char *filename)
{
    if (!table)
        return DHT_MPI_ERROR;
    mpidht_restore_report_t report = MPIDHT_RESTORE_REPORT_INIT;
    table->last = mpidht_restore(table->table, filename, &report);
    switch (table->last) {
    case MPIDHT_OK:
        /* POET loaded through DHT_write, whose collisions counted. The
         * report's count is over all processes: it counts on rank 0. */
        if (table->rank == 0)
            table->load_evictions += report.evicted;
        return DHT_SUCCESS;
    case MPIDHT_ERR_FILE_IO:
        return DHT_FILE_IO_ERROR;
    case MPIDHT_ERR_FILE_FORMAT:
    case MPIDHT_ERR_FILE_MISMATCH:
        return DHT_WRONG_FILE;
    case MPIDHT_ERR_FILE_CORRUPT:
        return DHT_FILE_READ_ERROR;
    default:
        return DHT_MPI_ERROR;
    }
}

static int clamp(uint64_t v)
{
    return v > INT_MAX ? INT_MAX : (int)v;
}

int DHT_free(DHT *table, int *collision_counter, int *readerror_counter)
{
    if (!table)
        return DHT_MPI_ERROR;
    mpidht_stats_t s = MPIDHT_STATS_INIT;
    if (mpidht_stats_local(table->table, &s) == MPIDHT_OK) {
        if (collision_counter)
            *collision_counter = clamp(s.evictions + table->load_evictions);
        if (readerror_counter)
            *readerror_counter = clamp(s.misses);
    }
    table->last = mpidht_free(&table->table);
    if (table->table)
        return DHT_MPI_ERROR; /* not freed (the debug mode's check): kept to retry */
    mpidht_status_t st = table->last;
    free(table);
    return st == MPIDHT_OK ? DHT_SUCCESS : DHT_MPI_ERROR;
}

int DHT_print_statistics(DHT *table)
{
    if (!table)
        return DHT_MPI_ERROR;
    mpidht_stats_t s = MPIDHT_STATS_INIT;
    table->last = mpidht_stats_global(table->table, &s);
    if (table->last != MPIDHT_OK)
        return DHT_MPI_ERROR;
    if (table->rank == 0) {
        printf("DHT statistics (all processes)\n");
        for (int i = 0; i < MPIDHT_STATS_COUNT; ++i)
            printf("  %-18s %20llu  %s\n", mpidht_stats_name(i),
                   (unsigned long long)mpidht_stats_value(&s, i),
                   mpidht_stats_description(i));
        fflush(stdout);
    }
    return DHT_SUCCESS;
}

mpidht_status_t DHT_last_status(const DHT *table)
{
    return table ? table->last : MPIDHT_ERR_INVALID_HANDLE;
}
