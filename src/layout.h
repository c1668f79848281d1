/*
 * Where the fields of a bucket lie (the layout is described in
 * include/mpidht.h and src/bucket.h). Pure, no MPI. Internal.
 */
#ifndef MPIDHT_LAYOUT_H
#define MPIDHT_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "mpidht.h"

typedef struct mpidht_layout {
    bool has_lock;        /* fine and lock-free: the lock word at offset 0 */
    bool has_sum;         /* lock-free: the checksum */
    size_t lock_offset;   /* valid if has_lock */
    size_t gen_offset;    /* valid if has_lock: the generation word */
    size_t recency_offset;
    size_t sum_offset;    /* valid if has_sum */
    size_t meta_offset;
    size_t data_offset;   /* first byte a write puts */
    size_t data_size;     /* bytes a write puts */
    size_t bucket_size;   /* stride, a multiple of 8 */
} mpidht_layout_t;

/* The layout of a bucket; protocol must be a known one. */
mpidht_layout_t mpidht_layout(mpidht_protocol_t protocol, size_t key_size,
                              size_t value_size);

#endif /* MPIDHT_LAYOUT_H */
