/*
 * Bucket layout and the decisions every protocol makes the same way: the
 * one place that knows where each field of a bucket lies. Internal. The
 * layout is described in include/mpidht.h:
 *
 *   coarse     | recency 8 | meta 1 | key | value |
 *   fine       | lock 8 | gen 8 | recency 8 | meta 1 | key | value |
 *   lock-free  | lock 8 | gen 8 | recency 8 | sum 8 | meta 1 | key | value |
 *
 * padded to a multiple of 8 bytes. "Data" is what a write puts: the sum
 * (lock-free), the meta byte, the key and the value, contiguous.
 *
 * Buffers handled here are bucket-sized slots laid out exactly like a
 * bucket in the window, whether all of it or only part was fetched.
 */
#ifndef MPIDHT_BUCKET_H
#define MPIDHT_BUCKET_H

#include <stdbool.h>
#include <string.h>

#include "table.h"

enum { MPIDHT_META_OCCUPIED = 0x01 };

static inline MPI_Aint mpidht_bucket_disp(const mpidht_t *t, uint32_t index)
{
    /* index < 2^32 and bucket_size is bounded (params.c asserts that the
     * largest bucket times 2^32 fits MPI_Aint): no overflow. */
    return (MPI_Aint)((uint64_t)index * t->layout.bucket_size);
}

static inline unsigned char *mpidht_slot(const mpidht_t *t, unsigned char *base,
                                         unsigned i)
{
    return base + (size_t)i * t->layout.bucket_size;
}

static inline unsigned char mpidht_bucket_meta(const mpidht_t *t,
                                               const unsigned char *b)
{
    return b[t->layout.meta_offset];
}

static inline unsigned char *mpidht_bucket_key(const mpidht_t *t, unsigned char *b)
{
    return b + t->layout.meta_offset + 1;
}

static inline unsigned char *mpidht_bucket_value(const mpidht_t *t,
                                                 unsigned char *b)
{
    return b + t->layout.meta_offset + 1 + t->key_size;
}

/* Occupied and holding exactly key. */
static inline bool mpidht_bucket_holds(const mpidht_t *t, const unsigned char *b,
                                       const void *key)
{
    return (mpidht_bucket_meta(t, b) & MPIDHT_META_OCCUPIED) &&
           memcmp(b + t->layout.meta_offset + 1, key, t->key_size) == 0;
}

/* Usable by a writer without evicting anything. */
static inline bool mpidht_bucket_is_free(const mpidht_t *t, const unsigned char *b)
{
    return !(mpidht_bucket_meta(t, b) & MPIDHT_META_OCCUPIED);
}

/* First of slots [first, first + count) of slots that holds key, or -1. */
int mpidht_find_key(const mpidht_t *t, unsigned char *slots, unsigned first,
                    unsigned count, const void *key);

typedef struct mpidht_write_choice {
    unsigned slot;
    mpidht_write_outcome_t outcome;
} mpidht_write_choice_t;

/* Where a write of key goes, given the meta bytes and keys of all n
 * candidates in slots (and their recency words, or NULL where the victim
 * is not chosen by them): the candidate holding key, else the first free
 * one, else the least recent (the last on a tie; the last without
 * recency words). */
mpidht_write_choice_t mpidht_choose_slot(const mpidht_t *t, unsigned char *slots,
                                         unsigned n, const void *key,
                                         const uint64_t *recency);

/* Fills the data of bucket-sized slot b: checksum (lock-free), the meta
 * byte of an occupied bucket, key and value. */
void mpidht_stage_bucket(const mpidht_t *t, unsigned char *b, const void *key,
                         const void *value);

/* Whether the lock-free checksum of slot b matches its meta, key and value
 * (always true under the other protocols). */
bool mpidht_bucket_intact(const mpidht_t *t, unsigned char *b);

#endif /* MPIDHT_BUCKET_H */
