/*
 * Bucket layout and the decisions every protocol makes the same way.
 * Internal. The layout is described in include/mpidht.h.
 *
 * Buffers handled here are bucket-sized slots laid out exactly like a
 * bucket in the window, whether all of it or only its meta byte and key
 * were fetched.
 */
#ifndef MPIDHT_BUCKET_H
#define MPIDHT_BUCKET_H

#include <stdbool.h>
#include <string.h>

#include "table.h"

enum {
    MPIDHT_META_OCCUPIED = 0x01,
    MPIDHT_META_INVALID = 0x02
};

static inline MPI_Aint mpidht_bucket_disp(const mpidht_t *t, uint32_t index)
{
    /* index < 2^32 and bucket_size is bounded (params.c asserts that the
     * largest bucket times 2^32 fits MPI_Aint): no overflow. */
    return (MPI_Aint)((uint64_t)index * t->bucket_size);
}

static inline unsigned char *mpidht_slot(const mpidht_t *t, unsigned char *base,
                                         unsigned i)
{
    return base + (size_t)i * t->bucket_size;
}

static inline unsigned char mpidht_bucket_meta(const mpidht_t *t,
                                               const unsigned char *b)
{
    return b[t->meta_offset];
}

static inline unsigned char *mpidht_bucket_key(const mpidht_t *t, unsigned char *b)
{
    return b + t->meta_offset + 1;
}

static inline unsigned char *mpidht_bucket_value(const mpidht_t *t,
                                                 unsigned char *b)
{
    return b + t->meta_offset + 1 + t->key_size;
}

/* Occupied, not invalid, and holding exactly key. */
static inline bool mpidht_bucket_holds(const mpidht_t *t, unsigned char *b,
                                       const void *key)
{
    unsigned char meta = mpidht_bucket_meta(t, b);
    return (meta & MPIDHT_META_OCCUPIED) && !(meta & MPIDHT_META_INVALID) &&
           memcmp(mpidht_bucket_key(t, b), key, t->key_size) == 0;
}

/* Usable by a writer without evicting anything. */
static inline bool mpidht_bucket_is_free(const mpidht_t *t,
                                         const unsigned char *b)
{
    unsigned char meta = mpidht_bucket_meta(t, b);
    return !(meta & MPIDHT_META_OCCUPIED) || (meta & MPIDHT_META_INVALID);
}

/* First of slots [first, first + count) of probe that holds key, or -1. */
int mpidht_find_key(const mpidht_t *t, unsigned char *probe, unsigned first,
                    unsigned count, const void *key);

typedef struct mpidht_write_choice {
    unsigned slot;
    mpidht_write_outcome_t outcome;
} mpidht_write_choice_t;

/* Where a write of key goes, given the meta bytes and keys of all n
 * candidates in probe: the first candidate holding key, else the first
 * free one, else the last. */
mpidht_write_choice_t mpidht_choose_slot(const mpidht_t *t,
                                         unsigned char *probe, unsigned n,
                                         const void *key);

/* Fills the bucket-sized slot b with an occupied bucket holding key and
 * value (and, under the lock-free protocol, its checksum). */
void mpidht_stage_bucket(const mpidht_t *t, unsigned char *b, const void *key,
                         const void *value);

/* XXH32 over the key and value of bucket b. */
uint32_t mpidht_bucket_checksum(const mpidht_t *t, unsigned char *b);

#endif /* MPIDHT_BUCKET_H */
