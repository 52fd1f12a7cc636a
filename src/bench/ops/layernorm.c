/*
 * layernorm.c — ops.layernorm on the CPU: its definition, kernel and
 * reference in one file (layernorm.h says what it computes).
 *
 * One row at a time, in three passes over a row that stays in L1/L2: the
 * sum, the sum of squared deviations from the mean (two passes, not
 * E[x²] - mean², which cancels catastrophically for rows far from zero),
 * then the output. Plain C the compiler vectorises for the machine it
 * builds for (no intrinsics); the two sums run on 32 partial sums, which
 * took the fp32 quick point from 18-21 to 26-28 GB/s here (2-vCPU Zen 3,
 * three interleaved runs beside ops.rmsnorm). bf16 is widened on load and
 * rounded to nearest even on store. Rows go to threads as the other ops
 * hand them out (sb_ops_cpu_chunk).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ops/layernorm.h"
#include "bench/ops/ops_cpu.h"
#include "solbench/bench.h"
#include "solbench/ops.h"
#include "solbench/util.h"

/* ---- the kernel ---------------------------------------------------------- */

/* Row sums on 32 partial sums (four 8-lane vectors with AVX2): one
 * accumulator would wait on the add latency (3-4 cycles) every vector. */
#define LN_LANES 32

static inline float ln_hsum(const float *acc)
{
    float s = 0.0f;
    for (int j = 0; j < LN_LANES; j++)
        s += acc[j];
    return s;
}

/* X(i) reads element i as fp32; the three passes over one row. */
#define LN_ROW(X, STORE)                                                       \
    do {                                                                       \
        float acc[LN_LANES] = {0};                                             \
        int64_t i = 0;                                                         \
        for (; i + LN_LANES <= d; i += LN_LANES)                               \
            for (int j = 0; j < LN_LANES; j++)                                 \
                acc[j] += X(i + j);                                            \
        for (; i < d; i++)                                                     \
            acc[0] += X(i);                                                    \
        const float mean = ln_hsum(acc) / (float)d;                            \
        for (int j = 0; j < LN_LANES; j++)                                     \
            acc[j] = 0.0f;                                                     \
        for (i = 0; i + LN_LANES <= d; i += LN_LANES)                          \
            for (int j = 0; j < LN_LANES; j++) {                               \
                float c = X(i + j) - mean;                                     \
                acc[j] += c * c;                                               \
            }                                                                  \
        for (; i < d; i++) {                                                   \
            float c = X(i) - mean;                                             \
            acc[0] += c * c;                                                   \
        }                                                                      \
        const float r =                                                        \
            1.0f / sqrtf(ln_hsum(acc) / (float)d + (float)SB_LAYERNORM_EPS);   \
        _Pragma("omp simd") for (i = 0; i < d; i++) STORE;                     \
    } while (0)

static void ln_row_f32(const float *restrict x, const float *restrict g,
                       const float *restrict b, float *restrict y, int64_t d)
{
#define X32(k) x[k]
    LN_ROW(X32, y[i] = (x[i] - mean) * r * g[i] + b[i]);
#undef X32
}

static void ln_row_bf16(const uint16_t *restrict x, const uint16_t *restrict g,
                        const uint16_t *restrict b, uint16_t *restrict y,
                        int64_t d)
{
#define X16(k) sb_bf16_to_f32(x[k])
    LN_ROW(X16, y[i] = sb_bf16_from_f32((sb_bf16_to_f32(x[i]) - mean) * r *
                                            sb_bf16_to_f32(g[i]) +
                                        sb_bf16_to_f32(b[i])));
#undef X16
}

static void ln_row(const void *x, const void *g, const void *b, void *y,
                   int64_t t, int64_t d, bool bf16)
{
    if (bf16)
        ln_row_bf16((const uint16_t *)x + t * d, g, b, (uint16_t *)y + t * d,
                    d);
    else
        ln_row_f32((const float *)x + t * d, g, b, (float *)y + t * d, d);
}

void sb_layernorm_rows(const void *x, const void *g, const void *b, void *y,
                       int64_t tokens, int64_t d, bool bf16, int64_t chunk)
{
    if (chunk > 0) {
#pragma omp parallel for schedule(dynamic, chunk)
        for (int64_t t = 0; t < tokens; t++)
            ln_row(x, g, b, y, t, d, bf16);
    } else {
#pragma omp parallel for schedule(static)
        for (int64_t t = 0; t < tokens; t++)
            ln_row(x, g, b, y, t, d, bf16);
    }
}

/* Per element: 1 add (sum), 3 (subtract, square, add) for the variance,
 * 4 (subtract, scale, multiply by g, add b) for the output; per row 3
 * (divide by d, add eps, the reciprocal square root). Bytes: x read and
 * y written once, g and b read once. */
double sb_layernorm_flops(int64_t tokens, int64_t d)
{
    return 8.0 * (double)tokens * (double)d + 3.0 * (double)tokens;
}

double sb_layernorm_bytes(int64_t tokens, int64_t d, bool bf16)
{
    return (bf16 ? 2.0 : 4.0) *
           (2.0 * (double)tokens * (double)d + 2.0 * (double)d);
}

/* ---- the reference
 * ----------------------------------------------------------- */

int64_t sb_layernorm_verify(const void *x, const void *g, const void *b,
                            const void *y, int64_t tokens, int64_t d, bool bf16,
                            char *why, int why_len)
{
    const double stol = bf16 ? 1.0 / 256.0 : 0.0;
    int64_t bad = 0, first = INT64_MAX;
    double first_got = 0, first_want = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < tokens; t++) {
        double s = 0.0, v = 0.0;
        for (int64_t i = 0; i < d; i++)
            s += sb_ops_elem(x, bf16, t * d + i);
        const double mean = s / (double)d;
        for (int64_t i = 0; i < d; i++) {
            double c = sb_ops_elem(x, bf16, t * d + i) - mean;
            v += c * c;
        }
        const double r = 1.0 / sqrt(v / (double)d + SB_LAYERNORM_EPS);
        for (int64_t i = 0; i < d; i++) {
            double n = (sb_ops_elem(x, bf16, t * d + i) - mean) * r *
                       sb_ops_elem(g, bf16, i);
            double bi = sb_ops_elem(b, bf16, i), ref = n + bi;
            double got = sb_ops_elem(y, bf16, t * d + i);
            /* fp32 arithmetic: 1e-4 of the output's terms, and the fp32
             * mean's rounding (relative 1e-5 of it: some 1000x what a row
             * of 1000 elements loses here, about 3x at d = 2^20) carried
             * through the scaling */
            double tol = 1e-4 * (fabs(n) + fabs(bi)) +
                         1e-5 * fabs(mean) * r * fabs(sb_ops_elem(g, bf16, i)) +
                         stol * fabs(ref) + 1e-6;
            if (!(fabs(got - ref) <= tol)) {
                bad++;
#pragma omp critical(sb_layernorm_first)
                if (t * d + i < first) {
                    first = t * d + i;
                    first_got = got;
                    first_want = ref;
                }
            }
        }
    }
    if (bad && why && why_len > 0)
        snprintf(why, (size_t)why_len,
                 "%lld wrong; first: layernorm out[token %lld][%lld] = "
                 "%.8g, reference %.8g",
                 (long long)bad, (long long)(first / d), (long long)(first % d),
                 first_got, first_want);
    return bad;
}

/* ---- the benchmark
 * ----------------------------------------------------------- */

typedef struct ln_state {
    int64_t tokens, d, chunk;
    bool bf16;
    void *x, *g, *b, *y;
} ln_state;

static const sb_param_def ln_params[] = {
    {"tokens", SB_P_INT, "256", 1, 1 << 24, NULL,
     "rows of the [tokens, d] matrix"},
    {"d", SB_P_INT, "4096", 1, 1 << 20, NULL, "row width"},
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16",
     "storage type (arithmetic is fp32)"},
    {"schedule", SB_P_STR, "auto", 0, 0, "auto|static|dynamic",
     "rows to threads: one block each (static, as first touched) or "
     "chunks of up to 128 (dynamic); auto: dynamic on one NUMA node"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static bool ln_bf16(const sb_params *p)
{
    return strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
}

static double ln_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    const sb_params *p = pt->params;
    (void)ctx;
    return sb_layernorm_bytes(sb_p_int(p, "tokens"), sb_p_int(p, "d"),
                              ln_bf16(p));
}

static double ln_flops(const sb_point *pt)
{
    const sb_params *p = pt->params;
    return sb_layernorm_flops(sb_p_int(p, "tokens"), sb_p_int(p, "d"));
}

static double ln_bytes(const sb_point *pt)
{
    const sb_params *p = pt->params;
    return sb_layernorm_bytes(sb_p_int(p, "tokens"), sb_p_int(p, "d"),
                              ln_bf16(p));
}

static void ln_teardown(void *state)
{
    ln_state *st = state;
    if (!st)
        return;
    sb_free_aligned(st->x);
    sb_free_aligned(st->g);
    sb_free_aligned(st->b);
    sb_free_aligned(st->y);
    free(st);
}

static int ln_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                    sb_err *err)
{
    const sb_params *p = pt->params;
    (void)ctx;
    ln_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "ops.layernorm: out of memory");
    st->tokens = sb_p_int(p, "tokens");
    st->d = sb_p_int(p, "d");
    st->bf16 = ln_bf16(p);
    const char *sched = sb_p_str(p, "schedule");
    st->chunk =
        strcmp(sched, "static") == 0
            ? 0
            : sb_ops_cpu_chunk(st->tokens, strcmp(sched, "dynamic") == 0);
    const size_t S = st->bf16 ? 2 : 4, T = (size_t)st->tokens,
                 d = (size_t)st->d;
    st->x = sb_alloc_aligned(S * T * d);
    st->y = sb_alloc_aligned(S * T * d);
    st->g = sb_alloc_aligned(S * d);
    st->b = sb_alloc_aligned(S * d);
    if (!st->x || !st->y || !st->g || !st->b) {
        ln_teardown(st);
        return sb_fail(err, SB_ENOMEM,
                       "could not allocate the buffers of this point");
    }
    /* x uniform in [-2, 2), g in [0.5, 1.5), b in [-0.5, 0.5); the output
     * filled too, so its pages are placed before the timed runs. */
    sb_ops_cpu_fill(st->x, st->tokens, st->d, st->bf16, 21, -2.0, 2.0);
    sb_ops_cpu_fill(st->y, st->tokens, st->d, st->bf16, 22, -1.0, 1.0);
    sb_ops_cpu_fill(st->g, 1, st->d, st->bf16, 23, 0.5, 1.5);
    sb_ops_cpu_fill(st->b, 1, st->d, st->bf16, 24, -0.5, 0.5);
    *state = st;
    return 0;
}

static void ln_run(void *state, uint64_t iters)
{
    ln_state *st = state;
    for (uint64_t it = 0; it < iters; it++) {
        sb_layernorm_rows(st->x, st->g, st->b, st->y, st->tokens, st->d,
                          st->bf16, st->chunk);
        SB_KEEP(st->y);
    }
}

static int ln_verify(void *state, sb_result *r)
{
    ln_state *st = state;
    char why[320] = "";
    int64_t bad = sb_layernorm_verify(st->x, st->g, st->b, st->y, st->tokens,
                                      st->d, st->bf16, why, sizeof why);
    r->valid = bad == 0;
    if (bad)
        sb_result_note(r, "verification failed: %s", why);
    return 0;
}

static const sb_impl ops_layernorm_cpu = {
    .backend = "cpu",
    .setup = ln_setup,
    .run = ln_run,
    .verify = ln_verify,
    .teardown = ln_teardown,
};

const sb_bench sb_bench_ops_layernorm = {
    .name = "ops.layernorm",
    .area = "ops",
    .desc = "LayerNorm over rows: (x - mean) / sqrt(var + eps) * g + b",
    .params = ln_params,
    .quick = "tokens=256 d=4096 dtype=fp32",
    .full = "tokens=16384 d=4096 dtype=fp32,bf16",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .roof = SB_ROOF_FP32,
    .footprint = ln_footprint,
    .flops = ln_flops,
    .bytes = ln_bytes,
    .impls = (const sb_impl *const[]){&ops_layernorm_cpu, NULL},
};
