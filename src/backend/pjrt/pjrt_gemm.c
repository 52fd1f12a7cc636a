/*
 * pjrt_gemm.c — compute.gemm on a PJRT device: C = A·B in a StableHLO
 * program whose while loop runs the product `n` times per launch (n is an
 * input, so one compiled program serves every inner count), timed by the
 * execution's completion event.
 *
 * The loop carries A: A_{i+1} = A_i·B, so nothing in the body is
 * loop-invariant for the compiler to hoist, and B is a signed permutation
 * (one ±1 a row and a column, stored dense: the product costs 2·M·K·N
 * FLOPs whatever the values). A_i·B then only moves and negates columns,
 * exactly in fp32 and bf16, so after any count the whole output is checked
 * exactly against the permutation applied on the host; and one product
 * with a dense random B is checked at sampled elements against a double
 * reference. K must equal N (the carried A keeps its shape).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/bench.h"
#include "solbench/gemm.h"
#include "solbench/util.h"

static const sb_param_def pgemm_params[] = {
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16",
     "element type of A, B and C (the device accumulates as it does)"},
    {"shape", SB_P_STR, "square", 0, 0, "square",
     "square: M = N = K = n (m sets M apart; the loop needs K = N)"},
    {"n", SB_P_INT, "1024", 1, 65536, NULL, "the matrix order (N = K)"},
    {"m", SB_P_INT, "0", 0, 16777216, NULL, "rows of A and C when not n"},
    {"k", SB_P_INT, "0", 0, 65536, NULL, "0, or n (the loop carries A)"},
    {"plant_error", SB_P_BOOL, "0", 0, 0, NULL,
     "testing: corrupt one output element before verification (the run "
     "must then fail)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

typedef struct pgemm_state {
    sb_pjrt_loop loop; /* first: sb_pjrt_timer's; args A, B */
    int64_t m, n;      /* A: m x n, B: n x n */
    bool bf16, plant;
    size_t elem;
    void *a, *bp, *bd;    /* host: A, the signed permutation, a dense B */
    int64_t *perm;        /* column l of A lands in column perm[l] */
    signed char *sign;    /* with this sign */
    sb_pjrt_buf *da, *dp; /* device: A, the permutation */
} pgemm_state;

static int pgemm_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const sb_gemm_shape *s = pt->shape;
    if (s->k != s->n)
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm on pjrt: parameter k=%lld must be 0 or "
                       "n=%lld (the program's loop carries A·B as the next A)",
                       (long long)s->k, (long long)s->n);
    return 0;
}

static double pgemm_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_gemm_shape *s = pt->shape;
    /* host A, two B, a downloaded C, and the device's A, B and C */
    return 4.0 * (3.0 * (double)s->m * s->n + 2.0 * (double)s->n * s->n);
}

static void pgemm_teardown(void *state)
{
    pgemm_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        sb_pjrt_buf_free(st->loop.p, st->da);
        sb_pjrt_buf_free(st->loop.p, st->dp);
        sb_pjrt_loop_free(&st->loop);
    }
    free(st->a);
    free(st->bp);
    free(st->bd);
    free(st->perm);
    free(st->sign);
    free(st);
}

static void put(const pgemm_state *st, void *buf, size_t i, double v)
{
    if (st->bf16)
        ((uint16_t *)buf)[i] = sb_bf16_from_f32((float)v);
    else
        ((float *)buf)[i] = (float)v;
}

static double get(const pgemm_state *st, const void *buf, size_t i)
{
    return st->bf16 ? (double)sb_bf16_to_f32(((const uint16_t *)buf)[i])
                    : (double)((const float *)buf)[i];
}

/* The program: n products in a loop, A carried. */
static int pgemm_program(pgemm_state *st, sb_err *err)
{
    const char *t = st->bf16 ? "bf16" : "f32";
    char a[64], b[64];
    snprintf(a, sizeof a, "tensor<%lldx%lldx%s>", (long long)st->m,
             (long long)st->n, t);
    snprintf(b, sizeof b, "tensor<%lldx%lldx%s>", (long long)st->n,
             (long long)st->n, t);
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "module @sb_gemm {\n"
        "  func.func public @main(%%a: %s, %%b: %s, %%n: tensor<i32>) -> %s {\n"
        "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%r:4 = stablehlo.while(%%i = %%c0, %%x = %%a, %%w = %%b, %%k = "
        "%%n) : tensor<i32>, %s, %s, tensor<i32>\n"
        "     cond {\n"
        "      %%lt = stablehlo.compare LT, %%i, %%k, SIGNED : "
        "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %%lt : tensor<i1>\n"
        "    } do {\n"
        "      %%y = stablehlo.dot_general %%x, %%w, contracting_dims = [1] x "
        "[0] : (%s, %s) -> %s\n"
        "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
        "      %%j = stablehlo.add %%i, %%one : tensor<i32>\n"
        "      stablehlo.return %%j, %%y, %%w, %%k : tensor<i32>, %s, %s, "
        "tensor<i32>\n"
        "    }\n"
        "    return %%r#1 : %s\n"
        "  }\n"
        "}\n",
        a, b, a, a, b, a, b, a, a, b, a);
}

static int pgemm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    (void)ctx;
    sb_pjrt *p = NULL;
    int rc = sb_pjrt_open(&p, err);
    if (rc)
        return rc;
    const sb_gemm_shape *s = pt->shape;
    pgemm_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    st->loop.p = p;
    st->m = s->m;
    st->n = s->n;
    st->bf16 = strcmp(sb_p_str(pt->params, "dtype"), "bf16") == 0;
    st->elem = st->bf16 ? 2 : 4;
    st->plant = sb_p_bool(pt->params, "plant_error");
    const size_t na = (size_t)st->m * (size_t)st->n,
                 nb = (size_t)st->n * (size_t)st->n;
    st->a = malloc(na * st->elem);
    st->bp = calloc(nb, st->elem);
    st->bd = malloc(nb * st->elem);
    st->perm = malloc((size_t)st->n * sizeof *st->perm);
    st->sign = malloc((size_t)st->n);
    if (!st->a || !st->bp || !st->bd || !st->perm || !st->sign) {
        pgemm_teardown(st);
        return sb_fail(err, SB_ENOMEM,
                       "compute.gemm on pjrt: out of memory for the host "
                       "matrices");
    }
    uint64_t seed = 0x5eed0000u + (uint64_t)(st->m * 131 + st->n);
    for (size_t i = 0; i < na; i++)
        put(st, st->a, i, 2.0 * sb_rng_unif(&seed) - 1.0);
    for (size_t i = 0; i < nb; i++)
        put(st, st->bd, i, 2.0 * sb_rng_unif(&seed) - 1.0);
    for (int64_t l = 0; l < st->n; l++)
        st->perm[l] = l;
    for (int64_t l = st->n - 1; l > 0; l--) { /* Fisher-Yates */
        int64_t j = (int64_t)(sb_rng_next(&seed) % (uint64_t)(l + 1));
        int64_t t = st->perm[l];
        st->perm[l] = st->perm[j];
        st->perm[j] = t;
    }
    for (int64_t l = 0; l < st->n; l++) {
        st->sign[l] = (sb_rng_next(&seed) & 1) ? 1 : -1;
        put(st, st->bp, (size_t)l * (size_t)st->n + (size_t)st->perm[l],
            st->sign[l]);
    }
    const int64_t da[2] = {st->m, st->n}, db[2] = {st->n, st->n};
    const sb_pjrt_type ty = st->bf16 ? SB_PJRT_BF16 : SB_PJRT_F32;
    if ((rc = sb_pjrt_upload(p, st->a, ty, da, 2, &st->da, err)) ||
        (rc = sb_pjrt_upload(p, st->bp, ty, db, 2, &st->dp, err)) ||
        (rc = pgemm_program(st, err))) {
        pgemm_teardown(st);
        return rc;
    }
    st->loop.args[0][0] = st->da;
    st->loop.args[0][1] = st->dp;
    st->loop.nargs = 3;
    *state = st;
    return 0;
}

static int pgemm_verify(void *state, sb_result *r)
{
    pgemm_state *st = state;
    sb_err err = {0};
    const size_t na = (size_t)st->m * (size_t)st->n;
    void *c = malloc(na * st->elem);
    sb_pjrt_buf *dd = NULL, *out = NULL;
    int rc = SB_ENOMEM;
    if (!c)
        goto done;
    /* 1. three products by the permutation: exact, every element */
    const uint64_t k = 3;
    if ((rc = sb_pjrt_loop_run(&st->loop, k, &out, &err)) ||
        (rc = sb_pjrt_download(st->loop.p, out, c, na * st->elem, &err)))
        goto done;
    if (st->plant) /* one element off by a unit of its last place */
        put(st, c, na / 2, get(st, c, na / 2) * (1.0 + 1.0 / 64.0) + 1.0);
    size_t wrong = 0;
    for (int64_t l = 0; l < st->n; l++) {
        int64_t col = l;
        int sg = 1;
        for (uint64_t i = 0; i < k; i++) {
            sg *= st->sign[col];
            col = st->perm[col];
        }
        for (int64_t row = 0; row < st->m; row++) {
            size_t src = (size_t)row * (size_t)st->n + (size_t)l,
                   dst = (size_t)row * (size_t)st->n + (size_t)col;
            if (get(st, c, dst) != sg * get(st, st->a, src))
                wrong++;
        }
    }
    if (wrong)
        sb_result_note(r,
                       "verification: %zu of %zu elements of A·P^3 differ "
                       "from the permutation applied on the host",
                       wrong, na);
    /* 2. one product with a dense B: 64 sampled elements against double */
    sb_pjrt_buf_free(st->loop.p, out);
    out = NULL;
    const int64_t db[2] = {st->n, st->n};
    if ((rc = sb_pjrt_upload(st->loop.p, st->bd,
                             st->bf16 ? SB_PJRT_BF16 : SB_PJRT_F32, db, 2, &dd,
                             &err)))
        goto done;
    st->loop.args[0][1] = dd; /* one product with the dense B */
    rc = sb_pjrt_loop_run(&st->loop, 1, &out, &err);
    st->loop.args[0][1] = st->dp;
    if (rc || (rc = sb_pjrt_download(st->loop.p, out, c, na * st->elem, &err)))
        goto done;
    const double tol = st->bf16 ? 1.6e-2 : 1e-5;
    uint64_t seed = 77;
    size_t off = 0;
    double worst = 0;
    for (int s = 0; s < 64; s++) {
        size_t i = (size_t)(sb_rng_next(&seed) % (uint64_t)st->m),
               j = (size_t)(sb_rng_next(&seed) % (uint64_t)st->n);
        double ref = 0, l2 = 0;
        for (int64_t q = 0; q < st->n; q++) {
            double t = get(st, st->a, i * (size_t)st->n + (size_t)q) *
                       get(st, st->bd, (size_t)q * (size_t)st->n + j);
            ref += t;
            l2 += t * t;
        }
        double e = fabs(get(st, c, i * (size_t)st->n + j) - ref) /
                   (fabs(ref) + sqrt(l2));
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
    sb_pjrt_buf_free(st->loop.p, out);
    sb_pjrt_buf_free(st->loop.p, dd);
    free(c);
    return rc;
}

static void pgemm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    const pgemm_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    sb_result_note(r, "a launch runs the product in a StableHLO while loop "
                      "(A carried, B a signed permutation), timed to its "
                      "completion event");
    const sb_metric *g = sb_result_get(r, "GFLOPs");
    if (!g || strcmp(sb_pjrt_platform(st->loop.p), "cpu") != 0)
        return;
    /* on the CPU plugin: against this machine's own GEMM of the run */
    char key[24];
    snprintf(key, sizeof key, "gemm.%s", sb_p_str(pt->params, "dtype"));
    double ceil = sb_ceil_get(&ctx->ceil, key);
    if (ceil > 0)
        sb_result_metric(r, "pct_cpu_gemm", 100.0 * g->value * 1e9 / ceil, "%");
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
    .quick = "dtype=fp32,bf16 n=1024",
    .full = "dtype=fp32,bf16 n=1024,2048,4096",
    .check = pgemm_check,
    .footprint = pgemm_footprint,
    .setup = pgemm_setup,
    .timer = &sb_pjrt_timer,
    .verify = pgemm_verify,
    .report = pgemm_report,
    .teardown = pgemm_teardown,
};
