/*
 * mpidht_progress: the last rank hosts every bucket and computes without
 * other MPI calls, calling mpidht_progress between short slices, while
 * the other ranks write and read back their keys in its buckets and
 * update one shared counter there. Every value read back is the one
 * written, and the counter ends exact. Afterwards, a thousand calls on
 * every rank change neither the table's content (every entry, through
 * local iteration) nor any rank's statistics. mpidht_progress on a NULL
 * handle is refused. (How much it shortens the others' waits is measured by
 * bench/progress.c, not asserted here.)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <time.h>

#include "table_digest.h"

enum { KEY_SIZE = 16, VALUE_SIZE = 64, KEYS = 40, TAG = 3 };

static mpidht_update_action_t add_one(size_t index, const void *key, void *value,
                                      int present, void *user_data)
{
    (void)index, (void)key, (void)user_data;
    uint64_t n = 0;
    if (present)
        memcpy(&n, value, sizeof n);
    ++n;
    memcpy(value, &n, sizeof n);
    return MPIDHT_STORE;
}

/* Whether two statistics structs hold the same counters. */
static bool same_stats(const mpidht_stats_t *a, const mpidht_stats_t *b)
{
    for (int i = 0; i < MPIDHT_STATS_COUNT; ++i)
        if (mpidht_stats_value(a, i) != mpidht_stats_value(b, i))
            return false;
    return true;
}

/* Spins for about us microseconds without MPI. */
static void spin(double us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) * 1e-3 < us);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = test_rank(), size = test_size(), host = size - 1;
    CHECK_STATUS(mpidht_progress(NULL), MPIDHT_ERR_INVALID_HANDLE);
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("%s", mpidht_protocol_name(test_protocols[p]));
        mpidht_params_t params = test_params(test_protocols[p], KEY_SIZE, VALUE_SIZE,
                                             rank == host ? 256 * 1024 : 0);
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        unsigned char counter[KEY_SIZE];
        test_fill(counter, KEY_SIZE, UINT64_MAX, 5);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != host || size == 1) {
            unsigned char key[KEY_SIZE], value[VALUE_SIZE], out[VALUE_SIZE];
            for (uint64_t i = 0; i < KEYS; ++i) {
                uint64_t id = (uint64_t)rank * KEYS + i;
                test_fill(key, KEY_SIZE, id, 1);
                test_fill(value, VALUE_SIZE, id, 2);
                CHECK_OK(mpidht_write(table, key, value, NULL));
                CHECK_OK(mpidht_update(table, counter, add_one, NULL, NULL));
                CHECK_OK(mpidht_progress(table)); /* on an origin too */
            }
            for (uint64_t i = 0; i < KEYS; ++i) {
                uint64_t id = (uint64_t)rank * KEYS + i;
                test_fill(key, KEY_SIZE, id, 1);
                test_fill(value, VALUE_SIZE, id, 2);
                CHECK_OK(mpidht_read(table, key, out));
                CHECK(memcmp(out, value, VALUE_SIZE) == 0);
            }
            if (size > 1)
                MPI_Send(NULL, 0, MPI_BYTE, host, TAG, MPI_COMM_WORLD);
        } else {
            /* Computes in 20 us slices with mpidht_progress between them,
             * and looks for the others' "done" only every 200 slices. */
            int left = size - 1;
            while (left > 0) {
                for (int s = 0; s < 200; ++s) {
                    spin(20);
                    CHECK_OK(mpidht_progress(table));
                }
                int flag = 1;
                while (flag && left > 0) {
                    CHECK(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag,
                                     MPI_STATUS_IGNORE) == MPI_SUCCESS);
                    if (flag) {
                        MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
                        --left;
                    }
                }
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t n = 0;
        unsigned char out[VALUE_SIZE];
        CHECK_OK(mpidht_read(table, counter, out));
        memcpy(&n, out, sizeof n);
        CHECK(n == (uint64_t)KEYS * (uint64_t)(size == 1 ? 1 : size - 1));
        MPI_Barrier(MPI_COMM_WORLD);
        mpidht_stats_t stats_before = MPIDHT_STATS_INIT, stats_after = MPIDHT_STATS_INIT;
        CHECK_OK(mpidht_stats_local(table, &stats_before));
        table_digest_t before = digest_table(table, KEY_SIZE, VALUE_SIZE);
        for (int i = 0; i < 1000; ++i)
            CHECK_OK(mpidht_progress(table));
        MPI_Barrier(MPI_COMM_WORLD);
        table_digest_t after = digest_table(table, KEY_SIZE, VALUE_SIZE);
        CHECK_OK(mpidht_stats_local(table, &stats_after));
        CHECK(before.entries == (uint64_t)KEYS * (uint64_t)(size == 1 ? 1 : size - 1) + 1);
        CHECK(after.entries == before.entries && after.sum == before.sum);
        CHECK(same_stats(&stats_before, &stats_after));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
