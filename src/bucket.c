#include "bucket.h"

#include <xxhash.h>

/* Seed for bucket checksums; any constant works, it only has to be the
 * same on every process. */
#define MPIDHT_CHECKSUM_SEED 0x6d706964u

int mpidht_find_key(const mpidht_t *t, unsigned char *probe, unsigned first,
                    unsigned count, const void *key)
{
    for (unsigned i = first; i < first + count; ++i)
        if (mpidht_bucket_holds(t, mpidht_slot(t, probe, i), key))
            return (int)i;
    return -1;
}

mpidht_write_choice_t mpidht_choose_slot(const mpidht_t *t,
                                         unsigned char *probe, unsigned n,
                                         const void *key)
{
    int found = mpidht_find_key(t, probe, 0, n, key);
    if (found >= 0)
        return (mpidht_write_choice_t){(unsigned)found, MPIDHT_WRITE_UPDATED};
    for (unsigned i = 0; i < n; ++i)
        if (mpidht_bucket_is_free(t, mpidht_slot(t, probe, i)))
            return (mpidht_write_choice_t){i, MPIDHT_WRITE_INSERTED};
    return (mpidht_write_choice_t){n - 1, MPIDHT_WRITE_EVICTED};
}

uint32_t mpidht_bucket_checksum(const mpidht_t *t, unsigned char *b)
{
    /* Key and value are contiguous in every layout. */
    return XXH32(mpidht_bucket_key(t, b), t->key_size + t->value_size,
                 MPIDHT_CHECKSUM_SEED);
}

void mpidht_stage_bucket(const mpidht_t *t, unsigned char *b, const void *key,
                         const void *value)
{
    b[t->meta_offset] = MPIDHT_META_OCCUPIED;
    memcpy(mpidht_bucket_key(t, b), key, t->key_size);
    memcpy(mpidht_bucket_value(t, b), value, t->value_size);
    if (t->protocol == MPIDHT_PROTOCOL_LOCKFREE) {
        uint32_t sum = mpidht_bucket_checksum(t, b);
        memcpy(b, &sum, sizeof sum);
    }
}
