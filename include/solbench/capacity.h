/*
 * capacity.h — service-level objectives on the serving simulator's
 * percentiles, and the capacity of a configuration under them: the
 * largest Poisson arrival rate whose simulated requests meet every
 * objective (docs/SERVING.md, "Capacity").
 */
#ifndef SOLBENCH_CAPACITY_H
#define SOLBENCH_CAPACITY_H

#include <stdbool.h>

#include "solbench/error.h"
#include "solbench/servesim.h"
#include "solbench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SB_SLO_MAX 8

typedef enum sb_slo_metric {
    SB_SLO_TTFT,
    SB_SLO_TPOT,
    SB_SLO_ITL,
    SB_SLO_LATENCY,
    SB_SLO_QUEUE,
    SB_SLO_N_METRICS
} sb_slo_metric;

/* One objective: a latency's percentile (or mean) at most `limit_s`. */
typedef struct sb_slo_term {
    sb_slo_metric metric;
    int pct; /* 50, 90, 99, or 0 for the mean */
    double limit_s;
} sb_slo_term;

typedef struct sb_slo {
    sb_slo_term t[SB_SLO_MAX];
    int n;
} sb_slo;

/* Parses "ttft_p90=2s,tpot_p99=200ms" (metrics ttft, tpot, itl, latency,
 * queue; p50, p90, p99 or mean; a time in s, ms or us, s when bare):
 * SB_EINVAL with the term that is wrong. */
int sb_slo_parse(const char *spec, sb_slo *out, sb_err *err);
/* "ttft_p90 <= 2 s, tpot_p99 <= 200 ms" */
const char *sb_slo_text(const sb_slo *slo, char *buf, size_t len);
/* The simulated value of term t. */
double sb_slo_value(const sb_sim_out *o, const sb_slo_term *t);
/* Whether every term holds in o. */
bool sb_slo_met(const sb_slo *slo, const sb_sim_out *o);

typedef struct sb_capacity {
    bool found;           /* some rate meets the objectives */
    double rate;          /* requests/s, the whole deployment */
    double tokens_per_s;  /* output tokens/s served at that rate, sustained:
                             the rate x the mean output */
    double cost_per_mtok; /* USD per million output tokens at that rate
                             (0: no price) */
    sb_sim_out at;        /* the simulation at that rate */
    int simulations;      /* runs the search took */
    int requests;         /* requests a run simulated (one replica's) */
    double lowest_tried;  /* the smallest rate tried (found false: it
                             already missed) */
} sb_capacity;

/* The largest request rate (Poisson, the deployment's) at which the
 * simulation of w's requests meets every term of slo and keeps up with
 * the arrivals (sb_sim_out.queue_slope under 0.05): doubling from the
 * steady state's estimate until a rate misses, or, when the estimate
 * misses, trying a quarter of it, then 1/64 of it (missed there too,
 * with 200 requests: no rate meets them) and bisecting geometrically to
 * a factor of 2; then bisection to 1 %. A run simulates w->sim_requests
 * (1000 when 0), and at least 10 x max_seqs, so that the batch has
 * filled and the queue shows (at most 50 000). The same seed at every
 * rate, so the rates are compared on the same arrival pattern, scaled. */
int sb_predict_capacity(const sb_workload *w, const sb_ceilings *c,
                        const sb_slo *slo, sb_capacity *out, sb_err *err);

/* The same search over the calibrated prediction (the workload's
 * efficiencies: sb_predict_calibrated). */
int sb_predict_capacity_calibrated(const sb_workload *w, const sb_ceilings *c,
                                   const sb_slo *slo, sb_capacity *out,
                                   sb_err *err);

/* The best of n capacities (ran[i] false: left out): the least $ per
 * million output tokens at capacity where both have a price, else the
 * most requests/s; -1 when none was found. */
int sb_capacity_best(const sb_capacity *cap, const bool *ran, int n);

#ifdef __cplusplus
}
#endif

#endif
