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

int keygen_zipf_init(keygen_zipf_t *z, uint64_t n, double theta)
{
    if (n < 2 || !(theta > 0.0 && theta < 1.0))
        return -1;
    double zetan = 0.0;
    for (uint64_t i = n; i >= 1; --i) /* small terms first: less rounding */
        zetan += pow((double)i, -theta);
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
    uint64_t v = 1 + (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
    return v > z->n ? z->n : v;
}
