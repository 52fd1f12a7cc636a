/*
 * test_moe.c — the MoE primitives: the top-k tie rule, the synthetic
 * routing (determinism, skew, one-expert routing), each CPU kernel against
 * its verifier, each verifier catching a planted wrong element, the FLOP
 * and byte formulas against hand-computed values, parameter checks, and
 * the four benchmarks run through the registry on small shapes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench/moe/moe_cpu.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/bench.h"
#include "solbench/moe.h"
#include "solbench/util.h"

static sb_moe_shape shape(int64_t T, int64_t D, int64_t F, int E, int k,
                          double skew, int force)
{
    sb_moe_shape s;
    memset(&s, 0, sizeof s);
    s.tokens = T;
    s.d_model = D;
    s.ffn = F;
    s.experts = E;
    s.topk = k;
    s.skew = skew;
    s.force_expert = force;
    s.seed = 7;
    return s;
}

static void fill(float *v, int64_t n, uint64_t seed, float a)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((2.0 * sb_rng_unif(&seed) - 1.0) * a);
}

static void test_topk_ties(void)
{
    const float v[] = {1.0f, 3.0f, 3.0f, 2.0f, 3.0f};
    int idx[5];
    float val[5];
    sb_moe_topk_f(v, 5, 2, idx, val);
    CHECK(idx[0] == 1 && idx[1] == 2); /* equal values: lower index first */
    CHECK(val[0] == 3.0f && val[1] == 3.0f);
    sb_moe_topk_f(v, 5, 3, idx, NULL);
    CHECK(idx[0] == 1 && idx[1] == 2 && idx[2] == 4);
    sb_moe_topk_f(v, 5, 5, idx, val);
    CHECK(idx[3] == 3 && idx[4] == 0 && val[4] == 1.0f);
    const double dv[] = {0.5, 0.5, 0.5, 0.5};
    int di[4];
    sb_moe_topk_d(dv, 4, 2, di, NULL);
    CHECK(di[0] == 0 && di[1] == 1);
    const float nv[] = {NAN, 1.0f, 1.0f};
    sb_moe_topk_f(nv, 3, 1, idx, NULL);
    CHECK(idx[0] == 1); /* NaN never wins */
    const double neg[] = {-5.0, -1.0, -3.0};
    sb_moe_topk_d(neg, 3, 2, di, NULL);
    CHECK(di[0] == 1 && di[1] == 2);
}

static void test_accounting(void)
{
    sb_moe_shape s = shape(2, 3, 5, 4, 2, 0.0, -1);
    CHECK_NEAR(sb_moe_route_flops(&s), 104.0, 0); /* 48 + 48 + 8 */
    CHECK_NEAR(sb_moe_route_bytes(&s), 152.0, 0); /* 88 + 32 + 32 */
    CHECK_NEAR(sb_moe_dispatch_flops(&s), 0.0, 0);
    CHECK_NEAR(sb_moe_dispatch_bytes(&s), 192.0, 0); /* 24+48+16+64+40 */
    CHECK_NEAR(sb_moe_combine_flops(&s), 24.0, 0);
    CHECK_NEAR(sb_moe_combine_bytes(&s), 120.0, 0); /* 48 + 24 + 48 */
    CHECK_NEAR(sb_moe_gemm_flops(&s), 120.0, 0);
    CHECK_NEAR(sb_moe_gemm_bytes(&s, 3), 348.0, 0); /* 48+180+80+40 */
    s.gated = true;
    CHECK_NEAR(sb_moe_gemm_flops(&s), 440.0, 0);    /* 360 + 80 */
    CHECK_NEAR(sb_moe_gemm_bytes(&s, 3), 676.0, 0); /* 48+540+48+40 */
    int64_t c[4] = {3, 1, 0, 0};
    CHECK_NEAR(sb_moe_imbalance(c, 4), 3.0, 1e-12); /* 3 / (4/4) */
    CHECK(sb_moe_active(c, 4) == 2);
}

static void test_check(void)
{
    sb_err err = {0, ""};
    sb_moe_shape s = shape(16, 8, 8, 8, 9, 0.0, -1);
    CHECK(sb_moe_check(&s, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "topk") != NULL);
    s.topk = 0;
    CHECK(sb_moe_check(&s, &err) == SB_EINVAL && strstr(err.msg, "topk"));
    s = shape(16, 8, 8, 0, 1, 0.0, -1);
    CHECK(sb_moe_check(&s, &err) == SB_EINVAL && strstr(err.msg, "experts"));
    s = shape(16, 8, 8, 8, 2, 0.0, 8);
    CHECK(sb_moe_check(&s, &err) == SB_EINVAL &&
          strstr(err.msg, "force_expert"));
    s = shape(16, 8, 8, 8, 2, 1.5, -1);
    CHECK(sb_moe_check(&s, &err) == SB_EINVAL && strstr(err.msg, "skew"));
    s = shape(1 << 22, 8, 8, 1024, 1024, 0.0, -1); /* T·k = 2^32 rows */
    CHECK(sb_moe_check(&s, &err) == SB_EINVAL && strstr(err.msg, "tokens"));
    s = shape(16, 8, 8, 8, 8, 1.0, 7);
    CHECK(sb_moe_check(&s, &err) == 0);
}

static void test_synth(void)
{
    const int64_t T = 4096;
    const int E = 8, k = 2;
    int *idx = malloc(sizeof(int) * T * k), *idx2 = malloc(sizeof(int) * T * k);
    float *w = malloc(sizeof(float) * T * k);
    int64_t c[8], c2[8];
    sb_moe_shape s = shape(T, 4, 4, E, k, 0.0, -1);
    sb_moe_synth_route(&s, idx, w);
    omp_set_num_threads(1);
    sb_moe_synth_route(&s, idx2, NULL);
    omp_set_num_threads(2);
    CHECK(memcmp(idx, idx2, sizeof(int) * T * k) == 0); /* any threads */
    int distinct = 1, wsum_ok = 1;
    for (int64_t t = 0; t < T; t++) {
        distinct &= idx[t * k] != idx[t * k + 1];
        wsum_ok &= fabs(w[t * k] + w[t * k + 1] - 1.0) < 1e-6 &&
                   w[t * k] >= w[t * k + 1];
    }
    CHECK(distinct);
    CHECK(wsum_ok);
    sb_moe_counts(idx, T, k, E, c);
    sb_moe_synth_counts(&s, c2);
    CHECK(memcmp(c, c2, sizeof c) == 0);
    double uni = sb_moe_imbalance(c, E);
    CHECK(uni >= 1.0 && uni < 1.15); /* 1024 per expert ± noise */
    s.skew = 1.0;
    sb_moe_synth_counts(&s, c);
    double sk = sb_moe_imbalance(c, E);
    /* expert 0 is in nearly every token's top 2: ~T of T·k/E = T/4 */
    CHECK(sk > 3.5 && sk <= 4.0);
    CHECK(c[0] > c[1] && c[1] > c[7]);
    s.skew = 0.5;
    sb_moe_synth_counts(&s, c);
    double mid = sb_moe_imbalance(c, E);
    CHECK(mid > uni && mid < sk);
    /* every token to one expert */
    s = shape(T, 4, 4, E, 1, 0.0, 5);
    sb_moe_synth_counts(&s, c);
    CHECK(c[5] == T && sb_moe_active(c, E) == 1);
    CHECK_NEAR(sb_moe_imbalance(c, E), (double)E, 1e-12);
    free(idx);
    free(idx2);
    free(w);
}

/* The library the kernels' GEMMs run on (main runs the tests on each). */
static int g_lib = SB_GEMM_OPENBLAS;

/* sb_moe_cpu_route on a plan of g_lib made for s. */
static void route(const sb_moe_shape *s, const float *x, const float *wr,
                  const float *bias, float *probs, int *idx, float *w)
{
    sb_moe_plans pl;
    sb_err err;
    CHECK(sb_moe_cpu_plans(s, true, NULL, g_lib, &pl, &err) == 0);
    if (!pl.route)
        return;
    sb_moe_cpu_route(s, &pl, x, wr, bias, probs, idx, w);
    sb_moe_cpu_plans_free(&pl);
}

static void test_route(void)
{
    const int64_t T = 96, D = 40;
    const int E = 8, k = 2;
    sb_moe_shape s = shape(T, D, 1, E, k, 0.5, -1);
    float *x = malloc(sizeof(float) * T * D),
          *wr = malloc(sizeof(float) * D * E);
    float *bias = malloc(sizeof(float) * E),
          *probs = malloc(sizeof(float) * T * E);
    float *w = malloc(sizeof(float) * T * k);
    int *idx = malloc(sizeof(int) * T * k);
    char why[320];
    fill(x, T * D, 1, 1.0f);
    fill(wr, D * E, 2, (float)(3.0 / sqrt((double)D)));
    for (int e = 0; e < E; e++)
        bias[e] = (float)sb_moe_router_bias(&s, e);
    route(&s, x, wr, bias, probs, idx, w);
    CHECK(sb_moe_route_verify(&s, x, wr, bias, probs, idx, w, why,
                              sizeof why) == 0);
    /* planted: a duplicate expert, a wrong weight, a wrong probability */
    int keep = idx[5 * k + 1];
    idx[5 * k + 1] = idx[5 * k];
    CHECK(sb_moe_route_verify(&s, x, wr, bias, probs, idx, w, why,
                              sizeof why) == 1);
    CHECK(strstr(why, "idx[token 5][slot 1]") != NULL);
    idx[5 * k + 1] = keep;
    /* an expert outside the top k: the lowest-probability one */
    int worst = 0;
    for (int e = 1; e < E; e++)
        if (probs[9 * E + e] < probs[9 * E + worst])
            worst = e;
    keep = idx[9 * k + 1];
    idx[9 * k + 1] = worst;
    CHECK(sb_moe_route_verify(&s, x, wr, bias, probs, idx, w, NULL, 0) == 1);
    idx[9 * k + 1] = keep;
    w[7 * k] += 0.01f;
    CHECK(sb_moe_route_verify(&s, x, wr, bias, probs, idx, w, NULL, 0) >= 1);
    w[7 * k] -= 0.01f;
    probs[3 * E + 4] *= 1.01f;
    CHECK(sb_moe_route_verify(&s, x, wr, bias, probs, idx, w, why,
                              sizeof why) == 1);
    CHECK(strstr(why, "probs[token 3][expert 4]") != NULL);
    probs[3 * E + 4] /= 1.01f;

    /* exact ties: a zero router gives equal logits, so the lowest k
     * expert indices win and share the weight equally */
    sb_moe_shape s0 = shape(T, D, 1, E, 3, 0.0, -1);
    memset(wr, 0, sizeof(float) * D * E);
    for (int e = 0; e < E; e++)
        bias[e] = 0.0f;
    float *w3 = malloc(sizeof(float) * T * 3);
    int *i3 = malloc(sizeof(int) * T * 3);
    route(&s0, x, wr, bias, probs, i3, w3);
    int ties = 1;
    for (int64_t t = 0; t < T; t++)
        ties &= i3[t * 3] == 0 && i3[t * 3 + 1] == 1 && i3[t * 3 + 2] == 2 &&
                fabsf(w3[t * 3] - 1.0f / 3.0f) < 1e-6f;
    CHECK(ties);
    CHECK(probs[5] == 0.125f);
    CHECK(sb_moe_route_verify(&s0, x, wr, bias, probs, i3, w3, NULL, 0) == 0);

    /* every token to one expert through the router bias */
    sb_moe_shape sf = shape(T, D, 1, E, 1, 1.0, 6);
    fill(wr, D * E, 2, (float)(3.0 / sqrt((double)D)));
    for (int e = 0; e < E; e++)
        bias[e] = (float)sb_moe_router_bias(&sf, e);
    route(&sf, x, wr, bias, probs, idx, w);
    int64_t c[8];
    sb_moe_counts(idx, T, 1, E, c);
    CHECK(c[6] == T);
    CHECK(w[0] == 1.0f);
    CHECK(sb_moe_route_verify(&sf, x, wr, bias, probs, idx, w, NULL, 0) == 0);
    free(x), free(wr), free(bias), free(probs), free(w), free(idx);
    free(w3), free(i3);
}

static void test_dispatch_combine(int threads, double skew, int k, int force)
{
    const int64_t T = 101, D = 19;
    const int E = 8;
    omp_set_num_threads(threads);
    sb_moe_shape s = shape(T, D, 1, E, k, skew, force);
    const int64_t R = T * k;
    int *idx = malloc(sizeof(int) * R);
    float *w = malloc(sizeof(float) * R), *x = malloc(sizeof(float) * T * D);
    float *xp = malloc(sizeof(float) * R * D),
          *out = malloc(sizeof(float) * T * D);
    int64_t off[9], *pos = malloc(sizeof(int64_t) * R),
                    *rt = malloc(sizeof(int64_t) * R);
    int64_t *scratch = malloc(sb_moe_cpu_dispatch_scratch(&s));
    char why[320];
    sb_moe_synth_route(&s, idx, w);
    fill(x, T * D, 3, 1.0f);
    sb_moe_cpu_dispatch(&s, idx, x, xp, off, pos, rt, scratch);
    CHECK(sb_moe_dispatch_verify(&s, idx, x, xp, off, pos, rt, why,
                                 sizeof why) == 0);
    CHECK(off[0] == 0 && off[E] == R);
    int sorted = 1;
    for (int e = 0; e < E; e++)
        for (int64_t r = off[e] + 1; r < off[e + 1]; r++)
            sorted &= rt[r] > rt[r - 1]; /* stable: ascending tokens */
    CHECK(sorted);
    if (force >= 0 && k == 1)
        CHECK(off[force] == 0 && off[force + 1] == T);
    /* planted: one element of one gathered row, and one position */
    float keepx = xp[(R / 2) * D + 3];
    xp[(R / 2) * D + 3] += 1.0f;
    CHECK(sb_moe_dispatch_verify(&s, idx, x, xp, off, pos, rt, why,
                                 sizeof why) == 1);
    CHECK(strstr(why, "xp[row") != NULL);
    xp[(R / 2) * D + 3] = keepx;
    pos[4]++;
    CHECK(sb_moe_dispatch_verify(&s, idx, x, xp, off, pos, rt, NULL, 0) == 1);
    pos[4]--;

    /* combine the gathered rows back: with y = xp, out = x · sum(w) = x */
    sb_moe_cpu_combine(&s, xp, pos, w, out);
    CHECK(sb_moe_combine_verify(&s, xp, pos, w, out, why, sizeof why) == 0);
    double maxerr = 0.0;
    for (int64_t i = 0; i < T * D; i++)
        maxerr = fmax(maxerr, fabs(out[i] - x[i]));
    CHECK(maxerr < 1e-5);
    out[17 * D + 2] += 1e-3f;
    CHECK(sb_moe_combine_verify(&s, xp, pos, w, out, why, sizeof why) == 1);
    CHECK(strstr(why, "out[token 17][2]") != NULL);
    free(idx), free(w), free(x), free(xp), free(out), free(pos), free(rt);
    free(scratch);
    omp_set_num_threads(2);
}

static void test_gemm(bool gated, int force, int k)
{
    const int64_t T = 45, D = 24, F = 20;
    const int E = 4;
    sb_moe_shape s = shape(T, D, F, E, k, 0.3, force);
    s.gated = gated;
    const int64_t R = T * k;
    int *idx = malloc(sizeof(int) * R);
    float *w = malloc(sizeof(float) * R);
    int64_t off[5], *pos = malloc(sizeof(int64_t) * R),
                    *rt = malloc(sizeof(int64_t) * R);
    float *xp = malloc(sizeof(float) * R * D);
    float *wu = malloc(sizeof(float) * E * D * F),
          *wg = malloc(sizeof(float) * E * D * F);
    float *wd = malloc(sizeof(float) * E * F * D);
    float *g = malloc(sizeof(float) * R * F),
          *h = malloc(sizeof(float) * R * F);
    const int64_t ncol = gated ? D : F;
    float *out = malloc(sizeof(float) * R * ncol);
    int64_t *rows = malloc(sizeof(int64_t) * R);
    char why[320];
    sb_moe_synth_route(&s, idx, w);
    sb_moe_dispatch_ref(&s, idx, off, pos, rt);
    fill(xp, R * D, 4, 1.0f);
    fill(wu, E * D * F, 5, 0.35f);
    fill(wg, E * D * F, 6, 0.35f);
    fill(wd, E * F * D, 7, 0.4f);
    sb_moe_plans pl;
    sb_err err;
    CHECK(sb_moe_cpu_plans(&s, false, off, g_lib, &pl, &err) == 0);
    sb_moe_cpu_gemm(&s, &pl, off, xp, wu, wg, wd, g, h, out);
    sb_moe_cpu_plans_free(&pl);
    for (int64_t r = 0; r < R; r++)
        rows[r] = r;
    CHECK(sb_moe_gemm_verify(&s, off, xp, wu, wg, wd, out, rows, (int)R, why,
                             sizeof why) == 0);
    int n = sb_moe_gemm_sample_rows(&s, off, rows, 16);
    CHECK(n >= 2 && n <= 16 && rows[0] == 0);
    int inrange = 1;
    for (int i = 0; i < n; i++)
        inrange &= rows[i] >= 0 && rows[i] < R;
    CHECK(inrange);
    /* planted in the first row (always sampled) and in the last */
    out[3] += 0.05f;
    CHECK(sb_moe_gemm_verify(&s, off, xp, wu, wg, wd, out, rows, n, why,
                             sizeof why) >= 1);
    CHECK(strstr(why, "out[row 0") != NULL);
    out[3] -= 0.05f;
    /* Sampled rows are distinct; with no more rows than the sample holds,
     * every row is checked (a spread of `max` over fewer rows once bunched
     * at the start and left late rows out). */
    int distinct = 1;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            distinct &= rows[i] != rows[j];
    CHECK(distinct);
    n = sb_moe_gemm_sample_rows(&s, off, rows, (int)R);
    int every = n == (int)R;
    for (int i = 0; every && i < n; i++)
        every &= rows[i] == i;
    CHECK(every);
    out[(R - 2) * ncol + 1] += 0.5f;
    CHECK(sb_moe_gemm_verify(&s, off, xp, wu, wg, wd, out, rows, n, NULL, 0) ==
          1);
    out[(R - 2) * ncol + 1] -= 0.5f;
    for (int64_t r = 0; r < R; r++)
        rows[r] = r;
    out[(R - 1) * ncol + ncol - 1] += 0.5f;
    CHECK(sb_moe_gemm_verify(&s, off, xp, wu, wg, wd, out, rows, (int)R, NULL,
                             0) == 1);
    free(idx), free(w), free(pos), free(rt), free(xp), free(wu), free(wg);
    free(wd), free(g), free(h), free(out), free(rows);
}

int main(void)
{
    omp_set_num_threads(2);
    test_topk_ties();
    test_accounting();
    test_check();
    test_synth();
    test_dispatch_combine(2, 0.0, 2, -1);
    test_dispatch_combine(3, 0.8, 3, -1);
    test_dispatch_combine(1, 0.0, 2, 4);
    test_dispatch_combine(2, 0.0, 1, 6); /* all tokens to expert 6 */
    /* The router and the expert GEMMs on every library this machine has. */
    int libs = 0;
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++) {
        if (!sb_gemm_lib_supports(lib, SB_GEMM_F32, NULL, 0))
            continue;
        printf("route and grouped GEMM on %s\n", sb_gemm_lib_name(lib));
        g_lib = lib;
        test_route();
        test_gemm(false, -1, 2);
        test_gemm(true, -1, 2);
        test_gemm(false, 2, 1); /* one expert, the other groups empty */
        test_gemm(true, 3, 1);
        libs++;
    }
    CHECK(libs >= 1);
    const char *small = "tokens=64 d_model=32 experts=4 topk=2 skew=0.5";
    sb_test_run_bench("moe.route", small, true, 2, NULL, false);
    sb_test_run_bench("moe.dispatch", small, true, 2, NULL, false);
    sb_test_run_bench("moe.combine", small, true, 2, NULL, false);
    sb_test_run_bench("moe.grouped_gemm",
                      "tokens=64 d_model=32 ffn=24 experts=4 topk=2", true, 2,
                      NULL, false);
    sb_test_run_bench(
        "moe.grouped_gemm",
        "tokens=64 d_model=32 ffn=24 experts=4 topk=1 gated=1 force_expert=3",
        true, 2, NULL, false);
    sb_test_run_bench(
        "moe.route",
        "tokens=64 d_model=32 experts=8 topk=1 force_expert=7 skew=1", true, 2,
        NULL, false);
    sb_test_run_bench("moe.route", "tokens=64 d_model=32 experts=4 topk=5",
                      false, 2, NULL, false);
    sb_test_run_bench("moe.dispatch",
                      "tokens=64 d_model=32 experts=4 topk=2 force_expert=4",
                      false, 2, NULL, false);
    /* Each library by name where it runs fp32; a library that cannot is a
     * skipped point (set-up says unsupported). */
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++) {
        char spec[160];
        snprintf(spec, sizeof spec,
                 "tokens=64 d_model=32 ffn=24 experts=4 "
                 "topk=2 gated=1 lib=%s",
                 sb_gemm_lib_name(lib));
        if (sb_gemm_lib_supports(lib, SB_GEMM_F32, NULL, 0))
            sb_test_run_bench("moe.grouped_gemm", spec, true, 2, NULL, false);
        snprintf(spec, sizeof spec,
                 "tokens=64 d_model=32 experts=4 topk=2 "
                 "lib=%s",
                 sb_gemm_lib_name(lib));
        if (sb_gemm_lib_supports(lib, SB_GEMM_F32, NULL, 0))
            sb_test_run_bench("moe.route", spec, true, 2, NULL, false);
    }
    return sb_check_done();
}
