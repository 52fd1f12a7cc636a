/*
 * layernorm.h — ops.layernorm, LayerNorm over the rows of a [tokens, d]
 * matrix (fp32 or bf16 storage, fp32 arithmetic):
 *
 *   mean = Σx / d,  var = Σ(x - mean)² / d   (two passes over the row)
 *   y    = (x - mean) / sqrt(var + eps) · g + b      (g, b: [d])
 *
 * Declared here for its unit test; the benchmark is sb_bench_ops_layernorm.
 */
#ifndef SOLBENCH_BENCH_OPS_LAYERNORM_H
#define SOLBENCH_BENCH_OPS_LAYERNORM_H

#include <stdbool.h>
#include <stdint.h>

#define SB_LAYERNORM_EPS 1e-5

/* The rows [0, tokens): x, g, b, y fp32 or uint16 (bf16) by `bf16`; rows
 * to threads in chunks of `chunk` (0: one static block a thread). */
void sb_layernorm_rows(const void *x, const void *g, const void *b, void *y,
                       int64_t tokens, int64_t d, bool bf16, int64_t chunk);

/* FLOPs and bytes of one pass (see docs/METRICS.md). */
double sb_layernorm_flops(int64_t tokens, int64_t d);
double sb_layernorm_bytes(int64_t tokens, int64_t d, bool bf16);

/* Checks every element of y against a double-precision reference from
 * the same (decoded) inputs: |y - ref| <= 1e-4·(|n| + |b|) +
 * 1e-5·|mean|·rstd·|g| + stol·|ref| + 1e-6, n = (x - mean)·rstd·g (the
 * second term: the fp32 mean's rounding, which matters for rows far from
 * zero), stol 2^-8 for bf16 (the output's rounding), 0 for fp32. Returns
 * the number of wrong elements; `why` gets the first. */
int64_t sb_layernorm_verify(const void *x, const void *g, const void *b,
                            const void *y, int64_t tokens, int64_t d, bool bf16,
                            char *why, int why_len);

#endif
