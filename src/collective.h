/*
 * How collective calls reach one verdict on every process. Internal.
 */
#ifndef MPIDHT_COLLECTIVE_H
#define MPIDHT_COLLECTIVE_H

#include "mpidht.h"

/* Every process passes its own status; every process gets its own error
 * back if it had one, MPIDHT_ERR_PEER if only another process failed.
 * For errors in a process's own arguments. */
mpidht_status_t mpidht_agree(MPI_Comm comm, mpidht_status_t local);

/* mpidht_agree, and where it returns MPIDHT_ERR_PEER, *who and *theirs
 * are the lowest rank of comm that failed and the status it passed. */
mpidht_status_t mpidht_agree_who(MPI_Comm comm, mpidht_status_t local, int *who,
                                 mpidht_status_t *theirs);

/* Every process gets the same status: MPIDHT_OK if all passed MPIDHT_OK,
 * otherwise the largest error passed anywhere. For errors that concern
 * all processes alike, such as a damaged file. */
mpidht_status_t mpidht_agree_same(MPI_Comm comm, mpidht_status_t local);

/* The arguments of a collective call on a file (dump, restore): mine is
 * this process's verdict on its own, to which an empty path adds
 * MPIDHT_ERR_FILE_IO (it names no file; a dump would have made and
 * removed "<path>.partial", i.e. ".partial" in the working folder); then
 * the path must be the same everywhere. Returns as mpidht_agree, or
 * MPIDHT_ERR_PATH_MISMATCH on every process; on failure the table's
 * error detail says what failed, after `doing` (e.g. "dumping to"). */
mpidht_status_t mpidht_agree_path(const mpidht_t *t, const char *doing, const char *path,
                                  mpidht_status_t mine);

#endif /* MPIDHT_COLLECTIVE_H */
