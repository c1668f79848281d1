#include "address.h"

#define GOLDEN_RATIO_64 UINT64_C(0x9e3779b97f4a7c15)
/* Distinguishes the target derivation from the candidate derivations. */
#define TARGET_SALT UINT64_C(0xd6e8feb86659fd93)

uint64_t mpidht_mulhi64(uint64_t a, uint64_t b)
{
    const uint64_t mask = UINT64_C(0xffffffff);
    uint64_t a_lo = a & mask, a_hi = a >> 32;
    uint64_t b_lo = b & mask, b_hi = b >> 32;
    uint64_t lo_lo = a_lo * b_lo;
    uint64_t hi_lo = a_hi * b_lo;
    uint64_t lo_hi = a_lo * b_hi;
    uint64_t hi_hi = a_hi * b_hi;
    /* At most (2^32-1) + (2^32-1) + (2^32-1)^2 = 2^64 - 1: no wrap. */
    uint64_t cross = (lo_lo >> 32) + (hi_lo & mask) + lo_hi;
    return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

uint64_t mpidht_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

uint32_t mpidht_address_target(uint64_t hash, uint32_t hosts)
{
    return (uint32_t)mpidht_mulhi64(mpidht_mix64(hash ^ TARGET_SALT), hosts);
}

void mpidht_address_candidates(uint64_t hash, uint64_t buckets,
                               unsigned count, uint32_t *indices)
{
    uint64_t base = mpidht_mix64(hash);
    for (unsigned j = 0; j < count; ++j) {
        uint64_t h = mpidht_mix64(base + (uint64_t)(j + 1) * GOLDEN_RATIO_64);
        /* buckets <= 2^32, so the product's high half is < 2^32. */
        indices[j] = (uint32_t)mpidht_mulhi64(h, buckets);
    }
}
