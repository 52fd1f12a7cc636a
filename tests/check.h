/*
 * check.h — the tiny assertion kit of the unit tests. Each CHECK counts;
 * main() ends with `return sb_check_done();`, which prints
 * "N passed, N failed" and returns non-zero on any failure.
 */
#ifndef SOLBENCH_TEST_CHECK_H
#define SOLBENCH_TEST_CHECK_H

#include <math.h>
#include <stdio.h>

#include "solbench/library.h"

static int sb_check_pass, sb_check_fail;

/* The library's benchmarks registered before main, as a program does. */
__attribute__((constructor)) static void sb_check_init(void)
{
    sb_library_init();
}

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond) {                                                            \
            sb_check_pass++;                                                   \
        } else {                                                               \
            sb_check_fail++;                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

/* |a - b| <= tol * max(1, |b|) */
#define CHECK_NEAR(a, b, tol)                                                       \
    do {                                                                            \
        double a_ = (a), b_ = (b);                                                  \
        double s_ = fabs(b_) > 1.0 ? fabs(b_) : 1.0;                                \
        if (fabs(a_ - b_) <= (tol)*s_) {                                            \
            sb_check_pass++;                                                        \
        } else {                                                                    \
            sb_check_fail++;                                                        \
            fprintf(                                                                \
                stderr,                                                             \
                "%s:%d: CHECK_NEAR failed: %s = %.10g, want %s = %.10g (tol %g)\n", \
                __FILE__, __LINE__, #a, a_, #b, b_, (double)(tol));                 \
        }                                                                           \
    } while (0)

static inline int sb_check_done(void)
{
    printf("%d passed, %d failed\n", sb_check_pass, sb_check_fail);
    return sb_check_fail ? 1 : 0;
}

#endif
