/*
 * A program written against POET's published DHT API (Appendix A,
 * Listings A2–A5, and DHT_to_file / DHT_from_file of A2), built with
 * nothing but mpidht_poet.h: create with a POET-style hash of
 * (key size, key), write until keys collide, read hits and misses, save,
 * load into a table of another size, and free with the counters. A free
 * that fails (in mpidht's debug mode, entered by one process alone) keeps
 * the handle, and a second free by every process succeeds. A load into a
 * table too small for the file counts the records it lost as collisions;
 * a free after MPI_Finalize is an MPI error that frees all the same.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpidht_poet.h"

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                      \
        }                                                                      \
    } while (0)

enum { KEY_DOUBLES = 9, DATA_DOUBLES = 8 };

/* The kind of hash POET passes: FNV-1a over the key's bytes. */
static uint64_t poet_hash(int key_size, void *key)
{
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325u;
    for (int i = 0; i < key_size; ++i) {
        h ^= p[i];
        h *= 0x100000001b3u;
    }
    return h;
}

static void make_entry(double *key, double *data, int id)
{
    for (int i = 0; i < KEY_DOUBLES; ++i)
        key[i] = id + i * 0.125;
    for (int i = 0; i < DATA_DOUBLES; ++i)
        data[i] = -id - i * 0.5;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int key_size = KEY_DOUBLES * sizeof(double);
    const int data_size = DATA_DOUBLES * sizeof(double);
    double key[KEY_DOUBLES], data[DATA_DOUBLES], out[DATA_DOUBLES];

    /* Too small on purpose: 40 buckets per process for 100 keys each. */
    DHT *dht = DHT_create(MPI_COMM_WORLD, 40, data_size, key_size, &poet_hash);
    CHECK(dht != NULL);
    int collisions = 0, ok = 0;
    for (int id = rank * 100; id < rank * 100 + 100; ++id) {
        make_entry(key, data, id);
        int res = DHT_write(dht, key, data);
        CHECK(res == DHT_SUCCESS || res == DHT_WRITE_SUCCESS_WITH_COLLISION);
        collisions += res == DHT_WRITE_SUCCESS_WITH_COLLISION;
    }
    /* Which rank meets the evictions depends on timing; the job does. */
    int all_collisions = 0;
    MPI_Allreduce(&collisions, &all_collisions, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all_collisions > 0);
    for (int id = rank * 100; id < rank * 100 + 100; ++id) {
        make_entry(key, data, id);
        int res = DHT_read(dht, key, out);
        CHECK(res == DHT_SUCCESS || res == DHT_READ_ERROR);
        if (res == DHT_SUCCESS) {
            CHECK(memcmp(out, data, sizeof data) == 0);
            ++ok;
        }
    }
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all_ok > 0);
    make_entry(key, data, 1000000);
    memset(out, 0, sizeof out);
    CHECK(DHT_read(dht, key, out) == DHT_READ_ERROR);
    CHECK(out[0] == 0.0);
    CHECK(DHT_print_statistics(dht) == DHT_SUCCESS);

    char file[64];
    snprintf(file, sizeof file, "poet_api_np%d.dht", size);
    /* A file that cannot even be opened: POET's DHT_FILE_IO_ERROR, here
     * DHT_FILE_WRITE_ERROR, as for every file error (docs/c-guide.md). */
    CHECK(DHT_to_file(dht, "no-such-dir/poet.dht") == DHT_FILE_WRITE_ERROR);
    CHECK(DHT_last_status(dht) == MPIDHT_ERR_FILE_IO);
    CHECK(DHT_to_file(dht, file) == DHT_SUCCESS);
    int evictions = -1, misses = -1;
    CHECK(DHT_free(dht, &evictions, &misses) == DHT_SUCCESS);
    CHECK(evictions == collisions);
    CHECK(misses == 100 - ok + 1);

    /* A larger table takes the saved one whole. */
    DHT *loaded = DHT_create(MPI_COMM_WORLD, 1000, data_size, key_size, &poet_hash);
    CHECK(loaded != NULL);
    CHECK(DHT_from_file(loaded, file) == DHT_SUCCESS);
    int found = 0;
    for (int id = rank * 100; id < rank * 100 + 100; ++id) {
        make_entry(key, data, id);
        if (DHT_read(loaded, key, out) == DHT_SUCCESS) {
            CHECK(memcmp(out, data, sizeof data) == 0);
            ++found;
        }
    }
    CHECK(found == ok);
    CHECK(DHT_from_file(loaded, "no-such-file.dht") == DHT_FILE_IO_ERROR);
    CHECK(DHT_last_status(loaded) == MPIDHT_ERR_FILE_IO);
    CHECK(DHT_free(loaded, NULL, NULL) == DHT_SUCCESS);

    /* A table too small for the file: the records that find no room count
     * as collisions (on rank 0, for all processes), as POET's load through
     * DHT_write counted them. */
    DHT *small = DHT_create(MPI_COMM_WORLD, 8, data_size, key_size, &poet_hash);
    CHECK(small != NULL);
    CHECK(DHT_from_file(small, file) == DHT_SUCCESS);
    int placed = 0, all_placed = 0, lost = -1, all_lost = 0;
    for (int id = 0; id < size * 100; ++id) {
        make_entry(key, data, id);
        placed += id % size == rank && DHT_read(small, key, out) == DHT_SUCCESS;
    }
    CHECK(DHT_free(small, &lost, NULL) == DHT_SUCCESS);
    CHECK(rank == 0 || lost == 0);
    MPI_Allreduce(&placed, &all_placed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&lost, &all_lost, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(all_lost > 0 && all_lost == all_ok - all_placed);

    /* Other sizes: the file is refused. */
    DHT *other = DHT_create(MPI_COMM_WORLD, 100, data_size, key_size - 8, NULL);
    CHECK(other != NULL);
    CHECK(DHT_from_file(other, file) == DHT_WRONG_FILE);
    CHECK(DHT_free(other, NULL, NULL) == DHT_SUCCESS);
    /* Invalid sizes: no table, on every process. */
    CHECK(DHT_create(MPI_COMM_WORLD, 100, -1, key_size, NULL) == NULL);
    CHECK(DHT_read(NULL, key, out) == DHT_MPI_ERROR);
    CHECK(DHT_write(NULL, key, data) == DHT_MPI_ERROR);
    CHECK(DHT_free(NULL, NULL, NULL) == DHT_MPI_ERROR);

    if (size > 1) {
        setenv("MPIDHT_DEBUG_COLLECTIVES", "1", 1);
        DHT *kept = DHT_create(MPI_COMM_WORLD, 100, data_size, key_size, NULL);
        unsetenv("MPIDHT_DEBUG_COLLECTIVES");
        CHECK(kept != NULL);
        if (rank == 0) {
            CHECK(DHT_free(kept, NULL, NULL) == DHT_MPI_ERROR);
            CHECK(DHT_last_status(kept) == MPIDHT_ERR_COLLECTIVE_CHECK);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(DHT_free(kept, NULL, NULL) == DHT_SUCCESS);
    }

    DHT *late = DHT_create(MPI_COMM_WORLD, 100, data_size, key_size, NULL);
    CHECK(late != NULL);
    if (rank == 0)
        remove(file);
    MPI_Finalize();
    /* Freed after MPI_Finalize (a caller's mistake): an MPI error, and the
     * table is gone all the same (it was kept, and nothing could free it). */
    CHECK(DHT_free(late, NULL, NULL) == DHT_MPI_ERROR);
    return 0;
}
