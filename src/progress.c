/*
 * mpidht_progress: lets MPI serve the one-sided calls that target the
 * caller (the contract is in include/mpidht.h).
 */
#include "rma.h"
#include "table.h"

mpidht_status_t mpidht_progress(mpidht_t *table)
{
    mpidht_status_t st = mpidht_check_table(table);
    if (st != MPIDHT_OK)
        return st;
    /* A probe on the table's own communicator, where nothing is ever
     * received by a probe: it matches nothing it could take from the
     * caller, and it runs MPI's progress engine (Open MPI's
     * opal_progress, MPICH's progress test), which handles requests that
     * wait for this process. */
    int flag = 0;
    return mpidht_mpi_status(
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, table->comm, &flag, MPI_STATUS_IGNORE));
}
