/*
 * mpidht_key_encode: approximate keys from rows of numbers (the contract
 * is in include/mpidht.h). Pure: no table, no MPI.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpidht.h"

enum { SIGNIFICANT_MAX = 15, DECIMAL_MAX = 20 };

static bool column_valid(const mpidht_key_column_t *c)
{
    switch (c->rounding) {
    case MPIDHT_KEY_EXACT:
        return true;
    case MPIDHT_KEY_SIGNIFICANT:
        if (c->digits < 1 || c->digits > SIGNIFICANT_MAX)
            return false;
        break;
    case MPIDHT_KEY_DECIMAL:
        if (c->digits < -DECIMAL_MAX || c->digits > DECIMAL_MAX)
            return false;
        break;
    default:
        return false;
    }
    return isfinite(c->floor) && c->floor >= 0;
}

static int64_t double_bits(double x)
{
    int64_t bits;
    x += 0.0; /* -0.0 becomes 0.0 */
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

/* pow(10, k) for the k a call needs, each computed once per call: pow is
 * the costly part of an element, and the exponents of a batch cluster. */
enum { POW_MIN = -360, POW_MAX = 330 };
typedef struct {
    double value[POW_MAX - POW_MIN + 1];
    unsigned char known[POW_MAX - POW_MIN + 1];
} powers_t;

static double pow10_of(powers_t *p, int k)
{
    if (k < POW_MIN || k > POW_MAX)
        return pow(10.0, k);
    size_t i = (size_t)(k - POW_MIN);
    if (!p->known[i]) {
        p->value[i] = pow(10.0, k);
        p->known[i] = 1;
    }
    return p->value[i];
}

/* The decimal exponent of |x| > 0: the e with 10^e <= |x| < 10^(e+1),
 * as pow(10, e) and pow(10, e + 1) compare with |x| (doubles, so every
 * process agrees). From the binary exponent, 2^(b-1) <= |x| < 2^b, the
 * guess floor((b - 1) log10 2) is at most one below it. */
static int decimal_exponent(powers_t *p, double x)
{
    double a = fabs(x);
    int b;
    (void)frexp(a, &b);
    int e = (int)floor((b - 1) * 0.30102999566398119521);
    while (pow10_of(p, e) > a)
        --e;
    while (pow10_of(p, e + 1) <= a)
        ++e;
    return e;
}

/* x rounded to `digits` significant digits as the C library's printf
 * rounds it: from x's exact binary value, half to even. ("%e" puts no
 * other digits than these, whatever the locale.) */
static void round_exactly(double x, int digits, int64_t element[2])
{
    char text[48]; /* "-d.dddddddddddddde-308" at most */
    snprintf(text, sizeof text, "%.*e", digits - 1, x);
    const char *c = text;
    int64_t m = 0;
    for (; *c != 'e'; ++c) /* past the sign and the locale's decimal point */
        if (*c >= '0' && *c <= '9')
            m = m * 10 + (*c - '0');
    element[0] = text[0] == '-' ? -m : m;
    element[1] = strtol(c + 1, NULL, 10) - (digits - 1);
}

/* (m, e) with x ~ m * 10^e, 10^(digits-1) <= |m| < 10^digits; 0 -> (0, 0). */
static void round_significant(powers_t *p, double x, int digits, int64_t element[2])
{
    if (x == 0) {
        element[0] = element[1] = 0;
        return;
    }
    /* Below DBL_MIN, 10^e is itself subnormal, with too few bits to place
     * x among the powers of ten (pow(10, -320) is 9.99989e-321): printf. */
    if (fabs(x) < DBL_MIN) {
        round_exactly(x, digits, element);
        return;
    }
    int e = decimal_exponent(p, x) - (digits - 1);
    /* 10^e underflows below about 1e-308: scale tiny values up first. */
    double q = e < -290 ? x * 1e100 / pow10_of(p, e + 100) : x / pow10_of(p, e);
    /* q is x / 10^e but for the rounding of 10^e (and 1e100) and of the
     * division: a few units in its last place. Within a margin of that
     * of a half, nearbyint may round it across the half from where x's
     * exact value lies; printf decides those from the exact value. */
    double half = fabs(q - trunc(q)) - 0.5;
    if (fabs(half) <= 16 * DBL_EPSILON * fabs(q)) {
        round_exactly(x, digits, element);
        return;
    }
    double m = nearbyint(q); /* half to even */
    if (fabs(m) >= pow10_of(p, digits)) { /* 9.99 -> 10.0: one digit more */
        m = nearbyint(m / 10);
        ++e;
    }
    element[0] = (int64_t)m;
    element[1] = e;
}

/* One column's element; false if x cannot be encoded. */
static bool encode_value(powers_t *p, const mpidht_key_column_t *c, double x,
                         int64_t element[2])
{
    if (c->rounding == MPIDHT_KEY_EXACT) {
        element[0] = double_bits(x);
        element[1] = 0;
        return !isnan(x);
    }
    if (!isfinite(x))
        return false;
    if (fabs(x) < c->floor)
        x = 0;
    if (c->log) {
        if (x <= 0) {
            element[0] = 0;
            element[1] = INT64_MIN;
            return true;
        }
        x = log10(x);
    }
    if (c->rounding == MPIDHT_KEY_SIGNIFICANT) {
        round_significant(p, x, c->digits, element);
        return true;
    }
    double whole = trunc(x * pow10_of(p, c->digits));
    element[0] = double_bits(whole);
    element[1] = c->digits;
    return isfinite(whole);
}

mpidht_status_t mpidht_key_encode(size_t columns, const mpidht_key_column_t *spec,
                                  size_t rows, const double *values, void *keys)
{
    if (columns > 0 && !spec)
        return MPIDHT_ERR_NULL_ARGUMENT;
    for (size_t c = 0; c < columns; ++c)
        if (!column_valid(&spec[c]))
            return MPIDHT_ERR_KEY_COLUMN;
    if (rows == 0 || columns == 0)
        return MPIDHT_OK;
    if (!values || !keys)
        return MPIDHT_ERR_NULL_ARGUMENT;
    if (rows > SIZE_MAX / columns / MPIDHT_KEY_ELEMENT_SIZE)
        return MPIDHT_ERR_BATCH_SIZE;
    unsigned char *out = keys;
    powers_t powers;
    memset(powers.known, 0, sizeof powers.known);
    for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < columns; ++c) {
            int64_t element[2];
            if (!encode_value(&powers, &spec[c], values[r * columns + c], element))
                return MPIDHT_ERR_KEY_VALUE;
            memcpy(out + (r * columns + c) * MPIDHT_KEY_ELEMENT_SIZE, element,
                   sizeof element);
        }
    }
    return MPIDHT_OK;
}
