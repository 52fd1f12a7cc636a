/*
 * gate.h — the regression gate behind `solbench check`: re-running what a
 * baseline measured with the baseline's own config, comparing the new run
 * against the baseline's runs (the spread between them included), and
 * confirming a regression by measuring the point again. The CLI parses
 * and prints; this is the logic, and its unit test (unit.test_gate).
 */
#ifndef SOLBENCH_GATE_H
#define SOLBENCH_GATE_H

#include <stdbool.h>

#include "solbench/compare.h"
#include "solbench/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sb_store;

/* A baseline's runs from the store, oldest first (*base malloc'ed, *n of
 * them; sb_gate_free_baseline frees them): every run of a baseline name,
 * or a run id or `last` as a baseline of one run. Its runs must have been
 * made with one config on one machine, or the spread between them would
 * mix unlike things (refused, naming the two runs and the first
 * difference, unless allow_mismatch). */
int sb_gate_load_baseline(struct sb_store *st, const char *name,
                          bool allow_mismatch, sb_run **base, int *n,
                          sb_err *err);
void sb_gate_free_baseline(sb_run *base, int n);

/* Results of a run that failed their verification (skipped ones aside). */
int sb_gate_count_invalid(const sb_result_list *l);

/* A baseline's selection, from its config. */
typedef struct sb_gate_sel {
    char areas[1024], names[1024];
    bool has_areas, has_names, has_backend;
    sb_pset user; /* its -p settings */
} sb_gate_sel;

/* Sets ctx (suite, threads, sampling, backend...) and the selection from
 * a run's config (the fields sb_run_config writes): the inverse of
 * sb_run_config. `base` names the baseline in messages. */
int sb_gate_config(const json_t *cfg, const char *base, sb_ctx *ctx,
                   sb_gate_sel *sel, sb_err *err);

/* Runs every item of the plan (in rounds when ctx->interleave), appending
 * to out; (*item_of)[k] is the plan item that made result k (freed by the
 * caller). Stops on an error that is not a failed verification. */
int sb_gate_measure(const sb_plan *plan, sb_ctx *ctx, sb_result_list *out,
                    int **item_of, sb_err *err);

/* Told before each re-measurement: what is measured again. */
typedef void (*sb_gate_note_fn)(const char *what, void *arg);

/* How a regression is confirmed: measured again `times` times (>= 1), the
 * second and later after a pause of `pause_s` seconds; the verdict stands
 * only if every re-measurement regresses too. check's defaults are
 * SB_GATE_CONFIRM_TIMES and SB_GATE_CONFIRM_PAUSE_S. */
typedef struct sb_gate_confirm_opts {
    int times;
    double pause_s;
} sb_gate_confirm_opts;
#define SB_GATE_CONFIRM_TIMES 2
#define SB_GATE_CONFIRM_PAUSE_S 10.0

/* Re-measures each regressed line of c (interleaved: the whole plan again
 * in rounds) as `co` says (NULL: once, at once); a verdict stands only if
 * the point regresses against the baseline every time, else it becomes
 * unchanged with both figures in its note. base: the baseline's runs,
 * oldest first (the last is the one c was matched against). */
int sb_gate_confirm(sb_cmp *c, const sb_run *base, int nbase,
                    const sb_plan *plan, const int *item_of, sb_ctx *ctx,
                    const sb_cmp_opts *o, const sb_gate_confirm_opts *co,
                    sb_gate_note_fn note, void *arg, sb_err *err);

/* The new run's config as compare sees it: with the sampling overridden
 * (--min-time, --repeat) those fields are taken as the baseline's, since
 * they change how many samples are drawn, not what a sample measures. A
 * new reference. */
json_t *sb_gate_comparable_config(const json_t *base_cfg, const json_t *now_cfg,
                                  bool min_time_given, bool repeat_given);

#ifdef __cplusplus
}
#endif

#endif
