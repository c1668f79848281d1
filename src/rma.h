/*
 * The checked MPI calls shared by everything that talks to the window
 * outside the engine (engine.h issues the operations of items). Internal.
 */
#ifndef MPIDHT_RMA_H
#define MPIDHT_RMA_H

#include "table.h"

mpidht_status_t mpidht_rma_flush(mpidht_t *t, int rank);

/* Maps an MPI return code to MPIDHT_OK or MPIDHT_ERR_MPI. */
static inline mpidht_status_t mpidht_mpi_status(int rc)
{
    return rc == MPI_SUCCESS ? MPIDHT_OK : MPIDHT_ERR_MPI;
}

#endif /* MPIDHT_RMA_H */
