/*
 * test_stability.c — the stability verdict on synthetic samples and
 * contexts: a steady figure is stable; a wide spread, two clusters, a
 * drift between the first and the last third, far outliers, another load,
 * stolen time and a clock that moved each make it unstable with a reason
 * that names what was seen; the context from two snapshots; remedies that
 * fit the flags; the verdict survives the run document.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "check.h"
#include "solbench/output.h"
#include "solbench/runner.h"
#include "solbench/stability.h"
#include "solbench/util.h"

static void fill(sb_result *r, const double *x, size_t n)
{
    sb_result_init(r, "memory.read", "memory", "cpu");
    for (size_t i = 0; i < n; i++)
        sb_result_add_sample(r, x[i]);
    sb_result_finish_stats(r);
    r->valid = true;
}

/* n samples around m with a relative jitter j (deterministic). */
static void steady(double *x, size_t n, double m, double j, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = m * (1 + j * (2 * sb_rng_unif(&seed) - 1));
}

static const sb_stab_ctx quiet = {0, 0, 0, 0, 0};

/* A result of bench with one parameter set from its definition. */
static sb_result *push(sb_result_list *l, const char *bench, const char *key,
                       const char *val)
{
    sb_result *r = sb_results_push(l);
    sb_result_init(r, bench, "compute", "cpu");
    const sb_bench *b = sb_bench_find(bench, "cpu");
    const sb_impl *im = b ? sb_impl_find(b, "cpu") : NULL;
    /* every parameter at its default, then key=val */
    sb_param_def defs[SB_MAX_PARAMS];
    int nd = b ? sb_params_of(b, im, defs, SB_MAX_PARAMS) : 0;
    for (int i = 0; i < nd; i++) {
        sb_pval *v = &r->params.v[r->params.n++];
        const char *text = strcmp(defs[i].name, key) == 0 ? val : defs[i].def;
        if (!text || strchr(text, ',') ||
            sb_parse_value(&defs[i], text, v, NULL) != 0) {
            r->params.n--;
            continue;
        }
    }
    for (int i = 0; i < 5; i++)
        sb_result_add_sample(r, 1e-3);
    sb_result_finish_stats(r);
    r->valid = true;
    return r;
}

/* A GEMM above the peak: the peak is measured again (for real), MFU taken
 * again; what stays above is flagged with the peak's result. */
static void test_consistency(void)
{
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    ctx.min_time = 0.05;
    ctx.repeat = 3;
    ctx.threads = 1;
    /* a peak ceiling far too low, as if measured in a slow stretch */
    sb_ceil_set(&ctx.ceil, "peak.fp32", 1e9, "measured");
    sb_result_list l = {0};
    sb_result *pk = push(&l, "compute.peak", "dtype", "fp32");
    sb_result_metric(pk, "GFLOPs_best", 1.0, "GFLOP/s");
    sb_result *g = push(&l, "compute.gemm", "dtype", "fp32");
    sb_result_metric(g, "GFLOPs", 5.0, "GFLOP/s");
    sb_result_metric(g, "MFU", 5.0, "ratio");
    sb_run_check_consistency(&ctx, &l);
    /* the peak measured again is far above 1 GFLOP/s: MFU well below 1 */
    double peak = sb_ceil_get(&ctx.ceil, "peak.fp32");
    CHECK(peak > 5e9);
    g = &l.items[1];
    CHECK(sb_result_get(g, "MFU") && sb_result_get(g, "MFU")->value < 1.0);
    CHECK(!(g->stab_flags & SB_UNSTABLE_CEILING));
    CHECK(l.n == 2); /* replaced, not appended */
    CHECK(l.items[0].n_notes > 0 &&
          strstr(l.items[0].notes[l.items[0].n_notes - 1],
                 "measured again beside compute.gemm dtype=fp32"));
    /* a figure no peak reaches: flagged, and so is the peak */
    sb_result_metric(g, "GFLOPs", 1e9, "GFLOP/s");
    sb_result_metric(g, "MFU", 1e9 * 1e9 / peak, "ratio");
    sb_run_check_consistency(&ctx, &l);
    CHECK(l.items[1].stab_flags & SB_UNSTABLE_CEILING);
    CHECK(!l.items[1].stable &&
          strstr(l.items[1].stab_why, "above its own ceiling: MFU"));
    CHECK(l.items[0].stab_flags & SB_UNSTABLE_CEILING);
    /* a result placed above its roof */
    sb_result *m = sb_results_push(&l);
    sb_result_init(m, "ops.rmsnorm", "ops", "cpu");
    sb_result_metric(m, "pct_SOL", 130, "%");
    sb_run_check_consistency(&ctx, &l);
    CHECK(l.items[2].stab_flags & SB_UNSTABLE_CEILING);
    sb_results_free(&l);
}

int main(void)
{
    double x[64];
    sb_result r;

    /* steady: 2 % jitter, nothing around it */
    steady(x, 30, 1e-3, 0.02, 1);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    CHECK(r.stab_judged && r.stable && r.stab_flags == 0);
    CHECK(r.stab_why[0] == '\0');
    sb_result_free(&r);

    /* a wide spread: cv about 29 % */
    steady(x, 30, 1e-3, 0.5, 2);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    CHECK(!r.stable && (r.stab_flags & SB_UNSTABLE_CV));
    CHECK(strstr(r.stab_why, "cv ") != NULL);
    sb_result_free(&r);

    /* two clusters: 20 samples at 1.00 ms, 10 at 1.30 ms, 1 % jitter
     * each, shuffled in time (no drift) */
    for (int i = 0; i < 30; i++)
        x[i] = (i % 3 == 2 ? 1.3e-3 : 1e-3) * (1 + 0.01 * ((i * 7) % 5) / 5);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    CHECK(r.stab_flags & SB_UNSTABLE_BIMODAL);
    CHECK(!(r.stab_flags & SB_UNSTABLE_DRIFT));
    CHECK(strstr(r.stab_why, "two clusters 2") != NULL); /* ~28 % apart */
    sb_result_free(&r);

    /* drift: the samples slow down steadily by 30 % (cv stays ~9 %) */
    for (int i = 0; i < 30; i++)
        x[i] = 1e-3 * (1 + 0.3 * i / 29.0);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    CHECK(r.stab_flags & SB_UNSTABLE_DRIFT);
    CHECK(strstr(r.stab_why, "slowed") != NULL);
    sb_result_free(&r);
    /* ... and a speed-up is named so */
    for (int i = 0; i < 30; i++)
        x[i] = 1e-3 * (1.3 - 0.3 * i / 29.0);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    CHECK(strstr(r.stab_why, "sped up") != NULL);
    sb_result_free(&r);

    /* far outliers: 4 of 20 samples at 10x (the median holds, the figure
     * does not) */
    steady(x, 20, 1e-3, 0.01, 3);
    for (int i = 0; i < 4; i++)
        x[i * 5] = 1e-2;
    fill(&r, x, 20);
    sb_stability_judge(&r, &quiet);
    CHECK(r.stab_flags & SB_UNSTABLE_OUTLIERS);
    CHECK(strstr(r.stab_why, "4 of 20 samples far out") != NULL);
    sb_result_free(&r);
    /* one outlier in 20 is the normal tail: not flagged as outliers */
    steady(x, 20, 1e-3, 0.01, 4);
    x[7] = 1e-2;
    fill(&r, x, 20);
    sb_stability_judge(&r, &quiet);
    CHECK(!(r.stab_flags & SB_UNSTABLE_OUTLIERS));
    sb_result_free(&r);

    /* the machine: steady samples, but another load, steal, a clock */
    steady(x, 30, 1e-3, 0.02, 5);
    fill(&r, x, 30);
    sb_stab_ctx busy = {0.45, 0.08, 0.2, 3.5, 2.8};
    sb_stability_judge(&r, &busy);
    CHECK(!r.stable);
    CHECK((r.stab_flags &
           (SB_UNSTABLE_LOAD | SB_UNSTABLE_STEAL | SB_UNSTABLE_FREQ)) ==
          (SB_UNSTABLE_LOAD | SB_UNSTABLE_STEAL | SB_UNSTABLE_FREQ));
    CHECK(strstr(r.stab_why, "other processes took 45% of the CPUs") != NULL);
    CHECK(strstr(r.stab_why, "stole 8%") != NULL);
    CHECK(strstr(r.stab_why, "from 3.50 to 2.80 GHz") != NULL);
    char rem[512];
    sb_stab_remedy(r.stab_flags, rem, sizeof rem);
    CHECK(strstr(rem, "quiet the machine") && strstr(rem, "dedicated host") &&
          strstr(rem, "fix the clock"));
    /* unknown context (-1) is no reason */
    sb_stab_ctx unknown = {-1, -1, -1, 0, 0};
    sb_stability_judge(&r, &unknown);
    CHECK(r.stable);

    /* ... and the verdict goes through the run document and back */
    sb_stability_judge(&r, &busy);
    json_t *j = sb_result_to_json(&r);
    CHECK(json_is_false(json_object_get(j, "stable")));
    CHECK(json_array_size(json_object_get(j, "stability")) == 3);
    sb_run run;
    sb_run_init(&run);
    snprintf(run.run_id, sizeof run.run_id, "20260101T000000Z-abcdef");
    snprintf(run.started_at, sizeof run.started_at, "2026-01-01T00:00:00Z");
    sb_result *back = sb_results_push(&run.results);
    *back = r; /* run owns r's samples now */
    json_t *doc = sb_run_to_json(&run);
    sb_run again;
    CHECK(sb_run_from_json(doc, &again, NULL) == 0);
    CHECK(again.results.n == 1 && again.results.items[0].stab_judged &&
          !again.results.items[0].stable &&
          strstr(again.results.items[0].stab_why, "stole 8%") != NULL);
    json_decref(doc);
    json_decref(j);
    sb_run_free(&again);
    sb_run_free(&run);

    /* against the machine's history: 1 ms earlier, 1.3 ms now (23% slower
     * as a rate): flagged; 1.05 ms: within 10%; no earlier run: nothing
     * to judge by; one is enough */
    steady(x, 30, 1.3e-3, 0.01, 7);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    CHECK(r.stable);
    const double hist[3] = {1e-3, 0.99e-3, 1.01e-3};
    sb_stability_history(&r, hist, 0);
    CHECK(r.stable);
    sb_stability_history(&r, hist, 3);
    CHECK(!r.stable && (r.stab_flags & SB_UNSTABLE_HISTORY));
    CHECK(strstr(r.stab_why, "23% slower than its median over the 3 earlier") !=
          NULL);
    sb_result_free(&r);
    steady(x, 30, 1.3e-3, 0.01, 9);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    sb_stability_history(&r, hist, 1);
    CHECK(!r.stable && (r.stab_flags & SB_UNSTABLE_HISTORY));
    sb_result_free(&r);
    steady(x, 30, 1.05e-3, 0.01, 8);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    sb_stability_history(&r, hist, 3);
    CHECK(r.stable);
    sb_result_free(&r);

    /* fewer than 2 samples (a summary row): not judged */
    sb_result_init(&r, "memory.sweep", "memory", "cpu");
    sb_stability_judge(&r, &quiet);
    CHECK(!r.stab_judged);
    sb_result_free(&r);

    /* a flag found later (above its ceiling) keeps the earlier reasons */
    steady(x, 30, 1e-3, 0.5, 6);
    fill(&r, x, 30);
    sb_stability_judge(&r, &quiet);
    sb_stability_flag(&r, SB_UNSTABLE_CEILING, "above peak.fp32");
    CHECK(strstr(r.stab_why, "cv ") && strstr(r.stab_why, "above peak.fp32"));
    CHECK(r.stab_flags & SB_UNSTABLE_CEILING);
    sb_result_free(&r);

    /* the context from two snapshots: a second apart, no load of ours */
    sb_stab_snap a, b;
    sb_stab_snapshot(&a);
    volatile double sink = 0;
    double t0 = a.wall;
    sb_stab_snapshot(&b);
    while (b.wall - t0 < 0.2) {
        for (int i = 0; i < 100000; i++)
            sink += i;
        sb_stab_snapshot(&b);
    }
    CHECK(sink > 0); /* the loop ran (and the spin is not optimised out) */
    sb_stab_ctx c;
    sb_stab_context(&a, &b, 1, &c);
    if (a.have_stat) {
        CHECK(c.other_load >= 0 && c.other_load <= 1.0);
        CHECK(c.steal >= 0 && c.steal <= 1.0);
    }
    sb_stab_context(&a, &b, 4, &c); /* under MPI: other ranks expected */
    CHECK(c.other_load < 0);
    test_consistency();
    return sb_check_done();
}
