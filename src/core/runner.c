/*
 * runner.c — selection, planning and the timing loop every benchmark shares.
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

/* ---- selection ----------------------------------------------------------- */

static bool in_list(const char *list, const char *item)
{
    if (!list)
        return false;
    size_t n = strlen(item);
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, item, n) == 0)
            return true;
        if (!comma)
            break;
        p = comma + 1;
    }
    return false;
}

/* Calls fn(item) for each element of a comma-separated list; stops at the
 * first non-zero return. */
static int each_item(const char *list, int (*fn)(const char *, void *),
                     void *arg)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        int rc = fn(t, arg);
        if (rc)
            return rc;
    }
    return 0;
}

static int check_area(const char *a, void *arg)
{
    sb_err *err = arg;
    for (const char *const *k = sb_areas(); *k; k++)
        if (strcmp(*k, a) == 0)
            return 0;
    return sb_fail(err, SB_EINVAL,
                   "--area %s: unknown area (areas: compute, "
                   "memory, transfer, attention, moe, ops, network)",
                   a);
}

static int check_name(const char *n, void *arg)
{
    sb_err *err = arg;
    for (const sb_bench *const *b = sb_registry(); *b; b++)
        if (strcmp((*b)->name, n) == 0)
            return 0;
    if (strncmp(n, "network.", 8) == 0)
        return sb_fail(err, SB_EINVAL,
                       "--bench %s: this build has no network "
                       "area (MPI was not found when it was built)",
                       n);
    return sb_fail(err, SB_EINVAL,
                   "--bench %s: unknown benchmark (see "
                   "'solbench list')",
                   n);
}

/* A comma-separated list with no empty item, short enough to walk. */
static int check_list(const char *opt, const char *list, sb_err *err)
{
    size_t n = strlen(list);
    if (n >= 1024)
        return sb_fail(err, SB_EINVAL, "%s: list longer than 1023 characters",
                       opt);
    if (n == 0 || sb_list_has_empty(list, ','))
        return sb_fail(err, SB_EINVAL, "%s '%s': an empty item in the list",
                       opt, list);
    return 0;
}

/* Where a backend's benchmarks run in a plan: the host's first (phase 0:
 * cpu, host, mpi), then each device backend's; one this build does not
 * know last. */
static int backend_phase(const char *be)
{
    const sb_backend *d = sb_backend_find(be);
    return d ? d->phase : 99;
}

/* Whether --backend `want` takes an impl on backend `be`: its own, and
 * for cpu what runs on the host without an accelerator too (the MPI
 * collectives, host-to-host transfers). */
static bool backend_takes(const char *want, const char *be)
{
    if (!want || !*want)
        return true;
    return strcmp(be, want) == 0 ||
           (strcmp(want, "cpu") == 0 && sb_backend_is_host(be));
}

/* Whether a plan under --backend `want` runs backend d's impls. */
static bool backend_wanted(const sb_backend *d, const char *want)
{
    if (!d)
        return false;
    if (want && *want)
        return backend_takes(want, d->name);
    /* "every backend present": one without a device now runs only when
     * --backend names it (and then reports why it is skipped); one on
     * request only when its own wanted() says so */
    if (d->devices && d->devices() == 0)
        return false;
    if (d->caps & SB_BK_ON_REQUEST)
        return d->wanted && d->wanted();
    return true;
}

bool sb_backend_wanted(const char *name, const char *want)
{
    return backend_wanted(sb_backend_find(name), want);
}

int sb_select(const char *areas, const char *names, sb_suite suite,
              const char *backend, sb_selection *sel, sb_err *err)
{
    memset(sel, 0, sizeof *sel);
    if (areas &&
        (check_list("--area", areas, err) || each_item(areas, check_area, err)))
        return SB_EINVAL;
    if (names && (check_list("--bench", names, err) ||
                  each_item(names, check_name, err)))
        return SB_EINVAL;
    const sb_backend *chosen = backend ? sb_backend_find(backend) : NULL;
    if (backend && (!chosen || !(chosen->caps & SB_BK_SELECT))) {
        char have[200] = "";
        for (const sb_backend *const *d = sb_backends(); *d; d++)
            if ((*d)->caps & SB_BK_SELECT) {
                size_t used = strlen(have);
                snprintf(have + used, sizeof have - used, "%s%s",
                         used ? ", " : "", (*d)->name);
            }
        return sb_fail(err, SB_EINVAL,
                       "--backend '%s': unknown backend (this build has %s)",
                       backend, have[0] ? have : "none");
    }

    int cap = 0;
    for (const sb_bench *const *b = sb_registry(); *b; b++)
        for (const sb_impl *const *im = (*b)->impls; *im; im++)
            cap++;
    sel->named = (areas && *areas) || (names && *names);
    sel->items = calloc((size_t)cap + 1, sizeof *sel->items);
    if (!sel->items)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    unsigned want =
        suite == SB_SUITE_FULL ? (SB_BF_QUICK | SB_BF_FULL) : SB_BF_QUICK;
    for (int phase = 0; phase < 3; phase++) /* the phases of backend.h */
        for (const sb_bench *const *b = sb_registry(); *b; b++)
            for (const sb_impl *const *im = (*b)->impls; *im; im++) {
                const char *be = (*im)->backend;
                if (backend_phase(be) != phase ||
                    !backend_wanted(sb_backend_find(be), backend))
                    continue;
                unsigned flags = sb_impl_flags(*b, *im);
                bool pick;
                if (names)
                    pick = in_list(names, (*b)->name) ||
                           (areas && in_list(areas, (*b)->area));
                else if (areas)
                    pick = in_list(areas, (*b)->area) && (flags & want);
                else
                    pick = (flags & want) != 0;
                if (pick)
                    sel->items[sel->n++] = (sb_sel_item){*b, *im};
            }
    if (sel->n == 0) {
        sb_selection_free(sel);
        return sb_fail(err, SB_EINVAL, "no benchmark matches the selection%s",
                       backend && *backend ? " and backend" : "");
    }
    return 0;
}

void sb_selection_free(sb_selection *sel)
{
    free(sel->items);
    memset(sel, 0, sizeof *sel);
}

bool sb_selection_needs_mpi(const sb_selection *sel)
{
    if (!sel->named)
        return false;
    for (int i = 0; i < sel->n; i++)
        if (sb_impl_flags(sel->items[i].bench, sel->items[i].impl) &
            SB_BF_NEEDS_MPI)
            return true;
    return false;
}

/* The backend that spans processes (MPI), when this build has one. */
static const sb_backend *session_backend(void)
{
    for (const sb_backend *const *d = sb_backends(); *d; d++)
        if ((*d)->session_begin)
            return *d;
    return NULL;
}

int sb_session_begin(const sb_selection *sel, int *argc, char ***argv,
                     sb_ctx *ctx, sb_err *err)
{
    const sb_backend *d = session_backend();
    if (d)
        return d->session_begin(argc, argv, sb_selection_needs_mpi(sel), ctx,
                                err);
    ctx->rank = 0;
    ctx->nranks = 1;
    return 0;
}

void sb_session_end(void)
{
    const sb_backend *d = session_backend();
    if (d && d->session_end)
        d->session_end();
}

void sb_session_abort(const char *msg, int code)
{
    const sb_backend *d = session_backend();
    if (d && d->session_abort)
        d->session_abort(msg, code);
    fprintf(stderr, "solbench: %s\n", msg);
    exit(code);
}

/* ---- planning ------------------------------------------------------------ */

int sb_plan_build(const sb_selection *sel, const sb_pset *user,
                  const sb_ctx *ctx, sb_plan *plan, sb_err *err)
{
    memset(plan, 0, sizeof *plan);
    /* Every -p key must mean something to at least one selected bench
     * (that its scope, if it has one, covers). */
    for (int k = 0; user && k < user->n; k++) {
        bool used = false, covered = false;
        char scope[SB_PKEY_LEN];
        const char *name;
        sb_pset_key_split(user->kv[k].key, scope, sizeof scope, &name);
        for (int i = 0; i < sel->n && !used; i++) {
            const sb_sel_item *si = &sel->items[i];
            bool c = sb_pscope_covers(scope, si->bench->name);
            covered |= c;
            used = c && sb_param_find(si->bench, si->impl, name);
        }
        if (!used && scope[0] && !covered)
            return sb_fail(err, SB_EINVAL,
                           "-p %s: no selected benchmark is "
                           "or belongs to '%s'",
                           user->kv[k].key, scope);
        if (!used && scope[0])
            return sb_fail(err, SB_EINVAL,
                           "-p %s: no selected benchmark in "
                           "'%s' takes a parameter '%s' (see 'solbench list')",
                           user->kv[k].key, scope, name);
        if (!used) {
            if (sel->n == 1) {
                char names[400] = "";
                sb_param_def defs[SB_MAX_PARAMS + 1];
                sb_params_of(sel->items[0].bench, sel->items[0].impl, defs,
                             SB_MAX_PARAMS + 1);
                for (const sb_param_def *d = defs; d->name; d++) {
                    if (names[0])
                        strncat(names, ", ", sizeof names - strlen(names) - 1);
                    strncat(names, d->name, sizeof names - strlen(names) - 1);
                }
                return sb_fail(err, SB_EINVAL,
                               "-p %s: unknown parameter '%s' "
                               "for %s (it takes: %s)",
                               user->kv[k].key, user->kv[k].key,
                               sel->items[0].bench->name,
                               names[0] ? names : "no parameters");
            }
            return sb_fail(err, SB_EINVAL,
                           "-p %s: no selected benchmark takes "
                           "a parameter '%s' (see 'solbench list')",
                           user->kv[k].key, user->kv[k].key);
        }
    }

    int cap = 0;
    double together = 0.0; /* bytes the points hold at once, interleaved */
    for (int i = 0; i < sel->n; i++) {
        const sb_bench *b = sel->items[i].bench;
        const sb_impl *im = sel->items[i].impl;
        if (ctx->interleave &&
            (!im->run || im->drive || im->timer || im->summarize ||
             (sb_impl_flags(b, im) & SB_BF_NEEDS_MPI))) {
            bool cpu = strcmp(im->backend, "cpu") == 0;
            /* a device's benchmarks leave with --backend cpu; the host's
             * transfers and the MPI ones come with it, so name them */
            bool cuda = !sb_backend_is_host(im->backend);
            sb_fail(err, SB_EINVAL,
                    "--interleave: %s%s%s takes its own "
                    "samples, so it cannot share rounds with other points%s",
                    b->name, cpu ? "" : " on ", cpu ? "" : im->backend,
                    cuda && !ctx->backend[0]
                        ? " (--backend cpu leaves it out)"
                        : " (leave it out of --bench or --area)");
            goto fail;
        }
        sb_pset suite_defaults = {0};
        const char *spec = sb_suite_spec(b, im, ctx->suite);
        if (sb_pset_add_all(&suite_defaults, spec, err))
            goto fail;
        sb_pset mine;
        sb_pset_for_bench(user, b->name, &mine);
        const sb_pset *layers[2] = {&suite_defaults, &mine};
        const bool lenient[2] = {false, true};
        sb_param_def defs[SB_MAX_PARAMS + 1];
        sb_params_of(b, im, defs, SB_MAX_PARAMS + 1);
        sb_params *pts = NULL;
        int npts = 0;
        if (sb_params_expand(b->name, defs, layers, lenient, 2, &pts, &npts,
                             err))
            goto fail;
        for (int j = 0; j < npts; j++) {
            char where[512], pbuf[400];
            sb_params_fmt(&pts[j], pbuf, sizeof pbuf);
            snprintf(where, sizeof where, "%s %s", b->name, pbuf);
            sb_point pt;
            if (sb_point_make(b, im, &pts[j], &pt, err)) {
                free(pts);
                goto fail;
            }
            int crc = sb_point_check(&pt, ctx, err);
            double need = crc ? 0.0 : sb_point_footprint(&pt, ctx);
            sb_point_release(&pt);
            if (crc) {
                free(pts);
                goto fail;
            }
            /* one rule (util.h): a footprint above SB_MEM_SHARE of the
             * memory available when the run began is refused */
            double have = ctx->force ? 0 : ctx->mem_avail;
            if (sb_mem_fits(need, have, where, err)) {
                free(pts);
                goto fail;
            }
            together += need;
            if (ctx->interleave) {
                char w2[600];
                snprintf(w2, sizeof w2,
                         "--interleave: the points up to %s, together,", where);
                if (sb_mem_fits(together, have, w2, err)) {
                    free(pts);
                    goto fail;
                }
            }
            if (plan->n == cap) {
                cap = cap ? 2 * cap : 32;
                sb_plan_item *it =
                    realloc(plan->items, (size_t)cap * sizeof *it);
                if (!it) {
                    free(pts);
                    sb_fail(err, SB_ENOMEM, "out of memory");
                    goto fail;
                }
                plan->items = it;
            }
            plan->items[plan->n].bench = b;
            plan->items[plan->n].impl = im;
            plan->items[plan->n].point = pts[j];
            plan->n++;
        }
        free(pts);
    }
    return 0;
fail:
    sb_plan_free(plan);
    return err ? (err->code ? err->code : SB_EINVAL) : SB_EINVAL;
}

void sb_plan_free(sb_plan *plan)
{
    free(plan->items);
    memset(plan, 0, sizeof *plan);
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
