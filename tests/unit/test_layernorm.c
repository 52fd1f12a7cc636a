/*
 * test_layernorm.c — ops.layernorm: a row worked by hand, a constant row,
 * rows far from zero (where one-pass variance cancels), bf16 rounding, a
 * planted wrong element the verifier must find, its FLOP and byte counts,
 * and the benchmark run through the registry as the runner runs it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ops/layernorm.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/bench.h"
#include "solbench/util.h"

/* [1, 2, 3, 4], g = 1, b = 0: mean 2.5, variance 1.25, so
 * y = (x - 2.5) / sqrt(1.25 + 1e-5): ±1.3416355, ±0.4472118. */
static void test_by_hand(void)
{
    const float x[4] = {1, 2, 3, 4}, g[4] = {1, 1, 1, 1}, b[4] = {0};
    float y[4];
    sb_layernorm_rows(x, g, b, y, 1, 4, false, 0);
    const double r = 1.0 / sqrt(1.25 + SB_LAYERNORM_EPS);
    for (int i = 0; i < 4; i++)
        CHECK(fabs(y[i] - (x[i] - 2.5) * r) < 1e-6);
    CHECK(fabs(y[0] + 1.3416355) < 1e-6 && fabs(y[2] - 0.4472118) < 1e-6);
    CHECK(sb_layernorm_verify(x, g, b, y, 1, 4, false, NULL, 0) == 0);
    /* g and b apply per column */
    const float g2[4] = {2, 2, 2, 2}, b2[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    float y2[4];
    sb_layernorm_rows(x, g2, b2, y2, 1, 4, false, 0);
    for (int i = 0; i < 4; i++)
        CHECK(fabs(y2[i] - (2.0 * y[i] + 0.5)) < 1e-5);
}

/* A constant row has no deviation: every output is b exactly. */
static void test_constant(void)
{
    enum { D = 64 };
    float x[D], g[D], b[D], y[D];
    for (int i = 0; i < D; i++) {
        x[i] = 3.25f;
        g[i] = 1.0f + 0.01f * (float)i;
        b[i] = -0.125f * (float)i;
    }
    sb_layernorm_rows(x, g, b, y, 1, D, false, 0);
    int exact = 0;
    for (int i = 0; i < D; i++)
        exact += y[i] == b[i];
    CHECK(exact == D);
}

/* Rows of [-2, 2) shifted by 1000: the normalised row is the same as the
 * unshifted one. E[x²] - mean² would lose it (1e6 against a variance of
 * 1.3, beyond fp32's 7 digits); two passes keep it. */
static void test_far_from_zero(void)
{
    enum { T = 3, D = 1000 };
    float *x = malloc(sizeof(float) * T * D),
          *xs = malloc(sizeof(float) * T * D);
    float *y = malloc(sizeof(float) * T * D),
          *ys = malloc(sizeof(float) * T * D);
    float g[D], b[D];
    uint64_t st = 7;
    for (int i = 0; i < T * D; i++) {
        x[i] = (float)(-2.0 + 4.0 * sb_rng_unif(&st));
        xs[i] = x[i] + 1000.0f;
    }
    for (int i = 0; i < D; i++)
        g[i] = 1.0f, b[i] = 0.0f;
    sb_layernorm_rows(x, g, b, y, T, D, false, 1);
    sb_layernorm_rows(xs, g, b, ys, T, D, false, 1);
    double worst = 0;
    for (int i = 0; i < T * D; i++)
        worst = fmax(worst, fabs(y[i] - ys[i]));
    /* xs rounds x to fp32's grid near 1000 (2^-14): up to 3e-5 of
     * difference after scaling by 1/sd ~ 0.87, nothing like the units a
     * cancelled variance would give */
    CHECK(worst < 1e-3);
    char why[200] = "";
    CHECK(sb_layernorm_verify(xs, g, b, ys, T, D, false, why, sizeof why) == 0);
    if (why[0])
        fprintf(stderr, "%s (worst against unshifted %g)\n", why, worst);
    free(x), free(xs), free(y), free(ys);
}

/* bf16 storage, a tail (d = 100 is no multiple of any vector width), and
 * several rows on a dynamic schedule; then one element moved by 1 % of
 * its value: the verifier finds exactly that one and names it. */
static void test_bf16_and_planted(void)
{
    enum { T = 5, D = 100 };
    uint16_t x[T * D], g[D], b[D], y[T * D];
    uint64_t st = 11;
    for (int i = 0; i < T * D; i++)
        x[i] = sb_bf16_from_f32((float)(-2.0 + 4.0 * sb_rng_unif(&st)));
    for (int i = 0; i < D; i++) {
        g[i] = sb_bf16_from_f32((float)(0.5 + sb_rng_unif(&st)));
        b[i] = sb_bf16_from_f32((float)(-0.5 + sb_rng_unif(&st)));
    }
    sb_layernorm_rows(x, g, b, y, T, D, true, 2);
    CHECK(sb_layernorm_verify(x, g, b, y, T, D, true, NULL, 0) == 0);
    /* the output is bf16: a value on the bf16 grid, not fp32's */
    float v = sb_bf16_to_f32(y[3 * D + 17]);
    CHECK(sb_bf16_from_f32(v) == y[3 * D + 17]);
    /* plant: token 3, element 17, 2 % off (beyond bf16's 2^-8) */
    y[3 * D + 17] = sb_bf16_from_f32(v * 1.02f + (v == 0.0f ? 0.1f : 0.0f));
    char why[200] = "";
    CHECK(sb_layernorm_verify(x, g, b, y, T, D, true, why, sizeof why) == 1);
    CHECK(strstr(why, "token 3][17]") != NULL);
}

static void test_accounting(void)
{
    /* 8 T d + 3 T FLOPs; S (2 T d + 2 d) bytes */
    CHECK(sb_layernorm_flops(256, 4096) == 8.0 * 256 * 4096 + 3.0 * 256);
    CHECK(sb_layernorm_bytes(256, 4096, false) ==
          4.0 * (2.0 * 256 * 4096 + 2.0 * 4096));
    CHECK(sb_layernorm_bytes(256, 4096, true) ==
          2.0 * (2.0 * 256 * 4096 + 2.0 * 4096));
}

/* Through the registry, as the runner drives it. */
static void run_bench(const char *spec)
{
    const sb_bench *bench = sb_bench_find("ops.layernorm", "cpu");
    CHECK(bench != NULL);
    if (!bench)
        return;
    CHECK(bench->roof == SB_ROOF_FP32);
    sb_err err = {0, ""};
    sb_params p;
    CHECK(sb_test_point(bench, spec, &p, &err) == 0);
    sb_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.threads = 2;
    CHECK(sb_test_flops(bench, &p) > 0 && sb_test_bytes(bench, &p) > 0);
    sb_test_run_valid(bench, &p, &ctx, 3);
}

int main(void)
{
    test_by_hand();
    test_constant();
    test_far_from_zero();
    test_bf16_and_planted();
    test_accounting();
    run_bench("tokens=16 d=96 dtype=bf16");
    run_bench("tokens=7 d=1");
    run_bench("tokens=33 d=257 schedule=static");
    return sb_check_done();
}
