/*
 * moe.c — the backend-independent half of the MoE primitives: shape
 * checks, the top-k tie rule, the synthetic routing generator, FLOP and
 * byte accounting, and the double-precision references and verifiers
 * (declared in include/solbench/moe.h). A GPU backend reuses all of it and
 * only supplies its own kernels.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "solbench/moe.h"
#include "solbench/util.h"

/* ---- shape --------------------------------------------------------------- */

int sb_moe_check(const sb_moe_shape *s, sb_err *err)
{
    if (s->experts < 1 || s->experts > SB_MOE_MAX_EXPERTS)
        return sb_fail(err, SB_EINVAL, "parameter experts=%d: must be in 1..%d",
                       s->experts, SB_MOE_MAX_EXPERTS);
    if (s->topk < 1)
        return sb_fail(err, SB_EINVAL, "parameter topk=%d: must be >= 1",
                       s->topk);
    if (s->topk > s->experts)
        return sb_fail(err, SB_EINVAL,
                       "parameter topk=%d: must be <= experts (%d)", s->topk,
                       s->experts);
    if (s->tokens < 1 || s->tokens > SB_MOE_MAX_TOKENS)
        return sb_fail(err, SB_EINVAL,
                       "parameter tokens=%lld: must be in 1..%d",
                       (long long)s->tokens, SB_MOE_MAX_TOKENS);
    if (s->d_model < 1 || s->d_model > SB_MOE_MAX_DIM)
        return sb_fail(err, SB_EINVAL,
                       "parameter d_model=%lld: must be in 1..%d",
                       (long long)s->d_model, SB_MOE_MAX_DIM);
    if (s->ffn < 1 || s->ffn > 4 * SB_MOE_MAX_DIM)
        return sb_fail(err, SB_EINVAL, "parameter ffn=%lld: must be in 1..%d",
                       (long long)s->ffn, 4 * SB_MOE_MAX_DIM);
    /* R = T·k rows index int BLAS dimensions and int group sizes. */
    if (s->tokens * s->topk > INT32_MAX)
        return sb_fail(err, SB_EINVAL,
                       "parameter tokens=%lld: tokens x topk (%lld) must be "
                       "below 2^31",
                       (long long)s->tokens, (long long)s->tokens * s->topk);
    if (!(s->skew >= 0.0 && s->skew <= 1.0))
        return sb_fail(err, SB_EINVAL, "parameter skew=%g: must be in 0..1",
                       s->skew);
    if (s->force_expert < -1 || s->force_expert >= s->experts)
        return sb_fail(err, SB_EINVAL,
                       "parameter force_expert=%d: must be -1 (none) or an "
                       "expert index below experts (%d)",
                       s->force_expert, s->experts);
    return 0;
}

/* ---- top-k --------------------------------------------------------------- */

/* Insertion into a descending list of at most k entries. A new value goes
 * in front of an entry only when strictly greater, so among equal values
 * the one seen first (the lower index) stays ahead: the documented tie
 * rule. NaN compares as -infinity. */
#define SB__TOPK_BODY(T)                                                       \
    int cnt = 0;                                                               \
    T kv[SB_MOE_MAX_EXPERTS];                                                  \
    for (int i = 0; i < n; i++) {                                              \
        T x = v[i];                                                            \
        if (x != x)                                                            \
            x = -(T)INFINITY;                                                  \
        if (cnt == k && !(x > kv[k - 1]))                                      \
            continue;                                                          \
        int p = cnt < k ? cnt : k - 1;                                         \
        while (p > 0 && x > kv[p - 1]) {                                       \
            kv[p] = kv[p - 1];                                                 \
            idx[p] = idx[p - 1];                                               \
            p--;                                                               \
        }                                                                      \
        kv[p] = x;                                                             \
        idx[p] = i;                                                            \
        if (cnt < k)                                                           \
            cnt++;                                                             \
    }                                                                          \
    if (val)                                                                   \
        for (int j = 0; j < k; j++)                                            \
            val[j] = kv[j];

void sb_moe_topk_f(const float *v, int n, int k, int *idx, float *val)
{
    SB__TOPK_BODY(float)
}

void sb_moe_topk_d(const double *v, int n, int k, int *idx, double *val)
{
    SB__TOPK_BODY(double)
}

/* ---- routing
 * ----------------------------------------------------------------- */

double sb_moe_router_bias(const sb_moe_shape *s, int e)
{
    double b = -s->skew * SB_MOE_ZIPF_MAX * log((double)e + 1.0);
    if (e == s->force_expert)
        b += SB_MOE_FORCE_BIAS;
    return b;
}

/* One token of the synthetic routing: Gumbel-top-k over the Zipf
 * log-popularity. keys has room for E doubles. */
static void sb__synth_token(const sb_moe_shape *s, int64_t t, double *keys,
                            int *idx, float *w)
{
    uint64_t st =
        s->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)t * 0xd1b54a32d192ed03ULL;
    double alpha = s->skew * SB_MOE_ZIPF_MAX;
    int E = s->experts, k = s->topk;
    double kmax = -INFINITY;
    for (int e = 0; e < E; e++) {
        /* U in (0,1) strictly, so both logarithms are finite. */
        double u = ((double)(sb_rng_next(&st) >> 11) + 0.5) *
                   (1.0 / 9007199254740992.0);
        keys[e] = -alpha * log((double)e + 1.0) - log(-log(u));
        if (e != s->force_expert && keys[e] > kmax)
            kmax = keys[e];
    }
    if (s->force_expert >= 0)
        keys[s->force_expert] = kmax + 1.0;
    double top[SB_MOE_MAX_EXPERTS];
    sb_moe_topk_d(keys, E, k, idx, top);
    if (w) {
        double sum = 0.0;
        for (int j = 0; j < k; j++)
            sum += exp(top[j] - top[0]);
        for (int j = 0; j < k; j++)
            w[j] = (float)(exp(top[j] - top[0]) / sum);
    }
}

void sb_moe_synth_route(const sb_moe_shape *s, int *idx, float *w)
{
    int k = s->topk;
#pragma omp parallel
    {
        double *keys = malloc(sizeof(double) * (size_t)s->experts);
        if (keys) {
#pragma omp for schedule(static)
            for (int64_t t = 0; t < s->tokens; t++)
                sb__synth_token(s, t, keys, idx + t * k, w ? w + t * k : NULL);
        }
        free(keys);
    }
}

void sb_moe_synth_counts(const sb_moe_shape *s, int64_t *counts)
{
    int E = s->experts, k = s->topk;
    for (int e = 0; e < E; e++)
        counts[e] = 0;
    double *keys = malloc(sizeof(double) * (size_t)E);
    int *idx = malloc(sizeof(int) * (size_t)k);
    if (!keys || !idx) {
        free(keys);
        free(idx);
        return;
    }
    for (int64_t t = 0; t < s->tokens; t++) {
        sb__synth_token(s, t, keys, idx, NULL);
        for (int j = 0; j < k; j++)
            counts[idx[j]]++;
    }
    free(keys);
    free(idx);
}

void sb_moe_counts(const int *idx, int64_t tokens, int topk, int experts,
                   int64_t *counts)
{
    for (int e = 0; e < experts; e++)
        counts[e] = 0;
    for (int64_t i = 0; i < tokens * topk; i++)
        if (idx[i] >= 0 && idx[i] < experts)
            counts[idx[i]]++;
}

double sb_moe_imbalance(const int64_t *counts, int experts)
{
    int64_t max = 0, sum = 0;
    for (int e = 0; e < experts; e++) {
        sum += counts[e];
        if (counts[e] > max)
            max = counts[e];
    }
    return sum > 0 ? (double)max * experts / (double)sum : 0.0;
}

int sb_moe_active(const int64_t *counts, int experts)
{
    int a = 0;
    for (int e = 0; e < experts; e++)
        a += counts[e] > 0;
    return a;
}

/* ---- accounting
 * ---------------------------------------------------------------- */

double sb_moe_route_flops(const sb_moe_shape *s)
{
    double T = (double)s->tokens, D = (double)s->d_model, E = s->experts,
           k = s->topk;
    /* GEMM, then per logit: bias add, max, subtract, exp, sum, scale;
     * per token: k adds and k multiplies for the renormalisation. */
    return 2.0 * T * D * E + 6.0 * T * E + 2.0 * T * k;
}

double sb_moe_route_bytes(const sb_moe_shape *s)
{
    double T = (double)s->tokens, D = (double)s->d_model, E = s->experts,
           k = s->topk;
    /* X, Wr, bias read; probs, indices and weights written. */
    return 4.0 * (T * D + D * E + E) + 4.0 * T * E + 8.0 * T * k;
}

double sb_moe_dispatch_flops(const sb_moe_shape *s)
{
    (void)s;
    return 0.0;
}

double sb_moe_dispatch_bytes(const sb_moe_shape *s)
{
    double T = (double)s->tokens, D = (double)s->d_model, E = s->experts,
           k = s->topk;
    /* X read once, T·k rows written; int32 indices read; int64 pos and
     * row_token written; int64 offsets written. */
    return 4.0 * T * D + 4.0 * T * k * D + 4.0 * T * k + 16.0 * T * k +
           8.0 * (E + 1.0);
}

double sb_moe_combine_flops(const sb_moe_shape *s)
{
    return 2.0 * (double)s->tokens * s->topk * (double)s->d_model;
}

double sb_moe_combine_bytes(const sb_moe_shape *s)
{
    double T = (double)s->tokens, D = (double)s->d_model, k = s->topk;
    /* Y rows read, out written, int64 pos and fp32 weights read. */
    return 4.0 * T * k * D + 4.0 * T * D + 12.0 * T * k;
}

double sb_moe_gemm_flops(const sb_moe_shape *s)
{
    double R = (double)s->tokens * s->topk, D = (double)s->d_model,
           F = (double)s->ffn;
    if (!s->gated)
        return 2.0 * R * D * F;
    /* up, gate, down GEMMs; silu(g)·u = exp, add, divide, multiply. */
    return 6.0 * R * D * F + 4.0 * R * F;
}

double sb_moe_gemm_bytes(const sb_moe_shape *s, int active)
{
    double R = (double)s->tokens * s->topk, D = (double)s->d_model,
           F = (double)s->ffn, E = s->experts;
    double offs = 8.0 * (E + 1.0);
    if (!s->gated)
        return 4.0 * R * D + 4.0 * active * D * F + 4.0 * R * F + offs;
    return 4.0 * R * D + 12.0 * active * D * F + 4.0 * R * D + offs;
}

/* ---- verification
 * --------------------------------------------------------------- */

/* Records the first wrong element (lowest index) seen by any thread. */
typedef struct sb__first {
    int64_t at;
    char msg[200];
} sb__first;

static void sb__first_set(sb__first *f, int64_t at, const char *msg)
{
#pragma omp critical(sb_moe_first)
    {
        if (at < f->at) {
            f->at = at;
            snprintf(f->msg, sizeof f->msg, "%s", msg);
        }
    }
}

static void sb__why(char *why, int why_len, int64_t bad, const sb__first *f)
{
    if (why && why_len > 0)
        snprintf(why, (size_t)why_len, "%lld wrong; first: %s", (long long)bad,
                 f->msg);
}

int64_t sb_moe_route_verify(const sb_moe_shape *s, const float *x,
                            const float *wr, const float *bias,
                            const float *probs, const int *idx, const float *w,
                            char *why, int why_len)
{
    const int E = s->experts, k = s->topk;
    const int64_t T = s->tokens, D = s->d_model;
    int64_t bad = 0;
    sb__first first = {INT64_MAX, ""};
#pragma omp parallel reduction(+ : bad)
    {
        double *l = malloc(sizeof(double) * 2 * (size_t)E);
        int *ridx = malloc(sizeof(int) * (size_t)k);
        char msg[200];
        if (!l || !ridx) {
            bad++;
            sb__first_set(&first, -1, "out of memory in the reference");
        } else {
#pragma omp for schedule(static)
            for (int64_t t = 0; t < T; t++) {
                double *ab = l + E;
                for (int e = 0; e < E; e++) {
                    l[e] = bias[e];
                    ab[e] = fabs(bias[e]);
                }
                for (int64_t d = 0; d < D; d++) {
                    double xd = x[t * D + d];
                    const float *wrow = wr + d * E;
                    for (int e = 0; e < E; e++) {
                        l[e] += xd * wrow[e];
                        ab[e] += fabs(xd * wrow[e]);
                    }
                }
                /* fp32 GEMM error bound per logit (a generous multiple of
                 * the rounding of a length-D dot product). */
                double taumax = 0.0;
                for (int e = 0; e < E; e++) {
                    ab[e] = 1e-5 * ab[e] + 1e-6;
                    if (ab[e] > taumax)
                        taumax = ab[e];
                }
                double kth;
                {
                    double top[SB_MOE_MAX_EXPERTS];
                    sb_moe_topk_d(l, E, k, ridx, top);
                    kth = top[k - 1];
                }
                double mx = -INFINITY, sum = 0.0;
                for (int e = 0; e < E; e++)
                    mx = l[e] > mx ? l[e] : mx;
                for (int e = 0; e < E; e++)
                    sum += exp(l[e] - mx);
                for (int e = 0; e < E; e++) {
                    double pr = exp(l[e] - mx) / sum;
                    double got = probs[t * E + e];
                    if (!(fabs(got - pr) <= 1e-5 + 4.0 * taumax * pr)) {
                        bad++;
                        snprintf(msg, sizeof msg,
                                 "probs[token %lld][expert %d] = %.8g, "
                                 "reference %.8g",
                                 (long long)t, e, got, pr);
                        sb__first_set(&first, t * (E + k) + e, msg);
                    }
                }
                /* The chosen experts: distinct, in range, each within the
                 * tolerance of the true k-th, weights = softmax over them. */
                const int *ci = idx + t * k;
                const float *cw = w + t * k;
                double wsum = 0.0, lmax = -INFINITY;
                int okset = 1;
                for (int j = 0; j < k; j++) {
                    int c = ci[j];
                    int dup = 0;
                    for (int i = 0; i < j; i++)
                        dup |= ci[i] == c;
                    if (c < 0 || c >= E || dup ||
                        !(l[c] >= kth - ab[c] - taumax)) {
                        okset = 0;
                        bad++;
                        snprintf(msg, sizeof msg,
                                 "idx[token %lld][slot %d] = %d is not among "
                                 "the top-%d experts",
                                 (long long)t, j, c, k);
                        sb__first_set(&first, t * (E + k) + E + j, msg);
                        continue;
                    }
                    lmax = l[c] > lmax ? l[c] : lmax;
                }
                if (!okset)
                    continue;
                for (int j = 0; j < k; j++)
                    wsum += exp(l[ci[j]] - lmax);
                for (int j = 0; j < k; j++) {
                    double wr_ = exp(l[ci[j]] - lmax) / wsum;
                    double got = cw[j];
                    int order_ok = j == 0 || got <= cw[j - 1] + 1e-6;
                    if (!(fabs(got - wr_) <= 1e-4 + 4.0 * taumax) ||
                        !order_ok) {
                        bad++;
                        snprintf(msg, sizeof msg,
                                 "w[token %lld][slot %d] = %.8g, reference "
                                 "%.8g%s",
                                 (long long)t, j, got, wr_,
                                 order_ok ? "" : " (not descending)");
                        sb__first_set(&first, t * (E + k) + E + j, msg);
                    }
                }
            }
        }
        free(l);
        free(ridx);
    }
    if (bad)
        sb__why(why, why_len, bad, &first);
    return bad;
}

void sb_moe_dispatch_ref(const sb_moe_shape *s, const int *idx,
                         int64_t *offsets, int64_t *pos, int64_t *row_token)
{
    const int E = s->experts, k = s->topk;
    const int64_t T = s->tokens;
    for (int e = 0; e <= E; e++)
        offsets[e] = 0;
    for (int64_t i = 0; i < T * k; i++)
        offsets[idx[i] + 1]++;
    for (int e = 0; e < E; e++)
        offsets[e + 1] += offsets[e];
    int64_t *next = malloc(sizeof(int64_t) * (size_t)E);
    if (!next)
        return;
    memcpy(next, offsets, sizeof(int64_t) * (size_t)E);
    for (int64_t t = 0; t < T; t++)
        for (int j = 0; j < k; j++) {
            int64_t r = next[idx[t * k + j]]++;
            pos[t * k + j] = r;
            row_token[r] = t;
        }
    free(next);
}

int64_t sb_moe_dispatch_verify(const sb_moe_shape *s, const int *idx,
                               const float *x, const float *xp,
                               const int64_t *offsets, const int64_t *pos,
                               const int64_t *row_token, char *why, int why_len)
{
    const int E = s->experts, k = s->topk;
    const int64_t T = s->tokens, D = s->d_model, R = T * k;
    sb__first first = {INT64_MAX, ""};
    char msg[200];
    int64_t *ro = malloc(sizeof(int64_t) * (size_t)(E + 1));
    int64_t *rp = malloc(sizeof(int64_t) * (size_t)R);
    int64_t *rt = malloc(sizeof(int64_t) * (size_t)R);
    int64_t bad = 0;
    if (!ro || !rp || !rt) {
        free(ro);
        free(rp);
        free(rt);
        if (why && why_len > 0)
            snprintf(why, (size_t)why_len, "out of memory in the reference");
        return 1;
    }
    sb_moe_dispatch_ref(s, idx, ro, rp, rt);
    for (int e = 0; e <= E; e++)
        if (offsets[e] != ro[e]) {
            bad++;
            snprintf(msg, sizeof msg, "offsets[%d] = %lld, reference %lld", e,
                     (long long)offsets[e], (long long)ro[e]);
            sb__first_set(&first, e, msg);
        }
    for (int64_t i = 0; i < R; i++) {
        if (pos[i] != rp[i]) {
            bad++;
            snprintf(msg, sizeof msg, "pos[%lld] = %lld, reference %lld",
                     (long long)i, (long long)pos[i], (long long)rp[i]);
            sb__first_set(&first, E + 1 + i, msg);
        }
        if (row_token[i] != rt[i]) {
            bad++;
            snprintf(msg, sizeof msg, "row_token[%lld] = %lld, reference %lld",
                     (long long)i, (long long)row_token[i], (long long)rt[i]);
            sb__first_set(&first, E + 1 + R + i, msg);
        }
    }
    /* Every gathered row bit-for-bit equal to its token's row. */
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t r = 0; r < R; r++) {
        const float *src = x + rt[r] * D, *dst = xp + r * D;
        if (memcmp(src, dst, sizeof(float) * (size_t)D) == 0)
            continue;
        for (int64_t d = 0; d < D; d++)
            if (memcmp(src + d, dst + d, sizeof(float)) != 0) {
                char m[200];
                bad++;
                snprintf(m, sizeof m,
                         "xp[row %lld][%lld] = %.8g, want x[token %lld] = "
                         "%.8g",
                         (long long)r, (long long)d, dst[d], (long long)rt[r],
                         src[d]);
                sb__first_set(&first, E + 1 + 2 * R + r * D + d, m);
            }
    }
    free(ro);
    free(rp);
    free(rt);
    if (bad)
        sb__why(why, why_len, bad, &first);
    return bad;
}

int64_t sb_moe_combine_verify(const sb_moe_shape *s, const float *y,
                              const int64_t *pos, const float *w,
                              const float *out, char *why, int why_len)
{
    const int k = s->topk;
    const int64_t T = s->tokens, D = s->d_model;
    int64_t bad = 0;
    sb__first first = {INT64_MAX, ""};
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < T; t++) {
        for (int64_t d = 0; d < D; d++) {
            double ref = 0.0, ab = 0.0;
            for (int j = 0; j < k; j++) {
                double v = (double)w[t * k + j] * y[pos[t * k + j] * D + d];
                ref += v;
                ab += fabs(v);
            }
            double got = out[t * D + d];
            if (!(fabs(got - ref) <= 1e-5 * ab + 1e-30)) {
                char m[200];
                bad++;
                snprintf(m, sizeof m,
                         "out[token %lld][%lld] = %.8g, reference %.8g",
                         (long long)t, (long long)d, got, ref);
                sb__first_set(&first, t * D + d, m);
            }
        }
    }
    if (bad)
        sb__why(why, why_len, bad, &first);
    return bad;
}

static int sb__expert_of(const int64_t *offsets, int E, int64_t r)
{
    int lo = 0, hi = E - 1;
    /* the last e with offsets[e] <= r (empty groups share an offset) */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (offsets[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int64_t sb_moe_gemm_verify(const sb_moe_shape *s, const int64_t *offsets,
                           const float *xp, const float *w_up,
                           const float *w_gate, const float *w_down,
                           const float *out, const int64_t *rows, int nrows,
                           char *why, int why_len)
{
    const int E = s->experts;
    const int64_t D = s->d_model, F = s->ffn;
    const int64_t ncol = s->gated ? D : F;
    const double tol = s->gated ? 3e-4 : 1e-4;
    int64_t bad = 0;
    sb__first first = {INT64_MAX, ""};
#pragma omp parallel reduction(+ : bad)
    {
        /* acc/ab: the output row; g/u/h: the gated intermediate. */
        double *acc = malloc(sizeof(double) * (size_t)(2 * ncol + 3 * F));
        if (!acc) {
            bad++;
            sb__first_set(&first, -1, "out of memory in the reference");
        } else {
            double *ab = acc + ncol, *g = ab + ncol, *u = g + F, *h = u + F;
#pragma omp for schedule(dynamic, 1)
            for (int i = 0; i < nrows; i++) {
                int64_t r = rows[i];
                int e = sb__expert_of(offsets, E, r);
                const float *xr = xp + r * D;
                const float *wu = w_up + (int64_t)e * D * F;
                for (int64_t c = 0; c < ncol; c++)
                    acc[c] = ab[c] = 0.0;
                if (!s->gated) {
                    for (int64_t d = 0; d < D; d++) {
                        double xd = xr[d];
                        for (int64_t c = 0; c < F; c++) {
                            acc[c] += xd * wu[d * F + c];
                            ab[c] += fabs(xd * wu[d * F + c]);
                        }
                    }
                } else {
                    const float *wg = w_gate + (int64_t)e * D * F;
                    const float *wd = w_down + (int64_t)e * F * D;
                    for (int64_t f = 0; f < F; f++)
                        g[f] = u[f] = 0.0;
                    for (int64_t d = 0; d < D; d++) {
                        double xd = xr[d];
                        for (int64_t f = 0; f < F; f++) {
                            g[f] += xd * wg[d * F + f];
                            u[f] += xd * wu[d * F + f];
                        }
                    }
                    for (int64_t f = 0; f < F; f++)
                        h[f] = g[f] / (1.0 + exp(-g[f])) * u[f];
                    for (int64_t f = 0; f < F; f++) {
                        double hf = h[f];
                        for (int64_t c = 0; c < D; c++) {
                            acc[c] += hf * wd[f * D + c];
                            ab[c] += fabs(hf * wd[f * D + c]);
                        }
                    }
                }
                for (int64_t c = 0; c < ncol; c++) {
                    double got = out[r * ncol + c];
                    if (!(fabs(got - acc[c]) <= tol * ab[c] + 1e-6)) {
                        char m[200];
                        bad++;
                        snprintf(m, sizeof m,
                                 "out[row %lld (expert %d)][%lld] = %.8g, "
                                 "reference %.8g",
                                 (long long)r, e, (long long)c, got, acc[c]);
                        sb__first_set(&first, r * ncol + c, m);
                    }
                }
            }
        }
        free(acc);
    }
    if (bad)
        sb__why(why, why_len, bad, &first);
    return bad;
}

int sb_moe_gemm_sample_rows(const sb_moe_shape *s, const int64_t *offsets,
                            int64_t *rows, int max)
{
    const int E = s->experts;
    const int64_t R = offsets[E];
    int n = 0;
    if (R <= 0 || max < 1)
        return 0;
    if (R <= max) { /* every row */
        for (int64_t r = 0; r < R; r++)
            rows[n++] = r;
        return n;
    }
    /* Group edges catch offset mistakes; spread rows catch the rest (R >
     * max >= spread: distinct rows, the last within R / spread of the
     * end). */
    for (int e = 0; e < E && n + 2 <= max / 2; e++) {
        if (offsets[e + 1] == offsets[e])
            continue;
        rows[n++] = offsets[e];
        if (offsets[e + 1] - 1 != offsets[e])
            rows[n++] = offsets[e + 1] - 1;
    }
    const int edges = n, spread = max - n;
    for (int i = 0; i < spread; i++) {
        const int64_t r = (int64_t)((double)R * (i + 0.5) / spread);
        bool seen = false;
        for (int j = 0; j < edges; j++)
            seen |= rows[j] == r;
        if (!seen)
            rows[n++] = r;
    }
    return n;
}

/* ---- inputs -------------------------------------------------------------- */

int64_t sb_moe_input_size(const sb_moe_shape *s, sb_moe_input in)
{
    const int64_t T = s->tokens, D = s->d_model, E = s->experts, F = s->ffn,
                  R = T * s->topk;
    switch (in) {
    case SB_MOE_IN_X:
        return T * D;
    case SB_MOE_IN_WR:
        return D * E;
    case SB_MOE_IN_BIAS:
        return E;
    case SB_MOE_IN_Y:
    case SB_MOE_IN_XP:
        return R * D;
    default:
        return E * D * F;
    }
}

void sb_moe_input_fill(const sb_moe_shape *s, sb_moe_input in, float *v)
{
    const int64_t n = sb_moe_input_size(s, in);
    if (in == SB_MOE_IN_BIAS) {
        for (int64_t e = 0; e < n; e++)
            v[e] = (float)sb_moe_router_bias(s, (int)e);
        return;
    }
    const double D = (double)s->d_model, F = (double)s->ffn;
    uint64_t seed = s->seed * 4;
    double a = 1.0;
    switch (in) {
    case SB_MOE_IN_X:
    case SB_MOE_IN_XP:
        seed += 1;
        break;
    case SB_MOE_IN_WR:
        seed += 2, a = 3.0 / sqrt(D);
        break;
    case SB_MOE_IN_Y:
        seed += 3;
        break;
    case SB_MOE_IN_W_UP:
        seed += 2, a = sqrt(3.0 / D);
        break;
    case SB_MOE_IN_W_GATE:
        seed += 3, a = sqrt(3.0 / D);
        break;
    default: /* W_down */
        seed += 4, a = sqrt(3.0 / F);
        break;
    }
    const float fa = (float)a;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        uint64_t st = seed * 0x2545f4914f6cdd1dULL + (uint64_t)i;
        v[i] = (float)((2.0 * sb_rng_unif(&st) - 1.0) * fa);
    }
}
