/*
 * Dump and restore round trips.
 *
 *   test_dump                 at this process count: every protocol's
 *                             table dumped and restored into a table of
 *                             every protocol and another size; restoring
 *                             twice updates; a table too small reports
 *                             its evictions; a nearly full table
 *                             restored into one like it loses nothing
 *                             (restore places evicted entries again);
 *                             empty tables; processes hosting nothing.
 *   test_dump write FILE      fills a table and dumps it to FILE;
 *   test_dump read FILE       restores FILE and checks every entry: run
 *                             at other process counts than the writer.
 */
#include "table_digest.h"

enum { IDS = 3000, KEY = 32, VALUE = 72, SALT = 5 };

static mpidht_t *make_table(mpidht_protocol_t protocol, size_t memory)
{
    mpidht_params_t p = test_params(protocol, KEY, VALUE, memory);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    return table;
}

/* Room for IDS entries at a load below 5 % on any process count. */
static size_t roomy(void)
{
    return (size_t)(IDS * 20 / test_size() + 64) * 128;
}

static void check_report(const mpidht_restore_report_t *r, uint64_t entries,
                         uint64_t inserted, uint64_t updated, uint64_t evicted)
{
    CHECK(r->entries == entries);
    CHECK(r->inserted == inserted);
    CHECK(r->updated == updated);
    CHECK(r->evicted == evicted);
}

static void round_trips(const char *file)
{
    table_digest_t expect = digest_ids(IDS, KEY, VALUE, SALT);
    for (int s = 0; s < TEST_PROTOCOL_COUNT; ++s) {
        mpidht_protocol_t from = test_protocols[s];
        mpidht_t *source = make_table(from, roomy());
        fill_ids(source, IDS, KEY, VALUE, SALT);
        mpidht_stats_t before = MPIDHT_STATS_INIT, after = MPIDHT_STATS_INIT;
        CHECK_OK(mpidht_stats_local(source, &before));
        CHECK_OK(mpidht_dump(source, file));
        CHECK_OK(mpidht_stats_local(source, &after));
        CHECK(memcmp(&before, &after, sizeof before) == 0);
        CHECK(digest_equal(digest_table(source, KEY, VALUE), expect));
        CHECK_OK(mpidht_free(&source));
        for (int d = 0; d < TEST_PROTOCOL_COUNT; ++d) {
            mpidht_protocol_t to = test_protocols[d];
            TEST_CONTEXT("restoring a %s dump into a %s table",
                         mpidht_protocol_name(from), mpidht_protocol_name(to));
            mpidht_t *target = make_table(to, roomy() * 2);
            mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
            /* The statistics stay as they were: restore counts nothing. */
            CHECK_OK(mpidht_stats_local(target, &before));
            CHECK_OK(mpidht_restore(target, file, &r));
            CHECK_OK(mpidht_stats_local(target, &after));
            CHECK(memcmp(&before, &after, sizeof before) == 0);
            check_report(&r, IDS, IDS, 0, 0);
            CHECK(digest_equal(digest_table(target, KEY, VALUE), expect));
            /* Every entry is where reads find it (a sample, batched). */
            enum { SAMPLE = IDS / 7 };
            static unsigned char keys[SAMPLE * KEY], values[SAMPLE * VALUE];
            unsigned char want[VALUE], found[SAMPLE];
            for (uint64_t i = 0; i < SAMPLE; ++i)
                test_fill(keys + i * KEY, KEY, i * 7 + (uint64_t)test_rank(), 1);
            CHECK_OK(mpidht_read_batch(target, SAMPLE, keys, values, found));
            for (uint64_t i = 0; i < SAMPLE; ++i) {
                test_fill(want, VALUE, i * 7 + (uint64_t)test_rank(), SALT);
                CHECK(found[i] && memcmp(values + i * VALUE, want, VALUE) == 0);
            }
            /* A second restore replaces every value with itself. */
            CHECK_OK(mpidht_restore(target, file, &r));
            check_report(&r, IDS, 0, IDS, 0);
            CHECK(digest_equal(digest_table(target, KEY, VALUE), expect));
            CHECK_OK(mpidht_free(&target));
        }
    }
    TEST_CONTEXT("restoring into a table too small for the dump");
    mpidht_t *small = make_table(MPIDHT_PROTOCOL_FINE, (size_t)IDS / 2 / test_size() * 128);
    mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
    CHECK_OK(mpidht_restore(small, file, &r));
    CHECK(r.entries == IDS && r.evicted > 0);
    CHECK(r.inserted + r.updated + r.evicted == IDS);
    table_digest_t kept = digest_table(small, KEY, VALUE);
    CHECK(kept.entries == r.inserted);
    CHECK_OK(mpidht_free(&small));
}

/* A table filled to nearly every bucket (the writes evict as they may),
 * dumped and restored into an empty table like it, for every protocol:
 * the records arrive in another order than they were written, so some
 * find their candidates taken; restore places the entries they evict
 * again, and the table comes back whole, nothing evicted. */
static void full_round_trip(const char *file)
{
    enum { BATCH = 256 };
    static unsigned char keys[BATCH * KEY], values[BATCH * VALUE];
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("a full %s table restored into one like it",
                     mpidht_protocol_name(test_protocols[p]));
        mpidht_t *source = make_table(test_protocols[p], 64 << 10);
        mpidht_info_t info = MPIDHT_INFO_INIT;
        CHECK_OK(mpidht_get_info(source, &info));
        uint64_t n = info.total_buckets * 95 / 100;
        size_t count = 0;
        for (uint64_t id = (uint64_t)test_rank(); id < n; id += (uint64_t)test_size()) {
            test_fill(keys + count * KEY, KEY, id, 1);
            test_fill(values + count * VALUE, VALUE, id, SALT);
            if (++count < BATCH && id + (uint64_t)test_size() < n)
                continue;
            CHECK_OK(mpidht_write_batch(source, count, keys, values, NULL));
            count = 0;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        table_digest_t held = digest_table(source, KEY, VALUE);
        CHECK(held.entries * 100 > info.total_buckets * 85);
        CHECK_OK(mpidht_dump(source, file));
        CHECK_OK(mpidht_free(&source));
        mpidht_t *target = make_table(test_protocols[p], 64 << 10);
        mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
        CHECK_OK(mpidht_restore(target, file, &r));
        TEST_CONTEXT("a full %s table: %" PRIu64 " entries; restored %" PRIu64
                     ", evicted %" PRIu64,
                     mpidht_protocol_name(test_protocols[p]), held.entries, r.inserted,
                     r.evicted);
        check_report(&r, held.entries, held.entries, 0, 0);
        CHECK(digest_equal(digest_table(target, KEY, VALUE), held));
        CHECK_OK(mpidht_free(&target));
    }
}

static void empty_and_hostless(const char *file)
{
    TEST_CONTEXT("dumping an empty table");
    mpidht_t *table = make_table(MPIDHT_PROTOCOL_LOCKFREE, 4096);
    CHECK_OK(mpidht_dump(table, file));
    mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
    CHECK_OK(mpidht_restore(table, file, &r));
    check_report(&r, 0, 0, 0, 0);
    CHECK(digest_table(table, KEY, VALUE).entries == 0);
    CHECK_OK(mpidht_free(&table));

    TEST_CONTEXT("dumping and restoring with ranks that host nothing");
    /* Only rank 0 hosts the table; the others still iterate, dump and
     * restore (they read blocks and route them). */
    size_t memory = test_rank() == 0 ? roomy() * (size_t)test_size() : 0;
    mpidht_t *hosted = make_table(MPIDHT_PROTOCOL_COARSE, memory);
    fill_ids(hosted, IDS, KEY, VALUE, SALT);
    CHECK_OK(mpidht_dump(hosted, file));
    CHECK_OK(mpidht_free(&hosted));
    mpidht_t *everywhere = make_table(MPIDHT_PROTOCOL_LOCKFREE, roomy());
    CHECK_OK(mpidht_restore(everywhere, file, &r));
    check_report(&r, IDS, IDS, 0, 0);
    CHECK(digest_equal(digest_table(everywhere, KEY, VALUE),
                       digest_ids(IDS, KEY, VALUE, SALT)));
    CHECK_OK(mpidht_free(&everywhere));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], "write") == 0) {
        mpidht_t *table = make_table(MPIDHT_PROTOCOL_LOCKFREE, roomy());
        fill_ids(table, IDS, KEY, VALUE, SALT);
        CHECK_OK(mpidht_dump(table, argv[2]));
        CHECK_OK(mpidht_free(&table));
    } else if (argc == 3 && strcmp(argv[1], "read") == 0) {
        mpidht_t *table = make_table(MPIDHT_PROTOCOL_COARSE, roomy());
        mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
        CHECK_OK(mpidht_restore(table, argv[2], &r));
        check_report(&r, IDS, IDS, 0, 0);
        CHECK(digest_equal(digest_table(table, KEY, VALUE),
                           digest_ids(IDS, KEY, VALUE, SALT)));
        CHECK_OK(mpidht_free(&table));
    } else {
        char file[64];
        snprintf(file, sizeof file, "test_dump_np%d.mpidht", test_size());
        round_trips(file);
        full_round_trip(file);
        empty_and_hostless(file);
        if (test_rank() == 0)
            remove(file);
    }
    MPI_Finalize();
    return 0;
}
