/*
 * A table that would take a process past its address-space limit
 * (RLIMIT_AS, `ulimit -v`) is refused on every process with
 * MPIDHT_ERR_NO_MEMORY and a detail that names the limit, before MPI is
 * asked for the window: where the processes of a node share a segment,
 * each maps the node's whole part, and Open MPI 4.1, failing that mmap,
 * left every process waiting in MPI_Win_allocate_shared for ever. A table
 * within the limit works, and so does one whose node part fits only just
 * (the limit set this process's mapped bytes plus the part plus 16 MiB).
 * At 1 process the window is the process's own part.
 */
#include <sys/resource.h>
#include <unistd.h>

#include "test_util.h"

enum { KEY = 16, VALUE = 64, MIB = 1 << 20 };

static char detail[1024];

static mpidht_status_t create(size_t memory, mpidht_window_kind_t window, mpidht_t **table)
{
    return test_create_window(KEY, VALUE, memory, window, detail, sizeof detail, table);
}

/* The bytes this process has mapped now (VmSize). */
static double mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    CHECK(f != NULL);
    CHECK(fscanf(f, "%llu", &pages) == 1);
    fclose(f);
    return (double)pages * (double)sysconf(_SC_PAGESIZE);
}

/* Sets this process's address-space limit to what it has mapped now plus
 * `more` bytes (the hard limit stays: the test raises it back). */
static void limit_to(double more)
{
    struct rlimit limit;
    CHECK(getrlimit(RLIMIT_AS, &limit) == 0);
    double wanted = mapped_bytes() + more;
    CHECK(limit.rlim_max == RLIM_INFINITY || wanted <= (double)limit.rlim_max);
    limit.rlim_cur = (rlim_t)wanted;
    CHECK(setrlimit(RLIMIT_AS, &limit) == 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct rlimit original;
    CHECK(getrlimit(RLIMIT_AS, &original) == 0);
    const int np = test_size();
    /* What one process maps of a window on one node: the node's part. */
    const size_t each = 64 * (size_t)MIB;
    const double part = (double)(np > 1 ? np : 1) * (double)each;
    mpidht_t *table = NULL;

    /* Half the part left to map: refused, whatever the kind. */
    const mpidht_window_kind_t refused[] = {MPIDHT_WINDOW_AUTO, MPIDHT_WINDOW_SHARED,
                                            MPIDHT_WINDOW_ALLOCATE};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
        TEST_CONTEXT("a %s window of %d x 64 MiB with %.0f bytes of address space left",
                     mpidht_window_name(refused[i]), np, part / 2);
        limit_to(part / 2);
        CHECK_STATUS(create(each, refused[i], &table), MPIDHT_ERR_NO_MEMORY);
        CHECK(setrlimit(RLIMIT_AS, &original) == 0);
        CHECK(table == NULL);
        CHECK(strstr(detail, "address space limit (RLIMIT_AS, ulimit -v)") != NULL);
        /* One node: the default is the shared window. */
        mpidht_window_kind_t made = refused[i] == MPIDHT_WINDOW_AUTO ? MPIDHT_WINDOW_SHARED
                                                                     : refused[i];
        CHECK(strstr(detail, mpidht_window_name(made)) != NULL);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Room for the part and 16 MiB more: made, and it works. */
    TEST_CONTEXT("a default window of %d x 64 MiB with 16 MiB to spare", np);
    limit_to(part + 16.0 * MIB);
    CHECK_OK(create(each, MPIDHT_WINDOW_AUTO, &table));
    test_write_read_back(table, KEY, VALUE, 4000);
    CHECK_OK(mpidht_free(&table));
    CHECK(setrlimit(RLIMIT_AS, &original) == 0);
    MPI_Barrier(MPI_COMM_WORLD);

    /* No limit (as the test began, where none was set): made. */
    TEST_CONTEXT("a default window of %d x 64 MiB under the original limit", np);
    CHECK_OK(create(each, MPIDHT_WINDOW_AUTO, &table));
    test_write_read_back(table, KEY, VALUE, 4000);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
