/*
 * capacity.c — SLOs over the serving simulator's percentiles, and the
 * largest request rate a configuration serves within them
 * (include/solbench/capacity.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/capacity.h"

static const char *const metric_name[SB_SLO_N_METRICS] = {"ttft", "tpot", "itl",
                                                          "latency", "queue"};

/* One "metric_pNN=value[unit]" of length len at s. */
static int parse_term(const char *s, size_t len, sb_slo_term *t, sb_err *err)
{
    char term[96];
    if (len == 0 || len >= sizeof term)
        return sb_fail(err, SB_EINVAL,
                       "--slo: an empty or overlong term (terms like "
                       "ttft_p90=2s, separated by commas)");
    memcpy(term, s, len);
    term[len] = '\0';
    char *eq = strchr(term, '='), *us = strchr(term, '_');
    if (!eq || !us || us > eq)
        return sb_fail(err, SB_EINVAL,
                       "--slo '%s': expected metric_percentile=time, e.g. "
                       "ttft_p90=2s",
                       term);
    *us = '\0';
    *eq = '\0';
    int m = -1;
    for (int i = 0; i < SB_SLO_N_METRICS; i++)
        if (strcmp(term, metric_name[i]) == 0)
            m = i;
    const char *q = us + 1;
    int pct = strcmp(q, "p50") == 0    ? 50
              : strcmp(q, "p90") == 0  ? 90
              : strcmp(q, "p99") == 0  ? 99
              : strcmp(q, "mean") == 0 ? 0
                                       : -1;
    if (m < 0 || pct < 0)
        return sb_fail(err, SB_EINVAL,
                       "--slo '%s_%s': a metric of ttft, tpot, itl, latency, "
                       "queue and a percentile of p50, p90, p99, mean",
                       term, q);
    char *end;
    double v = strtod(eq + 1, &end);
    double unit = strcmp(end, "") == 0 || strcmp(end, "s") == 0 ? 1
                  : strcmp(end, "ms") == 0                      ? 1e-3
                  : strcmp(end, "us") == 0                      ? 1e-6
                                                                : -1;
    if (end == eq + 1 || unit < 0 || !(v > 0) || !isfinite(v))
        return sb_fail(err, SB_EINVAL,
                       "--slo %s_%s: '%s' is not a time (a positive number "
                       "with s, ms or us)",
                       term, q, eq + 1);
    if (v * unit > 1e6)
        return sb_fail(err, SB_EINVAL,
                       "--slo %s_%s: %s is more than 1e6 s (11.6 days)", term,
                       q, eq + 1);
    *t = (sb_slo_term){(sb_slo_metric)m, pct, v * unit};
    return 0;
}

int sb_slo_parse(const char *spec, sb_slo *out, sb_err *err)
{
    memset(out, 0, sizeof *out);
    if (!spec || !*spec)
        return sb_fail(err, SB_EINVAL, "--slo: empty");
    for (const char *s = spec;;) {
        size_t len = strcspn(s, ",");
        if (out->n == SB_SLO_MAX)
            return sb_fail(err, SB_EINVAL, "--slo: more than %d terms",
                           SB_SLO_MAX);
        int rc = parse_term(s, len, &out->t[out->n], err);
        if (rc)
            return rc;
        out->n++;
        if (!s[len])
            return 0;
        s += len + 1;
    }
}

const char *sb_slo_text(const sb_slo *slo, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < slo->n && at < len; i++) {
        const sb_slo_term *t = &slo->t[i];
        char q[8];
        if (t->pct)
            snprintf(q, sizeof q, "p%d", t->pct);
        else
            snprintf(q, sizeof q, "mean");
        double v = t->limit_s;
        int n = snprintf(buf + at, len - at, "%s%s_%s <= %g %s", i ? ", " : "",
                         metric_name[t->metric], q,
                         v >= 1      ? v
                         : v >= 1e-3 ? v * 1e3
                                     : v * 1e6,
                         v >= 1      ? "s"
                         : v >= 1e-3 ? "ms"
                                     : "us");
        at += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

double sb_slo_value(const sb_sim_out *o, const sb_slo_term *t)
{
    const sb_sim_dist *d = t->metric == SB_SLO_TTFT    ? &o->ttft
                           : t->metric == SB_SLO_TPOT  ? &o->tpot
                           : t->metric == SB_SLO_ITL   ? &o->itl
                           : t->metric == SB_SLO_QUEUE ? &o->queue
                                                       : &o->e2e;
    return t->pct == 50   ? d->p50
           : t->pct == 90 ? d->p90
           : t->pct == 99 ? d->p99
                          : d->mean;
}

bool sb_slo_met(const sb_slo *slo, const sb_sim_out *o)
{
    for (int i = 0; i < slo->n; i++)
        if (!(sb_slo_value(o, &slo->t[i]) <= slo->t[i].limit_s))
            return false;
    return true;
}

/* ---- the search ---------------------------------------------------------- */

typedef struct probe {
    const sb_workload *w;
    const sb_ceilings *c;
    const sb_slo *slo;
    bool calibrated; /* the workload's efficiencies applied */
    int requests;    /* a probe's simulated requests (one replica's) */
    sb_prediction *p;
    int runs;
} probe;

/* The requests a probe simulates: the workload's (1000 when it names
 * none), and at least 10 times the sequences a replica runs at once
 * (max_seqs). A batch that fills takes every arrival at once, without a
 * queue, until it is full: a run no longer than the fill saw an
 * overloaded machine as a sound one (1000 requests at 896 sequences
 * passed 233 requests/s on 8 H200s where 8000 showed a TTFT p99 of 131
 * s; docs/SERVING.md). At most SB_CAP_MAX_REQUESTS, for the search's
 * time. */
#define SB_CAP_MAX_REQUESTS 50000
static int probe_requests(const sb_workload *w)
{
    double n = w->sim_requests > 0 ? w->sim_requests : 1000;
    n = fmax(n, 10.0 * w->max_seqs * w->pipeline); /* a micro-batch's */
    return (int)fmin(n, SB_CAP_MAX_REQUESTS);
}

/* Whether rate (requests/s, the deployment's) is served within the SLOs,
 * keeping up with the arrivals (the queueing delay grows by less than 5 %
 * of the time elapsed: served at 0.95 of the offered rate or more); the
 * run stays in pr->p. */
static int feasible_n(probe *pr, double rate, int most, bool *ok, sb_err *err)
{
    sb_workload w = *pr->w;
    w.request_rate = rate;
    w.sim_requests = pr->requests;
    if (most > 0 && w.sim_requests > most)
        w.sim_requests = most;
    int rc = pr->calibrated ? sb_predict_calibrated(&w, pr->c, pr->p, err)
                            : sb_predict(&w, pr->c, pr->p, err);
    if (rc)
        return rc;
    pr->runs++;
    const sb_sim_out *o = &pr->p->sim;
    *ok = o->requests > 0 && o->queue_slope < 0.05 && sb_slo_met(pr->slo, o);
    return 0;
}

static void keep(const probe *pr, double rate, sb_capacity *out)
{
    const sb_prediction *p = pr->p;
    out->found = true;
    out->rate = rate;
    out->at = p->sim;
    /* what the deployment serves at that rate, sustained: the rate times
     * a request's mean output (the simulation's own figure spans the
     * ramp at its start and the drain at its end, a finite run's, and
     * falls under it) */
    out->tokens_per_s = p->sim.requests_per_s > 0
                            ? rate * p->sim.tokens_per_s / p->sim.requests_per_s
                            : 0;
    out->cost_per_mtok =
        sb_cost_per_mtok(p->price_chip_hour, pr->w->chips, out->tokens_per_s);
}

/* One rate tried (`most`: at most that many requests, 0: all): the
 * bracket moved to it, lo where the objectives hold (the run kept in
 * out), hi where they miss. */
static int step(probe *pr, double r, int most, double *lo, double *hi,
                sb_capacity *out, bool *ok, sb_err *err)
{
    int rc = feasible_n(pr, r, most, ok, err);
    if (rc)
        return rc;
    if (!(out->lowest_tried > 0) || r < out->lowest_tried)
        out->lowest_tried = r;
    if (!*ok)
        *hi = r;
    else if (most == 0) {
        keep(pr, r, out);
        *lo = r;
    }
    return 0;
}

static int capacity(const sb_workload *w, const sb_ceilings *c,
                    const sb_slo *slo, bool calibrated, sb_capacity *out,
                    sb_err *err)
{
    memset(out, 0, sizeof *out);
    if (w->kind != SB_JOB_INFER)
        return sb_fail(err, SB_EINVAL,
                       "capacity: an inference workload is needed");
    if (!slo || slo->n < 1)
        return sb_fail(err, SB_EINVAL,
                       "capacity: no objective (--slo ttft_p90=2s,...)");
    probe pr = {
        w, c, slo, calibrated, probe_requests(w), malloc(sizeof(sb_prediction)),
        0};
    if (!pr.p)
        return sb_fail(err, SB_ENOMEM, "capacity: out of memory");
    /* the steady state's estimate of the most the machine serves */
    sb_workload w0 = *w;
    w0.request_rate = 1e-6;
    w0.sim_requests = 0;
    int rc = calibrated ? sb_predict_calibrated(&w0, c, pr.p, err)
                        : sb_predict(&w0, c, pr.p, err);
    double est = rc ? 0 : pr.p->serve.max_request_rate;
    if (rc || !(est > 0)) {
        free(pr.p);
        return rc; /* nothing is served: found stays false */
    }
    bool ok = false;
    double lo = 0, hi = 0; /* hi 0: no rate missed yet */
    /* from the estimate, doubling while the objectives hold */
    if ((rc = step(&pr, est, 0, &lo, &hi, out, &ok, err)))
        goto done;
    for (int k = 0; ok && k < 16; k++)
        if ((rc = step(&pr, 2 * lo, 0, &lo, &hi, out, &ok, err)))
            goto done;
    if (!out->found) {
        /* a quarter of the estimate; then a light load, 1/64 of it,
         * screened with 200 requests (a request runs nearly alone there,
         * an iteration a token, and the simulation is slowest): missed
         * there, no rate meets them */
        if ((rc = step(&pr, est / 4, 0, &lo, &hi, out, &ok, err)))
            goto done;
        if (!ok && (rc = step(&pr, est / 64, 200, &lo, &hi, out, &ok, err)))
            goto done;
        if (ok && !out->found &&
            (rc = step(&pr, est / 64, 0, &lo, &hi, out, &ok, err)))
            goto done;
        /* geometric bisection down to a factor of 2 */
        while (out->found && hi / lo > 2)
            if ((rc = step(&pr, sqrt(lo * hi), 0, &lo, &hi, out, &ok, err)))
                goto done;
    }
    /* bisection to 1 % */
    while (out->found && hi > 0 && hi - lo > 0.01 * lo)
        if ((rc = step(&pr, 0.5 * (lo + hi), 0, &lo, &hi, out, &ok, err)))
            goto done;
done:
    out->simulations = pr.runs;
    out->requests = pr.requests;
    free(pr.p);
    return rc;
}

int sb_predict_capacity(const sb_workload *w, const sb_ceilings *c,
                        const sb_slo *slo, sb_capacity *out, sb_err *err)
{
    return capacity(w, c, slo, false, out, err);
}

int sb_predict_capacity_calibrated(const sb_workload *w, const sb_ceilings *c,
                                   const sb_slo *slo, sb_capacity *out,
                                   sb_err *err)
{
    return capacity(w, c, slo, true, out, err);
}

int sb_capacity_best(const sb_capacity *cap, const bool *ran, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (!ran[i] || !cap[i].found)
            continue;
        bool priced = cap[i].cost_per_mtok > 0 && best >= 0 &&
                      cap[best].cost_per_mtok > 0;
        if (best < 0 || (priced ? cap[i].cost_per_mtok < cap[best].cost_per_mtok
                                : cap[i].rate > cap[best].rate))
            best = i;
    }
    return best;
}
