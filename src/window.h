/*
 * Which MPI window holds the buckets, and how it is allocated. Internal.
 *
 * Why the default is what it is (see also docs/design.md, "Windows"):
 *   - On one node, MPI_Win_allocate_shared. Open MPI serves it with osc sm,
 *     the fastest path measured here (~0.35 us per Get or Fetch_and_op,
 *     and it stays fast with more ranks than cores); MPICH serves it
 *     through shared memory too.
 *   - Across nodes, MPI_Win_allocate.
 *   - The library never calls MPI_Compare_and_swap, which Open MPI 4.x's
 *     osc rdma (serving allocate and create windows) crashes in
 *     (open-mpi/ompi#11349): its atomics are MPI_Fetch_and_op and
 *     MPI_Accumulate, which work on every window kind.
 */
#ifndef MPIDHT_WINDOW_H
#define MPIDHT_WINDOW_H

#include <stdbool.h>

#include "table.h"

/* The kind to use for requested (AUTO resolved), or
 * MPIDHT_ERR_WINDOW_UNSUPPORTED for a shared window across nodes. Gives
 * the same answer on every process when given the same arguments. */
mpidht_status_t mpidht_window_resolve(mpidht_window_kind_t requested,
                                      bool single_node,
                                      mpidht_window_kind_t *resolved);

/* COLLECTIVE over t->comm: creates t->win of kind t->window holding
 * `bytes` bytes of this process, sets t->local_base (and t->alloc_mem),
 * makes MPI errors on it return, and zeroes the local part. The caller
 * must agree on the result over t->comm before any process uses the
 * window. If the MPI library fails to create the window on some processes
 * only, freeing it again is not possible without a hang: the library
 * prevents the causes it knows of (budgets beyond memory) beforehand. */
mpidht_status_t mpidht_window_allocate(mpidht_t *t, size_t bytes);

/* COLLECTIVE: frees t->win and any memory behind it. */
mpidht_status_t mpidht_window_free(mpidht_t *t);

#endif /* MPIDHT_WINDOW_H */
