/*
 * changepoint.c — E-Divisive means change points of a benchmark's history
 * (include/solbench/changepoint.h states the statistic, the search and the
 * permutation test).
 *
 * No distance matrix is kept: a shuffle reorders the values, so a matrix
 * indexed by the original positions would be read at scattered places,
 * and |y_i - y_j| costs less than that load. Memory is a few arrays of n
 * doubles whatever n.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/changepoint.h"
#include "solbench/util.h"
#include "solbench/stats.h"

void sb_cp_opts_default(sb_cp_opts *o)
{
    o->min_size = SB_CP_MIN_SIZE;
    o->permutations = SB_CP_PERMUTATIONS;
    o->alpha = SB_CP_ALPHA;
    o->min_change_pct = SB_CP_MIN_CHANGE;
    o->max_points = 0;
    o->seed = SB_CP_SEED;
}

/* ---- the statistic ------------------------------------------------------- */

/* Scratch of one segment of up to n points. */
typedef struct cp_work {
    double *before; /* before[s] = sum_{i<s} |y_i - y_s| */
    double *after;  /* after[s] = sum_{j>s} |y_s - y_j| */
    double *buf;    /* the shuffled values; the sorted ones for a median */
} cp_work;

/* Q of y[0..len) split at s (m = s points left, k = len - s right) from
 * the three sums: between the sides, within the left, within the right. */
static double cp_q(size_t m, size_t k, double between, double left,
                   double right)
{
    double fm = (double)m, fk = (double)k;
    double e = 2.0 * between / (fm * fk);
    if (m > 1)
        e -= left / (fm * (fm - 1.0) / 2.0);
    if (k > 1)
        e -= right / (fk * (fk - 1.0) / 2.0);
    return fm * fk / (fm + fk) * e;
}

/* Q(s) of y[0..len) for s = lo..hi (1 <= lo <= hi <= len - 1): into q[s]
 * when q is non-NULL; returns the largest, its split in *best. O(len^2). */
static double cp_scan(const double *y, size_t len, size_t lo, size_t hi,
                      cp_work *w, double *q, size_t *best)
{
    double *before = w->before, *after = w->after;
    memset(after, 0, len * sizeof *after);
    double total = 0.0;
    for (size_t j = 0; j < len; j++) {
        double yj = y[j], acc = 0.0;
        for (size_t i = 0; i < j; i++) {
            double d = fabs(y[i] - yj);
            acc += d;
            after[i] += d;
        }
        before[j] = acc;
        total += acc;
    }
    /* Moving point s from the right side to the left adds its distances
     * to the points before it to the left sum, takes its distances to the
     * points after it out of the right sum; the between sum is the rest. */
    double left = 0.0, right = total, qmax = -INFINITY;
    size_t arg = lo;
    for (size_t s = 1; s <= hi; s++) {
        left += before[s - 1];
        right -= after[s - 1];
        if (s < lo)
            continue;
        double v = cp_q(s, len - s, total - left - right, left, right);
        if (q)
            q[s] = v;
        if (v > qmax) {
            qmax = v;
            arg = s;
        }
    }
    if (best)
        *best = arg;
    return qmax;
}

static int cp_work_init(cp_work *w, size_t n)
{
    w->before = malloc(n * sizeof *w->before);
    w->after = malloc(n * sizeof *w->after);
    w->buf = malloc(n * sizeof *w->buf);
    return w->before && w->after && w->buf ? 0 : -1;
}

static void cp_work_free(cp_work *w)
{
    free(w->before);
    free(w->after);
    free(w->buf);
}

static int cp_check_values(const double *x, size_t n, sb_err *err)
{
    if (!x)
        return sb_fail(err, SB_EINVAL, "change points: no series");
    if (n > SB_CP_MAX_N)
        return sb_fail(err, SB_EINVAL,
                       "change points: %zu points, at most %d accepted", n,
                       SB_CP_MAX_N);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return sb_fail(
                err, SB_EINVAL,
                "change points: point %zu is %g, not a finite number", i, x[i]);
    return 0;
}

int sb_cp_statistic(const double *x, size_t n, double *q, sb_err *err)
{
    int rc = cp_check_values(x, n, err);
    if (rc)
        return rc;
    if (n < 2 || !q)
        return sb_fail(err, SB_EINVAL,
                       "change points: a split needs 2 points or more");
    cp_work w;
    if (cp_work_init(&w, n)) {
        cp_work_free(&w);
        return sb_fail(err, SB_ENOMEM, "change points: out of memory");
    }
    q[0] = 0.0;
    cp_scan(x, n, 1, n - 1, &w, q, NULL);
    cp_work_free(&w);
    return 0;
}

/* ---- the permutation test ------------------------------------------------ */

/* Uniform in [0, bound), bound >= 1: draws below 2^64 mod bound are
 * redrawn so that every value has the same number of preimages. */
static uint64_t cp_below(uint64_t *state, uint64_t bound)
{
    uint64_t reject = (0 - bound) % bound, r;
    do
        r = sb_rng_next(state);
    while (r < reject);
    return r % bound;
}

/* The p value of the best split of y[0..len) with Q = observed. Stops as
 * soon as p can no longer come under alpha, returning the p so far (above
 * alpha already; the search ends on it). */
static double cp_permutation_p(const double *y, size_t len, size_t min_size,
                               double observed, const sb_cp_opts *o,
                               uint64_t *rng, cp_work *w)
{
    double *buf = w->buf;
    memcpy(buf, y, len * sizeof *buf);
    /* A shuffle that reproduces the observed order gives the same Q
     * summed in the same order; other orders of equal Q may differ in
     * the last bits, and count as equal. */
    double bar = observed * (1.0 - 1e-12);
    long r = o->permutations, hits = 0;
    for (long i = 0; i < r; i++) {
        for (size_t j = len - 1; j > 0; j--) {
            size_t k = (size_t)cp_below(rng, (uint64_t)j + 1);
            double t = buf[j];
            buf[j] = buf[k];
            buf[k] = t;
        }
        if (cp_scan(buf, len, min_size, len - min_size, w, NULL, NULL) >= bar)
            hits++;
        if ((double)(1 + hits) / (double)(r + 1) > o->alpha)
            break;
    }
    return (double)(1 + hits) / (double)(r + 1);
}

/* ---- the search ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_point(const void *a, const void *b)
{
    size_t x = ((const sb_cp_point *)a)->index;
    size_t y = ((const sb_cp_point *)b)->index;
    return (x > y) - (x < y);
}

static double cp_median(const double *x, size_t from, size_t to, double *buf)
{
    size_t len = to - from;
    memcpy(buf, x + from, len * sizeof *buf);
    qsort(buf, len, sizeof *buf, cmp_double);
    return sb_percentile_sorted(buf, len, 0.5);
}

/* Segments in order of position: [start[i], start[i + 1]) with a last
 * bound start[count] = n; each with its best split (best = 0: none). */
typedef struct cp_segs {
    size_t *start, *best;
    double *q;
    size_t count;
} cp_segs;

/* The best split of segment i, or none when it is too short or no split
 * has positive Q (a constant segment has Q = 0 everywhere). */
static void cp_seg_candidate(cp_segs *s, size_t i, const double *x,
                             size_t min_size, cp_work *w)
{
    size_t a = s->start[i], len = s->start[i + 1] - a, t = 0;
    s->best[i] = 0;
    s->q[i] = 0.0;
    if (len < 2 * min_size)
        return;
    double q = cp_scan(x + a, len, min_size, len - min_size, w, NULL, &t);
    if (q > 0.0) {
        s->best[i] = a + t;
        s->q[i] = q;
    }
}

/* The medians of the segments on either side of each of the `found`
 * change points (sorted by index), each bounded by its neighbours or the
 * ends of x[0..n), and the change between them. */
static void cp_medians(const double *x, size_t n, sb_cp_point *out,
                       size_t found, double *buf)
{
    for (size_t i = 0; i < found; i++) {
        size_t from = i ? out[i - 1].index : 0;
        size_t to = i + 1 < found ? out[i + 1].index : n;
        out[i].before = cp_median(x, from, out[i].index, buf);
        out[i].after = cp_median(x, out[i].index, to, buf);
        out[i].change_pct =
            out[i].before != 0.0
                ? 100.0 * (out[i].after - out[i].before) / out[i].before
                : NAN;
    }
}

int sb_cp_detect(const double *x, size_t n, const sb_cp_opts *opts,
                 sb_cp_point *out, size_t max_out, size_t *n_out, sb_err *err)
{
    sb_cp_opts o;
    if (opts)
        o = *opts;
    else
        sb_cp_opts_default(&o);
    if (!n_out || (max_out && !out))
        return sb_fail(err, SB_EINVAL, "change points: no output");
    *n_out = 0;
    int rc = cp_check_values(x, n, err);
    if (rc)
        return rc;
    if (o.min_size < 1 || o.permutations < 1 || o.permutations > 1000000 ||
        !(o.alpha > 0.0 && o.alpha <= 1.0) || o.max_points < 0 ||
        !(o.min_change_pct >= 0.0 && o.min_change_pct < 1e6) ||
        o.alpha < 1.0 / (o.permutations + 1))
        return sb_fail(err, SB_EINVAL,
                       "change points: min_size %d, permutations %d, alpha "
                       "%g, max_points %d, min_change_pct %g out of range "
                       "(alpha at least 1/(permutations+1): the smallest p "
                       "a permutation test gives)",
                       o.min_size, o.permutations, o.alpha, o.max_points,
                       o.min_change_pct);
    size_t min_size = (size_t)o.min_size, limit = max_out;
    if (o.max_points > 0 && (size_t)o.max_points < limit)
        limit = (size_t)o.max_points;
    if (n < 2 * min_size || limit == 0)
        return 0;

    /* At most n / min_size segments, so n / min_size - 1 change points. */
    size_t cap = n / min_size + 1;
    cp_work w;
    cp_segs s = {malloc((cap + 1) * sizeof *s.start),
                 malloc(cap * sizeof *s.best), malloc(cap * sizeof *s.q), 1};
    int ok = cp_work_init(&w, n) == 0 && s.start && s.best && s.q;
    if (!ok) {
        rc = sb_fail(err, SB_ENOMEM, "change points: out of memory");
        goto done;
    }
    uint64_t rng = o.seed;
    size_t found = 0;
    s.start[0] = 0;
    s.start[1] = n;
    cp_seg_candidate(&s, 0, x, min_size, &w);
    while (found < limit) {
        size_t c = 0;
        for (size_t i = 1; i < s.count; i++)
            if (s.q[i] > s.q[c])
                c = i;
        if (s.best[c] == 0)
            break;
        size_t a = s.start[c], len = s.start[c + 1] - a;
        double p = cp_permutation_p(x + a, len, min_size, s.q[c], &o, &rng, &w);
        if (p > o.alpha)
            break;
        out[found++] = (sb_cp_point){.index = s.best[c], .p = p, .q = s.q[c]};
        /* Segment c becomes c and c + 1, split at its best point. */
        memmove(s.start + c + 2, s.start + c + 1,
                (s.count - c) * sizeof *s.start);
        s.start[c + 1] = s.best[c];
        memmove(s.best + c + 1, s.best + c, (s.count - c) * sizeof *s.best);
        memmove(s.q + c + 1, s.q + c, (s.count - c) * sizeof *s.q);
        s.count++;
        cp_seg_candidate(&s, c, x, min_size, &w);
        cp_seg_candidate(&s, c + 1, x, min_size, &w);
    }

    /* The medians on either side, between the neighbouring change points;
     * a change smaller than min_change_pct is dropped (the smallest first)
     * and its neighbours' medians taken again without it. */
    qsort(out, found, sizeof *out, cmp_point);
    for (;;) {
        cp_medians(x, n, out, found, w.buf);
        size_t drop = found;
        for (size_t i = 0; i < found; i++)
            if (fabs(out[i].change_pct) < o.min_change_pct &&
                (drop == found ||
                 fabs(out[i].change_pct) < fabs(out[drop].change_pct)))
                drop = i;
        if (drop == found)
            break;
        memmove(out + drop, out + drop + 1, (found - drop - 1) * sizeof *out);
        found--;
    }
    *n_out = found;
done:
    cp_work_free(&w);
    free(s.start);
    free(s.best);
    free(s.q);
    return rc;
}
