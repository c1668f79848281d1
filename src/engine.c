#include "engine.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "bucket.h"
#include "protocol.h"
#include "rma.h"

/* A chunk holds at most this many items (on a direct table
 * CHUNK_DIRECT_ITEMS), and no more buckets' worth of slots than fit in
 * about this many bytes (but always at least one). Where a round costs a
 * flush, a larger chunk shares it among more keys; on a direct table a
 * round costs none, and a smaller chunk keeps what its items prefetched
 * in the caches until their turn and holds fewer key locks at once
 * (docs/benchmarks.md). */
enum { CHUNK_MAX_ITEMS = 1024, CHUNK_DIRECT_ITEMS = 64 };
#define CHUNK_SLOT_BYTES ((size_t)256 << 10)

size_t mpidht_engine_chunk(const mpidht_t *t)
{
    size_t per_item = (size_t)t->candidates * t->layout.bucket_size;
    size_t n = CHUNK_SLOT_BYTES / per_item;
    size_t most = t->direct ? CHUNK_DIRECT_ITEMS : CHUNK_MAX_ITEMS;
    return n < 1 ? 1 : n > most ? most : n;
}

void mpidht_engine_release(mpidht_t *t)
{
    mpidht_engine_t *e = t->engine;
    if (!e)
        return;
    free(e->hints);
    free(e->hint_keys);
    free(e->items);
    free(e->slots);
    free(e->dirty);
    free(e->dirty_list);
    free(e->refresh_pending);
    free(e->refresh_value);
    free(e->claim_bucket);
    free(e->claim_run);
    mpidht_queue_free(&e->queue);
    free(e->update_value);
    free(e);
    t->engine = NULL;
}

mpidht_status_t mpidht_engine_set_update(mpidht_t *t, size_t items, mpidht_update_fn fn,
                                         void *user_data)
{
    mpidht_status_t st = mpidht_engine_reserve(t, items);
    if (st != MPIDHT_OK)
        return st;
    mpidht_engine_t *e = t->engine;
    if (!e->update_value && !(e->update_value = malloc(t->value_size)))
        return MPIDHT_ERR_NO_MEMORY;
    e->update_fn = fn;
    e->update_data = user_data;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_engine_reserve(mpidht_t *t, size_t items)
{
    mpidht_engine_t *e = t->engine;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return MPIDHT_ERR_NO_MEMORY;
        t->engine = e;
        size_t ranks = (size_t)t->comm_size;
        e->dirty = calloc(ranks, 1);
        e->dirty_list = calloc(ranks, sizeof *e->dirty_list);
        e->refresh_pending = calloc(ranks, 1);
        e->refresh_value = calloc(ranks, sizeof *e->refresh_value);
        if (!e->dirty || !e->dirty_list || !e->refresh_pending || !e->refresh_value) {
            mpidht_engine_release(t);
            return MPIDHT_ERR_NO_MEMORY;
        }
    }
    if (e->capacity >= items)
        return MPIDHT_OK;
    size_t per_item = (size_t)t->candidates * t->layout.bucket_size;
    size_t claims = 1;
    while (claims < 2 * items * t->candidates)
        claims *= 2;
    mpidht_item_t *new_items = calloc(items, sizeof *new_items);
    unsigned char *new_slots = calloc(items, per_item);
    uint64_t *claim_bucket = calloc(claims, sizeof *claim_bucket);
    uint32_t *claim_run = calloc(claims, sizeof *claim_run);
    /* A round's step of an item queues at most one operation per
     * candidate, and so may the step after its flush (a full queue is
     * completed early: make_room). */
    if (!new_items || !new_slots || !claim_bucket || !claim_run ||
        mpidht_queue_reserve(&e->queue, 2 * items * t->candidates, t->comm_size) !=
            MPIDHT_OK) {
        free(new_items);
        free(new_slots);
        free(claim_bucket);
        free(claim_run);
        return MPIDHT_ERR_NO_MEMORY;
    }
    free(e->items);
    free(e->slots);
    free(e->claim_bucket);
    free(e->claim_run);
    e->items = new_items;
    e->slots = new_slots;
    e->claim_bucket = claim_bucket;
    e->claim_run = claim_run;
    e->claim_capacity = claims;
    e->run = 0;
    e->capacity = items;
    return MPIDHT_OK;
}

mpidht_item_t *mpidht_engine_item(mpidht_t *t, size_t i, mpidht_op_t op, size_t row,
                                  const unsigned char *key, const unsigned char *value,
                                  unsigned char *out, const mpidht_address_t *addr)
{
    mpidht_item_t *it = &t->engine->items[i];
    /* Cleared but for the address (set below) and the fetched words at
     * the end, which are most of its bytes. */
    _Static_assert(offsetof(mpidht_item_t, addr) == 0, "the address comes first");
    memset(&it->op, 0, offsetof(mpidht_item_t, lock) - offsetof(mpidht_item_t, op));
    it->slots = t->engine->slots + i * (size_t)t->candidates * t->layout.bucket_size;
    it->op = op;
    it->row = row;
    it->key = key;
    it->value = value;
    it->out = out;
    it->status = MPIDHT_OK;
    /* A read derives its candidates as it comes to them (protocol.h). */
    if (addr)
        it->addr = *addr;
    else
        mpidht_locate(t, key, &it->addr, op == MPIDHT_OP_READ ? 0 : MPIDHT_MAX_CANDIDATES);
    return it;
}

void mpidht_engine_new_run(mpidht_t *t)
{
    mpidht_engine_t *e = t->engine;
    if (++e->run == 0) { /* wrapped: forget every stamp */
        memset(e->claim_run, 0, e->claim_capacity * sizeof *e->claim_run);
        e->run = 1;
    }
}

/* The claim table's entry for bucket (rank, index): where it is, or the
 * empty entry where it would go. The table is at most half full. */
static size_t claim_entry(const mpidht_engine_t *e, uint64_t bucket)
{
    size_t mask = e->claim_capacity - 1;
    size_t i = (size_t)((bucket * 0x9e3779b97f4a7c15u) >> 32) & mask;
    while (e->claim_run[i] == e->run && e->claim_bucket[i] != bucket)
        i = (i + 1) & mask;
    return i;
}

static uint64_t bucket_id(const mpidht_address_t *addr, unsigned i)
{
    return ((uint64_t)(unsigned)addr->rank << 32 | mpidht_candidate(addr, i)) + 1;
}

bool mpidht_engine_claim(mpidht_t *t, const mpidht_item_t *item)
{
    mpidht_engine_t *e = t->engine;
    const mpidht_address_t *addr = &item->addr;
    for (unsigned i = 0; i < addr->count; ++i)
        if (e->claim_run[claim_entry(e, bucket_id(addr, i))] == e->run)
            return false;
    for (unsigned i = 0; i < addr->count; ++i) {
        size_t at = claim_entry(e, bucket_id(addr, i));
        e->claim_bucket[at] = bucket_id(addr, i);
        e->claim_run[at] = e->run;
    }
    return true;
}

/* Notes that operations to rank await completion. */
static void touch(mpidht_t *t, int rank)
{
    mpidht_engine_t *e = t->engine;
    if (!e->dirty[rank]) {
        e->dirty[rank] = 1;
        e->dirty_list[e->dirty_count++] = rank;
    }
}

/*
 * Direct access (t->direct: a shared window, so every process of the
 * table is on this node). The engine then moves a target's bytes itself
 * through the address MPI_Win_shared_query gave for it: gets and puts
 * become memcpy, the lock and recency words 8-byte processor atomics
 * (sequentially consistent: a lock word's read-modify-write orders the
 * bucket accesses around it, as the protocols need). Every process of the
 * table does the same, so no access to a word mixes MPI's atomics with
 * the processor's. An operation is complete when its call returns. MPI
 * asks for a memory barrier between a process's synchronisation with
 * others (a barrier, a message) and its loads and stores on a shared
 * window, on both sides of them (MPI 4.1, Example 12.21 and its advice to
 * users, which allow the language's own constructs in its place): the
 * caller may synchronise before and after any call, so a call's direct
 * accesses begin after an acquire fence (enter_direct) and each round of
 * them ends with MPI_Win_sync. A copy that races a writer may be torn exactly
 * as an MPI_Get may be: the protocols' checks (lock words, checksums) are
 * the same on both paths.
 */

/* rank's buckets, if the engine reaches them directly; else NULL. */
static unsigned char *direct_base(const mpidht_t *t, int rank)
{
    return t->direct ? t->node_base[rank] : NULL;
}

/* Orders what the caller synchronised on before this call (the loads
 * that saw another process's message or arrival at a barrier) before the
 * call's direct accesses: the barrier MPI asks for between the two, as a
 * C11 acquire fence (no instruction on x86; on weaker processors one). */
static void enter_direct(const mpidht_t *t)
{
    if (t->direct)
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* Notes that direct accesses await the round's MPI_Win_sync. */
static void touch_direct(mpidht_t *t)
{
    t->engine->sync_pending = true;
}

static void *direct_word(unsigned char *base, MPI_Aint disp)
{
    return base + disp;
}

/* Raises the 64-bit word at p to at least value. */
static void direct_max(uint64_t *p, uint64_t value)
{
    uint64_t seen = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (seen < value &&
           !__atomic_compare_exchange_n(p, &seen, value, true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
    }
}

/* The generation word of candidate c of addr where its bucket lies in
 * base (engine.h, read-for-insert). */
static uint64_t *direct_gen(const mpidht_t *t, const unsigned char *base,
                            const mpidht_address_t *addr, unsigned c)
{
    return (uint64_t *)(uintptr_t)(base + mpidht_bucket_disp(t, mpidht_candidate(addr, c)) +
                                   t->layout.gen_offset);
}

/* Whether reads leave hints and writes keep generation words: a direct
 * table whose buckets have lock words (fine, lock-free). */
static bool keeps_generations(const mpidht_t *t)
{
    return t->direct && t->layout.has_lock;
}

/* A miss remembered (engine.h, read-for-insert); its key is in
 * hint_keys at the entry's index. */
typedef struct mpidht_hint {
    bool valid;
    int rank;                      /* the key's host and */
    uint32_t first;                /* its first candidate */
    unsigned chosen;               /* where a write would go then, */
    mpidht_write_outcome_t planned; /* as what (a guide to its prefetch) */
    uint64_t gen;                  /* the first candidate's generation */
} mpidht_hint_t;

/* Hints kept: at most this many, and no more keys than fit in about
 * HINT_KEY_BYTES (at least one). Entries are direct-mapped by hash: of the
 * misses of a batch of n keys, a later miss takes the place of an earlier
 * one in about n / (2 * entries) of them (1 in 128 for 64 keys, 1 in 8
 * for 1000), and those writes probe as before. */
enum { HINT_MAX_ENTRIES = 4096 };
#define HINT_KEY_BYTES ((size_t)1 << 20)

static mpidht_hint_t *hint_entry(const mpidht_t *t, uint64_t hash, unsigned char **key)
{
    mpidht_engine_t *e = t->engine;
    size_t i = (size_t)(hash >> 32) & (e->hint_capacity - 1);
    *key = e->hint_keys + i * t->key_size;
    return &e->hints[i];
}

/* Whether the hint cache is there, allocated now if not. */
static bool hints_ready(mpidht_engine_t *e, size_t key_size)
{
    if (e->hint_capacity > 0)
        return true;
    size_t n = HINT_KEY_BYTES / key_size, cap = 1;
    while (cap * 2 <= n && cap * 2 <= HINT_MAX_ENTRIES)
        cap *= 2;
    e->hints = calloc(cap, sizeof *e->hints);
    e->hint_keys = malloc(cap * key_size);
    if (!e->hints || !e->hint_keys) {
        free(e->hints);
        free(e->hint_keys);
        e->hints = NULL;
        e->hint_keys = NULL;
        return false;
    }
    e->hint_capacity = cap;
    return true;
}

/* What mpidht_choose_slot chooses for key among the candidates of addr
 * whose buckets lie in base, from what is in place now: the first free
 * candidate, else the least recent (the last on a tie, and without
 * recency). With key, false where a candidate holds it; without (the key
 * known absent), it stops at the first free candidate. */
static bool direct_plan(const mpidht_t *t, const unsigned char *base,
                        const mpidht_address_t *addr, const void *key, unsigned *chosen,
                        mpidht_write_outcome_t *planned)
{
    const mpidht_layout_t *l = &t->layout;
    unsigned n = addr->count, free_at = n, evict = n - 1;
    uint64_t least = UINT64_MAX;
    bool by_recency = mpidht_engine_evicts_by_recency(t);
    for (unsigned c = 0; c < n; ++c) {
        const unsigned char *at = base + mpidht_bucket_disp(t, mpidht_candidate(addr, c));
        if (mpidht_bucket_is_free(t, at)) {
            free_at = free_at < n ? free_at : c;
            if (!key)
                break;
            continue;
        }
        if (key && mpidht_bucket_holds(t, at, key))
            return false;
        if (free_at < n || !by_recency)
            continue;
        uint64_t r = __atomic_load_n((const uint64_t *)(uintptr_t)(at + l->recency_offset),
                                     __ATOMIC_RELAXED);
        if (r <= least) {
            least = r;
            evict = c;
        }
    }
    *chosen = free_at < n ? free_at : evict;
    *planned = free_at < n ? MPIDHT_WRITE_INSERTED : MPIDHT_WRITE_EVICTED;
    return true;
}

void mpidht_engine_leave_hint(mpidht_t *t, const unsigned char *base,
                              const mpidht_address_t *addr, const void *key)
{
    if (!hints_ready(t->engine, t->key_size))
        return;
    /* The first candidate's generation, then every candidate looked at
     * again (their lines are in the caches from the miss's look): the key
     * absent from all after the generation was loaded, or no hint. Where
     * the write would go as things stand now guides its prefetch. */
    uint64_t gen = __atomic_load_n(direct_gen(t, base, addr, 0), __ATOMIC_ACQUIRE);
    unsigned chosen;
    mpidht_write_outcome_t planned;
    if (!direct_plan(t, base, addr, key, &chosen, &planned))
        return; /* stored since the look */
    unsigned char *stored;
    mpidht_hint_t *h = hint_entry(t, addr->hash, &stored);
    *h = (mpidht_hint_t){.valid = true, .rank = addr->rank, .first = mpidht_candidate(addr, 0),
                         .chosen = chosen, .planned = planned, .gen = gen};
    memcpy(stored, key, t->key_size);
}

void mpidht_engine_take_hint(mpidht_t *t, mpidht_item_t *it)
{
    mpidht_engine_t *e = t->engine;
    it->hinted = false;
    if (e->hint_capacity == 0 || it->op != MPIDHT_OP_WRITE || e->exclusive ||
        e->defer_evictions || !keeps_generations(t))
        return;
    unsigned char *stored;
    mpidht_hint_t *h = hint_entry(t, it->addr.hash, &stored);
    if (!h->valid || h->rank != it->addr.rank || h->first != mpidht_candidate(&it->addr, 0) ||
        h->chosen >= it->addr.count || memcmp(stored, it->key, t->key_size) != 0)
        return;
    h->valid = false;
    it->hinted = true;
    it->hint_chosen = h->chosen;
    it->hint_planned = h->planned;
    it->hint_gen = h->gen;
}

bool mpidht_engine_hint_plan(const mpidht_t *t, mpidht_item_t *it)
{
    const unsigned char *base = t->node_base[it->addr.rank];
    if (__atomic_load_n(direct_gen(t, base, &it->addr, 0), __ATOMIC_SEQ_CST) != it->hint_gen)
        return false;
    /* The key is absent. Where the miss found the first candidate free,
     * it still is (the generation says nobody changed it), and it is
     * where the key goes. Otherwise where it goes is chosen from what is
     * in place now: since the miss another candidate may have been freed
     * (a remove of the key it held) or written (its recency), which the
     * first candidate's generation does not show. */
    if (it->hint_chosen == 0 && it->hint_planned == MPIDHT_WRITE_INSERTED) {
        it->chosen = 0;
        it->planned = MPIDHT_WRITE_INSERTED;
        return true;
    }
    direct_plan(t, base, &it->addr, NULL, &it->chosen, &it->planned);
    return true;
}

void mpidht_engine_forget_hints(mpidht_t *t)
{
    mpidht_engine_t *e = t->engine;
    if (e && e->hints)
        memset(e->hints, 0, e->hint_capacity * sizeof *e->hints);
}

void mpidht_issue_gen_bump(mpidht_t *t, mpidht_item_t *it, uint32_t mask)
{
    if (!keeps_generations(t))
        return;
    /* Only the holder of a bucket's lock changes its generation: a load
     * and a release store, which orders the data put before it (no
     * read-modify-write, which would wait for those stores to drain). A
     * bucket the write changed is odd (open_gen): 1 makes it even; 2 for
     * a held bucket it did not change (the key lock's, where the key went
     * elsewhere). */
    unsigned char *base = t->node_base[it->addr.rank];
    for (unsigned c = 0; c < it->addr.count; ++c) {
        if (!(mask & 1u << c))
            continue;
        uint64_t *word = direct_gen(t, base, &it->addr, c);
        uint64_t gen = __atomic_load_n(word, __ATOMIC_RELAXED);
        __atomic_store_n(word, gen + (gen & 1 ? 1 : 2), __ATOMIC_RELEASE);
    }
    touch_direct(t);
}

/* Before a held bucket of a direct table that keeps generations changes:
 * its generation odd, ordered before the change (a sequence lock's
 * writer side; mpidht_issue_gen_bump makes it even again). */
static void open_gen(mpidht_t *t, unsigned char *base, const mpidht_item_t *it, unsigned c)
{
    if (!keeps_generations(t) || !(it->held & 1u << c))
        return;
    uint64_t *word = direct_gen(t, base, &it->addr, c);
    __atomic_store_n(word, __atomic_load_n(word, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Hands the queued operations to MPI. Checked inline: a round on one
 * node, which queues nothing, pays no call (about 100 instructions a
 * single write, in callgrind). */
static inline mpidht_status_t issue_queued(mpidht_t *t)
{
    mpidht_queue_t *q = &t->engine->queue;
    return mpidht_queue_empty(q) ? MPIDHT_OK : mpidht_mpi_status(mpidht_queue_issue(q, t->win));
}

/* Hands the queued operations to MPI and forgets the targets awaiting a
 * flush: the caller completes their operations otherwise
 * (MPI_Win_unlock). */
static mpidht_status_t forget_dirty(mpidht_t *t)
{
    mpidht_engine_t *e = t->engine;
    mpidht_status_t st = issue_queued(t);
    for (size_t i = 0; i < e->dirty_count; ++i)
        e->dirty[e->dirty_list[i]] = 0;
    e->dirty_count = 0;
    return st;
}

/* Completes the round's operations: after every round, so always inlined
 * (out of line, a single lock-free write on one node ran about 110
 * instructions more, in callgrind). */
static inline __attribute__((always_inline)) mpidht_status_t flush_dirty(mpidht_t *t)
{
    mpidht_engine_t *e = t->engine;
    mpidht_status_t st = issue_queued(t);
    if (e->sync_pending) {
        e->sync_pending = false;
        mpidht_status_t synced = mpidht_mpi_status(MPI_Win_sync(t->win));
        st = st != MPIDHT_OK ? st : synced;
    }
    for (size_t i = 0; i < e->dirty_count; ++i) {
        int rank = e->dirty_list[i];
        if (st == MPIDHT_OK)
            st = mpidht_rma_flush(t, rank);
        e->dirty[rank] = 0;
        e->refresh_pending[rank] = 0; /* completed by this flush too */
    }
    e->dirty_count = 0;
    return st;
}

/* Before an operation to rank, on another node, is queued: a full queue
 * is handed to MPI and completed first (its operands must stay until a
 * flush); rank awaits the round's flush. */
static mpidht_status_t make_room(mpidht_t *t, int rank)
{
    if (mpidht_queue_full(&t->engine->queue)) {
        mpidht_status_t st = flush_dirty(t);
        if (st != MPIDHT_OK)
            return st;
    }
    touch(t, rank);
    return MPIDHT_OK;
}

mpidht_status_t mpidht_engine_flush_all(mpidht_t *t)
{
    mpidht_engine_t *e = t->engine;
    if (!e)
        return MPIDHT_OK;
    if (e->sync_pending)
        return flush_dirty(t); /* direct: refreshes are complete too */
    mpidht_status_t issued = issue_queued(t);
    if (issued != MPIDHT_OK)
        return issued;
    bool pending = e->dirty_count > 0;
    for (int r = 0; r < t->comm_size && !pending; ++r)
        pending = e->refresh_pending[r];
    if (!pending || t->ops->lock_per_target)
        return MPIDHT_OK; /* coarse epochs end with every operation */
    mpidht_status_t st = mpidht_mpi_status(MPI_Win_flush_all(t->win));
    memset(e->refresh_pending, 0, (size_t)t->comm_size);
    memset(e->dirty, 0, (size_t)t->comm_size);
    e->dirty_count = 0;
    return st;
}

/* The wait before attempt k (from 1): none for the first two, then 1 us
 * doubling per attempt up to 1 ms, times a random factor in [0.5, 1.5):
 * contenders that collided spread apart. */
static double backoff_delay(mpidht_t *t, unsigned k)
{
    if (k <= 2)
        return 0;
    double cap = k - 2 < 10 ? 1e-6 * (double)(1u << (k - 2)) : 1e-3;
    return cap * (0.5 + (double)(mpidht_random(t) >> 11) / 9007199254740992.0);
}

/* Sleeps for about `seconds` (at most a millisecond at a time). */
static void pause_for(double seconds)
{
    if (seconds <= 0) {
        sched_yield();
        return;
    }
    if (seconds > 1e-3)
        seconds = 1e-3;
    struct timespec ts = {0, (long)(seconds * 1e9)};
    nanosleep(&ts, NULL);
}

/* Waits before attempt k of taking a lock (counted as a lock retry). */
static void back_off(mpidht_t *t, unsigned k)
{
    t->stats.lock_retries++;
    pause_for(backoff_delay(t, k));
}

/* Asks the processor to bring bytes [offset, offset + len) of candidate
 * c's bucket closer (a hint: it loads nothing the program sees). */
static void prefetch(const mpidht_t *t, const unsigned char *base, const mpidht_address_t *a,
                     unsigned c, size_t offset, size_t len)
{
    MPI_Aint disp = mpidht_bucket_disp(t, mpidht_candidate(a, c));
    uintptr_t at = (uintptr_t)(base + (size_t)disp + offset);
    for (uintptr_t line = at & ~(uintptr_t)63; line < at + len; line += 64)
        __builtin_prefetch((const void *)line, 0, 2);
}

/* Where the target's buckets can be addressed (on a shared window, or
 * the caller's own), starts bringing in the lines the item's next steps
 * will touch, so that the cache misses of a batch's items overlap instead
 * of following each other inside MPI's copies. A read: the candidates it
 * looks at next, whole (every candidate when it is alone in its run: a
 * miss then costs one memory latency, not one per step, and the other
 * misses in flight speed the first one's here). A write,
 * update or remove: every candidate up to its key (an update: the first
 * candidate whole, the key lock's bucket, whose value it may act on). */
static void prefetch_item(const mpidht_t *t, const mpidht_item_t *it, bool alone)
{
    const unsigned char *base = t->node_base[it->addr.rank];
    const mpidht_layout_t *l = &t->layout;
    if (!base)
        return;
    switch (it->op) {
    case MPIDHT_OP_READ: {
        unsigned last = alone ? it->addr.count : it->first + it->count;
        for (unsigned c = it->first; c < last; ++c)
            prefetch(t, base, &it->addr, c, 0, l->bucket_size);
        return;
    }
    case MPIDHT_OP_WRITE:
        if (it->hinted) {
            /* The lock word, generation, recency and meta byte of every
             * candidate the write will look at if the hint holds (no
             * keys: read-for-insert): up to the one the miss chose, or,
             * where it chose to evict, all. */
            unsigned last = it->hint_planned == MPIDHT_WRITE_EVICTED ? it->addr.count - 1
                                                                     : it->hint_chosen;
            for (unsigned c = 0; c <= last; ++c)
                prefetch(t, base, &it->addr, c, 0, l->meta_offset + 1);
            return;
        }
        /* fall through */
    case MPIDHT_OP_REMOVE:
    case MPIDHT_OP_UPDATE: {
        /* Up to the key's end; in a batch up to its first bytes: the
         * probe compares keys in place, and another key mostly differs
         * there (mpidht_issue_get_keys), and the batch's other items
         * have their lines in flight meanwhile. */
        size_t key = alone || t->key_size < 16 ? t->key_size : 16;
        size_t end = l->meta_offset + 1 + key;
        for (unsigned c = 0; c < it->addr.count; ++c)
            prefetch(t, base, &it->addr, c, 0,
                     c == 0 && it->op == MPIDHT_OP_UPDATE ? l->bucket_size : end);
        return;
    }
    case MPIDHT_OP_SCAN:
        return;
    }
}

/* Runs the items among items[0..n) whose target is rank (all if rank < 0)
 * to completion. unlocked: the caller ends the coarse protocol's
 * MPI_Win_lock epochs next, which complete the operations left (releases
 * issued by the last steps), so no flush of its own before them. */
static mpidht_status_t run_items(mpidht_t *t, mpidht_item_t *items, size_t n, int rank,
                                 bool unlocked)
{
    const mpidht_protocol_ops_t *ops = t->ops;
    size_t left = 0;
    for (size_t i = 0; i < n; ++i) {
        mpidht_item_t *it = &items[i];
        if (rank >= 0 && it->addr.rank != rank)
            continue;
        it->deadline = 0; /* set by the first wait: no clock read on a fast path */
        it->alone = n == 1;
        if (it->alone) /* it prefetches them all: derived in one go */
            mpidht_address_need(&it->addr, it->addr.count);
        ops->start(t, it);
        prefetch_item(t, it, it->alone);
        left += !it->done;
    }
    while (left > 0) {
        /* The clock is read only once an item has waited (retry_at set):
         * not on every step of every call. */
        double now = 0, wake = INFINITY;
        bool any = false, retrying = false;
        t->engine->round_stamp = 0;
        for (size_t i = 0; i < n; ++i) {
            mpidht_item_t *it = &items[i];
            if (it->done || (rank >= 0 && it->addr.rank != rank))
                continue;
            if (it->retry_at > 0 && now == 0)
                now = MPI_Wtime();
            if (it->retry_at > now) {
                wake = it->retry_at < wake ? it->retry_at : wake;
                continue;
            }
            retrying = retrying || it->attempts > 0;
            mpidht_status_t st = ops->issue(t, it);
            if (st != MPIDHT_OK)
                return st;
            it->issued = any = true;
        }
        mpidht_status_t st = flush_dirty(t);
        if (st != MPIDHT_OK)
            return st;
        for (size_t i = 0; i < n; ++i) {
            mpidht_item_t *it = &items[i];
            if (!it->issued)
                continue;
            it->issued = false;
            unsigned first = it->first;
            st = ops->advance(t, it);
            if (st != MPIDHT_OK)
                return st;
            left -= it->done;
            if (!it->done && it->op == MPIDHT_OP_READ && it->first != first && n > 1)
                prefetch_item(t, it, false); /* a read moving on to its next candidate */
        }
        if (!any)
            pause_for(wake - now);
        else if (retrying)
            sched_yield(); /* let a holder on this core run */
    }
    /* Releases issued by the last steps. */
    if (unlocked)
        return forget_dirty(t);
    return flush_dirty(t);
}

/* Where candidate c's lock word lies in its target's window. */
static MPI_Aint lock_disp(const mpidht_t *t, const mpidht_address_t *addr, unsigned c)
{
    return mpidht_bucket_disp(t, mpidht_candidate(addr, c)) + (MPI_Aint)t->layout.lock_offset;
}

/* The lock word of candidate c of addr in base (the fine protocol's
 * readers register there). */
static int64_t *direct_lock(const mpidht_t *t, unsigned char *base, const mpidht_address_t *addr,
                            unsigned c)
{
    return direct_word(base, lock_disp(t, addr, c));
}

mpidht_taken_t mpidht_engine_all_taken(const mpidht_t *t, const mpidht_item_t *it)
{
    unsigned char *base = t->node_base[it->addr.rank];
    const mpidht_layout_t *l = &t->layout;
    unsigned n = 0;
    const unsigned char *at[MPIDHT_MAX_CANDIDATES];
    uint64_t gen[MPIDHT_MAX_CANDIDATES];
    for (unsigned c = 1; c < it->addr.count; ++c)
        if (c != it->chosen)
            at[n++] = base + mpidht_bucket_disp(t, mpidht_candidate(&it->addr, c));
    /* A sequence lock: each other candidate's generation, their meta
     * bytes, the generations again. A writer makes a bucket's generation
     * odd before it changes the bucket and even again after (engine.h):
     * a candidate whose generation was even and stayed was as its meta
     * byte shows from the first load to the last. */
    for (unsigned i = 0; i < n; ++i) {
        gen[i] = __atomic_load_n((const uint64_t *)(uintptr_t)(at[i] + l->gen_offset),
                                 __ATOMIC_ACQUIRE);
        if (gen[i] & 1)
            return MPIDHT_TAKEN_CHANGING;
    }
    for (unsigned i = 0; i < n; ++i)
        if (mpidht_bucket_is_free(t, at[i]))
            return MPIDHT_TAKEN_NOT_ALL;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; ++i)
        if (__atomic_load_n((const uint64_t *)(uintptr_t)(at[i] + l->gen_offset),
                            __ATOMIC_RELAXED) != gen[i])
            return MPIDHT_TAKEN_CHANGING;
    return MPIDHT_TAKEN_ALL;
}

/* A look's accesses begin after enter_direct; the MPI_Win_sync another
 * call left pending stays pending (returned, for end_look). */
static bool begin_look(mpidht_t *t)
{
    enter_direct(t);
    return t->engine->sync_pending;
}

/* A look's accesses are loads and atomics (recency words, lock words:
 * a coarse target's closed by its own MPI_Win_sync): a release fence
 * orders them before whatever the caller does next (a barrier, a
 * message), the one order MPI_Win_sync would add here. */
static void end_look(mpidht_t *t, bool pending)
{
    t->engine->sync_pending = pending;
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

/* Takes back the fine protocol's reader registrations on candidates
 * [first, last). */
static void leave_readers(const mpidht_t *t, unsigned char *base, const mpidht_address_t *addr,
                          unsigned first, unsigned last)
{
    for (unsigned c = first; c < last; ++c)
        __atomic_fetch_sub(direct_lock(t, base, addr, c), 1, __ATOMIC_SEQ_CST);
}

/* Looks at candidates [first, last) of addr (derived, their lines asked
 * for) for key where they lie in base, as lockfree_advance, fine_advance
 * and coarse_advance take them (registers: a fine read, registered as a
 * reader of each, as fine_issue registers; where a registration shows a
 * writer bit, all are taken back and the look is busy: *from = first). Each
 * candidate in turn is copied (the first), or copied where its meta byte
 * and key, looked at in place, hold the key (the others). The key before
 * the checksum: a bucket seen without the key, torn or not, is passed by
 * without one (lockfree_advance says why: a byte that differs was read
 * while the bucket did not hold the key, in place as in a copy); the
 * first copy with it ends the look: a hit if intact (the value to out,
 * the recency refreshed as mpidht_read_hit does), else torn (*from: its
 * candidate). A miss if none holds it. */
static inline __attribute__((always_inline)) mpidht_look_t
look_at(mpidht_t *t, unsigned char *base, const mpidht_address_t *addr, const void *key,
        void *out, unsigned first, unsigned last, bool registers, unsigned *from,
        mpidht_status_t *st)
{
    const mpidht_layout_t *l = &t->layout;
    if (registers) {
        bool busy = false;
        for (unsigned c = first; c < last; ++c)
            busy |= __atomic_fetch_add(direct_lock(t, base, addr, c), 1, __ATOMIC_SEQ_CST) >=
                    MPIDHT_FINE_EXCLUSIVE;
        if (busy) {
            leave_readers(t, base, addr, first, last);
            t->stats.lock_retries++; /* the wait the engine's read takes next */
            *from = first;
            return MPIDHT_LOOK_BUSY;
        }
    }
    unsigned char *b = t->engine->slots;
    mpidht_look_t look = MPIDHT_LOOK_MISS;
    for (unsigned c = first; c < last; ++c) {
        unsigned char *at = base + mpidht_bucket_disp(t, mpidht_candidate(addr, c));
        if (c > 0 && !mpidht_bucket_holds(t, at, key))
            continue;
        memcpy(b + l->data_offset, at + l->data_offset, l->data_size);
        if (!mpidht_bucket_holds(t, b, key))
            continue;
        if (!mpidht_bucket_intact(t, b)) {
            /* As lockfree_advance counts it, with the wait it takes (the
             * engine's read, from here, starts with its copy again). */
            t->stats.checksum_retries++;
            t->stats.lock_retries++;
            *from = c;
            look = MPIDHT_LOOK_TORN;
        } else {
            memcpy(out, mpidht_bucket_value(t, b), t->value_size);
            *st = mpidht_refresh(t, addr, c);
            look = MPIDHT_LOOK_HIT;
        }
        break;
    }
    if (registers)
        leave_readers(t, base, addr, first, last);
    return look;
}

/* The coarse protocol's lock of rank's buckets: MPI_Win_lock, or on a
 * direct table the word after rank's buckets (t->window_lock), taken as
 * the fine protocol takes a bucket's lock word: a reader adds 1, a writer
 * MPIDHT_FINE_EXCLUSIVE; whoever saw a writer's bit takes its addition
 * back and, backing off, looks at the word until the bit is gone before it
 * adds again, and a writer that got the bit waits for the readers to
 * leave. Like MPI_Win_lock it waits as long as it takes (a holder holds it
 * only for the operations of one call). */
static mpidht_status_t lock_target(mpidht_t *t, int rank, bool exclusive)
{
    if (!t->direct)
        return mpidht_mpi_status(
            MPI_Win_lock(exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, rank, 0, t->win));
    int64_t *word = t->window_lock[rank];
    int64_t add = exclusive ? MPIDHT_FINE_EXCLUSIVE : 1;
    unsigned attempts = 0;
    while (__atomic_fetch_add(word, add, __ATOMIC_SEQ_CST) >= MPIDHT_FINE_EXCLUSIVE) {
        __atomic_fetch_sub(word, add, __ATOMIC_SEQ_CST);
        /* Only looks until the writer's bit is gone (as a fine read
         * does): a waiting reader never shows in the count a writer
         * waits to see fall. */
        do
            back_off(t, ++attempts);
        while (__atomic_load_n(word, __ATOMIC_SEQ_CST) >= MPIDHT_FINE_EXCLUSIVE);
    }
    while (exclusive && __atomic_load_n(word, __ATOMIC_SEQ_CST) != MPIDHT_FINE_EXCLUSIVE)
        back_off(t, ++attempts);
    mpidht_status_t st = mpidht_mpi_status(MPI_Win_sync(t->win));
    if (st != MPIDHT_OK) /* not taken, then: nothing holds it */
        __atomic_fetch_sub(word, add, __ATOMIC_SEQ_CST);
    return st;
}

static mpidht_status_t unlock_target(mpidht_t *t, int rank, bool exclusive)
{
    if (!t->direct)
        return mpidht_mpi_status(MPI_Win_unlock(rank, t->win));
    mpidht_status_t st = mpidht_mpi_status(MPI_Win_sync(t->win));
    __atomic_fetch_sub(t->window_lock[rank], exclusive ? MPIDHT_FINE_EXCLUSIVE : 1,
                       __ATOMIC_SEQ_CST);
    return st;
}

/* The lowest target above `after` of items[0..n) (-1 if none), and
 * whether anything but reads goes there. */
static int next_target(const mpidht_item_t *items, size_t n, int after, bool *exclusive)
{
    int rank = -1;
    *exclusive = false;
    for (size_t i = 0; i < n; ++i) {
        int r = items[i].addr.rank;
        if (r > after && (rank < 0 || r < rank)) {
            rank = r;
            *exclusive = false;
        }
        if (r == rank)
            *exclusive = *exclusive ||
                         (items[i].op != MPIDHT_OP_READ && items[i].op != MPIDHT_OP_SCAN);
    }
    return rank;
}

bool mpidht_engine_looks(const mpidht_t *t)
{
    return t->direct;
}

/* The first candidate of each of items[0..n) whose target is rank (all
 * if rank < 0) looked at; then the other candidates of those it did not
 * answer, their lines asked for together first (their misses overlap, as
 * in the engine's rounds). Each item's look goes into its step. */
static mpidht_status_t look_items(mpidht_t *t, mpidht_item_t *items, size_t n, int rank)
{
    const mpidht_layout_t *l = &t->layout;
    mpidht_status_t st = MPIDHT_OK;
    bool moving_on = false;
    for (size_t i = 0; i < n; ++i) {
        mpidht_item_t *it = &items[i];
        if (rank >= 0 && it->addr.rank != rank)
            continue;
        unsigned char *base = t->node_base[it->addr.rank];
        mpidht_look_t look = look_at(t, base, &it->addr, it->key, it->out, 0, 1,
                                     t->ops->reads_register, &it->from, &st);
        it->step = look;
        if (look == MPIDHT_LOOK_MISS && it->addr.count > 1) {
            mpidht_address_need(&it->addr, it->addr.count);
            for (unsigned c = 1; c < it->addr.count; ++c)
                prefetch(t, base, &it->addr, c, l->data_offset, l->data_size);
            it->step = MPIDHT_LOOK_NONE; /* looks on */
            moving_on = true;
        }
    }
    for (size_t i = 0; moving_on && i < n; ++i) {
        mpidht_item_t *it = &items[i];
        if ((rank < 0 || it->addr.rank == rank) && it->step == MPIDHT_LOOK_NONE)
            it->step = look_at(t, t->node_base[it->addr.rank], &it->addr, it->key, it->out,
                               1, it->addr.count, t->ops->reads_register, &it->from, &st);
    }
    /* Each miss leaves a hint for a write of its key (read-for-insert). */
    for (size_t i = 0; keeps_generations(t) && i < n; ++i) {
        mpidht_item_t *it = &items[i];
        if ((rank < 0 || it->addr.rank == rank) && it->step == MPIDHT_LOOK_MISS)
            mpidht_engine_leave_hint(t, t->node_base[it->addr.rank], &it->addr, it->key);
    }
    return st;
}

/* Keys a batch of reads locates before it asks for their first
 * candidates' lines together. Asked for as each key was located, the
 * requests held up the locates behind them: each waits for its page walk
 * (every key on a page of its own, 4 KiB in a segment shared by the
 * node's processes). Batches of 64 reads, keys/s, median of 4-5
 * launches alternating the group size 1, 4, 8 (benchmarks.md): 2 ranks
 * 4.10 M, 6.87 M, 7.35 M (lock-free), 4.12 M, 6.81 M, 6.78 M (fine),
 * 4.34 M, 7.06 M, 7.60 M (coarse); 4 ranks 3.96 M, 6.81 M, 7.15 M
 * (lock-free); 1 rank 4.51 M, 4.62 M, 4.40 M (lock-free), 5.28 M,
 * 6.22 M, 5.17 M (coarse). */
#define MPIDHT_ASK_GROUP 4

mpidht_status_t mpidht_engine_read_looks(mpidht_t *t, size_t n, const unsigned char *keys,
                                         unsigned char *values, size_t row)
{
    bool pending = begin_look(t);
    const mpidht_layout_t *l = &t->layout;
    mpidht_item_t *items = t->engine->items;
    size_t asked = 0;
    for (size_t i = 0; i < n; ++i) {
        mpidht_item_t *it = &items[i];
        it->op = MPIDHT_OP_READ;
        it->row = row + i;
        it->key = keys + i * t->key_size;
        it->out = values + i * t->value_size;
        it->from = 0;
        it->step = MPIDHT_LOOK_NONE;
        mpidht_locate(t, it->key, &it->addr, 1);
        if (i + 1 - asked < MPIDHT_ASK_GROUP && i + 1 < n)
            continue;
        for (; asked <= i; ++asked)
            prefetch(t, t->node_base[items[asked].addr.rank], &items[asked].addr, 0,
                     l->data_offset, l->data_size);
    }
    mpidht_status_t st = MPIDHT_OK;
    if (!t->ops->lock_per_target)
        st = look_items(t, items, n, -1);
    /* Coarse: one target at a time, ascending, under its lock word, as
     * mpidht_engine_run takes them. */
    for (int rank = -1; t->ops->lock_per_target && st == MPIDHT_OK;) {
        bool exclusive;
        if ((rank = next_target(items, n, rank, &exclusive)) < 0)
            break;
        if ((st = lock_target(t, rank, false)) != MPIDHT_OK)
            break;
        st = look_items(t, items, n, rank);
        mpidht_status_t unlocked = unlock_target(t, rank, false);
        st = st != MPIDHT_OK ? st : unlocked;
    }
    for (size_t i = 0; i < n; ++i) {
        mpidht_item_t *it = &items[i];
        it->hit = it->step == MPIDHT_LOOK_HIT;
        it->done = st == MPIDHT_OK && it->step != MPIDHT_LOOK_TORN &&
                   it->step != MPIDHT_LOOK_BUSY;
        it->status = it->hit ? MPIDHT_OK : MPIDHT_NOT_FOUND;
    }
    end_look(t, pending);
    return st;
}

mpidht_status_t mpidht_engine_read_alone(mpidht_t *t, mpidht_address_t *addr,
                                         const void *key, void *out, mpidht_look_t *look,
                                         unsigned *from)
{
    *look = MPIDHT_LOOK_NONE;
    *from = 0;
    if (!mpidht_engine_looks(t))
        return MPIDHT_OK;
    bool pending = begin_look(t);
    unsigned char *base = t->node_base[addr->rank];
    const mpidht_layout_t *l = &t->layout;
    /* Every candidate's lines asked for, the first's first: a miss then
     * costs one memory latency, and the first candidate's miss, with
     * others in flight, came sooner here (benchmarks.md); asking only for
     * the others' meta bytes and keys made a hit past the first candidate
     * wait for its value's lines. */
    mpidht_address_need(addr, 1);
    prefetch(t, base, addr, 0, l->data_offset, l->data_size);
    mpidht_address_need(addr, addr->count);
    for (unsigned c = 1; c < addr->count; ++c)
        prefetch(t, base, addr, c, l->data_offset, l->data_size);
    mpidht_status_t st = MPIDHT_OK;
    if (!t->ops->lock_per_target && !t->ops->reads_register) {
        *look = look_at(t, base, addr, key, out, 0, addr->count, false, from, &st);
    } else if (t->ops->reads_register) { /* fine: the first candidate, then the others */
        *look = look_at(t, base, addr, key, out, 0, 1, true, from, &st);
        if (*look == MPIDHT_LOOK_MISS && addr->count > 1)
            *look = look_at(t, base, addr, key, out, 1, addr->count, true, from, &st);
    } else if ((st = lock_target(t, addr->rank, false)) == MPIDHT_OK) {
        /* coarse: under the target's lock */
        *look = look_at(t, base, addr, key, out, 0, addr->count, false, from, &st);
        mpidht_status_t unlocked = unlock_target(t, addr->rank, false);
        st = st != MPIDHT_OK ? st : unlocked;
    }
    if (*look == MPIDHT_LOOK_MISS && keeps_generations(t))
        mpidht_engine_leave_hint(t, base, addr, key); /* read-for-insert */
    end_look(t, pending);
    return st;
}

/* Coarse, one-sided: every target of the items locked first, ascending
 * (callers take locks in one order, so none waits for another in a
 * cycle), then the items of all targets run together, one flush per
 * target and round, and every lock is released: a batch over P targets
 * costs the rounds of its slowest target, not of all P one after
 * another. */
static mpidht_status_t run_locked_together(mpidht_t *t, mpidht_item_t *items, size_t n)
{
    mpidht_status_t st = MPIDHT_OK;
    int locked = -1;
    for (;;) {
        bool exclusive;
        int rank = next_target(items, n, locked, &exclusive);
        if (rank < 0)
            break;
        st = lock_target(t, rank, exclusive);
        if (st != MPIDHT_OK)
            break;
        locked = rank;
    }
    if (st == MPIDHT_OK)
        st = run_items(t, items, n, -1, true);
    for (int after = -1;;) {
        bool exclusive;
        int rank = next_target(items, n, after, &exclusive);
        if (rank < 0 || rank > locked)
            break;
        mpidht_status_t unlocked = unlock_target(t, rank, exclusive);
        t->engine->refresh_pending[rank] = 0;
        if (st == MPIDHT_OK)
            st = unlocked;
        after = rank;
    }
    return st;
}

mpidht_status_t mpidht_engine_run(mpidht_t *t, mpidht_item_t *items, size_t n)
{
    enter_direct(t);
    if (!mpidht_queue_empty(&t->engine->queue))
        mpidht_queue_drop(&t->engine->queue); /* what a call that failed left */
    if (!t->ops->lock_per_target)
        return run_items(t, items, n, -1, false);
    if (!t->direct)
        return run_locked_together(t, items, n);
    /* Coarse on a direct table: one target at a time, ascending, under its
     * lock word (exclusive if anything but reads goes there); there a
     * round costs no round trip, and a lock held while other targets'
     * items run would only keep others waiting. */
    for (int done = -1;;) {
        bool exclusive;
        int rank = next_target(items, n, done, &exclusive);
        if (rank < 0)
            return MPIDHT_OK;
        mpidht_status_t st = lock_target(t, rank, exclusive);
        if (st != MPIDHT_OK)
            return st;
        st = run_items(t, items, n, rank, false);
        mpidht_status_t unlocked = unlock_target(t, rank, exclusive);
        t->engine->refresh_pending[rank] = 0;
        if (st != MPIDHT_OK || unlocked != MPIDHT_OK)
            return st != MPIDHT_OK ? st : unlocked;
        done = rank;
    }
}

mpidht_status_t mpidht_issue_get(mpidht_t *t, mpidht_item_t *it, unsigned first,
                                 unsigned n, size_t offset, size_t len)
{
    const mpidht_address_t *a = &it->addr;
    unsigned char *base = direct_base(t, a->rank);
    if (base) {
        for (unsigned c = first; c < first + n; ++c)
            memcpy(mpidht_slot(t, it->slots, c) + offset,
                   base + mpidht_bucket_disp(t, mpidht_candidate(a, c)) + offset, len);
        touch_direct(t);
        return MPIDHT_OK;
    }
    if (t->same_node[a->rank]) {
        for (unsigned c = first; c < first + n; ++c) {
            int rc = MPI_Get(mpidht_slot(t, it->slots, c) + offset, (int)len, MPI_BYTE,
                             a->rank,
                             mpidht_bucket_disp(t, mpidht_candidate(a, c)) + (MPI_Aint)offset,
                             (int)len, MPI_BYTE, t->win);
            if (rc != MPI_SUCCESS)
                return MPIDHT_ERR_MPI;
        }
        touch(t, a->rank);
        return MPIDHT_OK;
    }
    for (unsigned c = first; c < first + n; ++c) {
        mpidht_status_t st = make_room(t, a->rank);
        if (st != MPIDHT_OK)
            return st;
        mpidht_queue_get(&t->engine->queue, a->rank,
                         mpidht_bucket_disp(t, mpidht_candidate(a, c)) + (MPI_Aint)offset,
                         mpidht_slot(t, it->slots, c) + offset, (int)len);
    }
    return MPIDHT_OK;
}

mpidht_status_t mpidht_issue_get_data(mpidht_t *t, mpidht_item_t *it, unsigned first,
                                      unsigned n)
{
    const mpidht_layout_t *l = &t->layout;
    unsigned char *base = direct_base(t, it->addr.rank);
    if (!base || it->op != MPIDHT_OP_READ || it->alone)
        return mpidht_issue_get(t, it, first, n, l->data_offset, l->data_size);
    /* A read on a direct table that a look handed on (a torn copy, a
     * writer met) and that runs with others, as a look goes: the first
     * candidate copied; past it, a bucket whose meta byte and key, looked
     * at in place, do not hold the key is not copied but marked empty in
     * its copy (meta byte 0), which is all a copy of it would tell the
     * protocol (protocol_lockfree.c says why a byte read in place serves
     * as one copied; under the fine reader registration and the coarse
     * lock nothing changes). A read alone, whose candidates were all
     * asked for whole at its start, copies them: looking in place
     * measured slower there (docs/benchmarks.md). */
    for (unsigned c = first; c < first + n; ++c) {
        unsigned char *at = base + mpidht_bucket_disp(t, mpidht_candidate(&it->addr, c));
        unsigned char *slot = mpidht_slot(t, it->slots, c);
        if (c > 0 && !mpidht_bucket_holds(t, at, it->key))
            slot[l->meta_offset] = 0;
        else
            memcpy(slot + l->data_offset, at + l->data_offset, l->data_size);
    }
    touch_direct(t);
    return MPIDHT_OK;
}

mpidht_status_t mpidht_issue_get_keys(mpidht_t *t, mpidht_item_t *it, unsigned first,
                                      unsigned n)
{
    const mpidht_layout_t *l = &t->layout;
    unsigned char *base = direct_base(t, it->addr.rank);
    if (!base)
        return mpidht_issue_get(t, it, first, n, l->meta_offset, 1 + t->key_size);
    /* On a direct table each key is compared with the item's in place,
     * and the slot told what a copy would tell the protocol: the meta
     * byte, and the item's key where the bucket holds it or a key that
     * differs from it in its first byte where another key is there. A
     * bucket's key that differs from the item's mostly does so in its
     * first bytes, so that mostly only the line of the meta byte is
     * loaded, not every line of the key. What a write chose by it is
     * checked again under the bucket's lock, as after a copy (writer.h;
     * coarse: the probe runs under the target's lock). */
    const unsigned char *key = it->key;
    for (unsigned c = first; c < first + n; ++c) {
        const unsigned char *at = base + mpidht_bucket_disp(t, mpidht_candidate(&it->addr, c));
        unsigned char *slot = mpidht_slot(t, it->slots, c);
        unsigned char meta = at[l->meta_offset];
        slot[l->meta_offset] = meta;
        if (!(meta & MPIDHT_META_OCCUPIED))
            continue;
        unsigned char *slot_key = mpidht_bucket_key(t, slot);
        if (memcmp(at + l->meta_offset + 1, key, t->key_size) == 0)
            memcpy(slot_key, key, t->key_size);
        else
            slot_key[0] = (unsigned char)~key[0];
    }
    touch_direct(t);
    return MPIDHT_OK;
}

mpidht_status_t mpidht_issue_lock_fetch(mpidht_t *t, mpidht_item_t *it, unsigned c,
                                        const int64_t *delta)
{
    const mpidht_address_t *a = &it->addr;
    MPI_Aint disp = lock_disp(t, a, c);
    unsigned char *base = direct_base(t, a->rank);
    if (base) {
        int64_t *word = direct_word(base, disp);
        it->lock[c] = delta ? __atomic_fetch_add(word, *delta, __ATOMIC_SEQ_CST)
                            : __atomic_load_n(word, __ATOMIC_SEQ_CST);
        touch_direct(t);
        return MPIDHT_OK;
    }
    if (!t->same_node[a->rank]) {
        mpidht_status_t st = make_room(t, a->rank);
        if (st == MPIDHT_OK)
            mpidht_queue_atomic(&t->engine->queue, a->rank, disp, &it->lock[c], delta);
        return st;
    }
    int rc = MPI_Fetch_and_op(delta, &it->lock[c], MPI_INT64_T, a->rank, disp,
                              delta ? MPI_SUM : MPI_NO_OP, t->win);
    touch(t, a->rank);
    return mpidht_mpi_status(rc);
}

mpidht_status_t mpidht_issue_lock_add(mpidht_t *t, mpidht_item_t *it, unsigned c,
                                      const int64_t *delta)
{
    const mpidht_address_t *a = &it->addr;
    MPI_Aint disp = lock_disp(t, a, c);
    unsigned char *base = direct_base(t, a->rank);
    if (base) {
        __atomic_fetch_add((int64_t *)direct_word(base, disp), *delta, __ATOMIC_SEQ_CST);
        touch_direct(t);
        return MPIDHT_OK;
    }
    if (!t->same_node[a->rank]) {
        mpidht_status_t st = make_room(t, a->rank);
        if (st == MPIDHT_OK)
            mpidht_queue_atomic(&t->engine->queue, a->rank, disp, NULL, delta);
        return st;
    }
    int rc = MPI_Accumulate(delta, 1, MPI_INT64_T, a->rank, disp, 1, MPI_INT64_T, MPI_SUM,
                            t->win);
    touch(t, a->rank);
    return mpidht_mpi_status(rc);
}

mpidht_status_t mpidht_issue_lock_add_each(mpidht_t *t, mpidht_item_t *it, uint32_t *mask,
                                           const int64_t *delta)
{
    for (unsigned c = 0; c < it->addr.count; ++c) {
        if (!(*mask & 1u << c))
            continue;
        mpidht_status_t st = mpidht_issue_lock_add(t, it, c, delta);
        if (st != MPIDHT_OK)
            return st;
    }
    *mask = 0;
    return MPIDHT_OK;
}

bool mpidht_engine_evicts_by_recency(const mpidht_t *t)
{
    const mpidht_engine_t *e = t->engine;
    return t->eviction == MPIDHT_EVICT_RECENCY && !e->defer_evictions;
}

mpidht_status_t mpidht_issue_recency_fetch(mpidht_t *t, mpidht_item_t *it)
{
    const mpidht_address_t *a = &it->addr;
    unsigned char *base = direct_base(t, a->rank);
    for (unsigned c = 0; c < a->count; ++c) {
        MPI_Aint disp =
            mpidht_bucket_disp(t, mpidht_candidate(a, c)) + (MPI_Aint)t->layout.recency_offset;
        if (base) {
            it->recency[c] =
                __atomic_load_n((uint64_t *)direct_word(base, disp), __ATOMIC_SEQ_CST);
            continue;
        }
        if (MPI_Fetch_and_op(NULL, &it->recency[c], MPI_UINT64_T, a->rank, disp,
                             MPI_NO_OP, t->win) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
    }
    if (base)
        touch_direct(t);
    else
        touch(t, a->rank);
    return MPIDHT_OK;
}

/* The recency stamp of the round's writes (mpidht_engine_t.round_stamp):
 * one clock read per round, not one per write. */
static uint64_t round_stamp(mpidht_t *t)
{
    mpidht_engine_t *e = t->engine;
    if (e->round_stamp == 0)
        e->round_stamp = mpidht_now_ms(t);
    return e->round_stamp;
}

mpidht_status_t mpidht_issue_store(mpidht_t *t, mpidht_item_t *it, unsigned c)
{
    const mpidht_address_t *a = &it->addr;
    MPI_Aint disp = mpidht_bucket_disp(t, mpidht_candidate(a, c));
    const unsigned char *b = mpidht_slot(t, it->slots, c);
    unsigned char *base = direct_base(t, a->rank);
    if (base) {
        open_gen(t, base, it, c);
        memcpy(base + disp + t->layout.data_offset, b + t->layout.data_offset,
               t->layout.data_size);
        if (t->eviction == MPIDHT_EVICT_RECENCY) {
            it->stamp = round_stamp(t);
            direct_max(direct_word(base, disp + (MPI_Aint)t->layout.recency_offset),
                       it->stamp);
        }
        touch_direct(t);
        return MPIDHT_OK;
    }
    int rc = MPI_Put(b + t->layout.data_offset, (int)t->layout.data_size, MPI_BYTE,
                     a->rank, disp + (MPI_Aint)t->layout.data_offset,
                     (int)t->layout.data_size, MPI_BYTE, t->win);
    if (rc == MPI_SUCCESS && t->eviction == MPIDHT_EVICT_RECENCY) {
        it->stamp = round_stamp(t);
        rc = MPI_Accumulate(&it->stamp, 1, MPI_UINT64_T, a->rank,
                            disp + (MPI_Aint)t->layout.recency_offset, 1, MPI_UINT64_T,
                            MPI_MAX, t->win);
    }
    touch(t, a->rank);
    return mpidht_mpi_status(rc);
}

mpidht_status_t mpidht_issue_clear(mpidht_t *t, mpidht_item_t *it, unsigned c)
{
    static const unsigned char zeros[16];
    const mpidht_address_t *a = &it->addr;
    int len = (int)(t->layout.meta_offset + 1 - t->layout.data_offset);
    MPI_Aint disp =
        mpidht_bucket_disp(t, mpidht_candidate(a, c)) + (MPI_Aint)t->layout.data_offset;
    unsigned char *base = direct_base(t, a->rank);
    if (base) {
        open_gen(t, base, it, c);
        memset(base + disp, 0, (size_t)len);
        touch_direct(t);
        return MPIDHT_OK;
    }
    int rc = MPI_Put(zeros, len, MPI_BYTE, a->rank, disp, len, MPI_BYTE, t->win);
    touch(t, a->rank);
    return mpidht_mpi_status(rc);
}

mpidht_status_t mpidht_refresh(mpidht_t *t, const mpidht_address_t *addr, unsigned c)
{
    mpidht_engine_t *e = t->engine;
    int rank = addr->rank;
    if (t->eviction != MPIDHT_EVICT_RECENCY || (mpidht_random(t) & 7) != 0 ||
        e->refresh_pending[rank])
        return MPIDHT_OK;
    MPI_Aint disp =
        mpidht_bucket_disp(t, mpidht_candidate(addr, c)) + (MPI_Aint)t->layout.recency_offset;
    unsigned char *base = direct_base(t, rank);
    if (base) {
        direct_max(direct_word(base, disp), mpidht_now_ms(t));
        touch_direct(t);
        return MPIDHT_OK;
    }
    /* The origin buffer stays untouched until a flush of rank completes
     * the operation; until then no other refresh goes to rank. */
    e->refresh_value[rank] = mpidht_now_ms(t);
    e->refresh_pending[rank] = 1;
    return mpidht_mpi_status(MPI_Accumulate(&e->refresh_value[rank], 1, MPI_UINT64_T,
                                            rank, disp, 1, MPI_UINT64_T, MPI_MAX,
                                            t->win));
}

bool mpidht_item_wait(mpidht_t *t, mpidht_item_t *it)
{
    double now = MPI_Wtime();
    if (it->deadline == 0)
        it->deadline = t->timeout > 0 ? now + t->timeout : INFINITY;
    if (now > it->deadline)
        return false;
    t->stats.lock_retries++;
    it->retry_at = now + backoff_delay(t, ++it->attempts);
    return true;
}

void mpidht_item_finish(mpidht_item_t *it, mpidht_status_t status, int outcome)
{
    it->status = status;
    it->outcome = outcome;
    it->done = true;
}
