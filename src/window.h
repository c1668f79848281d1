/*
 * Which MPI window holds the buckets, and how it is allocated. Internal.
 *
 * Why the default is what it is (see also docs/design.md, "Windows"):
 *   - On one node, MPI_Win_allocate_shared, which the engine reaches with
 *     loads, stores and processor atomics (direct access, engine.c):
 *     faster than any one-sided call, and free of MPICH's wait for the
 *     target process.
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

/* A shared window ends, on each process, with this many bytes after its
 * buckets: one cache line whose first 8 bytes are the coarse protocol's
 * window lock on a direct table (t->window_lock, engine.c). */
#define MPIDHT_WINDOW_TAIL ((size_t)64)

/* The kind to use for requested (AUTO resolved), or
 * MPIDHT_ERR_WINDOW_UNSUPPORTED for a shared window across nodes. Gives
 * the same answer on every process when given the same arguments. */
mpidht_status_t mpidht_window_resolve(mpidht_window_kind_t requested,
                                      bool single_node,
                                      mpidht_window_kind_t *resolved);

/* Where the MPI libraries keep a shared window's memory, unless Open
 * MPI's osc_sm_backing_directory says otherwise in the environment
 * (OMPI_MCA_osc_sm_backing_directory, as mpirun --mca passes it). */
#define MPIDHT_SHARED_DIRECTORY "/dev/shm"

/* Local: whether this process has room for t's window, asked before any
 * process allocates (the caller agrees on the answer): the MPI libraries
 * do not fail a window that lacks it together. MPIDHT_ERR_NO_MEMORY, with
 * the error detail saying what is needed and what is left, where
 *  - the window would take this process past its address-space limit
 *    (RLIMIT_AS, `ulimit -v`; a few MiB allowed for what MPI maps beside
 *    it): where more than one process of t is on this node, each maps the
 *    node's whole part of a shared or allocate window (t->node_bytes, and
 *    every process's tail with a page for each), else only its own part.
 *    where that mmap failed, Open MPI 4.1 left the job waiting in
 *    MPI_Win_allocate_shared;
 *  - more than one process of t is on this node, the window is shared or
 *    allocated by MPI (not create: MPI_Alloc_mem), and the file system
 *    the MPI libraries take such a window's memory from on one node
 *    (above) has less room free than the node's part. Open MPI refuses a
 *    shared one on one process while the others wait in
 *    MPI_Win_allocate_shared; MPICH makes shared and allocate windows, and
 *    touching them raises SIGBUS.
 * Where the limit, the mapped bytes (/proc/self/statm) or the directory
 * cannot be examined, that check passes. First, MPIDHT_ERR_WINDOW_UNSUPPORTED
 * (with the detail) for an allocate window under Open MPI, where osc rdma
 * may serve it and t's communicator holds more than one but not all of
 * the job's processes on this node: osc rdma may give it the memory of
 * another communicator's window there (open-mpi/ompi#7393). */
mpidht_status_t mpidht_window_check_room(mpidht_t *t);

/* COLLECTIVE over t->comm: creates t->win of kind t->window holding
 * `bytes` bytes of this process, sets t->local_base (and t->alloc_mem),
 * makes MPI errors on it return, finds the addresses of every process's
 * part on a shared window (t->node_base, t->window_lock) and zeroes the
 * local part. Where MPI refuses the window: MPIDHT_ERR_NO_MEMORY for
 * memory (or any failure on one node), MPIDHT_ERR_WINDOW_UNSUPPORTED with
 * MPI's message in the error detail where MPI has no component for the
 * kind (a create window, or any window across nodes). The caller
 * must agree on the result over t->comm before any process uses the
 * window. If the MPI library fails to create the window on some processes
 * only, freeing it again is not possible without a hang: the library
 * prevents the causes it knows of (budgets beyond memory) beforehand. */
mpidht_status_t mpidht_window_allocate(mpidht_t *t, size_t bytes);

/* The environment variable that can keep a shared window on MPI's
 * one-sided calls: "mpi"; "direct", empty or unset: direct access. */
#define MPIDHT_ACCESS_ENV "MPIDHT_SHARED_ACCESS"

/* COLLECTIVE, after every process agreed on mpidht_window_allocate's
 * result: sets t->direct, the same on every process (engine.c): direct
 * if the window is shared and of the unified memory model, every address
 * aligned and no process has MPIDHT_SHARED_ACCESS=mpi. MPIDHT_ERR_ACCESS_SETTING (with the error
 * detail) for any other value of it on this process. */
mpidht_status_t mpidht_window_decide_direct(mpidht_t *t);

/* COLLECTIVE: frees t->win and any memory behind it. */
mpidht_status_t mpidht_window_free(mpidht_t *t);

/* After MPI_Finalize, which took t->win and its memory: frees only what
 * the table holds of this process's own memory about the window, calling
 * nothing of MPI. */
void mpidht_window_forget(mpidht_t *t);

#endif /* MPIDHT_WINDOW_H */
