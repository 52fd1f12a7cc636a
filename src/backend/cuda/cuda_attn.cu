/*
 * cuda_attn.cu — the attention primitives on the GPU, computing what
 * include/solbench/attention.h defines (shapes, layouts, FLOPs, bytes) and
 * checked by its double-precision reference (sb_bmm_verify,
 * sb_paged_verify), exactly as the CPU kernels are:
 *
 *   attention.bmm          cublasGemmStridedBatchedEx, fp32 (pure fp32
 *                          compute, no tf32) or bf16 inputs with fp32
 *                          accumulation and output;
 *   attention.paged_decode a split-KV ("flash-decoding") CUDA kernel over
 *                          the shuffled page pool: one block per (query
 *                          token, KV head, group of up to 8 query heads,
 *                          split of up to 256 keys) computes an online
 *                          softmax of its keys with every query head of the
 *                          GQA group sharing each K and V row it loads; a
 *                          second kernel merges the splits. Memory-bound:
 *                          the report compares GB/s with bw.HBM. The KV
 *                          cache is fp32, bf16 or fp8 e4m3 (`kv_dtype`),
 *                          decoded to fp32 as it is used; the reference
 *                          reads the same rounded values.
 *
 * Inputs are the CPU benchmarks' (sb_attn_fill, same seeds), uploaded once.
 *
 * The paged-decode kernel is one __global__ function of about 170 lines:
 * a kernel's loop over its keys with the running softmax state in
 * registers, which device-function calls would not make easier to read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "backend/cuda/cuda_common.h"
#include "backend/cuda/cuda_dl.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_table.h"

extern "C" {
#include "solbench/attention.h"
#include "solbench/util.h"
}

#define WORKSPACE (32u << 20)
static const uint64_t seed_q = 0x51ULL, seed_k = 0x4bULL, seed_v = 0x56ULL;

static int blas_fail(sb_err *err, cublasStatus_t st, const char *what)
{
    return sb_fail(err, SB_EIO, "%s: %s", what,
                   sb_cuda_dl.cublasGetStatusString(st));
}

static int mem_check(const char *bench, double need, const char *dev,
                     sb_err *err)
{
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e)
        return sb_cuda_fail(err, e, "cudaMemGetInfo");
    if (need > 0.95 * (double)free_b)
        return sb_fail(err, SB_EINVAL,
                       "%s: needs %.2f GiB of device memory, "
                       "%s has %.2f GiB free",
                       bench, need / 1073741824.0, dev, free_b / 1073741824.0);
    return 0;
}

/* ==== attention.bmm ==========================================================
 */

typedef struct cbmm_state {
    sb_cuda_base base;
    sb_bmm_shape s;
    bool bf16;
    float *a, *b, *c; /* host: the values the product uses; C read back */
    void *da, *db;
    float *dc;
    void *ws;
    cublasHandle_t h;
    float alpha, beta;
} cbmm_state;

static int bmm_enqueue(void *state, int iters, sb_err *err)
{
    cbmm_state *s = (cbmm_state *)state;
    const sb_bmm_shape *x = &s->s;
    cudaDataType_t t = s->bf16 ? CUDA_R_16BF : CUDA_R_32F;
    /* Row-major C = A B is column-major C^T = B^T A^T. */
    for (int it = 0; it < iters; it++) {
        cublasStatus_t st = sb_cuda_dl.cublasGemmStridedBatchedEx(
            s->h, CUBLAS_OP_N, CUBLAS_OP_N, (int)x->n, (int)x->m, (int)x->k,
            &s->alpha, s->db, t, (int)x->n, (long long)(x->k * x->n), s->da, t,
            (int)x->k, (long long)(x->m * x->k), &s->beta, s->dc, CUDA_R_32F,
            (int)x->n, (long long)(x->m * x->n), (int)x->batch,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS)
            return blas_fail(err, st, "cublasGemmStridedBatchedEx");
    }
    return 0;
}

extern "C" void sb_cbmm_teardown(void *state)
{
    cbmm_state *s = (cbmm_state *)state;
    if (!s)
        return;
    if (s->h)
        sb_cuda_dl.cublasDestroy(s->h);
    cudaFree(s->da);
    cudaFree(s->db);
    cudaFree(s->dc);
    cudaFree(s->ws);
    sb_free_aligned(s->a);
    sb_free_aligned(s->b);
    sb_free_aligned(s->c);
    sb_cuda_base_free(&s->base);
    free(s);
}

/* The element types an operand is uploaded in. */
enum { EL_F32 = 0, EL_BF16 = 1, EL_FP8 = 2 };

/* Uploads x[0..n) as fp32, or as bf16 or fp8 e4m3 after rounding x in
 * place to what that type holds (so the reference reads exactly what the
 * GPU decodes). */
static int upload(float *x, size_t n, int el, void **dst, sb_err *err)
{
    size_t eb = el == EL_BF16 ? 2 : el == EL_FP8 ? 1 : 4;
    void *h = x;
    if (el != EL_F32 && !(h = malloc(n ? n * eb : 1)))
        return sb_fail(err, SB_ENOMEM, "out of memory");
    for (size_t i = 0; el != EL_F32 && i < n; i++) {
        if (el == EL_BF16) {
            ((uint16_t *)h)[i] = sb_bf16_from_f32(x[i]);
            x[i] = sb_bf16_to_f32(((uint16_t *)h)[i]);
        } else {
            ((uint8_t *)h)[i] = sb_e4m3_from_f32(x[i]);
            x[i] = sb_e4m3_to_f32(((uint8_t *)h)[i]);
        }
    }
    cudaError_t e = cudaMalloc(dst, n ? n * eb : 16);
    if (!e && n)
        e = cudaMemcpy(*dst, h, n * eb, cudaMemcpyHostToDevice);
    if (h != x)
        free(h);
    return sb_cuda_fail(err, e, "uploading an operand");
}

extern "C" int sb_cbmm_setup(const sb_params *p, void **state, sb_err *err)
{
    cbmm_state *s = (cbmm_state *)calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int rc = sb_cuda_base_init(&s->base, (int)sb_p_int(p, "device"),
                               bmm_enqueue, true, err);
    if (rc || (rc = sb_cuda_dl_load(SB_CUDA_DL_CUBLAS, err)))
        goto fail;
    s->base.plant_error = sb_p_bool(p, "plant_error");
    s->bf16 = strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
    s->alpha = 1.0f;
    s->beta = 0.0f;
    {
        int64_t seq = sb_p_int(p, "seq"), d = sb_p_int(p, "head_dim");
        const char *shape = sb_p_str(p, "shape");
        s->s.batch = sb_p_int(p, "batch");
        s->s.m = sb_p_int(p, "m");
        s->s.n = sb_p_int(p, "n");
        s->s.k = sb_p_int(p, "k");
        if (strcmp(shape, "qk") == 0) {
            s->s.m = seq;
            s->s.n = seq;
            s->s.k = d;
        } else if (strcmp(shape, "pv") == 0) {
            s->s.m = seq;
            s->s.n = d;
            s->s.k = seq;
        }
    }
    {
        size_t na = (size_t)(s->s.batch * s->s.m * s->s.k);
        size_t nb = (size_t)(s->s.batch * s->s.k * s->s.n);
        size_t nc = (size_t)(s->s.batch * s->s.m * s->s.n);
        double need =
            (double)(na + nb) * (s->bf16 ? 2 : 4) + 4.0 * nc + WORKSPACE;
        if ((rc = mem_check("attention.bmm", need, s->base.devname, err)))
            goto fail;
        s->a = (float *)sb_alloc_aligned(na * 4);
        s->b = (float *)sb_alloc_aligned(nb * 4);
        s->c = (float *)sb_alloc_aligned(nc * 4);
        if (!s->a || !s->b || !s->c) {
            rc = sb_fail(err, SB_ENOMEM, "attention.bmm: out of host memory");
            goto fail;
        }
        sb_attn_fill(s->a, na, seed_q);
        sb_attn_fill(s->b, nb, seed_k);
        cudaError_t e;
        if ((rc = upload(s->a, na, s->bf16 ? EL_BF16 : EL_F32, &s->da, err)) ||
            (rc = upload(s->b, nb, s->bf16 ? EL_BF16 : EL_F32, &s->db, err)))
            goto fail;
        if ((e = cudaMalloc((void **)&s->dc, nc * 4)) ||
            (e = cudaMemset(s->dc, 0x3f, nc * 4)) ||
            (e = cudaMalloc(&s->ws, WORKSPACE))) {
            rc = sb_cuda_fail(err, e, "cudaMalloc");
            goto fail;
        }
    }
    {
        cublasStatus_t st;
        if ((st = sb_cuda_dl.cublasCreate(&s->h)) ||
            (st = sb_cuda_dl.cublasSetStream(s->h, s->base.stream)) ||
            (st = sb_cuda_dl.cublasSetWorkspace(s->h, s->ws, WORKSPACE)) ||
            (st = sb_cuda_dl.cublasSetMathMode(s->h, CUBLAS_DEFAULT_MATH))) {
            rc = blas_fail(err, st, "cuBLAS setup");
            goto fail;
        }
    }
    if ((rc = sb_cuda_uploads_done(err)))
        goto fail;
    *state = s;
    return 0;
fail:
    sb_cbmm_teardown(s);
    return rc;
}

extern "C" int sb_cbmm_verify(void *state, sb_result *r)
{
    cbmm_state *s = (cbmm_state *)state;
    sb_err err = {};
    size_t nc = (size_t)(s->s.batch * s->s.m * s->s.n);
    cudaError_t e;
    int rc = 0;
    if ((e = cudaMemsetAsync(s->dc, 0xff, nc * 4, s->base.stream))) {
        rc = sb_cuda_fail(&err, e, "poisoning C");
        goto out;
    }
    if ((rc = bmm_enqueue(s, 1, &err)) ||
        (rc = sb_cuda_sync(&s->base, &err, "the verified product")))
        goto out;
    if (s->base.plant_error) {
        /* The first element sb_bmm_verify samples (its generator). */
        uint64_t st = 0x5eedULL ^ 0x626d6dULL;
        size_t at = nc <= 512 ? 0 : (size_t)(sb_rng_next(&st) % (uint64_t)nc);
        float wrong = 1000.0f;
        if ((e = cudaMemcpy(s->dc + at, &wrong, 4, cudaMemcpyHostToDevice))) {
            rc = sb_cuda_fail(&err, e, "planting an error");
            goto out;
        }
    }
    if ((e = cudaMemcpy(s->c, s->dc, nc * 4, cudaMemcpyDeviceToHost))) {
        rc = sb_cuda_fail(&err, e, "reading C back");
        goto out;
    }
    {
        sb_attn_check c;
        sb_bmm_verify(&s->s, s->a, s->b, s->c, 512, 0x5eedULL, &c);
        sb_attn_check_report(r, &c, "|err| <= 1e-5 * sum|a*b|");
    }
out:
    if (rc)
        sb_result_note(r, "%s", err.msg);
    return rc;
}

extern "C" void sb_cbmm_report(void *state, const sb_params *p, sb_ctx *ctx,
                               sb_result *r)
{
    cbmm_state *s = (cbmm_state *)state;
    (void)p;
    (void)ctx;
    sb_cuda_note(&s->base, r);
    sb_result_note(r,
                   "cublasGemmStridedBatchedEx, %s inputs, fp32 compute "
                   "(CUBLAS_COMPUTE_32F: no tf32) and output",
                   s->bf16 ? "bf16" : "fp32");
}

/* ==== attention.paged_decode
 * ================================================== */

#ifndef PD_WARPS
#define PD_WARPS 4
#endif
#ifndef PD_SPLIT
#define PD_SPLIT 256
#endif
#define PD_ROW_PAD 4 /* floats after a row's d values: m, l, padding */

/* Four elements of a K or V row, one lane's load (16, 8 or 4 bytes): kept
 * raw in registers while the loads are in flight, decoded to fp32 when the
 * key is used, so that a narrower KV dtype holds more keys in flight in
 * the same registers. A zero raw value decodes to 0.0 for every dtype. */
template <typename KT> struct kv4;
template <> struct kv4<float> {
    typedef float4 raw;
    static __device__ __forceinline__ float4 dec(float4 r)
    {
        return r;
    }
};
template <> struct kv4<__nv_bfloat16> {
    typedef uint2 raw;
    static __device__ __forceinline__ float4 dec(uint2 r)
    {
        /* a bf16 is the upper half of its fp32 */
        return make_float4(
            __uint_as_float(r.x << 16), __uint_as_float(r.x & 0xffff0000u),
            __uint_as_float(r.y << 16), __uint_as_float(r.y & 0xffff0000u));
    }
};
template <> struct kv4<__nv_fp8_e4m3> {
    typedef uint32_t raw;
    static __device__ __forceinline__ float4 dec(uint32_t r)
    {
        __nv_fp8x4_e4m3 x;
        x.__x = r;
        return (float4)x;
    }
};

typedef struct cpaged_state {
    sb_cuda_base base;
    sb_paged_shape s;
    float *q, *kp, *vp, *o; /* host copies (reference; K and V hold the
                               values the KV dtype rounds them to) */
    int32_t *table;
    int kv;          /* the KV cache's element type: EL_F32, _BF16, _FP8 */
    void *dkp, *dvp; /* the device pools, in the KV dtype */
    float *dq, *dout, *pacc, *pml;
    int32_t *dtable, *dkeys, *dbase;
    int split, max_splits, nv, gm, nsub;
    int regs, blocks_per_sm; /* the partial kernel's, 0 when not known */
    size_t npool, nq;
} cpaged_state;

/* Block: one (token t, KV head g, sub-group of <= GM query heads, split of
 * keys). Each warp takes every PD_WARPS-th key of the split, UN keys per
 * step so that several K and V rows are in flight: 2 fp32 rows (4 for
 * groups of 8 heads, where the longer work per key leaves fewer loads in
 * flight), and as many more bf16 or fp8 rows as fit the same bytes, so a
 * narrower KV cache keeps as many bytes in flight, not fewer. The page
 * numbers of a step's keys are loaded a step ahead: a key's row address
 * waits on its page-table entry, and that wait would otherwise come
 * before every step's loads. Lane l holds elements [4l, 4l + 4) of each
 * 128-wide chunk of the head dimension. GM is the
 * query heads of one KV head rounded up to a power of two (at most 8), so
 * no lane computes for a head that does not exist. Scores are kept in
 * base 2 (scale includes log2(e)): exp2f is one special-function
 * instruction where expf is several. (Measured on an H200, bf16 KV: one
 * step's rows loaded while the previous step computes, in a second set of
 * registers, cut the blocks an SM holds and gained less than this.) */
template <int NV, int GM, typename KT>
__global__ void __launch_bounds__(PD_WARPS * 32)
    k_paged_partial(const float *__restrict__ q, const KT *__restrict__ kp,
                    const KT *__restrict__ vp,
                    const int32_t *__restrict__ table,
                    const int32_t *__restrict__ tok_keys,
                    const int32_t *__restrict__ tok_base, int hq, int hkv,
                    int d, int P, int G, int nsub, float scale, int split,
                    int max_splits, float *__restrict__ pacc,
                    float *__restrict__ pml)
{
    /* [PD_WARPS][GM][d + 4]: d values, then m and l; rows of d + 4 floats
     * keep every row 16-byte aligned for the float4 stores (d % 4 == 0). */
    extern __shared__ float4 sm4[];
    float *sm = (float *)sm4;
    const int t = blockIdx.x, g = blockIdx.y / nsub, sub = blockIdx.y % nsub;
    const int sp = blockIdx.z;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int nkeys = tok_keys[t];
    const int k0 = sp * split;
    if (k0 >= nkeys)
        return;
    const int k1 = min(k0 + split, nkeys);
    const int h0 = g * G + sub * GM;
    const int nh = min(GM, G - sub * GM);
    const int base = tok_base[t];

    float4 qv[GM][NV], acc[GM][NV];
    /* The running maximum and sum of head lane >> SH live on that lane. */
    constexpr int SH = GM == 1 ? 5 : GM == 2 ? 4 : GM == 4 ? 3 : 2;
    constexpr int UN = (GM >= 8 ? 4 : 2) * (int)(4 / sizeof(KT));
    typedef typename kv4<KT>::raw RT;
    float m_own = -INFINITY, l_own = 0.f;
#pragma unroll
    for (int h = 0; h < GM; h++) {
#pragma unroll
        for (int c = 0; c < NV; c++) {
            int e = c * 128 + lane * 4;
            acc[h][c] = make_float4(0.f, 0.f, 0.f, 0.f);
            qv[h][c] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (h < nh && e < d)
                qv[h][c] =
                    *(const float4 *)(q + ((size_t)t * hq + h0 + h) * d + e);
        }
    }
    int page[UN]; /* the page of each key of the step, loaded a step ahead */
#pragma unroll
    for (int u = 0; u < UN; u++) {
        int jj = k0 + warp + u * PD_WARPS;
        page[u] = jj < k1 ? table[base + jj / P] : 0;
    }
    for (int j = k0 + warp; j < k1; j += UN * PD_WARPS) {
        RT kr[UN][NV], vr[UN][NV];
        bool ok[UN];
#pragma unroll
        for (int u = 0; u < UN; u++)
            ok[u] = j + u * PD_WARPS < k1;
#pragma unroll
        for (int u = 0; u < UN; u++) {
            int jj = j + u * PD_WARPS;
            size_t row =
                (((size_t)page[u] * hkv + g) * P + (size_t)(jj % P)) * d;
#pragma unroll
            for (int c = 0; c < NV; c++) {
                int e = c * 128 + lane * 4;
                kr[u][c] = vr[u][c] = RT{};
                if (ok[u] && e < d) {
                    kr[u][c] = *(const RT *)(kp + row + e);
                    vr[u][c] = *(const RT *)(vp + row + e);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < UN; u++) {
            int jn = j + (UN + u) * PD_WARPS;
            page[u] = jn < k1 ? table[base + jn / P] : 0;
        }
#pragma unroll
        for (int u = 0; u < UN; u++) {
            if (!ok[u])
                break;
            /* Partial dots of the lane's elements, one per head. */
            float v[GM];
#pragma unroll
            for (int h = 0; h < GM; h++) {
                v[h] = 0.f;
#pragma unroll
                for (int c = 0; c < NV; c++) {
                    const float4 k = kv4<KT>::dec(kr[u][c]);
                    v[h] += qv[h][c].x * k.x + qv[h][c].y * k.y +
                            qv[h][c].z * k.z + qv[h][c].w * k.w;
                }
            }
            /* Reduce-scatter butterfly: each step halves the values a lane
             * keeps, so GM dots cost GM - 1 + 5 - log2(GM) shuffles, not
             * 5 * GM; lane l ends with the whole dot of head l >> SH. */
#pragma unroll
            for (int w = GM, off = 16; w > 1; w >>= 1, off >>= 1) {
                const bool hi = lane & off;
#pragma unroll
                for (int i = 0; i < w / 2; i++) {
                    float send = hi ? v[i] : v[i + w / 2];
                    float keep = hi ? v[i + w / 2] : v[i];
                    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, off);
                }
            }
#pragma unroll
            for (int off = 16 / GM; off > 0; off >>= 1)
                v[0] += __shfl_xor_sync(0xffffffffu, v[0], off);
            /* The online softmax of the lane's own head ... */
            float sc = v[0] * scale;
            float mn = fmaxf(m_own, sc);
            float corr = exp2f(m_own - mn), pr = exp2f(sc - mn);
            l_own = l_own * corr + pr;
            m_own = mn;
            /* ... broadcast to every lane for the V update. corr is exactly
             * 1 unless the head's maximum rose (rare after the first keys),
             * and the branch is the same for the whole warp. */
#pragma unroll
            for (int h = 0; h < GM; h++) {
                const float ch = __shfl_sync(0xffffffffu, corr, h << SH);
                const float ph = __shfl_sync(0xffffffffu, pr, h << SH);
                if (ch != 1.f) {
#pragma unroll
                    for (int c = 0; c < NV; c++) {
                        acc[h][c].x *= ch;
                        acc[h][c].y *= ch;
                        acc[h][c].z *= ch;
                        acc[h][c].w *= ch;
                    }
                }
#pragma unroll
                for (int c = 0; c < NV; c++) {
                    const float4 v4 = kv4<KT>::dec(vr[u][c]);
                    acc[h][c].x += ph * v4.x;
                    acc[h][c].y += ph * v4.y;
                    acc[h][c].z += ph * v4.z;
                    acc[h][c].w += ph * v4.w;
                }
            }
        }
    }
    /* Merge the warps through shared memory. */
    const int rs = d + PD_ROW_PAD;
#pragma unroll
    for (int h = 0; h < GM; h++) {
        float *row = sm + ((size_t)warp * GM + h) * rs;
#pragma unroll
        for (int c = 0; c < NV; c++) {
            int e = c * 128 + lane * 4;
            if (e < d)
                *(float4 *)(row + e) = acc[h][c];
        }
        if (lane == h << SH) {
            row[d] = m_own;
            row[d + 1] = l_own;
        }
    }
    __syncthreads();
    for (int h = 0; h < nh; h++) {
        float M = -INFINITY;
        for (int w = 0; w < PD_WARPS; w++)
            M = fmaxf(M, sm[((size_t)w * GM + h) * rs + d]);
        float L = 0.f;
        for (int w = 0; w < PD_WARPS; w++) {
            const float *row = sm + ((size_t)w * GM + h) * rs;
            if (row[d] > -INFINITY)
                L += row[d + 1] * exp2f(row[d] - M);
        }
        size_t slot = ((size_t)t * hq + h0 + h) * max_splits + sp;
        for (int e = threadIdx.x; e < d; e += blockDim.x) {
            float a = 0.f;
            for (int w = 0; w < PD_WARPS; w++) {
                const float *row = sm + ((size_t)w * GM + h) * rs;
                if (row[d] > -INFINITY)
                    a += row[e] * exp2f(row[d] - M);
            }
            pacc[slot * d + e] = a;
        }
        if (threadIdx.x == 0) {
            pml[slot * 2] = M;
            pml[slot * 2 + 1] = L;
        }
    }
}

/* One block per (token, query head): merges the splits into O. A token
 * that sees no key gets O = 0 (attention.h's definition). */
__global__ void k_paged_combine(const float *__restrict__ pacc,
                                const float *__restrict__ pml,
                                const int32_t *__restrict__ tok_keys, int hq,
                                int d, int split, int max_splits,
                                float *__restrict__ out)
{
    const int t = blockIdx.x / hq, h = blockIdx.x % hq;
    const int nk = tok_keys[t];
    const int ns = (nk + split - 1) / split;
    float *o = out + ((size_t)t * hq + h) * d;
    if (ns == 0) {
        for (int e = threadIdx.x; e < d; e += blockDim.x)
            o[e] = 0.f;
        return;
    }
    const size_t slot0 = ((size_t)t * hq + h) * max_splits;
    float M = -INFINITY, L = 0.f;
    for (int s = 0; s < ns; s++)
        M = fmaxf(M, pml[(slot0 + s) * 2]);
    for (int s = 0; s < ns; s++)
        L += pml[(slot0 + s) * 2 + 1] * exp2f(pml[(slot0 + s) * 2] - M);
    for (int e = threadIdx.x; e < d; e += blockDim.x) {
        float a = 0.f;
        for (int s = 0; s < ns; s++)
            a += pacc[(slot0 + s) * d + e] * exp2f(pml[(slot0 + s) * 2] - M);
        o[e] = a / L;
    }
}

static int paged_enqueue(void *state, int iters, sb_err *err)
{
    cpaged_state *s = (cpaged_state *)state;
    const sb_paged_shape *x = &s->s;
    int hq = (int)x->hq, hkv = (int)x->hkv, d = (int)x->d,
        P = (int)x->page_size;
    int G = hq / hkv;
    /* 1/sqrt(d) in base 2: the kernels use exp2. */
    float scale = (float)(1.4426950408889634 / sqrt((double)d));
    dim3 grid((unsigned)x->total_q, (unsigned)(hkv * s->nsub),
              (unsigned)s->max_splits);
    size_t smem = (size_t)PD_WARPS * s->gm * (d + PD_ROW_PAD) * sizeof(float);
    for (int it = 0; it < iters; it++) {
        if (x->total_q == 0)
            break;
#define PD_LAUNCH_T(nv_, gm_, kt_)                                             \
    k_paged_partial<nv_, gm_, kt_>                                             \
        <<<grid, PD_WARPS * 32, smem, s->base.stream>>>(                       \
            s->dq, (const kt_ *)s->dkp, (const kt_ *)s->dvp, s->dtable,        \
            s->dkeys, s->dbase, hq, hkv, d, P, G, s->nsub, scale, s->split,    \
            s->max_splits, s->pacc, s->pml)
#define PD_LAUNCH(nv_, gm_)                                                    \
    do {                                                                       \
        if (s->kv == EL_BF16)                                                  \
            PD_LAUNCH_T(nv_, gm_, __nv_bfloat16);                              \
        else if (s->kv == EL_FP8)                                              \
            PD_LAUNCH_T(nv_, gm_, __nv_fp8_e4m3);                              \
        else                                                                   \
            PD_LAUNCH_T(nv_, gm_, float);                                      \
    } while (0)
        switch (s->nv * 16 + s->gm) {
        case 16 + 1:
            PD_LAUNCH(1, 1);
            break;
        case 16 + 2:
            PD_LAUNCH(1, 2);
            break;
        case 16 + 4:
            PD_LAUNCH(1, 4);
            break;
        case 16 + 8:
            PD_LAUNCH(1, 8);
            break;
        case 32 + 1:
            PD_LAUNCH(2, 1);
            break;
        case 32 + 2:
            PD_LAUNCH(2, 2);
            break;
        default:
            PD_LAUNCH(2, 4);
            break;
        }
#undef PD_LAUNCH
#undef PD_LAUNCH_T
        k_paged_combine<<<(unsigned)(x->total_q * hq), 128, 0,
                          s->base.stream>>>(s->pacc, s->pml, s->dkeys, hq, d,
                                            s->split, s->max_splits, s->dout);
        cudaError_t e = cudaGetLastError();
        if (e)
            return sb_cuda_fail(err, e, "paged attention launch");
    }
    return 0;
}

extern "C" void sb_cpaged_teardown(void *state)
{
    cpaged_state *s = (cpaged_state *)state;
    if (!s)
        return;
    cudaFree(s->dq);
    cudaFree(s->dkp);
    cudaFree(s->dvp);
    cudaFree(s->dout);
    cudaFree(s->pacc);
    cudaFree(s->pml);
    cudaFree(s->dtable);
    cudaFree(s->dkeys);
    cudaFree(s->dbase);
    sb_free_aligned(s->q);
    sb_free_aligned(s->kp);
    sb_free_aligned(s->vp);
    sb_free_aligned(s->o);
    sb_free_aligned(s->table);
    sb_paged_shape_free(&s->s);
    sb_cuda_base_free(&s->base);
    free(s);
}

static int up(void **dst, const void *src, size_t bytes, sb_err *err)
{
    cudaError_t e = cudaMalloc(dst, bytes ? bytes : 16);
    if (!e && bytes)
        e = cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice);
    return sb_cuda_fail(err, e, "uploading the paged attention inputs");
}

/* Lets a kernel of every KV dtype take `smem` bytes of shared memory. */
template <int NV, int GM> static cudaError_t pd_smem(int smem)
{
    cudaError_t e =
        cudaFuncSetAttribute(k_paged_partial<NV, GM, float>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (!e)
        e = cudaFuncSetAttribute(k_paged_partial<NV, GM, __nv_bfloat16>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 smem);
    if (!e)
        e = cudaFuncSetAttribute(k_paged_partial<NV, GM, __nv_fp8_e4m3>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 smem);
    return e;
}

/* The partial kernel a configuration launches (its address, for the
 * occupancy queries). */
template <int NV, int GM> static const void *pd_kernel_kt(int kv)
{
    return kv == EL_BF16  ? (const void *)k_paged_partial<NV, GM, __nv_bfloat16>
           : kv == EL_FP8 ? (const void *)k_paged_partial<NV, GM, __nv_fp8_e4m3>
                          : (const void *)k_paged_partial<NV, GM, float>;
}
static const void *pd_kernel(int nv, int gm, int kv)
{
    switch (nv * 16 + gm) {
    case 16 + 1:
        return pd_kernel_kt<1, 1>(kv);
    case 16 + 2:
        return pd_kernel_kt<1, 2>(kv);
    case 16 + 4:
        return pd_kernel_kt<1, 4>(kv);
    case 16 + 8:
        return pd_kernel_kt<1, 8>(kv);
    case 32 + 1:
        return pd_kernel_kt<2, 1>(kv);
    case 32 + 2:
        return pd_kernel_kt<2, 2>(kv);
    default:
        return pd_kernel_kt<2, 4>(kv);
    }
}

extern "C" int sb_cpaged_setup(const sb_params *p, void **state, sb_err *err)
{
    cpaged_state *s = (cpaged_state *)calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    uint64_t seed = (uint64_t)sb_p_int(p, "seed");
    int32_t *keys = NULL, *base = NULL;
    int rc = sb_cuda_base_init(&s->base, (int)sb_p_int(p, "device"),
                               paged_enqueue, true, err);
    if (rc)
        goto fail;
    s->base.plant_error = sb_p_bool(p, "plant_error");
    {
        const char *kv = sb_p_str(p, "kv_dtype");
        s->kv = strcmp(kv, "bf16") == 0  ? EL_BF16
                : strcmp(kv, "fp8") == 0 ? EL_FP8
                                         : EL_F32;
        if (s->kv == EL_FP8 && s->base.cc < 89) {
            rc = sb_fail(err, SB_EUNSUP,
                         "attention.paged_decode kv_dtype=fp8 needs compute "
                         "capability >= 8.9; %s has %d.%d",
                         s->base.devname, s->base.cc / 10, s->base.cc % 10);
            goto fail;
        }
    }
    if ((rc = sb_paged_shape_of(p, &s->s, err)))
        goto fail;
    {
        const sb_paged_shape *x = &s->s;
        if (x->d % 4 || x->d > 256) {
            rc = sb_fail(err, SB_EUNSUP,
                         "attention.paged_decode on cuda: "
                         "head_dim=%lld must be a multiple of 4 and <= 256",
                         (long long)x->d);
            goto fail;
        }
        s->nv = x->d > 128 ? 2 : 1;
        int G = (int)(x->hq / x->hkv);
        /* heads_per_block caps the group: fewer registers a thread and
         * more blocks an SM, each K and V row read once per group */
        s->gm =
            sb_cpaged_heads_per_block(G, x->d, sb_p_int(p, "heads_per_block"));
        s->nsub = (G + s->gm - 1) / s->gm;
        /* Splits of 256 keys, fewer and longer past 8192 keys. */
        s->split = PD_SPLIT;
        if (x->max_len > 32 * PD_SPLIT)
            s->split = (int)((x->max_len + 31) / 32);
        s->max_splits =
            x->max_len > 0 ? (int)((x->max_len + s->split - 1) / s->split) : 1;
        s->npool = (size_t)(x->total_pages * x->hkv * x->page_size * x->d);
        s->nq = (size_t)(x->total_q * x->hq * x->d);
        size_t nslot = (size_t)x->total_q * x->hq * s->max_splits;
        double need = (double)x->kv_bytes * 2.0 * s->npool +
                      4.0 * (2.0 * s->nq + nslot * (x->d + 2.0)) +
                      4.0 * (x->total_pages + 2.0 * x->total_q);
        if ((rc = mem_check("attention.paged_decode", need, s->base.devname,
                            err)))
            goto fail;
        size_t pool = s->npool ? s->npool : 1;
        s->kp = (float *)sb_alloc_aligned(pool * 4);
        s->vp = (float *)sb_alloc_aligned(pool * 4);
        s->q = (float *)sb_alloc_aligned((s->nq ? s->nq : 1) * 4);
        s->o = (float *)sb_alloc_aligned((s->nq ? s->nq : 1) * 4);
        s->table =
            (int32_t *)sb_alloc_aligned((size_t)(x->total_pages + 1) * 4);
        keys = (int32_t *)malloc((size_t)(x->total_q + 1) * 4);
        base = (int32_t *)malloc((size_t)(x->total_q + 1) * 4);
        if (!s->kp || !s->vp || !s->q || !s->o || !s->table || !keys || !base) {
            rc = sb_fail(err, SB_ENOMEM,
                         "attention.paged_decode: out of host memory");
            goto fail;
        }
        sb_paged_shuffle_table(s->table, x->total_pages, seed);
        sb_attn_fill(s->kp, pool, seed_k ^ seed);
        sb_attn_fill(s->vp, pool, seed_v ^ seed);
        sb_attn_fill(s->q, s->nq ? s->nq : 1, seed_q ^ seed);
        for (int64_t sq = 0, t = 0; sq < x->batch; sq++)
            for (int64_t u = 0; u < sb_paged_qlen(x, sq); u++, t++) {
                keys[t] = (int32_t)sb_paged_keys(x, sq, u);
                base[t] = (int32_t)x->cu_pages[sq];
            }
        cudaError_t e;
        if ((rc = up((void **)&s->dq, s->q, s->nq * 4, err)) ||
            (rc = upload(s->kp, s->npool, s->kv, &s->dkp, err)) ||
            (rc = upload(s->vp, s->npool, s->kv, &s->dvp, err)) ||
            (rc = up((void **)&s->dtable, s->table, (size_t)x->total_pages * 4,
                     err)) ||
            (rc = up((void **)&s->dkeys, keys, (size_t)x->total_q * 4, err)) ||
            (rc = up((void **)&s->dbase, base, (size_t)x->total_q * 4, err)))
            goto fail;
        if ((e = cudaMalloc((void **)&s->dout, (s->nq ? s->nq : 1) * 4)) ||
            (e = cudaMalloc((void **)&s->pacc,
                            (nslot ? nslot : 1) * x->d * 4)) ||
            (e = cudaMalloc((void **)&s->pml, (nslot ? nslot : 1) * 2 * 4))) {
            rc = sb_cuda_fail(err, e, "cudaMalloc");
            goto fail;
        }
        size_t smem =
            (size_t)PD_WARPS * s->gm * (x->d + PD_ROW_PAD) * sizeof(float);
        if (smem > 48 * 1024) {
            e = s->nv == 1 ? pd_smem<1, 8>((int)smem)
                           : pd_smem<2, 4>((int)smem);
            if (e) {
                rc = sb_cuda_fail(err, e, "cudaFuncSetAttribute");
                goto fail;
            }
        }
    }
    {
        /* the register budget the compiler gave the kernel, and the
         * blocks of it an SM holds, for the note */
        const void *fn = pd_kernel(s->nv, s->gm, s->kv);
        cudaFuncAttributes fa;
        int smem = (int)((size_t)PD_WARPS * s->gm * (s->s.d + PD_ROW_PAD) *
                         sizeof(float));
        if (cudaFuncGetAttributes(&fa, fn) == cudaSuccess)
            s->regs = fa.numRegs;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &s->blocks_per_sm, fn, PD_WARPS * 32, (size_t)smem) !=
            cudaSuccess)
            s->blocks_per_sm = 0;
        cudaGetLastError(); /* a failed query is not the run's error */
    }
    if ((rc = sb_cuda_uploads_done(err)))
        goto fail;
    free(keys);
    free(base);
    *state = s;
    return 0;
fail:
    free(keys);
    free(base);
    sb_cpaged_teardown(s);
    return rc;
}

extern "C" int sb_cpaged_verify(void *state, sb_result *r)
{
    cpaged_state *s = (cpaged_state *)state;
    sb_err err = {};
    cudaError_t e;
    int rc = 0;
    size_t bytes = s->nq * 4;
    if (bytes && (e = cudaMemsetAsync(s->dout, 0xff, bytes, s->base.stream))) {
        rc = sb_cuda_fail(&err, e, "poisoning O");
        goto out;
    }
    if ((rc = paged_enqueue(s, 1, &err)) ||
        (rc = sb_cuda_sync(&s->base, &err, "the verified run")))
        goto out;
    if (s->base.plant_error && bytes) {
        /* Row 0 is always among the rows sb_paged_verify checks. */
        float wrong = 1000.0f;
        if ((e = cudaMemcpy(s->dout, &wrong, 4, cudaMemcpyHostToDevice))) {
            rc = sb_cuda_fail(&err, e, "planting an error");
            goto out;
        }
    }
    if (bytes &&
        (e = cudaMemcpy(s->o, s->dout, bytes, cudaMemcpyDeviceToHost))) {
        rc = sb_cuda_fail(&err, e, "reading O back");
        goto out;
    }
    {
        sb_attn_check c;
        sb_paged_verify(&s->s, s->q, s->kp, s->vp, s->table, s->o, 64,
                        0x5eedULL, &c);
        sb_attn_check_report(r, &c, "|err| <= 1e-4 + 1e-3*|ref|");
    }
out:
    if (rc)
        sb_result_note(r, "%s", err.msg);
    return rc;
}

extern "C" void sb_cpaged_report(void *state, const sb_params *p, sb_ctx *ctx,
                                 sb_result *r)
{
    cpaged_state *s = (cpaged_state *)state;
    (void)p;
    sb_cuda_note(&s->base, r);
    double bytes = sb_paged_bytes(&s->s);
    sb_result_metric(r, "sequences", (double)s->s.batch, "");
    sb_result_metric(r, "query_tokens", (double)s->s.total_q, "");
    sb_result_metric(r, "kv_cache", 2.0 * s->s.kv_bytes * (double)s->npool,
                     "B");
    sb_result_note(r,
                   "split-KV kernel: splits of %d keys (at most %d per "
                   "token), %d query heads per block; KV cache in %s, "
                   "decoded to fp32 as loaded (the reference reads the same "
                   "rounded values)",
                   s->split, s->max_splits, s->gm,
                   s->kv == EL_BF16  ? "bf16"
                   : s->kv == EL_FP8 ? "fp8 e4m3"
                                     : "fp32");
    if (s->regs > 0 && s->blocks_per_sm > 0) {
        sb_result_metric(r, "registers", s->regs, "");
        sb_result_metric(r, "blocks_per_sm", s->blocks_per_sm, "");
        sb_result_note(r,
                       "partial kernel: %d registers a thread, %d blocks of "
                       "%d warps an SM (%d of the SM's warps)",
                       s->regs, s->blocks_per_sm, PD_WARPS,
                       s->blocks_per_sm * PD_WARPS);
    }
    if (r->stats.p50 <= 0)
        return;
    sb_result_metric(r, "tokens_per_s", (double)s->s.total_q / r->stats.p50,
                     "tok/s");
    double bw = sb_ceil_get(&ctx->ceil, "bw.HBM");
    if (bw > 0) {
        /* best against best: the ceiling is the best sample of
         * memory.copy/read, so the kernel's best sample meets it */
        sb_result_metric(r, "pct_hbm", 100.0 * bytes / r->stats.min / bw, "%");
        sb_result_note(r,
                       "memory ceiling: bw.HBM = %.1f GB/s (the best sample "
                       "of memory.copy/read on this device earlier in the "
                       "run; pct_hbm takes this kernel's best sample too)",
                       bw * 1e-9);
    } else {
        sb_result_note(r, "no pct_hbm: no bw.HBM ceiling in this run (run "
                          "memory.read or memory.copy with --backend cuda at a "
                          "size >= 4x the L2 first)");
    }
}
