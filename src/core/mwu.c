/*
 * mwu.c — the two-sided Mann–Whitney U test (Wilcoxon rank-sum).
 *
 * Why this test: benchmark samples are rarely normal (a floor set by the
 * hardware, a long right tail from interrupts and other tenants), so a
 * t-test's assumptions do not hold; the U test only asks whether a value
 * from one run tends to be larger than a value from the other.
 *
 * For small samples without ties the exact null distribution is counted
 * by dynamic programming: c(i, j, u), the number of orderings of i values
 * of A and j values of B with U = u, obeys
 *     c(i, j, u) = c(i - 1, j, u - j) + c(i, j - 1, u)
 * (the largest value is either an A, beating all j B values, or a B).
 * Otherwise U is approximately normal with mean n1 n2 / 2 and variance
 *     n1 n2 / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1)))
 * (t: sizes of the groups of tied values), with a continuity correction
 * of 0.5 — the same definitions as scipy.stats.mannwhitneyu.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/error.h"
#include "solbench/stats.h"

/* Exact counts are doubles: C(40, 20) ~ 1.4e11 is far inside the 2^53 of
 * exact integers, and the table stays under a megabyte. */
#define SB_MWU_TABLE_MAX 10000

/* Fills cnt[0..n1*n2] with the number of orderings giving each U. */
static int mwu_counts(size_t n1, size_t n2, double *cnt)
{
    size_t umax = n1 * n2, w = umax + 1;
    /* prev[j][u] = c(i - 1, j, u); cur[j][u] = c(i, j, u). */
    double *prev = calloc((n2 + 1) * w, sizeof *prev);
    double *cur = calloc((n2 + 1) * w, sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return -1;
    }
    for (size_t j = 0; j <= n2; j++)
        prev[j * w] = 1.0; /* i = 0: only U = 0 */
    for (size_t i = 1; i <= n1; i++) {
        memset(cur, 0, (n2 + 1) * w * sizeof *cur);
        cur[0] = 1.0; /* j = 0: only U = 0 */
        for (size_t j = 1; j <= n2; j++) {
            double *c = cur + j * w;
            const double *left = cur + (j - 1) * w, *up = prev + j * w;
            for (size_t u = 0; u <= i * j; u++)
                c[u] = left[u] + (u >= j ? up[u - j] : 0.0);
        }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    memcpy(cnt, prev + n2 * w, w * sizeof *cnt);
    free(prev);
    free(cur);
    return 0;
}

double sb_mwu_exact_cdf(size_t n1, size_t n2, double u)
{
    /* n2 > MAX / n1 rather than n1 * n2 > MAX: the product can wrap. */
    if (n1 == 0 || n2 == 0 || n2 > SB_MWU_TABLE_MAX / n1)
        return -1.0;
    size_t umax = n1 * n2;
    double *cnt = malloc((umax + 1) * sizeof *cnt);
    if (!cnt || mwu_counts(n1, n2, cnt) != 0) {
        free(cnt);
        return -1.0;
    }
    double below = 0.0, total = 0.0;
    for (size_t k = 0; k <= umax; k++) {
        total += cnt[k];
        if ((double)k <= u + 1e-9)
            below += cnt[k];
    }
    free(cnt);
    return below / total;
}

typedef struct mwu_item {
    double v;
    int side; /* 0: a, 1: b */
} mwu_item;

static int cmp_item(const void *x, const void *y)
{
    double a = ((const mwu_item *)x)->v, b = ((const mwu_item *)y)->v;
    return (a > b) - (a < b);
}

int sb_mwu_test(const double *a, size_t na, const double *b, size_t nb,
                sb_mwu *out)
{
    memset(out, 0, sizeof *out);
    out->n1 = na;
    out->n2 = nb;
    out->p = 1.0;
    if (na == 0 || nb == 0)
        return SB_EINVAL;
    size_t n = na + nb;
    mwu_item *it = malloc(n * sizeof *it);
    if (!it)
        return SB_ENOMEM;
    for (size_t i = 0; i < na; i++) {
        if (!isfinite(a[i])) {
            free(it);
            return SB_EINVAL;
        }
        it[i] = (mwu_item){a[i], 0};
    }
    for (size_t i = 0; i < nb; i++) {
        if (!isfinite(b[i])) {
            free(it);
            return SB_EINVAL;
        }
        it[na + i] = (mwu_item){b[i], 1};
    }
    qsort(it, n, sizeof *it, cmp_item);

    /* Rank sum of A with mid-ranks for ties, and the tie term. */
    double r1 = 0.0, tie_term = 0.0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && it[j].v == it[i].v)
            j++;
        double t = (double)(j - i);
        double rank = 0.5 * ((double)(i + 1) + (double)j); /* mid-rank */
        for (size_t k = i; k < j; k++)
            if (it[k].side == 0)
                r1 += rank;
        if (j - i > 1) {
            tie_term += t * t * t - t;
            out->ties = true;
        }
        i = j;
    }
    free(it);

    double n1 = (double)na, n2 = (double)nb, nn = (double)n;
    out->u1 = r1 - n1 * (n1 + 1.0) / 2.0;
    double umax = n1 * n2;
    double u_lo = fmin(out->u1, umax - out->u1);

    if (!out->ties && na <= SB_MWU_EXACT_MAX && nb <= SB_MWU_EXACT_MAX) {
        double cdf = sb_mwu_exact_cdf(na, nb, u_lo);
        if (cdf >= 0.0) {
            out->exact = true;
            out->p = fmin(1.0, 2.0 * cdf);
            return 0;
        }
    }

    double mu = umax / 2.0;
    double var = n1 * n2 / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    if (!(var > 0.0)) { /* every value tied: no evidence of a difference */
        out->z = 0.0;
        out->p = 1.0;
        return 0;
    }
    double z = (fabs(out->u1 - mu) - 0.5) / sqrt(var);
    if (z < 0.0)
        z = 0.0;
    out->z = z;
    out->p = fmin(1.0, erfc(z / sqrt(2.0)));
    return 0;
}
