/*
 * predict_int.h — what the files of the workload model share: the context
 * every phase builder reads (sb_mdl_ctx), derived once per prediction,
 * and the builders one file calls in another.
 *
 *   predict.c        the phases of a step or a request, their times,
 *                    the prediction (sb_predict)
 *   predict_net.c    collectives: bus factors, the torus, two levels
 *   predict_serve.c  memory per chip and the serving model
 */
#ifndef SOLBENCH_MODEL_INT_H
#define SOLBENCH_MODEL_INT_H

#include <stdbool.h>

#include "solbench/hw.h"
#include "solbench/netmodel.h"
#include "solbench/predict.h"
#include "solbench/workload.h"

/* Queries per main-memory pass over K and V in tiled attention. */
#define SB_ATTN_Q_REUSE 512.0
/* Elementwise ops per score on the vector unit in flash attention, the
 * fewest the algorithm allows (FlashAttention-2, Dao 2023, algorithms 1
 * and 2, the softmax scale folded into Q, the mask on diagonal blocks
 * only): forward the running max, the subtraction, the row sum and P's
 * cast to the matmul dtype; backward S - L, dP - D, the product with P
 * and the casts of P and dS. The exp is the transcendental unit's. */
#define SB_SOFTMAX_FWD_OPS 4.0
#define SB_SOFTMAX_BWD_OPS 5.0

/* Everything the phase builders need, derived once. */
/* The sequences a replica's scheduler runs at once: max_seqs a
 * micro-batch, one a pipeline stage */
static inline double sb_mdl_seq_cap(const sb_workload *w)
{
    return (double)w->max_seqs * w->pipeline;
}

typedef struct sb_mdl_ctx {
    const sb_workload *w;
    const sb_ceilings *c;
    sb_prediction *p;
    double peak, bw, host_bw;
    double pk[SB_WORK_N]; /* peak per kind of work */
    const char *pk_name[SB_WORK_N];
    double bw_gemv; /* decode matmuls' weight stream, 0: none */
    /* "gemm.<dtype>" and "gemv.<dtype>" of the matmuls, and whether the
     * machine model has either measured at row counts (name@M): looked
     * up once, not at every phase the serving simulator times */
    char gemm_base[40], gemv_base[40];
    bool gemm_rows, gemv_rows;
    /* a decode product's cost a call beyond its stream (s), measured on
     * small weights multiplied in turn ("gemv.call.<dtype>"[@M]; 0:
     * none), and the most rows it was measured at (0: no @M): a product
     * of more rows (a prompt's) is a GEMM's, timed at gemm.<dtype>@M */
    char gemv_call_base[40];
    double gemv_call, gemv_call_max_rows;
    /* the same on the GEMM side: a product of few rows (an expert's share
     * of a prompt) beyond its FLOPs at gemm.<dtype>@M, measured on small
     * weights multiplied in turn ("gemm.call.<dtype>@M"), and the most
     * rows it was measured at (0: none) */
    char gemm_call_base[40];
    double gemm_call_max_rows;
    /* decode attention's cost a call (a layer's), beyond its K/V stream
     * ("attn.call": attention.paged_decode at two batches; 0: none) */
    double attn_call;
    /* the fabric's ceilings, looked up once: scale-up and scale-out
     * bandwidth and latency, the scale-up domain, and whether any
     * collective has a measured fit (net.<op>.beta_Bps) */
    double up_Bps, out_Bps, up_alpha_s, out_alpha_s, up_domain;
    bool net_fits;
    double exp_rate; /* transcendentals per second, 0: none */
    double vec_rate; /* the vector unit's FLOP/s, 0: none */
    double eff[SB_WORK_N], eff_mem, eff_net; /* 1 at the speed of light */
    bool calibrated;
    double mats;       /* 3 gated, 2 plain */
    double dqk, dv;    /* per-head widths of scores and values */
    double p_qkv, p_o; /* per layer */
    int ndims;         /* torus mesh (topology.mesh), innermost last */
    double dims[8];
    /* phases that run once a step, not once a microbatch: a collective's
     * share of a microbatch's compute it can hide behind, 1 for work */
    double once[SB_WL_MAX_PHASES];
    int Ls;            /* layers of the fullest pipeline stage */
    double stage_frac; /* its share of the weights over an even stage's */
    double dense_layers_chip, moe_layers_chip;
    int fsdp_e, dp_e; /* expert weights: FSDP and replica groups */
    const char *stage;
    /* the serving simulator's iterations as they run (NULL: not seen) */
    sb_sim_iter_fn on_iter;
    void *iter_arg;
} sb_mdl_ctx;

/* Fills the network terms of a phase. `stride` is the product of the mesh
 * axes inside this one (the group's chips are `stride` apart). */
void sb_mdl_net(const sb_mdl_ctx *x, sb_phase *ph, const char *coll, int group,
                int stride, double S_total, double calls);

/* Memory per chip. */
void sb_mdl_memory(sb_mdl_ctx *x);

/* Sequences per replica whose KV cache at the mean live context (prompt
 * and half the output, in whole pages) fits in what the weights and
 * activations leave of a chip (after sb_mdl_memory); INFINITY when the
 * machine model has no memory size. */
double sb_mdl_fit_live(const sb_mdl_ctx *x);

/* The serving model: the steady state of continuous batching at the
 * workload's concurrency (capped by what the memory holds at the mean
 * live context, and by what the token budget can keep fed), its
 * throughput with prefill charged, TTFT and TPOT under that load; with
 * SLOs, the best throughput over batch sizes that meet them (goodput).
 * Over pipeline stages the batch runs as micro-batches
 * (sb_mdl_microbatches), as the decode step does. Runs after
 * sb_mdl_memory; sizes the KV cache for the batch it runs. */
void sb_mdl_serve(sb_mdl_ctx *x);

/* The micro-batches a replica of PP pipeline stages splits `seqs`
 * sequences into: one a stage, so that each stage works on one while the
 * others work on the rest (the best schedule for both throughput and
 * TPOT: a round takes PP passes of a stage over 1/m of the batch), no
 * more than there are sequences, at least one. */
double sb_mdl_microbatches(const sb_workload *w, double seqs);

/* The serving simulator (servesim.h) over the workload's requests
 * (w->sim_requests > 0): one replica of the deployment under its share of
 * the offered load (request_rate / replicas, Poisson) or of the
 * concurrency (a closed loop), its KV cache the blocks the memory leaves
 * after weights and activations, each iteration timed by the phase model
 * for that iteration's composition. Fills p->sim, or warns why it could
 * not run. */
void sb_mdl_simulate(sb_mdl_ctx *x);

/* Routed experts per chip whose weights a pass reads: all E/ep local
 * experts in training and prefill; in decode, the expected number hit by
 * `tokens` tokens from each of the ep replicas (uniform routing). */
double sb_mdl_experts_touched(const sb_mdl_ctx *x, double tokens, bool decode);

/* The phases of one forward (or forward+backward) pass over `tokens`
 * tokens per tensor-parallel group, in `seqs` sequences of length `sq`
 * against `skv` keys, `mb` microbatches (each reads the weights once; 0:
 * the weights are read by another pass of the same iteration). */
void sb_mdl_pass(sb_mdl_ctx *x, double tokens, double seqs, double sq,
                 double skv, double mb, bool decode);

/* Times and classifies a phase: compute under its kind's peak, memory
 * under the main-memory bandwidth (decode matmuls under the decode-GEMM
 * ceiling), each scaled by its efficiency in the calibrated mode; a phase
 * takes max(compute, memory) + network + host (a phase has one kind of
 * term or the other: overlap between phases is the stage total's). */
void sb_mdl_time(const sb_mdl_ctx *x, sb_phase *ph);

/* Stage total: the compute stream (every phase that is not
 * communication, the pipeline bubble included), plus what communication
 * leaves exposed; the hidden part runs beside the compute stream and adds
 * only what outlasts it (network and host transfers are streams of their
 * own). Sets each phase's exposed time. */
double sb_mdl_total(sb_prediction *p, const char *stage);

/* x's ceilings, efficiencies (calibrated: the workload's own) and the
 * job's shape over its chips, from x->w and x->c (predict_ctx.c); refused
 * when the machine model has no peak or no memory bandwidth. */
int sb_mdl_ctx_setup(sb_mdl_ctx *x, bool calibrated, sb_err *err);

#endif
