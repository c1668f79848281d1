/*
 * Fine-grained protocol (paper 000, section 4.1): a lock word at the start
 * of every bucket, all inside one MPI_Win_lock_all epoch.
 *
 *   reader: MPI_Fetch_and_op adds 1 to the lock word of each bucket it
 *           reads; if the word showed a writer bit (a writer holds the
 *           bucket or waits for its readers), the reader takes its 1 back
 *           and backs off, then only looks at the words (MPI_NO_OP),
 *           backing off while they show a writer bit, and adds 1 again
 *           once none does. A waiting reader thus never shows in the count
 *           a writer waits to see fall to zero, so writers are not starved
 *           however long a round trip takes against the backoff (readers
 *           that added 1 at every retry, faster than their 1s were taken
 *           back, kept a writer and themselves waiting until they timed
 *           out: docs/design.md). Under its registrations it gets the
 *           buckets, then subtracts its 1s (completed with the read's next
 *           flush). On a direct table a read looks at its buckets without
 *           the engine, registered the same way with processor atomics
 *           (engine.c, look_at); one that meets a writer bit goes on
 *           through these steps.
 *   writer: writer.h.
 *
 * Only MPI_SUM and MPI_NO_OP (or, on a direct table, the processor's
 * atomic add and load) ever touch a lock word.
 */
#include "bucket.h"
#include "protocol.h"
#include "writer.h"

static const int64_t reader_add = 1, reader_sub = -1;

enum { REGISTER, POLL, GET };

static bool is_read(const mpidht_item_t *it)
{
    return it->op == MPIDHT_OP_READ || it->op == MPIDHT_OP_SCAN;
}

static void fine_start(mpidht_t *t, mpidht_item_t *it)
{
    if (!is_read(it)) {
        mpidht_locked_start(t, it);
        return;
    }
    it->step = REGISTER;
    mpidht_read_start(t, it);
}

static mpidht_status_t fine_issue(mpidht_t *t, mpidht_item_t *it)
{
    if (!is_read(it))
        return mpidht_locked_issue(t, it);
    if (it->step == GET)
        return mpidht_issue_get_data(t, it, it->first, it->count);
    if (it->step == POLL) {
        for (unsigned c = it->first; c < it->first + it->count; ++c) {
            mpidht_status_t st = mpidht_issue_lock_fetch(t, it, c, NULL);
            if (st != MPIDHT_OK)
                return st;
        }
        return MPIDHT_OK;
    }
    for (unsigned c = it->first; c < it->first + it->count; ++c) {
        mpidht_status_t st = mpidht_issue_lock_fetch(t, it, c, &reader_add);
        if (st != MPIDHT_OK)
            return st;
        it->registered |= 1u << c;
    }
    return MPIDHT_OK;
}

/* Takes back every registration of the item (completed with the next
 * round, or with the last flush of the run). */
static mpidht_status_t unregister(mpidht_t *t, mpidht_item_t *it)
{
    return mpidht_issue_lock_add_each(t, it, &it->registered, &reader_sub);
}

static mpidht_status_t fine_advance(mpidht_t *t, mpidht_item_t *it)
{
    if (!is_read(it))
        return mpidht_locked_advance(t, it);
    if (it->step == REGISTER || it->step == POLL) {
        bool blocked = false;
        for (unsigned c = it->first; c < it->first + it->count; ++c)
            blocked = blocked || it->lock[c] >= MPIDHT_FINE_EXCLUSIVE;
        if (!blocked) {
            /* Registered: on to the gets; looked: registers now. */
            it->step = it->step == REGISTER ? GET : REGISTER;
            return MPIDHT_OK;
        }
        mpidht_status_t st = it->step == REGISTER ? unregister(t, it) : MPIDHT_OK;
        it->step = POLL;
        if (st == MPIDHT_OK && !mpidht_item_wait(t, it))
            mpidht_item_finish(it, MPIDHT_ERR_TIMEOUT, 0);
        return st;
    }
    mpidht_status_t st = unregister(t, it);
    if (st != MPIDHT_OK)
        return st;
    if (it->op == MPIDHT_OP_SCAN) {
        mpidht_item_finish(it, MPIDHT_OK, 0);
        return MPIDHT_OK;
    }
    int found = mpidht_find_key(t, it->slots, it->first, it->count, it->key);
    if (found >= 0)
        return mpidht_read_hit(t, it, (unsigned)found);
    if (mpidht_read_next(it))
        it->step = REGISTER;
    return MPIDHT_OK;
}

const mpidht_protocol_ops_t mpidht_protocol_fine = {
    .id = MPIDHT_PROTOCOL_FINE,
    .lock_per_target = false,
    .reads_register = true,
    .open = mpidht_epoch_lock_all,
    .close = mpidht_epoch_unlock_all,
    .start = fine_start,
    .issue = fine_issue,
    .advance = fine_advance,
};
