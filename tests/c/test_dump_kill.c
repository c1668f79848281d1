/*
 * The worker of test_dump_kill.sh, which kills it during a dump:
 *
 *   test_dump_kill prepare FILE      fills a table with values of one
 *                                    salt and dumps it to FILE;
 *   test_dump_kill loop FILE DIR     fills it with values of another,
 *                                    writes each rank's pid to
 *                                    DIR/pid.RANK and dumps to FILE again
 *                                    and again, for at most LOOP_SECONDS
 *                                    and while its launcher lives;
 *   test_dump_kill verify FILE       restores FILE, which must hold one of
 *                                    the two contents completely, then
 *                                    dumps over it once more, past the
 *                                    leftover FILE.partial, and restores
 *                                    that dump whole.
 */
#include <unistd.h>

#include "table_digest.h"

enum { KEY = 16, VALUE = 240 };

/* The loop's bound: the test kills it within about a minute (its
 * script's wait for the pid files), so a loop still running after this
 * was left behind by a test that ended first. */
#define LOOP_SECONDS 300.0

/* Entries per table (fewer under MPICH: see test_scaled). */
static uint64_t entries(void)
{
    return test_scaled(50000, 10000);
}

/* Dumps table to file again and again until killed. A test killed or
 * timed out before it kills these processes leaves none behind: they stop
 * together once the launcher that started any of them is gone (its
 * process is no longer their parent) or after LOOP_SECONDS, and leave
 * without MPI_Finalize, which a launcher that is gone may never answer. */
static void dump_until_killed(mpidht_t *table, const char *file)
{
    long launcher = (long)getppid();
    double until = MPI_Wtime() + LOOP_SECONDS;
    for (;;) {
        int stop = (long)getppid() != launcher || MPI_Wtime() > until, any = 0;
        MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        if (any) {
            fprintf(stderr, "test_dump_kill: not killed in time or launcher gone: leaving\n");
            _exit(1);
        }
        CHECK_OK(mpidht_dump(table, file));
    }
}

static mpidht_t *make_table(void)
{
    /* A tenth full at any process count: nothing is evicted, so a table
     * holds exactly ids [0, entries()) (fill_ids checks). */
    size_t memory = (size_t)entries() * 10 / (size_t)test_size() * 264;
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_LOCKFREE, KEY, VALUE, memory);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    return table;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 3);
    const char *file = argv[2];
    mpidht_t *table = make_table();
    if (strcmp(argv[1], "prepare") == 0) {
        fill_ids(table, entries(), KEY, VALUE, 11);
        CHECK_OK(mpidht_dump(table, file));
    } else if (strcmp(argv[1], "loop") == 0 && argc == 4) {
        fill_ids(table, entries(), KEY, VALUE, 12);
        char pidfile[512];
        snprintf(pidfile, sizeof pidfile, "%s/pid.%d", argv[3], test_rank());
        FILE *f = fopen(pidfile, "w");
        CHECK(f != NULL);
        fprintf(f, "%ld\n", (long)getpid());
        CHECK(fclose(f) == 0);
        dump_until_killed(table, file);
    } else if (strcmp(argv[1], "verify") == 0) {
        mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
        CHECK_OK(mpidht_restore(table, file, &r));
        table_digest_t got = digest_table(table, KEY, VALUE);
        table_digest_t first = digest_ids(entries(), KEY, VALUE, 11);
        table_digest_t second = digest_ids(entries(), KEY, VALUE, 12);
        CHECK(r.entries == entries() && r.evicted == 0);
        CHECK(digest_equal(got, first) || digest_equal(got, second));
        if (test_rank() == 0)
            printf("restored the %s content: %" PRIu64 " entries\n",
                   digest_equal(got, first) ? "first" : "second", got.entries);
        /* Over the leftover partial file: the new dump is whole. */
        CHECK_OK(mpidht_dump(table, file));
        char partial[512];
        snprintf(partial, sizeof partial, "%s.partial", file);
        CHECK(access(partial, F_OK) != 0);
        mpidht_t *again = make_table();
        CHECK_OK(mpidht_restore(again, file, &r));
        CHECK(digest_equal(digest_table(again, KEY, VALUE), got));
        CHECK_OK(mpidht_free(&again));
    } else {
        CHECK(!"usage: test_dump_kill prepare|loop|verify FILE [DIR]");
    }
    CHECK_OK(mpidht_free(&table));
    MPI_Finalize();
    return 0;
}
