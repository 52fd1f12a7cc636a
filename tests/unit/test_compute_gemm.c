/*
 * test_compute_gemm.c — compute.gemm: FLOPs and shapes by hand, the
 * verification passing on a right product and catching a planted wrong
 * element (in a sampled position, and anywhere through the column sums),
 * untouched output, bf16 rounding, and whole points through the runner
 * with MFU against a given peak.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/compute/compute.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/util.h"
#include "solbench/runner.h"

extern const sb_bench compute_gemm;

/* The one point spec plans for compute.gemm (bench_point.h). */
static int expand(const char *spec, sb_params *out, sb_err *err)
{
    return sb_test_point(&compute_gemm, spec, out, err);
}

static bool has_note(const sb_result *r, const char *text)
{
    for (int i = 0; i < r->n_notes; i++)
        if (strstr(r->notes[i], text))
            return true;
    return false;
}

static double metric(const sb_result *r, const char *name)
{
    const sb_metric *m = sb_result_get(r, name);
    return m ? m->value : -1;
}

static bool sampled(const sb__gemm *g, int64_t i, int64_t j)
{
    for (int q = 0; q < SB__GEMM_SAMPLES; q++)
        if (g->si[q] == i && g->sj[q] == j)
            return true;
    return false;
}

/* A right product passes; a wrong element in a sampled position and one
 * in an unsampled position both fail; restoring them passes again. */
static void check_planted(int dt, double small, double large)
{
    sb__gemm *g = NULL;
    sb_err err = {0};
    char why[256];
    CHECK(sb__gemm_create(dt, 67, 45, 129, 1, 42, &g, &err) == 0);
    if (!g)
        return;
    /* Nothing computed yet: C is NaN everywhere. */
    CHECK(sb__gemm_check(g, why, sizeof why) > 0);
    sb__gemm_once(g);
    CHECK(sb__gemm_check(g, why, sizeof why) == 0);
    CHECK(g->max_rel_err < 129 * sb__gemm_unit_roundoff(dt));
    CHECK(g->max_rel_err > 0 || dt == SB__DT_FP64);

    int64_t i = g->si[7], j = g->sj[7];
    double keep = sb__gemm_c_get(g, i, j);
    sb__gemm_c_set(g, i, j, keep + small);
    CHECK(sb__gemm_check(g, why, sizeof why) > 0);
    CHECK(strstr(why, "C[") != NULL);
    sb__gemm_c_set(g, i, j, keep);
    CHECK(sb__gemm_check(g, why, sizeof why) == 0);

    /* An element no sample looks at: the column sums must catch it. */
    int64_t ui = -1, uj = -1;
    for (int64_t a = 1; a < g->m - 1 && ui < 0; a++)
        for (int64_t b = 1; b < g->n - 1; b++)
            if (!sampled(g, a, b)) {
                ui = a;
                uj = b;
                break;
            }
    CHECK(ui >= 0);
    if (ui >= 0) {
        keep = sb__gemm_c_get(g, ui, uj);
        sb__gemm_c_set(g, ui, uj, keep + large);
        CHECK(sb__gemm_check(g, why, sizeof why) == 1);
        CHECK(strstr(why, "column") != NULL);
        sb__gemm_c_set(g, ui, uj, keep);
        CHECK(sb__gemm_check(g, why, sizeof why) == 0);
        sb__gemm_c_set(g, ui, uj, NAN);
        CHECK(sb__gemm_check(g, why, sizeof why) > 0);
        sb__gemm_c_set(g, ui, uj, keep);
    }
    sb__gemm_destroy(g);
}

int main(void)
{
    sb_err err = {0};
    sb_params p;
    int64_t m, n, k;

    /* ---- shapes and FLOPs = 2 M N K, by hand */
    CHECK(expand("dtype=fp64 n=100", &p, &err) == 0);
    CHECK(compute_gemm.flops(&p) == 2e6);
    CHECK(expand("dtype=fp32 n=100 m=50 k=30", &p, &err) == 0);
    CHECK(sb__gemm_dims(&p, &m, &n, &k, &err) == 0);
    CHECK(m == 50 && n == 100 && k == 30);
    CHECK(compute_gemm.flops(&p) == 300000.0);
    CHECK(expand("dtype=fp32 shape=llm tokens=2048 d_model=4096", &p,
                 &err) == 0);
    CHECK(sb__gemm_dims(&p, &m, &n, &k, &err) == 0);
    CHECK(m == 2048 && k == 4096 && n == 16384);
    CHECK(compute_gemm.flops(&p) == 2.0 * 2048 * 16384 * 4096);
    /* fp32: A 2048x4096 + B 4096x16384 + C 2048x16384, 4 bytes each */
    CHECK(compute_gemm.footprint(&p, NULL) ==
          4.0 * (2048.0 * 4096 + 4096.0 * 16384 + 2048.0 * 16384));
    CHECK(expand("dtype=fp64 shape=llm m=5", &p, &err) == 0);
    CHECK(compute_gemm.check(&p, NULL, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "shape=square") != NULL);
    CHECK(expand("dtype=fp16", &p, &err) != 0);
    CHECK(expand("n=0", &p, &err) != 0);

    /* ---- bf16 rounding: nearest, ties to even */
    CHECK(sb_bf16_from_f32(1.0f) == 0x3f80);
    CHECK(sb_bf16_from_f32(-2.5f) == 0xc020);
    CHECK(sb_bf16_from_f32(1.0f + ldexpf(1.0f, -8)) == 0x3f80);
    CHECK(sb_bf16_from_f32(1.0f + 3 * ldexpf(1.0f, -8)) == 0x3f82);
    CHECK(sb_bf16_from_f32(1.0f + ldexpf(1.0f, -7)) == 0x3f81);
    CHECK(sb_bf16_to_f32(0x3f81) == 1.0f + ldexpf(1.0f, -7));
    CHECK(isnan(sb_bf16_to_f32(sb_bf16_from_f32(NAN))));

    /* ---- verification catches wrong elements */
    check_planted(SB__DT_FP64, 1e-9, 1e-6);
    check_planted(SB__DT_FP32, 1e-2, 1.0);
    if (sb_blas_have_sbgemm())
        check_planted(SB__DT_BF16, 1e-2, 1.0);

    /* ---- whole points through the runner */
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    ctx.threads = 1;
    ctx.min_time = 0.02;
    ctx.repeat = 3;
    ctx.progress = false;
    sb_ceil_set(&ctx.ceil, "peak.fp64", 1e12, "measured");
    sb_ceil_set(&ctx.ceil, "peak.fp64.theoretical", 2e12, "theoretical");
    sb_result_list out = {0};
    CHECK(expand("dtype=fp64 n=96", &p, &err) == 0);
    CHECK(sb_run_point(&compute_gemm, &p, &ctx, &out, &err) == 0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        const sb_result *r = &out.items[0];
        CHECK(r->valid);
        double g = metric(r, "GFLOPs");
        CHECK(g > 0);
        CHECK_NEAR(g, 2.0 * 96 * 96 * 96 / r->stats.p50 * 1e-9, 1e-12);
        CHECK_NEAR(metric(r, "MFU"), g * 1e9 / 1e12, 1e-12);
        CHECK_NEAR(metric(r, "MFU_theoretical"), g * 1e9 / 2e12, 1e-12);
        CHECK(metric(r, "max_rel_err") >= 0 && metric(r, "max_rel_err") < 1e-12);
        CHECK(has_note(r, "BLAS: OpenBLAS core"));
        CHECK(has_note(r, "MFU against peak.fp64"));
    }
    sb_results_free(&out);

    /* fp32 without a peak.fp32 ceiling: no MFU, and a note says why. */
    memset(&out, 0, sizeof out);
    CHECK(expand("dtype=fp32 shape=llm tokens=16 d_model=32", &p, &err) == 0);
    CHECK(sb_run_point(&compute_gemm, &p, &ctx, &out, &err) == 0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        CHECK(out.items[0].valid);
        CHECK(sb_result_get(&out.items[0], "MFU") == NULL);
        CHECK(has_note(&out.items[0], "no MFU"));
    }
    sb_results_free(&out);

    /* bf16: measured and right where the BLAS has sbgemm, else a skipped
     * result that says why — never a crash or a link failure. */
    memset(&out, 0, sizeof out);
    CHECK(expand("dtype=bf16 n=64", &p, &err) == 0);
    CHECK(sb_run_point(&compute_gemm, &p, &ctx, &out, &err) == 0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        if (sb_blas_have_sbgemm()) {
            CHECK(out.items[0].valid);
        } else {
            CHECK(out.items[0].skipped);
            CHECK(has_note(&out.items[0], "unsupported: bf16"));
            sb__gemm *g = NULL;
            CHECK(sb__gemm_create(SB__DT_BF16, 8, 8, 8, 1, 1, &g, &err) ==
                  SB_EUNSUP);
            CHECK(g == NULL);
        }
    }
    sb_results_free(&out);
    return sb_check_done();
}
