/*
 * timer.c — the monotonic clock and its measured resolution.
 *
 * CLOCK_MONOTONIC is read through the vDSO (tens of nanoseconds). Its
 * resolution is measured, not trusted from clock_getres(): on some virtual
 * machines the clock advances in coarse steps, and every sample must last
 * at least 100 of those steps (see runner.c).
 */
#include <stdlib.h>
#include <time.h>

#include "solbench/timer.h"

uint64_t sb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double sb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void sb_clock_measure(sb_clock_info *ci)
{
    enum { N = 2001 };
    static uint64_t cost[N]; /* scratch; measured once at start-up */
    uint64_t min_step = UINT64_MAX;

    /* Resolution: the smallest non-zero step seen between two reads. */
    for (int rep = 0; rep < 20; rep++) {
        uint64_t t0 = sb_now_ns(), t1;
        do {
            t1 = sb_now_ns();
        } while (t1 == t0);
        if (t1 - t0 < min_step)
            min_step = t1 - t0;
    }
    /* Overhead: the median time of one read, from batches of 16 reads. */
    for (int i = 0; i < N; i++) {
        uint64_t t0 = sb_now_ns();
        for (int j = 0; j < 15; j++)
            (void)sb_now_ns();
        uint64_t t1 = sb_now_ns();
        cost[i] = (t1 - t0) / 16;
    }
    qsort(cost, N, sizeof cost[0], cmp_u64);

    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    ci->resolution_s = 1e-9 * (double)(min_step ? min_step : 1);
    ci->overhead_s = 1e-9 * (double)cost[N / 2];
    ci->reported_s = (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;
}
