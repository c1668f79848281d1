/*
 * Every window kind with every protocol gives a working table, including
 * the windows whose MPI_Compare_and_swap crashes Open MPI 4.x (the
 * library uses none). AUTO picks a shared window on one node.
 */
#include <stdbool.h>
#include <stdio.h>

#include "test_util.h"

static bool open_mpi_before_5(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major = 0;
    MPI_Get_library_version(version, &len);
    const char *at = strstr(version, "Open MPI v");
    return at && sscanf(at, "Open MPI v%d", &major) == 1 && major < 5;
}

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
                open_mpi_before_5()) {
                CHECK(st == MPIDHT_OK || st == MPIDHT_ERR_WINDOW_UNSUPPORTED);
                if (st != MPIDHT_OK)
                    continue;
            }
            CHECK_STATUS(st, MPIDHT_OK);
            mpidht_info_t info = MPIDHT_INFO_INIT;
            CHECK_OK(mpidht_get_info(table, &info));
            CHECK(info.window == (kinds[k] == MPIDHT_WINDOW_AUTO ? MPIDHT_WINDOW_SHARED
                                                                 : kinds[k]));
            roundtrip(table);
            CHECK_OK(mpidht_free(&table));
        }
    }
    MPI_Finalize();
    return 0;
}
