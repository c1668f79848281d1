#include "scan.h"

#include <stdint.h>
#include <stdlib.h>

#include "bucket.h"
#include "protocol.h"

mpidht_status_t mpidht_scan_reserve(mpidht_t *t)
{
    if (t->scan)
        return MPIDHT_OK;
    mpidht_scan_t *s = calloc(1, sizeof *s);
    if (!s)
        return MPIDHT_ERR_NO_MEMORY;
    s->capacity = MPIDHT_SCAN_BYTES / t->bucket_size;
    if (s->capacity == 0)
        s->capacity = 1;
    s->buckets = malloc(s->capacity * t->bucket_size);
    if (!s->buckets) {
        free(s);
        return MPIDHT_ERR_NO_MEMORY;
    }
    t->scan = s;
    return MPIDHT_OK;
}

void mpidht_scan_release(mpidht_t *t)
{
    if (!t->scan)
        return;
    free(t->scan->buckets);
    free(t->scan);
    t->scan = NULL;
}

mpidht_status_t mpidht_scan_read(mpidht_t *t, uint64_t first, size_t n)
{
    /* Scans leave the statistics alone, lock retries included. */
    mpidht_stats_t kept = t->stats;
    /* first + n <= local_buckets <= 2^32: every index fits uint32_t. */
    mpidht_status_t st = t->ops->read_local(t, (uint32_t)first, n, t->scan->buckets);
    t->stats = kept;
    return st;
}

unsigned char *mpidht_scan_entry(const mpidht_t *t, size_t i)
{
    unsigned char *b = mpidht_slot(t, t->scan->buckets, (unsigned)i);
    unsigned char meta = mpidht_bucket_meta(t, b);
    return (meta & MPIDHT_META_OCCUPIED) && !(meta & MPIDHT_META_INVALID) ? b : NULL;
}

size_t mpidht_scan_span(const mpidht_t *t, uint64_t first, size_t limit)
{
    size_t n = t->scan->capacity < limit ? t->scan->capacity : limit;
    return t->local_buckets - first < n ? (size_t)(t->local_buckets - first) : n;
}

mpidht_status_t mpidht_scan_all(mpidht_t *t, mpidht_scan_visit_fn visit, void *ctx)
{
    mpidht_status_t st = MPIDHT_OK;
    for (uint64_t first = 0; st == MPIDHT_OK && first < t->local_buckets;) {
        size_t n = mpidht_scan_span(t, first, SIZE_MAX);
        st = mpidht_scan_read(t, first, n);
        for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
            unsigned char *b = mpidht_scan_entry(t, i);
            if (b)
                st = visit(ctx, b);
        }
        first += n;
    }
    return st;
}
