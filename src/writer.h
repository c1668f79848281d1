/*
 * Writes, updates and removes: the decisions every protocol makes the same
 * way, and the locked state machine the fine and lock-free protocols share
 * for them. Internal.
 *
 * Locked writes (fine and lock-free protocols). The lock word of a key's
 * first candidate is its key lock: every write, update and remove of the
 * key holds it, so they are serialised per key, a key never lands in two
 * buckets, and an update's function sees the latest value. A writer:
 *
 *   1. takes the key lock: MPI_Fetch_and_op adds MPIDHT_FINE_EXCLUSIVE; the
 *      writer owns it if no writer bit was set before (else it subtracts
 *      again, backs off and retries); registered readers (fine) then leave
 *      while new ones back off, and the writer waits for them to be gone;
 *   2. gets the meta byte and key of every candidate (and the recency
 *      words, to choose an entry to evict; an update gets whole buckets);
 *   3. chooses a bucket; if it is not the key lock's own, takes its lock
 *      too, once: if another writer holds it, the writer lets go of
 *      everything and starts over (so no one ever waits for a lock while
 *      holding one another writer could want: no deadlock), and looks at
 *      the bucket again under the lock; where it would evict on a direct
 *      table, it checks that the other candidates were all taken at one
 *      instant (mpidht_engine_all_taken), else lets go of the bucket and
 *      probes again;
 *   4. puts the new data (or clears the meta byte), raises the recency;
 *   5. subtracts its writer bits again.
 *
 * Where the engine is exclusive (restore: the caller has the table to
 * itself), a writer takes no lock: it probes (1-2), goes to the write step
 * (4) and is done, fetching the chosen bucket again only for what the
 * probe did not get (an update's bucket whole, an evicted entry kept).
 *
 * Every wait is bounded by the table's timeout; a writer that gives up
 * lets go of what it holds and finishes with MPIDHT_ERR_TIMEOUT. The lock
 * word is only ever changed by MPI_SUM and read by MPI_NO_OP.
 */
#ifndef MPIDHT_WRITER_H
#define MPIDHT_WRITER_H

#include "engine.h"

/* What the write step of an item does (mpidht_item_t.act). */
enum { MPIDHT_ACT_NONE, MPIDHT_ACT_STORE, MPIDHT_ACT_CLEAR };

/* After the probe (meta bytes and keys, or whole buckets for an update,
 * of every candidate in the item's slots): sets it->chosen and
 * it->planned; or returns false for a remove of an absent key, and for a
 * write that would evict while the engine defers evictions (it->outcome
 * MPIDHT_WRITE_DEFERRED): the item then finishes with MPIDHT_NOT_FOUND. */
bool mpidht_write_choose(const mpidht_t *t, mpidht_item_t *it);

/* Whether the chosen bucket, fetched again into its slot, still suits the
 * write chosen for it (another writer may have filled or emptied it). */
bool mpidht_write_still_fits(const mpidht_t *t, mpidht_item_t *it);

/* Decides what the write step does with the chosen bucket (staged in its
 * slot): stages a write, runs an update's function, or clears for a
 * remove; sets it->act and the item's eventual status and outcome. */
void mpidht_write_prepare(mpidht_t *t, mpidht_item_t *it);

/* Issues the write step (it->act) on the chosen bucket. */
mpidht_status_t mpidht_write_issue_act(mpidht_t *t, mpidht_item_t *it);

/* The locked state machine for MPIDHT_OP_WRITE, _UPDATE and _REMOVE. */
void mpidht_locked_start(mpidht_t *t, mpidht_item_t *it);
mpidht_status_t mpidht_locked_issue(mpidht_t *t, mpidht_item_t *it);
mpidht_status_t mpidht_locked_advance(mpidht_t *t, mpidht_item_t *it);

#endif /* MPIDHT_WRITER_H */
