/*
 * pjrt_attn.c — attention.prefill on a PJRT device: one causal (or not)
 * attention block, MHA/GQA/MQA, as a StableHLO program in a while loop,
 * `n` blocks a launch, timed by the execution's completion event.
 *
 * The block is what a framework hands XLA: S = Q·Kᵀ/√D (a batched
 * dot_general over batch and kv head, the query heads of a group side by
 * side), the causal mask as iota compares, softmax in fp32 (max, exp,
 * sum, divide), O = P·V. The compiler fuses and tiles it as it can;
 * nothing here is a hand-written flash kernel. In bf16, Q, K and V are
 * bf16, the products accumulate in fp32 and P is rounded to bf16 before
 * P·V (as the CPU backend's kernel does). The loop carries O as the next
 * Q (rounded to Q's type), so no block is loop-invariant.
 *
 * Verification: one block from the host's Q, K, V, its O fetched and
 * checked by the definition's double reference (sampled rows, the CPU
 * backend's tolerances).
 *
 * ppaged_program is one function of about 150 lines on purpose: it writes
 * the paged-decode program as StableHLO text, a statement a line, and
 * reads as the program it writes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/attention.h"
#include "solbench/bench.h"
#include "solbench/util.h"

#define VERIFY_ROWS 64
/* as the CPU backend: P rounded to bf16 adds up to 2^-8 max|V|, twice */
#define BF16_ATOL (2.0 / 256.0)

typedef struct pattn_state {
    sb_pjrt_loop loop; /* first: sb_pjrt_timer's; args Q, K, V */
    sb_prefill_shape s;
    bool bf16, plant;
    float *q, *k, *v, *o; /* host: the values the device uses */
    sb_pjrt_buf *dq, *dk, *dv;
} pattn_state;

static int pattn_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    if (strcmp(sb_p_str(pt->params, "lib"), "auto") != 0)
        return sb_fail(err, SB_EINVAL,
                       "attention.prefill on pjrt: parameter lib=%s applies "
                       "to the cpu backend (the device's compiler chooses)",
                       sb_p_str(pt->params, "lib"));
    return 0;
}

/* The scores are materialised: B·Hq·Sq·Skv fp32, a few times over. */
static double pattn_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_prefill_shape *s = pt->shape;
    const double q = (double)s->batch * s->hq * s->sq * s->d,
                 kv = (double)s->batch * s->hkv * s->skv * s->d,
                 sc = (double)s->batch * s->hq * s->sq * s->skv;
    return 4.0 * (3.0 * (2.0 * q + 2.0 * kv) + 3.0 * sc);
}

static void pattn_teardown(void *state)
{
    pattn_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        sb_pjrt_buf_free(st->loop.p, st->dq);
        sb_pjrt_buf_free(st->loop.p, st->dk);
        sb_pjrt_buf_free(st->loop.p, st->dv);
        sb_pjrt_loop_free(&st->loop);
    }
    free(st->q);
    free(st->k);
    free(st->v);
    free(st->o);
    free(st);
}

static int pattn_program(pattn_state *st, sb_err *err)
{
    const sb_prefill_shape *s = &st->s;
    const long long B = s->batch, H = s->hq, G = s->hq / s->hkv, K = s->hkv,
                    Q = s->sq, S = s->skv, D = s->d;
    const char *t = st->bf16 ? "bf16" : "f32";
    char tq[80], tk[80], t5[96], s5[96], i5[96], r4[80], o5[96], o4[80], p5[96];
    snprintf(tq, sizeof tq, "tensor<%lldx%lldx%lldx%lldx%s>", B, H, Q, D, t);
    snprintf(tk, sizeof tk, "tensor<%lldx%lldx%lldx%lldx%s>", B, K, S, D, t);
    snprintf(t5, sizeof t5, "tensor<%lldx%lldx%lldx%lldx%lldx%s>", B, K, G, Q,
             D, t);
    snprintf(s5, sizeof s5, "tensor<%lldx%lldx%lldx%lldx%lldxf32>", B, K, G, Q,
             S);
    snprintf(p5, sizeof p5, "tensor<%lldx%lldx%lldx%lldx%lldx%s>", B, K, G, Q,
             S, t);
    snprintf(i5, sizeof i5, "tensor<%lldx%lldx%lldx%lldx%lldxi32>", B, K, G, Q,
             S);
    snprintf(r4, sizeof r4, "tensor<%lldx%lldx%lldx%lldxf32>", B, K, G, Q);
    snprintf(o5, sizeof o5, "tensor<%lldx%lldx%lldx%lldx%lldxf32>", B, K, G, Q,
             D);
    snprintf(o4, sizeof o4, "tensor<%lldx%lldx%lldx%lldxf32>", B, H, Q, D);
    /* what follows a step names its result: the mask and the casts are
     * left out where they do nothing */
    char mask[1024] = "", pcast[256] = "", ocast[256] = "";
    const char *sm = "%ss", *pp = "%p", *y = "%o4";
    if (s->causal) {
        snprintf(mask, sizeof mask,
                 "      %%qi = stablehlo.iota dim = 3 : %s\n"
                 "      %%kj = stablehlo.iota dim = 4 : %s\n"
                 "      %%off = stablehlo.constant dense<%lld> : %s\n"
                 "      %%lim = stablehlo.add %%qi, %%off : %s\n"
                 "      %%ok = stablehlo.compare LE, %%kj, %%lim, SIGNED : "
                 "(%s, %s) -> tensor<%lldx%lldx%lldx%lldx%lldxi1>\n"
                 "      %%ninf = stablehlo.constant dense<0xFF800000> : %s\n"
                 "      %%sm = stablehlo.select %%ok, %%ss, %%ninf : "
                 "tensor<%lldx%lldx%lldx%lldx%lldxi1>, %s\n",
                 i5, i5, S - Q, i5, i5, i5, i5, B, K, G, Q, S, s5, B, K, G, Q,
                 S, s5);
        sm = "%sm";
    }
    if (st->bf16) {
        snprintf(pcast, sizeof pcast,
                 "      %%pp = stablehlo.convert %%p : (%s) -> %s\n", s5, p5);
        snprintf(ocast, sizeof ocast,
                 "      %%y = stablehlo.convert %%o4 : (%s) -> %s\n", o4, tq);
        pp = "%pp";
        y = "%y";
    }
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "module @sb_attn {\n"
        "  func.func public @main(%%a: %s, %%b: %s, %%c: %s, %%n: "
        "tensor<i32>) -> %s {\n"
        "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%r:5 = stablehlo.while(%%i = %%c0, %%x = %%a, %%kk = %%b, "
        "%%vv = %%c, %%cnt = %%n) : tensor<i32>, %s, %s, %s, tensor<i32>\n"
        "     cond {\n"
        "      %%lt = stablehlo.compare LT, %%i, %%cnt, SIGNED : "
        "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %%lt : tensor<i1>\n"
        "    } do {\n"
        "      %%q5 = stablehlo.reshape %%x : (%s) -> %s\n"
        "      %%s = stablehlo.dot_general %%q5, %%kk, batching_dims = [0, 1] "
        "x [0, 1], contracting_dims = [4] x [3] : (%s, %s) -> %s\n"
        "      %%scale = stablehlo.constant dense<%.9g> : %s\n"
        "      %%ss = stablehlo.multiply %%s, %%scale : %s\n"
        "%s"
        "      %%lo = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
        "      %%mx = stablehlo.reduce(%s init: %%lo) applies "
        "stablehlo.maximum across dimensions = [4] : (%s, tensor<f32>) -> "
        "%s\n"
        "      %%mb = stablehlo.broadcast_in_dim %%mx, dims = [0, 1, 2, 3] : "
        "(%s) -> %s\n"
        "      %%d = stablehlo.subtract %s, %%mb : %s\n"
        "      %%e = stablehlo.exponential %%d : %s\n"
        "      %%z0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "      %%sum = stablehlo.reduce(%%e init: %%z0) applies stablehlo.add "
        "across dimensions = [4] : (%s, tensor<f32>) -> %s\n"
        "      %%sb = stablehlo.broadcast_in_dim %%sum, dims = [0, 1, 2, 3] : "
        "(%s) -> %s\n"
        "      %%p = stablehlo.divide %%e, %%sb : %s\n"
        "%s"
        "      %%o5 = stablehlo.dot_general %s, %%vv, batching_dims = [0, 1] "
        "x [0, 1], contracting_dims = [4] x [2] : (%s, %s) -> %s\n"
        "      %%o4 = stablehlo.reshape %%o5 : (%s) -> %s\n"
        "%s"
        "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
        "      %%j = stablehlo.add %%i, %%one : tensor<i32>\n"
        "      stablehlo.return %%j, %s, %%kk, %%vv, %%cnt : tensor<i32>, %s, "
        "%s, %s, tensor<i32>\n"
        "    }\n"
        "    return %%r#1 : %s\n"
        "  }\n"
        "}\n",
        tq, tk, tk, tq, tq, tk, tk, tq, t5, t5, tk, s5, 1.0 / sqrt((double)D),
        s5, s5, mask, sm, s5, r4, r4, s5, sm, s5, s5, s5, r4, r4, s5, s5, pcast,
        pp, st->bf16 ? p5 : s5, tk, o5, o5, o4, ocast, y, tq, tk, tk, tq);
}

/* Uploads x[0..n) as fp32, or as bf16 after rounding x in place, so the
 * host's reference sees exactly the values the device multiplies. */
static int upload_values(sb_pjrt *p, float *x, size_t n, bool bf16,
                         const int64_t *dims, int ndims, sb_pjrt_buf **out,
                         sb_err *err)
{
    if (!bf16)
        return sb_pjrt_upload(p, x, SB_PJRT_F32, dims, ndims, out, err);
    uint16_t *h = malloc(n * 2);
    if (!h)
        return sb_fail(err, SB_ENOMEM, "pjrt: out of memory");
    for (size_t i = 0; i < n; i++) {
        h[i] = sb_bf16_from_f32(x[i]);
        x[i] = sb_bf16_to_f32(h[i]);
    }
    int rc = sb_pjrt_upload(p, h, SB_PJRT_BF16, dims, ndims, out, err);
    free(h);
    return rc;
}

static int pattn_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    (void)ctx;
    pattn_state *st = NULL;
    int rc = sb_pjrt_state_new(sizeof *st, (void **)&st, err);
    if (rc)
        return rc;
    sb_pjrt *p = st->loop.p;
    st->s = *(const sb_prefill_shape *)pt->shape;
    st->bf16 = strcmp(sb_p_str(pt->params, "dtype"), "bf16") == 0;
    st->plant = sb_p_bool(pt->params, "plant_error");
    const sb_prefill_shape *s = &st->s;
    const size_t nq = (size_t)(s->batch * s->hq * s->sq * s->d),
                 nkv = (size_t)(s->batch * s->hkv * s->skv * s->d);
    st->q = malloc(nq * sizeof(float));
    st->o = malloc(nq * sizeof(float));
    st->k = malloc(nkv * sizeof(float));
    st->v = malloc(nkv * sizeof(float));
    if (!st->q || !st->o || !st->k || !st->v) {
        pattn_teardown(st);
        return sb_fail(err, SB_ENOMEM,
                       "attention.prefill on pjrt: out of "
                       "memory");
    }
    sb_attn_fill(st->q, nq, 0x51ULL);
    sb_attn_fill(st->k, nkv, 0x4bULL);
    sb_attn_fill(st->v, nkv, 0x56ULL);
    const int64_t dq[4] = {s->batch, s->hq, s->sq, s->d},
                  dk[4] = {s->batch, s->hkv, s->skv, s->d};
    float *host[3] = {st->q, st->k, st->v};
    sb_pjrt_buf **dev[3] = {&st->dq, &st->dk, &st->dv};
    for (int a = 0; a < 3 && !rc; a++)
        rc = upload_values(p, host[a], a ? nkv : nq, st->bf16, a ? dk : dq, 4,
                           dev[a], err);
    if (rc || (rc = pattn_program(st, err))) {
        pattn_teardown(st);
        return rc;
    }
    st->loop.args[0][0] = st->dq;
    st->loop.args[0][1] = st->dk;
    st->loop.args[0][2] = st->dv;
    st->loop.nargs = 4;
    *state = st;
    return 0;
}

static int pattn_verify(void *state, sb_result *r)
{
    pattn_state *st = state;
    const sb_prefill_shape *s = &st->s;
    const size_t nq = (size_t)(s->batch * s->hq * s->sq * s->d);
    sb_err err = {0};
    void *raw = malloc(nq * (st->bf16 ? 2 : 4));
    int rc = SB_ENOMEM;
    if (!raw)
        goto done;
    /* one block: the loop's output is O (in Q's type) */
    if ((rc = sb_pjrt_loop_fetch(&st->loop, 1, raw, nq * (st->bf16 ? 2 : 4),
                                 &err)))
        goto done;
    for (size_t i = 0; i < nq; i++)
        st->o[i] =
            st->bf16 ? sb_bf16_to_f32(((uint16_t *)raw)[i]) : ((float *)raw)[i];
    if (st->plant)
        st->o[nq / 2] += 0.5f;
    sb_attn_check c;
    /* bf16: O comes back rounded to bf16 as well (2^-8 |O| <= 2^-8) */
    sb_prefill_verify_tol(s, st->q, st->k, st->v, st->o, VERIFY_ROWS, 0x5eedULL,
                          st->bf16 ? BF16_ATOL + 1.0 / 256 : 0, &c);
    sb_attn_check_report(r, &c,
                         st->bf16 ? "|err| <= 1.2e-2 + 1e-3*|ref| (P and O "
                                    "rounded to bf16: 3 x 2^-8 max|V|)"
                                  : "|err| <= 1e-4 + 1e-3*|ref|");
    rc = 0;
done:
    if (rc && rc != SB_ENOMEM)
        sb_result_note(r, "verification could not run: %s", err.msg);
    free(raw);
    return rc;
}

static void pattn_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    (void)pt;
    (void)ctx;
    const pattn_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    sb_result_note(r, "one attention block a loop iteration as XLA compiles "
                      "it (scores materialised unless the compiler fuses "
                      "them), O carried as the next Q");
}

/* ==== attention.bmm ======================================================
 * C = A·B batched ([B,M,K] x [B,K,N], fp32 out; bf16 in with fp32
 * accumulation). The loop carries A, and the next A is the same but for
 * its first element, which takes 0 times C's first: one element updated in
 * place, so no product is loop-invariant and the traffic stays the
 * product's. Verified after one iteration by the definition's reference. */

typedef struct pbmm_state {
    sb_pjrt_loop loop; /* first: sb_pjrt_timer's; args A, B */
    sb_bmm_shape s;
    bool bf16, plant;
    float *a, *b, *c;
    sb_pjrt_buf *da, *db;
} pbmm_state;

static double pbmm_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_bmm_shape *s = pt->shape;
    const double a = (double)s->batch * s->m * s->k,
                 b = (double)s->batch * s->k * s->n,
                 c = (double)s->batch * s->m * s->n;
    return 4.0 * (3.0 * (a + b) + 3.0 * c);
}

static void pbmm_teardown(void *state)
{
    pbmm_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        sb_pjrt_buf_free(st->loop.p, st->da);
        sb_pjrt_buf_free(st->loop.p, st->db);
        sb_pjrt_loop_free(&st->loop);
    }
    free(st->a);
    free(st->b);
    free(st->c);
    free(st);
}

static int pbmm_program(pbmm_state *st, sb_err *err)
{
    const long long B = st->s.batch, M = st->s.m, N = st->s.n, K = st->s.k;
    const char *t = st->bf16 ? "bf16" : "f32";
    char ta[80], tb[80], tc[80], t1[48], cast[160] = "";
    snprintf(ta, sizeof ta, "tensor<%lldx%lldx%lldx%s>", B, M, K, t);
    snprintf(tb, sizeof tb, "tensor<%lldx%lldx%lldx%s>", B, K, N, t);
    snprintf(tc, sizeof tc, "tensor<%lldx%lldx%lldxf32>", B, M, N);
    snprintf(t1, sizeof t1, "tensor<1x1x1x%s>", t);
    if (st->bf16)
        snprintf(cast, sizeof cast,
                 "      %%dt = stablehlo.convert %%d : (tensor<1x1x1xf32>) -> "
                 "%s\n",
                 t1);
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "module @sb_bmm {\n"
        "  func.func public @main(%%a: %s, %%b: %s, %%n: tensor<i32>) -> %s "
        "{\n"
        "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%z = stablehlo.constant dense<0.0> : %s\n"
        "    %%r:5 = stablehlo.while(%%i = %%c0, %%x = %%a, %%w = %%b, %%o = "
        "%%z, %%cnt = %%n) : tensor<i32>, %s, %s, %s, tensor<i32>\n"
        "     cond {\n"
        "      %%lt = stablehlo.compare LT, %%i, %%cnt, SIGNED : "
        "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %%lt : tensor<i1>\n"
        "    } do {\n"
        "      %%c = stablehlo.dot_general %%x, %%w, batching_dims = [0] x "
        "[0], contracting_dims = [2] x [1] : (%s, %s) -> %s\n"
        "      %%c1 = stablehlo.slice %%c [0:1, 0:1, 0:1] : (%s) -> "
        "tensor<1x1x1xf32>\n"
        "      %%zz = stablehlo.constant dense<0.0> : tensor<1x1x1xf32>\n"
        "      %%d = stablehlo.multiply %%c1, %%zz : tensor<1x1x1xf32>\n"
        "%s"
        "      %%x1 = stablehlo.slice %%x [0:1, 0:1, 0:1] : (%s) -> %s\n"
        "      %%nx = stablehlo.add %%x1, %s : %s\n"
        "      %%i0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "      %%x2 = stablehlo.dynamic_update_slice %%x, %%nx, %%i0, %%i0, "
        "%%i0 : (%s, %s, tensor<i32>, tensor<i32>, tensor<i32>) -> %s\n"
        "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
        "      %%j = stablehlo.add %%i, %%one : tensor<i32>\n"
        "      stablehlo.return %%j, %%x2, %%w, %%c, %%cnt : tensor<i32>, %s, "
        "%s, %s, tensor<i32>\n"
        "    }\n"
        "    return %%r#3 : %s\n"
        "  }\n"
        "}\n",
        ta, tb, tc, tc, ta, tb, tc, ta, tb, tc, tc, cast, ta, t1,
        st->bf16 ? "%dt" : "%d", t1, ta, t1, ta, ta, tb, tc, tc);
}

static int pbmm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    (void)ctx;
    pbmm_state *st = NULL;
    int rc = sb_pjrt_state_new(sizeof *st, (void **)&st, err);
    if (rc)
        return rc;
    sb_pjrt *p = st->loop.p;
    st->s = *(const sb_bmm_shape *)pt->shape;
    st->bf16 = strcmp(sb_p_str(pt->params, "dtype"), "bf16") == 0;
    st->plant = sb_p_bool(pt->params, "plant_error");
    const sb_bmm_shape *s = &st->s;
    const size_t na = (size_t)(s->batch * s->m * s->k),
                 nb = (size_t)(s->batch * s->k * s->n),
                 nc = (size_t)(s->batch * s->m * s->n);
    st->a = malloc(na * sizeof(float));
    st->b = malloc(nb * sizeof(float));
    st->c = malloc(nc * sizeof(float));
    if (!st->a || !st->b || !st->c) {
        pbmm_teardown(st);
        return sb_fail(err, SB_ENOMEM, "attention.bmm on pjrt: out of memory");
    }
    sb_attn_fill(st->a, na, 0x51ULL);
    sb_attn_fill(st->b, nb, 0x4bULL);
    const int64_t da[3] = {s->batch, s->m, s->k},
                  db[3] = {s->batch, s->k, s->n};
    float *host[2] = {st->a, st->b};
    sb_pjrt_buf **dev[2] = {&st->da, &st->db};
    for (int a = 0; a < 2 && !rc; a++)
        rc = upload_values(p, host[a], a ? nb : na, st->bf16, a ? db : da, 3,
                           dev[a], err);
    if (rc || (rc = pbmm_program(st, err))) {
        pbmm_teardown(st);
        return rc;
    }
    st->loop.args[0][0] = st->da;
    st->loop.args[0][1] = st->db;
    st->loop.nargs = 3;
    *state = st;
    return 0;
}

static int pbmm_verify(void *state, sb_result *r)
{
    pbmm_state *st = state;
    const sb_bmm_shape *s = &st->s;
    const size_t nc = (size_t)(s->batch * s->m * s->n);
    sb_err err = {0};
    int rc = sb_pjrt_loop_fetch(&st->loop, 1, st->c, nc * sizeof(float), &err);
    if (rc) {
        sb_result_note(r, "verification could not run: %s", err.msg);
        return rc;
    }
    if (st->plant)
        st->c[nc / 2] += 0.5f;
    sb_attn_check c;
    sb_bmm_verify(s, st->a, st->b, st->c, 512, 0x5eedULL, &c);
    sb_attn_check_report(r, &c, "|err| <= 1e-5 * sum|a*b|");
    return 0;
}

static void pbmm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    (void)pt;
    (void)ctx;
    const pbmm_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    sb_result_note(r, "a batched dot_general a loop iteration, A carried (its "
                      "first element takes 0 times C's)");
}

/* ==== attention.paged_decode ==============================================
 * Ragged paged attention as XLA would be handed it: each sequence's pages
 * gathered from the pools by its (padded) page table row, its query
 * tokens gathered into a padded block, the scores masked where a key is
 * past what the query sees (or a page is padding), softmax (a query that
 * sees no key gives 0), P·V, the rows gathered back into the ragged
 * order. The loop carries O as the next Q. Verified after one iteration by
 * the definition's reference (sampled rows). */

typedef struct ppaged_state {
    sb_pjrt_loop loop; /* first: args Q, K pool, V pool, pages, q rows,
                          key limits, out rows */
    sb_paged_shape s;
    int64_t maxp, maxq;
    bool plant;
    float *q, *kp, *vp, *o;
    int32_t *table;
    sb_pjrt_buf *dev[7];
} ppaged_state;

static double ppaged_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_paged_shape *s = pt->shape;
    int64_t maxp = 0, maxq = 0;
    for (int64_t b = 0; b < s->batch; b++) {
        int64_t np = s->cu_pages[b + 1] - s->cu_pages[b],
                nq = sb_paged_qlen(s, b);
        maxp = np > maxp ? np : maxp;
        maxq = nq > maxq ? nq : maxq;
    }
    const double pool = (double)s->total_pages * s->hkv * s->page_size * s->d,
                 q = (double)s->total_q * s->hq * s->d,
                 kv = (double)s->batch * maxp * s->page_size * s->hkv * s->d,
                 sc = (double)s->batch * s->hq * maxq * maxp * s->page_size;
    /* the pools and Q on host and device, the gathered K and V twice (the
     * gather and its transpose), the scores three times */
    return 4.0 * (2.0 * (2.0 * pool + 3.0 * q) + 4.0 * kv + 3.0 * sc);
}

static void ppaged_teardown(void *state)
{
    ppaged_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        for (int a = 0; a < 7; a++)
            sb_pjrt_buf_free(st->loop.p, st->dev[a]);
        sb_pjrt_loop_free(&st->loop);
    }
    sb_paged_shape_free(&st->s);
    free(st->q);
    free(st->kp);
    free(st->vp);
    free(st->o);
    free(st->table);
    free(st);
}

static int ppaged_program(ppaged_state *st, sb_err *err)
{
    const sb_paged_shape *s = &st->s;
    const long long B = s->batch, H = s->hq, K = s->hkv, G = s->hq / s->hkv,
                    D = s->d, P = s->page_size, NP = s->total_pages,
                    TQ = s->total_q, MP = st->maxp, MQ = st->maxq;
    char tq[64], tpool[80], tpt[48], tqi[48], tlim[48], toi[48], tg[96],
        tq5[96], tqt[96], ts[112], tsi[112], tr[96], to5[96], tot[96], ti1[112];
    snprintf(tq, sizeof tq, "tensor<%lldx%lldx%lldxf32>", TQ, H, D);
    snprintf(tpool, sizeof tpool, "tensor<%lldx%lldx%lldx%lldxf32>",
             NP > 0 ? NP : 1, K, P, D);
    snprintf(tpt, sizeof tpt, "tensor<%lldx%lldxi32>", B, MP);
    snprintf(tqi, sizeof tqi, "tensor<%lldxi32>", B * MQ);
    snprintf(tlim, sizeof tlim, "tensor<%lldx%lldxi32>", B, MQ);
    snprintf(toi, sizeof toi, "tensor<%lldxi32>", TQ);
    snprintf(tg, sizeof tg, "tensor<%lldx%lldx%lldx%lldx%lldxf32>", B, MP, K, P,
             D);
    snprintf(tq5, sizeof tq5, "tensor<%lldx%lldx%lldx%lldx%lldxf32>", B, MQ, K,
             G, D);
    snprintf(tqt, sizeof tqt, "tensor<%lldx%lldx%lldx%lldx%lldxf32>", B, K, G,
             MQ, D);
    snprintf(ts, sizeof ts, "tensor<%lldx%lldx%lldx%lldx%lldx%lldxf32>", B, K,
             G, MQ, MP, P);
    snprintf(tsi, sizeof tsi, "tensor<%lldx%lldx%lldx%lldx%lldx%lldxi32>", B, K,
             G, MQ, MP, P);
    snprintf(ti1, sizeof ti1, "tensor<%lldx%lldx%lldx%lldx%lldx%lldxi1>", B, K,
             G, MQ, MP, P);
    snprintf(tr, sizeof tr, "tensor<%lldx%lldx%lldx%lldxf32>", B, K, G, MQ);
    snprintf(to5, sizeof to5, "tensor<%lldx%lldx%lldx%lldx%lldxf32>", B, K, G,
             MQ, D);
    snprintf(tot, sizeof tot, "tensor<%lldx%lldx%lldx%lldx%lldxf32>", B, MQ, K,
             G, D);
    char tr1[96];
    snprintf(tr1, sizeof tr1, "tensor<%lldx%lldx%lldx%lldxi1>", B, K, G, MQ);
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "module @sb_paged {\n"
        "  func.func public @main(%%q0: %s, %%k0: %s, %%v0: %s, %%pt0: %s, "
        "%%qi0: %s, %%lim0: %s, %%oi0: %s, %%n: tensor<i32>) -> %s {\n"
        "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%r:9 = stablehlo.while(%%i = %%c0, %%x = %%q0, %%kp = %%k0, "
        "%%vp = %%v0, %%pt = %%pt0, %%qi = %%qi0, %%lim = %%lim0, %%oi = "
        "%%oi0, %%cnt = %%n) : tensor<i32>, %s, %s, %s, %s, %s, %s, %s, "
        "tensor<i32>\n"
        "     cond {\n"
        "      %%lt = stablehlo.compare LT, %%i, %%cnt, SIGNED : "
        "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %%lt : tensor<i1>\n"
        "    } do {\n"
        /* the queries, padded per sequence (row TQ: zeros) */
        "      %%zq = stablehlo.constant dense<0.0> : tensor<1x%lldx%lldxf32>\n"
        "      %%xz = stablehlo.concatenate %%x, %%zq, dim = 0 : (%s, "
        "tensor<1x%lldx%lldxf32>) -> tensor<%lldx%lldx%lldxf32>\n"
        "      %%qi2 = stablehlo.reshape %%qi : (%s) -> tensor<%lldx1xi32>\n"
        "      %%qg = \"stablehlo.gather\"(%%xz, %%qi2) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
        "array<i64: 1, %lld, %lld>, indices_are_sorted = false} : "
        "(tensor<%lldx%lldx%lldxf32>, tensor<%lldx1xi32>) -> "
        "tensor<%lldx%lldx%lldxf32>\n"
        "      %%q5 = stablehlo.reshape %%qg : (tensor<%lldx%lldx%lldxf32>) -> "
        "%s\n"
        "      %%qt = stablehlo.transpose %%q5, dims = [0, 2, 3, 1, 4] : (%s) "
        "-> %s\n"
        /* each sequence's pages, in the pool's own layout */
        "      %%pt3 = stablehlo.reshape %%pt : (%s) -> "
        "tensor<%lldx%lldx1xi32>\n"
        "      %%kg = \"stablehlo.gather\"(%%kp, %%pt3) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [2, 3, 4], collapsed_slice_dims = "
        "[0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = "
        "array<i64: 1, %lld, %lld, %lld>, indices_are_sorted = false} : (%s, "
        "tensor<%lldx%lldx1xi32>) -> %s\n"
        "      %%vg = \"stablehlo.gather\"(%%vp, %%pt3) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [2, 3, 4], collapsed_slice_dims = "
        "[0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = "
        "array<i64: 1, %lld, %lld, %lld>, indices_are_sorted = false} : (%s, "
        "tensor<%lldx%lldx1xi32>) -> %s\n"
        /* scores over (page, slot), masked past each query's keys */
        "      %%s = stablehlo.dot_general %%qt, %%kg, batching_dims = [0, 1] "
        "x [0, 2], contracting_dims = [4] x [4] : (%s, %s) -> %s\n"
        "      %%scale = stablehlo.constant dense<%.9g> : %s\n"
        "      %%ss = stablehlo.multiply %%s, %%scale : %s\n"
        "      %%pg = stablehlo.iota dim = 4 : %s\n"
        "      %%sl = stablehlo.iota dim = 5 : %s\n"
        "      %%psz = stablehlo.constant dense<%lld> : %s\n"
        "      %%pgs = stablehlo.multiply %%pg, %%psz : %s\n"
        "      %%kj = stablehlo.add %%pgs, %%sl : %s\n"
        "      %%lb = stablehlo.broadcast_in_dim %%lim, dims = [0, 3] : (%s) "
        "-> %s\n"
        "      %%ok = stablehlo.compare LT, %%kj, %%lb, SIGNED : (%s, %s) -> "
        "%s\n"
        "      %%ninf = stablehlo.constant dense<0xFF800000> : %s\n"
        "      %%sm = stablehlo.select %%ok, %%ss, %%ninf : %s, %s\n"
        "      %%lo = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
        "      %%z0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "      %%mx = stablehlo.reduce(%%sm init: %%lo) applies "
        "stablehlo.maximum across dimensions = [4, 5] : (%s, tensor<f32>) -> "
        "%s\n"
        /* a query that sees no key: max 0, sum 1, so P = 0 and O = 0 */
        "      %%ninf4 = stablehlo.constant dense<0xFF800000> : %s\n"
        "      %%zero4 = stablehlo.constant dense<0.0> : %s\n"
        "      %%none = stablehlo.compare EQ, %%mx, %%ninf4, FLOAT : (%s, %s) "
        "-> %s\n"
        "      %%mx2 = stablehlo.select %%none, %%zero4, %%mx : %s, %s\n"
        "      %%mb = stablehlo.broadcast_in_dim %%mx2, dims = [0, 1, 2, 3] : "
        "(%s) -> %s\n"
        "      %%d = stablehlo.subtract %%sm, %%mb : %s\n"
        "      %%e = stablehlo.exponential %%d : %s\n"
        "      %%sum = stablehlo.reduce(%%e init: %%z0) applies stablehlo.add "
        "across dimensions = [4, 5] : (%s, tensor<f32>) -> %s\n"
        "      %%one4 = stablehlo.constant dense<1.0> : %s\n"
        "      %%empty = stablehlo.compare EQ, %%sum, %%zero4, FLOAT : (%s, "
        "%s) -> %s\n"
        "      %%sum2 = stablehlo.select %%empty, %%one4, %%sum : %s, %s\n"
        "      %%sb = stablehlo.broadcast_in_dim %%sum2, dims = [0, 1, 2, 3] : "
        "(%s) -> %s\n"
        "      %%p = stablehlo.divide %%e, %%sb : %s\n"
        "      %%o5 = stablehlo.dot_general %%p, %%vg, batching_dims = [0, 1] "
        "x [0, 2], contracting_dims = [4, 5] x [1, 3] : (%s, %s) -> %s\n"
        /* back to the ragged rows */
        "      %%ot = stablehlo.transpose %%o5, dims = [0, 3, 1, 2, 4] : (%s) "
        "-> %s\n"
        "      %%of = stablehlo.reshape %%ot : (%s) -> "
        "tensor<%lldx%lldx%lldxf32>\n"
        "      %%oi2 = stablehlo.reshape %%oi : (%s) -> tensor<%lldx1xi32>\n"
        "      %%y = \"stablehlo.gather\"(%%of, %%oi2) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], "
        "start_index_map = [0], index_vector_dim = 1>, slice_sizes = "
        "array<i64: 1, %lld, %lld>, indices_are_sorted = true} : "
        "(tensor<%lldx%lldx%lldxf32>, tensor<%lldx1xi32>) -> %s\n"
        "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
        "      %%j = stablehlo.add %%i, %%one : tensor<i32>\n"
        "      stablehlo.return %%j, %%y, %%kp, %%vp, %%pt, %%qi, %%lim, %%oi, "
        "%%cnt : tensor<i32>, %s, %s, %s, %s, %s, %s, %s, tensor<i32>\n"
        "    }\n"
        "    return %%r#1 : %s\n"
        "  }\n"
        "}\n",
        /* main and while */
        tq, tpool, tpool, tpt, tqi, tlim, toi, tq, tq, tpool, tpool, tpt, tqi,
        tlim, toi,
        /* queries */
        H, D, tq, H, D, TQ + 1, H, D, tqi, B * MQ, H, D, TQ + 1, H, D, B * MQ,
        B * MQ, H, D, B * MQ, H, D, tq5, tq5, tqt,
        /* pages */
        tpt, B, MP, K, P, D, tpool, B, MP, tg, K, P, D, tpool, B, MP, tg,
        /* scores */
        tqt, tg, ts, 1.0 / sqrt((double)D), ts, ts, tsi, tsi, P, tsi, tsi, tsi,
        tlim, tsi, tsi, tsi, ti1, ts, ti1, ts, ts, tr, tr, tr, tr, tr, tr1, tr1,
        tr, tr, ts, ts, ts, ts, tr, tr, tr, tr, tr1, tr1, tr, tr, ts, ts, ts,
        tg, to5,
        /* back */
        to5, tot, tot, B * MQ, H, D, toi, TQ, H, D, B * MQ, H, D, TQ, tq,
        /* return */
        tq, tpool, tpool, tpt, tqi, tlim, toi, tq);
}

static int ppaged_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                        sb_err *err)
{
    (void)ctx;
    ppaged_state *st = NULL;
    int rc = sb_pjrt_state_new(sizeof *st, (void **)&st, err);
    if (rc)
        return rc;
    sb_pjrt *p = st->loop.p;
    st->plant = sb_p_bool(pt->params, "plant_error");
    if ((rc = sb_paged_shape_of(pt->params, &st->s, err))) {
        free(st);
        return rc;
    }
    const sb_paged_shape *s = &st->s;
    const int64_t B = s->batch, NP = s->total_pages > 0 ? s->total_pages : 1;
    for (int64_t b = 0; b < B; b++) {
        int64_t np = s->cu_pages[b + 1] - s->cu_pages[b],
                nq = sb_paged_qlen(s, b);
        st->maxp = np > st->maxp ? np : st->maxp;
        st->maxq = nq > st->maxq ? nq : st->maxq;
    }
    if (st->maxp == 0)
        st->maxp = 1; /* every length 0: one (masked) page */
    const size_t npool = (size_t)(NP * s->hkv * s->page_size * s->d),
                 nq = (size_t)(s->total_q * s->hq * s->d),
                 MP = (size_t)st->maxp, MQ = (size_t)st->maxq;
    st->kp = malloc(npool * sizeof(float));
    st->vp = malloc(npool * sizeof(float));
    st->q = malloc(nq * sizeof(float));
    st->o = malloc(nq * sizeof(float));
    st->table = malloc((size_t)(s->total_pages + 1) * sizeof(int32_t));
    int32_t *pt32 = calloc((size_t)B * MP, sizeof(int32_t)),
            *qi = malloc((size_t)B * MQ * sizeof(int32_t)),
            *lim = calloc((size_t)B * MQ, sizeof(int32_t)),
            *oi = malloc((size_t)(s->total_q > 0 ? s->total_q : 1) *
                         sizeof(int32_t));
    if (!st->kp || !st->vp || !st->q || !st->o || !st->table || !pt32 || !qi ||
        !lim || !oi) {
        rc = sb_fail(err, SB_ENOMEM,
                     "attention.paged_decode on pjrt: out of "
                     "memory");
        goto done;
    }
    const uint64_t seed = (uint64_t)sb_p_int(pt->params, "seed");
    sb_paged_shuffle_table(st->table, s->total_pages, seed);
    sb_attn_fill(st->kp, npool, 0x4bULL ^ seed);
    sb_attn_fill(st->vp, npool, 0x56ULL ^ seed);
    sb_attn_fill(st->q, nq, 0x51ULL ^ seed);
    for (int64_t b = 0; b < B; b++) {
        for (int64_t k = s->cu_pages[b]; k < s->cu_pages[b + 1]; k++)
            pt32[(size_t)b * MP + (size_t)(k - s->cu_pages[b])] = st->table[k];
        for (int64_t u = 0; u < st->maxq; u++) {
            const size_t at = (size_t)b * MQ + (size_t)u;
            const bool real = u < sb_paged_qlen(s, b);
            qi[at] = (int32_t)(real ? s->cu_q[b] + u : s->total_q);
            lim[at] = (int32_t)(real ? sb_paged_keys(s, b, u) : 0);
            if (real)
                oi[s->cu_q[b] + u] = (int32_t)at;
        }
    }
    const int64_t dq[3] = {s->total_q, s->hq, s->d},
                  dpool[4] = {NP, s->hkv, s->page_size, s->d},
                  dpt[2] = {B, st->maxp}, dqi[1] = {B * st->maxq},
                  dlim[2] = {B, st->maxq}, doi[1] = {s->total_q};
    if ((rc = sb_pjrt_upload(p, st->q, SB_PJRT_F32, dq, 3, &st->dev[0], err)) ||
        (rc = sb_pjrt_upload(p, st->kp, SB_PJRT_F32, dpool, 4, &st->dev[1],
                             err)) ||
        (rc = sb_pjrt_upload(p, st->vp, SB_PJRT_F32, dpool, 4, &st->dev[2],
                             err)) ||
        (rc = sb_pjrt_upload(p, pt32, SB_PJRT_S32, dpt, 2, &st->dev[3], err)) ||
        (rc = sb_pjrt_upload(p, qi, SB_PJRT_S32, dqi, 1, &st->dev[4], err)) ||
        (rc = sb_pjrt_upload(p, lim, SB_PJRT_S32, dlim, 2, &st->dev[5], err)) ||
        (rc = sb_pjrt_upload(p, oi, SB_PJRT_S32, doi, 1, &st->dev[6], err)) ||
        (rc = ppaged_program(st, err)))
        goto done;
    for (int a = 0; a < 7; a++)
        st->loop.args[0][a] = st->dev[a];
    st->loop.nargs = 8;
done:
    free(pt32);
    free(qi);
    free(lim);
    free(oi);
    if (rc) {
        ppaged_teardown(st);
        return rc;
    }
    *state = st;
    return 0;
}

static int ppaged_verify(void *state, sb_result *r)
{
    ppaged_state *st = state;
    const sb_paged_shape *s = &st->s;
    const size_t nq = (size_t)(s->total_q * s->hq * s->d);
    sb_err err = {0};
    int rc = sb_pjrt_loop_fetch(&st->loop, 1, st->o, nq * sizeof(float), &err);
    if (rc) {
        sb_result_note(r, "verification could not run: %s", err.msg);
        return rc;
    }
    if (st->plant)
        st->o[nq / 2] += 0.5f;
    sb_attn_check c;
    sb_paged_verify(s, st->q, st->kp, st->vp, st->table, st->o, VERIFY_ROWS,
                    0x5eedULL, &c);
    sb_attn_check_report(r, &c, "|err| <= 1e-4 + 1e-3*|ref|");
    return 0;
}

static void ppaged_report(void *state, const sb_point *pt, sb_ctx *ctx,
                          sb_result *r)
{
    (void)pt;
    (void)ctx;
    const ppaged_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    sb_result_note(r,
                   "pages gathered a sequence (padded to %lld pages of %lld "
                   "tokens) and queries to %lld a sequence, masked; the "
                   "padding's work is not counted",
                   (long long)st->maxp, (long long)st->s.page_size,
                   (long long)st->maxq);
}

static const sb_param_def pattn_params[] = {
    {"plant_error", SB_P_BOOL, "0", 0, 0, NULL,
     "testing: corrupt one output element before verification (the run "
     "must then fail)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

const sb_impl sb_impl_pjrt_attention_prefill = {
    .backend = "pjrt",
    .desc = "a StableHLO attention block (dot_general, mask, softmax) in a "
            "while loop",
    .params = pattn_params,
    .check = pattn_check,
    .footprint = pattn_footprint,
    .setup = pattn_setup,
    .timer = &sb_pjrt_timer,
    .verify = pattn_verify,
    .report = pattn_report,
    .teardown = pattn_teardown,
};

const sb_impl sb_impl_pjrt_attention_bmm = {
    .backend = "pjrt",
    .desc = "a batched StableHLO dot_general in a while loop",
    .params = pattn_params,
    .footprint = pbmm_footprint,
    .setup = pbmm_setup,
    .timer = &sb_pjrt_timer,
    .verify = pbmm_verify,
    .report = pbmm_report,
    .teardown = pbmm_teardown,
};

const sb_impl sb_impl_pjrt_attention_paged_decode = {
    .backend = "pjrt",
    .desc = "page gathers, a masked attention block and a row gather in a "
            "StableHLO while loop",
    .params = pattn_params,
    .footprint = ppaged_footprint,
    .setup = ppaged_setup,
    .timer = &sb_pjrt_timer,
    .verify = ppaged_verify,
    .report = ppaged_report,
    .teardown = ppaged_teardown,
};
