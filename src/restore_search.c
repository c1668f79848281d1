#include "restore_search.h"

#include <stdlib.h>
#include <string.h>

#include "bucket.h"
#include "engine.h"
#include "rma.h"
#include "scan.h"

/* Nodes the work space holds at first; it doubles as a search needs. */
enum { SEARCH_FIRST_NODES = 4096 };

/* A bucket the search reached, holding an entry. */
typedef struct node {
    uint32_t bucket;
    uint32_t parent; /* the node whose entry would move here; NONE at a
                      * candidate of the entry being placed */
    uint64_t hash;   /* the hash of the entry this bucket holds */
} node_t;

#define NONE UINT32_MAX

struct mpidht_search {
    size_t limit;         /* nodes per search: local_buckets (fits uint32_t) */
    size_t capacity;      /* nodes the work space holds now, up to limit */
    node_t *queue;        /* [capacity] */
    uint64_t *reached;    /* bit per bucket: reached by the search in hand */
    uint32_t *touched;    /* the buckets whose bits it set */
    size_t touched_count; /* at most capacity + MPIDHT_MAX_CANDIDATES */
    unsigned char *slots; /* MPIDHT_MAX_CANDIDATES bucket copies */
    uint64_t *passed;     /* bit per bucket: reached by a search that failed */
};

mpidht_search_t *mpidht_search_new(const mpidht_t *t)
{
    mpidht_search_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->limit = (size_t)t->local_buckets;
    s->capacity = s->limit < SEARCH_FIRST_NODES ? s->limit : SEARCH_FIRST_NODES;
    size_t words = (size_t)(t->local_buckets / 64 + 1);
    s->queue = malloc((s->capacity + 1) * sizeof *s->queue);
    s->reached = calloc(words, sizeof *s->reached);
    s->touched = malloc((s->capacity + MPIDHT_MAX_CANDIDATES) * sizeof *s->touched);
    s->slots = malloc(MPIDHT_MAX_CANDIDATES * t->layout.bucket_size);
    s->passed = calloc(words, sizeof *s->passed);
    if (!s->queue || !s->reached || !s->touched || !s->slots || !s->passed) {
        mpidht_search_free(s);
        return NULL;
    }
    return s;
}

void mpidht_search_free(mpidht_search_t *s)
{
    if (!s)
        return;
    free(s->queue);
    free(s->reached);
    free(s->touched);
    free(s->slots);
    free(s->passed);
    free(s);
}

static bool bit(const uint64_t *bits, uint32_t i)
{
    return (bits[i / 64] >> (i % 64)) & 1;
}

static void set_bit(uint64_t *bits, uint32_t i)
{
    bits[i / 64] |= UINT64_C(1) << (i % 64);
}

/* Marks bucket reached by the search in hand; false if it was reached
 * before, by it or by a search that failed. */
static bool reach(mpidht_search_t *s, uint32_t bucket)
{
    if (bit(s->passed, bucket) || bit(s->reached, bucket))
        return false;
    set_bit(s->reached, bucket);
    s->touched[s->touched_count++] = bucket;
    return true;
}

/* Doubles the nodes s holds, up to its limit; false where it holds the
 * limit already or memory runs out (s as it was). */
static bool grow(mpidht_search_t *s)
{
    if (s->capacity == s->limit)
        return false;
    size_t more = s->capacity * 2 < s->limit ? s->capacity * 2 : s->limit;
    node_t *queue = realloc(s->queue, (more + 1) * sizeof *queue);
    if (queue)
        s->queue = queue;
    uint32_t *touched =
        queue ? realloc(s->touched, (more + MPIDHT_MAX_CANDIDATES) * sizeof *touched) : NULL;
    if (!touched)
        return false;
    s->touched = touched;
    s->capacity = more;
    return true;
}

static uint64_t entry_hash(const mpidht_t *t, unsigned char *b)
{
    return t->hash(mpidht_bucket_key(t, b), t->key_size, t->hash_user_data);
}

/* Asks for the lines of bucket b's meta byte and key (on a direct table). */
static void ask(const mpidht_t *t, const unsigned char *b)
{
    __builtin_prefetch(b + t->layout.meta_offset);
    __builtin_prefetch(b + t->layout.meta_offset + t->key_size);
}

/* Sets b[0..n) to this process's buckets index[0..n): on a direct table
 * the buckets themselves, their meta bytes and keys asked for together
 * (loads, as the engine reads there; nothing is in flight), else copies
 * in s's slots, got as a scan gets them. */
static mpidht_status_t look(mpidht_t *t, mpidht_search_t *s, const uint32_t *index,
                            unsigned n, unsigned char **b)
{
    if (!t->direct) {
        for (unsigned i = 0; i < n; ++i)
            b[i] = mpidht_slot(t, s->slots, i);
        return mpidht_scan_read_at(t, index, n, s->slots);
    }
    for (unsigned i = 0; i < n; ++i) {
        b[i] = t->local_base + mpidht_bucket_disp(t, index[i]);
        ask(t, b[i]);
    }
    return MPIDHT_OK;
}

/* Puts the recency word and data of bucket copy b into bucket index: on a
 * direct table with stores (mpidht_search_place ends them with
 * MPI_Win_sync), else with MPI_Put. */
static mpidht_status_t put_bucket(mpidht_t *t, uint32_t index, const unsigned char *b)
{
    size_t from = t->layout.recency_offset;
    size_t len = t->layout.data_offset + t->layout.data_size - from;
    MPI_Aint disp = mpidht_bucket_disp(t, index) + (MPI_Aint)from;
    if (t->direct) {
        memcpy(t->local_base + disp, b + from, len);
        return MPIDHT_OK;
    }
    return mpidht_rma_put_own(t, disp, b + from, len);
}

/* The moves of the path that ends in free bucket `to`, reached from node
 * `at`, from the free end back; then the entry into the bucket the path
 * starts at. */
static mpidht_status_t carry_out(mpidht_t *t, mpidht_search_t *s, uint32_t to, uint32_t at,
                                 const void *key, const void *value, uint64_t stamp)
{
    unsigned char *b = NULL;
    mpidht_status_t st = MPIDHT_OK;
    for (; st == MPIDHT_OK && at != NONE; at = s->queue[at].parent) {
        uint32_t from = s->queue[at].bucket;
        st = look(t, s, &from, 1, &b);
        if (st == MPIDHT_OK)
            st = put_bucket(t, to, b);
        to = from;
    }
    if (st != MPIDHT_OK)
        return st;
    b = s->slots;
    memset(b, 0, t->layout.bucket_size);
    mpidht_stage_bucket(t, b, key, value);
    memcpy(b + t->layout.recency_offset, &stamp, sizeof stamp);
    st = put_bucket(t, to, b);
    if (st == MPIDHT_OK && t->direct)
        st = mpidht_mpi_status(MPI_Win_sync(t->win));
    return st;
}

/* Nodes ahead of the one expanded whose candidates' lines are asked for
 * (a direct table): their misses overlap with the work in between. */
enum { LOOKAHEAD = 4 };

static void ask_ahead(const mpidht_t *t, const mpidht_search_t *s,
                      const mpidht_address_t *a, uint64_t hash)
{
    mpidht_address_t ua = {.count = a->count, .hash = hash, .buckets = a->buckets};
    mpidht_address_need(&ua, ua.count);
    for (unsigned c = 0; c < ua.count; ++c)
        if (!bit(s->reached, ua.index[c]))
            ask(t, t->local_base + mpidht_bucket_disp(t, ua.index[c]));
}

mpidht_status_t mpidht_search_place(mpidht_t *t, mpidht_search_t *s, const void *key,
                                    const void *value, uint64_t stamp, bool *placed)
{
    *placed = false;
    mpidht_address_t a;
    mpidht_locate(t, key, &a, MPIDHT_MAX_CANDIDATES);
    if (a.rank != t->rank || s->limit == 0)
        return MPIDHT_OK;
    for (size_t i = 0; i < s->touched_count; ++i) /* the last search's marks */
        s->reached[s->touched[i] / 64] &= ~(UINT64_C(1) << (s->touched[i] % 64));
    s->touched_count = 0;
    size_t n = 0;
    unsigned char *seen[MPIDHT_MAX_CANDIDATES];
    mpidht_status_t st = look(t, s, a.index, a.count, seen);
    for (unsigned c = 0; st == MPIDHT_OK && c < a.count; ++c) {
        unsigned char *b = seen[c];
        if (mpidht_bucket_is_free(t, b)) {
            *placed = true;
            return carry_out(t, s, a.index[c], NONE, key, value, stamp);
        }
        if (n < s->capacity && reach(s, a.index[c]))
            s->queue[n++] = (node_t){a.index[c], NONE, entry_hash(t, b)};
    }
    for (size_t head = 0; st == MPIDHT_OK && head < n; ++head) {
        if (t->direct && head + LOOKAHEAD < n)
            ask_ahead(t, s, &a, s->queue[head + LOOKAHEAD].hash);
        node_t u = s->queue[head];
        mpidht_address_t ua = {.count = a.count, .hash = u.hash, .buckets = a.buckets};
        mpidht_address_need(&ua, ua.count);
        /* An entry moves only to its own candidates, and only from one. */
        bool own = false;
        uint32_t next[MPIDHT_MAX_CANDIDATES];
        unsigned k = 0;
        for (unsigned c = 0; c < ua.count; ++c)
            own |= ua.index[c] == u.bucket;
        if (n + MPIDHT_MAX_CANDIDATES > s->capacity && !grow(s) && n == s->capacity)
            break; /* as far as the search reaches */
        for (unsigned c = 0; own && c < ua.count && n + k < s->capacity; ++c)
            if (ua.index[c] != u.bucket && reach(s, ua.index[c]))
                next[k++] = ua.index[c];
        if (k == 0)
            continue;
        st = look(t, s, next, k, seen);
        for (unsigned j = 0; st == MPIDHT_OK && j < k; ++j) {
            unsigned char *b = seen[j];
            if (mpidht_bucket_is_free(t, b)) {
                *placed = true;
                return carry_out(t, s, next[j], (uint32_t)head, key, value, stamp);
            }
            s->queue[n++] = (node_t){next[j], (uint32_t)head, entry_hash(t, b)};
        }
    }
    for (size_t i = 0; i < n; ++i) /* none of them leads to a free bucket now */
        set_bit(s->passed, s->queue[i].bucket);
    return st;
}

void mpidht_search_ask(const mpidht_t *t, const mpidht_address_t *a, unsigned n)
{
    for (unsigned c = 0; c < n && c < a->derived; ++c)
        ask(t, t->local_base + mpidht_bucket_disp(t, mpidht_candidate(a, c)));
}

mpidht_write_outcome_t mpidht_search_store(mpidht_t *t, mpidht_address_t *a,
                                           const void *key, const void *value,
                                           uint64_t stamp, bool ordered)
{
    unsigned char *to = NULL;
    mpidht_write_outcome_t outcome = MPIDHT_WRITE_DEFERRED;
    for (unsigned c = 0; c < a->count; ++c) {
        mpidht_address_need(a, c + 1);
        unsigned char *b = t->local_base + mpidht_bucket_disp(t, a->index[c]);
        if (mpidht_bucket_holds(t, b, key)) {
            to = b;
            outcome = MPIDHT_WRITE_UPDATED;
            break;
        }
        if (!to && mpidht_bucket_is_free(t, b)) {
            to = b;
            outcome = MPIDHT_WRITE_INSERTED;
            if (ordered)
                break; /* the key lies in no later candidate */
        }
    }
    if (to) {
        mpidht_stage_bucket(t, to, key, value);
        uint64_t recency;
        memcpy(&recency, to + t->layout.recency_offset, sizeof recency);
        if (t->eviction == MPIDHT_EVICT_RECENCY && recency < stamp)
            memcpy(to + t->layout.recency_offset, &stamp, sizeof stamp);
    }
    return outcome;
}
