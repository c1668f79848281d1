/*
 * mpidht_latency: single-operation latency of each protocol. All ranks
 * fill a table with their own keys, then each rank issues one operation at
 * a time, for a fixed wall time per phase, against keys of all ranks:
 *
 *   read-hit   keys that are present
 *   read-miss  keys that were never written
 *   update     rewrites of present keys (in place)
 *
 * Latency is the phase's elapsed time over its operation count, per rank
 * (on the virtual machines measured, clock_gettime advances in steps of
 * about 0.23 us, too coarse to time one call), averaged over ranks;
 * throughput is summed over ranks.
 *
 *   mpirun -np 2 ./mpidht_latency [--seconds S] [--keys N] [--window KIND]
 *                                 [--csv FILE]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "cli.h"
#include "mpidht.h"

enum { KEY = 80, VALUE = 104, BATCH = 256 };
/* At most this many keys per rank: four times as many buckets of 256
 * bytes still fit in a 64-bit budget with room to spare. */
#define MAX_KEYS (1ull << 40)

typedef struct {
    double seconds;
    unsigned long keys;
    const char *csv;
    mpidht_window_kind_t window;
} options_t;

typedef enum { READ_HIT, READ_MISS, UPDATE, PHASES } phase_t;
static const char *const phase_names[PHASES] = {"read-hit", "read-miss", "update"};

static void usage(FILE *out)
{
    fprintf(out, "usage: mpidht_latency [--seconds S] [--keys N] [--window KIND] [--csv FILE]\n"
                 "                      [--help]\n"
                 "  --seconds  wall time of each phase, at most 3600 (default 1.0)\n"
                 "  --keys     keys each rank writes before timing, 1 to 2^40 (default 50000)\n"
                 "  --window   auto, shared, allocate or create (default auto)\n"
                 "  --csv      also write the results to FILE as CSV\n");
}

static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.seconds = 1.0, .keys = 50000, .csv = NULL,
                     .window = MPIDHT_WINDOW_AUTO};
    for (int i = 1; i < argc; ++i) {
        char *end = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 2;
        if (i + 1 >= argc)
            return 1;
        const char *v = argv[++i];
        if (!strcmp(argv[i - 1], "--seconds")) {
            o->seconds = strtod(v, &end);
            if (end == v || *end || !(o->seconds > 0 && o->seconds <= 3600))
                return 1;
        } else if (!strcmp(argv[i - 1], "--keys")) {
            unsigned long long n = 0;
            if (!bench_cli_whole(v, 1, MAX_KEYS, &n))
                return 1;
            o->keys = (unsigned long)n;
        } else if (!strcmp(argv[i - 1], "--window")) {
            while (strcmp(v, mpidht_window_name(o->window)) != 0) {
                if (o->window == MPIDHT_WINDOW_CREATE)
                    return 1; /* not a window kind */
                o->window = (mpidht_window_kind_t)(o->window + 1);
            }
        } else if (!strcmp(argv[i - 1], "--csv")) {
            o->csv = v;
        } else {
            return 1;
        }
    }
    return 0;
}

static void make_key(unsigned char *key, uint64_t id)
{
    memset(key, 0, KEY);
    memcpy(key, &id, sizeof id);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Runs one phase for the given time; returns operations done. */
static uint64_t run_phase(mpidht_t *t, phase_t phase, const options_t *o, int size,
                          double *elapsed)
{
    unsigned char key[KEY], value[VALUE];
    uint64_t state = 88172645463325252u + (uint64_t)phase, ops = 0;
    uint64_t written = (uint64_t)size * o->keys;
    memset(value, 7, VALUE);
    double start = MPI_Wtime(), now = start;
    while (now - start < o->seconds) {
        for (int i = 0; i < BATCH; ++i) {
            uint64_t id = xorshift(&state) % written;
            make_key(key, phase == READ_MISS ? id + written : id);
            mpidht_status_t st = phase == UPDATE ? mpidht_write(t, key, value, NULL)
                                                 : mpidht_read(t, key, value);
            if (st != MPIDHT_OK && st != MPIDHT_NOT_FOUND) {
                fprintf(stderr, "mpidht_latency: %s\n", mpidht_strerror(st));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        ops += BATCH;
        now = MPI_Wtime();
    }
    *elapsed = now - start;
    return ops;
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
    FILE *csv = NULL;
    if (!bench_cli_open_output("mpidht_latency", o.csv, &csv)) {
        MPI_Finalize();
        return 1;
    }
    if (csv)
        fprintf(csv, "protocol,window,ranks,phase,latency_us,ops_per_s\n");
    if (rank == 0)
        printf("%-9s %-9s %5s %-10s %12s %14s\n", "protocol", "window", "ranks", "phase",
               "latency_us", "total_ops/s");

    static const mpidht_protocol_t protocols[] = {
        MPIDHT_PROTOCOL_COARSE, MPIDHT_PROTOCOL_FINE, MPIDHT_PROTOCOL_LOCKFREE};
    for (int p = 0; p < 3; ++p) {
        mpidht_params_t params;
        mpidht_params_init(&params);
        params.key_size = KEY;
        params.value_size = VALUE;
        params.protocol = protocols[p];
        params.window = o.window;
        /* Room for four times the keys: few evictions. */
        params.memory_per_process = o.keys * 4 * 256;
        mpidht_t *t = NULL;
        mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &params, &t);
        if (st != MPIDHT_OK) {
            fprintf(stderr, "mpidht_latency: create: %s\n", mpidht_strerror(st));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        unsigned char key[KEY], value[VALUE];
        memset(value, 1, VALUE);
        for (uint64_t i = 0; i < o.keys; ++i) {
            make_key(key, (uint64_t)rank * o.keys + i);
            mpidht_write(t, key, value, NULL);
        }
        mpidht_info_t info = MPIDHT_INFO_INIT;
        mpidht_get_info(t, &info);
        for (int ph = 0; ph < PHASES; ++ph) {
            MPI_Barrier(MPI_COMM_WORLD);
            double elapsed = 0;
            uint64_t ops = run_phase(t, (phase_t)ph, &o, size, &elapsed);
            double lat = elapsed / (double)ops * 1e6, rate = (double)ops / elapsed;
            double lat_sum = 0, rate_sum = 0;
            MPI_Reduce(&lat, &lat_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            MPI_Reduce(&rate, &rate_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                printf("%-9s %-9s %5d %-10s %12.3f %14.0f\n", mpidht_protocol_name(protocols[p]),
                       mpidht_window_name(info.window), size, phase_names[ph],
                       lat_sum / size, rate_sum);
                if (csv)
                    fprintf(csv, "%s,%s,%d,%s,%.4f,%.0f\n", mpidht_protocol_name(protocols[p]),
                            mpidht_window_name(info.window), size, phase_names[ph],
                            lat_sum / size, rate_sum);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        mpidht_free(&t);
    }
    if (csv)
        fclose(csv);
    MPI_Finalize();
    return 0;
}
