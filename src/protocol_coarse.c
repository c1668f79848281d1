/*
 * Coarse-grained protocol (paper 000, section 3.1): every operation on a
 * target runs inside a lock of that target's whole window, shared when
 * only reads go there, exclusive otherwise; under it every bucket fetched
 * is whole and no one else writes. The lock is MPI_Win_lock, or on a
 * direct table (all processes on one node) a word of the window taken
 * with processor atomics (engine.c), under which reads there look at
 * their buckets without the engine's items (mpidht_engine_read_looks).
 */
#include "bucket.h"
#include "protocol.h"
#include "writer.h"

enum { PROBE, ACT };

/* On a direct table the engine locks a target with a word of the window
 * (engine.c), and its loads and stores need an epoch for MPI_Win_sync. */
static mpidht_status_t coarse_open(mpidht_t *t)
{
    return t->direct ? mpidht_epoch_lock_all(t) : MPIDHT_OK;
}

static mpidht_status_t coarse_close(mpidht_t *t)
{
    return t->direct ? mpidht_epoch_unlock_all(t) : MPIDHT_OK;
}

static void coarse_start(mpidht_t *t, mpidht_item_t *it)
{
    it->step = PROBE;
    if (it->op == MPIDHT_OP_READ) {
        mpidht_read_start(t, it);
    } else {
        it->first = 0;
        it->count = it->addr.count;
    }
}

static mpidht_status_t coarse_issue(mpidht_t *t, mpidht_item_t *it)
{
    if (it->step == ACT)
        return mpidht_write_issue_act(t, it);
    switch (it->op) {
    case MPIDHT_OP_READ:
    case MPIDHT_OP_SCAN:
        return mpidht_issue_get_data(t, it, it->first, it->count);
    case MPIDHT_OP_UPDATE:
    case MPIDHT_OP_WRITE: {
        mpidht_status_t st = it->op == MPIDHT_OP_UPDATE
                                 ? mpidht_issue_get_data(t, it, 0, it->addr.count)
                                 : mpidht_issue_get_keys(t, it, 0, it->addr.count);
        if (st == MPIDHT_OK && mpidht_engine_evicts_by_recency(t))
            st = mpidht_issue_recency_fetch(t, it);
        return st;
    }
    default: /* REMOVE */
        return mpidht_issue_get_keys(t, it, 0, it->addr.count);
    }
}

static mpidht_status_t coarse_advance(mpidht_t *t, mpidht_item_t *it)
{
    if (it->step == ACT) {
        mpidht_item_finish(it, it->status, it->outcome);
        return MPIDHT_OK;
    }
    switch (it->op) {
    case MPIDHT_OP_SCAN:
        mpidht_item_finish(it, MPIDHT_OK, 0);
        return MPIDHT_OK;
    case MPIDHT_OP_READ: {
        int found = mpidht_find_key(t, it->slots, it->first, it->count, it->key);
        if (found >= 0)
            return mpidht_read_hit(t, it, (unsigned)found);
        mpidht_read_next(it);
        return MPIDHT_OK;
    }
    default:
        if (it->step == PROBE && !mpidht_write_choose(t, it)) {
            /* a remove of an absent key, or a deferred write */
            mpidht_item_finish(it, MPIDHT_NOT_FOUND, it->outcome);
            return MPIDHT_OK;
        }
        mpidht_write_prepare(t, it);
        if (it->act == MPIDHT_ACT_NONE)
            mpidht_item_finish(it, it->status, it->outcome);
        else
            it->step = ACT;
        return MPIDHT_OK;
    }
}

const mpidht_protocol_ops_t mpidht_protocol_coarse = {
    .id = MPIDHT_PROTOCOL_COARSE,
    .lock_per_target = true,
    .open = coarse_open,
    .close = coarse_close,
    .start = coarse_start,
    .issue = coarse_issue,
    .advance = coarse_advance,
};
