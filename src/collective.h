/*
 * How collective calls reach one verdict on every process. Internal.
 */
#ifndef MPIDHT_COLLECTIVE_H
#define MPIDHT_COLLECTIVE_H

#include <stdbool.h>

#include "mpidht.h"

/* Every process passes its own status; every process gets its own error
 * back if it had one, MPIDHT_ERR_PEER if only another process failed.
 * For errors in a process's own arguments. */
mpidht_status_t mpidht_agree(MPI_Comm comm, mpidht_status_t local);

/* Every process gets the same status: MPIDHT_OK if all passed MPIDHT_OK,
 * otherwise the largest error passed anywhere. For errors that concern
 * all processes alike, such as a damaged file. */
mpidht_status_t mpidht_agree_same(MPI_Comm comm, mpidht_status_t local);

/* Whether the string s is byte for byte the same on every process (a
 * process passing NULL takes part and makes the answer false). */
mpidht_status_t mpidht_same_string(MPI_Comm comm, const char *s, bool *same);

#endif /* MPIDHT_COLLECTIVE_H */
