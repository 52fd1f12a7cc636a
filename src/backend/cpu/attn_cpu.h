/*
 * attn_cpu.h — the CPU implementations of the attention primitives defined
 * in include/solbench/attention.h: batched matmul on CBLAS, a tiled
 * online-softmax (flash-style) prefill on CBLAS tile products, and a
 * ragged paged-attention kernel with AVX2/FMA micro-kernels (a portable
 * scalar path elsewhere). Workspaces are allocated once, outside the timed
 * region.
 */
#ifndef SOLBENCH_ATTN_CPU_H
#define SOLBENCH_ATTN_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/cpu/cpu_gemm.h"
#include "solbench/attention.h"

/* ---- batched matmul ------------------------------------------------------ */

/* C[b] = A[b] · B[b] with A and B of the plan's type (fp32, or bf16 with
 * fp32 accumulation) and C fp32; plan is one product's (m, n, k), with a
 * slot per thread. Parallel over the batch when it has at least as many
 * matrices as threads (the library single-threaded inside), else the
 * library's threads each product. */
void sb_cpu_bmm(const sb_bmm_shape *s, sb_gemm_plan *plan, const void *a,
                const void *b, float *c);

/* ---- workspace ----------------------------------------------------------- */

typedef struct sb_attn_ws {
    int nthreads;
    int64_t per_thread; /* floats per thread */
    float *buf;         /* nthreads * per_thread floats */
    /* paged: work items of SB_PAGED_ITEM_W values (sequence, first KV
     * head h0, rows [r0, r1), keys [k0, k1), scratch offset or -1, cost,
     * end KV head h1), heaviest first. An item takes KV heads [h0, h1)
     * together, as many as a small running state holds. When there are
     * fewer items than a few per thread, long key ranges are split
     * (flash-decoding): each part writes its unnormalised output, max and
     * sum to scratch, and a merge pass combines the parts of each group
     * (sequence, h0, rows, first scratch offset, parts, h1). */
    int64_t n_items;
    int64_t *items;
    int64_t n_groups;
    int64_t *groups;
    float *scratch;
    /* prefill: the GEMM plans of each tile shape (plan_shape[2i] query
     * rows x plan_shape[2i+1] keys): S = alpha Q Kᵀ and O += P V */
    int dt; /* SB_GEMM_F32 or SB_GEMM_BF16 */
    int n_plans;
    int64_t *plan_shape;
    sb_gemm_plan **qk, **pv;
} sb_attn_ws;

/* Query rows per tile and keys per block of the prefill kernel. */
#define SB_PREFILL_BR 128
#define SB_PREFILL_BC 256
/* Query rows (token x head) per paged work item, keys per paged block. */
#define SB_PAGED_RT 64
#define SB_PAGED_KB 64
#define SB_PAGED_ITEM_W 9

/* The prefill workspace and the plans of library lib (SB_GEMM_OPENBLAS,
 * SB_GEMM_ONEDNN) for Q, K, V of type dt (SB_GEMM_F32, SB_GEMM_BF16). */
int sb_cpu_prefill_ws(const sb_prefill_shape *s, int nthreads, int lib, int dt,
                      sb_attn_ws *ws, sb_err *err);
int sb_cpu_paged_ws(const sb_paged_shape *s, int nthreads, sb_attn_ws *ws,
                    sb_err *err);
void sb_attn_ws_free(sb_attn_ws *ws);

/* ---- kernels ------------------------------------------------------------- */

/* Which micro-kernels this build runs: "avx512" (16 and 8 lanes), "avx2",
 * "portable", or "v16emu" (the 16-lane copy emulated on AVX2, a test
 * build). */
const char *sb_attn_cpu_isa(void);
/* Whether sb_cpu_paged attends shape s's GQA-4 decode items in bf16
 * products (a bf16 cache, D a multiple of 64, a build for AVX512-BF16):
 * Q and P rounded to bf16, so its output is held to the bf16 bound. */
bool sb_cpu_paged_bf16_products(const sb_paged_shape *s);

/* Q, K, V of the workspace's type (float or bf16), O fp32. */
void sb_cpu_prefill(const sb_prefill_shape *s, const void *q, const void *k,
                    const void *v, float *o, const sb_attn_ws *ws);
/* K and V pools of s->kv_bytes-byte elements: 4 (fp32, or 0) or 2 (bf16,
 * decoded to fp32 as loaded; fp32 math). */
void sb_cpu_paged(const sb_paged_shape *s, const float *q, const void *kpool,
                  const void *vpool, const int32_t *table, float *o,
                  const sb_attn_ws *ws);

#endif
