/*
 * Distinct rows: open addressing with linear probing over a table of at
 * least twice as many slots as rows, each slot the distinct row's number
 * (-1: empty); a row is hashed with XXH3 and compared byte for byte with
 * the first row of a slot's number.
 */
#include "_rows.h"

#include <string.h>
#include <xxhash.h>

size_t rows_table_size(size_t n)
{
    size_t size = 2;
    while (size < 2 * n)
        size *= 2;
    return size;
}

size_t rows_distinct(const unsigned char *rows, size_t n, size_t width, int64_t *first,
                     int64_t *number, int64_t *table)
{
    const size_t mask = rows_table_size(n) - 1;
    for (size_t s = 0; s <= mask; ++s)
        table[s] = -1;
    size_t distinct = 0;
    for (size_t i = 0; i < n; ++i) {
        const unsigned char *row = rows + i * width;
        size_t s = (size_t)XXH3_64bits(row, width) & mask;
        while (table[s] >= 0 && memcmp(rows + (size_t)first[table[s]] * width, row, width) != 0)
            s = (s + 1) & mask;
        if (table[s] < 0) {
            table[s] = (int64_t)distinct;
            first[distinct++] = (int64_t)i;
        }
        number[i] = table[s];
    }
    return distinct;
}
