/*
 * The table object and the pieces every protocol shares. Internal.
 */
#ifndef MPIDHT_TABLE_H
#define MPIDHT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpidht.h"

struct mpidht_protocol_ops;

/* A key's place in the table: the owning process and its candidates. */
typedef struct mpidht_address {
    int rank;
    unsigned count;
    uint32_t index[MPIDHT_MAX_CANDIDATES];
} mpidht_address_t;

struct mpidht {
    MPI_Comm comm; /* private duplicate, errors return */
    MPI_Win win;
    int rank;
    int comm_size;

    size_t key_size;
    size_t value_size;
    size_t bucket_size; /* stride between buckets, multiple of 8 */
    size_t meta_offset; /* protocol header bytes before the meta byte */
    size_t data_offset; /* first byte a write puts: after any lock word */
    size_t data_size;   /* bytes a write puts: checksum, meta, key, value */
    unsigned candidates;
    mpidht_protocol_t protocol;
    mpidht_window_kind_t window;
    bool exclusive_by_fetch_add; /* fine: avoid MPI_Compare_and_swap */
    const struct mpidht_protocol_ops *ops;

    mpidht_hash_fn hash;
    void *hash_user_data;

    uint64_t local_buckets;
    uint64_t total_buckets;
    uint32_t hosts;          /* processes hosting at least one bucket */
    int *host_rank;          /* [hosts] their ranks, ascending */
    uint64_t *host_buckets;  /* [hosts] their bucket counts */

    unsigned char *local_base; /* this process's buckets */
    void *alloc_mem;           /* MPI_Alloc_mem block (window kind create) */

    /* Per-operation work space: one bucket-sized slot per candidate, and
     * one bucket to assemble a write in. Allocated once at create. */
    unsigned char *probe;
    unsigned char *staging;
    /* Work space of batched calls, allocated at the first one. */
    struct mpidht_batch *batch;
    /* Work space of local iteration and dump, allocated at first use. */
    struct mpidht_scan *scan;

    mpidht_stats_t stats;
};

/* MPIDHT_ERR_INVALID_HANDLE if t is NULL, MPIDHT_ERR_MPI_NOT_INITIALIZED
 * after MPI_Finalize (any MPI call would be erroneous), else MPIDHT_OK. */
mpidht_status_t mpidht_check_table(const mpidht_t *t);

/* The target and candidates of key. */
void mpidht_locate(const mpidht_t *t, const void *key, mpidht_address_t *addr);

#endif /* MPIDHT_TABLE_H */
