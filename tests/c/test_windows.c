/*
 * Every window kind with every protocol gives a working table, including
 * the windows whose MPI_Compare_and_swap crashes Open MPI 4.x (the
 * library uses none). AUTO picks a shared window on one node, reached
 * directly unless a process sets MPIDHT_SHARED_ACCESS=mpi; a bad value of
 * it fails create on every process.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

static void roundtrip(mpidht_t *table)
{
    int rank = test_rank(), size = test_size();
    unsigned char key[16], value[24], out[24];
    for (uint64_t i = 0; i < 20; ++i) {
        test_fill(key, 16, (uint64_t)rank * 20 + i, 1);
        test_fill(value, 24, (uint64_t)rank * 20 + i, 2);
        CHECK_OK(mpidht_write(table, key, value, NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (uint64_t id = 0; id < (uint64_t)size * 20; ++id) {
        test_fill(key, 16, id, 1);
        test_fill(value, 24, id, 2);
        CHECK_OK(mpidht_read(table, key, out));
        CHECK(memcmp(out, value, 24) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPIDHT_SHARED_ACCESS: "mpi" on one process keeps every process on
 * one-sided calls; anything but direct, mpi or empty is refused. */
static void access_setting(void)
{
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        static const char *const values[] = {"mpi", "direct", ""};
        for (size_t v = 0; v < sizeof values / sizeof *values; ++v) {
            if (test_rank() == test_size() - 1)
                setenv("MPIDHT_SHARED_ACCESS", values[v], 1);
            mpidht_params_t params = test_params(test_protocols[p], 16, 24, 32 * 1024);
            mpidht_t *table = NULL;
            CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
            mpidht_info_t info = MPIDHT_INFO_INIT;
            CHECK_OK(mpidht_get_info(table, &info));
            CHECK(info.window == MPIDHT_WINDOW_SHARED);
            CHECK(info.direct == (v != 0));
            roundtrip(table);
            CHECK_OK(mpidht_free(&table));
        }
    }
    static const char *const bad[] = {"MPI", "Direct", "direct ", "1", "none"};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; ++b) {
        setenv("MPIDHT_SHARED_ACCESS", bad[b], 1);
        char detail[256] = "";
        mpidht_params_t params = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 24, 32 * 1024);
        params.error_detail = detail;
        params.error_detail_size = sizeof detail;
        mpidht_t *table = NULL;
        CHECK_STATUS(mpidht_create(MPI_COMM_WORLD, &params, &table),
                     MPIDHT_ERR_ACCESS_SETTING);
        CHECK(table == NULL);
        char expected[64];
        snprintf(expected, sizeof expected, "MPIDHT_SHARED_ACCESS='%s' on this process",
                 bad[b]);
        CHECK(strstr(detail, expected) != NULL);
    }
    unsetenv("MPIDHT_SHARED_ACCESS");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    static const mpidht_window_kind_t kinds[] = {
        MPIDHT_WINDOW_AUTO, MPIDHT_WINDOW_SHARED, MPIDHT_WINDOW_ALLOCATE,
        MPIDHT_WINDOW_CREATE};
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k) {
            mpidht_params_t params = test_params(test_protocols[p], 16, 24, 32 * 1024);
            params.window = kinds[k];
            mpidht_t *table = NULL;
            mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &params, &table);
            /* Open MPI 4 has no component for MPI_Win_create on one
             * process; it must say so, not crash. */
            if (kinds[k] == MPIDHT_WINDOW_CREATE && test_size() == 1 &&
                test_open_mpi_before_5()) {
                CHECK(st == MPIDHT_OK || st == MPIDHT_ERR_WINDOW_UNSUPPORTED);
                if (st != MPIDHT_OK)
                    continue;
            }
            CHECK_STATUS(st, MPIDHT_OK);
            mpidht_info_t info = MPIDHT_INFO_INIT;
            CHECK_OK(mpidht_get_info(table, &info));
            CHECK(info.window == (kinds[k] == MPIDHT_WINDOW_AUTO ? MPIDHT_WINDOW_SHARED
                                                                 : kinds[k]));
            CHECK(info.direct == (info.window == MPIDHT_WINDOW_SHARED));
            roundtrip(table);
            CHECK_OK(mpidht_free(&table));
        }
    }
    access_setting();
    MPI_Finalize();
    return 0;
}
