/*
 * Recency eviction (MPIDHT_EVICT_RECENCY) compares the times of entries
 * written by different processes: the entry written longest ago goes,
 * whichever process wrote it, however far apart the processes returned
 * from mpidht_create.
 *
 * Every key has the same 4 candidates, all hosted by rank 0 (a constant
 * hash). Ranks 0 and 1 take turns writing new keys, GAP_MS apart, the
 * turns ordered by barriers: the first 4 fill the candidates, and each
 * later key must evict the one written 4 turns before. Inside
 * mpidht_create every rank but 0 sleeps DELAY_MS after each reduction
 * (this program's MPI_Allreduce, which the library's calls reach through
 * MPI's profiling interface), as a process descheduled there would: each
 * process took its own clock when it returned, and with that delay every
 * protocol evicted an entry of rank 1 written after rank 0's oldest.
 * Every protocol, direct and (MPIDHT_SHARED_ACCESS=mpi) through MPI.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <time.h>

#include "test_util.h"

enum { KEY = 8, VALUE = 8, CANDIDATES = 4, TURNS = 12, DELAY_MS = 30, GAP_MS = 5 };

static bool in_create;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (in_create && rank != 0)
        sleep_ms(DELAY_MS);
    return rc;
}

static void turns(mpidht_protocol_t protocol)
{
    TEST_CONTEXT("%s: keys written in turns by ranks 0 and 1",
                 mpidht_protocol_name(protocol));
    mpidht_params_t p = test_params(protocol, KEY, VALUE, 0);
    p.hash = test_hash_constant;
    p.candidates = CANDIDATES;
    size_t bucket;
    CHECK_OK(mpidht_bucket_size(&p, &bucket));
    p.memory_per_process = test_rank() == 0 ? CANDIDATES * bucket : 0;
    mpidht_t *table = NULL;
    in_create = true;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    in_create = false;
    uint64_t value = 0, back = 0;
    for (uint64_t turn = 0; turn < TURNS; ++turn) {
        uint64_t key = turn + 1;
        if (test_rank() == (int)(turn % 2)) {
            mpidht_write_outcome_t outcome;
            CHECK_OK(mpidht_write(table, &key, &value, &outcome));
            CHECK(outcome == (turn < CANDIDATES ? MPIDHT_WRITE_INSERTED
                                                : MPIDHT_WRITE_EVICTED));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (turn >= CANDIDATES && test_rank() == 0) {
            /* A miss: the read refreshes nothing. */
            uint64_t oldest = key - CANDIDATES;
            TEST_CONTEXT("%s: turn %" PRIu64 " must evict key %" PRIu64
                         ", written longest ago (by rank %d)",
                         mpidht_protocol_name(protocol), turn, oldest, (int)((oldest - 1) % 2));
            CHECK_STATUS(mpidht_read(table, &oldest, &back), MPIDHT_NOT_FOUND);
        }
        sleep_ms(GAP_MS); /* the next write's time is later by at least this */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK_OK(mpidht_free(&table));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(test_size() >= 2);
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p)
        turns(test_protocols[p]);
    MPI_Finalize();
    return 0;
}
