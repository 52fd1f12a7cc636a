/*
 * cuda_gemm.cu — compute.gemm on the GPU through cuBLASLt: D = A B for the
 * dtypes of the table in cuda_table.c (fp32, tf32, fp16, bf16, fp8 e4m3
 * with bf16 or fp32 output), in the "TN" layout fp8 requires (A stored
 * K x M, B K x N, D M x N column-major), fp32 accumulation (fp8: the
 * tensor cores' fast accumulation, CUBLASLT_MATMUL_DESC_FAST_ACCUM, as
 * training and serving stacks run it), with a 32 MiB workspace and the
 * fastest of the algorithms cuBLASLt's heuristic offers, timed once.
 *
 * Inputs are uniform in [-1, 1) from an integer hash, converted on the
 * device to the input type. Verification poisons D (NaN bytes), runs the
 * product once more, copies 16 sampled rows of A and 16 columns of B back
 * exactly as the GPU read them (decoded on the host), and checks the 256
 * elements of D they meet against a double reference (cuda_table.h gives
 * the tolerance of each dtype).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "backend/cuda/cuda_common.h"
#include "backend/cuda/cuda_dl.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_table.h"

extern "C" {
#include "solbench/util.h"
}

#define NS 16                 /* sampled rows and columns */
#define WORKSPACE (32u << 20) /* cuBLASLt's advice for Hopper */
/* The B scale sits 256 bytes after the A scale. With the two scales 4 bytes
 * apart, cuBLASLt 13.1 on an H200 refused every fp8 algorithm its heuristic
 * offered ("not supported" at the call); 256 bytes apart, as cudaMalloc
 * aligns separate allocations, they run. */
#define SCALE_B 64
#define SEED_A 0xa11ceULL
#define SEED_B 0xb0bULL

typedef struct cgemm_state {
    sb_cuda_base base;
    const sb_cu_dtype *dt;
    int64_t m, n, k;
    void *a, *b, *d, *ws;
    float *scale; /* fp8: the A scale (1.0) at [0], B's at [SCALE_B] */
    float alpha, beta;
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulHeuristicResult_t heur;
    int algo_rank, algo_offered, algo_ran; /* which offered algorithm runs;
                                              how many ran */
    bool fast_accum;
    int64_t rows[NS], cols[NS];
} cgemm_state;

static int lt_fail(sb_err *err, cublasStatus_t st, const char *what)
{
    return sb_fail(err, SB_EIO, "%s: %s", what,
                   sb_cuda_dl.cublasLtGetStatusString(st));
}

/* ---- kernels
 * ------------------------------------------------------------------ */

__device__ __forceinline__ float unif(uint64_t i, uint64_t seed)
{
    uint64_t h = sb_cmem_mix(i + seed * 0x9e3779b97f4a7c15ULL);
    return (float)(h >> 40) * (2.0f / 16777216.0f) - 1.0f; /* [-1, 1) */
}

__global__ void k_fill(void *x, size_t n, int type, uint64_t seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        float v = unif(i, seed);
        switch (type) {
        case CUDA_R_16F:
            ((__half *)x)[i] = __float2half_rn(v);
            break;
        case CUDA_R_16BF:
            ((__nv_bfloat16 *)x)[i] = __float2bfloat16_rn(v);
            break;
        case CUDA_R_8F_E4M3:
            ((__nv_fp8_e4m3 *)x)[i] = __nv_fp8_e4m3(v);
            break;
        default:
            ((float *)x)[i] = v;
        }
    }
}

/* Adds 1000 to one element of D: far outside any tolerance. */
__global__ void k_plant(void *x, size_t i, int type)
{
    switch (type) {
    case CUDA_R_16F: {
        __half *h = (__half *)x;
        h[i] = __float2half_rn(__half2float(h[i]) + 1000.0f);
        break;
    }
    case CUDA_R_16BF: {
        __nv_bfloat16 *h = (__nv_bfloat16 *)x;
        h[i] = __float2bfloat16_rn(__bfloat162float(h[i]) + 1000.0f);
        break;
    }
    default:
        ((float *)x)[i] += 1000.0f;
    }
}

/* ---- host side
 * ------------------------------------------------------------------ */

/* One product D = A·B with the chosen algorithm, queued on the stream. */
static cublasStatus_t matmul(cgemm_state *s)
{
    return sb_cuda_dl.cublasLtMatmul(
        s->lt, s->op, &s->alpha, s->a, s->la, s->b, s->lb, &s->beta, s->d,
        s->ld, s->d, s->ld, &s->heur.algo, s->ws, WORKSPACE, s->base.stream);
}

static int enqueue(void *state, int iters, sb_err *err)
{
    cgemm_state *s = (cgemm_state *)state;
    for (int it = 0; it < iters; it++) {
        cublasStatus_t st = matmul(s);
        if (st != CUBLAS_STATUS_SUCCESS)
            return lt_fail(err, st, "cublasLtMatmul");
    }
    return 0;
}

extern "C" void sb_cgemm_teardown(void *state)
{
    cgemm_state *s = (cgemm_state *)state;
    if (!s)
        return;
    if (s->la)
        sb_cuda_dl.cublasLtMatrixLayoutDestroy(s->la);
    if (s->lb)
        sb_cuda_dl.cublasLtMatrixLayoutDestroy(s->lb);
    if (s->ld)
        sb_cuda_dl.cublasLtMatrixLayoutDestroy(s->ld);
    if (s->op)
        sb_cuda_dl.cublasLtMatmulDescDestroy(s->op);
    if (s->lt)
        sb_cuda_dl.cublasLtDestroy(s->lt);
    cudaFree(s->a);
    cudaFree(s->b);
    cudaFree(s->d);
    cudaFree(s->ws);
    cudaFree(s->scale);
    sb_cuda_base_free(&s->base);
    free(s);
}

static int fill(cgemm_state *s, void *x, size_t n, cudaDataType_t t,
                uint64_t seed, sb_err *err)
{
    k_fill<<<s->base.sms * 8, 256, 0, s->base.stream>>>(x, n, (int)t, seed);
    return sb_cuda_sync(&s->base, err, "filling the matrices");
}

/* Seconds of one product, from `n` queued behind the gate (so a short
 * product is timed without the host's queueing) between two events. */
static int time_products(cgemm_state *s, sb_cuda_gate *gate, int n, double *t,
                         sb_err *err)
{
    cudaError_t e = (cudaError_t)sb_cuda_gate_hold(gate, s->base.stream);
    if (!e)
        e = cudaEventRecord(s->base.ev[0], s->base.stream);
    cublasStatus_t run = CUBLAS_STATUS_SUCCESS;
    for (int it = 0; !e && it < n && run == CUBLAS_STATUS_SUCCESS; it++)
        run = matmul(s);
    if (!e)
        e = cudaEventRecord(s->base.ev[1], s->base.stream);
    sb_cuda_gate_release(gate);
    if (run != CUBLAS_STATUS_SUCCESS)
        return lt_fail(err, run, "cublasLtMatmul");
    float ms = 0;
    if (!e)
        e = cudaEventSynchronize(s->base.ev[1]);
    if (!e)
        e = cudaEventElapsedTime(&ms, s->base.ev[0], s->base.ev[1]);
    if (e)
        return sb_cuda_fail(err, e, "timing the offered algorithms");
    *t = 1e-3 * ms / n;
    return 0;
}

/* Creates the cuBLASLt descriptors and picks the algorithm. */
static int lt_setup(cgemm_state *s, sb_err *err)
{
    const sb_cu_dtype *dt = s->dt;
    cublasStatus_t st;
    if ((st = sb_cuda_dl.cublasLtCreate(&s->lt)))
        return lt_fail(err, st, "cublasLtCreate");
    if ((st = sb_cuda_dl.cublasLtMatmulDescCreate(&s->op, dt->compute,
                                                  dt->scale)))
        return lt_fail(err, st, "cublasLtMatmulDescCreate");
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    if ((st = sb_cuda_dl.cublasLtMatmulDescSetAttribute(
             s->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) ||
        (st = sb_cuda_dl.cublasLtMatmulDescSetAttribute(
             s->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)))
        return lt_fail(err, st, "cublasLtMatmulDescSetAttribute(TRANS)");
    if (dt->scale_ptrs) {
        const float *sa = s->scale, *sb = s->scale + SCALE_B;
        if ((st = sb_cuda_dl.cublasLtMatmulDescSetAttribute(
                 s->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa,
                 sizeof sa)) ||
            (st = sb_cuda_dl.cublasLtMatmulDescSetAttribute(
                 s->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb)))
            return lt_fail(err, st, "cublasLtMatmulDescSetAttribute(SCALE)");
    }
    if (dt->a == CUDA_R_8F_E4M3) {
        /* fp8 accumulates in the tensor cores' own precision between
         * promotions, as fp8 training and serving run it (the fp32
         * promotion of the default costs a fifth of the rate on Hopper);
         * the verification's fp8 tolerance covers its rounding */
        int8_t fast = 1;
        if ((st = sb_cuda_dl.cublasLtMatmulDescSetAttribute(
                 s->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast)))
            return lt_fail(err, st,
                           "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
        s->fast_accum = true;
    }
    uint64_t m = (uint64_t)s->m, n = (uint64_t)s->n, k = (uint64_t)s->k;
    if ((st = sb_cuda_dl.cublasLtMatrixLayoutCreate(&s->la, dt->a, k, m,
                                                    (int64_t)k)) ||
        (st = sb_cuda_dl.cublasLtMatrixLayoutCreate(&s->lb, dt->b, k, n,
                                                    (int64_t)k)) ||
        (st = sb_cuda_dl.cublasLtMatrixLayoutCreate(&s->ld, dt->c, m, n,
                                                    (int64_t)m)))
        return lt_fail(err, st, "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t pref = NULL;
    if ((st = sb_cuda_dl.cublasLtMatmulPreferenceCreate(&pref)))
        return lt_fail(err, st, "cublasLtMatmulPreferenceCreate");
    size_t wsb = WORKSPACE;
    st = sb_cuda_dl.cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
    /* The heuristic may offer an algorithm the call then refuses ("not
     * supported"), and its first choice is not always the fastest at a
     * shape: each offered one is tried, those that run are timed, and the
     * fastest is kept. A timing is the faster of two batches of products
     * queued behind a gate, enough of them for 0.2 ms (3 to 100) after
     * one that sizes the batch. */
    enum { TRIES = 8 };
    cublasLtMatmulHeuristicResult_t offered[TRIES];
    int found = 0;
    if (!st)
        st = sb_cuda_dl.cublasLtMatmulAlgoGetHeuristic(
            s->lt, s->op, s->la, s->lb, s->ld, s->ld, pref, TRIES, offered,
            &found);
    sb_cuda_dl.cublasLtMatmulPreferenceDestroy(pref);
    if (st && st != CUBLAS_STATUS_NOT_SUPPORTED)
        return lt_fail(err, st, "cublasLtMatmulAlgoGetHeuristic");
    int best = -1;
    double best_t = INFINITY;
    sb_cuda_gate gate;
    sb_cuda_gate_open(&gate);
    int rc = 0;
    for (int i = 0; !st && !rc && i < found; i++) {
        s->heur = offered[i];
        cublasStatus_t run = matmul(s);
        if (run == CUBLAS_STATUS_NOT_SUPPORTED)
            continue;
        if (run != CUBLAS_STATUS_SUCCESS) {
            rc = lt_fail(err, run, "cublasLtMatmul");
            break;
        }
        if ((rc = sb_cuda_sync(&s->base, err, "a trial product")))
            break;
        s->algo_ran++;
        double t1 = 0, t = INFINITY;
        if ((rc = time_products(s, &gate, 1, &t1, err)))
            break;
        int n = t1 > 0 ? (int)ceil(2e-4 / t1) : 100;
        n = n < 3 ? 3 : n > 100 ? 100 : n;
        for (int b = 0; b < 2 && !rc; b++) {
            double tb = 0;
            if (!(rc = time_products(s, &gate, n, &tb, err)))
                t = fmin(t, tb);
        }
        if (!rc && t < best_t) {
            best_t = t;
            best = i;
        }
    }
    sb_cuda_gate_close(&gate);
    if (rc)
        return rc;
    if (best >= 0) {
        s->heur = offered[best];
        s->algo_rank = best + 1;
        s->algo_offered = found;
        return 0;
    }
    return sb_fail(err, SB_EUNSUP,
                   "cuBLASLt has no algorithm for dtype "
                   "%s at M=%lld N=%lld K=%lld on %s (%d offered, none ran)",
                   dt->name, (long long)s->m, (long long)s->n, (long long)s->k,
                   s->base.devname, found);
}

extern "C" int sb_cgemm_setup(const char *dtype, int64_t m, int64_t n,
                              int64_t k, const sb_params *p, void **state,
                              sb_err *err)
{
    const sb_cu_dtype *dt = sb_cu_dtype_find(dtype);
    if (!dt)
        return sb_fail(err, SB_EINVAL, "compute.gemm: unknown dtype %s", dtype);
    cgemm_state *s = (cgemm_state *)calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int rc = sb_cuda_base_init(&s->base, (int)sb_p_int(p, "device"), enqueue,
                               true, err);
    if (rc || (rc = sb_cuda_dl_load(SB_CUDA_DL_CUBLASLT, err)))
        goto fail;
    s->dt = dt;
    s->m = m;
    s->n = n;
    s->k = k;
    s->alpha = 1.0f;
    s->beta = 0.0f;
    s->base.plant_error = sb_p_bool(p, "plant_error");
    if (s->base.cc < dt->min_cc) {
        rc = sb_fail(err, SB_EUNSUP,
                     "dtype %s needs compute capability >= "
                     "%d.%d; %s has %d.%d",
                     dt->name, dt->min_cc / 10, dt->min_cc % 10,
                     s->base.devname, s->base.cc / 10, s->base.cc % 10);
        goto fail;
    }
    {
        size_t na = (size_t)m * k, nb = (size_t)k * n, nd = (size_t)m * n;
        double need = (double)(na + nb) * dt->in_bytes +
                      (double)nd * dt->out_bytes + WORKSPACE;
        size_t free_b = 0, total_b = 0;
        cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
        if (e) {
            rc = sb_cuda_fail(err, e, "cudaMemGetInfo");
            goto fail;
        }
        if (need > 0.95 * (double)free_b) {
            rc = sb_fail(err, SB_EINVAL,
                         "compute.gemm M=%lld N=%lld K=%lld "
                         "dtype=%s: needs %.1f GiB of device memory, %s has "
                         "%.1f GiB free",
                         (long long)m, (long long)n, (long long)k, dt->name,
                         need / 1073741824.0, s->base.devname,
                         free_b / 1073741824.0);
            goto fail;
        }
        float ones[2] = {1.0f, 1.0f};
        if ((e = cudaMalloc(&s->a, na * dt->in_bytes)) ||
            (e = cudaMalloc(&s->b, nb * dt->in_bytes)) ||
            (e = cudaMalloc(&s->d, nd * dt->out_bytes)) ||
            (e = cudaMalloc(&s->ws, WORKSPACE)) ||
            (e = cudaMalloc(&s->scale, 2 * SCALE_B * sizeof(float)))) {
            rc = sb_cuda_fail(err, e, "allocating the matrices");
            goto fail;
        }
        /* on the benchmark's stream: lt_setup's trial matmul reads them */
        if ((rc = sb_cuda_put(&s->base, s->scale, ones, sizeof(float), err,
                              "uploading the fp8 scales")) ||
            (rc = sb_cuda_put(&s->base, s->scale + SCALE_B, ones + 1,
                              sizeof(float), err, "uploading the fp8 scales")))
            goto fail;
        if ((rc = fill(s, s->a, na, dt->a, SEED_A ^ (uint64_t)m, err)) ||
            (rc = fill(s, s->b, nb, dt->b, SEED_B ^ (uint64_t)n, err)) ||
            (rc = fill(s, s->d, nd, dt->c, 0xdULL, err)))
            goto fail;
    }
    if ((rc = lt_setup(s, err)))
        goto fail;
    {
        /* The sampled rows and columns: first, last and random ones. */
        uint64_t rng = 0x9e37ULL ^ (uint64_t)(m * 131 + n * 7 + k);
        for (int i = 0; i < NS; i++) {
            s->rows[i] = i == 0   ? 0
                         : i == 1 ? m - 1
                                  : (int64_t)(sb_rng_next(&rng) % (uint64_t)m);
            s->cols[i] = i == 0   ? 0
                         : i == 1 ? n - 1
                                  : (int64_t)(sb_rng_next(&rng) % (uint64_t)n);
        }
    }
    if ((rc = sb_cuda_uploads_done(err)))
        goto fail;
    *state = s;
    return 0;
fail:
    sb_cgemm_teardown(s);
    return rc;
}

extern "C" int sb_cgemm_verify(void *state, sb_result *r)
{
    cgemm_state *s = (cgemm_state *)state;
    const sb_cu_dtype *dt = s->dt;
    sb_err err = {};
    int rc = 0;
    size_t kb = (size_t)s->k * dt->in_bytes;
    unsigned char *ra = (unsigned char *)malloc(NS * kb);
    unsigned char *cb = (unsigned char *)malloc(NS * kb);
    cudaError_t e;
    if (!ra || !cb) {
        free(ra);
        free(cb);
        return SB_ENOMEM;
    }
    if ((e = cudaMemsetAsync(s->d, 0xff, (size_t)s->m * s->n * dt->out_bytes,
                             s->base.stream))) {
        rc = sb_cuda_fail(&err, e, "poisoning D");
        goto out;
    }
    if ((rc = enqueue(s, 1, &err)) ||
        (rc = sb_cuda_sync(&s->base, &err, "the verified product")))
        goto out;
    if (s->base.plant_error) {
        k_plant<<<1, 1, 0, s->base.stream>>>(
            s->d, (size_t)(s->rows[3] + s->cols[5] * s->m), (int)dt->c);
        if ((rc = sb_cuda_sync(&s->base, &err, "planting an error")))
            goto out;
    }
    /* Row i of A and column j of B are contiguous K-vectors. */
    for (int t = 0; t < NS; t++) {
        if ((e = cudaMemcpy(ra + t * kb, (char *)s->a + (size_t)s->rows[t] * kb,
                            kb, cudaMemcpyDeviceToHost)) ||
            (e = cudaMemcpy(cb + t * kb, (char *)s->b + (size_t)s->cols[t] * kb,
                            kb, cudaMemcpyDeviceToHost))) {
            rc = sb_cuda_fail(&err, e, "reading A and B back");
            goto out;
        }
    }
    {
        int bad = 0;
        double worst = 0;
        for (int i = 0; i < NS; i++) {
            for (int j = 0; j < NS; j++) {
                unsigned char dv[4];
                size_t at = (size_t)(s->rows[i] + s->cols[j] * s->m);
                if ((e = cudaMemcpy(dv, (char *)s->d + at * dt->out_bytes,
                                    dt->out_bytes, cudaMemcpyDeviceToHost))) {
                    rc = sb_cuda_fail(&err, e, "reading D back");
                    goto out;
                }
                double ref = 0, l2 = 0;
                for (int64_t q = 0; q < s->k; q++) {
                    double x = sb_cu_get(ra + i * kb, dt->a, (size_t)q) *
                               sb_cu_get(cb + j * kb, dt->b, (size_t)q);
                    ref += x;
                    l2 += x * x;
                }
                l2 = sqrt(l2);
                double d = sb_cu_get(dv, dt->c, 0);
                double rel = fabs(d - ref) / (fabs(ref) + l2 + 1e-300);
                if (!sb_cu_gemm_ok(d, ref, l2, dt->tol)) {
                    if (!bad)
                        sb_result_note(
                            r,
                            "verification: D[%lld,%lld] = %.8g, "
                            "reference %.8g (tolerance %g x (|ref| + "
                            "%.4g))",
                            (long long)s->rows[i], (long long)s->cols[j], d,
                            ref, dt->tol, l2);
                    bad++;
                }
                if (rel > worst || isnan(rel))
                    worst = isnan(rel) ? INFINITY : rel;
            }
        }
        r->valid = bad == 0;
        sb_result_metric(r, "max_rel_err", worst, "");
        if (!bad)
            sb_result_note(r,
                           "verified %d elements of D (16 rows x 16 columns, "
                           "first and last included) against a double "
                           "reference: max error %.3g of |ref| + ||a.b||, "
                           "tolerance %g",
                           NS * NS, worst, dt->tol);
        else
            sb_result_note(r, "verification failed: %d of %d sampled elements",
                           bad, NS * NS);
    }
out:
    free(ra);
    free(cb);
    if (rc)
        sb_result_note(r, "%s", err.msg);
    return rc;
}

extern "C" void sb_cgemm_report(void *state, const sb_params *p, sb_ctx *ctx,
                                sb_result *r)
{
    cgemm_state *s = (cgemm_state *)state;
    (void)p;
    (void)ctx;
    sb_cuda_note(&s->base, r);
    sb_result_note(r,
                   "cuBLASLt %s: A %dB, B %dB, D %dB per element, TN "
                   "layout, fp32 accumulation%s, the heuristic's algorithm %d "
                   "of %d offered (the fastest of the %d that ran, timed "
                   "behind a gate), "
                   "%u MiB workspace",
                   s->dt->name, s->dt->in_bytes, s->dt->in_bytes,
                   s->dt->out_bytes,
                   s->dt->compute == CUBLAS_COMPUTE_32F_FAST_TF32
                       ? " (inputs rounded to tf32)"
                   : s->fast_accum ? " (fast accumulation)"
                                   : "",
                   s->algo_rank, s->algo_offered, s->algo_ran, WORKSPACE >> 20);
}
