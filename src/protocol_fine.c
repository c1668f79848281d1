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
 * Writes and removes of a key are serialised by the lock of the key's
 * first candidate (its "key lock"): under it they probe every candidate,
 * so two writers of one key cannot store it in two buckets. If the chosen
 * bucket is another one, they try its lock once and, failing, let go of
 * everything and start over.
 *
 * Deadlock freedom: a process waits for a lock only while it holds no
 * exclusive lock (writers wait for the key lock alone, and only try other
 * locks); readers hold registrations but never an exclusive lock.
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
    if (t->exclusive_by_fetch_add) {
        /* Add only when the word looks free: a failed add still shows as a
         * writer to everyone for a moment, and two writers that kept adding
         * over each other could starve both. */
        int64_t now = -1;
        if (MPI_Fetch_and_op(NULL, &now, MPI_INT64_T, rank, lock_disp(t, index),
                             MPI_NO_OP, t->win) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
        mpidht_status_t st = mpidht_rma_flush(t, rank);
        *acquired = false;
        if (st != MPIDHT_OK || now != 0)
            return st;
    }
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
    /* Static: the operand must outlive the operation, completed later by
     * the caller's flush. */
    static const int64_t one = 1;
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

static mpidht_status_t unlock_exclusive(mpidht_t *t, int rank, uint32_t index)
{
    return add_to_lock(t, rank, index, -MPIDHT_FINE_EXCLUSIVE);
}

/* What a write or remove does while it holds the key lock, after probing
 * every candidate into t->probe. Sets *done to false to have the caller
 * let go of the key lock and start over. */
typedef mpidht_status_t (*key_locked_fn)(mpidht_t *t, const mpidht_address_t *addr,
                                         const void *key, bool *done, void *result);

/* Runs fn under the key lock (the lock of the key's first candidate),
 * starting over with back-off until fn is done. */
static mpidht_status_t with_key_lock(mpidht_t *t, const mpidht_address_t *addr,
                                     const void *key, key_locked_fn fn, void *result)
{
    for (unsigned attempt = 0;; ++attempt) {
        mpidht_status_t st = lock_exclusive(t, addr->rank, addr->index[0]);
        if (st != MPIDHT_OK)
            return st;
        bool done = false;
        st = mpidht_rma_probe_keys(t, addr);
        if (st == MPIDHT_OK)
            st = fn(t, addr, key, &done, result);
        mpidht_status_t released = unlock_exclusive(t, addr->rank, addr->index[0]);
        if (st != MPIDHT_OK || released != MPIDHT_OK || done)
            return st != MPIDHT_OK ? st : released;
        t->stats.lock_retries++;
        mpidht_backoff(attempt);
    }
}

/* Under the key lock, locks bucket index of addr as well, unless it is the
 * key lock's own bucket, and fetches its meta byte and key into probe slot
 * 0: other keys' writers may have changed it since the probe. *acquired
 * is false if its lock was busy. */
static mpidht_status_t lock_and_refetch(mpidht_t *t, const mpidht_address_t *addr,
                                        uint32_t index, bool *acquired)
{
    *acquired = index == addr->index[0];
    mpidht_status_t st = MPIDHT_OK;
    if (!*acquired)
        st = try_exclusive(t, addr->rank, index, acquired);
    if (st != MPIDHT_OK || !*acquired)
        return st;
    mpidht_address_t one = {.rank = addr->rank, .count = 1, .index = {index}};
    st = mpidht_rma_probe_keys(t, &one);
    if (st != MPIDHT_OK && index != addr->index[0])
        unlock_exclusive(t, addr->rank, index);
    return st;
}

static mpidht_status_t unlock_other(mpidht_t *t, const mpidht_address_t *addr,
                                    uint32_t index, mpidht_status_t st)
{
    mpidht_status_t released =
        index == addr->index[0] ? MPIDHT_OK : unlock_exclusive(t, addr->rank, index);
    return st != MPIDHT_OK ? st : released;
}

/* key_locked_fn of a write: stores t->staging in the chosen candidate;
 * result is the mpidht_write_outcome_t. */
static mpidht_status_t write_key_locked(mpidht_t *t, const mpidht_address_t *addr,
                                        const void *key, bool *done, void *result)
{
    mpidht_write_outcome_t *outcome = result;
    mpidht_write_choice_t c = mpidht_choose_slot(t, t->probe, addr->count, key);
    uint32_t index = addr->index[c.slot];
    bool acquired = false;
    mpidht_status_t st = lock_and_refetch(t, addr, index, &acquired);
    if (st != MPIDHT_OK || !acquired)
        return st;
    unsigned char *b = mpidht_slot(t, t->probe, 0);
    *done = true;
    if (mpidht_bucket_holds(t, b, key))
        *outcome = MPIDHT_WRITE_UPDATED;
    else if (mpidht_bucket_is_free(t, b))
        *outcome = MPIDHT_WRITE_INSERTED;
    else { /* another key took it: fine only if we meant to evict */
        *done = c.outcome == MPIDHT_WRITE_EVICTED;
        *outcome = MPIDHT_WRITE_EVICTED;
    }
    if (*done)
        st = mpidht_rma_put_staged(t, addr->rank, index);
    return unlock_other(t, addr, index, st);
}

static mpidht_status_t fine_write(mpidht_t *t, const mpidht_address_t *addr,
                                  const void *key, const void *value,
                                  mpidht_write_outcome_t *outcome)
{
    mpidht_stage_bucket(t, key, value);
    return with_key_lock(t, addr, key, write_key_locked, outcome);
}

/* key_locked_fn of a remove: clears every candidate that holds key;
 * result is a bool, set when one did. */
static mpidht_status_t remove_key_locked(mpidht_t *t, const mpidht_address_t *addr,
                                         const void *key, bool *done, void *result)
{
    bool *removed = result;
    bool holds[MPIDHT_MAX_CANDIDATES];
    for (unsigned i = 0; i < addr->count; ++i)
        holds[i] = mpidht_bucket_holds(t, mpidht_slot(t, t->probe, i), key);
    for (unsigned i = 0; i < addr->count; ++i) {
        if (!holds[i])
            continue;
        bool acquired = false;
        mpidht_status_t st = lock_and_refetch(t, addr, addr->index[i], &acquired);
        if (st != MPIDHT_OK || !acquired)
            return st; /* *done stays false: start over */
        /* Another key's writer may have evicted key from it meanwhile. */
        if (mpidht_bucket_holds(t, mpidht_slot(t, t->probe, 0), key)) {
            st = mpidht_rma_clear_header(t, addr->rank, addr->index[i]);
            *removed = *removed || st == MPIDHT_OK;
        }
        st = unlock_other(t, addr, addr->index[i], st);
        if (st != MPIDHT_OK)
            return st;
    }
    *done = true;
    return MPIDHT_OK;
}

static mpidht_status_t fine_remove(mpidht_t *t, const mpidht_address_t *addr,
                                   const void *key)
{
    bool removed = false;
    mpidht_status_t st = with_key_lock(t, addr, key, remove_key_locked, &removed);
    if (st != MPIDHT_OK)
        return st;
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
