/*
 * output.h — a run document (schema "solbench.run/1") and its renderings:
 * JSON, CSV and human tables.
 */
#ifndef SOLBENCH_OUTPUT_H
#define SOLBENCH_OUTPUT_H

#include <stdio.h>

#include "solbench/json_fwd.h"

#include "solbench/bench.h"
#include "solbench/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SB_SCHEMA "solbench.run/1"
/* Most samples a result holds (the runner stops taking them there), most
 * results a run document may hold, and the largest run document read. */
#define SB_RUN_MAX_SAMPLES 100000
#define SB_RUN_MAX_RESULTS 100000
#define SB_RUN_MAX_DOC_BYTES (64L << 20)

typedef struct sb_run {
    char run_id[40];
    char started_at[32]; /* UTC ISO-8601 */
    char ended_at[32];
    json_t *system; /* fingerprint (owned) */
    json_t *config; /* what must match for a fair comparison (owned) */
    json_t *tags;   /* object of strings (owned) */
    sb_result_list results;
} sb_run;

void sb_run_init(sb_run *run);
void sb_run_free(sb_run *run);
/* Makes a new run id: UTC time + random suffix. */
void sb_run_new_id(char *out, int len);
void sb_utc_now(char *out, int len);

/* The config of a run: everything that must match for a fair comparison
 * (see config.c). New reference. */
json_t *sb_run_config(const sb_ctx *ctx, const char *areas, const char *names,
                      const sb_pset *user);
/* Starts a new run in an initialised `run`: a fresh id, the start time,
 * the machine's fingerprint (sysinfo), the config as above, and `tags`
 * (a new reference is taken). `solbench run` and `check` both start runs
 * this way, so their runs compare like with like. */
void sb_run_begin(sb_run *run, const sb_ctx *ctx, const char *areas,
                  const char *names, const sb_pset *user, json_t *tags);

json_t *sb_result_to_json(const sb_result *r);
json_t *sb_run_to_json(const sb_run *run);
/* Parses a run document; checks every required field, with the JSON path
 * of the first wrong one in the error. Lenient on what the store itself
 * wrote (a non-string note, unit or tag is skipped); sb_run_read_json,
 * for documents from files, refuses those too (docs/SCHEMA.md). */
int sb_run_from_json(json_t *doc, sb_run *run, sb_err *err);
int sb_run_write_json(const sb_run *run, const char *path, sb_err *err);
int sb_run_read_json(const char *path, sb_run *run, sb_err *err);
/* The figures of a document from elsewhere (import): every sample a time
 * (0 to a day), every metric finite and below 1e30, GBps, GFLOPs and
 * latency_us the ones its samples' median gives with its bytes and flops,
 * every parameter this build knows within its benchmark's rules. `label`
 * names the document in the error (run_check.c). */
int sb_run_check_figures(const sb_run *run, const char *label, sb_err *err);
int sb_run_write_csv(const sb_run *run, const char *path, sb_err *err);
/* One CSV field: as it is, or quoted (quotes doubled) when it holds a
 * comma, a quote or a newline. */
void sb_csv_field(FILE *f, const char *s);

/* Human tables, one per area, then the machine profile. */
void sb_print_results(FILE *f, const sb_result_list *l);
/* The parameters a table shows for r, one of the results of l: those
 * that tell it from l's other results of its benchmark and backend, and
 * those not at their default (sb_print_results' rule). Returns buf. */
const char *sb_result_params_shown(const sb_result_list *l, const sb_result *r,
                                   char *buf, int len);
/* A point's parameters that are not at their definition's default
 * ("size=64MiB"), formatted. Returns buf. */
const char *sb_params_fmt_changed(const sb_bench *b, const sb_impl *im,
                                  const sb_params *p, char *buf, int len);
/* A stored point's "k=v k=v" text with the parameters at their
 * definition's default left out (bench unknown to this build: all kept);
 * whole pairs only, never one cut mid-value. Returns buf. */
const char *sb_params_text_compact(const char *bench, const char *backend,
                                   const char *text, char *buf, size_t len);
void sb_print_profile(FILE *f, const sb_ceilings *c);
/* After a run's tables: the results judged unstable, each with what was
 * seen, and the remedies that fit. Returns how many (0: prints nothing). */
int sb_print_stability(FILE *f, const sb_result_list *l);

#ifdef __cplusplus
}
#endif

#endif
