/*
 * The table asks for transparent huge pages for the memory it offers:
 * after mpidht_create, every process has at least its memory's whole pages
 * more in mappings advised for huge pages (VmFlags "hg" in
 * /proc/self/smaps), under every window kind, and the table works. The
 * advice is the library's to give; whether the kernel then backs it with
 * huge pages depends on the system's settings and free memory, so that
 * is not asserted. Where the kernel has no transparent huge pages (no
 * /sys/kernel/mm/transparent_hugepage), only the table's working is.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

#define MEMORY ((size_t)8 << 20)

/* Bytes of this process's mappings advised for huge pages. */
static size_t advised_bytes(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    CHECK(f != NULL);
    char line[512];
    size_t total = 0, size_kb = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long kb;
        if (sscanf(line, "Size: %lu kB", &kb) == 1)
            size_kb = kb;
        else if (!strncmp(line, "VmFlags:", 8) && strstr(line, " hg"))
            total += size_kb << 10;
    }
    fclose(f);
    return total;
}

static bool kernel_has_thp(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f)
        fclose(f);
    return f != NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bool thp = kernel_has_thp();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    static const mpidht_window_kind_t kinds[] = {MPIDHT_WINDOW_SHARED, MPIDHT_WINDOW_ALLOCATE,
                                                 MPIDHT_WINDOW_CREATE};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k) {
        TEST_CONTEXT("window %s", mpidht_window_name(kinds[k]));
        mpidht_params_t params = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 24, MEMORY);
        params.window = kinds[k];
        size_t before = advised_bytes();
        mpidht_t *table = NULL;
        mpidht_status_t st = mpidht_create(MPI_COMM_WORLD, &params, &table);
        /* Open MPI 4 has no component for MPI_Win_create on one process
         * (test_windows checks that it says so). */
        if (kinds[k] == MPIDHT_WINDOW_CREATE && test_size() == 1 && test_open_mpi_before_5() &&
            st == MPIDHT_ERR_WINDOW_UNSUPPORTED)
            continue;
        CHECK_STATUS(st, MPIDHT_OK);
        size_t after = advised_bytes();
        if (thp)
            CHECK(after >= before + MEMORY - 2 * page);
        unsigned char key[16], value[24], out[24];
        for (uint64_t i = 0; i < 100; ++i) {
            test_fill(key, 16, (uint64_t)test_rank() * 100 + i, 1);
            test_fill(value, 24, (uint64_t)test_rank() * 100 + i, 2);
            CHECK_OK(mpidht_write(table, key, value, NULL));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (uint64_t id = 0; id < (uint64_t)test_size() * 100; ++id) {
            test_fill(key, 16, id, 1);
            test_fill(value, 24, id, 2);
            CHECK_OK(mpidht_read(table, key, out));
            CHECK(memcmp(out, value, 24) == 0);
        }
        CHECK_OK(mpidht_free(&table));
    }
    MPI_Finalize();
    return 0;
}
