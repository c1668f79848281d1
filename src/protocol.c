#include "protocol.h"

#include <sched.h>
#include <string.h>

#include "bucket.h"
#include "rma.h"

const mpidht_protocol_ops_t *mpidht_protocol_lookup(mpidht_protocol_t protocol)
{
    switch (protocol) {
    case MPIDHT_PROTOCOL_COARSE:
        return &mpidht_protocol_coarse;
    case MPIDHT_PROTOCOL_FINE:
        return &mpidht_protocol_fine;
    case MPIDHT_PROTOCOL_LOCKFREE:
        return &mpidht_protocol_lockfree;
    }
    return NULL;
}

mpidht_status_t mpidht_epoch_lock_all(mpidht_t *t)
{
    return mpidht_mpi_status(MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win));
}

mpidht_status_t mpidht_epoch_unlock_all(mpidht_t *t)
{
    return mpidht_mpi_status(MPI_Win_unlock_all(t->win));
}

void mpidht_backoff(unsigned attempt)
{
    if (attempt >= 4)
        sched_yield();
}

mpidht_status_t mpidht_clear_key(mpidht_t *t, const mpidht_address_t *addr,
                                 const void *key)
{
    mpidht_status_t st = mpidht_rma_probe_keys(t, addr);
    bool removed = false;
    for (unsigned i = 0; st == MPIDHT_OK && i < addr->count; ++i) {
        if (mpidht_bucket_holds(t, mpidht_slot(t, t->probe, i), key)) {
            st = mpidht_rma_clear_header(t, addr->rank, addr->index[i]);
            removed = true;
        }
    }
    if (st != MPIDHT_OK)
        return st;
    return removed ? MPIDHT_OK : MPIDHT_NOT_FOUND;
}

mpidht_status_t mpidht_read_probing(mpidht_t *t, const mpidht_address_t *addr,
                                    const void *key, void *value,
                                    mpidht_probe_fn probe)
{
    int found = -1;
    mpidht_status_t st = probe(t, addr, 0, 1, key, &found);
    if (st == MPIDHT_OK && found < 0 && addr->count > 1)
        st = probe(t, addr, 1, addr->count - 1, key, &found);
    if (st != MPIDHT_OK)
        return st;
    if (found < 0)
        return MPIDHT_NOT_FOUND;
    memcpy(value, mpidht_bucket_value(t, mpidht_slot(t, t->probe, (unsigned)found)),
           t->value_size);
    return MPIDHT_OK;
}
