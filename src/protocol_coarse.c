/*
 * Coarse-grained protocol (paper 000, section 3.1): every operation holds
 * MPI_Win_lock on the target's whole window, shared for reads and
 * exclusive for writes and removes.
 */
#include <limits.h>

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
        mpidht_stage_bucket(t, t->staging, key, value);
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

/* coarse_probe for every active item (an mpidht_batch_probe_fn). */
static mpidht_status_t coarse_probe_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                          size_t n, unsigned first, unsigned count)
{
    mpidht_status_t st = mpidht_batch_get_buckets(t, items, n, first, count);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i)
        if (items[i].active)
            items[i].found = mpidht_find_key(t, items[i].slots, first, count,
                                             items[i].key);
    return st;
}

static mpidht_status_t read_step(mpidht_t *t, mpidht_batch_item_t *items, size_t n)
{
    return mpidht_batch_read_probing(t, items, n, coarse_probe_batch);
}

/* Runs step on the items of one target at a time, ascending, under that
 * target's window lock of the given type. */
static mpidht_status_t per_target(mpidht_t *t, mpidht_batch_item_t *items, size_t n,
                                  int lock_type,
                                  mpidht_status_t (*step)(mpidht_t *, mpidht_batch_item_t *,
                                                          size_t))
{
    for (int done = -1;;) {
        int rank = INT_MAX;
        for (size_t i = 0; i < n; ++i)
            if (items[i].addr.rank > done && items[i].addr.rank < rank)
                rank = items[i].addr.rank;
        if (rank == INT_MAX)
            return MPIDHT_OK;
        mpidht_batch_activate_target(items, n, rank);
        if (MPI_Win_lock(lock_type, rank, 0, t->win) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
        mpidht_status_t st = unlock(t, rank, step(t, items, n));
        if (st != MPIDHT_OK)
            return st;
        done = rank;
    }
}

static mpidht_status_t coarse_read_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                         size_t n)
{
    return per_target(t, items, n, MPI_LOCK_SHARED, read_step);
}

static mpidht_status_t coarse_write_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                          size_t n)
{
    return per_target(t, items, n, MPI_LOCK_EXCLUSIVE, mpidht_batch_store);
}

/* Under the shared lock of the caller's own window. */
static mpidht_status_t coarse_read_local(mpidht_t *t, uint32_t first, size_t n,
                                         unsigned char *buf)
{
    if (MPI_Win_lock(MPI_LOCK_SHARED, t->rank, 0, t->win) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    return unlock(t, t->rank, mpidht_rma_get_own(t, buf, first, n));
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
    .read_batch = coarse_read_batch,
    .write_batch = coarse_write_batch,
    .read_local = coarse_read_local,
};
