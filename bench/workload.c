/*
 * mpidht_bench: the synthetic workloads of Lübke et al. (ICCS 2025,
 * section 5.2) for each consistency protocol, plus two physical-limit
 * references, under mpirun.
 *
 *   write   each rank writes --ops keys drawn from the distribution
 *   read    each rank reads back the keys it wrote (same draws)
 *   mixed   --read-percent reads, the rest writes, of the keys drawn for
 *           the write phase
 *   raw-get one MPI_Get + flush of a bucket-sized block at a random offset
 *           of another rank's window (the one-sided limit), on the window
 *           kind the table uses by default (shared on one node)
 *   memcpy  a copy of a random bucket-sized block from a large local array
 *           (the memory limit)
 *
 * Keys are the drawn integer in key_size bytes, so every rank draws from
 * one key space and zipf keys collide across ranks as in the paper. Each
 * operation is timed with the cycle counter (clock_gettime is too coarse
 * on the machines measured); latency percentiles come from all ranks'
 * samples; throughput is all operations over the slowest rank's time.
 * Output: a table on stdout, and --csv / --json files.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "keygen.h"
#include "cli.h"
#include "mpidht.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
/* rdtscp waits until every earlier instruction has executed (loads
 * included), and the fence keeps later ones from starting early, so the
 * interval covers the whole operation. */
static inline uint64_t ticks(void)
{
    unsigned aux;
    uint64_t t = __rdtscp(&aux);
    _mm_lfence();
    return t;
}
#else
static inline uint64_t ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

typedef struct {
    unsigned long ops;
    size_t key_size, value_size;
    size_t memory;
    bool zipf;
    double skew;
    uint64_t range;
    unsigned read_percent;
    const char *protocols; /* comma list */
    const char *phases;    /* comma list */
    const char *csv, *json;
} options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpidht_bench [options]\n"
            "  --protocols LIST   coarse,fine,lockfree (default all three)\n"
            "  --phases LIST      write,read,mixed,raw-get,memcpy (default all)\n"
            "  --dist uniform|zipf key distribution (default uniform)\n"
            "  --skew S           zipf skew in (0,1) (default 0.99)\n"
            "  --range N          keys are drawn from 1..N (default 712500)\n"
            "  --ops N            operations per rank and phase (default 100000)\n"
            "  --read-percent P   reads in the mixed phase (default 95)\n"
            "  --key-size B       bytes per key (default 80)\n"
            "  --value-size B     bytes per value (default 104)\n"
            "  --memory B         table bytes per rank (default 268435456)\n"
            "  --csv FILE, --json FILE   also write the results there\n");
}

static int parse_size(const char *s, unsigned long *out)
{
    char *end = NULL;
    *out = strtoul(s, &end, 10);
    return *end || *s == '-' ? -1 : 0;
}

/* 0 ok, 1 usage error, 2 help. */
static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.ops = 100000, .key_size = 80, .value_size = 104,
                     .memory = 256ul << 20, .zipf = false, .skew = 0.99,
                     .range = 712500, .read_percent = 95,
                     .protocols = "coarse,fine,lockfree",
                     .phases = "write,read,mixed,raw-get,memcpy"};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 2;
        if (i + 1 >= argc)
            return 1;
        const char *v = argv[++i];
        unsigned long n = 0;
        char *end = NULL;
        if (!strcmp(a, "--protocols"))
            o->protocols = v;
        else if (!strcmp(a, "--phases"))
            o->phases = v;
        else if (!strcmp(a, "--dist") && (!strcmp(v, "uniform") || !strcmp(v, "zipf")))
            o->zipf = !strcmp(v, "zipf");
        else if (!strcmp(a, "--skew")) {
            o->skew = strtod(v, &end);
            if (*end || !(o->skew > 0 && o->skew < 1))
                return 1;
        } else if (!strcmp(a, "--range") && !parse_size(v, &n) && n >= 2)
            o->range = n;
        else if (!strcmp(a, "--ops") && !parse_size(v, &n) && n > 0)
            o->ops = n;
        else if (!strcmp(a, "--read-percent") && !parse_size(v, &n) && n <= 100)
            o->read_percent = (unsigned)n;
        else if (!strcmp(a, "--key-size") && !parse_size(v, &n) && n >= 8)
            o->key_size = n;
        else if (!strcmp(a, "--value-size") && !parse_size(v, &n) && n > 0)
            o->value_size = n;
        else if (!strcmp(a, "--memory") && !parse_size(v, &n))
            o->memory = n;
        else if (!strcmp(a, "--csv"))
            o->csv = v;
        else if (!strcmp(a, "--json"))
            o->json = v;
        else
            return 1;
    }
    return 0;
}

static bool listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return true;
    return false;
}

/* Cycle-counter ticks per microsecond, measured against MPI_Wtime. */
static double ticks_per_us(void)
{
    double t0 = MPI_Wtime();
    uint64_t c0 = ticks();
    while (MPI_Wtime() - t0 < 0.2)
        ;
    return (double)(ticks() - c0) / ((MPI_Wtime() - t0) * 1e6);
}

typedef struct {
    const char *protocol, *phase;
    double ops_per_s, p50_us, p99_us, mean_us;
    uint64_t ops, misses, checksum_mismatches, corrupt_reads;
} result_t;

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Gathers every rank's samples (µs) and fills the latency fields. */
static void summarise(float *samples, unsigned long n, double elapsed, result_t *r)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    float *all = rank == 0 ? malloc(sizeof *all * n * (size_t)size) : NULL;
    MPI_Gather(samples, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    size_t total = n * (size_t)size;
    qsort(all, total, sizeof *all, compare_float);
    double sum = 0;
    for (size_t i = 0; i < total; ++i)
        sum += all[i];
    r->ops = total;
    r->ops_per_s = (double)total / slowest;
    r->p50_us = all[total / 2];
    r->p99_us = all[total * 99 / 100];
    r->mean_us = sum / (double)total;
    free(all);
}

typedef struct {
    const options_t *o;
    keygen_zipf_t zipf;
    double tpu; /* ticks per µs */
    unsigned char *key, *value;
    float *samples;
} bench_t;

static uint64_t draw(bench_t *b, keygen_rng_t *rng)
{
    return b->o->zipf ? keygen_zipf_next(&b->zipf, rng) : 1 + keygen_next(rng) % b->o->range;
}

static void make_key(bench_t *b, uint64_t id)
{
    memset(b->key, 0, b->o->key_size);
    memcpy(b->key, &id, sizeof id);
}

static void check(mpidht_status_t st, const char *what)
{
    if (st != MPIDHT_OK && st != MPIDHT_NOT_FOUND) {
        fprintf(stderr, "mpidht_bench: %s: %s\n", what, mpidht_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Runs one DHT phase; fills r on rank 0. */
static void run_dht_phase(bench_t *b, mpidht_t *t, const char *phase, uint64_t seed,
                          result_t *r)
{
    const options_t *o = b->o;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    keygen_rng_t keys = {seed + (uint64_t)rank * 7919u}, mix = {seed * 31u + (uint64_t)rank + 5};
    mpidht_stats_t before, after;
    check(mpidht_stats_global(t, &before), "statistics");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (unsigned long i = 0; i < o->ops; ++i) {
        make_key(b, draw(b, &keys));
        bool write = !strcmp(phase, "write") ||
                     (!strcmp(phase, "mixed") && keygen_next(&mix) % 100 >= o->read_percent);
        uint64_t c0 = ticks();
        check(write ? mpidht_write(t, b->key, b->value, NULL) : mpidht_read(t, b->key, b->value),
              phase);
        b->samples[i] = (float)((double)(ticks() - c0) / b->tpu);
    }
    double elapsed = MPI_Wtime() - t0;
    check(mpidht_stats_global(t, &after), "statistics");
    summarise(b->samples, o->ops, elapsed, r);
    r->phase = phase;
    r->misses = after.misses - before.misses;
    r->checksum_mismatches = after.checksum_retries - before.checksum_retries;
    r->corrupt_reads = after.corrupt_reads - before.corrupt_reads;
}

/* The limits: one-sided get of a bucket-sized block, and a local copy. */
static void run_reference(bench_t *b, const char *phase, size_t block, result_t *r)
{
    const options_t *o = b->o;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bytes = o->memory < block * 2 ? block * 2 : o->memory;
    size_t blocks = bytes / block;
    unsigned char *buf = malloc(block), *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    bool get = !strcmp(phase, "raw-get");
    if (get) {
        MPI_Comm node;
        int node_size = 0;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
        if (node_size == size)
            MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                                    &win);
        else
            MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        memset(base, 1, bytes); /* touch every page before timing */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    } else {
        base = malloc(bytes);
        memset(base, 1, bytes);
    }
    keygen_rng_t rng = {99 + (uint64_t)rank};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (unsigned long i = 0; i < o->ops; ++i) {
        size_t at = (keygen_next(&rng) % blocks) * block;
        int target = size == 1 ? 0
                                : (rank + 1 + (int)(keygen_next(&rng) % (uint64_t)(size - 1))) % size;
        uint64_t c0 = ticks();
        if (get) {
            MPI_Get(buf, (int)block, MPI_BYTE, target, (MPI_Aint)at, (int)block, MPI_BYTE, win);
            MPI_Win_flush(target, win);
        } else {
            memcpy(buf, base + at, block);
            __asm__ volatile("" : : "r"(buf) : "memory"); /* keep the copy */
        }
        b->samples[i] = (float)((double)(ticks() - c0) / b->tpu);
    }
    double elapsed = MPI_Wtime() - t0;
    if (get) {
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    } else {
        free(base);
    }
    free(buf);
    summarise(b->samples, o->ops, elapsed, r);
    r->protocol = "-";
    r->phase = phase;
    r->misses = r->checksum_mismatches = r->corrupt_reads = 0;
}

static void report(const result_t *r, const options_t *o, int ranks, FILE *csv, FILE *json,
                   bool *first_json)
{
    const char *dist = o->zipf ? "zipf" : "uniform";
    printf("%-9s %-8s %-8s %5d %10" PRIu64 " %12.0f %9.3f %9.3f %9.3f %8" PRIu64 " %9" PRIu64
           " %8" PRIu64 "\n",
           r->protocol, r->phase, dist, ranks, r->ops, r->ops_per_s, r->p50_us, r->p99_us,
           r->mean_us, r->misses, r->checksum_mismatches, r->corrupt_reads);
    if (csv)
        fprintf(csv, "%s,%s,%s,%d,%" PRIu64 ",%.0f,%.4f,%.4f,%.4f,%" PRIu64 ",%" PRIu64
                     ",%" PRIu64 "\n",
                r->protocol, r->phase, dist, ranks, r->ops, r->ops_per_s, r->p50_us,
                r->p99_us, r->mean_us, r->misses, r->checksum_mismatches, r->corrupt_reads);
    if (json) {
        fprintf(json,
                "%s\n  {\"protocol\": \"%s\", \"phase\": \"%s\", \"distribution\": \"%s\", "
                "\"ranks\": %d, \"ops\": %" PRIu64 ", \"ops_per_s\": %.0f, \"p50_us\": %.4f, "
                "\"p99_us\": %.4f, \"mean_us\": %.4f, \"misses\": %" PRIu64
                ", \"checksum_mismatches\": %" PRIu64 ", \"corrupt_reads\": %" PRIu64 "}",
                *first_json ? "" : ",", r->protocol, r->phase, dist, ranks, r->ops,
                r->ops_per_s, r->p50_us, r->p99_us, r->mean_us, r->misses,
                r->checksum_mismatches, r->corrupt_reads);
        *first_json = false;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options_t o;
    int exit_code = 0;
    if (!bench_cli_proceed(parse(argc, argv, &o), usage, &exit_code))
        return exit_code;
    bench_t b = {.o = &o};
    if (o.zipf && keygen_zipf_init(&b.zipf, o.range, o.skew) != 0) {
        if (rank == 0)
            fprintf(stderr, "mpidht_bench: bad zipf range or skew\n");
        MPI_Finalize();
        return 1;
    }
    b.key = malloc(o.key_size);
    b.value = calloc(1, o.value_size);
    b.samples = malloc(sizeof *b.samples * o.ops);
    b.tpu = ticks_per_us();
    MPI_Bcast(&b.tpu, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    FILE *csv = NULL, *json = NULL;
    bool first_json = true;
    if (rank == 0) {
        if (o.csv && (csv = fopen(o.csv, "w")))
            fprintf(csv, "protocol,phase,distribution,ranks,ops,ops_per_s,p50_us,p99_us,"
                         "mean_us,misses,checksum_mismatches,corrupt_reads\n");
        if (o.json && (json = fopen(o.json, "w")))
            fprintf(json, "[");
        printf("%-9s %-8s %-8s %5s %10s %12s %9s %9s %9s %8s %9s %8s\n", "protocol", "phase",
               "dist", "ranks", "ops", "ops/s", "p50_us", "p99_us", "mean_us", "misses",
               "cs_retry", "corrupt");
    }

    static const mpidht_protocol_t protocols[] = {
        MPIDHT_PROTOCOL_COARSE, MPIDHT_PROTOCOL_FINE, MPIDHT_PROTOCOL_LOCKFREE};
    static const char *const dht_phases[] = {"write", "read", "mixed"};
    for (int p = 0; p < 3; ++p) {
        const char *name = mpidht_protocol_name(protocols[p]);
        if (!listed(o.protocols, name))
            continue;
        mpidht_params_t params;
        mpidht_params_init(&params);
        params.key_size = o.key_size;
        params.value_size = o.value_size;
        params.memory_per_process = o.memory;
        params.protocol = protocols[p];
        mpidht_t *t = NULL;
        mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &params, &t);
        if (st != MPIDHT_OK) {
            if (rank == 0)
                fprintf(stderr, "mpidht_bench: create: %s\n", mpidht_strerror(st));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int ph = 0; ph < 3; ++ph) {
            if (!listed(o.phases, dht_phases[ph]))
                continue;
            result_t r = {.protocol = name};
            /* every phase replays the write phase's key draws */
            run_dht_phase(&b, t, dht_phases[ph], 1, &r);
            if (rank == 0)
                report(&r, &o, size, csv, json, &first_json);
        }
        mpidht_free(&t);
    }
    /* The lock-free bucket: checksum, meta byte, key, value, padding. */
    size_t block = (1 + o.key_size + o.value_size + 4 + 7) & ~(size_t)7;
    static const char *const references[] = {"raw-get", "memcpy"};
    for (int i = 0; i < 2; ++i) {
        if (!listed(o.phases, references[i]))
            continue;
        result_t r = {0};
        run_reference(&b, references[i], block, &r);
        if (rank == 0)
            report(&r, &o, size, csv, json, &first_json);
    }
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    if (csv)
        fclose(csv);
    free(b.key);
    free(b.value);
    free(b.samples);
    MPI_Finalize();
    return 0;
}
