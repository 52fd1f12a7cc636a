/*
 * bench_point.h — drives one benchmark point through the registry, as the
 * runner does, for the unit tests of the benchmark areas: plan it from
 * "k=v k=v" text, then set it up, run, verify and tear it down.
 */
#ifndef SOLBENCH_TEST_BENCH_POINT_H
#define SOLBENCH_TEST_BENCH_POINT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "solbench/bench.h"
#include "solbench/result.h"

/* The one point that spec plans for b, in *out: 0, or -1 when the text
 * does not parse or plans no point or several (err says why). */
static inline int sb_test_point(const sb_bench *b, const char *spec,
                                sb_params *out, sb_err *err)
{
    sb_pset ps;
    memset(&ps, 0, sizeof ps);
    if (sb_pset_add_all(&ps, spec, err))
        return -1;
    const sb_pset *layers[1] = {&ps};
    bool lenient[1] = {false};
    sb_params *pts = NULL;
    int np = 0;
    if (sb_params_expand(b->name, b->params, layers, lenient, 1, &pts, &np,
                         err) ||
        np != 1) {
        free(pts);
        return -1;
    }
    *out = pts[0];
    free(pts);
    return 0;
}

/* Sets p up, runs it `iters` times, verifies and tears it down: the
 * result must be valid. */
static inline void sb_test_run_valid(const sb_bench *b, const sb_params *p,
                                     sb_ctx *ctx, int iters)
{
    void *st = NULL;
    sb_err err = {0, ""};
    CHECK(b->setup(p, ctx, &st, &err) == 0);
    if (!st)
        return;
    b->run(st, iters);
    sb_result r;
    sb_result_init(&r, b->name, b->area, "cpu");
    CHECK(b->verify(st, &r) == 0);
    CHECK(r.valid);
    if (!r.valid && r.n_notes)
        fprintf(stderr, "%s: %s\n", b->name, r.notes[0]);
    sb_result_free(&r);
    b->teardown(st);
}

#endif
