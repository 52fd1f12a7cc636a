/*
 * pjrt_gemm.c — compute.gemm on a PJRT device: C = A·B in a StableHLO
 * program whose while loop runs the product `n` times per launch (n is an
 * input, so one compiled program serves every inner count), timed by the
 * execution's completion event.
 *
 * The loop carries A, so nothing in the body is loop-invariant for the
 * compiler to hoist. With K = N (square) one product an iteration,
 * A ← A·B. Otherwise (LLM and decode shapes, K ≠ N) two: C = A·B1
 * (M×K by K×N) and A ← C·B2 (M×N by N×K), an MLP's up and down
 * projections, each 2·M·N·K FLOPs, so an iteration is two runs.
 *
 * B (or B1 and B2) hold one ±1 a lane, stored dense: the product costs its
 * FLOPs whatever the values, and moves and negates whole columns, exactly
 * in fp32 and bf16. After any count the whole output is checked exactly
 * against the same column moves made on the host; and one launch with a
 * dense random B (B1) is checked at sampled elements against a double
 * reference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/bench.h"
#include "solbench/gemm.h"
#include "solbench/hw.h"
#include "solbench/util.h"

static const sb_param_def pgemm_params[] = {
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16|fp8",
     "element type of A, B and C: fp32, bf16 (accumulated as the device "
     "does), fp8 (E4M3FN in and out, the products accumulated in fp32)"},
    {"shape", SB_P_STR, "square", 0, 0, "square|llm|decode",
     "square: M = N = K = n; llm: M = tokens, K = d_model, N = 4 d_model; "
     "decode: M = batch, K = d_model, N = ffn"},
    {"n", SB_P_INT, "1024", 1, 65536, NULL, "square: the matrix order"},
    {"m", SB_P_INT, "0", 0, 16777216, NULL,
     "square: rows of A and C when not n (0 = n)"},
    {"k", SB_P_INT, "0", 0, 65536, NULL,
     "square: inner dimension when not n (0 = n)"},
    {"tokens", SB_P_INT, "256", 1, 16777216, NULL,
     "llm: tokens in the batch (M); a full-size layer is 2048"},
    {"d_model", SB_P_INT, "1024", 1, 65536, NULL,
     "llm, decode: model width (K); a full-size layer is 4096"},
    {"batch", SB_P_INT, "1", 1, 4096, NULL,
     "decode: sequences decoding at once, one token each (M)"},
    {"ffn", SB_P_INT, "16384", 0, 1048576, NULL,
     "decode: columns of the weight matrix (N); 0 = the definition's rule "
     "(4x the host's last-level cache)"},
    {"plant_error", SB_P_BOOL, "0", 0, 0, NULL,
     "testing: corrupt one output element before verification (the run "
     "must then fail)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

typedef struct pgemm_state {
    sb_pjrt_loop loop; /* first: sb_pjrt_timer's; args A, B (B1, B2) */
    int64_t m, n, k;   /* A: m x k, B1: k x n */
    bool two;          /* k != n: two products an iteration */
    bool bf16, fp8, plant;
    size_t elem;
    void *a, *b1, *b2, *bd; /* host: A, the lane matrices, a dense B1 */
    /* lane l: B1[pi[l]][col[l]] = s[l] (with one product: B = B1, and
     * sigma = col); B2[col[l]][sigma[l]] = t[l] */
    int64_t nl, *pi, *col, *sigma;
    signed char *s, *t;
    sb_pjrt_buf *da, *d1, *d2; /* device: A, B1, B2 */
} pgemm_state;

static double pgemm_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_gemm_shape *s = pt->shape;
    const double a = (double)s->m * s->k, b = (double)s->k * s->n;
    /* host A, a downloaded A, three B; the device's A, C and B's */
    return 4.0 * (3.0 * a + 5.0 * b + (double)s->m * s->n);
}

/* Decode points are read as memory traffic, as on the CPU (gemm.c): the
 * least the product moves, A and the weights read once and C written once,
 * in the point's element type (fp8 in and out here); the other shapes
 * report FLOP/s alone. So a decode GEMM reads in GB/s on every backend. */
static double pgemm_bytes(const sb_point *pt)
{
    const sb_gemm_shape *s = pt->shape;
    if (!s->decode)
        return 0;
    const char *dt = sb_p_str(pt->params, "dtype");
    double el = strcmp(dt, "fp8") == 0 ? 1 : strcmp(dt, "bf16") == 0 ? 2 : 4;
    return ((double)s->m * s->k + (double)s->k * s->n + (double)s->m * s->n) *
           el;
}

static void pgemm_teardown(void *state)
{
    pgemm_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        sb_pjrt_buf_free(st->loop.p, st->da);
        sb_pjrt_buf_free(st->loop.p, st->d1);
        sb_pjrt_buf_free(st->loop.p, st->d2);
        sb_pjrt_loop_free(&st->loop);
    }
    free(st->a);
    free(st->b1);
    free(st->b2);
    free(st->bd);
    free(st->pi);
    free(st->col);
    free(st->sigma);
    free(st->s);
    free(st->t);
    free(st);
}

/* v rounded to the nearest E4M3FN value (ties to the even code; |v| above
 * the largest finite value, 448, saturates). */
static uint8_t e4m3_from(double v)
{
    const uint8_t sign = v < 0 ? 0x80 : 0;
    const double a = fabs(v);
    int lo = 0, hi = 0x7e; /* positive codes increase with the value */
    while (lo < hi) {      /* the largest code not above a */
        int mid = (lo + hi + 1) / 2;
        if (sb_e4m3_to_f32((uint8_t)mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    int c = lo;
    if (c < 0x7e) {
        double d0 = a - sb_e4m3_to_f32((uint8_t)c),
               d1 = sb_e4m3_to_f32((uint8_t)(c + 1)) - a;
        if (d1 < d0 || (d1 == d0 && (c & 1)))
            c++;
    }
    return (uint8_t)(sign | c);
}

static void put(const pgemm_state *st, void *buf, size_t i, double v)
{
    if (st->fp8)
        ((uint8_t *)buf)[i] = e4m3_from(v);
    else if (st->bf16)
        ((uint16_t *)buf)[i] = sb_bf16_from_f32((float)v);
    else
        ((float *)buf)[i] = (float)v;
}

static double get(const pgemm_state *st, const void *buf, size_t i)
{
    if (st->fp8)
        return sb_e4m3_to_f32(((const uint8_t *)buf)[i]);
    return st->bf16 ? (double)sb_bf16_to_f32(((const uint16_t *)buf)[i])
                    : (double)((const float *)buf)[i];
}

/* One product `out` = lhs·rhs as a body line (fp8: accumulated in f32
 * and rounded back to E4M3FN, the carried type). */
static void product(const pgemm_state *st, char *b, size_t len, const char *out,
                    const char *lhs, const char *rhs, const char *tl,
                    const char *tr, const char *tres)
{
    if (!st->fp8) {
        snprintf(b, len,
                 "      %s = stablehlo.dot_general %s, %s, contracting_dims = "
                 "[1] x [0] : (%s, %s) -> %s\n",
                 out, lhs, rhs, tl, tr, tres);
        return;
    }
    char t32[64];
    snprintf(t32, sizeof t32, "%.*sf32>", (int)(strlen(tres) - 9), tres);
    snprintf(b, len,
             "      %s32 = stablehlo.dot_general %s, %s, contracting_dims = "
             "[1] x [0] : (%s, %s) -> %s\n"
             "      %s = stablehlo.convert %s32 : (%s) -> %s\n",
             out, lhs, rhs, tl, tr, t32, out, out, t32, tres);
}

/* The program: n iterations in a loop, A carried. */
static int pgemm_program(pgemm_state *st, sb_err *err)
{
    const char *t = st->fp8 ? "f8E4M3FN" : st->bf16 ? "bf16" : "f32";
    char a[64], b1[64], b2[64], c[64], p1[512], p2[512] = "";
    snprintf(a, sizeof a, "tensor<%lldx%lldx%s>", (long long)st->m,
             (long long)st->k, t);
    snprintf(b1, sizeof b1, "tensor<%lldx%lldx%s>", (long long)st->k,
             (long long)st->n, t);
    snprintf(b2, sizeof b2, "tensor<%lldx%lldx%s>", (long long)st->n,
             (long long)st->k, t);
    snprintf(c, sizeof c, "tensor<%lldx%lldx%s>", (long long)st->m,
             (long long)st->n, t);
    const char *head = "module @sb_gemm {\n"
                       "  func.func public @main(";
    const char *cond = "     cond {\n"
                       "      %lt = stablehlo.compare LT, %i, %k, SIGNED : "
                       "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                       "      stablehlo.return %lt : tensor<i1>\n"
                       "    } do {\n";
    const char *inc = "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
                      "      %j = stablehlo.add %i, %one : tensor<i32>\n";
    if (!st->two) {
        product(st, p1, sizeof p1, "%y", "%x", "%w", a, b1, a);
        return sb_pjrt_compile(
            st->loop.p, &st->loop.exe, err,
            "%s%%a: %s, %%b: %s, %%n: tensor<i32>) -> %s {\n"
            "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
            "    %%r:4 = stablehlo.while(%%i = %%c0, %%x = %%a, %%w = %%b, "
            "%%k = %%n) : tensor<i32>, %s, %s, tensor<i32>\n"
            "%s%s%s"
            "      stablehlo.return %%j, %%y, %%w, %%k : tensor<i32>, %s, %s, "
            "tensor<i32>\n"
            "    }\n"
            "    return %%r#1 : %s\n"
            "  }\n"
            "}\n",
            head, a, b1, a, a, b1, cond, p1, inc, a, b1, a);
    }
    product(st, p1, sizeof p1, "%y", "%x", "%w", a, b1, c);
    product(st, p2, sizeof p2, "%z", "%y", "%v", c, b2, a);
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "%s%%a: %s, %%b: %s, %%d: %s, %%n: tensor<i32>) -> %s {\n"
        "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%r:5 = stablehlo.while(%%i = %%c0, %%x = %%a, %%w = %%b, "
        "%%v = %%d, %%k = %%n) : tensor<i32>, %s, %s, %s, tensor<i32>\n"
        "%s%s%s%s"
        "      stablehlo.return %%j, %%z, %%w, %%v, %%k : tensor<i32>, %s, %s, "
        "%s, tensor<i32>\n"
        "    }\n"
        "    return %%r#1 : %s\n"
        "  }\n"
        "}\n",
        head, a, b1, b2, a, a, b1, b2, cond, p1, p2, inc, a, b1, b2, a);
}

/* A random permutation of 0..len-1 (Fisher-Yates); the lanes use its
 * first ones. */
static int64_t *pick(int64_t len, uint64_t *seed)
{
    int64_t *v = malloc((size_t)len * sizeof *v);
    if (!v)
        return NULL;
    for (int64_t l = 0; l < len; l++)
        v[l] = l;
    for (int64_t l = len - 1; l > 0; l--) {
        int64_t j = (int64_t)(sb_rng_next(seed) % (uint64_t)(l + 1));
        int64_t x = v[l];
        v[l] = v[j];
        v[j] = x;
    }
    return v;
}

static int pgemm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    (void)ctx;
    const sb_gemm_shape *sh = pt->shape;
    pgemm_state *st = NULL;
    int rc = sb_pjrt_state_new(sizeof *st, (void **)&st, err);
    if (rc)
        return rc;
    sb_pjrt *p = st->loop.p;
    st->m = sh->m;
    st->n = sh->n;
    st->k = sh->k;
    st->two = st->k != st->n;
    st->loop.work = st->two ? 2.0 : 1.0;
    st->bf16 = strcmp(sb_p_str(pt->params, "dtype"), "bf16") == 0;
    st->fp8 = strcmp(sb_p_str(pt->params, "dtype"), "fp8") == 0;
    st->elem = st->fp8 ? 1 : st->bf16 ? 2 : 4;
    st->plant = sb_p_bool(pt->params, "plant_error");
    st->nl = st->k < st->n ? st->k : st->n;
    const size_t na = (size_t)st->m * (size_t)st->k,
                 nb = (size_t)st->k * (size_t)st->n;
    uint64_t seed = 0x5eed0000u + (uint64_t)(st->m * 131 + st->n * 7 + st->k);
    st->a = malloc(na * st->elem);
    st->b1 = calloc(nb, st->elem);
    st->b2 = st->two ? calloc(nb, st->elem) : NULL;
    st->bd = malloc(nb * st->elem);
    st->pi = pick(st->k, &seed);
    st->col = st->two ? pick(st->n, &seed) : NULL;
    st->sigma = st->two ? pick(st->k, &seed) : NULL;
    st->s = malloc((size_t)st->nl);
    st->t = malloc((size_t)st->nl);
    if (!st->a || !st->b1 || (st->two && !st->b2) || !st->bd || !st->pi ||
        (st->two && (!st->col || !st->sigma)) || !st->s || !st->t) {
        pgemm_teardown(st);
        return sb_fail(err, SB_ENOMEM,
                       "compute.gemm on pjrt: out of memory for the host "
                       "matrices");
    }
    for (size_t i = 0; i < na; i++)
        put(st, st->a, i, 2.0 * sb_rng_unif(&seed) - 1.0);
    for (size_t i = 0; i < nb; i++)
        put(st, st->bd, i, 2.0 * sb_rng_unif(&seed) - 1.0);
    if (!st->two) { /* B: row pi[l] to column l, a signed permutation */
        st->col = malloc((size_t)st->nl * sizeof *st->col);
        if (!st->col) {
            pgemm_teardown(st);
            return sb_fail(err, SB_ENOMEM, "out of memory");
        }
        for (int64_t l = 0; l < st->nl; l++)
            st->col[l] = l;
    }
    for (int64_t l = 0; l < st->nl; l++) {
        st->s[l] = (sb_rng_next(&seed) & 1) ? 1 : -1;
        st->t[l] = (sb_rng_next(&seed) & 1) ? 1 : -1;
        put(st, st->b1, (size_t)st->pi[l] * (size_t)st->n + (size_t)st->col[l],
            st->s[l]);
        if (st->two)
            put(st, st->b2,
                (size_t)st->col[l] * (size_t)st->k + (size_t)st->sigma[l],
                st->t[l]);
    }
    const int64_t da[2] = {st->m, st->k}, db1[2] = {st->k, st->n},
                  db2[2] = {st->n, st->k};
    const sb_pjrt_type ty = st->fp8    ? SB_PJRT_F8E4M3
                            : st->bf16 ? SB_PJRT_BF16
                                       : SB_PJRT_F32;
    if ((rc = sb_pjrt_upload(p, st->a, ty, da, 2, &st->da, err)) ||
        (rc = sb_pjrt_upload(p, st->b1, ty, db1, 2, &st->d1, err)) ||
        (st->two &&
         (rc = sb_pjrt_upload(p, st->b2, ty, db2, 2, &st->d2, err))) ||
        (rc = pgemm_program(st, err))) {
        pgemm_teardown(st);
        return rc;
    }
    st->loop.args[0][0] = st->da;
    st->loop.args[0][1] = st->d1;
    st->loop.args[0][2] = st->d2;
    st->loop.nargs = st->two ? 4 : 3;
    *state = st;
    return 0;
}

/* Where column j of A after `iters` iterations comes from: src[j] (-1:
 * zero) with sign sg[j], by the lanes' moves. */
static void column_moves(const pgemm_state *st, int iters, int64_t *src,
                         int *sg, int64_t *tmp, int *tsg)
{
    for (int64_t j = 0; j < st->k; j++) {
        src[j] = j;
        sg[j] = 1;
    }
    for (int it = 0; it < iters; it++) {
        for (int64_t j = 0; j < st->k; j++) {
            tmp[j] = -1;
            tsg[j] = 1;
        }
        for (int64_t l = 0; l < st->nl; l++) {
            int64_t to = st->two ? st->sigma[l] : st->col[l];
            tmp[to] = src[st->pi[l]];
            tsg[to] = sg[st->pi[l]] * st->s[l] * (st->two ? st->t[l] : 1);
        }
        memcpy(src, tmp, (size_t)st->k * sizeof *src);
        memcpy(sg, tsg, (size_t)st->k * sizeof *sg);
    }
}

static int pgemm_verify(void *state, sb_result *r)
{
    pgemm_state *st = state;
    sb_err err = {0};
    const size_t na = (size_t)st->m * (size_t)st->k;
    const size_t nk = (size_t)st->k;
    void *c = malloc(na * st->elem);
    int64_t *src = malloc(2 * nk * sizeof *src);
    int *sg = malloc(2 * nk * sizeof *sg);
    sb_pjrt_buf *dd = NULL;
    int rc = SB_ENOMEM;
    if (!c || !src || !sg)
        goto done;
    /* 1. three iterations by the lane matrices: exact, every element */
    const int iters = 3;
    if ((rc = sb_pjrt_loop_fetch(&st->loop, iters, c, na * st->elem, &err)))
        goto done;
    if (st->plant) /* one element off by a unit of its last place */
        put(st, c, na / 2, get(st, c, na / 2) * (1.0 + 1.0 / 64.0) + 1.0);
    column_moves(st, iters, src, sg, src + nk, sg + nk);
    size_t wrong = 0;
    for (int64_t row = 0; row < st->m; row++)
        for (int64_t j = 0; j < st->k; j++) {
            size_t at = (size_t)row * nk;
            double want =
                src[j] < 0 ? 0.0 : sg[j] * get(st, st->a, at + (size_t)src[j]);
            wrong += get(st, c, at + (size_t)j) != want;
        }
    if (wrong)
        sb_result_note(r,
                       "verification: %zu of %zu elements of A after %d "
                       "iterations differ from the column moves made on the "
                       "host",
                       wrong, na, iters);
    /* 2. one iteration with a dense B (B1): 64 sampled elements of A·B
     * against double (B2 then only moves lane l's column to sigma[l]) */
    const int64_t db[2] = {st->k, st->n};
    if ((rc = sb_pjrt_upload(st->loop.p, st->bd,
                             st->fp8    ? SB_PJRT_F8E4M3
                             : st->bf16 ? SB_PJRT_BF16
                                        : SB_PJRT_F32,
                             db, 2, &dd, &err)))
        goto done;
    st->loop.args[0][1] = dd;
    rc = sb_pjrt_loop_fetch(&st->loop, 1, c, na * st->elem, &err);
    st->loop.args[0][1] = st->d1;
    if (rc)
        goto done;
    /* fp8: the f32 sum rounded to E4M3 (3 mantissa bits: 2^-4 relative) */
    const double tol = st->fp8 ? 7e-2 : st->bf16 ? 1.6e-2 : 1e-5;
    uint64_t seed = 77;
    size_t off = 0;
    double worst = 0;
    for (int s = 0; s < 64; s++) {
        size_t i = (size_t)(sb_rng_next(&seed) % (uint64_t)st->m);
        int64_t l = (int64_t)(sb_rng_next(&seed) % (uint64_t)st->nl);
        size_t j = (size_t)st->col[l]; /* the column of A·B */
        double ref = 0, l2 = 0;
        for (int64_t q = 0; q < st->k; q++) {
            double x = get(st, st->a, i * nk + (size_t)q) *
                       get(st, st->bd, (size_t)q * (size_t)st->n + j);
            ref += x;
            l2 += x * x;
        }
        double g = st->two
                       ? st->t[l] * get(st, c, i * nk + (size_t)st->sigma[l])
                       : get(st, c, i * nk + j);
        double e = fabs(g - ref) / (fabs(ref) + sqrt(l2));
        if (!(e <= tol))
            off++;
        if (e > worst || e != e)
            worst = e;
    }
    if (off)
        sb_result_note(r,
                       "verification: %zu of 64 sampled elements of A·B "
                       "(dense B) off by more than %.3g relative (worst %.3g)",
                       off, tol, worst);
    sb_result_metric(r, "max_rel_err", worst, "");
    r->valid = wrong == 0 && off == 0;
    rc = 0;
done:
    if (rc && rc != SB_ENOMEM)
        sb_result_note(r, "verification could not run: %s", err.msg);
    sb_pjrt_buf_free(st->loop.p, dd);
    free(c);
    free(src);
    free(sg);
    return rc;
}

static void pgemm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    const pgemm_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    if (st->two)
        sb_result_note(r,
                       "a launch runs A·B1 (M x K by K x N) then C·B2 (M x N "
                       "by N x K) in a StableHLO while loop, A carried: two "
                       "products an iteration, each counted as a run");
    else
        sb_result_note(r, "a launch runs the product in a StableHLO while "
                          "loop (A carried, B a signed permutation), timed "
                          "to its completion event");
    const sb_metric *g = sb_result_get(r, "GFLOPs");
    if (!g)
        return;
    /* MFU against the device's datasheet peak (data/hw, by its kind) */
    const sb_hw_spec *hw;
    if (sb_pjrt_datasheet(st->loop.p, &hw)) {
        const char *dt = sb_p_str(pt->params, "dtype");
        double peak = sb_hw_peak(hw, dt);
        if (peak <= 0 && st->fp8) { /* no fp8 rate: against bf16's */
            peak = sb_hw_peak(hw, "bf16");
            dt = "bf16";
        }
        if (peak > 0) {
            sb_result_metric(r, "MFU", g->value * 1e9 / peak, "ratio");
            sb_result_note(r, "MFU against %s's %s peak, %.0f TFLOP/s",
                           hw->name, dt, peak * 1e-12);
        }
    }
    if (strcmp(sb_pjrt_platform(st->loop.p), "cpu") != 0 || st->fp8)
        return; /* the CPU backend has no fp8 GEMM to compare with */
    /* on the CPU plugin: against this machine's own GEMM of the run; a
     * decode product against the CPU's weight streaming (gemv) */
    char key[24];
    const bool decode = ((const sb_gemm_shape *)pt->shape)->decode;
    if (decode && r->stats.p50 > 0) {
        const double wbytes = (double)st->k * (double)st->n * (double)st->elem;
        const double wbps = wbytes / r->stats.p50;
        sb_result_metric(r, "weight_GBps", wbps * 1e-9, "GB/s");
        sb_result_metric(r, "weight_GBps_best", wbytes / r->stats.min * 1e-9,
                         "GB/s");
        snprintf(key, sizeof key, "gemv.%s", sb_p_str(pt->params, "dtype"));
        const double gemv = sb_ceil_get(&ctx->ceil, key);
        if (gemv > 0) /* best against the CPU's best */
            sb_result_metric(r, "pct_cpu_gemv",
                             100.0 * wbytes / r->stats.min / gemv, "%");
        return;
    }
    snprintf(key, sizeof key, "gemm.%s", sb_p_str(pt->params, "dtype"));
    double ceil = sb_ceil_get(&ctx->ceil, key);
    const sb_metric *gb = sb_result_get(r, "GFLOPs_best");
    if (ceil > 0 && gb) /* best against the CPU's best */
        sb_result_metric(r, "pct_cpu_gemm", 100.0 * gb->value * 1e9 / ceil,
                         "%");
    else
        sb_result_note(r,
                       "no %s ceiling in this run: run the CPU's compute.gemm "
                       "beside it for pct_cpu_gemm",
                       key);
}

const sb_impl sb_impl_pjrt_compute_gemm = {
    .backend = "pjrt",
    .desc = "StableHLO dot_general in a while loop on a PJRT device",
    .params = pgemm_params,
    .quick = "dtype=fp32,bf16 shape=square,llm,decode n=1024 tokens=256 "
             "d_model=1024 batch=1",
    .full = "dtype=fp32,bf16 shape=square,llm,decode n=1024,2048,4096 "
            "tokens=2048 d_model=4096 batch=1,16,64",
    .footprint = pgemm_footprint,
    .bytes = pgemm_bytes,
    .setup = pgemm_setup,
    .timer = &sb_pjrt_timer,
    .verify = pgemm_verify,
    .report = pgemm_report,
    .teardown = pgemm_teardown,
};
