/*
 * Coarse-grained protocol (paper 000, section 3.1): every operation holds
 * MPI_Win_lock on the target's whole window, shared for reads and
 * exclusive for writes and removes.
 */
#include "bucket.h"
#include "protocol.h"
#include "rma.h"

static mpidht_status_t no_epoch(mpidht_t *t)
{
    (void)t;
    return MPIDHT_OK;
}

/* Ends the epoch opened by MPI_Win_lock, keeping the first error. */
static mpidht_status_t unlock(mpidht_t *t, int rank, mpidht_status_t st)
{
    mpidht_status_t unlocked = mpidht_mpi_status(MPI_Win_unlock(rank, t->win));
    return st != MPIDHT_OK && st != MPIDHT_NOT_FOUND ? st
           : unlocked != MPIDHT_OK                   ? unlocked
                                                     : st;
}

/* Under the shared window lock every fetched bucket is consistent. */
static mpidht_status_t coarse_probe(mpidht_t *t, const mpidht_address_t *addr,
                                    unsigned first, unsigned count,
                                    const void *key, int *found)
{
    mpidht_status_t st = mpidht_rma_probe_buckets(t, addr, first, count);
    *found = st == MPIDHT_OK ? mpidht_find_key(t, t->probe, first, count, key) : -1;
    return st;
}

static mpidht_status_t coarse_read(mpidht_t *t, const mpidht_address_t *addr,
                                   const void *key, void *value)
{
    if (MPI_Win_lock(MPI_LOCK_SHARED, addr->rank, 0, t->win) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    return unlock(t, addr->rank,
                  mpidht_read_probing(t, addr, key, value, coarse_probe));
}

static mpidht_status_t coarse_write(mpidht_t *t, const mpidht_address_t *addr,
                                    const void *key, const void *value,
                                    mpidht_write_outcome_t *outcome)
{
    if (MPI_Win_lock(MPI_LOCK_EXCLUSIVE, addr->rank, 0, t->win) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    mpidht_status_t st = mpidht_rma_probe_keys(t, addr);
    if (st == MPIDHT_OK) {
        mpidht_write_choice_t c = mpidht_choose_slot(t, t->probe, addr->count, key);
        mpidht_stage_bucket(t, key, value);
        st = mpidht_rma_put_staged(t, addr->rank, addr->index[c.slot]);
        *outcome = c.outcome;
    }
    return unlock(t, addr->rank, st);
}

static mpidht_status_t coarse_remove(mpidht_t *t, const mpidht_address_t *addr,
                                     const void *key)
{
    if (MPI_Win_lock(MPI_LOCK_EXCLUSIVE, addr->rank, 0, t->win) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    return unlock(t, addr->rank, mpidht_clear_key(t, addr, key));
}

const mpidht_protocol_ops_t mpidht_protocol_coarse = {
    .id = MPIDHT_PROTOCOL_COARSE,
    .header_size = 0,
    .lock_size = 0,
    .open = no_epoch,
    .close = no_epoch,
    .read = coarse_read,
    .write = coarse_write,
    .remove = coarse_remove,
};
