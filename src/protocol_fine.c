/*
 * Fine-grained protocol (paper 000, section 4.1): an 8-byte lock word at
 * the start of every bucket, all inside one MPI_Win_lock_all epoch.
 *
 *   writer: MPI_Compare_and_swap 0 -> MPIDHT_FINE_EXCLUSIVE, until it wins
 *           (a fetch-and-add variant where CAS crashes the MPI library);
 *           release by adding -MPIDHT_FINE_EXCLUSIVE.
 *   reader: MPI_Fetch_and_op +1; if the old value was >= EXCLUSIVE a writer
 *           holds the bucket, so undo (-1) and try again; release with -1.
 *
 * Deadlock freedom: a writer holds at most one lock and never waits while
 * holding it; a reader may hold several read registrations but never waits
 * for one while holding another without first undoing it.
 *
 * A write first probes all candidates without locks (a hint), then locks
 * only the chosen bucket and checks under the lock that the choice still
 * stands; if another writer changed it meanwhile, the write starts over.
 */
#include <string.h>

#include "bucket.h"
#include "protocol.h"
#include "rma.h"

static MPI_Aint lock_disp(const mpidht_t *t, uint32_t index)
{
    return mpidht_bucket_disp(t, index);
}

static mpidht_status_t add_to_lock(mpidht_t *t, int rank, uint32_t index,
                                   int64_t delta)
{
    int rc = MPI_Accumulate(&delta, 1, MPI_INT64_T, rank, lock_disp(t, index), 1,
                            MPI_INT64_T, MPI_SUM, t->win);
    if (rc != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    return mpidht_rma_flush(t, rank); /* completes before &delta dies */
}

/* One attempt at the writer's lock. With compare-and-swap (the paper's
 * way) the lock word goes 0 -> EXCLUSIVE or stays. Where the MPI library
 * crashes on MPI_Compare_and_swap (Open MPI 4.x osc rdma, see window.h)
 * the writer adds EXCLUSIVE instead: it owns the bucket if the word was 0
 * before its add, and otherwise takes the add back. Both are exclusive:
 * after a successful attempt every other reader or writer sees a value
 * >= EXCLUSIVE until the owner subtracts it. */
static mpidht_status_t try_exclusive(mpidht_t *t, int rank, uint32_t index,
                                     bool *acquired)
{
    const int64_t unlocked = 0, exclusive = MPIDHT_FINE_EXCLUSIVE;
    int64_t old = -1;
    int rc = t->exclusive_by_fetch_add
                 ? MPI_Fetch_and_op(&exclusive, &old, MPI_INT64_T, rank,
                                    lock_disp(t, index), MPI_SUM, t->win)
                 : MPI_Compare_and_swap(&exclusive, &unlocked, &old, MPI_INT64_T,
                                        rank, lock_disp(t, index), t->win);
    if (rc != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    mpidht_status_t st = mpidht_rma_flush(t, rank);
    *acquired = st == MPIDHT_OK && old == 0;
    if (st == MPIDHT_OK && !*acquired && t->exclusive_by_fetch_add)
        st = add_to_lock(t, rank, index, -MPIDHT_FINE_EXCLUSIVE);
    return st;
}

static mpidht_status_t lock_exclusive(mpidht_t *t, int rank, uint32_t index)
{
    for (unsigned attempt = 0;; ++attempt) {
        bool acquired = false;
        mpidht_status_t st = try_exclusive(t, rank, index, &acquired);
        if (st != MPIDHT_OK || acquired)
            return st;
        t->stats.lock_retries++;
        mpidht_backoff(attempt);
    }
}

static mpidht_status_t register_reader(mpidht_t *t, int rank, uint32_t index,
                                       int64_t *old)
{
    const int64_t one = 1;
    return mpidht_mpi_status(MPI_Fetch_and_op(&one, old, MPI_INT64_T, rank,
                                              lock_disp(t, index), MPI_SUM, t->win));
}

/* Registers as reader on candidates [first, first + count) of addr: all
 * registrations in one round trip, then a retry for each bucket that a
 * writer held. */
static mpidht_status_t lock_shared(mpidht_t *t, const mpidht_address_t *addr,
                                   unsigned first, unsigned count)
{
    int64_t old[MPIDHT_MAX_CANDIDATES];
    mpidht_status_t st = MPIDHT_OK;
    for (unsigned i = first; st == MPIDHT_OK && i < first + count; ++i)
        st = register_reader(t, addr->rank, addr->index[i], &old[i]);
    if (st == MPIDHT_OK)
        st = mpidht_rma_flush(t, addr->rank);
    for (unsigned i = first; st == MPIDHT_OK && i < first + count; ++i) {
        for (unsigned attempt = 0; st == MPIDHT_OK && old[i] >= MPIDHT_FINE_EXCLUSIVE;
             ++attempt) {
            t->stats.lock_retries++;
            st = add_to_lock(t, addr->rank, addr->index[i], -1);
            mpidht_backoff(attempt);
            if (st == MPIDHT_OK)
                st = register_reader(t, addr->rank, addr->index[i], &old[i]);
            if (st == MPIDHT_OK)
                st = mpidht_rma_flush(t, addr->rank);
        }
    }
    return st;
}

static mpidht_status_t unlock_shared(mpidht_t *t, const mpidht_address_t *addr,
                                     unsigned first, unsigned count)
{
    const int64_t minus_one = -1;
    for (unsigned i = first; i < first + count; ++i)
        if (MPI_Accumulate(&minus_one, 1, MPI_INT64_T, addr->rank,
                           lock_disp(t, addr->index[i]), 1, MPI_INT64_T,
                           MPI_SUM, t->win) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
    return mpidht_rma_flush(t, addr->rank);
}

/* Reads candidates [first, first + count) under read registrations and
 * finds the first that holds key (an mpidht_probe_fn). */
static mpidht_status_t read_locked(mpidht_t *t, const mpidht_address_t *addr,
                                   unsigned first, unsigned count,
                                   const void *key, int *found)
{
    mpidht_status_t st = lock_shared(t, addr, first, count);
    if (st != MPIDHT_OK)
        return st;
    st = mpidht_rma_probe_buckets(t, addr, first, count);
    mpidht_status_t released = unlock_shared(t, addr, first, count);
    if (st == MPIDHT_OK)
        st = released;
    *found = st == MPIDHT_OK ? mpidht_find_key(t, t->probe, first, count, key) : -1;
    return st;
}

static mpidht_status_t fine_read(mpidht_t *t, const mpidht_address_t *addr,
                                 const void *key, void *value)
{
    return mpidht_read_probing(t, addr, key, value, read_locked);
}

/* Under the lock, re-decides what writing key into bucket means, given the
 * outcome chosen from the unlocked hint. Returns false if the hint went
 * stale (the key left, or another key took the free bucket). */
static bool recheck_choice(mpidht_t *t, unsigned char *bucket, const void *key,
                           mpidht_write_outcome_t *outcome)
{
    if (mpidht_bucket_holds(t, bucket, key)) {
        *outcome = MPIDHT_WRITE_UPDATED;
        return true;
    }
    if (mpidht_bucket_is_free(t, bucket)) {
        if (*outcome == MPIDHT_WRITE_UPDATED)
            return false; /* the key was removed or moved: probe again */
        *outcome = MPIDHT_WRITE_INSERTED;
        return true;
    }
    return *outcome == MPIDHT_WRITE_EVICTED;
}

static mpidht_status_t fine_write(mpidht_t *t, const mpidht_address_t *addr,
                                  const void *key, const void *value,
                                  mpidht_write_outcome_t *outcome)
{
    mpidht_stage_bucket(t, key, value);
    for (unsigned attempt = 0;; ++attempt) {
        mpidht_status_t st = mpidht_rma_probe_keys(t, addr);
        if (st != MPIDHT_OK)
            return st;
        mpidht_write_choice_t c = mpidht_choose_slot(t, t->probe, addr->count, key);
        uint32_t index = addr->index[c.slot];
        st = lock_exclusive(t, addr->rank, index);
        if (st != MPIDHT_OK)
            return st;
        mpidht_address_t one = {.rank = addr->rank, .count = 1, .index = {index}};
        st = mpidht_rma_probe_buckets(t, &one, 0, 1);
        bool holds = st == MPIDHT_OK &&
                     recheck_choice(t, mpidht_slot(t, t->probe, 0), key, &c.outcome);
        if (holds)
            st = mpidht_rma_put_staged(t, addr->rank, index);
        mpidht_status_t released =
            add_to_lock(t, addr->rank, index, -MPIDHT_FINE_EXCLUSIVE);
        if (st != MPIDHT_OK)
            return st;
        if (released != MPIDHT_OK)
            return released;
        if (holds) {
            *outcome = c.outcome;
            return MPIDHT_OK;
        }
        t->stats.lock_retries++;
        mpidht_backoff(attempt);
    }
}

static mpidht_status_t fine_remove(mpidht_t *t, const mpidht_address_t *addr,
                                   const void *key)
{
    mpidht_status_t st = mpidht_rma_probe_keys(t, addr);
    if (st != MPIDHT_OK)
        return st;
    bool hinted[MPIDHT_MAX_CANDIDATES];
    for (unsigned i = 0; i < addr->count; ++i)
        hinted[i] = mpidht_bucket_holds(t, mpidht_slot(t, t->probe, i), key);

    bool removed = false;
    for (unsigned i = 0; i < addr->count; ++i) {
        if (!hinted[i])
            continue;
        st = lock_exclusive(t, addr->rank, addr->index[i]);
        if (st != MPIDHT_OK)
            return st;
        mpidht_address_t one = {.rank = addr->rank, .count = 1,
                                .index = {addr->index[i]}};
        st = mpidht_rma_probe_keys(t, &one);
        if (st == MPIDHT_OK && mpidht_bucket_holds(t, mpidht_slot(t, t->probe, 0), key)) {
            st = mpidht_rma_put_meta(t, addr->rank, addr->index[i], 0);
            removed = removed || st == MPIDHT_OK;
        }
        mpidht_status_t released =
            add_to_lock(t, addr->rank, addr->index[i], -MPIDHT_FINE_EXCLUSIVE);
        if (st != MPIDHT_OK)
            return st;
        if (released != MPIDHT_OK)
            return released;
    }
    return removed ? MPIDHT_OK : MPIDHT_NOT_FOUND;
}

const mpidht_protocol_ops_t mpidht_protocol_fine = {
    .id = MPIDHT_PROTOCOL_FINE,
    .header_size = sizeof(int64_t),
    .lock_size = sizeof(int64_t),
    .open = mpidht_epoch_lock_all,
    .close = mpidht_epoch_unlock_all,
    .read = fine_read,
    .write = fine_write,
    .remove = fine_remove,
};
