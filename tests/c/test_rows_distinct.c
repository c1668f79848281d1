/*
 * The distinct rows of mpidht.keys.distinct (python/mpidht/_rows.c), on
 * its own so that the sanitizer suite runs it: against a quadratic
 * reference, rows numbered by first appearance for every mix of few and
 * many distinct rows (all distinct, so that probes run long and wrap
 * around the table's end; all equal; rows that differ in one byte only);
 * zero rows and rows of zero bytes; the table's size a power of two of
 * at least twice the rows. Pure: no MPI, no Python.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_rows.h"
#include "unit_expect.h"

/* The numbering by first appearance, the obvious way. */
static void reference(const unsigned char *rows, size_t n, size_t width, int64_t *first,
                      int64_t *number, size_t *distinct)
{
    *distinct = 0;
    for (size_t i = 0; i < n; ++i) {
        size_t c = 0;
        while (c < *distinct && memcmp(rows + (size_t)first[c] * width, rows + i * width,
                                       width) != 0)
            ++c;
        if (c == *distinct)
            first[(*distinct)++] = (int64_t)i;
        number[i] = (int64_t)c;
    }
}

/* A small generator of its own (seeded, the same on every machine). */
static unsigned next_random(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

/* n rows of width bytes drawn from `kinds` rows that differ in their last
 * byte (or in all bytes when spread), compared with the reference. */
static void check_mix(size_t n, size_t width, unsigned kinds, int spread, unsigned seed)
{
    unsigned char *rows = calloc(n * width + 1, 1);
    int64_t *first = malloc((n + 1) * sizeof *first), *number = malloc((n + 1) * sizeof *number);
    int64_t *want_first = malloc((n + 1) * sizeof *want_first);
    int64_t *want_number = malloc((n + 1) * sizeof *want_number);
    int64_t *table = malloc(rows_table_size(n) * sizeof *table);
    EXPECT(rows && first && number && want_first && want_number && table);
    if (!(rows && first && number && want_first && want_number && table))
        exit(EXIT_FAILURE);
    for (size_t i = 0; i < n; ++i) {
        unsigned kind = next_random(&seed) % kinds;
        for (size_t b = 0; b < width; ++b)
            rows[i * width + b] = (unsigned char)(spread ? kind * 31u + b * 7u + (kind >> 8)
                                                         : b + 1 < width ? 0xA5 : kind);
        if (spread && width >= 2) { /* every kind its own two leading bytes */
            rows[i * width] = (unsigned char)kind;
            rows[i * width + 1] = (unsigned char)(kind >> 8);
        }
    }
    size_t want = 0;
    reference(rows, n, width, want_first, want_number, &want);
    memset(table, 0x5C, rows_table_size(n) * sizeof *table); /* any contents */
    size_t got = rows_distinct(rows, n, width, first, number, table);
    EXPECT(got == want);
    EXPECT(got == 0 || memcmp(first, want_first, got * sizeof *first) == 0);
    EXPECT(n == 0 || memcmp(number, want_number, n * sizeof *number) == 0);
    free(rows);
    free(first);
    free(number);
    free(want_first);
    free(want_number);
    free(table);
}

static void test_table_size(void)
{
    for (size_t n = 0; n < 5000; n += 1 + n / 3) {
        size_t size = rows_table_size(n);
        EXPECT(size >= 2 * n && size >= 2 && (size & (size - 1)) == 0);
        EXPECT(size <= 4 * n || size == 2);
    }
}

static void test_mixes(void)
{
    check_mix(0, 16, 1, 0, 1);      /* no rows */
    check_mix(1, 16, 1, 0, 2);
    check_mix(9, 0, 1, 0, 3);       /* rows of no bytes: all one */
    check_mix(500, 3, 4, 0, 4);     /* a few kinds, one byte apart */
    check_mix(3000, 1, 256, 0, 5);  /* every byte value */
    check_mix(2000, 144, 50, 1, 6); /* key-sized rows */
    check_mix(4096, 8, 1, 1, 7);    /* all equal */
}

/* All rows distinct: the table is half full, so probes run long and some
 * wrap around its end. */
static void test_all_distinct(void)
{
    enum { N = 4000 };
    static uint64_t rows[N];
    static int64_t first[N], number[N], table[4 * N];
    for (size_t i = 0; i < N; ++i)
        rows[i] = (uint64_t)i * 0x9E3779B97F4A7C15u;
    EXPECT(rows_table_size(N) <= 4 * N);
    size_t got = rows_distinct((const unsigned char *)rows, N, sizeof rows[0], first, number,
                               table);
    EXPECT(got == N);
    int in_order = 1;
    for (size_t i = 0; i < N; ++i)
        in_order &= first[i] == (int64_t)i && number[i] == (int64_t)i;
    EXPECT(in_order);
}

int main(void)
{
    test_table_size();
    test_mixes();
    test_all_distinct();
    return unit_result("distinct rows");
}
