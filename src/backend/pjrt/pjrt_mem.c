/*
 * pjrt_mem.c — memory.copy, scale, add, triad and read on a PJRT device:
 * each a
 * StableHLO while loop over fp32 arrays, `n` passes a launch (n an input),
 * timed to the launch's completion event like every PJRT program.
 *
 * The loop carries the array it writes, so no pass is loop-invariant for
 * the compiler to hoist or drop: scale x ← −x (2 words an element), add
 * x ← x + y (3), triad x ← y + s·x with s = −1 (3), read acc ← max over
 * max(x, acc) (1: a reduction that reads every element), copy x ← y + d
 * with d = 0·x[0] (2: y read, x written; a zero the compiler cannot
 * prove, so each pass depends on the last and writes in place). Inputs
 * are small integers, so after 3 passes every element is checked exactly:
 * −x, x + 3y, y − x, max x, y. memory.write is not written: a body that fills
 * without reading what it carries is one the compiler may fold away.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/bench.h"
#include "solbench/hw.h"
#include "solbench/util.h"

/* This backend's kernels (the impl's kind). */
enum { K_SCALE, K_ADD, K_TRIAD, K_READ, K_COPY };

static const sb_param_def pmem_params[] = {
    {"size", SB_P_SIZE, "64MiB", 64, 17179869184.0, NULL,
     "total bytes of all arrays of the kernel (device memory)"},
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32", "element type"},
    {"plant_error", SB_P_BOOL, "0", 0, 0, NULL,
     "testing: corrupt one output element before verification (the run "
     "must then fail)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* Arrays of the kernel's footprint and words moved an element a pass. */
static int arrays_of(int k)
{
    return k == K_READ ? 1 : k == K_SCALE || k == K_COPY ? 2 : 3;
}

static int64_t elems_of(const sb_point *pt)
{
    const int k = pt->impl->kind;
    return (int64_t)(sb_p_num(pt->params, "size") / (4.0 * arrays_of(k)));
}

typedef struct pmem_state {
    sb_pjrt_loop loop; /* first: sb_pjrt_timer's; args x (and y) */
    int kind;
    int64_t n;
    bool plant;
    float *x, *y;         /* host inputs */
    sb_pjrt_buf *dx, *dy; /* device inputs */
} pmem_state;

static int pmem_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    if (elems_of(pt) < 16)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: parameter size=%s holds fewer than 16 "
                       "elements an array",
                       pt->bench->name, sb_p_str(pt->params, "size"));
    if (elems_of(pt) > 2147483647LL)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: parameter size=%s: more than 2^31 "
                       "elements an array",
                       pt->bench->name, sb_p_str(pt->params, "size"));
    return 0;
}

static double pmem_bytes(const sb_point *pt)
{
    const int k = pt->impl->kind;
    return 4.0 * (double)elems_of(pt) * arrays_of(k);
}

static double pmem_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    return 3.0 * pmem_bytes(pt); /* host inputs and output, the device's */
}

static void pmem_teardown(void *state)
{
    pmem_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        sb_pjrt_buf_free(st->loop.p, st->dx);
        sb_pjrt_buf_free(st->loop.p, st->dy);
        sb_pjrt_loop_free(&st->loop);
    }
    free(st->x);
    free(st->y);
    free(st);
}

/* The program of a kernel over arrays of `t` (tensor<Nxf32>). */
static int pmem_program(pmem_state *st, sb_err *err)
{
    char t[48];
    snprintf(t, sizeof t, "tensor<%lldxf32>", (long long)st->n);
    const char *cmp = "      %lt = stablehlo.compare LT, %i, %k, SIGNED : "
                      "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                      "      stablehlo.return %lt : tensor<i1>\n";
    const char *inc = "      %one = stablehlo.constant dense<1> : "
                      "tensor<i32>\n"
                      "      %j = stablehlo.add %i, %one : tensor<i32>\n";
    if (st->kind == K_READ)
        return sb_pjrt_compile(
            st->loop.p, &st->loop.exe, err,
            "module @sb_mem {\n"
            "  func.func public @main(%%a: %s, %%n: tensor<i32>) -> "
            "tensor<f32> {\n"
            "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
            "    %%lo = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
            "    %%r:4 = stablehlo.while(%%i = %%c0, %%x = %%a, %%acc = %%lo, "
            "%%k = %%n) : tensor<i32>, %s, tensor<f32>, tensor<i32>\n"
            "     cond {\n%s    } do {\n"
            "      %%b = stablehlo.broadcast_in_dim %%acc, dims = [] : "
            "(tensor<f32>) -> %s\n"
            "      %%m = stablehlo.maximum %%x, %%b : %s\n"
            "      %%s = stablehlo.reduce(%%m init: %%lo) applies "
            "stablehlo.maximum across dimensions = [0] : (%s, tensor<f32>) "
            "-> tensor<f32>\n"
            "%s"
            "      stablehlo.return %%j, %%x, %%s, %%k : tensor<i32>, %s, "
            "tensor<f32>, tensor<i32>\n"
            "    }\n"
            "    return %%r#2 : tensor<f32>\n"
            "  }\n"
            "}\n",
            t, t, cmp, t, t, t, inc, t);
    const char *body = st->kind == K_SCALE  ? "stablehlo.negate %x"
                       : st->kind == K_ADD  ? "stablehlo.add %x, %w"
                       : st->kind == K_COPY ? "stablehlo.add %w, %db"
                                            : "stablehlo.subtract %w, %x";
    /* copy: y plus a zero the compiler cannot prove (0 times x's first
     * element), so the pass reads y, writes x and depends on x */
    char pre[512] = "";
    if (st->kind == K_COPY)
        snprintf(pre, sizeof pre,
                 "      %%x0 = stablehlo.slice %%x [0:1] : (%s) -> "
                 "tensor<1xf32>\n"
                 "      %%x1 = stablehlo.reshape %%x0 : (tensor<1xf32>) -> "
                 "tensor<f32>\n"
                 "      %%zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
                 "      %%d = stablehlo.multiply %%x1, %%zero : tensor<f32>\n"
                 "      %%db = stablehlo.broadcast_in_dim %%d, dims = [] : "
                 "(tensor<f32>) -> %s\n",
                 t, t);
    return sb_pjrt_compile(
        st->loop.p, &st->loop.exe, err,
        "module @sb_mem {\n"
        "  func.func public @main(%%a: %s, %%b: %s, %%n: tensor<i32>) -> "
        "%s {\n"
        "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %%r:4 = stablehlo.while(%%i = %%c0, %%x = %%a, %%w = %%b, "
        "%%k = %%n) : tensor<i32>, %s, %s, tensor<i32>\n"
        "     cond {\n%s    } do {\n"
        "%s"
        "      %%y = %s : %s\n"
        "%s"
        "      stablehlo.return %%j, %%y, %%w, %%k : tensor<i32>, %s, %s, "
        "tensor<i32>\n"
        "    }\n"
        "    return %%r#1 : %s\n"
        "  }\n"
        "}\n",
        t, t, t, t, t, cmp, pre, body, t, inc, t, t, t);
}

static int pmem_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    (void)ctx;
    pmem_state *st = NULL;
    int rc = sb_pjrt_state_new(sizeof *st, (void **)&st, err);
    if (rc)
        return rc;
    sb_pjrt *p = st->loop.p;
    st->kind = pt->impl->kind;
    st->n = elems_of(pt);
    st->plant = sb_p_bool(pt->params, "plant_error");
    st->x = malloc((size_t)st->n * sizeof(float));
    st->y = malloc((size_t)st->n * sizeof(float));
    if (!st->x || !st->y) {
        pmem_teardown(st);
        return sb_fail(err, SB_ENOMEM, "%s on pjrt: out of memory",
                       pt->bench->name);
    }
    uint64_t seed = 0x6d656dU + (uint64_t)st->n;
    for (int64_t i = 0; i < st->n; i++) {
        st->x[i] = (float)((int)(sb_rng_next(&seed) % 17u) - 8);
        st->y[i] = (float)((int)(sb_rng_next(&seed) % 17u) - 8);
    }
    const int64_t dims[1] = {st->n};
    if ((rc = sb_pjrt_upload(p, st->x, SB_PJRT_F32, dims, 1, &st->dx, err)) ||
        (st->kind != K_READ &&
         (rc = sb_pjrt_upload(p, st->y, SB_PJRT_F32, dims, 1, &st->dy, err))) ||
        (rc = pmem_program(st, err))) {
        pmem_teardown(st);
        return rc;
    }
    st->loop.args[0][0] = st->dx;
    st->loop.args[0][1] = st->dy; /* read: the count's place */
    st->loop.nargs = st->kind == K_READ ? 2 : 3;
    *state = st;
    return 0;
}

static int pmem_verify(void *state, sb_result *r)
{
    pmem_state *st = state;
    sb_err err = {0};
    const bool rd = st->kind == K_READ;
    const size_t n = rd ? 1 : (size_t)st->n;
    float *c = malloc(n * sizeof(float));
    int rc = SB_ENOMEM;
    if (!c)
        goto done;
    if ((rc = sb_pjrt_loop_fetch(&st->loop, 3, c, n * sizeof(float), &err)))
        goto done;
    if (st->plant)
        c[n / 2] += 1.0f;
    size_t wrong = 0;
    if (rd) {
        float mx = -INFINITY;
        for (int64_t i = 0; i < st->n; i++)
            mx = st->x[i] > mx ? st->x[i] : mx;
        wrong = c[0] != mx;
    } else {
        for (size_t i = 0; i < n; i++) {
            float want = st->kind == K_COPY    ? st->y[i]
                         : st->kind == K_SCALE ? -st->x[i]
                         : st->kind == K_ADD   ? st->x[i] + 3.0f * st->y[i]
                                               : st->y[i] - st->x[i];
            wrong += c[i] != want;
        }
    }
    if (wrong)
        sb_result_note(r,
                       "verification: %zu of %zu output elements after 3 "
                       "passes differ from the exact result",
                       wrong, n);
    r->valid = wrong == 0;
    rc = 0;
done:
    if (rc && rc != SB_ENOMEM)
        sb_result_note(r, "verification could not run: %s", err.msg);
    free(c);
    return rc;
}

static void pmem_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    (void)pt;
    const pmem_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    const sb_metric *g = sb_result_get(r, "GBps"),
                    *gb = sb_result_get(r, "GBps_best");
    double triad = sb_ceil_get(&ctx->ceil, "bw.triad");
    if (gb && triad > 0 && strcmp(sb_pjrt_platform(st->loop.p), "cpu") == 0)
        /* best against the CPU's best (at any size the run measured) */
        sb_result_metric(r, "pct_cpu_triad", 100.0 * gb->value * 1e9 / triad,
                         "%");
    /* against the device's main memory on its datasheet (data/hw) */
    const sb_hw_spec *hw;
    if (g && sb_pjrt_datasheet(st->loop.p, &hw) && hw->n_levels > 0) {
        const double bw = hw->level[hw->n_levels - 1].bw_Bps;
        if (bw > 0) {
            sb_result_metric(r, "pct_hbm", 100.0 * g->value * 1e9 / bw, "%");
            sb_result_note(r, "pct_hbm against %s's %s, %.0f GB/s", hw->name,
                           hw->level[hw->n_levels - 1].level, bw * 1e-9);
        }
    }
}

#define PMEM_IMPL(NAME, K, DESC)                                               \
    const sb_impl sb_impl_pjrt_memory_##NAME = {                               \
        .backend = "pjrt",                                                     \
        .desc = DESC,                                                          \
        .kind = K,                                                             \
        .params = pmem_params,                                                 \
        .quick = "size=64MiB",                                                 \
        .full = "size=4MiB..1GiB:x4",                                          \
        .check = pmem_check,                                                   \
        .footprint = pmem_footprint,                                           \
        .bytes = pmem_bytes,                                                   \
        .setup = pmem_setup,                                                   \
        .timer = &sb_pjrt_timer,                                               \
        .verify = pmem_verify,                                                 \
        .report = pmem_report,                                                 \
        .teardown = pmem_teardown,                                             \
    };

PMEM_IMPL(copy, K_COPY, "StableHLO loop x <- y + 0*x[0] (2 words)")
PMEM_IMPL(scale, K_SCALE, "StableHLO loop x <- -x (2 words)")
PMEM_IMPL(add, K_ADD, "StableHLO loop x <- x + y (3 words)")
PMEM_IMPL(triad, K_TRIAD, "StableHLO loop x <- y + s x, s = -1 (3 words)")
PMEM_IMPL(read, K_READ, "StableHLO loop acc <- max(max(x, acc)) (1 word)")
