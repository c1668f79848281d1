/*
 * The consistency protocols: one interface, three implementations
 * (protocol_coarse.c, protocol_fine.c, protocol_lockfree.c), each a
 * per-key state machine that the engine (engine.h) drives. The public
 * calls validate arguments, set up items and count outcomes; a protocol
 * only moves bytes consistently. Internal.
 */
#ifndef MPIDHT_PROTOCOL_H
#define MPIDHT_PROTOCOL_H

#include "engine.h"
#include "table.h"

typedef struct mpidht_protocol_ops {
    mpidht_protocol_t id;
    /* Coarse: the engine runs the items of one target at a time, inside
     * MPI_Win_lock of that target's window. The others run inside one
     * MPI_Win_lock_all epoch that open and close start and end. */
    bool lock_per_target;
    /* Fine: a read registers as a reader of each bucket it reads (adds 1
     * to its lock word); on a direct table, where reads look at their
     * candidates without the engine (mpidht_engine_read_looks), a look
     * does the same. */
    bool reads_register;
    mpidht_status_t (*open)(mpidht_t *t);
    mpidht_status_t (*close)(mpidht_t *t);

    /* Puts an item at its first step (or finishes it). */
    void (*start)(mpidht_t *t, mpidht_item_t *it);
    /* Issues the item's one-sided operations for its current step. */
    mpidht_status_t (*issue)(mpidht_t *t, mpidht_item_t *it);
    /* Once they are complete: looks at the results and takes the next
     * step, schedules a retry (mpidht_item_wait) or finishes the item.
     * Operations it issues here (releases) complete with the next round. */
    mpidht_status_t (*advance)(mpidht_t *t, mpidht_item_t *it);

} mpidht_protocol_ops_t;

extern const mpidht_protocol_ops_t mpidht_protocol_coarse;
extern const mpidht_protocol_ops_t mpidht_protocol_fine;
extern const mpidht_protocol_ops_t mpidht_protocol_lockfree;

/* The ops of protocol, or NULL if it is not a known protocol. */
const mpidht_protocol_ops_t *mpidht_protocol_lookup(mpidht_protocol_t protocol);

/* Opens/closes an MPI_Win_lock_all epoch (fine and lock-free share it). */
mpidht_status_t mpidht_epoch_lock_all(mpidht_t *t);
mpidht_status_t mpidht_epoch_unlock_all(mpidht_t *t);

/* What a read does with a hit on candidate c: copies the value out,
 * refreshes the bucket's recency now and then, finishes the item. */
mpidht_status_t mpidht_read_hit(mpidht_t *t, mpidht_item_t *it, unsigned c);

/* Sets the candidates [first, first + count) a read (or scan) gets in its
 * first round, derived: every one where the target is on another node,
 * where each round is a network round trip (a miss then costs one
 * round); on this node the first alone (a hit is usually there, and a
 * round costs little), then the rest. A scan gets all. A read whose
 * first candidates were seen without its key (item.from > 0: a look
 * before it, mpidht_engine_read_alone or _read_looks) gets all the
 * others at once. */
void mpidht_read_start(const mpidht_t *t, mpidht_item_t *it);

/* Moves a read on after its candidates [first, first + count) held no
 * hit: to the candidates after them (derived), or to a miss. Returns true
 * if there is more to read. */
bool mpidht_read_next(mpidht_item_t *it);

#endif /* MPIDHT_PROTOCOL_H */
