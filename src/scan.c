#include "scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bucket.h"
#include "engine.h"
#include "rma.h"

mpidht_status_t mpidht_scan_reserve(mpidht_t *t)
{
    if (t->scan)
        return MPIDHT_OK;
    mpidht_scan_t *s = calloc(1, sizeof *s);
    if (!s)
        return MPIDHT_ERR_NO_MEMORY;
    s->capacity = MPIDHT_SCAN_BYTES / t->layout.bucket_size;
    if (s->capacity == 0)
        s->capacity = 1;
    s->buckets = malloc(s->capacity * t->layout.bucket_size);
    mpidht_status_t st = s->buckets ? mpidht_engine_reserve(
                                          t, (s->capacity + MPIDHT_MAX_CANDIDATES - 1) /
                                                 MPIDHT_MAX_CANDIDATES)
                                    : MPIDHT_ERR_NO_MEMORY;
    if (st != MPIDHT_OK) {
        free(s->buckets);
        free(s);
        return st;
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

/* Prepares engine item i to get this process's buckets index[0..n)
 * (n <= MPIDHT_MAX_CANDIDATES) whole, as the protocol reads
 * (mpidht_op_t MPIDHT_OP_SCAN), into n bucket-sized slots at slots. */
static void prepare(mpidht_t *t, size_t i, const uint32_t *index, unsigned n,
                    unsigned char *slots)
{
    mpidht_item_t *it = &t->engine->items[i];
    memset(it, 0, sizeof *it);
    it->op = MPIDHT_OP_SCAN;
    it->status = MPIDHT_OK;
    it->slots = slots;
    it->addr.rank = t->rank;
    it->addr.count = n;
    memcpy(it->addr.index, index, n * sizeof *index);
    it->addr.derived = n;
}

/* Runs items[0..n) of the engine; the statistics are left as they were
 * (lock retries included). */
static mpidht_status_t run(mpidht_t *t, size_t n)
{
    mpidht_stats_t kept = t->stats;
    mpidht_status_t st = mpidht_engine_run(t, t->engine->items, n);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i)
        st = t->engine->items[i].status;
    t->stats = kept;
    return st;
}

mpidht_status_t mpidht_scan_read(mpidht_t *t, uint64_t first, size_t n)
{
    /* One engine item per MPIDHT_MAX_CANDIDATES buckets, straight into
     * the scan buffer. */
    size_t items = 0;
    for (size_t done = 0; done < n; ++items) {
        uint32_t index[MPIDHT_MAX_CANDIDATES];
        unsigned count = n - done < MPIDHT_MAX_CANDIDATES ? (unsigned)(n - done)
                                                          : MPIDHT_MAX_CANDIDATES;
        /* first + n <= local_buckets <= 2^32: every index fits uint32_t. */
        for (unsigned i = 0; i < count; ++i)
            index[i] = (uint32_t)(first + done + i);
        prepare(t, items, index, count, mpidht_slot(t, t->scan->buckets, (unsigned)done));
        done += count;
    }
    return run(t, items);
}

mpidht_status_t mpidht_scan_read_at(mpidht_t *t, const uint32_t *index, unsigned n,
                                    unsigned char *out)
{
    prepare(t, 0, index, n, out);
    return run(t, 1);
}

unsigned char *mpidht_scan_entry(const mpidht_t *t, size_t i)
{
    unsigned char *b = mpidht_slot(t, t->scan->buckets, (unsigned)i);
    return mpidht_bucket_is_free(t, b) ? NULL : b;
}

size_t mpidht_scan_span(const mpidht_t *t, uint64_t first, size_t limit)
{
    size_t n = t->scan->capacity < limit ? t->scan->capacity : limit;
    return t->local_buckets - first < n ? (size_t)(t->local_buckets - first) : n;
}

/* mpidht_scan_all on a direct table: this process's buckets are its own
 * memory, and nothing else touches them, so each is looked at where it
 * lies, without the protocol's steps (no copy, no reader registration);
 * a lock-free bucket that fails its checksum (a write torn for good: no
 * writer is left to finish it) is left out, as a scan leaves out one
 * still torn when it gets it again. */
static mpidht_status_t scan_in_place(mpidht_t *t, mpidht_scan_visit_fn visit, void *ctx)
{
    /* Loads after the callers' synchronisation (MPI's unified model). */
    mpidht_status_t st = mpidht_mpi_status(MPI_Win_sync(t->win));
    for (uint64_t i = 0; st == MPIDHT_OK && i < t->local_buckets; ++i) {
        /* local_buckets <= 2^32: every index fits uint32_t. */
        unsigned char *b = t->local_base + mpidht_bucket_disp(t, (uint32_t)i);
        if (!mpidht_bucket_is_free(t, b) && mpidht_bucket_intact(t, b))
            st = visit(ctx, b);
    }
    return st;
}

mpidht_status_t mpidht_scan_all(mpidht_t *t, mpidht_scan_visit_fn visit, void *ctx)
{
    if (t->direct)
        return scan_in_place(t, visit, ctx);
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
