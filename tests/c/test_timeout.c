/*
 * A bounded wait ends in a status: rank 0 holds a key (an update whose
 * function tells rank 1 so, then sleeps for a second) while rank 1 writes, updates, removes and
 * reads the same key with a table timeout of 0.1 s. Under the fine
 * protocol each call returns MPIDHT_ERR_TIMEOUT; under the lock-free one
 * the writes do, and the read returns the value as it was. Nothing is left
 * held behind: the same calls succeed once rank 0 is done. A call that
 * gave up counts in the statistics' timeouts, and nowhere else. The key's
 * bucket lives on rank 1, so that its one-sided calls need nothing from
 * the sleeping rank 0. (The coarse protocol waits inside MPI_Win_lock,
 * which has no timeout.) Needs 2 processes or more (passes trivially on 1).
 *
 * usage: test_timeout fine|lockfree
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <time.h>

#include "test_util.h"

enum { KEY_SIZE = 8, VALUE_SIZE = 8 };

static mpidht_update_action_t slow(size_t index, const void *key, void *value,
                                   int present, void *user_data)
{
    (void)index, (void)key, (void)present, (void)user_data;
    /* The key lock is held now. A plain message, not the library: under
     * MPICH rank 0's lock only takes effect once rank 1 is inside MPI. */
    MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
    memset(value, 7, VALUE_SIZE);
    return MPIDHT_STORE;
}

static mpidht_update_action_t quick(size_t index, const void *key, void *value,
                                    int present, void *user_data)
{
    (void)index, (void)key, (void)present, (void)user_data;
    memset(value, 9, VALUE_SIZE);
    return MPIDHT_STORE;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2);
    mpidht_protocol_t protocol = test_protocol_arg(argv[1]);
    CHECK(protocol != MPIDHT_PROTOCOL_COARSE);
    int rank = test_rank(), size = test_size();
    mpidht_params_t p = test_params(protocol, KEY_SIZE, VALUE_SIZE, 0);
    p.memory_per_process = rank == 1 || size == 1 ? 4096 : 0;
    p.timeout = 0.1;
    CHECK(p.timeout > 0);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    unsigned char key[KEY_SIZE] = {42}, value[VALUE_SIZE] = {1};
    CHECK_OK(mpidht_write(table, key, value, NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    if (size >= 2 && rank == 0) {
        CHECK_OK(mpidht_update(table, key, slow, NULL, NULL));
    } else if (size >= 2 && rank == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* in slow() */
        CHECK_STATUS(mpidht_write(table, key, value, NULL), MPIDHT_ERR_TIMEOUT);
        CHECK_STATUS(mpidht_update(table, key, quick, NULL, NULL), MPIDHT_ERR_TIMEOUT);
        CHECK_STATUS(mpidht_remove(table, key), MPIDHT_ERR_TIMEOUT);
        /* Fine readers wait for the writer; lock-free readers do not wait
         * for a writer that is not writing yet. */
        unsigned char got[VALUE_SIZE] = {0};
        CHECK_STATUS(mpidht_read(table, key, got), protocol == MPIDHT_PROTOCOL_LOCKFREE
                                                       ? MPIDHT_OK
                                                       : MPIDHT_ERR_TIMEOUT);
        CHECK(protocol != MPIDHT_PROTOCOL_LOCKFREE || got[0] == 1);
        /* A call that gave up counts in timeouts only: reads stays hits
         * plus misses, writes and atomic_updates what took effect. */
        mpidht_stats_t st = MPIDHT_STATS_INIT;
        CHECK_OK(mpidht_stats_local(table, &st));
        bool lockfree = protocol == MPIDHT_PROTOCOL_LOCKFREE;
        CHECK(st.timeouts == (lockfree ? 3u : 4u));
        CHECK(st.reads == (lockfree ? 1u : 0u) && st.reads == st.hits + st.misses);
        CHECK(st.writes == 1 && st.atomic_updates == 0 && st.removes == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Nothing was left held: everything works again, everywhere. */
    unsigned char got[VALUE_SIZE];
    CHECK_OK(mpidht_read(table, key, got));
    if (size >= 2)
        CHECK(got[0] == 7);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_OK(mpidht_update(table, key, quick, NULL, NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_read(table, key, got));
    CHECK(got[0] == 9);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
