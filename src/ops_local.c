/*
 * Local iteration: the entries the calling process hosts, copied out in
 * bucket order, one scan step at a time.
 */
#include <string.h>

#include "bucket.h"
#include "scan.h"

mpidht_status_t mpidht_local_next(mpidht_t *table, uint64_t *cursor,
                                  size_t max_entries, void *keys, void *values,
                                  size_t *count)
{
    mpidht_status_t st = mpidht_check_table(table);
    if (st != MPIDHT_OK)
        return st;
    if (!cursor || !keys || !values || !count)
        return MPIDHT_ERR_NULL_ARGUMENT;
    *count = 0;
    if (max_entries == 0 || *cursor > table->local_buckets)
        return MPIDHT_ERR_ITERATION;
    mpidht_t *t = table;
    uint64_t start = *cursor;
    st = mpidht_scan_reserve(t);
    unsigned char *k = keys, *v = values;
    /* A step never covers more buckets than there is room for entries, so
     * every entry it finds can be returned. */
    while (st == MPIDHT_OK && *count < max_entries && *cursor < t->local_buckets) {
        size_t n = mpidht_scan_span(t, *cursor, max_entries - *count);
        st = mpidht_scan_read(t, *cursor, n);
        for (size_t i = 0; st == MPIDHT_OK && i < n; ++i) {
            unsigned char *b = mpidht_scan_entry(t, i);
            if (!b)
                continue;
            memcpy(k + *count * t->key_size, mpidht_bucket_key(t, b), t->key_size);
            memcpy(v + *count * t->value_size, mpidht_bucket_value(t, b),
                   t->value_size);
            ++*count;
        }
        if (st == MPIDHT_OK)
            *cursor += n;
    }
    if (st != MPIDHT_OK) { /* what was copied is not returned: nor passed */
        *count = 0;
        *cursor = start;
    }
    return st;
}
