/*
 * The table object and the pieces every protocol shares. Internal.
 */
#ifndef MPIDHT_TABLE_H
#define MPIDHT_TABLE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "address.h"
#include "layout.h"
#include "mpidht.h"

/* Bytes of a table's error detail, its terminating zero included. */
#define MPIDHT_DETAIL_SIZE 640

struct mpidht_protocol_ops;

/* What a table keeps for diagnosis: the error detail and the state of the
 * debug mode's check of collective calls (collective_check.c). Reached
 * through a pointer so that collective calls on a const handle
 * (mpidht_stats_global) can set it. */
typedef struct mpidht_diag {
    /* mpidht_error_detail(): what the last collective call failed on. */
    char detail[MPIDHT_DETAIL_SIZE];
    double check_timeout;   /* MPIDHT_DEBUG_COLLECTIVES, seconds; 0 = off */
    uint64_t check_epoch;   /* checks passed; equal everywhere between calls */
    uint64_t check_attempt; /* checks begun on this process */
    uint64_t note[3][3];    /* this process's notes of its last check */
    /* What it last heard from each process of the table's communicator
     * (NULL until the first check on more than one process; freed by
     * mpidht_diag_release). */
    struct mpidht_peer *peers;
} mpidht_diag_t;

/* A key's place in the table: the hosting process and its candidates
 * (count of them, distinct; fewer than the table's candidates only on a
 * process hosting fewer buckets), of which index[0..derived) are known:
 * a read on this node derives the others only if the first misses
 * (mpidht_address_need; read them with mpidht_candidate). */
typedef struct mpidht_address {
    int rank;
    unsigned count;
    unsigned derived;
    uint64_t hash;                 /* the key's hash and */
    uint64_t buckets;              /* its host's buckets: derive the rest */
    uint32_t index[MPIDHT_MAX_CANDIDATES];
} mpidht_address_t;

struct mpidht {
    MPI_Comm comm; /* private duplicate, errors return */
    MPI_Win win;
    int rank;
    int comm_size;

    size_t key_size;
    size_t value_size;
    mpidht_layout_t layout;
    unsigned candidates;
    mpidht_protocol_t protocol;
    mpidht_window_kind_t window;
    bool single_node; /* every process of comm on this node */
    mpidht_eviction_t eviction;
    double timeout; /* seconds; 0 = none */
    const struct mpidht_protocol_ops *ops;

    mpidht_hash_fn hash;
    void *hash_user_data;

    uint64_t local_buckets;
    uint64_t total_buckets;
    uint32_t hosts;          /* processes hosting at least one bucket */
    int *host_rank;          /* [hosts] their ranks, ascending */
    uint64_t *host_first;    /* [hosts + 1] start of each one's bucket range */

    /* [comm_size] 1 where the process shares this process's node
     * (MPI_COMM_TYPE_SHARED): one-sided operations to the others cross
     * the network, and a flush of them is a round trip. */
    unsigned char *same_node;
    int node_size;     /* processes of comm on this node */
    double node_bytes; /* their buckets' bytes, summed (as double: no wrap) */
    uint64_t node_memory; /* what this process found the node could give them */

    unsigned char *local_base; /* this process's buckets */
    /* [comm_size] where this process can address each process's buckets
     * (every process's on a shared window, its own otherwise; NULL where
     * it cannot). Prefetch hints use it on any window; the engine's
     * operations only where direct is set. */
    unsigned char **node_base;
    /* A shared window (every process on this node) whose addresses are
     * 8-byte aligned on every process: the engine moves bytes with loads,
     * stores and processor atomics through node_base instead of one-sided
     * calls (engine.c). */
    bool direct;
    /* [comm_size] on a shared window: the word after each process's
     * buckets (window.h) that the coarse protocol locks the process's
     * buckets with on a direct table; NULL otherwise. */
    int64_t **window_lock;
    void *alloc_mem;           /* MPI_Alloc_mem block (window kind create) */
    /* The pages of local_base advised for huge pages (window.c), given
     * back to the system's default when the window is freed. */
    void *huge_start;
    size_t huge_bytes;

    /* MPI_Finalize is watched through an attribute of MPI_COMM_SELF on
     * this key, whose delete callback (which MPI_Finalize runs first of
     * all) sets mpi_finalized: no MPI call per operation. MPI_KEYVAL_INVALID
     * until the handle exists; MPI_Finalized is asked then. */
    int finalize_keyval;
    bool mpi_finalized;

    const char *mpi_family;    /* "Open MPI", "MPICH" or NULL: the MPI
                                * library this process runs with, as
                                * create read it (mpidht_create) */
    double clock_base;         /* rank 0's real-time clock at creation, in
                                * seconds: recency time 0 (mpidht_now_ms) */
    uint64_t random;           /* xorshift state: jitter, refresh sampling */

    /* Work space of every operation (single ones use one item of it). */
    struct mpidht_engine *engine;
    /* Work space of local iteration, dump and clear, at first use. */
    struct mpidht_scan *scan;

    mpidht_stats_t stats;

    mpidht_diag_t *diag;
};

/* Sets the error detail (printf-style; cut to fit). */
/* Whether this process runs with Open MPI (t->mpi_family). */
static inline bool mpidht_runs_open_mpi(const mpidht_t *t)
{
    return t->mpi_family && strcmp(t->mpi_family, "Open MPI") == 0;
}

void mpidht_set_detail(const mpidht_t *t, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends printf-style text to the string out of size bytes (cut to fit). */
void mpidht_append(char *out, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets the error detail to "<what> '<path>': <MPI's message for rc>". */
void mpidht_set_mpi_detail(const mpidht_t *t, int rc, const char *what, const char *path);

/* MPIDHT_ERR_INVALID_HANDLE if t is NULL, MPIDHT_ERR_MPI_NOT_INITIALIZED
 * after MPI_Finalize (any MPI call would be erroneous), else MPIDHT_OK. */
mpidht_status_t mpidht_check_table(const mpidht_t *t);

/* The host and candidates of key, the first `derive` of them (at most
 * all) derived now. */
void mpidht_locate(const mpidht_t *t, const void *key, mpidht_address_t *addr,
                   unsigned derive);

/* The same for a key whose hash (t->hash of it) is known. */
void mpidht_locate_hashed(const mpidht_t *t, uint64_t hash, mpidht_address_t *addr,
                          unsigned derive);

/* Derives addr's candidates up to n (at most addr->count). */
static inline void mpidht_address_need(mpidht_address_t *addr, unsigned n)
{
    if (addr->derived < n) {
        mpidht_address_extend(addr->hash, addr->buckets, addr->derived, n, addr->index);
        addr->derived = n;
    }
}

/* Candidate c's bucket index; c must be derived. */
static inline uint32_t mpidht_candidate(const mpidht_address_t *addr, unsigned c)
{
    assert(c < addr->derived);
    return addr->index[c];
}

/* Milliseconds since the table was created, at least 1 (0 = never). */
uint64_t mpidht_now_ms(const mpidht_t *t);

/* A uniformly distributed 64-bit number from the table's generator. */
uint64_t mpidht_random(mpidht_t *t);

#endif /* MPIDHT_TABLE_H */
