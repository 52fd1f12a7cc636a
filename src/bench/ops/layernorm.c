/*
 * layernorm.c — ops.layernorm's CPU kernel, for its row of the ops table
 * (ops_table.def; layernorm.h says what it computes).
 *
 * One row at a time, in three passes over a row that stays in L1/L2: the
 * sum, the sum of squared deviations from the mean (two passes, not
 * E[x²] - mean², which cancels catastrophically for rows far from zero),
 * then the output. Plain C the compiler vectorises for the machine it
 * builds for (no intrinsics: the row's portable kernels, which every ISA
 * runs); the two sums run on 32 partial sums, which took the fp32 quick
 * point from 18-21 to 26-28 GB/s here (2-vCPU Zen 3, three interleaved
 * runs beside ops.rmsnorm). bf16 is widened on load and rounded to nearest
 * even on store. Rows go to threads as the other ops hand them out
 * (sb_ops_cpu_chunk).
 */
#include <math.h>
#include <stddef.h>

#include "bench/ops/layernorm.h"
#include "bench/ops/ops_cpu.h"
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
        const float r = 1.0f / sqrtf(ln_hsum(acc) / (float)d +                 \
                                     (float)SB_OPS_LAYERNORM_EPS);             \
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

static void ln_kernel(const sb_ops_shape *s, const sb_ops_bufs *io,
                      float *scratch)
{
    sb_layernorm_rows(io->x, io->g, io->b, io->y, s->tokens, s->d, s->bf16,
                      s->chunk);
}

/* One kernel for both dtypes (ln_row's). */
const sb_ops_kernels sb_ops_cpu_layernorm = {
    .portable = {ln_kernel, ln_kernel},
};

/* ---- its definition, through the ops table ------------------------------- */

static sb_ops_shape ln_shape(int64_t tokens, int64_t d, bool bf16)
{
    return (sb_ops_shape){
        .op = SB_OP_LAYERNORM, .tokens = tokens, .d = d, .bf16 = bf16};
}

double sb_layernorm_flops(int64_t tokens, int64_t d)
{
    const sb_ops_shape s = ln_shape(tokens, d, false);
    return sb_ops_flops(&s);
}

double sb_layernorm_bytes(int64_t tokens, int64_t d, bool bf16)
{
    const sb_ops_shape s = ln_shape(tokens, d, bf16);
    return sb_ops_bytes(&s);
}

int64_t sb_layernorm_verify(const void *x, const void *g, const void *b,
                            const void *y, int64_t tokens, int64_t d, bool bf16,
                            char *why, int why_len)
{
    const sb_ops_shape s = ln_shape(tokens, d, bf16);
    const sb_ops_bufs io = {x, g, b, NULL, NULL, (void *)y};
    return sb_ops_verify_layernorm(&s, &io, why, why_len);
}
