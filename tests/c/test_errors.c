/*
 * Every bad input is rejected with its own status and a message, on every
 * process at once where the call is collective, and nothing crashes,
 * aborts or hangs. MPI errors would abort the job (MPI_COMM_WORLD keeps
 * MPI_ERRORS_ARE_FATAL), so this also shows the library never passes bad
 * arguments on to MPI.
 */
#include <stdint.h>
#include <unistd.h>

#include "test_util.h"

static uint64_t rank_dependent_hash(const void *key, size_t key_size, void *user_data)
{
    (void)key;
    (void)key_size;
    return (uint64_t)(uintptr_t)user_data;
}

/* Creates with p and expects status on this rank, no table, and an error
 * detail holding part (where p gives no buffer of its own: any non-empty
 * detail if part is NULL). */
static void expect_create(const mpidht_params_t *given, mpidht_status_t status,
                          const char *part, int line)
{
    mpidht_t *table = (mpidht_t *)&table; /* must be overwritten with NULL */
    mpidht_params_t copy;
    const mpidht_params_t *p = given;
    char detail[512] = "not written", msg[768];
    if (given && given->struct_size == sizeof *given && !given->error_detail) {
        copy = *given;
        copy.error_detail = detail;
        copy.error_detail_size = sizeof detail;
        p = &copy;
    }
    mpidht_status_t got = mpidht_create(MPI_COMM_WORLD, p, &table);
    if (got != status) {
        snprintf(msg, sizeof msg, "create returned %s, expected %s",
                 mpidht_strerror(got), mpidht_strerror(status));
        test_fail(__FILE__, line, msg);
    }
    if (p == &copy && (!detail[0] || !strcmp(detail, "not written") ||
                       (part && !strstr(detail, part)))) {
        snprintf(msg, sizeof msg, "error detail '%s', expected one with '%s'", detail,
                 part ? part : "anything");
        test_fail(__FILE__, line, msg);
    }
    CHECK(table == NULL);
}
#define EXPECT_CREATE(p, status) expect_create(p, status, NULL, __LINE__)
#define EXPECT_CREATE_SAYING(p, status, part) expect_create(p, status, part, __LINE__)

/* A parameter that differs between processes fails create everywhere, and
 * the error detail names that parameter, and no other, with its value on
 * this process. */
static void expect_mismatch(mpidht_params_t p, const char *name, uint64_t here)
{
    char detail[256] = "not written", expected[128];
    p.error_detail = detail;
    p.error_detail_size = sizeof detail;
    EXPECT_CREATE(&p, MPIDHT_ERR_MISMATCHED_PARAMS);
    int n = snprintf(expected, sizeof expected, "%s (%" PRIu64 " on this process) differs "
                     "between processes", name, here);
    CHECK(n > 0 && (size_t)n < sizeof expected);
    TEST_CONTEXT("detail '%s'", detail);
    CHECK(strcmp(detail, expected) == 0);
    TEST_CONTEXT("%s", "");
}

static const mpidht_status_t all_statuses[] = {
#define STATUS_(name, number, message) name,
    MPIDHT_STATUS_LIST(STATUS_)
#undef STATUS_
};

static void status_messages(void)
{
    size_t count = sizeof all_statuses / sizeof *all_statuses;
    for (size_t s = 0; s < count; ++s) {
        CHECK(all_statuses[s] == (mpidht_status_t)s); /* numbered in order */
        const char *m = mpidht_strerror(all_statuses[s]);
        CHECK(m && *m && strcmp(m, "unknown status") != 0);
        for (size_t o = 0; o < s; ++o)
            CHECK(strcmp(m, mpidht_strerror(all_statuses[o])) != 0);
        CHECK(strstr(m, "MPIDHT_MAX_") == NULL || strstr(m, "(MPIDHT_MAX_") != NULL);
    }
    CHECK(strcmp(mpidht_strerror((mpidht_status_t)-1), "unknown status") == 0);
    CHECK(strcmp(mpidht_strerror((mpidht_status_t)count), "unknown status") == 0);
    CHECK(strcmp(mpidht_protocol_name((mpidht_protocol_t)99), "unknown") == 0);
    CHECK(strcmp(mpidht_window_name((mpidht_window_kind_t)99), "unknown") == 0);
    CHECK(strcmp(mpidht_eviction_name(MPIDHT_EVICT_LAST), "last") == 0);
    CHECK(strcmp(mpidht_eviction_name((mpidht_eviction_t)99), "unknown") == 0);
    CHECK_STATUS(mpidht_params_init(NULL), MPIDHT_ERR_NULL_ARGUMENT);
}

static void bad_create_arguments(void)
{
    int rank = test_rank(), size = test_size();
    mpidht_params_t good = test_params(MPIDHT_PROTOCOL_LOCKFREE, 16, 16, 4096), p;
    mpidht_t *table = NULL;

    CHECK_STATUS(mpidht_create(MPI_COMM_NULL, &good, &table), MPIDHT_ERR_INVALID_COMM);
    EXPECT_CREATE(NULL, MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_create(MPI_COMM_WORLD, &good, NULL), MPIDHT_ERR_NULL_ARGUMENT);

    p = good;
    p.struct_size = 0;
    EXPECT_CREATE(&p, MPIDHT_ERR_PARAMS_VERSION);
    p = good;
    p.key_size = 0;
    EXPECT_CREATE_SAYING(&p, MPIDHT_ERR_KEY_SIZE, "key_size is 0");
    p.key_size = MPIDHT_MAX_KEY_SIZE + 1;
    EXPECT_CREATE(&p, MPIDHT_ERR_KEY_SIZE);
    p = good;
    p.value_size = 0;
    EXPECT_CREATE(&p, MPIDHT_ERR_VALUE_SIZE);
    p.value_size = MPIDHT_MAX_VALUE_SIZE + 1;
    EXPECT_CREATE(&p, MPIDHT_ERR_VALUE_SIZE);
    p.value_size = SIZE_MAX;
    EXPECT_CREATE(&p, MPIDHT_ERR_VALUE_SIZE);
    p = good;
    p.protocol = (mpidht_protocol_t)0;
    EXPECT_CREATE(&p, MPIDHT_ERR_UNKNOWN_PROTOCOL);
    p.protocol = (mpidht_protocol_t)77;
    EXPECT_CREATE_SAYING(&p, MPIDHT_ERR_UNKNOWN_PROTOCOL, "protocol is 77");
    p = good;
    p.window = (mpidht_window_kind_t)9;
    EXPECT_CREATE(&p, MPIDHT_ERR_UNKNOWN_WINDOW);
    p = good;
    p.candidates = MPIDHT_MAX_CANDIDATES + 1;
    EXPECT_CREATE(&p, MPIDHT_ERR_CANDIDATES);
    p = good;
    p.memory_per_process = 7; /* below one bucket */
    EXPECT_CREATE_SAYING(&p, MPIDHT_ERR_BUDGET_TOO_SMALL, "memory_per_process is 7 bytes, a bucket");
    p.memory_per_process = SIZE_MAX; /* more than 2^32 buckets */
    EXPECT_CREATE(&p, MPIDHT_ERR_BUDGET_TOO_LARGE);
    {
        /* Exactly 2^32 buckets of over 1 KiB: addressable, but over 4 TiB,
         * more than any node's memory. */
        mpidht_info_t info = MPIDHT_INFO_INIT;
        p.value_size = 1024;
        p.memory_per_process = 64 * 1024;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
        CHECK_OK(mpidht_get_info(table, &info));
        CHECK_OK(mpidht_free(&table));
        p.memory_per_process = info.bucket_size << 32;
        EXPECT_CREATE(&p, MPIDHT_ERR_BUDGET_TOO_LARGE);
        p.memory_per_process = (info.bucket_size << 32) + info.bucket_size;
        EXPECT_CREATE(&p, MPIDHT_ERR_BUDGET_TOO_LARGE); /* 2^32 + 1 buckets */
        /* All of the node's physical memory, shared out unevenly (whole
         * buckets: a little less in all), is more than it has available:
         * it was let through, and create was killed touching it. Where the
         * node has more than one process, none asks for more than half of
         * it alone: only the sum is refused. */
        int node = 1, node_rank = 0;
        MPI_Comm local;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
        MPI_Comm_size(local, &node);
        MPI_Comm_rank(local, &node_rank);
        MPI_Comm_free(&local);
        uint64_t physical = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
        p.memory_per_process = (size_t)(node == 1        ? physical
                                        : node_rank == 0 ? physical / 2
                                                         : physical / 2 / (uint64_t)(node - 1));
        EXPECT_CREATE_SAYING(&p, MPIDHT_ERR_BUDGET_TOO_LARGE, " bytes it has available");
    }
    p = good;
    p.memory_per_process = 0;
    EXPECT_CREATE_SAYING(&p, MPIDHT_ERR_NO_STORAGE, "memory_per_process is 0 on all");

    /* A fault on one process fails the call everywhere; the others' detail
     * names the lowest rank that failed and its status. */
    char peer[256];
    snprintf(peer, sizeof peer, "process %d (the lowest rank that failed): %s", size - 1,
             mpidht_strerror(MPIDHT_ERR_KEY_SIZE));
    p = good;
    if (rank == size - 1)
        p.key_size = 0;
    EXPECT_CREATE_SAYING(&p, rank == size - 1 ? MPIDHT_ERR_KEY_SIZE : MPIDHT_ERR_PEER,
                         rank == size - 1 ? "key_size is 0" : peer);
    snprintf(peer, sizeof peer, "process 0 (the lowest rank that failed): %s",
             mpidht_strerror(MPIDHT_ERR_BUDGET_TOO_LARGE));
    p = good;
    if (rank == 0 || rank == size - 1)
        p.memory_per_process = SIZE_MAX;
    EXPECT_CREATE_SAYING(&p,
                         rank == 0 || rank == size - 1 ? MPIDHT_ERR_BUDGET_TOO_LARGE
                                                       : MPIDHT_ERR_PEER,
                         rank == 0 || rank == size - 1 ? "memory_per_process is" : peer);

    if (size > 1) {
        p = good;
        p.key_size = 16 + (size_t)(rank % 2);
        expect_mismatch(p, "key_size", p.key_size);
        p = good;
        p.value_size = 16 + (size_t)(rank % 2);
        expect_mismatch(p, "value_size", p.value_size);
        p = good;
        p.protocol = rank % 2 ? MPIDHT_PROTOCOL_FINE : MPIDHT_PROTOCOL_COARSE;
        expect_mismatch(p, "protocol", (uint64_t)p.protocol);
        p = good;
        p.candidates = rank % 2 ? 3 : 4;
        expect_mismatch(p, "candidates", p.candidates);
        p = good;
        p.hash = rank_dependent_hash;
        p.hash_user_data = (void *)(uintptr_t)(rank % 2);
        expect_mismatch(p, "hash (the hash function's result for a probe key)",
                        (uint64_t)(rank % 2));
        p = good;
        p.eviction = rank % 2 ? MPIDHT_EVICT_LAST : MPIDHT_EVICT_RECENCY;
        expect_mismatch(p, "eviction", (uint64_t)p.eviction);
        {
            /* Two at once are both named; a short buffer gets a cut,
             * terminated string; a later success empties the detail. */
            char detail[256], cut[12];
            p = good;
            p.key_size = 16 + (size_t)(rank % 2);
            p.window = rank % 2 ? MPIDHT_WINDOW_ALLOCATE : MPIDHT_WINDOW_AUTO;
            p.error_detail = detail;
            p.error_detail_size = sizeof detail;
            EXPECT_CREATE(&p, MPIDHT_ERR_MISMATCHED_PARAMS);
            CHECK(strstr(detail, "key_size (") == detail && strstr(detail, ", window (") &&
                  strstr(detail, ") differ between processes"));
            p.error_detail = cut;
            p.error_detail_size = sizeof cut;
            EXPECT_CREATE(&p, MPIDHT_ERR_MISMATCHED_PARAMS);
            CHECK(strlen(cut) == sizeof cut - 1 && strncmp(cut, detail, sizeof cut - 1) == 0);
            p = good;
            p.error_detail = detail;
            p.error_detail_size = sizeof detail;
            CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
            CHECK(detail[0] == '\0');
            CHECK_OK(mpidht_free(&table));
        }

        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        CHECK_STATUS(mpidht_create(inter, &good, &table), MPIDHT_ERR_INVALID_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
}

static void bad_operation_arguments(void)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_FINE, 8, 8, 4096);
    mpidht_t *table = NULL;
    unsigned char key[8] = {1}, value[8] = {2};
    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    mpidht_info_t info = MPIDHT_INFO_INIT;

    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    CHECK_STATUS(mpidht_read(table, NULL, value), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_read(table, key, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_write(table, NULL, value, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_write(table, key, NULL, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_remove(table, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_stats_local(table, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_get_info(table, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_stats_global(table, test_rank() == 0 ? NULL : &stats),
                 test_rank() == 0 ? MPIDHT_ERR_NULL_ARGUMENT : MPIDHT_ERR_PEER);
    /* ... and says so in the error detail, on every process. */
    CHECK(strstr(mpidht_error_detail(table),
                 test_rank() == 0 ? "global statistics: on this process (rank 0)"
                                  : "global statistics: 1 other process gave no usable struct") !=
          NULL);

    /* Batched calls: every buffer is required unless the batch is empty,
     * and a count whose rows would not fit in memory is refused before
     * anything is touched. */
    unsigned char found[2];
    mpidht_write_outcome_t outcomes[2];
    CHECK_STATUS(mpidht_read_batch(table, 1, NULL, value, found), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_read_batch(table, 1, key, NULL, found), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_read_batch(table, 1, key, value, NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_write_batch(table, 1, NULL, value, outcomes),
                 MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_write_batch(table, 1, key, NULL, outcomes),
                 MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mpidht_read_batch(table, SIZE_MAX / 4, key, value, found),
                 MPIDHT_ERR_BATCH_SIZE);
    CHECK_STATUS(mpidht_write_batch(table, SIZE_MAX / 4, key, value, NULL),
                 MPIDHT_ERR_BATCH_SIZE);
    CHECK_OK(mpidht_read_batch(table, 0, NULL, NULL, NULL));
    CHECK_OK(mpidht_write_batch(table, 0, NULL, NULL, NULL));
    /* Nothing above was counted as an operation. */
    CHECK_OK(mpidht_stats_local(table, &stats));
    CHECK(stats.reads == 0 && stats.writes == 0 && stats.removes == 0);

    CHECK_STATUS(mpidht_free(NULL), MPIDHT_ERR_NULL_ARGUMENT);
    CHECK_OK(mpidht_free(&table));
    CHECK(table == NULL);

    /* Use after free: the freed handle variable is NULL, and every call
     * on it says so instead of touching freed memory. */
    CHECK_STATUS(mpidht_read(table, key, value), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_write(table, key, value, NULL), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_remove(table, key), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_read_batch(table, 1, key, value, found), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_write_batch(table, 1, key, value, NULL), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_stats_local(table, &stats), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_stats_global(table, &stats), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_stats_reset(table), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_get_info(table, &info), MPIDHT_ERR_INVALID_HANDLE);
    CHECK_STATUS(mpidht_free(&table), MPIDHT_ERR_INVALID_HANDLE);
}

int main(int argc, char **argv)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_COARSE, 8, 8, 4096);
    mpidht_t *table = NULL;
    CHECK_STATUS(mpidht_create(MPI_COMM_WORLD, &p, &table),
                 MPIDHT_ERR_MPI_NOT_INITIALIZED);
    MPI_Init(&argc, &argv);
    status_messages();
    bad_create_arguments();
    bad_operation_arguments();
    MPI_Finalize();
    CHECK_STATUS(mpidht_create(MPI_COMM_WORLD, &p, &table),
                 MPIDHT_ERR_MPI_NOT_INITIALIZED);
    return 0;
}
