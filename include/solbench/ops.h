/*
 * ops.h — what the elementwise LLM ops compute, independent of any
 * backend: shapes, bf16 storage conversion, the RoPE tables and each op's
 * double-precision reference (src/def/ops.c). The rest of what an op is
 * (its name, arrays and so its bytes, FLOPs, the reference and kernels it
 * takes) is its row of the ops table (src/bench/ops/ops_table.def); the
 * ops area's header, src/bench/ops/ops_cpu.h, reads it for a shape.
 *
 * Every op works on rows of a [tokens, d] matrix (row-major), stored as
 * fp32 or as bf16 (uint16, round-to-nearest-even) with fp32 arithmetic:
 *   rmsnorm   y = x / sqrt(mean(x²) + eps) · g          (g: [d], same dtype)
 *   swiglu    y = silu(a) · b, silu(a) = a / (1 + e^-a); the input row is
 *             [a | b] of 2d elements (gate first, as fused kernels take it)
 *   rope      rotate-half RoPE per head of head_dim: for i < h = head_dim/2,
 *             y_i = x_i·c - x_{i+h}·s, y_{i+h} = x_{i+h}·c + x_i·s, with
 *             c, s = cos, sin(pos·theta^(-2i/head_dim)), pos = token index;
 *             the tables [tokens, h] are fp32 inputs
 *   softmax   y = e^(x - max) / sum e^(x - max) over each row
 *   layernorm y = (x - mean) / sqrt(var + eps) · g + b, mean = Σx / d,
 *             var = Σ(x - mean)² / d (g, b: [d], same dtype)
 */
#ifndef SOLBENCH_OPS_H
#define SOLBENCH_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "solbench/error.h"
#include "solbench/util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SB_OPS_EPS 1e-6           /* rmsnorm */
#define SB_OPS_LAYERNORM_EPS 1e-5 /* layernorm */
#define SB_OPS_ROPE_THETA 10000.0
#define SB_OPS_MAX_TOKENS (1 << 24)
#define SB_OPS_MAX_D (1 << 20)

typedef enum sb_op_kind {
    SB_OP_RMSNORM = 0,
    SB_OP_SWIGLU,
    SB_OP_ROPE,
    SB_OP_SOFTMAX,
    SB_OP_LAYERNORM,
    SB_OP_COUNT /* the number of ops (rows of the ops table) */
} sb_op_kind;

typedef struct sb_ops_shape {
    sb_op_kind op;
    int64_t tokens; /* T */
    int64_t d;      /* row width (of the output) */
    int head_dim;   /* rope only: even, divides d */
    bool bf16;      /* storage: bf16 (uint16) instead of fp32 */
    bool nt;        /* CPU: rows leave through non-temporal stores */
    int64_t chunk;  /* CPU: rows per chunk of a dynamic schedule; 0: static
                       (one block of rows per thread, as first touched) */
} sb_ops_shape;

/* The arrays of one pass: x, g, b and y fp32 or uint16 by s->bf16; g
 * and b are [d] (g: rmsnorm and layernorm, b: layernorm; NULL where the op
 * reads none), cos_t and sin_t rope's fp32 tables (NULL for the others). */
typedef struct sb_ops_bufs {
    const void *x, *g, *b;
    const float *cos_t, *sin_t;
    void *y;
} sb_ops_bufs;

/* Element i of an fp32 array, or of a bf16 (uint16) one decoded, as a
 * double: how every verifier of the ops reads inputs and outputs. */
static inline double sb_ops_elem(const void *a, bool bf16, int64_t i)
{
    return bf16 ? (double)sb_bf16_to_f32(((const uint16_t *)a)[i])
                : (double)((const float *)a)[i];
}

/* Element count of the output (T·d). */
int64_t sb_ops_out_elems(const sb_ops_shape *s);
/* Bytes of one stored element: 4 (fp32) or 2 (bf16). */
int sb_ops_elem_bytes(const sb_ops_shape *s);

/* The RoPE tables: cos_t, sin_t [T · head_dim/2], computed in double. */
void sb_ops_rope_tables(const sb_ops_shape *s, float *cos_t, float *sin_t);

/* The references, one an op (its row names it): each checks every output
 * element (io->y) against a double-precision reference computed from the
 * same (decoded) inputs, and returns the number of wrong elements; `why`
 * gets the first. rope's angles are
 * computed here in double from the position and theta, not read from the
 * tables the kernel uses (a wrong table is caught).
 * Tolerance: |y - ref| <= rtol·scale + stol·|ref| + atol, with scale the
 * magnitude of the element's terms (|ref| except for rope: |x_i·c| +
 * |x_j·s|); rtol 1e-4 for rmsnorm and softmax (a row reduction), 1e-5
 * for swiglu and rope (fp32 arithmetic); stol 0 for fp32 and 2^-8 for
 * bf16 (the output rounding is at most 2^-9); atol tiny (1e-12 softmax,
 * 1e-7 rope, 1e-6·|b| swiglu). layernorm: |y - ref| <= 1e-4·(|n| + |b|) +
 * 1e-5·|mean|·rstd·|g| + stol·|ref| + 1e-6, n = (x - mean)·rstd·g (the
 * second term: the fp32 mean's rounding, which matters for rows far from
 * zero). */
int64_t sb_ops_verify_rmsnorm(const sb_ops_shape *s, const sb_ops_bufs *io,
                              char *why, int why_len);
int64_t sb_ops_verify_swiglu(const sb_ops_shape *s, const sb_ops_bufs *io,
                             char *why, int why_len);
int64_t sb_ops_verify_rope(const sb_ops_shape *s, const sb_ops_bufs *io,
                           char *why, int why_len);
int64_t sb_ops_verify_softmax(const sb_ops_shape *s, const sb_ops_bufs *io,
                              char *why, int why_len);
int64_t sb_ops_verify_layernorm(const sb_ops_shape *s, const sb_ops_bufs *io,
                                char *why, int why_len);

#ifdef __cplusplus
}
#endif

#endif
