/*
 * report.h — the roofline table of a run (every measured kernel with its
 * arithmetic intensity, achieved and attainable performance, % of SOL, the
 * ceiling that binds it and its class), the charts (hierarchical roofline,
 * bandwidth versus size, collective bus bandwidth versus size, phase
 * breakdown) as inline SVG, and the self-contained HTML report.
 */
#ifndef SOLBENCH_REPORT_H
#define SOLBENCH_REPORT_H

#include <stdio.h>

#include "solbench/bench.h"
#include "solbench/output.h"
#include "solbench/roofline.h"
#include "solbench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sb_roof_row {
    char bench[64];
    char params[160];
    char dtype[8];
    bool on_chart;     /* has FLOPs and bytes: a point of the FLOP roofline */
    double flops_s;    /* achieved FLOP/s (0 for pure data movers) */
    double bytes_s;    /* achieved B/s */
    double ai;         /* FLOP per byte, 0 when no FLOPs */
    double achieved;   /* in `unit` */
    double attainable; /* in `unit` */
    double pct_sol;
    char unit[8];     /* "FLOP/s", "B/s", "s" */
    char ceiling[40]; /* "peak.fp32", "bw.L2", "net.allreduce", ... */
    sb_bound bound;
    bool valid;
    /* sb_roof_table: whether the machine model had the ceiling it needs
     * (else `why` says which it lacks), and its number on the chart and in
     * the table (0: not a point of the FLOP roofline) */
    bool placed;
    int num;
    char why[96];
} sb_roof_row;

/* Cache capacities for choosing the memory level a kernel's working set
 * lives in (0 = unknown; then the slowest level whose roof is not below
 * the achieved bandwidth is taken). */
typedef struct sb_cache_sizes {
    double bytes[4]; /* L1, L2, L3 (per instance, as a kernel sees them) */
} sb_cache_sizes;

/* Reads cache sizes from a run's system fingerprint when present. */
void sb_cache_sizes_from_run(const sb_run *run, sb_cache_sizes *cs);

/* Places one result. Returns 0 when the result was placed, 1 when it is
 * not a kernel measurement (skipped, a sweep summary, a fit), or a
 * negative code when the ceilings lack what it needs. */
int sb_roof_classify(const sb_result *r, const sb_ceilings *c,
                     const sb_cache_sizes *cs, sb_roof_row *out);

/* The table for a whole run; *rows is malloc'ed. Each row's params are
 * those that tell it from the run's other results of its benchmark and
 * those not at their default; points of the FLOP roofline are numbered
 * 1, 2, ... as the chart numbers them; a result whose ceiling the model
 * lacks is kept with placed = false and the reason. */
int sb_roof_table(const sb_run *run, const sb_ceilings *c, sb_roof_row **rows,
                  int *n);
/* Prints the ceilings, the placed rows (numbered as on the chart) and one
 * line naming what could not be placed. Returns how many were placed. */
int sb_roof_print(FILE *f, const sb_roof_row *rows, int n,
                  const sb_ceilings *c);
/* How many rows are points of the FLOP roofline chart. */
int sb_roof_points(const sb_roof_row *rows, int n);

/* ---- charts (SVG text appended to a growing buffer) --------------------- */

typedef struct sb_buf {
    char *s;
    size_t n, cap;
    bool oom;
} sb_buf;

void sb_buf_printf(sb_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s as it is. */
void sb_buf_put(sb_buf *b, const char *s);
/* Appends s with &, <, >, " and ' as entities: safe in text and in a
 * quoted attribute alike. */
void sb_buf_esc(sb_buf *b, const char *s);
void sb_buf_free(sb_buf *b);

/* Hierarchical roofline: one roof per memory level (bw.*) and per dtype
 * peak (peak.*), kernels as labelled points; log-log axes. */
void sb_svg_roofline(sb_buf *b, const sb_ceilings *c, const sb_roof_row *rows,
                     int n, int width, int height);
/* A log-log line chart; series are given as arrays. */
typedef struct sb_line_series {
    char name[64];
    int n;
    double *x, *y;
} sb_line_series;
typedef struct sb_hline {
    char name[32];
    double y;
} sb_hline;
void sb_svg_lines(sb_buf *b, const char *title, const char *xlabel,
                  const char *ylabel, bool x_bytes, const sb_line_series *s,
                  int ns, const sb_hline *hl, int nh, int width, int height);
/* Stacked bar of the phases of a prediction, one bar per stage, coloured
 * by class. */
void sb_svg_phases(sb_buf *b, const sb_prediction *p, int width);

/* Writes the roofline chart as a standalone SVG file. */
int sb_svg_write(const char *path, const sb_buf *svg, sb_err *err);
/* Writes a chart as a w x h PNG: its SVG in a temporary file, rendered by
 * a headless Chromium found on PATH (SB_EUNSUP without one). */
int sb_png_write(const char *png, const sb_buf *svg, int w, int h, sb_err *err);

struct sb_trace;
struct sb_tr_analysis;
/* A profiler trace analysed against the report's machine (trace.h). */
typedef struct sb_report_trace {
    const struct sb_trace *t;
    const struct sb_tr_analysis *a;
} sb_report_trace;

/* The HTML report: run (may be NULL), ceilings, prediction (may be NULL),
 * trace (may be NULL: its ops on the roofline, its table and phases). */
int sb_report_html(const char *path, const sb_run *run, const sb_ceilings *c,
                   const char *machine_desc, const sb_prediction *p,
                   const sb_report_trace *tr, sb_err *err);
struct sb_fleet_report;
/* A fleet run's report (fleet.h) as one self-contained HTML page (inline
 * CSS, no script): the verdict, the hosts x metrics heat map (each cell
 * coloured by its deviation from the metric's median over the hosts,
 * worse in red; flagged cells with class "flag"), the link and latency
 * matrices with the slow links, the collectives and a legend. Every
 * string of the report is escaped. 0, or sb_file_fopen's error (SB_EIO
 * "PATH: <strerror>"; SB_EINVAL for a directory, a FIFO), SB_EIO "PATH:
 * write failed", SB_ENOMEM. */
int sb_fleet_write_html(const struct sb_fleet_report *r, const char *path,
                        sb_err *err);
/* A trace's ops as roofline rows (those with FLOPs and bytes on the chart),
 * the `max` with most time; *rows is malloc'ed. */
int sb_trace_roof_rows(const struct sb_tr_analysis *a, int max,
                       sb_roof_row **rows, int *n);

/* Writes a run as a Chrome trace (Trace Event Format JSON, for Perfetto
 * and chrome://tracing): one track per benchmark, each sample a slice as
 * long as its time per iteration, a result without samples (skipped, or
 * a sweep's summary) an instant event. The run has no sample timestamps,
 * so the timeline is synthetic (samples laid end to end per benchmark, in
 * result order; docs/SCHEMA.md). Errors name the file in one line, as
 * sb_run_write_json's do. */
int sb_run_write_chrome_trace(const sb_run *run, const char *path, sb_err *err);

#ifdef __cplusplus
}
#endif

#endif
