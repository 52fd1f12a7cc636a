/*
 * attention.c — the attention benchmarks: attention.bmm (the batched
 * matmuls of QKᵀ and PV), attention.prefill (flash-style causal and
 * non-causal attention, MHA/GQA/MQA) and attention.paged_decode (ragged
 * paged attention over a shuffled page pool, decode tokens and optional
 * prefill chunks in one batch).
 *
 * This file only binds parameters to the definitions in attn_def.c
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
#include "solbench/roofline.h"
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
 * runner skips a zero), AI, and its place on the roofline. */
static void report_common(sb_result *r, const sb_ctx *ctx, double flops,
                          double bytes)
{
    sb_result_metric(r, "flops", flops, "FLOP");
    sb_result_metric(r, "bytes", bytes, "B");
    if (bytes > 0)
        sb_result_metric(r, "AI", flops / bytes, "FLOP/B");
    sb_roofline_annotate(r, ctx, "fp32", flops, bytes);
}

static void *alloc_floats(double n) /* NULL on failure or n == 0 */
{
    return n > 0 ? sb_alloc_aligned((size_t)n * sizeof(float)) : NULL;
}

/* ==== attention.bmm ======================================================== */

static const sb_param_def bmm_params[] = {
    SB_BMM_PARAMS,
    {NULL, 0, NULL, 0, 0, NULL, NULL}};


static bool bmm_bf16(const sb_params *p)
{
    return strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
}

static double bmm_footprint(const sb_params *p, const sb_ctx *ctx)
{
    sb_bmm_shape s = sb_bmm_shape_of(p);
    double elems = sb_bmm_bytes(&s, 1);
    double in = (double)s.batch * ((double)s.m * s.k + (double)s.k * s.n);
    return 4.0 * elems + (bmm_bf16(p) ? 2.0 * in : 0.0);
}

static int bmm_check(const sb_params *p, const sb_ctx *ctx, sb_err *err)
{
    sb_bmm_shape s = sb_bmm_shape_of(p);
    if ((double)s.m * s.k > BLAS_MAX || (double)s.k * s.n > BLAS_MAX ||
        (double)s.m * s.n > BLAS_MAX)
        return sb_fail(err, SB_EINVAL,
                       "attention.bmm: one matrix of %lldx%lldx%lld exceeds "
                       "2^31 elements (parameters m, n, k or seq)",
                       (long long)s.m, (long long)s.n, (long long)s.k);
    return 0;
}

static double bmm_flops(const sb_params *p)
{
    sb_bmm_shape s = sb_bmm_shape_of(p);
    return sb_bmm_flops(&s);
}

static double bmm_bytes(const sb_params *p)
{
    sb_bmm_shape s = sb_bmm_shape_of(p);
    return sb_bmm_bytes(&s, bmm_bf16(p) ? 2 : 4) +
           (bmm_bf16(p) ? 2.0 * (double)s.batch * s.m * s.n : 0.0);
}

typedef struct bmm_state {
    sb_bmm_shape s;
    bool bf16;
    float *a, *b, *c;    /* a, b: the values the product uses */
    uint16_t *a16, *b16; /* bf16 storage */
} bmm_state;

static void bmm_teardown(void *state)
{
    bmm_state *st = state;
    if (!st)
        return;
    sb_free_aligned(st->a);
    sb_free_aligned(st->b);
    sb_free_aligned(st->c);
    sb_free_aligned(st->a16);
    sb_free_aligned(st->b16);
    free(st);
}

static int bmm_setup(const sb_params *p, const sb_ctx *ctx, void **state,
                     sb_err *err)
{
    bmm_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "attention.bmm: out of memory");
    st->s = sb_bmm_shape_of(p);
    st->bf16 = bmm_bf16(p);
    if (st->bf16 && !sb_blas_have_sbgemm()) {
        free(st);
        return sb_fail(err, SB_EUNSUP,
                       "attention.bmm dtype=bf16: the loaded BLAS has no "
                       "cblas_sbgemm");
    }
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
        /* The reference sees exactly the rounded inputs. */
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < (size_t)na; i++) {
            st->a16[i] = sb_bf16_from_f32(st->a[i]);
            st->a[i] = sb_bf16_to_f32(st->a16[i]);
        }
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < (size_t)nb; i++) {
            st->b16[i] = sb_bf16_from_f32(st->b[i]);
            st->b[i] = sb_bf16_to_f32(st->b16[i]);
        }
    }
    *state = st;
    return 0;
}

static void bmm_run(void *state, uint64_t iters)
{
    bmm_state *st = state;
    for (uint64_t i = 0; i < iters; i++) {
        if (st->bf16)
            sb_cpu_bmm_bf16(&st->s, st->a16, st->b16, st->c);
        else
            sb_cpu_bmm_f32(&st->s, st->a, st->b, st->c);
    }
}

static int bmm_verify(void *state, sb_result *r)
{
    bmm_state *st = state;
    sb_attn_check c;
    sb_bmm_verify(&st->s, st->a, st->b, st->c, VERIFY_ELEMS, 0x5eedULL, &c);
    sb_attn_check_report(r, &c, "|err| <= 1e-5 * sum|a*b|");
    return 0;
}

static void bmm_report(void *state, const sb_params *p, sb_ctx *ctx,
                       sb_result *r)
{
    report_common(r, ctx, bmm_flops(p), bmm_bytes(p));
    double gemm = sb_ceil_get(&ctx->ceil, "gemm.fp32");
    const sb_metric *g = sb_result_get(r, "GFLOPs");
    if (!bmm_bf16(p) && gemm > 0 && g)
        sb_result_metric(r, "pct_gemm", 100.0 * g->value * 1e9 / gemm, "%");
}

const sb_bench sb_bench_attention_bmm = {
    .name = "attention.bmm",
    .area = "attention",
    .backend = "cpu",
    .desc = "batched matmul [B,M,K]x[B,K,N] in the shapes of QK^T and PV "
            "(fp32; bf16 storage where the BLAS has sbgemm)",
    .params = bmm_params,
    .quick = "batch=8 shape=qk,pv seq=256 head_dim=64",
    .full = "batch=32 shape=qk,pv seq=2048 head_dim=128",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .check = bmm_check,
    .footprint = bmm_footprint,
    .flops = bmm_flops,
    .bytes = bmm_bytes,
    .setup = bmm_setup,
    .run = bmm_run,
    .verify = bmm_verify,
    .report = bmm_report,
    .teardown = bmm_teardown,
};

/* ==== shared head parameters ================================================= */

/* Head counts of 0 or that do not divide are the user's mistake: they get
 * check()'s message naming the parameter, not the parser's bound. */
static int check_heads(const char *bench, int64_t hq, int64_t hkv, int64_t d,
                       sb_err *err)
{
    if (hq < 1)
        return sb_fail(err, SB_EINVAL, "%s: parameter q_heads=%lld: must be "
                       ">= 1", bench, (long long)hq);
    if (hkv < 1)
        return sb_fail(err, SB_EINVAL, "%s: parameter kv_heads=%lld: must be "
                       ">= 1", bench, (long long)hkv);
    if (hq % hkv)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter kv_heads=%lld must divide q_heads=%lld "
                       "(GQA groups)", bench, (long long)hkv, (long long)hq);
    if (d < 1)
        return sb_fail(err, SB_EINVAL, "%s: parameter head_dim=%lld: must be "
                       ">= 1", bench, (long long)d);
    return 0;
}

/* ==== attention.prefill ====================================================== */

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
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static sb_prefill_shape prefill_shape(const sb_params *p)
{
    sb_prefill_shape s = {sb_p_int(p, "batch"), sb_p_int(p, "q_heads"),
                          sb_p_int(p, "kv_heads"), sb_p_int(p, "sq"),
                          sb_p_int(p, "skv"), sb_p_int(p, "head_dim"),
                          sb_p_bool(p, "causal")};
    if (s.skv == 0)
        s.skv = s.sq;
    return s;
}

static int prefill_check(const sb_params *p, const sb_ctx *ctx, sb_err *err)
{
    sb_prefill_shape s = prefill_shape(p);
    int rc = check_heads("attention.prefill", s.hq, s.hkv, s.d, err);
    if (rc)
        return rc;
    if ((double)s.sq * s.d > BLAS_MAX || (double)s.skv * s.d > BLAS_MAX)
        return sb_fail(err, SB_EINVAL, "attention.prefill: parameters "
                       "sq/skv x head_dim exceed 2^31 elements");
    return 0;
}

static double prefill_footprint(const sb_params *p, const sb_ctx *ctx)
{
    sb_prefill_shape s = prefill_shape(p);
    int nt = ctx && ctx->threads > 0 ? ctx->threads : 1;
    return sb_prefill_bytes(&s) +
           4.0 * nt * (SB_PREFILL_BR * (SB_PREFILL_BC + 2.0));
}

static double prefill_flops(const sb_params *p)
{
    sb_prefill_shape s = prefill_shape(p);
    return sb_prefill_flops(&s);
}

static double prefill_bytes(const sb_params *p)
{
    sb_prefill_shape s = prefill_shape(p);
    return sb_prefill_bytes(&s);
}

typedef struct prefill_state {
    sb_prefill_shape s;
    float *q, *k, *v, *o;
    sb_attn_ws ws;
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
    sb_attn_ws_free(&st->ws);
    free(st);
}

static int prefill_setup(const sb_params *p, const sb_ctx *ctx, void **state,
                         sb_err *err)
{
    prefill_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "attention.prefill: out of memory");
    st->s = prefill_shape(p);
    const sb_prefill_shape *s = &st->s;
    double nq = (double)s->batch * s->hq * s->sq * s->d;
    double nkv = (double)s->batch * s->hkv * s->skv * s->d;
    st->q = alloc_floats(nq);
    st->o = alloc_floats(nq);
    st->k = alloc_floats(nkv);
    st->v = alloc_floats(nkv);
    if (!st->q || !st->o || !st->k || !st->v) {
        prefill_teardown(st);
        return sb_fail(err, SB_ENOMEM, "attention.prefill: out of memory");
    }
    int rc = sb_cpu_prefill_ws(s, omp_get_max_threads(), &st->ws, err);
    if (rc) {
        prefill_teardown(st);
        return rc;
    }
    sb_attn_fill(st->q, (size_t)nq, seed_q);
    sb_attn_fill(st->k, (size_t)nkv, seed_k);
    sb_attn_fill(st->v, (size_t)nkv, seed_v);
    sb_attn_fill(st->o, (size_t)nq, seed_q + 1); /* first touch */
    *state = st;
    return 0;
}

static void prefill_run(void *state, uint64_t iters)
{
    prefill_state *st = state;
    for (uint64_t i = 0; i < iters; i++)
        sb_cpu_prefill(&st->s, st->q, st->k, st->v, st->o, &st->ws);
}

static int prefill_verify(void *state, sb_result *r)
{
    prefill_state *st = state;
    sb_attn_check c;
    sb_prefill_verify(&st->s, st->q, st->k, st->v, st->o, VERIFY_ROWS,
                      0x5eedULL, &c);
    sb_attn_check_report(r, &c, "|err| <= 1e-4 + 1e-3*|ref|");
    return 0;
}

static void prefill_report(void *state, const sb_params *p, sb_ctx *ctx,
                           sb_result *r)
{
    report_common(r, ctx, prefill_flops(p), prefill_bytes(p));
    double gemm = sb_ceil_get(&ctx->ceil, "gemm.fp32");
    const sb_metric *g = sb_result_get(r, "GFLOPs");
    if (gemm > 0 && g)
        sb_result_metric(r, "pct_gemm", 100.0 * g->value * 1e9 / gemm, "%");
}

const sb_bench sb_bench_attention_prefill = {
    .name = "attention.prefill",
    .area = "attention",
    .backend = "cpu",
    .desc = "flash-style prefill attention (online softmax, BLAS tiles), "
            "causal or not, MHA/GQA/MQA",
    .params = prefill_params,
    .quick = "batch=1 q_heads=8 kv_heads=2 head_dim=64 sq=512 causal=0,1",
    .full = "batch=1 q_heads=32 kv_heads=8 head_dim=128 sq=1024,4096 "
            "causal=0,1",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .check = prefill_check,
    .footprint = prefill_footprint,
    .flops = prefill_flops,
    .bytes = prefill_bytes,
    .setup = prefill_setup,
    .run = prefill_run,
    .verify = prefill_verify,
    .report = prefill_report,
    .teardown = prefill_teardown,
};

/* ==== attention.paged_decode ================================================= */

static const sb_param_def paged_params[] = {
    SB_PAGED_PARAMS,
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* Builds the shape of a point; the caller frees it. */

static double paged_pool_floats(const sb_paged_shape *s)
{
    return (double)s->total_pages * s->hkv * s->page_size * s->d;
}

static int paged_check(const sb_params *p, const sb_ctx *ctx, sb_err *err)
{
    sb_paged_shape s;
    int rc = sb_paged_shape_of(p, &s, err);
    if (rc)
        return rc;
    if (s.total_pages >= 2147483647LL)
        rc = sb_fail(err, SB_EINVAL, "attention.paged_decode: %lld pages "
                     "exceed the 32-bit page table (parameters lens, "
                     "page_size)", (long long)s.total_pages);
    sb_paged_shape_free(&s);
    return rc;
}




typedef struct paged_state {
    sb_paged_shape s;
    float *q, *kp, *vp, *o;
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

static int paged_setup(const sb_params *p, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
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
    st->kp = alloc_floats(npool > 0 ? npool : 1);
    st->vp = alloc_floats(npool > 0 ? npool : 1);
    st->q = alloc_floats(nq);
    st->o = alloc_floats(nq);
    st->table = sb_alloc_aligned((size_t)(s->total_pages + 1) * sizeof(int32_t));
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
    sb_attn_fill(st->kp, (size_t)(npool > 0 ? npool : 1), seed_k ^ seed);
    sb_attn_fill(st->vp, (size_t)(npool > 0 ? npool : 1), seed_v ^ seed);
    sb_attn_fill(st->q, (size_t)nq, seed_q ^ seed);
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
    sb_paged_verify(&st->s, st->q, st->kp, st->vp, st->table, st->o,
                    VERIFY_ROWS, 0x5eedULL, &c);
    sb_attn_check_report(r, &c, "|err| <= 1e-4 + 1e-3*|ref|");
    return 0;
}

static void paged_report(void *state, const sb_params *p, sb_ctx *ctx,
                         sb_result *r)
{
    paged_state *st = state;
    double flops = sb_paged_flops(&st->s), bytes = sb_paged_bytes(&st->s);
    report_common(r, ctx, flops, bytes);
    sb_result_metric(r, "sequences", (double)st->s.batch, "");
    sb_result_metric(r, "query_tokens", (double)st->s.total_q, "");
    sb_result_metric(r, "kv_cache", 8.0 * paged_pool_floats(&st->s), "B");
    if (r->stats.p50 > 0)
        sb_result_metric(r, "tokens_per_s", (double)st->s.total_q / r->stats.p50,
                         "tok/s");
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

const sb_bench sb_bench_attention_paged_decode = {
    .name = "attention.paged_decode",
    .area = "attention",
    .backend = "cpu",
    .desc = "ragged paged attention: shuffled KV page pool, ragged lengths, "
            "GQA decode tokens and optional prefill chunks",
    .params = paged_params,
    .quick = "batch=16 lens=uniform:1:2048 q_heads=32 kv_heads=8 "
             "head_dim=128 chunk=0,16",
    .full = "batch=64 lens=uniform:512:8192 q_heads=32 kv_heads=8 "
            "head_dim=128 chunk=0,64",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .check = paged_check,
    .footprint = sb_paged_footprint_of,
    .flops = sb_paged_flops_of,
    .bytes = sb_paged_bytes_of,
    .setup = paged_setup,
    .run = paged_run,
    .verify = paged_verify,
    .report = paged_report,
    .teardown = paged_teardown,
};
