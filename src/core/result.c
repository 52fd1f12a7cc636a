/*
 * result.c — one measured point: samples, stats, metrics, notes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/result.h"
#include "solbench/bench.h"
#include "solbench/util.h"

void sb_result_init(sb_result *r, const char *bench, const char *area,
                    const char *backend)
{
    memset(r, 0, sizeof *r);
    snprintf(r->bench, sizeof r->bench, "%s", bench ? bench : "");
    snprintf(r->area, sizeof r->area, "%s", area ? area : "");
    snprintf(r->backend, sizeof r->backend, "%s", backend ? backend : "cpu");
}

void sb_result_free(sb_result *r)
{
    free(r->samples_s);
    for (int i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    memset(r, 0, sizeof *r);
}

int sb_result_add_sample(sb_result *r, double seconds)
{
    return sb_dpush(&r->samples_s, &r->n_samples, &r->cap_samples, seconds);
}

void sb_result_metric(sb_result *r, const char *name, double value,
                      const char *unit)
{
    int i = 0;
    while (i < r->n_metrics && strcmp(r->metrics[i].name, name) != 0)
        i++;
    if (i == r->n_metrics) {
        if (r->n_metrics >= SB_MAX_METRICS)
            return; /* the table is sized well above any bench's needs */
        r->n_metrics++;
    }
    snprintf(r->metrics[i].name, sizeof r->metrics[i].name, "%s", name);
    snprintf(r->metrics[i].unit, sizeof r->metrics[i].unit, "%s",
             unit ? unit : "");
    r->metrics[i].value = value;
}

const sb_metric *sb_result_get(const sb_result *r, const char *name)
{
    for (int i = 0; i < r->n_metrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0)
            return &r->metrics[i];
    return NULL;
}

void sb_result_note(sb_result *r, const char *fmt, ...)
{
    if (r->n_notes >= SB_MAX_NOTES)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int i = 0; i < r->n_notes; i++)
        if (strcmp(r->notes[i], buf) == 0)
            return; /* the same note twice says nothing new */
    char *s = strdup(buf);
    if (s)
        r->notes[r->n_notes++] = s;
}

void sb_result_finish_stats(sb_result *r)
{
    sb_stats_compute(r->samples_s, r->n_samples, &r->stats);
}

sb_result *sb_results_push(sb_result_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        sb_result *it = realloc(l->items, cap * sizeof *it);
        if (!it)
            return NULL;
        l->items = it;
        l->cap = cap;
    }
    sb_result *r = &l->items[l->n++];
    memset(r, 0, sizeof *r);
    return r;
}

int sb_results_push_skipped(sb_result_list *l, const char *bench,
                            const char *area, const char *backend,
                            const sb_params *p, sb_err *err, const char *fmt,
                            ...)
{
    sb_result *r = sb_results_push(l);
    if (!r)
        return sb_fail(err, SB_ENOMEM, "%s: out of memory", bench);
    sb_result_init(r, bench, area, backend);
    r->params = *p;
    r->skipped = true;
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    sb_result_note(r, "%s", why);
    return 0;
}

void sb_results_free(sb_result_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        sb_result_free(&l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

bool sb_metric_higher_better(const char *name, const char *unit)
{
    /* A rate (GB/s, GFLOP/s, tok/s) is better higher, whatever its name. */
    size_t ul = unit ? strlen(unit) : 0;
    if (ul >= 2 && strcmp(unit + ul - 2, "/s") == 0)
        return true;
    static const char *lower[] = {"latency", "time",      "_us",   "_ms",
                                  "_s",      "imbalance", "wrong", "err"};
    for (size_t i = 0; i < sizeof lower / sizeof lower[0]; i++)
        if (strstr(name, lower[i]))
            return false;
    if (unit && (strcmp(unit, "s") == 0 || strcmp(unit, "us") == 0 ||
                 strcmp(unit, "ms") == 0 || strcmp(unit, "ns") == 0))
        return false;
    return true;
}

/* Kernels at or above this arithmetic intensity (FLOP/B) are headlined by
 * their FLOP rate, below it by their bandwidth: above every CPU ridge point
 * measured so far, and the side of the roofline such kernels aim for. */
#define SB_HEADLINE_AI 8.0

const sb_metric *sb_result_headline(const sb_result *r, bool *higher_better)
{
    /* latency_ns: a load's latency (memory.latency), before the
     * per-iteration latency_us every timed result has */
    static const char *order[] = {"busbw_GBps", "GBps",         "TFLOPs",
                                  "GFLOPs",     "tokens_per_s", "latency_ns",
                                  "latency_us"};
    static const char *compute_order[] = {
        "busbw_GBps",   "TFLOPs",     "GFLOPs",    "GBps",
        "tokens_per_s", "latency_ns", "latency_us"};
    const sb_bench *b = sb_bench_find(r->bench, NULL);
    const sb_metric *own =
        b && b->headline ? sb_result_get(r, b->headline) : NULL;
    if (own) {
        if (higher_better)
            *higher_better = sb_metric_higher_better(own->name, own->unit);
        return own;
    }
    const sb_metric *ai = sb_result_get(r, "AI");
    if (ai && ai->value >= SB_HEADLINE_AI) {
        for (size_t i = 0; i < sizeof compute_order / sizeof compute_order[0];
             i++) {
            const sb_metric *m = sb_result_get(r, compute_order[i]);
            if (m) {
                if (higher_better)
                    *higher_better = sb_metric_higher_better(m->name, m->unit);
                return m;
            }
        }
    }
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        const sb_metric *m = sb_result_get(r, order[i]);
        if (m) {
            if (higher_better)
                *higher_better = sb_metric_higher_better(m->name, m->unit);
            return m;
        }
    }
    if (r->n_metrics > 0) {
        if (higher_better)
            *higher_better =
                sb_metric_higher_better(r->metrics[0].name, r->metrics[0].unit);
        return &r->metrics[0];
    }
    return NULL;
}
