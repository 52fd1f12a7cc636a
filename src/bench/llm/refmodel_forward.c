/*
 * refmodel_forward.c — one serving iteration of the reference decoder
 * (sb_ref_forward, refmodel.h): the batch laid out, the embedding, per
 * layer RMSNorm, Q/K/V, rope and the KV cache, paged attention, the MLP
 * or the MoE (route, dispatch, the experts' GEMMs, combine), the head and
 * the next tokens, each phase timed.
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
        up[e] = sb_refm_plan(m, r, 2 * fe, d, 0, 0, 0, nt);
        down[e] = sb_refm_plan(m, r, d, fe, 0, 0, 0, nt);
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
     * the other, each split over the threads (sb_refm_mm); larger groups
     * spread over the threads, heaviest first, each on one thread: a
     * library threading a product of a few dozen rows gains little. */
    int64_t R = T * k, most = 0;
    for (int e = 0; e < E; e++)
        most = off[e + 1] - off[e] > most ? off[e + 1] - off[e] : most;
    if (most <= SB__DECODE_M || m->threads < 2 || E < 2) {
        for (int e = 0; e < E; e++) {
            int64_t r = off[e + 1] - off[e];
            sb_refm_mm(m, r, 2 * fe, d,
                       (const char *)m->xp + off[e] * d * m->es,
                       (const char *)m->wgu[l] + (size_t)e * 2 * fe * d * m->es,
                       m->gue + off[e] * 2 * fe);
        }
        sb__ph(m, SB_REF_EXPERTS, t0);
        sb__swiglu(m->gue, m->acte, R, fe, bf);
        sb__ph(m, SB_REF_ELEM, t0);
        for (int e = 0; e < E; e++) {
            int64_t r = off[e + 1] - off[e];
            sb_refm_mm(m, r, d, fe, (const char *)m->acte + off[e] * fe * m->es,
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
    sb_refm_mm(m, T, nq, d, m->xn, m->wqkv[l], m->qkv);
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
    sb_refm_mm(m, T, d, ho, oin, m->wo[l], m->proj);
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
    sb_refm_mm(m, T, 2 * f, d, m->xn, m->wgu[l], m->gu);
    sb__ph(m, SB_REF_MLP, t0);
    sb__swiglu(m->gu, m->act, T, f, bf);
    sb__ph(m, SB_REF_ELEM, t0);
    sb_refm_mm(m, T, d, f, m->act, m->wdown[l], m->proj);
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
    sb_refm_mm(m, n, V, d, m->hl, m->lm, m->logits);
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
