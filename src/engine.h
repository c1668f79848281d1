/*
 * The engine every operation runs through, single or batched: each key is
 * an item that a protocol moves through its steps. A round issues the
 * one-sided operations of every item that is ready (those to other nodes
 * gathered per target: queue.h), completes them with one MPI_Win_flush
 * per target touched, and lets each item look at the results and take its
 * next step. A single call is a batch of one. On a
 * direct table (all processes on one node, table.h) the same operations
 * are loads, stores and processor atomics on the shared window, complete
 * when issued; a call's accesses begin after an acquire fence and each
 * round ends with one MPI_Win_sync (engine.c). Reads there look at their
 * candidates without the engine's items and rounds
 * (mpidht_engine_read_alone, mpidht_engine_read_looks): a hit or a miss,
 * the usual cases, costs no item and no round; only a read that met a
 * torn copy of its key, or a writer, goes on through the engine.
 * Internal.
 *
 * Items of a write, update or remove batch whose candidate buckets
 * overlap must not run at the same time (the outcome would depend on the
 * order the rounds happen to take): the public calls cut such batches
 * into runs of items with pairwise disjoint buckets (mpidht_engine_claim).
 */
#ifndef MPIDHT_ENGINE_H
#define MPIDHT_ENGINE_H

#include "queue.h"
#include "table.h"

typedef enum mpidht_op {
    MPIDHT_OP_READ,
    MPIDHT_OP_WRITE,
    MPIDHT_OP_REMOVE,
    MPIDHT_OP_UPDATE,
    /* Gets all its "candidates" (some of the caller's own buckets, see
     * scan.c) whole, as a read would, without looking for a key. */
    MPIDHT_OP_SCAN
} mpidht_op_t;

typedef struct mpidht_item {
    mpidht_address_t addr;
    mpidht_op_t op;
    size_t row;                   /* the key's row in the caller's batch */
    const unsigned char *key;
    const unsigned char *value;   /* write: the value to store */
    unsigned char *out;           /* read: where a hit's value goes */
    unsigned char *slots;         /* one bucket-sized slot per candidate */
    uint64_t stamp;               /* the time a write puts into recency */

    int step;                     /* the protocol's state */
    unsigned from;                /* a read: the candidate it starts at (those
                                   * before were seen without its key) */
    unsigned first, count;        /* the candidates a read looks at now */
    unsigned chosen;              /* the candidate a write goes to */
    mpidht_write_outcome_t planned; /* what the probe suggested for chosen */
    int act;                      /* what the write step does (writer.h) */
    uint32_t held;                /* bit c: holds the writer's lock of c */
    uint32_t registered;          /* bit c: a registered reader of c (fine) */
    /* A write that reuses the probe of its key's miss (read-for-insert,
     * mpidht_engine_take_hint): the generation of the key lock's bucket
     * the miss saw, and where the miss would have put the key (a guide
     * to the write's prefetch). */
    bool hinted;
    unsigned hint_chosen;
    mpidht_write_outcome_t hint_planned;
    uint64_t hint_gen;
    bool issued;                  /* issued operations in this round */
    bool alone;                   /* run by itself (every candidate asked
                                   * for at its start, engine.c) */
    bool done;

    /* The result, when done. */
    mpidht_status_t status;       /* MPIDHT_OK, _NOT_FOUND, _ERR_TIMEOUT, ... */
    int outcome;                  /* mpidht_write_outcome_t or _update_outcome_t */
    bool hit;                     /* read: found */

    unsigned attempts;            /* waits so far, for the backoff */
    double retry_at;              /* MPI_Wtime() before which it waits */
    double deadline;              /* MPI_Wtime() after which it times out;
                                   * 0 until its first wait */

    /* Last, and not cleared when the item is prepared: each word is
     * written by the round that fetches it before the item reads it. */
    int64_t lock[MPIDHT_MAX_CANDIDATES];     /* fetched lock words */
    uint64_t recency[MPIDHT_MAX_CANDIDATES]; /* fetched recency words */
} mpidht_item_t;

typedef struct mpidht_engine {
    size_t capacity;              /* items */
    mpidht_item_t *items;
    unsigned char *slots;         /* capacity x candidates buckets */
    /* Targets with operations issued and not yet flushed. */
    unsigned char *dirty;         /* [comm_size] */
    int *dirty_list;              /* [comm_size] */
    size_t dirty_count;
    /* A recency refresh left pending to a target: its origin buffer. */
    unsigned char *refresh_pending; /* [comm_size] */
    uint64_t *refresh_value;        /* [comm_size] */
    /* Direct accesses (t->direct) made since the last MPI_Win_sync. */
    bool sync_pending;
    /* The time the writes of the current round put into recency: read
     * once per round, by its first write (0 until then). */
    uint64_t round_stamp;
    /* Buckets claimed by the current run of a batch: open addressing on
     * (rank, index) + 1; an entry counts only if its run matches. */
    size_t claim_capacity;        /* a power of two */
    uint64_t *claim_bucket;
    uint32_t *claim_run;
    uint32_t run;
    /* The update function of the call in progress, and the value_size
     * bytes (malloc-aligned, allocated by the first update) it is given. */
    mpidht_update_fn update_fn;
    void *update_data;
    unsigned char *update_value;
    /* Where set, a write that would evict changes nothing and finishes
     * with MPIDHT_NOT_FOUND and the outcome MPIDHT_WRITE_DEFERRED. */
    bool defer_evictions;
    /* What recent misses saw (read-for-insert): a direct-mapped cache
     * of hint_capacity entries (a power of two; 0 until the first miss
     * that leaves one), each with its key in hint_keys. */
    size_t hint_capacity;
    struct mpidht_hint *hints;
    unsigned char *hint_keys;
    /* Where set, the caller has the table to itself (restore: a
     * collective call, during which no operation is in flight anywhere,
     * each process writing its own buckets): a locked write takes no
     * lock (writer.h). */
    bool exclusive;
    /* The operations of the round in progress to processes on other
     * nodes (gets, atomics on lock words), handed to MPI by the round's
     * flush, gathered per target (queue.h). Last: on one node nothing is
     * queued, and the fields every round uses keep their cache lines. */
    mpidht_queue_t queue;
} mpidht_engine_t;

/* Whether a write that must evict chooses its victim by the recency
 * words (MPIDHT_EVICT_RECENCY), so that its probe fetches them: not while
 * writes defer evictions (restore). */
bool mpidht_engine_evicts_by_recency(const mpidht_t *t);

/* The outcome of a write deferred by defer_evictions (restore, which
 * writes it again afterwards); beside mpidht_write_outcome_t's values. */
#define MPIDHT_WRITE_DEFERRED ((mpidht_write_outcome_t)3)

/* Reserves the engine for `items` items and sets the update function for
 * the call about to run. MPIDHT_OK or MPIDHT_ERR_NO_MEMORY. */
mpidht_status_t mpidht_engine_set_update(mpidht_t *t, size_t items, mpidht_update_fn fn,
                                         void *user_data);

/* Sets up t->engine for at least `items` items (1 for single calls; a
 * chunk for batches: see mpidht_engine_chunk). MPIDHT_OK or
 * MPIDHT_ERR_NO_MEMORY. */
mpidht_status_t mpidht_engine_reserve(mpidht_t *t, size_t items);
void mpidht_engine_release(mpidht_t *t);

/* Items per chunk of a batched call: at most 1024 (64 on a direct
 * table), and no more slots than fit in about 256 KiB (at least one). */
size_t mpidht_engine_chunk(const mpidht_t *t);

/* Prepares item i of the work space for key: located (at addr, where the
 * caller located it already; NULL: here), with its slots in the work
 * space. value (write) and out (read) may be NULL otherwise. */
mpidht_item_t *mpidht_engine_item(mpidht_t *t, size_t i, mpidht_op_t op, size_t row,
                                  const unsigned char *key, const unsigned char *value,
                                  unsigned char *out, const mpidht_address_t *addr);

/* What a read's look did (mpidht_engine_read_alone, and
 * mpidht_engine_read_looks in each item's step). */
typedef enum mpidht_look {
    MPIDHT_LOOK_NONE, /* none taken (not a direct table), or looking on
                       * past the first candidate */
    MPIDHT_LOOK_HIT,  /* the answer: the value is out */
    MPIDHT_LOOK_MISS, /* the answer: no candidate's copy holds the key */
    MPIDHT_LOOK_TORN, /* the copy of the key at candidate `from` was torn:
                       * the engine reads on from there (item.from) */
    MPIDHT_LOOK_BUSY  /* fine: a writer held a candidate from `from` on:
                       * the engine reads on from there, waiting */
} mpidht_look_t;

/* Whether reads look at their buckets without the engine's items and
 * rounds: on a direct table (every protocol: lock-free reads take no
 * lock, fine ones register as readers of the buckets they look at, coarse
 * ones hold the target's lock word). */
bool mpidht_engine_looks(const mpidht_t *t);

/* A lone read (mpidht_read) of key, located at addr, the engine reserved:
 * where mpidht_engine_looks, the read without an item, as
 * lockfree_advance, fine_advance or coarse_advance would take its rounds
 * (fine: registered as a reader of the candidates it looks at, the first
 * then the others; coarse: under the target's lock word). Every
 * candidate's lines are asked for (the first's first), then each
 * candidate in turn copied (the first), or copied where its meta byte and
 * key, looked at in place, hold the key (the others); a candidate or copy
 * without the key is passed by, the first copy holding it ends the look:
 * the answer if intact (value to out, the bucket's recency refreshed as
 * mpidht_read_hit does), else torn. Busy (fine): a registration showed a
 * writer bit, and all were taken back. Torn or busy, *from is the
 * candidate the engine reads on from (0 otherwise), and a lock retry is
 * counted for the wait the engine's read would have taken. *look says
 * which (out is written on a hit only); addr has every candidate derived;
 * the loads are ordered before what the caller does next. MPIDHT_OK, or
 * the error of an MPI call. */
mpidht_status_t mpidht_engine_read_alone(mpidht_t *t, mpidht_address_t *addr,
                                         const void *key, void *out, mpidht_look_t *look,
                                         unsigned *from);

/* The reads of a batch, keys[0..n) (rows row.. of the caller's; values:
 * where their values go, value_size apart), where mpidht_engine_looks,
 * the engine reserved for n items; they look as a lone read looks, but
 * all together. Each key is located into items[i] (its op, row, key,
 * out, from and addr set; its step, hit, done and status below; the
 * rest as it was) and its first candidate's lines asked for (4 keys at a
 * time once located: engine.c), all keys before any is looked at; then,
 * at once (lock-free, fine) or under each target's lock word in
 * ascending order (coarse, as mpidht_engine_run takes them), each key's
 * first candidate is looked at, then the other candidates of those it
 * did not answer, their lines asked for together.
 * An item is then done (status MPIDHT_OK and hit, or MPIDHT_NOT_FOUND;
 * out is written on a hit only), or, where its copy was torn or its
 * candidates busy, not done, with from the candidate the engine reads on
 * from. The loads are ordered before what the caller does next.
 * MPIDHT_OK, or the error of an MPI call (no item done then). */
mpidht_status_t mpidht_engine_read_looks(mpidht_t *t, size_t n, const unsigned char *keys,
                                         unsigned char *values, size_t row);

/*
 * Read-for-insert, on a direct table under the fine and lock-free
 * protocols: a read that misses leaves a hint, and a write of the same key
 * by the same process afterwards reuses it instead of probing every
 * candidate again. A miss loads the generation word of the key lock's
 * bucket (its first candidate), then looks at every candidate again (the
 * lines are in the caches; a hit pays nothing for this); every writer
 * raises the generation word of each bucket it held before it lets go of
 * that bucket's lock: one it changed is odd from just before the change
 * (a sequence lock) and even again after, one it did not gets 2
 * (mpidht_issue_gen_bump). So where the write,
 * holding the key lock, finds the generation the miss loaded, no write of
 * the key and no change of the first candidate happened since the miss's
 * second look: the key is still absent everywhere (only a holder of the key
 * lock stores it). What the generation does not cover is the other
 * candidates: another key's remove may have freed one, its write made it
 * the most recent. So the write chooses again from what is in place now,
 * as mpidht_choose_slot would with the key absent (the first free
 * candidate, else the least recent), loading only the candidates' lock,
 * recency and meta words, and checks its choice again under that
 * bucket's lock where it is not the first, as after a probe (writer.h):
 * what it saves is comparing every candidate's key. A generation word is
 * 64 bits wide and only ever grows: it cannot come round to the same
 * value.
 * Hints are dropped by mpidht_clear and mpidht_restore, which change
 * buckets without the writers' locks.
 */

/* Where key's read, located at addr (every candidate derived), missed
 * (its buckets in place at base): loads the generation word of its first
 * candidate, then looks at every candidate again, and if none holds key
 * remembers the generation, and the candidate a write of key would take
 * now (only to guide the write's prefetch). No hint where key was stored
 * meanwhile, or where its memory cannot be had (it is only a shortcut). */
void mpidht_engine_leave_hint(mpidht_t *t, const unsigned char *base,
                              const mpidht_address_t *addr, const void *key);

/* Where a plain write item (not in an exclusive engine, evictions not
 * deferred) has a hint left by a miss of its key: takes it (the hint is
 * gone afterwards) into the item's hint fields and sets it->hinted. */
void mpidht_engine_take_hint(mpidht_t *t, mpidht_item_t *it);

/* Whether the hinted item, holding its key lock, still finds the
 * generation its key's miss saw; if so, sets it->chosen and it->planned
 * as mpidht_choose_slot would from the candidates in place now with the
 * key absent. */
bool mpidht_engine_hint_plan(const mpidht_t *t, mpidht_item_t *it);

/* What mpidht_engine_all_taken saw. */
typedef enum mpidht_taken {
    MPIDHT_TAKEN_ALL,      /* every other candidate taken, at one instant */
    MPIDHT_TAKEN_NOT_ALL,  /* one free */
    MPIDHT_TAKEN_CHANGING  /* a writer held one, or changed one meanwhile */
} mpidht_taken_t;

/* On a direct table whose buckets have lock words (fine, lock-free), for
 * a write item holding its key lock (candidate 0) and the bucket it chose
 * to evict (it->chosen): whether every other candidate held an entry at
 * one instant while it held those two. The probe looked at the candidates
 * one after another without their locks, so another key's remove from
 * one and its write into another meanwhile could show every candidate
 * taken although one was free at every instant; an eviction must not
 * follow from such a view (mpidht.h: a key is evicted only by a write
 * whose candidates are all taken). */
mpidht_taken_t mpidht_engine_all_taken(const mpidht_t *t, const mpidht_item_t *it);

/* Drops every hint (buckets changed without the writers' locks). */
void mpidht_engine_forget_hints(mpidht_t *t);

/* Raises the generation word of every candidate whose bit is set in
 * mask (held by the item), to the next even value: by 1 where the item's
 * write step made it odd (it changed that bucket), by 2 otherwise (where
 * hints are left: a direct table; nothing otherwise). */
void mpidht_issue_gen_bump(mpidht_t *t, mpidht_item_t *it, uint32_t mask);

/* Starts a new run of disjoint items; mpidht_engine_claim then claims the
 * candidate buckets of an item for it, or returns false (claiming nothing)
 * if one of them is claimed already. */
void mpidht_engine_new_run(mpidht_t *t);
bool mpidht_engine_claim(mpidht_t *t, const mpidht_item_t *item);

/* Runs items[0..n) to completion. Returns MPIDHT_OK, or the error of an
 * MPI call that failed (after which items may be left unfinished and
 * locks held). Each item's own result is in its status. */
mpidht_status_t mpidht_engine_run(mpidht_t *t, mpidht_item_t *items, size_t n);

/* Completes every operation still pending to any target (recency
 * refreshes). */
mpidht_status_t mpidht_engine_flush_all(mpidht_t *t);

/*
 * For the protocols' steps: issuing operations for an item (completed by
 * the round's flush) and waiting.
 */

/* Gets bytes [offset, offset + len) of candidates [first, first + n). */
mpidht_status_t mpidht_issue_get(mpidht_t *t, mpidht_item_t *it, unsigned first,
                                 unsigned n, size_t offset, size_t len);
/* Gets the data (what a write puts) of candidates [first, first + n). */
mpidht_status_t mpidht_issue_get_data(mpidht_t *t, mpidht_item_t *it, unsigned first,
                                      unsigned n);
/* Gets the meta byte and key of candidates [first, first + n). */
mpidht_status_t mpidht_issue_get_keys(mpidht_t *t, mpidht_item_t *it, unsigned first,
                                      unsigned n);
/* Atomically adds *delta (a static operand) to the lock word of candidate
 * c, fetching its previous value into it->lock[c]; delta NULL only reads
 * it (MPI_NO_OP). */
mpidht_status_t mpidht_issue_lock_fetch(mpidht_t *t, mpidht_item_t *it, unsigned c,
                                        const int64_t *delta);
/* Atomically adds *delta to the lock word of candidate c, not fetching. */
mpidht_status_t mpidht_issue_lock_add(mpidht_t *t, mpidht_item_t *it, unsigned c,
                                      const int64_t *delta);
/* The same for every candidate whose bit is set in *mask (registrations
 * or writer bits the item holds); clears *mask once all are issued. */
mpidht_status_t mpidht_issue_lock_add_each(mpidht_t *t, mpidht_item_t *it, uint32_t *mask,
                                           const int64_t *delta);
/* Reads the recency words of every candidate into it->recency. */
mpidht_status_t mpidht_issue_recency_fetch(mpidht_t *t, mpidht_item_t *it);
/* Puts the data of slot c (staged) into candidate c and raises its
 * recency to now. */
mpidht_status_t mpidht_issue_store(mpidht_t *t, mpidht_item_t *it, unsigned c);
/* Empties candidate c: zeroes what a write puts in front of the key (the
 * checksum and the meta byte). */
mpidht_status_t mpidht_issue_clear(mpidht_t *t, mpidht_item_t *it, unsigned c);

/* After a hit on candidate c of addr: now and then (one read in eight)
 * raises the bucket's recency to now, completed by a later flush of its
 * target. */
mpidht_status_t mpidht_refresh(mpidht_t *t, const mpidht_address_t *addr, unsigned c);

/* Schedules the item to try again after a backoff (none at first, then
 * growing random delays); false if its deadline has passed instead. Counts
 * a lock retry. */
bool mpidht_item_wait(mpidht_t *t, mpidht_item_t *it);

/* Finishes the item with status (and outcome). */
void mpidht_item_finish(mpidht_item_t *it, mpidht_status_t status, int outcome);

#endif /* MPIDHT_ENGINE_H */
