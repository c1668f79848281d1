/*
 * The operations each consistency protocol provides: one interface, three
 * implementations (protocol_coarse.c, protocol_fine.c, protocol_lockfree.c).
 * The public entry points (ops.c) validate arguments, locate the key and
 * count reads, hits, writes and outcomes; a protocol only moves bytes
 * consistently and counts its own retries. Internal.
 */
#ifndef MPIDHT_PROTOCOL_H
#define MPIDHT_PROTOCOL_H

#include "batch.h"
#include "table.h"

typedef struct mpidht_protocol_ops {
    mpidht_protocol_t id;
    /* Bytes in front of the meta byte: lock word or checksum. */
    size_t header_size;
    /* Bytes of the header that a write never touches (the lock word). */
    size_t lock_size;

    /* Called collectively after the window exists / before it is freed:
     * open and close a long-lived access epoch if the protocol uses one. */
    mpidht_status_t (*open)(mpidht_t *t);
    mpidht_status_t (*close)(mpidht_t *t);

    /* MPIDHT_OK with value filled, MPIDHT_NOT_FOUND, or an error. */
    mpidht_status_t (*read)(mpidht_t *t, const mpidht_address_t *addr,
                            const void *key, void *value);
    /* MPIDHT_OK with *outcome set, or an error. */
    mpidht_status_t (*write)(mpidht_t *t, const mpidht_address_t *addr,
                             const void *key, const void *value,
                             mpidht_write_outcome_t *outcome);
    /* MPIDHT_OK if a bucket held key, MPIDHT_NOT_FOUND, or an error. */
    mpidht_status_t (*remove)(mpidht_t *t, const mpidht_address_t *addr,
                              const void *key);

    /* Batched read of items[0..n), each located, active, found = -1 and
     * fallback = false: sets found, or fallback for a key the single-key
     * read must finish. Every operation is complete on return. */
    mpidht_status_t (*read_batch)(mpidht_t *t, mpidht_batch_item_t *items,
                                  size_t n);
    /* Batched write of a round: items[0..n) located and active, their
     * candidate buckets pairwise disjoint. Stores each one and sets its
     * outcome, or sets fallback for a key the single-key write must
     * finish. Every operation is complete on return. */
    mpidht_status_t (*write_batch)(mpidht_t *t, mpidht_batch_item_t *items,
                                   size_t n);

    /* Copies the caller's own buckets [first, first + n) into the
     * bucket-sized slots of buf, each one whole as the protocol defines
     * it; a bucket that cannot be read whole (lock-free: its checksum
     * fails twice) gets its meta byte cleared in buf, and the table is
     * left alone. Every operation is complete on return. */
    mpidht_status_t (*read_local)(mpidht_t *t, uint32_t first, size_t n,
                                  unsigned char *buf);
} mpidht_protocol_ops_t;

extern const mpidht_protocol_ops_t mpidht_protocol_coarse;
extern const mpidht_protocol_ops_t mpidht_protocol_fine;
extern const mpidht_protocol_ops_t mpidht_protocol_lockfree;

/* The ops of protocol, or NULL if it is not a known protocol. */
const mpidht_protocol_ops_t *mpidht_protocol_lookup(mpidht_protocol_t protocol);

/* Opens/closes an MPI_Win_lock_all epoch (fine and lock-free share it). */
mpidht_status_t mpidht_epoch_lock_all(mpidht_t *t);
mpidht_status_t mpidht_epoch_unlock_all(mpidht_t *t);

/* Fetches candidates [first, first + count) of addr consistently, as the
 * protocol defines it, and sets *found to the first that holds key, or -1.
 * May return MPIDHT_NOT_FOUND to end the read as a miss at once. */
typedef mpidht_status_t (*mpidht_probe_fn)(mpidht_t *t,
                                           const mpidht_address_t *addr,
                                           unsigned first, unsigned count,
                                           const void *key, int *found);

/* The read every protocol shares: the first candidate alone (most hits end
 * there), then all the others in one round trip; copies the value of the
 * first candidate that holds key. MPIDHT_OK, MPIDHT_NOT_FOUND or an error. */
mpidht_status_t mpidht_read_probing(mpidht_t *t, const mpidht_address_t *addr,
                                    const void *key, void *value,
                                    mpidht_probe_fn probe);

/* Empties every candidate holding key (mpidht_rma_clear_header), without
 * taking any lock: the coarse protocol calls it under its window lock, the
 * lock-free protocol as is. MPIDHT_OK if one held key, MPIDHT_NOT_FOUND. */
mpidht_status_t mpidht_clear_key(mpidht_t *t, const mpidht_address_t *addr,
                                 const void *key);

/* Yields the processor after repeated failed attempts, so that on an
 * oversubscribed node the process holding a lock gets to run. */
void mpidht_backoff(unsigned attempt);

#endif /* MPIDHT_PROTOCOL_H */
