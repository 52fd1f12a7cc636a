/*
 * stats.c — order statistics and moments of a sample set (rules in
 * stats.h and docs/METRICS.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sb_percentile_sorted(const double *x, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    if (q <= 0.0)
        return x[0];
    if (q >= 1.0)
        return x[n - 1];
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    double frac = h - (double)lo;
    if (lo + 1 >= n)
        return x[n - 1];
    return x[lo] + frac * (x[lo + 1] - x[lo]);
}

void sb_stats_compute(const double *x, size_t n, sb_stats *s)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    if (n == 0)
        return;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted) {
        s->n = 0;
        return;
    }
    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);

    /* Two-pass mean and variance: exact enough for timing data. */
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];
    double mean = sum / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (sorted[i] - mean) * (sorted[i] - mean);

    s->min = sorted[0];
    s->max = sorted[n - 1];
    s->p10 = sb_percentile_sorted(sorted, n, 0.10);
    s->p50 = sb_percentile_sorted(sorted, n, 0.50);
    s->p90 = sb_percentile_sorted(sorted, n, 0.90);
    s->p99 = sb_percentile_sorted(sorted, n, 0.99);
    s->mean = mean;
    s->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
    s->cv = mean != 0.0 ? s->stddev / mean : 0.0;
    free(sorted);
}

/* The k-th smallest of x[0..n) into x[k], the smaller ones before it and
 * the larger after it (Hoare's selection, median-of-three pivots). */
static void select_kth(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        size_t mid = lo + (hi - lo) / 2;
        double a = x[lo], b = x[mid], c = x[hi];
        double piv = a < b ? (b < c ? b : (a < c ? c : a))
                           : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < piv)
                i++;
            while (x[j] > piv)
                j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j];
                x[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

void sb_percentiles_select(double *x, size_t n, const double *q, size_t nq,
                           double *out)
{
    /* x[0..from) holds values no larger than those after: what the
     * selection of a lower percentile left */
    size_t from = 0;
    for (size_t i = 0; i < nq; i++) {
        double h = (double)(n - 1) * q[i];
        size_t k = (size_t)h;
        if (k >= n)
            k = n - 1;
        size_t f = from <= k ? from : k;
        select_kth(x + f, n - f, k - f);
        double lo = x[k];
        out[i] = lo;
        if (k + 1 < n && h > (double)k) {
            double up = x[k + 1];
            for (size_t j = k + 2; j < n; j++)
                up = x[j] < up ? x[j] : up;
            out[i] = lo + (h - (double)k) * (up - lo);
        }
        from = k + 1;
    }
}
