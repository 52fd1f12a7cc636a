/*
 * validate.h — `solbench validate` as a library (validate.c): the
 * reference decoder (src/bench/llm) sized by a workload, the ceilings
 * predict needs measured in the same run at the model's shapes (GEMM at
 * the prefill and decode shapes, memory.read, paged attention), serving
 * runs at three loads, and the prediction of the same workload against
 * those ceilings (the serving simulator's for the loads),
 * with the run-to-run spread of the ratios (docs/VALIDATE.md). The command
 * parses, calls these and prints; unit.test_validate holds the steps.
 */
#ifndef SOLBENCH_VALIDATE_H
#define SOLBENCH_VALIDATE_H

#include <stdbool.h>

#include "bench/llm/refmodel.h"
#include "bench/llm/serve.h"
#include "solbench/output.h"
#include "solbench/predict.h"
#include "solbench/runner.h"
#include "solbench/workload.h"

typedef struct sb_validate_opts {
    const char *workload; /* a file or preset; NULL: validate-dense */
    bool bf16, quick, force;
    /* 0: the workload's (batch, prompt, output), 2 x the load's
     * concurrency, at least 4 (requests a load), the cores (threads), 5
     * or 3 with quick (rounds), 3 or 1 with quick (serves: the times each
     * load is served) */
    int batch, prompt, output, requests, threads, rounds, serves;
    int trace_events; /* > 0: the serving run's events kept for a trace */
    const char *trace_label;
} sb_validate_opts;

#define SB_VALIDATE_MAX_ROUNDS 20
#define SB_VALIDATE_LOADS 3
#define SB_VALIDATE_MAX_SERVES 5

/* One load of the serving part: a closed loop of `concurrency` requests
 * in flight, served by the reference and predicted by the serving
 * simulator (servesim.h) for the same lengths and scheduler. */
typedef struct sb_validate_load {
    const char *name; /* "light", "medium", "saturating" */
    int concurrency, requests, stok;
    sb_serve_stats ms; /* measured: each figure the median of the runs' */
    sb_serve_stats run[SB_VALIDATE_MAX_SERVES]; /* each time it was served */
    int n_runs;
    /* the servings' least and most output tokens/s and TPOT p50; stable
     * when neither spans more than 10 % of its median */
    double tps_range[2], tpot_range[2];
    bool servings_stable;
    sb_sim_out pred; /* predicted, calibrated by this run */
    char why[200];   /* why there is no prediction ("" when there is) */
    /* the host taking freed memory back (sb_mem_settle): seconds waited
     * before the load and KiB taken then, KiB taken during it; all < 0
     * when the machine does not report */
    double settle_s, settle_kib, during_kib;
} sb_validate_load;

typedef struct sb_validate_spread {
    int n, nstable;
    bool use_stable; /* enough rounds had stable ceilings to use them alone */
    struct {
        double ttft, tpot, eff[3];
        bool stable, used;
        char why[160];
    } r[SB_VALIDATE_MAX_ROUNDS];
    double ttft[3], tpot[3]; /* min, median, max over the rounds used */
} sb_validate_spread;

typedef struct sb_validate {
    /* sb_validate_prepare */
    sb_workload w;
    char path[1024];
    sb_ref_config cfg;
    const char *dtype;
    int B, P, O, C, N; /* batch, prompt, output, decode context, requests */
    int rounds, sctx, stok;
    double need_bytes; /* the reference's footprint */
    sb_ctx ctx;
    sb_plan plan;
    sb_validate_opts opts; /* as prepared: the trace's options */
    /* the loads, served `serves` times; spread over the points' rounds
     * (interleaved, and a load's model fits beside theirs): the rounds
     * after which each time was (-1: after every point) */
    int serves, served;
    bool loads_mid;
    int serve_round[SB_VALIDATE_MAX_SERVES], points_rounds;
    sb_ref_model *sm; /* serves every load: sized for the largest */
    sb_ref_event *ev; /* with trace_events: the last serving's events */
    /* sb_validate_measure */
    sb_run run;
    int code;      /* 0; 1: a point failed its verification; 2: skipped */
    bool complete; /* every point predict needs was measured */
    const sb_result *rp, *rd, *gl, *gd, *mr, *pa;
    /* sb_validate_serve_predict */
    sb_validate_load load[SB_VALIDATE_LOADS];
    int n_loads;
    json_t *trace;  /* with trace_events: the last load's timeline */
    sb_workload wc; /* the workload calibrated by this run */
    /* the run's median over best: prefill GEMM, decode GEMM; paged
     * attention's median over memory.read's (the attention efficiency) */
    double eff[3];
    sb_prediction *sol, *cal;
    sb_validate_spread sp;
} sb_validate;

/* Reads the workload (as the options change it), checks it is one the
 * reference runs (inference on one chip, no MLA, gated MLPs) and that it
 * fits in memory, sets the context and plans the points. SB_EINVAL with
 * one line naming what is wrong. */
int sb_validate_prepare(const sb_validate_opts *o, sb_validate *v, sb_err *err);
/* Measures the plan (interleaved where two copies of the model fit):
 * v->run, v->code, v->complete and the results found. Interleaved, with
 * room for a load's model beside the points', the serving loads are
 * served among the points' rounds (sb_validate_opts.serves times), in the
 * stretches of the machine the ceilings that predict them were measured
 * in. */
int sb_validate_measure(sb_validate *v, sb_err *err);
/* With every point measured: the prediction against this run's ceilings
 * (speed of light and calibrated), the serving runs at each load (those
 * sb_validate_measure did not serve, after the points), each figure the
 * median over the servings, with the simulator's prediction of each, and
 * the spread over the rounds. */
int sb_validate_serve_predict(sb_validate *v, sb_err *err);
void sb_validate_free(sb_validate *v);

/* The first unskipped result of bench (with key=val when key is given). */
const sb_result *sb_validate_find(const sb_run *run, const char *bench,
                                  const char *key, const char *val);
/* A metric's value, 0 when absent. */
double sb_validate_metric(const sb_result *r, const char *name);
/* A phase's measured seconds, from its llm result; -1 when not measured. */
double sb_validate_measured(const sb_result *r, const char *phase);

#endif
