/*
 * test_stats.c — statistics on known vectors, and the timer's sanity.
 */
#include <stdlib.h>

#include "check.h"
#include "solbench/stats.h"
#include "solbench/util.h"
#include "solbench/timer.h"

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    /* 1..10: hand-computed with the type-7 rule h = (n-1)q. */
    double x[10] = {7, 3, 9, 1, 10, 2, 8, 5, 4, 6};
    sb_stats s;
    sb_stats_compute(x, 10, &s);
    CHECK(s.n == 10);
    CHECK_NEAR(s.min, 1.0, 1e-15);
    CHECK_NEAR(s.max, 10.0, 1e-15);
    CHECK_NEAR(s.p10, 1.9, 1e-12);  /* h = 0.9 */
    CHECK_NEAR(s.p50, 5.5, 1e-15);  /* h = 4.5 */
    CHECK_NEAR(s.p90, 9.1, 1e-12);  /* h = 8.1 → 9 + 0.1 */
    CHECK_NEAR(s.p99, 9.91, 1e-12); /* h = 8.91 */
    CHECK_NEAR(s.mean, 5.5, 1e-15);
    /* sample variance of 1..10 = 55/6 */
    CHECK_NEAR(s.stddev, 3.0276503540974917, 1e-12);
    CHECK_NEAR(s.cv, 3.0276503540974917 / 5.5, 1e-12);
    CHECK(x[0] == 7); /* input untouched */

    double one[1] = {2.5};
    sb_stats_compute(one, 1, &s);
    CHECK(s.n == 1 && s.p50 == 2.5 && s.p99 == 2.5 && s.stddev == 0.0);

    sb_stats_compute(NULL, 0, &s);
    CHECK(s.n == 0 && s.p50 == 0.0);

    /* Odd count: the median is the middle element. */
    double odd[5] = {5, 1, 4, 2, 3};
    sb_stats_compute(odd, 5, &s);
    CHECK_NEAR(s.p50, 3.0, 1e-15);
    CHECK_NEAR(s.p10, 1.4, 1e-12); /* h = 0.4 */
    CHECK_NEAR(s.p90, 4.6, 1e-12); /* h = 3.6 */

    /* Percentiles by selection equal those of the sorted data, on
     * random data with ties and on tiny inputs. */
    {
        static double r[1001], sorted[1001];
        static const double q[] = {0.0, 0.1, 0.5, 0.9, 0.99, 1.0};
        uint64_t seed = 11;
        for (size_t n = 1; n <= 1001; n += n < 12 ? 1 : 97) {
            for (size_t i = 0; i < n; i++) {
                r[i] = (double)(sb_rng_next(&seed) % 50); /* ties */
                sorted[i] = r[i];
            }
            qsort(sorted, n, sizeof *sorted, cmp_dbl);
            double v[6];
            sb_percentiles_select(r, n, q, 6, v);
            for (int k = 0; k < 6; k++)
                CHECK_NEAR(v[k], sb_percentile_sorted(sorted, n, q[k]), 1e-12);
        }
    }

    /* Constant data: cv 0. */
    double c[4] = {2, 2, 2, 2};
    sb_stats_compute(c, 4, &s);
    CHECK(s.stddev == 0.0 && s.cv == 0.0);

    /* The clock moves forward, its resolution is finer than 1 ms and not
     * absurdly fine, and reading it costs under 10 us. */
    sb_clock_info ci;
    sb_clock_measure(&ci);
    CHECK(ci.resolution_s > 0 && ci.resolution_s < 1e-3);
    CHECK(ci.overhead_s >= 0 && ci.overhead_s < 1e-5);
    double t0 = sb_now();
    volatile double acc = 0;
    for (int i = 0; i < 1000000; i++)
        acc += i;
    double t1 = sb_now();
    CHECK(acc > 0);
    CHECK(t1 > t0);
    CHECK(sb_now_ns() > 0);
    return sb_check_done();
}
