/*
 * Addressing: one 64-bit hash -> hosting process + candidate buckets.
 *
 * The hash is first passed through a bijective 64-bit finaliser so that a
 * weak user hash (say, the key's first 8 bytes) still spreads over
 * processes and buckets. The host is chosen in proportion to the buckets
 * each process hosts: a point g = (h * total) >> 64 in [0, total) of the
 * concatenated bucket ranges falls into exactly one process's range, so a
 * process with ten times the buckets receives ten times the keys and every
 * process fills at the same rate. The candidates are derived from a
 * second, independent finalisation of (h + (j + 1) * golden ratio) reduced
 * the same way into [0, buckets), and made distinct: a candidate equal to
 * an earlier one moves to the next bucket (cyclically). A host with fewer
 * buckets than candidates offers each of its buckets once. Only unsigned
 * arithmetic is used, so nothing can overflow in the C sense.
 *
 * Pure functions, no MPI: unit-tested directly (tests/c/test_address.c).
 */
#ifndef MPIDHT_ADDRESS_H
#define MPIDHT_ADDRESS_H

#include <stdint.h>

/* High 64 bits of the 128-bit product a * b. */
uint64_t mpidht_mulhi64(uint64_t a, uint64_t b);

/* Bijective avalanche finaliser (MurmurHash3's fmix64 constants). */
uint64_t mpidht_mix64(uint64_t x);

/* Index of the host of hash among `hosts` processes whose bucket ranges
 * start at first[0] = 0 < first[1] < ... < first[hosts] (the total, at
 * least 1; every host has at least one bucket). */
uint32_t mpidht_address_host(uint64_t hash, const uint64_t *first, uint32_t hosts);

/* Fills indices[0..n) with distinct candidate buckets in [0, buckets) for
 * hash and returns n = min(count, buckets); buckets in [1, 2^32]. */
unsigned mpidht_address_candidates(uint64_t hash, uint64_t buckets, unsigned count,
                                   uint32_t *indices);

/* The same derivation in steps: fills indices[from..to) given the
 * candidates indices[0..from) derived before, so that any sequence of
 * steps ends with the indices of one mpidht_address_candidates call.
 * Requires from <= to <= min(count, buckets). */
void mpidht_address_extend(uint64_t hash, uint64_t buckets, unsigned from, unsigned to,
                           uint32_t *indices);

#endif /* MPIDHT_ADDRESS_H */
