/*
 * test_attention.c — the attention primitives: FLOP and byte formulas
 * against hand-computed values, the CPU kernels against the double
 * reference on random inputs (MHA, GQA, MQA, causal with Sq < Skv and
 * Sq > Skv, ragged paged batches with lengths 0, 1, not a multiple of the
 * page size, a single page, prefill chunks), planted wrong elements caught
 * by the verification, and bad parameters refused by check() with the
 * parameter named.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_point.h"
#include "check.h"
#include "solbench/util.h"

#include "backend/cpu/attn_cpu.h"
#include "solbench/attention.h"
#include "solbench/bench.h"
#include "solbench/runner.h"

/* ---- formulas ----------------------------------------------------------- */

static double pairs_brute(int64_t sq, int64_t skv, bool causal)
{
    double t = 0;
    for (int64_t i = 0; i < sq; i++)
        t += causal ? (double)sb_attn_causal_keys(i, sq, skv) : (double)skv;
    return t;
}

static void test_formulas(void)
{
    /* Causal pairs: closed form against the loop, all regimes. */
    static const int64_t cases[][2] = {
        {1, 1},   {4, 4},     {2, 5},     {5, 2},     {7, 100},
        {100, 7}, {128, 128}, {300, 517}, {517, 300}, {1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int c = 0; c < 2; c++)
            CHECK_NEAR(sb_attn_pairs(cases[i][0], cases[i][1], c),
                       pairs_brute(cases[i][0], cases[i][1], c), 0);
    CHECK_NEAR(sb_attn_pairs(4, 4, true), 10, 0); /* 1+2+3+4 */
    CHECK_NEAR(sb_attn_pairs(2, 5, true), 9, 0);  /* 4+5 */
    CHECK_NEAR(sb_attn_pairs(5, 2, true), 3, 0);  /* 0+0+0+1+2 */

    sb_bmm_shape b = {2, 3, 4, 5};
    CHECK_NEAR(sb_bmm_flops(&b), 240, 0);    /* 2*2*3*4*5 */
    CHECK_NEAR(sb_bmm_bytes(&b, 4), 376, 0); /* 2*(15+20+12)*4 */
    CHECK_NEAR(sb_bmm_bytes(&b, 2), 188, 0);

    sb_prefill_shape p = {1, 2, 1, 4, 4, 8, false};
    CHECK_NEAR(sb_prefill_flops(&p), 1024, 0); /* 4*1*2*4*4*8 */
    CHECK_NEAR(sb_prefill_bytes(&p), 768, 0);  /* 4*(2*64 + 2*32) */
    p.causal = true;
    CHECK_NEAR(sb_prefill_flops(&p), 640, 0); /* 4*2*8*10 */
    p.sq = 2;
    p.skv = 5;
    CHECK_NEAR(sb_prefill_flops(&p), 4.0 * 2 * 8 * 9, 0);

    int64_t len[4] = {0, 1, 17, 32};
    sb_paged_shape s;
    sb_err err;
    CHECK(sb_paged_shape_init(&s, 4, len, 4, 2, 8, 16, 0, 4, &err) == 0);
    CHECK(s.total_q == 4 && s.total_pages == 5 && s.total_keys == 50);
    CHECK(s.max_len == 32);
    CHECK_NEAR(sb_paged_flops(&s), 6400, 0); /* 4*4*8*50 */
    CHECK_NEAR(sb_paged_bytes(&s), 7444, 0); /* 4*(1600+256)+4*5 */
    sb_paged_shape_free(&s);
    /* Chunks of 8 on every second sequence: seq 0 (len 0) keeps one
     * query, seq 2 (len 17) has 8 queries seeing 10..17 keys. */
    CHECK(sb_paged_shape_init(&s, 4, len, 4, 2, 8, 16, 8, 2, &err) == 0);
    CHECK(s.total_q == 11);
    CHECK(sb_paged_qlen(&s, 2) == 8 && sb_paged_keys(&s, 2, 0) == 10);
    CHECK_NEAR(sb_paged_flops(&s), 4.0 * 4 * 8 * (0 + 1 + 108 + 32), 0);
    sb_paged_shape_free(&s);
}

static void test_lens_and_table(void)
{
    int64_t len[SB_PAGED_MAX_BATCH], batch;
    sb_err err;
    batch = 0;
    CHECK(sb_paged_parse_lens("1/17/300", &batch, 1, len, "lens", &err) == 0);
    CHECK(batch == 3 && len[0] == 1 && len[1] == 17 && len[2] == 300);
    batch = 5;
    CHECK(sb_paged_parse_lens("1/17/300", &batch, 1, len, "lens", &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "lens") != NULL);
    batch = 64;
    CHECK(sb_paged_parse_lens("uniform:3:9", &batch, 7, len, "lens", &err) ==
          0);
    int64_t lo = 100, hi = 0;
    for (int i = 0; i < 64; i++) {
        lo = len[i] < lo ? len[i] : lo;
        hi = len[i] > hi ? len[i] : hi;
    }
    CHECK(lo >= 3 && hi <= 9 && hi > lo);
    CHECK(sb_paged_parse_lens("uniform:9:3", &batch, 7, len, "lens", &err) ==
          SB_EINVAL);
    CHECK(sb_paged_parse_lens("lots", &batch, 7, len, "lens", &err) ==
          SB_EINVAL);

    int32_t t[200];
    sb_paged_shuffle_table(t, 200, 3);
    int seen[200] = {0}, fixed = 0;
    for (int i = 0; i < 200; i++) {
        if (t[i] >= 0 && t[i] < 200)
            seen[t[i]]++;
        fixed += t[i] == i;
    }
    int perm = 1;
    for (int i = 0; i < 200; i++)
        perm &= seen[i] == 1;
    CHECK(perm);
    CHECK(fixed < 20); /* shuffled, not contiguous */
}

/* ---- prefill ------------------------------------------------------------- */

/* Runs the CPU prefill on random inputs and checks every row; with
 * `plant` also checks that one wrong element is caught. Returns bad. */
/* The library and dtype the prefill cases run with (test_prefill runs
 * them on every library, and in bf16 where one runs it). */
static int g_lib = SB_GEMM_OPENBLAS, g_dt = SB_GEMM_F32;

/* bf16 copies of x, and x rounded to what they hold. */
static uint16_t *to_bf16(float *x, size_t n)
{
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; h && i < n; i++) {
        h[i] = sb_bf16_from_f32(x[i]);
        x[i] = sb_bf16_to_f32(h[i]);
    }
    return h;
}

static int64_t run_prefill(int64_t b, int64_t hq, int64_t hkv, int64_t sq,
                           int64_t skv, int64_t d, bool causal, float qscale,
                           bool plant)
{
    sb_prefill_shape s = {b, hq, hkv, sq, skv, d, causal};
    size_t nq = (size_t)(b * hq * sq * d), nk = (size_t)(b * hkv * skv * d);
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4),
          *o = malloc(nq * 4);
    sb_attn_fill(q, nq, 11);
    sb_attn_fill(k, nk, 12);
    sb_attn_fill(v, nk, 13);
    for (size_t i = 0; i < nq; i++)
        q[i] *= qscale;
    bool bf16 = g_dt == SB_GEMM_BF16;
    uint16_t *q16 = bf16 ? to_bf16(q, nq) : NULL;
    uint16_t *k16 = bf16 ? to_bf16(k, nk) : NULL;
    uint16_t *v16 = bf16 ? to_bf16(v, nk) : NULL;
    double atol = bf16 ? 2.0 / 256 : 0;
    sb_attn_ws ws;
    sb_err err;
    CHECK(sb_cpu_prefill_ws(&s, 2, g_lib, g_dt, &ws, &err) == 0);
    if (bf16)
        sb_cpu_prefill(&s, q16, k16, v16, o, &ws);
    else
        sb_cpu_prefill(&s, q, k, v, o, &ws);
    sb_attn_check c;
    sb_prefill_verify_tol(&s, q, k, v, o, 1 << 30, 1, atol, &c);
    CHECK(c.checked == (int64_t)nq);
    int64_t bad = c.bad;
    if (bad)
        fprintf(stderr,
                "prefill b=%lld hq=%lld hkv=%lld sq=%lld skv=%lld "
                "d=%lld causal=%d: %lld bad, max abs %g\n",
                (long long)b, (long long)hq, (long long)hkv, (long long)sq,
                (long long)skv, (long long)d, causal, (long long)c.bad,
                c.max_abs);
    /* Queries that see no key (causal, Sq > Skv) output zeros. */
    if (causal && sq > skv)
        CHECK(o[0] == 0.0f && o[d - 1] == 0.0f);
    if (plant) {
        size_t at = nq / 2 + 3;
        o[at] += bf16 ? 0.05f : 0.01f;
        sb_prefill_verify_tol(&s, q, k, v, o, 1 << 30, 1, atol, &c);
        CHECK(c.bad == 1 && c.first_bad == (int64_t)at);
        o[at] = NAN;
        sb_prefill_verify_tol(&s, q, k, v, o, 1 << 30, 1, atol, &c);
        CHECK(c.bad == 1);
    }
    if (bf16) /* how close bf16 P came, against the bound */
        printf("prefill bf16 %s sq=%lld skv=%lld: max abs error %.3g "
               "(bound %.3g)\n",
               sb_gemm_lib_name(g_lib), (long long)sq, (long long)skv,
               c.max_abs, atol);
    free(q16);
    free(k16);
    free(v16);
    sb_attn_ws_free(&ws);
    free(q);
    free(k);
    free(v);
    free(o);
    return bad;
}

static void test_prefill_cases(void)
{
    CHECK(run_prefill(1, 4, 4, 200, 200, 64, false, 1, true) == 0);  /* MHA */
    CHECK(run_prefill(2, 8, 2, 130, 130, 128, true, 1, false) == 0); /* GQA */
    CHECK(run_prefill(1, 4, 1, 257, 257, 64, false, 1, false) == 0); /* MQA */
    CHECK(run_prefill(1, 2, 1, 100, 517, 64, true, 1, true) == 0);   /* chunk */
    CHECK(run_prefill(1, 2, 2, 300, 40, 64, true, 1, false) == 0); /* Sq>Skv */
    CHECK(run_prefill(1, 2, 2, 1, 1, 128, true, 1, false) == 0);   /* 1 */
    CHECK(run_prefill(1, 1, 1, 1, 700, 40, false, 1, false) == 0); /* odd D */
    /* Large scores: the running max must keep exp() in range. */
    CHECK(run_prefill(1, 2, 1, 150, 600, 64, true, 30, false) == 0);
}

/* Every case on every library this machine has, fp32 and (where a
 * library runs it) bf16. */
static void test_prefill(void)
{
    int runs = 0;
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++)
        for (int dt = SB_GEMM_F32; dt <= SB_GEMM_BF16; dt++) {
            if (!sb_gemm_lib_supports(lib, dt, NULL, 0))
                continue;
            printf("prefill cases: %s %s\n", sb_gemm_lib_name(lib),
                   dt == SB_GEMM_BF16 ? "bf16" : "fp32");
            g_lib = lib;
            g_dt = dt;
            test_prefill_cases();
            runs++;
        }
    CHECK(runs >= 1);
    g_lib = SB_GEMM_OPENBLAS;
    g_dt = SB_GEMM_F32;
}

/* ---- paged --------------------------------------------------------------- */

/* The KV cache's element bytes the paged cases run with: 4 (fp32) or 2
 * (bf16, decoded as loaded; the reference reads the same bf16 values). */
static int g_kvb = 4;

/* kscale multiplies every K value: 1 for the usual scores, larger for
 * rows whose scores lie hundreds apart in base 2 (nearly one-hot). */
static int64_t run_paged_k(const int64_t *len, int64_t batch, int64_t hq,
                           int64_t hkv, int64_t d, int64_t ps, int64_t chunk,
                           bool plant, float kscale)
{
    sb_paged_shape s;
    sb_err err;
    CHECK(sb_paged_shape_init(&s, batch, len, hq, hkv, d, ps, chunk, 2, &err) ==
          0);
    size_t np = (size_t)((s.total_pages + 1) * hkv * ps * d);
    size_t nq = (size_t)(s.total_q * hq * d);
    float *kp = malloc(np * 4), *vp = malloc(np * 4), *q = malloc(nq * 4),
          *o = malloc(nq * 4);
    int32_t *t = malloc((size_t)(s.total_pages + 1) * 4);
    sb_paged_shuffle_table(t, s.total_pages, 5);
    sb_attn_fill(kp, np, 21);
    for (size_t i = 0; kscale != 1.0f && i < np; i++)
        kp[i] *= kscale;
    sb_attn_fill(vp, np, 22);
    sb_attn_fill(q, nq, 23);
    /* a bf16 cache: bf16 queries */
    for (size_t i = 0; g_kvb == 2 && i < nq; i++)
        q[i] = sb_bf16_to_f32(sb_bf16_from_f32(q[i]));
    for (size_t i = 0; i < nq; i++)
        o[i] = 99.0f; /* every element must be written */
    /* a bf16 cache: the same values rounded, in pools of half the bytes */
    s.kv_bytes = g_kvb;
    /* where the kernel attends in bf16 products, P is rounded to bf16:
     * the bound the benchmark checks, 2 x 2^-8; elsewhere the fp32 one */
    const double atol = sb_cpu_paged_bf16_products(&s) ? 2.0 / 256.0 : 0;
    void *kc = kp, *vc = vp;
    uint16_t *kh = NULL, *vh = NULL;
    if (g_kvb == 2) {
        kh = malloc(np * 2);
        vh = malloc(np * 2);
        for (size_t i = 0; i < np; i++) {
            kh[i] = sb_bf16_from_f32(kp[i]);
            vh[i] = sb_bf16_from_f32(vp[i]);
        }
        kc = kh;
        vc = vh;
    }
    sb_attn_ws ws;
    CHECK(sb_cpu_paged_ws(&s, 2, &ws, &err) == 0);
    sb_cpu_paged(&s, q, kc, vc, t, o, &ws);
    sb_attn_check c;
    sb_paged_verify_kv_tol(&s, q, kc, vc, g_kvb, t, o, 1 << 30, 1, atol, &c);
    CHECK(c.checked == (int64_t)nq);
    int64_t bad = c.bad;
    if (bad)
        fprintf(stderr,
                "paged batch=%lld hq=%lld hkv=%lld d=%lld ps=%lld "
                "chunk=%lld: %lld bad, max abs %g\n",
                (long long)batch, (long long)hq, (long long)hkv, (long long)d,
                (long long)ps, (long long)chunk, (long long)c.bad, c.max_abs);
    /* A sequence of length 0 outputs exactly zeros. */
    for (int64_t i = 0; i < batch; i++)
        if (len[i] == 0) {
            const float *row = o + s.cu_q[i] * hq * d;
            int zero = 1;
            for (int64_t x = 0; x < hq * d; x++)
                zero &= row[x] == 0.0f;
            CHECK(zero);
        }
    if (plant) {
        size_t at = nq - 5;
        o[at] -= 0.02f;
        sb_paged_verify_kv_tol(&s, q, kc, vc, g_kvb, t, o, 1 << 30, 1, atol,
                               &c);
        CHECK(c.bad == 1 && c.first_bad == (int64_t)at);
        /* The benchmark's sample of 64 rows reaches the batch's last
         * token (its last head): the edge rows run from the first token
         * to the last, not over the first 16 tokens only. */
        sb_paged_verify_kv_tol(&s, q, kc, vc, g_kvb, t, o, 64, 1, atol, &c);
        CHECK(c.bad == 1 && c.first_bad == (int64_t)at);
        /* 64 distinct rows of d elements, or every row when fewer */
        const int64_t rows = s.total_q * hq;
        CHECK(c.total == (int64_t)nq &&
              c.checked == (rows > 64 ? 64 * d : (int64_t)nq));
    }
    if (g_kvb == 2) {
        /* the fp32 reference over the rounded values agrees: decoding
         * bf16 is exact */
        for (size_t i = 0; i < np; i++) {
            kp[i] = sb_bf16_to_f32(kh[i]);
            vp[i] = sb_bf16_to_f32(vh[i]);
        }
        sb_paged_verify_kv_tol(&s, q, kp, vp, 4, t, o, 1 << 30, 1, atol, &c);
        CHECK(c.bad == (plant ? 1 : bad));
    }
    free(kh);
    free(vh);
    sb_attn_ws_free(&ws);
    sb_paged_shape_free(&s);
    free(kp);
    free(vp);
    free(q);
    free(o);
    free(t);
    return bad;
}

static int64_t run_paged(const int64_t *len, int64_t batch, int64_t hq,
                         int64_t hkv, int64_t d, int64_t ps, int64_t chunk,
                         bool plant)
{
    return run_paged_k(len, batch, hq, hkv, d, ps, chunk, plant, 1.0f);
}

static void test_paged(void)
{
    static const int64_t ragged[] = {0, 1, 15, 16, 17, 100, 333, 2};
    /* Decode, GQA, lengths 0 and 1 and not multiples of the page. */
    CHECK(run_paged(ragged, 8, 32, 8, 128, 16, 0, true) == 0);
    /* MQA: every query head shares one KV head; D = 64. */
    CHECK(run_paged(ragged, 8, 8, 1, 64, 16, 0, false) == 0);
    /* A single page per sequence, and a page larger than a block. */
    static const int64_t one_page[] = {5, 16, 1};
    CHECK(run_paged(one_page, 3, 4, 2, 64, 16, 0, false) == 0);
    CHECK(run_paged(ragged, 8, 4, 4, 64, 128, 0, false) == 0);
    /* Odd page sizes, and D = 40 (not a multiple of 16: column tails). */
    CHECK(run_paged(ragged, 8, 6, 3, 40, 7, 0, false) == 0);
    /* The 4-row P·V kernel with a key block of 8 plus 4 (pages of 12)
     * and a column tail (D = 40: 32 + 8). */
    CHECK(run_paged(ragged, 8, 8, 2, 40, 12, 5, false) == 0);
    /* D not a multiple of 8: the portable Q·Kᵀ and P·V loops, in GQA-4
     * decode (with a planted error) and with chunks of 5. */
    CHECK(run_paged(ragged, 8, 8, 2, 100, 16, 0, true) == 0);
    CHECK(run_paged(ragged, 8, 4, 1, 36, 7, 5, false) == 0);
    /* MHA (one query row per KV head) and chunks of 3: the leftover-row
     * kernels, D = 128 and 64. */
    CHECK(run_paged(ragged, 8, 8, 8, 128, 16, 3, true) == 0);
    CHECK(run_paged(ragged, 8, 2, 2, 64, 16, 0, false) == 0);
    CHECK(run_paged(ragged, 8, 4, 2, 64, 1, 0, false) == 0);
    /* Mixed batch: prefill chunks of 24 tokens (ragged query lengths,
     * causal within the chunk) beside decode tokens; rows span several
     * work items (24 x 4 > 64). */
    CHECK(run_paged(ragged, 8, 32, 8, 128, 16, 24, true) == 0);
    CHECK(run_paged(ragged, 8, 4, 1, 64, 16, 100, false) == 0);
    /* Few (sequence, KV head) items for the threads: key ranges split in
     * parts and merged (one long MQA sequence; a long chunked sequence
     * whose early rows see nothing in the last parts). */
    static const int64_t one_long[] = {3001};
    CHECK(run_paged(one_long, 1, 4, 1, 128, 16, 0, true) == 0);
    static const int64_t long_chunk[] = {2000, 5};
    CHECK(run_paged(long_chunk, 2, 2, 1, 64, 16, 100, true) == 0);
    /* Split parts that each take several KV heads (GQA decode, one long
     * sequence): the merge walks every head of the group. */
    CHECK(run_paged(one_long, 1, 16, 4, 128, 16, 0, true) == 0);
    /* Scores hundreds apart (K times 200): most exponentials fall below
     * 2^-127, where the exponential's lower clamp must make them 0 (the
     * exponent field wraps without it), in GQA-4 decode (the four-row
     * softmax) and in a chunk (the row at a time). */
    CHECK(run_paged_k(ragged, 8, 32, 8, 128, 16, 0, false, 200.0f) == 0);
    CHECK(run_paged_k(ragged, 8, 32, 8, 128, 16, 24, false, 200.0f) == 0);
}

/* The KV cache's element types: E4M3FN encoding (round to nearest even,
 * saturation, NaN), which the CUDA kernel's host reference uses to round
 * its K and V, and the bytes a KV dtype moves. */
static void test_kv_types(void)
{
    /* every finite code decodes and encodes back to itself */
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        float f = sb_e4m3_to_f32((uint8_t)c);
        if (isnan(f))
            continue;
        uint8_t back = sb_e4m3_from_f32(f);
        if (back != c && !(f == 0.0f && (back & 0x7f) == 0 && (c & 0x7f) == 0))
            bad++;
    }
    CHECK(bad == 0);
    /* ties to even: 1 + 1/16 lies between 1 (0x38) and 1.125 (0x39) */
    CHECK(sb_e4m3_from_f32(1.0625f) == 0x38);
    CHECK(sb_e4m3_from_f32(1.1875f) == 0x3a); /* 1.125 .. 1.25: to 1.25 */
    CHECK(sb_e4m3_from_f32(1.07f) == 0x39);
    /* subnormals (m/8 2^-6), the smallest normal, underflow to zero */
    CHECK(sb_e4m3_from_f32(ldexpf(3.0f, -9)) == 0x03);
    CHECK(sb_e4m3_from_f32(ldexpf(7.6f, -9)) == 0x08);
    CHECK(sb_e4m3_from_f32(ldexpf(1.0f, -11)) == 0x00);
    /* saturation at 448 (satfinite), NaN kept, the sign bit */
    CHECK(sb_e4m3_from_f32(1e6f) == 0x7e);
    CHECK(sb_e4m3_from_f32(-500.0f) == 0xfe);
    CHECK(sb_e4m3_from_f32(460.0f) == 0x7e);
    CHECK((sb_e4m3_from_f32(NAN) & 0x7f) == 0x7f);
    CHECK(sb_e4m3_from_f32(-1.0f) == 0xb8);
    /* nearest overall: no code is closer than the one chosen */
    for (int i = 0; i < 2000; i++) {
        float x = ldexpf((float)(i + 1) / 2000.0f, (i % 14) - 8);
        float got = sb_e4m3_to_f32(sb_e4m3_from_f32(x));
        for (int c = 0; c < 0x7f; c++)
            if (fabsf(sb_e4m3_to_f32((uint8_t)c) - x) < fabsf(got - x)) {
                bad++;
                break;
            }
    }
    CHECK(bad == 0);

    /* bytes: the KV cache's at the KV dtype, Q, O and the table at 4 */
    sb_params p;
    sb_err err = {0};
    memset(&p, 0, sizeof p);
    const char *set[][2] = {
        {"batch", "2"},    {"lens", "16/32"},    {"q_heads", "8"},
        {"kv_heads", "2"}, {"head_dim", "64"},   {"page_size", "16"},
        {"chunk", "0"},    {"chunk_every", "4"}, {"seed", "1"}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) {
        p.v[p.n].type = strcmp(set[i][0], "lens") == 0 ? SB_P_STR : SB_P_INT;
        snprintf(p.v[p.n].name, sizeof p.v[p.n].name, "%s", set[i][0]);
        snprintf(p.v[p.n].text, sizeof p.v[p.n].text, "%s", set[i][1]);
        p.v[p.n].num = atof(set[i][1]);
        p.n++;
    }
    sb_paged_shape s4, s2;
    CHECK(sb_paged_shape_of(&p, &s4, &err) == 0);
    CHECK(s4.kv_bytes == 4);
    p.v[p.n].type = SB_P_STR;
    snprintf(p.v[p.n].name, sizeof p.v[p.n].name, "kv_dtype");
    snprintf(p.v[p.n].text, sizeof p.v[p.n].text, "bf16");
    p.n++;
    CHECK(sb_paged_shape_of(&p, &s2, &err) == 0);
    CHECK(s2.kv_bytes == 2);
    double kv = 2.0 * (16 + 32) * 2 * 64, qo = 2.0 * 2 * 8 * 64;
    CHECK_NEAR(sb_paged_bytes(&s4), 4 * kv + 4 * qo + 4.0 * 3, 1e-12);
    CHECK_NEAR(sb_paged_bytes(&s2), 2 * kv + 4 * qo + 4.0 * 3, 1e-12);
    snprintf(p.v[p.n - 1].text, sizeof p.v[p.n - 1].text, "fp8");
    sb_paged_shape s1;
    CHECK(sb_paged_shape_of(&p, &s1, &err) == 0);
    CHECK(s1.kv_bytes == 1);
    sb_paged_shape_free(&s4);
    sb_paged_shape_free(&s2);
    sb_paged_shape_free(&s1);
}

/* Decode items take all KV heads of a sequence together (the page's rows
 * of consecutive heads are adjacent), and rows of a long prefill chunk,
 * whose running state is large, one head at a time; every (sequence, KV
 * head, row) is covered exactly once. */
static void test_head_groups(void)
{
    int64_t len[3] = {40, 300, 7};
    sb_paged_shape s;
    sb_err err;
    /* batch 3, 32 query heads, 8 KV heads, D 128, pages of 16; a chunk
     * of 20 query tokens every 4th sequence: sequence 0 only (80 rows: a
     * tile of 64 and one of 16), the others decode (4 rows). */
    CHECK(sb_paged_shape_init(&s, 3, len, 32, 8, 128, 16, 20, 4, &err) == 0);
    sb_attn_ws ws;
    CHECK(sb_cpu_paged_ws(&s, 1, &ws, &err) == 0);
    int64_t rows[3][8] = {{0}};
    int multi = 0, single = 0;
    for (int64_t i = 0; i < ws.n_items; i++) {
        const int64_t *it = ws.items + SB_PAGED_ITEM_W * i;
        int64_t b = it[0], h0 = it[1], r0 = it[2], r1 = it[3], h1 = it[8];
        CHECK(b >= 0 && b < 3 && h0 >= 0 && h0 < h1 && h1 <= 8);
        /* one thread, enough items: no split, all keys the rows see */
        CHECK(it[4] == 0 && it[5] == sb_paged_keys(&s, b, (r1 - 1) / 4));
        CHECK(it[6] == -1);
        multi += h1 - h0 > 1;
        single += r1 - r0 == 64 && h1 - h0 == 1;
        for (int64_t h = h0; h < h1; h++)
            rows[b][h] += r1 - r0;
    }
    /* decode sequences: one item of all 8 heads each; the chunk's 64-row
     * tile: one head per item */
    CHECK(multi >= 2 && single == 8);
    for (int64_t b = 0; b < 3; b++)
        for (int64_t h = 0; h < 8; h++)
            CHECK(rows[b][h] == 4 * sb_paged_qlen(&s, b));
    sb_attn_ws_free(&ws);
    sb_paged_shape_free(&s);
}

/* The split is planned as described: one long sequence and one KV head
 * become several parts over disjoint key ranges that cover all keys. */
static void test_split_plan(void)
{
    int64_t len[1] = {3001};
    sb_paged_shape s;
    sb_err err;
    CHECK(sb_paged_shape_init(&s, 1, len, 4, 1, 128, 16, 0, 4, &err) == 0);
    sb_attn_ws ws;
    CHECK(sb_cpu_paged_ws(&s, 2, &ws, &err) == 0);
    CHECK(ws.n_groups == 1 && ws.n_items > 1);
    int64_t covered = 0;
    for (int64_t i = 0; i < ws.n_items; i++)
        covered += ws.items[SB_PAGED_ITEM_W * i + 5] -
                   ws.items[SB_PAGED_ITEM_W * i + 4];
    CHECK(covered == 3001);
    sb_attn_ws_free(&ws);
    sb_paged_shape_free(&s);
}

/* ---- bmm ----------------------------------------------------------------- */

static void test_bmm(void)
{
    sb_bmm_shape s = {3, 37, 29, 65};
    size_t na = 3 * 37 * 65, nb = 3 * 65 * 29, nc = 3 * 37 * 29;
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4);
    sb_attn_fill(a, na, 1);
    sb_attn_fill(b, nb, 2);
    sb_attn_check r;
    /* Every library, batch-parallel (3 >= threads) and one by one. */
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++) {
        if (!sb_gemm_lib_supports(lib, SB_GEMM_F32, NULL, 0))
            continue;
        for (int threads = 1; threads <= 4; threads += 3) {
            omp_set_num_threads(threads);
            sb_gemm_desc d = {
                .dt = SB_GEMM_F32, .m = 37, .n = 29, .k = 65, .alpha = 1};
            sb_gemm_plan *pl = NULL;
            sb_err err;
            CHECK(sb_gemm_plan_create(lib, &d, 4, &pl, &err) == 0);
            if (!pl)
                continue;
            memset(c, 0, nc * 4);
            sb_cpu_bmm(&s, pl, a, b, c);
            sb_bmm_verify(&s, a, b, c, 1 << 30, 1, &r);
            CHECK(r.checked == (int64_t)nc && r.bad == 0);
            sb_gemm_plan_destroy(pl);
        }
    }
    omp_set_num_threads(2);
    sb_bmm_verify(&s, a, b, c, 1 << 30, 1, &r);
    CHECK(r.checked == (int64_t)nc && r.bad == 0);
    c[nc - 1] *= 1.001f;
    c[nc - 1] += 0.001f;
    sb_bmm_verify(&s, a, b, c, 1 << 30, 1, &r);
    CHECK(r.bad == 1 && r.first_bad == (int64_t)nc - 1);
    /* Sampled verification finds a whole wrong matrix. */
    memset(c, 0, nc / 3 * 4);
    sb_bmm_verify(&s, a, b, c, 64, 9, &r);
    CHECK(r.checked == 64 && r.bad > 0);
    free(a);
    free(b);
    free(c);

    CHECK(sb_bf16_from_f32(1.0f) == 0x3f80);
    CHECK(sb_bf16_to_f32(0x3f80) == 1.0f);
    CHECK(sb_bf16_from_f32(1.00390625f) == 0x3f80); /* tie rounds to even */
    CHECK(sb_bf16_from_f32(1.01171875f) == 0x3f82); /* tie rounds to even */
    CHECK(fabsf(sb_bf16_to_f32(sb_bf16_from_f32(3.14159f)) - 3.14159f) < 0.01f);
}

/* ---- the benchmarks through the registry --------------------------------- */

static void expect_refused(const char *bench, const char *spec,
                           const char *name)
{
    const sb_bench *b = sb_bench_find(bench, NULL);
    CHECK(b != NULL);
    if (!b)
        return;
    sb_params p;
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    sb_err err;
    memset(&err, 0, sizeof err);
    bool planned = sb_test_point(b, spec, &p, &err) == 0;
    CHECK(planned);
    if (!planned)
        return;
    CHECK(sb_test_check(b, &p, &ctx, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, name) != NULL);
    if (!strstr(err.msg, name))
        fprintf(stderr, "message for %s %s: %s\n", bench, spec, err.msg);
}

static void run_bench(const char *bench, const char *spec)
{
    const sb_bench *b = sb_bench_find(bench, NULL);
    CHECK(b != NULL);
    if (!b)
        return;
    sb_params p;
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    sb_err err;
    bool planned = sb_test_point(b, spec, &p, &err) == 0;
    CHECK(planned);
    if (!planned)
        return;
    CHECK(sb_test_check(b, &p, &ctx, &err) == 0);
    CHECK(sb_test_flops(b, &p) > 0 && sb_test_bytes(b, &p) > 0);
    sb_test_run_valid(b, &p, &ctx, 2);
}

static void test_benches(void)
{
    expect_refused("attention.prefill", "q_heads=8 kv_heads=3", "kv_heads");
    expect_refused("attention.prefill", "kv_heads=0", "kv_heads");
    expect_refused("attention.paged_decode", "kv_heads=5", "kv_heads");
    expect_refused("attention.paged_decode", "page_size=0", "page_size");
    expect_refused("attention.paged_decode", "lens=uniform:5:1", "lens");
    expect_refused("attention.paged_decode", "lens=1/2/3 batch=4", "lens");

    run_bench("attention.prefill",
              "q_heads=4 kv_heads=2 sq=96 skv=160 head_dim=64 causal=1");
    run_bench("attention.paged_decode", "batch=0 lens=0/1/17/40 q_heads=8 "
                                        "kv_heads=2 head_dim=64 chunk=8");
    run_bench("attention.bmm", "batch=3 shape=pv seq=64 head_dim=32");
    /* Each library by name where it runs; bf16 where one runs it. */
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++) {
        char spec[160];
        if (sb_gemm_lib_supports(lib, SB_GEMM_F32, NULL, 0)) {
            snprintf(spec, sizeof spec,
                     "batch=2 shape=qk seq=48 head_dim=32 "
                     "lib=%s",
                     sb_gemm_lib_name(lib));
            run_bench("attention.bmm", spec);
            snprintf(spec, sizeof spec,
                     "q_heads=2 kv_heads=1 sq=70 "
                     "head_dim=32 causal=1 lib=%s",
                     sb_gemm_lib_name(lib));
            run_bench("attention.prefill", spec);
        }
        if (sb_gemm_lib_supports(lib, SB_GEMM_BF16, NULL, 0)) {
            snprintf(spec, sizeof spec,
                     "batch=2 shape=pv seq=48 head_dim=32 "
                     "dtype=bf16 lib=%s",
                     sb_gemm_lib_name(lib));
            run_bench("attention.bmm", spec);
            snprintf(spec, sizeof spec,
                     "q_heads=2 kv_heads=1 sq=70 "
                     "head_dim=32 causal=1 dtype=bf16 lib=%s",
                     sb_gemm_lib_name(lib));
            run_bench("attention.prefill", spec);
        }
    }
    /* A library that cannot run the point: set-up says unsupported. */
    if (!sb_gemm_lib_supports(SB_GEMM_OPENBLAS, SB_GEMM_BF16, NULL, 0)) {
        const sb_bench *b = sb_bench_find("attention.bmm", NULL);
        sb_params p;
        sb_ctx ctx;
        sb_ctx_defaults(&ctx);
        sb_err err;
        void *st = NULL;
        CHECK(sb_test_point(b, "dtype=bf16 lib=openblas seq=32 head_dim=16", &p,
                            &err) == 0);
        CHECK(sb_test_setup(b, &p, &ctx, &st, &err) == SB_EUNSUP && st == NULL);
        CHECK(strstr(err.msg, "unsupported: openblas bf16") != NULL);
    }
}

/* The copy of the kernels this test was built with runs the path it was
 * built for (tests/attention.cmake). */
static void test_isa(void)
{
#if defined(SB_TEST_ATTN_V16EMU)
    const char *want = "v16emu";
#elif defined(SB_TEST_ATTN_PORTABLE) || !(defined(__AVX2__) && defined(__FMA__))
    const char *want = "portable";
#elif defined(SB_TEST_ATTN_AVX2) || !defined(__AVX512F__)
    const char *want = "avx2";
#elif defined(__AVX512BF16__)
    const char *want = "avx512+bf16";
#else
    const char *want = "avx512";
#endif
    printf("attention kernels: %s\n", sb_attn_cpu_isa());
    CHECK(strcmp(sb_attn_cpu_isa(), want) == 0);
}

int main(void)
{
    test_isa();
    test_formulas();
    test_lens_and_table();
    test_prefill();
    test_paged();
    printf("paged cases: bf16 KV cache\n");
    g_kvb = 2;
    test_paged();
    g_kvb = 4;
    test_kv_types();
    test_split_plan();
    test_head_groups();
    test_bmm();
    test_benches();
    return sb_check_done();
}
