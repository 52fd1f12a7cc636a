/*
 * pjrt_moe.c — moe.route, moe.dispatch and moe.combine on a PJRT device,
 * each a StableHLO program in a while loop, `n` layers' worth a launch,
 * timed by the execution's completion event.
 *
 *   route     logits = X·Wr + bias (dot_general), softmax over experts,
 *             top-k as a stable sort of (logit, expert) descending and a
 *             slice (ties: the lower expert first, as moe.h's rule), the
 *             weights a softmax over the k chosen logits;
 *   dispatch  the (token, slot) pairs sorted stably by expert (the
 *             counting sort's order), token rows gathered into the
 *             per-expert groups, pos as the inverse permutation (a second
 *             sort), offsets counted by compares;
 *   combine   Y's rows gathered by pos, weighted, summed over the k.
 *
 * Each iteration's inputs take a zero the compiler cannot prove (0 times,
 * or the minimum with 0 of, an element of the previous iteration's
 * output) on a small input (the bias, the expert ids, the weights), so no
 * iteration is loop-invariant. The outputs are packed into one tensor
 * (route: probs, ids and weights as f32; dispatch: the rows' bits and
 * the indices as s32) and checked by the definitions' verifiers in moe.h
 * after one iteration.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/bench.h"
#include "solbench/moe.h"
#include "solbench/util.h"

enum { K_ROUTE, K_DISPATCH, K_COMBINE, K_GEMM };

typedef struct pmoe_state {
    sb_pjrt_loop loop; /* first: sb_pjrt_timer's */
    sb_moe_shape s;
    int kind;
    bool plant;
    size_t nout; /* elements of the packed output */
    float *x, *wr, *bias, *y, *w;
    float *xp, *wu, *wg, *wd; /* grouped_gemm */
    int64_t cap;              /* rows a group is padded to */
    int *idx;
    int64_t *offsets, *pos, *row_token;
    sb_pjrt_buf *dev[6];
} pmoe_state;

static const sb_param_def pmoe_params[] = {
    {"plant_error", SB_P_BOOL, "0", 0, 0, NULL,
     "testing: corrupt one output element before verification (the run "
     "must then fail)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static int pmoe_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const sb_moe_shape *s = pt->shape;
    if ((pt->impl->kind == K_ROUTE || pt->impl->kind == K_GEMM) &&
        strcmp(sb_p_str(pt->params, "lib"), "auto") != 0)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: parameter lib=%s applies to the "
                       "cpu backend",
                       pt->bench->name, sb_p_str(pt->params, "lib"));
    if ((double)s->tokens * s->topk * s->d_model > 2147483647.0)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: tokens x topk x d_model above 2^31",
                       pt->bench->name);
    return 0;
}

static double pmoe_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_moe_shape *s = pt->shape;
    const double T = (double)s->tokens, D = (double)s->d_model, E = s->experts,
                 R = T * s->topk;
    /* host inputs and the output fetched, the device's copies and the
     * program's intermediates (sorts, gathered rows) */
    switch (pt->impl->kind) {
    case K_ROUTE:
        return 4.0 * 3.0 * (T * D + D * E + 4.0 * T * E);
    case K_DISPATCH:
        return 4.0 * 3.0 * (T * D + 2.0 * R * D + (E + 1) * R + 8.0 * R);
    case K_COMBINE:
        return 4.0 * 3.0 * (2.0 * R * D + T * D + 4.0 * R);
    default: {
        /* the groups padded to the largest (the synthetic routing's) */
        int64_t *counts = calloc((size_t)s->experts, sizeof *counts);
        double cap = T;
        if (counts) {
            sb_moe_synth_counts(s, counts);
            cap = 1;
            for (int e = 0; e < s->experts; e++)
                cap = counts[e] > cap ? (double)counts[e] : cap;
            free(counts);
        }
        const double F = (double)s->ffn, W = E * D * F * (s->gated ? 3 : 1);
        return 4.0 * (3.0 * (R * D + W + R * (s->gated ? D : F)) +
                      E * cap * (D + 3.0 * F + D));
    }
    }
}

static void pmoe_teardown(void *state)
{
    pmoe_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        for (int a = 0; a < 6; a++)
            sb_pjrt_buf_free(st->loop.p, st->dev[a]);
        sb_pjrt_loop_free(&st->loop);
    }
    free(st->x);
    free(st->wr);
    free(st->bias);
    free(st->y);
    free(st->w);
    free(st->xp);
    free(st->wu);
    free(st->wg);
    free(st->wd);
    free(st->idx);
    free(st->offsets);
    free(st->pos);
    free(st->row_token);
    free(st);
}

/* The zero literal of an element type (a float's needs its point). */
static const char *zero(const char *type)
{
    return strstr(type, "f32") ? "0.0" : "0";
}

/* The loop around a body: `args` the program's inputs (a, b, c; the
 * count last), the body given the carried %a %b %c and %dep (a scalar
 * zero of type `dt`) and defining %out and %dep2. */
static int compile_loop(pmoe_state *st, const char *ta, const char *tb,
                        const char *tc, const char *dt, const char *tout,
                        const char *body, sb_err *err)
{
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "module @sb_moe {\n"
        "  func.func public @main(%%a0: %s, %%b0: %s, %%c0: %s, %%n: "
        "tensor<i32>) -> %s {\n"
        "    %%i0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%d0 = stablehlo.constant dense<%s> : tensor<%s>\n"
        "    %%o0 = stablehlo.constant dense<%s> : %s\n"
        "    %%r:7 = stablehlo.while(%%i = %%i0, %%a = %%a0, %%b = %%b0, "
        "%%c = %%c0, %%dep = %%d0, %%o = %%o0, %%cnt = %%n) : tensor<i32>, "
        "%s, %s, %s, tensor<%s>, %s, tensor<i32>\n"
        "     cond {\n"
        "      %%lt = stablehlo.compare LT, %%i, %%cnt, SIGNED : "
        "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %%lt : tensor<i1>\n"
        "    } do {\n"
        "%s"
        "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
        "      %%j = stablehlo.add %%i, %%one : tensor<i32>\n"
        "      stablehlo.return %%j, %%a, %%b, %%c, %%dep2, %%out, %%cnt : "
        "tensor<i32>, %s, %s, %s, tensor<%s>, %s, tensor<i32>\n"
        "    }\n"
        "    return %%r#5 : %s\n"
        "  }\n"
        "}\n",
        ta, tb, tc, tout, zero(dt), dt, zero(tout), tout, ta, tb, tc, dt, tout,
        body, ta, tb, tc, dt, tout, tout);
}

/* route: %a = X [T,D], %b = Wr [D,E], %c = bias [E]; out [T, E + 2k] */
static int route_program(pmoe_state *st, sb_err *err)
{
    const long long T = st->s.tokens, D = st->s.d_model, E = st->s.experts,
                    k = st->s.topk;
    char ta[64], tb[64], tc[64], te[64], tei[64], tk[64], tki[64], tt[64],
        tout[64], body[8192];
    snprintf(ta, sizeof ta, "tensor<%lldx%lldxf32>", T, D);
    snprintf(tb, sizeof tb, "tensor<%lldx%lldxf32>", D, E);
    snprintf(tc, sizeof tc, "tensor<%lldxf32>", E);
    snprintf(te, sizeof te, "tensor<%lldx%lldxf32>", T, E);
    snprintf(tei, sizeof tei, "tensor<%lldx%lldxi32>", T, E);
    snprintf(tk, sizeof tk, "tensor<%lldx%lldxf32>", T, k);
    snprintf(tki, sizeof tki, "tensor<%lldx%lldxi32>", T, k);
    snprintf(tt, sizeof tt, "tensor<%lldxf32>", T);
    snprintf(tout, sizeof tout, "tensor<%lldx%lldxf32>", T, E + 2 * k);
    int w = snprintf(
        body, sizeof body,
        "      %%db = stablehlo.broadcast_in_dim %%dep, dims = [] : "
        "(tensor<f32>) -> %s\n"
        "      %%bias = stablehlo.add %%c, %%db : %s\n"
        "      %%lg = stablehlo.dot_general %%a, %%b, contracting_dims = [1] "
        "x [0] : (%s, %s) -> %s\n"
        "      %%bb = stablehlo.broadcast_in_dim %%bias, dims = [1] : (%s) -> "
        "%s\n"
        "      %%l = stablehlo.add %%lg, %%bb : %s\n"
        "      %%lo = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
        "      %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "      %%mx = stablehlo.reduce(%%l init: %%lo) applies "
        "stablehlo.maximum across dimensions = [1] : (%s, tensor<f32>) -> %s\n"
        "      %%mb = stablehlo.broadcast_in_dim %%mx, dims = [0] : (%s) -> "
        "%s\n"
        "      %%sh = stablehlo.subtract %%l, %%mb : %s\n"
        "      %%ex = stablehlo.exponential %%sh : %s\n"
        "      %%sm = stablehlo.reduce(%%ex init: %%z) applies stablehlo.add "
        "across dimensions = [1] : (%s, tensor<f32>) -> %s\n"
        "      %%sb = stablehlo.broadcast_in_dim %%sm, dims = [0] : (%s) -> "
        "%s\n"
        "      %%probs = stablehlo.divide %%ex, %%sb : %s\n"
        "      %%io = stablehlo.iota dim = 1 : %s\n"
        "      %%srt:2 = \"stablehlo.sort\"(%%l, %%io) ({\n"
        "      ^bb0(%%p: tensor<f32>, %%q: tensor<f32>, %%u: tensor<i32>, "
        "%%v: tensor<i32>):\n"
        "        %%gt = stablehlo.compare GT, %%p, %%q, FLOAT : "
        "(tensor<f32>, tensor<f32>) -> tensor<i1>\n"
        "        stablehlo.return %%gt : tensor<i1>\n"
        "      }) {dimension = 1 : i64, is_stable = true} : (%s, %s) -> (%s, "
        "%s)\n"
        "      %%tl = stablehlo.slice %%srt#0 [0:%lld, 0:%lld] : (%s) -> %s\n"
        "      %%ti = stablehlo.slice %%srt#1 [0:%lld, 0:%lld] : (%s) -> %s\n"
        "      %%t0 = stablehlo.slice %%tl [0:%lld, 0:1] : (%s) -> "
        "tensor<%lldx1xf32>\n"
        "      %%t0b = stablehlo.broadcast_in_dim %%t0, dims = [0, 1] : "
        "(tensor<%lldx1xf32>) -> %s\n"
        "      %%ts = stablehlo.subtract %%tl, %%t0b : %s\n"
        "      %%te = stablehlo.exponential %%ts : %s\n"
        "      %%tsum = stablehlo.reduce(%%te init: %%z) applies "
        "stablehlo.add across dimensions = [1] : (%s, tensor<f32>) -> %s\n"
        "      %%tsb = stablehlo.broadcast_in_dim %%tsum, dims = [0] : (%s) "
        "-> %s\n"
        "      %%wt = stablehlo.divide %%te, %%tsb : %s\n"
        "      %%tif = stablehlo.convert %%ti : (%s) -> %s\n"
        "      %%out = stablehlo.concatenate %%probs, %%tif, %%wt, dim = 1 : "
        "(%s, %s, %s) -> %s\n"
        "      %%w00 = stablehlo.slice %%wt [0:1, 0:1] : (%s) -> "
        "tensor<1x1xf32>\n"
        "      %%w0 = stablehlo.reshape %%w00 : (tensor<1x1xf32>) -> "
        "tensor<f32>\n"
        "      %%dep2 = stablehlo.multiply %%w0, %%z : tensor<f32>\n",
        tc, tc, ta, tb, te, tc, te, te, te, tt, tt, te, te, te, te, tt, tt, te,
        te, tei, te, tei, te, tei, T, k, te, tk, T, k, tei, tki, T, tk, T, T,
        tk, tk, tk, tk, tt, tt, tk, tk, tki, tk, te, tk, tk, tout, tk);
    if (w < 0 || w >= (int)sizeof body)
        return sb_fail(err, SB_EINVAL, "pjrt: the program does not fit");
    return compile_loop(st, ta, tb, tc, "f32", tout, body, err);
}

/* dispatch: %a = X [T,D], %b = expert ids [R], %c unused ([1]); out: the
 * bits of xp [R*D], offsets [E+1], pos [R], row_token [R] as s32 */
static int dispatch_program(pmoe_state *st, sb_err *err)
{
    const long long T = st->s.tokens, D = st->s.d_model, E = st->s.experts,
                    k = st->s.topk, R = T * k;
    char ta[64], tb[64], tr2[64], trd[64], tor[64], tout[64], body[8192];
    /* the comparator of both stable sorts: ascending s32 keys */
    const char *lt = "      ^bb0(%p: tensor<i32>, %q: tensor<i32>, %u: "
                     "tensor<i32>, %v: tensor<i32>):\n"
                     "        %lt = stablehlo.compare LT, %p, %q, SIGNED : "
                     "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                     "        stablehlo.return %lt : tensor<i1>\n";
    snprintf(ta, sizeof ta, "tensor<%lldx%lldxf32>", T, D);
    snprintf(tb, sizeof tb, "tensor<%lldxi32>", R);
    snprintf(tr2, sizeof tr2, "tensor<%lldx1xi32>", R);
    snprintf(trd, sizeof trd, "tensor<%lldx%lldxf32>", R, D);
    snprintf(tor, sizeof tor, "tensor<%lldx%lldxi32>", E + 1, R);
    snprintf(tout, sizeof tout, "tensor<%lldxi32>", R * D + E + 1 + 2 * R);
    int w = snprintf(
        body, sizeof body,
        "      %%db = stablehlo.broadcast_in_dim %%dep, dims = [] : "
        "(tensor<i32>) -> %s\n"
        "      %%ids = stablehlo.add %%b, %%db : %s\n"
        "      %%io = stablehlo.iota dim = 0 : %s\n"
        "      %%srt:2 = \"stablehlo.sort\"(%%ids, %%io) ({\n"
        "%s"
        "      }) {dimension = 0 : i64, is_stable = true} : (%s, %s) -> (%s, "
        "%s)\n"
        "      %%kc = stablehlo.constant dense<%lld> : %s\n"
        "      %%tok = stablehlo.divide %%srt#1, %%kc : %s\n"
        "      %%tok2 = stablehlo.reshape %%tok : (%s) -> %s\n"
        "      %%xp = \"stablehlo.gather\"(%%a, %%tok2) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
        "array<i64: 1, %lld>, indices_are_sorted = true} : (%s, %s) -> %s\n"
        "      %%inv:2 = \"stablehlo.sort\"(%%srt#1, %%io) ({\n"
        "%s"
        "      }) {dimension = 0 : i64, is_stable = true} : (%s, %s) -> (%s, "
        "%s)\n"
        "      %%ib = stablehlo.broadcast_in_dim %%ids, dims = [1] : (%s) -> "
        "%s\n"
        "      %%ie = stablehlo.iota dim = 0 : %s\n"
        "      %%below = stablehlo.compare LT, %%ib, %%ie, SIGNED : (%s, %s) "
        "-> tensor<%lldx%lldxi1>\n"
        "      %%one1 = stablehlo.constant dense<1> : %s\n"
        "      %%zero1 = stablehlo.constant dense<0> : %s\n"
        "      %%cnt01 = stablehlo.select %%below, %%one1, %%zero1 : "
        "tensor<%lldx%lldxi1>, %s\n"
        "      %%zi = stablehlo.constant dense<0> : tensor<i32>\n"
        "      %%offs = stablehlo.reduce(%%cnt01 init: %%zi) applies "
        "stablehlo.add across dimensions = [1] : (%s, tensor<i32>) -> "
        "tensor<%lldxi32>\n"
        "      %%xr = stablehlo.reshape %%xp : (%s) -> tensor<%lldxf32>\n"
        "      %%xb = stablehlo.bitcast_convert %%xr : (tensor<%lldxf32>) -> "
        "tensor<%lldxi32>\n"
        "      %%out = stablehlo.concatenate %%xb, %%offs, %%inv#1, %%tok, dim "
        "= 0 : (tensor<%lldxi32>, tensor<%lldxi32>, %s, %s) -> %s\n"
        "      %%p0 = stablehlo.slice %%inv#1 [0:1] : (%s) -> tensor<1xi32>\n"
        "      %%p0s = stablehlo.reshape %%p0 : (tensor<1xi32>) -> "
        "tensor<i32>\n"
        "      %%dep2 = stablehlo.minimum %%p0s, %%zi : tensor<i32>\n",
        tb, tb, tb, lt, tb, tb, tb, tb, k, tb, tb, tb, tr2, D, ta, tr2, trd, lt,
        tb, tb, tb, tb, tb, tor, tor, tor, tor, E + 1, R, tor, tor, E + 1, R,
        tor, tor, E + 1, trd, R * D, R * D, R * D, R * D, E + 1, tb, tb, tout,
        tb);
    if (w < 0 || w >= (int)sizeof body)
        return sb_fail(err, SB_EINVAL, "pjrt: the program does not fit");
    return compile_loop(st, ta, tb, "tensor<1xi32>", "i32", tout, body, err);
}

/* combine: %a = Y [R,D], %b = pos [R], %c = w [T,k]; out [T,D] */
static int combine_program(pmoe_state *st, sb_err *err)
{
    const long long T = st->s.tokens, D = st->s.d_model, k = st->s.topk,
                    R = T * k;
    char ta[64], tb[64], tc[64], tr2[64], t3[64], tout[64], body[4096];
    snprintf(ta, sizeof ta, "tensor<%lldx%lldxf32>", R, D);
    snprintf(tb, sizeof tb, "tensor<%lldxi32>", R);
    snprintf(tc, sizeof tc, "tensor<%lldx%lldxf32>", T, k);
    snprintf(tr2, sizeof tr2, "tensor<%lldx1xi32>", R);
    snprintf(t3, sizeof t3, "tensor<%lldx%lldx%lldxf32>", T, k, D);
    snprintf(tout, sizeof tout, "tensor<%lldx%lldxf32>", T, D);
    int w = snprintf(
        body, sizeof body,
        "      %%db = stablehlo.broadcast_in_dim %%dep, dims = [] : "
        "(tensor<f32>) -> %s\n"
        "      %%wt = stablehlo.add %%c, %%db : %s\n"
        "      %%p2 = stablehlo.reshape %%b : (%s) -> %s\n"
        "      %%g = \"stablehlo.gather\"(%%a, %%p2) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
        "array<i64: 1, %lld>, indices_are_sorted = false} : (%s, %s) -> %s\n"
        "      %%g3 = stablehlo.reshape %%g : (%s) -> %s\n"
        "      %%wb = stablehlo.broadcast_in_dim %%wt, dims = [0, 1] : (%s) -> "
        "%s\n"
        "      %%m = stablehlo.multiply %%g3, %%wb : %s\n"
        "      %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "      %%out = stablehlo.reduce(%%m init: %%z) applies stablehlo.add "
        "across dimensions = [1] : (%s, tensor<f32>) -> %s\n"
        "      %%f00 = stablehlo.slice %%out [0:1, 0:1] : (%s) -> "
        "tensor<1x1xf32>\n"
        "      %%f0 = stablehlo.reshape %%f00 : (tensor<1x1xf32>) -> "
        "tensor<f32>\n"
        "      %%dep2 = stablehlo.multiply %%f0, %%z : tensor<f32>\n",
        tc, tc, tb, tr2, D, ta, tr2, ta, ta, t3, tc, t3, t3, t3, tout, tout);
    if (w < 0 || w >= (int)sizeof body)
        return sb_fail(err, SB_EINVAL, "pjrt: the program does not fit");
    return compile_loop(st, ta, tb, tc, "f32", tout, body, err);
}

/* grouped_gemm: %x = xp [R,D] grouped by expert, %u = w_up [E,D,F], %g
 * = w_gate and %d = w_down (gated; else [1] unused), %p = the padded
 * groups' rows [E*C] (R: a zero row), %q = each row's place [R] in them;
 * out [R,F] (plain) or [R,D] (gated). The groups are padded to the
 * largest (C rows), one batched dot_general an expert's weights, the rows
 * gathered back: the dense form of a ragged grouped GEMM. */
static int gemm_program(pmoe_state *st, sb_err *err)
{
    const sb_moe_shape *s = &st->s;
    const long long R = s->tokens * s->topk, D = s->d_model, F = s->ffn,
                    E = s->experts, C = st->cap, O = s->gated ? D : F;
    char tx[64], tw[64], tg[64], td[64], tp[64], tq[64], tout[64], te[96],
        teo[96], gated[2048] = "";
    snprintf(tx, sizeof tx, "tensor<%lldx%lldxf32>", R, D);
    snprintf(tw, sizeof tw, "tensor<%lldx%lldx%lldxf32>", E, D, F);
    snprintf(tg, sizeof tg, s->gated ? "%s" : "tensor<1xf32>", tw);
    if (s->gated)
        snprintf(td, sizeof td, "tensor<%lldx%lldx%lldxf32>", E, F, D);
    else
        snprintf(td, sizeof td, "tensor<1xf32>");
    snprintf(tp, sizeof tp, "tensor<%lldxi32>", E * C);
    snprintf(tq, sizeof tq, "tensor<%lldxi32>", R);
    snprintf(tout, sizeof tout, "tensor<%lldx%lldxf32>", R, O);
    snprintf(te, sizeof te, "tensor<%lldx%lldx%lldxf32>", E, C, F);
    snprintf(teo, sizeof teo, "tensor<%lldx%lldx%lldxf32>", E, C, O);
    if (s->gated)
        snprintf(gated, sizeof gated,
                 "      %%gg = stablehlo.dot_general %%x3, %%g, batching_dims "
                 "= [0] x [0], contracting_dims = [2] x [1] : (tensor<%lldx"
                 "%lldx%lldxf32>, %s) -> %s\n"
                 "      %%sg = stablehlo.logistic %%gg : %s\n"
                 "      %%sl = stablehlo.multiply %%gg, %%sg : %s\n"
                 "      %%ac = stablehlo.multiply %%sl, %%h : %s\n"
                 "      %%y = stablehlo.dot_general %%ac, %%d, batching_dims = "
                 "[0] x [0], contracting_dims = [2] x [1] : (%s, %s) -> %s\n",
                 E, C, D, tg, te, te, te, te, te, td, teo);
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "module @sb_moe_gemm {\n"
        "  func.func public @main(%%x0: %s, %%u0: %s, %%g0: %s, %%d0: %s, "
        "%%p0: %s, %%q0: %s, %%n: tensor<i32>) -> %s {\n"
        "    %%i0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%z0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %%o0 = stablehlo.constant dense<0.0> : %s\n"
        "    %%r:10 = stablehlo.while(%%i = %%i0, %%x = %%x0, %%u = %%u0, "
        "%%g = %%g0, %%d = %%d0, %%p = %%p0, %%q = %%q0, %%dep = %%z0, "
        "%%o = %%o0, %%cnt = %%n) : tensor<i32>, %s, %s, %s, %s, %s, %s, "
        "tensor<f32>, %s, tensor<i32>\n"
        "     cond {\n"
        "      %%lt = stablehlo.compare LT, %%i, %%cnt, SIGNED : "
        "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %%lt : tensor<i1>\n"
        "    } do {\n"
        "      %%zr = stablehlo.broadcast_in_dim %%dep, dims = [] : "
        "(tensor<f32>) -> tensor<1x%lldxf32>\n"
        "      %%xz = stablehlo.concatenate %%x, %%zr, dim = 0 : (%s, "
        "tensor<1x%lldxf32>) -> tensor<%lldx%lldxf32>\n"
        "      %%p2 = stablehlo.reshape %%p : (%s) -> tensor<%lldx1xi32>\n"
        "      %%xg = \"stablehlo.gather\"(%%xz, %%p2) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
        "array<i64: 1, %lld>, indices_are_sorted = false} : "
        "(tensor<%lldx%lldxf32>, tensor<%lldx1xi32>) -> "
        "tensor<%lldx%lldxf32>\n"
        "      %%x3 = stablehlo.reshape %%xg : (tensor<%lldx%lldxf32>) -> "
        "tensor<%lldx%lldx%lldxf32>\n"
        "      %%h = stablehlo.dot_general %%x3, %%u, batching_dims = [0] x "
        "[0], contracting_dims = [2] x [1] : (tensor<%lldx%lldx%lldxf32>, "
        "%s) -> %s\n"
        "%s"
        "      %%yf = stablehlo.reshape %s : (%s) -> tensor<%lldx%lldxf32>\n"
        "      %%q2 = stablehlo.reshape %%q : (%s) -> tensor<%lldx1xi32>\n"
        "      %%out = \"stablehlo.gather\"(%%yf, %%q2) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
        "array<i64: 1, %lld>, indices_are_sorted = false} : "
        "(tensor<%lldx%lldxf32>, tensor<%lldx1xi32>) -> %s\n"
        "      %%f00 = stablehlo.slice %%out [0:1, 0:1] : (%s) -> "
        "tensor<1x1xf32>\n"
        "      %%f0 = stablehlo.reshape %%f00 : (tensor<1x1xf32>) -> "
        "tensor<f32>\n"
        "      %%zz = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "      %%dep2 = stablehlo.multiply %%f0, %%zz : tensor<f32>\n"
        "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
        "      %%j = stablehlo.add %%i, %%one : tensor<i32>\n"
        "      stablehlo.return %%j, %%x, %%u, %%g, %%d, %%p, %%q, %%dep2, "
        "%%out, %%cnt : tensor<i32>, %s, %s, %s, %s, %s, %s, tensor<f32>, %s, "
        "tensor<i32>\n"
        "    }\n"
        "    return %%r#8 : %s\n"
        "  }\n"
        "}\n",
        tx, tw, tg, td, tp, tq, tout, tout, tx, tw, tg, td, tp, tq, tout, D, tx,
        D, R + 1, D, tp, E * C, D, R + 1, D, E * C, E * C, D, E * C, D, E, C, D,
        E, C, D, tw, te, gated, s->gated ? "%y" : "%h", teo, E * C, O, tq, R, O,
        E * C, O, R, tout, tout, tx, tw, tg, td, tp, tq, tout, tout);
}

/* route's host inputs: X, Wr and the bias, filled. */
static bool route_inputs(pmoe_state *st)
{
    const sb_moe_shape *s = &st->s;
    const int64_t T = s->tokens, D = s->d_model, E = s->experts, k = s->topk;
    st->x = malloc(sizeof(float) * (size_t)(T * D));
    st->wr = malloc(sizeof(float) * (size_t)(D * E));
    st->bias = malloc(sizeof(float) * (size_t)E);
    bool ok = st->x && st->wr && st->bias;
    if (ok) {
        sb_moe_input_fill(s, SB_MOE_IN_X, st->x);
        sb_moe_input_fill(s, SB_MOE_IN_WR, st->wr);
        sb_moe_input_fill(s, SB_MOE_IN_BIAS, st->bias);
    }
    st->nout = (size_t)(T * (E + 2 * k));
    return ok;
}

/* grouped_gemm's host inputs: a synthetic routing and its dispatch, the
 * grouped rows and the experts' weights; the largest group (the padding
 * cap) and *i32, room for the padded and placed row indices. */
static bool gemm_inputs(pmoe_state *st, int32_t **i32)
{
    const sb_moe_shape *s = &st->s;
    const int64_t T = s->tokens, D = s->d_model, E = s->experts, k = s->topk,
                  R = T * k;
    const int64_t F = s->ffn, wn = E * D * F;
    st->idx = malloc(sizeof(int) * (size_t)R);
    st->w = malloc(sizeof(float) * (size_t)R);
    st->offsets = malloc(sizeof(int64_t) * (size_t)(E + 1));
    st->pos = malloc(sizeof(int64_t) * (size_t)R);
    st->row_token = malloc(sizeof(int64_t) * (size_t)R);
    st->xp = malloc(sizeof(float) * (size_t)(R * D));
    st->wu = malloc(sizeof(float) * (size_t)wn);
    st->wg = s->gated ? malloc(sizeof(float) * (size_t)wn) : NULL;
    st->wd = s->gated ? malloc(sizeof(float) * (size_t)wn) : NULL;
    bool ok = st->idx && st->w && st->offsets && st->pos && st->row_token &&
              st->xp && st->wu && (!s->gated || (st->wg && st->wd));
    if (ok) {
        sb_moe_synth_route(s, st->idx, st->w);
        sb_moe_dispatch_ref(s, st->idx, st->offsets, st->pos, st->row_token);
        sb_moe_input_fill(s, SB_MOE_IN_XP, st->xp);
        sb_moe_input_fill(s, SB_MOE_IN_W_UP, st->wu);
        if (s->gated) {
            sb_moe_input_fill(s, SB_MOE_IN_W_GATE, st->wg);
            sb_moe_input_fill(s, SB_MOE_IN_W_DOWN, st->wd);
        }
        st->cap = 1;
        for (int e = 0; e < E; e++)
            if (st->offsets[e + 1] - st->offsets[e] > st->cap)
                st->cap = st->offsets[e + 1] - st->offsets[e];
        *i32 = malloc(sizeof(int32_t) * (size_t)(E * st->cap + R));
        ok = *i32 != NULL;
    }
    st->nout = (size_t)(R * (s->gated ? D : F));
    return ok;
}

/* dispatch's and combine's host inputs: a synthetic routing and its
 * dispatch, X (dispatch) or Y (combine) filled, and *i32, room for one
 * index a routed row. */
static bool index_inputs(pmoe_state *st, int32_t **i32)
{
    const sb_moe_shape *s = &st->s;
    const int64_t T = s->tokens, D = s->d_model, E = s->experts, k = s->topk,
                  R = T * k;
    st->idx = malloc(sizeof(int) * (size_t)R);
    st->w = malloc(sizeof(float) * (size_t)R);
    st->offsets = malloc(sizeof(int64_t) * (size_t)(E + 1));
    st->pos = malloc(sizeof(int64_t) * (size_t)R);
    st->row_token = malloc(sizeof(int64_t) * (size_t)R);
    *i32 = malloc(sizeof(int32_t) * (size_t)R);
    if (st->kind == K_DISPATCH)
        st->x = malloc(sizeof(float) * (size_t)(T * D));
    else
        st->y = malloc(sizeof(float) * (size_t)(R * D));
    bool ok = st->idx && st->w && st->offsets && st->pos && st->row_token &&
              *i32 && (st->x || st->y);
    if (ok) {
        sb_moe_synth_route(s, st->idx, st->w);
        sb_moe_dispatch_ref(s, st->idx, st->offsets, st->pos, st->row_token);
        if (st->x)
            sb_moe_input_fill(s, SB_MOE_IN_X, st->x);
        else
            sb_moe_input_fill(s, SB_MOE_IN_Y, st->y);
    }
    st->nout = st->kind == K_DISPATCH ? (size_t)(R * D + E + 1 + 2 * R)
                                      : (size_t)(T * D);
    return ok;
}

/* route on the device: X, Wr and the bias uploaded, the program built. */
static int route_upload(pmoe_state *st, sb_err *err)
{
    sb_pjrt *p = st->loop.p;
    const int64_t dtd[2] = {st->s.tokens, st->s.d_model},
                  dde[2] = {st->s.d_model, st->s.experts},
                  de[1] = {st->s.experts};
    int rc;
    if (!(rc = sb_pjrt_upload(p, st->x, SB_PJRT_F32, dtd, 2, &st->dev[0],
                              err)) &&
        !(rc = sb_pjrt_upload(p, st->wr, SB_PJRT_F32, dde, 2, &st->dev[1],
                              err)) &&
        !(rc = sb_pjrt_upload(p, st->bias, SB_PJRT_F32, de, 1, &st->dev[2],
                              err)))
        rc = route_program(st, err);
    return rc;
}

/* dispatch on the device: X, the expert ids (as s32, in i32) and a zero
 * uploaded, the program built. */
static int dispatch_upload(pmoe_state *st, int32_t *i32, sb_err *err)
{
    sb_pjrt *p = st->loop.p;
    const int64_t R = st->s.tokens * st->s.topk;
    const int64_t dtd[2] = {st->s.tokens, st->s.d_model}, dr[1] = {R},
                  d1[1] = {1};
    const int32_t zero = 0;
    int rc;
    for (int64_t i = 0; i < R; i++)
        i32[i] = st->idx[i];
    if (!(rc = sb_pjrt_upload(p, st->x, SB_PJRT_F32, dtd, 2, &st->dev[0],
                              err)) &&
        !(rc = sb_pjrt_upload(p, i32, SB_PJRT_S32, dr, 1, &st->dev[1], err)) &&
        !(rc = sb_pjrt_upload(p, &zero, SB_PJRT_S32, d1, 1, &st->dev[2], err)))
        rc = dispatch_program(st, err);
    return rc;
}

/* grouped_gemm on the device: the grouped rows, the weights (a scalar
 * zero for the gate and down of an ungated MLP), the padded groups' rows
 * and each row's place among them (both built in i32) uploaded, the
 * program built. */
static int gemm_upload(pmoe_state *st, int32_t *i32, sb_err *err)
{
    sb_pjrt *p = st->loop.p;
    const sb_moe_shape *s = &st->s;
    const int64_t D = s->d_model, E = s->experts, R = s->tokens * s->topk,
                  F = s->ffn, C = st->cap;
    int32_t *pad = i32, *place = i32 + E * C;
    for (int64_t e = 0; e < E; e++)
        for (int64_t c = 0; c < C; c++) {
            int64_t row = st->offsets[e] + c;
            pad[e * C + c] = (int32_t)(row < st->offsets[e + 1] ? row : R);
            if (row < st->offsets[e + 1])
                place[row] = (int32_t)(e * C + c);
        }
    const int64_t drd[2] = {R, D}, dr[1] = {R}, d1[1] = {1}, dw[3] = {E, D, F},
                  dwd[3] = {E, F, D}, dp[1] = {E * C};
    const float one = 0;
    int rc;
    if (!(rc = sb_pjrt_upload(p, st->xp, SB_PJRT_F32, drd, 2, &st->dev[0],
                              err)) &&
        !(rc = sb_pjrt_upload(p, st->wu, SB_PJRT_F32, dw, 3, &st->dev[1],
                              err)) &&
        !(rc = s->gated ? sb_pjrt_upload(p, st->wg, SB_PJRT_F32, dw, 3,
                                         &st->dev[2], err)
                        : sb_pjrt_upload(p, &one, SB_PJRT_F32, d1, 1,
                                         &st->dev[2], err)) &&
        !(rc = s->gated ? sb_pjrt_upload(p, st->wd, SB_PJRT_F32, dwd, 3,
                                         &st->dev[3], err)
                        : sb_pjrt_upload(p, &one, SB_PJRT_F32, d1, 1,
                                         &st->dev[3], err)) &&
        !(rc = sb_pjrt_upload(p, pad, SB_PJRT_S32, dp, 1, &st->dev[4], err)) &&
        !(rc = sb_pjrt_upload(p, place, SB_PJRT_S32, dr, 1, &st->dev[5], err)))
        rc = gemm_program(st, err);
    return rc;
}

/* combine on the device: Y, pos (as s32, in i32) and the weights
 * uploaded, the program built. */
static int combine_upload(pmoe_state *st, int32_t *i32, sb_err *err)
{
    sb_pjrt *p = st->loop.p;
    const int64_t T = st->s.tokens, k = st->s.topk, R = T * k;
    const int64_t drd[2] = {R, st->s.d_model}, dr[1] = {R}, dtk[2] = {T, k};
    int rc;
    for (int64_t i = 0; i < R; i++)
        i32[i] = (int32_t)st->pos[i];
    if (!(rc = sb_pjrt_upload(p, st->y, SB_PJRT_F32, drd, 2, &st->dev[0],
                              err)) &&
        !(rc = sb_pjrt_upload(p, i32, SB_PJRT_S32, dr, 1, &st->dev[1], err)) &&
        !(rc = sb_pjrt_upload(p, st->w, SB_PJRT_F32, dtk, 2, &st->dev[2], err)))
        rc = combine_program(st, err);
    return rc;
}

static int pmoe_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    (void)ctx;
    pmoe_state *st = NULL;
    int rc = sb_pjrt_state_new(sizeof *st, (void **)&st, err);
    if (rc)
        return rc;
    st->s = *(const sb_moe_shape *)pt->shape;
    st->kind = pt->impl->kind;
    st->plant = sb_p_bool(pt->params, "plant_error");
    int32_t *i32 = NULL;
    bool ok = st->kind == K_ROUTE  ? route_inputs(st)
              : st->kind == K_GEMM ? gemm_inputs(st, &i32)
                                   : index_inputs(st, &i32);
    if (!ok) {
        free(i32);
        pmoe_teardown(st);
        return sb_fail(err, SB_ENOMEM, "%s on pjrt: out of memory",
                       pt->bench->name);
    }
    if (st->kind == K_ROUTE)
        rc = route_upload(st, err);
    else if (st->kind == K_DISPATCH)
        rc = dispatch_upload(st, i32, err);
    else if (st->kind == K_GEMM)
        rc = gemm_upload(st, i32, err);
    else
        rc = combine_upload(st, i32, err);
    free(i32);
    if (rc) {
        pmoe_teardown(st);
        return rc;
    }
    const int nin = st->kind == K_GEMM ? 6 : 3;
    for (int a = 0; a < nin; a++)
        st->loop.args[0][a] = st->dev[a];
    st->loop.nargs = nin + 1;
    *state = st;
    return 0;
}

static int pmoe_verify(void *state, sb_result *r)
{
    pmoe_state *st = state;
    const sb_moe_shape *s = &st->s;
    const int64_t T = s->tokens, D = s->d_model, E = s->experts, k = s->topk,
                  R = T * k;
    sb_err err = {0};
    char why[320] = "";
    int64_t bad = 0;
    float *o = malloc(st->nout * sizeof(float));
    float *probs = NULL, *w = NULL, *xp = NULL;
    int *idx = NULL;
    int64_t *offs = NULL, *pos = NULL, *tok = NULL;
    int rc = SB_ENOMEM;
    if (!o)
        goto done;
    if ((rc = sb_pjrt_loop_fetch(&st->loop, 1, o, st->nout * sizeof(float),
                                 &err)))
        goto done;
    rc = SB_ENOMEM;
    if (st->kind == K_ROUTE) {
        probs = malloc(sizeof(float) * (size_t)(T * E));
        idx = malloc(sizeof(int) * (size_t)R);
        w = malloc(sizeof(float) * (size_t)R);
        if (!probs || !idx || !w)
            goto done;
        for (int64_t t = 0; t < T; t++) {
            const float *row = o + t * (E + 2 * k);
            memcpy(probs + t * E, row, sizeof(float) * (size_t)E);
            for (int64_t j = 0; j < k; j++) {
                idx[t * k + j] = (int)row[E + j];
                w[t * k + j] = row[E + k + j];
            }
        }
        if (st->plant)
            w[R / 2] += 0.25f;
        bad = sb_moe_route_verify(s, st->x, st->wr, st->bias, probs, idx, w,
                                  why, sizeof why);
    } else if (st->kind == K_DISPATCH) {
        const int32_t *b = (const int32_t *)o;
        offs = malloc(sizeof(int64_t) * (size_t)(E + 1));
        pos = malloc(sizeof(int64_t) * (size_t)R);
        tok = malloc(sizeof(int64_t) * (size_t)R);
        if (!offs || !pos || !tok)
            goto done;
        xp = o; /* the rows' bits first */
        for (int64_t e = 0; e <= E; e++)
            offs[e] = b[R * D + e];
        for (int64_t i = 0; i < R; i++) {
            pos[i] = b[R * D + E + 1 + i];
            tok[i] = b[R * D + E + 1 + R + i];
        }
        if (st->plant)
            xp[R * D / 2] += 1.0f;
        bad = sb_moe_dispatch_verify(s, st->idx, st->x, xp, offs, pos, tok, why,
                                     sizeof why);
    } else if (st->kind == K_GEMM) {
        int64_t rows[32];
        int nr = sb_moe_gemm_sample_rows(s, st->offsets, rows, 32);
        if (st->plant)
            o[rows[0] * (s->gated ? D : s->ffn)] += 0.25f;
        bad = sb_moe_gemm_verify(s, st->offsets, st->xp, st->wu, st->wg, st->wd,
                                 o, rows, nr, why, sizeof why);
        if (!bad)
            sb_result_note(r,
                           "verified %d sampled rows (all columns) against a "
                           "double-precision reference",
                           nr);
    } else {
        if (st->plant)
            o[T * D / 2] += 0.25f;
        bad =
            sb_moe_combine_verify(s, st->y, st->pos, st->w, o, why, sizeof why);
    }
    r->valid = bad == 0;
    if (bad)
        sb_result_note(r, "verification failed: %s", why);
    rc = 0;
done:
    if (rc && rc != SB_ENOMEM)
        sb_result_note(r, "verification could not run: %s", err.msg);
    free(o);
    free(probs);
    free(idx);
    free(w);
    free(offs);
    free(pos);
    free(tok);
    return rc;
}

static void pmoe_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    (void)pt;
    (void)ctx;
    const pmoe_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    double t = r->stats.p50;
    if (t > 0)
        sb_result_metric(r, "tokens_per_s", (double)st->s.tokens / t, "tok/s");
}

#define PMOE_IMPL(NAME, K, DESC)                                               \
    const sb_impl sb_impl_pjrt_moe_##NAME = {                                  \
        .backend = "pjrt",                                                     \
        .desc = DESC,                                                          \
        .kind = K,                                                             \
        .params = pmoe_params,                                                 \
        .check = pmoe_check,                                                   \
        .footprint = pmoe_footprint,                                           \
        .setup = pmoe_setup,                                                   \
        .timer = &sb_pjrt_timer,                                               \
        .verify = pmoe_verify,                                                 \
        .report = pmoe_report,                                                 \
        .teardown = pmoe_teardown,                                             \
    };

PMOE_IMPL(route, K_ROUTE,
          "StableHLO: dot_general, softmax, top-k as a stable sort and a "
          "slice")
PMOE_IMPL(dispatch, K_DISPATCH,
          "StableHLO: a stable sort by expert, gather of the token rows, "
          "offsets by compares")
PMOE_IMPL(combine, K_COMBINE,
          "StableHLO: gather of the expert rows, weighted sum over the k")
PMOE_IMPL(grouped_gemm, K_GEMM,
          "StableHLO: groups padded to the largest, a batched dot_general "
          "over the experts (gated: three, silu as x*logistic(x)), rows "
          "gathered back")
