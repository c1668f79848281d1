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

#include "batch.h"
#include "bucket.h"
#include "protocol.h"
#include "rma.h"

static MPI_Aint lock_disp(const mpidht_t *t, uint32_t index)
{
    return mpidht_bucket_disp(t, index);
}

/* Operands of the lock operations. Static, so that an operation may be
 * completed by a later flush. */
static const int64_t lock_free_word = 0, reader_add = 1, reader_sub = -1,
                     writer_add = MPIDHT_FINE_EXCLUSIVE,
                     writer_sub = -MPIDHT_FINE_EXCLUSIVE;

/* Issues an atomic add of *delta to the lock word of bucket index. */
static mpidht_status_t issue_lock_add(mpidht_t *t, int rank, uint32_t index,
                                      const int64_t *delta)
{
    return mpidht_mpi_status(MPI_Accumulate(delta, 1, MPI_INT64_T, rank,
                                            lock_disp(t, index), 1, MPI_INT64_T,
                                            MPI_SUM, t->win));
}

static mpidht_status_t add_to_lock(mpidht_t *t, int rank, uint32_t index,
                                   const int64_t *delta)
{
    mpidht_status_t st = issue_lock_add(t, rank, index, delta);
    return st == MPIDHT_OK ? mpidht_rma_flush(t, rank) : st;
}

/* Issues one attempt at a writer's lock, fetching the previous lock word
 * into *old: compare-and-swap 0 -> EXCLUSIVE, or an add of EXCLUSIVE
 * where compare-and-swap crashes (see try_exclusive). */
static mpidht_status_t issue_try_exclusive(mpidht_t *t, int rank, uint32_t index,
                                           int64_t *old)
{
    return mpidht_mpi_status(
        t->exclusive_by_fetch_add
            ? MPI_Fetch_and_op(&writer_add, old, MPI_INT64_T, rank,
                               lock_disp(t, index), MPI_SUM, t->win)
            : MPI_Compare_and_swap(&writer_add, &lock_free_word, old, MPI_INT64_T,
                                   rank, lock_disp(t, index), t->win));
}

/* Issues an atomic read of the lock word of bucket index into *now. */
static mpidht_status_t issue_peek(mpidht_t *t, int rank, uint32_t index,
                                  int64_t *now)
{
    return mpidht_mpi_status(MPI_Fetch_and_op(NULL, now, MPI_INT64_T, rank,
                                              lock_disp(t, index), MPI_NO_OP,
                                              t->win));
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
    *acquired = false;
    if (t->exclusive_by_fetch_add) {
        /* Add only when the word looks free: a failed add still shows as a
         * writer to everyone for a moment, and two writers that kept adding
         * over each other could starve both. */
        int64_t now = -1;
        mpidht_status_t st = issue_peek(t, rank, index, &now);
        if (st == MPIDHT_OK)
            st = mpidht_rma_flush(t, rank);
        if (st != MPIDHT_OK || now != 0)
            return st;
    }
    int64_t old = -1;
    mpidht_status_t st = issue_try_exclusive(t, rank, index, &old);
    if (st == MPIDHT_OK)
        st = mpidht_rma_flush(t, rank);
    *acquired = st == MPIDHT_OK && old == 0;
    if (st == MPIDHT_OK && !*acquired && t->exclusive_by_fetch_add)
        st = add_to_lock(t, rank, index, &writer_sub);
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
    return mpidht_mpi_status(MPI_Fetch_and_op(&reader_add, old, MPI_INT64_T, rank,
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
            st = add_to_lock(t, addr->rank, addr->index[i], &reader_sub);
            mpidht_backoff(attempt);
            if (st == MPIDHT_OK)
                st = register_reader(t, addr->rank, addr->index[i], &old[i]);
            if (st == MPIDHT_OK)
                st = mpidht_rma_flush(t, addr->rank);
        }
    }
    return st;
}

/* Issues the release of read registrations on candidates
 * [first, first + count) of addr. */
static mpidht_status_t issue_unlock_shared(mpidht_t *t, const mpidht_address_t *addr,
                                           unsigned first, unsigned count)
{
    mpidht_status_t st = MPIDHT_OK;
    for (unsigned i = first; st == MPIDHT_OK && i < first + count; ++i)
        st = issue_lock_add(t, addr->rank, addr->index[i], &reader_sub);
    return st;
}

static mpidht_status_t unlock_shared(mpidht_t *t, const mpidht_address_t *addr,
                                     unsigned first, unsigned count)
{
    mpidht_status_t st = issue_unlock_shared(t, addr, first, count);
    return st == MPIDHT_OK ? mpidht_rma_flush(t, addr->rank) : st;
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
    return add_to_lock(t, rank, index, &writer_sub);
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
    mpidht_stage_bucket(t, t->staging, key, value);
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

/*
 * Batched operations: the same steps as above, each issued for every
 * active item before one flush per target. An item that meets a lock it
 * cannot take is not retried here: it lets go of its locks and falls back
 * to the single-key path, which waits and backs off.
 */

/* Takes the item out of the batch, to be finished by the single-key path. */
static void defer(mpidht_t *t, mpidht_batch_item_t *item)
{
    item->active = false;
    item->fallback = true;
    t->stats.lock_retries++;
}

/* The bucket whose writer's lock a batched write takes for item: its key
 * lock, or, once it has chosen a candidate, that candidate. */
static uint32_t lock_index(const mpidht_batch_item_t *item, bool key_lock)
{
    return item->addr.index[key_lock ? 0 : item->chosen];
}

/* One attempt at the writer's lock of every active item (try_exclusive in
 * bulk); items that do not get it are deferred. */
static mpidht_status_t try_exclusive_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                           size_t n, bool key_lock)
{
    mpidht_status_t st = MPIDHT_OK;
    if (t->exclusive_by_fetch_add) {
        for (size_t i = 0; st == MPIDHT_OK && i < n; ++i)
            if (items[i].active)
                st = issue_peek(t, items[i].addr.rank, lock_index(&items[i], key_lock),
                                &items[i].old[0]);
        if (st == MPIDHT_OK)
            st = mpidht_batch_flush(t, items, n);
        for (size_t i = 0; st == MPIDHT_OK && i < n; ++i)
            if (items[i].active && items[i].old[0] != 0)
                defer(t, &items[i]);
    }
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i)
        if (items[i].active)
            st = issue_try_exclusive(t, items[i].addr.rank,
                                     lock_index(&items[i], key_lock), &items[i].old[0]);
    if (st == MPIDHT_OK)
        st = mpidht_batch_flush(t, items, n);
    bool undone = false;
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        if (!items[i].active || items[i].old[0] == 0)
            continue;
        if (t->exclusive_by_fetch_add) { /* take the failed add back */
            st = issue_lock_add(t, items[i].addr.rank, lock_index(&items[i], key_lock),
                                &writer_sub);
            undone = true;
        }
        defer(t, &items[i]);
    }
    return st == MPIDHT_OK && undone ? mpidht_batch_flush_every(t, items, n) : st;
}

/* Issues the release of every writer's lock the items hold. */
static mpidht_status_t unlock_exclusive_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                              size_t n)
{
    mpidht_status_t st = MPIDHT_OK;
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        if (items[i].bucket_locked)
            st = issue_lock_add(t, items[i].addr.rank, lock_index(&items[i], false),
                                &writer_sub);
        if (st == MPIDHT_OK && items[i].key_locked)
            st = issue_lock_add(t, items[i].addr.rank, lock_index(&items[i], true),
                                &writer_sub);
    }
    return st;
}

/* write_key_locked's decision for an item holding its key lock and the
 * lock of its chosen bucket, whose meta byte and key are in its slot
 * chosen: store (and how), or let go and fall back. */
static bool decide_store(mpidht_t *t, mpidht_batch_item_t *item)
{
    unsigned char *b = mpidht_slot(t, item->slots, item->chosen);
    if (mpidht_bucket_holds(t, b, item->key))
        item->outcome = MPIDHT_WRITE_UPDATED;
    else if (mpidht_bucket_is_free(t, b))
        item->outcome = MPIDHT_WRITE_INSERTED;
    else if (item->outcome != MPIDHT_WRITE_EVICTED)
        return false; /* another key took it since the probe */
    return true;
}

/* The steps of fine_write for a round of items with disjoint buckets. */
static mpidht_status_t fine_write_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                        size_t n)
{
    mpidht_status_t st = try_exclusive_batch(t, items, n, true);
    for (size_t i = 0; i < n; ++i) {
        items[i].key_locked = st == MPIDHT_OK && items[i].active;
        items[i].bucket_locked = false;
    }
    if (st == MPIDHT_OK)
        st = mpidht_batch_probe_keys(t, items, n);
    /* Under their key locks: choose; a bucket other than the key lock's
     * own needs its lock as well, and a fresh look at its key. */
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        if (!items[i].active)
            continue;
        mpidht_write_choice_t c =
            mpidht_choose_slot(t, items[i].slots, items[i].addr.count, items[i].key);
        items[i].chosen = c.slot;
        items[i].outcome = c.outcome;
        items[i].active = lock_index(&items[i], false) != lock_index(&items[i], true);
    }
    if (st == MPIDHT_OK)
        st = try_exclusive_batch(t, items, n, false);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        items[i].bucket_locked = items[i].active;
        if (items[i].active)
            st = mpidht_rma_get_slots(t, items[i].slots, &items[i].addr,
                                      items[i].chosen, 1, t->meta_offset,
                                      1 + t->key_size);
    }
    if (st == MPIDHT_OK)
        st = mpidht_batch_flush(t, items, n);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        items[i].active = items[i].key_locked && !items[i].fallback;
        if (!items[i].active)
            continue;
        if (!decide_store(t, &items[i])) {
            defer(t, &items[i]);
            continue;
        }
        mpidht_batch_stage(t, &items[i]);
        st = mpidht_batch_put(t, &items[i]);
    }
    if (st == MPIDHT_OK)
        st = mpidht_batch_flush(t, items, n);
    /* Release even after an error, so that no lock is left behind where
     * MPI still works. */
    mpidht_status_t released = unlock_exclusive_batch(t, items, n);
    if (released == MPIDHT_OK)
        released = mpidht_batch_flush_every(t, items, n);
    return st != MPIDHT_OK ? st : released;
}

/* Registers as reader on candidates [first, first + count) of every active
 * item, reads them and lets go (read_locked in bulk; an mpidht_batch_probe_fn).
 * The releases are only issued: fine_read_batch completes them. */
static mpidht_status_t read_locked_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                         size_t n, unsigned first, unsigned count)
{
    mpidht_status_t st = MPIDHT_OK;
    for (size_t i = 0; i < n; ++i)
        for (unsigned c = first; st == MPIDHT_OK && items[i].active && c < first + count; ++c)
            st = register_reader(t, items[i].addr.rank, items[i].addr.index[c],
                                 &items[i].old[c]);
    if (st == MPIDHT_OK)
        st = mpidht_batch_flush(t, items, n);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        if (!items[i].active)
            continue;
        bool blocked = false;
        for (unsigned c = first; c < first + count; ++c)
            blocked = blocked || items[i].old[c] >= MPIDHT_FINE_EXCLUSIVE;
        if (blocked) { /* completed by fine_read_batch's last flush */
            st = issue_unlock_shared(t, &items[i].addr, first, count);
            defer(t, &items[i]);
        }
    }
    if (st == MPIDHT_OK)
        st = mpidht_batch_get_buckets(t, items, n, first, count);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        if (!items[i].active)
            continue;
        st = issue_unlock_shared(t, &items[i].addr, first, count);
        items[i].found = mpidht_find_key(t, items[i].slots, first, count, items[i].key);
    }
    return st;
}

static mpidht_status_t fine_read_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                       size_t n)
{
    mpidht_status_t st = mpidht_batch_read_probing(t, items, n, read_locked_batch);
    mpidht_status_t released = mpidht_batch_flush_every(t, items, n);
    return st != MPIDHT_OK ? st : released;
}

/* Under read registrations, taken for up to MPIDHT_MAX_CANDIDATES
 * buckets at a time as if they were one key's candidates on this
 * process. */
static mpidht_status_t fine_read_local(mpidht_t *t, uint32_t first, size_t n,
                                       unsigned char *buf)
{
    mpidht_status_t st = MPIDHT_OK;
    for (size_t done = 0; st == MPIDHT_OK && done < n;) {
        mpidht_address_t own = {.rank = t->rank};
        own.count = n - done < MPIDHT_MAX_CANDIDATES ? (unsigned)(n - done)
                                                     : MPIDHT_MAX_CANDIDATES;
        for (unsigned i = 0; i < own.count; ++i)
            own.index[i] = first + (uint32_t)(done + i);
        st = lock_shared(t, &own, 0, own.count);
        if (st != MPIDHT_OK)
            break;
        st = mpidht_rma_get_slots(t, mpidht_slot(t, buf, (unsigned)done), &own, 0,
                                  own.count, t->data_offset, t->data_size);
        if (st == MPIDHT_OK)
            st = mpidht_rma_flush(t, t->rank);
        mpidht_status_t released = unlock_shared(t, &own, 0, own.count);
        if (st == MPIDHT_OK)
            st = released;
        done += own.count;
    }
    return st;
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
    .read_batch = fine_read_batch,
    .write_batch = fine_write_batch,
    .read_local = fine_read_local,
};
