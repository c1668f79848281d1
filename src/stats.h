/*
 * Counting the outcome of an operation, the same way for single and
 * batched calls. Internal.
 */
#ifndef MPIDHT_STATS_H
#define MPIDHT_STATS_H

#include "engine.h"

/* Counts a read that completed (a hit or a miss) into s. */
static inline void mpidht_count_read(mpidht_stats_t *s, bool hit)
{
    s->reads++;
    s->hits += hit;
    s->misses += !hit;
}

/* Counts what a finished item did into s. */
static inline void mpidht_count_item(mpidht_stats_t *s, const mpidht_item_t *it)
{
    if (it->status == MPIDHT_ERR_TIMEOUT) {
        s->timeouts++;
        return;
    }
    switch (it->op) {
    case MPIDHT_OP_READ:
        if (it->status == MPIDHT_OK || it->status == MPIDHT_NOT_FOUND)
            mpidht_count_read(s, it->hit);
        return;
    case MPIDHT_OP_REMOVE:
        s->removes += it->status == MPIDHT_OK;
        return;
    case MPIDHT_OP_UPDATE:
        if (it->status != MPIDHT_OK && it->status != MPIDHT_ERR_UPDATE_ACTION)
            return;
        s->atomic_updates++;
        if (it->outcome == MPIDHT_UPDATE_REMOVED) {
            s->removes++;
        } else if (it->outcome != MPIDHT_UPDATE_KEPT) {
            s->writes++;
            s->updates += it->outcome == MPIDHT_UPDATE_UPDATED;
            s->evictions += it->outcome == MPIDHT_UPDATE_EVICTED;
        }
        return;
    case MPIDHT_OP_WRITE:
        if (it->status != MPIDHT_OK)
            return;
        s->writes++;
        s->updates += it->outcome == MPIDHT_WRITE_UPDATED;
        s->evictions += it->outcome == MPIDHT_WRITE_EVICTED;
        return;
    case MPIDHT_OP_SCAN:
        return;
    }
}

#endif /* MPIDHT_STATS_H */
