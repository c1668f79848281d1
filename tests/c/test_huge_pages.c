/*
 * Where the system gives transparent huge pages on advice only (its
 * "madvise" setting), the table asks for them for the memory it offers:
 * after mpidht_create, every process has at least the whole huge pages
 * inside its memory more in mappings advised for huge pages (VmFlags "hg"
 * in /proc/self/smaps), and no more than its memory (no other process's
 * part of a shared window, nothing around it), under every window kind,
 * none for a table smaller than a huge page, and after mpidht_free no
 * more than before (the advice
 * is given back, so memory MPI hands on keeps the system's default). Under
 * any other setting it advises nothing. Whether the kernel then backs the
 * advice with huge pages depends on its settings and free memory, so
 * that is not asserted. The table works either way.
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

/* Whether "[madvise]" is the system's setting for huge pages. */
static bool on_advice(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char text[128] = "";
    if (!f)
        return false;
    bool read = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    return read && strstr(text, "[madvise]") != NULL;
}

/* Writes and reads back 100 keys per process. */
static void roundtrip(mpidht_t *table)
{
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
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    size_t huge = huge_page_size();
    bool advised = on_advice() && huge > 0;
    /* At most a huge page at each end is not whole inside the memory. */
    size_t least = advised && MEMORY > 2 * huge ? MEMORY - 2 * huge : 0;
    /* Less than a huge page (and at most 1 MiB). */
    size_t small_memory = huge / 2 < ((size_t)1 << 20) ? huge / 2 : (size_t)1 << 20;
    static const mpidht_window_kind_t kinds[] = {MPIDHT_WINDOW_SHARED, MPIDHT_WINDOW_ALLOCATE,
                                                 MPIDHT_WINDOW_CREATE};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k) {
        /* Open MPI 4 has no component for MPI_Win_create on one process
         * (test_windows checks that it says so). */
        if (kinds[k] == MPIDHT_WINDOW_CREATE && test_size() == 1 && test_open_mpi_before_5())
            continue;
        mpidht_t *table = NULL;
        if (small_memory >= ((size_t)32 << 10)) {
            TEST_CONTEXT("window %s, a table of %zu bytes", mpidht_window_name(kinds[k]),
                         small_memory);
            mpidht_params_t small = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 24, small_memory);
            small.window = kinds[k];
            size_t before = advised_bytes();
            CHECK_OK(mpidht_create(MPI_COMM_WORLD, &small, &table));
            CHECK(advised_bytes() == before);
            CHECK_OK(mpidht_free(&table));
        }
        TEST_CONTEXT("window %s, a table of %zu bytes", mpidht_window_name(kinds[k]), MEMORY);
        mpidht_params_t params = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 24, MEMORY);
        params.window = kinds[k];
        size_t before = advised_bytes();
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &table));
        if (advised) {
            size_t after = advised_bytes();
            CHECK(after >= before + least && after <= before + MEMORY);
        }
        else
            CHECK(advised_bytes() == before);
        roundtrip(table);
        CHECK_OK(mpidht_free(&table));
        CHECK(advised_bytes() <= before);
    }
    MPI_Finalize();
    return 0;
}
