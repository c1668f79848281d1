/*
 * The command-line ending, number and list parsing the benchmark programs
 * share.
 * Header-only.
 */
#ifndef MPIDHT_BENCH_CLI_H
#define MPIDHT_BENCH_CLI_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* Call after MPI_Init with what the program's parser returned: 0 to run,
 * 1 for a usage error, 2 for --help. Otherwise rank 0 prints usage (to
 * stdout for --help, stderr for an error), MPI is finalized, *exit_code is
 * set (0 for --help, 1 for an error) and false is returned: main then
 * returns *exit_code. */
static inline bool bench_cli_proceed(int parsed, void (*usage)(FILE *), int *exit_code)
{
    int rank = 0;
    if (parsed == 0)
        return true;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        usage(parsed == 2 ? stdout : stderr);
    MPI_Finalize();
    *exit_code = parsed == 2 ? 0 : 1;
    return false;
}

/* A whole decimal number in [min, max]: digits only (no sign, space or
 * exponent), no overflow. Writes *out and returns true if s is one. */
static inline bool bench_cli_whole(const char *s, unsigned long long min,
                                   unsigned long long max, unsigned long long *out)
{
    char *end = NULL;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* Whether name is one of the items of the comma-separated list. */
static inline bool bench_listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return true;
    return false;
}

/* Whether every item of the comma-separated list is one of names[0..count). */
static inline bool bench_known_items(const char *list, const char *const *names, size_t count)
{
    for (const char *p = list;; ++p) {
        size_t len = strcspn(p, ",");
        bool known = false;
        for (size_t i = 0; i < count; ++i)
            known = known || (strlen(names[i]) == len && !strncmp(p, names[i], len));
        if (!known)
            return false;
        p += len;
        if (!*p)
            return true;
    }
}

/* Collective on MPI_COMM_WORLD, before the run: rank 0 opens path (none
 * if NULL) for writing into *out (NULL elsewhere). Where it cannot, rank
 * 0 says why and every rank gets false: the program then ends with
 * status 1 rather than run without the file it was asked for. */
static inline bool bench_cli_open_output(const char *program, const char *path, FILE **out)
{
    int rank = 0, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *out = NULL;
    if (rank == 0 && path && !(*out = fopen(path, "w"))) {
        fprintf(stderr, "%s: cannot write %s: %s\n", program, path, strerror(errno));
        ok = 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

#endif /* MPIDHT_BENCH_CLI_H */
