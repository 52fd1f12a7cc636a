/*
 * test_compute_peak.c — compute.peak: FLOPs per iteration by hand, the
 * FMA kernels against their closed form (on every ISA this CPU runs), the
 * skipped result for an ISA the CPU lacks, the FLOPs-per-cycle table, the
 * BLAS kernel-width note, and one whole point through the runner.
 */
#include <stdlib.h>
#include <string.h>

#include "bench/compute/compute.h"
#include "check.h"
#include "solbench/runner.h"

extern const sb_bench compute_peak;

/* Expands "k=v k=v" over compute.peak's parameters; one point expected. */
static int one_point(const char *spec, sb_params *out)
{
    sb_pset ps;
    memset(&ps, 0, sizeof ps);
    sb_err err = {0};
    if (sb_pset_add_all(&ps, spec, &err))
        return -1;
    const sb_pset *layers[1] = {&ps};
    bool lenient[1] = {false};
    sb_params *pts = NULL;
    int n = 0;
    int rc = sb_params_expand("compute.peak", compute_peak.params, layers,
                              lenient, 1, &pts, &n, &err);
    if (rc == 0 && n == 1)
        *out = pts[0];
    free(pts);
    return rc == 0 && n == 1 ? 0 : -1;
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

int main(void)
{
    /* ---- FLOPs per iteration, by hand: threads x 48 FMAs x lanes x 2 */
    CHECK(sb__peak_lanes(SB__ISA_SCALAR, SB__DT_FP64) == 1);
    CHECK(sb__peak_lanes(SB__ISA_SCALAR, SB__DT_FP32) == 1);
    CHECK(sb__peak_lanes(SB__ISA_AVX2, SB__DT_FP64) == 4);
    CHECK(sb__peak_lanes(SB__ISA_AVX2, SB__DT_FP32) == 8);
    CHECK(sb__peak_lanes(SB__ISA_AVX512, SB__DT_FP64) == 8);
    CHECK(sb__peak_lanes(SB__ISA_AVX512, SB__DT_FP32) == 16);
    CHECK(sb__peak_flops_per_trip(SB__ISA_AVX2, SB__DT_FP64, 2) == 768.0);
    CHECK(sb__peak_flops_per_trip(SB__ISA_SCALAR, SB__DT_FP32, 1) == 96.0);
    CHECK(sb__peak_flops_per_trip(SB__ISA_AVX512, SB__DT_FP32, 4) == 6144.0);
    CHECK(sb__peak_expected_growth(SB__ISA_AVX2, SB__DT_FP32, 10) == 3840.0);

    /* ---- kernels: closed form on every ISA this CPU runs */
    unsigned mask = sb__isa_supported_mask();
    CHECK(mask & (1u << SB__ISA_SCALAR));
    int kernels_run = 0;
    for (int isa = 0; isa < SB__ISA_N; isa++) {
        if (!(mask & (1u << isa)))
            continue;
        for (int dt = SB__DT_FP64; dt <= SB__DT_FP32; dt++) {
            sb__peak_tally t = {0, 0};
            sb__peak_kernel(isa, dt, 1000, &t);
            CHECK(t.bad == 0);
            CHECK(t.growth == sb__peak_expected_growth(isa, dt, 1000));
            /* The check is count-sensitive: one trip more or less is a
             * different number. */
            CHECK(t.growth != sb__peak_expected_growth(isa, dt, 999));
            CHECK(t.growth != sb__peak_expected_growth(isa, dt, 1001));
            kernels_run++;
        }
    }
    CHECK(kernels_run >= 2);
    /* Crossing a chunk boundary keeps fp32 exact: 2^20 + 3 trips. */
    {
        int isa = sb__isa_best(mask);
        sb__peak_tally t = {0, 0};
        uint64_t trips = (uint64_t)SB__PEAK_CHUNK + 3;
        sb__peak_kernel(isa, SB__DT_FP32, trips, &t);
        CHECK(t.bad == 0);
        CHECK(t.growth == sb__peak_expected_growth(isa, SB__DT_FP32, trips));
    }

    /* ---- the FLOPs-per-cycle table */
    unsigned m2 = (1u << SB__ISA_SCALAR) | (1u << SB__ISA_AVX2);
    unsigned m5 = m2 | (1u << SB__ISA_AVX512);
    sb__uarch u;
    sb__uarch_lookup(&u, "AMD", 0x19, 0x01, m2); /* EPYC Milan */
    CHECK(strcmp(u.name, "Zen 3") == 0);
    CHECK(u.fpc[SB__ISA_SCALAR][0] == 4 && u.fpc[SB__ISA_SCALAR][1] == 4);
    CHECK(u.fpc[SB__ISA_AVX2][0] == 16 && u.fpc[SB__ISA_AVX2][1] == 32);
    CHECK(u.fpc[SB__ISA_AVX512][0] == 0); /* not in the mask */
    sb__uarch_lookup(&u, "AMD", 0x19, 0x11, m5); /* EPYC Genoa */
    CHECK(strcmp(u.name, "Zen 4") == 0);
    CHECK(u.fpc[SB__ISA_AVX512][0] == 16 && u.fpc[SB__ISA_AVX512][1] == 32);
    sb__uarch_lookup(&u, "AMD", 0x17, 0x01, m2); /* Naples */
    CHECK(u.fpc[SB__ISA_AVX2][0] == 8);
    sb__uarch_lookup(&u, "Intel", 6, 0x55, m5); /* Skylake-SP */
    CHECK(u.fpc[SB__ISA_AVX512][0] == 32 && u.fpc[SB__ISA_AVX512][1] == 64);
    CHECK(u.fpc[SB__ISA_AVX2][0] == 16);
    sb__uarch_lookup(&u, "Intel", 6, 0x7e, m5); /* Ice Lake client */
    CHECK(u.fpc[SB__ISA_AVX512][0] == 16);
    CHECK(strstr(u.source[SB__ISA_AVX2], "256-bit") != NULL);

    /* ---- the BLAS kernel-width note */
    char buf[256];
    CHECK(sb__blas_width_note("Haswell", "Haswell", m5, buf, sizeof buf));
    CHECK(strstr(buf, "OPENBLAS_CORETYPE=Haswell") != NULL);
    CHECK(strstr(buf, "AVX-512") != NULL && strstr(buf, "half") != NULL);
    CHECK(sb__blas_width_note("Zen", NULL, m5, buf, sizeof buf));
    CHECK(!sb__blas_width_note("SkylakeX", NULL, m5, buf, sizeof buf));
    CHECK(!sb__blas_width_note("Zen", NULL, m2, buf, sizeof buf));
    CHECK(!sb__blas_width_note("Haswell", NULL, m2, buf, sizeof buf));
    CHECK(sb__blas_width_note("Prescott", NULL, m2, buf, sizeof buf));
    CHECK(sb__blas_core_width("Cooperlake") == 512);
    CHECK(sb__blas_core_width("Zen") == 256);
    CHECK(sb__blas_core_width("Core2") == 128);

    /* ---- an ISA the CPU lacks is a skipped result, never a crash: AVX-512
     * is pretended missing here even where the CPU has it. */
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    ctx.threads = 1;
    ctx.min_time = 0.02;
    ctx.repeat = 3;
    ctx.progress = false;
    sb_result_list out = {0};
    sb_err err = {0};
    sb_params p;
    CHECK(one_point("dtype=fp64 isa=avx512 cores=1", &p) == 0);
    int rc = sb__peak_drive_mask(&p, &ctx, &out, &err,
                                 mask & ~(1u << SB__ISA_AVX512));
    CHECK(rc == 0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        CHECK(out.items[0].skipped);
        CHECK(!out.items[0].valid);
        CHECK(out.items[0].n_samples == 0);
        CHECK(has_note(&out.items[0],
                       "unsupported: avx512 not available on this CPU"));
        CHECK(strcmp(out.items[0].bench, "compute.peak") == 0);
    }
    sb_results_free(&out);

    /* ---- one whole point through the runner: valid, a sane figure, the
     * theoretical peak and the ceilings. */
    CHECK(one_point("dtype=fp32 isa=auto cores=all", &p) == 0);
    memset(&out, 0, sizeof out);
    rc = sb_run_point(&compute_peak, &p, &ctx, &out, &err);
    CHECK(rc == 0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        const sb_result *r = &out.items[0];
        CHECK(r->valid);
        CHECK(!r->skipped);
        CHECK(r->n_samples >= 3);
        double g = metric(r, "GFLOPs");
        CHECK(g > 0);
        CHECK(metric(r, "GFLOPs_best") >= g);
        CHECK(metric(r, "theoretical_GFLOPs") > 0);
        CHECK(metric(r, "flops_per_cycle") > 0);
        CHECK(has_note(r, "isa=auto ran the"));
        /* GFLOPs is the FLOPs of one iteration (a whole number of trips)
         * over the median time. */
        double trip = sb__peak_flops_per_trip(sb__isa_best(mask),
                                              SB__DT_FP32, 1);
        double f = metric(r, "flops");
        CHECK(f >= 256 * trip);
        CHECK(fmod(f, trip) == 0);
        CHECK_NEAR(g, f / r->stats.p50 * 1e-9, 1e-12);
        /* Samples are sized to ~20 ms, far above the 1 ms a slow first
         * call could otherwise fix (the margin allows for load). */
        CHECK(r->stats.min * metric(r, "inner_iters") > 2e-3);
        CHECK_NEAR(sb_ceil_get(&ctx.ceil, "peak.fp32"),
                   metric(r, "GFLOPs_best") * 1e9, 1e-12);
        CHECK(sb_ceil_get(&ctx.ceil, "peak.fp32.theoretical") > 0);
        CHECK(sb_ceil_get(&ctx.ceil, "peak.fp64") == 0);
    }
    sb_results_free(&out);
    return sb_check_done();
}
