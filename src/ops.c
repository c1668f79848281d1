/*
 * The public single-key operations: validate, then run the key through
 * the engine as a batch of one, count the outcome. A read first lets the
 * engine answer it without an item, where the table allows
 * (mpidht_engine_read_alone).
 */
#include "engine.h"
#include "stats.h"

/* Validates a single call (operations after MPI_Finalize would be
 * erroneous MPI calls) and reserves the engine's one item. */
static mpidht_status_t check_call(mpidht_t *t, const void *a, const void *b)
{
    mpidht_status_t st = mpidht_check_table(t);
    if (st == MPIDHT_OK && (!a || !b))
        st = MPIDHT_ERR_NULL_ARGUMENT;
    return st == MPIDHT_OK ? mpidht_engine_reserve(t, 1) : st;
}

/* Runs one item (located at addr, or NULL: by the engine; a read from
 * candidate `from`); its status (or an MPI failure) is the call's. The
 * engine is reserved. */
static mpidht_status_t run_one(mpidht_t *t, mpidht_op_t op, const void *key,
                               const void *value, void *out, int *outcome,
                               const mpidht_address_t *addr, unsigned from)
{
    mpidht_item_t *it = mpidht_engine_item(t, 0, op, 0, key, value, out, addr);
    it->from = from;
    mpidht_status_t st = mpidht_engine_run(t, it, 1);
    if (st != MPIDHT_OK)
        return st;
    mpidht_count_item(&t->stats, it);
    if (outcome)
        *outcome = it->outcome;
    return it->status;
}

mpidht_status_t mpidht_read(mpidht_t *table, const void *key, void *value)
{
    mpidht_status_t st = check_call(table, key, value);
    if (st != MPIDHT_OK)
        return st;
    /* Located once, for the engine too where a look does not answer (not
     * a direct table, or reading on from the candidate whose copy was
     * torn or where a writer was met). */
    mpidht_address_t addr;
    mpidht_look_t look;
    unsigned from;
    mpidht_locate(table, key, &addr, 1);
    st = mpidht_engine_read_alone(table, &addr, key, value, &look, &from);
    if (st != MPIDHT_OK)
        return st;
    if (look == MPIDHT_LOOK_NONE || look == MPIDHT_LOOK_TORN || look == MPIDHT_LOOK_BUSY)
        return run_one(table, MPIDHT_OP_READ, key, NULL, value, NULL, &addr, from);
    mpidht_count_read(&table->stats, look == MPIDHT_LOOK_HIT);
    return look == MPIDHT_LOOK_HIT ? MPIDHT_OK : MPIDHT_NOT_FOUND;
}

mpidht_status_t mpidht_write(mpidht_t *table, const void *key,
                             const void *value, mpidht_write_outcome_t *outcome)
{
    mpidht_status_t st = check_call(table, key, value);
    int done = 0;
    if (st == MPIDHT_OK)
        st = run_one(table, MPIDHT_OP_WRITE, key, value, NULL, &done, NULL, 0);
    if (st == MPIDHT_OK && outcome)
        *outcome = (mpidht_write_outcome_t)done;
    return st;
}

mpidht_status_t mpidht_remove(mpidht_t *table, const void *key)
{
    mpidht_status_t st = check_call(table, key, key);
    return st == MPIDHT_OK ? run_one(table, MPIDHT_OP_REMOVE, key, NULL, NULL, NULL, NULL, 0) : st;
}

mpidht_status_t mpidht_update(mpidht_t *table, const void *key, mpidht_update_fn fn,
                              void *user_data, mpidht_update_outcome_t *outcome)
{
    mpidht_status_t st = check_call(table, key, key);
    int done = 0;
    if (st == MPIDHT_OK && !fn)
        st = MPIDHT_ERR_NULL_ARGUMENT;
    if (st == MPIDHT_OK)
        st = mpidht_engine_set_update(table, 1, fn, user_data);
    if (st == MPIDHT_OK)
        st = run_one(table, MPIDHT_OP_UPDATE, key, NULL, NULL, &done, NULL, 0);
    if ((st == MPIDHT_OK || st == MPIDHT_ERR_UPDATE_ACTION) && outcome)
        *outcome = (mpidht_update_outcome_t)done;
    return st;
}
