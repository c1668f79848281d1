/*
 * mpidht_demo: every rank fills a table with its own keys, then reads back
 * keys written by all ranks (and some never written), and rank 0 prints
 * the statistics summed over the job. Run under mpirun, e.g.
 *
 *   mpirun -np 2 ./mpidht_demo --protocol lockfree --keys 20000
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpidht.h"

/* Keys each rank writes at most (about 2 minutes' work per rank on a
 * 2-core machine). */
#define MAX_KEYS 100000000ul

typedef struct {
    mpidht_protocol_t protocol;
    unsigned long keys;   /* per rank */
    unsigned long memory; /* bytes per rank */
} options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpidht_demo [--protocol coarse|fine|lockfree] [--keys N]\n"
            "                   [--memory BYTES] [--help]\n"
            "  --protocol  consistency protocol (default lockfree)\n"
            "  --keys      keys each rank writes, 1 to 100000000 (default 20000)\n"
            "  --memory    bytes of table each rank hosts (default 16777216)\n");
}

/* A whole decimal number in [min, max] (digits only: "-1" would wrap
 * around in strtoul); true if s is one, written to *out. */
static bool whole_number(const char *s, unsigned long min, unsigned long max,
                         unsigned long *out)
{
    char *end = NULL;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || errno == ERANGE || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* Says what is wrong with an argument (on rank 0) and returns 1. */
static int refuse(const char *what, const char *arg)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "mpidht_demo: %s '%s'\n", what, arg);
    return 1;
}

/* Returns 0 on success, 1 on a usage error (said on stderr), 2 for --help. */
static int parse(int argc, char **argv, options_t *o)
{
    o->protocol = MPIDHT_PROTOCOL_LOCKFREE;
    o->keys = 20000;
    o->memory = 16ul << 20;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return 2;
        if (strcmp(arg, "--protocol") != 0 && strcmp(arg, "--keys") != 0 &&
            strcmp(arg, "--memory") != 0)
            return refuse("unknown option", arg);
        if (!next)
            return refuse("no value after", arg);
        ++i;
        if (strcmp(arg, "--protocol") == 0) {
            if (strcmp(next, "coarse") == 0)
                o->protocol = MPIDHT_PROTOCOL_COARSE;
            else if (strcmp(next, "fine") == 0)
                o->protocol = MPIDHT_PROTOCOL_FINE;
            else if (strcmp(next, "lockfree") == 0)
                o->protocol = MPIDHT_PROTOCOL_LOCKFREE;
            else
                return refuse("--protocol takes coarse, fine or lockfree, not", next);
        } else if (strcmp(arg, "--keys") == 0) {
            if (!whole_number(next, 1, MAX_KEYS, &o->keys))
                return refuse("--keys takes a whole number from 1 to 100000000, not", next);
        } else if (!whole_number(next, 0, ULONG_MAX, &o->memory)) {
            return refuse("--memory takes a whole number of bytes, not", next);
        }
    }
    return 0;
}

static void fill(unsigned char *buf, size_t size, uint64_t id, uint64_t salt)
{
    uint64_t x = id * 0x9e3779b97f4a7c15u + salt;
    for (size_t i = 0; i < size; ++i) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        buf[i] = (unsigned char)(x >> 56);
    }
}

static int fail(const char *what, mpidht_status_t st)
{
    fprintf(stderr, "mpidht_demo: %s: %s\n", what, mpidht_strerror(st));
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options_t o;
    int parsed = parse(argc, argv, &o);
    if (parsed != 0) {
        if (rank == 0)
            usage(parsed == 2 ? stdout : stderr);
        MPI_Finalize();
        return parsed == 2 ? 0 : 1;
    }

    enum { KEY = 80, VALUE = 104 }; /* the paper's benchmark sizes */
    mpidht_params_t params;
    mpidht_params_init(&params);
    params.key_size = KEY;
    params.value_size = VALUE;
    params.memory_per_process = o.memory;
    params.protocol = o.protocol;
    mpidht_t *table = NULL;
    mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &params, &table);
    if (st != MPIDHT_OK)
        return fail("create", st);

    unsigned char key[KEY], value[VALUE], out[VALUE];
    double t0 = MPI_Wtime();
    for (unsigned long i = 0; i < o.keys; ++i) {
        fill(key, KEY, (uint64_t)rank * o.keys + i, 1);
        fill(value, VALUE, (uint64_t)rank * o.keys + i, 2);
        if ((st = mpidht_write(table, key, value, NULL)) != MPIDHT_OK)
            return fail("write", st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    unsigned long wrong = 0;
    for (unsigned long i = 0; i < o.keys; ++i) {
        /* Keys of the next rank, and every tenth one never written. */
        uint64_t id = (uint64_t)((rank + 1) % size) * o.keys + i;
        if (i % 10 == 9)
            id += (uint64_t)size * o.keys;
        fill(key, KEY, id, 1);
        st = mpidht_read(table, key, out);
        if (st == MPIDHT_OK) {
            fill(value, VALUE, id, 2);
            wrong += memcmp(out, value, VALUE) != 0;
        } else if (st != MPIDHT_NOT_FOUND) {
            return fail("read", st);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();

    mpidht_stats_t total = MPIDHT_STATS_INIT;
    mpidht_info_t info = MPIDHT_INFO_INIT;
    unsigned long all_wrong = 0;
    MPI_Reduce(&wrong, &all_wrong, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if ((st = mpidht_stats_global(table, &total)) != MPIDHT_OK)
        return fail("statistics", st);
    mpidht_get_info(table, &info);
    if (rank == 0) {
        printf("mpidht demo: %d ranks, protocol %s, window %s, %" PRIu64
               " buckets of %zu bytes\n",
               size, mpidht_protocol_name(info.protocol), mpidht_window_name(info.window),
               info.total_buckets, info.bucket_size);
        printf("  write phase %.3f s (%.0f writes/s), read phase %.3f s (%.0f reads/s)\n",
               t1 - t0, (double)o.keys * size / (t1 - t0), t2 - t1,
               (double)o.keys * size / (t2 - t1));
        for (int i = 0; i < MPIDHT_STATS_COUNT; ++i)
            printf("  %-17s %12" PRIu64 "  %s\n", mpidht_stats_name(i),
                   mpidht_stats_value(&total, i), mpidht_stats_description(i));
        printf("  wrong values      %12lu\n", all_wrong);
    }
    if ((st = mpidht_free(&table)) != MPIDHT_OK)
        return fail("free", st);
    MPI_Finalize();
    return all_wrong == 0 ? 0 : 1;
}
