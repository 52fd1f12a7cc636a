/*
 * stats.h — statistics over a sample set.
 *
 * Percentiles use linear interpolation between closest ranks (Hyndman & Fan
 * type 7, the default of R and NumPy): for sorted x[0..n-1] and fraction q,
 * h = (n-1)q, p = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
 * stddev is the sample standard deviation (n-1 in the denominator); cv is
 * stddev / mean.
 */
#ifndef SOLBENCH_STATS_H
#define SOLBENCH_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sb_stats {
    size_t n;
    double min, p50, p90, p99, max, mean, stddev, cv;
} sb_stats;

/* Computes stats over x[0..n-1]; x is not modified. n == 0 gives all zeros. */
void sb_stats_compute(const double *x, size_t n, sb_stats *s);
/* Percentile (q in [0,1]) of already sorted data, type-7 rule. */
double sb_percentile_sorted(const double *sorted, size_t n, double q);

#ifdef __cplusplus
}
#endif

#endif
