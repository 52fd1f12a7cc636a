/*
 * ops_cpu.h — the ops area: the kernels' signature and each op's kernels
 * (ops_cpu.c; layernorm.c), the row of the ops table (its rows:
 * ops_table.def) and what a shape's row says of it (name, check, bytes,
 * FLOPs, reference; ops_bench.c), and the plumbing every op's benchmark
 * shares (running a row's kernel: ops_cpu.c; the rest: ops_bench.c),
 * declared for the benchmarks, the unit tests and the reference model.
 * What the ops compute is defined in include/solbench/ops.h.
 */
#ifndef SOLBENCH_BENCH_OPS_CPU_H
#define SOLBENCH_BENCH_OPS_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/ops.h"

/* One pass of an op over every row of s: io's arrays (fp32 or uint16 by
 * s->bf16), `scratch` the per-thread scratch sb_ops_cpu_scratch sizes. */
typedef void (*sb_ops_kernel)(const sb_ops_shape *s, const sb_ops_bufs *io,
                              float *scratch);

/* An op's CPU kernels, [0] for fp32 storage and [1] for bf16, in each ISA
 * it has kernels for; NULL where this build has none (ops_cpu.c builds
 * one ISA's: the one its flags select). The best ISA present runs. */
typedef struct sb_ops_kernels {
    sb_ops_kernel portable[2], avx2[2], avx512[2];
    bool row_scratch; /* a fp32 row of scratch per thread (softmax's
                         exponentials) */
    /* NULL, or what the kernels need made once before they run (the bf16
     * SwiGLU's table on AVX2 and AVX-512) */
    void (*prepare)(const sb_ops_shape *s);
} sb_ops_kernels;

extern const sb_ops_kernels sb_ops_cpu_rmsnorm, sb_ops_cpu_swiglu,
    sb_ops_cpu_rope, sb_ops_cpu_softmax, sb_ops_cpu_layernorm;

/* One row of the ops table: an op and its benchmark, ops.<name> (kind,
 * parameters and description are the benchmark's, in the row's SB_OP). */
typedef struct sb_op_row {
    const char *name;
    /* Its arrays, which give its bytes (each read or written once, S
     * bytes an element): x of x_width·T·d elements, y of T·d, `vecs`
     * vectors of d (g, then b), and with `tables` rope's fp32 cos and sin
     * tables of T·head_dim/2 each: S·((x_width + 1)·Td + vecs·d) +
     * 4·T·head_dim. */
    int x_width, vecs;
    bool tables;
    /* FLOPs of one pass: flops_elem·Td + flops_row·T. */
    double flops_elem, flops_row;
    /* Its reference (src/def/ops.c). */
    int64_t (*verify)(const sb_ops_shape *s, const sb_ops_bufs *io, char *why,
                      int why_len);
    const sb_ops_kernels *cpu;
    /* The benchmark's inputs: x filled from `seed`, y from seed + 1, g
     * from seed + 2, b from seed + 3 (sb_ops_cpu_fill). */
    uint64_t seed;
    /* Bytes a point allocates; NULL: x, y and one d-vector, rope's tables
     * (of head_dim 2 for the others) and a fp32 row a thread. */
    double (*footprint)(const sb_ops_shape *s);
} sb_op_row;

/* The row of an op (ops_bench.c holds the table); NULL for no op. */
const sb_op_row *sb_ops_row(sb_op_kind op);

/* What a shape's row says of it. */
/* "rmsnorm", ...: the benchmark is ops.<name>; "?" for no op. */
const char *sb_ops_name(sb_op_kind op);
/* Checks a shape (head_dim where the op has rope's tables); SB_EINVAL
 * naming the parameter on failure. */
int sb_ops_check(const sb_ops_shape *s, sb_err *err);
/* Element count of the input x (2·T·d for swiglu, else T·d). */
int64_t sb_ops_in_elems(const sb_ops_shape *s);
/* One iteration. Bytes: inputs read once, outputs written once
 * (S = element bytes): rmsnorm S·(2Td + d), swiglu 3·S·Td,
 * rope 2·S·Td + 4·T·head_dim (the fp32 cos and sin tables),
 * softmax 2·S·Td, layernorm S·(2Td + 2d). FLOPs (exp, division, sqrt
 * count one each): rmsnorm 4Td + 3T, swiglu 4Td, rope 3Td, softmax
 * 5Td + T, layernorm 8Td + 3T. */
double sb_ops_flops(const sb_ops_shape *s);
double sb_ops_bytes(const sb_ops_shape *s);
/* The row's reference (solbench/ops.h) on io. */
int64_t sb_ops_verify(const sb_ops_shape *s, const sb_ops_bufs *io, char *why,
                      int why_len);

/* The kernels this build runs: "avx512+bf16" (AVX-512F/BW with the
 * AVX512_BF16 conversions), "avx512", "avx2" (AVX2 and FMA) or
 * "portable". */
const char *sb_ops_cpu_isa(void);

/* The plumbing every op's CPU benchmark shares. */
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
/* Runs the op once with its row's kernel for this build and s->bf16. */
void sb_ops_cpu_exec(const sb_ops_shape *s, const sb_ops_bufs *io,
                     float *scratch);
/* The same for an op without b (all but layernorm): x, g, y fp32 or
 * uint16 by s->bf16. */
void sb_ops_cpu_run(const sb_ops_shape *s, const void *x, const void *g,
                    const float *cos_t, const float *sin_t, void *y,
                    float *scratch);

/* The benchmark's state, for tests: allocate and fill inputs as the
 * benchmark does, reach its buffers, verify, free. */
int sb_ops_cpu_setup(const sb_ops_shape *s, void **state, sb_err *err);
void sb_ops_cpu_state_buffers(void *state, void **x, void **g, void **y,
                              float **cos_t, float **sin_t);
/* All of them (b included) as the kernels take them. */
const sb_ops_bufs *sb_ops_cpu_state_io(void *state);
int64_t sb_ops_cpu_verify_state(void *state, char *why, int why_len);
void sb_ops_cpu_free(void *state);

#endif
