/*
 * The benchmark's key generators: Zipf draws follow k^-theta / zeta(n)
 * for the most frequent values and stay in 1..n, the skew parameter is
 * validated, and uniform draws are uniform. Deterministic seeds, so the
 * bounds below are fixed facts, not chances.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "keygen.h"
#include "unit_expect.h"

/* Gray's method draws 1 and 2 exactly, approximates the rest with a
 * continuous curve (known to overweight small values a little) and
 * follows the k^-theta power law: the log-log slope over 10..1000 is
 * -theta. */
static void zipf_distribution(uint64_t n, double theta)
{
    enum { DRAWS = 4000000, TOP = 1000 };
    keygen_zipf_t z;
    EXPECT(keygen_zipf_init(&z, n, theta) == 0);
    keygen_rng_t rng = {42};
    static uint64_t count[TOP + 1];
    for (int k = 0; k <= TOP; ++k)
        count[k] = 0;
    for (int i = 0; i < DRAWS; ++i) {
        uint64_t v = keygen_zipf_next(&z, &rng);
        EXPECT(v >= 1 && v <= n);
        if (v <= TOP)
            count[v]++;
    }
    for (uint64_t k = 1; k <= 10; ++k) {
        double expect = pow((double)k, -theta) / z.zetan * DRAWS;
        double ratio = (double)count[k] / expect;
        EXPECT(k <= 2 ? fabs(ratio - 1.0) < 0.02 : ratio > 0.98 && ratio < 1.25);
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    for (uint64_t k = 10; k <= TOP; ++k) {
        if (!count[k])
            continue;
        double x = log((double)k), y = log((double)count[k]);
        sx += x, sy += y, sxx += x * x, sxy += x * y, m += 1;
    }
    double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
    EXPECT(fabs(slope + theta) < 0.05);
}

/* zeta(n) past the terms summed one by one agrees with the sum of all
 * terms; any range up to 2^64 - 1 is prepared at once (it took one
 * pow() per value) and draws stay in it. */
static void zipf_large_ranges(void)
{
    uint64_t n = (UINT64_C(1) << 22) + 1234567;
    double exact = 0.0;
    for (uint64_t i = n; i >= 1; --i)
        exact += pow((double)i, -0.99);
    EXPECT(fabs(keygen_zeta(n, 0.99) / exact - 1.0) < 1e-12);
    keygen_zipf_t z;
    EXPECT(keygen_zipf_init(&z, UINT64_MAX, 0.99) == 0);
    EXPECT(z.zetan > exact && isfinite(z.zetan));
    /* 2^63 - 1, which a double rounds up to 2^63: the draws near the top
     * stay at most n. */
    uint64_t top = (UINT64_C(1) << 63) - 1;
    EXPECT(keygen_zipf_init(&z, top, 0.5) == 0);
    keygen_rng_t rng = {3};
    uint64_t high = 0; /* at a skew of 0.5, about 29 % of draws lie above n / 2 */
    for (int i = 0; i < 100000; ++i) {
        uint64_t v = keygen_zipf_next(&z, &rng);
        EXPECT(v >= 1 && v <= top);
        high += v > top / 2;
    }
    EXPECT(high > 20000);
}

static void uniform(void)
{
    enum { BINS = 16, DRAWS = 1600000 };
    keygen_rng_t rng = {7};
    unsigned bin[BINS] = {0};
    for (int i = 0; i < DRAWS; ++i) {
        double u = keygen_unit(&rng);
        EXPECT(u >= 0.0 && u < 1.0);
        bin[(int)(u * BINS)]++;
    }
    for (int b = 0; b < BINS; ++b)
        EXPECT(abs((int)bin[b] - DRAWS / BINS) < DRAWS / BINS / 50);
}

int main(void)
{
    keygen_zipf_t z;
    EXPECT(keygen_zipf_init(&z, 1, 0.99) == -1);
    EXPECT(keygen_zipf_init(&z, 100, 0.0) == -1);
    EXPECT(keygen_zipf_init(&z, 100, 1.0) == -1);
    EXPECT(keygen_zipf_init(&z, 100, NAN) == -1);
    zipf_distribution(712500, 0.99); /* the paper's setting */
    zipf_distribution(1000, 0.5);
    zipf_large_ranges();
    uniform();
    return unit_result("key generator");
}
