/*
 * test_changepoint.c — E-Divisive means change points: the statistic
 * against a direct O(n^3) evaluation of its definition and against values
 * worked by hand, and the search on seeded normal series (one step, two
 * steps, flat series for the false-positive count), degenerate series and
 * refused input.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "solbench/changepoint.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- seeded normal values (splitmix64, Box-Muller) ----------------------- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): 53 random bits, offset by half a step. */
static double rng_uniform(uint64_t *s)
{
    return ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(uint64_t *s, double mean, double sd)
{
    double u = rng_uniform(s), v = rng_uniform(s);
    return mean + sd * sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static void fill(double *x, size_t n, double mean, double sd, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        x[i] = rng_normal(s, mean, sd);
}

/* ---- the statistic ------------------------------------------------------- */

/* Q(t) straight from its definition, every sum a double loop. */
static double naive_q(const double *x, size_t n, size_t t)
{
    double m = (double)t, k = (double)(n - t), between = 0, left = 0, right = 0;
    for (size_t i = 0; i < t; i++)
        for (size_t j = t; j < n; j++)
            between += fabs(x[i] - x[j]);
    for (size_t i = 0; i < t; i++)
        for (size_t l = i + 1; l < t; l++)
            left += fabs(x[i] - x[l]);
    for (size_t j = t; j < n; j++)
        for (size_t l = j + 1; l < n; l++)
            right += fabs(x[j] - x[l]);
    double e = 2.0 * between / (m * k);
    if (t > 1)
        e -= left / (m * (m - 1) / 2);
    if (n - t > 1)
        e -= right / (k * (k - 1) / 2);
    return m * k / (m + k) * e;
}

static void test_statistic(void)
{
    /* By hand, x = {0, 0, 1, 1}. t = 2: the four pairs across are 1 apart,
     * none within: Q = (4/4)(2 * 4/4) = 2. t = 1: across 0 + 1 + 1 = 2,
     * right pairs 0 + 1 + 1... of {0, 1, 1}: 1 + 1 + 0 = 2 over C(3,2) = 3:
     * Q = (3/4)(2 * 2/3 - 2/3) = 0.5; t = 3 mirrors it. */
    double h[] = {0, 0, 1, 1}, q[4];
    CHECK(sb_cp_statistic(h, 4, q, NULL) == 0);
    CHECK_NEAR(q[0], 0.0, 0);
    CHECK_NEAR(q[1], 0.5, 1e-15);
    CHECK_NEAR(q[2], 2.0, 1e-15);
    CHECK_NEAR(q[3], 0.5, 1e-15);
    /* Two points: one pair across, nothing within: Q = (1/2)(2 * 3) = 3. */
    double two[] = {5, 8};
    CHECK(sb_cp_statistic(two, 2, q, NULL) == 0);
    CHECK_NEAR(q[1], 3.0, 1e-15);

    /* A random series with a step in the middle: every split agrees with
     * the definition. */
    enum { n = 57 };
    double x[n], fast[n];
    uint64_t s = 42;
    fill(x, 30, 100.0, 3.0, &s);
    fill(x + 30, n - 30, 93.0, 5.0, &s);
    CHECK(sb_cp_statistic(x, n, fast, NULL) == 0);
    double worst = 0;
    for (size_t t = 1; t < n; t++) {
        double ref = naive_q(x, n, t);
        double rel = fabs(fast[t] - ref) / fmax(fabs(ref), 1e-300);
        worst = fmax(worst, rel);
        CHECK_NEAR(fast[t], ref, 1e-9);
    }
    CHECK(worst < 1e-9);
    printf("statistic: largest relative difference from the O(n^3) "
           "reference %.2g\n",
           worst);

    CHECK(sb_cp_statistic(x, 1, fast, NULL) == SB_EINVAL);
}

/* ---- the search ---------------------------------------------------------- */

static void test_one_step(void)
{
    double x[24];
    uint64_t s = 7;
    fill(x, 12, 100.0, 3.0, &s);
    fill(x + 12, 12, 90.0, 3.0, &s);
    sb_cp_point cp[8];
    size_t n = 99;
    CHECK(sb_cp_detect(x, N(x), NULL, cp, N(cp), &n, NULL) == 0);
    CHECK(n == 1);
    if (n < 1)
        return;
    printf("one step: index %zu p %.3f q %.2f before %.2f after %.2f "
           "change %.1f%%\n",
           cp[0].index, cp[0].p, cp[0].q, cp[0].before, cp[0].after,
           cp[0].change_pct);
    CHECK(cp[0].index >= 11 && cp[0].index <= 13);
    CHECK(cp[0].p <= 0.05);
    CHECK(cp[0].p >= 1.0 / 200); /* never below 1 / (R + 1) */
    CHECK(cp[0].change_pct > -15 && cp[0].change_pct < -5);
    CHECK(fabs(cp[0].before - 100) < 4 && fabs(cp[0].after - 90) < 4);
    CHECK_NEAR(cp[0].change_pct,
               100 * (cp[0].after - cp[0].before) / cp[0].before, 1e-12);

    /* The same seed gives the same answer; opts NULL is the defaults. */
    sb_cp_opts o;
    sb_cp_opts_default(&o);
    sb_cp_point again[8];
    size_t n2 = 0;
    CHECK(sb_cp_detect(x, N(x), &o, again, N(again), &n2, NULL) == 0);
    CHECK(n2 == 1 && again[0].index == cp[0].index && again[0].p == cp[0].p);
}

static void test_flat(void)
{
    /* Flat series of 24 runs at the defaults (alpha 0.01, a smallest
     * change of 5 %): at most two false change points in twenty. */
    int false_points = 0, series_hit = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        double x[24];
        uint64_t s = seed * 1000003;
        fill(x, N(x), 100.0, 3.0, &s);
        sb_cp_point cp[8];
        size_t n = 0;
        CHECK(sb_cp_detect(x, N(x), NULL, cp, N(cp), &n, NULL) == 0);
        false_points += (int)n;
        series_hit += n > 0;
    }
    printf("flat: %d false change points in 20 series of 24 (%d series)\n",
           false_points, series_hit);
    CHECK(false_points <= 2);
}

/* A 3 % step in little noise is a change point, and under the default
 * smallest change (5 %) none. */
static void test_min_change(void)
{
    double x[24];
    uint64_t s = 77;
    fill(x, 12, 100.0, 0.3, &s);
    fill(x + 12, 12, 97.0, 0.3, &s);
    sb_cp_opts o;
    sb_cp_opts_default(&o);
    CHECK(o.min_change_pct == 5.0 && o.alpha == 0.01);
    sb_cp_point cp[8];
    size_t n = 9;
    CHECK(sb_cp_detect(x, N(x), &o, cp, N(cp), &n, NULL) == 0);
    CHECK(n == 0);
    o.min_change_pct = 0;
    CHECK(sb_cp_detect(x, N(x), &o, cp, N(cp), &n, NULL) == 0);
    CHECK(n == 1 && cp[0].index == 12 && cp[0].change_pct < -2 &&
          cp[0].change_pct > -4);
    o.min_change_pct = -1;
    CHECK(sb_cp_detect(x, N(x), &o, cp, N(cp), &n, NULL) == SB_EINVAL);
}

static void test_two_steps(void)
{
    double x[90];
    uint64_t s = 2024;
    fill(x, 30, 100.0, 3.0, &s);
    fill(x + 30, 30, 120.0, 3.0, &s);
    fill(x + 60, 30, 100.0, 3.0, &s);
    sb_cp_point cp[8];
    size_t n = 0;
    CHECK(sb_cp_detect(x, N(x), NULL, cp, N(cp), &n, NULL) == 0);
    CHECK(n == 2);
    if (n != 2)
        return;
    printf("two steps: %zu (%+.1f%%, p %.3f) and %zu (%+.1f%%, p %.3f)\n",
           cp[0].index, cp[0].change_pct, cp[0].p, cp[1].index,
           cp[1].change_pct, cp[1].p);
    CHECK(cp[0].index >= 29 && cp[0].index <= 31);
    CHECK(cp[1].index >= 59 && cp[1].index <= 61);
    CHECK(cp[0].change_pct > 15 && cp[0].change_pct < 25);
    CHECK(cp[1].change_pct > -20 && cp[1].change_pct < -13);
    /* The middle segment is the after of one and the before of the next. */
    CHECK(cp[0].after == cp[1].before);

    /* max_points, and max_out, keep the first accepted (the larger Q). */
    sb_cp_opts o;
    sb_cp_opts_default(&o);
    o.max_points = 1;
    sb_cp_point one[8];
    size_t n1 = 0;
    CHECK(sb_cp_detect(x, N(x), &o, one, N(one), &n1, NULL) == 0);
    CHECK(n1 == 1);
    /* the first accepted: the largest Q of the whole series, and its Q
     * there is the one reported with both points */
    double whole[N(x)];
    CHECK(sb_cp_statistic(x, N(x), whole, NULL) == 0);
    size_t first = whole[cp[1].index] > whole[cp[0].index] ? 1 : 0;
    CHECK(one[0].index == cp[first].index && one[0].q == cp[first].q);
    CHECK_NEAR(one[0].q, whole[one[0].index], 1e-12);
    CHECK(one[0].before > 95 && one[0].before < 105); /* bounded by 0 .. n */
    n1 = 0;
    CHECK(sb_cp_detect(x, N(x), NULL, one, 1, &n1, NULL) == 0);
    CHECK(n1 == 1);
    CHECK(sb_cp_detect(x, N(x), NULL, NULL, 0, &n1, NULL) == 0 && n1 == 0);
}

static void test_degenerate(void)
{
    sb_cp_point cp[4];
    size_t n = 99;
    /* Constant: Q = 0 at every split, no division by zero, nothing. */
    double c[40], q[40];
    for (size_t i = 0; i < N(c); i++)
        c[i] = 7.5;
    CHECK(sb_cp_detect(c, N(c), NULL, cp, N(cp), &n, NULL) == 0 && n == 0);
    CHECK(sb_cp_statistic(c, N(c), q, NULL) == 0);
    int zero = 1;
    for (size_t t = 0; t < N(c); t++)
        zero &= q[t] == 0.0;
    CHECK(zero);

    /* Shorter than 2 min_size (9 < 10), even with a plain step. */
    double shortx[] = {1, 1, 1, 1, 5, 5, 5, 5, 5};
    n = 99;
    CHECK(sb_cp_detect(shortx, N(shortx), NULL, cp, N(cp), &n, NULL) == 0);
    CHECK(n == 0);
    n = 99;
    CHECK(sb_cp_detect(shortx, 0, NULL, cp, N(cp), &n, NULL) == 0 && n == 0);
}

static void test_refused(void)
{
    double x[24];
    uint64_t s = 3;
    fill(x, N(x), 100.0, 3.0, &s);
    sb_cp_point cp[4];
    size_t n = 0;
    sb_err err = {0};
    x[5] = NAN;
    CHECK(sb_cp_detect(x, N(x), NULL, cp, N(cp), &n, &err) == SB_EINVAL);
    CHECK(err.code == SB_EINVAL);
    printf("NaN: %s\n", err.msg);
    x[5] = INFINITY;
    CHECK(sb_cp_detect(x, N(x), NULL, cp, N(cp), &n, NULL) == SB_EINVAL);
    CHECK(sb_cp_statistic(x, N(x), x, NULL) == SB_EINVAL);
    x[5] = 100;

    double *big = calloc(SB_CP_MAX_N + 1, sizeof *big);
    CHECK(big != NULL);
    if (big) {
        CHECK(sb_cp_detect(big, SB_CP_MAX_N + 1, NULL, cp, N(cp), &n, NULL) ==
              SB_EINVAL);
        free(big);
    }

    sb_cp_opts o;
    sb_cp_opts_default(&o);
    o.min_size = 0;
    CHECK(sb_cp_detect(x, N(x), &o, cp, N(cp), &n, NULL) == SB_EINVAL);
    sb_cp_opts_default(&o);
    o.alpha = 0;
    CHECK(sb_cp_detect(x, N(x), &o, cp, N(cp), &n, NULL) == SB_EINVAL);
    o.alpha = NAN;
    CHECK(sb_cp_detect(x, N(x), &o, cp, N(cp), &n, NULL) == SB_EINVAL);
    sb_cp_opts_default(&o);
    o.permutations = 0;
    CHECK(sb_cp_detect(x, N(x), &o, cp, N(cp), &n, NULL) == SB_EINVAL);
    CHECK(sb_cp_detect(x, N(x), NULL, cp, N(cp), NULL, NULL) == SB_EINVAL);
    CHECK(sb_cp_detect(x, N(x), NULL, NULL, 4, &n, NULL) == SB_EINVAL);
}

int main(void)
{
    test_statistic();
    test_one_step();
    test_flat();
    test_two_steps();
    test_min_change();
    test_degenerate();
    test_refused();
    return sb_check_done();
}
