/*
 * How much of a core a process gets that calls sched_yield in a loop, as
 * Open MPI's waiting processes do where ranks outnumber cores
 * (mpi_yield_when_idle). Loops for SECONDS, yielding at every turn or not
 * at all, and prints its turns and its processor time. Run it on one core
 * beside a busy process, e.g.
 *
 *   taskset -c 1 yes > /dev/null & taskset -c 1 yield_check yield 5
 *
 * docs/hosts.md gives what it showed under Linux's EEVDF scheduler, and
 * with the process in a CPU cgroup of its own (emulated-hosts.sh).
 *
 * usage: yield_check yield|spin SECONDS
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sched_yield */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long span = argc == 3 ? strtol(argv[2], &end, 10) : 0;
    if (argc != 3 || (strcmp(argv[1], "yield") != 0 && strcmp(argv[1], "spin") != 0) ||
        *argv[2] == '\0' || *end != '\0' || span < 1 || span > 3600) {
        fprintf(stderr, "usage: yield_check yield|spin SECONDS (1 to 3600)\n");
        return 2;
    }
    int yield = strcmp(argv[1], "yield") == 0;
    double start = seconds_of(CLOCK_MONOTONIC);
    long turns = 0;
    do {
        if (yield)
            sched_yield();
        ++turns;
    } while (seconds_of(CLOCK_MONOTONIC) - start < (double)span);
    printf("%s: %ld turns in %ld s, %.2f s of processor time\n", argv[1], turns, span,
           seconds_of(CLOCK_PROCESS_CPUTIME_ID));
    return 0;
}
