#include "protocol.h"

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

mpidht_status_t mpidht_read_hit(mpidht_t *t, mpidht_item_t *it, unsigned c)
{
    memcpy(it->out, mpidht_bucket_value(t, mpidht_slot(t, it->slots, c)), t->value_size);
    it->hit = true;
    mpidht_item_finish(it, MPIDHT_OK, 0);
    return mpidht_refresh(t, &it->addr, c);
}

void mpidht_read_start(const mpidht_t *t, mpidht_item_t *it)
{
    it->first = it->from;
    it->count = it->op == MPIDHT_OP_SCAN || !t->same_node[it->addr.rank] || it->from > 0
                    ? it->addr.count - it->from
                    : 1;
    mpidht_address_need(&it->addr, it->first + it->count);
}

bool mpidht_read_next(mpidht_item_t *it)
{
    if (it->first + it->count < it->addr.count) {
        it->first += it->count;
        it->count = it->addr.count - it->first;
        mpidht_address_need(&it->addr, it->addr.count);
        return true;
    }
    mpidht_item_finish(it, MPIDHT_NOT_FOUND, 0);
    return false;
}
