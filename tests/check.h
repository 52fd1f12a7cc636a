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

/* A scratch folder for a test's files: dir (len bytes) gets
 * $TMPDIR/sb-NAME-XXXXXX, made; false (and a line) when it cannot be. */
#include <stdbool.h>
#include <stdlib.h>
static inline bool sb_test_scratch(char *dir, size_t len, const char *name)
{
    const char *base = getenv("TMPDIR");
    snprintf(dir, len, "%s/sb-%s-XXXXXX", base && *base ? base : "/tmp", name);
    if (mkdtemp(dir))
        return true;
    perror("mkdtemp");
    return false;
}

/* Removes the scratch folder (kept when the test failed, to look at) and
 * gives sb_check_done()'s verdict. */
static inline int sb_test_scratch_done(const char *dir)
{
    int rc = sb_check_done();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (rc == 0 && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}

#endif
