/*
 * mpidht_key_encode, against worked examples and the properties the header
 * states: significant digits (the mantissa's range and rounding error, half
 * to even, the nearest of x's exact value as printf rounds it near decimal
 * halves, powers of ten and their neighbours, subnormals), POET's decimal
 * truncation, log10 with the class of x <= 0, the floor, exact columns,
 * -0.0 equal to 0.0 everywhere, the row-major layout into an unaligned
 * buffer, every refusal (the spec, NaN and infinity, overflow, NULL), and
 * that threads encoding at once get what one thread gets (no shared state).
 * Pure: no MPI.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpidht.h"
#include "unit_expect.h"

static const mpidht_key_column_t SIG3 = {MPIDHT_KEY_SIGNIFICANT, 3, 0, 0};

/* The element of x under column c (status into *st). */
static void encode1(mpidht_key_column_t c, double x, int64_t out[2], mpidht_status_t *st)
{
    unsigned char buf[MPIDHT_KEY_ELEMENT_SIZE];
    memset(out, 0x5a, 2 * sizeof *out);
    *st = mpidht_key_encode(1, &c, 1, &x, buf);
    if (*st == MPIDHT_OK)
        memcpy(out, buf, sizeof buf);
}

static int64_t bits(double x)
{
    int64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

#define EXPECT_ELEMENT(column, x, m, e)                                        \
    do {                                                                       \
        int64_t el_[2];                                                        \
        mpidht_status_t st_;                                                   \
        encode1(column, x, el_, &st_);                                         \
        EXPECT(st_ == MPIDHT_OK);                                              \
        EXPECT(el_[0] == (int64_t)(m) && el_[1] == (int64_t)(e));              \
    } while (0)

#define EXPECT_REFUSED(column, x, status)                                      \
    do {                                                                       \
        int64_t el_[2];                                                        \
        mpidht_status_t st_;                                                   \
        encode1(column, x, el_, &st_);                                         \
        EXPECT(st_ == (status));                                               \
    } while (0)

static void significant_examples(void)
{
    EXPECT_ELEMENT(SIG3, 0.00123456, 123, -5);
    EXPECT_ELEMENT(SIG3, 123456.0, 123, 3);
    EXPECT_ELEMENT(SIG3, -0.00123456, -123, -5);
    EXPECT_ELEMENT(SIG3, 9.9951, 100, -1); /* rounds up to one digit more */
    EXPECT_ELEMENT(SIG3, 0.0, 0, 0);
    EXPECT_ELEMENT(SIG3, -0.0, 0, 0);
    mpidht_key_column_t one = {MPIDHT_KEY_SIGNIFICANT, 1, 0, 0};
    EXPECT_ELEMENT(one, 2.5, 2, 0);   /* half to even */
    EXPECT_ELEMENT(one, -2.5, -2, 0);
    EXPECT_ELEMENT(one, 3.5, 4, 0);
    mpidht_key_column_t fifteen = {MPIDHT_KEY_SIGNIFICANT, 15, 0, 0};
    EXPECT_ELEMENT(fifteen, 1.0, 100000000000000, -14);
}

/* |m| in [10^(d-1), 10^d) and |m 10^e - x| <= 10^e / 2 (relative slack
 * for the double arithmetic), for powers of ten, their neighbours, random
 * values over the whole range and subnormals. */
static void significant_properties(void)
{
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (int trial = 0; trial < 200000; ++trial) {
        double x;
        if (trial < 3 * 601) {
            double p = pow(10.0, trial / 3 - 300);
            x = trial % 3 == 0 ? p : trial % 3 == 1 ? nextafter(p, 0) : nextafter(p, INFINITY);
        } else {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            uint64_t b = state & ~(0x7ffull << 52);
            b |= (uint64_t)(1 + state % 2045) << 52; /* a finite, normal exponent */
            memcpy(&x, &b, sizeof x);
            if (trial % 1000 == 0)
                x = 4.9e-324 * (double)(1 + state % 1000); /* subnormal */
        }
        int digits = 1 + (int)(state % 15);
        mpidht_key_column_t c = {MPIDHT_KEY_SIGNIFICANT, digits, 0, 0};
        int64_t el[2];
        mpidht_status_t st;
        encode1(c, x, el, &st);
        EXPECT(st == MPIDHT_OK);
        double m = fabs((double)el[0]);
        EXPECT(m >= pow(10.0, digits - 1) && m < pow(10.0, digits));
        /* x / 10^e within half a unit of m (relative 1e-12 for the
         * scaling; 10^e itself underflows below about 1e-308) */
        double scaled = el[1] < -290 ? fabs(x) * 1e100 / pow(10.0, (double)el[1] + 100)
                                     : fabs(x) / pow(10.0, (double)el[1]);
        EXPECT(fabs(scaled - m) <= 0.5 + 1e-12 * m);
        EXPECT((el[0] < 0) == (x < 0));
    }
}

/* The element printf's %.*e gives for x at d significant digits: it
 * rounds x's exact binary value, half to even. */
static void printf_element(double x, int d, int64_t out[2])
{
    char text[48];
    snprintf(text, sizeof text, "%.*e", d - 1, x);
    char *e = strchr(text, 'e');
    int64_t m = 0;
    for (const char *c = text; c < e; ++c)
        if (*c >= '0' && *c <= '9')
            m = m * 10 + (*c - '0');
    out[0] = text[0] == '-' ? -m : m;
    out[1] = strtol(e + 1, NULL, 10) - (d - 1);
}

/* Rounding to the nearest: values a few units in the last place from a
 * decimal half (where x / 10^e in doubles may round across it), and
 * random values, give printf's digits; worked examples of the nearest
 * where the quotient rounded the other way. */
static void significant_nearest(void)
{
    mpidht_key_column_t five = {MPIDHT_KEY_SIGNIFICANT, 5, 0, 0},
                        six = {MPIDHT_KEY_SIGNIFICANT, 6, 0, 0},
                        two = {MPIDHT_KEY_SIGNIFICANT, 2, 0, 0};
    EXPECT_ELEMENT(five, 1.16525000000000011, 11653, -4); /* just above a half */
    EXPECT_ELEMENT(six, 3778.80500000000029, 377881, -2);
    EXPECT_ELEMENT(two, 0.155, 15, -2);                     /* 0.15499999999999999... */
    EXPECT_ELEMENT(SIG3, 2.675, 267, -2);                   /* 2.67499999999999982... */
    EXPECT_ELEMENT(six, 9.9998886718268301e-321, 999989, -326); /* pow(10, -320) */
    EXPECT_ELEMENT(SIG3, 9.8813129168249309e-324, 988, -326);   /* 2 * 2^-1074 */
    uint64_t state = 0x2545f4914f6cdd1du;
    for (int trial = 0; trial < 300000; ++trial) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        int d = 1 + (int)(state % 15);
        double x;
        if (trial % 8 == 7) { /* subnormal: 10^e is subnormal too there */
            uint64_t b = (state >> 4) & ((UINT64_C(1) << 52) - 1);
            memcpy(&x, &b, sizeof x);
        } else if (trial % 4 == 3) {
            uint64_t b = (state >> 4) & ~(0x7ffull << 52);
            b |= (uint64_t)(1 + (state >> 9) % 2045) << 52;
            memcpy(&x, &b, sizeof x);
        } else {
            double low = pow(10.0, d - 1);
            double m = low + (double)((state >> 8) % (uint64_t)(9 * low));
            int e = (int)((state >> 40) % 601) - 300;
            x = (m + 0.5) * pow(10.0, e);
            for (int k = (int)((state >> 20) % 7) - 3; k != 0; k += k > 0 ? -1 : 1)
                x = nextafter(x, k > 0 ? INFINITY : 0);
            if (state >> 63)
                x = -x;
        }
        if (!isfinite(x) || x == 0)
            continue;
        mpidht_key_column_t c = {MPIDHT_KEY_SIGNIFICANT, d, 0, 0};
        int64_t got[2], want[2];
        mpidht_status_t st;
        encode1(c, x, got, &st);
        printf_element(x, d, want);
        EXPECT(st == MPIDHT_OK && got[0] == want[0] && got[1] == want[1]);
    }
}

static void decimal_examples(void)
{
    mpidht_key_column_t d5 = {MPIDHT_KEY_DECIMAL, 5, 0, 0}, d3 = {MPIDHT_KEY_DECIMAL, 3, 0, 0},
                        d1 = {MPIDHT_KEY_DECIMAL, 1, 0, 0}, dm2 = {MPIDHT_KEY_DECIMAL, -2, 0, 0},
                        d20 = {MPIDHT_KEY_DECIMAL, 20, 0, 0};
    EXPECT_ELEMENT(d5, 0.00123456, bits(123.0), 5);
    EXPECT_ELEMENT(d3, 0.00123456, bits(1.0), 3);
    EXPECT_ELEMENT(d1, -1.25, bits(-12.0), 1);
    EXPECT_ELEMENT(d1, -0.04, bits(0.0), 1); /* trunc gives -0.0: one class with 0 */
    EXPECT_ELEMENT(d1, 0.04, bits(0.0), 1);
    EXPECT_ELEMENT(dm2, 1234.5, bits(12.0), -2);
    EXPECT_REFUSED(d20, 1e300, MPIDHT_ERR_KEY_VALUE);
}

static void log_floor_exact(void)
{
    mpidht_key_column_t lg = {MPIDHT_KEY_SIGNIFICANT, 3, 1, 0},
                        lgf = {MPIDHT_KEY_SIGNIFICANT, 3, 1, 1e-10},
                        fl = {MPIDHT_KEY_SIGNIFICANT, 3, 0, 1e-10},
                        ld = {MPIDHT_KEY_DECIMAL, 2, 1, 0},
                        ex = {MPIDHT_KEY_EXACT, 0, 1, 5.0}; /* log, floor ignored */
    EXPECT_ELEMENT(lg, 100.0, 200, -2);
    EXPECT_ELEMENT(lg, 0.0, 0, INT64_MIN);
    EXPECT_ELEMENT(lg, -0.0, 0, INT64_MIN);
    EXPECT_ELEMENT(lg, -3.0, 0, INT64_MIN);
    EXPECT_ELEMENT(lgf, 1e-12, 0, INT64_MIN);
    EXPECT_ELEMENT(lgf, 1e-9, -900, -2);
    EXPECT_ELEMENT(fl, -5e-11, 0, 0);
    EXPECT_ELEMENT(fl, 2e-10, 200, -12);
    EXPECT_ELEMENT(ld, 0.5, bits(-30.0), 2); /* log10(0.5) = -0.30103 */
    EXPECT_ELEMENT(ex, 0.1, bits(0.1), 0);
    EXPECT_ELEMENT(ex, -0.0, 0, 0);
    EXPECT_ELEMENT(ex, 1.0, bits(1.0), 0);
    EXPECT_ELEMENT(ex, INFINITY, bits(INFINITY), 0);
    EXPECT_REFUSED(ex, NAN, MPIDHT_ERR_KEY_VALUE);
    EXPECT_REFUSED(SIG3, NAN, MPIDHT_ERR_KEY_VALUE);
    EXPECT_REFUSED(SIG3, INFINITY, MPIDHT_ERR_KEY_VALUE);
    EXPECT_REFUSED(lg, -INFINITY, MPIDHT_ERR_KEY_VALUE);
}

/* Rows are back to back, columns in order, at any alignment. */
static void layout(void)
{
    const mpidht_key_column_t spec[3] = {SIG3, {MPIDHT_KEY_DECIMAL, 1, 0, 0},
                                         {MPIDHT_KEY_EXACT, 0, 0, 0}};
    const double values[2][3] = {{0.00123456, -1.25, 0.5}, {123456.0, 0.04, 2.0}};
    unsigned char buf[1 + 2 * 3 * MPIDHT_KEY_ELEMENT_SIZE];
    EXPECT(mpidht_key_encode(3, spec, 2, &values[0][0], buf + 1) == MPIDHT_OK);
    const int64_t want[2][3][2] = {{{123, -5}, {bits(-12.0), 1}, {bits(0.5), 0}},
                                   {{123, 3}, {bits(0.0), 1}, {bits(2.0), 0}}};
    EXPECT(memcmp(buf + 1, want, sizeof want) == 0);
}

static void refusals(void)
{
    const mpidht_key_column_t bad[] = {
        {MPIDHT_KEY_SIGNIFICANT, 0, 0, 0},  {MPIDHT_KEY_SIGNIFICANT, 16, 0, 0},
        {MPIDHT_KEY_DECIMAL, 21, 0, 0},     {MPIDHT_KEY_DECIMAL, -21, 0, 0},
        {(mpidht_key_rounding_t)7, 3, 0, 0}, {MPIDHT_KEY_SIGNIFICANT, 3, 0, -1},
        {MPIDHT_KEY_SIGNIFICANT, 3, 0, NAN}, {MPIDHT_KEY_DECIMAL, 3, 0, INFINITY}};
    double x = 1.0;
    unsigned char buf[MPIDHT_KEY_ELEMENT_SIZE], untouched[MPIDHT_KEY_ELEMENT_SIZE];
    memset(untouched, 0x77, sizeof untouched);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        memcpy(buf, untouched, sizeof buf);
        EXPECT(mpidht_key_encode(1, &bad[i], 1, &x, buf) == MPIDHT_ERR_KEY_COLUMN);
        EXPECT(memcmp(buf, untouched, sizeof buf) == 0);
    }
    EXPECT(mpidht_key_encode(1, NULL, 1, &x, buf) == MPIDHT_ERR_NULL_ARGUMENT);
    EXPECT(mpidht_key_encode(1, &SIG3, 1, NULL, buf) == MPIDHT_ERR_NULL_ARGUMENT);
    EXPECT(mpidht_key_encode(1, &SIG3, 1, &x, NULL) == MPIDHT_ERR_NULL_ARGUMENT);
    EXPECT(mpidht_key_encode(1, &SIG3, 0, NULL, NULL) == MPIDHT_OK);
    EXPECT(mpidht_key_encode(0, NULL, 5, NULL, NULL) == MPIDHT_OK);
    EXPECT(mpidht_key_encode(1, &SIG3, SIZE_MAX / 8, &x, buf) == MPIDHT_ERR_BATCH_SIZE);
    /* A bad value in row 1: row 0 is complete. */
    const double rows[2] = {2.0, NAN};
    unsigned char two[2 * MPIDHT_KEY_ELEMENT_SIZE];
    EXPECT(mpidht_key_encode(1, &SIG3, 2, rows, two) == MPIDHT_ERR_KEY_VALUE);
    const int64_t first[2] = {200, -2};
    EXPECT(memcmp(two, first, sizeof first) == 0);
    EXPECT(strcmp(mpidht_strerror(MPIDHT_ERR_KEY_COLUMN), "unknown status") != 0);
    EXPECT(strcmp(mpidht_strerror(MPIDHT_ERR_KEY_VALUE), "unknown status") != 0);
}

/* Threads encoding the same rows at once each get the single-threaded
 * keys. */
enum { THREADS = 4, THREAD_ROWS = 4096, THREAD_COLUMNS = 3 };
static const mpidht_key_column_t thread_spec[THREAD_COLUMNS] = {
    {MPIDHT_KEY_SIGNIFICANT, 4, 1, 1e-10}, {MPIDHT_KEY_DECIMAL, 3, 0, 0},
    {MPIDHT_KEY_SIGNIFICANT, 15, 0, 0}};
static double thread_values[THREAD_ROWS][THREAD_COLUMNS];
static unsigned char thread_keys[THREADS][THREAD_ROWS * THREAD_COLUMNS * MPIDHT_KEY_ELEMENT_SIZE];

static void *encode_all(void *arg)
{
    unsigned char *out = arg;
    for (int repeat = 0; repeat < 20; ++repeat)
        if (mpidht_key_encode(THREAD_COLUMNS, thread_spec, THREAD_ROWS, &thread_values[0][0],
                              out) != MPIDHT_OK)
            return arg;
    return NULL;
}

static void concurrent_callers(void)
{
    uint64_t state = 12345;
    for (size_t r = 0; r < THREAD_ROWS; ++r)
        for (size_t c = 0; c < THREAD_COLUMNS; ++c) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            thread_values[r][c] = (double)(state >> 11) * 1e-12 * pow(10.0, (double)(r % 30) - 15);
        }
    static unsigned char reference[sizeof thread_keys[0]];
    EXPECT(mpidht_key_encode(THREAD_COLUMNS, thread_spec, THREAD_ROWS, &thread_values[0][0],
                             reference) == MPIDHT_OK);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; ++i)
        EXPECT(pthread_create(&threads[i], NULL, encode_all, thread_keys[i]) == 0);
    for (int i = 0; i < THREADS; ++i) {
        void *failed = NULL;
        EXPECT(pthread_join(threads[i], &failed) == 0 && failed == NULL);
        EXPECT(memcmp(thread_keys[i], reference, sizeof reference) == 0);
    }
}

int main(void)
{
    significant_examples();
    significant_properties();
    significant_nearest();
    decimal_examples();
    log_floor_exact();
    layout();
    refusals();
    concurrent_callers();
    return unit_result("key encoding");
}
