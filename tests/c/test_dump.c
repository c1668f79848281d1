/*
 * Dump and restore round trips.
 *
 *   test_dump                 at this process count: every protocol's
 *                             table dumped and restored into a table of
 *                             every protocol and another size; restoring
 *                             twice updates; a table too small reports
 *                             its evictions; a full table (an entry
 *                             in every bucket; 2, 3 and 6 candidates)
 *                             restored into one like it loses nothing
 *                             (restore places evicted entries again),
 *                             and restored into a table that holds older
 *                             values of most of its keys (filling it to
 *                             80 %) leaves the file's value for every key;
 *                             a file with one key three times in one
 *                             block loads as written in order (the last
 *                             value, two updates), and where the key finds
 *                             no room both count as evicted, directly and
 *                             through MPI; one with every id
 *                             twice, into an empty table they fill to
 *                             80 %, keeps each id once with its second
 *                             value; a table with holes (removed ids)
 *                             takes a file's ids without holding any
 *                             twice;
 *                             empty tables; processes hosting nothing.
 *   test_dump write FILE      fills a table and dumps it to FILE;
 *   test_dump read FILE       restores FILE and checks every entry: run
 *                             at other process counts than the writer.
 */
#include <xxhash.h>

#include "table_digest.h"

enum { IDS = 3000, KEY = 32, VALUE = 72, SALT = 5 };

/* A table of protocol with memory bytes per process and `candidates` per
 * key (0: the default). */
static mpidht_t *make_table_of(mpidht_protocol_t protocol, size_t memory, unsigned candidates)
{
    mpidht_params_t p = test_params(protocol, KEY, VALUE, memory);
    p.candidates = candidates;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    return table;
}

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

/* Fills table with ids [first, first + n) and values of salt, dealt to
 * the ranks, in batches; the writes evict as they may. */
static void fill_range(mpidht_t *table, uint64_t first, uint64_t n, uint64_t salt)
{
    enum { BATCH = 256 };
    static unsigned char keys[BATCH * KEY], values[BATCH * VALUE];
    size_t count = 0;
    for (uint64_t i = (uint64_t)test_rank(); i < n; i += (uint64_t)test_size()) {
        test_fill(keys + count * KEY, KEY, first + i, 1);
        test_fill(values + count * VALUE, VALUE, first + i, salt);
        if (++count < BATCH && i + (uint64_t)test_size() < n)
            continue;
        CHECK_OK(mpidht_write_batch(table, count, keys, values, NULL));
        count = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* An empty table of protocol with memory bytes per process; *buckets
 * receives its buckets over all processes. */
static mpidht_t *make_target(mpidht_protocol_t protocol, size_t memory, uint64_t *buckets)
{
    mpidht_t *table = make_table(protocol, memory);
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    *buckets = info.total_buckets;
    return table;
}

/* The smallest share of its buckets that a process's part holds (the
 * parts of processes hosting no bucket count as full). */
static double emptiest_part(mpidht_t *table)
{
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    unsigned char keys[64 * KEY], values[64 * VALUE];
    uint64_t cursor = 0, held = 0;
    size_t count = 0;
    do {
        CHECK_OK(mpidht_local_next(table, &cursor, 64, keys, values, &count));
        held += count;
    } while (count > 0);
    double mine = info.local_buckets ? (double)held / (double)info.local_buckets : 1, least;
    MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return least;
}

/* Writes ids from 0 on (evicting as they may) until every bucket of the
 * table holds an entry. */
static void fill_every_bucket(mpidht_t *table, uint64_t buckets)
{
    uint64_t first = 0;
    for (double least; (least = emptiest_part(table)) < 1;) {
        uint64_t n = (uint64_t)((1 - least) * (double)buckets) + 1;
        fill_range(table, first, n, SALT);
        first += n;
    }
}

/* A table with an entry in every bucket (writes evicting as they may),
 * dumped and restored into an empty table like it, for every protocol and
 * with 2, 3 and the default 6 candidates per key: the records arrive in
 * another order than they were written, so some find their candidates
 * taken; restore places those by a search for a path of moves to a free
 * bucket, and since the dumped table was one arrangement of them all,
 * every entry finds a bucket: the table comes back whole, nothing
 * evicted. (The random walk restore used before lost entries wherever a
 * part was fuller than 99 %.) */
static void full_round_trip(const char *file)
{
    static const unsigned candidates[] = {2, 3, 0};
    for (size_t c = 0; c < sizeof candidates / sizeof *candidates; ++c) {
        for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
            const char *name = mpidht_protocol_name(test_protocols[p]);
            TEST_CONTEXT("a full %s table of %u candidates restored into one like it", name,
                         candidates[c]);
            mpidht_t *source = make_table_of(test_protocols[p], 64 << 10, candidates[c]);
            mpidht_info_t info = MPIDHT_INFO_INIT;
            CHECK_OK(mpidht_get_info(source, &info));
            fill_every_bucket(source, info.total_buckets);
            table_digest_t held = digest_table(source, KEY, VALUE);
            CHECK(held.entries == info.total_buckets);
            CHECK_OK(mpidht_dump(source, file));
            CHECK_OK(mpidht_free(&source));
            mpidht_t *target = make_table_of(test_protocols[p], 64 << 10, candidates[c]);
            mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
            CHECK_OK(mpidht_restore(target, file, &r));
            TEST_CONTEXT("a full %s table of %u candidates: %" PRIu64 " entries in %" PRIu64
                         " buckets; restored %" PRIu64 ", evicted %" PRIu64,
                         name, candidates[c], held.entries, info.total_buckets, r.inserted,
                         r.evicted);
            check_report(&r, held.entries, held.entries, 0, 0);
            CHECK(digest_equal(digest_table(target, KEY, VALUE), held));
            CHECK_OK(mpidht_free(&target));
        }
    }
}

/* A file of ids [0, n + n/8) restored into a table that holds older
 * values of ids [0, n) and has room for all: records that find no room
 * displace entries, which are placed again, and every key ends with the
 * file's value (a displaced older entry of a key whose record comes later
 * must not come back over it); the report counts the keys that held
 * older values as updates. */
static void merge_into_full(const char *file)
{
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        TEST_CONTEXT("a file merged into a %s table filling to 80 %%",
                     mpidht_protocol_name(test_protocols[p]));
        uint64_t buckets;
        mpidht_t *target = make_target(test_protocols[p], 64 << 10, &buckets);
        uint64_t n = buckets * 70 / 100, all = n + n / 8;
        mpidht_t *source = make_table(test_protocols[p], 1 << 20);
        fill_range(source, 0, all, SALT);
        CHECK(digest_table(source, KEY, VALUE).entries == all);
        CHECK_OK(mpidht_dump(source, file));
        CHECK_OK(mpidht_free(&source));
        fill_range(target, 0, n, 7); /* the older values */
        uint64_t held = digest_table(target, KEY, VALUE).entries;
        mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
        CHECK_OK(mpidht_restore(target, file, &r));
        TEST_CONTEXT("a file merged into a %s table holding %" PRIu64 " older entries: "
                     "inserted %" PRIu64 ", updated %" PRIu64 ", evicted %" PRIu64,
                     mpidht_protocol_name(test_protocols[p]), held, r.inserted, r.updated,
                     r.evicted);
        check_report(&r, all, all - held, held, 0);
        CHECK(digest_equal(digest_table(target, KEY, VALUE), digest_ids(all, KEY, VALUE, SALT)));
        CHECK_OK(mpidht_free(&target));
    }
}

/* Little-endian n bytes of v at p. */
static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; ++i)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Writes a dump file by hand (the format in mpidht.h): the n records
 * (key_size + value_size bytes each, back to back) in blocks of per_block
 * (the last may hold fewer). */
static void write_file(const char *file, size_t key_size, size_t value_size,
                       const unsigned char *records, uint64_t n, uint64_t per_block)
{
    size_t record = key_size + value_size;
    uint64_t blocks = (n + per_block - 1) / per_block;
    unsigned char *index = calloc(blocks + 1, 16), header[64] = "MPIDHTDB";
    CHECK(index != NULL);
    for (uint64_t b = 0; b < blocks; ++b) {
        uint64_t first = b * per_block, count = n - first < per_block ? n - first : per_block;
        put_le(index + 16 * b, count, 8); /* records, and their checksum */
        put_le(index + 16 * b + 8, XXH3_64bits(records + first * record, count * record), 8);
    }
    put_le(header + 8, 1, 4);  /* format version */
    put_le(header + 12, 1, 4); /* little-endian keys and values */
    put_le(header + 16, key_size, 8);
    put_le(header + 24, value_size, 8);
    put_le(header + 32, n, 8); /* entries */
    put_le(header + 40, blocks, 8);
    put_le(header + 48, XXH3_64bits(index, 16 * blocks), 8);
    put_le(header + 56, XXH3_64bits(header, 56), 8);
    FILE *f = fopen(file, "wb");
    CHECK(f && fwrite(header, 64, 1, f) == 1 &&
          (blocks == 0 || fwrite(index, 16 * blocks, 1, f) == 1) &&
          (n == 0 || fwrite(records, n * record, 1, f) == 1) && fclose(f) == 0);
    free(index);
}

/* A file written by hand with key 7 three times in its one block, values
 * 1, 2 and 3, and key 8 between them: restored, key 7 holds 3, as if the
 * records had been written in order, and the report counts two inserts
 * and two updates. */
static void repeated_keys(const char *file)
{
    TEST_CONTEXT("a file with one key three times in a block");
    if (test_rank() == 0) {
        static const uint64_t keys[4] = {7, 8, 7, 7}, values[4] = {1, 5, 2, 3};
        unsigned char records[4][16];
        for (int i = 0; i < 4; ++i) {
            put_le(records[i], keys[i], 8);
            put_le(records[i] + 8, values[i], 8);
        }
        write_file(file, 8, 8, &records[0][0], 4, 4);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpidht_params_t p = test_params(MPIDHT_PROTOCOL_FINE, 8, 8, 1 << 16);
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
    CHECK_OK(mpidht_restore(table, file, &r));
    check_report(&r, 4, 2, 2, 0);
    uint64_t key = 7, value = 0;
    CHECK_OK(mpidht_read(table, &key, &value));
    CHECK(value == 3);
    key = 8;
    CHECK_OK(mpidht_read(table, &key, &value));
    CHECK(value == 5);
    CHECK_OK(mpidht_free(&table));
}

/* A file with one key twice, restored into a table (a direct one, and
 * one through MPI: an allocate window) whose every bucket holds another
 * key, with one candidate per key: no search frees the key's bucket. As
 * if written in order, neither record finds room: both count as evicted.
 * Through MPI the first counted as an update of a key never present. */
static void repeated_key_without_room(const char *file)
{
    static const mpidht_window_kind_t windows[2] = {MPIDHT_WINDOW_AUTO,
                                                    MPIDHT_WINDOW_ALLOCATE};
    const uint64_t key = 1000000; /* none of the keys that fill the table */
    if (test_rank() == 0) {
        unsigned char records[2][16];
        for (int i = 0; i < 2; ++i) {
            put_le(records[i], key, 8);
            put_le(records[i] + 8, (uint64_t)i + 1, 8);
        }
        write_file(file, 8, 8, &records[0][0], 2, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int w = 0; w < 2; ++w) {
        TEST_CONTEXT("a key twice restored into a full table, window %s",
                     mpidht_window_name(windows[w]));
        mpidht_params_t p = test_params(MPIDHT_PROTOCOL_FINE, 8, 8, 0);
        p.candidates = 1;
        p.window = windows[w];
        size_t bucket;
        CHECK_OK(mpidht_bucket_size(&p, &bucket));
        p.memory_per_process = 4 * bucket;
        mpidht_t *table = NULL;
        CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
        /* Every bucket taken: 256 P keys written into 4 P buckets, each
         * key's only candidate one of them (one left free: e^-64). */
        for (uint64_t k = (uint64_t)test_rank(); k < 256 * (uint64_t)test_size();
             k += (uint64_t)test_size()) {
            uint64_t value = k;
            CHECK_OK(mpidht_write(table, &k, &value, NULL));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(digest_table(table, 8, 8).entries == 4 * (uint64_t)test_size());
        mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
        CHECK_OK(mpidht_restore(table, file, &r));
        check_report(&r, 2, 0, 0, 2);
        uint64_t value = 0;
        CHECK(mpidht_read(table, &key, &value) == MPIDHT_NOT_FOUND);
        CHECK_OK(mpidht_free(&table));
    }
}

/* A file of ids [0, n) and then the same ids again with other values, in
 * blocks of 97 records, restored into an empty table of every protocol
 * that they fill to 80 %: each process's part starts empty, so restore
 * looks at a record's candidates only up to the first free one (every
 * entry sits in the first of its candidates that was free when it came,
 * searches included); the second record of an id must still find the
 * first, wherever a search moved it, and replace its value. */
static void repeated_ids_into_empty(const char *file)
{
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        const char *name = mpidht_protocol_name(test_protocols[p]);
        TEST_CONTEXT("every id twice restored into an empty %s table", name);
        uint64_t buckets;
        mpidht_t *target = make_target(test_protocols[p], 256 << 10, &buckets);
        uint64_t n = buckets * 80 / 100;
        if (test_rank() == 0) {
            size_t record = KEY + VALUE;
            unsigned char *records = malloc(2 * n * record);
            CHECK(records != NULL);
            for (uint64_t i = 0; i < 2 * n; ++i) {
                test_fill(records + i * record, KEY, i % n, 1);
                test_fill(records + i * record + KEY, VALUE, i % n, i < n ? SALT : SALT + 1);
            }
            write_file(file, KEY, VALUE, records, 2 * n, 97);
            free(records);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
        CHECK_OK(mpidht_restore(target, file, &r));
        TEST_CONTEXT("%" PRIu64 " ids twice into an empty %s table of %" PRIu64
                     " buckets: inserted %" PRIu64 ", updated %" PRIu64 ", evicted %" PRIu64,
                     n, name, buckets, r.inserted, r.updated, r.evicted);
        check_report(&r, 2 * n, n, n, 0);
        CHECK(digest_equal(digest_table(target, KEY, VALUE),
                           digest_ids(n, KEY, VALUE, SALT + 1)));
        CHECK_OK(mpidht_free(&target));
    }
}

/* A table of every protocol holding ids [0, n) (older values) in 60 % of
 * its buckets, every third id then removed, and a file of ids [0, n):
 * restored, every id holds the file's value, once. The removals freed
 * buckets before the candidates where other ids sit, so in a part that
 * held entries restore compares the key of every candidate of a record,
 * not only of those up to the first free one. */
static void into_holes(const char *file)
{
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        const char *name = mpidht_protocol_name(test_protocols[p]);
        TEST_CONTEXT("a file restored into a %s table with holes", name);
        uint64_t buckets;
        mpidht_t *target = make_target(test_protocols[p], 64 << 10, &buckets);
        uint64_t n = buckets * 60 / 100;
        mpidht_t *source = make_table(test_protocols[p], 1 << 20);
        fill_range(source, 0, n, SALT);
        CHECK_OK(mpidht_dump(source, file));
        CHECK_OK(mpidht_free(&source));
        fill_range(target, 0, n, 7); /* the older values */
        unsigned char key[KEY];
        for (uint64_t i = (uint64_t)test_rank() * 3; i < n; i += 3 * (uint64_t)test_size()) {
            test_fill(key, KEY, i, 1);
            mpidht_status_t st = mpidht_remove(target, key); /* or evicted by the fill */
            CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t held = digest_table(target, KEY, VALUE).entries;
        mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
        CHECK_OK(mpidht_restore(target, file, &r));
        TEST_CONTEXT("%" PRIu64 " ids into a %s table holding %" PRIu64 " of them: inserted %"
                     PRIu64 ", updated %" PRIu64 ", evicted %" PRIu64,
                     n, name, held, r.inserted, r.updated, r.evicted);
        check_report(&r, n, n - held, held, 0);
        CHECK(digest_equal(digest_table(target, KEY, VALUE), digest_ids(n, KEY, VALUE, SALT)));
        CHECK_OK(mpidht_free(&target));
    }
}

/* Every entry of table as records (key, then value), rank 0's first, then
 * rank 1's, ..., each in its bucket order: at rank 0 (NULL elsewhere),
 * their number in *n. */
static unsigned char *gather_entries(mpidht_t *table, uint64_t *n)
{
    enum { RECORD = KEY + VALUE, STEP = 64 };
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    unsigned char *mine = malloc((info.local_buckets + 1) * RECORD);
    unsigned char keys[STEP * KEY], values[STEP * VALUE];
    uint64_t cursor = 0;
    size_t held = 0, count = 0;
    CHECK(mine != NULL);
    do {
        CHECK_OK(mpidht_local_next(table, &cursor, STEP, keys, values, &count));
        CHECK(held + count <= info.local_buckets);
        for (size_t i = 0; i < count; ++i, ++held) {
            memcpy(mine + held * RECORD, keys + i * KEY, KEY);
            memcpy(mine + held * RECORD + KEY, values + i * VALUE, VALUE);
        }
    } while (count > 0);
    int size = test_size(), bytes = (int)(held * RECORD);
    int *counts = malloc((size_t)size * sizeof *counts);
    int *displs = malloc((size_t)size * sizeof *displs);
    CHECK(counts && displs);
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; test_rank() == 0 && r < size; ++r) {
        displs[r] = total;
        total += counts[r];
    }
    unsigned char *all = test_rank() == 0 ? malloc((size_t)total + 1) : NULL;
    CHECK(test_rank() != 0 || all != NULL);
    MPI_Gatherv(mine, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    *n = (uint64_t)total / RECORD;
    free(mine);
    free(counts);
    free(displs);
    return all;
}

/* A table with an entry in every bucket, written out with one record per
 * block and restored into an empty table like it, for every protocol on
 * a shared and an allocated window: each round of the restore brings each
 * process a few records at most, so records find their candidates taken
 * one at a time, in rounds of their own (a random walk of at least 32
 * steps per round, as restore placed them before, lost 1-2 entries per
 * restore here); the search for a path of moves to a free bucket places
 * every one, and the table comes back whole. */
static void one_record_blocks(const char *file)
{
    static const mpidht_window_kind_t windows[] = {MPIDHT_WINDOW_AUTO,
                                                   MPIDHT_WINDOW_ALLOCATE};
    for (size_t w = 0; w < sizeof windows / sizeof *windows; ++w) {
        for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
            const char *name = mpidht_protocol_name(test_protocols[p]);
            TEST_CONTEXT("a full %s table (window kind %d) in blocks of one record", name,
                         (int)windows[w]);
            mpidht_params_t params = test_params(test_protocols[p], KEY, VALUE, 32 << 10);
            params.window = windows[w];
            mpidht_t *source = NULL;
            CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &source));
            mpidht_info_t info = MPIDHT_INFO_INIT;
            CHECK_OK(mpidht_get_info(source, &info));
            fill_every_bucket(source, info.total_buckets);
            table_digest_t held = digest_table(source, KEY, VALUE);
            CHECK(held.entries == info.total_buckets);
            uint64_t n = 0;
            unsigned char *records = gather_entries(source, &n);
            if (test_rank() == 0)
                write_file(file, KEY, VALUE, records, n, 1);
            free(records);
            MPI_Barrier(MPI_COMM_WORLD);
            CHECK_OK(mpidht_free(&source));
            mpidht_t *target = NULL;
            CHECK_OK(mpidht_create(MPI_COMM_WORLD, &params, &target));
            mpidht_restore_report_t r = MPIDHT_RESTORE_REPORT_INIT;
            CHECK_OK(mpidht_restore(target, file, &r));
            TEST_CONTEXT("a full %s table (window kind %d) in blocks of one record: "
                         "restored %" PRIu64 " of %" PRIu64 ", evicted %" PRIu64,
                         name, (int)windows[w], r.inserted, held.entries, r.evicted);
            check_report(&r, held.entries, held.entries, 0, 0);
            CHECK(digest_equal(digest_table(target, KEY, VALUE), held));
            CHECK_OK(mpidht_free(&target));
        }
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
        one_record_blocks(file);
        merge_into_full(file);
        repeated_keys(file);
        repeated_key_without_room(file);
        repeated_ids_into_empty(file);
        into_holes(file);
        empty_and_hostless(file);
        if (test_rank() == 0)
            remove(file);
    }
    MPI_Finalize();
    return 0;
}
