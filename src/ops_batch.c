/*
 * The public batched operations: validate, cut the batch into chunks of
 * the engine's work space, run reads all at once and writes, updates and
 * removes in runs of rows whose candidate buckets are pairwise disjoint
 * (so that the result is that of the rows one at a time, in order), count
 * outcomes.
 */
#include <string.h>

#include "engine.h"
#include "stats.h"

static mpidht_status_t check_batch(const mpidht_t *t, size_t n, const void *keys,
                                   const void *second, const void *third)
{
    mpidht_status_t st = mpidht_check_table(t);
    if (st != MPIDHT_OK)
        return st;
    if (n > 0 && (!keys || !second || !third))
        return MPIDHT_ERR_NULL_ARGUMENT;
    if (n > SIZE_MAX / t->key_size || n > SIZE_MAX / t->value_size)
        return MPIDHT_ERR_BATCH_SIZE;
    return MPIDHT_OK;
}

/* The buffers of one batched call. */
typedef struct {
    mpidht_op_t op;
    const unsigned char *keys;
    const unsigned char *values_in;   /* write */
    unsigned char *values_out;        /* read */
    unsigned char *found;             /* read */
    int *outcomes;                    /* write, update: outcome per row, or NULL */
    size_t outcome_size;              /* bytes of one outcome */
} batch_call_t;

/* What the items of a run say back to the caller; the first row error
 * (a timeout, an invalid update action) stays in *row_error. */
static void report(mpidht_t *t, const batch_call_t *call, const mpidht_item_t *items,
                   size_t n, mpidht_status_t *row_error)
{
    for (size_t i = 0; i < n; ++i) {
        const mpidht_item_t *it = &items[i];
        mpidht_count_item(&t->stats, it);
        if (call->op == MPIDHT_OP_READ)
            call->found[it->row] = it->hit;
        if (call->outcomes) {
            /* mpidht_write_outcome_t and mpidht_update_outcome_t are enums
             * of the same size (asserted below). */
            memcpy((unsigned char *)call->outcomes + it->row * call->outcome_size,
                   &it->outcome, call->outcome_size);
        }
        bool fine = it->status == MPIDHT_OK || it->status == MPIDHT_NOT_FOUND;
        if (!fine && *row_error == MPIDHT_OK)
            *row_error = it->status;
    }
}

_Static_assert(sizeof(mpidht_write_outcome_t) == sizeof(int) &&
                   sizeof(mpidht_update_outcome_t) == sizeof(int),
               "outcomes are reported as int");

/* Reads rows [first, first + n) by looking at their buckets
 * (mpidht_engine_read_looks); the reads a look handed on (a torn copy, a
 * writer met) then run through the engine, from the candidate where it
 * stopped. */
static mpidht_status_t look_chunk(mpidht_t *t, const batch_call_t *call, size_t first,
                                  size_t n, mpidht_status_t *row_error)
{
    mpidht_status_t st = mpidht_engine_read_looks(
        t, n, call->keys + first * t->key_size, call->values_out + first * t->value_size,
        first);
    if (st != MPIDHT_OK)
        return st;
    mpidht_item_t *items = t->engine->items;
    size_t handed = 0;
    for (size_t i = 0; i < n; ++i) {
        mpidht_item_t *it = &items[i];
        if (it->done) {
            report(t, call, it, 1, row_error);
            continue;
        }
        /* Moved down to the front: items[handed] is done or is it. */
        size_t row = it->row;
        unsigned from = it->from;
        mpidht_address_t addr = it->addr;
        mpidht_engine_item(t, handed, MPIDHT_OP_READ, row, it->key, NULL, it->out, &addr)
            ->from = from;
        ++handed;
    }
    if (handed == 0)
        return MPIDHT_OK;
    st = mpidht_engine_run(t, items, handed);
    if (st == MPIDHT_OK)
        report(t, call, items, handed, row_error);
    return st;
}

/* Rows [first, first + n) of the call: one chunk. */
static mpidht_status_t run_chunk(mpidht_t *t, const batch_call_t *call, size_t first,
                                 size_t n, mpidht_status_t *row_error)
{
    if (call->op == MPIDHT_OP_READ && mpidht_engine_looks(t))
        return look_chunk(t, call, first, n, row_error);
    for (size_t i = 0; i < n; ++i) {
        size_t row = first + i;
        mpidht_engine_item(
            t, i, call->op, row, call->keys + row * t->key_size,
            call->values_in ? call->values_in + row * t->value_size : NULL,
            call->values_out ? call->values_out + row * t->value_size : NULL, NULL);
    }
    mpidht_item_t *items = t->engine->items;
    if (call->op == MPIDHT_OP_READ) {
        mpidht_status_t st = mpidht_engine_run(t, items, n);
        if (st == MPIDHT_OK)
            report(t, call, items, n, row_error);
        return st;
    }
    for (size_t begin = 0; begin < n;) {
        size_t end = begin;
        mpidht_engine_new_run(t);
        while (end < n && mpidht_engine_claim(t, &items[end]))
            ++end;
        mpidht_status_t st = mpidht_engine_run(t, items + begin, end - begin);
        if (st != MPIDHT_OK)
            return st;
        report(t, call, items + begin, end - begin, row_error);
        begin = end;
    }
    return MPIDHT_OK;
}

static mpidht_status_t run_batch(mpidht_t *t, size_t n, const batch_call_t *call)
{
    if (n == 0)
        return MPIDHT_OK;
    size_t chunk = mpidht_engine_chunk(t);
    mpidht_status_t st = mpidht_engine_reserve(t, chunk), row_error = MPIDHT_OK;
    for (size_t first = 0; st == MPIDHT_OK && first < n; first += chunk)
        st = run_chunk(t, call, first, n - first < chunk ? n - first : chunk, &row_error);
    return st != MPIDHT_OK ? st : row_error;
}

mpidht_status_t mpidht_read_batch(mpidht_t *table, size_t n, const void *keys,
                                  void *values, unsigned char *found)
{
    mpidht_status_t st = check_batch(table, n, keys, values, found);
    batch_call_t call = {.op = MPIDHT_OP_READ, .keys = keys, .values_out = values,
                         .found = found};
    return st == MPIDHT_OK ? run_batch(table, n, &call) : st;
}

mpidht_status_t mpidht_write_batch(mpidht_t *table, size_t n, const void *keys,
                                   const void *values,
                                   mpidht_write_outcome_t *outcomes)
{
    mpidht_status_t st = check_batch(table, n, keys, values, values);
    batch_call_t call = {.op = MPIDHT_OP_WRITE, .keys = keys, .values_in = values,
                         .outcomes = (int *)outcomes,
                         .outcome_size = sizeof(mpidht_write_outcome_t)};
    return st == MPIDHT_OK ? run_batch(table, n, &call) : st;
}

mpidht_status_t mpidht_update_batch(mpidht_t *table, size_t n, const void *keys,
                                    mpidht_update_fn fn, void *user_data,
                                    mpidht_update_outcome_t *outcomes)
{
    mpidht_status_t st = check_batch(table, n, keys, keys, keys);
    if (st == MPIDHT_OK && !fn)
        st = MPIDHT_ERR_NULL_ARGUMENT;
    if (st != MPIDHT_OK || n == 0)
        return st;
    batch_call_t call = {.op = MPIDHT_OP_UPDATE, .keys = keys,
                         .outcomes = (int *)outcomes,
                         .outcome_size = sizeof(mpidht_update_outcome_t)};
    st = mpidht_engine_set_update(table, 1, fn, user_data);
    return st == MPIDHT_OK ? run_batch(table, n, &call) : st;
}
