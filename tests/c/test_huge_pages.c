/*
 * The table asks for transparent huge pages for the memory it offers:
 * after mpidht_create, every process has at least the whole huge pages
 * inside its memory more in mappings advised for huge pages (VmFlags "hg"
 * in /proc/self/smaps), under every window kind, and the table works. The
 * advice is the library's to give; whether the kernel then backs it with
 * huge pages depends on the system's settings and free memory, so that
 * is not asserted. Where the kernel has no transparent huge pages (no
 * /sys/kernel/mm/transparent_hugepage/hpage_pmd_size), only the table's
 * working is.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

#define MEMORY ((size_t)16 << 20)

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

/* The kernel's transparent huge page size, or 0 if it has none. */
static size_t huge_page_size(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long long size = 0;
    if (f) {
        if (fscanf(f, "%llu", &size) != 1)
            size = 0;
        fclose(f);
    }
    return (size_t)size;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* At most a huge page at each end is not whole inside the memory. */
    size_t huge = huge_page_size();
    size_t least = huge > 0 && MEMORY > 2 * huge ? MEMORY - 2 * huge : 0;
    static const mpidht_window_kind_t kinds[] = {MPIDHT_WINDOW_SHARED, MPIDHT_WINDOW_ALLOCATE,
                                                 MPIDHT_WINDOW_CREATE};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k) {
        /* Open MPI 4 has no component for MPI_Win_create on one process
         * (test_windows checks that it says so). */
        if (kinds[k] == MPIDHT_WINDOW_CREATE && test_size() == 1 && test_open_mpi_before_5())
            continue;
        mpidht_t *table = NULL;
        /* Less than a huge page: nothing advised, not even the heap's
         * pages beside a small table. */
        if (huge >= ((size_t)64 << 10)) {
            TEST_CONTEXT("window %s, a table of %zu bytes", mpidht_window_name(kinds[k]),
                         huge / 4);
            mpidht_params_t small = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 24, huge / 4);
            small.window = kinds[k];
            size_t before = advised_bytes();
            CHECK_OK(mpidht_create(MPI_COMM_WORLD, &small, &table));
            CHECK(advised_bytes() == before);
            CHECK_OK(mpidht_free(&table));
        }
        TEST_CONTEXT("window %s", mpidht_window_name(kinds[k]));
        mpidht_params_t params = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 24, MEMORY);
        params.window = kinds[k];
        size_t before = advised_bytes();
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        if (huge > 0)
            CHECK(advised_bytes() >= before + least);
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
