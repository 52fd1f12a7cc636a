/*
 * sweep.c — memory.sweep: bandwidth of one kernel (read or triad by
 * default) over working-set sizes from 8 KiB up to past the last-level
 * cache, at one thread count per point, then the plateaus of that curve
 * (plateau.h) labelled L1/L2/L3/DRAM against the caches the OS reports.
 *
 * It drives its points itself: one result per size (bench "memory.sweep",
 * params kernel, threads, size), then one summary result per (kernel,
 * threads) with a bandwidth per level, where each level ends, and notes
 * where the curve disagrees with the OS. The all-thread read curve sets
 * the ceilings bw.L1, bw.L2, bw.L3 and bw.DRAM.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/memory/memory.h"
#include "solbench/plateau.h"
#include "solbench/runner.h"
#include "solbench/util.h"

#define SB__SWEEP_MAX_POINTS 512

static const sb_param_def sweep_params[] = {
    {"kernels", SB_P_STR, "read,triad", 0, 0, "read|triad|copy|scale|add|write",
     "kernels to sweep"},
    {"threads", SB_P_STR, "1,all", 0, 0, NULL,
     "thread counts: numbers or 'all' (the run's --threads)"},
    {"min_size", SB_P_SIZE, "8KiB", 1024, 1125899906842624.0, NULL,
     "smallest working set (bytes of all arrays)"},
    {"max_size", SB_P_SIZE, "0", 0, 0, NULL,
     "largest working set; 0: max(4x the last-level cache, 1 GiB)"},
    {"step", SB_P_FLOAT, "1.5", 1.05, 4, NULL, "size factor between points"},
    {"point_time", SB_P_FLOAT, "0.05", 0.001, 60, NULL,
     "seconds of samples per size (at most --min-time)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* Thread count of a point: "all" is the run's --threads. 0 when bad. */
static int point_threads(const sb_params *p, const sb_ctx *ctx)
{
    const char *t = sb_p_str(p, "threads");
    if (strcmp(t, "all") == 0)
        return ctx->threads > 0 ? ctx->threads : 1;
    char *end;
    long v = strtol(t, &end, 10);
    if (end == t || *end || v < 1 || v > 4096)
        return 0;
    return (int)v;
}

static double max_size_of(const sb_params *p, const sb_ctx *ctx)
{
    double m = sb_p_num(p, "max_size");
    if (m > 0)
        return m;
    sb_mem_caches mc;
    sb_mem_caches_read(&mc);
    m = 4.0 * sb_mem_llc_total(&mc);
    if (m < 1024.0 * 1024 * 1024)
        m = 1024.0 * 1024 * 1024;
    /* The automatic range never asks for more than a quarter of memory. */
    if (ctx && ctx->phys_mem > 0 && m > 0.25 * ctx->phys_mem)
        m = 0.25 * ctx->phys_mem;
    return m;
}

static int sweep_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    const sb_params *p = pt->params;
    if (point_threads(p, ctx) == 0)
        return sb_fail(err, SB_EINVAL,
                       "memory.sweep: threads=%s: expected "
                       "a count from 1 to 4096 or 'all'",
                       sb_p_str(p, "threads"));
    double lo = sb_p_num(p, "min_size"), hi = max_size_of(p, ctx);
    char a[32], b[32];
    if (hi < lo)
        return sb_fail(err, SB_EINVAL,
                       "memory.sweep: max_size=%s is below "
                       "min_size=%s",
                       sb_fmt_size(hi, a, sizeof a),
                       sb_fmt_size(lo, b, sizeof b));
    if (ctx->phys_mem > 0 && hi > ctx->phys_mem)
        return sb_fail(err, SB_EINVAL,
                       "memory.sweep: max_size=%s is more "
                       "than this machine's physical memory (%s)",
                       sb_fmt_size(hi, a, sizeof a),
                       sb_fmt_size(ctx->phys_mem, b, sizeof b));
    double steps = log(hi / lo) / log(sb_p_num(p, "step")) + 2;
    if (steps > SB__SWEEP_MAX_POINTS)
        return sb_fail(err, SB_EINVAL,
                       "memory.sweep: %.0f sizes from "
                       "min_size to max_size at step=%g; at most %d",
                       steps, sb_p_num(p, "step"), SB__SWEEP_MAX_POINTS);
    return 0;
}

static double sweep_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    const sb_params *p = pt->params;
    return max_size_of(p, ctx);
}

/* The sizes of the sweep: geometric from min to max, rounded to 1 KiB
 * (so every array holds whole cache lines), the maximum included. */
static int sweep_sizes(double lo, double hi, double step, double *out)
{
    int n = 0;
    for (double s = lo; n < SB__SWEEP_MAX_POINTS; s *= step) {
        double r = s < hi ? round(s / 1024.0) * 1024.0 : hi;
        if (r < lo)
            r = lo;
        if (n == 0 || r > out[n - 1])
            out[n++] = r;
        if (s >= hi)
            break;
    }
    return n;
}

static void add_pval(sb_params *p, const char *name, sb_ptype type,
                     const char *text, double num)
{
    if (p->n >= SB_MAX_PARAMS)
        return;
    sb_pval *v = &p->v[p->n++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    snprintf(v->text, sizeof v->text, "%s", text);
    v->type = type;
    v->num = num;
}

static void point_params(sb_params *p, const char *kernel, int threads,
                         double size)
{
    char buf[32];
    memset(p, 0, sizeof *p);
    add_pval(p, "kernel", SB_P_STR, kernel, 0);
    snprintf(buf, sizeof buf, "%d", threads);
    add_pval(p, "threads", SB_P_INT, buf, threads);
    if (size > 0) {
        snprintf(buf, sizeof buf, "%.0f", size);
        add_pval(p, "size", SB_P_SIZE, buf, size);
    }
}

static int sweep_drive(const sb_point *pt, sb_ctx *ctx, sb_result_list *out,
                       sb_err *err)
{
    const sb_params *p = pt->params;
    const char *kname = sb_p_str(p, "kernels");
    int k = sb_mem_kernel_from_name(kname);
    int threads = point_threads(p, ctx);
    if (k < 0 || threads < 1)
        return sb_fail(err, SB_EINVAL, "memory.sweep: bad point");

    double sizes[SB__SWEEP_MAX_POINTS], bw[SB__SWEEP_MAX_POINTS];
    int n = sweep_sizes(sb_p_num(p, "min_size"), max_size_of(p, ctx),
                        sb_p_num(p, "step"), sizes);

    sb_ctx lc = *ctx;
    lc.threads = threads;
    double ptime = sb_p_num(p, "point_time");
    if (ptime < lc.min_time)
        lc.min_time = ptime;
    sb_threads_setup(threads);

    bool all_valid = true;
    int rc = 0, done = 0;
    for (int i = 0; i < n; i++) {
        if (ctx->progress) {
            char a[32];
            fprintf(stderr, "\rmemory.sweep %s threads=%d size=%s (%d/%d)   ",
                    kname, threads, sb_fmt_size(sizes[i], a, sizeof a), i + 1,
                    n);
            fflush(stderr);
        }
        sb_mem_state *s = NULL;
        rc = sb_mem_setup((sb_mem_kernel)k, false, false, sizes[i], threads, &s,
                          err);
        if (rc)
            break;
        sb_result *r = sb_results_push(out);
        if (!r) {
            sb_mem_teardown(s);
            rc = sb_fail(err, SB_ENOMEM, "out of memory");
            break;
        }
        sb_result_init(r, "memory.sweep", "memory", "cpu");
        point_params(&r->params, kname, threads, sizes[i]);
        rc = sb_sample_loop(sb_mem_run, NULL, s, &lc, r, err);
        if (rc == 0)
            rc = sb_mem_verify(s, r);
        double bytes =
            (double)s->n * (double)s->elem * sb_mem_words((sb_mem_kernel)k);
        sb_mem_teardown(s);
        if (rc)
            break;
        double med = r->stats.p50, best = r->stats.min;
        sb_result_metric(r, "latency_us", med * 1e6, "us");
        sb_result_metric(r, "bytes", bytes, "B");
        sb_result_metric(r, "GBps", bytes / med * 1e-9, "GB/s");
        sb_result_metric(r, "GBps_best", bytes / best * 1e-9, "GB/s");
        /* Levels use each size's best figure: interference from other
         * work only slows a sample, so the best is the steadier estimate
         * of what a level can do (the per-size headline stays the median). */
        bw[i] = bytes / best * 1e-9;
        all_valid = all_valid && r->valid;
        done++;
    }
    if (ctx->progress)
        fprintf(stderr, "\r%60s\r", "");
    sb_threads_setup(ctx->threads);
    if (rc)
        return rc;

    /* The summary: plateaus of the best-figure curve. */
    sb_result *sum = sb_results_push(out);
    if (!sum)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    sb_result_init(sum, "memory.sweep", "memory", "cpu");
    point_params(&sum->params, kname, threads, 0);
    sum->valid = all_valid;

    sb_plateau pl[SB_PLATEAU_MAX];
    int np = sb_plateau_detect(sizes, bw, done, NULL, pl, SB_PLATEAU_MAX);
    if (np <= 0) {
        sb_result_note(sum, "summary: no plateau found in %d sizes", done);
        return 0;
    }
    sb_mem_caches mc;
    sb_mem_caches_read(&mc);
    double cache[5] = {0};
    for (int l = 1; l <= mc.nlevels && l < 5; l++)
        cache[l] = sb_mem_cache_for_threads(&mc, l, threads);
    char notes[8][160];
    int nn =
        sb_plateau_label(pl, np, cache, mc.nlevels, sizes[done - 1], notes, 8);
    sb_result_note(sum,
                   "summary of %d sizes: plateaus by the rule of "
                   "docs/METRICS.md (memory)",
                   done);
    for (int j = 0; j < np; j++) {
        char name[40], a[32], b[32];
        snprintf(name, sizeof name, "%s_GBps", pl[j].label);
        sb_result_metric(sum, name, pl[j].bw, "GB/s");
        snprintf(name, sizeof name, "%s_start_B", pl[j].label);
        sb_result_metric(sum, name, pl[j].start, "B");
        snprintf(name, sizeof name, "%s_end_B", pl[j].label);
        sb_result_metric(sum, name, pl[j].end, "B");
        sb_result_note(sum, "%s: %s to %s, %.1f GB/s", pl[j].label,
                       sb_fmt_size(pl[j].start, a, sizeof a),
                       sb_fmt_size(pl[j].end, b, sizeof b), pl[j].bw);
    }
    for (int j = 0; j < nn; j++)
        sb_result_note(sum, "%s", notes[j]);
    char os[160] = "";
    for (int l = 1; l <= mc.nlevels && l < 5; l++) {
        char a[32];
        size_t used = strlen(os);
        if (cache[l] > 0)
            snprintf(os + used, sizeof os - used, "%sL%d %s", used ? ", " : "",
                     l, sb_fmt_size(cache[l], a, sizeof a));
    }
    if (os[0])
        sb_result_note(sum, "OS caches as %d thread%s see them: %s", threads,
                       threads == 1 ? "" : "s", os);

    /* Ceilings: the read curve at the run's full thread count. */
    if (k == SB_MEM_READ && threads == ctx->threads && all_valid) {
        for (int j = 0; j < np; j++) {
            char name[40];
            snprintf(name, sizeof name, "bw.%s", pl[j].label);
            if (strcmp(pl[j].label, "DRAM") == 0)
                sb_mem_ceil_offer(&ctx->ceil, name, pl[j].bw * 1e9, true);
            else if (pl[j].label[0] == 'L')
                sb_ceil_set(&ctx->ceil, name, pl[j].bw * 1e9, "measured");
        }
    }
    return 0;
}

static const sb_impl memory_sweep_cpu = {
    .backend = "cpu",
    .drive = sweep_drive,
};

const sb_bench sb_bench_memory_sweep = {
    .name = "memory.sweep",
    .area = "memory",
    .desc = "read and triad bandwidth over working-set sizes; cache "
            "plateaus L1/L2/L3/DRAM",
    .params = sweep_params,
    .quick = "step=2 max_size=256MiB point_time=0.02",
    .full = "step=1.5",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .check = sweep_check,
    .footprint = sweep_footprint,
    .impls = (const sb_impl *const[]){&memory_sweep_cpu, NULL},
};
