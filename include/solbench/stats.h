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

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sb_stats {
    size_t n;
    double min, p10, p50, p90, p99, max, mean, stddev, cv;
} sb_stats;

/* Computes stats over x[0..n-1]; x is not modified. n == 0 gives all zeros. */
void sb_stats_compute(const double *x, size_t n, sb_stats *s);
/* Percentile (q in [0,1]) of already sorted data, type-7 rule. */
double sb_percentile_sorted(const double *sorted, size_t n, double q);
/* The percentiles q[0..nq) (ascending, in [0,1]) of x[0..n) (n >= 1) by
 * the same rule, into out[], in O(n) per percentile by selection instead
 * of a sort; x is reordered. */
void sb_percentiles_select(double *x, size_t n, const double *q, size_t nq,
                           double *out);

/* ---- Mann–Whitney U ------------------------------------------------------ */

/* Largest sample size per side for which the exact null distribution is
 * used (when there are no ties); above it, the normal approximation. */
#define SB_MWU_EXACT_MAX 20

typedef struct sb_mwu {
    size_t n1, n2;
    double u1;  /* U of the first sample: pairs (a > b) + half the ties */
    double z;   /* normal approximation's statistic (0 when exact) */
    double p;   /* two-sided p-value */
    bool exact; /* exact distribution used */
    bool ties;  /* the pooled samples hold ties */
} sb_mwu;

/* Two-sided test of a against b. Exact when both sizes are at most
 * SB_MWU_EXACT_MAX and there are no ties; otherwise normal approximation
 * with tie correction and continuity correction. SB_EINVAL when a side
 * is empty or a value is not finite. */
int sb_mwu_test(const double *a, size_t na, const double *b, size_t nb,
                sb_mwu *out);
/* Exact P(U <= u) under the null for sizes n1, n2 (no ties); negative
 * when the sizes are too large for the table (n1 * n2 > 10000). */
double sb_mwu_exact_cdf(size_t n1, size_t n2, double u);

#ifdef __cplusplus
}
#endif

#endif
