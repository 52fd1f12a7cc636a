/*
 * cuda_benches.c — the CUDA backend's impls of the benchmarks (backend
 * "cuda"; the definitions are the benchmarks' own, in src/bench):
 * memory.copy/read/write/triad/latency, transfer.latency, compute.gemm,
 * attention.bmm, attention.paged_decode and, where NCCL was found,
 * network.allreduce/ allgather/reduce_scatter/alltoall/bcast. This backend's
 * parameters, checks, work counts and the MFU arithmetic live here; kernels and
 * library calls in the .cu files (cuda_kernels.h).
 *
 * Every benchmark's setup returns SB_EUNSUP with "no CUDA device (<the
 * driver's reason>)" when there is no device, which the runner reports as
 * a skipped result; nothing is asked of a device before that check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_common.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_table.h"
#include "solbench/chase.h"
#include "solbench/gemm.h"
#include "solbench/attention.h"
#include "solbench/hw.h"
#include "solbench/netmodel.h"

/* ==== memory.*
 * ================================================================ */

#define CMEM_PARAMS_COMMON                                                     \
    {"size",                                                                   \
     SB_P_SIZE,                                                                \
     "64MiB",                                                                  \
     16,                                                                       \
     1099511627776.0,                                                          \
     NULL,                                                                     \
     "total bytes of all arrays of the kernel (device memory)"},               \
        {"dtype",                                                              \
         SB_P_STR,                                                             \
         "fp32",                                                               \
         0,                                                                    \
         0,                                                                    \
         "fp32|fp64",                                                          \
         "element type (16-byte vectors: float4 or double2)"},                 \
        SB__CUDA_P_DEVICE, SB__CUDA_P_PLANT

static const sb_param_def cmem_params[] = {CMEM_PARAMS_COMMON,
                                           {NULL, 0, NULL, 0, 0, NULL, NULL}};
static const sb_param_def cmem_copy_params[] = {
    CMEM_PARAMS_COMMON,
    {"method", SB_P_STR, "kernel", 0, 0, "kernel|memcpy",
     "kernel: grid-stride float4/double2 copy; memcpy: cudaMemcpyAsync "
     "device to device"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static size_t cmem_elem(const sb_params *p)
{
    return strcmp(sb_p_str(p, "dtype"), "fp64") == 0 ? 8 : 4;
}

static int cmem_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const sb_params *p = pt->params;
    if (sb_cmem_elems(pt->impl->kind, sb_p_num(p, "size"), cmem_elem(p)) == 0)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter size=%s B holds no "
                       "16-byte vector per array (at least %d B)",
                       pt->bench->name, sb_p_str(p, "size"),
                       16 * sb_cmem_arrays(pt->impl->kind));
    return 0;
}

static double cmem_bytes(const sb_point *pt)
{
    return sb_cmem_bytes(pt->impl->kind, sb_p_num(pt->params, "size"),
                         cmem_elem(pt->params));
}

static int cmem_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    (void)ctx;
    return sb_cmem_setup(pt->impl->kind, pt->params, state, err);
}

static void cmem_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    sb_cmem_report(state, pt->params, ctx, r);
}

/* One impl a kernel: its number (kind), parameters and suites. */
#define CMEM_BENCH(K, NAME, PARAMS, QUICK, DESC)                               \
    const sb_impl sb_impl_cuda_memory_##NAME = {                               \
        .backend = "cuda",                                                     \
        .desc = DESC,                                                          \
        .params = PARAMS,                                                      \
        .quick = QUICK,                                                        \
        .full = "size=4MiB..8GiB:x2",                                          \
        .kind = K,                                                             \
        .check = cmem_check,                                                   \
        .bytes = cmem_bytes,                                                   \
        .setup = cmem_setup,                                                   \
        .timer = &sb_cuda_timer,                                               \
        .verify = sb_cmem_verify,                                              \
        .report = cmem_report,                                                 \
        .teardown = sb_cmem_teardown,                                          \
    };

CMEM_BENCH(SB__CMEM_COPY, copy, cmem_copy_params,
           "size=64MiB,1GiB method=kernel,memcpy",
           "device copy c = a: float4 kernel or cudaMemcpy D2D (2 words)")
CMEM_BENCH(SB__CMEM_READ, read, cmem_params, "size=64MiB,1GiB",
           "device read: per-block sums of a (1 word)")
CMEM_BENCH(SB__CMEM_WRITE, write, cmem_params, "size=64MiB,1GiB",
           "device write: a = f(i) (1 word)")
CMEM_BENCH(SB__CMEM_TRIAD, triad, cmem_params, "size=64MiB,1GiB",
           "device STREAM triad a = b + s*c (3 words)")

/* ==== compute.gemm
 * ============================================================= */

static const sb_param_def cgemm_params[] = {
    {"dtype", SB_P_STR, "bf16", 0, 0, "fp32|tf32|fp16|bf16|fp8|fp8_f32",
     "cuBLASLt: fp32, tf32 (fp32 in/out, tf32 tensor cores), fp16 and bf16 "
     "(same type out), fp8 (e4m3 in, bf16 out), fp8_f32 (e4m3 in, fp32 "
     "out); fp32 accumulation"},
    {"shape", SB_P_STR, "square", 0, 0, "square|llm",
     "square: M = N = K = n; llm: M = tokens, K = d_model, N = 4 d_model"},
    {"n", SB_P_INT, "4096", 1, 1048576, NULL, "square: the matrix order"},
    {"m", SB_P_INT, "0", 0, 16777216, NULL,
     "square: rows of A and C when not n (0 = n)"},
    {"k", SB_P_INT, "0", 0, 1048576, NULL,
     "square: inner dimension when not n (0 = n)"},
    {"tokens", SB_P_INT, "4096", 1, 16777216, NULL, "llm: tokens (M)"},
    {"d_model", SB_P_INT, "4096", 1, 262144, NULL,
     "llm: model width (K), N = 4 d_model"},
    SB__CUDA_P_DEVICE,
    SB__CUDA_P_PLANT,
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static int cgemm_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const sb_params *p = pt->params;
    const sb_gemm_shape *s = pt->shape;
    const int64_t m = s->m, n = s->n, k = s->k;
    const sb_cu_dtype *dt = sb_cu_dtype_find(sb_p_str(p, "dtype"));
    if (!dt)
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: parameter dtype=%s: "
                       "unknown on cuda",
                       sb_p_str(p, "dtype"));
    if (dt->scale_ptrs && (m % 16 || n % 16 || k % 16))
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm dtype=%s: M=%lld N=%lld "
                       "K=%lld must be multiples of 16 (cuBLASLt fp8)",
                       dt->name, (long long)m, (long long)n, (long long)k);
    return 0;
}

/* fp8 in, bf16 out...: the bytes of the cuBLASLt types. */
static double cgemm_bytes(const sb_point *pt)
{
    const sb_gemm_shape *s = pt->shape;
    const sb_cu_dtype *dt = sb_cu_dtype_find(sb_p_str(pt->params, "dtype"));
    if (!dt)
        return 0;
    return ((double)s->m * s->k + (double)s->k * s->n) * dt->in_bytes +
           (double)s->m * s->n * dt->out_bytes;
}

static int cgemm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    (void)ctx;
    const sb_gemm_shape *s = pt->shape;
    return sb_cgemm_setup(sb_p_str(pt->params, "dtype"), s->m, s->n, s->k,
                          pt->params, state, err);
}

/* The dense datasheet peak of the device for a peak key: data/hw/<spec>
 * when it has one, else the built-in table. */
static double datasheet_peak(const char *devname, const char *key, char *src,
                             size_t len)
{
    const char *spec = "";
    double table = sb_cu_datasheet_peak(devname, key, &spec);
    if (spec[0]) {
        sb_hw_spec hw;
        sb_err e = {0};
        if (sb_hw_load(spec, &hw, &e) == 0) {
            double v = sb_hw_peak(&hw, key);
            if (v > 0) {
                snprintf(src, len, "data/hw/%s.json", spec);
                return v;
            }
        }
    }
    if (table > 0)
        snprintf(src, len, "the built-in datasheet table (%s)", spec);
    return table;
}

static void cgemm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    const sb_params *p = pt->params;
    const sb_cuda_base *b = state;
    const sb_cu_dtype *dt = sb_cu_dtype_find(sb_p_str(p, "dtype"));
    sb_cgemm_report(state, p, ctx, r);
    double flops = sb_point_flops(pt);
    if (!dt || r->stats.p50 <= 0 || flops <= 0)
        return;
    /* bytes, AI, GFLOPs and TFLOPs come from the runner; a GEMM's AI puts
     * TFLOP/s first in its headline. */
    double achieved = flops / r->stats.p50, best = flops / r->stats.min;
    char src[96] = "";
    double peak = datasheet_peak(b->devname, dt->peak, src, sizeof src);
    if (peak > 0) {
        sb_result_metric(r, "MFU", achieved / peak, "ratio");
        sb_result_note(r,
                       "MFU against the dense %s datasheet peak of %s, "
                       "%.1f TFLOP/s, from %s",
                       dt->peak, b->devname, peak * 1e-12, src);
    } else {
        sb_result_note(r,
                       "no datasheet MFU: %s has no %s peak in data/hw or "
                       "the built-in table",
                       b->devname, dt->peak);
    }
    if (!r->valid)
        return;
    char key[40];
    snprintf(key, sizeof key, "peak.%s", dt->peak);
    double prev = sb_ceil_get(&ctx->ceil, key);
    if (best > prev)
        sb_ceil_set(&ctx->ceil, key, best, "measured");
    double top = best > prev ? best : prev;
    sb_result_metric(r, "MFU_measured", achieved / top, "ratio");
    sb_result_note(r,
                   "MFU_measured against %s = %.1f TFLOP/s, the best %s "
                   "GEMM measured on this device in this run",
                   key, top * 1e-12, dt->peak);
}

const sb_impl sb_impl_cuda_compute_gemm = {
    .backend = "cuda",
    .desc = "cuBLASLt GEMM fp32/tf32/fp16/bf16/fp8, square and LLM shapes, "
            "TFLOP/s and MFU",
    .params = cgemm_params,
    .quick = "dtype=fp32,tf32,bf16,fp8 shape=square,llm n=4096 tokens=4096 "
             "d_model=4096",
    .full = "dtype=fp32,tf32,fp16,bf16,fp8,fp8_f32 shape=square,llm "
            "n=2048,4096,8192,16384 tokens=2048,8192 d_model=4096,8192",
    .check = cgemm_check,
    .bytes = cgemm_bytes,
    .setup = cgemm_setup,
    .timer = &sb_cuda_timer,
    .verify = sb_cgemm_verify,
    .report = cgemm_report,
    .teardown = sb_cgemm_teardown,
};

/* ==== attention.bmm
 * ============================================================ */

static const sb_param_def cbmm_params[] = {
    SB__CUDA_P_DEVICE, SB__CUDA_P_PLANT, {NULL, 0, NULL, 0, 0, NULL, NULL}};

static bool cbmm_bf16(const sb_params *p)
{
    return strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
}

static double cbmm_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    sb_bmm_shape s = *(const sb_bmm_shape *)pt->shape;
    return 4.0 * sb_bmm_bytes(&s, 1); /* host copies of A, B and C */
}

static int cbmm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    (void)ctx;
    return sb_cbmm_setup(pt->params, state, err);
}

static void cbmm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    const sb_params *p = pt->params;
    sb_cbmm_report(state, p, ctx, r);
    const sb_metric *g = sb_result_get(r, "GFLOPs");
    double peak =
        sb_ceil_get(&ctx->ceil, cbmm_bf16(p) ? "peak.bf16" : "peak.fp32");
    if (g && peak > 0)
        sb_result_metric(r, "pct_gemm", 100.0 * g->value * 1e9 / peak, "%");
}

/* The definition (src/bench/attention) holds the shape, its 2^31 limit,
 * FLOPs and bytes (bf16 inputs, fp32 output). */
const sb_impl sb_impl_cuda_attention_bmm = {
    .backend = "cuda",
    .desc = "cublasGemmStridedBatchedEx, fp32 or bf16 inputs",
    .params = cbmm_params,
    .quick = "batch=32 shape=qk,pv seq=2048 head_dim=128 dtype=fp32,bf16",
    .full = "batch=64 shape=qk,pv seq=2048,8192 head_dim=128 dtype=fp32,bf16",
    .footprint = cbmm_footprint,
    .setup = cbmm_setup,
    .timer = &sb_cuda_timer,
    .verify = sb_cbmm_verify,
    .report = cbmm_report,
    .teardown = sb_cbmm_teardown,
};

/* ==== attention.paged_decode
 * ===================================================== */

static const sb_param_def cpaged_params[] = {
    {"kv_dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16|fp8",
     "KV cache element type (bf16 and fp8 e4m3 as serving stores it; "
     "decoded to fp32 as loaded, fp32 math)"},
    {"heads_per_block", SB_P_INT, "0", 0, 8, NULL,
     "query heads of one KV head a block computes (1, 2, 4 or 8; 0: all "
     "of the group up to 8, 4 past head_dim 128): fewer heads, fewer "
     "registers a thread and more blocks an SM, each K and V row read "
     "once per block"},
    SB__CUDA_P_DEVICE,
    SB__CUDA_P_PLANT,
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* The shape of a point (attention.c's rules); the caller frees it. */

static int cpaged_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const sb_paged_shape s = *(const sb_paged_shape *)pt->shape;
    /* the query heads a block computes, as the kernel's setup takes them */
    const long long hpb = sb_p_int(pt->params, "heads_per_block");
    const long long gm =
        sb_cpaged_heads_per_block(s.hq / (s.hkv ? s.hkv : 1), s.d, hpb);
    int rc = 0;
    if (s.total_pages >= 2147483647LL || s.total_q >= 2147483647LL)
        rc = sb_fail(err, SB_EINVAL,
                     "attention.paged_decode: %lld pages "
                     "exceed the 32-bit page table (parameters lens, "
                     "page_size)",
                     (long long)s.total_pages);
    /* The kernel's limits (cuda_attn.cu), refused here so that bad input
     * exits 2 before any device is asked for: 16-byte loads of head_dim
     * floats, at most two 128-wide chunks, and the launch grids (y: KV
     * heads x groups of gm query heads; x of the merge: tokens x q
     * heads). */
    else if (s.d % 4 || s.d > 256)
        rc = sb_fail(err, SB_EINVAL,
                     "attention.paged_decode on cuda: "
                     "parameter head_dim=%lld must be a multiple of 4 and "
                     "<= 256",
                     (long long)s.d);
    else if (hpb != 0 && hpb != 1 && hpb != 2 && hpb != 4 && hpb != 8)
        rc = sb_fail(err, SB_EINVAL,
                     "attention.paged_decode on cuda: parameter "
                     "heads_per_block=%lld must be 0, 1, 2, 4 or 8",
                     hpb);
    else if (s.hkv * ((s.hq / s.hkv + gm - 1) / gm) > 65535 ||
             s.total_q * s.hq > 2147483647LL)
        rc = sb_fail(err, SB_EINVAL,
                     "attention.paged_decode on cuda: "
                     "parameters q_heads=%lld, kv_heads=%lld with %lld query "
                     "tokens exceed the kernel's launch grid",
                     (long long)s.hq, (long long)s.hkv, (long long)s.total_q);
    return rc;
}

static int cpaged_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                        sb_err *err)
{
    (void)ctx;
    return sb_cpaged_setup(pt->params, state, err);
}

static void cpaged_report(void *state, const sb_point *pt, sb_ctx *ctx,
                          sb_result *r)
{
    sb_cpaged_report(state, pt->params, ctx, r);
}

/* The definition holds the shape, the page table's limit, FLOPs, bytes
 * and the host footprint. */
const sb_impl sb_impl_cuda_attention_paged_decode = {
    .backend = "cuda",
    .desc = "split-KV kernel over a shuffled page pool",
    .params = cpaged_params,
    .full = "batch=64,256 lens=uniform:512:8192 q_heads=32 kv_heads=8 "
            "head_dim=128 chunk=0,256",
    .check = cpaged_check,
    .setup = cpaged_setup,
    .timer = &sb_cuda_timer,
    .verify = sb_cpaged_verify,
    .report = cpaged_report,
    .teardown = sb_cpaged_teardown,
};

/* ==== memory.latency and transfer.latency
 * ====================================== */

static const sb_param_def cchase_params[] = {
    SB__CUDA_P_DEVICE, SB__CUDA_P_PLANT, {NULL, 0, NULL, 0, 0, NULL, NULL}};

static int cchase_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                        sb_err *err)
{
    (void)ctx;
    return sb_cchase_setup(pt->bench->kind == SB_CHASE_HOST_MEMORY,
                           (const sb_chase_shape *)pt->shape, pt->params, state,
                           err);
}

static void cchase_report(void *state, const sb_point *pt, sb_ctx *ctx,
                          sb_result *r)
{
    (void)pt;
    (void)ctx;
    sb_cchase_report(state, r);
}

const sb_impl sb_impl_cuda_memory_latency = {
    .backend = "cuda",
    .desc = "one GPU thread chases a chain in device memory",
    .params = cchase_params,
    .quick = "size=64KiB,16MiB,1GiB",
    .full = "size=4KiB..4GiB:x4 pattern=random,page",
    .setup = cchase_setup,
    .timer = &sb_cuda_timer,
    .verify = sb_cchase_verify,
    .report = cchase_report,
    .teardown = sb_cchase_teardown,
};

const sb_impl sb_impl_cuda_transfer_latency = {
    .backend = "cuda",
    .desc = "one GPU thread chases a chain in mapped page-locked host memory "
            "(nvbandwidth's host_device_latency_sm)",
    .params = cchase_params,
    .quick = "size=64MiB",
    .full = "size=64MiB pattern=random,page",
    .setup = cchase_setup,
    .timer = &sb_cuda_timer,
    .verify = sb_cchase_verify,
    .report = cchase_report,
    .teardown = sb_cchase_teardown,
};

/* ==== network.* over NCCL
 * ========================================================= */

#ifdef SB_HAVE_NCCL
static const sb_param_def cnccl_params[] = {
    {"size", SB_P_SIZE, "64MiB", 4, 17179869184.0, NULL,
     "bytes of the operation's buffer (nccl-tests' S)"},
    {"gpus", SB_P_INT, "0", 0, 16, NULL, "GPUs to use (0: all)"},
    {"inplace", SB_P_BOOL, "false", 0, 0, NULL,
     "in place: one buffer for input and output (nccl-tests' in-place "
     "layout; not for alltoall)"},
    {"graph", SB_P_BOOL, "false", 0, 0, NULL,
     "capture each batch into a CUDA graph per GPU and replay it "
     "(nccl-tests' -G)"},
    SB__CUDA_P_PLANT,
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static int cnccl_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    /* a wait past --timeout (5 minutes without one) aborts */
    return sb_cnccl_setup(pt->bench->kind, pt->params,
                          ctx->timeout_s > 0 ? ctx->timeout_s : 300.0, state,
                          err);
}

static void cnccl_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    sb_cnccl_report(state, pt->params, ctx, r);
}

/* One impl a collective; the collective is the definition's kind. */
#define CNCCL_BENCH(NAME, DESC)                                                \
    const sb_impl sb_impl_cuda_network_##NAME = {                              \
        .backend = "cuda",                                                     \
        .desc = DESC,                                                          \
        .params = cnccl_params,                                                \
        .quick = "size=1MiB,64MiB",                                            \
        .full = "size=4KiB..1GiB:x4",                                          \
        .setup = cnccl_setup,                                                  \
        .timer = &sb_cnccl_timer,                                              \
        .verify = sb_cnccl_verify,                                             \
        .report = cnccl_report,                                                \
        .teardown = sb_cnccl_teardown,                                         \
    };

CNCCL_BENCH(allreduce,
            "ncclAllReduce over the node's GPUs; busbw = algbw x 2(n-1)/n")
CNCCL_BENCH(allgather,
            "ncclAllGather; S = output buffer; busbw = algbw x (n-1)/n")
CNCCL_BENCH(reduce_scatter,
            "ncclReduceScatter; S = input buffer; busbw = algbw x (n-1)/n")
CNCCL_BENCH(alltoall,
            "all-to-all as grouped ncclSend/ncclRecv; busbw x (n-1)/n")
CNCCL_BENCH(bcast, "ncclBroadcast from GPU 0; busbw = algbw")
#endif
