/*
 * Tables live on any intracommunicator: one on each half of
 * MPI_COMM_WORLD and one on MPI_COMM_SELF, all at once. Each holds only
 * what was written to it, and the caller may free its communicator right
 * after creation (the table keeps its own duplicate). The halves' tables
 * hold only their own values of the same keys, on every window kind that
 * is made (Open MPI's osc rdma gave the allocate windows of both halves
 * one memory, open-mpi/ompi#7393, and two create windows crashed or hung
 * there: such a table is refused, naming it).
 */
#include <string.h>

#include "test_util.h"

static void put_and_check(mpidht_t *mine, mpidht_t *other, uint64_t base)
{
    unsigned char key[16], value[16], out[16];
    test_fill(key, 16, base, 1);
    test_fill(value, 16, base, 2);
    CHECK_OK(mpidht_write(mine, key, value, NULL));
    CHECK_OK(mpidht_read(mine, key, out));
    CHECK(memcmp(out, value, 16) == 0);
    CHECK_STATUS(mpidht_read(other, key, out), MPIDHT_NOT_FOUND);
}

static void same_keys_on_halves(mpidht_window_kind_t window)
{
    int rank = test_rank();
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    char detail[512] = "";
    mpidht_params_t params = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 16, 1 << 16);
    params.window = window;
    params.error_detail = detail;
    params.error_detail_size = sizeof detail;
    mpidht_t *table = NULL;
    mpidht_status_t st = mpidht_create(half, &params, &table);
    MPI_Comm_free(&half);
    TEST_CONTEXT("window %s: %s", mpidht_window_name(window), detail);
    if (st == MPIDHT_ERR_WINDOW_UNSUPPORTED && window != MPIDHT_WINDOW_AUTO) {
        /* Refused on purpose, or no component for it here (Debian's Open
         * MPI makes no window across hosts but with --mca osc pt2pt, and
         * no create window on one process). */
        CHECK(strstr(detail, "open-mpi/ompi#7393") || strstr(detail, "MPI_Win_allocate failed") ||
              strstr(detail, "MPI_Win_create failed") || strstr(detail, "MPI_Win_create on"));
        TEST_CONTEXT("%s", "");
        return;
    }
    CHECK_OK(st);
    unsigned char key[16], value[16], out[16];
    for (uint64_t id = 0; id < 64; ++id) { /* the same keys in both halves */
        test_fill(key, 16, id, 1);
        test_fill(value, 16, id * 2 + (uint64_t)(rank % 2), 2);
        CHECK_OK(mpidht_write(table, key, value, NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (uint64_t id = 0; id < 64; ++id) {
        test_fill(key, 16, id, 1);
        test_fill(value, 16, id * 2 + (uint64_t)(rank % 2), 2);
        CHECK_OK(mpidht_read(table, key, out));
        CHECK(memcmp(out, value, 16) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
    TEST_CONTEXT("%s", "");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* First, while the halves' communicators get the same ids. */
    same_keys_on_halves(MPIDHT_WINDOW_CREATE);
    int rank = test_rank();
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("protocol %s", mpidht_protocol_name(test_protocols[p]));
        mpidht_params_t params = test_params(test_protocols[p], 16, 16, 8192);
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        mpidht_t *half_table = NULL, *self_table = NULL;
        CHECK_OK(mpidht_create(half, &params, &half_table));
        MPI_Comm_free(&half);
        CHECK_OK(mpidht_create(MPI_COMM_SELF, &params, &self_table));

        mpidht_info_t info = MPIDHT_INFO_INIT;
        CHECK_OK(mpidht_get_info(self_table, &info));
        CHECK(info.comm_size == 1 && info.hosting_processes == 1);

        /* Keys differ per rank and per table. */
        put_and_check(self_table, half_table, 1000 + (uint64_t)rank);
        put_and_check(half_table, self_table, 2000 + (uint64_t)rank);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(mpidht_free(&self_table));
        CHECK_OK(mpidht_free(&half_table));
    }
    same_keys_on_halves(MPIDHT_WINDOW_AUTO);
    same_keys_on_halves(MPIDHT_WINDOW_ALLOCATE);
    MPI_Finalize();
    return 0;
}
