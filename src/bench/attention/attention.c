/*
 * attention.c — the attention benchmarks: attention.bmm (the batched
 * matmuls of QKᵀ and PV), attention.prefill (flash-style causal and
 * non-causal attention, MHA/GQA/MQA) and attention.paged_decode (ragged
 * paged attention over a shuffled page pool, decode tokens and optional
 * prefill chunks in one batch).
 *
 * This file only binds parameters to the definitions in src/def/attention.c
 * (shapes, FLOPs, bytes, reference, verification) and to the CPU kernels
 * in src/backend/cpu/attn_cpu.c; the runner owns timing and statistics.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/attn_cpu.h"
#include "solbench/attention.h"
#include "solbench/bench.h"
#include "solbench/util.h"

/* Rows (or elements, for bmm) compared with the double reference after a
 * point: enough to catch a wrong tile or page, cheap at 8192 keys. */
#define VERIFY_ROWS 64
#define VERIFY_ELEMS 512
/* BLAS dimensions are int. */
#define BLAS_MAX 2147483647.0

static const uint64_t seed_q = 0x51ULL, seed_k = 0x4bULL, seed_v = 0x56ULL;

/* Adds what every attention primitive reports beyond the runner's rates:
 * its counts (under the runner's names, so they show even where the
 * runner skips a zero) and AI. The runner places it on the roofline. */
static void report_common(sb_result *r, double flops, double bytes)
{
    sb_result_metric(r, "flops", flops, "FLOP");
    sb_result_metric(r, "bytes", bytes, "B");
    if (bytes > 0)
        sb_result_metric(r, "AI", flops / bytes, "FLOP/B");
}

/* The products' rate against the run's GEMM ceiling and peak of the same
 * precision (compute.gemm and compute.peak, earlier in the run). */
static void report_gemm(sb_result *r, const sb_ctx *ctx, const char *dtype)
{
    char name[32];
    const sb_metric *g = sb_result_get(r, "GFLOPs");
    if (!g)
        return;
    snprintf(name, sizeof name, "gemm.%s", dtype);
    double gemm = sb_ceil_get(&ctx->ceil, name);
    if (gemm > 0)
        sb_result_metric(r, "pct_gemm", 100.0 * g->value * 1e9 / gemm, "%");
    snprintf(name, sizeof name, "peak.%s", dtype);
    double peak = sb_ceil_get(&ctx->ceil, name);
    if (peak > 0)
        sb_result_metric(r, "MFU", g->value * 1e9 / peak, "ratio");
}

/* The library a point asks for: -1 auto, -2 unknown. */
static int point_lib(const sb_params *p)
{
    const char *s = sb_p_str(p, "lib");
    if (strcmp(s, "auto") == 0)
        return -1;
    int lib = sb_gemm_lib_parse(s);
    return lib >= 0 ? lib : -2;
}

static int point_dt(const sb_params *p)
{
    return strcmp(sb_p_str(p, "dtype"), "bf16") == 0 ? SB_GEMM_BF16
                                                     : SB_GEMM_F32;
}

#define SB_LIB_PARAM                                                           \
    {                                                                          \
        "lib", SB_P_STR, "auto", 0, 0, "auto|openblas|onednn",                 \
            "GEMM library of the products; auto = the faster on this point, "  \
            "timed"                                                            \
    }

/* Copies n floats to bf16 and back, so the reference sees exactly the
 * rounded values the kernel reads. */
static void round_bf16(float *x, uint16_t *x16, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        x16[i] = sb_bf16_from_f32(x[i]);
        x[i] = sb_bf16_to_f32(x16[i]);
    }
}

static void *alloc_floats(double n) /* NULL on failure or n == 0 */
{
    return n > 0 ? sb_alloc_aligned((size_t)n * sizeof(float)) : NULL;
}

/* ==== attention.bmm ========================================================
 */

static const sb_param_def bmm_params[] = {SB_BMM_PARAMS,
                                          {NULL, 0, NULL, 0, 0, NULL, NULL}};
static const sb_param_def bmm_cpu_params[] = {
    SB_LIB_PARAM, {NULL, 0, NULL, 0, 0, NULL, NULL}};

static bool bmm_bf16(const sb_params *p)
{
    return strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
}

static double bmm_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    const sb_params *p = pt->params;
    sb_bmm_shape s = *(const sb_bmm_shape *)pt->shape;
    double elems = sb_bmm_bytes(&s, 1);
    double in = (double)s.batch * ((double)s.m * s.k + (double)s.k * s.n);
    return 4.0 * elems + (bmm_bf16(p) ? 2.0 * in : 0.0);
}

static int bmm_decode(const sb_bench *b, const sb_params *p, void *shape,
                      sb_err *err)
{
    (void)b, (void)err;
    *(sb_bmm_shape *)shape = sb_bmm_shape_of(p);
    return 0;
}

/* One matrix of a product must stay under 2^31 elements (BLAS and
 * cuBLAS index with int). */
static int bmm_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    sb_bmm_shape s = *(const sb_bmm_shape *)pt->shape;
    if ((double)s.m * s.k > BLAS_MAX || (double)s.k * s.n > BLAS_MAX ||
        (double)s.m * s.n > BLAS_MAX)
        return sb_fail(err, SB_EINVAL,
                       "attention.bmm: one matrix of %lldx%lldx%lld exceeds "
                       "2^31 elements (parameters m, n, k or seq)",
                       (long long)s.m, (long long)s.n, (long long)s.k);
    return 0;
}

static int bmm_cpu_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    if (point_lib(pt->params) == -2)
        return sb_fail(err, SB_EINVAL,
                       "attention.bmm: parameter lib=%s: "
                       "expected auto, openblas or onednn",
                       sb_p_str(pt->params, "lib"));
    return 0;
}

static double bmm_flops(const sb_point *pt)
{
    sb_bmm_shape s = *(const sb_bmm_shape *)pt->shape;
    return sb_bmm_flops(&s);
}

static double bmm_bytes(const sb_point *pt)
{
    const sb_params *p = pt->params;
    sb_bmm_shape s = *(const sb_bmm_shape *)pt->shape;
    return sb_bmm_bytes(&s, bmm_bf16(p) ? 2 : 4) +
           (bmm_bf16(p) ? 2.0 * (double)s.batch * s.m * s.n : 0.0);
}

typedef struct bmm_state {
    sb_bmm_shape s;
    bool bf16;
    float *a, *b, *c;    /* a, b: the values the product uses */
    uint16_t *a16, *b16; /* bf16 storage */
    sb_gemm_plan *plan;
    bool lib_auto;
    double lib_s[SB_GEMM_NLIBS]; /* auto: each library's time */
} bmm_state;

static void bmm_teardown(void *state)
{
    bmm_state *st = state;
    if (!st)
        return;
    sb_gemm_plan_destroy(st->plan);
    sb_free_aligned(st->a);
    sb_free_aligned(st->b);
    sb_free_aligned(st->c);
    sb_free_aligned(st->a16);
    sb_free_aligned(st->b16);
    free(st);
}

static void bmm_run_once(void *state)
{
    bmm_state *st = state;
    if (st->bf16)
        sb_cpu_bmm(&st->s, st->plan, st->a16, st->b16, st->c);
    else
        sb_cpu_bmm(&st->s, st->plan, st->a, st->b, st->c);
}

/* The plan of library lib, or (lib < 0) of the library whose whole
 * batched product is fastest here. */
static int bmm_plan(bmm_state *st, int lib, sb_err *err)
{
    sb_gemm_desc d = {.dt = st->bf16 ? SB_GEMM_BF16 : SB_GEMM_F32,
                      .m = st->s.m,
                      .n = st->s.n,
                      .k = st->s.k,
                      .alpha = 1,
                      .beta = 0};
    const int slots = omp_get_max_threads();
    char why[192] = "";
    if (lib >= 0) {
        if (!sb_gemm_lib_supports(lib, d.dt, why, sizeof why))
            return sb_fail(err, SB_EUNSUP, "unsupported: %s %s: %s",
                           sb_gemm_lib_name(lib), st->bf16 ? "bf16" : "fp32",
                           why);
        return sb_gemm_plan_create(lib, &d, slots, &st->plan, err);
    }
    st->lib_auto = true;
    double best = INFINITY;
    sb_gemm_plan *keep = NULL;
    for (int l = 0; l < SB_GEMM_NLIBS; l++) {
        if (!sb_gemm_lib_supports(l, d.dt, why, sizeof why))
            continue;
        int rc = sb_gemm_plan_create(l, &d, slots, &st->plan, err);
        if (rc == SB_EUNSUP)
            continue;
        if (rc) {
            sb_gemm_plan_destroy(keep);
            return rc;
        }
        st->lib_s[l] = sb_gemm_time(bmm_run_once, st, 3);
        if (st->lib_s[l] < best) {
            best = st->lib_s[l];
            sb_gemm_plan_destroy(keep);
            keep = st->plan;
        } else {
            sb_gemm_plan_destroy(st->plan);
        }
        st->plan = NULL;
    }
    st->plan = keep;
    return keep ? 0
                : sb_fail(err, SB_EUNSUP,
                          "unsupported: no library "
                          "runs %s here: %s",
                          st->bf16 ? "bf16" : "fp32", why);
}

static int bmm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                     sb_err *err)
{
    const sb_params *p = pt->params;
    bmm_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "attention.bmm: out of memory");
    st->s = *(const sb_bmm_shape *)pt->shape;
    st->bf16 = bmm_bf16(p);
    double na = (double)st->s.batch * st->s.m * st->s.k;
    double nb = (double)st->s.batch * st->s.k * st->s.n;
    double nc = (double)st->s.batch * st->s.m * st->s.n;
    st->a = alloc_floats(na);
    st->b = alloc_floats(nb);
    st->c = alloc_floats(nc);
    if (st->bf16) {
        st->a16 = sb_alloc_aligned((size_t)na * 2);
        st->b16 = sb_alloc_aligned((size_t)nb * 2);
    }
    if (!st->a || !st->b || !st->c || (st->bf16 && (!st->a16 || !st->b16))) {
        bmm_teardown(st);
        return sb_fail(err, SB_ENOMEM, "attention.bmm: out of memory");
    }
    sb_attn_fill(st->a, (size_t)na, seed_q);
    sb_attn_fill(st->b, (size_t)nb, seed_k);
    sb_attn_fill(st->c, (size_t)nc, seed_v); /* first touch, overwritten */
    if (st->bf16) {
        round_bf16(st->a, st->a16, (size_t)na);
        round_bf16(st->b, st->b16, (size_t)nb);
    }
    int rc = bmm_plan(st, point_lib(p), err);
    if (rc) {
        bmm_teardown(st);
        return rc;
    }
    *state = st;
    return 0;
}

static void bmm_run(void *state, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        bmm_run_once(state);
}

static int bmm_verify(void *state, sb_result *r)
{
    bmm_state *st = state;
    sb_attn_check c;
    sb_bmm_verify(&st->s, st->a, st->b, st->c, VERIFY_ELEMS, 0x5eedULL, &c);
    sb_attn_check_report(r, &c, "|err| <= 1e-5 * sum|a*b|");
    return 0;
}

/* Which library and kernel ran, and with auto what each library took. */
static void report_lib(sb_result *r, sb_gemm_plan *plan, bool lib_auto,
                       const double lib_s[SB_GEMM_NLIBS], double flops)
{
    int lib = sb_gemm_plan_lib(plan);
    sb_result_note(r, "library: %s, kernel %s; %s%s", sb_gemm_lib_name(lib),
                   sb_gemm_plan_kernel(plan), sb_gemm_lib_version(lib),
                   lib_auto ? " (lib=auto: the fastest of those timed)" : "");
    for (int l = 0; lib_auto && l < SB_GEMM_NLIBS; l++)
        if (lib_s[l] > 0) {
            char name[40];
            snprintf(name, sizeof name, "auto_%s_GFLOPs", sb_gemm_lib_name(l));
            sb_result_metric(r, name, flops / lib_s[l] * 1e-9, "GFLOP/s");
        }
}

static void bmm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                       sb_result *r)
{
    const sb_params *p = pt->params;
    bmm_state *st = state;
    const char *dt = bmm_bf16(p) ? "bf16" : "fp32";
    report_common(r, bmm_flops(pt), bmm_bytes(pt));
    report_gemm(r, ctx, dt);
    report_lib(r, st->plan, st->lib_auto, st->lib_s, bmm_flops(pt));
}

static const sb_impl attention_bmm_cpu = {
    .backend = "cpu",
    .desc = "fp32, or bf16 where a GEMM library runs it",
    .params = bmm_cpu_params,
    .check = bmm_cpu_check,
    .footprint = bmm_footprint,
    .setup = bmm_setup,
    .run = bmm_run,
    .verify = bmm_verify,
    .report = bmm_report,
    .teardown = bmm_teardown,
};

#ifdef SB_HAVE_CUDA
#endif
#ifdef SB_HAVE_PJRT
#endif

const sb_bench sb_bench_attention_bmm = {
    .name = "attention.bmm",
    .area = "attention",
    .desc = "batched matmul [B,M,K]x[B,K,N] in the shapes of QK^T and PV",
    .params = bmm_params,
    .quick = "batch=8 shape=qk,pv seq=256 head_dim=64",
    .full = "batch=32 shape=qk,pv seq=2048 head_dim=128 dtype=fp32,bf16",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .roof = SB_ROOF_DTYPE,
    .decode = bmm_decode,
    .shape_size = sizeof(sb_bmm_shape),
    .check = bmm_check,
    .flops = bmm_flops,
    .bytes = bmm_bytes,
    .impls = (const sb_impl *const[]){&attention_bmm_cpu, NULL},
};

/* ==== shared head parameters =================================================
 */

/* ==== attention.prefill ======================================================
 */

static const sb_param_def prefill_params[] = {
    {"batch", SB_P_INT, "1", 1, 4096, NULL, "sequences"},
    {"q_heads", SB_P_INT, "8", 0, 1024, NULL, "query heads"},
    {"kv_heads", SB_P_INT, "8", 0, 1024, NULL,
     "key/value heads (must divide q_heads; 1 = MQA)"},
    {"head_dim", SB_P_INT, "128", 0, 1024, NULL, "head dimension D"},
    {"sq", SB_P_INT, "1024", 1, 1 << 20, NULL, "query tokens"},
    {"skv", SB_P_INT, "0", 0, 1 << 20, NULL,
     "key tokens (0: same as sq; > sq with causal = chunked prefill)"},
    {"causal", SB_P_BOOL, "0", 0, 0, NULL,
     "causal mask: query i sees keys j <= i + skv - sq"},
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16",
     "Q, K, V in fp32, or bf16 with fp32 accumulation (O is fp32)"},
    SB_LIB_PARAM,
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* bf16: the error P rounded to bf16 can add to O, bounded by the unit
 * roundoff 2^-8 times max |V| (V in [-1, 1)), twice over for margin. */
#define PREFILL_BF16_ATOL (2.0 / 256.0)

static sb_prefill_shape prefill_shape(const sb_params *p)
{
    sb_prefill_shape s = {sb_p_int(p, "batch"),    sb_p_int(p, "q_heads"),
                          sb_p_int(p, "kv_heads"), sb_p_int(p, "sq"),
                          sb_p_int(p, "skv"),      sb_p_int(p, "head_dim"),
                          sb_p_bool(p, "causal")};
    if (s.skv == 0)
        s.skv = s.sq;
    return s;
}

static int prefill_decode(const sb_bench *b, const sb_params *p, void *shape,
                          sb_err *err)
{
    (void)b, (void)err;
    *(sb_prefill_shape *)shape = prefill_shape(p);
    return 0;
}

static int prefill_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    const sb_params *p = pt->params;
    sb_prefill_shape s = *(const sb_prefill_shape *)pt->shape;
    int rc = sb_attn_check_heads("attention.prefill", s.hq, s.hkv, s.d, err);
    if (rc)
        return rc;
    if ((double)s.sq * s.d > BLAS_MAX || (double)s.skv * s.d > BLAS_MAX)
        return sb_fail(err, SB_EINVAL,
                       "attention.prefill: parameters "
                       "sq/skv x head_dim exceed 2^31 elements");
    if (point_lib(p) == -2)
        return sb_fail(err, SB_EINVAL,
                       "attention.prefill: parameter lib=%s: "
                       "expected auto, openblas or onednn",
                       sb_p_str(p, "lib"));
    return 0;
}

/* Q, K, V at 2 bytes for bf16 (O stays fp32): sb_prefill_bytes counts 4
 * for each. */
static double prefill_bytes(const sb_point *pt)
{
    const sb_params *p = pt->params;
    sb_prefill_shape s = *(const sb_prefill_shape *)pt->shape;
    double bytes = sb_prefill_bytes(&s);
    if (point_dt(p) == SB_GEMM_BF16) {
        double q = (double)s.batch * s.hq * s.sq * s.d;
        double kv = (double)s.batch * s.hkv * s.skv * s.d;
        bytes -= 2.0 * (q + 2.0 * kv);
    }
    return bytes;
}

static double prefill_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    const sb_params *p = pt->params;
    sb_prefill_shape s = *(const sb_prefill_shape *)pt->shape;
    int nt = ctx && ctx->threads > 0 ? ctx->threads : 1;
    double extra = 0;
    if (point_dt(p) == SB_GEMM_BF16) /* bf16 copies beside the floats */
        extra = 2.0 * ((double)s.batch * s.hq * s.sq * s.d +
                       2.0 * s.batch * s.hkv * s.skv * s.d);
    return sb_prefill_bytes(&s) + extra +
           4.0 * nt * (SB_PREFILL_BR * (1.5 * SB_PREFILL_BC + 2.0));
}

static double prefill_flops(const sb_point *pt)
{
    sb_prefill_shape s = *(const sb_prefill_shape *)pt->shape;
    return sb_prefill_flops(&s);
}

typedef struct prefill_state {
    sb_prefill_shape s;
    int dt;
    float *q, *k, *v, *o;      /* q, k, v: the values the kernel uses */
    uint16_t *q16, *k16, *v16; /* bf16 storage */
    sb_attn_ws ws;
    bool lib_auto;
    double lib_s[SB_GEMM_NLIBS];
} prefill_state;

static void prefill_teardown(void *state)
{
    prefill_state *st = state;
    if (!st)
        return;
    sb_free_aligned(st->q);
    sb_free_aligned(st->k);
    sb_free_aligned(st->v);
    sb_free_aligned(st->o);
    sb_free_aligned(st->q16);
    sb_free_aligned(st->k16);
    sb_free_aligned(st->v16);
    sb_attn_ws_free(&st->ws);
    free(st);
}

static void prefill_run_once(void *state)
{
    prefill_state *st = state;
    if (st->dt == SB_GEMM_BF16)
        sb_cpu_prefill(&st->s, st->q16, st->k16, st->v16, st->o, &st->ws);
    else
        sb_cpu_prefill(&st->s, st->q, st->k, st->v, st->o, &st->ws);
}

/* The workspace and plans of library lib, or (lib < 0) of the library
 * whose whole prefill is fastest here. */
static int prefill_plans(prefill_state *st, int lib, sb_err *err)
{
    const int nt = omp_get_max_threads();
    char why[192] = "";
    if (lib >= 0) {
        if (!sb_gemm_lib_supports(lib, st->dt, why, sizeof why))
            return sb_fail(err, SB_EUNSUP, "unsupported: %s %s: %s",
                           sb_gemm_lib_name(lib),
                           st->dt == SB_GEMM_BF16 ? "bf16" : "fp32", why);
        return sb_cpu_prefill_ws(&st->s, nt, lib, st->dt, &st->ws, err);
    }
    st->lib_auto = true;
    double best = INFINITY;
    sb_attn_ws keep = {0};
    bool have = false;
    for (int l = 0; l < SB_GEMM_NLIBS; l++) {
        if (!sb_gemm_lib_supports(l, st->dt, why, sizeof why))
            continue;
        int rc = sb_cpu_prefill_ws(&st->s, nt, l, st->dt, &st->ws, err);
        if (rc == SB_EUNSUP)
            continue;
        if (rc) {
            if (have)
                sb_attn_ws_free(&keep);
            return rc;
        }
        st->lib_s[l] = sb_gemm_time(prefill_run_once, st, 2);
        if (st->lib_s[l] < best) {
            best = st->lib_s[l];
            if (have)
                sb_attn_ws_free(&keep);
            keep = st->ws;
            have = true;
        } else {
            sb_attn_ws_free(&st->ws);
        }
        memset(&st->ws, 0, sizeof st->ws);
    }
    if (!have)
        return sb_fail(err, SB_EUNSUP,
                       "unsupported: no library runs %s "
                       "here: %s",
                       st->dt == SB_GEMM_BF16 ? "bf16" : "fp32", why);
    st->ws = keep;
    return 0;
}

static int prefill_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                         sb_err *err)
{
    const sb_params *p = pt->params;
    prefill_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "attention.prefill: out of memory");
    st->s = *(const sb_prefill_shape *)pt->shape;
    st->dt = point_dt(p);
    const sb_prefill_shape *s = &st->s;
    double nq = (double)s->batch * s->hq * s->sq * s->d;
    double nkv = (double)s->batch * s->hkv * s->skv * s->d;
    st->q = alloc_floats(nq);
    st->o = alloc_floats(nq);
    st->k = alloc_floats(nkv);
    st->v = alloc_floats(nkv);
    bool bf16 = st->dt == SB_GEMM_BF16;
    if (bf16) {
        st->q16 = sb_alloc_aligned((size_t)nq * 2);
        st->k16 = sb_alloc_aligned((size_t)nkv * 2);
        st->v16 = sb_alloc_aligned((size_t)nkv * 2);
    }
    if (!st->q || !st->o || !st->k || !st->v ||
        (bf16 && (!st->q16 || !st->k16 || !st->v16))) {
        prefill_teardown(st);
        return sb_fail(err, SB_ENOMEM, "attention.prefill: out of memory");
    }
    sb_attn_fill(st->q, (size_t)nq, seed_q);
    sb_attn_fill(st->k, (size_t)nkv, seed_k);
    sb_attn_fill(st->v, (size_t)nkv, seed_v);
    sb_attn_fill(st->o, (size_t)nq, seed_q + 1); /* first touch */
    if (bf16) {
        round_bf16(st->q, st->q16, (size_t)nq);
        round_bf16(st->k, st->k16, (size_t)nkv);
        round_bf16(st->v, st->v16, (size_t)nkv);
    }
    int rc = prefill_plans(st, point_lib(p), err);
    if (rc) {
        prefill_teardown(st);
        return rc;
    }
    *state = st;
    return 0;
}

static void prefill_run(void *state, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        prefill_run_once(state);
}

static int prefill_verify(void *state, sb_result *r)
{
    prefill_state *st = state;
    sb_attn_check c;
    bool bf16 = st->dt == SB_GEMM_BF16;
    sb_prefill_verify_tol(&st->s, st->q, st->k, st->v, st->o, VERIFY_ROWS,
                          0x5eedULL, bf16 ? PREFILL_BF16_ATOL : 0, &c);
    sb_attn_check_report(r, &c,
                         bf16 ? "|err| <= 7.8e-3 + 1e-3*|ref| (P "
                                "rounded to bf16: 2 x 2^-8 max|V|)"
                              : "|err| <= 1e-4 + 1e-3*|ref|");
    return 0;
}

static void prefill_report(void *state, const sb_point *pt, sb_ctx *ctx,
                           sb_result *r)
{
    prefill_state *st = state;
    const char *dt = st->dt == SB_GEMM_BF16 ? "bf16" : "fp32";
    report_common(r, prefill_flops(pt), prefill_bytes(pt));
    report_gemm(r, ctx, dt);
    report_lib(r, st->ws.qk[0], st->lib_auto, st->lib_s, prefill_flops(pt));
}

static const sb_impl attention_prefill_cpu = {
    .backend = "cpu",
    .setup = prefill_setup,
    .run = prefill_run,
    .verify = prefill_verify,
    .report = prefill_report,
    .teardown = prefill_teardown,
};

const sb_bench sb_bench_attention_prefill = {
    .name = "attention.prefill",
    .area = "attention",
    .desc = "flash-style prefill attention (online softmax, GEMM-library "
            "tiles), causal or not, MHA/GQA/MQA, fp32 or bf16",
    .params = prefill_params,
    .quick = "batch=1 q_heads=8 kv_heads=2 head_dim=64 sq=512 causal=0,1",
    .full = "batch=1 q_heads=32 kv_heads=8 head_dim=128 sq=1024,4096 "
            "causal=0,1 dtype=fp32,bf16",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .roof = SB_ROOF_DTYPE,
    .decode = prefill_decode,
    .shape_size = sizeof(sb_prefill_shape),
    .check = prefill_check,
    .footprint = prefill_footprint,
    .flops = prefill_flops,
    .bytes = prefill_bytes,
    .impls = (const sb_impl *const[]){&attention_prefill_cpu, NULL},
};

/* ==== attention.paged_decode =================================================
 */

static const sb_param_def paged_params[] = {SB_PAGED_PARAMS,
                                            {NULL, 0, NULL, 0, 0, NULL, NULL}};
/* The CPU kernel's own: the cache's element type. */
static const sb_param_def paged_cpu_params[] = {
    {"kv_dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16",
     "KV cache element type (bf16 as serving stores it: decoded to fp32 "
     "as loaded, fp32 math)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* Builds the shape of a point; the caller frees it. */

static double paged_pool_floats(const sb_paged_shape *s)
{
    return (double)s->total_pages * s->hkv * s->page_size * s->d;
}

static int paged_decode(const sb_bench *b, const sb_params *p, void *shape,
                        sb_err *err)
{
    (void)b;
    return sb_paged_shape_of(p, shape, err);
}

static void paged_shape_free(void *shape)
{
    sb_paged_shape_free(shape);
}

static int paged_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const sb_paged_shape *s = pt->shape;
    if (s->total_pages >= 2147483647LL)
        return sb_fail(err, SB_EINVAL,
                       "attention.paged_decode: %lld pages "
                       "exceed the 32-bit page table (parameters lens, "
                       "page_size)",
                       (long long)s->total_pages);
    return 0;
}

static double paged_flops(const sb_point *pt)
{
    return sb_paged_flops(pt->shape);
}

static double paged_bytes(const sb_point *pt)
{
    return sb_paged_bytes(pt->shape);
}

static double paged_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    return sb_paged_footprint(pt->shape);
}

typedef struct paged_state {
    sb_paged_shape s;
    float *q, *o;
    void *kp, *vp; /* fp32 or bf16 (s.kv_bytes) */
    int32_t *table;
    sb_attn_ws ws;
} paged_state;

static void paged_teardown(void *state)
{
    paged_state *st = state;
    if (!st)
        return;
    sb_free_aligned(st->q);
    sb_free_aligned(st->kp);
    sb_free_aligned(st->vp);
    sb_free_aligned(st->o);
    sb_free_aligned(st->table);
    sb_attn_ws_free(&st->ws);
    sb_paged_shape_free(&st->s);
    free(st);
}

static int paged_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    const sb_params *p = pt->params;
    paged_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "attention.paged_decode: out of memory");
    int rc = sb_paged_shape_of(p, &st->s, err);
    if (rc) {
        free(st);
        return rc;
    }
    const sb_paged_shape *s = &st->s;
    double npool = paged_pool_floats(s);
    double nq = (double)s->total_q * s->hq * s->d;
    /* A pool of zero pages (every length 0) still gets one page, so the
     * pointers are valid. */
    size_t kvb = s->kv_bytes == 2 ? 2 : 4;
    double nkv = npool > 0 ? npool : 1;
    st->kp = sb_alloc_aligned((size_t)nkv * kvb);
    st->vp = sb_alloc_aligned((size_t)nkv * kvb);
    st->q = alloc_floats(nq);
    st->o = alloc_floats(nq);
    st->table =
        sb_alloc_aligned((size_t)(s->total_pages + 1) * sizeof(int32_t));
    if (!st->kp || !st->vp || !st->q || !st->o || !st->table) {
        paged_teardown(st);
        return sb_fail(err, SB_ENOMEM, "attention.paged_decode: out of memory");
    }
    rc = sb_cpu_paged_ws(s, omp_get_max_threads(), &st->ws, err);
    if (rc) {
        paged_teardown(st);
        return rc;
    }
    uint64_t seed = (uint64_t)sb_p_int(p, "seed");
    sb_paged_shuffle_table(st->table, s->total_pages, seed);
    /* The pool is first-touched in static chunks by all threads. The
     * kernel's work is ragged and dynamically scheduled, so no static
     * partition would match it; spreading the pages over the threads'
     * nodes is the fair placement for a shared cache pool. */
    if (kvb == 2) {
        sb_attn_fill_bf16(st->kp, (size_t)nkv, seed_k ^ seed);
        sb_attn_fill_bf16(st->vp, (size_t)nkv, seed_v ^ seed);
    } else {
        sb_attn_fill(st->kp, (size_t)nkv, seed_k ^ seed);
        sb_attn_fill(st->vp, (size_t)nkv, seed_v ^ seed);
    }
    sb_attn_fill(st->q, (size_t)nq, seed_q ^ seed);
    /* a bf16 cache comes with a bf16 model: its queries are bf16 values
     * (held in fp32), which a kernel attending in bf16 takes exactly */
    if (kvb == 2)
        for (size_t i = 0; i < (size_t)nq; i++)
            st->q[i] = sb_bf16_to_f32(sb_bf16_from_f32(st->q[i]));
    sb_attn_fill(st->o, (size_t)nq, seed_q ^ seed ^ 1); /* first touch */
    *state = st;
    return 0;
}

static void paged_run(void *state, uint64_t iters)
{
    paged_state *st = state;
    for (uint64_t i = 0; i < iters; i++)
        sb_cpu_paged(&st->s, st->q, st->kp, st->vp, st->table, st->o, &st->ws);
}

static int paged_verify(void *state, sb_result *r)
{
    paged_state *st = state;
    sb_attn_check c;
    /* a bf16 cache attended in bf16 products (P rounded to bf16, as the
     * prefill's bf16 path): the same bound; else the fp32 one */
    const bool bf16 = sb_cpu_paged_bf16_products(&st->s);
    sb_paged_verify_kv_tol(&st->s, st->q, st->kp, st->vp, st->s.kv_bytes,
                           st->table, st->o, VERIFY_ROWS, 0x5eedULL,
                           bf16 ? PREFILL_BF16_ATOL : 0, &c);
    sb_attn_check_report(r, &c,
                         bf16 ? "|err| <= 7.8e-3 + 1e-3*|ref| (P "
                                "rounded to bf16: 2 x 2^-8 max|V|)"
                              : "|err| <= 1e-4 + 1e-3*|ref|");
    return 0;
}

static void paged_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    paged_state *st = state;
    double flops = sb_paged_flops(&st->s), bytes = sb_paged_bytes(&st->s);
    report_common(r, flops, bytes);
    sb_result_metric(r, "sequences", (double)st->s.batch, "");
    sb_result_metric(r, "query_tokens", (double)st->s.total_q, "");
    sb_result_metric(
        r, "kv_cache",
        2.0 * (st->s.kv_bytes == 2 ? 2 : 4) * paged_pool_floats(&st->s), "B");
    if (r->stats.p50 > 0)
        sb_result_metric(r, "tokens_per_s",
                         (double)st->s.total_q / r->stats.p50, "tok/s");
    /* The memory roof this kernel should ride. */
    static const char *const roofs[] = {"bw.DRAM", "bw.read", "bw.triad"};
    for (int i = 0; i < 3; i++) {
        double bw = sb_ceil_get(&ctx->ceil, roofs[i]);
        if (bw > 0 && r->stats.p50 > 0) {
            sb_result_metric(r, "pct_mem_bw", 100.0 * bytes / r->stats.p50 / bw,
                             "%");
            sb_result_note(r, "memory ceiling: %s = %.1f GB/s", roofs[i],
                           bw * 1e-9);
            break;
        }
    }
}

static const sb_impl attention_paged_decode_cpu = {
    .backend = "cpu",
    .params = paged_cpu_params,
    .setup = paged_setup,
    .run = paged_run,
    .verify = paged_verify,
    .report = paged_report,
    .teardown = paged_teardown,
};

const sb_bench sb_bench_attention_paged_decode = {
    .name = "attention.paged_decode",
    .area = "attention",
    .desc = "ragged paged attention: shuffled KV page pool, ragged lengths, "
            "GQA decode tokens and optional prefill chunks",
    .params = paged_params,
    .quick = "batch=16 lens=uniform:1:2048 q_heads=32 kv_heads=8 "
             "head_dim=128 chunk=0,16",
    .full = "batch=64 lens=uniform:512:8192 q_heads=32 kv_heads=8 "
            "head_dim=128 chunk=0,64",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .roof = SB_ROOF_FP32,
    .decode = paged_decode,
    .shape_free = paged_shape_free,
    .shape_size = sizeof(sb_paged_shape),
    .check = paged_check,
    .footprint = paged_footprint,
    .flops = paged_flops,
    .bytes = paged_bytes,
    .impls = (const sb_impl *const[]){&attention_paged_decode_cpu, NULL},
};
