/*
 * moe_cpu.c — the MoE benchmarks on the CPU: moe.route, moe.dispatch,
 * moe.combine and moe.grouped_gemm, with their OpenMP kernels and matrix
 * products on the GEMM library of the point (backend/cpu/cpu_gemm.h:
 * OpenBLAS or oneDNN, lib=auto timing both on the whole kernel).
 *
 * What each kernel computes, its FLOP and byte counts, the routing
 * generator and the verifiers live in src/def/moe.c (include/solbench/moe.h);
 * this file only supplies the CPU kernels, allocates and initialises their
 * buffers, and wires them into the registry.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench/moe/moe_cpu.h"
#include "solbench/bench.h"
#include "solbench/util.h"

/* ---- kernels
 * ----------------------------------------------------------------- */

/* ---- GEMM plans
 * ----------------------------------------------------------------- */

/* The plan index of a group of n rows: a short search beside a GEMM. */
static int sb__plan_of(const sb_moe_plans *pl, int64_t n)
{
    for (int i = 0; i < pl->n; i++)
        if (pl->rows[i] == n)
            return i;
    return -1;
}

int sb_moe_cpu_plans(const sb_moe_shape *s, bool route, const int64_t *offsets,
                     int lib, sb_moe_plans *pl, sb_err *err)
{
    memset(pl, 0, sizeof *pl);
    pl->lib = lib;
    const int slots = omp_get_max_threads();
    const int64_t D = s->d_model, F = s->ffn;
    if (route) {
        sb_gemm_desc d = {.dt = SB_GEMM_F32,
                          .m = s->tokens,
                          .n = s->experts,
                          .k = D,
                          .alpha = 1};
        return sb_gemm_plan_create(lib, &d, slots, &pl->route, err);
    }
    const int E = s->experts;
    pl->rows = calloc((size_t)E, sizeof *pl->rows);
    pl->up = calloc((size_t)E, sizeof *pl->up);
    pl->down = calloc((size_t)E, sizeof *pl->down);
    if (!pl->rows || !pl->up || !pl->down) {
        sb_moe_cpu_plans_free(pl);
        return sb_fail(err, SB_ENOMEM, "moe: out of memory");
    }
    for (int e = 0; e < E; e++) {
        const int64_t n = offsets[e + 1] - offsets[e];
        if (n == 0 || sb__plan_of(pl, n) >= 0)
            continue;
        int i = pl->n++;
        pl->rows[i] = n;
        /* up and gate: [n x D]·[D x F]; down: [n x F]·[F x D] */
        sb_gemm_desc up = {
            .dt = SB_GEMM_F32, .m = n, .n = F, .k = D, .alpha = 1};
        sb_gemm_desc down = {
            .dt = SB_GEMM_F32, .m = n, .n = D, .k = F, .alpha = 1};
        int rc = sb_gemm_plan_create(lib, &up, slots, &pl->up[i], err);
        if (rc == 0 && s->gated)
            rc = sb_gemm_plan_create(lib, &down, slots, &pl->down[i], err);
        if (rc) {
            sb_moe_cpu_plans_free(pl);
            return rc;
        }
    }
    return 0;
}

void sb_moe_cpu_plans_free(sb_moe_plans *pl)
{
    sb_gemm_plan_destroy(pl->route);
    for (int i = 0; i < pl->n; i++) {
        sb_gemm_plan_destroy(pl->up[i]);
        if (pl->down)
            sb_gemm_plan_destroy(pl->down[i]);
    }
    free(pl->rows);
    free(pl->up);
    free(pl->down);
    memset(pl, 0, sizeof *pl);
}

/* ---- kernels
 * ----------------------------------------------------------------- */

void sb_moe_cpu_route_select(const sb_moe_shape *s, const float *bias,
                             float *probs, int *idx, float *w)
{
    const int E = s->experts, k = s->topk;
    const int64_t T = s->tokens;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T; t++) {
        float *p = probs + t * E;
        float mx = -INFINITY, sum = 0.0f;
        for (int e = 0; e < E; e++) {
            if (bias)
                p[e] += bias[e];
            mx = p[e] > mx ? p[e] : mx;
        }
        for (int e = 0; e < E; e++) {
            p[e] = expf(p[e] - mx);
            sum += p[e];
        }
        float inv = 1.0f / sum;
        for (int e = 0; e < E; e++)
            p[e] *= inv;
        float top[SB_MOE_MAX_EXPERTS];
        sb_moe_topk_f(p, E, k, idx + t * k, top);
        float ts = 0.0f;
        for (int j = 0; j < k; j++)
            ts += top[j];
        float tinv = 1.0f / ts;
        for (int j = 0; j < k; j++)
            w[t * k + j] = top[j] * tinv;
    }
}

void sb_moe_cpu_route(const sb_moe_shape *s, const sb_moe_plans *pl,
                      const float *x, const float *wr, const float *bias,
                      float *probs, int *idx, float *w)
{
    sb_gemm_run(pl->route, 0, x, wr, probs);
    sb_moe_cpu_route_select(s, bias, probs, idx, w);
}

/* Per-thread histograms padded to whole cache lines (8 int64), so two
 * threads never count into one line. */
static int64_t sb__hist_stride(int experts)
{
    return (experts + 7) / 8 * 8;
}

size_t sb_moe_cpu_dispatch_scratch(const sb_moe_shape *s)
{
    return sizeof(int64_t) * (size_t)omp_get_max_threads() *
           (size_t)sb__hist_stride(s->experts);
}

void sb_moe_cpu_dispatch(const sb_moe_shape *s, const int *idx, const float *x,
                         float *xp, int64_t *offsets, int64_t *pos,
                         int64_t *row_token, int64_t *scratch)
{
    sb_moe_cpu_dispatch_rows(s, idx, x, xp, sizeof(float) * (size_t)s->d_model,
                             offsets, pos, row_token, scratch);
}

void sb_moe_cpu_dispatch_rows(const sb_moe_shape *s, const int *idx,
                              const void *x, void *xp, size_t row_bytes,
                              int64_t *offsets, int64_t *pos,
                              int64_t *row_token, int64_t *scratch)
{
    const int E = s->experts, k = s->topk;
    const int64_t T = s->tokens, hs = sb__hist_stride(E);
    /* Each thread owns a contiguous chunk of tokens. Its histogram gives
     * it a private cursor per expert, placed after the rows of the earlier
     * chunks: the sort is stable (ascending token inside each group) and
     * needs no atomics. */
#pragma omp parallel
    {
        const int nth = omp_get_num_threads(), tid = omp_get_thread_num();
        const int64_t lo = T * tid / nth, hi = T * (tid + 1) / nth;
        int64_t *hist = scratch + tid * hs;
        for (int e = 0; e < E; e++)
            hist[e] = 0;
        for (int64_t i = lo * k; i < hi * k; i++)
            hist[idx[i]]++;
#pragma omp barrier
#pragma omp single
        {
            int64_t run = 0;
            for (int e = 0; e < E; e++) {
                offsets[e] = run;
                for (int th = 0; th < nth; th++) {
                    int64_t c = scratch[th * hs + e];
                    scratch[th * hs + e] = run;
                    run += c;
                }
            }
            offsets[E] = run;
        } /* implicit barrier: cursors are ready */
        for (int64_t t = lo; t < hi; t++) {
            const char *src = (const char *)x + (size_t)t * row_bytes;
            for (int j = 0; j < k; j++) {
                int64_t r = hist[idx[t * k + j]]++;
                pos[t * k + j] = r;
                row_token[r] = t;
                memcpy((char *)xp + (size_t)r * row_bytes, src, row_bytes);
            }
        }
    }
}

void sb_moe_cpu_combine(const sb_moe_shape *s, const float *y,
                        const int64_t *pos, const float *w, float *out)
{
    const int k = s->topk;
    const int64_t T = s->tokens, D = s->d_model;
    /* The scatter-add written as a gather per token: each output row has
     * one owner, so threads never collide. */
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < T; t++) {
        float *o = out + t * D;
        const float *y0 = y + pos[t * k] * D;
        const float w0 = w[t * k];
#pragma omp simd
        for (int64_t d = 0; d < D; d++)
            o[d] = w0 * y0[d];
        for (int j = 1; j < k; j++) {
            const float *yj = y + pos[t * k + j] * D;
            const float wj = w[t * k + j];
#pragma omp simd
            for (int64_t d = 0; d < D; d++)
                o[d] += wj * yj[d];
        }
    }
}

/* One expert's group: a single GEMM, or gate, up, silu·mul and down. The
 * library threads itself when called outside a parallel region and runs
 * on the calling thread inside one (so does the elementwise loop); slot
 * is the calling thread's. */
static void sb__expert(const sb_moe_shape *s, const sb_moe_plans *pl, int e,
                       int slot, const int64_t *offsets, const float *xp,
                       const float *w_up, const float *w_gate,
                       const float *w_down, float *g, float *h, float *out)
{
    const int64_t D = s->d_model, F = s->ffn;
    const int64_t r0 = offsets[e];
    const int64_t n = offsets[e + 1] - r0;
    const int i = sb__plan_of(pl, n);
    if (i < 0)
        return; /* a group size the plans were not made for: C stays as is */
    const float *xe = xp + r0 * D;
    const float *wu = w_up + (int64_t)e * D * F;
    if (!s->gated) {
        sb_gemm_run(pl->up[i], slot, xe, wu, out + r0 * F);
        return;
    }
    const float *wg = w_gate + (int64_t)e * D * F;
    const float *wd = w_down + (int64_t)e * F * D;
    float *ge = g + r0 * F, *he = h + r0 * F;
    sb_gemm_run(pl->up[i], slot, xe, wg, ge);
    sb_gemm_run(pl->up[i], slot, xe, wu, he);
    const int64_t m = n * F;
#pragma omp parallel for schedule(static)
    for (int64_t q = 0; q < m; q++)
        he[q] = ge[q] / (1.0f + expf(-ge[q])) * he[q];
    sb_gemm_run(pl->down[i], slot, he, wd, out + r0 * D);
}

void sb_moe_cpu_gemm(const sb_moe_shape *s, const sb_moe_plans *pl,
                     const int64_t *offsets, const float *xp, const float *w_up,
                     const float *w_gate, const float *w_down, float *g,
                     float *h, float *out)
{
    const int E = s->experts;
    const int nth = omp_get_max_threads();
    const int64_t share = offsets[E] / (nth > 0 ? nth : 1);
    /* A group larger than one thread's fair share of the rows gets every
     * thread (threaded BLAS, one group after another). The smaller groups
     * run side by side, one per thread, largest first: many small
     * threaded GEMMs in a row pay for starting and joining threads each
     * time (8 groups of 128 rows, D = F = 512, 2 cores: 1.1-1.2x slower
     * on a quiet machine, 2.5x with other work running). */
    int order[SB_MOE_MAX_EXPERTS];
    int nsmall = 0;
    for (int e = 0; e < E; e++) {
        const int64_t n = offsets[e + 1] - offsets[e];
        if (n == 0)
            continue;
        if (nth > 1 && n > share) {
            sb__expert(s, pl, e, 0, offsets, xp, w_up, w_gate, w_down, g, h,
                       out);
            continue;
        }
        int i = nsmall++;
        while (i > 0 && offsets[order[i - 1] + 1] - offsets[order[i - 1]] < n) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = e;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < nsmall; i++)
        sb__expert(s, pl, order[i], omp_get_thread_num(), offsets, xp, w_up,
                   w_gate, w_down, g, h, out);
}

/* ---- benchmark plumbing
 * --------------------------------------------------------- */

enum { SB_MOE_ROUTE, SB_MOE_DISPATCH, SB_MOE_COMBINE, SB_MOE_GEMM };

typedef struct sb_moe_state {
    sb_moe_shape s;
    int kind;
    float *x, *wr, *bias, *probs, *w, *xp, *y, *out, *wu, *wg, *wd, *g, *h;
    int *idx;
    int64_t *offsets, *pos, *row_token, *scratch, *counts;
    sb_moe_plans plans; /* route and grouped_gemm */
    bool lib_auto;
    double lib_s[SB_GEMM_NLIBS];
} sb_moe_state;

static const sb_param_def sb__moe_params[] = {
    {"tokens", SB_P_INT, "512", 1, SB_MOE_MAX_TOKENS, NULL,
     "tokens in the batch (T)"},
    {"d_model", SB_P_INT, "512", 1, SB_MOE_MAX_DIM, NULL, "model width (D)"},
    {"experts", SB_P_INT, "8", 1, SB_MOE_MAX_EXPERTS, NULL, "experts (E)"},
    {"topk", SB_P_INT, "2", 1, SB_MOE_MAX_EXPERTS, NULL,
     "experts per token (k <= E)"},
    {"skew", SB_P_FLOAT, "0", 0, 1, NULL,
     "routing skew: 0 uniform .. 1 Zipf exponent 4 (most tokens on a few "
     "experts)"},
    {"force_expert", SB_P_INT, "-1", -1, SB_MOE_MAX_EXPERTS - 1, NULL,
     "-1, or an expert every token picks first"},
    {"seed", SB_P_INT, "1", 0, 2147483647.0, NULL,
     "seed of the inputs and the synthetic routing"},
    {"lib", SB_P_STR, "auto", 0, 0, "auto|openblas|onednn",
     "moe.route's GEMM library; auto = the faster on this point, timed"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const sb_param_def sb__moe_gemm_params[] = {
    {"tokens", SB_P_INT, "512", 1, SB_MOE_MAX_TOKENS, NULL,
     "tokens in the batch (T)"},
    {"d_model", SB_P_INT, "512", 1, SB_MOE_MAX_DIM, NULL, "model width (D)"},
    {"ffn", SB_P_INT, "512", 1, 4 * SB_MOE_MAX_DIM, NULL,
     "expert FFN size (F)"},
    {"experts", SB_P_INT, "8", 1, SB_MOE_MAX_EXPERTS, NULL, "experts (E)"},
    {"topk", SB_P_INT, "2", 1, SB_MOE_MAX_EXPERTS, NULL,
     "experts per token (k <= E)"},
    {"skew", SB_P_FLOAT, "0", 0, 1, NULL,
     "routing skew: 0 uniform .. 1 Zipf exponent 4"},
    {"force_expert", SB_P_INT, "-1", -1, SB_MOE_MAX_EXPERTS - 1, NULL,
     "-1, or an expert every token picks first"},
    {"gated", SB_P_BOOL, "0", 0, 0, NULL,
     "gated MLP down(silu(gate(x))*up(x)) instead of one GEMM"},
    {"seed", SB_P_INT, "1", 0, 2147483647.0, NULL,
     "seed of the inputs and the synthetic routing"},
    {"lib", SB_P_STR, "auto", 0, 0, "auto|openblas|onednn",
     "GEMM library; auto = the faster on this point, timed"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static void sb__moe_shape(const sb_params *p, sb_moe_shape *s)
{
    memset(s, 0, sizeof *s);
    s->tokens = sb_p_int(p, "tokens");
    s->d_model = sb_p_int(p, "d_model");
    s->experts = (int)sb_p_int(p, "experts");
    s->topk = (int)sb_p_int(p, "topk");
    s->skew = sb_p_num(p, "skew");
    s->force_expert = (int)sb_p_int(p, "force_expert");
    s->seed = (uint64_t)sb_p_int(p, "seed");
    s->ffn = sb_p_find(p, "ffn") ? sb_p_int(p, "ffn") : 1;
    s->gated = sb_p_find(p, "gated") ? sb_p_bool(p, "gated") : false;
}

static int sb__moe_decode(const sb_bench *b, const sb_params *p, void *shape,
                          sb_err *err)
{
    (void)b, (void)err;
    sb__moe_shape(p, shape);
    return 0;
}

static int sb__moe_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    return sb_moe_check(pt->shape, err);
}

static void sb__zero(void *v, size_t bytes)
{
    char *c = v;
    const int64_t n = (int64_t)bytes;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i += 4096)
        memset(c + i, 0, (size_t)(n - i < 4096 ? n - i : 4096));
}

static void *sb__alloc(size_t bytes, int *fail)
{
    void *p = sb_alloc_aligned(bytes ? bytes : 1);
    if (!p)
        *fail = 1;
    else
        sb__zero(p, bytes);
    return p;
}

static double sb__moe_footprint_kind(const sb_moe_shape *sh, int kind)
{
    const sb_moe_shape s = *sh;
    double T = (double)s.tokens, D = (double)s.d_model, E = s.experts,
           k = s.topk, F = (double)s.ffn, R = T * k;
    switch (kind) {
    case SB_MOE_ROUTE:
        return 4.0 * (T * D + D * E + E + T * E) + 8.0 * T * k;
    case SB_MOE_DISPATCH:
        return 4.0 * (T * D + R * D) + 8.0 * T * k + 16.0 * R +
               8.0 * (E + 1) * (1.0 + omp_get_max_threads());
    case SB_MOE_COMBINE:
        return 4.0 * (R * D + T * D) + 8.0 * T * k + 16.0 * R + 8.0 * E;
    default:
        return 4.0 * R * D + 4.0 * E * D * F * (s.gated ? 3.0 : 1.0) +
               4.0 * R * (s.gated ? 2.0 * F + D : F) + 8.0 * T * k + 16.0 * R +
               8.0 * E;
    }
}

static void sb__moe_teardown(void *state)
{
    sb_moe_state *st = state;
    if (!st)
        return;
    void *bufs[] = {st->x,   st->wr,        st->bias,   st->probs, st->w,
                    st->xp,  st->y,         st->out,    st->wu,    st->wg,
                    st->wd,  st->g,         st->h,      st->idx,   st->offsets,
                    st->pos, st->row_token, st->scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        sb_free_aligned(bufs[i]);
    sb_moe_cpu_plans_free(&st->plans);
    free(st->counts);
    free(st);
}

static void sb__moe_run(void *state, uint64_t iters);
static void sb__moe_run_once(void *state)
{
    sb__moe_run(state, 1);
}

/* The plans of the point's library, or (lib=auto) of the library whose
 * whole kernel runs fastest here. */
static int sb__moe_plans(sb_moe_state *st, const sb_params *p, sb_err *err)
{
    const bool route = st->kind == SB_MOE_ROUTE;
    const char *name = sb_p_str(p, "lib");
    char why[192] = "";
    if (strcmp(name, "auto") != 0) {
        int lib = sb_gemm_lib_parse(name);
        if (!sb_gemm_lib_supports(lib, SB_GEMM_F32, why, sizeof why))
            return sb_fail(err, SB_EUNSUP, "unsupported: %s fp32: %s", name,
                           why);
        return sb_moe_cpu_plans(&st->s, route, st->offsets, lib, &st->plans,
                                err);
    }
    st->lib_auto = true;
    double best = INFINITY;
    sb_moe_plans keep = {0};
    bool have = false;
    for (int l = 0; l < SB_GEMM_NLIBS; l++) {
        if (!sb_gemm_lib_supports(l, SB_GEMM_F32, why, sizeof why))
            continue;
        int rc =
            sb_moe_cpu_plans(&st->s, route, st->offsets, l, &st->plans, err);
        if (rc == SB_EUNSUP)
            continue;
        if (rc) {
            if (have)
                sb_moe_cpu_plans_free(&keep);
            return rc;
        }
        st->lib_s[l] = sb_gemm_time(sb__moe_run_once, st, 3);
        if (st->lib_s[l] < best) {
            best = st->lib_s[l];
            if (have)
                sb_moe_cpu_plans_free(&keep);
            keep = st->plans;
            have = true;
        } else {
            sb_moe_cpu_plans_free(&st->plans);
        }
        memset(&st->plans, 0, sizeof st->plans);
    }
    if (!have)
        return sb_fail(err, SB_EUNSUP,
                       "unsupported: no GEMM library runs "
                       "fp32 here: %s",
                       why);
    st->plans = keep;
    return 0;
}

static int sb__moe_setup_kind(const sb_moe_shape *shape, const sb_params *p,
                              int kind, void **state, sb_err *err)
{
    sb_moe_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "moe: out of memory");
    st->s = *shape;
    st->kind = kind;
    const sb_moe_shape *s = &st->s;
    const int64_t T = s->tokens, D = s->d_model, F = s->ffn, R = T * s->topk;
    const int E = s->experts;
    int fail = 0;
    st->counts = calloc((size_t)E, sizeof(int64_t));
    fail |= st->counts == NULL;
    st->idx = sb__alloc(sizeof(int) * (size_t)R, &fail);
    st->w = sb__alloc(sizeof(float) * (size_t)R, &fail);
    if (kind == SB_MOE_ROUTE) {
        st->x = sb__alloc(sizeof(float) * (size_t)(T * D), &fail);
        st->wr = sb__alloc(sizeof(float) * (size_t)(D * E), &fail);
        st->bias = sb__alloc(sizeof(float) * (size_t)E, &fail);
        st->probs = sb__alloc(sizeof(float) * (size_t)(T * E), &fail);
        if (!fail) {
            sb_moe_input_fill(s, SB_MOE_IN_X, st->x);
            sb_moe_input_fill(s, SB_MOE_IN_WR, st->wr);
            sb_moe_input_fill(s, SB_MOE_IN_BIAS, st->bias);
        }
    } else {
        st->offsets = sb__alloc(sizeof(int64_t) * (size_t)(E + 1), &fail);
        st->pos = sb__alloc(sizeof(int64_t) * (size_t)R, &fail);
        st->row_token = sb__alloc(sizeof(int64_t) * (size_t)R, &fail);
        if (!fail) {
            sb_moe_synth_route(s, st->idx, st->w);
            if (kind != SB_MOE_DISPATCH)
                sb_moe_dispatch_ref(s, st->idx, st->offsets, st->pos,
                                    st->row_token);
        }
        if (kind == SB_MOE_DISPATCH) {
            st->x = sb__alloc(sizeof(float) * (size_t)(T * D), &fail);
            st->xp = sb__alloc(sizeof(float) * (size_t)(R * D), &fail);
            st->scratch = sb__alloc(sb_moe_cpu_dispatch_scratch(s), &fail);
            if (!fail)
                sb_moe_input_fill(s, SB_MOE_IN_X, st->x);
        } else if (kind == SB_MOE_COMBINE) {
            st->y = sb__alloc(sizeof(float) * (size_t)(R * D), &fail);
            st->out = sb__alloc(sizeof(float) * (size_t)(T * D), &fail);
            if (!fail)
                sb_moe_input_fill(s, SB_MOE_IN_Y, st->y);
        } else {
            const int64_t wn = (int64_t)E * D * F;
            st->xp = sb__alloc(sizeof(float) * (size_t)(R * D), &fail);
            st->wu = sb__alloc(sizeof(float) * (size_t)wn, &fail);
            if (s->gated) {
                st->wg = sb__alloc(sizeof(float) * (size_t)wn, &fail);
                st->wd = sb__alloc(sizeof(float) * (size_t)wn, &fail);
                st->g = sb__alloc(sizeof(float) * (size_t)(R * F), &fail);
                st->h = sb__alloc(sizeof(float) * (size_t)(R * F), &fail);
            }
            st->out = sb__alloc(
                sizeof(float) * (size_t)(R * (s->gated ? D : F)), &fail);
            if (!fail) {
                sb_moe_input_fill(s, SB_MOE_IN_XP, st->xp);
                sb_moe_input_fill(s, SB_MOE_IN_W_UP, st->wu);
                if (s->gated) {
                    sb_moe_input_fill(s, SB_MOE_IN_W_GATE, st->wg);
                    sb_moe_input_fill(s, SB_MOE_IN_W_DOWN, st->wd);
                }
            }
        }
    }
    if (fail) {
        sb__moe_teardown(st);
        return sb_fail(err, SB_ENOMEM,
                       "could not allocate the buffers of this point");
    }
    if (kind != SB_MOE_ROUTE)
        sb_moe_counts(st->idx, T, s->topk, E, st->counts);
    if (kind == SB_MOE_ROUTE || kind == SB_MOE_GEMM) {
        int rc = sb__moe_plans(st, p, err);
        if (rc) {
            sb__moe_teardown(st);
            return rc;
        }
    }
    *state = st;
    return 0;
}

static void sb__moe_run(void *state, uint64_t iters)
{
    sb_moe_state *st = state;
    const sb_moe_shape *s = &st->s;
    for (uint64_t it = 0; it < iters; it++) {
        switch (st->kind) {
        case SB_MOE_ROUTE:
            sb_moe_cpu_route(s, &st->plans, st->x, st->wr, st->bias, st->probs,
                             st->idx, st->w);
            break;
        case SB_MOE_DISPATCH:
            sb_moe_cpu_dispatch(s, st->idx, st->x, st->xp, st->offsets, st->pos,
                                st->row_token, st->scratch);
            break;
        case SB_MOE_COMBINE:
            sb_moe_cpu_combine(s, st->y, st->pos, st->w, st->out);
            break;
        default:
            sb_moe_cpu_gemm(s, &st->plans, st->offsets, st->xp, st->wu, st->wg,
                            st->wd, st->g, st->h, st->out);
        }
        SB_KEEP(st->idx[0]);
    }
}

static int sb__moe_verify(void *state, sb_result *r)
{
    sb_moe_state *st = state;
    const sb_moe_shape *s = &st->s;
    char why[320] = "";
    int64_t bad;
    switch (st->kind) {
    case SB_MOE_ROUTE:
        bad = sb_moe_route_verify(s, st->x, st->wr, st->bias, st->probs,
                                  st->idx, st->w, why, sizeof why);
        break;
    case SB_MOE_DISPATCH:
        bad = sb_moe_dispatch_verify(s, st->idx, st->x, st->xp, st->offsets,
                                     st->pos, st->row_token, why, sizeof why);
        break;
    case SB_MOE_COMBINE:
        bad = sb_moe_combine_verify(s, st->y, st->pos, st->w, st->out, why,
                                    sizeof why);
        break;
    default: {
        int64_t rows[32];
        int n = sb_moe_gemm_sample_rows(s, st->offsets, rows, 32);
        bad = sb_moe_gemm_verify(s, st->offsets, st->xp, st->wu, st->wg, st->wd,
                                 st->out, rows, n, why, sizeof why);
        if (!bad)
            sb_result_note(r,
                           "verified %d sampled rows (all columns) "
                           "against a double-precision reference",
                           n);
    }
    }
    r->valid = bad == 0;
    if (bad)
        sb_result_note(r, "verification failed: %s", why);
    return 0;
}

/* The runner's FLOP and byte hooks: the shared accounting of moe.h on the
 * decoded shape, by the definition's kind. */
static double sb__moe_flops(const sb_point *pt)
{
    const sb_moe_shape *s = pt->shape;
    switch (pt->bench->kind) {
    case SB_MOE_ROUTE:
        return sb_moe_route_flops(s);
    case SB_MOE_COMBINE:
        return sb_moe_combine_flops(s);
    case SB_MOE_GEMM:
        return sb_moe_gemm_flops(s);
    default:
        return 0.0;
    }
}

/* The weights read by the grouped GEMM depend on how many experts receive
 * tokens: the synthetic routing is deterministic, so the count is exact. */
static double sb__moe_bytes(const sb_point *pt)
{
    const sb_moe_shape *s = pt->shape;
    switch (pt->bench->kind) {
    case SB_MOE_ROUTE:
        return sb_moe_route_bytes(s);
    case SB_MOE_DISPATCH:
        return sb_moe_dispatch_bytes(s);
    case SB_MOE_COMBINE:
        return sb_moe_combine_bytes(s);
    default:
        break;
    }
    if (sb_moe_check(s, NULL) != 0)
        return 0.0;
    int64_t *counts = calloc((size_t)s->experts, sizeof(int64_t));
    if (!counts)
        return 0.0;
    sb_moe_synth_counts(s, counts);
    int active = sb_moe_active(counts, s->experts);
    free(counts);
    return sb_moe_gemm_bytes(s, active);
}

static double sb__moe_fp(const sb_point *pt, const sb_ctx *c)
{
    (void)c;
    return sb__moe_footprint_kind(pt->shape, pt->bench->kind);
}

static void sb__moe_report(void *state, const sb_point *pt, sb_ctx *ctx,
                           sb_result *r)
{
    sb_moe_state *st = state;
    const sb_moe_shape *s = &st->s;
    if (st->kind == SB_MOE_ROUTE)
        sb_moe_counts(st->idx, s->tokens, s->topk, s->experts, st->counts);
    int active = sb_moe_active(st->counts, s->experts);
    sb_result_metric(r, "imbalance", sb_moe_imbalance(st->counts, s->experts),
                     "x");
    sb_result_metric(r, "active_experts", active, "experts");
    double t = r->stats.p50;
    if (t > 0)
        sb_result_metric(r, "tokens_per_s", (double)s->tokens / t, "tok/s");
    /* The runner places the point on the roofline from its FLOP and byte
     * hooks (the same accounting, from the parameters). */
    double flops = st->kind == SB_MOE_ROUTE      ? sb_moe_route_flops(s)
                   : st->kind == SB_MOE_COMBINE  ? sb_moe_combine_flops(s)
                   : st->kind == SB_MOE_DISPATCH ? 0.0
                                                 : sb_moe_gemm_flops(s);
    (void)pt;
    (void)ctx;
    const sb_gemm_plan *plan = st->plans.route ? st->plans.route
                               : st->plans.n   ? st->plans.up[0]
                                               : NULL;
    if (plan) {
        int lib = sb_gemm_plan_lib(plan);
        sb_result_note(r, "library: %s, kernel %s; %s%s", sb_gemm_lib_name(lib),
                       sb_gemm_plan_kernel(plan), sb_gemm_lib_version(lib),
                       st->lib_auto ? " (lib=auto: the fastest of those timed)"
                                    : "");
        for (int l = 0; st->lib_auto && l < SB_GEMM_NLIBS; l++)
            if (st->lib_s[l] > 0) {
                char name[40];
                snprintf(name, sizeof name, "auto_%s_GFLOPs",
                         sb_gemm_lib_name(l));
                sb_result_metric(r, name, flops / st->lib_s[l] * 1e-9,
                                 "GFLOP/s");
            }
    }
}

static int sb__moe_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                         sb_err *err)
{
    (void)ctx;
    return sb__moe_setup_kind(pt->shape, pt->params, pt->bench->kind, state,
                              err);
}

#define SB__MOE_QUICK "tokens=512 d_model=512 experts=8 topk=2"
#define SB__MOE_FULL "tokens=4096 d_model=4096 experts=8,64 topk=2,8"

static const sb_impl sb__moe_cpu = {
    .backend = "cpu",
    .setup = sb__moe_setup,
    .run = sb__moe_run,
    .verify = sb__moe_verify,
    .report = sb__moe_report,
    .teardown = sb__moe_teardown,
};

#ifdef SB_HAVE_PJRT
#endif

#define SB__MOE_BENCH(NAME, KIND, PARAMS, QUICK, FULL, DESC)                   \
    const sb_bench sb_bench_moe_##NAME = {                                     \
        .name = "moe." #NAME,                                                  \
        .area = "moe",                                                         \
        .desc = DESC,                                                          \
        .params = PARAMS,                                                      \
        .quick = QUICK,                                                        \
        .full = FULL,                                                          \
        .flags = SB_BF_QUICK | SB_BF_FULL,                                     \
        .roof = SB_ROOF_FP32,                                                  \
        .kind = KIND,                                                          \
        .decode = sb__moe_decode,                                              \
        .shape_size = sizeof(sb_moe_shape),                                    \
        .check = sb__moe_check,                                                \
        .footprint = sb__moe_fp,                                               \
        .flops = sb__moe_flops,                                                \
        .bytes = sb__moe_bytes,                                                \
        .impls = (const sb_impl *const[]){&sb__moe_cpu, NULL},                 \
    };

SB__MOE_BENCH(route, SB_MOE_ROUTE, sb__moe_params, SB__MOE_QUICK, SB__MOE_FULL,
              "router: logits = X·Wr (sgemm) + bias, softmax, top-k, weights "
              "renormalised over the k")
SB__MOE_BENCH(dispatch, SB_MOE_DISPATCH, sb__moe_params, SB__MOE_QUICK,
              SB__MOE_FULL,
              "permute token rows into per-expert groups (counting sort + "
              "gather)")
SB__MOE_BENCH(combine, SB_MOE_COMBINE, sb__moe_params, SB__MOE_QUICK,
              SB__MOE_FULL,
              "weighted scatter-add of expert outputs back in token order")
SB__MOE_BENCH(grouped_gemm, SB_MOE_GEMM, sb__moe_gemm_params,
              SB__MOE_QUICK " ffn=512",
              "tokens=256 d_model=4096 ffn=1408 experts=8,64 topk=2,8 gated=1",
              "one sgemm per expert on its ragged group (ragged_dot), or the "
              "gated expert MLP")
