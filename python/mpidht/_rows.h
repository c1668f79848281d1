/*
 * Distinct rows of bytes (mpidht.keys.distinct), internal to the
 * extension: one pass with a hash table instead of sorting the rows.
 */
#ifndef MPIDHT_PY_ROWS_H
#define MPIDHT_PY_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* Slots of the hash table rows_distinct needs for n rows (a power of
 * two, at least 2 n, at most 4 n; n at most SIZE_MAX / 4). */
size_t rows_table_size(size_t n);

/*
 * The distinct rows among n rows of width bytes each (rows + i * width),
 * numbered 0, 1, ... in the order they first appear: first[c] the row
 * where distinct row c first appears, number[i] the number of row i's
 * distinct row. table holds rows_table_size(n) slots (any contents).
 * Returns the number of distinct rows (0 for n == 0).
 */
size_t rows_distinct(const unsigned char *rows, size_t n, size_t width, int64_t *first,
                     int64_t *number, int64_t *table);

#endif
