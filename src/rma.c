#include "rma.h"

#include "protocol.h"

mpidht_status_t mpidht_rma_flush(mpidht_t *t, int rank)
{
    return mpidht_mpi_status(MPI_Win_flush(rank, t->win));
}

mpidht_status_t mpidht_rma_put_own(mpidht_t *t, MPI_Aint disp, const void *buf, size_t len)
{
    bool per_target = t->ops->lock_per_target && !t->direct;
    mpidht_status_t st = per_target ? mpidht_mpi_status(MPI_Win_lock(
                                          MPI_LOCK_EXCLUSIVE, t->rank, 0, t->win))
                                    : MPIDHT_OK;
    if (st != MPIDHT_OK)
        return st;
    st = mpidht_mpi_status(
        MPI_Put(buf, (int)len, MPI_BYTE, t->rank, disp, (int)len, MPI_BYTE, t->win));
    if (per_target) {
        mpidht_status_t unlocked = mpidht_mpi_status(MPI_Win_unlock(t->rank, t->win));
        return st != MPIDHT_OK ? st : unlocked;
    }
    return st != MPIDHT_OK ? st : mpidht_rma_flush(t, t->rank);
}
