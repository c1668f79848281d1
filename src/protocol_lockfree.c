/*
 * Lock-free protocol (paper 000, section 4.2, after Pilaf): no locks
 * inside one MPI_Win_lock_all epoch. Every bucket carries XXH32 of its key
 * and value, written by the writer in the same MPI_Put as the data. A
 * reader that finds its key but a wrong checksum re-reads that bucket
 * once; if the checksum still fails and the key is still there, it marks
 * the bucket invalid with a one-byte put of the meta byte (nothing else in
 * the bucket is touched) and reports a miss. Writers treat invalid buckets
 * as free.
 */
#include <string.h>

#include "bucket.h"
#include "protocol.h"
#include "rma.h"

static bool checksum_ok(mpidht_t *t, unsigned char *bucket)
{
    uint32_t stored;
    memcpy(&stored, bucket, sizeof stored);
    return stored == mpidht_bucket_checksum(t, bucket);
}

/* Fetches candidates [first, first + count) and sets *found to the slot
 * of a checksum-verified hit, or -1 (an mpidht_probe_fn). Returns
 * MPIDHT_NOT_FOUND when it invalidated a corrupt bucket holding key. */
static mpidht_status_t lockfree_probe(mpidht_t *t, const mpidht_address_t *addr,
                                      unsigned first, unsigned count,
                                      const void *key, int *found)
{
    *found = -1;
    mpidht_status_t fetched = mpidht_rma_probe_buckets(t, addr, first, count);
    if (fetched != MPIDHT_OK)
        return fetched;
    for (unsigned i = first; i < first + count; ++i) {
        unsigned char *b = mpidht_slot(t, t->probe, i);
        if (!mpidht_bucket_holds(t, b, key))
            continue;
        if (checksum_ok(t, b)) {
            *found = (int)i;
            return MPIDHT_OK;
        }
        t->stats.checksum_retries++;
        mpidht_status_t st = mpidht_rma_probe_buckets(t, addr, i, 1);
        if (st != MPIDHT_OK)
            return st;
        if (!mpidht_bucket_holds(t, b, key))
            continue; /* a writer replaced it: not ours any more */
        if (checksum_ok(t, b)) {
            *found = (int)i;
            return MPIDHT_OK;
        }
        t->stats.corrupt_reads++;
        st = mpidht_rma_put_meta(t, addr->rank, addr->index[i],
                                 (unsigned char)(mpidht_bucket_meta(t, b) |
                                                 MPIDHT_META_INVALID));
        return st == MPIDHT_OK ? MPIDHT_NOT_FOUND : st;
    }
    return MPIDHT_OK;
}

static mpidht_status_t lockfree_read(mpidht_t *t, const mpidht_address_t *addr,
                                     const void *key, void *value)
{
    return mpidht_read_probing(t, addr, key, value, lockfree_probe);
}

static mpidht_status_t lockfree_write(mpidht_t *t, const mpidht_address_t *addr,
                                      const void *key, const void *value,
                                      mpidht_write_outcome_t *outcome)
{
    mpidht_status_t st = mpidht_rma_probe_keys(t, addr);
    if (st != MPIDHT_OK)
        return st;
    mpidht_write_choice_t c = mpidht_choose_slot(t, t->probe, addr->count, key);
    mpidht_stage_bucket(t, t->staging, key, value);
    st = mpidht_rma_put_staged(t, addr->rank, addr->index[c.slot]);
    if (st == MPIDHT_OK)
        *outcome = c.outcome;
    return st;
}

/* lockfree_probe for every active item: a key found with a bad checksum
 * falls back to the single-key read, which re-reads and invalidates (an
 * mpidht_batch_probe_fn). */
static mpidht_status_t lockfree_probe_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                            size_t n, unsigned first, unsigned count)
{
    mpidht_status_t st = mpidht_batch_get_buckets(t, items, n, first, count);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        int found = items[i].active ? mpidht_find_key(t, items[i].slots, first, count,
                                                      items[i].key)
                                    : -1;
        if (found < 0)
            continue;
        if (checksum_ok(t, mpidht_slot(t, items[i].slots, (unsigned)found)))
            items[i].found = found;
        else
            items[i].fallback = true;
    }
    return st;
}

static mpidht_status_t lockfree_read_batch(mpidht_t *t, mpidht_batch_item_t *items,
                                           size_t n)
{
    return mpidht_batch_read_probing(t, items, n, lockfree_probe_batch);
}

/* One MPI_Get for the range; a bucket whose checksum fails is fetched
 * again, and skipped if it still fails (a writer may be in the middle of
 * it; iteration does not invalidate). */
static mpidht_status_t lockfree_read_local(mpidht_t *t, uint32_t first, size_t n,
                                           unsigned char *buf)
{
    mpidht_status_t st = mpidht_rma_get_own(t, buf, first, n);
    if (st == MPIDHT_OK)
        st = mpidht_rma_flush(t, t->rank);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        unsigned char *b = mpidht_slot(t, buf, (unsigned)i);
        if (mpidht_bucket_is_free(t, b) || checksum_ok(t, b))
            continue;
        st = mpidht_rma_get_own(t, b, first + (uint32_t)i, 1);
        if (st == MPIDHT_OK)
            st = mpidht_rma_flush(t, t->rank);
        if (st == MPIDHT_OK && !mpidht_bucket_is_free(t, b) && !checksum_ok(t, b))
            b[t->meta_offset] = 0;
    }
    return st;
}

const mpidht_protocol_ops_t mpidht_protocol_lockfree = {
    .id = MPIDHT_PROTOCOL_LOCKFREE,
    .header_size = sizeof(uint32_t),
    .lock_size = 0,
    .open = mpidht_epoch_lock_all,
    .close = mpidht_epoch_unlock_all,
    .read = lockfree_read,
    .write = lockfree_write,
    .remove = mpidht_clear_key,
    .read_batch = lockfree_read_batch,
    .write_batch = mpidht_batch_store,
    .read_local = lockfree_read_local,
};
