/*
 * The prediction of mpidht.interp in C (_interp.c), internal to the
 * extension: for every query, the neighbours it uses among its class's
 * samples, the checks in their order, and the prediction by a local
 * linear least-squares fit or by inverse-distance weights. interp.py's
 * module docstring is the contract; this header says how the arrays are
 * laid out.
 */
#ifndef MPIDHT_PY_INTERP_H
#define MPIDHT_PY_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The outcomes, in the order the checks are made: the extension exports
 * them as CHECK_<name>, and mpidht.interp.Check takes its values there. */
#define INTERP_CHECK_LIST(X)                                                   \
    X(ACCEPTED)                                                                \
    X(FEW_NEIGHBOURS)                                                          \
    X(TOO_FAR)                                                                 \
    X(PRESENCE)                                                                \
    X(OUTSIDE)                                                                 \
    X(ERROR_ESTIMATE)                                                          \
    X(NEGATIVE)                                                                \
    X(CONSERVATION)

#define INTERP_CHECK_ENUM_(name) INTERP_##name,
typedef enum interp_check { INTERP_CHECK_LIST(INTERP_CHECK_ENUM_) } interp_check_t;
#undef INTERP_CHECK_ENUM_

typedef enum interp_method { INTERP_IDW, INTERP_LINEAR } interp_method_t;
typedef enum interp_estimate { INTERP_LEAVE_ONE_OUT, INTERP_STANDARD_ERROR } interp_estimate_t;

/* What a prediction may use and must pass (interp.Settings, checked by
 * the caller). Arrays have d entries unless said otherwise. */
typedef struct interp_settings {
    size_t need;                      /* min_neighbours, >= 1 */
    size_t width;                     /* samples used at most, 1..slots */
    double radius;                    /* >= 0, may be infinite */
    double extrapolation;             /* >= 0; infinite: no box check */
    interp_method_t method;
    interp_estimate_t estimate;       /* STANDARD_ERROR only with LINEAR */
    double interval;                  /* factor on the standard error */
    double ridge;                     /* >= 0 */
    const double *tolerance;
    const unsigned char *ignored;     /* 1: out of the fit, result as a value */
    const unsigned char *nonnegative; /* 1: the result must be >= 0 */
    size_t conserved_rows;            /* q, 0 for none */
    const double *conserved;          /* q x d */
    double rtol, atol;                /* the conservation bound */
    /* The coordinates distances are measured in: column c of a state x is
     * log10(max(x_c, floor[c])) where log[c], else x_c, over scale[c] (> 0);
     * 0 in ignored columns. */
    const unsigned char *log;
    const double *floor;
    const double *scale;
    /* Presence bits: bit i set where column presence[i] (0..d-1) is > 0. */
    size_t presence_count;            /* at most 64 */
    const int64_t *presence;
} interp_settings_t;

/* The samples of m classes of `slots` each (d numbers a state), as a
 * class is stored: sample j of class k is its input (d doubles) at
 * samples + k * stride + 2 * j * d, then its result (d doubles). */
typedef struct interp_classes {
    size_t m, slots, d;
    const double *samples;
    size_t stride;            /* doubles from a class to the next, >= 2 slots d */
    const int64_t *count;     /* m: samples (the first count slots) */
} interp_classes_t;

/* Bytes of workspace interp_predict needs. */
size_t interp_work(const interp_settings_t *s, const interp_classes_t *c);

/*
 * For each of n queries: x (n x d, the state) and cls (n, its class, each
 * in 0..m-1) give check (n, the outcome), values (n x d, the predicted
 * result; NaN where no prediction was made), estimate (n x d, the error
 * estimate; NaN where none) and used (n, the samples the prediction used;
 * 0 where none was made). The samples' coordinates and presence bits are
 * computed once per call, of the classes queried. work holds
 * interp_work() bytes, 8-byte aligned.
 */
void interp_predict(const interp_settings_t *s, const interp_classes_t *c, size_t n,
                    const double *x, const int64_t *cls, uint8_t *check, double *values,
                    double *estimate, int64_t *used, void *work);

/* The samples of one publish, grouped by class: rows of 2 d doubles (an
 * input, then its result); class i's are rows start[i] .. start[i+1] - 1
 * (start ascending from 0). */
typedef struct interp_append {
    size_t slots, d;
    const double *rows;
    const int64_t *start;
} interp_append_t;

/* Adds class i's rows, in order, to its stored entry: two doubles (the
 * number of samples held and the next slot to take; zeroes for a class
 * not stored yet), then `slots` samples of 2 d doubles as the rows are.
 * A row whose input has the bytes of a held sample's input (-0.0 read as
 * 0.0) gives that sample its result; any other row takes the next slot,
 * which replaces the oldest sample once all are held. Returns whether the
 * entry changed. */
bool interp_append(const interp_append_t *a, size_t i, double *entry);

#endif
