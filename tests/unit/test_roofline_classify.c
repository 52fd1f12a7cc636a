/*
 * test_roofline_classify.c — the roofline table on a labelled set of
 * kernels with hand-computed ceilings: STREAM kernels memory-bound, a
 * large GEMM compute-bound, a small (GEMV-shaped) GEMM and an elementwise
 * op memory-bound, a small all-reduce latency-bound and a large one
 * network-bound, a host transfer host-bound; ridge points by hand; the
 * memory level chosen by working set; ceilings rebuilt from a run.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "check.h"
#include "solbench/hw.h"
#include "solbench/report.h"

static void param(sb_result *r, const char *name, const char *text,
                  sb_ptype type, double num)
{
    sb_pval *v = &r->params.v[r->params.n++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    snprintf(v->text, sizeof v->text, "%s", text);
    v->type = type;
    v->num = num;
}

static void mk(sb_result *r, const char *bench, const char *area)
{
    sb_result_init(r, bench, area, "cpu");
    r->valid = true;
}

/* a decode GEMM over 768 x 2048 fp32 weights multiplied in turn
 * (rotate=1) at `rows`, its weight rate best and median (GB/s) */
/* an llm point of 16 rows over 768 x 2048, rotated or not */
static void llm_point(sb_run *run, int rotate, double best, double median)
{
    sb_result *a = sb_results_push(&run->results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp32", SB_P_STR, 0);
    param(a, "shape", "llm", SB_P_STR, 0);
    param(a, "tokens", "16", SB_P_INT, 16);
    param(a, "d_model", "768", SB_P_INT, 768);
    param(a, "ffn", "2048", SB_P_INT, 2048);
    param(a, "rotate", rotate ? "1" : "0", SB_P_INT, rotate);
    sb_result_metric(a, "GFLOPs_best", best, "GFLOP/s");
    sb_result_metric(a, "GFLOPs", median, "GFLOP/s");
}

static void rotated(sb_run *run, int rows, double best, double median)
{
    char text[16];
    snprintf(text, sizeof text, "%d", rows);
    sb_result *a = sb_results_push(&run->results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp32", SB_P_STR, 0);
    param(a, "shape", "decode", SB_P_STR, 0);
    param(a, "batch", text, SB_P_INT, rows);
    param(a, "d_model", "768", SB_P_INT, 768);
    param(a, "ffn", "2048", SB_P_INT, 2048);
    param(a, "rotate", "1", SB_P_INT, 1);
    sb_result_metric(a, "weight_GBps_best", best, "GB/s");
    sb_result_metric(a, "weight_GBps", median, "GB/s");
}

int main(void)
{
    /* Ceilings: fp64 100 GFLOP/s, fp32 200 GFLOP/s; L1 400, L2 200,
     * L3 100, DRAM 20 GB/s; all-reduce alpha 5 us, beta 10 GB/s; host link
     * 25 GB/s. */
    sb_ceilings c = {0};
    sb_ceil_set(&c, "peak.fp64", 100e9, "measured");
    sb_ceil_set(&c, "peak.fp32", 200e9, "measured");
    sb_ceil_set(&c, "bw.L1", 400e9, "measured");
    sb_ceil_set(&c, "bw.L2", 200e9, "measured");
    sb_ceil_set(&c, "bw.L3", 100e9, "measured");
    sb_ceil_set(&c, "bw.DRAM", 20e9, "measured");
    sb_ceil_set(&c, "net.allreduce.alpha_s", 5e-6, "measured");
    sb_ceil_set(&c, "net.allreduce.beta_Bps", 10e9, "measured");
    sb_ceil_set(&c, "host.h2d", 25e9, "measured");
    sb_cache_sizes cs = {{64 * 1024.0, 1024 * 1024.0, 32 * 1048576.0}};

    /* Ridge points by hand: 100e9 / 20e9 = 5 FLOP/B (fp64 vs DRAM),
     * 200e9 / 20e9 = 10 (fp32), 100e9 / 400e9 = 0.25 (fp64 vs L1). */
    sb_roof_point rp;
    CHECK(sb_roofline_place(1e9, 1e9, 1.0, 100e9, 20e9, &rp) == 0);
    CHECK_NEAR(rp.ridge, 5.0, 1e-12);
    CHECK(sb_roofline_place(1e9, 1e9, 1.0, 200e9, 20e9, &rp) == 0);
    CHECK_NEAR(rp.ridge, 10.0, 1e-12);
    CHECK(sb_roofline_place(1e9, 1e9, 1.0, 100e9, 400e9, &rp) == 0);
    CHECK_NEAR(rp.ridge, 0.25, 1e-12);

    sb_roof_row o;
    sb_result r;

    /* STREAM triad, 1 GiB of arrays at 15 GB/s: DRAM, 75 % of SOL. */
    mk(&r, "memory.triad", "memory");
    param(&r, "size", "1073741824", SB_P_SIZE, 1073741824.0);
    sb_result_metric(&r, "GBps", 15.0, "GB/s");
    sb_result_metric(&r, "latency_us", 1073741824.0 / 15e9 * 1e6, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_MEMORY);
    CHECK(strcmp(o.ceiling, "bw.DRAM") == 0);
    CHECK_NEAR(o.pct_sol, 75.0, 1e-9);
    /* The same with its 2 FLOPs per 24 bytes: AI 1/12, still memory. */
    sb_result_metric(&r, "GFLOPs", 15.0 / 12.0, "GFLOP/s");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_MEMORY);
    CHECK_NEAR(o.ai, 1.0 / 12.0, 1e-9);
    CHECK_NEAR(o.attainable, 20e9 / 12.0, 1e-6);
    CHECK(o.on_chart);
    sb_result_free(&r);

    /* STREAM copy with a 512 KiB working set at 150 GB/s: lives in L2. */
    mk(&r, "memory.copy", "memory");
    sb_result_metric(&r, "GBps", 150.0, "GB/s");
    sb_result_metric(&r, "latency_us", 524288.0 / 150e9 * 1e6, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(strcmp(o.ceiling, "bw.L2") == 0);
    CHECK_NEAR(o.pct_sol, 75.0, 1e-6);
    /* Without cache sizes: the slowest level not below what it achieved. */
    CHECK(sb_roof_classify(&r, &c, NULL, &o) == 0);
    CHECK(strcmp(o.ceiling, "bw.L2") == 0);
    sb_result_free(&r);

    /* Large GEMM, fp64, n = 4096 in 1.5 s: AI = 2n^3 / (3 n^2 8) = 341,
     * far right of the ridge: compute-bound at 91.6 % of peak. */
    mk(&r, "compute.gemm", "compute");
    param(&r, "dtype", "fp64", SB_P_STR, 0);
    param(&r, "shape", "square", SB_P_STR, 0);
    param(&r, "n", "4096", SB_P_INT, 4096);
    param(&r, "m", "0", SB_P_INT, 0);
    param(&r, "k", "0", SB_P_INT, 0);
    double fl = 2.0 * 4096.0 * 4096.0 * 4096.0;
    sb_result_metric(&r, "GFLOPs", fl / 1.5 / 1e9, "GFLOP/s");
    sb_result_metric(&r, "latency_us", 1.5e6, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_COMPUTE);
    CHECK(strcmp(o.ceiling, "peak.fp64") == 0);
    CHECK_NEAR(o.ai, 4096.0 / 12.0, 1e-9);
    CHECK_NEAR(o.pct_sol, 100.0 * fl / 1.5 / 100e9, 1e-9);
    sb_result_free(&r);

    /* Small GEMM (GEMV-shaped, M = 1, N = K = 4096, fp32): AI about 0.5
     * FLOP/B, below the fp32 ridge of 10: memory-bound. */
    mk(&r, "compute.gemm", "compute");
    param(&r, "dtype", "fp32", SB_P_STR, 0);
    param(&r, "shape", "square", SB_P_STR, 0);
    param(&r, "n", "4096", SB_P_INT, 4096);
    param(&r, "m", "1", SB_P_INT, 1);
    param(&r, "k", "0", SB_P_INT, 0);
    double gb = (4096.0 + 4096.0 * 4096.0) * 4 + 4096.0 * 4;
    double t = gb / 15e9;
    sb_result_metric(&r, "GFLOPs", 2.0 * 4096 * 4096 / t / 1e9, "GFLOP/s");
    sb_result_metric(&r, "latency_us", t * 1e6, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_MEMORY);
    CHECK(strcmp(o.ceiling, "bw.DRAM") == 0);
    CHECK_NEAR(o.ai, 2.0 * 4096 * 4096 / gb, 1e-9);
    CHECK_NEAR(o.pct_sol, 75.0, 1e-6);
    sb_result_free(&r);

    /* Elementwise add (1 FLOP per 12 bytes in fp32), 64 MiB: memory. */
    mk(&r, "ops.add", "ops");
    param(&r, "dtype", "fp32", SB_P_STR, 0);
    sb_result_metric(&r, "GBps", 12.0, "GB/s");
    sb_result_metric(&r, "GFLOPs", 1.0, "GFLOP/s");
    sb_result_metric(&r, "latency_us", 67108864.0 / 12e9 * 1e6, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_MEMORY);
    sb_result_free(&r);

    /* All-reduce of 8 B in 6 us: alpha (5 us) >> S / beta (0.8 ns):
     * latency-bound; SOL = model time / measured. */
    mk(&r, "network.allreduce", "network");
    param(&r, "size", "8", SB_P_SIZE, 8);
    sb_result_metric(&r, "latency_us", 6.0, "us");
    sb_result_metric(&r, "busbw_GBps", 8.0 / 6e-6 / 1e9, "GB/s");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_LATENCY);
    CHECK_NEAR(o.pct_sol, 100.0 * (5e-6 + 8.0 / 10e9) / 6e-6, 1e-9);
    sb_result_free(&r);

    /* All-reduce of 64 MiB in 8 ms: S / beta = 6.7 ms >> alpha:
     * network-bound. The crossover is S = alpha x beta = 50 kB. */
    mk(&r, "network.allreduce", "network");
    param(&r, "size", "67108864", SB_P_SIZE, 67108864.0);
    sb_result_metric(&r, "latency_us", 8000.0, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_NETWORK);
    CHECK_NEAR(o.pct_sol, 100.0 * (5e-6 + 67108864.0 / 10e9) / 8e-3, 1e-9);
    sb_result_free(&r);
    mk(&r, "network.allreduce", "network");
    param(&r, "size", "40000", SB_P_SIZE, 40000.0); /* below 50 kB */
    sb_result_metric(&r, "latency_us", 10.0, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_LATENCY);
    sb_result_free(&r);
    mk(&r, "network.allreduce", "network");
    param(&r, "size", "60000", SB_P_SIZE, 60000.0); /* above 50 kB */
    sb_result_metric(&r, "latency_us", 12.0, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_NETWORK);
    sb_result_free(&r);

    /* Host to device at 20 GB/s over a 25 GB/s link: host-bound, 80 %. */
    mk(&r, "transfer.h2d", "transfer");
    sb_result_metric(&r, "GBps", 20.0, "GB/s");
    sb_result_metric(&r, "latency_us", 100.0, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_HOST);
    CHECK_NEAR(o.pct_sol, 80.0, 1e-9);
    sb_result_free(&r);

    /* FMA peak: no bytes, compute-bound against its dtype. */
    mk(&r, "compute.peak", "compute");
    param(&r, "dtype", "fp32", SB_P_STR, 0);
    sb_result_metric(&r, "GFLOPs", 150.0, "GFLOP/s");
    sb_result_metric(&r, "latency_us", 10.0, "us");
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 0);
    CHECK(o.bound == SB_BOUND_COMPUTE);
    CHECK_NEAR(o.pct_sol, 75.0, 1e-9);
    sb_result_free(&r);

    /* Not kernels: skipped results and sweep summaries are left out. */
    mk(&r, "compute.gemm", "compute");
    r.skipped = true;
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 1);
    sb_result_free(&r);
    mk(&r, "network.allreduce", "network");
    param(&r, "size", "fit", SB_P_STR, 0);
    CHECK(sb_roof_classify(&r, &c, &cs, &o) == 1);
    sb_result_free(&r);

    /* No network ceilings at all: a collective cannot be placed. */
    sb_ceilings bare = {0};
    sb_ceil_set(&bare, "peak.fp64", 1e9, "measured");
    mk(&r, "network.allreduce", "network");
    param(&r, "size", "8", SB_P_SIZE, 8);
    sb_result_metric(&r, "latency_us", 6.0, "us");
    CHECK(sb_roof_classify(&r, &bare, &cs, &o) < 0);
    sb_result_free(&r);

    /* Ceilings rebuilt from a run's results: the best of each kind. */
    sb_run run;
    sb_run_init(&run);
    sb_result *a = sb_results_push(&run.results);
    mk(a, "compute.peak", "compute");
    param(a, "dtype", "fp64", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs", 80.0, "GFLOP/s");
    a = sb_results_push(&run.results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp64", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs", 70.0, "GFLOP/s");
    sb_result_metric(a, "GFLOPs_best", 90.0, "GFLOP/s");
    a = sb_results_push(&run.results);
    mk(a, "memory.sweep", "memory");
    param(a, "kernel", "read", SB_P_STR, 0);
    sb_result_metric(a, "L1_GBps", 300.0, "GB/s");
    sb_result_metric(a, "DRAM_GBps", 18.0, "GB/s");
    a = sb_results_push(&run.results);
    mk(a, "network.allreduce", "network");
    param(a, "size", "fit", SB_P_STR, 0);
    sb_result_metric(a, "alpha_us", 4.0, "us");
    sb_result_metric(a, "beta_GBps", 12.0, "GB/s");
    a = sb_results_push(&run.results);
    mk(a, "compute.peak", "compute"); /* invalid: must not count */
    a->valid = false;
    param(a, "dtype", "fp32", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs", 999.0, "GFLOP/s");
    sb_ceilings m = {0};
    sb_ceil_set(&m, "peak.fp64", 1.0, "datasheet");
    int nset = sb_ceil_from_run(&run, &m);
    CHECK(nset >= 5);
    CHECK_NEAR(sb_ceil_get(&m, "peak.fp64"), 90e9, 1e-9);
    CHECK(sb_ceil_get(&m, "peak.fp32") == 0);
    CHECK_NEAR(sb_ceil_get(&m, "bw.L1"), 300e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&m, "bw.DRAM"), 18e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&m, "net.allreduce.alpha_s"), 4e-6, 1e-12);
    CHECK_NEAR(sb_ceil_get(&m, "net.allreduce.beta_Bps"), 12e9, 1e-9);
    sb_roof_row *rows;
    int n;
    CHECK(sb_roof_table(&run, &m, &rows, &n) == 0);
    /* two peaks (one invalid, flagged) and the GEMM; no sweep, no fit */
    CHECK(n == 3);
    for (int i = 0; n != 3 && i < n; i++)
        fprintf(stderr, "  row %s %s\n", rows[i].bench, rows[i].ceiling);
    CHECK(n == 3 && !rows[2].valid); /* the invalid one stays, flagged */
    free(rows);
    sb_run_free(&run);

    /* Network points against the link: a run's point-to-point streams
     * give net.link.beta (the fastest: bw at 9 GB/s; bibw's 16 GB/s is
     * 8 a direction) and ping-pong's fit net.link.alpha (2 us). */
    sb_run_init(&run);
    a = sb_results_push(&run.results);
    mk(a, "network.bw", "network");
    param(a, "size", "1048576", SB_P_SIZE, 1048576.0);
    param(a, "window", "64", SB_P_INT, 64);
    a->stats.p50 = 64 * 1048576.0 / 9e9; /* a window of 64 messages */
    sb_result_metric(a, "bytes", 64 * 1048576.0, "B");
    sb_result_metric(a, "busbw_factor", 1.0, "");
    sb_result_metric(a, "busbw_GBps", 9.0, "GB/s");
    a = sb_results_push(&run.results);
    mk(a, "network.bibw", "network");
    param(a, "size", "1048576", SB_P_SIZE, 1048576.0);
    a->stats.p50 = 128 * 1048576.0 / 16e9;
    sb_result_metric(a, "bytes", 128 * 1048576.0, "B");
    sb_result_metric(a, "busbw_factor", 1.0, "");
    sb_result_metric(a, "busbw_GBps", 16.0, "GB/s");
    a = sb_results_push(&run.results);
    mk(a, "network.pingpong", "network");
    param(a, "size", "fit", SB_P_STR, 0);
    sb_result_metric(a, "alpha_us", 2.0, "us");
    sb_result_metric(a, "beta_GBps", 5.0, "GB/s");
    a = sb_results_push(&run.results);
    mk(a, "network.allreduce", "network"); /* 4 ranks: factor 1.5 */
    param(a, "size", "16777216", SB_P_SIZE, 16777216.0);
    a->stats.p50 = 5e-3;
    sb_result_metric(a, "bytes", 16777216.0, "B");
    sb_result_metric(a, "busbw_factor", 1.5, "");
    sb_result_metric(a, "latency_us", 5000.0, "us");
    sb_ceilings nl = {0};
    sb_ceil_from_run(&run, &nl);
    CHECK_NEAR(sb_ceil_get(&nl, "net.link.beta_Bps"), 9e9, 1e-3);
    CHECK_NEAR(sb_ceil_get(&nl, "net.link.alpha_s"), 2e-6, 1e-15);
    /* bw: a window's bytes over a window's time, not one message's:
     * 9 GB/s, at 64 MiB / (2 us + 64 MiB / 9 GB/s) */
    CHECK(sb_roof_classify(&run.results.items[0], &nl, &cs, &o) == 0);
    CHECK_NEAR(o.achieved, 9e9, 1e-3);
    CHECK_NEAR(o.pct_sol,
               100.0 * (2e-6 + 64 * 1048576.0 / 9e9) / (64 * 1048576.0 / 9e9),
               1e-9);
    CHECK(o.bound == SB_BOUND_NETWORK);
    CHECK(strcmp(o.ceiling, "net.link.beta") == 0);
    /* bibw against both directions: 16 of 18 GB/s */
    CHECK(sb_roof_classify(&run.results.items[1], &nl, &cs, &o) == 0);
    CHECK_NEAR(o.achieved, 16e9, 1e-3);
    CHECK_NEAR(o.attainable, 128 * 1048576.0 / (2e-6 + 128 * 1048576.0 / 18e9),
               1e-3);
    /* the all-reduce: bus bandwidth S x 1.5 / t = 5.03 GB/s, against
     * t = alpha + S x 1.5 / beta */
    CHECK(sb_roof_classify(&run.results.items[3], &nl, &cs, &o) == 0);
    CHECK_NEAR(o.achieved, 16777216.0 * 1.5 / 5e-3, 1e-3);
    CHECK_NEAR(o.pct_sol, 100.0 * (2e-6 + 16777216.0 * 1.5 / 9e9) / 5e-3, 1e-9);
    sb_run_free(&run);

    /* A decode-shaped GEMM feeds gemv.<dtype> (its weights' rate), never
     * the FLOP/s ceilings; the other shapes feed gemm.<dtype> and peak. */
    sb_run_init(&run);
    a = sb_results_push(&run.results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp32", SB_P_STR, 0);
    param(a, "shape", "decode", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs_best", 5.0, "GFLOP/s");
    sb_result_metric(a, "weight_GBps_best", 30.0, "GB/s");
    a = sb_results_push(&run.results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp32", SB_P_STR, 0);
    param(a, "shape", "square", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs_best", 150.0, "GFLOP/s");
    sb_ceilings m2 = {0};
    CHECK(sb_ceil_from_run(&run, &m2) == 3);
    CHECK_NEAR(sb_ceil_get(&m2, "gemv.fp32"), 30e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&m2, "gemm.fp32"), 150e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&m2, "peak.fp32"), 150e9, 1e-9);
    /* what each kernel sustains: the same ceilings at the medians, each
     * decode GEMM's rows at its own (a 4-row point's median is not the
     * 1-row one's scaled) */
    sb_result_metric(&run.results.items[0], "weight_GBps", 21.0, "GB/s");
    sb_result_metric(&run.results.items[1], "GFLOPs", 120.0, "GFLOP/s");
    param(&run.results.items[0], "batch", "1", SB_P_INT, 1);
    a = sb_results_push(&run.results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp32", SB_P_STR, 0);
    param(a, "shape", "decode", SB_P_STR, 0);
    param(a, "batch", "4", SB_P_INT, 4);
    sb_result_metric(a, "weight_GBps_best", 16.0, "GB/s");
    sb_result_metric(a, "weight_GBps", 15.0, "GB/s");
    a = sb_results_push(&run.results);
    mk(a, "memory.read", "memory");
    sb_result_metric(a, "GBps_best", 25.0, "GB/s");
    sb_result_metric(a, "GBps", 22.0, "GB/s");
    sb_ceilings best = {0}, med = {0};
    sb_ceil_from_run(&run, &best);
    sb_ceil_from_run_sustained(&run, &med);
    CHECK_NEAR(sb_ceil_get(&best, "gemv.fp32@1"), 30e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&best, "gemv.fp32@4"), 16e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&best, "bw.read"), 25e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&med, "gemv.fp32@1"), 21e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&med, "gemv.fp32@4"), 15e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&med, "gemm.fp32"), 120e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&med, "peak.fp32"), 120e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&med, "bw.read"), 22e9, 1e-9);
    /* the machine's interruptions: their rate and sizes, in seconds */
    a = sb_results_push(&run.results);
    mk(a, "compute.noise", "compute");
    sb_result_metric(a, "interrupts_per_s", 8.5, "1/s");
    sb_result_metric(a, "interrupt_min_us", 260.0, "us");
    sb_result_metric(a, "interrupt_p50_us", 640.0, "us");
    sb_result_metric(a, "interrupt_p90_us", 2000.0, "us");
    sb_result_metric(a, "interrupt_p99_us", 7300.0, "us");
    sb_result_metric(a, "interrupt_max_us", 9900.0, "us");
    sb_ceilings nz = {0};
    sb_ceil_from_run_sustained(&run, &nz);
    CHECK_NEAR(sb_ceil_get(&nz, "noise.rate"), 8.5, 1e-12);
    CHECK_NEAR(sb_ceil_get(&nz, "noise.p0_s"), 260e-6, 1e-15);
    CHECK_NEAR(sb_ceil_get(&nz, "noise.p99_s"), 7.3e-3, 1e-15);
    CHECK_NEAR(sb_ceil_get(&nz, "noise.max_s"), 9.9e-3, 1e-15);
    CHECK(strcmp(sb_ceil_unit("noise.rate"), "1/s") == 0);
    CHECK(strcmp(sb_ceil_unit("noise.p50_s"), "s") == 0);
    /* small weights multiplied in turn (rotate=1): no gemv.<dtype>, but a
     * cost a product beyond the one-matrix stream at the same rows; a
     * product faster than that stream costs 0, not less */
    rotated(&run, 1, 20.0, 15.0);
    rotated(&run, 4, 35.0, 35.0);
    sb_ceilings rb = {0}, rm = {0};
    sb_ceil_from_run(&run, &rb);
    sb_ceil_from_run_sustained(&run, &rm);
    const double wb = 768.0 * 2048 * 4;
    CHECK_NEAR(sb_ceil_get(&rb, "gemv.fp32"), 30e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&rb, "gemv.fp32@4"), 16e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&rb, "gemv.call.fp32@1"), wb / 20e9 - wb / 30e9,
               1e-15);
    /* sustained: the best samples' cost, slowed as the point's median is
     * (20 over 15 GB/s), not the difference of two medians */
    CHECK_NEAR(sb_ceil_get(&rm, "gemv.call.fp32@1"),
               (wb / 20e9 - wb / 30e9) * 20 / 15, 1e-15);
    CHECK(sb_ceil_get(&rb, "gemv.call.fp32@4") == 0 &&
          strcmp(sb_ceil_source(&rb, "gemv.call.fp32@4"), "measured") == 0);
    CHECK_NEAR(sb_ceil_get(&rb, "gemv.call.fp32"), wb / 20e9 - wb / 30e9,
               1e-15);
    CHECK(strcmp(sb_ceil_unit("gemv.call.fp32@1"), "s") == 0);
    /* the same on the GEMM side (shape=llm): an expert's 16 rows over
     * 768 x 2048 weights in turn at 60 GFLOP/s (best) and 50 (median),
     * one matrix at 16 rows 90 and 80: the FLOPs' time beyond it; no
     * gemm.<dtype>, gemm.<dtype>@16 or peak from the rotated point */
    llm_point(&run, 0, 90.0, 80.0);
    llm_point(&run, 1, 60.0, 50.0);
    sb_ceilings lb = {0}, gm = {0};
    sb_ceil_from_run(&run, &lb);
    sb_ceil_from_run_sustained(&run, &gm);
    const double flp = 2.0 * 16 * 768 * 2048;
    CHECK_NEAR(sb_ceil_get(&lb, "gemm.fp32@16"), 90e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&gm, "gemm.fp32@16"), 80e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&lb, "gemm.fp32"), 150e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&lb, "gemm.call.fp32@16"), flp / 60e9 - flp / 90e9,
               1e-15);
    CHECK_NEAR(sb_ceil_get(&gm, "gemm.call.fp32@16"),
               (flp / 60e9 - flp / 90e9) * 60 / 50, 1e-15);
    CHECK_NEAR(sb_ceil_get(&lb, "gemm.call.fp32"), flp / 60e9 - flp / 90e9,
               1e-15);
    CHECK(strcmp(sb_ceil_unit("gemm.call.fp32@16"), "s") == 0);
    CHECK(strcmp(sb_ceil_unit("gemm.fp32@16"), "FLOP/s") == 0);
    /* the rotated point alone at its rows sets no gemm.fp32@M */
    run.results.items[run.results.n - 2].params.v[2].num = 24;
    snprintf(run.results.items[run.results.n - 2].params.v[2].text,
             sizeof run.results.items[0].params.v[2].text, "24");
    sb_ceilings g24 = {0};
    sb_ceil_from_run(&run, &g24);
    CHECK(sb_ceil_get(&g24, "gemm.fp32@16") == 0);
    CHECK_NEAR(sb_ceil_get(&g24, "gemm.fp32@24"), 90e9, 1e-9);
    /* its cost now against the nearest rows measured (24): the same */
    CHECK_NEAR(sb_ceil_get(&g24, "gemm.call.fp32@16"), flp / 60e9 - flp / 90e9,
               1e-15);
    /* weights that fit 4x the LLC (the point's note says so) stream partly
     * from the caches: a faster rate at new rows sets neither gemv.fp32
     * nor gemv.fp32@8 */
    a = sb_results_push(&run.results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp32", SB_P_STR, 0);
    param(a, "shape", "decode", SB_P_STR, 0);
    param(a, "batch", "8", SB_P_INT, 8);
    sb_result_metric(a, "weight_GBps_best", 158.0, "GB/s");
    sb_result_metric(a, "weight_GBps", 150.0, "GB/s");
    sb_result_note(a, "decode: 8 tokens x weights 256 x 512 (0 MiB, 0.0x "
                      "the last-level cache): not a DRAM figure (< 4x), no "
                      "gemv ceiling");
    sb_ceilings cached = {0};
    sb_ceil_from_run(&run, &cached);
    CHECK_NEAR(sb_ceil_get(&cached, "gemv.fp32"), 30e9, 1e-9);
    CHECK(sb_ceil_get(&cached, "gemv.fp32@8") == 0);
    /* the same point past 4x the LLC is a DRAM figure, and sets both */
    free(a->notes[--a->n_notes]);
    sb_result_note(a, "decode: 8 tokens x weights 256 x 131072 (128 MiB, "
                      "4.0x the last-level cache): a DRAM figure");
    sb_ceilings dram = {0};
    sb_ceil_from_run(&run, &dram);
    CHECK_NEAR(sb_ceil_get(&dram, "gemv.fp32"), 158e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&dram, "gemv.fp32@8"), 158e9, 1e-9);
    /* paged decode at 1 sequence a call (17 us median, 12 best) and at 12
     * (36, 30): t = alpha + b beta, alpha = (12 x 12 - 30) / 11 s-units
     * from the best samples; sustained, that slowed as the one-sequence
     * point's median is (17 over 12), not the fit of two medians; another
     * head count is no pair of theirs */
    for (int q = 0; q < 3; q++) {
        a = sb_results_push(&run.results);
        mk(a, "attention.paged_decode", "attention");
        const char *bt[3] = {"1", "12", "4"};
        double bn[3] = {1, 12, 4}, tmed[3] = {17e-6, 36e-6, 1e-6},
               tbest[3] = {12e-6, 30e-6, 1e-6};
        param(a, "batch", bt[q], SB_P_INT, bn[q]);
        param(a, "lens", "uniform:72:72", SB_P_STR, 0);
        param(a, "q_heads", q == 2 ? "8" : "12", SB_P_INT, q == 2 ? 8 : 12);
        param(a, "chunk", "0", SB_P_INT, 0);
        a->stats.p50 = tmed[q];
        a->stats.min = tbest[q];
    }
    sb_ceilings ab = {0}, am = {0};
    sb_ceil_from_run(&run, &ab);
    sb_ceil_from_run_sustained(&run, &am);
    CHECK_NEAR(sb_ceil_get(&am, "attn.call"),
               (12e-6 * 12 - 30e-6) / 11 * 17 / 12, 1e-15);
    CHECK_NEAR(sb_ceil_get(&ab, "attn.call"), (12e-6 * 12 - 30e-6) / 11, 1e-15);
    CHECK(strcmp(sb_ceil_unit("attn.call"), "s") == 0);
    /* a call no dearer than its share: 0, not less */
    run.results.items[run.results.n - 3].stats.p50 = 2e-6;
    run.results.items[run.results.n - 3].stats.min = 2e-6;
    sb_ceilings a0 = {0};
    sb_ceil_from_run_sustained(&run, &a0);
    CHECK(sb_ceil_get(&a0, "attn.call") == 0 &&
          strcmp(sb_ceil_source(&a0, "attn.call"), "measured") == 0);
    /* a figure past double's range once scaled (1e308 GB/s) sets no
     * ceiling: an infinite roof would stretch every chart's axes without
     * end (a fuzzed document did) */
    a = sb_results_push(&run.results);
    mk(a, "memory.sweep", "memory");
    param(a, "kernel", "read", SB_P_STR, 0);
    sb_result_metric(a, "L2_GBps", 1e308, "GB/s");
    sb_result_metric(a, "L3_GBps", 80.0, "GB/s");
    sb_ceilings inf = {0};
    sb_ceil_from_run(&run, &inf);
    CHECK(sb_ceil_get(&inf, "bw.L2") == 0 &&
          sb_ceil_get(&inf, "bw.L3") == 80e9);
    CHECK(strcmp(sb_ceil_unit("gemv.fp32@1"), "B/s") == 0);
    sb_run_free(&run);

    /* A run of two machines (the host's CPU and a GPU) gives the GPU's
     * ceilings alone: never the CPU's GEMM under the GPU's bandwidth, nor
     * the host's memory as the GPU's capacity. */
    sb_run_init(&run);
    json_object_set_new(run.system, "memory",
                        json_pack("{s:f}", "bytes", 64e9));
    a = sb_results_push(&run.results);
    mk(a, "compute.gemm", "compute");
    param(a, "dtype", "fp32", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs_best", 150.0, "GFLOP/s");
    a = sb_results_push(&run.results);
    mk(a, "memory.read", "memory");
    sb_result_metric(a, "GBps_best", 20.0, "GB/s");
    a = sb_results_push(&run.results);
    sb_result_init(a, "compute.gemm", "compute", "cuda");
    a->valid = true;
    param(a, "dtype", "bf16", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs_best", 700e3, "GFLOP/s");
    a = sb_results_push(&run.results);
    sb_result_init(a, "memory.read", "memory", "cuda");
    a->valid = true;
    sb_result_metric(a, "GBps_best", 4400.0, "GB/s");
    CHECK(strcmp(sb_run_device_family(&run), "cuda") == 0);
    sb_ceilings m3 = {0};
    CHECK(sb_ceil_from_run(&run, &m3) == 3); /* peak, gemm, read */
    CHECK_NEAR(sb_ceil_get(&m3, "gemm.bf16"), 700e12, 1e-9);
    CHECK(sb_ceil_get(&m3, "gemm.fp32") == 0);
    CHECK_NEAR(sb_ceil_get(&m3, "bw.read"), 4400e9, 1e-9);
    CHECK(sb_ceil_get(&m3, "mem.bytes") == 0);
    /* without the GPU's results: the host's, with its memory */
    run.results.items[2].valid = run.results.items[3].valid = false;
    CHECK(strcmp(sb_run_device_family(&run), "host") == 0);
    sb_ceilings m4 = {0};
    CHECK(sb_ceil_from_run(&run, &m4) == 4);
    CHECK_NEAR(sb_ceil_get(&m4, "bw.read"), 20e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&m4, "mem.bytes"), 64e9, 1e-9);
    /* PJRT results of the CPU plugin are the host's machine measured
     * another way: not a device; of a TPU plugin, the device */
    a = sb_results_push(&run.results);
    sb_result_init(a, "memory.read", "memory", "pjrt");
    a->valid = true;
    sb_result_metric(a, "GBps_best", 800.0, "GB/s");
    json_object_set_new(
        run.system, "pjrt",
        json_pack("{s:s,s:f}", "platform", "cpu", "device_memory_bytes", 16e9));
    CHECK(strcmp(sb_run_device_family(&run), "host") == 0);
    json_object_set_new(
        run.system, "pjrt",
        json_pack("{s:s,s:f}", "platform", "tpu", "device_memory_bytes", 16e9));
    CHECK(strcmp(sb_run_device_family(&run), "pjrt") == 0);
    sb_ceilings m5 = {0};
    CHECK(sb_ceil_from_run(&run, &m5) == 2);
    CHECK_NEAR(sb_ceil_get(&m5, "bw.read"), 800e9, 1e-9);
    CHECK_NEAR(sb_ceil_get(&m5, "mem.bytes"), 16e9, 1e-9);
    /* A calibration from that run against a TPU datasheet: the median
     * rates over the datasheet's (v5e: 819 GB/s HBM) */
    sb_hw_spec tpu;
    sb_err e2 = {0};
    CHECK(sb_hw_load("tpu-v5e", &tpu, &e2) == 0);
    double eff[SB_CALIB_N];
    char src[400];
    a = sb_results_push(&run.results);
    sb_result_init(a, "compute.gemm", "compute", "pjrt");
    a->valid = true;
    param(a, "dtype", "bf16", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs", 150e3, "GFLOP/s");
    sb_result_metric(a, "GFLOPs_best", 170e3, "GFLOP/s");
    a = sb_results_push(&run.results);
    sb_result_init(a, "memory.read", "memory", "pjrt");
    a->valid = true;
    sb_result_metric(a, "GBps", 700.0, "GB/s");
    CHECK(sb_calib_from_run(&run, &tpu, eff, NULL, src, sizeof src, &e2) == 2);
    CHECK_NEAR(eff[SB_CALIB_MATMUL], 150e12 / 197e12, 1e-12);
    CHECK_NEAR(eff[SB_CALIB_MEMORY], 700.0 / 819.0, 1e-12);
    CHECK(eff[SB_CALIB_ATTENTION] == 0 && eff[SB_CALIB_NETWORK] == 0);
    CHECK(strstr(src, "tpu-v5e") != NULL);
    /* one dtype: no efficiency per dtype said */
    sb_calib_dtypes by;
    CHECK(sb_calib_from_run(&run, &tpu, eff, &by, src, sizeof src, &e2) == 2);
    CHECK(by.n == 1 && strstr(src, "GEMM") == NULL);
    /* an int8 GEMM besides (394 TOP/s on v5e): matmul the widest-peaked
     * dtype's, and each dtype's own over its own peak */
    a = sb_results_push(&run.results);
    sb_result_init(a, "compute.gemm", "compute", "pjrt");
    a->valid = true;
    param(a, "dtype", "int8", SB_P_STR, 0);
    sb_result_metric(a, "GFLOPs", 200e3, "GFLOP/s");
    CHECK(sb_calib_from_run(&run, &tpu, eff, &by, src, sizeof src, &e2) == 2);
    CHECK_NEAR(eff[SB_CALIB_MATMUL], 200e12 / 394e12, 1e-12);
    CHECK(by.n == 2 && strcmp(by.dtype[0], "bf16") == 0 &&
          strcmp(by.dtype[1], "int8") == 0);
    CHECK_NEAR(by.eff[0], 150e12 / 197e12, 1e-12);
    CHECK_NEAR(by.eff[1], 200e12 / 394e12, 1e-12);
    CHECK(strstr(src, "; bf16 GEMM 0.761, int8 GEMM 0.508") != NULL);
    run.results.n--; /* the int8 point out again */
    sb_result_free(a);
    /* a collective: its median bus bandwidth over the scale-up link
     * (ICI) within a host, over a chip's share of the host's scale-out
     * (DCN) across hosts */
    a = sb_results_push(&run.results);
    sb_result_init(a, "network.allreduce", "network", "pjrt");
    a->valid = true;
    sb_result_metric(a, "busbw_GBps", 30.0, "GB/s");
    CHECK(sb_calib_from_run(&run, &tpu, eff, NULL, src, sizeof src, &e2) == 3);
    CHECK(tpu.scaleup_Bps > 30e9);
    CHECK_NEAR(eff[SB_CALIB_NETWORK], 30e9 / tpu.scaleup_Bps, 1e-12);
    CHECK(strstr(src, "collective busbw median") != NULL);
    json_t *cfg = json_pack("{s:{s:i}}", "topology", "hosts", 2);
    json_t *saved = run.config;
    run.config = cfg;
    double dcn = tpu.scaleout_Bps_node / tpu.chips_per_node;
    sb_result_metric(a, "busbw_GBps", 0.5 * dcn / 1e9, "GB/s");
    CHECK(sb_calib_from_run(&run, &tpu, eff, NULL, src, sizeof src, &e2) == 3);
    CHECK_NEAR(eff[SB_CALIB_NETWORK], 0.5, 1e-12);
    /* 16 ranks on the 2 hosts: the two-level all-reduce's speed of light,
     * 2*15/16 of S over max(2*7/8 / ICI, 2*(1/2)/8 / a chip's DCN) */
    sb_result_metric(a, "ranks", 16, "");
    double sol = 2.0 * 15 / 16 / fmax(1.75 / tpu.scaleup_Bps, 0.125 / dcn);
    sb_result_metric(a, "busbw_GBps", 0.5 * sol / 1e9, "GB/s");
    CHECK(sb_calib_from_run(&run, &tpu, eff, NULL, src, sizeof src, &e2) == 3);
    CHECK_NEAR(eff[SB_CALIB_NETWORK], 0.5, 1e-12);
    run.config = saved;
    json_decref(cfg);
    /* the host's run against a TPU's datasheet: refused */
    json_object_set_new(run.system, "pjrt",
                        json_pack("{s:s}", "platform", "cpu"));
    CHECK(sb_calib_from_run(&run, &tpu, eff, NULL, src, sizeof src, &e2) ==
          SB_EINVAL);
    CHECK(strstr(e2.msg, "host's CPU") != NULL);
    sb_run_free(&run);
    CHECK(strcmp(sb_ceil_unit("gemv.bf16"), "B/s") == 0);
    CHECK(strcmp(sb_ceil_unit("gemm.fp32"), "FLOP/s") == 0);
    CHECK(strcmp(sb_ceil_unit("net.allreduce.beta_Bps"), "B/s") == 0);
    CHECK(strcmp(sb_ceil_unit("net.allreduce.alpha_s"), "s") == 0);

    /* The chart: an SVG with one roof per level and per dtype. */
    sb_buf b = {0};
    sb_roof_row pts[1];
    memset(pts, 0, sizeof pts);
    snprintf(pts[0].bench, sizeof pts[0].bench, "compute.gemm");
    pts[0].on_chart = true;
    pts[0].ai = 341;
    pts[0].achieved = 91e9;
    pts[0].bound = SB_BOUND_COMPUTE;
    sb_svg_roofline(&b, &c, pts, 1, 800, 500);
    CHECK(b.s && strstr(b.s, "<svg") && strstr(b.s, "</svg>"));
    CHECK(b.s && strstr(b.s, "L3 100 GB/s"));
    CHECK(b.s && strstr(b.s, "fp32 200 GFLOP/s"));
    CHECK(b.s && strstr(b.s, "<circle"));
    CHECK(b.s && strstr(b.s, "Arithmetic intensity (FLOP/byte)"));
    sb_buf_free(&b);

    /* Text from results goes into the HTML escaped. */
    sb_buf e = {0};
    sb_buf_esc(&e, "<script>\"a&b\"</script>");
    CHECK(e.s &&
          strcmp(e.s, "&lt;script&gt;&quot;a&amp;b&quot;&lt;/script&gt;") == 0);
    sb_buf_free(&e);
    return sb_check_done();
}
