#include "bucket.h"

#include <xxhash.h>

#include "layout.h"

/* Seed for bucket checksums; any constant works, it only has to be the
 * same on every process. */
#define MPIDHT_CHECKSUM_SEED UINT64_C(0x6d70696468740002)

mpidht_layout_t mpidht_layout(mpidht_protocol_t protocol, size_t key_size,
                              size_t value_size)
{
    mpidht_layout_t l = {0};
    size_t at = 0;
    l.has_lock = protocol != MPIDHT_PROTOCOL_COARSE;
    l.has_sum = protocol == MPIDHT_PROTOCOL_LOCKFREE;
    if (l.has_lock) {
        l.lock_offset = at;
        at += sizeof(int64_t);
        l.gen_offset = at;
        at += sizeof(uint64_t);
    }
    l.recency_offset = at;
    at += sizeof(uint64_t);
    l.data_offset = at;
    if (l.has_sum) {
        l.sum_offset = at;
        at += sizeof(uint64_t);
    }
    l.meta_offset = at;
    at += 1 + key_size + value_size;
    l.data_size = at - l.data_offset;
    l.bucket_size = (at + 7) & ~(size_t)7;
    return l;
}

int mpidht_find_key(const mpidht_t *t, unsigned char *slots, unsigned first,
                    unsigned count, const void *key)
{
    for (unsigned i = first; i < first + count; ++i)
        if (mpidht_bucket_holds(t, mpidht_slot(t, slots, i), key))
            return (int)i;
    return -1;
}

mpidht_write_choice_t mpidht_choose_slot(const mpidht_t *t, unsigned char *slots,
                                         unsigned n, const void *key,
                                         const uint64_t *recency)
{
    int found = mpidht_find_key(t, slots, 0, n, key);
    if (found >= 0)
        return (mpidht_write_choice_t){(unsigned)found, MPIDHT_WRITE_UPDATED};
    for (unsigned i = 0; i < n; ++i)
        if (mpidht_bucket_is_free(t, mpidht_slot(t, slots, i)))
            return (mpidht_write_choice_t){i, MPIDHT_WRITE_INSERTED};
    unsigned victim = n - 1;
    if (recency)
        for (unsigned i = n - 1; i-- > 0;)
            if (recency[i] < recency[victim])
                victim = i;
    return (mpidht_write_choice_t){victim, MPIDHT_WRITE_EVICTED};
}

static uint64_t checksum(const mpidht_t *t, unsigned char *b)
{
    /* Meta byte, key and value are contiguous. */
    return XXH3_64bits_withSeed(b + t->layout.meta_offset,
                                1 + t->key_size + t->value_size,
                                MPIDHT_CHECKSUM_SEED);
}

void mpidht_stage_bucket(const mpidht_t *t, unsigned char *b, const void *key,
                         const void *value)
{
    b[t->layout.meta_offset] = MPIDHT_META_OCCUPIED;
    memcpy(mpidht_bucket_key(t, b), key, t->key_size);
    memcpy(mpidht_bucket_value(t, b), value, t->value_size);
    if (t->layout.has_sum) {
        uint64_t sum = checksum(t, b);
        memcpy(b + t->layout.sum_offset, &sum, sizeof sum);
    }
}

bool mpidht_bucket_intact(const mpidht_t *t, unsigned char *b)
{
    if (!t->layout.has_sum)
        return true;
    uint64_t stored;
    memcpy(&stored, b + t->layout.sum_offset, sizeof stored);
    return stored == checksum(t, b);
}
