/*
 * mpidht_progress_bench: what a read, a write and a locked update cost when
 * the process that hosts the key is busy computing, as a chemistry worker
 * is inside PHREEQC, against the same operations while it waits inside
 * MPI. Over a network the target of a one-sided call may have to enter MPI
 * before the call completes; this measures whether it does, and how long.
 *
 * Run at 2 or more ranks, the last rank on another host than rank 0: rank
 * 0 (the origin) hosts no buckets, the last rank (the target) hosts them
 * all; any ranks between host nothing and wait in MPI. For every protocol
 * and each target mode:
 *   idle   the target waits in MPI_Wait for the origin's "done" message
 *   busy   the target computes in slices of --compute-ms (default 5 ms)
 *          without any MPI call, and calls MPI_Test once between slices;
 *          with --progress-us US, it calls mpidht_progress (for the raw
 *          references, whose window is no table: MPI_Iprobe) after every
 *          US microseconds of a slice, the library's fix
 * the origin times --ops single calls of each operation, one at a time,
 * with a pause drawn uniformly from [0, compute-ms] before each, so that
 * the calls land anywhere in the target's slices:
 *   read    mpidht_read of a key present in the table
 *   write   mpidht_write of a present key (an update in place)
 *   update  mpidht_update of a present key (the key's lock held around a
 *           read and a write; the window lock under the coarse protocol)
 * and the raw references on an MPI_Win_allocate window of the target:
 *   raw-get   MPI_Get of a bucket-sized block + MPI_Win_flush
 *   raw-lock  MPI_Win_lock(MPI_LOCK_EXCLUSIVE) + MPI_Win_unlock
 * and last what one mpidht_progress call costs the origin (--ops x 100
 * calls, row "idle - progress").
 * Each call is timed with MPI_Wtime. Output: one line per (mode,
 * protocol, operation) with the median, mean, 90th percentile and largest
 * time in µs, and --json FILE with the same rows and --label (the MPI
 * settings the script ran it under).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "cli.h"
#include "mpidht.h"

enum { KEY_SIZE = 80, VALUE_SIZE = 104, KEYS = 64, BLOCK = 200, MAX_OPS = 100000 };

typedef struct {
    unsigned long ops;
    double compute_ms;
    double progress_us; /* 0: the busy target never calls mpidht_progress */
    const char *protocols; /* comma list */
    const char *label, *json;
    bool multiple; /* MPI_THREAD_MULTIPLE requested */
} options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpidht_progress_bench [options]   (2 or more ranks)\n"
            "  --ops N            timed calls per operation, mode and protocol\n"
            "                     (default 50, at most 100000)\n"
            "  --compute-ms MS    the busy target's compute slice (default 5)\n"
            "  --progress-us US   the busy target calls mpidht_progress after every US\n"
            "                     microseconds of computing (default 0: never)\n"
            "  --protocols LIST   coarse,fine,lockfree (default all three)\n"
            "  --thread LEVEL     single or multiple: the level MPI_Init_thread asks\n"
            "                     for (default single; MPICH's asynchronous progress\n"
            "                     needs multiple)\n"
            "  --label TEXT       the MPI settings, copied into the JSON rows\n"
            "  --json FILE        also write the rows there\n");
}

/* 0 run, 1 usage error, 2 help. */
static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.ops = 50, .compute_ms = 5.0, .protocols = "coarse,fine,lockfree",
                     .label = ""};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 2;
        if (i + 1 >= argc)
            return 1;
        const char *v = argv[++i];
        char *end = NULL;
        if (!strcmp(a, "--ops")) {
            unsigned long long n = 0;
            if (!bench_cli_whole(v, 1, MAX_OPS, &n))
                return 1;
            o->ops = (unsigned long)n;
        } else if (!strcmp(a, "--compute-ms")) {
            o->compute_ms = strtod(v, &end);
            if (end == v || *end || !(o->compute_ms > 0 && o->compute_ms <= 1000))
                return 1;
        } else if (!strcmp(a, "--progress-us")) {
            o->progress_us = strtod(v, &end);
            if (end == v || *end || !(o->progress_us >= 0 && o->progress_us <= 1e6))
                return 1;
        } else if (!strcmp(a, "--protocols")) {
            static const char *const names[] = {"coarse", "fine", "lockfree"};
            if (!bench_known_items(v, names, 3))
                return 1;
            o->protocols = v;
        } else if (!strcmp(a, "--thread")) {
            if (strcmp(v, "single") && strcmp(v, "multiple"))
                return 1;
            o->multiple = !strcmp(v, "multiple");
        } else if (!strcmp(a, "--label")) {
            o->label = v;
        } else if (!strcmp(a, "--json")) {
            o->json = v;
        } else {
            return 1;
        }
    }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Computes for `ms` milliseconds without calling MPI. */
static double compute(double ms)
{
    static volatile double sink;
    double x = sink + 1.0, end = now() + ms * 1e-3;
    while (now() < end)
        for (int i = 0; i < 1000; ++i)
            x = x * 1.0000001 + 1e-9;
    sink = x;
    return x;
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void make_key(unsigned char *key, uint64_t id)
{
    memset(key, 0, KEY_SIZE);
    memcpy(key, &id, sizeof id);
}

static mpidht_update_action_t add_one(size_t index, const void *key, void *value, int present,
                                      void *user_data)
{
    (void)index, (void)key, (void)present, (void)user_data;
    ((unsigned char *)value)[0]++;
    return MPIDHT_STORE;
}

static void check(mpidht_status_t st, const char *what)
{
    if (st != MPIDHT_OK && st != MPIDHT_NOT_FOUND) {
        fprintf(stderr, "mpidht_progress_bench: %s: %s\n", what, mpidht_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Computes for a slice of `ms`, calling mpidht_progress on table (MPI_Iprobe
 * where table is NULL) after every progress_us microseconds, if > 0. */
static void compute_slice(double ms, double progress_us, mpidht_t *table)
{
    if (progress_us <= 0) {
        compute(ms);
        return;
    }
    for (double left = ms * 1e3; left > 0; left -= progress_us) {
        compute((left < progress_us ? left : progress_us) * 1e-3);
        if (table) {
            check(mpidht_progress(table), "progress");
        } else {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
    }
}

/* The target's side of one measured phase: wait in MPI, or compute in
 * slices with one MPI_Test between them, until the origin says done. */
static void serve(bool busy, const options_t *o, mpidht_t *table)
{
    int done = 0;
    MPI_Request req;
    MPI_Irecv(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req);
    if (!busy) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    while (!done) {
        compute_slice(o->compute_ms, o->progress_us, table);
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    const char *mode, *protocol, *op;
    double p50, mean, p90, max;
} row_t;

/* Summarises n samples (s) into a row and prints it. */
static row_t summarise(double *s, unsigned long n, const char *mode, const char *protocol,
                       const char *op)
{
    qsort(s, n, sizeof *s, compare_double);
    double sum = 0;
    for (unsigned long i = 0; i < n; ++i)
        sum += s[i];
    row_t r = {mode, protocol, op, s[n / 2] * 1e6, sum / (double)n * 1e6,
               s[n * 9 / 10] * 1e6, s[n - 1] * 1e6};
    printf("%-5s %-9s %-9s %10.1f %10.1f %10.1f %10.1f\n", mode, protocol, op, r.p50, r.mean,
           r.p90, r.max);
    fflush(stdout);
    return r;
}

typedef struct {
    const options_t *o;
    double *samples;
    row_t *rows;
    size_t count;
    uint64_t rng;
} run_t;

/* Pauses the origin for a uniform [0, compute_ms) before a timed call. */
static void pause_origin(run_t *r)
{
    double ms = r->o->compute_ms * (double)(next_random(&r->rng) >> 11) / 9007199254740992.0;
    double end = now() + ms * 1e-3;
    while (now() < end)
        ;
}

/* One protocol, one mode: the origin fills KEYS keys (the target in MPI),
 * then times every operation while the target serves. */
static void run_table(run_t *r, mpidht_protocol_t protocol, bool busy)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = busy ? "busy" : "idle", *name = mpidht_protocol_name(protocol);
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.key_size = KEY_SIZE;
    p.value_size = VALUE_SIZE;
    p.protocol = protocol;
    p.memory_per_process = rank == size - 1 ? 1u << 20 : 0; /* the target hosts all */
    mpidht_t *t = NULL;
    check(mpidht_create(MPI_COMM_WORLD, &p, &t), "create");
    unsigned char key[KEY_SIZE], value[VALUE_SIZE] = {0};
    if (rank == 0)
        for (uint64_t id = 0; id < KEYS; ++id) {
            make_key(key, id);
            check(mpidht_write(t, key, value, NULL), "fill");
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        static const char *const ops[] = {"read", "write", "update"};
        for (int op = 0; op < 3; ++op) {
            for (unsigned long i = 0; i < r->o->ops; ++i) {
                make_key(key, next_random(&r->rng) % KEYS);
                pause_origin(r);
                double t0 = MPI_Wtime();
                mpidht_status_t st = op == 0   ? mpidht_read(t, key, value)
                                     : op == 1 ? mpidht_write(t, key, value, NULL)
                                               : mpidht_update(t, key, add_one, NULL, NULL);
                r->samples[i] = MPI_Wtime() - t0;
                check(st, ops[op]);
            }
            r->rows[r->count++] = summarise(r->samples, r->o->ops, mode, name, ops[op]);
        }
        for (int k = 1; k < size; ++k)
            MPI_Send(NULL, 0, MPI_BYTE, k, 7, MPI_COMM_WORLD);
    } else {
        serve(busy && rank == size - 1, r->o, t);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(mpidht_free(&t), "free");
}

/* The raw references on a window of the target. */
static void run_raw(run_t *r, bool busy)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = busy ? "busy" : "idle";
    int target = size - 1;
    unsigned char *base = NULL, buf[BLOCK];
    MPI_Win win;
    MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 1, 1 << 20);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock_all(0, win);
        for (unsigned long i = 0; i < r->o->ops; ++i) {
            MPI_Aint at = (MPI_Aint)(next_random(&r->rng) % ((1 << 20) / BLOCK)) * BLOCK;
            pause_origin(r);
            double t0 = MPI_Wtime();
            MPI_Get(buf, BLOCK, MPI_BYTE, target, at, BLOCK, MPI_BYTE, win);
            MPI_Win_flush(target, win);
            r->samples[i] = MPI_Wtime() - t0;
        }
        MPI_Win_unlock_all(win);
        r->rows[r->count++] = summarise(r->samples, r->o->ops, mode, "-", "raw-get");
        for (unsigned long i = 0; i < r->o->ops; ++i) {
            pause_origin(r);
            double t0 = MPI_Wtime();
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
            MPI_Win_unlock(target, win);
            r->samples[i] = MPI_Wtime() - t0;
        }
        r->rows[r->count++] = summarise(r->samples, r->o->ops, mode, "-", "raw-lock");
        for (int k = 1; k < size; ++k)
            MPI_Send(NULL, 0, MPI_BYTE, k, 7, MPI_COMM_WORLD);
    } else {
        serve(busy && rank == target, r->o, NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

/* What one mpidht_progress call costs the caller (rank 0, with nothing to
 * serve): --ops x 100 calls, each timed. */
static void run_progress_cost(run_t *r)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.key_size = KEY_SIZE;
    p.value_size = VALUE_SIZE;
    p.memory_per_process = rank == size - 1 ? 1u << 20 : 0;
    mpidht_t *t = NULL;
    check(mpidht_create(MPI_COMM_WORLD, &p, &t), "create");
    if (rank == 0) {
        unsigned long n = r->o->ops * 100;
        double *s = malloc(n * sizeof *s);
        if (!s)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (unsigned long i = 0; i < n; ++i) {
            double t0 = MPI_Wtime();
            check(mpidht_progress(t), "progress");
            s[i] = MPI_Wtime() - t0;
        }
        row_t row = summarise(s, n, "idle", "-", "progress");
        free(s);
        r->rows[r->count++] = row;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(mpidht_free(&t), "free");
}

/* Writes the rows into f (opened before the run) and closes it. */
static void write_json(const run_t *r, int ranks, FILE *f)
{
    fprintf(f, "[");
    for (size_t i = 0; i < r->count; ++i) {
        const row_t *w = &r->rows[i];
        fprintf(f,
                "%s\n  {\"label\": \"%s\", \"ranks\": %d, \"compute_ms\": %g, "
                "\"progress_us\": %g, \"target\": \"%s\", \"protocol\": \"%s\", \"op\": \"%s\", "
                "\"ops\": %lu, \"p50_us\": %.1f, \"mean_us\": %.1f, \"p90_us\": %.1f, "
                "\"max_us\": %.1f}",
                i ? "," : "", r->o->label, ranks, r->o->compute_ms, r->o->progress_us, w->mode,
                w->protocol, w->op, r->o->ops, w->p50, w->mean, w->p90, w->max);
    }
    fprintf(f, "\n]\n");
    fclose(f);
}

int main(int argc, char **argv)
{
    options_t o;
    int parsed = parse(argc, argv, &o), provided = 0, exit_code = 0;
    MPI_Init_thread(&argc, &argv, o.multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    if (!bench_cli_proceed(parsed, usage, &exit_code))
        return exit_code;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "mpidht_progress_bench: needs 2 or more ranks\n");
        MPI_Finalize();
        return 1;
    }
    FILE *json = NULL;
    if (!bench_cli_open_output("mpidht_progress_bench", o.json, &json)) {
        MPI_Finalize();
        return 1;
    }
    run_t r = {.o = &o, .samples = malloc(sizeof(double) * o.ops),
               .rows = calloc(2 * 14, sizeof(row_t)), .rng = 0x9e3779b97f4a7c15u};
    if (!r.samples || !r.rows)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (rank == 0)
        printf("%-5s %-9s %-9s %10s %10s %10s %10s   (µs; target computes %g ms slices, "
               "progress every %g µs)\n",
               "mode", "protocol", "op", "p50", "mean", "p90", "max", o.compute_ms,
               o.progress_us);
    static const mpidht_protocol_t protocols[] = {
        MPIDHT_PROTOCOL_COARSE, MPIDHT_PROTOCOL_FINE, MPIDHT_PROTOCOL_LOCKFREE};
    for (int busy = 0; busy < 2; ++busy) {
        for (int k = 0; k < 3; ++k)
            if (bench_listed(o.protocols, mpidht_protocol_name(protocols[k])))
                run_table(&r, protocols[k], busy);
        run_raw(&r, busy);
    }
    run_progress_cost(&r);
    if (json)
        write_json(&r, size, json);
    free(r.samples);
    free(r.rows);
    MPI_Finalize();
    return 0;
}
