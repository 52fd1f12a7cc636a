/*
 * cuda_dl.h — cuBLAS, cuBLASLt and NCCL opened with dlopen where a
 * benchmark first needs them (cuda_dl.c), never linked: cuBLASLt alone maps
 * about 200 MB at start-up, which every command (`--help`, `list`,
 * `history`) paid, and a binary linked against them does not start where
 * they are absent. The CUDA runtime is linked statically (it opens the
 * driver itself on the first call).
 *
 * The functions are called through one table of pointers whose types come
 * from the libraries' own headers:
 *
 *     if ((rc = sb_cuda_dl_load(SB_CUDA_DL_CUBLASLT, err)))
 *         return rc;
 *     sb_cuda_dl.cublasLtCreate(&h);
 *
 * A header's macro (cublasCreate → cublasCreate_v2) names the member and
 * the symbol alike.
 */
#ifndef SOLBENCH_BACKEND_CUDA_DL_H
#define SOLBENCH_BACKEND_CUDA_DL_H

#include <cublasLt.h>
#include <cublas_v2.h>
#ifdef SB_HAVE_NCCL
#include <nccl.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#include "solbench/error.h"

/* C++ overloads cublasGemmStridedBatchedEx (a cudaDataType compute type
 * beside the C API's): its pointer type is spelled out, the C one. */
typedef cublasStatus_t (*sb_cublas_gemm_sbex_fn)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
    const void *, const void *, cudaDataType, int, long long int, const void *,
    cudaDataType, int, long long int, const void *, void *, cudaDataType, int,
    long long int, int, cublasComputeType_t, cublasGemmAlgo_t);

/* X(f): a function whose pointer type is the header's; XT(f, T): one of
 * type T. */
#define SB_CUBLAS_FNS(X, XT)                                                   \
    X(cublasCreate)                                                            \
    X(cublasDestroy)                                                           \
    X(cublasSetStream)                                                         \
    X(cublasSetWorkspace)                                                      \
    X(cublasSetMathMode)                                                       \
    XT(cublasGemmStridedBatchedEx, sb_cublas_gemm_sbex_fn)                     \
    X(cublasGetStatusString)

#define SB_CUBLASLT_FNS(X, XT)                                                 \
    X(cublasLtCreate)                                                          \
    X(cublasLtDestroy)                                                         \
    X(cublasLtGetStatusString)                                                 \
    X(cublasLtMatmul)                                                          \
    X(cublasLtMatmulAlgoGetHeuristic)                                          \
    X(cublasLtMatmulDescCreate)                                                \
    X(cublasLtMatmulDescDestroy)                                               \
    X(cublasLtMatmulDescSetAttribute)                                          \
    X(cublasLtMatmulPreferenceCreate)                                          \
    X(cublasLtMatmulPreferenceDestroy)                                         \
    X(cublasLtMatmulPreferenceSetAttribute)                                    \
    X(cublasLtMatrixLayoutCreate)                                              \
    X(cublasLtMatrixLayoutDestroy)

#ifdef SB_HAVE_NCCL
#define SB_NCCL_FNS(X, XT)                                                     \
    X(ncclGetVersion)                                                          \
    X(ncclGetErrorString)                                                      \
    X(ncclCommInitAll)                                                         \
    X(ncclCommDestroy)                                                         \
    X(ncclCommAbort)                                                           \
    X(ncclCommGetAsyncError)                                                   \
    X(ncclGroupStart)                                                          \
    X(ncclGroupEnd)                                                            \
    X(ncclAllReduce)                                                           \
    X(ncclAllGather)                                                           \
    X(ncclReduceScatter)                                                       \
    X(ncclSend)                                                                \
    X(ncclRecv)                                                                \
    X(ncclBroadcast)
#else
#define SB_NCCL_FNS(X, XT)
#endif

#ifdef __cplusplus
#define SB_DL_TYPEOF(f) decltype(f)
#else
#define SB_DL_TYPEOF(f) __typeof__(f)
#endif
#define SB_DL_MEMBER(f) SB_DL_TYPEOF(f) * f;
#define SB_DL_MEMBER_T(f, T) T f;

typedef struct sb_cuda_dl_api {
    SB_CUBLAS_FNS(SB_DL_MEMBER, SB_DL_MEMBER_T)
    SB_CUBLASLT_FNS(SB_DL_MEMBER, SB_DL_MEMBER_T)
    SB_NCCL_FNS(SB_DL_MEMBER, SB_DL_MEMBER_T)
} sb_cuda_dl_api;

/* Filled by sb_cuda_dl_load: a member is NULL until its library loaded. */
extern sb_cuda_dl_api sb_cuda_dl;

enum {
    SB_CUDA_DL_CUBLAS = 1u << 0,
    SB_CUDA_DL_CUBLASLT = 1u << 1,
    SB_CUDA_DL_NCCL = 1u << 2,
};

/* Opens the libraries of `which` (SB_CUDA_DL_* bits) once a process and
 * fills their table entries. 0, or SB_EUNSUP with "cuBLASLt
 * (libcublasLt.so.13) does not load: <dlerror>" — a benchmark that needs
 * it is then skipped with that reason. Thread-safe. */
int sb_cuda_dl_load(unsigned which, sb_err *err);

/* The library's file as loaded ("" when it is not): for notes. */
const char *sb_cuda_dl_path(unsigned which);

#ifdef __cplusplus
}
#endif

#endif
