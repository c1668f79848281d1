/*
 * mpidht_bench: the synthetic workloads of Lübke et al. (ICCS 2025,
 * section 5.2) for each consistency protocol, plus two physical-limit
 * references, under mpirun.
 *
 *   write   each rank writes --ops keys drawn from the distribution
 *   read    each rank reads back the keys it wrote (same draws)
 *   mixed   --read-percent reads, the rest writes, of the keys drawn for
 *           the write phase
 *   fill    a surrogate filling the table: each call reads keys never
 *           written (all miss), then, after --gap-bytes of other work,
 *           writes them; only the writes are timed (the write after a
 *           miss, read-for-insert). Not in the default --phases.
 *   raw-get one MPI_Get + flush of a random bucket-sized block of another
 *           rank's window (the one-sided limit), on the window kind the
 *           table uses by default (shared on one node); the block is a
 *           lock-free table's bucket, lock word and padding included
 *   memcpy  a copy of a random bucket-sized block from a large local array
 *           (the memory limit)
 *
 * Batches: --batch 1,8,64 runs the read phase once per listed size on the
 * same table, a size N > 1 as mpidht_read_batch calls of N keys (the same
 * keys in the same order; a rank's last call takes what is left), 1 as
 * single mpidht_read calls. --write-batch N makes the write phase's calls
 * mpidht_write_batch of N keys; --write-batch 1,8,64 measures several
 * sizes in one write phase, interleaved: rounds in which every rank writes
 * a block of keys, the next of its draws, with each size in turn (the
 * order rotating from round to round), all ranks starting each block
 * together, so that the sizes see the same filling of the table and the
 * same moods of the machine, and their ratios come from one run. Draws
 * are with replacement from the range, so part of each block rewrites
 * keys written before (over the suite's write phase about a quarter at 1
 * rank, three fifths at 4). The mixed phase always
 * makes single calls.
 * Throughput always counts keys, so batched and single rows compare
 * directly; a batched row has one latency sample per call: the call's
 * time divided by its keys.
 *
 * Keys are the drawn integer in key_size bytes, so every rank draws from
 * one key space and zipf keys collide across ranks as in the paper. Each
 * value carries its key's integer (in its first and last 8 bytes, or all
 * of a shorter value), and every value read is checked against its key
 * after the call, outside the timed interval: a read that returned
 * another key's value or a torn one ends the run with a message. The
 * time spent marking and checking is left out of the phase's time too. Each
 * operation is timed with the cycle counter (clock_gettime is too coarse
 * on the machines measured); latency percentiles come from all ranks'
 * samples, and beside them the slowest rank's: the highest of the ranks'
 * own p50 (p50_slowest_us) and p99 (p99_slowest_us); throughput is all
 * operations (keys) over the slowest rank's time.
 * Output: a table on stdout, and --csv / --json files.
 */
#define _DEFAULT_SOURCE /* madvise */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Beyond this mpidht_read_batch only adds chunks of 1024 keys. */
#define MAX_BATCH 65536ul
#define MAX_BATCH_SIZES 16

typedef struct {
    unsigned long ops;
    unsigned long batches[MAX_BATCH_SIZES]; /* keys per call, one read phase each */
    size_t batch_count;
    unsigned long write_batches[MAX_BATCH_SIZES]; /* keys per call in the write phase */
    size_t write_batch_count;
    size_t key_size, value_size;
    size_t memory;
    mpidht_window_kind_t window;
    mpidht_eviction_t eviction;
    bool zipf;
    double skew;
    uint64_t range;
    unsigned read_percent;
    const char *protocols; /* comma list */
    const char *phases;    /* comma list */
    const char *csv, *json;
    unsigned long gap_bytes; /* fill: bytes written between reads and writes */
} options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpidht_bench [options]\n"
            "  --protocols LIST   coarse,fine,lockfree (default all three)\n"
            "  --phases LIST      write,read,mixed,fill,raw-get,memcpy (default all but\n"
            "                     fill)\n"
            "  --dist uniform|zipf key distribution (default uniform)\n"
            "  --skew S           zipf skew in (0,1) (default 0.99)\n"
            "  --range N          keys are drawn from 1..N, N <= 2^63 (default 712500)\n"
            "  --ops N            operations per rank and phase (default 100000)\n"
            "  --batch LIST       keys per mpidht_read_batch call, 1..65536 each, e.g.\n"
            "                     1,8,64,512: one read phase per size on the same table\n"
            "                     (default 1: single mpidht_read calls; at most 16);\n"
            "                     the fill phase too, with mpidht_write_batch\n"
            "  --gap-bytes B      fill: bytes of its own memory each rank writes between a\n"
            "                     call's reads and its writes, untimed, as the work a\n"
            "                     miss stands for would (default 0)\n"
            "  --write-batch LIST keys per mpidht_write_batch call in the write phase,\n"
            "                     1..65536 each (default 1: single mpidht_write calls);\n"
            "                     several sizes, e.g. 1,8,64,512, are measured in one\n"
            "                     write phase, interleaved in blocks of 4096 keys; the\n"
            "                     mixed phase always makes single calls\n"
            "  --read-percent P   reads in the mixed phase (default 95)\n"
            "  --key-size B       bytes per key (default 80)\n"
            "  --value-size B     bytes per value (default 104)\n"
            "  --memory B         table bytes per rank (default 268435456)\n"
            "  --window KIND      auto, shared, allocate or create (default auto)\n"
            "  --eviction P       recency or last: which entry a full key evicts\n"
            "                     (default recency)\n"
            "  --csv FILE, --json FILE   also write the results there\n");
}

/* A whole decimal number (bench_cli_whole): 0 on success, -1 if not. */
static int parse_size(const char *s, unsigned long *out)
{
    unsigned long long v = 0;
    if (!bench_cli_whole(s, 0, ULONG_MAX, &v))
        return -1;
    *out = (unsigned long)v;
    return 0;
}

/* A comma list of 1..MAX_BATCH_SIZES batch sizes, each 1..MAX_BATCH,
 * into sizes[0..*count). */
static int parse_batches(const char *list, unsigned long *sizes, size_t *count)
{
    *count = 0;
    for (const char *p = list;; ++p) {
        size_t len = strcspn(p, ",");
        char item[16];
        unsigned long n = 0;
        if (len == 0 || len >= sizeof item || *count == MAX_BATCH_SIZES)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_size(item, &n) || n < 1 || n > MAX_BATCH)
            return -1;
        sizes[(*count)++] = n;
        p += len;
        if (!*p)
            return 0;
    }
}

/* Rank 0 says why the command line was rejected; returns 1 for parse(). */
static int reject(const char *option, const char *value, const char *wanted)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && value)
        fprintf(stderr, "mpidht_bench: %s '%s': expected %s\n", option, value, wanted);
    else if (rank == 0)
        fprintf(stderr, "mpidht_bench: %s: %s\n", option, wanted);
    return 1;
}

/* Whether every item of a comma list is one of names (and none empty). */
static const char *const protocol_names[] = {"coarse", "fine", "lockfree"};
static const char *const phase_names[] = {"write", "read", "mixed", "fill", "raw-get", "memcpy"};

/* 0 ok, 1 usage error (explained on stderr by rank 0), 2 help. */
static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.ops = 100000, .batches = {1}, .batch_count = 1,
                     .write_batches = {1}, .write_batch_count = 1,
                     .key_size = 80, .value_size = 104, .memory = 256ul << 20,
                     .window = MPIDHT_WINDOW_AUTO, .zipf = false, .skew = 0.99, .range = 712500,
                     .read_percent = 95, .protocols = "coarse,fine,lockfree",
                     .phases = "write,read,mixed,raw-get,memcpy"};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 2;
        if (strncmp(a, "--", 2) != 0)
            return reject(a, NULL, "not an option");
        if (i + 1 >= argc)
            return reject(a, NULL, "missing value (or unknown option)");
        const char *v = argv[++i];
        unsigned long n = 0;
        char *end = NULL;
        bool whole = parse_size(v, &n) == 0;
        if (!strcmp(a, "--protocols")) {
            if (!bench_known_items(v, protocol_names, 3))
                return reject(a, v, "a comma list of coarse, fine, lockfree");
            o->protocols = v;
        } else if (!strcmp(a, "--phases")) {
            if (!bench_known_items(v, phase_names, 6))
                return reject(a, v, "a comma list of write, read, mixed, fill, raw-get, memcpy");
            o->phases = v;
        } else if (!strcmp(a, "--dist")) {
            if (strcmp(v, "uniform") && strcmp(v, "zipf"))
                return reject(a, v, "uniform or zipf");
            o->zipf = !strcmp(v, "zipf");
        } else if (!strcmp(a, "--skew")) {
            o->skew = strtod(v, &end);
            if (end == v || *end || !(o->skew > 0 && o->skew < 1))
                return reject(a, v, "a number between 0 and 1, exclusive");
        } else if (!strcmp(a, "--range")) {
            /* Misses are drawn above the range, below 2^64. */
            if (!whole || n < 2 || n > (UINT64_C(1) << 63))
                return reject(a, v, "a whole number from 2 to 2^63 (9223372036854775808)");
            o->range = n;
        } else if (!strcmp(a, "--ops")) {
            if (!whole || n < 1 || n > INT32_MAX)
                return reject(a, v, "a whole number from 1 to 2147483647");
            o->ops = n;
        } else if (!strcmp(a, "--batch")) {
            if (parse_batches(v, o->batches, &o->batch_count))
                return reject(a, v, "a comma list of at most 16 whole numbers of keys per "
                                    "call, each from 1 to 65536");
        } else if (!strcmp(a, "--write-batch")) {
            if (parse_batches(v, o->write_batches, &o->write_batch_count))
                return reject(a, v, "a comma list of at most 16 whole numbers of keys per "
                                    "call, each from 1 to 65536");
        } else if (!strcmp(a, "--gap-bytes")) {
            if (!whole)
                return reject(a, v, "a whole number of bytes");
            o->gap_bytes = n;
        } else if (!strcmp(a, "--read-percent")) {
            if (!whole || n > 100)
                return reject(a, v, "a whole number from 0 to 100");
            o->read_percent = (unsigned)n;
        } else if (!strcmp(a, "--key-size")) {
            if (!whole || n < 8)
                return reject(a, v, "a whole number of bytes, at least 8");
            o->key_size = n;
        } else if (!strcmp(a, "--value-size")) {
            if (!whole || n < 1)
                return reject(a, v, "a whole number of bytes, at least 1");
            o->value_size = n;
        } else if (!strcmp(a, "--memory")) {
            if (!whole)
                return reject(a, v, "a whole number of bytes");
            o->memory = n;
        } else if (!strcmp(a, "--window")) {
            int k = 0;
            while (k <= MPIDHT_WINDOW_CREATE &&
                   strcmp(v, mpidht_window_name((mpidht_window_kind_t)k)) != 0)
                ++k;
            if (k > MPIDHT_WINDOW_CREATE)
                return reject(a, v, "auto, shared, allocate or create");
            o->window = (mpidht_window_kind_t)k;
        } else if (!strcmp(a, "--eviction")) {
            int k = 0;
            while (k <= MPIDHT_EVICT_LAST &&
                   strcmp(v, mpidht_eviction_name((mpidht_eviction_t)k)) != 0)
                ++k;
            if (k > MPIDHT_EVICT_LAST)
                return reject(a, v, "recency or last");
            o->eviction = (mpidht_eviction_t)k;
        } else if (!strcmp(a, "--csv"))
            o->csv = v;
        else if (!strcmp(a, "--json"))
            o->json = v;
        else
            return reject(a, NULL, "unknown option");
    }
    return 0;
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
    unsigned long batch; /* keys per call; 1 = single calls */
    double ops_per_s, p50_us, p99_us, mean_us, p50_slowest_us, p99_slowest_us;
    uint64_t ops, misses, checksum_mismatches, lock_retries;
} result_t;

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Gathers every rank's n samples (µs) and fills the latency fields;
 * throughput counts each rank's keys (n unless calls were batched). */
static void summarise(float *samples, unsigned long n, unsigned long keys, double elapsed,
                      result_t *r)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double slowest = 0;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    float *all = rank == 0 ? malloc(sizeof *all * n * (size_t)size) : NULL;
    MPI_Gather(samples, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    /* this rank's own p50 and p99 (samples is free to reorder now), the
     * highest of each to rank 0 */
    qsort(samples, n, sizeof *samples, compare_float);
    float own[2] = {samples[n / 2], samples[n * 99 / 100]}, highest[2] = {0, 0};
    MPI_Reduce(own, highest, 2, MPI_FLOAT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    if (!all) {
        fprintf(stderr, "mpidht_bench: out of memory for %zu latency samples\n",
                n * (size_t)size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    r->p50_slowest_us = highest[0];
    r->p99_slowest_us = highest[1];
    size_t total = n * (size_t)size;
    qsort(all, total, sizeof *all, compare_float);
    double sum = 0;
    for (size_t i = 0; i < total; ++i)
        sum += all[i];
    r->ops = (uint64_t)keys * (uint64_t)size;
    r->ops_per_s = (double)r->ops / slowest;
    r->p50_us = all[total / 2];
    r->p99_us = all[total * 99 / 100];
    r->mean_us = sum / (double)total;
    free(all);
}

typedef struct {
    const options_t *o;
    keygen_zipf_t zipf;
    double tpu; /* ticks per µs */
    unsigned char *keys, *values; /* --batch rows of key_size, value_size */
    uint64_t *ids;                /* the integer of each row's key */
    unsigned char *found;         /* --batch flags for mpidht_read_batch */
    float *samples;
    double unmeasured_us; /* marking values and checking reads, left out of
                           * a phase's time (keys/s as before they were checked) */
    unsigned char *gap;   /* fill: --gap-bytes of this rank's own */
} bench_t;

static uint64_t draw(bench_t *b, keygen_rng_t *rng)
{
    return b->o->zipf ? keygen_zipf_next(&b->zipf, rng) : 1 + keygen_next(rng) % b->o->range;
}

/* Writes key id into row `row` of the key buffer. */
static void make_key(bench_t *b, size_t row, uint64_t id)
{
    unsigned char *key = b->keys + row * b->o->key_size;
    memset(key, 0, b->o->key_size);
    memcpy(key, &id, sizeof id);
    b->ids[row] = id;
}

/* Puts id into a value: its first and its last 8 bytes (overlapping in a
 * value under 16 bytes, truncated in one under 8). */
static void mark_value(unsigned char *value, size_t size, uint64_t id)
{
    size_t n = size < sizeof id ? size : sizeof id;
    memcpy(value, &id, n);
    memcpy(value + size - n, &id, n);
}

/* Whether value carries id as mark_value puts it. */
static bool marked(const unsigned char *value, size_t size, uint64_t id)
{
    size_t n = size < sizeof id ? size : sizeof id;
    return memcmp(value, &id, n) == 0 && memcmp(value + size - n, &id, n) == 0;
}

static void check(mpidht_status_t st, const char *what)
{
    if (st != MPIDHT_OK && st != MPIDHT_NOT_FOUND) {
        fprintf(stderr, "mpidht_bench: %s: %s\n", what, mpidht_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Draws n keys into the key buffer and makes one call with them, timed: a
 * single mpidht_write or mpidht_read (n = 1, not batched) or a batched
 * call; returns its time per key in µs. */
static float timed_call(bench_t *b, mpidht_t *t, keygen_rng_t *keys, bool write, bool batched,
                        size_t n, const char *what)
{
    size_t vs = b->o->value_size;
    for (size_t k = 0; k < n; ++k)
        make_key(b, k, draw(b, keys));
    uint64_t m0 = ticks();
    for (size_t k = 0; k < n && write; ++k)
        mark_value(b->values + k * vs, vs, b->ids[k]);
    uint64_t c0 = ticks();
    mpidht_status_t st =
        batched ? (write ? mpidht_write_batch(t, n, b->keys, b->values, NULL)
                         : mpidht_read_batch(t, n, b->keys, b->values, b->found))
                : (write ? mpidht_write(t, b->keys, b->values, NULL)
                         : mpidht_read(t, b->keys, b->values));
    uint64_t c1 = ticks();
    check(st, what);
    for (size_t k = 0; k < n && !write; ++k) {
        bool hit = batched ? b->found[k] != 0 : st == MPIDHT_OK;
        if (hit && !marked(b->values + k * vs, vs, b->ids[k])) {
            fprintf(stderr, "mpidht_bench: %s: key %" PRIu64 " read a value that is not its "
                            "own (another key's, or torn)\n", what, b->ids[k]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    b->unmeasured_us += (double)(c0 - m0 + ticks() - c1) / b->tpu;
    return (float)((double)(c1 - c0) / b->tpu / (double)n);
}

/* One call of the fill phase: n keys never written (ids first_id..),
 * read (every one must miss), --gap-bytes written, then the keys written:
 * a single mpidht_read and mpidht_write (n = 1, not batched) or batched
 * calls. Returns the write's time per key in µs; the rest counts as
 * unmeasured. */
static float fill_call(bench_t *b, mpidht_t *t, uint64_t first_id, bool batched, size_t n)
{
    size_t vs = b->o->value_size;
    uint64_t m0 = ticks();
    for (size_t k = 0; k < n; ++k)
        make_key(b, k, first_id + k);
    mpidht_status_t st = batched ? mpidht_read_batch(t, n, b->keys, b->values, b->found)
                                 : mpidht_read(t, b->keys, b->values);
    check(st, "fill: read");
    for (size_t k = 0; k < n; ++k) {
        if (batched ? b->found[k] != 0 : st == MPIDHT_OK) {
            fprintf(stderr, "mpidht_bench: fill: key %" PRIu64 ", never written, was found\n",
                    b->ids[k]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mark_value(b->values + k * vs, vs, b->ids[k]);
    }
    if (b->o->gap_bytes > 0)
        memset(b->gap, (int)(first_id & 0xff), b->o->gap_bytes);
    uint64_t c0 = ticks();
    st = batched ? mpidht_write_batch(t, n, b->keys, b->values, NULL)
                 : mpidht_write(t, b->keys, b->values, NULL);
    uint64_t c1 = ticks();
    check(st, "fill: write");
    b->unmeasured_us += (double)(c0 - m0) / b->tpu;
    return (float)((double)(c1 - c0) / b->tpu / (double)n);
}

/* Runs one DHT phase, with calls of `batch` keys in the write, read and
 * fill phases (1: single calls); fills r on rank 0. */
static void run_dht_phase(bench_t *b, mpidht_t *t, const char *phase, unsigned long batch,
                          uint64_t seed, result_t *r)
{
    const options_t *o = b->o;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    keygen_rng_t keys = {seed + (uint64_t)rank * 7919u}, mix = {seed * 31u + (uint64_t)rank + 5};
    mpidht_stats_t before = MPIDHT_STATS_INIT, after = MPIDHT_STATS_INIT;
    check(mpidht_stats_global(t, &before), "statistics");
    MPI_Barrier(MPI_COMM_WORLD);
    bool batched = batch > 1 && strcmp(phase, "mixed") != 0;
    bool writes = !strcmp(phase, "write"), mixed = !strcmp(phase, "mixed");
    bool fill = !strcmp(phase, "fill");
    /* fill: keys above the range (misses), this rank's own, fresh in every
     * pass (seed) */
    uint64_t fresh = o->range + 1 + ((uint64_t)rank << 40) + (seed << 32);
    unsigned long calls = 0;
    b->unmeasured_us = 0;
    double t0 = MPI_Wtime();
    for (unsigned long done = 0; done < o->ops;) {
        size_t n = !batched ? 1 : o->ops - done < batch ? o->ops - done : batch;
        bool write = writes || (mixed && keygen_next(&mix) % 100 >= o->read_percent);
        b->samples[calls++] = fill ? fill_call(b, t, fresh + done, batched, n)
                                   : timed_call(b, t, &keys, write, batched, n, phase);
        done += n;
    }
    double elapsed = MPI_Wtime() - t0 - b->unmeasured_us * 1e-6;
    check(mpidht_stats_global(t, &after), "statistics");
    summarise(b->samples, calls, o->ops, elapsed, r);
    r->batch = batched ? batch : 1;
    r->phase = phase;
    r->misses = after.misses - before.misses;
    r->checksum_mismatches = after.checksum_retries - before.checksum_retries;
    r->lock_retries = after.lock_retries - before.lock_retries;
}

/* Keys per rank that each size writes in one round of the interleaved
 * write phase. */
#define WRITE_BLOCK 4096ul
/* Keys per call of the warm-up's reads. */
#define WARM_UP_CALL 64ul

/* Reads keys outside the workload's range (misses that look at every
 * candidate) until this process has touched about 99 % of the table's
 * pages once: the first touch of a page of another process's memory
 * costs a page fault, which would otherwise weigh on whichever size of
 * an interleaved phase comes first. Untimed. */
static void warm_up(bench_t *b, mpidht_t *t)
{
    mpidht_info_t info = MPIDHT_INFO_INIT;
    check(mpidht_get_info(t, &info), "info");
    uint64_t pages = info.total_buckets * info.bucket_size / 4096 + 1;
    uint64_t reads = 5 * pages / info.candidates + 1;
    keygen_rng_t rng = {0x5eed};
    for (uint64_t done = 0; done < reads; done += WARM_UP_CALL) {
        for (size_t r = 0; r < WARM_UP_CALL; ++r)
            make_key(b, r, b->o->range + 1 + keygen_next(&rng) % (UINT64_MAX / 2));
        check(mpidht_read_batch(t, WARM_UP_CALL, b->keys, b->values, b->found),
              "warm-up read");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The write phase with several call sizes (o->write_batches), interleaved
 * as described at the top; fills results[k] for size k on rank 0. Each
 * size's time is the sum over its blocks of the slowest rank's time. */
static void run_write_interleaved(bench_t *b, mpidht_t *t, result_t *results)
{
    const options_t *o = b->o;
    size_t count = o->write_batch_count;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    warm_up(b, t);
    keygen_rng_t keys = {1 + (uint64_t)rank * 7919u};
    double time[MAX_BATCH_SIZES] = {0};
    unsigned long done[MAX_BATCH_SIZES] = {0}, calls[MAX_BATCH_SIZES] = {0};
    uint64_t retries[MAX_BATCH_SIZES] = {0};
    unsigned long rounds = (o->ops + WRITE_BLOCK - 1) / WRITE_BLOCK;
    for (unsigned long round = 0; round < rounds; ++round) {
        for (size_t j = 0; j < count; ++j) {
            size_t k = (round + j) % count;
            unsigned long batch = o->write_batches[k];
            unsigned long block = o->ops - done[k] < WRITE_BLOCK ? o->ops - done[k] : WRITE_BLOCK;
            float *samples = b->samples + k * o->ops;
            mpidht_stats_t before = MPIDHT_STATS_INIT, after = MPIDHT_STATS_INIT;
            check(mpidht_stats_local(t, &before), "statistics");
            MPI_Barrier(MPI_COMM_WORLD);
            b->unmeasured_us = 0;
            double t0 = MPI_Wtime();
            for (unsigned long d = 0; d < block;) {
                size_t n = block - d < batch ? block - d : batch;
                samples[calls[k]++] = timed_call(b, t, &keys, true, batch > 1, n, "write");
                d += n;
            }
            double elapsed = MPI_Wtime() - t0 - b->unmeasured_us * 1e-6, slowest = 0;
            MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            check(mpidht_stats_local(t, &after), "statistics");
            time[k] += slowest;
            done[k] += block;
            retries[k] += after.lock_retries - before.lock_retries;
        }
    }
    for (size_t k = 0; k < count; ++k) {
        result_t *r = &results[k];
        summarise(b->samples + k * o->ops, calls[k], o->ops, time[k], r);
        uint64_t total = 0;
        MPI_Reduce(&retries[k], &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        r->batch = o->write_batches[k];
        r->phase = "write";
        r->misses = r->checksum_mismatches = 0;
        r->lock_retries = total;
    }
}

/* The size of a lock-free table's bucket (lock and recency words,
 * checksum, meta byte, key, value, padding) for these key and value
 * sizes, as mpidht_get_info gives it: the block the references move.
 * Collective. */
static size_t lockfree_bucket_size(const options_t *o)
{
    mpidht_params_t params;
    mpidht_params_init(&params);
    params.key_size = o->key_size;
    params.value_size = o->value_size;
    params.memory_per_process = (size_t)1 << 20;
    params.protocol = MPIDHT_PROTOCOL_LOCKFREE;
    mpidht_t *t = NULL;
    mpidht_info_t info = MPIDHT_INFO_INIT;
    check(mpidht_create(MPI_COMM_WORLD, &params, &t), "create");
    check(mpidht_get_info(t, &info), "info");
    mpidht_free(&t);
    return info.bucket_size;
}

/* Advises the whole huge pages inside [base, base + bytes) for huge pages,
 * as mpidht_create does for a table's memory, so that the references'
 * memory is paged as the table's is (where the system gives huge pages on
 * advice; elsewhere, and for shared memory it keeps on small pages, the
 * advice changes nothing). */
static void advise_huge_pages(void *base, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    unsigned long long size = 0;
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    if (f) {
        if (fscanf(f, "%llu", &size) != 1)
            size = 0;
        fclose(f);
    }
    if (size == 0 || (size & (size - 1)) != 0)
        return; /* no transparent huge pages */
    const uintptr_t mask = (uintptr_t)size - 1;
    uintptr_t start = ((uintptr_t)base + mask) & ~mask;
    uintptr_t end = ((uintptr_t)base + bytes) & ~mask;
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)base;
    (void)bytes;
#endif
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
        advise_huge_pages(base, bytes);
        memset(base, 1, bytes); /* touch every page before timing */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    } else {
        base = malloc(bytes);
        if (!base) {
            fprintf(stderr, "mpidht_bench: out of memory for the memcpy reference's %zu "
                            "bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        advise_huge_pages(base, bytes);
        memset(base, 1, bytes);
    }
    keygen_rng_t rng = {99 + (uint64_t)rank};
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (unsigned long i = 0; i < o->ops; ++i) {
        size_t at = (keygen_next(&rng) % blocks) * block;
        int other = size == 1 ? 0 : (int)(keygen_next(&rng) % (uint64_t)(size - 1));
        int target = size == 1 ? 0 : (rank + 1 + other) % size;
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
    summarise(b->samples, o->ops, o->ops, elapsed, r);
    r->protocol = "-";
    r->batch = 1;
    r->phase = phase;
    r->misses = r->checksum_mismatches = r->lock_retries = 0;
}

static void report(const result_t *r, const options_t *o, int ranks, FILE *csv, FILE *json,
                   bool *first_json)
{
    const char *dist = o->zipf ? "zipf" : "uniform";
    printf("%-9s %-8s %-8s %5d %5lu %10" PRIu64 " %12.0f %9.3f %9.3f %9.3f %8" PRIu64 " %9" PRIu64
           " %8" PRIu64 " %9.3f %9.3f\n",
           r->protocol, r->phase, dist, ranks, r->batch, r->ops, r->ops_per_s, r->p50_us,
           r->p99_us, r->mean_us, r->misses, r->checksum_mismatches, r->lock_retries,
           r->p50_slowest_us, r->p99_slowest_us);
    if (csv)
        fprintf(csv, "%s,%s,%s,%d,%lu,%" PRIu64 ",%.0f,%.4f,%.4f,%.4f,%" PRIu64 ",%" PRIu64
                     ",%" PRIu64 ",%.4f,%.4f\n",
                r->protocol, r->phase, dist, ranks, r->batch, r->ops, r->ops_per_s, r->p50_us,
                r->p99_us, r->mean_us, r->misses, r->checksum_mismatches, r->lock_retries,
                r->p50_slowest_us, r->p99_slowest_us);
    if (json) {
        fprintf(json,
                "%s\n  {\"protocol\": \"%s\", \"phase\": \"%s\", \"distribution\": \"%s\", "
                "\"ranks\": %d, \"window\": \"%s\", \"eviction\": \"%s\", \"batch\": %lu, "
                "\"ops\": %" PRIu64
                ", \"ops_per_s\": %.0f, "
                "\"p50_us\": %.4f, \"p99_us\": %.4f, \"mean_us\": %.4f, \"misses\": %" PRIu64
                ", \"checksum_mismatches\": %" PRIu64 ", \"lock_retries\": %" PRIu64
                ", \"p50_slowest_us\": %.4f, \"p99_slowest_us\": %.4f}",
                *first_json ? "" : ",", r->protocol, r->phase, dist, ranks,
                mpidht_window_name(o->window), mpidht_eviction_name(o->eviction), r->batch,
                r->ops,
                r->ops_per_s, r->p50_us, r->p99_us, r->mean_us, r->misses,
                r->checksum_mismatches, r->lock_retries, r->p50_slowest_us,
                r->p99_slowest_us);
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
    unsigned long rows = WARM_UP_CALL;
    for (size_t i = 0; i < o.batch_count; ++i)
        rows = o.batches[i] > rows ? o.batches[i] : rows;
    for (size_t i = 0; i < o.write_batch_count; ++i)
        rows = o.write_batches[i] > rows ? o.write_batches[i] : rows;
    b.keys = calloc(rows, o.key_size);
    b.values = calloc(rows, o.value_size);
    b.found = calloc(rows, 1);
    b.gap = o.gap_bytes > 0 ? malloc(o.gap_bytes) : NULL;
    b.ids = calloc(rows, sizeof *b.ids);
    b.samples = malloc(sizeof *b.samples * o.ops * o.write_batch_count);
    if (!b.keys || !b.values || !b.found || !b.ids || !b.samples ||
        (o.gap_bytes > 0 && !b.gap)) {
        fprintf(stderr, "mpidht_bench: out of memory for %lu keys of %zu bytes and values "
                        "of %zu bytes per call\n", rows, o.key_size, o.value_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    b.tpu = ticks_per_us();
    MPI_Bcast(&b.tpu, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    FILE *csv = NULL, *json = NULL;
    bool first_json = true;
    if (!bench_cli_open_output("mpidht_bench", o.csv, &csv) ||
        !bench_cli_open_output("mpidht_bench", o.json, &json)) {
        if (csv)
            fclose(csv);
        MPI_Finalize();
        return 1;
    }
    if (rank == 0) {
        if (csv)
            fprintf(csv, "protocol,phase,distribution,ranks,batch,ops,ops_per_s,p50_us,p99_us,"
                         "mean_us,misses,checksum_mismatches,lock_retries,p50_slowest_us,"
                         "p99_slowest_us\n");
        if (json)
            fprintf(json, "[");
        printf("%-9s %-8s %-8s %5s %5s %10s %12s %9s %9s %9s %8s %9s %8s %9s %9s\n",
               "protocol", "phase", "dist", "ranks", "batch", "ops", "ops/s", "p50_us", "p99_us",
               "mean_us", "misses", "cs_retry", "lock_rt", "p50_max", "p99_max");
    }

    static const mpidht_protocol_t protocols[] = {
        MPIDHT_PROTOCOL_COARSE, MPIDHT_PROTOCOL_FINE, MPIDHT_PROTOCOL_LOCKFREE};
    static const char *const dht_phases[] = {"write", "read", "mixed", "fill"};
    for (int p = 0; p < 3; ++p) {
        const char *name = mpidht_protocol_name(protocols[p]);
        if (!bench_listed(o.protocols, name))
            continue;
        mpidht_params_t params;
        mpidht_params_init(&params);
        params.key_size = o.key_size;
        params.value_size = o.value_size;
        params.memory_per_process = o.memory;
        params.protocol = protocols[p];
        params.window = o.window;
        params.eviction = o.eviction;
        mpidht_t *t = NULL;
        mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &params, &t);
        if (st != MPIDHT_OK) {
            if (rank == 0)
                fprintf(stderr, "mpidht_bench: create: %s\n", mpidht_strerror(st));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int ph = 0; ph < 4; ++ph) {
            if (!bench_listed(o.phases, dht_phases[ph]))
                continue;
            if (ph == 0 && o.write_batch_count > 1) {
                result_t rows_out[MAX_BATCH_SIZES];
                run_write_interleaved(&b, t, rows_out);
                for (size_t k = 0; k < o.write_batch_count && rank == 0; ++k) {
                    rows_out[k].protocol = name;
                    report(&rows_out[k], &o, size, csv, json, &first_json);
                }
                continue;
            }
            /* the read and fill phases run once per --batch size; write and
             * mixed once */
            size_t passes = ph == 1 || ph == 3 ? o.batch_count : 1;
            for (size_t k = 0; k < passes; ++k) {
                unsigned long batch = ph == 0 ? o.write_batches[0]
                                      : ph == 1 || ph == 3 ? o.batches[k] : 1;
                result_t r = {.protocol = name};
                /* every phase replays the write phase's key draws (fill:
                 * draws keys of its own, fresh in each pass) */
                run_dht_phase(&b, t, dht_phases[ph], batch, ph == 3 ? 1 + k : 1, &r);
                if (rank == 0)
                    report(&r, &o, size, csv, json, &first_json);
            }
        }
        mpidht_free(&t);
    }
    size_t block = lockfree_bucket_size(&o);
    static const char *const references[] = {"raw-get", "memcpy"};
    for (int i = 0; i < 2; ++i) {
        if (!bench_listed(o.phases, references[i]))
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
    free(b.keys);
    free(b.values);
    free(b.found);
    free(b.gap);
    free(b.ids);
    free(b.samples);
    MPI_Finalize();
    return 0;
}
