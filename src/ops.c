/*
 * The public one-sided operations: validate, locate the key, hand over to
 * the table's protocol, count the outcome.
 */
#include "protocol.h"
#include "stats.h"

/* Operations after MPI_Finalize would be erroneous MPI calls. */
static mpidht_status_t check_call(const mpidht_t *t, const void *a, const void *b)
{
    int finalized = 0;
    if (!t)
        return MPIDHT_ERR_INVALID_HANDLE;
    if (!a || !b)
        return MPIDHT_ERR_NULL_ARGUMENT;
    MPI_Finalized(&finalized);
    return finalized ? MPIDHT_ERR_MPI_NOT_INITIALIZED : MPIDHT_OK;
}

mpidht_status_t mpidht_read(mpidht_t *table, const void *key, void *value)
{
    mpidht_status_t st = check_call(table, key, value);
    if (st != MPIDHT_OK)
        return st;
    mpidht_address_t addr;
    mpidht_locate(table, key, &addr);
    st = table->ops->read(table, &addr, key, value);
    if (st == MPIDHT_OK || st == MPIDHT_NOT_FOUND)
        mpidht_count_read(&table->stats, st == MPIDHT_OK);
    return st;
}

mpidht_status_t mpidht_write(mpidht_t *table, const void *key,
                             const void *value, mpidht_write_outcome_t *outcome)
{
    mpidht_status_t st = check_call(table, key, value);
    if (st != MPIDHT_OK)
        return st;
    mpidht_address_t addr;
    mpidht_locate(table, key, &addr);
    mpidht_write_outcome_t done = MPIDHT_WRITE_INSERTED;
    st = table->ops->write(table, &addr, key, value, &done);
    if (st != MPIDHT_OK)
        return st;
    mpidht_count_write(&table->stats, done);
    if (outcome)
        *outcome = done;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_remove(mpidht_t *table, const void *key)
{
    mpidht_status_t st = check_call(table, key, key);
    if (st != MPIDHT_OK)
        return st;
    mpidht_address_t addr;
    mpidht_locate(table, key, &addr);
    st = table->ops->remove(table, &addr, key);
    table->stats.removes += st == MPIDHT_OK;
    return st;
}
