/*
 * How restore places a record that finds every candidate taken: a
 * breadth-first search of the calling process's buckets for a path of
 * moves (the entry into a candidate, that candidate's entry into one of
 * its own candidates, and so on) that ends in a free bucket, as an
 * augmenting path in cuckoo hashing. The shortest such path is carried out
 * from its free end, so that every entry moved stays in one of its own
 * candidates and none is ever absent. Where a search may look at every
 * bucket of the part, it finds a path whenever the part can hold the
 * entry beside those it holds (whenever some arrangement of them all
 * exists: the table a dump came from is one), memory permitting.
 * Internal.
 */
#ifndef MPIDHT_RESTORE_SEARCH_H
#define MPIDHT_RESTORE_SEARCH_H

#include <stdbool.h>

#include "table.h"

typedef struct mpidht_search mpidht_search_t;

/* Work space for the searches of one restore in t's own part: two bits
 * per bucket of the part, and 20 bytes per bucket one search has reached
 * (grown as a search needs it; where memory runs out, a search goes no
 * further than the space it has). A search passes by the buckets a
 * search before it reached and failed from (their entries' candidates led
 * to no free bucket then): that bounds the work of searches in a table
 * that cannot hold everything by about one look per bucket, and loses
 * nothing where the table can hold every entry, for no search fails
 * there. NULL if out of memory. */
mpidht_search_t *mpidht_search_new(const mpidht_t *t);
void mpidht_search_free(mpidht_search_t *s);

/* Places key (hosted by the calling process, absent from the table) with
 * value: into its first free candidate if one is, else at the end of the
 * shortest path of moves the search finds; *placed says whether (false:
 * no free bucket within the search's reach, the table unchanged, the
 * buckets reached passed by from then on). An entry moved goes into the
 * first of its candidates that is free, or, where none is, into the one
 * the next entry of the path leaves: whatever it and the key come to sit
 * in, every candidate of theirs before it holds an entry (what
 * mpidht_search_store's `ordered` relies on). The entry gets recency
 * stamp; entries moved keep theirs. Requires what restore's writes
 * require: the caller has the table to itself (no operation in flight
 * anywhere), the engine reserved for an item. MPIDHT_OK or the error of an
 * MPI call. */
mpidht_status_t mpidht_search_place(mpidht_t *t, mpidht_search_t *s, const void *key,
                                    const void *value, uint64_t stamp, bool *placed);

/* On a direct table: asks for the lines restore's store of a key at a
 * will look at in its first n candidates (each one's meta byte and key;
 * those derived). */
void mpidht_search_ask(const mpidht_t *t, const mpidht_address_t *a, unsigned n);

/* On a direct table, what restore's writes do with key and value (its
 * address a, hosted by the calling process; candidates derived as they
 * are looked at),
 * with stores into the process's own buckets: over the key where a
 * candidate holds it (MPIDHT_WRITE_UPDATED), else into the first free
 * candidate (MPIDHT_WRITE_INSERTED), the entry's recency word raised to
 * stamp; else nothing (MPIDHT_WRITE_DEFERRED: every candidate holds
 * another key). ordered: the caller knows that every entry of the part
 * has an entry in each of its candidates before the one it sits in (so
 * in a part that was empty when a restore began, where every entry came
 * by this call or mpidht_search_place and none has left); the key, if
 * present, then lies before the first free candidate, and the candidates
 * are looked at only up to it (wrongly ordered, the key may end up in the
 * table twice). Requires what mpidht_search_place requires; the caller
 * ends its stores with MPI_Win_sync. */
mpidht_write_outcome_t mpidht_search_store(mpidht_t *t, mpidht_address_t *a,
                                           const void *key, const void *value,
                                           uint64_t stamp, bool absent);

#endif /* MPIDHT_RESTORE_SEARCH_H */
