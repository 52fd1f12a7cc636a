/*
 * moe.h — what the MoE (mixture-of-experts) primitives compute, independent
 * of any backend: the shape of a layer, the synthetic routing generator,
 * FLOP and byte accounting, the top-k tie rule, and the double-precision
 * references and verifiers every backend's output is checked against.
 *
 * The four kernels of an MoE layer:
 *   route         logits = X·Wr + bias, softmax over experts, top-k per
 *                 token, weights renormalised over the k selected;
 *   dispatch      counting sort of the (token, slot) pairs by expert, and the
 *                 gather of token rows into per-expert contiguous groups (the
 *                 buffer all-to-all sends on a multi-chip system);
 *   combine       out[t] = sum_j w[t,j] · Y[pos[t,j]], back in token order;
 *   grouped_gemm  one GEMM per expert on its ragged group (ragged_dot), or
 *                 the gated expert MLP: down(silu(gate(x)) * up(x)).
 *
 * Layouts are row-major. A (token, slot) pair is numbered t·k + j; slots of
 * one token are ordered by descending weight. After dispatch, the rows of
 * expert e occupy [offsets[e], offsets[e+1]) and, inside a group, tokens
 * appear in ascending token order (a stable sort), so every backend must
 * produce the same permutation.
 */
#ifndef SOLBENCH_MOE_H
#define SOLBENCH_MOE_H

#include <stdbool.h>
#include <stdint.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bounds that keep every size product far from overflow. */
#define SB_MOE_MAX_TOKENS (1 << 22)
#define SB_MOE_MAX_DIM (1 << 16)
#define SB_MOE_MAX_EXPERTS 1024

/* Zipf exponent at skew = 1: expert e is chosen with weight
 * (e+1)^-(skew·SB_MOE_ZIPF_MAX). At 4 expert 0 takes ~92 % of first
 * choices; at 0 routing is uniform. */
#define SB_MOE_ZIPF_MAX 4.0

/* The bias given to force_expert in the router, large against logits of
 * standard deviation ~1, so that expert always wins. */
#define SB_MOE_FORCE_BIAS 64.0

typedef struct sb_moe_shape {
    int64_t tokens;   /* T */
    int64_t d_model;  /* D */
    int64_t ffn;      /* F: expert FFN (intermediate) size */
    int experts;      /* E */
    int topk;         /* k */
    double skew;      /* 0 uniform .. 1 most tokens on a few experts */
    int force_expert; /* -1: none; else every token's first choice */
    bool gated;       /* grouped_gemm: gated MLP instead of one GEMM */
    uint64_t seed;
} sb_moe_shape;

/* Checks a shape; SB_EINVAL naming the parameter on failure. */
int sb_moe_check(const sb_moe_shape *s, sb_err *err);

/* ---- routing ------------------------------------------------------------- */

/* Top-k of v[0..n-1] by value, descending. Tie rule: among equal values
 * the lower index wins (comes first, and is kept when the k-th place is
 * contested). NaN never wins against a number. Writes idx[0..k-1] and,
 * when val is not NULL, val[0..k-1]. k <= n. */
void sb_moe_topk_f(const float *v, int n, int k, int *idx, float *val);
void sb_moe_topk_d(const double *v, int n, int k, int *idx, double *val);

/* The router bias of expert e: -skew·SB_MOE_ZIPF_MAX·ln(e+1), plus
 * SB_MOE_FORCE_BIAS for force_expert. */
double sb_moe_router_bias(const sb_moe_shape *s, int e);

/* Synthetic routing for dispatch, combine and grouped_gemm. Token t draws
 * its k distinct experts by Gumbel-top-k (equivalent to sampling without
 * replacement) from the popularity (e+1)^-(skew·SB_MOE_ZIPF_MAX), with
 * its own splitmix64 stream seeded from (seed, t); with force_expert >= 0
 * that expert is the first choice of every token. Weights: softmax of the
 * winning keys over the k selected (they sum to 1, descending).
 * idx, w: [T·k]. Deterministic for a given shape, whatever the threads. */
void sb_moe_synth_route(const sb_moe_shape *s, int *idx, float *w);
/* Tokens per expert of the synthetic routing, without storing it. */
void sb_moe_synth_counts(const sb_moe_shape *s, int64_t *counts);
/* counts[e] = number of (token, slot) pairs routed to e. */
void sb_moe_counts(const int *idx, int64_t tokens, int topk, int experts,
                   int64_t *counts);
/* max / mean tokens per expert (mean = T·k / E); 0 when nothing routed. */
double sb_moe_imbalance(const int64_t *counts, int experts);
/* Experts with at least one token. */
int sb_moe_active(const int64_t *counts, int experts);

/* The inputs of the four kernels, the same on every backend: uniform
 * values, element i depending only on (seed, i), each array whole (its
 * size from the shape): X [T·D] and the dispatched rows XP [R·D] (seed·4+1,
 * in [-1, 1)), the router's Wr [D·E] (seed·4+2, [-3/√D, 3/√D): logits of
 * standard deviation ~1) and bias [E] (sb_moe_router_bias), the expert
 * outputs Y [R·D] (seed·4+3, [-1, 1)), the expert weights W_up, W_gate
 * [E·D·F] (seed·4+2, ·4+3, ±√(3/D)) and W_down [E·F·D] (seed·4+4, ±√(3/F)):
 * variance 1/fan-in, outputs of order 1. R = T·k. */
typedef enum {
    SB_MOE_IN_X,
    SB_MOE_IN_WR,
    SB_MOE_IN_BIAS,
    SB_MOE_IN_Y,
    SB_MOE_IN_XP,
    SB_MOE_IN_W_UP,
    SB_MOE_IN_W_GATE,
    SB_MOE_IN_W_DOWN
} sb_moe_input;
/* Elements of an input. */
int64_t sb_moe_input_size(const sb_moe_shape *s, sb_moe_input in);
/* Fills it (in parallel static chunks, so the pages are first-touched by
 * the threads that use them). */
void sb_moe_input_fill(const sb_moe_shape *s, sb_moe_input in, float *v);

/* ---- FLOP and byte accounting (one iteration) ------------------------------
 * Bytes count inputs read once and outputs written once (intermediates that
 * a fused kernel keeps on chip are not counted); data 4 bytes (fp32),
 * indices 4 bytes (int32). docs/METRICS.md states each formula. */
double sb_moe_route_flops(const sb_moe_shape *s);
double sb_moe_route_bytes(const sb_moe_shape *s);
double sb_moe_dispatch_flops(const sb_moe_shape *s); /* 0: a data mover */
double sb_moe_dispatch_bytes(const sb_moe_shape *s);
double sb_moe_combine_flops(const sb_moe_shape *s);
double sb_moe_combine_bytes(const sb_moe_shape *s);
/* `active` = experts with at least one token (their weights are read). */
double sb_moe_gemm_flops(const sb_moe_shape *s);
double sb_moe_gemm_bytes(const sb_moe_shape *s, int active);

/* ---- references and verification ------------------------------------------
 * Each verifier returns the number of wrong elements (0 = valid) and
 * writes a one-line description of the first one into `why` (may be
 * NULL). */

/* Route: x [T·D], wr [D·E] (row-major D×E), bias [E]; checks probs
 * [T·E] (the full softmax) and idx/w [T·k] against logits recomputed in
 * double. A chosen expert whose reference logit lies within τ_c + τmax
 * of the true k-th is accepted (fp32 rounding of either may reorder
 * near-ties; τ_e = 1e-5·Σ_d |x_d·w_de| + 1e-6, τmax the largest);
 * weights must equal the softmax over the chosen experts' reference
 * logits within 1e-4 + 4τmax absolute, and not increase. */
int64_t sb_moe_route_verify(const sb_moe_shape *s, const float *x,
                            const float *wr, const float *bias,
                            const float *probs, const int *idx, const float *w,
                            char *why, int why_len);

/* Dispatch reference (serial stable counting sort): offsets [E+1],
 * pos [T·k] (row of pair t·k+j), row_token [T·k] (token of each row). */
void sb_moe_dispatch_ref(const sb_moe_shape *s, const int *idx,
                         int64_t *offsets, int64_t *pos, int64_t *row_token);
/* Checks offsets, pos, row_token exactly and every row of xp [T·k·D]
 * bit-for-bit against x [T·D]. */
int64_t sb_moe_dispatch_verify(const sb_moe_shape *s, const int *idx,
                               const float *x, const float *xp,
                               const int64_t *offsets, const int64_t *pos,
                               const int64_t *row_token, char *why,
                               int why_len);
/* Checks out [T·D] against sum_j w·y[pos] in double; tolerance 1e-5 of
 * sum_j |w·y|. */
int64_t sb_moe_combine_verify(const sb_moe_shape *s, const float *y,
                              const int64_t *pos, const float *w,
                              const float *out, char *why, int why_len);
/* Grouped GEMM: xp [T·k·D] grouped by offsets; w_up, w_gate [E·D·F]
 * (expert e's D×F at e·D·F), w_down [E·F·D]; out [T·k·F] (plain) or
 * [T·k·D] (gated). Recomputes `rows` rows (row indices given) in double,
 * every column; tolerance 1e-4 (plain) / 3e-4 (gated) of the sum of
 * absolute products. */
int64_t sb_moe_gemm_verify(const sb_moe_shape *s, const int64_t *offsets,
                           const float *xp, const float *w_up,
                           const float *w_gate, const float *w_down,
                           const float *out, const int64_t *rows, int nrows,
                           char *why, int why_len);
/* The rows sb_moe_gemm_verify should check: every row when there are at
 * most `max`; else the first and last row of each active group, then
 * evenly spread rows, at most `max` (>= 2), all distinct. Returns the
 * count written to rows. */
int sb_moe_gemm_sample_rows(const sb_moe_shape *s, const int64_t *offsets,
                            int64_t *rows, int max);

#ifdef __cplusplus
}
#endif

#endif
