/*
 * mpidht_bench_persist: dump and restore throughput. All ranks fill a
 * table to a given fraction of its buckets with 80-byte keys and 104-byte
 * values (the papers' sizes), then, --repeat times: mpidht_dump to a file,
 * and mpidht_restore of it into a fresh, empty table of the same size.
 * Each phase's time is the slowest rank's; throughput is the file's size
 * over that time. After each restore (untimed) the fresh table is checked,
 * or the run fails: every entry must be one the table dumped held, with
 * its value, and their number the entries dumped less those the restore
 * reports it evicted (records placed in another order than they were
 * written can find every candidate taken, even in a table of the same
 * size). The dump's time includes MPI_File_sync; the restore
 * reads a file the page cache probably still holds.
 *
 *   mpirun -np 4 ./mpidht_bench_persist [--memory BYTES] [--fill F]
 *        [--protocol P] [--file PATH] [--repeat N] [--json FILE]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mpi.h>

#include "cli.h"
#include "mpidht.h"

enum { KEY = 80, VALUE = 104, BATCH = 1024 };

typedef struct {
    size_t memory;
    double fill;
    mpidht_protocol_t protocol;
    const char *file;
    int repeat;
    const char *json;
} options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mpidht_bench_persist [--memory BYTES] [--fill F] [--protocol P]\n"
            "                            [--file PATH] [--repeat N] [--json FILE] [--help]\n"
            "  --memory    bytes of table per rank (default 268435456)\n"
            "  --fill      fraction of the buckets to fill, 0 < F <= 1 (default 0.5)\n"
            "  --protocol  coarse, fine or lockfree (default lockfree)\n"
            "  --file      the dump file, removed at the end (default\n"
            "              mpidht_bench_persist.dump)\n"
            "  --repeat    dumps and restores measured (default 3)\n"
            "  --json      also write the measurements to FILE as JSON\n");
}

/* A bad value: says which and what was expected (rank 0), returns 1. */
static int bad(const char *option, const char *value, const char *wanted)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "mpidht_bench_persist: %s '%s': expected %s\n", option, value, wanted);
    return 1;
}

static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.memory = (size_t)256 << 20, .fill = 0.5,
                     .protocol = MPIDHT_PROTOCOL_LOCKFREE,
                     .file = "mpidht_bench_persist.dump", .repeat = 3, .json = NULL};
    for (int i = 1; i < argc; ++i) {
        char *end = NULL;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return 2;
        if (i + 1 >= argc)
            return bad(argv[i], "", "an option and its value");
        const char *name = argv[i], *v = argv[++i];
        if (!strcmp(name, "--memory")) {
            unsigned long long m = 0;
            if (!bench_cli_whole(v, 1, SIZE_MAX, &m))
                return bad(name, v, "a whole number of bytes above 0");
            o->memory = (size_t)m;
        } else if (!strcmp(name, "--fill")) {
            o->fill = strtod(v, &end);
            if (*end || !(o->fill > 0 && o->fill <= 1))
                return bad(name, v, "a fraction above 0, at most 1");
        } else if (!strcmp(name, "--protocol")) {
            mpidht_protocol_t p = MPIDHT_PROTOCOL_COARSE;
            while (strcmp(v, mpidht_protocol_name(p)) != 0) {
                if (p == MPIDHT_PROTOCOL_LOCKFREE)
                    return bad(name, v, "coarse, fine or lockfree");
                p = (mpidht_protocol_t)(p + 1);
            }
            o->protocol = p;
        } else if (!strcmp(name, "--file")) {
            o->file = v;
        } else if (!strcmp(name, "--repeat")) {
            long r = strtol(v, &end, 10);
            if (*end || r < 1 || r > 1000)
                return bad(name, v, "a whole number from 1 to 1000");
            o->repeat = (int)r;
        } else if (!strcmp(name, "--json")) {
            o->json = v;
        } else {
            return bad(name, v, "one of the options below");
        }
    }
    return 0;
}

static void fail(const char *what, mpidht_status_t st)
{
    fprintf(stderr, "mpidht_bench_persist: %s: %s\n", what, mpidht_strerror(st));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static mpidht_t *make_table(const options_t *o)
{
    mpidht_params_t p;
    mpidht_params_init(&p);
    p.key_size = KEY;
    p.value_size = VALUE;
    p.memory_per_process = o->memory;
    p.protocol = o->protocol;
    mpidht_t *table = NULL;
    mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &p, &table);
    if (st != MPIDHT_OK)
        fail("cannot create the table", st);
    return table;
}

/* The id of an entry as fill() writes it, or UINT64_MAX if the key and
 * value are not such an entry. */
static uint64_t entry_id(const unsigned char *key, const unsigned char *value)
{
    uint64_t id;
    memcpy(&id, key, sizeof id);
    for (size_t i = sizeof id; i < KEY; ++i)
        if (key[i] != 0x5a)
            return UINT64_MAX;
    for (size_t i = 0; i < VALUE; ++i)
        if (value[i] != (unsigned char)(id & 0xff))
            return UINT64_MAX;
    return id;
}

/* The entries the table holds, over all processes; fails the run if one
 * is not an entry fill() wrote (below limit), with its value. Collective. */
static uint64_t count_entries(mpidht_t *table, uint64_t limit)
{
    static unsigned char keys[BATCH * KEY], values[BATCH * VALUE];
    uint64_t mine = 0, wrong = 0, cursor = 0;
    size_t count;
    do {
        mpidht_status_t st = mpidht_local_next(table, &cursor, BATCH, keys, values, &count);
        if (st != MPIDHT_OK)
            fail("cannot iterate", st);
        for (size_t i = 0; i < count; ++i)
            wrong += entry_id(keys + i * KEY, values + i * VALUE) >= limit;
        mine += count;
    } while (count > 0);
    uint64_t local[2] = {mine, wrong}, all[2];
    MPI_Allreduce(local, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (all[1] > 0) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "mpidht_bench_persist: %" PRIu64 " of %" PRIu64 " entries are not "
                            "ones written, or hold another value\n", all[1], all[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return all[0];
}

/* Distinct keys dealt round-robin; returns how many were dealt (their
 * ids are below it). */
static uint64_t fill(mpidht_t *table, const options_t *o, int rank, int size)
{
    mpidht_info_t info = MPIDHT_INFO_INIT;
    mpidht_get_info(table, &info);
    uint64_t target = (uint64_t)((double)info.total_buckets * o->fill);
    static unsigned char keys[BATCH * KEY], values[BATCH * VALUE];
    size_t n = 0;
    for (uint64_t id = (uint64_t)rank; id < target; id += (uint64_t)size) {
        unsigned char *k = keys + n * KEY, *v = values + n * VALUE;
        memset(k, 0x5a, KEY);
        memcpy(k, &id, sizeof id);
        memset(v, (int)(id & 0xff), VALUE);
        if (++n == BATCH || id + (uint64_t)size >= target) {
            mpidht_status_t st = mpidht_write_batch(table, n, keys, values, NULL);
            if (st != MPIDHT_OK)
                fail("cannot fill the table", st);
            n = 0;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return target;
}

/* Seconds the slowest rank spent in a dump of table to file (report
 * NULL) or a restore of it into table (its report into *report). */
static double timed(mpidht_t *table, const char *file, mpidht_restore_report_t *report)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    mpidht_status_t st = report ? mpidht_restore(table, file, report) : mpidht_dump(table, file);
    double mine = MPI_Wtime() - t0, slowest = 0;
    if (st != MPIDHT_OK)
        fail(report ? "restore failed" : "dump failed", st);
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    options_t o;
    int code = 0;
    if (!bench_cli_proceed(parse(argc, argv, &o), usage, &code))
        return code;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    FILE *json = NULL;
    if (!bench_cli_open_output("mpidht_bench_persist", o.json, &json)) {
        MPI_Finalize();
        return 1;
    }
    mpidht_t *table = make_table(&o);
    uint64_t dealt = fill(table, &o, rank, size);
    uint64_t entries = count_entries(table, dealt);
    if (rank == 0) {
        printf("%5s %-8s %10s %9s %6s %9s %9s %8s\n", "ranks", "protocol", "entries", "file MB",
               "round", "dump MB/s", "rest MB/s", "evicted");
        if (json)
            fprintf(json, "[\n");
    }
    for (int r = 0; r < o.repeat; ++r) {
        double dump_s = timed(table, o.file, NULL);
        mpidht_t *fresh = make_table(&o);
        mpidht_restore_report_t report = MPIDHT_RESTORE_REPORT_INIT;
        double restore_s = timed(fresh, o.file, &report);
        uint64_t restored = count_entries(fresh, dealt);
        if (report.entries != entries || restored + report.evicted != entries) {
            if (rank == 0)
                fprintf(stderr, "mpidht_bench_persist: %" PRIu64 " entries dumped, %" PRIu64
                                " records restored, %" PRIu64 " evicted, but the table "
                                "holds %" PRIu64 "\n",
                        entries, report.entries, report.evicted, restored);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mpidht_free(&fresh);
        if (rank != 0)
            continue;
        struct stat sb;
        double mb = stat(o.file, &sb) == 0 ? (double)sb.st_size / 1e6 : 0;
        printf("%5d %-8s %10" PRIu64 " %9.1f %6d %9.1f %9.1f %8" PRIu64 "\n", size,
               mpidht_protocol_name(o.protocol), entries, mb, r + 1, mb / dump_s,
               mb / restore_s, report.evicted);
        if (json)
            fprintf(json,
                    "  {\"ranks\": %d, \"protocol\": \"%s\", \"entries\": %" PRIu64
                    ", \"megabytes\": %.3f, \"round\": %d, \"dump_seconds\": %.6f, "
                    "\"restore_seconds\": %.6f, \"restore_evicted\": %" PRIu64 "}%s\n",
                    size, mpidht_protocol_name(o.protocol), entries, mb, r + 1, dump_s,
                    restore_s, report.evicted, r + 1 < o.repeat ? "," : "");
    }
    if (json) {
        fprintf(json, "]\n");
        fclose(json);
    }
    if (rank == 0)
        remove(o.file);
    mpidht_free(&table);
    MPI_Finalize();
    return 0;
}
