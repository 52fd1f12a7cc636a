/*
 * refmodel.c — the reference decoder of refmodel.h: its weights, the paged
 * KV cache, its buffers and its GEMM plans (one serving iteration, timed
 * per phase, is refmodel_forward.c's; its configuration
 * refmodel_config.c's, the same model in double precision
 * refmodel_ref.c's; refmodel_int.h).
 */
#include "bench/llm/refmodel.h"
#include "bench/llm/refmodel_int.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/attn_cpu.h"
#include "backend/cpu/cpu_gemm.h"
#include "bench/moe/moe_cpu.h"
#include "bench/ops/ops_cpu.h"
#include "solbench/moe.h"
#include "solbench/ops.h"
#include "solbench/timer.h"
#include "solbench/util.h"
/* ---- the model ---------------------------------------------------------- */

const sb_ref_config *sb_ref_config_of(const sb_ref_model *m)
{
    return &m->c;
}

const char *sb_ref_kernels(const sb_ref_model *m)
{
    return m->kernels;
}

int sb_ref_len(const sb_ref_model *m, int slot)
{
    return m->len[slot];
}

void sb_ref_set_len(sb_ref_model *m, int slot, int len)
{
    m->len[slot] = len < 0 ? 0 : (len > m->ctx ? m->ctx : len);
}

void sb_ref_times(const sb_ref_model *m, double t[SB_REF_NPH])
{
    memcpy(t, m->t, sizeof m->t);
}

void sb_ref_times_reset(sb_ref_model *m)
{
    memset(m->t, 0, sizeof m->t);
}

void sb_ref_record(sb_ref_model *m, sb_ref_event *buf, int cap)
{
    m->ev = buf;
    m->cap_ev = buf ? cap : 0;
    m->n_ev = 0;
}

int sb_ref_n_events(const sb_ref_model *m)
{
    return m->n_ev;
}

/* Uniform in [-scale, scale), fp32 or bf16, the same values whatever the
 * thread count: the ops area's filler. */
static void sb__fill(void *a, int64_t rows, int64_t cols, bool bf16,
                     uint64_t seed, double scale)
{
    sb_ops_cpu_fill(a, rows, cols, bf16, seed, -scale, scale);
}

static void sb__gains(float *g, int64_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++)
        g[i] = (float)(1.0 + 0.1 * (2.0 * sb_rng_unif(&s) - 1.0));
}

static void *sb__alloc(size_t bytes, int *fail)
{
    void *p = sb_alloc_aligned(bytes ? bytes : 1);
    if (!p)
        *fail = 1;
    return p;
}

static void sb__plans_free(sb_ref_model *m)
{
    for (int i = 0; i < m->nplans; i++)
        sb_gemm_plan_destroy(m->plans[i].p);
    m->nplans = 0;
}

void sb_ref_free(sb_ref_model *m)
{
    if (!m)
        return;
    const sb_ref_config *c = &m->c;
    for (int l = 0; m->wr && l < c->layers; l++)
        sb_free_aligned(m->wr[l]);
    sb_free_aligned(m->arena); /* every weight matrix */
    free(m->wqkv);
    free(m->wo);
    free(m->wgu);
    free(m->wdown);
    free(m->wr);
    void *bufs[] = {m->part,  m->norm1,    m->norm2, m->normf,     m->kpool,
                    m->vpool, m->pages,    m->cos_t, m->sin_t,     m->x,
                    m->qkv,   m->q,        m->o,     m->proj,      m->gu,
                    m->xr,    m->logits,   m->xn,    m->on,        m->act,
                    m->hl,    m->tpos,     m->tslot, m->idx,       m->rw,
                    m->rp,    m->offsets,  m->pos,   m->row_token, m->scratch,
                    m->xp,    m->acte,     m->gue,   m->ye,        m->plen,
                    m->cu_q,  m->cu_pages, m->table};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        sb_free_aligned(bufs[i]);
    sb__plans_free(m);
    free(m->plans);
    free(m->len);
    free(m);
}

/* The class of a decode-sized product's rows: 1, 2-3, 4-7, 8-16. */
static int sb__rows_class(int64_t M)
{
    return M <= 1 ? 0 : M <= 3 ? 1 : M <= 7 ? 2 : 3;
}

/* The plan of one product, made on first use: C [M][N] = A · W with W
 * [k][n] (C fp32), leading dimensions lda, ldb, ldc (0: packed). NULL
 * when no library can run it. */
sb_gemm_plan *sb_refm_plan(sb_ref_model *m, int64_t M, int64_t N, int64_t K,
                           int64_t lda, int64_t ldb, int64_t ldc, int slots)
{
    for (int i = 0; i < m->nplans; i++) {
        const sb_refm_plan_ent *e = &m->plans[i];
        if (e->m == M && e->n == N && e->k == K && e->lda == lda &&
            e->ldb == ldb && e->ldc == ldc && e->slots >= slots)
            return e->p;
    }
    if (m->nplans == m->cap_plans) {
        int cap = m->cap_plans ? 2 * m->cap_plans : 64;
        sb_refm_plan_ent *np = realloc(m->plans, (size_t)cap * sizeof *np);
        if (!np)
            return NULL;
        m->plans = np;
        m->cap_plans = cap;
    }
    sb_gemm_desc d = {.dt = m->dt,
                      .m = M,
                      .n = N,
                      .k = K,
                      .lda = lda,
                      .ldb = ldb,
                      .ldc = ldc,
                      .trans_b = false,
                      .alpha = 1.0f,
                      .beta = 0.0f};
    int lib = M <= SB__DECODE_M ? m->lib_rows[sb__rows_class(M)] : m->lib_large;
    sb_gemm_plan *p = NULL;
    sb_err e = {0};
    if (sb_gemm_plan_create(lib, &d, slots, &p, &e) &&
        sb_gemm_plan_create(1 - lib, &d, slots, &p, &e))
        return NULL;
    m->plans[m->nplans++] =
        (sb_refm_plan_ent){M, N, K, lda, ldb, ldc, slots, p};
    return p;
}

/* C [M][N] = A [M][K] · W [K][N]. Weights are stored input-major (as JAX
 * stores a Dense kernel): a few rows against W stream it row by row, which
 * both libraries do near the memory's rate; W [N][K] (PyTorch's Linear),
 * a dot product per output, streamed well below it (docs/VALIDATE.md).
 * A decode-sized product is split over the threads by rows of W (each
 * streams one contiguous block, into its own partial C), the partials
 * summed after. */
void sb_refm_mm(sb_ref_model *m, int64_t M, int64_t N, int64_t K, const void *A,
                const void *W, float *C)
{
    if (M <= 0)
        return;
    int nt = m->threads;
    if (M <= SB__DECODE_M && nt > 1 && K >= 16 * nt &&
        M * N <= m->part_floats) {
        int64_t chunk = (K + nt - 1) / nt;
        chunk = (chunk + 15) / 16 * 16;
        int64_t last = K - chunk * ((K + chunk - 1) / chunk - 1);
        sb_gemm_plan *pf = sb_refm_plan(m, M, N, chunk, K, N, N, nt),
                     *pl = last != chunk
                               ? sb_refm_plan(m, M, N, last, K, N, N, nt)
                               : pf;
        if (pf && pl) {
            const int used = (int)((K + chunk - 1) / chunk);
#pragma omp parallel num_threads(nt)
            {
                int t = omp_get_thread_num();
                int64_t k0 = chunk * t;
                if (t < used) {
                    float *ct = t == 0 ? C : m->part + (t - 1) * m->part_floats;
                    sb_gemm_run(t == used - 1 ? pl : pf, t,
                                (const char *)A + (size_t)k0 * m->es,
                                (const char *)W + (size_t)(k0 * N) * m->es, ct);
                }
#pragma omp barrier
#pragma omp for schedule(static)
                for (int64_t i = 0; i < M * N; i++) {
                    float a = C[i];
                    for (int u = 1; u < used; u++)
                        a += m->part[(u - 1) * m->part_floats + i];
                    C[i] = a;
                }
            }
            return;
        }
    }
    sb_gemm_plan *p = sb_refm_plan(m, M, N, K, 0, 0, 0, 1);
    if (p)
        sb_gemm_run(p, 0, A, W, C);
}

/* Which library runs each shape class: the one given, or of those that
 * run the dtype, for decode-sized products the faster at streaming every
 * layer's matrices at one row, for larger ones the faster on the MLP's
 * first product at the iteration's largest m (up to 256). */
static int sb__pick_libs(sb_ref_model *m, sb_err *err)
{
    const sb_ref_config *c = &m->c;
    int usable[SB_GEMM_NLIBS], nuse = 0;
    for (int lib = 0; lib < SB_GEMM_NLIBS; lib++)
        if (sb_gemm_lib_supports(lib, m->dt, NULL, 0))
            usable[nuse++] = lib;
    if (nuse == 0)
        return sb_fail(err, SB_EUNSUP,
                       "reference model: no GEMM library runs %s on this "
                       "CPU",
                       c->bf16 ? "bf16" : "fp32");
    if (c->lib >= 0) {
        if (!sb_gemm_lib_supports(c->lib, m->dt, NULL, 0))
            return sb_fail(err, SB_EUNSUP,
                           "reference model: %s cannot run %s on this CPU",
                           sb_gemm_lib_name(c->lib), c->bf16 ? "bf16" : "fp32");
        m->lib_small = m->lib_large = c->lib;
        for (int k = 0; k < 4; k++)
            m->lib_rows[k] = c->lib;
        return 0;
    }
    m->lib_small = m->lib_large = usable[0];
    for (int k = 0; k < 4; k++)
        m->lib_rows[k] = usable[0];
    if (nuse == 1)
        return 0;
    /* decode-sized, per class of rows up to the model's sequences: what
     * streaming every layer's matrices (a MoE layer's first expert) at
     * 1, 2, 4 and 12 rows sustains, best of 2 passes after one that makes
     * the plans: from memory, as decode reads them, where one matrix timed
     * alone would sit in the cache */
    static const int rows[4] = {1, 2, 4, 12};
    int top = 0;
    for (int k = 1; k < 4; k++)
        if (rows[k] <= m->seqs && rows[k] <= m->tokens)
            top = k;
    for (int k = 0; k <= top; k++) {
        const int64_t r = rows[k];
        double best_s = 0;
        int best_lib = usable[0];
        for (int u = 0; u < nuse; u++) {
            m->lib_rows[k] = usable[u];
            double t_best = 0;
            for (int pass = 0; pass < 3; pass++) {
                double t0 = sb_now();
                for (int l = 0; l < c->layers; l++) {
                    bool moe = sb_ref_layer_is_moe(c, l);
                    int64_t f = moe ? c->expert_ffn : c->ffn,
                            ho = (int64_t)c->hq * c->hd;
                    sb_refm_mm(m, r, (int64_t)sb_refm_nqkv(c), c->d, m->xn,
                               m->wqkv[l], m->qkv);
                    sb_refm_mm(m, r, c->d, ho, m->on, m->wo[l], m->proj);
                    sb_refm_mm(m, r, 2 * f, c->d, m->xn, m->wgu[l],
                               moe ? m->gue : m->gu);
                    sb_refm_mm(m, r, c->d, f, moe ? m->acte : m->act,
                               m->wdown[l], m->proj);
                }
                double t = sb_now() - t0;
                if (pass > 0 && (t_best == 0 || t < t_best))
                    t_best = t;
            }
            if (best_s == 0 || t_best < best_s) {
                best_s = t_best;
                best_lib = usable[u];
            }
            sb__plans_free(m);
        }
        m->lib_rows[k] = best_lib;
    }
    for (int k = top + 1; k < 4; k++)
        m->lib_rows[k] = m->lib_rows[top];
    m->lib_small = m->lib_rows[0];
    /* prefill-sized: the faster on the MLP's first product at the
     * iteration's largest m (up to 256), best of 3 after one untimed run */
    bool moe0 = sb_ref_layer_is_moe(c, 0);
    int64_t N = 2 * (int64_t)(moe0 ? c->expert_ffn : c->ffn), K = c->d;
    int64_t M = m->tokens < 256 ? m->tokens : 256;
    if (M <= SB__DECODE_M) {
        m->lib_large = m->lib_small;
        return 0;
    }
    sb_gemm_desc d = {.dt = m->dt,
                      .m = M,
                      .n = N,
                      .k = K,
                      .trans_b = false,
                      .alpha = 1.0f,
                      .beta = 0.0f};
    double best[SB_GEMM_NLIBS];
    sb_gemm_plan *p = NULL;
    sb_err e = {0};
    if (sb_gemm_plan_fastest(&d, 1, m->xn, m->wgu[0], moe0 ? m->gue : m->gu, 3,
                             best, &p, &e) == 0) {
        m->lib_large = sb_gemm_plan_lib(p);
        sb_gemm_plan_destroy(p);
    }
    return 0;
}

/* The per-layer pointer tables, the slots' lengths, the weight matrices
 * carved from one block, the norms' gains and the routers. */
static void sb__alloc_weights(sb_ref_model *m, int *fail)
{
    const sb_ref_config *c = &m->c;
    int L = c->layers;
    int64_t d = c->d, V = c->vocab, nq = (int64_t)sb_refm_nqkv(c),
            ho = (int64_t)c->hq * c->hd;
    size_t es = m->es;
    m->wqkv = calloc((size_t)L, sizeof(void *));
    m->wo = calloc((size_t)L, sizeof(void *));
    m->wgu = calloc((size_t)L, sizeof(void *));
    m->wdown = calloc((size_t)L, sizeof(void *));
    m->wr = calloc((size_t)L, sizeof(float *));
    m->len = calloc((size_t)m->seqs, sizeof(int));
    if (!m->wqkv || !m->wo || !m->wgu || !m->wdown || !m->wr || !m->len)
        *fail = 1;
    /* The weight matrices in one block, in the order a forward reads them
     * (huge pages where the kernel grants them; it measured no faster here
     * than one allocation a matrix). Two passes: the size, then the
     * pointers. */
    for (int pass = 0; pass < 2 && !*fail; pass++) {
        size_t off = 0;
        char *base = m->arena;
#define SB__CARVE(dst, bytes)                                                  \
    do {                                                                       \
        if (pass == 1)                                                         \
            (dst) = base + off;                                                \
        off += ((size_t)(bytes) + 4095) / 4096 * 4096;                         \
    } while (0)
        SB__CARVE(m->emb, (size_t)(V * d) * es);
        for (int l = 0; l < L; l++) {
            bool moe = sb_ref_layer_is_moe(c, l);
            int64_t E = moe ? c->experts : 1, f = moe ? c->expert_ffn : c->ffn;
            SB__CARVE(m->wqkv[l], (size_t)(nq * d) * es);
            SB__CARVE(m->wo[l], (size_t)(d * ho) * es);
            SB__CARVE(m->wgu[l], (size_t)(E * 2 * f * d) * es);
            SB__CARVE(m->wdown[l], (size_t)(E * d * f) * es);
        }
        SB__CARVE(m->lm, (size_t)(V * d) * es);
#undef SB__CARVE
        if (pass == 0)
            m->arena = sb__alloc(off, fail);
    }
    if (!*fail) {
        m->norm1 = sb__alloc((size_t)(L * d) * 4, fail);
        m->norm2 = sb__alloc((size_t)(L * d) * 4, fail);
        m->normf = sb__alloc((size_t)d * 4, fail);
        for (int l = 0; l < L && !*fail; l++)
            if (sb_ref_layer_is_moe(c, l))
                m->wr[l] = sb__alloc((size_t)(c->experts * d) * 4, fail);
    }
}

/* Every weight from the configuration's seed, one stream a matrix. */
static void sb__fill_weights(sb_ref_model *m)
{
    const sb_ref_config *c = &m->c;
    int L = c->layers;
    int64_t d = c->d, V = c->vocab, nq = (int64_t)sb_refm_nqkv(c),
            ho = (int64_t)c->hq * c->hd;
    uint64_t sd = c->seed;
    sb__fill(m->emb, V, d, c->bf16, sd + 1, 1.0);
    sb__fill(m->lm, d, V, c->bf16, sd + 2, sqrt(3.0 / d));
    sb__gains(m->norm1, L * d, sd + 3);
    sb__gains(m->norm2, L * d, sd + 4);
    sb__gains(m->normf, d, sd + 5);
    for (int l = 0; l < L; l++) {
        bool moe = sb_ref_layer_is_moe(c, l);
        int64_t E = moe ? c->experts : 1, f = moe ? c->expert_ffn : c->ffn;
        uint64_t ls = sd + 100 + 10 * (uint64_t)l;
        sb__fill(m->wqkv[l], d, nq, c->bf16, ls + 1, sqrt(3.0 / d));
        sb__fill(m->wo[l], ho, d, c->bf16, ls + 2, sqrt(3.0 / ho));
        sb__fill(m->wgu[l], E * d, 2 * f, c->bf16, ls + 3, sqrt(3.0 / d));
        sb__fill(m->wdown[l], E * f, d, c->bf16, ls + 4, sqrt(3.0 / f));
        if (moe)
            sb__fill(m->wr[l], c->experts, d, false, ls + 5, sqrt(3.0 / d));
    }
}

/* The KV cache, zeroed, its pages shuffled over the slots. */
static void sb__alloc_kv(sb_ref_model *m, int *fail)
{
    const sb_ref_config *c = &m->c;
    m->pps = sb_refm_pages_per_seq(c, m->ctx);
    m->npages = m->pps * m->seqs;
    int64_t kvrow = (int64_t)c->hkv * c->page * c->hd * c->layers;
    if (!*fail) {
        m->kpool = sb__alloc((size_t)(m->npages * kvrow) * 4, fail);
        m->vpool = sb__alloc((size_t)(m->npages * kvrow) * 4, fail);
        m->pages = sb__alloc((size_t)m->npages * 4, fail);
    }
    if (*fail)
        return;
    for (int64_t i = 0; i < m->npages; i++)
        m->pages[i] = (int32_t)i;
    uint64_t s = c->seed + 7;
    for (int64_t i = m->npages - 1; i > 0; i--) {
        int64_t j = (int64_t)(sb_rng_unif(&s) * (double)(i + 1));
        int32_t t = m->pages[i];
        m->pages[i] = m->pages[j];
        m->pages[j] = t;
    }
    memset(m->kpool, 0, (size_t)(m->npages * kvrow) * 4);
    memset(m->vpool, 0, (size_t)(m->npages * kvrow) * 4);
}

/* The RoPE tables: cos and sin of every position's angles. */
static void sb__alloc_rope(sb_ref_model *m, int *fail)
{
    const sb_ref_config *c = &m->c;
    int h2 = c->hd / 2;
    if (*fail)
        return;
    m->cos_t = sb__alloc((size_t)m->ctx * h2 * 4, fail);
    m->sin_t = sb__alloc((size_t)m->ctx * h2 * 4, fail);
    if (*fail)
        return;
    for (int64_t p = 0; p < m->ctx; p++)
        for (int i = 0; i < h2; i++) {
            double a = (double)p * pow(c->rope_theta, -2.0 * i / c->hd);
            m->cos_t[p * h2 + i] = (float)cos(a);
            m->sin_t[p * h2 + i] = (float)sin(a);
        }
}

/* The sizes the activation buffers are cut to: the widest dense FFN, the
 * routed rows, an expert's FFN (1 without experts). */
typedef struct sb__act_dims {
    int64_t F, R, fe;
} sb__act_dims;

static sb__act_dims sb__act_dims_of(const sb_ref_model *m)
{
    const sb_ref_config *c = &m->c;
    return (sb__act_dims){.F = (int64_t)sb_refm_widest_ffn(c),
                          .R = c->experts > 0 ? (int64_t)m->tokens * c->top_k
                                              : 1,
                          .fe = c->experts > 0 ? c->expert_ffn : 1};
}

/* The activations of one iteration, the MoE's routing buffers, the
 * iteration's paged shape and the decode products' partial blocks. */
static void sb__alloc_acts(sb_ref_model *m, int *fail)
{
    const sb_ref_config *c = &m->c;
    const sb__act_dims a = sb__act_dims_of(m);
    int64_t d = c->d, V = c->vocab, nq = (int64_t)sb_refm_nqkv(c),
            ho = (int64_t)c->hq * c->hd, T = m->tokens, seqs = m->seqs;
    int64_t F = a.F, R = a.R, fe = a.fe;
    size_t es = m->es;
    if (*fail)
        return;
    m->x = sb__alloc((size_t)(T * d) * 4, fail);
    m->xr = sb__alloc((size_t)(T * d) * 4, fail);
    m->qkv = sb__alloc((size_t)(T * nq) * 4, fail);
    m->q = sb__alloc((size_t)(T * ho) * 4, fail);
    m->o = sb__alloc((size_t)(T * ho) * 4, fail);
    m->proj = sb__alloc((size_t)(T * d) * 4, fail);
    m->gu = sb__alloc((size_t)(T * 2 * (c->ffn > 0 ? c->ffn : 1)) * 4, fail);
    m->xn = sb__alloc((size_t)(T * d) * es, fail);
    m->on = sb__alloc((size_t)(T * ho) * es, fail);
    m->act = sb__alloc((size_t)(T * F) * es, fail);
    m->hl = sb__alloc((size_t)(seqs * d) * es, fail);
    m->logits = sb__alloc((size_t)(seqs * V) * 4, fail);
    m->tpos = sb__alloc((size_t)T * 4, fail);
    m->tslot = sb__alloc((size_t)T * 4, fail);
    m->idx = sb__alloc((size_t)R * sizeof(int), fail);
    m->rw = sb__alloc((size_t)R * 4, fail);
    m->rp =
        sb__alloc((size_t)(T * (c->experts > 0 ? c->experts : 1)) * 4, fail);
    m->offsets = sb__alloc((size_t)(c->experts + 2) * 8, fail);
    m->pos = sb__alloc((size_t)R * 8, fail);
    m->row_token = sb__alloc((size_t)R * 8, fail);
    sb_moe_shape ms = {.experts = c->experts > 0 ? c->experts : 1};
    m->scratch = sb__alloc(sb_moe_cpu_dispatch_scratch(&ms), fail);
    m->xp = sb__alloc((size_t)(R * d) * es, fail);
    m->acte = sb__alloc((size_t)(R * fe) * es, fail);
    m->gue = sb__alloc((size_t)(R * 2 * fe) * 4, fail);
    m->ye = sb__alloc((size_t)(R * d) * 4, fail);
    m->plen = sb__alloc((size_t)seqs * 8, fail);
    m->cu_q = sb__alloc((size_t)(seqs + 1) * 8, fail);
    m->cu_pages = sb__alloc((size_t)(seqs + 1) * 8, fail);
    m->table = sb__alloc((size_t)m->npages * 4, fail);
    int64_t wide = V > nq ? V : nq;
    wide = wide > 2 * F ? wide : 2 * F;
    wide = wide > 2 * fe ? wide : 2 * fe;
    m->part_floats = SB__DECODE_M * (wide > d ? wide : d);
    m->part = sb__alloc(
        (size_t)(m->part_floats * (m->threads > 1 ? m->threads - 1 : 1)) * 4,
        fail);
}

/* Zeroes the inputs the library pick reads before any forward. */
static void sb__zero_pick_inputs(sb_ref_model *m)
{
    const sb_ref_config *c = &m->c;
    const sb__act_dims a = sb__act_dims_of(m);
    int64_t d = c->d, ho = (int64_t)c->hq * c->hd, T = m->tokens;
    size_t es = m->es;
    memset(m->xn, 0, (size_t)(T * d) * es);
    memset(m->on, 0, (size_t)(T * ho) * es);
    memset(m->act, 0, (size_t)(T * a.F) * es);
    memset(m->acte, 0, (size_t)(a.R * a.fe) * es);
}

/* A slot's pages: page j of slot s is m->pages[s * pps + j]. */
int sb_ref_create(const sb_ref_config *cfg, int seqs, int ctx, int tokens,
                  int threads, sb_ref_model **out, sb_err *err)
{
    *out = NULL;
    if (sb_ref_config_check(cfg, err) ||
        sb_refm_range("sequences", seqs, 1, SB_REF_MAX_SEQS, err) ||
        sb_refm_range("context", ctx, 1, SB_REF_MAX_CTX, err) ||
        sb_refm_range("tokens per iteration", tokens, 1, SB_REF_MAX_CTX, err))
        return SB_EINVAL;
    /* the callers hold the footprint to SB_MEM_SHARE of the memory
     * available (sb_mem_fits, or --force); here only what cannot be
     * allocated at all */
    double need = sb_ref_footprint(cfg, seqs, ctx, tokens);
    double have = sb_phys_mem();
    if (have > 0 && need > have)
        return sb_fail(err, SB_ENOMEM,
                       "reference model: needs %.2f GB (weights %.2f GB), "
                       "more than this machine's %.2f GB",
                       need / 1e9, sb_ref_weight_bytes(cfg) / 1e9, have / 1e9);
    sb_ref_model *m = calloc(1, sizeof *m);
    if (!m)
        return sb_fail(err, SB_ENOMEM, "reference model: out of memory");
    m->c = *cfg;
    const sb_ref_config *c = &m->c;
    m->seqs = seqs;
    m->ctx = ctx;
    m->tokens = tokens;
    m->threads = threads > 0 ? threads : omp_get_max_threads();
    m->dt = c->bf16 ? SB_GEMM_BF16 : SB_GEMM_F32;
    m->es = c->bf16 ? 2 : 4;
    int fail = 0;
    sb__alloc_weights(m, &fail);
    if (!fail)
        sb__fill_weights(m);
    sb__alloc_kv(m, &fail);
    sb__alloc_rope(m, &fail);
    sb__alloc_acts(m, &fail);
    if (fail) {
        sb_ref_free(m);
        return sb_fail(err, SB_ENOMEM,
                       "reference model: out of memory allocating %.2f GB",
                       need / 1e9);
    }
    sb__zero_pick_inputs(m);
    int rc = sb__pick_libs(m, err);
    if (rc) {
        sb_ref_free(m);
        return rc;
    }
    /* the decode library by rows where it changes: "openblas (decode,
     * onednn from 4 rows)" */
    char dec[96];
    int n = snprintf(dec, sizeof dec, "%s (decode",
                     sb_gemm_lib_name(m->lib_rows[0]));
    static const int from[4] = {1, 2, 4, 8};
    for (int k = 1; k < 4 && n > 0 && (size_t)n < sizeof dec; k++)
        if (m->lib_rows[k] != m->lib_rows[k - 1])
            n += snprintf(dec + n, sizeof dec - (size_t)n, ", %s from %d rows",
                          sb_gemm_lib_name(m->lib_rows[k]), from[k]);
    snprintf(m->kernels, sizeof m->kernels,
             "%s) / %s (prefill) %s, "
             "paged attention %s",
             dec, sb_gemm_lib_name(m->lib_large), c->bf16 ? "bf16" : "fp32",
             sb_attn_cpu_isa());
    *out = m;
    return 0;
}

void sb_ref_fill_kv(sb_ref_model *m, uint64_t seed)
{
    int64_t kvrow = (int64_t)m->c.hkv * m->c.page * m->c.hd * m->c.layers;
    sb__fill(m->kpool, m->npages, kvrow, false, seed, 1.0);
    sb__fill(m->vpool, m->npages, kvrow, false, seed + 1, 1.0);
}
