/*
 * test_compute_gemm.c — compute.gemm: FLOPs and shapes by hand, the
 * verification passing on a right product and catching a planted wrong
 * element (in a sampled position, and anywhere through the column sums),
 * untouched output, bf16 rounding, and whole points through the runner
 * with MFU against a given peak.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/compute/compute.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/gemm.h"
#include "solbench/util.h"
#include "solbench/runner.h"

extern const sb_bench sb_bench_compute_gemm;

/* The one point spec plans for compute.gemm (bench_point.h). */
static int expand(const char *spec, sb_params *out, sb_err *err)
{
    return sb_test_point(&sb_bench_compute_gemm, spec, out, err);
}

/* One point of compute.gemm run: its one result, or NULL (checked) */
static const sb_result *run1(const char *spec, sb_params *p, sb_ctx *ctx,
                             sb_result_list *out)
{
    sb_err err = {0};
    memset(out, 0, sizeof *out);
    CHECK(expand(spec, p, &err) == 0);
    CHECK(sb_run_point(&sb_bench_compute_gemm, NULL, p, ctx, out, &err) == 0);
    CHECK(out->n == 1);
    return out->n == 1 ? &out->items[0] : NULL;
}

static bool sampled(const sb_gemm *g, int64_t i, int64_t j)
{
    for (int q = 0; q < SB__GEMM_SAMPLES; q++)
        if (g->si[q] == i && g->sj[q] == j)
            return true;
    return false;
}

/* A right product passes; a wrong element in a sampled position and one
 * in an unsampled position both fail; restoring them passes again. */
static void check_planted(int dt, int lib, double small, double large)
{
    sb_gemm *g = NULL;
    sb_err err = {0};
    char why[256];
    printf("planted errors: %s %s\n", sb_dtype_name(dt), sb_gemm_lib_name(lib));
    CHECK(sb_gemm_create(dt, 67, 45, 129, 1, 42, lib, &g, &err) == 0);
    if (!g)
        return;
    CHECK(sb_gemm_plan_lib(g->plan) == lib);
    /* Nothing computed yet: C is NaN everywhere. */
    CHECK(sb_gemm_check(g, why, sizeof why) > 0);
    sb_gemm_once(g);
    CHECK(sb_gemm_check(g, why, sizeof why) == 0);
    CHECK(g->max_rel_err < 129 * sb_gemm_unit_roundoff(dt));
    CHECK(g->max_rel_err > 0 || dt == SB__DT_FP64);

    int64_t i = g->si[7], j = g->sj[7];
    double keep = sb_gemm_c_get(g, i, j);
    sb_gemm_c_set(g, i, j, keep + small);
    CHECK(sb_gemm_check(g, why, sizeof why) > 0);
    CHECK(strstr(why, "C[") != NULL);
    sb_gemm_c_set(g, i, j, keep);
    CHECK(sb_gemm_check(g, why, sizeof why) == 0);

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
        keep = sb_gemm_c_get(g, ui, uj);
        sb_gemm_c_set(g, ui, uj, keep + large);
        CHECK(sb_gemm_check(g, why, sizeof why) == 1);
        CHECK(strstr(why, "column") != NULL);
        sb_gemm_c_set(g, ui, uj, keep);
        CHECK(sb_gemm_check(g, why, sizeof why) == 0);
        sb_gemm_c_set(g, ui, uj, NAN);
        CHECK(sb_gemm_check(g, why, sizeof why) > 0);
        sb_gemm_c_set(g, ui, uj, keep);
    }
    sb_gemm_destroy(g);
}

int main(void)
{
    sb_err err = {0};
    sb_params p;
    int64_t m, n, k;

    /* ---- shapes and FLOPs = 2 M N K, by hand */
    CHECK(expand("dtype=fp64 n=100", &p, &err) == 0);
    CHECK(sb_test_flops(&sb_bench_compute_gemm, &p) == 2e6);
    CHECK(expand("dtype=fp32 n=100 m=50 k=30", &p, &err) == 0);
    CHECK(sb_gemm_dims(&p, &m, &n, &k, &err) == 0);
    CHECK(m == 50 && n == 100 && k == 30);
    CHECK(sb_test_flops(&sb_bench_compute_gemm, &p) == 300000.0);
    CHECK(expand("dtype=fp32 shape=llm tokens=2048 d_model=4096", &p, &err) ==
          0);
    CHECK(sb_gemm_dims(&p, &m, &n, &k, &err) == 0);
    CHECK(m == 2048 && k == 4096 && n == 16384);
    CHECK(sb_test_flops(&sb_bench_compute_gemm, &p) ==
          2.0 * 2048 * 16384 * 4096);
    /* fp32: A 2048x4096 + B 4096x16384 + C 2048x16384, 4 bytes each */
    CHECK(sb_test_footprint(&sb_bench_compute_gemm, &p, NULL) ==
          4.0 * (2048.0 * 4096 + 4096.0 * 16384 + 2048.0 * 16384));
    CHECK(expand("dtype=fp64 shape=llm m=5", &p, &err) == 0);
    CHECK(sb_test_check(&sb_bench_compute_gemm, &p, NULL, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "shape=square") != NULL);
    CHECK(expand("dtype=fp16", &p, &err) != 0);
    CHECK(expand("n=0", &p, &err) != 0);

    /* ---- rotate=1: decode and llm over copies of the weights past 4x
     * the LLC, the footprint all of them; square refuses it */
    CHECK(expand("dtype=fp32 shape=decode batch=2 d_model=768 ffn=2048 "
                 "rotate=1",
                 &p, &err) == 0);
    {
        double llc = sb_llc_bytes() > 0 ? sb_llc_bytes() : 32.0 * 1048576;
        double one = 768.0 * 2048 * 4;
        double copies = fmax(1.0, ceil(4 * llc / one));
        CHECK(sb_test_footprint(&sb_bench_compute_gemm, &p, NULL) ==
              4.0 * (2.0 * 768 + copies * one / 4 + 2.0 * 2048));
        CHECK(sb_test_bytes(&sb_bench_compute_gemm, &p) ==
              4.0 * (2.0 * 768 + 768.0 * 2048 + 2.0 * 2048));
    }
    /* an expert's 16 prompt rows over gate and up: the same copies, C
     * 16 x 2048; llm points report no bytes */
    CHECK(expand("dtype=fp32 shape=llm tokens=16 d_model=768 ffn=2048 "
                 "rotate=1",
                 &p, &err) == 0);
    CHECK(sb_test_check(&sb_bench_compute_gemm, &p, NULL, &err) == 0);
    {
        double llc = sb_llc_bytes() > 0 ? sb_llc_bytes() : 32.0 * 1048576;
        double one = 768.0 * 2048 * 4;
        double copies = fmax(1.0, ceil(4 * llc / one));
        CHECK(sb_test_footprint(&sb_bench_compute_gemm, &p, NULL) ==
              4.0 * (16.0 * 768 + copies * one / 4 + 16.0 * 2048));
        CHECK(sb_test_bytes(&sb_bench_compute_gemm, &p) == 0);
    }
    CHECK(expand("dtype=fp32 shape=square n=64 rotate=1", &p, &err) == 0);
    CHECK(sb_test_check(&sb_bench_compute_gemm, &p, NULL, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "rotate") != NULL &&
          strstr(err.msg, "not shape=square") != NULL);
    {
        /* each product reads the next copy: a wrong one is caught when
         * its turn comes, and only then */
        sb_gemm *g = NULL;
        char why[256];
        CHECK(sb_gemm_create(SB__DT_FP32, 3, 40, 50, 1, 7, SB_GEMM_OPENBLAS, &g,
                             &err) == 0);
        CHECK(g && sb_gemm_rotate(g, 3, &err) == 0);
        if (g && g->n_copies == 3) {
            /* copy 2 is the second in `copies` (copy 0 is B itself) */
            ((float *)(g->copies + g->stride))[5] += 1.0f;
            sb_gemm_once(g); /* copy 0 */
            CHECK(sb_gemm_check(g, why, sizeof why) == 0);
            sb_gemm_once(g); /* copy 1 */
            CHECK(sb_gemm_check(g, why, sizeof why) == 0);
            sb_gemm_once(g); /* copy 2, changed */
            CHECK(sb_gemm_check(g, why, sizeof why) > 0);
            sb_gemm_once(g); /* copy 0 again */
            CHECK(sb_gemm_check(g, why, sizeof why) == 0 && g->next == 1);
        }
        sb_gemm_destroy(g);
    }

    /* ---- split by the weights' rows: K = 100 over 2 threads is blocks of
     * 64 and 36 (its own plan), each into its partial, summed: C right in
     * every dtype and the library's own to rounding; no split past 16
     * rows, on one thread or with under 16 rows of K a thread */
    for (int dt = 0; dt < SB__DT_N; dt++) {
        sb_gemm *g = NULL;
        char why[256];
        int rc = sb_gemm_create(dt, 3, 40, 100, 2, 11, -1, &g, &err);
        if (rc == SB_EUNSUP) /* bf16 without a library for it */
            continue;
        CHECK(rc == 0 && g);
        if (!g)
            continue;
        CHECK(sb_gemm_split(g, &err) == 1 && g->split);
        CHECK(g->chunk == 64 && g->used == 2 && g->split_last != NULL);
        sb_gemm_once(g);
        CHECK(sb_gemm_check(g, why, sizeof why) == 0);
        /* the same C as the library's own threads, to the check's
         * bound (a block left out or summed twice fails the check above:
         * it reads the whole of B) */
        double c1[3 * 40];
        for (int64_t e = 0; e < 3 * 40; e++)
            c1[e] = sb_gemm_c_get(g, e / 40, e % 40);
        g->split = false;
        sb_gemm_once(g);
        CHECK(sb_gemm_check(g, why, sizeof why) == 0);
        double worst = 0;
        for (int64_t e = 0; e < 3 * 40; e++)
            worst = fmax(worst, fabs(c1[e] - sb_gemm_c_get(g, e / 40, e % 40)));
        CHECK(worst < 1e-3);
        g->split = true;
        sb_gemm_destroy(g);
    }
    {
        sb_gemm *g = NULL;
        CHECK(sb_gemm_create(SB__DT_FP32, 17, 40, 100, 2, 1, -1, &g, &err) ==
              0);
        CHECK(g && sb_gemm_split(g, &err) == 0 && !g->split);
        sb_gemm_destroy(g);
        CHECK(sb_gemm_create(SB__DT_FP32, 2, 40, 100, 1, 1, -1, &g, &err) == 0);
        CHECK(g && sb_gemm_split(g, &err) == 0 && !g->split);
        sb_gemm_destroy(g);
        CHECK(sb_gemm_create(SB__DT_FP32, 2, 40, 31, 2, 1, -1, &g, &err) == 0);
        CHECK(g && sb_gemm_split(g, &err) == 0 && !g->split);
        sb_gemm_destroy(g);
    }
    /* split=rows applies to decode and llm; auto times both and says so */
    CHECK(expand("dtype=fp32 shape=square n=64 split=rows", &p, &err) == 0);
    CHECK(sb_test_check(&sb_bench_compute_gemm, &p, NULL, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "split=rows") != NULL);

    /* ---- bf16 rounding: nearest, ties to even */
    CHECK(sb_bf16_from_f32(1.0f) == 0x3f80);
    CHECK(sb_bf16_from_f32(-2.5f) == 0xc020);
    CHECK(sb_bf16_from_f32(1.0f + ldexpf(1.0f, -8)) == 0x3f80);
    CHECK(sb_bf16_from_f32(1.0f + 3 * ldexpf(1.0f, -8)) == 0x3f82);
    CHECK(sb_bf16_from_f32(1.0f + ldexpf(1.0f, -7)) == 0x3f81);
    CHECK(sb_bf16_to_f32(0x3f81) == 1.0f + ldexpf(1.0f, -7));
    CHECK(isnan(sb_bf16_to_f32(sb_bf16_from_f32(NAN))));

    /* ---- verification catches wrong elements, on every library and
     * dtype this machine runs (OpenBLAS fp64 and fp32 everywhere) */
    const double small[3] = {1e-9, 1e-2, 1e-2}, large[3] = {1e-6, 1.0, 1.0};
    int planted = 0;
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++)
        for (int dt = SB__DT_FP64; dt <= SB__DT_BF16; dt++)
            if (sb_gemm_lib_supports(lib, dt, NULL, 0)) {
                check_planted(dt, lib, small[dt], large[dt]);
                planted++;
            }
    CHECK(planted >= 2);
    CHECK(sb_gemm_lib_supports(SB_GEMM_OPENBLAS, SB__DT_FP64, NULL, 0));
    CHECK(sb_gemm_lib_supports(SB_GEMM_OPENBLAS, SB__DT_FP32, NULL, 0));
#ifdef SB_HAVE_DNNL
    /* oneDNN runs fp32 on every x86-64 and AArch64 CPU; never fp64. */
    CHECK(sb_gemm_lib_supports(SB_GEMM_ONEDNN, SB__DT_FP32, NULL, 0));
#endif
    {
        char why[192];
        CHECK(!sb_gemm_lib_supports(SB_GEMM_ONEDNN, SB__DT_FP64, why,
                                    sizeof why));
        CHECK(why[0] != '\0');
    }

    /* ---- a plan with strides, Bᵀ, alpha and beta gives the same C on
     * every library that runs it: C = 0.5 A Bᵀ + 2 C on a 5x7 window of
     * larger buffers */
    {
        enum { M = 5, N = 7, K = 9, LDA = 12, LDB = 11, LDC = 10 };
        float a[M * LDA], b[N * LDB], c0[M * LDC], c[M * LDC];
        uint64_t seed = 7;
        for (int i = 0; i < M * LDA; i++)
            a[i] = (float)(2 * sb_rng_unif(&seed) - 1);
        for (int i = 0; i < N * LDB; i++)
            b[i] = (float)(2 * sb_rng_unif(&seed) - 1);
        for (int i = 0; i < M * LDC; i++)
            c0[i] = (float)(2 * sb_rng_unif(&seed) - 1);
        sb_gemm_desc d = {.dt = SB_GEMM_F32,
                          .m = M,
                          .n = N,
                          .k = K,
                          .lda = LDA,
                          .ldb = LDB,
                          .ldc = LDC,
                          .trans_b = true,
                          .alpha = 0.5f,
                          .beta = 2.0f};
        for (int lib = 0; lib < SB_GEMM_NLIBS; lib++) {
            if (!sb_gemm_lib_supports(lib, SB_GEMM_F32, NULL, 0))
                continue;
            sb_gemm_plan *pl = NULL;
            CHECK(sb_gemm_plan_create(lib, &d, 1, &pl, &err) == 0);
            if (!pl)
                continue;
            memcpy(c, c0, sizeof c);
            sb_gemm_run(pl, 0, a, b, c);
            double worst = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < LDC; j++) {
                    double want = c0[i * LDC + j];
                    if (j < N) {
                        double dot = 0;
                        for (int q = 0; q < K; q++)
                            dot += (double)a[i * LDA + q] * b[j * LDB + q];
                        want = 0.5 * dot + 2.0 * c0[i * LDC + j];
                    }
                    double e = fabs(c[i * LDC + j] - want);
                    worst = e > worst ? e : worst;
                }
            printf("%s (%s): strided A Bt, alpha, beta: worst error %.3g\n",
                   sb_gemm_lib_name(lib), sb_gemm_plan_kernel(pl), worst);
            CHECK(worst < 1e-5); /* and columns past N untouched */
            sb_gemm_plan_destroy(pl);
        }
        /* Leading dimensions smaller than the rows are refused. */
        sb_gemm_desc bad = d;
        bad.lda = 3;
        sb_gemm_plan *pl = NULL;
        CHECK(sb_gemm_plan_create(SB_GEMM_OPENBLAS, &bad, 1, &pl, &err) ==
                  SB_EINVAL &&
              pl == NULL);
    }

    /* ---- OpenBLAS's core for the CPU: the OPENBLAS_CORETYPE to name */
    {
        sb_isa isa = {0};
        isa.avx = isa.avx2 = isa.fma = true;
        CHECK(sb_gemm_core_for_isa(&isa, true, "Zen") == NULL);
        CHECK(strcmp(sb_gemm_core_for_isa(&isa, true, "Prescott"), "Zen") == 0);
        CHECK(strcmp(sb_gemm_core_for_isa(&isa, false, "Prescott"),
                     "Haswell") == 0);
        isa.avx512f = isa.avx512bw = isa.avx512vl = true;
        CHECK(strcmp(sb_gemm_core_for_isa(&isa, false, "Haswell"),
                     "SkylakeX") == 0);
        CHECK(sb_gemm_core_for_isa(&isa, false, "SkylakeX") == NULL);
        isa.avx512_bf16 = true; /* Emerald Rapids under Debian's 0.3.21 */
        CHECK(strcmp(sb_gemm_core_for_isa(&isa, false, "Prescott"),
                     "Cooperlake") == 0);
        CHECK(strcmp(sb_gemm_core_for_isa(&isa, false, "SkylakeX"),
                     "Cooperlake") == 0);
        CHECK(sb_gemm_core_for_isa(&isa, false, "Cooperlake") == NULL);
        CHECK(sb_gemm_core_for_isa(&isa, false, "SapphireRapids") == NULL);
        CHECK(sb_gemm_openblas_core_width("Cooperlake") == 512);
        CHECK(sb_gemm_openblas_core_width("Zen") == 256);
        CHECK(sb_gemm_openblas_core_width("Core2") == 128);
        sb_isa none = {0};
        CHECK(sb_gemm_core_for_isa(&none, false, "Prescott") == NULL);
    }

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
    CHECK(sb_run_point(&sb_bench_compute_gemm, NULL, &p, &ctx, &out, &err) ==
          0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        const sb_result *r = &out.items[0];
        CHECK(r->valid);
        double g = sb_test_metric(r, "GFLOPs");
        CHECK(g > 0);
        CHECK_NEAR(g, 2.0 * 96 * 96 * 96 / r->stats.p50 * 1e-9, 1e-12);
        CHECK_NEAR(sb_test_metric(r, "MFU"), g * 1e9 / 1e12, 1e-12);
        CHECK_NEAR(sb_test_metric(r, "MFU_theoretical"), g * 1e9 / 2e12, 1e-12);
        CHECK(sb_test_metric(r, "max_rel_err") >= 0 &&
              sb_test_metric(r, "max_rel_err") < 1e-12);
        CHECK(sb_test_has_note(r, "library: "));
        CHECK(sb_test_has_note(r, "lib=auto: the fastest"));
        CHECK(sb_test_metric(r, "auto_openblas_GFLOPs") > 0);
        CHECK(sb_test_has_note(r, "MFU against peak.fp64"));
    }
    sb_results_free(&out);

    /* fp32 without a peak.fp32 ceiling: no MFU, and a note says why. */
    memset(&out, 0, sizeof out);
    CHECK(expand("dtype=fp32 shape=llm tokens=16 d_model=32", &p, &err) == 0);
    CHECK(sb_run_point(&sb_bench_compute_gemm, NULL, &p, &ctx, &out, &err) ==
          0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        CHECK(out.items[0].valid);
        CHECK(sb_result_get(&out.items[0], "MFU") == NULL);
        CHECK(sb_test_has_note(&out.items[0], "no MFU"));
    }
    sb_results_free(&out);

    /* bf16: measured and right where a library runs it, else a skipped
     * result that says why — never a crash or a link failure. */
    bool bf16_any =
        sb_gemm_lib_supports(SB_GEMM_OPENBLAS, SB__DT_BF16, NULL, 0) ||
        sb_gemm_lib_supports(SB_GEMM_ONEDNN, SB__DT_BF16, NULL, 0);
    memset(&out, 0, sizeof out);
    CHECK(expand("dtype=bf16 n=64", &p, &err) == 0);
    CHECK(sb_run_point(&sb_bench_compute_gemm, NULL, &p, &ctx, &out, &err) ==
          0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        if (bf16_any) {
            CHECK(out.items[0].valid);
        } else {
            CHECK(out.items[0].skipped);
            CHECK(sb_test_has_note(&out.items[0],
                                   "unsupported: no library runs bf16"));
            sb_gemm *g = NULL;
            CHECK(sb_gemm_create(SB__DT_BF16, 8, 8, 8, 1, 1, -1, &g, &err) ==
                  SB_EUNSUP);
            CHECK(g == NULL);
        }
    }
    sb_results_free(&out);
    /* A library asked for by name that cannot run the point: skipped. */
    memset(&out, 0, sizeof out);
    CHECK(expand("dtype=fp64 n=32 lib=onednn", &p, &err) == 0);
    CHECK(sb_run_point(&sb_bench_compute_gemm, NULL, &p, &ctx, &out, &err) ==
          0);
    CHECK(out.n == 1 && out.items[0].skipped &&
          sb_test_has_note(&out.items[0], "unsupported: onednn fp64"));
    sb_results_free(&out);
    CHECK(expand("dtype=fp32 lib=mkl", &p, &err) != 0);
    CHECK(strstr(err.msg, "mkl") != NULL);

    /* ---- decode: tokens against weights 4x the last-level cache */
    {
        CHECK(expand("dtype=fp32 shape=decode d_model=64 ffn=256 batch=4", &p,
                     &err) == 0);
        CHECK(sb_gemm_dims(&p, &m, &n, &k, &err) == 0);
        CHECK(m == 4 && k == 64 && n == 256);
        CHECK(sb_test_flops(&sb_bench_compute_gemm, &p) == 2.0 * 4 * 256 * 64);
        CHECK(sb_test_bytes(&sb_bench_compute_gemm, &p) ==
              (4.0 * 64 + 64.0 * 256) * 4 + 4.0 * 256 * 4);
        CHECK(expand("dtype=bf16 shape=decode d_model=1024", &p, &err) == 0);
        CHECK(sb_gemm_dims(&p, &m, &n, &k, &err) == 0);
        double llc = sb_llc_bytes() > 0 ? sb_llc_bytes() : 32.0 * 1048576;
        CHECK(m == 1 && k == 1024 && n % 256 == 0);
        CHECK((double)k * n * 2 >= 4 * llc &&
              (double)k * (n - 256) * 2 < 4 * llc);
        /* the square shape's m and k are refused, naming decode's own */
        CHECK(expand("dtype=fp32 shape=decode m=4", &p, &err) == 0);
        CHECK(sb_test_check(&sb_bench_compute_gemm, &p, NULL, &err) ==
                  SB_EINVAL &&
              strstr(err.msg, "batch, d_model and ffn") != NULL);
        /* square and llm report no bytes (FLOP/s is their headline) */
        CHECK(expand("dtype=fp32 n=64", &p, &err) == 0);
        CHECK(sb_test_bytes(&sb_bench_compute_gemm, &p) == 0);

        const sb_result *r =
            run1("dtype=fp32 shape=decode d_model=256 ffn=4096 batch=2", &p,
                 &ctx, &out);
        if (r) {
            CHECK(r->valid);
            double w = 256.0 * 4096 * 4;
            CHECK_NEAR(sb_test_metric(r, "weight_GBps"),
                       w / r->stats.p50 * 1e-9, 1e-12);
            /* 4 MiB of weights stream partly from the caches (under 4x
             * any LLC of 1 MiB or more): no gemv ceiling, and the note
             * says why */
            bool cached = sb_llc_bytes() > 0 && w < 4 * sb_llc_bytes();
            CHECK(sb_ceil_get(&ctx.ceil, "gemv.fp32") ==
                  (cached ? 0 : w / r->stats.min));
            CHECK(sb_test_has_note(r, cached ? "not a DRAM figure (< 4x)"
                                             : "): a DRAM figure"));
            bool hb = false;
            CHECK(strcmp(sb_result_headline(r, &hb)->name, "GBps") == 0 && hb);
            CHECK(sb_test_has_note(r, "decode: 2 tokens x weights 256 x 4096"));
            /* a decode point is no GEMM ceiling */
            CHECK(sb_ceil_get(&ctx.ceil, "gemm.fp32") == 0 ||
                  sb_ceil_get(&ctx.ceil, "gemm.fp32") !=
                      sb_test_metric(r, "GFLOPs_best") * 1e9);
        }
        sb_results_free(&out);
        /* weights 4x the LLC (ffn=0): a DRAM figure, the gemv ceiling
         * (where that is at most 1 GiB: an LLC past 256 MiB skips it) */
        double big = sb_llc_bytes() > 0 ? 4 * sb_llc_bytes() : 128.0 * 1048576;
        r = big <= 1073741824.0
                ? run1("dtype=fp32 shape=decode d_model=1024 batch=1", &p, &ctx,
                       &out)
                : NULL;
        if (r) {
            CHECK(r->valid);
            CHECK(sb_gemm_dims(&p, &m, &n, &k, &err) == 0);
            CHECK(sb_test_has_note(r, "): a DRAM figure"));
            CHECK_NEAR(sb_ceil_get(&ctx.ceil, "gemv.fp32"),
                       1024.0 * n * 4 / r->stats.min, 1e-12);
        }
        sb_results_free(&out);
    }
    return sb_check_done();
}
