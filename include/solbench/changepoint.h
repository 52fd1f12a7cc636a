/*
 * changepoint.h — change points in a benchmark's history (one figure of one
 * benchmark point over its runs, in time order) by E-Divisive means
 * (Matteson & James 2014, "A nonparametric approach for multiple change
 * point analysis of multivariate data", JASA 109(505)), univariate with
 * exponent alpha = 1, as performance CI uses it (Daly et al., ICPE 2020,
 * at MongoDB; Apache Otava, formerly Hunter).
 *
 * The statistic. For a segment x[a..b) split at t (left x[a..t), m = t - a
 * points; right x[t..b), k = b - t points), with d(i, j) = |x_i - x_j|,
 *     Q(t) = m k / (m + k) * [ 2 / (m k)    * sum_{a<=i<t<=j<b}  d(i, j)
 *                              - 1 / C(m,2) * sum_{a<=i<l<t}     d(i, l)
 *                              - 1 / C(k,2) * sum_{t<=j<l<b}     d(j, l) ]
 * (a side of one point has no pairs: its within term is 0). The bracket
 * is the sample energy distance of the two sides; it is near 0 when both
 * come from one distribution, and the weight favours balanced splits. All
 * t of a segment of L points cost O(L^2) together: one pass over the pairs
 * gives each point's distance sums to the points before and after it, and
 * the three sums of every t are running sums of those.
 *
 * The search. Start from the whole series as one segment; each segment's
 * candidate is its split of largest Q with at least min_size points on
 * each side. The candidate of largest Q over all segments is tested by
 * permutation: its segment's values are shuffled R times and each time the
 * largest Q over the same splits is taken; p = (1 + #{shuffled >= observed})
 * / (R + 1). When p <= alpha the change point is accepted, its segment is
 * split in two and the search repeats; it stops at the first candidate
 * rejected, when no segment can be split, or at max_points. Shuffles draw
 * from splitmix64 seeded with opts.seed, so a result reproduces exactly.
 *
 * For each change point: before and after are the medians of the segments
 * on either side, each bounded by the neighbouring change points (or the
 * ends of the series), and change_pct = 100 (after - before) / before.
 * A change point whose |change_pct| is under min_change_pct is dropped,
 * the smallest first, and the medians of its neighbours taken again.
 *
 * Cost: time O(R n^2) per change point tested, memory O(n). One test of
 * n = 1000 with R = 199 takes about 0.15 s on one core of a current x86
 * server, n = 5000 about 4 s; a rejected test stops as soon as p can no
 * longer reach alpha (a flat n = 1000 series: about 0.01 s).
 */
#ifndef SOLBENCH_CHANGEPOINT_H
#define SOLBENCH_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest series accepted (points). */
#define SB_CP_MAX_N 10000

/* Defaults of sb_cp_opts_default. min_size 5: a change is reported after
 * five runs at the new level, and a median of five shrugs off one outlier.
 * 199 permutations resolve p in steps of 1/200 (0.01 is 2 of 200). alpha
 * 0.01 and a change of at least 5 %: on real runs of a shared 2-vCPU guest
 * (scripts/changes-rates.sh) alpha 0.05 alone called a change point in 6
 * of 10 flat series of 24 runs — the machine's own level moves by 3-9 %
 * for minutes, a change but not the code's — and beside 4 of 10 injected
 * 10 % steps (docs/HISTORY.md). */
#define SB_CP_MIN_SIZE 5
#define SB_CP_PERMUTATIONS 199
#define SB_CP_ALPHA 0.01
#define SB_CP_MIN_CHANGE 5.0
#define SB_CP_SEED UINT64_C(0x5eed5eed5eed5eed)

typedef struct sb_cp_opts {
    int min_size;     /* fewest points in a segment: >= 1, default 5 */
    int permutations; /* R: 1..1000000, default 199 */
    double alpha;     /* significance level: (0, 1], default 0.01 */
    /* smallest change reported, percent of the median before: a smaller
     * one is dropped and its neighbours' medians taken again; default 5 */
    double min_change_pct;
    int max_points; /* most change points reported; 0 (default): no limit */
    uint64_t seed;  /* seed of the shuffles */
} sb_cp_opts;

typedef struct sb_cp_point {
    size_t index;      /* first point of the new segment */
    double p;          /* permutation p value when accepted */
    double q;          /* Q at this split, in its segment when accepted */
    double before;     /* median of the segment before */
    double after;      /* median of the segment after */
    double change_pct; /* 100 (after - before) / before; NaN if before == 0 */
} sb_cp_point;

/* Fills o with the defaults above. */
void sb_cp_opts_default(sb_cp_opts *o);

/* Detects change points of x[0..n-1] (n <= SB_CP_MAX_N, no NaN or
 * infinity). opts may be NULL for the defaults. Writes at most
 * min(max_points, max_out) change points to out, in order of index (when
 * more are significant, the first accepted, the strongest, are kept), and
 * their count to *n_out. A series shorter than 2 min_size, or with no
 * split of positive Q (a constant one), has none. Returns 0, SB_EINVAL for
 * bad input or options, SB_ENOMEM; err (may be NULL) says which. */
int sb_cp_detect(const double *x, size_t n, const sb_cp_opts *opts,
                 sb_cp_point *out, size_t max_out, size_t *n_out, sb_err *err);

/* Q(t) of the whole series x[0..n-1] for every split: q[t] for t = 1..n-1
 * (left x[0..t), right x[t..n)), q[0] = 0. n >= 2 and <= SB_CP_MAX_N.
 * Returns 0, SB_EINVAL or SB_ENOMEM. */
int sb_cp_statistic(const double *x, size_t n, double *q, sb_err *err);

#ifdef __cplusplus
}
#endif

#endif
