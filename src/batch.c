#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "bucket.h"
#include "rma.h"

/* A chunk holds at most this many keys, and no more buckets' worth of
 * slots than fit in about this many bytes (but always at least one key). */
enum { BATCH_MAX_ITEMS = 1024 };
#define BATCH_SLOT_BYTES ((size_t)4 << 20)

mpidht_status_t mpidht_batch_prepare(mpidht_t *t)
{
    if (t->batch)
        return MPIDHT_OK;
    size_t per_item = (size_t)t->candidates * t->bucket_size;
    size_t capacity = BATCH_SLOT_BYTES / per_item;
    capacity = capacity < 1 ? 1 : capacity > BATCH_MAX_ITEMS ? BATCH_MAX_ITEMS : capacity;
    size_t claims = 1;
    while (claims < 2 * capacity * t->candidates)
        claims *= 2;

    mpidht_batch_t *b = calloc(1, sizeof *b);
    if (!b)
        return MPIDHT_ERR_NO_MEMORY;
    b->capacity = capacity;
    b->items = calloc(capacity, sizeof *b->items);
    b->slots = calloc(capacity, per_item);
    b->targets = calloc(capacity, sizeof *b->targets);
    b->claim_capacity = claims;
    b->claim_bucket = calloc(claims, sizeof *b->claim_bucket);
    b->claim_round = calloc(claims, sizeof *b->claim_round);
    t->batch = b;
    if (!b->items || !b->slots || !b->targets || !b->claim_bucket ||
        !b->claim_round) {
        mpidht_batch_release(t);
        return MPIDHT_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < capacity; ++i)
        b->items[i].slots = b->slots + i * per_item;
    return MPIDHT_OK;
}

void mpidht_batch_release(mpidht_t *t)
{
    mpidht_batch_t *b = t->batch;
    if (!b)
        return;
    free(b->items);
    free(b->slots);
    free(b->targets);
    free(b->claim_bucket);
    free(b->claim_round);
    free(b);
    t->batch = NULL;
}

void mpidht_batch_new_round(mpidht_batch_t *b)
{
    if (++b->round == 0) { /* wrapped: forget every stamp */
        memset(b->claim_round, 0, b->claim_capacity * sizeof *b->claim_round);
        b->round = 1;
    }
}

/* The claim table's entry for bucket (rank, index): where it is, or the
 * empty entry where it would go. The table is at most half full. */
static size_t claim_entry(const mpidht_batch_t *b, uint64_t bucket)
{
    size_t mask = b->claim_capacity - 1;
    size_t i = (size_t)((bucket * 0x9e3779b97f4a7c15u) >> 32) & mask;
    while (b->claim_round[i] == b->round && b->claim_bucket[i] != bucket)
        i = (i + 1) & mask;
    return i;
}

static uint64_t bucket_id(const mpidht_address_t *addr, unsigned i)
{
    return ((uint64_t)(unsigned)addr->rank << 32 | addr->index[i]) + 1;
}

bool mpidht_batch_claim(mpidht_batch_t *b, const mpidht_batch_item_t *item)
{
    const mpidht_address_t *addr = &item->addr;
    for (unsigned i = 0; i < addr->count; ++i)
        if (b->claim_round[claim_entry(b, bucket_id(addr, i))] == b->round)
            return false;
    for (unsigned i = 0; i < addr->count; ++i) {
        size_t e = claim_entry(b, bucket_id(addr, i));
        b->claim_bucket[e] = bucket_id(addr, i);
        b->claim_round[e] = b->round;
    }
    return true;
}

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The distinct targets of the items (the active ones, or all), ascending,
 * into t->batch->targets; returns how many. */
static size_t collect_targets(mpidht_t *t, const mpidht_batch_item_t *items,
                              size_t n, bool active_only)
{
    int *targets = t->batch->targets;
    size_t m = 0;
    for (size_t i = 0; i < n; ++i)
        if (items[i].active || !active_only)
            targets[m++] = items[i].addr.rank;
    qsort(targets, m, sizeof *targets, compare_int);
    size_t distinct = 0;
    for (size_t i = 0; i < m; ++i)
        if (distinct == 0 || targets[i] != targets[distinct - 1])
            targets[distinct++] = targets[i];
    return distinct;
}

void mpidht_batch_activate_target(mpidht_batch_item_t *items, size_t n, int rank)
{
    for (size_t i = 0; i < n; ++i)
        items[i].active = items[i].addr.rank == rank;
}

static mpidht_status_t flush_targets(mpidht_t *t, size_t m)
{
    for (size_t i = 0; i < m; ++i) {
        mpidht_status_t st = mpidht_rma_flush(t, t->batch->targets[i]);
        if (st != MPIDHT_OK)
            return st;
    }
    return MPIDHT_OK;
}

mpidht_status_t mpidht_batch_flush(mpidht_t *t, const mpidht_batch_item_t *items,
                                   size_t n)
{
    return flush_targets(t, collect_targets(t, items, n, true));
}

mpidht_status_t mpidht_batch_flush_every(mpidht_t *t, const mpidht_batch_item_t *items,
                                         size_t n)
{
    return flush_targets(t, collect_targets(t, items, n, false));
}

mpidht_status_t mpidht_batch_get_buckets(mpidht_t *t, mpidht_batch_item_t *items,
                                         size_t n, unsigned first, unsigned count)
{
    mpidht_status_t st = MPIDHT_OK;
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i)
        if (items[i].active)
            st = mpidht_rma_get_slots(t, items[i].slots, &items[i].addr, first, count,
                                      t->data_offset, t->data_size);
    return st == MPIDHT_OK ? mpidht_batch_flush(t, items, n) : st;
}

mpidht_status_t mpidht_batch_probe_keys(mpidht_t *t, mpidht_batch_item_t *items,
                                        size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (!items[i].active)
            continue;
        mpidht_status_t st =
            mpidht_rma_get_slots(t, items[i].slots, &items[i].addr, 0,
                                 items[i].addr.count, t->meta_offset, 1 + t->key_size);
        if (st != MPIDHT_OK)
            return st;
    }
    return mpidht_batch_flush(t, items, n);
}

/* Deactivates the items that found their key or must fall back; true if
 * any stays active. */
static bool keep_missing(mpidht_batch_item_t *items, size_t n)
{
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
        items[i].active = items[i].active && items[i].found < 0 && !items[i].fallback;
        any = any || items[i].active;
    }
    return any;
}

mpidht_status_t mpidht_batch_read_probing(mpidht_t *t, mpidht_batch_item_t *items,
                                          size_t n, mpidht_batch_probe_fn probe)
{
    mpidht_status_t st = probe(t, items, n, 0, 1);
    if (st != MPIDHT_OK || t->candidates < 2 || !keep_missing(items, n))
        return st;
    st = probe(t, items, n, 1, t->candidates - 1);
    keep_missing(items, n);
    return st;
}

void mpidht_batch_stage(const mpidht_t *t, mpidht_batch_item_t *item)
{
    mpidht_stage_bucket(t, item->slots, item->key, item->value);
}

mpidht_status_t mpidht_batch_put(mpidht_t *t, const mpidht_batch_item_t *item)
{
    return mpidht_rma_put_bucket(t, item->addr.rank, item->addr.index[item->chosen],
                                 item->slots);
}

mpidht_status_t mpidht_batch_store(mpidht_t *t, mpidht_batch_item_t *items,
                                   size_t n)
{
    mpidht_status_t st = mpidht_batch_probe_keys(t, items, n);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        mpidht_batch_item_t *item = &items[i];
        if (!item->active)
            continue;
        mpidht_write_choice_t c =
            mpidht_choose_slot(t, item->slots, item->addr.count, item->key);
        item->chosen = c.slot;
        item->outcome = c.outcome;
        mpidht_batch_stage(t, item);
        st = mpidht_batch_put(t, item);
    }
    return st == MPIDHT_OK ? mpidht_batch_flush(t, items, n) : st;
}
