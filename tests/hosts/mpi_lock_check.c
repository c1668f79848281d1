/*
 * MPI calls alone, no mpidht: the passive-target synchronization the
 * coarse protocol makes across nodes, to check an MPI library's one-sided
 * component with. ITERATIONS times, every process makes WRITES accesses
 * to random processes, each under an exclusive lock of that process
 * (MPI_Win_lock, MPI_Get, MPI_Win_flush, MPI_Put, MPI_Win_unlock), then
 * reads its own part in 4 KiB pieces, each under a shared lock of itself,
 * then enters MPI_Allreduce. Every call is valid MPI (MPI-3.1, 11.5);
 * rank 0 prints the iterations passed to stderr every 10 and "done" at
 * the end, so that a run that crawls shows where.
 *
 * usage: mpiexec -n P mpi_lock_check ITERATIONS WRITES
 *
 * docs/hosts.md gives what it showed: Open MPI 4.1's osc pt2pt all but
 * stops in it while the machine is busy, and goes on when the load goes.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { PART = 1 << 16, PIECE = 4096, ACCESS = 128 };

static int parse(const char *text, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 1 || v > 1000000)
        return 0;
    *out = (int)v;
    return 1;
}

/* xorshift64: the same sequence on every platform. */
static unsigned next(unsigned long long *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (unsigned)(*state >> 32);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iterations, writes;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || !parse(argv[1], &iterations) || !parse(argv[2], &writes)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n P mpi_lock_check ITERATIONS WRITES "
                            "(each 1 to 1000000)\n");
        MPI_Finalize();
        return 2;
    }
    char *base, source[ACCESS] = {0}, target[PIECE];
    MPI_Win win;
    MPI_Win_allocate(PART, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    unsigned long long seed = 0x9e3779b97f4a7c15ull + (unsigned long long)rank;
    for (int i = 0; i < iterations; ++i) {
        if (rank == 0 && i % 10 == 0)
            fprintf(stderr, "%d ", i);
        for (int k = 0; k < writes; ++k) {
            int to = (int)(next(&seed) % (unsigned)size);
            MPI_Aint at = (MPI_Aint)(next(&seed) % (PART / ACCESS)) * ACCESS;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, 0, win);
            MPI_Get(target, ACCESS, MPI_BYTE, to, at, ACCESS, MPI_BYTE, win);
            MPI_Win_flush(to, win);
            MPI_Put(source, ACCESS, MPI_BYTE, to, at, ACCESS, MPI_BYTE, win);
            MPI_Win_unlock(to, win);
        }
        for (MPI_Aint at = 0; at < PART; at += PIECE) {
            MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
            MPI_Get(target, PIECE, MPI_BYTE, rank, at, PIECE, MPI_BYTE, win);
            MPI_Win_flush(rank, win);
            MPI_Win_unlock(rank, win);
        }
        int mine = i, sum;
        MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    if (rank == 0)
        fprintf(stderr, "done\n");
    MPI_Finalize();
    return 0;
}
