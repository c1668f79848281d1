/*
 * Working state of a batched read or write, and the steps every protocol
 * shares: issuing one-sided operations for many keys, then completing them
 * with one flush per target. Internal.
 *
 * A batch is handled in chunks (bounded memory), and a chunk of writes in
 * rounds of keys whose candidate buckets are pairwise disjoint, so that no
 * key of a round can see another one's write: the outcome is the same as
 * writing the keys one at a time in order.
 */
#ifndef MPIDHT_BATCH_H
#define MPIDHT_BATCH_H

#include "table.h"

typedef struct mpidht_batch_item {
    mpidht_address_t addr;
    const unsigned char *key;
    const unsigned char *value; /* writes only */
    unsigned char *slots;       /* one bucket-sized slot per candidate */
    bool active;                /* taking part in the current step */
    bool fallback;              /* to be finished by the single-key path */
    int found;                  /* read: slot of the hit, or -1 */
    unsigned chosen;            /* write: the candidate to store into */
    mpidht_write_outcome_t outcome;
    bool key_locked;            /* fine: holds the lock of candidate 0 */
    bool bucket_locked;         /* fine: holds the lock of candidate chosen */
    int64_t old[MPIDHT_MAX_CANDIDATES]; /* fine: fetched lock words */
} mpidht_batch_item_t;

/* The work space, allocated at the first batched call and kept with the
 * table (t->batch). */
typedef struct mpidht_batch {
    size_t capacity;             /* items per chunk */
    mpidht_batch_item_t *items;  /* [capacity] */
    unsigned char *slots;        /* [capacity * candidates] buckets */
    int *targets;                /* [capacity] distinct targets, sorted */
    /* Buckets claimed by the current round: open addressing on
     * (rank, index) + 1; an entry counts only if its round matches. */
    size_t claim_capacity;       /* a power of two */
    uint64_t *claim_bucket;
    uint32_t *claim_round;
    uint32_t round;
} mpidht_batch_t;

/* Sets up t->batch if not yet done. MPIDHT_OK or MPIDHT_ERR_NO_MEMORY. */
mpidht_status_t mpidht_batch_prepare(mpidht_t *t);
void mpidht_batch_release(mpidht_t *t);

/* Starts a new, empty round of writes. */
void mpidht_batch_new_round(mpidht_batch_t *b);

/* Claims every candidate bucket of item for the current round; false,
 * claiming nothing, if one of them is claimed already. */
bool mpidht_batch_claim(mpidht_batch_t *b, const mpidht_batch_item_t *item);

/*
 * The steps below work on the items of items[0..n) that are active.
 */

/* Activates exactly the items whose target is rank. */
void mpidht_batch_activate_target(mpidht_batch_item_t *items, size_t n, int rank);

/* Completes every operation issued to a target of an active item: one
 * MPI_Win_flush per distinct target. */
mpidht_status_t mpidht_batch_flush(mpidht_t *t, const mpidht_batch_item_t *items,
                                   size_t n);

/* The same for the targets of every item, active or not. */
mpidht_status_t mpidht_batch_flush_every(mpidht_t *t, const mpidht_batch_item_t *items,
                                         size_t n);

/* Gets everything a write puts (checksum, meta byte, key, value) of
 * candidates [first, first + count) and completes. */
mpidht_status_t mpidht_batch_get_buckets(mpidht_t *t, mpidht_batch_item_t *items,
                                         size_t n, unsigned first, unsigned count);

/* Gets meta byte and key of every candidate and completes. */
mpidht_status_t mpidht_batch_probe_keys(mpidht_t *t, mpidht_batch_item_t *items,
                                        size_t n);

/* Fetches candidates [first, first + count) consistently, as the protocol
 * defines it, and sets each active item's found (or fallback). */
typedef mpidht_status_t (*mpidht_batch_probe_fn)(mpidht_t *t,
                                                 mpidht_batch_item_t *items,
                                                 size_t n, unsigned first,
                                                 unsigned count);

/* The batched counterpart of mpidht_read_probing: the first candidate of
 * every active key, then the other candidates of every key still missing.
 * Items must start with found = -1 and fallback = false; those left with
 * fallback set are the caller's to finish. Deactivates the items it is
 * done with. */
mpidht_status_t mpidht_batch_read_probing(mpidht_t *t, mpidht_batch_item_t *items,
                                          size_t n, mpidht_batch_probe_fn probe);

/* Probes the keys (whose buckets must be disjoint), chooses each one's
 * slot, puts every staged bucket and completes: the write without locks,
 * for the lock-free protocol and for the coarse one under its window
 * lock. */
mpidht_status_t mpidht_batch_store(mpidht_t *t, mpidht_batch_item_t *items,
                                   size_t n);

/* Fills slot 0 of item with its key and value as a write puts them. */
void mpidht_batch_stage(const mpidht_t *t, mpidht_batch_item_t *item);

/* Issues the put of item's slot 0 into candidate item->chosen. */
mpidht_status_t mpidht_batch_put(mpidht_t *t, const mpidht_batch_item_t *item);

#endif /* MPIDHT_BATCH_H */
