/*
 * The debug mode's check that every process entered the same collective
 * call, made before the call's own collective operations.
 *
 * Each process sends every other a note (epoch, attempt, call, phase) on
 * the table's private communicator and reads the others' notes with
 * MPI_Iprobe until it is done or its deadline passes. Phase 1 says "I am
 * in <call>"; once a process has heard every other in the same call it
 * sends phase 2, "I heard everyone", and it goes on once every other sent
 * phase 2 for the note it last heard from it. A process that gives up
 * sends phase 3, "I left that attempt", and nothing more for it, so the
 * others give up too instead of entering the call without it (only a
 * note delayed by about the whole timeout can still let one process go
 * on alone).
 *
 * epoch counts the checks passed; it is equal on every process between
 * calls, and notes of earlier epochs are stale. A failed check does not
 * advance it and has done nothing else, so the table stays usable; its
 * notes may still arrive later, and attempt (the checks this process began)
 * lets a later check's phase 2 be told from a failed one's. What a
 * process last heard from each other is kept from one check to the next
 * (d->peers): a process that gave up may already have the note of
 * another's next call, which was sent once and must count in its own
 * next check (dropped with the failed check, the two stayed out of step
 * in every later call).
 */
#include "collective_check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const call_names[MPIDHT_CALL_COUNT] = {
    [MPIDHT_CALL_CREATE] = "mpidht_create",
    [MPIDHT_CALL_FREE] = "mpidht_free",
    [MPIDHT_CALL_CLEAR] = "mpidht_clear",
    [MPIDHT_CALL_DUMP] = "mpidht_dump",
    [MPIDHT_CALL_RESTORE] = "mpidht_restore",
    [MPIDHT_CALL_STATS_GLOBAL] = "mpidht_stats_global",
};

/* The notes' tag; the private communicator carries no other messages. */
enum { NOTE_TAG = 7411, PHASE_ENTERED = 1, PHASE_CONFIRMED = 2, PHASE_LEFT = 3 };
enum { NOTE_EPOCH, NOTE_ATTEMPT, NOTE_CALL_PHASE, NOTE_WORDS };

mpidht_status_t mpidht_debug_setting(double *seconds)
{
    *seconds = 0;
    const char *text = getenv(MPIDHT_DEBUG_ENV);
    if (!text || !*text)
        return MPIDHT_OK;
    char *end = NULL;
    errno = 0;
    double value = strtod(text, &end);
    while (end && (*end == ' ' || *end == '\t' || *end == '\n'))
        ++end;
    if (end == text || *end || errno == ERANGE || !isfinite(value) || value < 0)
        return MPIDHT_ERR_DEBUG_SETTING;
    *seconds = value;
    return MPIDHT_OK;
}

static void pause_briefly(void)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 100000};
    nanosleep(&pause, NULL);
}

/* Waits for request: for ever where the debug mode is off, otherwise
 * d->check_timeout seconds at most. false on a timeout (the request is
 * left to MPI: it cannot be cancelled). */
static bool wait_checked(const mpidht_diag_t *d, MPI_Request *request, mpidht_status_t *st)
{
    *st = MPIDHT_OK;
    if (d->check_timeout <= 0) {
        if (MPI_Wait(request, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            *st = MPIDHT_ERR_MPI;
        return true;
    }
    double deadline = MPI_Wtime() + d->check_timeout;
    for (;;) {
        int done = 0;
        if (MPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            *st = MPIDHT_ERR_MPI;
            return true;
        }
        if (done)
            return true;
        if (MPI_Wtime() > deadline)
            return false;
        pause_briefly();
    }
}

/* What this process last heard from another: the check it last entered
 * (a process's notes arrive in the order sent, and its epoch never goes
 * back), and whether it has left it. */
struct mpidht_peer {
    uint64_t epoch;
    uint64_t attempt;
    int call;       /* -1: nothing heard */
    bool confirmed; /* phase 2 heard for that attempt */
    bool left;      /* phase 3 heard for it: gave up, not in the call */
    bool earlier;   /* that call's phase 1 heard before the check under way */
};
typedef struct mpidht_peer peer_t;

static void hear(peer_t *p, const uint64_t note[NOTE_WORDS])
{
    int call = (int)(note[NOTE_CALL_PHASE] & 0xffffffffu);
    unsigned phase = (unsigned)(note[NOTE_CALL_PHASE] >> 32);
    bool same = note[NOTE_EPOCH] == p->epoch && note[NOTE_ATTEMPT] == p->attempt &&
                call == p->call;
    if (phase == PHASE_ENTERED)
        *p = (peer_t){.epoch = note[NOTE_EPOCH], .attempt = note[NOTE_ATTEMPT], .call = call};
    else if (phase == PHASE_CONFIRMED && same)
        p->confirmed = true;
    else if (phase == PHASE_LEFT && same)
        p->left = true;
}

/* Whether p already passed this epoch's check (it confirmed then). */
static bool ahead(const peer_t *p, uint64_t epoch)
{
    return p->epoch > epoch;
}

/* The call p is in at this epoch; -1: none heard (or only at an earlier
 * epoch: stale). */
static int call_at(const peer_t *p, uint64_t epoch)
{
    return p->epoch == epoch ? p->call : -1;
}

/* Receives every note that has arrived. */
static mpidht_status_t hear_all(MPI_Comm comm, peer_t *peers)
{
    for (;;) {
        int arrived = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, NOTE_TAG, comm, &arrived, &status) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
        if (!arrived)
            return MPIDHT_OK;
        uint64_t note[NOTE_WORDS];
        if (MPI_Recv(note, NOTE_WORDS, MPI_UINT64_T, status.MPI_SOURCE, NOTE_TAG, comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
        hear(&peers[status.MPI_SOURCE], note);
    }
}

/* Sends note to every other process; the requests go to requests. */
static mpidht_status_t tell_all(MPI_Comm comm, int rank, int size,
                                const uint64_t note[NOTE_WORDS], MPI_Request *requests)
{
    for (int r = 0; r < size; ++r) {
        requests[r] = MPI_REQUEST_NULL;
        if (r != rank && MPI_Isend(note, NOTE_WORDS, MPI_UINT64_T, r, NOTE_TAG, comm,
                                   &requests[r]) != MPI_SUCCESS)
            return MPIDHT_ERR_MPI;
    }
    return MPIDHT_OK;
}

/* Whether every other process is in call at epoch (and, if confirmed,
 * said so). */
static bool all_in(const peer_t *peers, int rank, int size, uint64_t epoch, int call,
                   bool confirmed)
{
    for (int r = 0; r < size; ++r)
        if (r != rank && !ahead(&peers[r], epoch) &&
            (call_at(&peers[r], epoch) != call || peers[r].left ||
             (confirmed && !peers[r].confirmed)))
            return false;
    return true;
}

/* Writes to list the other processes p with pick(p, call), runs of three
 * or more as "a-b"; returns how many there are. */
static int list_ranks(char *list, size_t size, const peer_t *peers, int rank, int n,
                      bool (*pick)(const peer_t *, uint64_t, int), uint64_t epoch, int call)
{
    int count = 0;
    list[0] = '\0';
    for (int r = 0; r < n; ++r) {
        if (r == rank || !pick(&peers[r], epoch, call))
            continue;
        int last = r;
        while (last + 1 < n && last + 1 != rank && pick(&peers[last + 1], epoch, call))
            ++last;
        const char *sep = count ? ", " : "";
        if (last - r >= 2)
            mpidht_append(list, size, "%s%d-%d", sep, r, last);
        else if (last > r)
            mpidht_append(list, size, "%s%d, %d", sep, r, last);
        else
            mpidht_append(list, size, "%s%d", sep, r);
        count += last - r + 1;
        r = last;
    }
    return count;
}

/* Whether p gave up a call it had entered before this check began: it
 * is in none now (a failed check does not advance the epoch, so its
 * notes are of this one; named as the call p was in, they described a
 * process asleep outside any call as in a call it had left seconds
 * before). For the detail only. */
static bool gone(const peer_t *p)
{
    return p->left && p->earlier;
}

static bool not_entered(const peer_t *p, uint64_t epoch, int call)
{
    (void)call;
    return !ahead(p, epoch) && (call_at(p, epoch) < 0 || gone(p));
}

static bool in_call(const peer_t *p, uint64_t epoch, int call)
{
    return call_at(p, epoch) == call && !gone(p);
}

static bool gave_up(const peer_t *p, uint64_t epoch, int call)
{
    return in_call(p, epoch, call) && p->left;
}

/* In phase 2: what did not confirm has given up too (or will). */
static bool unconfirmed(const peer_t *p, uint64_t epoch, int call)
{
    return in_call(p, epoch, call) && (!p->confirmed || p->left);
}

/* The detail of a failed check: who had not entered call, who entered
 * which other call, and, in phase 2, who entered but gave up. */
static void describe(mpidht_diag_t *d, const peer_t *peers, int rank, int size, int call,
                     int phase)
{
    uint64_t epoch = d->check_epoch;
    char *out = d->detail, list[MPIDHT_DETAIL_SIZE];
    size_t cap = sizeof d->detail;
    snprintf(out, cap, "%s: after %g s", call_names[call], d->check_timeout);
    int n = list_ranks(list, sizeof list, peers, rank, size, not_entered, epoch, call);
    if (n)
        mpidht_append(out, cap, ", process%s %s of %d had not entered it", n > 1 ? "es" : "",
                      list, size);
    for (int other = 0; other < MPIDHT_CALL_COUNT; ++other) {
        n = other == call ? 0
                          : list_ranks(list, sizeof list, peers, rank, size, in_call, epoch, other);
        if (n)
            mpidht_append(out, cap, ", process%s %s had entered %s instead", n > 1 ? "es" : "",
                          list, call_names[other]);
    }
    n = list_ranks(list, sizeof list, peers, rank, size,
                   phase == PHASE_CONFIRMED ? unconfirmed : gave_up, epoch, call);
    if (n)
        mpidht_append(out, cap, ", process%s %s had entered it but gave up waiting for the others",
               n > 1 ? "es" : "", list);
    mpidht_append(out, cap, " (this is process %d; " MPIDHT_DEBUG_ENV "=%g; a process where it is "
           "unset or 0 takes no part in the check)", rank, d->check_timeout);
}

mpidht_status_t mpidht_check_entered(MPI_Comm comm, mpidht_diag_t *d, mpidht_call_t call)
{
    int rank = 0, size = 1;
    if (d->check_timeout <= 0)
        return MPIDHT_OK;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    if (size == 1) {
        ++d->check_epoch;
        return MPIDHT_OK;
    }
    if (!d->peers) { /* kept for the table's life: one communicator */
        d->peers = malloc((size_t)size * sizeof *d->peers);
        if (!d->peers)
            return MPIDHT_ERR_NO_MEMORY;
        for (int r = 0; r < size; ++r)
            d->peers[r] = (peer_t){.call = -1};
    }
    peer_t *peers = d->peers;
    for (int r = 0; r < size; ++r)
        peers[r].earlier = true; /* until its next phase 1 */
    MPI_Request *sent = malloc(3 * (size_t)size * sizeof *sent);
    if (!sent)
        return MPIDHT_ERR_NO_MEMORY;
    for (int r = 0; r < 3 * size; ++r)
        sent[r] = MPI_REQUEST_NULL;
    uint64_t epoch = d->check_epoch, attempt = ++d->check_attempt;
    for (int phase = PHASE_ENTERED; phase <= PHASE_LEFT; ++phase) {
        uint64_t *note = d->note[phase - 1];
        note[NOTE_EPOCH] = epoch;
        note[NOTE_ATTEMPT] = attempt;
        note[NOTE_CALL_PHASE] = (uint64_t)call | (uint64_t)phase << 32;
    }

    double deadline = MPI_Wtime() + d->check_timeout;
    int phase = PHASE_ENTERED;
    mpidht_status_t st = tell_all(comm, rank, size, d->note[0], sent);
    while (st == MPIDHT_OK) {
        st = hear_all(comm, peers);
        if (st != MPIDHT_OK)
            break;
        if (phase == PHASE_ENTERED && all_in(peers, rank, size, epoch, (int)call, false)) {
            phase = PHASE_CONFIRMED;
            st = tell_all(comm, rank, size, d->note[1], sent + size);
            continue;
        }
        if (phase == PHASE_CONFIRMED && all_in(peers, rank, size, epoch, (int)call, true))
            break;
        if (MPI_Wtime() > deadline) {
            describe(d, peers, rank, size, (int)call, phase);
            /* The others forget this attempt: one that already heard this
             * process in the call must not count it there in a later
             * check. */
            mpidht_status_t left = tell_all(comm, rank, size, d->note[2], sent + 2 * size);
            st = left != MPIDHT_OK ? left : MPIDHT_ERR_COLLECTIVE_CHECK;
            break;
        }
        pause_briefly();
    }
    if (st == MPIDHT_OK) {
        /* Every other process received both notes (or passed the epoch on
         * an earlier attempt's and will discard these as stale): the sends
         * complete. One MPI_Wait each: GCC takes MPICH's
         * MPI_STATUSES_IGNORE for an empty array of MPI_Waitall's statuses
         * and warns. */
        ++d->check_epoch;
        for (int r = 0; r < 2 * size && st == MPIDHT_OK; ++r)
            if (MPI_Wait(&sent[r], MPI_STATUS_IGNORE) != MPI_SUCCESS)
                st = MPIDHT_ERR_MPI;
    }
    /* Requests left (a failed check or wait): notes of 24 bytes are sent
     * eagerly by every MPI library in use; MPI delivers them after the
     * requests are freed. */
    for (int r = 0; r < 3 * size; ++r)
        if (sent[r] != MPI_REQUEST_NULL)
            MPI_Request_free(&sent[r]);
    free(sent);
    return st;
}

void mpidht_diag_release(mpidht_diag_t *d)
{
    free(d->peers);
    d->peers = NULL;
}

mpidht_status_t mpidht_enter_collective(const mpidht_t *t, mpidht_call_t call)
{
    mpidht_status_t st = mpidht_check_table(t);
    if (st != MPIDHT_OK)
        return st;
    t->diag->detail[0] = '\0';
    return mpidht_check_entered(t->comm, t->diag, call);
}

/* What the processes learn of each other's settings: this process's
 * setting, its negative and whether it was refused, reduced by MAX. */
enum { SETTING_MAX, SETTING_MINUS_MIN, SETTING_REFUSED, SETTING_WORDS };

/* MPI writes the new handle and the reduced settings when the calls
 * complete, which, after a timeout, may be any later MPI call: into
 * memory that is then never freed. */
typedef struct dup_state {
    MPI_Comm dup;
    double mine[SETTING_WORDS], all[SETTING_WORDS];
} dup_state_t;

static mpidht_status_t dup_timed_out(mpidht_diag_t *d, MPI_Comm comm)
{
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    snprintf(d->detail, sizeof d->detail,
             "%s: after %g s, not all %d processes of the communicator had entered it "
             "(which ones had not cannot be told before the communicator is duplicated; "
             "this is process %d; " MPIDHT_DEBUG_ENV "=%g)",
             call_names[MPIDHT_CALL_CREATE], d->check_timeout, size, rank, d->check_timeout);
    return MPIDHT_ERR_COLLECTIVE_CHECK;
}

/* The verdict on the reduced settings, the same on every process. */
static mpidht_status_t judge_settings(mpidht_diag_t *d, mpidht_status_t setting,
                                      const double all[SETTING_WORDS])
{
    if (setting != MPIDHT_OK)
        return setting; /* the detail is the caller's */
    if (all[SETTING_REFUSED] > 0) {
        snprintf(d->detail, sizeof d->detail,
                 MPIDHT_DEBUG_ENV " is not a number of seconds on another process");
        return MPIDHT_ERR_PEER;
    }
    if (all[SETTING_MAX] != -all[SETTING_MINUS_MIN]) {
        snprintf(d->detail, sizeof d->detail,
                 MPIDHT_DEBUG_ENV " differs between processes: %g s on this process, "
                 "%g to %g s over all", d->check_timeout, -all[SETTING_MINUS_MIN],
                 all[SETTING_MAX]);
        return MPIDHT_ERR_DEBUG_SETTING;
    }
    return MPIDHT_OK;
}

mpidht_status_t mpidht_dup_checked(MPI_Comm comm, mpidht_diag_t *d, mpidht_status_t setting,
                                   MPI_Comm *dup)
{
    dup_state_t *s = malloc(sizeof *s);
    if (!s)
        return MPIDHT_ERR_NO_MEMORY;
    MPI_Request request = MPI_REQUEST_NULL;
    mpidht_status_t st = MPIDHT_OK;
    if (MPI_Comm_idup(comm, &s->dup, &request) != MPI_SUCCESS) {
        free(s);
        return MPIDHT_ERR_MPI;
    }
    if (!wait_checked(d, &request, &st))
        return dup_timed_out(d, comm); /* s left to MPI */
    if (st != MPIDHT_OK)
        return st;
    s->mine[SETTING_MAX] = d->check_timeout;
    s->mine[SETTING_MINUS_MIN] = -d->check_timeout;
    s->mine[SETTING_REFUSED] = setting != MPIDHT_OK;
    if (MPI_Comm_set_errhandler(s->dup, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        MPI_Iallreduce(s->mine, s->all, SETTING_WORDS, MPI_DOUBLE, MPI_MAX, s->dup,
                       &request) != MPI_SUCCESS) {
        MPI_Comm_free(&s->dup);
        free(s);
        return MPIDHT_ERR_MPI;
    }
    bool checked = false;
    if (!wait_checked(d, &request, &st)) {
        /* Every process entered a duplication of comm, but not all of them
         * go on: the check names those that are not in mpidht_create. If
         * it passes after all, they were only slow. */
        checked = true;
        st = mpidht_check_entered(s->dup, d, MPIDHT_CALL_CREATE);
        if (st == MPIDHT_OK && !wait_checked(d, &request, &st))
            st = dup_timed_out(d, comm);
        if (st != MPIDHT_OK) {
            MPI_Comm_free(&s->dup); /* s left to MPI */
            return st;
        }
    }
    if (st == MPIDHT_OK)
        st = judge_settings(d, setting, s->all);
    if (st == MPIDHT_OK && !checked)
        st = mpidht_check_entered(s->dup, d, MPIDHT_CALL_CREATE);
    *dup = s->dup;
    free(s);
    if (st != MPIDHT_OK)
        MPI_Comm_free(dup);
    return st;
}
