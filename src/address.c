#include "address.h"

#include <stdbool.h>

#define GOLDEN_RATIO_64 UINT64_C(0x9e3779b97f4a7c15)
/* Distinguishes the host derivation from the candidate derivations. */
#define HOST_SALT UINT64_C(0xd6e8feb86659fd93)

/* GCC's and Clang's 128-bit integer (every 64-bit target they support):
 * one multiply instruction where the hardware has it. */
__extension__ typedef unsigned __int128 u128;

uint64_t mpidht_mulhi64(uint64_t a, uint64_t b)
{
    return (uint64_t)(((u128)a * b) >> 64);
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

uint32_t mpidht_address_host(uint64_t hash, const uint64_t *first, uint32_t hosts)
{
    if (hosts == 1)
        return 0; /* what the search below finds, without the mixing before it */
    uint64_t g = mpidht_mulhi64(mpidht_mix64(hash ^ HOST_SALT), first[hosts]);
    /* The last host whose range starts at or below g. */
    uint32_t lo = 0, hi = hosts - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (first[mid] <= g)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static bool taken(const uint32_t *indices, unsigned n, uint32_t index)
{
    for (unsigned i = 0; i < n; ++i)
        if (indices[i] == index)
            return true;
    return false;
}

unsigned mpidht_address_candidates(uint64_t hash, uint64_t buckets, unsigned count,
                                   uint32_t *indices)
{
    unsigned n = buckets < count ? (unsigned)buckets : count;
    mpidht_address_extend(hash, buckets, 0, n, indices);
    return n;
}

void mpidht_address_extend(uint64_t hash, uint64_t buckets, unsigned from, unsigned to,
                           uint32_t *indices)
{
    uint64_t base = mpidht_mix64(hash);
    for (unsigned j = from; j < to; ++j) {
        uint64_t h = mpidht_mix64(base + (uint64_t)(j + 1) * GOLDEN_RATIO_64);
        /* buckets <= 2^32, so the product's high half is < 2^32; and at
         * most j < buckets indices are taken, so the walk ends. */
        uint32_t index = (uint32_t)mpidht_mulhi64(h, buckets);
        while (taken(indices, j, index))
            index = (uint64_t)index + 1 == buckets ? 0 : index + 1;
        indices[j] = index;
    }
}
