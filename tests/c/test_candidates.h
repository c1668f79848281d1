/*
 * Keys placed on purpose, for tests whose table has three buckets and
 * three candidates per key and hashes a key as its first 8 bytes
 * (test_hash_first_bytes): which buckets a hash's candidates are, in
 * order, comes from the library's own addressing (src/address.c, built
 * into the test). Header-only.
 */
#ifndef MPIDHT_TEST_CANDIDATES_H
#define MPIDHT_TEST_CANDIDATES_H

#include <stdint.h>

#include "address.h"

/* The candidates of hash among three buckets, in order. */
static inline void test_candidates3(uint64_t hash, uint32_t order[3])
{
    mpidht_address_candidates(hash, 3, 3, order);
}

/* The next hash after *h whose first candidate is first and, unless
 * second is 3, whose second is second; *h becomes it. */
static inline uint64_t test_hash_at(uint64_t *h, uint32_t first, uint32_t second)
{
    uint32_t order[3];
    do
        test_candidates3(++*h, order);
    while (order[0] != first || (second < 3 && order[1] != second));
    return *h;
}

#endif /* MPIDHT_TEST_CANDIDATES_H */
