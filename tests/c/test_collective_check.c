/*
 * The debug mode (MPIDHT_DEBUG_COLLECTIVES): a collective call that not
 * every process enters fails within the set time on each process that did
 * enter it, instead of hanging, and the error detail names the call and
 * the processes that were missing or in another call; the table stays
 * usable afterwards. The one-rank call under every protocol; a bad
 * setting is refused on every process, and so is a setting that differs
 * between processes (on one, off or another value elsewhere) instead of
 * leaving some waiting; calls every process enters work, also right
 * after a failed check in which another process's next call was heard,
 * and a process that gave up a call is not named as in it.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include <time.h>

#include "test_util.h"

#define TIMEOUT "1"

static int rank, size;

static bool has(const char *text, const char *part)
{
    return strstr(text, part) != NULL;
}

/* The ranks other than 0 as the detail lists them: "process 1",
 * "processes 1, 2", "processes 1-3". */
static const char *others(void)
{
    static char list[32];
    if (size == 2)
        snprintf(list, sizeof list, "process 1");
    else if (size == 3)
        snprintf(list, sizeof list, "processes 1, 2");
    else
        snprintf(list, sizeof list, "processes 1-%d", size - 1);
    return list;
}

/* Checks the detail of a failed check on this process. */
static void expect_detail(const mpidht_t *table, const char *call, const char *part)
{
    const char *detail = mpidht_error_detail(table);
    char head[96];
    snprintf(head, sizeof head, "%s: after 1 s, ", call);
    TEST_CONTEXT("detail '%s'", detail);
    CHECK(strncmp(detail, head, strlen(head)) == 0);
    CHECK(has(detail, part));
    CHECK(has(detail, "MPIDHT_DEBUG_COLLECTIVES=1"));
    TEST_CONTEXT("%s", "");
}

/* Every process calls stats_global; all succeed, the detail is empty. */
static void all_stats(mpidht_t *table)
{
    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_global(table, &stats));
    CHECK(mpidht_error_detail(table)[0] == '\0');
}

/* With the mode on, every collective call that all processes enter works. */
static void all_calls(mpidht_protocol_t protocol)
{
    mpidht_params_t p = test_params(protocol, 8, 8, 4096);
    mpidht_t *table = NULL;
    char path[64];
    snprintf(path, sizeof path, "collective_check_%s_%d.mpidht", mpidht_protocol_name(protocol),
             size);
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    uint64_t key = (uint64_t)rank, value = 10 + (uint64_t)rank;
    CHECK_OK(mpidht_write(table, &key, &value, NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    all_stats(table);
    CHECK_OK(mpidht_dump(table, path));
    CHECK_OK(mpidht_clear(table));
    CHECK_STATUS(mpidht_read(table, &key, &value), MPIDHT_NOT_FOUND);
    CHECK_OK(mpidht_restore(table, path, NULL));
    for (uint64_t r = 0; r < (uint64_t)size; ++r) {
        CHECK_OK(mpidht_read(table, &r, &value));
        CHECK(value == 10 + r);
    }
    CHECK_OK(mpidht_free(&table));
    if (rank == 0)
        remove(path);
}

/* Rank 0 alone calls a collective: it fails there naming the others. */
static void one_rank_stats(mpidht_protocol_t protocol)
{
    mpidht_params_t p = test_params(protocol, 8, 8, 4096);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    uint64_t key = 1, value = 2;
    CHECK_OK(mpidht_write(table, &key, &value, NULL));
    all_stats(table);
    if (rank == 0) {
        mpidht_stats_t stats = MPIDHT_STATS_INIT;
        CHECK_STATUS(mpidht_stats_global(table, &stats), MPIDHT_ERR_COLLECTIVE_CHECK);
        char part[64];
        snprintf(part, sizeof part, "%s of %d had not entered it", others(), size);
        expect_detail(table, "mpidht_stats_global", part);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* Nothing was left half done: every call works again. */
    all_stats(table);
    CHECK_OK(mpidht_read(table, &key, &value));
    CHECK(value == 2);
    CHECK_OK(mpidht_free(&table));
}

/* Processes in different calls, and a NULL handle on one: each process
 * that entered a call fails there, and the table goes on. Pairs of calls,
 * so that every collective call is shown wired to the check in three
 * waits: clear | stats_global, free | NULL handle | stats_global,
 * dump | restore. */
static void mismatches(void)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, 8, 8, 4096);
    mpidht_t *table = NULL;
    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    char part[128];
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));

    if (rank == 0) {
        CHECK_STATUS(mpidht_clear(table), MPIDHT_ERR_COLLECTIVE_CHECK);
        snprintf(part, sizeof part, "%s had entered mpidht_stats_global instead", others());
        expect_detail(table, "mpidht_clear", part);
    } else {
        CHECK_STATUS(mpidht_stats_global(table, &stats), MPIDHT_ERR_COLLECTIVE_CHECK);
        expect_detail(table, "mpidht_stats_global", "process 0 had entered mpidht_clear instead");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    all_stats(table);

    /* The case a freed handle on one process used to hang the others. */
    if (rank == 0) {
        CHECK_STATUS(mpidht_free(&table), MPIDHT_ERR_COLLECTIVE_CHECK);
        CHECK(table != NULL); /* not freed */
        snprintf(part, sizeof part, "process 1 of %d had not entered it%s", size,
                 size == 2 ? "" : size == 3 ? ", process 2 had entered mpidht_stats_global"
                                            : ", processes 2, 3 had entered mpidht_stats_global");
        expect_detail(table, "mpidht_free", part);
    } else if (rank == 1) {
        CHECK_STATUS(mpidht_stats_global(NULL, &stats), MPIDHT_ERR_INVALID_HANDLE);
    } else {
        CHECK_STATUS(mpidht_stats_global(table, &stats), MPIDHT_ERR_COLLECTIVE_CHECK);
        snprintf(part, sizeof part, "process 1 of %d had not entered it, process 0 had "
                 "entered mpidht_free instead", size);
        expect_detail(table, "mpidht_stats_global", part);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    all_stats(table);

    if (rank == 0) {
        CHECK_STATUS(mpidht_dump(table, "never-written.mpidht"), MPIDHT_ERR_COLLECTIVE_CHECK);
        snprintf(part, sizeof part, "%s had entered mpidht_restore instead", others());
        expect_detail(table, "mpidht_dump", part);
    } else {
        CHECK_STATUS(mpidht_restore(table, "never-written.mpidht", NULL),
                     MPIDHT_ERR_COLLECTIVE_CHECK);
        expect_detail(table, "mpidht_restore", "process 0 had entered mpidht_dump instead");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(fopen("never-written.mpidht", "rb") == NULL);
    all_stats(table);
    CHECK_OK(mpidht_free(&table));
    CHECK(table == NULL);
}

/* A process that fails a check may already have heard another's next
 * call: the others enter clear, rank 0 enters stats_global half the
 * debug mode's time later; they fail clear (rank 0 was in another call),
 * then call stats_global, which rank 0 is still in, and it passes on
 * every process. The note rank 0 sent once, heard during the failed
 * check, counts; it was dropped with that check, and the processes then
 * failed every later call, out of step. */
static void late_note(void)
{
    setenv("MPIDHT_DEBUG_COLLECTIVES", "2", 1);
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, 8, 8, 4096);
    mpidht_t *table = NULL;
    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    setenv("MPIDHT_DEBUG_COLLECTIVES", TIMEOUT, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        struct timespec half = {.tv_sec = 1};
        nanosleep(&half, NULL);
    } else {
        CHECK_STATUS(mpidht_clear(table), MPIDHT_ERR_COLLECTIVE_CHECK);
        TEST_CONTEXT("detail '%s'", mpidht_error_detail(table));
        CHECK(has(mpidht_error_detail(table), "process 0 had entered mpidht_stats_global instead"));
        TEST_CONTEXT("%s", "");
    }
    CHECK_OK(mpidht_stats_global(table, &stats));
    all_stats(table);
    CHECK_OK(mpidht_clear(table));
    CHECK_OK(mpidht_free(&table));
}

/* A process that gave up a call is in none: rank 0 in clear while the
 * others are in dump (both fail), then rank 0 in stats_global alone while
 * the others wait outside the table. The detail said the others "had
 * entered mpidht_dump instead", which they had left a second before. */
static void left_call(void)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_FINE, 8, 8, 4096);
    mpidht_t *table = NULL;
    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    if (rank == 0) {
        CHECK_STATUS(mpidht_clear(table), MPIDHT_ERR_COLLECTIVE_CHECK);
        CHECK_STATUS(mpidht_stats_global(table, &stats), MPIDHT_ERR_COLLECTIVE_CHECK);
        char part[64];
        snprintf(part, sizeof part, "%s of %d had not entered it", others(), size);
        expect_detail(table, "mpidht_stats_global", part);
        TEST_CONTEXT("detail '%s'", mpidht_error_detail(table));
        CHECK(!has(mpidht_error_detail(table), "instead"));
        TEST_CONTEXT("%s", "");
    } else {
        CHECK_STATUS(mpidht_dump(table, "never-written.mpidht"), MPIDHT_ERR_COLLECTIVE_CHECK);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    all_stats(table);
    CHECK_OK(mpidht_free(&table));
}

/* Create entered by rank 0 alone, then by the others alone: each side
 * fails with a detail in the caller's buffer (create cannot tell which
 * processes are missing before the communicator is duplicated; the
 * others, who duplicate it with rank 0's abandoned attempt, can). */
static void lone_create(void)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_FINE, 8, 8, 4096);
    char detail[512] = "not written", part[64];
    p.error_detail = detail;
    p.error_detail_size = sizeof detail;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    mpidht_t *table = NULL;
    if (rank == 0) {
        CHECK_STATUS(mpidht_create(comm, &p, &table), MPIDHT_ERR_COLLECTIVE_CHECK);
        snprintf(part, sizeof part, "not all %d processes of the communicator", size);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_STATUS(mpidht_create(comm, &p, &table), MPIDHT_ERR_COLLECTIVE_CHECK);
        snprintf(part, sizeof part, "process 0 of %d had not entered it", size);
    }
    TEST_CONTEXT("detail '%s'", detail);
    CHECK(table == NULL);
    CHECK(strncmp(detail, "mpidht_create: after 1 s, ", 26) == 0 && has(detail, part));
    TEST_CONTEXT("%s", "");
    MPI_Barrier(MPI_COMM_WORLD);
    /* comm stays out of step (rank 0 duplicated it, the others did not
     * use the duplicate): it is not used again. */
}

/* Settings that are not a number of seconds are refused everywhere;
 * empty and 0 turn the mode off. */
static void settings(void)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, 8, 8, 4096);
    char detail[128];
    p.error_detail = detail;
    p.error_detail_size = sizeof detail;
    mpidht_t *table = NULL;
    static const char *const bad[] = {"soon", "-1", "nan", "inf", "1e999", "2s", "1 2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        setenv("MPIDHT_DEBUG_COLLECTIVES", bad[i], 1);
        CHECK_STATUS(mpidht_create(MPI_COMM_WORLD, &p, &table), MPIDHT_ERR_DEBUG_SETTING);
        CHECK(table == NULL && has(detail, bad[i]));
    }
    static const char *const off[] = {"", "0", "0.0", " 0 "};
    for (size_t i = 0; i < sizeof off / sizeof *off; ++i) {
        setenv("MPIDHT_DEBUG_COLLECTIVES", off[i], 1);
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
        all_stats(table);
        CHECK_OK(mpidht_free(&table));
    }
    setenv("MPIDHT_DEBUG_COLLECTIVES", TIMEOUT, 1);
}

/* Rank 0's setting differs from the others': create fails on every
 * process (none is left waiting), with status mine and a detail holding
 * part on rank 0, peers and peers_part elsewhere; MPI_COMM_WORLD stays in
 * step. */
static void mixed_setting(const char *on_rank0, const char *elsewhere, mpidht_status_t mine,
                          const char *part, mpidht_status_t peers, const char *peers_part)
{
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, 8, 8, 4096);
    char detail[256] = "not written";
    p.error_detail = detail;
    p.error_detail_size = sizeof detail;
    setenv("MPIDHT_DEBUG_COLLECTIVES", rank == 0 ? on_rank0 : elsewhere, 1);
    mpidht_t *table = NULL;
    TEST_CONTEXT("'%s' on rank 0, '%s' elsewhere", on_rank0, elsewhere);
    CHECK_STATUS(mpidht_create(MPI_COMM_WORLD, &p, &table), rank == 0 ? mine : peers);
    CHECK(table == NULL);
    TEST_CONTEXT("'%s' on rank 0, '%s' elsewhere: detail '%s'", on_rank0, elsewhere, detail);
    CHECK(has(detail, rank == 0 ? part : peers_part));
    setenv("MPIDHT_DEBUG_COLLECTIVES", TIMEOUT, 1);
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    CHECK_OK(mpidht_free(&table));
    TEST_CONTEXT("%s", "");
}

static void mixed_settings(void)
{
    const mpidht_status_t differ = MPIDHT_ERR_DEBUG_SETTING, peer = MPIDHT_ERR_PEER;
    const char *const differs = "differs between processes", *const other = "another process";
    mixed_setting(TIMEOUT, "", differ, differs, differ, differs);
    mixed_setting("", TIMEOUT, differ, differs, differ, differs);
    mixed_setting("0", "2", differ, "0 s on this process, 0 to 2 s over all", differ,
                  "2 s on this process, 0 to 2 s over all");
    mixed_setting("soon", TIMEOUT, differ, "'soon' on this process", peer, other);
    mixed_setting(TIMEOUT, "soon", peer, other, differ, "'soon' on this process");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    settings();
    for (int i = 0; i < TEST_PROTOCOL_COUNT; ++i) {
        TEST_CONTEXT("protocol %s", mpidht_protocol_name(test_protocols[i]));
        all_calls(test_protocols[i]);
        if (size > 1)
            one_rank_stats(test_protocols[i]);
    }
    if (size > 1) {
        mixed_settings();
        mismatches();
        late_note();
        left_call();
        lone_create();
    }
    MPI_Finalize();
    return 0;
}
