/*
 * How a collective call begins: the handle checked, the error detail
 * cleared, and in the debug mode (MPIDHT_DEBUG_COLLECTIVES) the check
 * that every process entered the same call. Internal.
 */
#ifndef MPIDHT_COLLECTIVE_CHECK_H
#define MPIDHT_COLLECTIVE_CHECK_H

#include "table.h"

/* The library's collective calls, as the debug mode names them. */
typedef enum mpidht_call {
    MPIDHT_CALL_CREATE,
    MPIDHT_CALL_FREE,
    MPIDHT_CALL_CLEAR,
    MPIDHT_CALL_DUMP,
    MPIDHT_CALL_RESTORE,
    MPIDHT_CALL_STATS_GLOBAL,
    MPIDHT_CALL_COUNT
} mpidht_call_t;

/* The environment variable that turns the debug mode on. */
#define MPIDHT_DEBUG_ENV "MPIDHT_DEBUG_COLLECTIVES"

/* Reads MPIDHT_DEBUG_ENV: *seconds = 0 (off) where it is unset, empty or
 * 0, its value where it is a finite number of seconds above 0. Otherwise
 * *seconds = 0 and MPIDHT_ERR_DEBUG_SETTING. */
mpidht_status_t mpidht_debug_setting(double *seconds);

/* MPI_Comm_dup(comm) for mpidht_create. With d->check_timeout > 0 it
 * waits that long at most: MPIDHT_ERR_COLLECTIVE_CHECK, with d->detail
 * set, where not every process of comm entered it by then (the pending
 * duplication is left behind: MPI cannot cancel it). MPIDHT_ERR_MPI if
 * MPI fails. */
mpidht_status_t mpidht_dup_checked(MPI_Comm comm, mpidht_diag_t *d, MPI_Comm *dup);

/* The debug mode's check over comm (the table's private communicator,
 * which carries no other point-to-point traffic): MPIDHT_OK where it is
 * off, on one process, or where every process entered call within
 * d->check_timeout seconds; otherwise MPIDHT_ERR_COLLECTIVE_CHECK on each
 * process that entered, with d->detail naming the call and the processes
 * that did not enter it or entered another call. A failed check changes
 * nothing else, so the table stays usable. */
mpidht_status_t mpidht_check_entered(MPI_Comm comm, mpidht_diag_t *d, mpidht_call_t call);

/* Begins a collective call on t: the errors of mpidht_check_table, then
 * the error detail cleared, then mpidht_check_entered. */
mpidht_status_t mpidht_enter_collective(const mpidht_t *t, mpidht_call_t call);

#endif /* MPIDHT_COLLECTIVE_CHECK_H */
