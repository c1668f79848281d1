/*
 * Lock-free reads (paper 000, section 4.2, after Pilaf), locked writes:
 * all inside one MPI_Win_lock_all epoch.
 *
 *   reader: gets the buckets; every bucket carries the XXH3-64 checksum of
 *           its meta byte, key and value, put by the writer with the data.
 *           A copy that holds the key and fails it is of a bucket being
 *           rewritten: the reader gets it again after a backoff (for at
 *           most the table's timeout). Copies of other keys are passed
 *           by unchecked (lockfree_advance says why). It
 *           takes no lock and writes nothing (but the eviction hint), so a
 *           read never delays or undoes a write.
 *   writer: writer.h (the lock word holds writer bits only).
 */
#include "bucket.h"
#include "protocol.h"
#include "writer.h"

static void lockfree_start(mpidht_t *t, mpidht_item_t *it)
{
    if (it->op != MPIDHT_OP_READ && it->op != MPIDHT_OP_SCAN) {
        mpidht_locked_start(t, it);
        return;
    }
    mpidht_read_start(t, it);
}

static mpidht_status_t lockfree_issue(mpidht_t *t, mpidht_item_t *it)
{
    if (it->op != MPIDHT_OP_READ && it->op != MPIDHT_OP_SCAN)
        return mpidht_locked_issue(t, it);
    return mpidht_issue_get_data(t, it, it->first, it->count);
}

/* A scan gets its torn buckets once more; those still torn are left out
 * (their meta byte cleared in the copy). */
static mpidht_status_t scan_advance(mpidht_t *t, mpidht_item_t *it)
{
    unsigned torn = 0;
    for (unsigned c = 0; c < it->addr.count; ++c) {
        unsigned char *b = mpidht_slot(t, it->slots, c);
        if (mpidht_bucket_is_free(t, b) || mpidht_bucket_intact(t, b))
            continue;
        if (it->attempts > 0)
            b[t->layout.meta_offset] = 0;
        else
            ++torn;
    }
    if (torn > 0 && it->attempts == 0 && mpidht_item_wait(t, it))
        return MPIDHT_OK; /* gets them all again */
    mpidht_item_finish(it, MPIDHT_OK, 0);
    return MPIDHT_OK;
}

static mpidht_status_t lockfree_advance(mpidht_t *t, mpidht_item_t *it)
{
    if (it->op == MPIDHT_OP_SCAN)
        return scan_advance(t, it);
    if (it->op != MPIDHT_OP_READ)
        return mpidht_locked_advance(t, it);
    bool torn = false;
    for (unsigned c = it->first; c < it->first + it->count; ++c) {
        unsigned char *b = mpidht_slot(t, it->slots, c);
        /* Only a copy that holds the key needs its checksum. One that
         * does not, torn or whole, has a byte the bucket held while it
         * did not hold the key (a rewrite of the key in place leaves its
         * bytes as they are), so the read may be ordered then, as after
         * a whole copy of another key. The key lives in one bucket at
         * most: a whole copy of it is the answer, a torn one is got
         * again. */
        if (!mpidht_bucket_holds(t, b, it->key))
            continue;
        if (mpidht_bucket_intact(t, b))
            return mpidht_read_hit(t, it, c);
        torn = true;
    }
    if (torn) {
        t->stats.checksum_retries++;
        if (!mpidht_item_wait(t, it))
            mpidht_item_finish(it, MPIDHT_ERR_TIMEOUT, 0);
        return MPIDHT_OK;
    }
    mpidht_read_next(it);
    return MPIDHT_OK;
}

const mpidht_protocol_ops_t mpidht_protocol_lockfree = {
    .id = MPIDHT_PROTOCOL_LOCKFREE,
    .lock_per_target = false,
    .open = mpidht_epoch_lock_all,
    .close = mpidht_epoch_unlock_all,
    .start = lockfree_start,
    .issue = lockfree_issue,
    .advance = lockfree_advance,
};
