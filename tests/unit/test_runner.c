/*
 * test_runner.c — the runner's two ways of taking samples, with fake
 * benchmarks that log every call: one point after the other, and
 * interleaved (--interleave: all points set up and calibrated first, then
 * one sample of each a round, the order reversed every other round). Also
 * what sb_plan_build refuses for an interleaved run, and that a failed
 * set-up leaves no results and nothing allocated behind; the runner's
 * roofline placement; the one timing loop over a backend's timer (a fake
 * device clock: calibration to its shortest sample and largest count, a
 * plan that fixes the count, the work per run, the reduction); and a
 * definition with two backends' impls (their parameters' union, the
 * selection by backend).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/backend.h"
#include "solbench/library.h"
#include "solbench/runner.h"
#include "solbench/timer.h"

static char calls[8192];
static int ncalls, setups, teardowns;

typedef struct {
    char tag;
} fake;

static void spin(double s)
{
    double t0 = sb_now();
    while (sb_now() - t0 < s)
        ;
}

static void fake_run(void *state, uint64_t iters)
{
    const fake *f = state;
    if (ncalls < (int)sizeof calls - 1) /* stays a string */
        calls[ncalls++] = f->tag;
    spin(20e-6 * (double)iters);
}

static int fake_setup(char tag, void **state)
{
    fake *f = malloc(sizeof *f);
    if (!f)
        return SB_ENOMEM;
    f->tag = tag;
    *state = f;
    setups++;
    return 0;
}
static int setup_a(const sb_point *p, const sb_ctx *c, void **s, sb_err *e)
{
    (void)p, (void)c, (void)e;
    return fake_setup('a', s);
}
static int setup_b(const sb_point *p, const sb_ctx *c, void **s, sb_err *e)
{
    (void)p, (void)c, (void)e;
    return fake_setup('b', s);
}
static int setup_unsup(const sb_point *p, const sb_ctx *c, void **s, sb_err *e)
{
    (void)p, (void)c, (void)s;
    return sb_fail(e, SB_EUNSUP, "not on this machine");
}
static int setup_fail(const sb_point *p, const sb_ctx *c, void **s, sb_err *e)
{
    (void)p, (void)c, (void)s;
    return sb_fail(e, SB_EINVAL, "cannot set up");
}
static int fake_verify(void *state, sb_result *r)
{
    (void)state;
    r->valid = true;
    return 0;
}
static int verify_cannot(void *state, sb_result *r)
{
    (void)state, (void)r;
    return SB_EINVAL;
}
static void no_time(void *state, uint64_t iters)
{
    (void)state, (void)iters;
}
static void fake_teardown(void *state)
{
    free(state);
    teardowns++;
}
static double half_memory(const sb_point *p, const sb_ctx *ctx)
{
    (void)p;
    return 0.5 * ctx->phys_mem;
}
static int fake_drive(const sb_point *p, sb_ctx *c, sb_result_list *o,
                      sb_err *e)
{
    (void)p, (void)c, (void)o, (void)e;
    return 0;
}

/* A definition with one CPU impl. */
#define FAKE_IMPLS(...)                                                        \
    (const sb_impl *const[])                                                   \
    {                                                                          \
        &(const sb_impl){.backend = "cpu", __VA_ARGS__}, NULL                  \
    }
#define FAKE(nm, su, rn, vf)                                                   \
    {                                                                          \
        .name = nm, .area = "fake", .desc = "a fake",                          \
        .impls = FAKE_IMPLS(.setup = su, .run = rn, .verify = vf,              \
                            .teardown = fake_teardown)                         \
    }
static const sb_bench bench_a = FAKE("fake.a", setup_a, fake_run, fake_verify);
static const sb_bench bench_b = FAKE("fake.b", setup_b, fake_run, fake_verify);
static const sb_bench bench_unsup =
    FAKE("fake.unsup", setup_unsup, fake_run, fake_verify);
static const sb_bench bench_fail =
    FAKE("fake.fail", setup_fail, fake_run, fake_verify);
static const sb_bench bench_noverify =
    FAKE("fake.noverify", setup_b, fake_run, verify_cannot);
static const sb_bench bench_notime =
    FAKE("fake.notime", setup_b, no_time, fake_verify);

static void context(sb_ctx *ctx, bool interleave)
{
    sb_ctx_defaults(ctx);
    ctx->threads = 1;
    ctx->repeat = 6;
    ctx->min_time = 0.0;
    ctx->warmup = 0;
    ctx->progress = false;
    ctx->interleave = interleave;
}

/* Runs the benches as a plan of one point each (6 samples, min_time
 * seconds of them); the log starts empty. */
static int run(const sb_bench *const *b, int n, bool interleave,
               double min_time, sb_result_list *out, sb_err *err)
{
    sb_plan plan = {calloc((size_t)n, sizeof(sb_plan_item)), n};
    for (int i = 0; i < n; i++) {
        plan.items[i].bench = b[i];
        plan.items[i].impl = b[i]->impls[0];
    }
    sb_ctx ctx;
    context(&ctx, interleave);
    ctx.min_time = min_time;
    memset(out, 0, sizeof *out);
    ncalls = setups = teardowns = 0;
    memset(calls, 0, sizeof calls);
    int rc = sb_run_plan(&plan, &ctx, out, err);
    free(plan.items);
    return rc;
}

/* run() over the benches listed, e.g. RUN(true, 0.0, &out, &err, &bench_a,
 * &bench_b). */
#define RUN(interleave, min_time, out, err, ...)                               \
    run((const sb_bench *const[]){__VA_ARGS__},                                \
        (int)(sizeof((const sb_bench *const[]){__VA_ARGS__}) /                 \
              sizeof(const sb_bench *)),                                       \
        interleave, min_time, out, err)

/* The log's last calls are these. */
static bool log_ends_with(const char *tail)
{
    size_t k = strlen(tail);
    return (size_t)ncalls >= k && memcmp(calls + ncalls - k, tail, k) == 0;
}

static void test_interleaved_rounds(void)
{
    sb_result_list out;
    sb_err err = {0};
    CHECK(RUN(true, 0.0, &out, &err, &bench_a, &bench_b) == 0);
    CHECK(out.n == 2);
    if (out.n == 2) {
        /* both stop together: the round that gives each its 6th sample */
        CHECK(out.items[0].n_samples == 6 && out.items[1].n_samples == 6);
        CHECK(out.items[0].valid && out.items[1].valid);
        CHECK(strcmp(out.items[0].bench, "fake.a") == 0);
        CHECK(sb_result_get(&out.items[0], "inner_iters") != NULL);
    }
    /* the last 12 calls are the rounds: ab ba ab ba ab ba */
    CHECK(log_ends_with("abbaabbaabba"));
    /* the calibration calls come first, a's then b's, in plan order */
    int first_b = (int)(strchr(calls, 'b') - calls);
    for (int i = 0; i < first_b; i++)
        CHECK(calls[i] == 'a');
    CHECK(setups == 2 && teardowns == 2);
    sb_results_free(&out);
}

static void test_sequential(void)
{
    sb_result_list out;
    sb_err err = {0};
    CHECK(RUN(false, 0.0, &out, &err, &bench_a, &bench_b) == 0);
    CHECK(out.n == 2 && out.items[0].n_samples == 6 &&
          out.items[1].n_samples == 6);
    /* every call of a before any of b */
    const char *last_a = strrchr(calls, 'a'), *first_b = strchr(calls, 'b');
    CHECK(last_a && first_b && last_a < first_b);
    CHECK(setups == 2 && teardowns == 2);
    sb_results_free(&out);
}

static void test_skipped_point(void)
{
    sb_result_list out;
    sb_err err = {0};
    CHECK(RUN(true, 0.0, &out, &err, &bench_a, &bench_unsup, &bench_b) == 0);
    CHECK(out.n == 3);
    if (out.n == 3) {
        CHECK(out.items[1].skipped && out.items[1].n_samples == 0);
        CHECK(out.items[0].n_samples == 6 && out.items[2].n_samples == 6);
    }
    CHECK(log_ends_with("abbaabbaabba"));
    CHECK(setups == 2 && teardowns == 2);
    sb_results_free(&out);
}

static void test_failed_setup(void)
{
    sb_result_list out;
    sb_err err = {0};
    CHECK(RUN(true, 0.0, &out, &err, &bench_a, &bench_fail, &bench_b) ==
          SB_EINVAL);
    CHECK(out.n == 0);                    /* a stopped run keeps no results */
    CHECK(ncalls == 0);                   /* nothing was timed */
    CHECK(setups == 1 && teardowns == 1); /* a was set up, and torn down */
    CHECK(strstr(err.msg, "fake.fail") && strstr(err.msg, "cannot set up"));
    sb_results_free(&out);
}

/* --min-time counts each point's own sample time: the rounds go on until
 * every point has that much, beyond --repeat. */
static void test_min_time(void)
{
    sb_result_list out;
    sb_err err = {0};
    CHECK(RUN(true, 0.05, &out, &err, &bench_a, &bench_b) == 0);
    CHECK(out.n == 2);
    if (out.n == 2) {
        CHECK(out.items[0].n_samples == out.items[1].n_samples);
        CHECK(out.items[0].n_samples >
              6); /* 6 rounds of ~1 ms are not enough */
    }
    for (size_t i = 0; i < out.n; i++) {
        const sb_metric *it = sb_result_get(&out.items[i], "inner_iters");
        double spent = 0.0;
        for (size_t k = 0; k < out.items[i].n_samples; k++)
            spent += out.items[i].samples_s[k];
        CHECK(it && spent * it->value >= 0.05);
    }
    sb_results_free(&out);
}

/* A verification that cannot run stops the run with its error, and every
 * other point is still finished: stats, verdict, teardown. */
static void test_verify_error(void)
{
    sb_result_list out;
    sb_err err = {0};
    CHECK(RUN(true, 0.0, &out, &err, &bench_a, &bench_noverify, &bench_b) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "fake.noverify") != NULL);
    CHECK(out.n == 3);
    if (out.n == 3) {
        CHECK(out.items[0].valid && out.items[2].valid);
        CHECK(out.items[2].n_samples == 6 && out.items[2].stats.p50 > 0);
        CHECK(sb_result_get(&out.items[2], "inner_iters") != NULL);
    }
    CHECK(setups == 3 && teardowns == 3);
    sb_results_free(&out);
}

/* A kernel that takes no measurable time fails its calibration: the run
 * stops with nothing kept and everything torn down. */
static void test_calibration_error(void)
{
    sb_result_list out;
    sb_err err = {0};
    CHECK(RUN(true, 0.0, &out, &err, &bench_a, &bench_notime) != 0);
    CHECK(strstr(err.msg, "no measurable time") != NULL);
    CHECK(out.n == 0);
    CHECK(setups == 2 && teardowns == 2);
    sb_results_free(&out);
}

static void test_plan_refusals(void)
{
    sb_ctx ctx;
    sb_plan plan;
    sb_err err = {0};
    /* a bench that takes its own samples */
    const sb_bench driven = {.name = "fake.driven",
                             .area = "fake",
                             .desc = "drives",
                             .impls = FAKE_IMPLS(.drive = fake_drive)};
    sb_sel_item d[] = {{&bench_a, bench_a.impls[0]},
                       {&driven, driven.impls[0]}};
    sb_selection sel = {d, 2, true};
    context(&ctx, true);
    CHECK(sb_plan_build(&sel, NULL, &ctx, &plan, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "--interleave") && strstr(err.msg, "fake.driven"));
    context(&ctx, false);
    CHECK(sb_plan_build(&sel, NULL, &ctx, &plan, &err) == 0 && plan.n == 2);
    sb_plan_free(&plan);

    /* two points of half the memory each: one by one they fit, together
     * they do not */
    const sb_bench big1 = {.name = "fake.big1",
                           .area = "fake",
                           .desc = "big",
                           .footprint = half_memory,
                           .impls = FAKE_IMPLS(.run = fake_run)};
    const sb_bench big2 = {.name = "fake.big2",
                           .area = "fake",
                           .desc = "big",
                           .footprint = half_memory,
                           .impls = FAKE_IMPLS(.run = fake_run)};
    sb_sel_item g[] = {{&big1, big1.impls[0]}, {&big2, big2.impls[0]}};
    sb_selection gsel = {g, 2, true};
    context(&ctx, false);
    CHECK(ctx.phys_mem > 0);
    CHECK(sb_plan_build(&gsel, NULL, &ctx, &plan, &err) == 0 && plan.n == 2);
    sb_plan_free(&plan);
    context(&ctx, true);
    memset(&err, 0, sizeof err);
    CHECK(sb_plan_build(&gsel, NULL, &ctx, &plan, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "together") && strstr(err.msg, "fake.big2"));
    sb_sel_item one[] = {{&big1, big1.impls[0]}};
    sb_selection osel = {one, 1, true};
    CHECK(sb_plan_build(&osel, NULL, &ctx, &plan, &err) == 0 && plan.n == 1);
    sb_plan_free(&plan);
}

/* ---- roofline placement --------------------------------------------------
 * The runner places a result on the roofline when its bench has a `roof`,
 * from its "flops" and "bytes" metrics and the run's ceilings; the
 * compute roof is peak.fp32, or peak.<dtype> of the point with
 * SB_ROOF_DTYPE. 1e9 FLOP over 1e6 B (AI 1000) under a 1e10 B/s memory
 * roof is compute-bound: attainable = the peak. */
static double big_flops(const sb_point *p)
{
    (void)p;
    return 1e9;
}
static double mega_bytes(const sb_point *p)
{
    (void)p;
    return 1e6;
}
#define ROOFED(nm, kind)                                                       \
    {                                                                          \
        .name = nm, .area = "fake", .desc = "a fake",                          \
        .impls = FAKE_IMPLS(.setup = setup_a, .run = fake_run,                 \
                            .verify = fake_verify, .teardown = fake_teardown), \
        .flops = big_flops, .bytes = mega_bytes, .roof = kind                  \
    }
static const sb_bench bench_unplaced = ROOFED("fake.unplaced", SB_ROOF_NONE);
static const sb_bench bench_fp32 = ROOFED("fake.fp32", SB_ROOF_FP32);
static const sb_bench bench_dtype = ROOFED("fake.dtype", SB_ROOF_DTYPE);

static void test_roofline_placement(void)
{
    const sb_bench *benches[] = {&bench_unplaced, &bench_fp32, &bench_dtype,
                                 &bench_dtype};
    sb_plan plan = {calloc(4, sizeof(sb_plan_item)), 4};
    for (int i = 0; i < 4; i++) {
        plan.items[i].bench = benches[i];
        plan.items[i].impl = benches[i]->impls[0];
        /* every point says bf16; only SB_ROOF_DTYPE heeds it; the last
         * point has no dtype parameter at all */
        if (i < 3) {
            sb_pval *v = &plan.items[i].point.v[plan.items[i].point.n++];
            snprintf(v->name, sizeof v->name, "dtype");
            v->type = SB_P_STR;
            snprintf(v->text, sizeof v->text, "bf16");
        }
    }
    sb_ctx ctx;
    context(&ctx, false);
    sb_ceil_set(&ctx.ceil, "peak.fp32", 1e12, "measured");
    sb_ceil_set(&ctx.ceil, "peak.bf16", 4e12, "measured");
    sb_ceil_set(&ctx.ceil, "bw.DRAM", 1e10, "measured");
    sb_result_list out;
    memset(&out, 0, sizeof out);
    sb_err err = {0};
    CHECK(sb_run_plan(&plan, &ctx, &out, &err) == 0);
    CHECK(out.n == 4);
    if (out.n == 4) {
        CHECK(sb_result_get(&out.items[0], "attainable") == NULL);
        CHECK(sb_result_get(&out.items[0], "pct_SOL") == NULL);
        /* AI is the runner's metric, placed or not */
        const sb_metric *ai = sb_result_get(&out.items[0], "AI");
        CHECK(ai && ai->value == 1000.0);
        const double want[] = {0, 1000.0, 4000.0, 1000.0}; /* GFLOP/s */
        for (int i = 1; i < 4; i++) {
            const sb_result *r = &out.items[i];
            const sb_metric *a = sb_result_get(r, "attainable"),
                            *sol = sb_result_get(r, "pct_SOL");
            CHECK(a != NULL);
            if (a)
                CHECK_NEAR(a->value, want[i], 1e-12);
            CHECK(a && strcmp(a->unit, "GFLOP/s") == 0);
            CHECK(sol && r->stats.p50 > 0);
            if (sol && a && r->stats.p50 > 0)
                CHECK_NEAR(sol->value,
                           100.0 * 1e9 / r->stats.p50 / (want[i] * 1e9), 1e-9);
            bool noted = false;
            for (int k = 0; k < r->n_notes; k++)
                noted |= strstr(r->notes[k], "roofline: compute-bound under "
                                             "bw.DRAM and peak.") != NULL;
            CHECK(noted);
        }
    }
    sb_results_free(&out);
    free(plan.items);
}

/* MPI is started for a selection that names a benchmark needing ranks,
 * never for every benchmark by default, nor for one that needs none. */
static void test_needs_mpi(void)
{
    sb_err err = {0, ""};
    sb_selection sel;
    CHECK(sb_select(NULL, NULL, SB_SUITE_QUICK, NULL, &sel, &err) == 0);
    CHECK(!sel.named && !sb_selection_needs_mpi(&sel));
    sb_selection_free(&sel);
    CHECK(sb_select("memory", NULL, SB_SUITE_QUICK, NULL, &sel, &err) == 0);
    CHECK(sel.named && !sb_selection_needs_mpi(&sel));
    sb_selection_free(&sel);
#ifdef SB_HAVE_MPI
    CHECK(sb_select("memory,network", NULL, SB_SUITE_QUICK, NULL, &sel, &err) ==
          0);
    CHECK(sb_selection_needs_mpi(&sel));
    sb_selection_free(&sel);
    CHECK(sb_select(NULL, "network.allreduce", SB_SUITE_QUICK, NULL, &sel,
                    &err) == 0);
    CHECK(sb_selection_needs_mpi(&sel));
    sb_selection_free(&sel);
#endif
}

/* ---- the timer interface -------------------------------------------------
 * A fake device whose clock says every run takes 1 ms: what the runner's
 * one loop makes of a timer's settings is then exact. */
typedef struct {
    int calib, warm, timed; /* sample() calls by kind */
    uint64_t last_iters;
    int reduced;
} fake_dev;

static int dev_sample(void *state, int idx, uint64_t iters, double *secs,
                      sb_err *err)
{
    (void)err;
    fake_dev *d = state;
    if (idx < 0)
        d->calib++;
    else
        d->timed++;
    d->last_iters = iters;
    *secs = 1e-3 * (double)iters;
    return 0;
}
static double dev_work(void *state)
{
    (void)state;
    return 4.0; /* four kernel iterations a run */
}
static int dev_reduce(void *state, double *secs, size_t n, sb_err *err)
{
    (void)err;
    fake_dev *d = state;
    for (size_t i = 0; i < n; i++)
        secs[i] *= 2.0;
    d->reduced = (int)n;
    return 0;
}
static int dev_plan(void *state, const sb_ctx *ctx, sb_sampling *sp,
                    sb_err *err)
{
    (void)state, (void)ctx, (void)err;
    CHECK(sp->inner == 0 && sp->samples == 0 && !sp->exact &&
          sp->warmup == -1); /* the defaults come filled in */
    sp->inner = 5;
    sp->samples = 7;
    sp->exact = true;
    sp->warmup = 3;
    return 0;
}

static void test_timer(void)
{
    sb_ctx ctx;
    context(&ctx, false);
    ctx.repeat = 3;
    ctx.min_time = 0.0;
    ctx.warmup = 2;

    /* Calibration to the timer's 10 ms: 1 run (1 ms) grows by 1.25 x 10 /
     * 1 to 13 runs (13 ms); samples are per kernel iteration (13 x 4). */
    const sb_timer t1 = {
        .min_sample_s = 10e-3, .sample = dev_sample, .work = dev_work};
    fake_dev d = {0};
    sb_result r;
    sb_err err = {0};
    sb_result_init(&r, "fake.dev", "fake", "fake");
    CHECK(sb_sample_loop(NULL, &t1, &d, &ctx, &r, &err) == 0);
    CHECK(d.last_iters == 13);
    CHECK(r.n_samples == 3 && d.timed == 3);
    CHECK_NEAR(r.samples_s[0], 13e-3 / (13 * 4), 1e-15);
    const sb_metric *m = sb_result_get(&r, "inner_iters");
    CHECK(m && m->value == 13 * 4);
    /* the untimed calls: 1, then 1 run twice, 13 runs twice, 2 warm-ups */
    CHECK(d.calib == 1 + 2 + 2 + 2);
    sb_result_free(&r);

    /* The largest count caps the calibration: 8, though 8 ms < 10 ms. */
    const sb_timer t2 = {
        .min_sample_s = 10e-3, .max_iters = 8, .sample = dev_sample};
    memset(&d, 0, sizeof d);
    sb_result_init(&r, "fake.dev", "fake", "fake");
    CHECK(sb_sample_loop(NULL, &t2, &d, &ctx, &r, &err) == 0);
    CHECK(d.last_iters == 8);
    CHECK_NEAR(r.stats.p50, 1e-3, 1e-15);
    sb_result_free(&r);

    /* A plan fixes the count (no calibration), the warm-up and exactly 7
     * samples (not --repeat's 3, whatever --min-time says); the reduction
     * sees every sample. */
    const sb_timer t3 = {
        .plan = dev_plan, .sample = dev_sample, .reduce = dev_reduce};
    memset(&d, 0, sizeof d);
    ctx.min_time = 10.0;
    sb_result_init(&r, "fake.dev", "fake", "fake");
    CHECK(sb_sample_loop(NULL, &t3, &d, &ctx, &r, &err) == 0);
    CHECK(d.calib == 3 && d.timed == 7 && r.n_samples == 7);
    CHECK(d.reduced == 7);
    CHECK_NEAR(r.stats.p50, 2.0 * 5e-3 / 5, 1e-15); /* reduced: x 2 */
    m = sb_result_get(&r, "inner_iters");
    CHECK(m && m->value == 5);
    sb_result_free(&r);
}

/* ---- one definition, two backends ---------------------------------------- */
static const sb_param_def def_params[] = {
    {"size", SB_P_SIZE, "1KiB", 1, 1e12, NULL, "shared"},
    {"dtype", SB_P_STR, "fp64", 0, 0, "fp64|fp32", "the definition's"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};
static const sb_param_def dev_params[] = {
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16", "the device's"},
    {"device", SB_P_INT, "0", 0, 16, NULL, "its own"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static void test_impl_params(void)
{
    const sb_impl host = {.backend = "cpu"};
    const sb_impl dev = {.backend = "cuda", .params = dev_params};
    const sb_bench b = {.name = "fake.two",
                        .area = "fake",
                        .params = def_params,
                        .impls = (const sb_impl *const[]){&host, &dev, NULL}};
    sb_param_def out[SB_MAX_PARAMS + 1];
    CHECK(sb_params_of(&b, &host, out, SB_MAX_PARAMS + 1) == 2);
    CHECK(strcmp(out[1].def, "fp64") == 0 && out[2].name == NULL);
    /* the device's dtype replaces the definition's in place; its own
     * parameter follows */
    CHECK(sb_params_of(&b, &dev, out, SB_MAX_PARAMS + 1) == 3);
    CHECK(strcmp(out[0].name, "size") == 0 && strcmp(out[1].def, "fp32") == 0 &&
          strcmp(out[2].name, "device") == 0 && out[3].name == NULL);
    CHECK(sb_param_find(&b, &dev, "device") == &dev_params[1]);
    CHECK(sb_param_find(&b, &host, "device") == NULL);
    CHECK(sb_param_find(&b, &host, "dtype") == &def_params[1]);
    CHECK(sb_impl_find(&b, "cuda") == &dev && sb_impl_find(&b, NULL) == &host &&
          sb_impl_find(&b, "pjrt") == NULL);
    /* a cap too small for all: truncated, still terminated */
    CHECK(sb_params_of(&b, &dev, out, 2) == 1 && out[1].name == NULL);

    /* The real registry: transfer.h2d on the host is what --backend cpu
     * takes; one definition of it, whatever its impls. */
    const sb_bench *h2d = sb_bench_find("transfer.h2d", NULL);
    CHECK(h2d && sb_impl_find(h2d, "host") && !sb_impl_find(h2d, "cpu"));
    sb_selection sel;
    sb_err err = {0};
    CHECK(sb_select(NULL, "transfer.h2d", SB_SUITE_QUICK, "cpu", &sel, &err) ==
          0);
    CHECK(sel.n == 1 && sel.items[0].bench == h2d &&
          strcmp(sel.items[0].impl->backend, "host") == 0);
    sb_selection_free(&sel);
    int defs = 0;
    for (const sb_bench *const *x = sb_registry(); *x; x++)
        defs += strcmp((*x)->name, "memory.copy") == 0;
    CHECK(defs == 1);
}

/* ---- impls registered by backends ------------------------------------------
 */

static void test_backend_impls(void)
{
    static const sb_impl own = {.backend = "cpu", .run = fake_run};
    static const sb_impl dev_a = {.backend = "deva", .run = fake_run};
    static const sb_impl dev_b = {.backend = "devb", .run = fake_run};
    const sb_bench with_own = {.name = "t.own",
                               .area = "memory",
                               .impls = (const sb_impl *const[]){&own, NULL}};
    static const sb_bench device_only = {.name = "t.dev", .area = "memory"};
    static const sb_bench nobody = {.name = "t.none", .area = "memory"};
    static const sb_impl_entry a_impls[] = {{"t.own", &dev_a},
                                            {"t.dev", &dev_a},
                                            {"t.elsewhere", &dev_a},
                                            {NULL, NULL}};
    static const sb_impl_entry b_impls[] = {{"t.own", &dev_b}, {NULL, NULL}};
    static const sb_backend a = {
        .name = "deva", .phase = 1, .caps = SB_BK_SELECT, .impls = a_impls};
    static const sb_backend b = {
        .name = "devb", .phase = 3, .caps = SB_BK_SELECT, .impls = b_impls};
    const sb_backend *const backends[] = {&a, &b, NULL};
    const sb_bench *const all[] = {&with_own, &device_only, &nobody, NULL};
    sb_backends_use(backends);
    sb_registry_use(all);
    /* its own impl first, then each backend's in the backends' order */
    const sb_impl *const *im = sb_bench_impls(&with_own);
    CHECK(im[0] == &own && im[1] == &dev_a && im[2] == &dev_b && !im[3]);
    /* a definition with no impl of its own, one registered */
    im = sb_bench_impls(&device_only);
    CHECK(im[0] == &dev_a && !im[1]);
    CHECK(sb_impl_find(&device_only, "deva") == &dev_a);
    CHECK(sb_impl_find(&device_only, "cpu") == NULL);
    CHECK(sb_impl_find(&with_own, NULL) == &own); /* the default */
    /* no impl anywhere: not in the registry */
    const sb_bench *const *r = sb_registry();
    CHECK(r[0] == &with_own && r[1] == &device_only && !r[2]);
    CHECK(sb_bench_find("t.none", NULL) == NULL);
    CHECK(sb_bench_find("t.dev", "deva") == &device_only);
    /* a backend name is checked against the descriptors */
    sb_selection sel;
    sb_err err = {0};
    CHECK(sb_select(NULL, "t.own", SB_SUITE_QUICK, "devb", &sel, &err) == 0);
    CHECK(sel.n == 1 && sel.items[0].impl == &dev_b);
    sb_selection_free(&sel);
    /* every installed backend's phase runs, past the three of this
     * build's (devb's is 3); the cpu impl's backend is not installed here,
     * so it does not run */
    CHECK(sb_select(NULL, "t.own", SB_SUITE_QUICK, NULL, &sel, &err) == 0);
    CHECK(sel.n == 2 && sel.items[0].impl == &dev_a &&
          sel.items[1].impl == &dev_b);
    sb_selection_free(&sel);
    CHECK(sb_select(NULL, "t.own", SB_SUITE_QUICK, "nope", &sel, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "this build has deva, devb") != NULL);
    sb_library_init(); /* the library's own again */
    CHECK(sb_bench_find("memory.triad", "cpu") != NULL);
}

int main(void)
{
    test_interleaved_rounds();
    test_sequential();
    test_skipped_point();
    test_failed_setup();
    test_min_time();
    test_verify_error();
    test_calibration_error();
    test_plan_refusals();
    test_roofline_placement();
    test_needs_mpi();
    test_timer();
    test_impl_params();
    test_backend_impls();
    return sb_check_done();
}
