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

/* COLLECTIVE over comm, for mpidht_create: duplicates comm into *dup
 * (errors return), agrees on the debug setting and, in the debug mode,
 * checks that every process entered mpidht_create
 * (mpidht_check_entered). setting is this process's mpidht_debug_setting
 * status, d->check_timeout its value. Processes with and without the
 * debug mode match each other (all make nonblocking calls). Returns
 * MPIDHT_OK with *dup set where the setting is valid and the same
 * everywhere and the check passed; otherwise *dup is freed and, on every
 * process, setting where it was refused here, MPIDHT_ERR_PEER where only
 * elsewhere, MPIDHT_ERR_DEBUG_SETTING where the values differ (d->detail
 * says which). With d->check_timeout > 0 each step waits that long at
 * most: MPIDHT_ERR_COLLECTIVE_CHECK, with d->detail set, where not every
 * process of comm entered by then (what is pending is left to MPI, which
 * cannot cancel it). MPIDHT_ERR_NO_MEMORY before any MPI call;
 * MPIDHT_ERR_MPI if MPI fails. */
mpidht_status_t mpidht_dup_checked(MPI_Comm comm, mpidht_diag_t *d, mpidht_status_t setting,
                                   MPI_Comm *dup);

/* The debug mode's check over comm (the table's private communicator,
 * which carries no other point-to-point traffic): MPIDHT_OK where it is
 * off, on one process, or where every process entered call within
 * d->check_timeout seconds; otherwise MPIDHT_ERR_COLLECTIVE_CHECK on each
 * process that entered, with d->detail naming the call and the processes
 * that did not enter it or entered another call. A failed check changes
 * nothing else, so the table stays usable. */
mpidht_status_t mpidht_check_entered(MPI_Comm comm, mpidht_diag_t *d, mpidht_call_t call);

/* Frees what the checks keep in d (d itself is the caller's). */
void mpidht_diag_release(mpidht_diag_t *d);

/* Begins a collective call on t: the errors of mpidht_check_table, then
 * the error detail cleared, then mpidht_check_entered. */
mpidht_status_t mpidht_enter_collective(const mpidht_t *t, mpidht_call_t call);

#endif /* MPIDHT_COLLECTIVE_CHECK_H */
