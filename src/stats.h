/*
 * Counting the outcome of an operation, the same way for single and
 * batched calls. Internal.
 */
#ifndef MPIDHT_STATS_H
#define MPIDHT_STATS_H

#include <stdbool.h>

#include "mpidht.h"

static inline void mpidht_count_read(mpidht_stats_t *s, bool hit)
{
    s->reads++;
    s->hits += hit;
    s->misses += !hit;
}

static inline void mpidht_count_write(mpidht_stats_t *s, mpidht_write_outcome_t outcome)
{
    s->writes++;
    s->updates += outcome == MPIDHT_WRITE_UPDATED;
    s->evictions += outcome == MPIDHT_WRITE_EVICTED;
}

#endif /* MPIDHT_STATS_H */
