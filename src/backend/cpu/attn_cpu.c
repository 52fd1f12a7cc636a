/*
 * attn_cpu.c — CPU kernels of the attention primitives (definitions in
 * include/solbench/attention.h).
 *
 * Prefill is flash-style: each (batch, head, tile of SB_PREFILL_BR queries)
 * is one OpenMP work item that walks the keys in blocks of SB_PREFILL_BC,
 * computes S = Q·Kᵀ with the GEMM library's plan for that tile shape
 * (cpu_gemm.h: OpenBLAS or oneDNN; fp32, or bf16 with fp32 accumulation),
 * updates a running max and sum per row (online softmax, scores kept in
 * base 2 so one exp2 per score) and adds P·V into the output rows with a
 * second plan (for bf16, P rounded to bf16 first). The library runs single
 * threaded inside our parallel region. Causal masking is applied only to
 * the blocks that cross the diagonal; blocks past it are never computed.
 *
 * Paged decode is memory-bound with small products (a few query rows per KV
 * head), where a BLAS call costs more than the work, so it has its own
 * AVX2/FMA micro-kernels: 4 query rows x 2 keys for Q·Kᵀ (dot products
 * reduced with hadd), 4 rows x 24 columns for P·V, with scalar loops as the
 * portable path. Each work item is one (sequence, KV head, tile of query
 * rows): all query heads of a KV head share every K and V row it loads,
 * so the pool is read once per iteration.
 */
#include "backend/cpu/attn_cpu.h"
#include "backend/cpu/vexp.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define SB_ATTN_AVX2 1
#endif

#include "solbench/util.h"

/* ---- small helpers ------------------------------------------------------- */

static inline int64_t imin(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
static inline int64_t iclamp(int64_t x, int64_t lo, int64_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* 2^x for x in [-126, 127], written so `omp simd` vectorises it: round to
 * the nearest integer with the 1.5·2^23 trick, a degree-7 Taylor polynomial
 * of 2^f on |f| <= 0.5 (truncation error < 1e-8, below fp32 rounding) and
 * the exponent added through the bits. */
static inline float sb__exp2f(float x)
{
    x = x < -126.0f ? -126.0f : (x > 127.0f ? 127.0f : x);
    float tj = x + 12582912.0f; /* its low mantissa bits hold round(x) */
    float j = tj - 12582912.0f;
    float f = x - j;
    float p = 1.525273380405984e-05f;
    p = p * f + 1.5403530393381606e-04f;
    p = p * f + 1.3333558146428443e-03f;
    p = p * f + 9.618129107628477e-03f;
    p = p * f + 5.550410866482158e-02f;
    p = p * f + 2.402265069591007e-01f;
    p = p * f + 6.931471805599453e-01f;
    p = p * f + 1.0f;
    /* 2^j from the bits of the shifted sum: no float-to-int conversion,
     * which a NaN would make undefined (a NaN stays NaN through p). */
    uint32_t bits;
    memcpy(&bits, &tj, sizeof bits);
    bits = (bits + 127u) << 23;
    float sc;
    memcpy(&sc, &bits, sizeof sc);
    return p * sc;
}

/* One row of the online softmax over a block of n scores (base-2, already
 * scaled), of which the first lim are visible. Overwrites the row with the
 * unnormalised probabilities (0 where masked), and rescales the output row
 * when the running max grows. */
static inline void softmax_row(float *row, int64_t lim, int64_t n, float *m,
                               float *l, float *orow, int64_t d)
{
    if (lim <= 0) {
        memset(row, 0, (size_t)n * sizeof *row);
        return;
    }
    float mx = -INFINITY, sum = 0.0f;
    int64_t x = 0;
#ifdef SB_ATTN_AVX2
    __m256 vmx = _mm256_set1_ps(-INFINITY);
    for (; x + 8 <= lim; x += 8)
        vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(row + x));
    float lanes[8];
    _mm256_storeu_ps(lanes, vmx);
    for (int i = 0; i < 8; i++)
        mx = lanes[i] > mx ? lanes[i] : mx;
#endif
    for (; x < lim; x++)
        mx = row[x] > mx ? row[x] : mx;
    float mold = *m, mnew = mx > mold ? mx : mold;
    x = 0;
#ifdef SB_ATTN_AVX2
    __m256 vm = _mm256_set1_ps(mnew), vs = _mm256_setzero_ps();
    for (; x + 8 <= lim; x += 8) {
        __m256 e = sb_vexp2(_mm256_sub_ps(_mm256_loadu_ps(row + x), vm));
        _mm256_storeu_ps(row + x, e);
        vs = _mm256_add_ps(vs, e);
    }
    _mm256_storeu_ps(lanes, vs);
    for (int i = 0; i < 8; i++)
        sum += lanes[i];
#endif
    for (; x < lim; x++) {
        float e = sb__exp2f(row[x] - mnew);
        row[x] = e;
        sum += e;
    }
    for (x = lim; x < n; x++)
        row[x] = 0.0f;
    if (mold != -INFINITY && mold != mnew) {
        float corr = sb__exp2f(mold - mnew);
        *l *= corr;
#pragma omp simd
        for (int64_t c = 0; c < d; c++)
            orow[c] *= corr;
    }
    *l += sum;
    *m = mnew;
}

/* ---- batched matmul ------------------------------------------------------ */

void sb_cpu_bmm(const sb_bmm_shape *s, sb_gemm_plan *plan, const void *a,
                const void *b, float *c)
{
    const size_t es = sb_gemm_plan_desc(plan)->dt == SB_GEMM_BF16 ? 2 : 4;
    const size_t sa = (size_t)(s->m * s->k) * es,
                 sb = (size_t)(s->k * s->n) * es;
    const size_t sc = (size_t)(s->m * s->n);
    const char *ab = a, *bb = b;
    if (s->batch >= omp_get_max_threads()) {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < s->batch; i++)
            sb_gemm_run(plan, omp_get_thread_num(), ab + (size_t)i * sa,
                        bb + (size_t)i * sb, c + (size_t)i * sc);
    } else {
        for (int64_t i = 0; i < s->batch; i++)
            sb_gemm_run(plan, 0, ab + (size_t)i * sa, bb + (size_t)i * sb,
                        c + (size_t)i * sc);
    }
}

/* ---- workspaces
 * -------------------------------------------------------------- */

static int64_t round16(int64_t n)
{
    return (n + 15) / 16 * 16;
}

static int ws_alloc(sb_attn_ws *ws, int nthreads, int64_t per_thread,
                    sb_err *err)
{
    ws->nthreads = nthreads < 1 ? 1 : nthreads;
    ws->per_thread = round16(per_thread);
    ws->buf = sb_alloc_aligned((size_t)ws->nthreads * (size_t)ws->per_thread *
                               sizeof(float));
    if (!ws->buf)
        return sb_fail(err, SB_ENOMEM,
                       "attention: workspace allocation failed");
    memset(ws->buf, 0,
           (size_t)ws->nthreads * (size_t)ws->per_thread * sizeof(float));
    return 0;
}

/* The tile shapes (query rows, keys) one prefill multiplies: a full
 * tile's and the edges' (the last query tile, the last key block of each
 * tile; under a causal mask each tile ends at its own key). */
static int prefill_shapes(const sb_prefill_shape *s, int64_t **out)
{
    const int64_t BR = SB_PREFILL_BR, BC = SB_PREFILL_BC;
    const int64_t ntile = (s->sq + BR - 1) / BR;
    int64_t *sh = malloc((size_t)(2 * (ntile + 1) * 2) * sizeof *sh);
    if (!sh)
        return -1;
    int n = 0;
    for (int64_t tile = 0; tile < ntile; tile++) {
        int64_t i0 = tile * BR, m = imin(BR, s->sq - i0);
        int64_t kend =
            s->causal ? sb_attn_causal_keys(i0 + m - 1, s->sq, s->skv) : s->skv;
        int64_t cols[2] = {imin(BC, kend), kend % BC ? kend % BC : BC};
        for (int c = 0; c < 2; c++) {
            if (kend <= 0)
                continue;
            bool seen = false;
            for (int j = 0; j < n && !seen; j++)
                seen = sh[2 * j] == m && sh[2 * j + 1] == cols[c];
            if (!seen) {
                sh[2 * n] = m;
                sh[2 * n + 1] = cols[c];
                n++;
            }
        }
    }
    *out = sh;
    return n;
}

int sb_cpu_prefill_ws(const sb_prefill_shape *s, int nthreads, int lib, int dt,
                      sb_attn_ws *ws, sb_err *err)
{
    memset(ws, 0, sizeof *ws);
    const int64_t BR = SB_PREFILL_BR, BC = SB_PREFILL_BC;
    ws->dt = dt;
    int64_t *sh = NULL;
    int n = prefill_shapes(s, &sh);
    if (n < 0)
        return sb_fail(err, SB_ENOMEM, "attention: out of memory");
    ws->n_plans = n;
    ws->plan_shape = sh;
    ws->qk = calloc((size_t)(n > 0 ? n : 1), sizeof *ws->qk);
    ws->pv = calloc((size_t)(n > 0 ? n : 1), sizeof *ws->pv);
    if (!ws->qk || !ws->pv) {
        sb_attn_ws_free(ws);
        return sb_fail(err, SB_ENOMEM, "attention: out of memory");
    }
    /* S = alpha Q Kᵀ (scores in base 2), then O += P V. */
    const float alpha = (float)(1.4426950408889634 / sqrt((double)s->d));
    for (int i = 0; i < n; i++) {
        int64_t m = sh[2 * i], cols = sh[2 * i + 1];
        sb_gemm_desc qk = {.dt = dt,
                           .m = m,
                           .n = cols,
                           .k = s->d,
                           .lda = s->d,
                           .ldb = s->d,
                           .ldc = BC,
                           .trans_b = true,
                           .alpha = alpha,
                           .beta = 0};
        sb_gemm_desc pv = {.dt = dt,
                           .m = m,
                           .n = s->d,
                           .k = cols,
                           .lda = BC,
                           .ldb = s->d,
                           .ldc = s->d,
                           .alpha = 1,
                           .beta = 1};
        int rc = sb_gemm_plan_create(lib, &qk, nthreads, &ws->qk[i], err);
        if (rc == 0)
            rc = sb_gemm_plan_create(lib, &pv, nthreads, &ws->pv[i], err);
        if (rc) {
            sb_attn_ws_free(ws);
            return rc;
        }
    }
    /* S and the row max and sum; for bf16, P rounded to bf16 beside. */
    int64_t per = BR * BC + 2 * BR + (dt == SB_GEMM_BF16 ? BR * BC / 2 : 0);
    int rc = ws_alloc(ws, nthreads, per, err);
    if (rc)
        sb_attn_ws_free(ws);
    return rc;
}

static int64_t paged_block_keys(int64_t page_size)
{
    return page_size >= SB_PAGED_KB ? page_size
                                    : (SB_PAGED_KB / page_size) * page_size;
}

/* Work items sorted by cost (rows x keys), heaviest first, so the dynamic
 * schedule does not end on one long sequence. An item is (sequence, KV
 * heads [h0, h1), rows [r0, r1), keys [k0, k1), scratch offset, cost). */
#define ITEM_W SB_PAGED_ITEM_W
#define GROUP_W 7
/* Fewer base items than this many per thread: split the key ranges. */
#define SPLIT_ITEMS_PER_THREAD 4
/* No split part is shorter than this many keys. */
#define SPLIT_MIN_KEYS 256
/* Running state (scaled Q, output, max, sum) of the KV heads one item
 * walks together, at most this many bytes: small enough to stay in L1/L2
 * beside the pages streaming through. */
#define HEADS_STATE_BYTES 65536

static int item_cmp(const void *pa, const void *pb)
{
    const int64_t *a = pa, *b = pb;
    return a[7] < b[7] ? 1 : (a[7] > b[7] ? -1 : 0);
}

/* Floats of running state per KV head for R rows: Q, O, max, sum. */
static int64_t head_state(int64_t R, int64_t d)
{
    return R * (2 * d + 2);
}

/* KV heads one item walks together for R rows: as many as the state
 * budget holds (at least one). A page holds the rows of all KV heads of
 * its tokens back to back ([page][kv_head][slot][D]), so an item that
 * takes every head of a page in turn reads K and V as runs of
 * hkv·page_size·D values; an item of one head jumps to another page every
 * page_size·D values, and random jumps of 8 KiB held even a plain read to
 * ~0.8 of a sequential one on Zen 3 (docs/PRIMITIVES.md). */
static int64_t heads_per_item(const sb_paged_shape *s, int64_t R)
{
    int64_t per = head_state(R, s->d) * (int64_t)sizeof(float);
    int64_t n = HEADS_STATE_BYTES / (per > 0 ? per : 1);
    return n < 1 ? 1 : (n > s->hkv ? s->hkv : n);
}

int sb_cpu_paged_ws(const sb_paged_shape *s, int nthreads, sb_attn_ws *ws,
                    sb_err *err)
{
    memset(ws, 0, sizeof *ws);
    int nth = nthreads < 1 ? 1 : nthreads;
    int64_t kb = paged_block_keys(s->page_size);
    int64_t rt = SB_PAGED_RT, g = s->hq / s->hkv, d = s->d;
    int64_t nbase = 0, state = 0;
    for (int64_t i = 0; i < s->batch; i++) {
        int64_t rows = sb_paged_qlen(s, i) * g;
        for (int64_t r0 = 0; r0 < rows; r0 += rt) {
            int64_t R = imin(rows, r0 + rt) - r0, hg = heads_per_item(s, R);
            nbase += (s->hkv + hg - 1) / hg;
            if (hg * head_state(R, d) > state)
                state = hg * head_state(R, d);
        }
    }
    int rc = ws_alloc(ws, nth, state + rt * kb, err);
    if (rc)
        return rc;
    int64_t target = (int64_t)SPLIT_ITEMS_PER_THREAD * nth;
    int64_t want =
        nbase < target && nbase > 0 ? (target + nbase - 1) / nbase : 1;
    int64_t min_keys = (SPLIT_MIN_KEYS + kb - 1) / kb * kb;

    /* Two passes: count items, groups and scratch, then fill. */
    int64_t nitems = 0, ngroups = 0, nscratch = 0;
    for (int pass = 0; pass < 2; pass++) {
        nitems = ngroups = nscratch = 0;
        for (int64_t i = 0; i < s->batch; i++) {
            int64_t rows = sb_paged_qlen(s, i) * g;
            for (int64_t r0 = 0; r0 < rows; r0 += rt) {
                int64_t r1 = imin(rows, r0 + rt), R = r1 - r0;
                int64_t hg = heads_per_item(s, R);
                for (int64_t h0 = 0; h0 < s->hkv; h0 += hg) {
                    int64_t h1 = imin(s->hkv, h0 + hg), nh = h1 - h0;
                    int64_t kmax = sb_paged_keys(s, i, (r1 - 1) / g);
                    int64_t parts =
                        imin(want, (kmax + min_keys - 1) / min_keys);
                    int64_t chunk = kmax;
                    if (parts > 1) {
                        chunk = (kmax + parts - 1) / parts;
                        chunk = (chunk + kb - 1) / kb * kb;
                        parts = (kmax + chunk - 1) / chunk;
                    }
                    if (parts < 1)
                        parts = 1;
                    int64_t off = parts > 1 ? nscratch : -1;
                    int64_t per_part = nh * R * (d + 2);
                    if (pass == 1 && parts > 1) {
                        int64_t *gr = ws->groups + GROUP_W * ngroups;
                        gr[0] = i;
                        gr[1] = h0;
                        gr[2] = r0;
                        gr[3] = r1;
                        gr[4] = off;
                        gr[5] = parts;
                        gr[6] = h1;
                    }
                    for (int64_t p = 0; p < parts; p++) {
                        if (pass == 1) {
                            int64_t *it = ws->items + ITEM_W * nitems;
                            it[0] = i;
                            it[1] = h0;
                            it[2] = r0;
                            it[3] = r1;
                            it[4] = parts > 1 ? p * chunk : 0;
                            it[5] =
                                parts > 1 ? imin(kmax, (p + 1) * chunk) : kmax;
                            it[6] = parts > 1 ? off + p * per_part : -1;
                            it[7] = nh * R * (it[5] - it[4] + 1);
                            it[8] = h1;
                        }
                        nitems++;
                    }
                    if (parts > 1) {
                        ngroups++;
                        nscratch += parts * per_part;
                    }
                }
            }
        }
        if (pass == 0) {
            ws->items = malloc((size_t)(nitems > 0 ? nitems : 1) * ITEM_W *
                               sizeof(int64_t));
            ws->groups = malloc((size_t)(ngroups > 0 ? ngroups : 1) * GROUP_W *
                                sizeof(int64_t));
            ws->scratch =
                nscratch > 0
                    ? sb_alloc_aligned((size_t)nscratch * sizeof(float))
                    : NULL;
            if (!ws->items || !ws->groups || (nscratch > 0 && !ws->scratch)) {
                sb_attn_ws_free(ws);
                return sb_fail(err, SB_ENOMEM, "attention: out of memory");
            }
        }
    }
    ws->n_items = nitems;
    ws->n_groups = ngroups;
    qsort(ws->items, (size_t)nitems, ITEM_W * sizeof(int64_t), item_cmp);
    return 0;
}

void sb_attn_ws_free(sb_attn_ws *ws)
{
    for (int i = 0; i < ws->n_plans; i++) {
        if (ws->qk)
            sb_gemm_plan_destroy(ws->qk[i]);
        if (ws->pv)
            sb_gemm_plan_destroy(ws->pv[i]);
    }
    free(ws->qk);
    free(ws->pv);
    free(ws->plan_shape);
    sb_free_aligned(ws->buf);
    sb_free_aligned(ws->scratch);
    free(ws->items);
    free(ws->groups);
    memset(ws, 0, sizeof *ws);
}

/* ---- prefill
 * ------------------------------------------------------------------ */

/* The plan index of tile shape (m, cols): a short linear search, once
 * per block, beside a block's two matrix products. */
static int prefill_plan(const sb_attn_ws *ws, int64_t m, int64_t cols)
{
    for (int i = 0; i < ws->n_plans; i++)
        if (ws->plan_shape[2 * i] == m && ws->plan_shape[2 * i + 1] == cols)
            return i;
    return -1;
}

void sb_cpu_prefill(const sb_prefill_shape *s, const void *q, const void *k,
                    const void *v, float *o, const sb_attn_ws *ws)
{
    const int64_t hq = s->hq, hkv = s->hkv, sq = s->sq, skv = s->skv;
    const int64_t d = s->d, g = hq / hkv;
    const int64_t BR = SB_PREFILL_BR, BC = SB_PREFILL_BC;
    const int64_t ntile = (sq + BR - 1) / BR;
    const int64_t items = s->batch * hq * ntile;
    const bool causal = s->causal, bf16 = ws->dt == SB_GEMM_BF16;
    const size_t es = bf16 ? 2 : 4;
    const char *qb = q, *kb0 = k, *vb0 = v;

#pragma omp parallel num_threads(ws->nthreads)
    {
        const int slot = omp_get_thread_num();
        float *S = ws->buf + (int64_t)slot * ws->per_thread;
        float *mrow = S + BR * BC, *lrow = mrow + BR;
        uint16_t *P16 = (uint16_t *)(lrow + BR);
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < items; it++) {
            /* Last query tiles first: under a causal mask they are the
             * longest. */
            int64_t tile = ntile - 1 - it % ntile, bh = it / ntile;
            int64_t b = bh / hq, kvh = (bh % hq) / g;
            int64_t i0 = tile * BR, m = imin(BR, sq - i0);
            const char *qt = qb + (size_t)((bh * sq + i0) * d) * es;
            float *ot = o + (bh * sq + i0) * d;
            const char *kb = kb0 + (size_t)((b * hkv + kvh) * skv * d) * es;
            const char *vb = vb0 + (size_t)((b * hkv + kvh) * skv * d) * es;
            int64_t kend =
                causal ? sb_attn_causal_keys(i0 + m - 1, sq, skv) : skv;
            memset(ot, 0, (size_t)(m * d) * sizeof *ot);
            for (int64_t r = 0; r < m; r++) {
                mrow[r] = -INFINITY;
                lrow[r] = 0.0f;
            }
            for (int64_t j0 = 0; j0 < kend; j0 += BC) {
                int64_t n = imin(BC, kend - j0);
                int pl = prefill_plan(ws, m, n);
                sb_gemm_run(ws->qk[pl], slot, qt, kb + (size_t)(j0 * d) * es,
                            S);
                for (int64_t r = 0; r < m; r++) {
                    int64_t lim = n;
                    if (causal)
                        lim = iclamp(sb_attn_causal_keys(i0 + r, sq, skv) - j0,
                                     0, n);
                    softmax_row(S + r * BC, lim, n, &mrow[r], &lrow[r],
                                ot + r * d, d);
                }
                const void *P = S;
                if (bf16) {
                    /* P V in bf16 as the tensor-core kernels do: P
                     * rounded to bf16 (the sum l stays the fp32 one). */
                    for (int64_t r = 0; r < m; r++)
#pragma omp simd
                        for (int64_t x = 0; x < n; x++)
                            P16[r * BC + x] = sb_bf16_from_f32(S[r * BC + x]);
                    P = P16;
                }
                sb_gemm_run(ws->pv[pl], slot, P, vb + (size_t)(j0 * d) * es,
                            ot);
            }
            for (int64_t r = 0; r < m; r++) {
                float inv = lrow[r] > 0.0f ? 1.0f / lrow[r] : 0.0f;
#pragma omp simd
                for (int64_t c = 0; c < d; c++)
                    ot[r * d + c] *= inv;
            }
        }
    }
}

/* ---- paged micro-kernels
 * ----------------------------------------------------- */

#ifdef SB_ATTN_AVX2
/* Pins a loaded vector to a register. Without it GCC folds the load into
 * every FMA that uses it (a K row shared by 4 query rows loaded 4 times),
 * which makes the loops load-port bound instead of FMA bound. */
#define SB_IN_REG(v) __asm__("" : "+v"(v))

/* Sums of four vectors, lane i = sum of vector i. */
static inline __m128 hsum4(__m256 a, __m256 b, __m256 c, __m256 e)
{
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, e));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

static inline float hsum1(__m256 a)
{
    __m128 x =
        _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_movehdup_ps(x));
    return _mm_cvtss_f32(x);
}
#endif

/* Pages ahead whose K (during Q·Kᵀ) and V (during P·V) rows an item of
 * one KV head prefetches: far enough to cover the memory latency, near
 * enough that the rows are still in L2 when they are used. An item of
 * several heads prefetches one page ahead: its heads' turns on the
 * current page already put all of the page's rows in between. */
#ifndef PF_AHEAD
#define PF_AHEAD 2
#endif

/* Prefetching: while a micro-kernel uses the rows of one page it
 * prefetches the same rows of the page `ahead` pages on, a line for each
 * line it loads, so the prefetches keep the pace of the arithmetic (a
 * page's worth at once fills the miss buffers and stalls it), and in
 * address order: Q·Kᵀ loads its rows in that order already; P·V loads a
 * column of lines 4·d bytes apart, and prefetching in that order, too,
 * left the hardware prefetcher nothing to follow (in address order, one
 * thread read 11.7-12.4 GB/s instead of 8.2-10.4 at 2.3 GB of KV).
 * pf_rows gives that page's rows of KV head kvh (K or V pool), or the
 * current rows, already in cache, past the end of the keys. */
static inline const char *pf_rows(const float *pool, const int32_t *pt,
                                  int64_t pi, int64_t kend,
                                  const sb_paged_shape *s, int64_t kvh,
                                  const float *here)
{
    if (pi * s->page_size >= kend)
        return (const char *)here;
    return (const char *)(pool + (pt[pi] * s->hkv + kvh) * s->page_size * s->d);
}

/* Each line is prefetched twice: far, as above, and near, at the rows the
 * item reads right after the current ones (the next KV head's rows of
 * the same page; after an item's last head, or for an item of one head,
 * the first head's rows of the next page), which the far prefetch asked
 * for a page earlier. On Zen 3 some of the far prefetches evidently do
 * not land in time (or at all): with the second one, two threads read
 * 0-15 % more at 2.3 GB of KV, median +9 % over fourteen interleaved
 * runs against the far prefetch alone; the near one alone read less than
 * either (docs/PRIMITIVES.md). next_rows gives those rows. */
static inline const char *next_rows(const float *pool, const int32_t *pt,
                                    int64_t pi, int64_t kend,
                                    const sb_paged_shape *s, int64_t kvh,
                                    int64_t h0, int64_t h1, const float *here)
{
    if (kvh + 1 < h1)
        return (const char *)(here + s->page_size * s->d);
    return pf_rows(pool, pt, pi + 1, kend, s, h0, here);
}

#ifdef SB_ATTN_AVX2
#define PF(p) _mm_prefetch((p), _MM_HINT_T0)
/* each line twice: at the far rows pf and at pf + near (below) */
#define PF2(p) (PF(p), PF((p) + near))
#endif

/* PV_TB: keys per block of pv_tile's 4-row kernel (8: one thread read
 * 11.6-13.1 GB/s at 2.3 GB of KV where one block of all 16 keys of a page
 * read 11.1-12.0, and 4 keys 8.2-12.8). */
#ifndef PV_TB
#define PV_TB 8
#endif

/* The micro-kernels, one copy per vector width (attn_micro.inc): AVX2's
 * 8 lanes, and AVX-512's 16 where the build targets it. A test build
 * (SB_ATTN_EMULATE_AVX512) makes the 16-lane copy from pairs of AVX2
 * vectors instead, so its loops, tails and prefetch order run and are
 * verified on a CPU without AVX-512; only the intrinsics below differ. */
#ifdef SB_ATTN_AVX2
#define SB_AM(name) name##_v8
#define SB_VW 8
#define SB_V __m256
#define SB_VZERO() _mm256_setzero_ps()
#define SB_VLD(p) _mm256_loadu_ps(p)
#define SB_VST(p, v) _mm256_storeu_ps((p), (v))
#define SB_VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define SB_VBCAST(p) _mm256_broadcast_ss(p)
#define SB_VHSUM4(a, b, c, e, out) _mm_storeu_ps((out), hsum4(a, b, c, e))
#define SB_VHSUM1(a) hsum1(a)
#include "backend/cpu/attn_micro.inc"
#undef SB_AM
#undef SB_VW
#undef SB_V
#undef SB_VZERO
#undef SB_VLD
#undef SB_VST
#undef SB_VFMA
#undef SB_VBCAST
#undef SB_VHSUM4
#undef SB_VHSUM1
#endif

#if defined(SB_ATTN_AVX2) && defined(__AVX512F__) &&                           \
    !defined(SB_ATTN_EMULATE_AVX512)
#define SB_ATTN_V16 1
/* A zmm register's lanes folded onto a ymm one. */
static inline __m256 fold16(__m512 a)
{
    return _mm256_add_ps(
        _mm512_castps512_ps256(a),
        _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
}
#define SB_AM(name) name##_v16
#define SB_VW 16
#define SB_V __m512
#define SB_VZERO() _mm512_setzero_ps()
#define SB_VLD(p) _mm512_loadu_ps(p)
#define SB_VST(p, v) _mm512_storeu_ps((p), (v))
#define SB_VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define SB_VBCAST(p) _mm512_set1_ps(*(p))
#define SB_VHSUM4(a, b, c, e, out)                                             \
    _mm_storeu_ps((out), hsum4(fold16(a), fold16(b), fold16(c), fold16(e)))
#define SB_VHSUM1(a) _mm512_reduce_add_ps(a)
#include "backend/cpu/attn_micro.inc"
#elif defined(SB_ATTN_AVX2) && defined(SB_ATTN_EMULATE_AVX512)
#define SB_ATTN_V16 1
typedef struct sb_v16e {
    __m256 lo, hi;
} sb_v16e;
static inline sb_v16e v16e_zero(void)
{
    return (sb_v16e){_mm256_setzero_ps(), _mm256_setzero_ps()};
}
static inline sb_v16e v16e_ld(const float *p)
{
    return (sb_v16e){_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
}
static inline void v16e_st(float *p, sb_v16e v)
{
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
}
static inline sb_v16e v16e_fma(sb_v16e a, sb_v16e b, sb_v16e c)
{
    return (sb_v16e){_mm256_fmadd_ps(a.lo, b.lo, c.lo),
                     _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
}
static inline sb_v16e v16e_bcast(const float *p)
{
    return (sb_v16e){_mm256_broadcast_ss(p), _mm256_broadcast_ss(p)};
}
static inline __m256 fold16(sb_v16e a)
{
    return _mm256_add_ps(a.lo, a.hi);
}
#undef SB_IN_REG
#define SB_IN_REG(v) __asm__("" : "+x"((v).lo), "+x"((v).hi))
#define SB_AM(name) name##_v16
#define SB_VW 16
#define SB_V sb_v16e
#define SB_VZERO() v16e_zero()
#define SB_VLD(p) v16e_ld(p)
#define SB_VST(p, v) v16e_st((p), (v))
#define SB_VFMA(a, b, c) v16e_fma((a), (b), (c))
#define SB_VBCAST(p) v16e_bcast(p)
#define SB_VHSUM4(a, b, c, e, out)                                             \
    _mm_storeu_ps((out), hsum4(fold16(a), fold16(b), fold16(c), fold16(e)))
#define SB_VHSUM1(a) hsum1(fold16(a))
#include "backend/cpu/attn_micro.inc"
#endif

const char *sb_attn_cpu_isa(void)
{
#if defined(SB_ATTN_V16) && defined(SB_ATTN_EMULATE_AVX512)
    return "v16emu";
#elif defined(SB_ATTN_V16)
    return "avx512";
#elif defined(SB_ATTN_AVX2)
    return "avx2";
#else
    return "portable";
#endif
}

/* S[r·lds + t] = Qs[r]·K[t] for R rows and nt keys (d columns), prefetching
 * the same bytes at pf: the widest copy whose lanes divide d, else the
 * portable loops. */
static void qk_tile(const float *Qs, int64_t R, const float *kp, int64_t nt,
                    int64_t d, float *S, int64_t lds, const char *pf,
                    ptrdiff_t near)
{
#ifdef SB_ATTN_V16
    if (d % 16 == 0) {
        qk_tile_v16(Qs, R, kp, nt, d, S, lds, pf, near);
        return;
    }
#endif
#ifdef SB_ATTN_AVX2
    if (d % 8 == 0) {
        qk_tile_v8(Qs, R, kp, nt, d, S, lds, pf, near);
        return;
    }
#endif
    (void)pf;
    (void)near;
    for (int64_t r = 0; r < R; r++)
        for (int64_t t = 0; t < nt; t++) {
            float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
            for (int64_t c = 0; c < d; c++)
                acc += Qs[r * d + c] * kp[t * d + c];
            S[r * lds + t] = acc;
        }
}

/* Oa[r][c] += Σ_t P[r·lds + t] · V[t][c] for R rows, nt keys, d columns,
 * prefetching the same bytes at pf: as qk_tile, the widest copy. */
static void pv_tile(const float *P, int64_t lds, int64_t R, const float *vp,
                    int64_t nt, int64_t d, float *Oa, const char *pf,
                    ptrdiff_t near)
{
#ifdef SB_ATTN_V16
    if (d % 16 == 0) {
        pv_tile_v16(P, lds, R, vp, nt, d, Oa, pf, near);
        return;
    }
#endif
#ifdef SB_ATTN_AVX2
    if (d % 8 == 0) {
        pv_tile_v8(P, lds, R, vp, nt, d, Oa, pf, near);
        return;
    }
#endif
    (void)pf;
    (void)near;
    for (int64_t r = 0; r < R; r++)
        for (int64_t t = 0; t < nt; t++) {
            float p = P[r * lds + t];
#pragma omp simd
            for (int64_t c = 0; c < d; c++)
                Oa[r * d + c] += p * vp[t * d + c];
        }
}

#ifdef SB_ATTN_AVX2
/* softmax_row for four rows at once whose n keys are all visible, n a
 * multiple of 8: the four maxima and sums are reduced together by
 * shuffles instead of eight scalar steps each, and one vector exponential
 * gives the four rescaling factors. Per page and head of GQA-4 decode
 * this is the whole softmax (docs/PRIMITIVES.md: +2 to +10 % at DRAM
 * sizes). */
static inline void softmax_rows4(float *S, int64_t lds, int64_t n, float *m,
                                 float *l, float *Oa, int64_t d)
{
    __m256 mv[4];
    for (int r = 0; r < 4; r++) {
        const float *row = S + r * lds;
        mv[r] = _mm256_loadu_ps(row);
        for (int64_t x = 8; x < n; x += 8)
            mv[r] = _mm256_max_ps(mv[r], _mm256_loadu_ps(row + x));
    }
    /* the four maxima: pairs of rows interleaved, then pairs of pairs,
     * then the two 128-bit halves */
    __m256 a = _mm256_max_ps(_mm256_unpacklo_ps(mv[0], mv[1]),
                             _mm256_unpackhi_ps(mv[0], mv[1]));
    __m256 b = _mm256_max_ps(_mm256_unpacklo_ps(mv[2], mv[3]),
                             _mm256_unpackhi_ps(mv[2], mv[3]));
    __m256 c = _mm256_max_ps(_mm256_shuffle_ps(a, b, 0x44),
                             _mm256_shuffle_ps(a, b, 0xee));
    __m128 hm =
        _mm_max_ps(_mm256_castps256_ps128(c), _mm256_extractf128_ps(c, 1));
    const __m128 mold = _mm_loadu_ps(m), mnew = _mm_max_ps(hm, mold);
    _mm_storeu_ps(m, mnew);
    /* as softmax_row: a row is rescaled when its max grew from a finite one */
    const __m128 grow = _mm_and_ps(_mm_cmpneq_ps(mold, mnew),
                                   _mm_cmpneq_ps(mold, _mm_set1_ps(-INFINITY)));
    __m128 corr = _mm256_castps256_ps128(
        sb_vexp2(_mm256_castps128_ps256(_mm_sub_ps(mold, mnew))));
    corr = _mm_blendv_ps(_mm_set1_ps(1.0f), corr, grow);
    __m256 vs[4];
    for (int r = 0; r < 4; r++) {
        float *row = S + r * lds;
        const __m256 vm = _mm256_broadcast_ss(m + r);
        __m256 acc = _mm256_setzero_ps();
        for (int64_t x = 0; x < n; x += 8) {
            __m256 e = sb_vexp2(_mm256_sub_ps(_mm256_loadu_ps(row + x), vm));
            _mm256_storeu_ps(row + x, e);
            acc = _mm256_add_ps(acc, e);
        }
        vs[r] = acc;
    }
    _mm_storeu_ps(l, _mm_fmadd_ps(_mm_loadu_ps(l), corr,
                                  hsum4(vs[0], vs[1], vs[2], vs[3])));
    const int gm = _mm_movemask_ps(grow);
    if (gm) {
        float cr[4];
        _mm_storeu_ps(cr, corr);
        for (int r = 0; r < 4; r++)
            if (gm >> r & 1) {
                float *orow = Oa + r * d;
#pragma omp simd
                for (int64_t cc = 0; cc < d; cc++)
                    orow[cc] *= cr[r];
            }
    }
}
#endif

/* ---- paged attention
 * ----------------------------------------------------------- */

void sb_cpu_paged(const sb_paged_shape *s, const float *q, const float *kpool,
                  const float *vpool, const int32_t *table, float *o,
                  const sb_attn_ws *ws)
{
    const int64_t d = s->d, P = s->page_size, hq = s->hq, hkv = s->hkv;
    const int64_t g = hq / hkv, RT = SB_PAGED_RT;
    const int64_t KB = paged_block_keys(P);
    const float scale = (float)(1.4426950408889634 / sqrt((double)d));

#pragma omp parallel num_threads(ws->nthreads)
    {
        float *S = ws->buf + (int64_t)omp_get_thread_num() * ws->per_thread;
        float *st = S + RT * KB; /* per head: Qs[R·d], Oa[R·d], m[R], l[R] */
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < ws->n_items; it++) {
            const int64_t *item = ws->items + ITEM_W * it;
            int64_t seq = item[0], h0 = item[1], r0 = item[2], r1 = item[3];
            int64_t k0 = item[4], kend = item[5], soff = item[6], h1 = item[8];
            int64_t R = r1 - r0, q0 = s->cu_q[seq], nh = h1 - h0;
            int64_t hs = head_state(R, d);
            /* Several heads: a block is one page, every head in turn, and
             * the same page's rows one page on are prefetched (the run of
             * the page after is read in the same order). One head: blocks
             * of KB keys, pages PF_AHEAD on. */
            int64_t kb = nh > 1 ? P : KB, ahead = nh > 1 ? 1 : PF_AHEAD;
            /* Gather the rows (token u, head kvh·g + j) of each KV head,
             * scaled into base-2 scores. */
            for (int64_t hh = 0; hh < nh; hh++) {
                float *Qs = st + hh * hs, *Oa = Qs + R * d;
                float *mrow = Oa + R * d, *lrow = mrow + R;
                int64_t kvh = h0 + hh;
                for (int64_t r = 0; r < R; r++) {
                    int64_t u = (r0 + r) / g, j = (r0 + r) % g;
                    const float *src = q + ((q0 + u) * hq + kvh * g + j) * d;
#pragma omp simd
                    for (int64_t c = 0; c < d; c++) {
                        Qs[r * d + c] = src[c] * scale;
                        Oa[r * d + c] = 0.0f;
                    }
                    mrow[r] = -INFINITY;
                    lrow[r] = 0.0f;
                }
            }
            const int32_t *pt = table + s->cu_pages[seq];
            for (int64_t j0 = k0; j0 < kend; j0 += kb) {
                int64_t n = imin(kb, kend - j0);
                for (int64_t hh = 0; hh < nh; hh++) {
                    float *Qs = st + hh * hs, *Oa = Qs + R * d;
                    float *mrow = Oa + R * d, *lrow = mrow + R;
                    int64_t kvh = h0 + hh;
                    for (int64_t pj = 0; pj < n; pj += P) {
                        int64_t pi = (j0 + pj) / P;
                        const float *kp = kpool + (pt[pi] * hkv + kvh) * P * d;
                        const char *far =
                            pf_rows(kpool, pt, pi + ahead, kend, s, kvh, kp);
                        qk_tile(
                            Qs, R, kp, imin(P, n - pj), d, S + pj, kb, far,
                            next_rows(kpool, pt, pi, kend, s, kvh, h0, h1, kp) -
                                far);
                    }
                    int64_t r = 0;
#ifdef SB_ATTN_AVX2
                    /* four rows at a time while all their keys are
                     * visible: a row's visible keys do not decrease with
                     * its token, so the first and the last row tell */
                    if (n % 8 == 0)
                        for (; r + 4 <= R; r += 4) {
                            int64_t u0 = (r0 + r) / g, u3 = (r0 + r + 3) / g;
                            if (sb_paged_keys(s, seq, u0) - j0 < n ||
                                sb_paged_keys(s, seq, u3) - j0 < n)
                                break;
                            softmax_rows4(S + r * kb, kb, n, mrow + r, lrow + r,
                                          Oa + r * d, d);
                        }
#endif
                    for (; r < R; r++) {
                        int64_t lim = iclamp(
                            sb_paged_keys(s, seq, (r0 + r) / g) - j0, 0, n);
                        softmax_row(S + r * kb, lim, n, &mrow[r], &lrow[r],
                                    Oa + r * d, d);
                    }
                    for (int64_t pj = 0; pj < n; pj += P) {
                        int64_t pi = (j0 + pj) / P;
                        const float *vp = vpool + (pt[pi] * hkv + kvh) * P * d;
                        const char *far =
                            pf_rows(vpool, pt, pi + ahead, kend, s, kvh, vp);
                        pv_tile(
                            S + pj, kb, R, vp, imin(P, n - pj), d, Oa, far,
                            next_rows(vpool, pt, pi, kend, s, kvh, h0, h1, vp) -
                                far);
                    }
                }
            }
            for (int64_t hh = 0; hh < nh; hh++) {
                const float *Oa = st + hh * hs + R * d;
                const float *mrow = Oa + R * d, *lrow = mrow + R;
                int64_t kvh = h0 + hh;
                if (soff >= 0) { /* one part of a split range: merged below */
                    float *part = ws->scratch + soff + hh * R * (d + 2);
                    memcpy(part, Oa, (size_t)(R * d) * sizeof *part);
                    memcpy(part + R * d, mrow, (size_t)R * sizeof *part);
                    memcpy(part + R * d + R, lrow, (size_t)R * sizeof *part);
                    continue;
                }
                for (int64_t r = 0; r < R; r++) {
                    int64_t u = (r0 + r) / g, j = (r0 + r) % g;
                    float *dst = o + ((q0 + u) * hq + kvh * g + j) * d;
                    float inv = lrow[r] > 0.0f ? 1.0f / lrow[r] : 0.0f;
#pragma omp simd
                    for (int64_t c = 0; c < d; c++)
                        dst[c] = Oa[r * d + c] * inv;
                }
            }
        }
        /* Merge the parts of split ranges: rescale each part to the common
         * max, sum outputs and sums, normalise. */
#pragma omp for schedule(static)
        for (int64_t gi = 0; gi < ws->n_groups; gi++) {
            const int64_t *gr = ws->groups + GROUP_W * gi;
            int64_t seq = gr[0], h0 = gr[1], r0 = gr[2], r1 = gr[3], h1 = gr[6];
            int64_t R = r1 - r0, parts = gr[5], q0 = s->cu_q[seq];
            int64_t pstride = (h1 - h0) * R * (d + 2);
            for (int64_t kvh = h0; kvh < h1; kvh++) {
                const float *base =
                    ws->scratch + gr[4] + (kvh - h0) * R * (d + 2);
                for (int64_t r = 0; r < R; r++) {
                    int64_t u = (r0 + r) / g, j = (r0 + r) % g;
                    float *dst = o + ((q0 + u) * hq + kvh * g + j) * d;
                    float mx = -INFINITY, l = 0.0f;
                    for (int64_t p = 0; p < parts; p++) {
                        float mp = base[p * pstride + R * d + r];
                        mx = mp > mx ? mp : mx;
                    }
                    for (int64_t c = 0; c < d; c++)
                        dst[c] = 0.0f;
                    if (mx == -INFINITY)
                        continue; /* no visible key in any part */
                    for (int64_t p = 0; p < parts; p++) {
                        const float *part = base + p * pstride;
                        float mp = part[R * d + r];
                        if (mp == -INFINITY)
                            continue;
                        float w = sb__exp2f(mp - mx);
                        l += w * part[R * d + R + r];
#pragma omp simd
                        for (int64_t c = 0; c < d; c++)
                            dst[c] += w * part[r * d + c];
                    }
                    float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma omp simd
                    for (int64_t c = 0; c < d; c++)
                        dst[c] *= inv;
                }
            }
        }
    }
}
