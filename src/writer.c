#include "writer.h"

#include <string.h>

#include "bucket.h"

/* Operands of the lock operations: static, so that an operation may be
 * completed by a later flush. */
static const int64_t writer_add = MPIDHT_FINE_EXCLUSIVE,
                     writer_sub = -MPIDHT_FINE_EXCLUSIVE;
#define READERS(word) ((word) & (MPIDHT_FINE_EXCLUSIVE - 1))

bool mpidht_write_choose(const mpidht_t *t, mpidht_item_t *it)
{
    if (it->op == MPIDHT_OP_REMOVE) {
        int found = mpidht_find_key(t, it->slots, 0, it->addr.count, it->key);
        if (found < 0)
            return false;
        it->chosen = (unsigned)found;
        it->planned = MPIDHT_WRITE_UPDATED;
        return true;
    }
    mpidht_write_choice_t c =
        mpidht_choose_slot(t, it->slots, it->addr.count, it->key,
                           mpidht_engine_evicts_by_recency(t) ? it->recency : NULL);
    mpidht_engine_t *e = t->engine;
    if (c.outcome == MPIDHT_WRITE_EVICTED && it->op == MPIDHT_OP_WRITE && e->defer_evictions) {
        it->outcome = (int)MPIDHT_WRITE_DEFERRED; /* finishes as not written */
        return false;
    }
    it->chosen = c.slot;
    it->planned = c.outcome;
    return true;
}

bool mpidht_write_still_fits(const mpidht_t *t, mpidht_item_t *it)
{
    unsigned char *b = mpidht_slot(t, it->slots, it->chosen);
    if (mpidht_bucket_holds(t, b, it->key)) {
        it->planned = MPIDHT_WRITE_UPDATED;
        return true;
    }
    if (it->op == MPIDHT_OP_REMOVE)
        return false; /* evicted meanwhile: look again */
    if (mpidht_bucket_is_free(t, b)) {
        it->planned = MPIDHT_WRITE_INSERTED;
        return true;
    }
    return it->planned == MPIDHT_WRITE_EVICTED; /* another key: fine to evict */
}

static mpidht_update_outcome_t update_outcome(mpidht_write_outcome_t w)
{
    return w == MPIDHT_WRITE_INSERTED  ? MPIDHT_UPDATE_INSERTED
           : w == MPIDHT_WRITE_UPDATED ? MPIDHT_UPDATE_UPDATED
                                       : MPIDHT_UPDATE_EVICTED;
}

void mpidht_write_prepare(mpidht_t *t, mpidht_item_t *it)
{
    unsigned char *b = mpidht_slot(t, it->slots, it->chosen);
    it->status = MPIDHT_OK;
    switch (it->op) {
    case MPIDHT_OP_WRITE:
        mpidht_stage_bucket(t, b, it->key, it->value);
        it->act = MPIDHT_ACT_STORE;
        it->outcome = (int)it->planned;
        return;
    case MPIDHT_OP_REMOVE:
        it->act = MPIDHT_ACT_CLEAR;
        return;
    case MPIDHT_OP_UPDATE: {
        int present = it->planned == MPIDHT_WRITE_UPDATED;
        mpidht_engine_t *e = t->engine;
        /* An aligned copy: in the bucket the value follows the key. */
        unsigned char *value = e->update_value;
        if (present)
            memcpy(value, mpidht_bucket_value(t, b), t->value_size);
        else
            memset(value, 0, t->value_size);
        mpidht_update_action_t action =
            e->update_fn(it->row, it->key, value, present, e->update_data);
        it->act = MPIDHT_ACT_NONE;
        it->outcome = MPIDHT_UPDATE_KEPT;
        if (action == MPIDHT_STORE) {
            mpidht_stage_bucket(t, b, it->key, value);
            it->act = MPIDHT_ACT_STORE;
            it->outcome = (int)update_outcome(it->planned);
        } else if (action == MPIDHT_DELETE && present) {
            it->act = MPIDHT_ACT_CLEAR;
            it->outcome = MPIDHT_UPDATE_REMOVED;
        } else if (action != MPIDHT_KEEP && action != MPIDHT_DELETE) {
            it->status = MPIDHT_ERR_UPDATE_ACTION;
        }
        return;
    }
    case MPIDHT_OP_READ:
    case MPIDHT_OP_SCAN:
        break;
    }
}

mpidht_status_t mpidht_write_issue_act(mpidht_t *t, mpidht_item_t *it)
{
    switch (it->act) {
    case MPIDHT_ACT_STORE:
        return mpidht_issue_store(t, it, it->chosen);
    case MPIDHT_ACT_CLEAR:
        return mpidht_issue_clear(t, it, it->chosen);
    default:
        return MPIDHT_OK;
    }
}

/* The steps of a locked write. */
enum {
    KEY_LOCK,   /* add a writer bit to the key lock */
    KEY_DRAIN,  /* wait for the key lock's readers to leave */
    PROBE,      /* get every candidate's meta byte and key */
    LOCK,       /* add a writer bit to the chosen bucket's lock */
    DRAIN,      /* wait for its readers to leave */
    REFETCH,    /* get the chosen bucket again under its lock */
    ACT,        /* put the data, or clear */
    RELEASE     /* take the writer bits back */
};

void mpidht_locked_start(mpidht_t *t, mpidht_item_t *it)
{
    it->step = t->engine->exclusive ? PROBE : KEY_LOCK;
    mpidht_engine_take_hint(t, it);
}

mpidht_status_t mpidht_locked_issue(mpidht_t *t, mpidht_item_t *it)
{
    switch (it->step) {
    case KEY_LOCK:
        return mpidht_issue_lock_fetch(t, it, 0, &writer_add);
    case KEY_DRAIN:
        return mpidht_issue_lock_fetch(t, it, 0, NULL);
    case PROBE: {
        /* Meta bytes and keys, to choose by; an update also needs the
         * value of the key lock's own bucket, which it acts on without a
         * refetch (any other chosen bucket is refetched whole). */
        unsigned n = it->addr.count;
        bool whole = it->op == MPIDHT_OP_UPDATE;
        mpidht_status_t st = whole ? mpidht_issue_get_data(t, it, 0, 1)
                                   : mpidht_issue_get_keys(t, it, 0, 1);
        if (st == MPIDHT_OK && n > 1)
            st = mpidht_issue_get_keys(t, it, 1, n - 1);
        if (st == MPIDHT_OK && it->op != MPIDHT_OP_REMOVE &&
            mpidht_engine_evicts_by_recency(t))
            st = mpidht_issue_recency_fetch(t, it);
        return st;
    }
    case LOCK:
        return mpidht_issue_lock_fetch(t, it, it->chosen, &writer_add);
    case DRAIN:
        return mpidht_issue_lock_fetch(t, it, it->chosen, NULL);
    case REFETCH: /* whole for an update */
        return it->op == MPIDHT_OP_UPDATE ? mpidht_issue_get_data(t, it, it->chosen, 1)
                                          : mpidht_issue_get_keys(t, it, it->chosen, 1);
    case ACT:
        return mpidht_write_issue_act(t, it);
    default: /* RELEASE */
        /* What changed a bucket counts in its generation before its lock
         * is let go (engine.h, read-for-insert). */
        if (it->act != MPIDHT_ACT_NONE)
            mpidht_issue_gen_bump(t, it, it->held);
        return mpidht_issue_lock_add_each(t, it, &it->held, &writer_sub);
    }
}

/* Takes back the writer bit of candidate c (completed with the next
 * round). */
static mpidht_status_t let_go(mpidht_t *t, mpidht_item_t *it, unsigned c)
{
    it->held &= ~(1u << c);
    return mpidht_issue_lock_add(t, it, c, &writer_sub);
}

/* Lets go of everything held and finishes with a timeout. */
static mpidht_status_t give_up(mpidht_t *t, mpidht_item_t *it)
{
    mpidht_status_t st = mpidht_issue_lock_add_each(t, it, &it->held, &writer_sub);
    mpidht_item_finish(it, MPIDHT_ERR_TIMEOUT, 0);
    return st;
}

/* The chosen bucket is held and current: on to the write step. */
static void to_act(mpidht_t *t, mpidht_item_t *it)
{
    mpidht_write_prepare(t, it);
    it->step = it->act == MPIDHT_ACT_NONE ? RELEASE : ACT;
}

static mpidht_status_t let_go(mpidht_t *t, mpidht_item_t *it, unsigned c);
static mpidht_status_t give_up(mpidht_t *t, mpidht_item_t *it);

/* The chosen bucket is held and current: on to the write step, unless
 * the write would evict on a direct table and not every other candidate
 * was taken at one instant (engine.h, mpidht_engine_all_taken): then it
 * lets go of the chosen bucket and probes again, after a wait where a
 * candidate was changing. */
static mpidht_status_t act_or_probe(mpidht_t *t, mpidht_item_t *it)
{
    mpidht_taken_t seen = MPIDHT_TAKEN_ALL;
    if (it->planned == MPIDHT_WRITE_EVICTED && t->direct && t->layout.has_lock &&
        !t->engine->exclusive)
        seen = mpidht_engine_all_taken(t, it);
    if (seen == MPIDHT_TAKEN_ALL) {
        to_act(t, it);
        return MPIDHT_OK;
    }
    it->step = PROBE;
    mpidht_status_t st = it->chosen == 0 || !(it->held & 1u << it->chosen)
                             ? MPIDHT_OK
                             : let_go(t, it, it->chosen);
    if (st == MPIDHT_OK && seen == MPIDHT_TAKEN_CHANGING && !mpidht_item_wait(t, it))
        return give_up(t, it);
    return st;
}

/* The key lock is held, its readers gone: on to the probe, or, where the
 * miss that left the item's hint saw the generation the key lock's bucket
 * still has (engine.h, read-for-insert), the key is absent and the write
 * goes where mpidht_choose_slot would put it among the candidates as they
 * are now, without comparing keys: the key lock's own bucket is held,
 * another is checked again under its lock. A hint is used once: a write
 * that must look again probes. */
static mpidht_status_t to_probe(mpidht_t *t, mpidht_item_t *it)
{
    it->step = PROBE;
    if (!it->hinted)
        return MPIDHT_OK;
    it->hinted = false;
    if (!mpidht_engine_hint_plan(t, it))
        return MPIDHT_OK;
    t->stats.probes_reused++;
    if (it->chosen != 0) {
        it->step = LOCK;
        return MPIDHT_OK;
    }
    return act_or_probe(t, it);
}

/* After a writer-bit attempt on candidate c: owned (maybe still with
 * readers to wait for), or taken back. */
static mpidht_status_t after_lock(mpidht_t *t, mpidht_item_t *it, unsigned c,
                                  int drain_step, int next_step)
{
    int64_t old = it->lock[c];
    if (old >= MPIDHT_FINE_EXCLUSIVE) { /* another writer holds or waits */
        mpidht_status_t st = mpidht_issue_lock_add(t, it, c, &writer_sub);
        /* Let go of the key lock too, and start over from it. */
        if (st == MPIDHT_OK && c != 0 && (it->held & 1u))
            st = let_go(t, it, 0);
        if (st != MPIDHT_OK)
            return st;
        it->step = KEY_LOCK;
        return mpidht_item_wait(t, it) ? MPIDHT_OK : give_up(t, it);
    }
    it->held |= 1u << c;
    if (READERS(old))
        it->step = drain_step;
    else if (next_step == PROBE)
        return to_probe(t, it);
    else
        it->step = next_step;
    return MPIDHT_OK;
}

static mpidht_status_t after_drain(mpidht_t *t, mpidht_item_t *it, unsigned c,
                                   int next_step)
{
    if (READERS(it->lock[c]) == 0) {
        if (next_step == PROBE)
            return to_probe(t, it);
        it->step = next_step;
        return MPIDHT_OK;
    }
    return mpidht_item_wait(t, it) ? MPIDHT_OK : give_up(t, it);
}

mpidht_status_t mpidht_locked_advance(mpidht_t *t, mpidht_item_t *it)
{
    switch (it->step) {
    case KEY_LOCK:
        return after_lock(t, it, 0, KEY_DRAIN, PROBE);
    case KEY_DRAIN:
        return after_drain(t, it, 0, PROBE);
    case PROBE:
        if (!mpidht_write_choose(t, it)) { /* an absent key's remove, a deferred write */
            it->status = MPIDHT_NOT_FOUND;
            it->act = MPIDHT_ACT_NONE;
            it->step = RELEASE;
        } else if (it->chosen != 0 && !t->engine->exclusive) {
            it->step = LOCK;
        } else if (it->op == MPIDHT_OP_UPDATE && it->chosen != 0) {
            /* Held already (the key lock's own bucket) or taken without
             * locks: what the probe did not get, an update's bucket
             * whole. */
            it->step = REFETCH;
        } else {
            return act_or_probe(t, it);
        }
        return MPIDHT_OK;
    case LOCK:
        return after_lock(t, it, it->chosen, DRAIN, REFETCH);
    case DRAIN:
        return after_drain(t, it, it->chosen, REFETCH);
    case REFETCH:
        if (mpidht_write_still_fits(t, it))
            return act_or_probe(t, it);
        /* Another key's writer changed it: look again, keeping the key
         * lock (no write of this key can have happened meanwhile). */
        it->step = PROBE;
        return it->chosen == 0 || !(it->held & 1u << it->chosen) ? MPIDHT_OK
                                                                 : let_go(t, it, it->chosen);
    case ACT:
        if (it->held == 0) /* nothing to let go of (an exclusive write) */
            mpidht_item_finish(it, it->status, it->outcome);
        else
            it->step = RELEASE;
        return MPIDHT_OK;
    default: /* RELEASE */
        mpidht_item_finish(it, it->status, it->outcome);
        return MPIDHT_OK;
    }
}
