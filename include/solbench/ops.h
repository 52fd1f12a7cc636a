/*
 * ops.h — what the elementwise LLM ops compute, independent of any
 * backend: shapes, bf16 storage conversion, FLOP and byte accounting, the
 * RoPE tables and the double-precision verifier.
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

#define SB_OPS_EPS 1e-6
#define SB_OPS_ROPE_THETA 10000.0
#define SB_OPS_MAX_TOKENS (1 << 24)
#define SB_OPS_MAX_D (1 << 20)

typedef enum sb_op_kind {
    SB_OP_RMSNORM = 0,
    SB_OP_SWIGLU,
    SB_OP_ROPE,
    SB_OP_SOFTMAX
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

/* Element i of an fp32 array, or of a bf16 (uint16) one decoded, as a
 * double: how every verifier of the ops reads inputs and outputs. */
static inline double sb_ops_elem(const void *a, bool bf16, int64_t i)
{
    return bf16 ? (double)sb_bf16_to_f32(((const uint16_t *)a)[i])
                : (double)((const float *)a)[i];
}

/* Checks a shape; SB_EINVAL naming the parameter on failure. */
int sb_ops_check(const sb_ops_shape *s, sb_err *err);
const char *sb_ops_name(sb_op_kind op);

/* Element counts of the input x (2·T·d for swiglu, else T·d) and output. */
int64_t sb_ops_in_elems(const sb_ops_shape *s);
int64_t sb_ops_out_elems(const sb_ops_shape *s);
/* Bytes of one stored element: 4 (fp32) or 2 (bf16). */
int sb_ops_elem_bytes(const sb_ops_shape *s);

/* One iteration. Bytes: inputs read once, outputs written once
 * (S = element bytes): rmsnorm S·(2Td + d), swiglu 3·S·Td,
 * rope 2·S·Td + 4·T·head_dim (the fp32 cos and sin tables),
 * softmax 2·S·Td. FLOPs (exp, division, sqrt count one each):
 * rmsnorm 4Td + 3T, swiglu 4Td, rope 3Td, softmax 5Td + T. */
double sb_ops_flops(const sb_ops_shape *s);
double sb_ops_bytes(const sb_ops_shape *s);

/* The RoPE tables: cos_t, sin_t [T · head_dim/2], computed in double. */
void sb_ops_rope_tables(const sb_ops_shape *s, float *cos_t, float *sin_t);

/* Checks every output element against a double-precision reference
 * computed from the same (decoded) inputs. x, g, out are fp32 or uint16
 * arrays by s->bf16; g is used by rmsnorm; rope's angles are computed
 * here in double from the position and theta, not read from the tables
 * the kernel uses (a wrong table is caught). Tolerance:
 * |y - ref| <= rtol·scale + stol·|ref| + atol, with scale the magnitude of
 * the element's terms (|ref| except for rope: |x_i·c| + |x_j·s|); rtol
 * 1e-4 for rmsnorm and softmax (a row reduction), 1e-5 for swiglu and
 * rope (fp32 arithmetic); stol 0 for fp32 and 2^-8 for bf16 (the output
 * rounding is at most 2^-9); atol tiny (1e-12 softmax, 1e-7 rope,
 * 1e-6·|b| swiglu).
 * Returns the number of wrong elements; `why` gets the first. */
int64_t sb_ops_verify(const sb_ops_shape *s, const void *x, const void *g,
                      const void *out, char *why, int why_len);

#ifdef __cplusplus
}
#endif

#endif
