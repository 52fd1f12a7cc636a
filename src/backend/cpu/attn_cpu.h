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

#include "solbench/attention.h"

/* ---- batched matmul -------------------------------------------------------- */

/* C[b] = A[b] · B[b], fp32, parallel over the batch when it has at least as
 * many matrices as threads (single-threaded BLAS inside), else the BLAS
 * threads each product. */
void sb_cpu_bmm_f32(const sb_bmm_shape *s, const float *a, const float *b,
                    float *c);

/* bf16 storage, fp32 accumulation: OpenBLAS cblas_sbgemm when the loaded
 * library exports it (looked up at run time). */
void sb_cpu_bmm_bf16(const sb_bmm_shape *s, const uint16_t *a,
                     const uint16_t *b, float *c);

/* ---- workspace -------------------------------------------------------------- */

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
} sb_attn_ws;

/* Query rows per tile and keys per block of the prefill kernel. */
#define SB_PREFILL_BR 128
#define SB_PREFILL_BC 256
/* Query rows (token x head) per paged work item, keys per paged block. */
#define SB_PAGED_RT 64
#define SB_PAGED_KB 64
#define SB_PAGED_ITEM_W 9

int sb_cpu_prefill_ws(const sb_prefill_shape *s, int nthreads,
                      sb_attn_ws *ws, sb_err *err);
int sb_cpu_paged_ws(const sb_paged_shape *s, int nthreads, sb_attn_ws *ws,
                    sb_err *err);
void sb_attn_ws_free(sb_attn_ws *ws);

/* ---- kernels ---------------------------------------------------------------- */

void sb_cpu_prefill(const sb_prefill_shape *s, const float *q,
                    const float *k, const float *v, float *o,
                    const sb_attn_ws *ws);
void sb_cpu_paged(const sb_paged_shape *s, const float *q, const float *kpool,
                  const float *vpool, const int32_t *table, float *o,
                  const sb_attn_ws *ws);

#endif
