/*
 * runner.c — the timing loop every benchmark shares, running a plan (one
 * point after another, or interleaved), and the consistency checks of a
 * run; selecting and planning are select.c's.
 *
 * The runner, not the kernels, owns timing: it picks the inner iteration
 * count so one sample lasts at least 100 clock ticks (and 1 ms, so reading
 * the clock costs < 0.01 %), warms up, samples until both --min-time and
 * --repeat are met, and stores seconds per iteration for every sample. A
 * whole plan is checked before anything is allocated.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend.h"
#include "solbench/output.h"
#include "solbench/roofline.h"
#include "solbench/runner.h"
#include "solbench/stability.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* Samples per point never exceed this, whatever --min-time asks. */

void sb_ctx_defaults(sb_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    sb_clock_info ci;
    sb_clock_measure(&ci);
    ctx->threads = sb_cores();
    ctx->min_time = 0.2;
    ctx->repeat = 5;
    ctx->warmup = 1;
    ctx->suite = SB_SUITE_QUICK;
    ctx->tick_s =
        ci.resolution_s > ci.overhead_s ? ci.resolution_s : ci.overhead_s;
    ctx->phys_mem = sb_phys_mem();
    ctx->mem_avail = sb_mem_available();
    ctx->rank = 0;
    ctx->nranks = 1;
    ctx->hosts = 1;
    ctx->ranks_per_host = 1;
    ctx->progress = isatty(2);
}
/* ---- timing --------------------------------------------------------------
 * One loop for every backend. What differs is the impl's timer: how one
 * sample of `iters` runs is timed (the host clock around run() by default;
 * CUDA events; a barrier first and the slowest rank after, under MPI), the
 * shortest sample and the largest inner count it allows, and what it fixes
 * itself (sb_timer.plan). */

typedef struct sb__timed {
    void (*run)(void *state, uint64_t iters);
    const sb_timer *timer; /* NULL: the host clock */
    void *state;
} sb__timed;

static int time_runs(const sb__timed *tm, int idx, uint64_t iters, double *secs,
                     sb_err *err)
{
    if (tm->timer && tm->timer->sample)
        return tm->timer->sample(tm->state, idx, iters, secs, err);
    double t0 = sb_now();
    tm->run(tm->state, iters);
    *secs = sb_now() - t0;
    return 0;
}

/* The shortest sample: 100 clock ticks, 1 ms, or the timer's own. */
static double sample_target(const sb__timed *tm, const sb_ctx *ctx)
{
    double target = fmax(SB_MIN_SAMPLE_TICKS * ctx->tick_s, SB_MIN_SAMPLE_S);
    return tm->timer ? fmax(target, tm->timer->min_sample_s) : target;
}

/* The inner count (its calls warm the kernel up, too). */
static int calibrate(const sb__timed *tm, const sb_ctx *ctx, const sb_result *r,
                     uint64_t *out, sb_err *err)
{
    double target = sample_target(tm, ctx);
    /* the timer's largest inner count, 0: none */
    uint64_t cap = tm->timer ? tm->timer->max_iters : 0;

    /* Calibration: grow the inner count until one sample reaches the
     * target. These runs also warm caches, pages and frequency. The first
     * call of a kernel may pay one-off costs (the thread pool starting,
     * pages faulting in) and any call may be preempted or wait for a
     * descheduled worker thread: a slow outlier would fix the inner count
     * too low. So a candidate's time is its count times the fastest time
     * per iteration any call has shown, the first call's included, and
     * each candidate is timed twice; sampling corrects what calibration
     * still gets wrong under load (sample_loop). */
    uint64_t iters = 1;
    double t = 0;
    int rc = time_runs(tm, -1, 1, &t, err);
    if (rc)
        return rc;
    double per = t > 0 ? t : INFINITY; /* fastest seconds per iteration */
    for (;;) {
        for (int rep = 0; rep < 2; rep++) {
            double dt = 0;
            if ((rc = time_runs(tm, -1, iters, &dt, err)))
                return rc;
            if (dt > 0 && dt / (double)iters < per)
                per = dt / (double)iters;
            if (per * (double)iters >= 4 * target)
                break; /* long enough that one timing says it */
        }
        t = isfinite(per) ? per * (double)iters : 0;
        if (t >= target || (cap && iters >= cap))
            break;
        double grow = t > 0 ? 1.25 * target / t : 16.0;
        if (grow < 2.0)
            grow = 2.0;
        if (grow > 1000.0)
            grow = 1000.0;
        uint64_t next = (uint64_t)ceil((double)iters * grow);
        if (cap && next > cap)
            next = cap;
        if (next <= iters || next > (1ull << 40))
            return sb_fail(err, SB_EINVAL,
                           "%s: the kernel takes no measurable "
                           "time",
                           r->bench);
        iters = next;
    }
    *out = iters;
    return 0;
}

/* Kernel iterations per run. */
static double work_of(const sb__timed *tm)
{
    double w = tm->timer && tm->timer->work ? tm->timer->work(tm->state) : 1.0;
    return w > 0 ? w : 1.0;
}

/* One timed sample of iters runs: its time per iteration joins r; *spent
 * (when given) grows by its seconds. */
static int take_sample(const sb__timed *tm, int idx, uint64_t iters,
                       sb_result *r, double *spent, sb_err *err)
{
    double secs = 0;
    int rc = time_runs(tm, idx, iters, &secs, err);
    if (rc)
        return rc;
    if (spent)
        *spent += secs;
    if (sb_result_add_sample(r, secs / ((double)iters * work_of(tm))))
        return sb_fail(err, SB_ENOMEM, "out of memory");
    return 0;
}

/* After the last sample: the inner count and the statistics. */
static void close_samples(sb_result *r, double inner)
{
    sb_result_metric(r, "inner_iters", inner, "");
    sb_result_finish_stats(r);
}

static int sample_loop(const sb__timed *tm, const sb_ctx *ctx, sb_result *r,
                       sb_err *err)
{
    sb_sampling sp = {0, 0, false, -1};
    int rc = 0;
    if (tm->timer && tm->timer->plan &&
        (rc = tm->timer->plan(tm->state, ctx, &sp, err)))
        return rc;
    uint64_t iters = sp.inner;
    if (iters == 0 && (rc = calibrate(tm, ctx, r, &iters, err)))
        return rc;
    int warm = sp.warmup >= 0 ? sp.warmup : ctx->warmup;
    for (int w = 0; w < warm; w++) {
        double secs;
        if ((rc = time_runs(tm, -1, iters, &secs, err)))
            return rc;
    }
    int want = sp.samples > ctx->repeat ? sp.samples : ctx->repeat;
    /* On the host clock, a sample that shows the inner count too low for
     * the target (calibration timed only calls slowed by the load: a
     * short kernel kept at one iteration a sample, most samples then fit
     * between two preemptions and the load went unseen) raises it and
     * starts the samples again, twice at most. */
    bool adapt = !tm->timer && sp.inner == 0 && !sp.exact;
    double target = sample_target(tm, ctx);
    int restarts = 0;
    double start = sb_now();
    for (int idx = 0;; idx++) {
        bool more = sp.exact ? idx < sp.samples
                             : idx < want || sb_now() - start < ctx->min_time;
        if (!more || r->n_samples >= SB_RUN_MAX_SAMPLES)
            break;
        if ((rc = take_sample(tm, idx, iters, r, NULL, err)))
            return rc;
        double per = r->samples_s[r->n_samples - 1] * work_of(tm);
        if (adapt && restarts < 2 && per > 0 &&
            per * (double)iters < target / 2) {
            iters = (uint64_t)ceil(1.25 * target / per);
            r->n_samples = 0;
            restarts++;
            idx = -1;
            start = sb_now();
        }
    }
    if (tm->timer && tm->timer->reduce &&
        (rc = tm->timer->reduce(tm->state, r->samples_s, r->n_samples, err)))
        return rc;
    close_samples(r, (double)iters * work_of(tm));
    return 0;
}

int sb_sample_loop(void (*run)(void *state, uint64_t iters),
                   const sb_timer *timer, void *state, const sb_ctx *ctx,
                   sb_result *r, sb_err *err)
{
    const sb__timed tm = {run, timer, state};
    return sample_loop(&tm, ctx, r, err);
}

/* ---- running ------------------------------------------------------------- */

/* The metrics every timed result gets from its work per iteration. */
static void add_standard_metrics(const sb_point *pt, sb_result *r)
{
    if (r->n_samples == 0)
        return;
    double med = r->stats.p50, best = r->stats.min;
    sb_result_metric(r, "latency_us", med * 1e6, "us");
    double bytes = sb_point_bytes(pt);
    double flops = sb_point_flops(pt);
    if (bytes > 0 && med > 0) {
        sb_result_metric(r, "bytes", bytes, "B");
        sb_result_metric(r, "GBps", bytes / med * 1e-9, "GB/s");
        sb_result_metric(r, "GBps_best", bytes / best * 1e-9, "GB/s");
    }
    if (flops > 0 && med > 0) {
        sb_result_metric(r, "flops", flops, "FLOP");
        sb_result_metric(r, "GFLOPs", flops / med * 1e-9, "GFLOP/s");
        sb_result_metric(r, "GFLOPs_best", flops / best * 1e-9, "GFLOP/s");
        /* Accelerators are read in TFLOP/s (the schema's headline there). */
        const sb_backend *bk = sb_backend_find(pt->impl->backend);
        if (bk && (bk->caps & SB_BK_TFLOPS)) {
            sb_result_metric(r, "TFLOPs", flops / med * 1e-12, "TFLOP/s");
            sb_result_metric(r, "TFLOPs_best", flops / best * 1e-12, "TFLOP/s");
        }
    }
    if (bytes > 0 && flops > 0)
        sb_result_metric(r, "AI", flops / bytes, "FLOP/B");
}

/* The result's place on the roofline, from the work it reports (the
 * "flops" and "bytes" metrics, the runner's or the bench's own) and the
 * precision its arithmetic runs in. */
static void place_on_roofline(const sb_point *pt, const sb_ctx *ctx,
                              sb_result *r)
{
    const sb_bench *b = pt->bench;
    if (b->roof == SB_ROOF_NONE || r->skipped)
        return;
    const sb_metric *f = sb_result_get(r, "flops"),
                    *by = sb_result_get(r, "bytes");
    const char *dtype = "fp32";
    if (b->roof == SB_ROOF_DTYPE && sb_p_find(pt->params, "dtype"))
        dtype = sb_p_str(pt->params, "dtype");
    sb_roofline_annotate(r, ctx, dtype, f ? f->value : 0.0,
                         by ? by->value : 0.0);
}

static int finish_point(const sb_point *pt, sb_ctx *ctx, sb_result *r,
                        void *state, int rc, sb_err *err);

/* Appends the point's result and sets the impl up. *live: set up, to be
 * measured; a point the machine cannot run (SB_EUNSUP) stays as a skipped
 * result, not live. On an error its result is dropped again. */
static int start_point(const sb_point *pt, const sb_ctx *ctx,
                       sb_result_list *out, void **state, bool *live,
                       sb_err *err)
{
    const sb_bench *b = pt->bench;
    const sb_impl *im = pt->impl;
    *state = NULL;
    *live = false;
    sb_result *r = sb_results_push(out);
    if (!r)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    sb_result_init(r, b->name, b->area, im->backend);
    r->params = *pt->params;
    sb_err serr = {0};
    int rc = im->setup ? im->setup(pt, ctx, state, &serr) : 0;
    if (rc == SB_EUNSUP) {
        r->skipped = true;
        sb_result_note(r, "skipped: %s", serr.msg);
        return 0;
    }
    if (rc) {
        out->n--; /* drop the empty slot */
        sb_result_free(&out->items[out->n]);
        return sb_fail(err, rc, "%s: %s", b->name, serr.msg);
    }
    *live = true;
    return 0;
}

/* The progress line (stderr a terminal): the point about to run, or
 * cleared when it is NULL. */
static void show_progress(const sb_ctx *ctx, const char *stage, int i,
                          const sb_plan *plan)
{
    if (!ctx->progress || ctx->rank != 0)
        return;
    if (!stage) {
        fprintf(stderr, "\r\033[K");
        return;
    }
    const sb_plan_item *it = &plan->items[i];
    char pbuf[200];
    fprintf(stderr, "\r\033[K[%s%d/%d] %s %s", stage, i + 1, plan->n,
            it->bench->name, sb_params_fmt(&it->point, pbuf, sizeof pbuf));
    fflush(stderr);
}

/* The stability verdict of the results from `first` on, sampled between
 * the two snapshots (stability.h). */
static void judge_since(sb_result_list *out, size_t first,
                        const sb_stab_snap *a, const sb_stab_snap *b,
                        const sb_ctx *ctx)
{
    sb_stab_ctx c;
    sb_stab_context(a, b, ctx->nranks, &c);
    for (size_t i = first; i < out->n; i++)
        sb_stability_judge(&out->items[i], &c);
}

int sb_run_point(const sb_bench *b, const sb_impl *im, const sb_params *p,
                 sb_ctx *ctx, sb_result_list *out, sb_err *err)
{
    if (!im)
        im = sb_impl_find(b, NULL);
    if (!im)
        return sb_fail(err, SB_EINVAL, "%s: not built in this solbench",
                       b->name);
    bool needs_mpi = (sb_impl_flags(b, im) & SB_BF_NEEDS_MPI) != 0;
    if (ctx->nranks > 1 && !needs_mpi && ctx->rank != 0)
        return 0; /* node-local benches run on rank 0 only */

    if (needs_mpi && ctx->nranks < 2)
        return sb_results_push_skipped(
            out, b->name, b->area, im->backend, p, err,
            "skipped: needs 2 or more ranks — run under mpirun");
    /* Threads first: a shape may depend on them (the ops' chunk size). */
    sb_threads_setup(ctx->threads);
    sb_point pt;
    int rc = sb_point_make(b, im, p, &pt, err);
    if (rc)
        return rc;
    /* The machine around the samples, for their stability verdict. */
    size_t first = out->n;
    sb_stab_snap s0, s1;
    if (im->drive) {
        sb_stab_snapshot(&s0);
        rc = im->drive(&pt, ctx, out, err);
        sb_stab_snapshot(&s1);
        judge_since(out, first, &s0, &s1, ctx);
        sb_point_release(&pt);
        return rc;
    }
    void *state;
    bool live;
    rc = start_point(&pt, ctx, out, &state, &live, err);
    if (rc || !live) {
        sb_point_release(&pt);
        return rc;
    }
    sb_result *r = &out->items[out->n - 1];
    const sb__timed tm = {im->run, im->timer, state};
    sb_stab_snapshot(&s0);
    rc = sample_loop(&tm, ctx, r, err);
    sb_stab_snapshot(&s1);
    rc = finish_point(&pt, ctx, r, state, rc, err);
    if (rc == 0)
        judge_since(out, first, &s0, &s1, ctx);
    if (rc == 0 && im->summarize)
        rc = im->summarize(&pt, ctx, out, err);
    sb_point_release(&pt);
    return rc;
}

/* After the samples (rc: how taking them went): verify, the standard
 * metrics and the impl's own report, then teardown. */
static int finish_point(const sb_point *pt, sb_ctx *ctx, sb_result *r,
                        void *state, int rc, sb_err *err)
{
    const sb_impl *im = pt->impl;
    if (rc == 0) {
        if (im->verify) {
            rc = im->verify(state, r);
            if (rc)
                sb_fail(err, rc, "%s: verification could not run",
                        pt->bench->name);
        } else {
            r->valid = false;
            sb_result_note(r, "no verification defined");
        }
    }
    if (rc == 0) {
        add_standard_metrics(pt, r);
        if (im->report)
            im->report(state, pt, ctx, r);
        place_on_roofline(pt, ctx, r);
    }
    if (im->teardown)
        im->teardown(state);
    return rc;
}

/* ---- interleaved sampling -------------------------------------------------
 * Memory bandwidth and clock speed on a shared machine change by tens of
 * percent over seconds; points measured one after another can land in
 * different stretches of it, and a ratio of two of them then says more
 * about the machine than about the kernels. Interleaved, every point is
 * set up (sb_plan_build checked that they fit in memory together) and
 * calibrated, then takes one sample a round: A B, B A, A B, ... (reversed
 * every other round, so no point always runs right after the same one)
 * until every point has its --repeat samples and --min-time of them. */
typedef struct {
    size_t res; /* index of its result in out */
    sb_point pt;
    void *state;
    uint64_t iters;
    double spent; /* seconds of samples so far */
    bool live;    /* set up, not skipped */
} sb__slot;

/* The rounds an interleaved run takes, as far as `done` rounds tell: the
 * most any point needs (its --repeat, or the samples its --min-time needs
 * at its pace so far). */
static int rounds_expected(const sb__slot *sl, int n, const sb_result_list *out,
                           const sb_ctx *ctx, int done)
{
    double rounds = done;
    for (int i = 0; i < n; i++) {
        const sb_result *r = &out->items[sl[i].res];
        if (!sl[i].live || r->n_samples == 0)
            continue;
        double per = sl[i].spent / (double)r->n_samples;
        double need = per > 0 ? ceil(ctx->min_time / per) : 0;
        need = fmin(fmax(need, ctx->repeat), SB_RUN_MAX_SAMPLES);
        rounds = fmax(rounds, need);
    }
    return (int)rounds;
}

static int run_interleaved(const sb_plan *plan, sb_ctx *ctx,
                           sb_result_list *out, sb_err *err)
{
    if (ctx->nranks > 1 && ctx->rank != 0)
        return 0; /* node-local benches run on rank 0 only */
    bool show = ctx->progress && ctx->rank == 0;
    sb__slot *sl = calloc((size_t)(plan->n > 0 ? plan->n : 1), sizeof *sl);
    if (!sl)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    size_t first = out->n;
    int rc = 0, n = 0; /* n: points set up (or skipped) so far */
    sb_threads_setup(ctx->threads);
    for (; n < plan->n; n++) {
        const sb_plan_item *it = &plan->items[n];
        show_progress(ctx, "set up ", n, plan);
        rc = sb_point_make(it->bench, it->impl, &it->point, &sl[n].pt, err);
        if (rc)
            break;
        rc = start_point(&sl[n].pt, ctx, out, &sl[n].state, &sl[n].live, err);
        if (rc) {
            sb_point_release(&sl[n].pt);
            break;
        }
        sl[n].res = out->n - 1;
    }
    for (int i = 0; i < n && rc == 0; i++)
        if (sl[i].live) {
            const sb__timed tm = {plan->items[i].impl->run, NULL, sl[i].state};
            rc = calibrate(&tm, ctx, &out->items[sl[i].res], &sl[i].iters, err);
        }
    if (rc) { /* a run stopped by an error keeps none of these results */
        for (int i = 0; i < n; i++) {
            if (sl[i].live && plan->items[i].impl->teardown)
                plan->items[i].impl->teardown(sl[i].state);
            sb_point_release(&sl[i].pt);
        }
        while (out->n > first)
            sb_result_free(&out->items[--out->n]);
        free(sl);
        show_progress(ctx, NULL, 0, plan);
        return rc;
    }
    /* --warmup once every point is calibrated: the first round finds each
     * as warm as one by one would. */
    for (int w = 0; w < ctx->warmup; w++)
        for (int i = 0; i < n; i++)
            if (sl[i].live)
                plan->items[i].impl->run(sl[i].state, sl[i].iters);

    sb_stab_snap s0, s1;
    sb_stab_snapshot(&s0);
    for (int round = 0;; round++) {
        bool more = false, full = false;
        for (int i = 0; i < n; i++) {
            const sb_result *r = &out->items[sl[i].res];
            if (sl[i].live && ((int)r->n_samples < ctx->repeat ||
                               sl[i].spent < ctx->min_time))
                more = true;
            if (r->n_samples >= SB_RUN_MAX_SAMPLES)
                full = true;
        }
        if (!more || full)
            break;
        if (show && round % 16 == 0) {
            fprintf(stderr, "\r\033[K[round %d] %d points interleaved",
                    round + 1, n);
            fflush(stderr);
        }
        for (int k = 0; k < n && rc == 0; k++) {
            int i = round % 2 ? n - 1 - k : k;
            if (!sl[i].live)
                continue;
            const sb__timed tm = {plan->items[i].impl->run, NULL, sl[i].state};
            rc = take_sample(&tm, round, sl[i].iters, &out->items[sl[i].res],
                             &sl[i].spent, err);
        }
        if (rc == 0 && ctx->on_round)
            rc =
                ctx->on_round(ctx->on_round_arg, round,
                              rounds_expected(sl, n, out, ctx, round + 1), err);
        if (rc)
            break;
    }
    sb_stab_snapshot(&s1);
    show_progress(ctx, NULL, 0, plan);

    /* Verify and report in plan order, so a point's report sees the
     * ceilings of the points before it, as one by one. A verification
     * that cannot run stops the run (its error is returned) but the other
     * points are still finished, so no result is left half made. */
    const int sampled = rc;
    for (int i = 0; i < n; i++) {
        if (!sl[i].live) {
            sb_point_release(&sl[i].pt);
            continue;
        }
        sb_result *r = &out->items[sl[i].res];
        if (sampled == 0)
            close_samples(r, (double)sl[i].iters);
        sb_err ferr = {0};
        int frc = finish_point(&sl[i].pt, ctx, r, sl[i].state, sampled, &ferr);
        sb_point_release(&sl[i].pt);
        if (rc == 0 && frc) {
            rc = frc;
            if (err)
                *err = ferr;
        }
    }
    free(sl);
    if (rc == 0)
        judge_since(out, first, &s0, &s1, ctx);
    return rc;
}

/* ---- consistency ----------------------------------------------------------
 * A figure above the ceiling that binds it is a contradiction: the two
 * were measured in different stretches of a shared machine, and one of
 * them is not the machine's. A GEMM above the peak its MFU is taken
 * against has that peak measured again now, beside it; the better figure
 * stands and MFU is taken again. What stays above its ceiling is flagged,
 * with the ceiling's own result, and says which figure is suspect. */

static sb_result *find_peak(sb_result_list *out, const char *backend,
                            const char *dtype)
{
    for (size_t i = 0; i < out->n; i++) {
        sb_result *r = &out->items[i];
        const sb_pval *dt = sb_p_find(&r->params, "dtype"),
                      *cores = sb_p_find(&r->params, "cores");
        if (!r->skipped && r->valid && strcmp(r->bench, "compute.peak") == 0 &&
            strcmp(r->backend, backend) == 0 && dt &&
            strcmp(dt->text, dtype) == 0 &&
            (!cores || strcmp(cores->text, "all") == 0))
            return r;
    }
    return NULL;
}

void sb_run_check_consistency(sb_ctx *ctx, sb_result_list *out)
{
    if (ctx->rank != 0)
        return;
    size_t n0 = out->n; /* re-measured peaks replace, never append */
    bool remeasured[8] = {false};
    static const char *const dts[8] = {"fp64", "fp32", "bf16", "fp16",
                                       "fp8",  "tf32", "int8", "fp8_f32"};
    for (size_t i = 0; i < n0; i++) {
        sb_result *r = &out->items[i];
        const sb_metric *mfu = sb_result_get(r, "MFU");
        const sb_metric *g = sb_result_get(r, "GFLOPs");
        const sb_pval *dt = sb_p_find(&r->params, "dtype");
        if (r->skipped || !mfu || !(mfu->value > 1.0) || !g || !dt)
            continue;
        char key[48];
        snprintf(key, sizeof key, "peak.%s", dt->text);
        double before = sb_ceil_get(&ctx->ceil, key);
        sb_result *pk = find_peak(out, r->backend, dt->text);
        int d = 0;
        while (d < 8 && strcmp(dts[d], dt->text) != 0)
            d++;
        if (pk && d < 8 && !remeasured[d]) {
            /* the peak again, now: its report raises the ceiling when
             * this stretch lets it run faster */
            remeasured[d] = true;
            const sb_bench *b = sb_bench_find(pk->bench, pk->backend);
            const sb_impl *im = b ? sb_impl_find(b, pk->backend) : NULL;
            sb_result_list again = {0};
            sb_err e = {0};
            sb_params pp = pk->params;
            if (b && im && sb_run_point(b, im, &pp, ctx, &again, &e) == 0 &&
                again.n == 1 && again.items[0].valid) {
                const sb_metric *old = sb_result_get(pk, "GFLOPs_best");
                const sb_metric *now =
                    sb_result_get(&again.items[0], "GFLOPs_best");
                sb_result_note(&again.items[0],
                               "measured again beside compute.gemm dtype=%s, "
                               "which came out above it (MFU %.2f): best %.1f "
                               "GFLOP/s before, %.1f now",
                               dt->text, mfu->value, old ? old->value : 0.0,
                               now ? now->value : 0.0);
                sb_result tmp = *pk;
                *pk = again.items[0];
                again.items[0] = tmp; /* the old one is freed with `again` */
                pk = find_peak(out, r->backend, dt->text);
            }
            sb_results_free(&again);
        }
        double peak = sb_ceil_get(&ctx->ceil, key);
        /* every GEMM of this dtype against the peak as it stands now */
        for (size_t j = 0; j < n0; j++) {
            sb_result *q = &out->items[j];
            const sb_metric *qm = sb_result_get(q, "MFU"),
                            *qg = sb_result_get(q, "GFLOPs");
            const sb_pval *qd = sb_p_find(&q->params, "dtype");
            if (!qm || !qg || !qd || strcmp(qd->text, dt->text) != 0 ||
                !(peak > 0))
                continue;
            double m = qg->value * 1e9 / peak;
            sb_result_metric(q, "MFU", m, "ratio");
            if (!(m > 1.0))
                continue;
            char why[200];
            snprintf(why, sizeof why,
                     "above its own ceiling: MFU %.2f against %s %.1f GFLOP/s "
                     "(re-measured from %.1f): the peak or this figure is not "
                     "the machine's",
                     m, key, peak * 1e-9, before * 1e-9);
            sb_stability_flag(q, SB_UNSTABLE_CEILING, why);
            if (pk) {
                snprintf(why, sizeof why,
                         "below a figure it bounds: compute.gemm dtype=%s "
                         "reached MFU %.2f against it",
                         dt->text, m);
                sb_stability_flag(pk, SB_UNSTABLE_CEILING, why);
            }
        }
    }
    /* Placed under a roof and above it (pct_SOL > 100): flagged. */
    for (size_t i = 0; i < out->n; i++) {
        sb_result *r = &out->items[i];
        const sb_metric *p = sb_result_get(r, "pct_SOL");
        if (r->skipped || !p || !(p->value > 100.5))
            continue;
        char why[160];
        snprintf(why, sizeof why,
                 "above its own ceiling: %.0f%% of the roof it was placed "
                 "under (the ceiling was measured in a slower stretch)",
                 p->value);
        sb_stability_flag(r, SB_UNSTABLE_CEILING, why);
    }
}

int sb_run_plan(const sb_plan *plan, sb_ctx *ctx, sb_result_list *out,
                sb_err *err)
{
    int rc = 0;
    /* the probe around every point (one process on the host only) */
    sb_probe *pr = ctx->nranks <= 1 ? ctx->probe : NULL;
    if (ctx->interleave) {
        size_t first = out->n;
        int a = sb_probe_take(pr);
        rc = run_interleaved(plan, ctx, out, err);
        int b = sb_probe_take(pr);
        if (rc == 0)
            sb_probe_judge(pr, a, b, out, first, out->n);
    } else {
        size_t *from = pr ? calloc((size_t)plan->n + 1, sizeof *from) : NULL;
        int *at = pr ? calloc((size_t)plan->n + 1, sizeof *at) : NULL;
        for (int i = 0; i < plan->n && rc == 0; i++) {
            show_progress(ctx, "", i, plan);
            if (from && at) {
                from[i] = out->n;
                at[i] = sb_probe_take(pr);
            }
            rc = sb_run_point(plan->items[i].bench, plan->items[i].impl,
                              &plan->items[i].point, ctx, out, err);
        }
        show_progress(ctx, NULL, 0, plan);
        if (rc == 0 && from && at) {
            from[plan->n] = out->n;
            at[plan->n] = sb_probe_take(pr);
            for (int i = 0; i < plan->n; i++)
                sb_probe_judge(pr, at[i], at[i + 1], out, from[i], from[i + 1]);
        }
        free(from);
        free(at);
    }
    if (rc == 0)
        sb_run_check_consistency(ctx, out);
    return rc;
}
