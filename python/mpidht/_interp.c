/*
 * The prediction of mpidht.interp, one query at a time in plain C: what
 * NumPy did with some hundred calls over stacked arrays per batch, whose
 * fixed cost per call dominated.
 *
 * Per query: the samples of its class within the radius in every column,
 * with its presence bits, the nearest `width` of them (FEW_NEIGHBOURS,
 * TOO_FAR, PRESENCE when too few are left or their results disagree on
 * the presence bits); the query inside the box they span, widened by
 * extrapolation times their range in each column (OUTSIDE); then the
 * prediction of the change (result - input; for ignored columns the
 * result itself) and its error estimate (ERROR_ESTIMATE), no negative
 * amount (NEGATIVE) and the conserved sums (CONSERVATION).
 *
 * The linear fit: the design row of sample j is a_j = (1, delta_j), delta
 * the coordinates of the columns not ignored less the query's; M = sum
 * a_j a_j^T with ridge * max(widest slope column's M_ii, 1e-300) added to
 * every slope's diagonal; beta = M^-1 sum a_j change_j^T (Cholesky); the
 * prediction is beta's intercept row. Leave-one-out residuals are
 * r_j / (1 - h_j) with h_j = a_j^T M^-1 a_j, the estimate their largest
 * magnitude per column, inf where a sample has leverage above 1 - 1e-4
 * (the fit cannot do without it), NaN where a residual is NaN. The
 * standard error per column is sqrt(RSS / (k - p) * (M^-1)_00): RSS the
 * sum of the k samples' squared residuals (the scatter about the plane,
 * as if it were noise), (M^-1)_00 how far the query's place among the
 * samples magnifies it (large where the fit extrapolates); inf where
 * k <= p. A Cholesky refusal (not positive definite or not finite:
 * samples that pin down no slope, without a ridge) gives NaN predictions
 * and inf estimates.
 *
 * Inverse-distance weights: w_j = 1 / (|delta_j|^2 + 1e-300), so that a
 * sample at the query gives its own change; leave-one-out predicts each
 * sample from the others with weights of their distances to it.
 *
 * Inner loops run over contiguous doubles (the columns of a change, a row
 * of the factor); the work space is split into non-overlapping arrays.
 */
#include "_interp.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The Cholesky factor of the p x p matrix m (lower triangle read) into
 * the lower triangle of l, row-major; false if m is not positive definite
 * (or holds a NaN or an infinity). */
static bool cholesky(const double *restrict m, size_t p, double *restrict l)
{
    for (size_t i = 0; i < p; ++i) {
        for (size_t j = 0; j <= i; ++j) {
            double s = m[i * p + j];
            for (size_t c = 0; c < j; ++c)
                s -= l[i * p + c] * l[j * p + c];
            if (i == j) {
                if (!(s > 0.0) || !isfinite(s))
                    return false;
                l[i * p + i] = sqrt(s);
            } else {
                l[i * p + j] = s / l[j * p + j];
            }
        }
    }
    return true;
}

/* Solves L z = b in place (L lower triangular, p x p, row-major). */
static void forward(const double *restrict l, size_t p, double *restrict b)
{
    for (size_t i = 0; i < p; ++i) {
        double s = b[i];
        for (size_t m = 0; m < i; ++m)
            s -= l[i * p + m] * b[m];
        b[i] = s / l[i * p + i];
    }
}

/* Solves L^T X = Z in place for the d columns of the p x d matrix x. */
static void backward_rows(const double *restrict l, size_t p, size_t d, double *restrict x)
{
    for (size_t i = p; i-- > 0;) {
        double *xi = x + i * d;
        for (size_t m = i + 1; m < p; ++m) {
            double f = l[m * p + i];
            const double *xm = x + m * d;
            for (size_t c = 0; c < d; ++c)
                xi[c] -= f * xm[c];
        }
        double inv = 1.0 / l[i * p + i];
        for (size_t c = 0; c < d; ++c)
            xi[c] *= inv;
    }
}

/* Solves L Z = B in place for the d columns of the p x d matrix x. */
static void forward_rows(const double *restrict l, size_t p, size_t d, double *restrict x)
{
    for (size_t i = 0; i < p; ++i) {
        double *xi = x + i * d;
        for (size_t m = 0; m < i; ++m) {
            double f = l[i * p + m];
            const double *xm = x + m * d;
            for (size_t c = 0; c < d; ++c)
                xi[c] -= f * xm[c];
        }
        double inv = 1.0 / l[i * p + i];
        for (size_t c = 0; c < d; ++c)
            xi[c] *= inv;
    }
}

/* A linear fit over k samples of di inputs and d outputs: pred, the
 * leave-one-out estimate (when loo) into err, the standard error into se. */
typedef struct fit_work {
    double *m, *l;   /* p x p */
    double *beta;    /* p x d: A^T change, then the coefficients */
    double *z;       /* p */
    double *fit;     /* d */
    double *rss;     /* d */
} fit_work_t;

static size_t fit_doubles(size_t di, size_t d)
{
    const size_t p = di + 1;
    return 2 * p * p + p * d + p + 2 * d;
}

static fit_work_t fit_split(size_t di, size_t d, double *w)
{
    const size_t p = di + 1;
    fit_work_t f;
    f.m = w;
    f.l = f.m + p * p;
    f.beta = f.l + p * p;
    f.z = f.beta + p * d;
    f.fit = f.z + p;
    f.rss = f.fit + d;
    return f;
}

static void fit_linear(size_t k, size_t di, size_t d, const double *restrict delta,
                       const double *restrict change, double ridge, bool loo,
                       double *restrict pred, double *restrict err, double *restrict se,
                       fit_work_t w)
{
    const size_t p = di + 1;
    double *restrict m = w.m, *restrict beta = w.beta, *restrict z = w.z;
    double *restrict fit = w.fit, *restrict rss = w.rss;
    for (size_t i = 0; i < p * p; ++i)
        m[i] = 0.0;
    for (size_t i = 0; i < p * d; ++i)
        beta[i] = 0.0;
    /* M's lower triangle and A^T change. */
    for (size_t j = 0; j < k; ++j) {
        const double *dj = delta + j * di, *yj = change + j * d;
        z[0] = 1.0;
        for (size_t c = 0; c < di; ++c)
            z[c + 1] = dj[c];
        for (size_t r = 0; r < p; ++r) {
            double ar = z[r];
            double *mr = m + r * p, *br = beta + r * d;
            for (size_t s = 0; s <= r; ++s)
                mr[s] += ar * z[s];
            for (size_t c = 0; c < d; ++c)
                br[c] += ar * yj[c];
        }
    }
    double widest = 0.0;
    for (size_t r = 1; r < p; ++r)
        widest = m[r * p + r] > widest ? m[r * p + r] : widest;
    for (size_t r = 1; r < p; ++r)
        m[r * p + r] += ridge * (widest > 1e-300 ? widest : 1e-300);
    if (!cholesky(m, p, w.l)) {
        for (size_t c = 0; c < d; ++c) {
            pred[c] = NAN;
            err[c] = se[c] = INFINITY;
        }
        return;
    }
    forward_rows(w.l, p, d, beta);
    backward_rows(w.l, p, d, beta);
    for (size_t c = 0; c < d; ++c) {
        pred[c] = beta[c];
        err[c] = 0.0;
        rss[c] = 0.0;
    }
    for (size_t j = 0; j < k; ++j) {
        const double *dj = delta + j * di, *yj = change + j * d;
        for (size_t c = 0; c < d; ++c)
            fit[c] = beta[c];
        for (size_t r = 1; r < p; ++r) {
            const double *br = beta + r * d;
            for (size_t c = 0; c < d; ++c)
                fit[c] += dj[r - 1] * br[c];
        }
        for (size_t c = 0; c < d; ++c)
            rss[c] += (yj[c] - fit[c]) * (yj[c] - fit[c]);
        if (!loo)
            continue;
        z[0] = 1.0;
        for (size_t c = 0; c < di; ++c)
            z[c + 1] = dj[c];
        forward(w.l, p, z); /* h_j = |L^-1 a_j|^2 */
        double hat = 0.0;
        for (size_t r = 0; r < p; ++r)
            hat += z[r] * z[r];
        if (hat > 1.0 - 1e-4) {
            for (size_t c = 0; c < d; ++c)
                err[c] = isnan(err[c]) ? NAN : INFINITY;
            continue;
        }
        double scale = 1.0 / (1.0 - hat);
        for (size_t c = 0; c < d; ++c) {
            double e = fabs((yj[c] - fit[c]) * scale);
            err[c] = isnan(e) || isnan(err[c]) ? NAN : e > err[c] ? e : err[c];
        }
    }
    /* (M^-1)_00 = |L^-1 e_0|^2. */
    for (size_t r = 0; r < p; ++r)
        z[r] = r == 0 ? 1.0 : 0.0;
    forward(w.l, p, z);
    double spread = 0.0;
    for (size_t r = 0; r < p; ++r)
        spread += z[r] * z[r];
    for (size_t c = 0; c < d; ++c)
        se[c] = k > p ? sqrt(rss[c] / (double)(k - p) * spread) : INFINITY;
}

/* Inverse-distance weights over k samples: pred and the leave-one-out
 * estimate err (NaN where a sample has no other to be predicted from). */
static void fit_idw(size_t k, size_t di, size_t d, const double *restrict delta,
                    const double *restrict change, double *restrict pred,
                    double *restrict err, double *restrict fit)
{
    const double tiny = 1e-300;
    double total = 0.0;
    for (size_t c = 0; c < d; ++c) {
        pred[c] = 0.0;
        err[c] = 0.0;
    }
    for (size_t j = 0; j < k; ++j) {
        const double *dj = delta + j * di;
        double r2 = 0.0;
        for (size_t c = 0; c < di; ++c)
            r2 += dj[c] * dj[c];
        double wj = 1.0 / (r2 + tiny);
        total += wj;
        for (size_t c = 0; c < d; ++c)
            pred[c] += wj * change[j * d + c];
    }
    for (size_t c = 0; c < d; ++c)
        pred[c] /= total;
    for (size_t j = 0; j < k; ++j) {
        const double *dj = delta + j * di;
        double sum = 0.0;
        for (size_t c = 0; c < d; ++c)
            fit[c] = 0.0;
        for (size_t i = 0; i < k; ++i) {
            if (i == j)
                continue;
            const double *di_ = delta + i * di;
            double r2 = 0.0;
            for (size_t c = 0; c < di; ++c)
                r2 += (di_[c] - dj[c]) * (di_[c] - dj[c]);
            double wi = 1.0 / (r2 + tiny);
            sum += wi;
            for (size_t c = 0; c < d; ++c)
                fit[c] += wi * change[i * d + c];
        }
        for (size_t c = 0; c < d; ++c) {
            double e = fabs(fit[c] / sum - change[j * d + c]); /* 0 / 0: NaN */
            err[c] = isnan(e) || isnan(err[c]) ? NAN : e > err[c] ? e : err[c];
        }
    }
}

/* The work space of one call, carved from the caller's. */
typedef struct query_work {
    uint64_t *pin, *pout; /* m x slots: presence bits of the samples */
    double *us;      /* m x slots x d: the samples' coordinates */
    unsigned char *ready; /* m: class k's us, pin and pout computed */
    double *uq;      /* d: the query's coordinates */
    double *at_floor; /* d: coordinates at or below the floor */
    int32_t *slot;   /* slots: candidates */
    int32_t *sel;    /* width: the samples used, nearest first */
    double *dist;    /* slots */
    double *best;    /* width */
    double *delta;   /* width x di */
    double *change;  /* width x d */
    double *pred, *err, *se, *lo, *hi; /* d each */
    double *fit;     /* fit_doubles(di, d) */
} query_work_t;

static size_t active_columns(const interp_settings_t *s, size_t d)
{
    size_t di = 0;
    for (size_t c = 0; c < d; ++c)
        di += !s->ignored[c];
    return di;
}

size_t interp_work(const interp_settings_t *s, const interp_classes_t *c)
{
    size_t d = c->d, di = active_columns(s, d), samples = c->m * c->slots;
    size_t doubles = samples * d + 2 * d + c->slots + s->width + s->width * (di + d) + 5 * d +
                     fit_doubles(di, d);
    return 2 * samples * sizeof(uint64_t) + doubles * sizeof(double) +
           (c->slots + s->width + 1) * sizeof(int32_t) + c->m;
}

/* The coordinates u (d) of the state x (d); at_floor (d): each column's
 * coordinate at or below its floor (floor_coords). */
static void coords_of(const interp_settings_t *s, size_t d, const double *at_floor,
                      const double *x, double *u)
{
    for (size_t col = 0; col < d; ++col) {
        double v = x[col];
        if (s->ignored[col])
            u[col] = 0.0;
        else if (!s->log[col])
            u[col] = v / s->scale[col];
        else /* NaN stays NaN */
            u[col] = v <= s->floor[col] ? at_floor[col] : log10(v) / s->scale[col];
    }
}

/* Each column's coordinate at or below its floor (where log). */
static void floor_coords(const interp_settings_t *s, size_t d, double *at_floor)
{
    for (size_t col = 0; col < d; ++col)
        at_floor[col] = s->log[col] ? log10(s->floor[col]) / s->scale[col] : 0.0;
}

/* The presence bits of the state x. */
static uint64_t bits_of(const interp_settings_t *s, const double *x)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < s->presence_count; ++i)
        bits |= (uint64_t)(x[s->presence[i]] > 0) << i;
    return bits;
}

/* The samples of class k: where they lie. */
static const double *class_samples(const interp_classes_t *c, size_t k)
{
    return c->samples + k * c->stride;
}

static size_t class_count(const interp_classes_t *c, size_t k)
{
    size_t have = c->count[k] < 0 ? 0 : (size_t)c->count[k];
    return have > c->slots ? c->slots : have;
}

static query_work_t query_split(const interp_settings_t *s, const interp_classes_t *c,
                                void *work)
{
    size_t d = c->d, di = active_columns(s, d);
    size_t samples = c->m * c->slots;
    query_work_t w;
    w.pin = work;
    w.pout = w.pin + samples;
    w.us = (double *)(w.pout + samples);
    w.uq = w.us + samples * d;
    w.at_floor = w.uq + d;
    w.dist = w.at_floor + d;
    w.best = w.dist + c->slots;
    w.delta = w.best + s->width;
    w.change = w.delta + s->width * di;
    w.pred = w.change + s->width * d;
    w.err = w.pred + d;
    w.se = w.err + d;
    w.lo = w.se + d;
    w.hi = w.lo + d;
    w.fit = w.hi + d;
    w.slot = (int32_t *)(w.fit + fit_doubles(di, d));
    w.sel = w.slot + c->slots;
    w.ready = (unsigned char *)(w.sel + s->width + 1);
    memset(w.ready, 0, c->m);
    return w;
}

/* The nearest width samples of class k within radius with the query's
 * presence bits into w->sel (ascending distance, ties in slot order);
 * returns how many, and counts the ones within radius. */
static size_t choose(const interp_settings_t *s, const interp_classes_t *c, size_t k,
                     const double *uq, uint64_t pq, size_t *within, query_work_t *w)
{
    size_t d = c->d, have = class_count(c, k);
    const double *us = w->us + k * c->slots * d;
    const uint64_t *pin = w->pin + k * c->slots;
    size_t found = 0;
    *within = 0;
    for (size_t j = 0; j < have; ++j) {
        const double *u = us + j * d;
        double sum = 0.0;
        bool far = false;
        for (size_t col = 0; col < d; ++col) {
            double diff = u[col] - uq[col];
            far |= !(fabs(diff) <= s->radius); /* NaN: far */
            sum += diff * diff;
        }
        if (far)
            continue;
        ++*within;
        if (pin[j] != pq)
            continue;
        w->slot[found] = (int32_t)j;
        w->dist[found] = sum;
        ++found;
    }
    size_t take = found < s->width ? found : s->width, held = 0;
    for (size_t i = 0; i < found && take > 0; ++i) {
        if (held == take && w->dist[i] >= w->best[held - 1])
            continue;
        size_t at = held < take ? held++ : take - 1;
        while (at > 0 && w->best[at - 1] > w->dist[i]) {
            w->best[at] = w->best[at - 1];
            w->sel[at] = w->sel[at - 1];
            --at;
        }
        w->best[at] = w->dist[i];
        w->sel[at] = w->slot[i];
    }
    return held;
}

/* Outside the box the k samples span (extrapolation times their range
 * beyond it in any column, 1e-9 tolerated for equal coordinates)? */
static bool outside(const interp_settings_t *s, const interp_classes_t *c, size_t k,
                    const double *uq, size_t used, query_work_t *w)
{
    size_t d = c->d;
    const double *us = w->us + k * c->slots * d;
    for (size_t col = 0; col < d; ++col) {
        w->lo[col] = INFINITY;
        w->hi[col] = -INFINITY;
    }
    for (size_t j = 0; j < used; ++j) {
        const double *u = us + (size_t)w->sel[j] * d;
        for (size_t col = 0; col < d; ++col) {
            w->lo[col] = u[col] < w->lo[col] ? u[col] : w->lo[col]; /* a NaN passed over */
            w->hi[col] = u[col] > w->hi[col] ? u[col] : w->hi[col];
        }
    }
    for (size_t col = 0; col < d; ++col) {
        /* The rounding of equal coordinates tolerated: relative to their
         * size (an absolute 1e-9 let a column of samples spanning 1e-12
         * take queries 300 ranges away, or one of equal samples scaled
         * by 1e6 take queries 9e-4 off). */
        double size = fmax(fabs(w->lo[col]), fabs(w->hi[col]));
        double margin = s->extrapolation * (w->hi[col] - w->lo[col]) + 1e-12 * size;
        if (uq[col] < w->lo[col] - margin || uq[col] > w->hi[col] + margin)
            return true;
    }
    return false;
}

/* The prediction and the checks after the box of one query. */
static interp_check_t predict_one(const interp_settings_t *s, const interp_classes_t *c,
                                  size_t k, const double *x, const double *uq, size_t used,
                                  double *values, double *estimate, query_work_t *w)
{
    size_t d = c->d, di = active_columns(s, d);
    const double *samples = class_samples(c, k);
    const double *us = w->us + k * c->slots * d;
    for (size_t j = 0; j < used; ++j) {
        size_t slot = (size_t)w->sel[j];
        const double *xj = samples + 2 * slot * d, *rj = xj + d, *uj = us + slot * d;
        double *dj = w->delta + j * di, *yj = w->change + j * d;
        for (size_t col = 0, a = 0; col < d; ++col) {
            yj[col] = s->ignored[col] ? rj[col] : rj[col] - xj[col];
            if (!s->ignored[col])
                dj[a++] = uj[col] - uq[col];
        }
    }
    if (s->method == INTERP_LINEAR) {
        fit_linear(used, di, d, w->delta, w->change, s->ridge,
                   s->estimate == INTERP_LEAVE_ONE_OUT, w->pred, w->err, w->se,
                   fit_split(di, d, w->fit));
        if (s->estimate == INTERP_STANDARD_ERROR)
            for (size_t col = 0; col < d; ++col)
                w->err[col] = s->interval * w->se[col];
    } else {
        fit_idw(used, di, d, w->delta, w->change, w->pred, w->err, w->fit);
    }
    bool within_tolerance = true;
    for (size_t col = 0; col < d; ++col) {
        values[col] = s->ignored[col] ? w->pred[col] : x[col] + w->pred[col];
        estimate[col] = w->err[col];
        /* A fit that failed (NaN values, an infinite estimate) is never
         * within tolerance, even an infinite one; a NaN compares false. */
        within_tolerance = within_tolerance && isfinite(values[col]) &&
                           isfinite(w->err[col]) && w->err[col] <= s->tolerance[col];
    }
    if (!within_tolerance)
        return INTERP_ERROR_ESTIMATE;
    for (size_t col = 0; col < d; ++col)
        if (s->nonnegative[col] && values[col] < 0)
            return INTERP_NEGATIVE;
    for (size_t r = 0; r < s->conserved_rows; ++r) {
        const double *row = s->conserved + r * d;
        double residual = 0.0, bound = 0.0;
        for (size_t col = 0; col < d; ++col) {
            residual += row[col] * w->pred[col];
            bound += fabs(row[col]) * fabs(x[col]);
        }
        if (fabs(residual) > s->rtol * bound + s->atol)
            return INTERP_CONSERVATION;
    }
    return INTERP_ACCEPTED;
}

/* The coordinates and presence bits of class k's samples, once a call. */
static void prepare_class(const interp_settings_t *s, const interp_classes_t *c, size_t k,
                          query_work_t *w)
{
    if (w->ready[k])
        return;
    w->ready[k] = 1;
    size_t d = c->d, have = class_count(c, k);
    const double *samples = class_samples(c, k);
    for (size_t j = 0; j < have; ++j) {
        const double *xj = samples + 2 * j * d;
        size_t at = k * c->slots + j;
        coords_of(s, d, w->at_floor, xj, w->us + at * d);
        w->pin[at] = bits_of(s, xj);
        w->pout[at] = bits_of(s, xj + d);
    }
}

void interp_predict(const interp_settings_t *s, const interp_classes_t *c, size_t n,
                    const double *x, const int64_t *cls, uint8_t *check, double *values,
                    double *estimate, int64_t *used, void *work)
{
    size_t d = c->d;
    query_work_t w = query_split(s, c, work);
    floor_coords(s, d, w.at_floor);
    for (size_t q = 0; q < n; ++q) {
        size_t k = (size_t)cls[q], within = 0;
        const double *xq = x + q * d, *uqq = w.uq;
        coords_of(s, d, w.at_floor, xq, w.uq);
        uint64_t pq = bits_of(s, xq);
        double *vq = values + q * d, *eq = estimate + q * d;
        for (size_t col = 0; col < d; ++col)
            vq[col] = eq[col] = NAN;
        used[q] = 0;
        interp_check_t outcome = INTERP_ACCEPTED;
        size_t kept = 0;
        if (class_count(c, k) < s->need) {
            outcome = INTERP_FEW_NEIGHBOURS;
        } else {
            prepare_class(s, c, k, &w);
            kept = choose(s, c, k, uqq, pq, &within, &w);
            if (within < s->need) {
                outcome = INTERP_TOO_FAR;
            } else {
                bool agree = true;
                const uint64_t *pout = w.pout + k * c->slots;
                for (size_t j = 1; j < kept; ++j)
                    agree = agree && pout[w.sel[j]] == pout[w.sel[0]];
                if (kept < s->need || !agree)
                    outcome = INTERP_PRESENCE;
                else if (isfinite(s->extrapolation) && outside(s, c, k, uqq, kept, &w))
                    outcome = INTERP_OUTSIDE;
            }
        }
        if (outcome == INTERP_ACCEPTED) {
            used[q] = (int64_t)kept;
            outcome = predict_one(s, c, k, xq, uqq, kept, vq, eq, &w);
        }
        check[q] = (uint8_t)outcome;
    }
}

/* A count kept in an entry's header as a double, as an index in 0..limit
 * (a value out of range, NaN included, as the nearest end). */
static size_t header_count(double v, size_t limit)
{
    if (!(v > 0))
        return 0;
    return v >= (double)limit ? limit : (size_t)v;
}

/* Whether the stored input has the bytes of the row's input, -0.0 read
 * as 0.0 (a stored input was stored so). */
static bool same_input(const double *stored, const double *row, size_t d)
{
    for (size_t col = 0; col < d; ++col) {
        double v = row[col] + 0.0;
        if (memcmp(stored + col, &v, sizeof v) != 0)
            return false;
    }
    return true;
}

bool interp_append(const interp_append_t *a, size_t i, double *entry)
{
    const size_t d = a->d, step = 2 * d, bytes = d * sizeof(double);
    size_t held = header_count(entry[0], a->slots), next = header_count(entry[1], a->slots - 1);
    double *samples = entry + 2;
    bool changed = false;
    for (int64_t r = a->start[i]; r < a->start[i + 1]; ++r) {
        const double *row = a->rows + (size_t)r * step;
        size_t j = 0;
        while (j < held && !same_input(samples + j * step, row, d))
            ++j;
        double *to = samples + (j < held ? j : next) * step;
        if (j < held) {
            if (memcmp(to + d, row + d, bytes) == 0)
                continue;
        } else {
            for (size_t col = 0; col < d; ++col)
                to[col] = row[col] + 0.0;
            held += held < a->slots;
            next = (next + 1) % a->slots;
        }
        memcpy(to + d, row + d, bytes);
        changed = true;
    }
    if (changed) {
        entry[0] = (double)held;
        entry[1] = (double)next;
    }
    return changed;
}
