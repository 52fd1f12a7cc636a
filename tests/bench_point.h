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
    sb_param_def defs[SB_MAX_PARAMS + 1];
    sb_params_of(b, sb_impl_find(b, "cpu"), defs, SB_MAX_PARAMS + 1);
    if (sb_params_expand(b->name, defs, layers, lenient, 1, &pts, &np, err) ||
        np != 1) {
        free(pts);
        return -1;
    }
    *out = pts[0];
    free(pts);
    return 0;
}

/* The point p of b on its CPU impl, as the runner makes it (the shape
 * decoded); sb_point_release frees it. Aborts the test when p does not
 * decode. */
static inline sb_point sb_test_pt(const sb_bench *b, const sb_params *p)
{
    sb_point pt;
    sb_err err = {0, ""};
    if (sb_point_make(b, sb_impl_find(b, "cpu"), p, &pt, &err)) {
        fprintf(stderr, "%s: %s\n", b->name, err.msg);
        abort();
    }
    return pt;
}

/* The CPU impl of b. */
static inline const sb_impl *sb_test_cpu(const sb_bench *b)
{
    const sb_impl *im = sb_impl_find(b, "cpu");
    if (!im)
        abort();
    return im;
}

/* The hooks of a point on the CPU, for tests that call them one by one. */
static inline int sb_test_setup(const sb_bench *b, const sb_params *p,
                                const sb_ctx *ctx, void **st, sb_err *err)
{
    sb_point pt = sb_test_pt(b, p);
    int rc = sb_test_cpu(b)->setup(&pt, ctx, st, err);
    sb_point_release(&pt);
    return rc;
}
static inline int sb_test_check(const sb_bench *b, const sb_params *p,
                                const sb_ctx *ctx, sb_err *err)
{
    sb_point pt;
    int rc = sb_point_make(b, sb_impl_find(b, "cpu"), p, &pt, err);
    if (rc)
        return rc;
    rc = sb_point_check(&pt, ctx, err);
    sb_point_release(&pt);
    return rc;
}
static inline double sb_test_flops(const sb_bench *b, const sb_params *p)
{
    sb_point pt = sb_test_pt(b, p);
    double v = sb_point_flops(&pt);
    sb_point_release(&pt);
    return v;
}
static inline double sb_test_bytes(const sb_bench *b, const sb_params *p)
{
    sb_point pt = sb_test_pt(b, p);
    double v = sb_point_bytes(&pt);
    sb_point_release(&pt);
    return v;
}
static inline double sb_test_footprint(const sb_bench *b, const sb_params *p,
                                       const sb_ctx *ctx)
{
    sb_point pt = sb_test_pt(b, p);
    double v = sb_point_footprint(&pt, ctx);
    sb_point_release(&pt);
    return v;
}
static inline void sb_test_report(const sb_bench *b, void *st,
                                  const sb_params *p, sb_ctx *ctx, sb_result *r)
{
    sb_point pt = sb_test_pt(b, p);
    if (sb_test_cpu(b)->report)
        sb_test_cpu(b)->report(st, &pt, ctx, r);
    sb_point_release(&pt);
}

/* Sets p up, runs it `iters` times, verifies and tears it down: the
 * result must be valid. */
static inline void sb_test_run_valid(const sb_bench *b, const sb_params *p,
                                     sb_ctx *ctx, int iters)
{
    void *st = NULL;
    sb_err err = {0, ""};
    const sb_impl *im = sb_test_cpu(b);
    CHECK(sb_test_setup(b, p, ctx, &st, &err) == 0);
    if (!st)
        return;
    im->run(st, iters);
    sb_result r;
    sb_result_init(&r, b->name, b->area, "cpu");
    CHECK(im->verify(st, &r) == 0);
    CHECK(r.valid);
    if (!r.valid && r.n_notes)
        fprintf(stderr, "%s: %s\n", b->name, r.notes[0]);
    sb_result_free(&r);
    im->teardown(st);
}

/* Whether one of r's notes holds text. */
static inline bool sb_test_has_note(const sb_result *r, const char *text)
{
    for (int i = 0; i < r->n_notes; i++)
        if (strstr(r->notes[i], text))
            return true;
    return false;
}

/* r's metric of that name, or -1. */
static inline double sb_test_metric(const sb_result *r, const char *name)
{
    const sb_metric *m = sb_result_get(r, name);
    return m ? m->value : -1;
}

/* Appends parameter `name` to r's (type t, value num, text as given). */
static inline void sb_test_set_param(sb_result *r, const char *name, sb_ptype t,
                                     double num, const char *text)
{
    sb_pval *v = &r->params.v[r->params.n++];
    snprintf(v->name, sizeof v->name, "%s", name);
    snprintf(v->text, sizeof v->text, "%s", text);
    v->type = t;
    v->num = num;
}

/* A benchmark through the registry, as the runner takes it: spec planned
 * for the CPU impl of `name` and checked on 2 threads, which must pass
 * as want_ok says; a point that passes has positive bytes and footprint
 * (and FLOPs with need_flops) and runs `iters` times valid; a refused one
 * is SB_EINVAL, naming `refusal` where it is given. */
static inline void sb_test_run_bench(const char *name, const char *spec,
                                     bool want_ok, int iters,
                                     const char *refusal, bool need_flops)
{
    const sb_bench *b = sb_bench_find(name, "cpu");
    CHECK(b != NULL);
    if (!b)
        return;
    sb_err err = {0, ""};
    sb_params p;
    bool planned = sb_test_point(b, spec, &p, &err) == 0;
    CHECK(planned);
    if (!planned)
        return;
    sb_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.threads = 2;
    int rc = sb_test_check(b, &p, &ctx, &err);
    CHECK((rc == 0) == want_ok);
    if (rc == 0) {
        CHECK(sb_test_footprint(b, &p, &ctx) > 0);
        CHECK(sb_test_bytes(b, &p) > 0);
        CHECK(!need_flops || sb_test_flops(b, &p) > 0);
        sb_test_run_valid(b, &p, &ctx, iters);
    } else {
        CHECK(err.code == SB_EINVAL);
        CHECK(!refusal || strstr(err.msg, refusal));
    }
}

#endif
