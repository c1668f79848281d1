/*
 * The public batched operations: validate, cut the batch into chunks (and
 * writes into rounds of keys with disjoint buckets), hand each over to the
 * protocol, finish the keys it deferred one at a time, count outcomes.
 */
#include <string.h>

#include "bucket.h"
#include "protocol.h"
#include "stats.h"

static mpidht_status_t check_batch(const mpidht_t *t, size_t n, const void *keys,
                                   const void *values, const void *third)
{
    int finalized = 0;
    if (!t)
        return MPIDHT_ERR_INVALID_HANDLE;
    if (n > 0 && (!keys || !values || !third))
        return MPIDHT_ERR_NULL_ARGUMENT;
    if (n > SIZE_MAX / t->key_size || n > SIZE_MAX / t->value_size)
        return MPIDHT_ERR_BATCH_SIZE;
    MPI_Finalized(&finalized);
    return finalized ? MPIDHT_ERR_MPI_NOT_INITIALIZED : MPIDHT_OK;
}

/* Sets up items[0..n) for keys (and values) starting at row first. */
static void locate_chunk(mpidht_t *t, size_t first, size_t n, const unsigned char *keys,
                         const unsigned char *values)
{
    for (size_t i = 0; i < n; ++i) {
        mpidht_batch_item_t *item = &t->batch->items[i];
        item->key = keys + (first + i) * t->key_size;
        item->value = values ? values + (first + i) * t->value_size : NULL;
        mpidht_locate(t, item->key, &item->addr);
        item->active = true;
        item->fallback = false;
        item->found = -1;
    }
}

static mpidht_status_t read_chunk(mpidht_t *t, size_t first, size_t n,
                                  const unsigned char *keys, unsigned char *values,
                                  unsigned char *found)
{
    locate_chunk(t, first, n, keys, NULL);
    mpidht_status_t st = t->ops->read_batch(t, t->batch->items, n);
    for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
        mpidht_batch_item_t *item = &t->batch->items[i];
        unsigned char *value = values + (first + i) * t->value_size;
        if (item->fallback) {
            st = t->ops->read(t, &item->addr, item->key, value);
            found[first + i] = st == MPIDHT_OK;
            st = st == MPIDHT_NOT_FOUND ? MPIDHT_OK : st;
        } else {
            found[first + i] = item->found >= 0;
            if (item->found >= 0)
                memcpy(value,
                       mpidht_bucket_value(t, mpidht_slot(t, item->slots,
                                                          (unsigned)item->found)),
                       t->value_size);
        }
        mpidht_count_read(&t->stats, found[first + i]);
    }
    return st;
}

/* The buffers of one batched call, as the chunk functions see them. */
typedef struct {
    const unsigned char *keys;
    unsigned char *values_out;      /* read */
    unsigned char *found;           /* read */
    const unsigned char *values_in; /* write */
    mpidht_write_outcome_t *outcomes; /* write, may be NULL */
} batch_call_t;

typedef mpidht_status_t (*chunk_fn)(mpidht_t *t, size_t first, size_t len,
                                    const batch_call_t *call);

/* Runs fn on consecutive chunks of rows [0, n), each at most one chunk of
 * the work space. */
static mpidht_status_t by_chunks(mpidht_t *t, size_t n, chunk_fn fn,
                                 const batch_call_t *call)
{
    mpidht_status_t st = n > 0 ? mpidht_batch_prepare(t) : MPIDHT_OK;
    for (size_t first = 0; st == MPIDHT_OK && first < n;) {
        size_t len = n - first < t->batch->capacity ? n - first : t->batch->capacity;
        st = fn(t, first, len, call);
        first += len;
    }
    return st;
}

static mpidht_status_t read_rows(mpidht_t *t, size_t first, size_t len,
                                 const batch_call_t *call)
{
    return read_chunk(t, first, len, call->keys, call->values_out, call->found);
}

mpidht_status_t mpidht_read_batch(mpidht_t *table, size_t n, const void *keys,
                                  void *values, unsigned char *found)
{
    mpidht_status_t st = check_batch(table, n, keys, values, found);
    batch_call_t call = {.keys = keys, .values_out = values, .found = found};
    return st == MPIDHT_OK ? by_chunks(table, n, read_rows, &call) : st;
}

/* Writes items[0..n) of the chunk, a round at a time. */
static mpidht_status_t write_chunk(mpidht_t *t, size_t first, size_t n,
                                   const unsigned char *keys,
                                   const unsigned char *values,
                                   mpidht_write_outcome_t *outcomes)
{
    mpidht_batch_t *b = t->batch;
    locate_chunk(t, first, n, keys, values);
    for (size_t begin = 0; begin < n;) {
        size_t end = begin;
        mpidht_batch_new_round(b);
        while (end < n && mpidht_batch_claim(b, &b->items[end]))
            ++end;
        mpidht_status_t st = t->ops->write_batch(t, b->items + begin, end - begin);
        for (size_t i = begin; st == MPIDHT_OK && i < end; ++i) {
            mpidht_batch_item_t *item = &b->items[i];
            if (item->fallback) {
                item->outcome = MPIDHT_WRITE_INSERTED;
                st = t->ops->write(t, &item->addr, item->key, item->value,
                                   &item->outcome);
            }
            if (st != MPIDHT_OK)
                break;
            mpidht_count_write(&t->stats, item->outcome);
            if (outcomes)
                outcomes[first + i] = item->outcome;
        }
        if (st != MPIDHT_OK)
            return st;
        begin = end;
    }
    return MPIDHT_OK;
}

static mpidht_status_t write_rows(mpidht_t *t, size_t first, size_t len,
                                  const batch_call_t *call)
{
    return write_chunk(t, first, len, call->keys, call->values_in, call->outcomes);
}

mpidht_status_t mpidht_write_batch(mpidht_t *table, size_t n, const void *keys,
                                   const void *values,
                                   mpidht_write_outcome_t *outcomes)
{
    mpidht_status_t st = check_batch(table, n, keys, values, values);
    batch_call_t call = {.keys = keys, .values_in = values, .outcomes = outcomes};
    return st == MPIDHT_OK ? by_chunks(table, n, write_rows, &call) : st;
}
