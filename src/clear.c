/*
 * Emptying the whole table (collective): every process zeroes the buckets
 * it hosts with MPI_Put into its own part of the window, once every
 * process has completed what it had pending.
 */
#include <stdlib.h>

#include "collective.h"
#include "collective_check.h"
#include "engine.h"
#include "rma.h"

/* Bytes zeroed per MPI_Put. */
#define CLEAR_CHUNK ((size_t)1 << 20)

static mpidht_status_t zero_own(mpidht_t *t)
{
    size_t bytes = (size_t)t->local_buckets * t->layout.bucket_size;
    if (bytes == 0)
        return MPIDHT_OK;
    size_t chunk = bytes < CLEAR_CHUNK ? bytes : CLEAR_CHUNK;
    unsigned char *zeros = calloc(1, chunk);
    if (!zeros)
        return MPIDHT_ERR_NO_MEMORY;
    mpidht_status_t st = MPIDHT_OK;
    for (size_t at = 0; st == MPIDHT_OK && at < bytes; at += chunk)
        st = mpidht_rma_put_own(t, (MPI_Aint)at, zeros,
                                bytes - at < chunk ? bytes - at : chunk);
    free(zeros);
    return st;
}

mpidht_status_t mpidht_clear(mpidht_t *table)
{
    mpidht_status_t st = mpidht_enter_collective(table, MPIDHT_CALL_CLEAR);
    if (st != MPIDHT_OK)
        return st;
    /* Nothing of anyone's may still be on its way when the zeros land;
     * what misses saw before is no guide to where a write goes after
     * (engine.h: the zeros take no locks). */
    mpidht_engine_forget_hints(table);
    st = mpidht_agree_same(table->comm, mpidht_engine_flush_all(table));
    if (st == MPIDHT_OK)
        st = mpidht_agree_same(table->comm, zero_own(table));
    return st;
}
