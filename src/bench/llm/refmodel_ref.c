/*
 * refmodel_ref.c — the reference decoder in double precision: the same
 * weights, the same paged cache, each product and norm in doubles with the
 * fast path's roundings where it stores the matmul dtype, so one
 * iteration's output is checked against it (refmodel.h).
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

/* ---- the double-precision reference ------------------------------------- */

static double sb__rd(const sb_ref_model *m, const void *a, int64_t i)
{
    return sb_ops_elem(a, m->c.bf16, i);
}

/* What the fast path stores in the matmul dtype. */
static double sb__round(const sb_ref_model *m, double v)
{
    return m->c.bf16 ? (double)sb_bf16_to_f32(sb_bf16_from_f32((float)v)) : v;
}

/* y [n][N] = x [n][K] · W [K][N], W from element w_off */
static void sb__dmm(const sb_ref_model *m, int64_t n, int64_t N, int64_t K,
                    const double *x, const void *W, int64_t w_off, double *y)
{
    const int64_t blk = 256;
#pragma omp parallel for schedule(static)
    for (int64_t o0 = 0; o0 < N; o0 += blk) {
        int64_t o1 = o0 + blk < N ? o0 + blk : N;
        for (int64_t t = 0; t < n; t++) {
            double *yt = y + t * N;
            for (int64_t o = o0; o < o1; o++)
                yt[o] = 0;
            for (int64_t j = 0; j < K; j++) {
                double a = x[t * K + j];
                for (int64_t o = o0; o < o1; o++)
                    yt[o] += a * sb__rd(m, W, w_off + j * N + o);
            }
        }
    }
}

static void sb__dnorm(const sb_ref_model *m, const double *x, const float *g,
                      double *y, int64_t n, int64_t d)
{
    for (int64_t t = 0; t < n; t++) {
        double ss = 0;
        for (int64_t j = 0; j < d; j++)
            ss += x[t * d + j] * x[t * d + j];
        double inv = 1.0 / sqrt(ss / (double)d + SB_OPS_EPS);
        for (int64_t j = 0; j < d; j++)
            y[t * d + j] = sb__round(m, x[t * d + j] * inv * g[j]);
    }
}

static double sb__silu(double a)
{
    return a / (1.0 + exp(-a));
}

int sb_ref_forward_double(const sb_ref_model *m, int n, const int32_t *tokens,
                          double *out, sb_err *err)
{
    const sb_ref_config *c = &m->c;
    const int64_t d = c->d, nq = (int64_t)sb_refm_nqkv(c),
                  ho = (int64_t)c->hq * c->hd, hd = c->hd, h2 = hd / 2,
                  V = c->vocab, g = c->hq / c->hkv;
    int64_t F = c->ffn > c->expert_ffn ? c->ffn : c->expert_ffn;
    if (n < 1 || n > m->ctx)
        return sb_fail(err, SB_EINVAL, "reference model: %d tokens", n);
    double *x = malloc(sizeof(double) * (size_t)(n * d)),
           *xn = malloc(sizeof(double) * (size_t)(n * d)),
           *qkv = malloc(sizeof(double) * (size_t)(n * nq)),
           *o = malloc(sizeof(double) * (size_t)(n * ho)),
           *pr = malloc(sizeof(double) * (size_t)(n * d)),
           *gu = malloc(sizeof(double) * (size_t)(2 * F)),
           *ac = malloc(sizeof(double) * (size_t)F),
           *y = malloc(sizeof(double) * (size_t)d),
           *sc = malloc(sizeof(double) * (size_t)n);
    if (!x || !xn || !qkv || !o || !pr || !gu || !ac || !y || !sc) {
        free(x), free(xn), free(qkv), free(o), free(pr), free(gu), free(ac),
            free(y), free(sc);
        return sb_fail(err, SB_ENOMEM, "reference model: out of memory");
    }
    for (int64_t t = 0; t < n; t++)
        for (int64_t j = 0; j < d; j++)
            x[t * d + j] = sb__rd(m, m->emb, (int64_t)tokens[t] * d + j);
    for (int l = 0; l < c->layers; l++) {
        sb__dnorm(m, x, m->norm1 + l * d, xn, n, d);
        sb__dmm(m, n, nq, d, xn, m->wqkv[l], 0, qkv);
        /* RoPE in double on q and k heads */
        for (int64_t t = 0; t < n; t++)
            for (int h = 0; h < c->hq + c->hkv; h++) {
                double *r = qkv + t * nq + (int64_t)h * hd;
                for (int64_t i = 0; i < h2; i++) {
                    double a = (double)t * pow(c->rope_theta, -2.0 * i / hd);
                    double u = r[i], v = r[i + h2];
                    r[i] = u * cos(a) - v * sin(a);
                    r[i + h2] = v * cos(a) + u * sin(a);
                }
            }
        /* causal attention, query head h on kv head h / g */
        double scale = 1.0 / sqrt((double)hd);
        for (int64_t t = 0; t < n; t++)
            for (int h = 0; h < c->hq; h++) {
                const double *q = qkv + t * nq + (int64_t)h * hd;
                int64_t kh = c->hq + h / g, vh = c->hq + c->hkv + h / g;
                double mx = -INFINITY, sum = 0;
                for (int64_t s = 0; s <= t; s++) {
                    const double *kk = qkv + s * nq + kh * hd;
                    double a = 0;
                    for (int64_t i = 0; i < hd; i++)
                        a += q[i] * kk[i];
                    sc[s] = a * scale;
                    mx = sc[s] > mx ? sc[s] : mx;
                }
                for (int64_t s = 0; s <= t; s++)
                    sum += (sc[s] = exp(sc[s] - mx));
                for (int64_t i = 0; i < hd; i++) {
                    double a = 0;
                    for (int64_t s = 0; s <= t; s++)
                        a += sc[s] * qkv[s * nq + vh * hd + i];
                    o[t * ho + (int64_t)h * hd + i] = sb__round(m, a / sum);
                }
            }
        sb__dmm(m, n, d, ho, o, m->wo[l], 0, pr);
        for (int64_t i = 0; i < n * d; i++)
            x[i] += pr[i];
        sb__dnorm(m, x, m->norm2 + l * d, xn, n, d);
        bool moe = sb_ref_layer_is_moe(c, l);
        int64_t f = moe ? c->expert_ffn : c->ffn;
        for (int64_t t = 0; t < n; t++) {
            int E = moe ? c->experts : 1, k = moe ? c->top_k : 1;
            int idx[SB_REF_MAX_EXPERTS];
            double w[SB_REF_MAX_EXPERTS], p[SB_REF_MAX_EXPERTS];
            if (moe) {
                double mx = -INFINITY, sum = 0, s = 0;
                for (int e = 0; e < E; e++) {
                    double a = 0;
                    for (int64_t j = 0; j < d; j++)
                        a += xn[t * d + j] * (double)m->wr[l][e * d + j];
                    p[e] = a;
                    mx = a > mx ? a : mx;
                }
                for (int e = 0; e < E; e++)
                    sum += (p[e] = exp(p[e] - mx));
                for (int e = 0; e < E; e++)
                    p[e] /= sum;
                sb_moe_topk_d(p, E, k, idx, w);
                for (int j = 0; j < k; j++)
                    s += w[j];
                for (int j = 0; j < k; j++)
                    w[j] /= s;
            } else {
                idx[0] = 0;
                w[0] = 1.0;
            }
            for (int j = 0; j < k; j++) {
                int64_t e = idx[j];
                sb__dmm(m, 1, 2 * f, d, xn + t * d, m->wgu[l], e * 2 * f * d,
                        gu);
                for (int64_t i = 0; i < f; i++)
                    ac[i] = sb__round(m, sb__silu(gu[i]) * gu[f + i]);
                sb__dmm(m, 1, d, f, ac, m->wdown[l], e * d * f, y);
                for (int64_t i = 0; i < d; i++)
                    x[t * d + i] += w[j] * y[i];
            }
        }
    }
    sb__dnorm(m, x, m->normf, xn, n, d);
    sb__dmm(m, n, V, d, xn, m->lm, 0, out);
    free(x), free(xn), free(qkv), free(o), free(pr), free(gu), free(ac),
        free(y), free(sc);
    return 0;
}

int sb_ref_verify(sb_ref_model *m, int slot, int n_prompt, int n_decode,
                  uint64_t seed, double *rel, sb_err *err)
{
    const int64_t V = m->c.vocab;
    int n = n_prompt + n_decode;
    *rel = 0;
    if (slot < 0 || slot >= m->seqs || n_prompt < 1 || n_decode < 0 ||
        n > m->ctx || n_prompt > m->tokens)
        return sb_fail(err, SB_EINVAL,
                       "reference model: verification of %d + %d tokens "
                       "in slot %d does not fit",
                       n_prompt, n_decode, slot);
    int32_t *tok = malloc(sizeof *tok * (size_t)(n + 1));
    float *lg = malloc(sizeof *lg * (size_t)(V * (n_decode + 1)));
    double *ref = malloc(sizeof *ref * (size_t)(V * n));
    if (!tok || !lg || !ref) {
        free(tok), free(lg), free(ref);
        return sb_fail(err, SB_ENOMEM, "reference model: out of memory");
    }
    uint64_t s = seed;
    for (int i = 0; i < n_prompt; i++)
        tok[i] = (int32_t)(sb_rng_unif(&s) * (double)V);
    m->len[slot] = 0;
    int rc = 0;
    for (int step = 0; step <= n_decode && rc == 0; step++) {
        int start = step == 0 ? 0 : n_prompt + step - 1;
        int cnt = step == 0 ? n_prompt : 1;
        rc = sb_ref_forward(m, 1, &slot, &cnt, tok + start, lg + step * V,
                            tok + n_prompt + step, err);
    }
    if (rc == 0)
        rc = sb_ref_forward_double(m, n, tok, ref, err);
    for (int step = 0; step <= n_decode && rc == 0; step++) {
        const double *r = ref + (int64_t)(n_prompt - 1 + step) * V;
        const float *l = lg + (int64_t)step * V;
        double ss = 0, worst = 0;
        for (int64_t j = 0; j < V; j++)
            ss += r[j] * r[j];
        double scale = fmax(sqrt(ss / (double)V), 1.0);
        for (int64_t j = 0; j < V; j++) {
            double e = fabs((double)l[j] - r[j]) / scale;
            if (!(e <= worst)) /* NaN counts */
                worst = isnan(e) ? INFINITY : e;
        }
        if (worst > *rel)
            *rel = worst;
    }
    m->len[slot] = 0;
    free(tok), free(lg), free(ref);
    return rc;
}
