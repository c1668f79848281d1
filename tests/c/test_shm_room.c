/*
 * A window larger than the file system its memory comes from on one node
 * (/dev/shm, made 64 MiB by small-shm.sh) is refused on every process
 * with MPIDHT_ERR_NO_MEMORY and a detail that says so, before MPI is asked
 * for it: Open MPI refused such a shared window on one process while the
 * others waited in MPI_Win_allocate_shared for ever, and MPICH made shared
 * and allocate windows and died of SIGBUS when the table zeroed them. A
 * create window (MPI_Alloc_mem) is made or refused, never crashed in; and
 * a table that fits the room works. Needs 2 processes or more (one
 * process's window is its own memory).
 */
#include "test_util.h"

enum { KEY = 16, VALUE = 64, MIB = 1 << 20 };

static char detail[1024];

static mpidht_status_t create(size_t memory, mpidht_window_kind_t window, mpidht_t **table)
{
    return test_create_window(KEY, VALUE, memory, window, detail, sizeof detail, table);
}

/* The refusal's detail says what was needed where. */
static void check_detail(void)
{
    TEST_CONTEXT("detail '%s'", detail);
    CHECK(strstr(detail, "of /dev/shm, which has") != NULL);
    CHECK(strstr(detail, "make /dev/shm larger") != NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(test_size() >= 2);
    mpidht_t *table = NULL;

    /* 48 MiB each: at least 96 MiB on a node whose /dev/shm has 64. */
    const mpidht_window_kind_t refused[] = {MPIDHT_WINDOW_AUTO, MPIDHT_WINDOW_SHARED,
                                            MPIDHT_WINDOW_ALLOCATE};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
        TEST_CONTEXT("a %s window of %d x 48 MiB in a /dev/shm of 64 MiB",
                     mpidht_window_name(refused[i]), test_size());
        CHECK_STATUS(create(48 * (size_t)MIB, refused[i], &table), MPIDHT_ERR_NO_MEMORY);
        CHECK(table == NULL);
        check_detail();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    TEST_CONTEXT("a create window of %d x 48 MiB in a /dev/shm of 64 MiB", test_size());
    mpidht_status_t st = create(48 * (size_t)MIB, MPIDHT_WINDOW_CREATE, &table);
    CHECK(st == MPIDHT_OK || st == MPIDHT_ERR_NO_MEMORY);
    if (st == MPIDHT_OK) {
        test_write_read_back(table, KEY, VALUE, 4000);
        CHECK_OK(mpidht_free(&table));
    }

    TEST_CONTEXT("a shared window that fits: %d x 8 MiB", test_size());
    CHECK_OK(create(8 * (size_t)MIB, MPIDHT_WINDOW_AUTO, &table));
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    CHECK(info.window == MPIDHT_WINDOW_SHARED);
    test_write_read_back(table, KEY, VALUE, 4000);
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
