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
    s->p50 = sb_percentile_sorted(sorted, n, 0.50);
    s->p90 = sb_percentile_sorted(sorted, n, 0.90);
    s->p99 = sb_percentile_sorted(sorted, n, 0.99);
    s->mean = mean;
    s->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
    s->cv = mean != 0.0 ? s->stddev / mean : 0.0;
    free(sorted);
}
