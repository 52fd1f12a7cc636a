/*
 * layernorm.h — ops.layernorm, LayerNorm over the rows of a [tokens, d]
 * matrix (fp32 or bf16 storage, fp32 arithmetic):
 *
 *   mean = Σx / d,  var = Σ(x - mean)² / d   (two passes over the row)
 *   y    = (x - mean) / sqrt(var + eps) · g + b      (g, b: [d])
 *
 * A row of the ops table (ops_table.def) like every op: its kernels are
 * sb_ops_cpu_layernorm (ops_cpu.h), its reference sb_ops_verify_layernorm
 * (solbench/ops.h), its benchmark sb_bench_ops_layernorm. Declared here
 * for its unit test: its kernel over plain arrays, and its accounting and
 * reference (the table's) taking them.
 */
#ifndef SOLBENCH_BENCH_OPS_LAYERNORM_H
#define SOLBENCH_BENCH_OPS_LAYERNORM_H

#include <stdbool.h>
#include <stdint.h>

#include "solbench/ops.h"

#define SB_LAYERNORM_EPS SB_OPS_LAYERNORM_EPS

/* The rows [0, tokens): x, g, b, y fp32 or uint16 (bf16) by `bf16`; rows
 * to threads in chunks of `chunk` (0: one static block a thread). */
void sb_layernorm_rows(const void *x, const void *g, const void *b, void *y,
                       int64_t tokens, int64_t d, bool bf16, int64_t chunk);

/* FLOPs and bytes of one pass (see docs/METRICS.md). */
double sb_layernorm_flops(int64_t tokens, int64_t d);
double sb_layernorm_bytes(int64_t tokens, int64_t d, bool bf16);

/* Checks every element of y against the double-precision reference
 * (sb_ops_verify_layernorm: its tolerance is solbench/ops.h's). Returns
 * the number of wrong elements; `why` gets the first. */
int64_t sb_layernorm_verify(const void *x, const void *g, const void *b,
                            const void *y, int64_t tokens, int64_t d, bool bf16,
                            char *why, int why_len);

#endif
