/*
 * moe_cpu.h — the CPU (OpenMP + GEMM library) kernels of the MoE primitives,
 * declared for the benchmarks in moe_cpu.c and for the unit tests. What
 * they compute is defined in include/solbench/moe.h.
 */
#ifndef SOLBENCH_BENCH_MOE_CPU_H
#define SOLBENCH_BENCH_MOE_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/cpu/cpu_gemm.h"
#include "solbench/moe.h"

/* The GEMM plans of a point on one library: the router's [T x D]·[D x E]
 * (route), or one plan per distinct group size n of the experts:
 * up (and gate) [n x D]·[D x F], down [n x F]·[F x D] when gated. Plans
 * take a slot per OpenMP thread. */
typedef struct sb_moe_plans {
    int lib;
    sb_gemm_plan *route;
    int n;         /* distinct group sizes */
    int64_t *rows; /* [E]: rows[i] is group size i */
    sb_gemm_plan **up, **down;
} sb_moe_plans;

/* Makes pl for the router (route) or for the groups that offsets [E+1]
 * give; 0 or a negative code (SB_EUNSUP: lib cannot run fp32 here). */
int sb_moe_cpu_plans(const sb_moe_shape *s, bool route, const int64_t *offsets,
                     int lib, sb_moe_plans *pl, sb_err *err);
void sb_moe_cpu_plans_free(sb_moe_plans *pl);

/* probs [T·E] = softmax(probs + bias) in place (bias may be NULL); idx, w
 * [T·k]: top-k, renormalised. What route does after its GEMM. */
void sb_moe_cpu_route_select(const sb_moe_shape *s, const float *bias,
                             float *probs, int *idx, float *w);
/* probs [T·E] = softmax(x·wr + bias); idx, w [T·k]: top-k, renormalised. */
void sb_moe_cpu_route(const sb_moe_shape *s, const sb_moe_plans *pl,
                      const float *x, const float *wr, const float *bias,
                      float *probs, int *idx, float *w);

/* Scratch the dispatch kernel needs: per-thread histograms. */
size_t sb_moe_cpu_dispatch_scratch(const sb_moe_shape *s);
/* Stable counting sort of the (token, slot) pairs by expert and the gather
 * of rows: offsets [E+1], pos [T·k], row_token [T·k], xp [T·k·D]. */
void sb_moe_cpu_dispatch(const sb_moe_shape *s, const int *idx, const float *x,
                         float *xp, int64_t *offsets, int64_t *pos,
                         int64_t *row_token, int64_t *scratch);

/* The same for rows of any element type: row_bytes a row of x and xp. */
void sb_moe_cpu_dispatch_rows(const sb_moe_shape *s, const int *idx,
                              const void *x, void *xp, size_t row_bytes,
                              int64_t *offsets, int64_t *pos,
                              int64_t *row_token, int64_t *scratch);
/* out [T·D] = sum_j w[t,j] · y[pos[t,j]]. */
void sb_moe_cpu_combine(const sb_moe_shape *s, const float *y,
                        const int64_t *pos, const float *w, float *out);

/* Plain: out [R·F] = xp_e · w_up_e per group. Gated: g, h [R·F] scratch,
 * out [R·D] = (silu(xp_e·w_gate_e) * (xp_e·w_up_e)) · w_down_e. pl: the
 * plans made for these offsets. */
void sb_moe_cpu_gemm(const sb_moe_shape *s, const sb_moe_plans *pl,
                     const int64_t *offsets, const float *xp, const float *w_up,
                     const float *w_gate, const float *w_down, float *g,
                     float *h, float *out);

#endif
