/*
 * runner.h — runs benchmarks: expands parameter points, checks them all
 * before any allocation, calibrates the inner iteration count so every
 * sample lasts >= 100x the clock resolution, warms up, samples until
 * --min-time and --repeat are both met, verifies, derives metrics.
 */
#ifndef SOLBENCH_RUNNER_H
#define SOLBENCH_RUNNER_H

#include "solbench/bench.h"
#include "solbench/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Minimum sample duration in units of the clock resolution. */
#define SB_MIN_SAMPLE_TICKS 100.0
/* Samples are sized to at least this long (seconds), so the per-sample
 * overhead of reading the clock stays under 0.01 %. */
#define SB_MIN_SAMPLE_S 1e-3

/* A benchmark on one backend: its definition and the impl chosen. */
typedef struct sb_sel_item {
    const sb_bench *bench;
    const sb_impl *impl;
} sb_sel_item;

typedef struct sb_selection {
    sb_sel_item *items;
    int n;
    bool named; /* chosen by area or name, not every benchmark by default */
} sb_selection;

/* Selects benchmarks by areas and names (comma-separated lists, either may
 * be NULL), suite and backend ("cpu", "cuda", or NULL for all present):
 * one item per benchmark and backend. The host's (cpu, host, mpi) come
 * first in registry order, then each device backend's, so a device's
 * ceilings never stand in for the host's in the host's figures. */
/* Whether a run with --backend `want` (NULL or "": every one) runs the
 * impls of backend `name`: its own --backend (cpu also takes the host's
 * other backends); with none, every backend present, one on request only
 * when asked (a PJRT plugin: --backend pjrt, or $SOLBENCH_PJRT_PLUGIN,
 * which run --pjrt-plugin sets). False for a backend this build lacks. */
bool sb_backend_wanted(const char *name, const char *want);
int sb_select(const char *areas, const char *names, sb_suite suite,
              const char *backend, sb_selection *sel, sb_err *err);
void sb_selection_free(sb_selection *sel);

/* Whether the user asked (by area or name) for a benchmark that needs
 * MPI ranks (SB_BF_NEEDS_MPI). Every benchmark by default does not start
 * MPI: without a launcher those are skipped, and a plain `solbench run`
 * never needs MPI at run time. */
bool sb_selection_needs_mpi(const sb_selection *sel);

/* Starts what the selection needs beyond this process, before its plan is
 * built: MPI where it is built in and a selected benchmark needs ranks
 * or an MPI launcher started this process (ctx->rank, ctx->nranks and the
 * topology filled in); otherwise rank 0 of 1. sb_session_end finishes
 * it; sb_session_abort ends every rank with one line (MPI_Abort under
 * MPI) or exits. */
int sb_session_begin(const sb_selection *sel, int *argc, char ***argv,
                     sb_ctx *ctx, sb_err *err);
void sb_session_end(void);
void sb_session_abort(const char *msg, int code) __attribute__((noreturn));

/* Expands and checks every point of every selected benchmark (the user's
 * -p applies to each bench that declares the key; a key no selected bench
 * declares is an error). Nothing is allocated for the kernels. */
typedef struct sb_plan_item {
    const sb_bench *bench;
    const sb_impl *impl;
    sb_params point;
} sb_plan_item;

typedef struct sb_plan {
    sb_plan_item *items;
    int n;
} sb_plan;

int sb_plan_build(const sb_selection *sel, const sb_pset *user,
                  const sb_ctx *ctx, sb_plan *plan, sb_err *err);
void sb_plan_free(sb_plan *plan);

/* The timing loop every benchmark shares, on every backend: picks the
 * inner iteration count so one sample lasts >= max(SB_MIN_SAMPLE_TICKS x
 * resolution, SB_MIN_SAMPLE_S, the timer's min_sample_s) (at most the
 * timer's max_iters), runs ctx->warmup untimed samples, then samples until
 * ctx->min_time has elapsed and ctx->repeat samples exist — or as the
 * timer's plan fixes them. Samples are timed by the timer (NULL: the
 * host's monotonic clock around run()). Appends seconds per iteration to
 * r->samples_s and computes r->stats. */
int sb_sample_loop(void (*run)(void *state, uint64_t iters),
                   const sb_timer *timer, void *state, const sb_ctx *ctx,
                   sb_result *r, sb_err *err);

/* After a run's points (sb_run_plan calls it): a GEMM above the peak its
 * MFU is taken against has that peak measured again beside it, MFU taken
 * again against the better figure, and what stays above its ceiling
 * (MFU > 1, pct_SOL > 100) is flagged unstable with the ceiling's own
 * result and the reason (stability.h). Rank 0 only. */
void sb_run_check_consistency(sb_ctx *ctx, sb_result_list *out);

/* Runs one point of b on im (NULL: b's first impl), appending its
 * result(s) to out. */
int sb_run_point(const sb_bench *b, const sb_impl *im, const sb_params *p,
                 sb_ctx *ctx, sb_result_list *out, sb_err *err);

/* Runs a whole plan; a failed verification does not stop the run (the
 * result is kept with valid=false); other errors do. With ctx->interleave
 * every point is set up and calibrated first, then sampled in rounds (one
 * sample of each point a round, the order reversed every other round)
 * until each has ctx->repeat samples and ctx->min_time of them, so points
 * compared as a ratio see the same stretches of machine time; then each
 * is verified and reported in plan order. sb_plan_build refuses such a
 * plan if a point takes its own samples or the points do not fit in
 * memory together. */
int sb_run_plan(const sb_plan *plan, sb_ctx *ctx, sb_result_list *out,
                sb_err *err);

/* Fills ctx with defaults: threads = cores, min_time 0.2 s, repeat 5... */
void sb_ctx_defaults(sb_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
