/*
 * Creating and freeing a table: agreeing on parameters across the
 * communicator, sizing buckets, choosing and allocating the window.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "address.h"
#include "collective.h"
#include "collective_check.h"
#include "engine.h"
#include "params.h"
#include "protocol.h"
#include "rma.h"
#include "scan.h"
#include "window.h"

static uint64_t default_hash(const void *key, size_t key_size, void *user_data)
{
    (void)user_data;
    return XXH3_64bits(key, key_size);
}

/* The memory a node can give its tables now: what Linux says can be
 * allocated without swapping (MemAvailable in /proc/meminfo), at most the
 * physical memory; the physical memory where the system does not say;
 * UINT64_MAX where neither is known (not refused on this ground). */
static uint64_t node_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t physical =
        pages <= 0 || page <= 0 ? UINT64_MAX : (uint64_t)pages * (uint64_t)page;
    FILE *meminfo = fopen("/proc/meminfo", "r");
    if (!meminfo)
        return physical;
    char line[128];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && fgets(line, sizeof line, meminfo))
        found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    fclose(meminfo);
    if (!found || kib > UINT64_MAX / 1024)
        return physical;
    return kib * 1024 < physical ? (uint64_t)kib * 1024 : physical;
}

/* The settings that must be equal everywhere; a probe key's hash stands
 * for the hash function. All values are equal iff OR(v) == AND(v); with
 * AND(v) taken as ~OR(~v), one MPI_BOR reduction does both. (Not MPI_MAX
 * and MPI_MIN: MPICH 4.0.2 compares MPI_UINT64_T values as signed.) */
enum { AGREED_KEY, AGREED_VALUE, AGREED_PROTOCOL, AGREED_WINDOW,
       AGREED_CANDIDATES, AGREED_HASH, AGREED_EVICTION, AGREED_COUNT };

/* Their names in the error detail. */
static const char *const agreed_name[AGREED_COUNT] = {
    [AGREED_KEY] = "key_size",       [AGREED_VALUE] = "value_size",
    [AGREED_PROTOCOL] = "protocol",  [AGREED_WINDOW] = "window",
    [AGREED_CANDIDATES] = "candidates",
    [AGREED_HASH] = "hash (the hash function's result for a probe key)",
    [AGREED_EVICTION] = "eviction",
};

/* Checks that the settings are equal on every process of t->comm; where
 * they are not, the error detail names each one that differs, with its
 * value here. */
static mpidht_status_t check_params_equal(mpidht_t *t, const mpidht_params_t *p,
                                          mpidht_hash_fn hash, bool valid)
{
    uint64_t v[2 * AGREED_COUNT] = {0}, any[2 * AGREED_COUNT];
    unsigned char *probe = valid ? malloc(p->key_size) : NULL;
    mpidht_status_t local = valid && !probe ? MPIDHT_ERR_NO_MEMORY : MPIDHT_OK;
    valid = valid && probe;
    if (valid) {
        for (size_t i = 0; i < p->key_size; ++i)
            probe[i] = (unsigned char)(i * 31u + 7u);
        v[AGREED_KEY] = p->key_size;
        v[AGREED_VALUE] = p->value_size;
        v[AGREED_PROTOCOL] = (uint64_t)p->protocol;
        v[AGREED_WINDOW] = (uint64_t)p->window;
        v[AGREED_CANDIDATES] = mpidht_params_candidates(p);
        v[AGREED_HASH] = hash(probe, p->key_size, p->hash_user_data);
        v[AGREED_EVICTION] = (uint64_t)p->eviction;
        free(probe);
    }
    /* An invalid process reports its own error; its zeros must not count
     * as a disagreement, so it contributes 0 to both halves. */
    for (int i = 0; i < AGREED_COUNT; ++i)
        v[AGREED_COUNT + i] = valid ? ~v[i] : 0;
    if (MPI_Allreduce(v, any, 2 * AGREED_COUNT, MPI_UINT64_T, MPI_BOR, t->comm) !=
        MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    if (!valid)
        return local; /* an invalid process reports its own error */
    char *detail = t->diag->detail;
    size_t size = sizeof t->diag->detail;
    int differ = 0;
    bool key_sizes_differ = any[AGREED_KEY] != ~any[AGREED_COUNT + AGREED_KEY];
    for (int i = 0; i < AGREED_COUNT; ++i) {
        /* Probe keys of different sizes hash differently anyway. */
        if (any[i] == ~any[AGREED_COUNT + i] || (i == AGREED_HASH && key_sizes_differ))
            continue;
        mpidht_append(detail, size, "%s%s (%" PRIu64 " on this process)",
                      differ++ ? ", " : "", agreed_name[i], v[i]);
    }
    if (!differ)
        return MPIDHT_OK;
    mpidht_append(detail, size, " %s between processes", differ > 1 ? "differ" : "differs");
    return MPIDHT_ERR_MISMATCHED_PARAMS;
}

/* Says in the error detail, where nothing has yet, what this process's
 * own arguments got wrong (st: its own error; p: the parameters as read,
 * the defaults where they could not be). */
static void describe_own_error(mpidht_t *t, const mpidht_params_t *p, mpidht_status_t st)
{
    char *d = t->diag->detail;
    size_t n = sizeof t->diag->detail;
    if (st == MPIDHT_OK || d[0] != '\0')
        return;
    mpidht_append(d, n, "on this process (rank %d): ", t->rank);
    size_t bucket = mpidht_params_layout(p).bucket_size;
    switch (st) {
    case MPIDHT_ERR_KEY_SIZE:
        mpidht_append(d, n, "key_size is %zu", p->key_size);
        break;
    case MPIDHT_ERR_VALUE_SIZE:
        mpidht_append(d, n, "value_size is %zu", p->value_size);
        break;
    case MPIDHT_ERR_UNKNOWN_PROTOCOL:
        mpidht_append(d, n, "protocol is %d", (int)p->protocol);
        break;
    case MPIDHT_ERR_UNKNOWN_WINDOW:
        mpidht_append(d, n, "window is %d", (int)p->window);
        break;
    case MPIDHT_ERR_CANDIDATES:
        /* UINT_MAX: also what the Python bindings pass for any larger count */
        mpidht_append(d, n, "candidates is %u%s", p->candidates,
                      p->candidates == UINT_MAX ? " or more" : "");
        break;
    case MPIDHT_ERR_UNKNOWN_EVICTION:
        mpidht_append(d, n, "eviction is %d", (int)p->eviction);
        break;
    case MPIDHT_ERR_TIMEOUT_SETTING:
        mpidht_append(d, n, "timeout is %g", p->timeout);
        break;
    case MPIDHT_ERR_BUDGET_TOO_SMALL:
        mpidht_append(d, n, "memory_per_process is %zu bytes, a bucket %zu",
                      p->memory_per_process, bucket);
        break;
    case MPIDHT_ERR_BUDGET_TOO_LARGE:
        mpidht_append(d, n,
                      "memory_per_process is %zu bytes: %zu buckets of %zu (at most %" PRIu64
                      "), and with the budgets of the processes on this node at most the "
                      "%" PRIu64 " bytes it has available",
                      p->memory_per_process, p->memory_per_process / bucket, bucket,
                      (uint64_t)MPIDHT_MAX_BUCKETS_PER_PROCESS,
                      t->node_memory ? t->node_memory : node_memory_bytes());
        break;
    default:
        mpidht_append(d, n, "%s", mpidht_strerror(st));
        break;
    }
}

/* mpidht_agree for the steps of create, whose error detail says what
 * failed: this process's own error (describe_own_error), or the lowest
 * rank that failed and its status. */
static mpidht_status_t agree_create(mpidht_t *t, const mpidht_params_t *p,
                                    mpidht_status_t local)
{
    describe_own_error(t, p, local);
    int who = -1;
    mpidht_status_t theirs = MPIDHT_OK;
    mpidht_status_t st = mpidht_agree_who(t->comm, local, &who, &theirs);
    if (st == MPIDHT_ERR_PEER && t->diag->detail[0] == '\0')
        snprintf(t->diag->detail, sizeof t->diag->detail,
                 "process %d (the lowest rank that failed): %s", who, mpidht_strerror(theirs));
    return st;
}

/* Refuses budgets that, summed over the processes of a node, exceed the
 * memory it has available (node_memory_bytes): create touches every page
 * of the window, and the kernel would kill the process there (a budget
 * of all its physical memory was let through, and killed).
 * Their sum goes to t->node_bytes (mpidht_window_check_room). */
static mpidht_status_t check_node_memory(mpidht_t *t, MPI_Comm node, uint64_t bytes)
{
    /* Summed as double: many budgets near 2^56 bytes must not wrap. */
    double mine = (double)bytes;
    t->node_bytes = 0;
    if (MPI_Allreduce(&mine, &t->node_bytes, 1, MPI_DOUBLE, MPI_SUM, node) !=
        MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    t->node_memory = node_memory_bytes();
    return t->node_bytes > (double)t->node_memory ? MPIDHT_ERR_BUDGET_TOO_LARGE : MPIDHT_OK;
}

/* Marks in t->same_node the processes of the node communicator. */
static mpidht_status_t mark_node(mpidht_t *t, MPI_Comm node)
{
    int n = 0;
    MPI_Group node_group = MPI_GROUP_NULL, table_group = MPI_GROUP_NULL;
    t->same_node = calloc((size_t)t->comm_size, 1);
    if (MPI_Comm_size(node, &n) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
    mpidht_status_t st = t->same_node && in && out ? MPIDHT_OK : MPIDHT_ERR_NO_MEMORY;
    if (st == MPIDHT_OK && (MPI_Comm_group(node, &node_group) != MPI_SUCCESS ||
                            MPI_Comm_group(t->comm, &table_group) != MPI_SUCCESS))
        st = MPIDHT_ERR_MPI;
    for (int i = 0; st == MPIDHT_OK && i < n; ++i)
        in[i] = i;
    if (st == MPIDHT_OK &&
        MPI_Group_translate_ranks(node_group, n, in, table_group, out) != MPI_SUCCESS)
        st = MPIDHT_ERR_MPI;
    for (int i = 0; st == MPIDHT_OK && i < n; ++i)
        if (out[i] >= 0 && out[i] < t->comm_size)
            t->same_node[out[i]] = 1;
    if (node_group != MPI_GROUP_NULL)
        MPI_Group_free(&node_group);
    if (table_group != MPI_GROUP_NULL)
        MPI_Group_free(&table_group);
    free(in);
    free(out);
    return st;
}

/* Learns every process's bucket count and keeps the hosting ones, with
 * where each one's range of buckets starts (placement by capacity). */
static mpidht_status_t gather_hosts(mpidht_t *t, const mpidht_params_t *params)
{
    uint64_t *all = malloc((size_t)t->comm_size * sizeof *all);
    mpidht_status_t st = agree_create(t, params, all ? MPIDHT_OK : MPIDHT_ERR_NO_MEMORY);
    if (st != MPIDHT_OK) {
        free(all);
        return st;
    }
    if (MPI_Allgather(&t->local_buckets, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T,
                      t->comm) != MPI_SUCCESS) {
        free(all);
        return MPIDHT_ERR_MPI;
    }
    t->hosts = 0;
    t->total_buckets = 0;
    for (int r = 0; r < t->comm_size; ++r)
        t->hosts += all[r] > 0;
    t->host_rank = malloc((t->hosts ? t->hosts : 1) * sizeof *t->host_rank);
    t->host_first = malloc(((size_t)t->hosts + 1) * sizeof *t->host_first);
    st = t->host_rank && t->host_first ? MPIDHT_OK : MPIDHT_ERR_NO_MEMORY;
    for (int r = 0, h = 0; st == MPIDHT_OK && r < t->comm_size; ++r) {
        if (all[r] == 0)
            continue;
        t->host_rank[h] = r;
        t->host_first[h] = t->total_buckets;
        t->total_buckets += all[r];
        ++h;
    }
    if (st == MPIDHT_OK)
        t->host_first[t->hosts] = t->total_buckets;
    free(all);
    st = agree_create(t, params, st);
    if (st == MPIDHT_OK && t->hosts == 0) {
        st = MPIDHT_ERR_NO_STORAGE;
        snprintf(t->diag->detail, sizeof t->diag->detail,
                 "memory_per_process is 0 on all %d processes", t->comm_size);
    }
    return st;
}

/* Seconds on the system's real-time clock: one clock for every process
 * of a node (MPI_Wtime need not be), and across nodes as close as their
 * clocks are kept. */
static double real_time(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Recency time 0 for every process: rank 0's clock now. Each process
 * taking its own clock when it returned from create made the stamps of
 * processes that returned milliseconds apart (one descheduled there)
 * that far apart, so recency eviction kept an older entry of one process
 * over a newer one of another. */
static mpidht_status_t share_clock(mpidht_t *t)
{
    t->clock_base = real_time();
    return MPI_Bcast(&t->clock_base, 1, MPI_DOUBLE, 0, t->comm) == MPI_SUCCESS
               ? MPIDHT_OK
               : MPIDHT_ERR_MPI;
}

/* Fills the table from checked params and brings up the window. */
static mpidht_status_t build(mpidht_t *t, const mpidht_params_t *params,
                             bool single_node)
{
    t->key_size = params->key_size;
    t->value_size = params->value_size;
    t->protocol = params->protocol;
    t->ops = mpidht_protocol_lookup(params->protocol);
    t->layout = mpidht_params_layout(params);
    t->candidates = mpidht_params_candidates(params);
    t->eviction = params->eviction;
    t->timeout = params->timeout;
    t->hash = params->hash ? params->hash : default_hash;
    t->hash_user_data = params->hash_user_data;
    t->stats.struct_size = sizeof t->stats;

    mpidht_status_t st = gather_hosts(t, params);
    if (st != MPIDHT_OK)
        return st;
    /* Same inputs everywhere, so every process reaches the same verdict. */
    t->single_node = single_node;
    st = mpidht_window_resolve(params->window, single_node, &t->window);
    describe_own_error(t, params, st); /* the same verdict everywhere */
    if (st != MPIDHT_OK)
        return st;
    st = agree_create(t, params, mpidht_engine_reserve(t, 1));
    if (st != MPIDHT_OK)
        return st;

    st = agree_create(t, params, mpidht_window_check_room(t));
    if (st != MPIDHT_OK)
        return st;
    st = agree_create(t, params, mpidht_window_allocate(t, (size_t)t->local_buckets *
                                                      t->layout.bucket_size));
    if (st != MPIDHT_OK)
        return st;
    st = agree_create(t, params, mpidht_window_decide_direct(t));
    if (st == MPIDHT_OK)
        st = agree_create(t, params, share_clock(t));
    if (st != MPIDHT_OK)
        return st;
    /* The window is freed on failure, which needs every epoch closed. */
    mpidht_status_t opened = t->ops->open(t);
    st = agree_create(t, params, opened);
    if (st != MPIDHT_OK && opened == MPIDHT_OK)
        t->ops->close(t);
    t->random = mpidht_mix64((uint64_t)(MPI_Wtime() * 1e9) ^ (uint64_t)t->rank << 40) | 1;
    return st;
}

/* Releases what build() acquired; t itself belongs to the caller. */
/* Frees what t holds of this process's own memory, calling nothing of
 * MPI (the window aside: mpidht_window_free or _forget). */
static void release_memory(mpidht_t *t)
{
    free(t->host_rank);
    free(t->host_first);
    free(t->same_node);
    mpidht_engine_release(t);
    mpidht_scan_release(t);
}

static void release(mpidht_t *t)
{
    release_memory(t);
    if (t->comm != MPI_COMM_NULL)
        MPI_Comm_free(&t->comm);
}

/* Checks params on this process and against the others, then fills *t.
 * Collective; t->comm must already be the table's communicator. local is
 * what the caller found wrong already (or MPIDHT_OK). */
static mpidht_status_t setup(mpidht_t *t, const mpidht_params_t *given,
                             mpidht_status_t local)
{
    MPI_Comm_rank(t->comm, &t->rank);
    MPI_Comm_size(t->comm, &t->comm_size);
    mpidht_params_t full, *params = &full;
    mpidht_params_init(&full);
    if (local == MPIDHT_OK)
        local = mpidht_params_read(given, &full);
    if (local == MPIDHT_OK)
        local = mpidht_params_check(params);
    if (local == MPIDHT_OK)
        local = mpidht_params_buckets(params, &t->local_buckets);
    bool valid = local == MPIDHT_OK;
    uint64_t bytes = valid ? t->local_buckets * mpidht_params_layout(params).bucket_size : 0;

    /* One node: every process shares memory with every other. */
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(t->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                            &node) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    MPI_Comm_size(node, &t->node_size);
    mpidht_status_t st = check_node_memory(t, node, bytes);
    mpidht_status_t marked = mark_node(t, node);
    MPI_Comm_free(&node);
    if (local == MPIDHT_OK)
        local = st;
    if (local == MPIDHT_OK)
        local = marked;
    valid = valid && local == MPIDHT_OK;

    st = check_params_equal(t, params,
                            valid && params->hash ? params->hash : default_hash,
                            valid);
    if (local == MPIDHT_OK)
        local = st;
    st = agree_create(t, params, local);
    if (st != MPIDHT_OK)
        return st;
    return build(t, params, t->node_size == t->comm_size);
}

/* The delete callback of a table's attribute on MPI_COMM_SELF: MPI_Finalize
 * (or mpidht_free) removes it. */
static int note_finalize(MPI_Comm comm, int keyval, void *attribute, void *extra_state)
{
    (void)comm;
    (void)keyval;
    (void)extra_state;
    ((mpidht_t *)attribute)->mpi_finalized = true;
    return MPI_SUCCESS;
}

/* Hangs the handle t on MPI_COMM_SELF, so that MPI_Finalize marks it. Where
 * MPI refuses, t->finalize_keyval stays invalid (mpidht_check_table asks
 * MPI_Finalized instead). */
static void watch_finalize(mpidht_t *t)
{
    int keyval = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, note_finalize, &keyval, NULL) !=
        MPI_SUCCESS)
        return;
    if (MPI_Comm_set_attr(MPI_COMM_SELF, keyval, t) != MPI_SUCCESS) {
        MPI_Comm_free_keyval(&keyval);
        return;
    }
    t->finalize_keyval = keyval;
}

static void unwatch_finalize(mpidht_t *t)
{
    if (t->finalize_keyval == MPI_KEYVAL_INVALID)
        return;
    MPI_Comm_delete_attr(MPI_COMM_SELF, t->finalize_keyval);
    MPI_Comm_free_keyval(&t->finalize_keyval);
    t->finalize_keyval = MPI_KEYVAL_INVALID;
}

/* Hands the error detail to the caller's buffer, if params has one: the
 * status's message where a failure (st) left no detail. */
/* The family of an MPI library ("Open MPI", or "MPICH" for MPICH and the
 * libraries built on it) by the markers of its version string; NULL for
 * any other. */
static const char *mpi_family(const char *version)
{
    if (strstr(version, "Open MPI"))
        return "Open MPI";
    if (strstr(version, "MPICH") || strstr(version, "MVAPICH") || strstr(version, "Intel(R) MPI"))
        return "MPICH";
    return NULL;
}

/* The family of the mpi.h this library was compiled with. */
#if defined(OMPI_MAJOR_VERSION)
#define BUILT_MPI_FAMILY "Open MPI"
#elif defined(MPICH_VERSION)
#define BUILT_MPI_FAMILY "MPICH"
#else
#define BUILT_MPI_FAMILY NULL
#endif

/* MPIDHT_ERR_MPI_LIBRARY, with a detail, where the MPI library the
 * program runs with is of the other family than the mpi.h this library
 * was compiled with: their handles differ (an int in MPICH's ABI, a
 * pointer in Open MPI's), and the first call that took one crashed (a
 * program built with Open MPI's wrapper against an mpidht built with
 * MPICH). Asks MPI_Get_library_version alone, which takes no handle;
 * *family receives the running library's (mpi_family). */
static mpidht_status_t check_mpi_library(char *detail, size_t size, const char **family)
{
    /* Room for the other family's string: MPICH's may take 8192 bytes,
     * 32 times MPI_MAX_LIBRARY_VERSION_STRING in Open MPI's mpi.h. */
    enum { ANY_VERSION_STRING = 16384 };
    _Static_assert(MPI_MAX_LIBRARY_VERSION_STRING <= ANY_VERSION_STRING, "room");
    char version[ANY_VERSION_STRING] = "";
    int length = 0;
    if (MPI_Get_library_version(version, &length) != MPI_SUCCESS)
        return MPIDHT_ERR_MPI;
    const char *running = *family = mpi_family(version), *built = BUILT_MPI_FAMILY;
    if (!running || !built || strcmp(running, built) == 0)
        return MPIDHT_OK;
    version[strcspn(version, ",\n")] = '\0';
    snprintf(detail, size,
             "mpidht was compiled with %s's mpi.h, and the program runs with %s (\"%s\"): "
             "build the program with the MPI mpidht was built with (its compiler wrapper, "
             "or FindMPI with that wrapper), or mpidht with the program's",
             built, running, version);
    return MPIDHT_ERR_MPI_LIBRARY;
}

static void give_detail(const mpidht_params_t *params, const char *detail, mpidht_status_t st)
{
    if (params && params->struct_size == sizeof *params && params->error_detail &&
        params->error_detail_size > 0)
        snprintf(params->error_detail, params->error_detail_size, "%s",
                 st != MPIDHT_OK && !detail[0] ? mpidht_strerror(st) : detail);
}

mpidht_status_t mpidht_create(MPI_Comm comm, const mpidht_params_t *params,
                              mpidht_t **table)
{
    int initialized = 0, finalized = 0, inter = 0;
    if (table)
        *table = NULL;
    give_detail(params, "", MPIDHT_OK);
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return MPIDHT_ERR_MPI_NOT_INITIALIZED;
    char mismatch[MPIDHT_DETAIL_SIZE];
    const char *family = NULL;
    mpidht_status_t library = check_mpi_library(mismatch, sizeof mismatch, &family);
    if (library != MPIDHT_OK) {
        give_detail(params, library == MPIDHT_ERR_MPI_LIBRARY ? mismatch : "", library);
        return library;
    }
    if (comm == MPI_COMM_NULL)
        return MPIDHT_ERR_INVALID_COMM;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return MPIDHT_ERR_INVALID_COMM;

    /* Built on the stack and copied into the handle, allocated first so
     * that nothing can fail once the window and its epoch exist. The
     * debug setting is agreed on with the duplication, which every
     * process must enter (a refused one is reported there). */
    mpidht_diag_t diag = {.detail = ""};
    mpidht_status_t setting = mpidht_debug_setting(&diag.check_timeout);
    if (setting != MPIDHT_OK)
        snprintf(diag.detail, sizeof diag.detail, MPIDHT_DEBUG_ENV "='%s' on this process",
                 getenv(MPIDHT_DEBUG_ENV));
    mpidht_t t = {.comm = MPI_COMM_NULL,
                  .win = MPI_WIN_NULL,
                  .mpi_family = family,
                  .finalize_keyval = MPI_KEYVAL_INVALID,
                  .diag = &diag};
    mpidht_status_t st = mpidht_dup_checked(comm, &diag, setting, &t.comm);
    if (st != MPIDHT_OK) {
        mpidht_diag_release(&diag);
        give_detail(params, diag.detail, st);
        return st;
    }

    mpidht_t *handle = table ? malloc(sizeof *handle) : NULL;
    mpidht_diag_t *kept = handle ? malloc(sizeof *kept) : NULL;
    st = setup(&t, params,
               !table            ? MPIDHT_ERR_NULL_ARGUMENT
               : !handle || !kept ? MPIDHT_ERR_NO_MEMORY
                                  : MPIDHT_OK);
    if (st != MPIDHT_OK) {
        free(handle);
        free(kept);
        if (t.ops)
            mpidht_window_free(&t); /* frees whatever part exists */
        release(&t);
        mpidht_diag_release(&diag);
        give_detail(params, diag.detail, st);
        return st;
    }
    *kept = diag;
    t.diag = kept;
    *handle = t;
    watch_finalize(handle);
    *table = handle;
    return MPIDHT_OK;
}

mpidht_status_t mpidht_free(mpidht_t **table)
{
    if (!table)
        return MPIDHT_ERR_NULL_ARGUMENT;
    mpidht_t *t = *table;
    mpidht_status_t st = mpidht_enter_collective(t, MPIDHT_CALL_FREE);
    if (st == MPIDHT_ERR_MPI_NOT_INITIALIZED && t) {
        /* MPI_Finalize took the window and the communicators: this
         * process's own memory is all there is left to free. */
        mpidht_window_forget(t);
        release_memory(t);
        mpidht_diag_release(t->diag);
        free(t->diag);
        free(t);
        *table = NULL;
        return st;
    }
    if (st != MPIDHT_OK)
        return st;
    st = t->ops->close(t); /* completes what is pending */
    mpidht_status_t freed = mpidht_window_free(t);
    unwatch_finalize(t);
    release(t);
    mpidht_diag_release(t->diag);
    free(t->diag);
    free(t);
    *table = NULL;
    return st != MPIDHT_OK ? st : freed;
}

mpidht_status_t mpidht_check_table(const mpidht_t *t)
{
    if (!t)
        return MPIDHT_ERR_INVALID_HANDLE;
    int finalized = t->mpi_finalized;
    if (t->finalize_keyval == MPI_KEYVAL_INVALID)
        MPI_Finalized(&finalized);
    return finalized ? MPIDHT_ERR_MPI_NOT_INITIALIZED : MPIDHT_OK;
}

/* What mpidht_locate and mpidht_locate_hashed do, inlined into each:
 * every operation locates its key. */
static inline void locate(const mpidht_t *t, uint64_t hash, mpidht_address_t *addr,
                          unsigned derive)
{
    uint32_t host = mpidht_address_host(hash, t->host_first, t->hosts);
    uint64_t buckets = t->host_first[host + 1] - t->host_first[host];
    addr->rank = t->host_rank[host];
    addr->count = buckets < t->candidates ? (unsigned)buckets : t->candidates;
    addr->derived = 0;
    addr->hash = hash;
    addr->buckets = buckets;
    mpidht_address_need(addr, derive < addr->count ? derive : addr->count);
}

void mpidht_locate(const mpidht_t *t, const void *key, mpidht_address_t *addr,
                   unsigned derive)
{
    locate(t, t->hash(key, t->key_size, t->hash_user_data), addr, derive);
}

void mpidht_locate_hashed(const mpidht_t *t, uint64_t hash, mpidht_address_t *addr,
                          unsigned derive)
{
    locate(t, hash, addr, derive);
}

uint64_t mpidht_now_ms(const mpidht_t *t)
{
    double ms = (real_time() - t->clock_base) * 1e3;
    return ms > 0 ? (uint64_t)ms + 1 : 1;
}

uint64_t mpidht_random(mpidht_t *t)
{
    uint64_t x = t->random;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    t->random = x;
    return x * UINT64_C(0x2545f4914f6cdd1d);
}

mpidht_status_t mpidht_get_info(const mpidht_t *table, mpidht_info_t *info)
{
    if (!table)
        return MPIDHT_ERR_INVALID_HANDLE;
    if (!info)
        return MPIDHT_ERR_NULL_ARGUMENT;
    size_t size = info->struct_size;
    if (size <= sizeof info->struct_size)
        return MPIDHT_ERR_STRUCT_SIZE;
    mpidht_info_t full = {
        .struct_size = size,
        .key_size = table->key_size,
        .value_size = table->value_size,
        .bucket_size = table->layout.bucket_size,
        .local_buckets = table->local_buckets,
        .total_buckets = table->total_buckets,
        .hosting_processes = (int)table->hosts,
        .comm_size = table->comm_size,
        .candidates = table->candidates,
        .protocol = table->protocol,
        .window = table->window,
        .eviction = table->eviction,
        .timeout = table->timeout,
        .direct = table->direct,
    };
    memcpy(info, &full, size < sizeof full ? size : sizeof full);
    return MPIDHT_OK;
}

const char *mpidht_protocol_name(mpidht_protocol_t protocol)
{
    switch (protocol) {
    case MPIDHT_PROTOCOL_COARSE:
        return "coarse";
    case MPIDHT_PROTOCOL_FINE:
        return "fine";
    case MPIDHT_PROTOCOL_LOCKFREE:
        return "lockfree";
    }
    return "unknown";
}

const char *mpidht_eviction_name(mpidht_eviction_t eviction)
{
    switch (eviction) {
    case MPIDHT_EVICT_RECENCY:
        return "recency";
    case MPIDHT_EVICT_LAST:
        return "last";
    }
    return "unknown";
}

const char *mpidht_window_name(mpidht_window_kind_t window)
{
    switch (window) {
    case MPIDHT_WINDOW_AUTO:
        return "auto";
    case MPIDHT_WINDOW_SHARED:
        return "shared";
    case MPIDHT_WINDOW_ALLOCATE:
        return "allocate";
    case MPIDHT_WINDOW_CREATE:
        return "create";
    }
    return "unknown";
}
