/*
 * test_mwu.c — the Mann–Whitney U test and the verdict rule.
 *
 * Reference p-values were computed offline, independently of this code,
 * with SciPy 1.10.1: scipy.stats.mannwhitneyu(a, b, alternative=
 * 'two-sided', method='exact') for the exact cases and method=
 * 'asymptotic', use_continuity=True for the normal approximation. The
 * exact ones were also checked by enumerating every one of the C(n1+n2,
 * n1) rank assignments in Python (itertools.combinations) and counting
 * those at least as far from n1 n2 / 2 as the observed U. The tiny table
 * (n1 = n2 = 2) was enumerated by hand: the 6 orderings give U = 0, 1,
 * 2, 2, 3, 4.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "solbench/compare.h"
#include "solbench/util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_exact_table(void)
{
    /* n1 = n2 = 2: counts of U = 0..4 are 1, 1, 2, 1, 1 (of 6). */
    CHECK_NEAR(sb_mwu_exact_cdf(2, 2, 0), 1.0 / 6, 1e-12);
    CHECK_NEAR(sb_mwu_exact_cdf(2, 2, 1), 2.0 / 6, 1e-12);
    CHECK_NEAR(sb_mwu_exact_cdf(2, 2, 2), 4.0 / 6, 1e-12);
    CHECK_NEAR(sb_mwu_exact_cdf(2, 2, 4), 1.0, 1e-12);
    /* n1 = 1, n2 = 3: U uniform on 0..3. */
    CHECK_NEAR(sb_mwu_exact_cdf(1, 3, 1), 0.5, 1e-12);
    /* Asymmetric sizes give the same distribution either way round. */
    CHECK_NEAR(sb_mwu_exact_cdf(3, 7, 5), sb_mwu_exact_cdf(7, 3, 5), 1e-12);
    CHECK(sb_mwu_exact_cdf(0, 3, 1) < 0);
    CHECK(sb_mwu_exact_cdf(200, 200, 1) < 0);
    CHECK(sb_mwu_exact_cdf(100, 100, 1) >= 0); /* 10000: the largest table */
    CHECK(sb_mwu_exact_cdf(100, 101, 1) < 0);
    /* Sizes whose product wraps around are refused, not tabulated. */
    CHECK(sb_mwu_exact_cdf((size_t)1 << 32, (size_t)1 << 32, 1) < 0);
}

static void test_reference_values(void)
{
    sb_mwu m;
    {
        const double a[] = {1.1, 2.3, 0.7, 3.4, 2.9};
        const double b[] = {4.1, 3.8, 5.2, 2.2, 4.9, 6.0};
        CHECK(sb_mwu_test(a, N(a), b, N(b), &m) == 0);
        CHECK(m.exact && !m.ties);
        CHECK_NEAR(m.u1, 3.0, 1e-12);
        CHECK_NEAR(m.p, 0.030303030303030304, 1e-12);
        /* Swapping the sides gives U2 = n1 n2 - U1 and the same p. */
        CHECK(sb_mwu_test(b, N(b), a, N(a), &m) == 0);
        CHECK_NEAR(m.u1, 27.0, 1e-12);
        CHECK_NEAR(m.p, 0.030303030303030304, 1e-12);
    }
    {
        const double a[] = {3.1, 4.7, 2.2, 5.9, 6.4, 3.3, 7.5, 4.0};
        const double b[] = {5.1, 6.6, 8.2, 4.4, 7.7, 9.1,
                            5.6, 6.9, 8.8, 7.2, 3.9, 6.1};
        CHECK(sb_mwu_test(a, N(a), b, N(b), &m) == 0);
        CHECK(m.exact);
        CHECK_NEAR(m.u1, 20.0, 1e-12);
        CHECK_NEAR(m.p, 0.031420179407795512, 1e-10);
    }
    {
        /* Complete separation, 10 per side: p = 2 / C(20, 10). */
        double a[10], b[10];
        for (int i = 0; i < 10; i++) {
            a[i] = i;
            b[i] = i + 10;
        }
        CHECK(sb_mwu_test(a, 10, b, 10, &m) == 0);
        CHECK(m.exact);
        CHECK_NEAR(m.u1, 0.0, 1e-12);
        CHECK_NEAR(m.p, 1.082508822446903e-05, 1e-12);
    }
    {
        /* 20 per side, the largest exact case. */
        const double a[] = {5.1406, 6.077,  4.4622, 5.5829, 4.1392, 6.4319,
                            6.9509, 3.9701, 4.2854, 4.3097, 4.2347, 8.0632,
                            6.3853, 4.3398, 5.3569, 4.6978, 4.8543, 2.6758,
                            6.4358, 5.0111, 5.2557};
        const double b[] = {4.9022, 6.7267, 6.7579, 6.5236, 5.8955,
                            6.7417, 6.3319, 3.8916, 5.3747, 5.4634,
                            4.5878, 4.7666, 6.7155, 6.1803, 5.3308,
                            7.3059, 4.3396, 5.6303, 6.1296, 6.536};
        CHECK(sb_mwu_test(a, 20, b, 20, &m) == 0);
        CHECK(m.exact);
        CHECK_NEAR(m.u1, 128.0, 1e-12);
        CHECK_NEAR(m.p, 0.052399521872849721, 1e-9);
        /* 21 against 20: past the exact limit, normal approximation. */
        CHECK(sb_mwu_test(a, 21, b, 20, &m) == 0);
        CHECK(!m.exact);
        CHECK_NEAR(m.u1, 133.0, 1e-12);
        CHECK_NEAR(m.p, 0.046012891624398776, 1e-9);
    }
    {
        /* Ties: normal approximation with tie and continuity corrections. */
        const double a[] = {1, 2, 2, 3, 4, 4, 4, 5, 6, 7, 7, 8};
        const double b[] = {3, 4, 5, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12};
        CHECK(sb_mwu_test(a, N(a), b, N(b), &m) == 0);
        CHECK(!m.exact && m.ties);
        CHECK_NEAR(m.u1, 30.5, 1e-12);
        CHECK_NEAR(m.p, 0.010189185404277466, 1e-9);
    }
    {
        /* Larger samples (25 and 30), normal approximation. */
        const double a[] = {
            9.876199,  10.071525, 10.383369, 9.250003,  9.555646,
            10.482755, 9.456441,  9.760682,  10.756644, 10.749705,
            9.427499,  9.764637,  9.11554,   9.692698,  10.422469,
            9.886036,  11.021489, 9.862078,  9.433886,  9.985999,
            9.87423,   9.363169,  9.88129,   10.183064, 8.60411};
        const double b[] = {
            13.014372, 12.437423, 10.580574, 13.173212, 10.851521, 11.981091,
            9.55435,   10.997862, 11.212868, 9.011,     11.865118, 9.359273,
            10.030369, 10.932711, 12.010526, 10.328839, 8.993886,  11.055421,
            10.119196, 11.288145, 10.300623, 11.207699, 9.594377,  11.322955,
            12.025944, 8.292282,  10.511347, 11.378539, 10.954523, 12.679049};
        CHECK(sb_mwu_test(a, N(a), b, N(b), &m) == 0);
        CHECK(!m.exact);
        CHECK_NEAR(m.u1, 167.0, 1e-12);
        CHECK_NEAR(m.p, 0.00045252513347692998, 1e-9);
    }
    {
        /* Every value equal: no evidence at all. */
        const double a[] = {1, 1, 1}, b[] = {1, 1, 1, 1};
        CHECK(sb_mwu_test(a, 3, b, 4, &m) == 0);
        CHECK_NEAR(m.p, 1.0, 1e-12);
        /* Bad input. */
        const double bad[] = {1, NAN};
        CHECK(sb_mwu_test(a, 0, b, 4, &m) == SB_EINVAL);
        CHECK(sb_mwu_test(bad, 2, b, 4, &m) == SB_EINVAL);
    }
}

/* Samples of a benchmark-like distribution: a floor plus a right-skewed
 * noise (exponential), scaled by `scale`. */
static void draw(uint64_t *rng, double *x, int n, double scale)
{
    for (int i = 0; i < n; i++) {
        double u = sb_rng_unif(rng);
        x[i] = scale * (1.0 + 0.03 * -log(1.0 - u));
    }
}

static sb_verdict judge_times(const double *a, int na, const double *b, int nb,
                              double alpha, double thr, sb_cmp_line *L)
{
    sb_cmp_opts o;
    sb_cmp_opts_default(&o);
    o.alpha = alpha;
    o.threshold_pct = thr;
    memset(L, 0, sizeof *L);
    sb_cmp_judge(L, a, (size_t)na, b, (size_t)nb, &o);
    return L->verdict;
}

static void test_slowdown_flagged(void)
{
    uint64_t rng = 42;
    double a[10], b[10];
    sb_cmp_line L;
    int flagged = 0;
    for (int t = 0; t < 50; t++) {
        draw(&rng, a, 10, 1.0);
        draw(&rng, b, 10, 1.10); /* 10 % slower */
        flagged +=
            judge_times(a, 10, b, 10, 0.01, 5.0, &L) == SB_VERDICT_REGRESSED;
    }
    /* With n = 10 per side and 3 % noise a 10 % slowdown is unmistakable. */
    CHECK(flagged == 50);
    CHECK(L.change_pct > 5.0 && L.tested && L.test.exact);

    /* The same seen as a bandwidth (higher is better): B's rate is lower. */
    draw(&rng, a, 10, 1.0);
    draw(&rng, b, 10, 1.10);
    sb_cmp_opts o;
    sb_cmp_opts_default(&o);
    memset(&L, 0, sizeof L);
    L.higher_better = true;
    L.a_value = 100.0; /* GB/s at A's median */
    L.b_value = 90.9;  /* GB/s at B's median */
    sb_cmp_judge(&L, a, 10, b, 10, &o);
    CHECK(L.verdict == SB_VERDICT_REGRESSED);
    CHECK_NEAR(L.change_pct, -9.1, 1e-9);

    /* A 10 % speed-up is "improved", not "regressed". */
    draw(&rng, a, 10, 1.0);
    draw(&rng, b, 10, 0.90);
    CHECK(judge_times(a, 10, b, 10, 0.01, 5.0, &L) == SB_VERDICT_IMPROVED);

    /* Significant but below the threshold: unchanged. */
    for (int i = 0; i < 10; i++) {
        a[i] = 1.0 + 0.001 * i; /* a tight spread... */
        b[i] = a[i] * 1.02;     /* ...and every sample 2 % slower */
    }
    CHECK(judge_times(a, 10, b, 10, 0.01, 5.0, &L) == SB_VERDICT_UNCHANGED);
    CHECK(L.test.p < 0.01);
    /* The same with no threshold is flagged: the threshold did it. */
    CHECK(judge_times(a, 10, b, 10, 0.01, 0.0, &L) == SB_VERDICT_REGRESSED);

    /* Few samples: never significant at 0.01, and says so. */
    CHECK(judge_times(a, 3, b, 3, 0.01, 5.0, &L) == SB_VERDICT_UNCHANGED);
    CHECK(L.few_samples && strstr(L.why, "too few samples") != NULL);
    CHECK(judge_times(a, 0, b, 3, 0.01, 5.0, &L) == SB_VERDICT_NOT_COMPARABLE);
    /* No samples but headline figures (a sweep's fit summary): not
     * comparable, and the change shown is the figures' true change. */
    memset(&L, 0, sizeof L);
    L.a_value = 2.0;
    L.b_value = 1.5;
    sb_cmp_judge(&L, a, 0, b, 0, &o);
    CHECK(L.verdict == SB_VERDICT_NOT_COMPARABLE);
    CHECK_NEAR(L.change_pct, -25.0, 1e-12);
}

static void test_false_positives(void)
{
    uint64_t rng = 2026;
    double a[30], b[30];
    sb_cmp_line L;
    /* 200 trials of two samples from one distribution, n = 10 per side
     * (exact test), alpha 0.01: at most 3 % flagged by the full rule, and
     * the test alone (threshold 0) is not far above alpha either. */
    int flagged = 0, significant = 0;
    for (int t = 0; t < 200; t++) {
        draw(&rng, a, 10, 1.0);
        draw(&rng, b, 10, 1.0);
        flagged +=
            judge_times(a, 10, b, 10, 0.01, 5.0, &L) != SB_VERDICT_UNCHANGED;
        significant += L.test.p < 0.01;
    }
    CHECK(flagged <= 6);
    CHECK(significant <= 6);
    printf("same distribution, n=10: %d/200 flagged, %d/200 p<0.01\n", flagged,
           significant);

    /* The normal approximation (n = 30) keeps its level too: at alpha
     * 0.05 over 1000 trials the rate is near 5 % (a broken variance would
     * move it far away), and never above 3 % at 0.01. */
    int sig05 = 0, sig01 = 0;
    for (int t = 0; t < 1000; t++) {
        draw(&rng, a, 30, 1.0);
        draw(&rng, b, 30, 1.0);
        sb_mwu m;
        if (sb_mwu_test(a, 30, b, 30, &m) != 0 || m.exact)
            CHECK(!"n = 30 must use the normal approximation");
        sig05 += m.p < 0.05;
        sig01 += m.p < 0.01;
    }
    printf("same distribution, n=30: %d/1000 p<0.05, %d/1000 p<0.01\n", sig05,
           sig01);
    CHECK(sig05 >= 25 && sig05 <= 75);
    CHECK(sig01 <= 30);
}

int main(void)
{
    test_exact_table();
    test_reference_values();
    test_slowdown_flagged();
    test_false_positives();
    return sb_check_done();
}
