/*
 * Unit tests of the addressing derivation (src/address.c), without MPI:
 * every result in range for table sizes 1 .. 2^32 and process counts
 * 1 .. 2^32-1, candidates always distinct, exact 128-bit products at the
 * edges, hosts chosen in proportion to their buckets, spread of first
 * candidates, and no correlation between host and candidate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "unit_expect.h"

static void test_mulhi_edges(void)
{
    const uint64_t max = UINT64_MAX;
    EXPECT(mpidht_mulhi64(0, max) == 0);
    EXPECT(mpidht_mulhi64(1, max) == 0);
    EXPECT(mpidht_mulhi64(max, max) == max - 1);          /* (2^64-1)^2 >> 64 */
    EXPECT(mpidht_mulhi64(UINT64_C(1) << 32, UINT64_C(1) << 32) == 1);
    EXPECT(mpidht_mulhi64(UINT64_C(1) << 63, 2) == 1);
    EXPECT(mpidht_mulhi64(max, UINT64_C(1) << 32) == (UINT64_C(1) << 32) - 1);
    EXPECT(mpidht_mulhi64(UINT64_C(0xffffffff), UINT64_C(0xffffffff)) == 0);
    EXPECT(mpidht_mulhi64(UINT64_C(0x123456789abcdef0), UINT64_C(0xfedcba9876543210)) ==
           UINT64_C(0x121fa00ad77d7422));
}

static void test_ranges(void)
{
    static const uint64_t buckets[] = {1, 2, 3, 5, 6, 7, 255, 256, 257, 65535, 65536,
                                       65537, 7017920, (UINT64_C(1) << 24) + 1,
                                       (UINT64_C(1) << 31), (UINT64_C(1) << 32) - 1,
                                       UINT64_C(1) << 32};
    static const uint64_t hashes[] = {0, 1, UINT64_MAX, UINT64_MAX - 1,
                                      UINT64_C(1) << 63, UINT64_C(0x00ff00ff00ff00ff)};
    for (size_t b = 0; b < sizeof buckets / sizeof *buckets; ++b) {
        for (size_t h = 0; h < sizeof hashes / sizeof *hashes; ++h) {
            uint32_t idx[16];
            unsigned n = mpidht_address_candidates(hashes[h], buckets[b], 16, idx);
            EXPECT(n == (buckets[b] < 16 ? buckets[b] : 16));
            for (unsigned j = 0; j < n; ++j) {
                EXPECT((uint64_t)idx[j] < buckets[b]);
                for (unsigned k = 0; k < j; ++k)
                    EXPECT(idx[k] != idx[j]);
            }
        }
        /* Many hashes: the largest index must reach the top of the table. */
        uint64_t top = 0;
        for (uint64_t i = 0; i < 20000; ++i) {
            uint32_t idx[6];
            unsigned n = mpidht_address_candidates(mpidht_mix64(i), buckets[b], 6, idx);
            for (unsigned j = 0; j < n; ++j)
                if (idx[j] > top)
                    top = idx[j];
        }
        EXPECT(top < buckets[b]);
        if (buckets[b] <= 1000)
            EXPECT(top == buckets[b] - 1);
        else
            EXPECT(top >= buckets[b] - buckets[b] / 1000);
    }
    /* Hosts: in range for any count, whatever the hash. */
    static const uint32_t hosts[] = {1, 2, 3, 4, 7, 1000, 100000};
    static uint64_t first[100001];
    for (size_t n = 0; n < sizeof hosts / sizeof *hosts; ++n) {
        for (uint32_t i = 0; i <= hosts[n]; ++i)
            first[i] = (uint64_t)i * (UINT64_C(1) << 32); /* the largest ranges */
        for (size_t h = 0; h < sizeof hashes / sizeof *hashes; ++h)
            EXPECT(mpidht_address_host(hashes[h], first, hosts[n]) < hosts[n]);
    }
}

static void test_small_hosts_offer_every_bucket(void)
{
    for (uint64_t buckets = 1; buckets < 6; ++buckets) {
        uint32_t idx[6];
        EXPECT(mpidht_address_candidates(99, buckets, 6, idx) == buckets);
        unsigned seen = 0;
        for (uint64_t j = 0; j < buckets; ++j)
            seen |= 1u << idx[j];
        EXPECT(seen == (1u << buckets) - 1);
    }
}

/* Hosts of very different sizes receive keys in proportion to their
 * buckets (the uneven-memory case). */
static void test_host_proportional(void)
{
    enum { N = 2000000 };
    static const uint64_t first[] = {0, 2000, 202000, 202000 + 50000, 252001};
    const uint32_t hosts = 4;
    unsigned got[4] = {0};
    for (uint64_t i = 0; i < N; ++i)
        got[mpidht_address_host(i, first, hosts)]++;
    for (uint32_t h = 0; h < hosts; ++h) {
        double expect = (double)N * (double)(first[h + 1] - first[h]) / (double)first[hosts];
        double tolerance = 5 * sqrt(expect) + 1;
        EXPECT(fabs(got[h] - expect) < tolerance);
    }
    EXPECT(got[3] < 40); /* one bucket out of 252001 */
}

/* Joint histogram of (host, first candidate) for consecutive integer
 * hashes, the worst case for a derivation that slices raw hash bits:
 * every cell must be near the mean, i.e. host and index independent. */
static void test_target_index_independent(void)
{
    enum { HOSTS = 4, BUCKETS = 8, N = 64000 };
    static const uint64_t first[HOSTS + 1] = {0, 8, 16, 24, 32};
    unsigned cell[HOSTS][BUCKETS] = {{0}};
    unsigned per_target[HOSTS] = {0};
    for (uint64_t i = 0; i < N; ++i) {
        uint32_t idx;
        uint32_t target = mpidht_address_host(i, first, HOSTS);
        mpidht_address_candidates(i, BUCKETS, 1, &idx);
        cell[target][idx]++;
        per_target[target]++;
    }
    const double mean = (double)N / (HOSTS * BUCKETS);
    double chi2 = 0;
    for (int t = 0; t < HOSTS; ++t) {
        EXPECT(per_target[t] > N / HOSTS * 9 / 10);
        for (int b = 0; b < BUCKETS; ++b) {
            double d = cell[t][b] - mean;
            chi2 += d * d / mean;
            EXPECT(cell[t][b] > mean * 0.85 && cell[t][b] < mean * 1.15);
        }
    }
    /* 31 degrees of freedom: the 99.9 % quantile is about 61.1. */
    EXPECT(chi2 < 61.1);
}

static void test_deterministic(void)
{
    uint32_t a[6], b[6];
    mpidht_address_candidates(UINT64_C(42), 1000, 6, a);
    mpidht_address_candidates(UINT64_C(42), 1000, 6, b);
    for (int j = 0; j < 6; ++j)
        EXPECT(a[j] == b[j]);
    /* A prefix of a longer list is the shorter list. */
    uint32_t c[16];
    mpidht_address_candidates(UINT64_C(42), 1000, 16, c);
    for (int j = 0; j < 6; ++j)
        EXPECT(a[j] == c[j]);
    /* count 0 writes nothing. */
    uint32_t untouched = 12345;
    EXPECT(mpidht_address_candidates(1, 10, 0, &untouched) == 0);
    EXPECT(untouched == 12345);
}

/* Candidates derived in steps (a read derives the others only after a
 * miss at the first) are those of one call, also where candidates
 * collide and move on (hosts of 1 to 9 buckets) and for every split. */
static void test_extend_in_steps(void)
{
    static const uint64_t buckets[] = {1, 2, 3, 5, 6, 7, 9, 1000, 4294967296u};
    for (size_t b = 0; b < sizeof buckets / sizeof *buckets; ++b)
        for (uint64_t i = 0; i < 2000; ++i) {
            uint64_t hash = mpidht_mix64(i * 7 + b);
            uint32_t whole[6], steps[6];
            unsigned n = mpidht_address_candidates(hash, buckets[b], 6, whole);
            for (unsigned split = 0; split <= n; ++split) {
                memset(steps, 0xff, sizeof steps);
                mpidht_address_extend(hash, buckets[b], 0, split, steps);
                mpidht_address_extend(hash, buckets[b], split, split, steps);
                mpidht_address_extend(hash, buckets[b], split, n, steps);
                EXPECT(memcmp(whole, steps, n * sizeof *steps) == 0);
            }
        }
}

int main(void)
{
    test_mulhi_edges();
    test_ranges();
    test_small_hosts_offer_every_bucket();
    test_host_proportional();
    test_target_index_independent();
    test_deterministic();
    test_extend_in_steps();
    return unit_result("address");
}
