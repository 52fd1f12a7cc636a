/*
 * test_compute_peak.c — compute.peak: FLOPs per iteration by hand, the
 * FMA kernels against their closed form (on every ISA this CPU runs), the
 * skipped result for an ISA (or the bf16 dot product) the CPU lacks, the
 * FLOPs-per-cycle table on made-up CPUs, and one whole point through the
 * runner.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/compute/compute.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/runner.h"

extern const sb_bench sb_bench_compute_peak;

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
    int rc = sb_params_expand("compute.peak", sb_bench_compute_peak.params,
                              layers, lenient, 1, &pts, &n, &err);
    if (rc == 0 && n == 1)
        *out = pts[0];
    free(pts);
    return rc == 0 && n == 1 ? 0 : -1;
}

/* compute.noise's interruptions: the excess over the shortest quantum
 * above max(25 % of it, 50 us) */
static void test_noise_interrupts(void)
{
    double t[5] = {1.0e-3, 1.1e-3, 1.5e-3, 3.0e-3, 1.0e-3};
    double tmin, thr, lost;
    CHECK(sb_noise_interrupts(t, 5, &tmin, &thr, &lost) == 2);
    CHECK_NEAR(tmin, 1.0e-3, 1e-15);
    CHECK_NEAR(thr, 0.25e-3, 1e-15);
    CHECK_NEAR(lost, 2.6e-3, 1e-12);
    CHECK_NEAR(t[0], 0.5e-3, 1e-15);
    CHECK_NEAR(t[1], 2.0e-3, 1e-15);
    /* short quanta: the 50 us floor */
    double u[3] = {100e-6, 140e-6, 160e-6};
    CHECK(sb_noise_interrupts(u, 3, &tmin, &thr, &lost) == 1);
    CHECK_NEAR(thr, 50e-6, 1e-15);
    CHECK_NEAR(u[0], 60e-6, 1e-15);
    CHECK(sb_noise_interrupts(u, 0, &tmin, &thr, &lost) == 0);
    CHECK(tmin == 0 && lost == 0);
}

int main(void)
{
    test_noise_interrupts();
    /* ---- FLOPs per iteration, by hand: threads x 48 FMAs x lanes x 2 */
    CHECK(sb_peak_lanes(SB__ISA_SCALAR, SB__DT_FP64) == 1);
    CHECK(sb_peak_lanes(SB__ISA_SCALAR, SB__DT_FP32) == 1);
    CHECK(sb_peak_lanes(SB__ISA_AVX2, SB__DT_FP64) == 4);
    CHECK(sb_peak_lanes(SB__ISA_AVX2, SB__DT_FP32) == 8);
    CHECK(sb_peak_lanes(SB__ISA_AVX512, SB__DT_FP64) == 8);
    CHECK(sb_peak_lanes(SB__ISA_AVX512, SB__DT_FP32) == 16);
    CHECK(sb_peak_lanes(SB__ISA_AVX512, SB__DT_BF16) == 32);
    CHECK(sb_peak_flops_per_trip(SB__ISA_AVX512, SB__DT_BF16, 1) == 3072.0);
    CHECK(sb_peak_flops_per_trip(SB__ISA_AVX2, SB__DT_FP64, 2) == 768.0);
    CHECK(sb_peak_flops_per_trip(SB__ISA_SCALAR, SB__DT_FP32, 1) == 96.0);
    CHECK(sb_peak_flops_per_trip(SB__ISA_AVX512, SB__DT_FP32, 4) == 6144.0);
    CHECK(sb_peak_expected_growth(SB__ISA_AVX2, SB__DT_FP32, 10) == 3840.0);

    /* ---- kernels: closed form on every ISA this CPU runs */
    unsigned mask = sb_isa_supported_mask();
    CHECK(mask & (1u << SB__ISA_SCALAR));
    int kernels_run = 0;
    for (int isa = 0; isa < SB__ISA_N; isa++) {
        if (!(mask & (1u << isa)))
            continue;
        for (int dt = SB__DT_FP64; dt <= SB__DT_BF16; dt++) {
            if (dt == SB__DT_BF16 &&
                (isa != sb_bf16_dot_isa() || !sb_bf16_dot_supported()))
                continue;
            sb_peak_tally t = {0, 0};
            sb_peak_kernel(isa, dt, 1000, &t);
            CHECK(t.bad == 0);
            CHECK(t.growth == sb_peak_expected_growth(isa, dt, 1000));
            /* The check is count-sensitive: one trip more or less is a
             * different number. */
            CHECK(t.growth != sb_peak_expected_growth(isa, dt, 999));
            CHECK(t.growth != sb_peak_expected_growth(isa, dt, 1001));
            kernels_run++;
        }
    }
    CHECK(kernels_run >= 2);
    /* Crossing a chunk boundary keeps fp32 exact: 2^20 + 3 trips. */
    {
        int isa = sb_isa_best(mask);
        sb_peak_tally t = {0, 0};
        uint64_t trips = (uint64_t)SB__PEAK_CHUNK + 3;
        sb_peak_kernel(isa, SB__DT_FP32, trips, &t);
        CHECK(t.bad == 0);
        CHECK(t.growth == sb_peak_expected_growth(isa, SB__DT_FP32, trips));
        if (isa == sb_bf16_dot_isa() && sb_bf16_dot_supported()) {
            sb_peak_tally tb = {0, 0};
            sb_peak_kernel(isa, SB__DT_BF16, trips, &tb);
            CHECK(tb.bad == 0);
            CHECK(tb.growth ==
                  sb_peak_expected_growth(isa, SB__DT_BF16, trips));
        }
    }

    /* ---- the FLOPs-per-cycle table, on made-up CPUs: vendor, family,
     * model (and what else the table reads) -> FLOPs per cycle per core */
    unsigned m2 = (1u << SB__ISA_SCALAR) | (1u << SB__ISA_AVX2);
    unsigned m5 = m2 | (1u << SB__ISA_AVX512);
    unsigned marm =
        (1u << SB__ISA_SCALAR) | (1u << SB__ISA_NEON) | (1u << SB__ISA_SVE);
    sb_uarch u;
    sb_uarch_lookup(&u, &(sb_cpu_facts){"AMD", 0x19, 0x01, 1, "", false, m2,
                                        false, false}); /* Milan */
    CHECK(strcmp(u.name, "Zen 3") == 0 && !u.assumed);
    CHECK(u.fpc[SB__ISA_SCALAR][SB__DT_FP64] == 4 &&
          u.fpc[SB__ISA_SCALAR][SB__DT_FP32] == 4);
    CHECK(u.fpc[SB__ISA_AVX2][SB__DT_FP64] == 16 &&
          u.fpc[SB__ISA_AVX2][SB__DT_FP32] == 32);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 0); /* not in the mask */
    CHECK(strstr(u.source[SB__ISA_AVX2], "256-bit") != NULL);
    /* Zen 4: 512-bit ops double-pumped; vdpbf16ps zmm once a cycle. */
    sb_uarch_lookup(&u, &(sb_cpu_facts){"AMD", 0x19, 0x11, 1, "", false, m5,
                                        true, false}); /* Genoa */
    CHECK(strcmp(u.name, "Zen 4") == 0);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 16 &&
          u.fpc[SB__ISA_AVX512][SB__DT_FP32] == 32);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_BF16] == 64);
    CHECK(u.fpc[SB__ISA_AVX2][SB__DT_BF16] == 0);
    /* Zen 5: full 512-bit where cpuid says FP512, half without. */
    sb_uarch_lookup(&u, &(sb_cpu_facts){"AMD", 0x1a, 0x02, 0, "", true, m5,
                                        true, false}); /* Turin */
    CHECK(strcmp(u.name, "Zen 5") == 0);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 32 &&
          u.fpc[SB__ISA_AVX512][SB__DT_BF16] == 128);
    sb_uarch_lookup(&u, &(sb_cpu_facts){"AMD", 0x1a, 0x24, 0, "", false, m5,
                                        true, false}); /* Strix */
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 16 &&
          u.fpc[SB__ISA_AVX512][SB__DT_BF16] == 64);
    sb_uarch_lookup(&u, &(sb_cpu_facts){"AMD", 0x17, 0x01, 2, "", false, m2,
                                        false, false}); /* Naples */
    CHECK(u.fpc[SB__ISA_AVX2][SB__DT_FP64] == 8);
    sb_uarch_lookup(&u, &(sb_cpu_facts){"AMD", 0x17, 0x31, 0, "", false, m2,
                                        false, false}); /* Rome */
    CHECK(strcmp(u.name, "Zen 2") == 0 &&
          u.fpc[SB__ISA_AVX2][SB__DT_FP64] == 16);
    /* Skylake-SP: the 512-bit units by SKU, the name by stepping. */
    sb_uarch_lookup(
        &u, &(sb_cpu_facts){"Intel", 6, 0x55, 4,
                            "Intel(R) Xeon(R) Platinum 8160 CPU @ 2.10GHz",
                            false, m5, false, false});
    CHECK(strcmp(u.name, "Skylake-SP") == 0 && !u.assumed);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 32 &&
          u.fpc[SB__ISA_AVX512][SB__DT_FP32] == 64);
    CHECK(u.fpc[SB__ISA_AVX2][SB__DT_FP64] == 16);
    sb_uarch_lookup(&u,
                    &(sb_cpu_facts){"Intel", 6, 0x55, 7,
                                    "Intel(R) Xeon(R) Gold 5218 CPU @ 2.30GHz",
                                    false, m5, false, false});
    CHECK(strcmp(u.name, "Cascade Lake") == 0);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 16);
    sb_uarch_lookup(
        &u,
        &(sb_cpu_facts){"Intel", 6, 0x55, 7,
                        "Intel Xeon Processor (Cascadelake)", false, m5, false,
                        false}); /* a hypervisor's name: SKU unknown */
    CHECK(u.assumed && u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 32);
    sb_uarch_lookup(&u, &(sb_cpu_facts){"Intel", 6, 0x7e, 5, "", false, m5,
                                        false, false}); /* ICL */
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 16);
    /* Emerald Rapids: 2 x 512-bit FMA, vdpbf16ps at half the fp32 rate,
     * AMX tiles at 1024. */
    sb_uarch_lookup(
        &u, &(sb_cpu_facts){"Intel", 6, 0xcf, 2, "", false, m5, true, true});
    CHECK(strcmp(u.name, "Sapphire/Emerald/Granite Rapids") == 0);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 32 &&
          u.fpc[SB__ISA_AVX512][SB__DT_FP32] == 64 &&
          u.fpc[SB__ISA_AVX512][SB__DT_BF16] == 32);
    CHECK(u.amx_bf16 == 1024);
    CHECK(strstr(u.bf16_source, "inferred") != NULL);
    /* The same part under a hypervisor that hides AMX and BF16. */
    sb_uarch_lookup(
        &u, &(sb_cpu_facts){"Intel", 6, 0xcf, 2, "", false, m5, false, false});
    CHECK(u.amx_bf16 == 0 && u.fpc[SB__ISA_AVX512][SB__DT_BF16] == 0);
    /* Alder Lake: P-core figures, marked hybrid; Sierra Forest E-cores. */
    sb_uarch_lookup(
        &u, &(sb_cpu_facts){"Intel", 6, 0x97, 2, "", false, m2, false, false});
    CHECK(u.hybrid && u.fpc[SB__ISA_AVX2][SB__DT_FP64] == 16);
    sb_uarch_lookup(
        &u, &(sb_cpu_facts){"Intel", 6, 0xaf, 3, "", false, m2, false, false});
    CHECK(!u.hybrid && u.fpc[SB__ISA_AVX2][SB__DT_FP64] == 8);
    /* An unknown x86 core: two pipes of the widest width, assumed. */
    sb_uarch_lookup(
        &u, &(sb_cpu_facts){"Intel", 19, 0x01, 0, "", false, m5, false, false});
    CHECK(u.assumed && strstr(u.name, "unknown") != NULL);
    CHECK(u.fpc[SB__ISA_AVX512][SB__DT_FP64] == 32);
    /* Arm Neoverse: NEON and SVE pipes, bfmmla. */
    sb_uarch_lookup(&u, &(sb_cpu_facts){"Arm", 0x41, 0xd0c, 0, "", false, marm,
                                        false, false}); /* N1 */
    CHECK(strcmp(u.name, "Neoverse N1/Cortex-A76") == 0);
    CHECK(u.fpc[SB__ISA_NEON][SB__DT_FP64] == 8 &&
          u.fpc[SB__ISA_NEON][SB__DT_FP32] == 16);
    CHECK(u.fpc[SB__ISA_SVE][SB__DT_FP64] == 0);
    sb_uarch_lookup(&u, &(sb_cpu_facts){"Arm", 0x41, 0xd40, 0, "", false, marm,
                                        true, false}); /* V1 */
    CHECK(u.fpc[SB__ISA_NEON][SB__DT_FP64] == 16 &&
          u.fpc[SB__ISA_SVE][SB__DT_FP64] == 16 &&
          u.fpc[SB__ISA_NEON][SB__DT_BF16] == 128);
    sb_uarch_lookup(&u, &(sb_cpu_facts){"Arm", 0x41, 0xd4f, 0, "", false, marm,
                                        true, false}); /* V2 */
    CHECK(u.fpc[SB__ISA_SVE][SB__DT_FP32] == 32 &&
          u.fpc[SB__ISA_SCALAR][SB__DT_FP64] == 8);
    sb_uarch_lookup(&u, &(sb_cpu_facts){"Arm", 0x41, 0xd49, 0, "", false, marm,
                                        true, false}); /* N2 */
    CHECK(u.fpc[SB__ISA_NEON][SB__DT_BF16] == 64 &&
          u.fpc[SB__ISA_NEON][SB__DT_FP64] == 8);
    /* This machine: a name and a figure for the widest ISA it runs. */
    sb_uarch_detect(&u);
    printf("this CPU: %s, %s %g FLOP/cycle fp64 (%s)\n", u.name,
           sb_isa_name(sb_isa_best(mask)),
           u.fpc[sb_isa_best(mask)][SB__DT_FP64], u.source[sb_isa_best(mask)]);
    CHECK(u.fpc[sb_isa_best(mask)][SB__DT_FP64] > 0);

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
    int rc = sb_peak_drive_mask(&p, &ctx, &out, &err,
                                mask & ~(1u << SB__ISA_AVX512), true);
    CHECK(rc == 0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        CHECK(out.items[0].skipped);
        CHECK(!out.items[0].valid);
        CHECK(out.items[0].n_samples == 0);
        CHECK(sb_test_has_note(
            &out.items[0], "unsupported: avx512 not available on this CPU"));
        CHECK(strcmp(out.items[0].bench, "compute.peak") == 0);
    }
    sb_results_free(&out);
    /* bf16 without the dot product: skipped, saying so. */
    CHECK(one_point("dtype=bf16 cores=1", &p) == 0);
    memset(&out, 0, sizeof out);
    CHECK(sb_peak_drive_mask(&p, &ctx, &out, &err, m5, false) == 0);
    CHECK(out.n == 1 && out.items[0].skipped &&
          sb_test_has_note(&out.items[0],
                           "unsupported: bf16 needs a bf16 dot product"));
    sb_results_free(&out);
    memset(&out, 0, sizeof out);
    CHECK(one_point("dtype=bf16 isa=avx2 cores=1", &p) == 0);
    CHECK(sb_peak_drive_mask(&p, &ctx, &out, &err, m5, true) == 0);
    CHECK(out.n == 1 && out.items[0].skipped &&
          sb_test_has_note(&out.items[0], "isa=avx512"));
    sb_results_free(&out);
    /* NEON on an x86 CPU, and the other way round: skipped. */
    memset(&out, 0, sizeof out);
    unsigned other =
        (mask & (1u << SB__ISA_NEON)) ? SB__ISA_AVX2 : SB__ISA_NEON;
    CHECK(one_point(other == SB__ISA_NEON ? "dtype=fp32 isa=neon cores=1"
                                          : "dtype=fp32 isa=avx2 cores=1",
                    &p) == 0);
    CHECK(sb_peak_drive_mask(&p, &ctx, &out, &err, mask, false) == 0);
    CHECK(out.n == 1 && out.items[0].skipped &&
          sb_test_has_note(&out.items[0], "not available on this CPU"));
    sb_results_free(&out);
    CHECK(sb_peak_lanes(SB__ISA_NEON, SB__DT_FP64) == 2 &&
          sb_peak_lanes(SB__ISA_NEON, SB__DT_FP32) == 4 &&
          sb_peak_lanes(SB__ISA_NEON, SB__DT_BF16) == 16);
    /* Where the CPU has it: a valid bf16 point, counted in bf16 pairs. */
    if (sb_bf16_dot_supported() && (mask & (1u << sb_bf16_dot_isa()))) {
        memset(&out, 0, sizeof out);
        CHECK(one_point("dtype=bf16 cores=1", &p) == 0);
        CHECK(sb_run_point(&sb_bench_compute_peak, NULL, &p, &ctx, &out,
                           &err) == 0);
        CHECK(out.n == 1 && out.items[0].valid);
        CHECK(sb_ceil_get(&ctx.ceil, "peak.bf16") > 0);
        sb_results_free(&out);
    }

    /* ---- one whole point through the runner: valid, a sane figure, the
     * theoretical peak and the ceilings. */
    CHECK(one_point("dtype=fp32 isa=auto cores=all", &p) == 0);
    memset(&out, 0, sizeof out);
    rc = sb_run_point(&sb_bench_compute_peak, NULL, &p, &ctx, &out, &err);
    CHECK(rc == 0);
    CHECK(out.n == 1);
    if (out.n == 1) {
        const sb_result *r = &out.items[0];
        CHECK(r->valid);
        CHECK(!r->skipped);
        CHECK(r->n_samples >= 3);
        double g = sb_test_metric(r, "GFLOPs");
        CHECK(g > 0);
        CHECK(sb_test_metric(r, "GFLOPs_best") >= g);
        /* The theoretical peak needs the core clock; on a loaded machine
         * the clock methods may disagree, and then the result says so
         * instead of giving a figure. */
        const bool clock_known = !sb_test_has_note(
            r, "no theoretical peak: the core clock is uncertain");
        CHECK(clock_known ? sb_test_metric(r, "theoretical_GFLOPs") > 0
                          : sb_test_metric(r, "theoretical_GFLOPs") < 0);
        CHECK(sb_test_metric(r, "flops_per_cycle") > 0);
        CHECK(sb_test_has_note(r, "isa=auto ran the"));
        /* GFLOPs is the FLOPs of one iteration (a whole number of trips)
         * over the median time. */
        double trip = sb_peak_flops_per_trip(sb_isa_best(mask), SB__DT_FP32, 1);
        double f = sb_test_metric(r, "flops");
        CHECK(f >= 256 * trip);
        CHECK(fmod(f, trip) == 0);
        CHECK_NEAR(g, f / r->stats.p50 * 1e-9, 1e-12);
        /* Samples are sized to ~20 ms, far above the 1 ms a slow first
         * call could otherwise fix (the margin allows for load). */
        CHECK(r->stats.min * sb_test_metric(r, "inner_iters") > 2e-3);
        CHECK_NEAR(sb_ceil_get(&ctx.ceil, "peak.fp32"),
                   sb_test_metric(r, "GFLOPs_best") * 1e9, 1e-12);
        CHECK(clock_known
                  ? sb_ceil_get(&ctx.ceil, "peak.fp32.theoretical") > 0
                  : sb_ceil_get(&ctx.ceil, "peak.fp32.theoretical") == 0);
        CHECK(sb_ceil_get(&ctx.ceil, "peak.fp64") == 0);
    }
    sb_results_free(&out);
    return sb_check_done();
}
