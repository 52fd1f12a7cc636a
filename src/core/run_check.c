/*
 * run_check.c — the figures of a run document that came from elsewhere
 * (import): a document is a claim, and what it claims must be what a run
 * could have measured. The statistics are recomputed from the samples
 * when it is read (output.c); here the samples must be times, the rates
 * must be the ones those times give, and the parameters must pass the
 * benchmark's own rules, as `run -p` applies them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solbench/bench.h"
#include "solbench/output.h"

/* No sample of a point lasts longer than a day. */
#define SAMPLE_MAX_S 86400.0
/* No figure of a result is larger (a count, a byte total, a rate). */
#define FIGURE_MAX 1e30
/* A rate and the rate its samples give agree to this (both from one
 * median, printed with 17 digits). */
#define RATE_TOL 1e-6

static double metric(const sb_result *r, const char *name, bool *has)
{
    const sb_metric *m = sb_result_get(r, name);
    *has = m && isfinite(m->value);
    return *has ? m->value : 0;
}

/* The rate `rate` is `total` over the median (in units of 1e9), or the
 * median in microseconds for latency_us. */
static int check_rate(const sb_result *r, const char *where, const char *rate,
                      const char *total, sb_err *err)
{
    bool has_r, has_t = true;
    double v = metric(r, rate, &has_r);
    double t = total ? metric(r, total, &has_t) : 0;
    double p50 = r->stats.p50;
    if (!has_r || !has_t || !(p50 > 0))
        return 0;
    double want = total ? t / p50 / 1e9 : p50 * 1e6;
    if (want == 0 || fabs(v / want - 1) <= RATE_TOL)
        return 0;
    return sb_fail(err, SB_EINVAL,
                   "%s: %s is %.6g, but its samples give %.6g (%s): the "
                   "figures were not measured together",
                   where, rate, v, want,
                   total ? "its total over their median" : "their median");
}

int sb_run_check_figures(const sb_run *run, const char *label, sb_err *err)
{
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        char where[600], pbuf[400];
        snprintf(where, sizeof where, "%s: results[%zu] (%s %s)", label, i,
                 r->bench, sb_params_fmt(&r->params, pbuf, sizeof pbuf));
        for (size_t k = 0; k < r->n_samples; k++) {
            double s = r->samples_s[k];
            if (!isfinite(s) || s < 0 || s > SAMPLE_MAX_S)
                return sb_fail(err, SB_EINVAL,
                               "%s: sample %zu is %g s: not the time of one "
                               "iteration (0 to %.0f s)",
                               where, k, s, SAMPLE_MAX_S);
        }
        for (int k = 0; k < r->n_metrics; k++) {
            double v = r->metrics[k].value;
            if (isfinite(v) && fabs(v) > FIGURE_MAX)
                return sb_fail(err, SB_EINVAL,
                               "%s: metric %s is %g: larger than any "
                               "figure a run measures",
                               where, r->metrics[k].name, v);
            if (isinf(v))
                return sb_fail(err, SB_EINVAL, "%s: metric %s is infinite",
                               where, r->metrics[k].name);
        }
        if (check_rate(r, where, "GBps", "bytes", err) ||
            check_rate(r, where, "GFLOPs", "flops", err) ||
            check_rate(r, where, "latency_us", NULL, err))
            return SB_EINVAL;
        /* the parameters by the benchmark's rules, where this build has
         * the benchmark (a document from another build may name one it
         * lacks, or a parameter since retired: those are kept as read) */
        const sb_bench *b = sb_bench_find(r->bench, r->backend);
        const sb_impl *im = b ? sb_impl_find(b, r->backend) : NULL;
        for (int k = 0; b && k < r->params.n; k++) {
            const sb_pval *p = &r->params.v[k];
            const sb_param_def *d = sb_param_find(b, im, p->name);
            if (!d)
                continue;
            sb_pval out;
            sb_err perr = {0};
            /* a sweep's summary row stands for all its points */
            if (strcmp(p->text, "fit") == 0 || strcmp(p->text, "sweep") == 0)
                continue;
            if (sb_parse_value(d, p->text, &out, &perr))
                return sb_fail(err, SB_EINVAL, "%s: %s", where, perr.msg);
        }
    }
    return 0;
}
