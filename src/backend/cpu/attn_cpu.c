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
 * so the pool is read once per iteration (attn_paged.inc, included at the
 * end: batched matmul, workspaces and prefill are this file's).
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
    /* a bf16 cache: one page of one head's K or V decoded to fp32, for
     * items of more than 4 rows (chunks), whose row groups would each
     * decode it again */
    int64_t tile = s->kv_bytes == 2 ? s->page_size * d : 0;
    int rc = ws_alloc(ws, nth, state + rt * kb + tile, err);
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

/* Paged decode: its micro-kernels and work items. */
#include "backend/cpu/attn_paged.inc"
