/*
 * servesim.h — a discrete-event simulator of one serving replica: requests
 * arrive (an open Poisson stream, a closed loop, or given times), a
 * scheduler batches them into iterations under a token budget, a cap on
 * running sequences and a KV cache of fixed-size blocks, and each
 * iteration takes the time a cost function gives for its composition.
 *
 * The schedulers as modelled (docs/SERVING.md):
 *   sarathi  chunked prefill (Sarathi-Serve; vLLM's V1 engine): every
 *            running decode first, one token each, then prompt chunks of
 *            the running and, first come first served, the waiting
 *            requests in what the token budget leaves;
 *   vllm     prefill first (vLLM's V0 default): while a waiting request
 *            can be admitted, an iteration of whole prompts only; else one
 *            decode iteration of every running sequence;
 *   orca     iteration-level batching without chunks (Orca): every decode,
 *            then whole prompts while the budget holds them.
 * A sequence that needs a new block when none is free preempts the newest
 * running one (recompute: its blocks freed, it waits at the head of the
 * queue and prefills its prompt and the tokens it made again), as vLLM
 * does.
 *
 * The engine knows nothing of models: the workload model gives the cost
 * (predict_serve.c), a test a formula.
 */
#ifndef SOLBENCH_SERVESIM_H
#define SOLBENCH_SERVESIM_H

#include <stddef.h>
#include <stdint.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Requests one simulation takes at most, and output tokens and prompt
 * chunks (of the token budget) in all: each takes an iteration at least,
 * a run of more would take minutes. */
#define SB_SIM_MAX_REQUESTS 1000000
#define SB_SIM_MAX_TOKENS 1e8
/* A request's prompt or output, tokens at most. */
#define SB_SIM_MAX_LEN 5e8

typedef enum sb_sim_sched {
    SB_SIM_SARATHI,
    SB_SIM_VLLM,
    SB_SIM_ORCA,
    SB_SIM_N_SCHED
} sb_sim_sched;
extern const char *const sb_sim_sched_name[SB_SIM_N_SCHED];

/* One request: when it arrives (ignored in a closed loop) and its
 * lengths in tokens (both >= 1). */
typedef struct sb_sim_req {
    double arrival_s;
    int prompt, output;
} sb_sim_req;

/* What one iteration carries, for the cost function. */
typedef struct sb_sim_batch {
    int decode_seqs;       /* sequences decoding one token each */
    double decode_ctx;     /* their contexts (tokens in cache), summed */
    int prefill_seqs;      /* sequences with a prompt chunk */
    double prefill_tokens; /* the chunks' tokens, summed */
    double prefill_ctx;    /* each chunk's keys (cached before + chunk),
                              summed */
} sb_sim_batch;

/* Seconds one iteration of composition b takes (> 0). */
typedef double (*sb_sim_cost_fn)(const sb_sim_batch *b, void *arg);

typedef struct sb_sim_cfg {
    sb_sim_sched sched;
    int max_seqs;           /* running sequences at most (>= 1) */
    int max_batched_tokens; /* tokens one iteration carries at most */
    int max_chunk;  /* prompt tokens of one sequence an iteration carries at
                       most under chunked prefill (a micro-batch's budget
                       when an iteration is a pipeline's round); 0: the
                       iteration's budget */
    long kv_blocks; /* blocks of the KV cache; 0: unbounded */
    int page;       /* tokens per block (>= 1) */
    int closed;     /* > 0: a closed loop of this many requests in
                       flight (arrival times ignored: each finish
                       sends the next request at once) */
    double slo_ttft_s, slo_tpot_s; /* for goodput; 0: none */
    /* The machine's interruptions (compute.noise): a Poisson process of
     * noise_rate a second on the simulated clock, each adding its size to
     * the iteration it lands in; sizes drawn (seeded) from the
     * piecewise-linear quantile function through noise_q, the sizes at
     * quantiles 0, 0.5, 0.9, 0.99 and 1 (seconds). 0: none. */
    double noise_rate;
    double noise_q[5];
} sb_sim_cfg;

/* p50, p90, p99 and the mean of one latency over the requests. */
typedef struct sb_sim_dist {
    double p50, p90, p99, mean;
    size_t n; /* the values (0: none, every figure 0) */
} sb_sim_dist;

typedef struct sb_sim_out {
    size_t requests, iterations, preemptions;
    double duration_s; /* first arrival to last finish */
    /* per request: time to first token (in a closed loop, of the requests
     * after the first wave, which arrives at once, when there are any);
     * time per output token after the first, (finish - first token) /
     * (output - 1), of requests with two tokens or more; arrival to
     * finish; arrival to first scheduled */
    sb_sim_dist ttft, tpot, e2e, queue;
    sb_sim_dist itl;       /* every gap between two tokens of a request */
    double tokens_per_s;   /* output tokens over the duration */
    double requests_per_s; /* finished over the duration */
    double slo_attained;   /* share of requests within both SLOs */
    double goodput_rps;    /* requests within both SLOs per second */
    double mean_running;   /* running sequences, averaged over iterations */
    /* the least-squares slope of each request's queueing delay over its
     * arrival time (open arrivals; 0 in a closed loop): about 0 when the
     * replica keeps up, 1 - served/offered when the queue grows without
     * bound (a finite run's drain at the end does not bias it, as it
     * does the served rate) */
    double queue_slope;
    /* the interruptions the run met (cfg noise_rate) and their time */
    size_t interrupts;
    double noise_s;
} sb_sim_out;

/* One iteration as it ran, for a timeline. */
typedef struct sb_sim_iter {
    double start_s, dur_s;
    sb_sim_batch b;
    int waiting, running; /* queue lengths when it started */
} sb_sim_iter;
typedef int (*sb_sim_iter_fn)(const sb_sim_iter *it, void *arg);

/* Runs the n requests (arrival times ascending, unless cfg->closed) to
 * their end: SB_EINVAL for a bad configuration or request (one whose
 * prompt and output need more blocks than the cache has can never run),
 * a cost that is not a positive finite number, or n above
 * SB_SIM_MAX_REQUESTS; SB_ENOMEM. `on_iter` (may be NULL) sees every
 * iteration; a non-zero return stops the run with it. */
int sb_sim_run(const sb_sim_cfg *cfg, const sb_sim_req *req, size_t n,
               sb_sim_cost_fn cost, void *cost_arg, sb_sim_iter_fn on_iter,
               void *iter_arg, sb_sim_out *out, sb_err *err);

/* ---- requests ------------------------------------------------------------ */

typedef enum sb_sim_len {
    SB_SIM_LEN_FIXED,    /* the mean every time */
    SB_SIM_LEN_UNIFORM,  /* uniform over mean (1 ± spread) */
    SB_SIM_LEN_LOGNORMAL /* lognormal of that mean, sigma = spread */
} sb_sim_len;
extern const char *const sb_sim_len_name[3];

/* n requests of mean lengths prompt and output drawn as `len` says
 * (rounded, at least 1, at most 16x the mean), arriving as a Poisson
 * stream of `rate` per second from time 0 (rate 0: all at time 0),
 * reproducibly from `seed`. */
int sb_sim_requests(sb_sim_req *out, size_t n, double rate, int prompt,
                    int output, sb_sim_len len, double spread, uint64_t seed,
                    sb_err *err);

/* Reads a request file: JSON Lines, one request a line,
 * {"arrival_s": 0.25, "prompt_len": 512, "output_len": 128}, arrivals
 * from 0 in order, blank lines skipped. *out (malloc'd) gets the
 * requests, *n their count; SB_EINVAL with "PATH:LINE: what" for a bad
 * line, more than SB_SIM_MAX_REQUESTS, or none. */
int sb_sim_read_requests(const char *path, sb_sim_req **out, size_t *n,
                         sb_err *err);

#ifdef __cplusplus
}
#endif

#endif
