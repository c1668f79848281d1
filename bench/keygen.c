#include "keygen.h"

#include <math.h>

uint64_t keygen_next(keygen_rng_t *rng)
{
    uint64_t z = (rng->state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

double keygen_unit(keygen_rng_t *rng)
{
    return (double)(keygen_next(rng) >> 11) * 0x1.0p-53;
}

/* Terms of zeta(n) summed one by one; beyond, the rest in closed form. */
#define ZETA_TERMS (UINT64_C(1) << 22)

/* sum_{i=1..n} i^-theta: term by term up to ZETA_TERMS, the terms after
 * those by Euler-Maclaurin (the integral, the end correction and the
 * first derivative term; the next is about 1e-30 of the sum there), so
 * that any n takes a bounded time (summing 2^64 terms took millennia). */
double keygen_zeta(uint64_t n, double theta)
{
    uint64_t m = n < ZETA_TERMS ? n : ZETA_TERMS;
    double sum = 0.0;
    for (uint64_t i = m; i >= 1; --i) /* small terms first: less rounding */
        sum += pow((double)i, -theta);
    if (n > m) {
        double a = (double)m, b = (double)n, e = 1.0 - theta;
        sum += (pow(b, e) - pow(a, e)) / e + (pow(b, -theta) - pow(a, -theta)) / 2 -
               theta * (pow(b, -theta - 1) - pow(a, -theta - 1)) / 12;
    }
    return sum;
}

int keygen_zipf_init(keygen_zipf_t *z, uint64_t n, double theta)
{
    if (n < 2 || !(theta > 0.0 && theta < 1.0))
        return -1;
    double zetan = keygen_zeta(n, theta);
    double zeta2 = 1.0 + pow(2.0, -theta);
    z->n = n;
    z->theta = theta;
    z->zetan = zetan;
    z->alpha = 1.0 / (1.0 - theta);
    z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / zetan);
    z->half_pow_theta = pow(0.5, theta);
    return 0;
}

uint64_t keygen_zipf_next(const keygen_zipf_t *z, keygen_rng_t *rng)
{
    double u = keygen_unit(rng);
    double uz = u * z->zetan;
    if (uz < 1.0)
        return 1;
    if (uz < 1.0 + z->half_pow_theta)
        return 2;
    double x = (double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha);
    if (!(x < (double)z->n)) /* also where n is near 2^64, which no uint64_t holds */
        return z->n;
    uint64_t v = 1 + (uint64_t)x;
    return v > z->n ? z->n : v;
}
