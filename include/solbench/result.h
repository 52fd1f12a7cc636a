/*
 * result.h — one measured point (sb_result) and one run (sb_run): the data
 * model behind the JSON schema "solbench.run/1" (docs/SCHEMA.md).
 */
#ifndef SOLBENCH_RESULT_H
#define SOLBENCH_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/param.h"
#include "solbench/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SB_MAX_METRICS 40
#define SB_MAX_NOTES 16

typedef struct sb_metric {
    char name[40];
    double value;
    char unit[16];
} sb_metric;

typedef struct sb_result {
    char bench[64];    /* "memory.triad" */
    char area[24];     /* "memory" */
    char backend[16];  /* "cpu", "cuda", "host" */
    sb_params params;  /* the point measured */
    double *samples_s; /* seconds per iteration, one per sample (owned) */
    size_t n_samples;
    size_t cap_samples;
    sb_stats stats; /* over samples_s */
    sb_metric metrics[SB_MAX_METRICS];
    int n_metrics;
    bool valid;                /* verification passed */
    bool skipped;              /* not measured; notes[0] says why */
    char *notes[SB_MAX_NOTES]; /* owned strings */
    int n_notes;
    /* Stability (stability.h): judged when the result has samples; stable
     * when nothing in them or around them says the figure may not repeat;
     * stab_why names what was seen, "; "-separated. */
    bool stab_judged, stable;
    unsigned stab_flags;
    char stab_why[320];
} sb_result;

/* Initialises r for bench/area/backend (samples empty, valid = false). */
void sb_result_init(sb_result *r, const char *bench, const char *area,
                    const char *backend);
void sb_result_free(sb_result *r);
int sb_result_add_sample(sb_result *r, double seconds);
/* Sets (or replaces) a metric. */
void sb_result_metric(sb_result *r, const char *name, double value,
                      const char *unit);
/* NULL when absent. */
const sb_metric *sb_result_get(const sb_result *r, const char *name);
void sb_result_note(sb_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Recomputes stats from samples. */
void sb_result_finish_stats(sb_result *r);

/* A growable list of results. */
typedef struct sb_result_list {
    sb_result *items;
    size_t n, cap;
} sb_result_list;

/* Appends a zeroed slot and returns it (NULL on allocation failure). */
sb_result *sb_results_push(sb_result_list *l);
/* Appends a skipped result for point p of a benchmark, with one note (the
 * reason, printf-style). SB_ENOMEM (and err filled) when the list cannot
 * grow, else 0. */
int sb_results_push_skipped(sb_result_list *l, const char *bench,
                            const char *area, const char *backend,
                            const sb_params *p, sb_err *err, const char *fmt,
                            ...) __attribute__((format(printf, 7, 8)));
void sb_results_free(sb_result_list *l);

/* Headline metric of a result: the name and whether higher is better.
 * Order: busbw_GBps, GBps, TFLOPs, GFLOPs, tokens_per_s, latency_ns,
 * latency_us. */
const sb_metric *sb_result_headline(const sb_result *r, bool *higher_better);
/* Whether higher values of a metric (by name and unit) are better. */
bool sb_metric_higher_better(const char *name, const char *unit);

#ifdef __cplusplus
}
#endif

#endif
