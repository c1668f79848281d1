/*
 * mpidht_poet.h — the DHT API of POET (Lübke et al., Geosci. Model Dev.
 * 2023, Appendix A, Listings A1–A5) on top of mpidht, so that code written
 * against that API compiles and links unchanged (link libmpidht_poet).
 *
 * The table uses the coarse protocol, as POET's did: every read takes a
 * shared and every write an exclusive lock on the target's window. What
 * the listings' struct members held is kept inside the opaque DHT object;
 * the paper states that users neither set nor read them.
 *
 * Return values: DHT_SUCCESS, DHT_READ_ERROR (read miss),
 * DHT_WRITE_SUCCESS_WITH_COLLISION (the write evicted another key), the
 * DHT_*FILE* values below for dump and restore, and DHT_MPI_ERROR for
 * every other failure (an MPI call, or an invalid argument such as a NULL
 * table). mpidht_strerror() of DHT_last_status() says which.
 */
#ifndef MPIDHT_POET_H
#define MPIDHT_POET_H

#include <stdint.h>

#include "mpidht.h" /* and mpi.h, as mpidht.h includes it */

#ifdef __cplusplus
extern "C" {
#endif

#define DHT_MPI_ERROR -1
#define DHT_READ_ERROR -2
#define DHT_SUCCESS 0
#define DHT_WRITE_SUCCESS_WITH_COLLISION 1

#define DHT_WRONG_FILE 11       /* not a dump, another version or sizes */
#define DHT_FILE_IO_ERROR 12    /* the file could not be opened */
#define DHT_FILE_READ_ERROR 13  /* truncated or failing a checksum */
#define DHT_FILE_WRITE_ERROR 14 /* the dump could not be written */

typedef struct DHT DHT;

/* COLLECTIVE over comm. A table of size_per_process buckets on every
 * process for keys of key_size and values of data_size bytes; hash_func
 * (key_size, key) hashes a key, or NULL for mpidht's default (XXH3).
 * Returns NULL on failure, on every process. */
DHT *DHT_create(MPI_Comm comm, unsigned int size_per_process, int data_size,
                int key_size, uint64_t (*hash_func)(int, void *));

/* Copies the value of key into destination: DHT_SUCCESS, or
 * DHT_READ_ERROR on a miss (destination untouched). */
int DHT_read(DHT *table, void *key, void *destination);

/* Stores data under key: DHT_SUCCESS, or DHT_WRITE_SUCCESS_WITH_COLLISION
 * when another key was evicted to make room. */
int DHT_write(DHT *table, void *key, void *data);

/* COLLECTIVE. Saves the table to filename (mpidht_dump: written under a
 * temporary name and renamed when complete). DHT_SUCCESS,
 * DHT_FILE_WRITE_ERROR or DHT_MPI_ERROR. */
int DHT_to_file(DHT *table, const char *filename);

/* COLLECTIVE. Loads a file written by DHT_to_file, from any process count
 * (mpidht_restore). DHT_SUCCESS, DHT_FILE_IO_ERROR (cannot open),
 * DHT_WRONG_FILE, DHT_FILE_READ_ERROR or DHT_MPI_ERROR; on an error the
 * table is left as it was. Records that find no room count as collisions
 * (as POET's load through DHT_write counted them): all processes' in
 * rank 0's collision_counter of DHT_free. */
int DHT_from_file(DHT *table, const char *filename);

/* COLLECTIVE. Frees the table; the calling process's eviction (and load
 * collision, DHT_from_file) and read miss counts go to
 * *collision_counter and *readerror_counter (either
 * may be NULL; counts above INT_MAX read INT_MAX). Where mpidht_free
 * leaves the table (its debug mode's check failed: not every process
 * entered), it returns DHT_MPI_ERROR and table stays valid, to be freed
 * again; after any other result table is gone. */
int DHT_free(DHT *table, int *collision_counter, int *readerror_counter);

/* COLLECTIVE. Rank 0 prints the counters summed over all processes. */
int DHT_print_statistics(DHT *table);

/* The mpidht status of the calling process's last call on table (not
 * part of POET's API: it tells what a DHT_MPI_ERROR was). */
mpidht_status_t DHT_last_status(const DHT *table);

#ifdef __cplusplus
}
#endif

#endif /* MPIDHT_POET_H */
