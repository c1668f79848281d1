/*
 * The checked MPI calls shared by everything that talks to the window
 * outside the engine (engine.h issues the operations of items). Internal.
 */
#ifndef MPIDHT_RMA_H
#define MPIDHT_RMA_H

#include "table.h"

mpidht_status_t mpidht_rma_flush(mpidht_t *t, int rank);

/* Puts len bytes (at most INT_MAX) of buf at displacement disp of this
 * process's own part of the window and completes them, under the
 * protocol's epoch (the coarse protocol outside a direct table, which
 * keeps none open between calls, locks the part for it). For collective
 * calls during which no operation on those bytes is in flight anywhere
 * (clear, restore). */
mpidht_status_t mpidht_rma_put_own(mpidht_t *t, MPI_Aint disp, const void *buf, size_t len);

/* Maps an MPI return code to MPIDHT_OK or MPIDHT_ERR_MPI. */
static inline mpidht_status_t mpidht_mpi_status(int rc)
{
    return rc == MPI_SUCCESS ? MPIDHT_OK : MPIDHT_ERR_MPI;
}

#endif /* MPIDHT_RMA_H */
