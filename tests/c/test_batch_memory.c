/*
 * A batch's working memory is bounded: batches go in chunks of at most
 * 1024 rows and about 256 KiB of bucket copies, one chunk after the other.
 * Every rank updates its own keys in one batch of many rows, for every
 * protocol, with keys and values of 8 bytes and two candidates (bucket
 * copies so small that 1024 rows make the chunk) and with 64 KiB values
 * and six candidates (chunks of one row). The update function sees the
 * library's state while the batch runs: when it runs for row i, every row
 * at or before i - 1024 has had its call (the chunks are in order and no
 * longer than 1024 rows), and the heap (mallinfo2) has grown by less than
 * 4 MiB since the call began, where the whole batch's work space would
 * take about 10 and 30 MB. Every row then holds its value, but for the
 * few keys evicted (at most one in a hundred, and no more than the
 * evictions counted). A sanitizer's allocator is not seen by mallinfo2:
 * there only the order is checked.
 */
#define _GNU_SOURCE /* mallinfo2 */
#include <malloc.h>

#include "test_util.h"

#define GROWTH_LIMIT ((size_t)4 << 20)

typedef struct watch {
    size_t rows;
    unsigned char *called; /* rows whose function ran at least once */
    size_t done_below;     /* every row below it has had its call */
    size_t heap_before;
    size_t most_growth;
    size_t value_size;
} watch_t;

static size_t heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

static mpidht_update_action_t store_row(size_t index, const void *key, void *value, int present,
                                        void *user_data)
{
    (void)key, (void)present;
    watch_t *w = user_data;
    CHECK(index < w->rows);
    w->called[index] = 1;
    while (w->done_below < w->rows && w->called[w->done_below])
        ++w->done_below;
    CHECK(index < w->done_below + 1024);
    size_t heap = heap_in_use();
    if (heap > w->heap_before && heap - w->heap_before > w->most_growth)
        w->most_growth = heap - w->heap_before;
    test_fill(value, w->value_size, index, 2);
    return MPIDHT_STORE;
}

static void one_batch(mpidht_protocol_t protocol, size_t value_size, size_t rows,
                      size_t memory)
{
    enum { KEY_SIZE = 8 };
    TEST_CONTEXT("%s, %zu rows of %zu-byte values", mpidht_protocol_name(protocol), rows,
                 value_size);
    mpidht_params_t p = test_params(protocol, KEY_SIZE, value_size, memory);
    p.candidates = value_size <= 8 ? 2 : 6;
    mpidht_t *table = NULL;
    CHECK_OK(mpidht_create(MPI_COMM_WORLD, &p, &table));
    mpidht_info_t info = MPIDHT_INFO_INIT;
    CHECK_OK(mpidht_get_info(table, &info));
    if (value_size <= 8) /* the row limit, not the copies', makes the chunk */
        CHECK(info.candidates * info.bucket_size <= ((size_t)256 << 10) / 1024);
    unsigned char *keys = malloc(rows * KEY_SIZE);
    unsigned char *value = malloc(value_size), *out = malloc(value_size);
    watch_t w = {.rows = rows, .called = calloc(rows, 1), .value_size = value_size};
    CHECK(keys && value && out && w.called);
    uint64_t first = (uint64_t)test_rank() * rows;
    for (size_t i = 0; i < rows; ++i)
        test_fill(keys + i * KEY_SIZE, KEY_SIZE, first + i, 1);
    w.heap_before = heap_in_use();
    CHECK_OK(mpidht_update_batch(table, rows, keys, store_row, &w, NULL));
    CHECK(w.done_below == rows);
    CHECK(w.most_growth < GROWTH_LIMIT);
    uint64_t missing = 0, missing_all = 0;
    for (size_t i = 0; i < rows; ++i) {
        test_fill(value, value_size, i, 2);
        mpidht_status_t st = mpidht_read(table, keys + i * KEY_SIZE, out);
        CHECK(st == MPIDHT_OK || st == MPIDHT_NOT_FOUND);
        if (st == MPIDHT_OK)
            CHECK(memcmp(out, value, value_size) == 0);
        missing += st == MPIDHT_NOT_FOUND;
    }
    MPI_Allreduce(&missing, &missing_all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    mpidht_stats_t stats = MPIDHT_STATS_INIT;
    CHECK_OK(mpidht_stats_global(table, &stats));
    CHECK(missing_all <= stats.evictions &&
          missing_all * 100 <= rows * (uint64_t)test_size());
    free(w.called);
    free(out);
    free(value);
    free(keys);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(mpidht_free(&table));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int p = 0; p < TEST_PROTOCOL_COUNT; ++p) {
        /* About 10 MB of engine items and bucket copies if unchunked. */
        one_batch(test_protocols[p], 8, 20000, (size_t)32 << 20);
        /* 6 candidates of 64 KiB per row: 30 MB for 80 rows. */
        one_batch(test_protocols[p], (size_t)64 << 10, 80, (size_t)32 << 20);
    }
    MPI_Finalize();
    return 0;
}
