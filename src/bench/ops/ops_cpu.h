/*
 * ops_cpu.h — the CPU kernels of the elementwise ops, declared for the
 * benchmarks in ops_cpu.c and for the unit tests. What they compute is
 * defined in include/solbench/ops.h.
 */
#ifndef SOLBENCH_BENCH_OPS_CPU_H
#define SOLBENCH_BENCH_OPS_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/ops.h"

/* The kernels this build runs: "avx512+bf16" (AVX-512F/BW with the
 * AVX512_BF16 conversions), "avx512", "avx2" (AVX2 and FMA) or
 * "portable". */
const char *sb_ops_cpu_isa(void);

/* The plumbing every op's CPU benchmark shares (the ones here and those
 * in files of their own, such as layernorm.c). */
/* Rows per chunk of a dynamic schedule for `tokens` rows: up to 128, at
 * least 8 chunks a thread; 0 (one static block a thread, as first
 * touched) on several NUMA nodes unless `dynamic` is asked for. */
int64_t sb_ops_cpu_chunk(int64_t tokens, bool dynamic);
/* Fills a [rows, width] array (fp32, or bf16 rounded) with values uniform
 * in [lo, hi) from `seed`, each row touched first by the thread of a
 * static schedule over rows. */
void sb_ops_cpu_fill(void *a, int64_t rows, int64_t width, bool bf16,
                     uint64_t seed, double lo, double hi);

/* Bytes of per-thread scratch the op needs (softmax: one fp32 row). */
size_t sb_ops_cpu_scratch(const sb_ops_shape *s);
/* What the kernels of a shape need made once before they run (the bf16
 * SwiGLU's table on AVX2); the setup calls it. */
void sb_ops_cpu_prepare(const sb_ops_shape *s);
/* Runs the op once: x, g, y fp32 or uint16 by s->bf16. */
void sb_ops_cpu_run(const sb_ops_shape *s, const void *x, const void *g,
                    const float *cos_t, const float *sin_t, void *y,
                    float *scratch);

/* The benchmark's state, for tests: allocate and fill inputs as the
 * benchmark does, reach its buffers, verify, free. */
int sb_ops_cpu_setup(const sb_ops_shape *s, void **state, sb_err *err);
void sb_ops_cpu_state_buffers(void *state, void **x, void **g, void **y,
                              float **cos_t, float **sin_t);
int64_t sb_ops_cpu_verify_state(void *state, char *why, int why_len);
void sb_ops_cpu_free(void *state);

#endif
