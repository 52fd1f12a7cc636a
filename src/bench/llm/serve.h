/*
 * serve.h — the reference decoder (refmodel.h) as a serving engine:
 * continuous batching at a constant concurrency, measured per request
 * (TTFT, time per output token, latency) and per iteration; its timeline
 * as a Chrome trace.
 */
#ifndef SOLBENCH_BENCH_LLM_SERVE_H
#define SOLBENCH_BENCH_LLM_SERVE_H

#include <jansson.h>

#include "bench/llm/llm_bench.h"
#include "bench/llm/refmodel.h"
#include "solbench/stats.h"

typedef struct sb_serve_opts {
    int concurrency;    /* slots: live sequences at once */
    int requests;       /* served in all; the first `concurrency` start at 0,
                           each later one when a slot frees */
    int prompt, output; /* mean lengths */
    bool ragged;        /* lengths uniform in [L/2, 3L/2] */
    uint64_t seed;
    int max_tokens;  /* tokens an iteration carries at most (the model's) */
    int max_context; /* tokens a slot holds at most (the model's) */
} sb_serve_opts;

typedef struct sb_serve_stats {
    int requests, iterations;
    double tokens, prefill_tokens; /* output tokens, prompt tokens */
    double t_start, wall_s, tokens_per_s;
    /* TTFT from joining to the first token, over the requests that joined
     * a running batch (all of them when every request started at once);
     * TPOT: the time between a request's consecutive output tokens;
     * latency: joining to the last token (solbench's statistics) */
    sb_stats ttft, tpot, latency;
} sb_serve_stats;

/* The lengths of the o->requests requests sb_serve_run serves, in the
 * order they join: prompts into plen, outputs into olen. */
void sb_serve_lengths(const sb_serve_opts *o, int *plen, int *olen);

/* Serves o->requests requests on m (slots 0 .. concurrency-1): each
 * iteration runs every live decode and the prompts of requests that joined,
 * whole, while the token budget lasts. */
int sb_serve_run(sb_ref_model *m, const sb_serve_opts *o, sb_serve_stats *st,
                 sb_err *err);

/* The events m recorded (sb_ref_record) as a Chrome trace in the PyTorch
 * profiler's form: one ProfilerStep per iteration, each phase of each
 * layer a cpu_op (the weight matmuls as aten::mm with their input
 * dims and types, so `trace show` counts their FLOPs), times from
 * t_start. */
json_t *sb_serve_trace(const sb_ref_model *m, const sb_ref_event *ev, int n,
                       double t_start, const char *label);

#endif
