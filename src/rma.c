#include "rma.h"

mpidht_status_t mpidht_rma_flush(mpidht_t *t, int rank)
{
    return mpidht_mpi_status(MPI_Win_flush(rank, t->win));
}
