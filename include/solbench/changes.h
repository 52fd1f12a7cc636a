/*
 * changes.h — a benchmark's history as series, and the change points in
 * them.
 *
 * A series is one point (benchmark + parameters: its point key) on one
 * machine (fingerprint), its valid results in the order their runs
 * started: the headline figure of each run. The change-point detector
 * (changepoint.h: E-Divisive means with a permutation test) splits each
 * series where its level moved; a change against the figure's direction
 * is a regression, with it an improvement. docs/HISTORY.md.
 */
#ifndef SOLBENCH_CHANGES_H
#define SOLBENCH_CHANGES_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/changepoint.h"
#include "solbench/error.h"
#include "solbench/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One run of a series. */
typedef struct sb_series_run {
    char run_id[64];
    char started_at[40];
    char commit[72]; /* the run's commit tag ("" if none; up to 64) */
    double value;    /* the headline figure */
    double cv;       /* of its samples */
    /* the figure at the samples' p10-p90 spread, lo <= value <= hi: the
     * headline scaled by p50/p90 and p50/p10 of the time per iteration
     * (higher is better: a rate) or by p10/p50 and p90/p50 (a time); NaN
     * both where the run has no p10 (stored before schema 6) */
    double lo, hi;
    int stable; /* 1, 0, -1 when not judged */
} sb_series_run;

/* One point's series on one machine, oldest run first. */
typedef struct sb_series {
    char key[160];        /* point key */
    char fingerprint[80]; /* the machine's ("" if none) */
    char bench[64];
    char backend[16];
    char params[256]; /* "size=67108864 nt=0" */
    char metric[32];  /* headline metric */
    char unit[16];
    /* 1, 0: as recorded, else as the metric's name and unit say
     * (sb_metric_higher_better) */
    int higher_better;
    sb_series_run *runs;
    size_t n, cap;
    sb_cp_point *cps; /* its change points, by run index */
    size_t n_cps;
} sb_series;

typedef struct sb_series_set {
    sb_series *s;
    size_t n, cap;
    size_t rows; /* results read */
} sb_series_set;

/* The series of the `last_runs` newest runs (0: all) holding a result of
 * `bench` (a glob, NULL: every benchmark), valid, not skipped, with a
 * positive headline figure. */
int sb_series_load(sb_store *st, const char *bench, int last_runs,
                   sb_series_set *out, sb_err *err);
/* The change points of every series with enough runs (o: NULL for the
 * defaults). */
int sb_series_detect(sb_series_set *set, const sb_cp_opts *o, sb_err *err);
/* Keeps only the series whose newest run is run_id (the points of one
 * run, on its machine), freeing the others. */
void sb_series_keep_run(sb_series_set *set, const char *run_id);
/* Whether s has enough runs for a change point (2 min_size). */
bool sb_series_testable(const sb_series *s, const sb_cp_opts *o);
/* Whether change point cp of s is a regression (against the figure's
 * direction), not an improvement. */
bool sb_series_regressed(const sb_series *s, const sb_cp_point *cp);
void sb_series_free(sb_series_set *set);

#ifdef __cplusplus
}
#endif

#endif
