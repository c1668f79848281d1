/*
 * Reading the calling process's own buckets in ranges, each bucket whole,
 * for local iteration and dump. Internal.
 */
#ifndef MPIDHT_SCAN_H
#define MPIDHT_SCAN_H

#include "table.h"

/* Bytes of buckets one scan step copies (at least one bucket). */
#define MPIDHT_SCAN_BYTES ((size_t)1 << 20)

typedef struct mpidht_scan {
    size_t capacity;         /* buckets per step */
    unsigned char *buckets;  /* [capacity] bucket copies */
} mpidht_scan_t;

/* Allocates t->scan at first use. MPIDHT_OK or MPIDHT_ERR_NO_MEMORY. */
mpidht_status_t mpidht_scan_reserve(mpidht_t *t);

/* Frees t->scan (with the table). */
void mpidht_scan_release(mpidht_t *t);

/* Copies this process's buckets [first, first + n) into t->scan->buckets
 * as the protocol reads (MPIDHT_OP_SCAN items); n <= capacity and
 * first + n <= local_buckets. */
mpidht_status_t mpidht_scan_read(mpidht_t *t, uint64_t first, size_t n);

/* Copies this process's buckets index[0..n) (n <= MPIDHT_MAX_CANDIDATES,
 * each index < local_buckets) into n bucket-sized slots at out, as the
 * protocol reads (MPIDHT_OP_SCAN items). Requires the engine reserved for
 * an item (not t->scan). */
mpidht_status_t mpidht_scan_read_at(mpidht_t *t, const uint32_t *index, unsigned n,
                                    unsigned char *out);

/* Copy i of the last scan step if it holds an entry, else NULL. */
unsigned char *mpidht_scan_entry(const mpidht_t *t, size_t i);

/* Buckets a step starting at bucket first covers: at most the capacity,
 * limit, and what is left of this process's buckets. */
size_t mpidht_scan_span(const mpidht_t *t, uint64_t first, size_t limit);

/* Calls visit(ctx, bucket) for every entry this process hosts, in bucket
 * order, until visit returns other than MPIDHT_OK; returns that status or
 * the scan's. bucket is a whole copy, got as the protocol reads; on a
 * direct table the bucket itself, looked at in place (visit must not
 * write it). Requires that no operation is in flight anywhere (inside a
 * collective call, as dump's). */
typedef mpidht_status_t (*mpidht_scan_visit_fn)(void *ctx, unsigned char *bucket);
mpidht_status_t mpidht_scan_all(mpidht_t *t, mpidht_scan_visit_fn visit, void *ctx);

#endif /* MPIDHT_SCAN_H */
