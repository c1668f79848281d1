/*
 * The operations of a round to processes on other nodes, queued until the
 * round's flush and then handed to MPI gathered per target: under osc
 * pt2pt, where every call is a message the target handles, or over a
 * network, a call costs a message, so a round should cost one message per
 * target and kind of operation, not one per bucket (engine.h, rounds).
 * Internal.
 *
 * What goes together, per target:
 *   - every get of the round, in one MPI_Get whose target datatype lists
 *     the bytes at the target and whose origin datatype where they go
 *     (gets are unordered among themselves and against the atomics, as
 *     MPI leaves them within an epoch);
 *   - the atomics on 64-bit words (MPI_INT64_T, MPI_SUM or MPI_NO_OP) in
 *     the order they were queued: a run of consecutive ones of the same
 *     kind and operand, on pairwise different words, in one
 *     MPI_Get_accumulate (fetching) or MPI_Accumulate, whose target
 *     datatype lists the words. MPI applies accumulate operations of one
 *     origin on one word in the order issued (the default
 *     accumulate_ordering) and atomically per element, so this is the
 *     outcome of the calls one by one: a run never holds two operations on
 *     one word (MPI forbids overlapping entries in a target datatype), and
 *     operations of different kinds or operands on one word keep their
 *     order.
 * A target with a single get, or a run of one atomic, gets the plain call.
 */
#ifndef MPIDHT_QUEUE_H
#define MPIDHT_QUEUE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpidht.h"

typedef struct mpidht_queued mpidht_queued_t;

typedef struct mpidht_queue {
    mpidht_queued_t *ops;         /* [capacity], in the order queued */
    size_t count, capacity;
    /* Per target: how many are queued (zero between rounds); the targets
     * with any, in the order of their first. */
    size_t *per_target;           /* [comm_size] */
    int *targets;                 /* [comm_size] */
    size_t target_count;
    /* Scratch of capacity entries: the ops grouped by target, and what
     * the derived datatypes and operands are built from (the operands
     * stay untouched until the flush completes the calls). */
    size_t *order;
    MPI_Aint *origin_at, *target_at;
    int *lengths;
    int64_t *operands;
    /* The words of the run being built: open addressing, 2 x capacity
     * entries (a power of two), an entry counting only if its mark is
     * the run's. */
    MPI_Aint *seen_disp;
    uint32_t *seen_mark;
    size_t seen_capacity;
    uint32_t mark;
} mpidht_queue_t;

/* Makes room for `capacity` operations (the queue must be empty) among
 * comm_size targets. MPIDHT_OK or MPIDHT_ERR_NO_MEMORY (the queue as it
 * was). */
mpidht_status_t mpidht_queue_reserve(mpidht_queue_t *q, size_t capacity, int comm_size);
void mpidht_queue_free(mpidht_queue_t *q);

/* Whether nothing is queued (always on one node, where nothing is). */
static inline bool mpidht_queue_empty(const mpidht_queue_t *q)
{
    return q->count == 0;
}

/* Whether another operation fits; the caller hands the queue to MPI and
 * completes it (a flush) before it queues more. */
static inline bool mpidht_queue_full(const mpidht_queue_t *q)
{
    return q->count == q->capacity;
}

/* Queues a get of len bytes at disp of rank's window part into origin. */
void mpidht_queue_get(mpidht_queue_t *q, int rank, MPI_Aint disp, void *origin, int len);
/* Queues an atomic on the 64-bit word at disp of rank's part: adds
 * *delta (NULL: adds nothing, MPI_NO_OP) and, where result is not NULL,
 * fetches the word's previous value into it. */
void mpidht_queue_atomic(mpidht_queue_t *q, int rank, MPI_Aint disp, int64_t *result,
                         const int64_t *delta);

/* Hands every queued operation to MPI on win, gathered as above; the
 * queue is empty afterwards, also on an error. Its operations complete
 * with the next flush (or unlock) of their targets; until then their
 * buffers stay untouched and the queue is not issued again (it holds
 * their operands). MPI_SUCCESS or the error of the MPI call that
 * failed. */
int mpidht_queue_issue(mpidht_queue_t *q, MPI_Win win);

/* Forgets what is queued (a call that failed left it). */
void mpidht_queue_drop(mpidht_queue_t *q);

#endif /* MPIDHT_QUEUE_H */
