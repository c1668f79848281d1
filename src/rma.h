/*
 * Thin wrappers over the one-sided calls every protocol issues, so that
 * offsets are computed in one place and every MPI return code is checked.
 * None of them opens or closes an access epoch: the protocol does. Internal.
 */
#ifndef MPIDHT_RMA_H
#define MPIDHT_RMA_H

#include "table.h"

/* Issues MPI_Get of bytes [offset, offset + len) of candidates
 * [first, first + count) of addr into the same offsets of the bucket-sized
 * slots first.. of slots (t->probe, or a batch item's). Completion needs
 * mpidht_rma_flush. */
mpidht_status_t mpidht_rma_get_slots(mpidht_t *t, unsigned char *slots,
                                     const mpidht_address_t *addr,
                                     unsigned first, unsigned count,
                                     size_t offset, size_t len);

/* Gets and completes meta byte and key of every candidate of addr. */
mpidht_status_t mpidht_rma_probe_keys(mpidht_t *t, const mpidht_address_t *addr);

/* Gets and completes the whole of candidates [first, first + count). */
mpidht_status_t mpidht_rma_probe_buckets(mpidht_t *t,
                                         const mpidht_address_t *addr,
                                         unsigned first, unsigned count);

/* Issues the put of the data region (everything but a lock word) of the
 * bucket-sized slot b into bucket index of rank. b must stay unchanged
 * until a flush completes the put. */
mpidht_status_t mpidht_rma_put_bucket(mpidht_t *t, int rank, uint32_t index,
                                      const unsigned char *b);

/* Puts the data region of t->staging into bucket index of rank and
 * completes it. */
mpidht_status_t mpidht_rma_put_staged(mpidht_t *t, int rank, uint32_t index);

/* Puts a single meta byte into bucket index of rank and completes it. */
mpidht_status_t mpidht_rma_put_meta(mpidht_t *t, int rank, uint32_t index,
                                    unsigned char meta);

/* Zeroes everything a write puts in front of the key — the meta byte and,
 * under the lock-free protocol, the checksum — and completes it. Zeroing
 * the checksum too means a reader that tears a later insert into this
 * bucket can never pair the new meta byte with the old, self-consistent
 * key, value and checksum. */
mpidht_status_t mpidht_rma_clear_header(mpidht_t *t, int rank, uint32_t index);

/* Issues one MPI_Get of the caller's own buckets [first, first + n),
 * whole, into buf. Completion needs mpidht_rma_flush (or an unlock). */
mpidht_status_t mpidht_rma_get_own(mpidht_t *t, unsigned char *buf,
                                   uint32_t first, size_t n);

mpidht_status_t mpidht_rma_flush(mpidht_t *t, int rank);

/* Maps an MPI return code to MPIDHT_OK or MPIDHT_ERR_MPI. */
static inline mpidht_status_t mpidht_mpi_status(int rc)
{
    return rc == MPI_SUCCESS ? MPIDHT_OK : MPIDHT_ERR_MPI;
}

#endif /* MPIDHT_RMA_H */
