/*
 * cuda_kernels.h — the entry points of the CUDA benchmarks, defined in the
 * .cu files of this folder and bound to benchmark tables in
 * cuda_benches.c. Each setup returns SB_EUNSUP with "no CUDA device
 * (<driver's reason>)" when there is no device; every state begins with
 * sb_cuda_base, so sb_cuda_timer times them all.
 */
#ifndef SOLBENCH_BACKEND_CUDA_KERNELS_H
#define SOLBENCH_BACKEND_CUDA_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

#include "solbench/bench.h"

/* memory.* (cuda_mem.cu); kernel is SB__CMEM_* of cuda_table.h. */
int sb_cmem_setup(int kernel, const sb_params *p, void **state, sb_err *err);
int sb_cmem_verify(void *state, sb_result *r);
void sb_cmem_report(void *state, const sb_params *p, sb_ctx *ctx, sb_result *r);
void sb_cmem_teardown(void *state);

/* compute.gemm (cuda_gemm.cu): M, N, K are given by the table. */
int sb_cgemm_setup(const char *dtype, int64_t m, int64_t n, int64_t k,
                   const sb_params *p, void **state, sb_err *err);
int sb_cgemm_verify(void *state, sb_result *r);
void sb_cgemm_report(void *state, const sb_params *p, sb_ctx *ctx,
                     sb_result *r);
void sb_cgemm_teardown(void *state);

/* attention.bmm and attention.paged_decode (cuda_attn.cu). */
int sb_cbmm_setup(const sb_params *p, void **state, sb_err *err);
int sb_cbmm_verify(void *state, sb_result *r);
void sb_cbmm_report(void *state, const sb_params *p, sb_ctx *ctx, sb_result *r);
void sb_cbmm_teardown(void *state);
int sb_cpaged_setup(const sb_params *p, void **state, sb_err *err);
int sb_cpaged_verify(void *state, sb_result *r);
void sb_cpaged_report(void *state, const sb_params *p, sb_ctx *ctx,
                      sb_result *r);
void sb_cpaged_teardown(void *state);

/* memory.latency (host false: device memory) and transfer.latency (host
 * true: mapped page-locked host memory), cuda_chase.cu; shape is an
 * sb_chase_shape (bench/memory/chase.h). */
struct sb_chase_shape;
int sb_cchase_setup(bool host, const struct sb_chase_shape *shape,
                    const sb_params *p, void **state, sb_err *err);
int sb_cchase_verify(void *state, sb_result *r);
void sb_cchase_report(void *state, sb_result *r);
void sb_cchase_teardown(void *state);

/* network.* over NCCL (cuda_nccl.cu); op is an sb_netop. */
/* timeout_s: the longest a wait on the GPUs may last before the
 * communicators are aborted and the point fails. */
int sb_cnccl_setup(int op, const sb_params *p, double timeout_s, void **state,
                   sb_err *err);
/* Batches of operations on every GPU, the slowest GPU's event time. */
extern const sb_timer sb_cnccl_timer;
int sb_cnccl_verify(void *state, sb_result *r);
void sb_cnccl_report(void *state, const sb_params *p, sb_ctx *ctx,
                     sb_result *r);
void sb_cnccl_teardown(void *state);

#ifdef __cplusplus
}
#endif

#endif
