/*
 * The C prediction of mpidht.interp (python/mpidht/_interp.c), on its own
 * so that the sanitizer suite runs it: a linear change is predicted
 * exactly from its nearest samples and accepted; each early check on a
 * case built to fail it (too few samples, none within the radius in
 * coordinates over the scale, other minerals present in the query or the
 * results, outside the box) and each late one (a negative
 * amount, a conserved sum broken); the nearest are chosen whatever
 * their slot order; counts beyond the slots are clipped and negative
 * ones are none; and random classes of every shape (one slot, width 1,
 * empty, full, NaN inputs) end with a check in range and values where
 * the check says a prediction was made. And publishing into a class
 * entry (interp_append): new inputs take the next slot, the oldest
 * replaced once all are held; a held input (-0.0 as 0.0) gets its new
 * result; nothing new leaves the entry as it was; a header out of range
 * reads as its nearest end. Pure: no MPI, no Python.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_interp.h"
#include "unit_expect.h"

enum { D = 3, SLOTS = 32 };

/* The change of the linear model: 0.01 x0 - 0.02 x1 + 0.03 x2 + 0.001. */
static double change_of(const double *x, size_t c)
{
    return (double)(c + 1) * (0.01 * x[0] - 0.02 * x[1] + 0.03 * x[2] + 0.001);
}

typedef struct case_ {
    double xs[SLOTS * D], ys[SLOTS * D];
    int64_t count;
} case_t;

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (double)(*seed >> 8) / (double)(1u << 24);
}

/* n samples around centre (spread), on the linear model, in slots
 * [first, first + n). */
static void fill(case_t *k, size_t first, size_t n, const double *centre, double spread,
                 unsigned seed)
{
    for (size_t j = first; j < first + n; ++j)
        for (size_t c = 0; c < D; ++c)
            k->xs[j * D + c] = centre[c] + spread * (2 * uniform(&seed) - 1);
    for (size_t j = first; j < first + n; ++j)
        for (size_t c = 0; c < D; ++c)
            k->ys[j * D + c] = k->xs[j * D + c] + change_of(&k->xs[j * D], c);
}

static const double FLOOR[D] = {1e-300, 1e-300, 1e-300}, ONES[D] = {1, 1, 1};
static const int64_t FIRST_COLUMN[1] = {0};

/* Coordinates are the inputs themselves (no log, scale 1); no presence
 * columns. */
static interp_settings_t settings(const double *tolerance, const unsigned char *none)
{
    interp_settings_t s = {0};
    s.log = none;
    s.floor = FLOOR;
    s.scale = ONES;
    s.need = 4;
    s.width = 12;
    s.radius = 1.0;
    s.extrapolation = 0.0;
    s.method = INTERP_LINEAR;
    s.estimate = INTERP_LEAVE_ONE_OUT;
    s.interval = 3.0;
    s.ridge = 1e-8;
    s.tolerance = tolerance;
    s.ignored = none;
    s.nonnegative = none;
    return s;
}

typedef struct result {
    uint8_t check;
    double values[D], estimate[D];
    int64_t used;
} result_t;

/* The prediction at x from the class k, stored as the table stores one
 * (each sample's input, then its result) after 3 words of header. */
static result_t predict(const interp_settings_t *s, const case_t *k, const double *x)
{
    enum { HEADER = 3 };
    double stored[HEADER + 2 * SLOTS * D];
    for (size_t j = 0; j < SLOTS; ++j) {
        memcpy(stored + HEADER + 2 * j * D, k->xs + j * D, sizeof(double) * D);
        memcpy(stored + HEADER + (2 * j + 1) * D, k->ys + j * D, sizeof(double) * D);
    }
    interp_classes_t c = {1, SLOTS, D, stored + HEADER, HEADER + 2 * SLOTS * D, &k->count};
    void *work = malloc(interp_work(s, &c));
    int64_t cls = 0;
    result_t r;
    interp_predict(s, &c, 1, x, &cls, &r.check, r.values, r.estimate, &r.used, work);
    free(work);
    return r;
}

static const double CENTRE[D] = {1.0, 2.0, 3.0};

static void test_a_linear_change_is_predicted_and_accepted(void)
{
    static const double tol[D] = {1e-9, 1e-9, 1e-9};
    static const unsigned char none[D] = {0};
    interp_settings_t s = settings(tol, none);
    case_t k = {0};
    fill(&k, 0, 20, CENTRE, 0.05, 1);
    k.count = 20;
    for (interp_estimate_t e = INTERP_LEAVE_ONE_OUT; e <= INTERP_STANDARD_ERROR; ++e) {
        s.estimate = e;
        result_t r = predict(&s, &k, CENTRE);
        EXPECT(r.check == INTERP_ACCEPTED);
        EXPECT(r.used == 12);
        for (size_t c = 0; c < D; ++c)
            EXPECT(fabs(r.values[c] - (CENTRE[c] + change_of(CENTRE, c))) < 1e-10);
    }
    /* Inverse-distance weights cannot follow the slope: rejected at this
     * tolerance, with an estimate made. */
    s.method = INTERP_IDW;
    s.estimate = INTERP_LEAVE_ONE_OUT;
    result_t r = predict(&s, &k, CENTRE);
    EXPECT(r.check == INTERP_ERROR_ESTIMATE);
    EXPECT(r.estimate[0] > 1e-9 && !isnan(r.values[0]));
}

static void test_the_early_checks_in_order(void)
{
    static const double tol[D] = {1.0, 1.0, 1.0};
    static const unsigned char none[D] = {0};
    interp_settings_t s = settings(tol, none);
    case_t k = {0};
    fill(&k, 0, 20, CENTRE, 0.05, 2);
    k.count = 3;
    EXPECT(predict(&s, &k, CENTRE).check == INTERP_FEW_NEIGHBOURS);
    k.count = 20;
    double far[D] = {CENTRE[0] + 5, CENTRE[1], CENTRE[2]};
    EXPECT(predict(&s, &k, far).check == INTERP_TOO_FAR);
    /* Distances are measured over the scale: 5 over 10 is within. */
    static const double wide[D] = {10, 1, 1};
    s.scale = wide;
    EXPECT(predict(&s, &k, far).check != INTERP_TOO_FAR);
    s.scale = ONES;
    /* Presence of column 0 (> 0): a query without it has no sample
     * with its bits. */
    s.presence_count = 1;
    s.presence = FIRST_COLUMN;
    s.radius = 2.0;
    double absent[D] = {-1e-3, CENTRE[1], CENTRE[2]};
    EXPECT(predict(&s, &k, absent).check == INTERP_PRESENCE);
    EXPECT(predict(&s, &k, CENTRE).check == INTERP_ACCEPTED);
    /* Results disagreeing on what is present (half of them lose column
     * 0, so whichever 12 are nearest). */
    case_t lost = k;
    for (size_t j = 1; j < SLOTS; j += 2)
        lost.ys[j * D] = -1.0;
    EXPECT(predict(&s, &lost, CENTRE).check == INTERP_PRESENCE);
    s.presence_count = 0;
    double edge[D] = {CENTRE[0] + 0.2, CENTRE[1], CENTRE[2]};
    s.radius = 1.0;
    result_t r = predict(&s, &k, edge);
    EXPECT(r.check == INTERP_OUTSIDE && r.used == 0 && isnan(r.values[0]));
    s.extrapolation = INFINITY; /* no box check */
    EXPECT(predict(&s, &k, edge).check == INTERP_ACCEPTED);
}

static void test_the_nearest_are_chosen_in_any_slot_order(void)
{
    static const double tol[D] = {1e-9, 1e-9, 1e-9};
    static const unsigned char none[D] = {0};
    interp_settings_t s = settings(tol, none);
    case_t k = {0};
    /* 20 far samples off the model first, 12 near ones on it after them. */
    fill(&k, 0, 20, CENTRE, 0.5, 3);
    for (size_t j = 0; j < 20; ++j)
        for (size_t c = 0; c < D; ++c)
            k.ys[j * D + c] += 0.1;
    fill(&k, 20, 12, CENTRE, 0.01, 4);
    k.count = 32;
    result_t r = predict(&s, &k, CENTRE);
    EXPECT(r.check == INTERP_ACCEPTED && r.used == 12);
    /* A count beyond the slots is the slots; a negative one is none. */
    k.count = 1000;
    EXPECT(predict(&s, &k, CENTRE).check == INTERP_ACCEPTED);
    k.count = -5;
    EXPECT(predict(&s, &k, CENTRE).check == INTERP_FEW_NEIGHBOURS);
}

static void test_a_negative_amount_and_a_broken_sum_reject(void)
{
    static const double tol[D] = {1e-6, 1e-6, 1e-6};
    static const unsigned char none[D] = {0}, second[D] = {0, 1, 0};
    static const double conserved[D] = {1, 0, 1}; /* x0 + x2 */
    interp_settings_t s = settings(tol, none);
    case_t k = {0};
    fill(&k, 0, 20, CENTRE, 0.05, 5);
    k.count = 20;
    for (size_t j = 0; j < 20; ++j) /* x1 loses 5 in every sample */
        k.ys[j * D + 1] = k.xs[j * D + 1] - 5.0;
    s.nonnegative = second;
    result_t r = predict(&s, &k, CENTRE);
    EXPECT(r.check == INTERP_NEGATIVE && r.values[1] < 0 && r.used == 12);
    s.nonnegative = none;
    EXPECT(predict(&s, &k, CENTRE).check == INTERP_ACCEPTED);
    /* The samples' x0 + x2 changes (the linear model's), so a prediction
     * does too: refused when it must be kept. */
    s.conserved_rows = 1;
    s.conserved = conserved;
    s.rtol = 1e-9;
    EXPECT(predict(&s, &k, CENTRE).check == INTERP_CONSERVATION);
    s.rtol = 1.0;
    EXPECT(predict(&s, &k, CENTRE).check == INTERP_ACCEPTED);
}

static void test_random_shapes_stay_in_bounds(void)
{
    static const unsigned char none[D] = {0};
    static const unsigned char some[D] = {0, 1, 0};
    static const double tol[D] = {1e-3, 1e-3, 1e-3};
    static const double conserved[2 * D] = {1, 0, 1, 0, 1, 0};
    unsigned seed = 7, seen[INTERP_CONSERVATION + 1] = {0};
    for (int round = 0; round < 2000; ++round) {
        interp_settings_t s = settings(tol, round % 3 ? none : some);
        s.need = 1 + (size_t)(uniform(&seed) * 6);
        s.width = s.need + (size_t)(uniform(&seed) * (double)(SLOTS - s.need));
        s.radius = uniform(&seed) < 0.1 ? INFINITY : uniform(&seed);
        s.extrapolation = uniform(&seed) < 0.3 ? INFINITY : uniform(&seed);
        s.method = uniform(&seed) < 0.3 ? INTERP_IDW : INTERP_LINEAR;
        s.estimate = s.method == INTERP_LINEAR && uniform(&seed) < 0.5 ? INTERP_STANDARD_ERROR
                                                                       : INTERP_LEAVE_ONE_OUT;
        s.ridge = uniform(&seed) < 0.2 ? 0.0 : 1e-8;
        s.nonnegative = round % 2 ? some : none;
        s.conserved_rows = round % 4 ? 2 : 0;
        s.conserved = conserved;
        s.rtol = 1e-6;
        s.presence_count = 1;
        s.presence = FIRST_COLUMN;
        case_t k = {0};
        size_t n = (size_t)(uniform(&seed) * (double)(SLOTS + 1));
        fill(&k, 0, n, CENTRE, uniform(&seed), seed);
        k.count = (int64_t)n;
        /* Column 0 absent from some inputs and some results. */
        for (size_t j = 0; j < SLOTS; ++j) {
            if (uniform(&seed) < 0.1)
                k.xs[j * D] = -k.xs[j * D];
            if (uniform(&seed) < 0.1)
                k.ys[j * D] = -k.ys[j * D];
        }
        if (round % 17 == 0 && n > 0)
            k.xs[0] = NAN;
        double x[D];
        for (size_t c = 0; c < D; ++c)
            x[c] = CENTRE[c] + 0.2 * (2 * uniform(&seed) - 1);
        if (uniform(&seed) < 0.1)
            x[0] = -x[0];
        result_t r = predict(&s, &k, x);
        EXPECT(r.check < INTERP_CONSERVATION + 1);
        seen[r.check < INTERP_CONSERVATION + 1 ? r.check : 0]++;
        bool made = r.check == INTERP_ACCEPTED || r.check >= INTERP_ERROR_ESTIMATE;
        EXPECT(made == (r.used > 0));
        EXPECT(r.used <= (int64_t)s.width && r.used <= (int64_t)n);
        if (r.check == INTERP_ACCEPTED)
            for (size_t c = 0; c < D; ++c)
                EXPECT(isfinite(r.values[c]) && r.estimate[c] <= tol[c]);
        if (!made)
            EXPECT(isnan(r.values[0]) && isnan(r.estimate[0]));
    }
    /* The rounds reach every outcome up to the error estimate (their
     * samples keep amounts positive and the conserved sums). */
    for (int c = INTERP_ACCEPTED; c <= INTERP_ERROR_ESTIMATE; ++c) {
        if (!(seen[c] > 0))
            fprintf(stderr, "outcome %d never seen\n", c);
        EXPECT(seen[c] > 0);
    }
}

enum { AD = 2, ASLOTS = 3, AWORDS = 2 + ASLOTS * 2 * AD };

/* Sample j of an appended entry: its input then its result. */
static const double *sample(const double *entry, size_t j)
{
    return entry + 2 + j * 2 * AD;
}

static bool append(double *entry, const double *rows, int64_t n)
{
    const int64_t start[2] = {0, n};
    const interp_append_t a = {ASLOTS, AD, rows, start};
    return interp_append(&a, 0, entry);
}

static void test_append_adds_replaces_and_wraps(void)
{
    double entry[AWORDS] = {0};
    const double two[] = {1, 2, 10, 20, 3, 4, 30, 40};
    EXPECT(append(entry, two, 2));
    EXPECT(entry[0] == 2 && entry[1] == 2);
    EXPECT(sample(entry, 1)[0] == 3 && sample(entry, 1)[3] == 40);
    /* A held input: its result replaced, no slot taken. */
    const double again[] = {1, 2, 11, 21};
    EXPECT(append(entry, again, 1));
    EXPECT(entry[0] == 2 && entry[1] == 2 && sample(entry, 0)[2] == 11);
    /* The same result again: nothing changes. */
    double before[AWORDS];
    memcpy(before, entry, sizeof entry);
    EXPECT(!append(entry, again, 1));
    EXPECT(memcmp(before, entry, sizeof entry) == 0);
    /* -0.0 is stored as 0.0 and matches either. */
    const double zero[] = {-0.0, 5, 1, 1, 0.0, 5, 2, 2};
    EXPECT(append(entry, zero, 2));
    EXPECT(entry[0] == 3 && entry[1] == 0);
    EXPECT(!signbit(sample(entry, 2)[0]) && sample(entry, 2)[2] == 2);
    /* Full: the next new input replaces the oldest (slot 0). */
    const double more[] = {7, 8, 70, 80};
    EXPECT(append(entry, more, 1));
    EXPECT(entry[0] == 3 && entry[1] == 1 && sample(entry, 0)[0] == 7);
    EXPECT(sample(entry, 1)[0] == 3);
    /* A header out of range: NaN held reads as none, a huge next as the
     * last slot. */
    double odd[AWORDS] = {NAN, 1e300};
    const double one[] = {9, 9, 90, 90};
    EXPECT(append(odd, one, 1));
    EXPECT(odd[0] == 1 && odd[1] == 0 && sample(odd, ASLOTS - 1)[0] == 9);
    /* No rows: unchanged. */
    EXPECT(!append(odd, one, 0));
}

int main(void)
{
    test_a_linear_change_is_predicted_and_accepted();
    test_the_early_checks_in_order();
    test_the_nearest_are_chosen_in_any_slot_order();
    test_a_negative_amount_and_a_broken_sum_reject();
    test_random_shapes_stay_in_bounds();
    test_append_adds_replaces_and_wraps();
    return unit_result("interp kernel");
}
