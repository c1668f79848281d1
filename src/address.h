/*
 * Addressing: one 64-bit hash -> target process + candidate bucket indices.
 *
 * The hash is first passed through a bijective 64-bit finaliser so that a
 * weak user hash (say, the key's first 8 bytes) still spreads over ranks
 * and buckets. The target comes from the high half of a 64x64-bit product
 * (h * hosts) >> 64, which is in [0, hosts) for every hosts >= 1 without a
 * modulo bias worth mentioning or any shift by the width of a type.
 * Candidate j is derived from a second, independent finalisation of
 * (h + (j + 1) * golden ratio) reduced the same way into [0, buckets), so
 * the first index is not correlated with the target. Only unsigned
 * arithmetic is used, so nothing can overflow in the C sense.
 *
 * Pure functions, no MPI: unit-tested directly (tests/c/test_address.c).
 */
#ifndef MPIDHT_ADDRESS_H
#define MPIDHT_ADDRESS_H

#include <stdint.h>

/* High 64 bits of the 128-bit product a * b, portable C99. */
uint64_t mpidht_mulhi64(uint64_t a, uint64_t b);

/* Bijective avalanche finaliser (MurmurHash3's fmix64 constants). */
uint64_t mpidht_mix64(uint64_t x);

/* Index of the target among `hosts` hosting processes; hosts >= 1. */
uint32_t mpidht_address_target(uint64_t hash, uint32_t hosts);

/* Fills indices[0..count) with candidate buckets in [0, buckets) for hash;
 * buckets in [1, 2^32], count >= 0. */
void mpidht_address_candidates(uint64_t hash, uint64_t buckets,
                               unsigned count, uint32_t *indices);

#endif /* MPIDHT_ADDRESS_H */
