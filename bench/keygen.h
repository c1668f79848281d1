/*
 * Key generators for the benchmarks: a small, fast uniform generator
 * (splitmix64) and Zipf-distributed integers after Gray et al., "Quickly
 * generating billion-record synthetic databases" (SIGMOD 1994): one O(n)
 * set-up, then O(1) per draw. Pure C, no MPI.
 */
#ifndef MPIDHT_BENCH_KEYGEN_H
#define MPIDHT_BENCH_KEYGEN_H

#include <stdint.h>

typedef struct {
    uint64_t state;
} keygen_rng_t;

/* Next 64 random bits (splitmix64). */
uint64_t keygen_next(keygen_rng_t *rng);

/* Uniform double in [0, 1). */
double keygen_unit(keygen_rng_t *rng);

typedef struct {
    uint64_t n;     /* values are 1..n */
    double theta;   /* skew, 0 < theta < 1 (the paper: 0.99) */
    double zetan;   /* sum_{i=1..n} i^-theta */
    double alpha;   /* 1 / (1 - theta) */
    double eta;
    double half_pow_theta; /* 0.5^theta */
} keygen_zipf_t;

/* sum_{i=1..n} i^-theta, in a time bounded whatever n (exact term by
 * term up to 2^22, beyond in closed form). */
double keygen_zeta(uint64_t n, double theta);

/* Prepares draws over 1..n with skew theta. Returns 0, or -1 if n < 2 or
 * theta is not in (0, 1). */
int keygen_zipf_init(keygen_zipf_t *z, uint64_t n, double theta);

/* One Zipf-distributed value in 1..n: value k has probability
 * k^-theta / zetan. */
uint64_t keygen_zipf_next(const keygen_zipf_t *z, keygen_rng_t *rng);

#endif /* MPIDHT_BENCH_KEYGEN_H */
