/*
 * gemm.h — what a compute.gemm point computes, independent of the backend
 * that runs it: C[M x N] = A[M x K] · B[K x N], with M, N, K from the
 * point's shape parameters:
 *   square  M = m or n, N = n, K = k or n
 *   llm     M = tokens, K = d_model, N = 4 · d_model (an MLP's up GEMM)
 *   decode  M = batch, K = d_model, N = ffn, or (ffn = 0) the columns that
 *           make the K x N weights four times the last-level cache (a
 *           multiple of 256, at least 256; 32 MiB taken when unknown)
 */
#ifndef SOLBENCH_GEMM_H
#define SOLBENCH_GEMM_H

#include <stdint.h>

#include <stdbool.h>
#include <stdint.h>

#include "solbench/error.h"
#include "solbench/param.h"

#ifdef __cplusplus
extern "C" {
#endif

/* M, N, K of a point; SB_EINVAL (naming the parameter) for a shape that
 * is unknown, m or k given to a shape other than square, or a dimension
 * outside 1..INT_MAX. */
int sb_gemm_dims(const sb_params *p, int64_t *m, int64_t *n, int64_t *k,
                 sb_err *err);

/* A compute.gemm point decoded once (its definition's decode): the
 * product's dimensions and whether it is decode-shaped (read as memory
 * traffic). Every backend's hooks take it from the point. */
typedef struct sb_gemm_shape {
    int64_t m, n, k;
    bool decode;
} sb_gemm_shape;

#ifdef __cplusplus
}
#endif

#endif
