/*
 * refmodel.c — the reference decoder of refmodel.h: weights, the paged KV
 * cache, one serving iteration timed per phase (its configuration is
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

/* The plan of one product, made on first use: C [M][N] = A · W with W
 * [k][n] (C fp32), leading dimensions lda, ldb, ldc (0: packed). NULL
 * when no library can run it. */
static sb_gemm_plan *sb__plan(sb_ref_model *m, int64_t M, int64_t N, int64_t K,
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
    int lib = M <= SB__DECODE_M ? m->lib_small : m->lib_large;
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
static void sb__mm(sb_ref_model *m, int64_t M, int64_t N, int64_t K,
                   const void *A, const void *W, float *C)
{
    if (M <= 0)
        return;
    int nt = m->threads;
    if (M <= SB__DECODE_M && nt > 1 && K >= 16 * nt &&
        M * N <= m->part_floats) {
        int64_t chunk = (K + nt - 1) / nt;
        chunk = (chunk + 15) / 16 * 16;
        int64_t last = K - chunk * ((K + chunk - 1) / chunk - 1);
        sb_gemm_plan *pf = sb__plan(m, M, N, chunk, K, N, N, nt),
                     *pl = last != chunk ? sb__plan(m, M, N, last, K, N, N, nt)
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
    sb_gemm_plan *p = sb__plan(m, M, N, K, 0, 0, 0, 1);
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
        return 0;
    }
    m->lib_small = m->lib_large = usable[0];
    if (nuse == 1)
        return 0;
    /* decode-sized: what streaming every layer's matrices (a MoE layer's
     * first expert) at one row sustains, best of 2 passes after one that
     * makes the plans: from memory, as decode reads them, where one matrix
     * timed alone would sit in the cache */
    double best_s = 0;
    int best_lib = usable[0];
    for (int u = 0; u < nuse; u++) {
        m->lib_small = usable[u];
        double t_best = 0;
        for (int pass = 0; pass < 3; pass++) {
            double t0 = sb_now();
            for (int l = 0; l < c->layers; l++) {
                bool moe = sb_ref_layer_is_moe(c, l);
                int64_t f = moe ? c->expert_ffn : c->ffn,
                        ho = (int64_t)c->hq * c->hd;
                sb__mm(m, 1, (int64_t)sb_refm_nqkv(c), c->d, m->xn, m->wqkv[l],
                       m->qkv);
                sb__mm(m, 1, c->d, ho, m->on, m->wo[l], m->proj);
                sb__mm(m, 1, 2 * f, c->d, m->xn, m->wgu[l],
                       moe ? m->gue : m->gu);
                sb__mm(m, 1, c->d, f, moe ? m->acte : m->act, m->wdown[l],
                       m->proj);
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
    m->lib_small = best_lib;
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
    snprintf(m->kernels, sizeof m->kernels,
             "%s (decode) / %s (prefill) %s, "
             "paged attention %s",
             sb_gemm_lib_name(m->lib_small), sb_gemm_lib_name(m->lib_large),
             c->bf16 ? "bf16" : "fp32", sb_attn_cpu_isa());
    *out = m;
    return 0;
}

void sb_ref_fill_kv(sb_ref_model *m, uint64_t seed)
{
    int64_t kvrow = (int64_t)m->c.hkv * m->c.page * m->c.hd * m->c.layers;
    sb__fill(m->kpool, m->npages, kvrow, false, seed, 1.0);
    sb__fill(m->vpool, m->npages, kvrow, false, seed + 1, 1.0);
}

/* ---- one iteration ------------------------------------------------------ */

static inline float sb__ld(const void *a, bool bf16, int64_t i)
{
    return bf16 ? sb_bf16_to_f32(((const uint16_t *)a)[i])
                : ((const float *)a)[i];
}

static inline void sb__st(void *a, bool bf16, int64_t i, float v)
{
    if (bf16)
        ((uint16_t *)a)[i] = sb_bf16_from_f32(v);
    else
        ((float *)a)[i] = v;
}

/* y [T][d] (dt) = x / rms(x) · g: the ops area's kernel in fp32, a loop
 * that rounds to bf16 otherwise (the kernel stores what it reads). */
static void sb__rmsnorm(const float *x, const float *g, void *y, int64_t T,
                        int64_t d, bool bf16)
{
    if (!bf16) {
        sb_ops_shape s = {.op = SB_OP_RMSNORM, .tokens = T, .d = d};
        sb_ops_cpu_run(&s, x, g, NULL, NULL, y, NULL);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T; t++) {
        const float *r = x + t * d;
        float ss = 0;
        for (int64_t j = 0; j < d; j++)
            ss += r[j] * r[j];
        float inv = 1.0f / sqrtf(ss / (float)d + (float)SB_OPS_EPS);
        for (int64_t j = 0; j < d; j++)
            sb__st(y, bf16, t * d + j, r[j] * inv * g[j]);
    }
}

/* Rows [a | b] (fp32) to silu(a) · b in the matmul dtype, on the calling
 * thread. */
static void sb__swiglu_rows(const float *gu, void *y, int64_t rows, int64_t f,
                            bool bf16)
{
    for (int64_t t = 0; t < rows; t++)
        for (int64_t j = 0; j < f; j++) {
            float a = gu[t * 2 * f + j], b = gu[t * 2 * f + f + j];
            sb__st(y, bf16, t * f + j, a / (1.0f + expf(-a)) * b);
        }
}

/* y [T][f] (dt) = silu(a) · b of rows [a | b] (fp32): the ops area's
 * kernel in fp32 (it stores what it reads), rows over the threads in
 * bf16. */
static void sb__swiglu(const float *gu, void *y, int64_t T, int64_t f,
                       bool bf16)
{
    if (!bf16) {
        sb_ops_shape s = {.op = SB_OP_SWIGLU, .tokens = T, .d = f};
        sb_ops_cpu_run(&s, gu, NULL, NULL, NULL, y, NULL);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T; t++)
        sb__swiglu_rows(gu + t * 2 * f, (uint16_t *)y + t * f, 1, f, true);
}

/* Closes a phase that began at *t0: its time, and its event when the
 * model records them; the next phase begins now. */
static void sb__ph(sb_ref_model *m, int ph, double *t0)
{
    double now = sb_now();
    m->t[ph] += now - *t0;
    if (m->ev && m->n_ev < m->cap_ev)
        m->ev[m->n_ev++] = (sb_ref_event){ph, m->ev_layer, m->ev_m, *t0, now};
    *t0 = now;
}

/* The experts of a MoE layer spread over the threads: the plans (one
 * slot a thread) made first, outside the parallel region; each expert's
 * gate and up, silu and down on one thread, heaviest group first. */
static void sb__experts_spread(sb_ref_model *m, int l, const int64_t *off,
                               double *t0)
{
    const sb_ref_config *c = &m->c;
    const int E = c->experts, nt = m->threads;
    const int64_t d = c->d, fe = c->expert_ffn;
    sb_gemm_plan *up[SB_REF_MAX_EXPERTS], *down[SB_REF_MAX_EXPERTS];
    int order[SB_REF_MAX_EXPERTS], n = 0;
    for (int e = 0; e < E; e++) {
        int64_t r = off[e + 1] - off[e];
        up[e] = down[e] = NULL;
        if (r <= 0)
            continue;
        up[e] = sb__plan(m, r, 2 * fe, d, 0, 0, 0, nt);
        down[e] = sb__plan(m, r, d, fe, 0, 0, 0, nt);
        if (!up[e] || !down[e])
            continue;
        int i = n++;
        while (i > 0 && off[order[i - 1] + 1] - off[order[i - 1]] < r) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = e;
    }
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (int i = 0; i < n; i++) {
        int e = order[i], t = omp_get_thread_num();
        int64_t r = off[e + 1] - off[e];
        float *gu = m->gue + off[e] * 2 * fe;
        sb_gemm_run(up[e], t, (const char *)m->xp + off[e] * d * m->es,
                    (const char *)m->wgu[l] + (size_t)e * 2 * fe * d * m->es,
                    gu);
        char *act = (char *)m->acte + off[e] * fe * m->es;
        sb__swiglu_rows(gu, act, r, fe, c->bf16);
        sb_gemm_run(down[e], t, act,
                    (const char *)m->wdown[l] + (size_t)e * d * fe * m->es,
                    m->ye + off[e] * d);
    }
    /* the silu runs inside the experts' loop here: its time counts there */
    sb__ph(m, SB_REF_EXPERTS, t0);
}

static void sb__moe_layer(sb_ref_model *m, int l, int64_t T, double *t0)
{
    const sb_ref_config *c = &m->c;
    const bool bf = c->bf16;
    const int E = c->experts, k = c->top_k;
    const int64_t d = c->d, fe = c->expert_ffn;
    const float *wr = m->wr[l];
    const sb_moe_shape ms = {
        .tokens = T, .d_model = d, .experts = E, .topk = k};
    /* router: fp32 logits (each row in fp32 in xr, free until the LM
     * head), then the MoE area's softmax, top-k and renormalisation, and
     * its stable dispatch of rows by expert */
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T; t++) {
        float *xt = m->xr + t * d;
        for (int64_t j = 0; j < d; j++)
            xt[j] = sb__ld(m->xn, bf, t * d + j);
        for (int e = 0; e < E; e++) {
            const float *we = wr + e * d;
            float a = 0;
#pragma omp simd reduction(+ : a)
            for (int64_t j = 0; j < d; j++)
                a += xt[j] * we[j];
            m->rp[t * E + e] = a;
        }
    }
    sb_moe_cpu_route_select(&ms, NULL, m->rp, m->idx, m->rw);
    int64_t *off = m->offsets;
    sb_moe_cpu_dispatch_rows(&ms, m->idx, m->xn, m->xp, (size_t)d * m->es, off,
                             m->pos, m->row_token, m->scratch);
    sb__ph(m, SB_REF_ROUTER, t0);
    /* experts: gate and up, silu, down. Decode-sized groups one after
     * the other, each split over the threads (sb__mm); larger groups
     * spread over the threads, heaviest first, each on one thread: a
     * library threading a product of a few dozen rows gains little. */
    int64_t R = T * k, most = 0;
    for (int e = 0; e < E; e++)
        most = off[e + 1] - off[e] > most ? off[e + 1] - off[e] : most;
    if (most <= SB__DECODE_M || m->threads < 2 || E < 2) {
        for (int e = 0; e < E; e++) {
            int64_t r = off[e + 1] - off[e];
            sb__mm(m, r, 2 * fe, d, (const char *)m->xp + off[e] * d * m->es,
                   (const char *)m->wgu[l] + (size_t)e * 2 * fe * d * m->es,
                   m->gue + off[e] * 2 * fe);
        }
        sb__ph(m, SB_REF_EXPERTS, t0);
        sb__swiglu(m->gue, m->acte, R, fe, bf);
        sb__ph(m, SB_REF_ELEM, t0);
        for (int e = 0; e < E; e++) {
            int64_t r = off[e + 1] - off[e];
            sb__mm(m, r, d, fe, (const char *)m->acte + off[e] * fe * m->es,
                   (const char *)m->wdown[l] + (size_t)e * d * fe * m->es,
                   m->ye + off[e] * d);
        }
        sb__ph(m, SB_REF_EXPERTS, t0);
    } else {
        sb__experts_spread(m, l, off, t0);
    }
    /* the MoE area's combine, then into the residual */
    sb_moe_cpu_combine(&ms, m->ye, m->pos, m->rw, m->proj);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < T * d; i++)
        m->x[i] += m->proj[i];
    sb__ph(m, SB_REF_ROUTER, t0);
}

/* One iteration's ragged batch and clock, shared by its steps. */
typedef struct sb__iter {
    int64_t T, np;     /* tokens and pages of the batch */
    sb_paged_shape ps; /* the batch as the paged kernel sees it */
    sb_attn_ws ws;     /* the paged kernel's work list */
    double t0;         /* when the current phase began */
} sb__iter;

/* Checks the iteration's sequences and tokens and lays out the batch:
 * each token's position and slot, the page table, the lengths and the
 * cumulative offsets; the tokens and pages into it. */
static int sb__lay_out(sb_ref_model *m, int n, const int *slot, const int *ntok,
                       const int32_t *tokens, sb__iter *it, sb_err *err)
{
    const int64_t V = m->c.vocab, P = m->c.page;
    if (n < 1 || n > m->seqs)
        return sb_fail(err, SB_EINVAL,
                       "reference model: %d sequences in an iteration "
                       "(1 .. %d)",
                       n, m->seqs);
    int64_t T = 0, np = 0;
    m->cu_q[0] = m->cu_pages[0] = 0;
    for (int i = 0; i < n; i++) {
        if (slot[i] < 0 || slot[i] >= m->seqs || ntok[i] < 1)
            return sb_fail(err, SB_EINVAL,
                           "reference model: sequence %d: slot %d, %d "
                           "tokens",
                           i, slot[i], ntok[i]);
        for (int j = 0; j < i; j++)
            if (slot[j] == slot[i])
                return sb_fail(err, SB_EINVAL,
                               "reference model: slot %d twice in one "
                               "iteration",
                               slot[i]);
        int64_t len = (int64_t)m->len[slot[i]] + ntok[i];
        if (len > m->ctx)
            return sb_fail(err, SB_EINVAL,
                           "reference model: slot %d would hold %lld "
                           "tokens, more than its %d",
                           slot[i], (long long)len, m->ctx);
        if (T + ntok[i] > m->tokens)
            return sb_fail(err, SB_EINVAL,
                           "reference model: more than %d tokens in an "
                           "iteration",
                           m->tokens);
        for (int u = 0; u < ntok[i]; u++) {
            m->tpos[T + u] = m->len[slot[i]] + u;
            m->tslot[T + u] = slot[i];
        }
        T += ntok[i];
        int64_t pg = (len + P - 1) / P;
        memcpy(m->table + np, m->pages + (int64_t)slot[i] * m->pps,
               (size_t)pg * 4);
        np += pg;
        m->plen[i] = len;
        m->cu_q[i + 1] = T;
        m->cu_pages[i + 1] = np;
    }
    for (int64_t t = 0; t < T; t++)
        if (tokens[t] < 0 || tokens[t] >= V)
            return sb_fail(err, SB_EINVAL,
                           "reference model: token %lld = %d: expected "
                           "0 .. %lld",
                           (long long)t, tokens[t], (long long)V - 1);
    it->T = T;
    it->np = np;
    return 0;
}

/* The laid-out batch as the paged attention kernel's shape. */
static sb_paged_shape sb__paged_shape_of(const sb_ref_model *m, int n,
                                         const sb__iter *it)
{
    const sb_ref_config *c = &m->c;
    sb_paged_shape ps = {.batch = n,
                         .hq = c->hq,
                         .hkv = c->hkv,
                         .d = c->hd,
                         .page_size = c->page,
                         .len = m->plen,
                         .cu_q = m->cu_q,
                         .cu_pages = m->cu_pages,
                         .total_q = it->T,
                         .total_pages = it->np};
    for (int i = 0; i < n; i++) {
        ps.total_keys += m->plen[i];
        if (m->plen[i] > ps.max_len)
            ps.max_len = m->plen[i];
    }
    return ps;
}

/* x [T][d] (fp32) = the embedding rows of the tokens. */
static void sb__embed(sb_ref_model *m, const int32_t *tokens, int64_t T)
{
    const bool bf = m->c.bf16;
    const int64_t d = m->c.d;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T; t++)
        for (int64_t j = 0; j < d; j++)
            m->x[t * d + j] = sb__ld(m->emb, bf, (int64_t)tokens[t] * d + j);
}

/* RoPE on the q and k of qkv: q into m->q, k (and v as it is) into each
 * token's page of one layer's pools kp and vp. */
static void sb__rope_kv(sb_ref_model *m, int64_t T, float *kp, float *vp)
{
    const sb_ref_config *c = &m->c;
    const int64_t nq = (int64_t)sb_refm_nqkv(c), ho = (int64_t)c->hq * c->hd,
                  hd = c->hd, h2 = hd / 2, P = c->page,
                  kvrow = (int64_t)c->hkv * P * hd;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T; t++) {
        const float *r = m->qkv + t * nq;
        const float *cs = m->cos_t + (int64_t)m->tpos[t] * h2,
                    *sn = m->sin_t + (int64_t)m->tpos[t] * h2;
        int64_t pg = m->pages[(int64_t)m->tslot[t] * m->pps + m->tpos[t] / P],
                sl = m->tpos[t] % P;
        for (int h = 0; h < c->hq + c->hkv; h++) {
            const float *src = r + (int64_t)h * hd;
            float *dst = h < c->hq ? m->q + t * ho + (int64_t)h * hd
                                   : kp + pg * kvrow +
                                         ((int64_t)(h - c->hq) * P + sl) * hd;
            for (int64_t i = 0; i < h2; i++) {
                float a = src[i], b = src[i + h2];
                dst[i] = a * cs[i] - b * sn[i];
                dst[i + h2] = b * cs[i] + a * sn[i];
            }
        }
        for (int h = 0; h < c->hkv; h++)
            memcpy(vp + pg * kvrow + ((int64_t)h * P + sl) * hd,
                   r + (int64_t)(c->hq + c->hkv + h) * hd, (size_t)hd * 4);
    }
}

/* Layer l's attention block: norm, QKV, RoPE and the cache, paged
 * attention, the output projection into the residual, and the second
 * norm (into xn, for the MLP or the MoE). */
static void sb__attn_layer(sb_ref_model *m, int l, sb__iter *it)
{
    const sb_ref_config *c = &m->c;
    const bool bf = c->bf16;
    const int64_t d = c->d, nq = (int64_t)sb_refm_nqkv(c),
                  ho = (int64_t)c->hq * c->hd, T = it->T;
    const int64_t kvrow = (int64_t)c->hkv * c->page * c->hd;
    float *kp = m->kpool + (int64_t)l * m->npages * kvrow,
          *vp = m->vpool + (int64_t)l * m->npages * kvrow;
    sb__rmsnorm(m->x, m->norm1 + l * d, m->xn, T, d, bf);
    sb__ph(m, SB_REF_ELEM, &it->t0);
    sb__mm(m, T, nq, d, m->xn, m->wqkv[l], m->qkv);
    sb__ph(m, SB_REF_QKV, &it->t0);
    sb__rope_kv(m, T, kp, vp);
    sb__ph(m, SB_REF_ELEM, &it->t0);
    sb_cpu_paged(&it->ps, m->q, kp, vp, m->table, m->o, &it->ws);
    sb__ph(m, SB_REF_ATTN, &it->t0);
    const void *oin = m->o;
    if (bf) {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < T * ho; i++)
            ((uint16_t *)m->on)[i] = sb_bf16_from_f32(m->o[i]);
        oin = m->on;
        sb__ph(m, SB_REF_ELEM, &it->t0);
    }
    sb__mm(m, T, d, ho, oin, m->wo[l], m->proj);
    sb__ph(m, SB_REF_OPROJ, &it->t0);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < T * d; i++)
        m->x[i] += m->proj[i];
    sb__rmsnorm(m->x, m->norm2 + l * d, m->xn, T, d, bf);
    sb__ph(m, SB_REF_ELEM, &it->t0);
}

/* Layer l's dense MLP on xn: gate and up, silu, down, into the
 * residual. */
static void sb__mlp_layer(sb_ref_model *m, int l, int64_t T, double *t0)
{
    const bool bf = m->c.bf16;
    const int64_t d = m->c.d, f = m->c.ffn;
    sb__mm(m, T, 2 * f, d, m->xn, m->wgu[l], m->gu);
    sb__ph(m, SB_REF_MLP, t0);
    sb__swiglu(m->gu, m->act, T, f, bf);
    sb__ph(m, SB_REF_ELEM, t0);
    sb__mm(m, T, d, f, m->act, m->wdown[l], m->proj);
    sb__ph(m, SB_REF_MLP, t0);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < T * d; i++)
        m->x[i] += m->proj[i];
    sb__ph(m, SB_REF_ELEM, t0);
}

/* The last token of each sequence: final norm, LM head, greedy pick;
 * the logits and next tokens to the caller where asked. */
static void sb__lm_head(sb_ref_model *m, int n, float *logits, int32_t *next)
{
    const int64_t d = m->c.d, V = m->c.vocab;
    for (int i = 0; i < n; i++)
        memcpy(m->xr + (int64_t)i * d, m->x + (m->cu_q[i + 1] - 1) * d,
               (size_t)d * 4);
    sb__rmsnorm(m->xr, m->normf, m->hl, n, d, m->c.bf16);
    sb__mm(m, n, V, d, m->hl, m->lm, m->logits);
    for (int i = 0; i < n; i++) {
        const float *lg = m->logits + (int64_t)i * V;
        int64_t best = 0;
        for (int64_t j = 1; j < V; j++)
            if (lg[j] > lg[best])
                best = j;
        if (next)
            next[i] = (int32_t)best;
        if (logits)
            memcpy(logits + (int64_t)i * V, lg, (size_t)V * 4);
    }
}

int sb_ref_forward(sb_ref_model *m, int n, const int *slot, const int *ntok,
                   const int32_t *tokens, float *logits, int32_t *next,
                   sb_err *err)
{
    const sb_ref_config *c = &m->c;
    sb__iter it = {0};
    int rc = sb__lay_out(m, n, slot, ntok, tokens, &it, err);
    if (rc)
        return rc;
    it.ps = sb__paged_shape_of(m, n, &it);
    const int64_t T = it.T;
    it.t0 = sb_now();
    m->ev_layer = -1;
    m->ev_m = T;
    sb__embed(m, tokens, T);
    sb__ph(m, SB_REF_EMBED, &it.t0);
    /* the paged kernel's work list for this iteration's ragged batch (a
     * serving engine's scheduling), charged to the attention core */
    rc = sb_cpu_paged_ws(&it.ps, m->threads, &it.ws, err);
    if (rc)
        return rc;
    sb__ph(m, SB_REF_ATTN, &it.t0);

    m->ev_m = T;
    for (int l = 0; l < c->layers; l++) {
        m->ev_layer = l;
        sb__attn_layer(m, l, &it);
        if (sb_ref_layer_is_moe(c, l))
            sb__moe_layer(m, l, T, &it.t0);
        else
            sb__mlp_layer(m, l, T, &it.t0);
    }
    m->ev_layer = -1;
    m->ev_m = n;
    sb__lm_head(m, n, logits, next);
    sb__ph(m, SB_REF_LMHEAD, &it.t0);
    for (int i = 0; i < n; i++)
        m->len[slot[i]] = (int)m->plen[i];
    sb_attn_ws_free(&it.ws);
    return 0;
}
