/*
 * ops_cpu.c — the elementwise ops' kernels on the CPU (ops.rmsnorm,
 * ops.swiglu, ops.rope, ops.softmax; ops.layernorm's are layernorm.c's)
 * in fp32 and bf16 storage: OpenMP over rows, the inner loops written so
 * the compiler vectorises them (an exp that vectorises, explicit simd
 * reductions), each row read from memory once and written once, in the ISA
 * variants this CPU runs (portable, AVX2, AVX-512); each op's kernels
 * gathered for its row of the ops table (sb_ops_cpu_<op>), and the row's
 * kernel run for a shape (sb_ops_cpu_exec). The table and the benchmarks
 * (parameters, state, hooks): ops_bench.c, from ops_table.def; references:
 * src/def/ops.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>
#include <pthread.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#include <stdint.h>

#include "backend/cpu/vexp.h"
#include "bench/ops/ops_cpu.h"
#include "solbench/bench.h"
#include "solbench/util.h"

/* With AVX2 and FMA the intrinsic kernels run (SB__DEFINE_OPS_AVX2
 * and the softmax functions below); otherwise the portable ones. */
#if defined(__AVX2__) && defined(__FMA__)
#define SB__OPS_AVX2 1
#endif

/* With AVX-512F and AVX-512BW as well, the AVX-512 kernels (the section
 * "AVX-512" below) replace the AVX2 ones, which keep their shared helpers;
 * with AVX512_BF16 too, their bf16 stores convert with vcvtne2ps2bf16
 * (SB__OPS_AVX512_BF16). SB_OPS_EMULATE_AVX512 selects them on any AVX2
 * machine for unit.test_ops_avx512emu, which force-includes
 * tests/emu/avx512_emu.h (an emulation of the intrinsics they use) and
 * defines SB_OPS_EMULATE_NO_BF16 for the variant without BF16. */
#if defined(SB_OPS_EMULATE_AVX512)
#if defined(SB__OPS_AVX2)
#define SB__OPS_AVX512 1
#if !defined(SB_OPS_EMULATE_NO_BF16)
#define SB__OPS_AVX512_BF16 1
#endif
#endif
#elif defined(SB__OPS_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__)
#define SB__OPS_AVX512 1
#if defined(__AVX512BF16__)
#define SB__OPS_AVX512_BF16 1
#endif
#endif

/* e^x in fp32 without a library call, so loops around it vectorise:
 * x = n·ln2 + r with n = round(x·log2e) (the 1.5·2^23 shifter), |r| <=
 * ln2/2, e^r by its degree-6 Taylor polynomial (truncation error
 * |r|^7/7! < 1.2e-7 relative), 2^n built in the exponent bits. One FMA
 * reduces x (ln2 rounded to fp32 adds at most 2.4e-7 relative at
 * |n| = 126): ~3e-7 relative error overall, far inside the verifier's
 * 1e-5. Inputs outside [lo, hi] = [-88, 88] are clamped: below -87.68, n
 * is -127, the exponent field 0 and the result exactly 0 (e^-inf is 0;
 * what only a denormal could hold flushes to 0); e^88 is near FLT_MAX.
 * The bounds come from SB__EXP_BOUNDS, not literals: with literal bounds
 * GCC splits the loop into below/inside/above paths and either keeps
 * branches (no vectorisation) or computes the division once per path;
 * opaque bounds become one vmaxps and one vminps. */
#define SB__EXP_BOUNDS(lo, hi)                                                 \
    float lo = -88.0f, hi = 88.0f;                                             \
    __asm__("" : "+m"(lo), "+m"(hi))

#define SB__LOG2E 1.44269504088896341f

#ifndef SB__OPS_AVX512
static inline float sb__expf(float x, float lo, float hi)
{
    x = x < lo ? lo : x;
    x = x > hi ? hi : x;
    float tn = x * SB__LOG2E + 12582912.0f; /* low bits: n */
    float n = tn - 12582912.0f;
    float r = x - n * 0.693147180559945309f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    /* 2^n from the bits of the shifted sum: no float-to-int conversion,
     * which a NaN would make undefined (a NaN stays NaN through p). */
    uint32_t e;
    memcpy(&e, &tn, sizeof e);
    e = (e + 127u) << 23;
    float sc;
    memcpy(&sc, &e, sizeof sc);
    return p * sc;
}
#endif

/* Storage access: the same kernel text serves fp32 and bf16 rows. */
#define SB__LD_F32(a, i) ((a)[i])
#define SB__ST_F32(a, i, v) ((a)[i] = (v))
#define SB__LD_BF16(a, i) sb_bf16_to_f32((a)[i])
#define SB__ST_BF16(a, i, v) ((a)[i] = sb_bf16_from_f32(v))

/* The row reductions (rmsnorm, softmax) read a row from memory in their
 * first pass and work on it from cache after that; alone, that leaves
 * the memory idle while a thread computes. So the compute passes run in
 * chunks of SB__CHUNK elements, and before each chunk the same span of the
 * next row (and of its output, which will be written) is prefetched. */
#define SB__CHUNK 256
#ifndef SB__OPS_AVX2
static inline void sb__prefetch_span(const void *in, void *out, size_t bytes)
{
    const char *a = in;
    char *b = out;
    for (size_t o = 0; o < bytes; o += 64) {
        __builtin_prefetch(a + o, 0, 3);
        __builtin_prefetch(b + o, 1, 3);
    }
}
#endif

#ifndef SB__OPS_AVX2
/* An output row far larger in total than the caches is better written
 * around them: a normal store first reads the line it writes (write
 * allocate), one more memory transfer per line. With `nt`, a row is
 * computed into a per-thread buffer that stays in L1/L2 and leaves with
 * 32-byte streaming stores, fenced so the row is visible to every thread
 * when the parallel loop ends. */
static void sb__stream_row(void *dst, const void *src, size_t bytes)
{
#if defined(__AVX__)
    if (((uintptr_t)dst & 31) == 0) {
        size_t i = 0;
        for (; i + 32 <= bytes; i += 32)
            _mm256_stream_si256(
                (__m256i *)((char *)dst + i),
                _mm256_loadu_si256((const __m256i *)((const char *)src + i)));
        if (i < bytes)
            memcpy((char *)dst + i, (const char *)src + i, bytes - i);
        _mm_sfence();
        return;
    }
#endif
    memcpy(dst, src, bytes);
}
#endif

/* Per-thread scratch: the softmax exponentials when the op has them, then
 * (portable kernels with `nt` only) the row buffer, 64-byte aligned. */
static size_t sb__scratch_stride(const sb_ops_shape *s, size_t *row_off)
{
    size_t e =
        sb_ops_row(s->op)->cpu->row_scratch ? sizeof(float) * (size_t)s->d : 0;
    e = (e + 63) / 64 * 64;
#ifdef SB__OPS_AVX2
    size_t row = 0; /* the intrinsic kernels stream rows straight out */
#else
    size_t row = s->nt ? (s->bf16 ? 2u : 4u) * (size_t)s->d : 0;
#endif
    if (row_off)
        *row_off = e;
    return (e + row + 63) / 64 * 64;
}

#define SB__ROWBUF(TY, s, scratch)                                             \
    ((s)->nt                                                                   \
         ? (TY *)((char *)(scratch) +                                          \
                  sb__scratch_stride(s, NULL) * (size_t)omp_get_thread_num() + \
                  sb__row_off)                                                 \
         : NULL)

#define SB__DEFINE_OPS(SUF, TY, LD, ST)                                          \
    static void sb__rmsnorm_##SUF(const sb_ops_shape *s,                         \
                                  const sb_ops_bufs *io, float *scratch)         \
    {                                                                            \
        const TY *x = io->x, *g = io->g;                                         \
        TY *y = io->y;                                                           \
        const int64_t T = s->tokens, d = s->d;                                   \
        size_t sb__row_off;                                                      \
        sb__scratch_stride(s, &sb__row_off);                                     \
        _Pragma("omp parallel for schedule(runtime)") for (int64_t t = 0;        \
                                                           t < T; t++)           \
        {                                                                        \
            const TY *xr = x + t * d;                                            \
            TY *rowbuf = SB__ROWBUF(TY, s, scratch);                             \
            TY *yr = rowbuf ? rowbuf : y + t * d;                                \
            /* 32 partial sums (four vectors): one accumulator would make        \
             * the add latency, not memory, the limit. */                        \
            float acc[32], ss = 0.0f;                                            \
            int64_t i0 = 0;                                                      \
            for (int l = 0; l < 32; l++)                                         \
                acc[l] = 0.0f;                                                   \
            for (; i0 + 32 <= d; i0 += 32)                                       \
                _Pragma("omp simd") for (int l = 0; l < 32; l++)                 \
                {                                                                \
                    float v = LD(xr, i0 + l);                                    \
                    acc[l] += v * v;                                             \
                }                                                                \
            for (; i0 < d; i0++) {                                               \
                float v = LD(xr, i0);                                            \
                ss += v * v;                                                     \
            }                                                                    \
            for (int l = 0; l < 32; l++)                                         \
                ss += acc[l];                                                    \
            float rs = 1.0f / sqrtf(ss / (float)d + (float)SB_OPS_EPS);          \
            for (int64_t c0 = 0; c0 < d; c0 += SB__CHUNK) {                      \
                const int64_t c1 = c0 + SB__CHUNK < d ? c0 + SB__CHUNK : d;      \
                if (t + 1 < T)                                                   \
                    sb__prefetch_span(xr + d + c0, y + (t + 1) * d + c0,         \
                                      sizeof(TY) * (size_t)(c1 - c0));           \
                _Pragma("omp simd") for (int64_t i = c0; i < c1; i++)            \
                    ST(yr, i, LD(xr, i) * rs * LD(g, i));                        \
            }                                                                    \
            if (rowbuf)                                                          \
                sb__stream_row(y + t * d, rowbuf, sizeof(TY) * (size_t)d);       \
        }                                                                        \
    }                                                                            \
    static void sb__swiglu_##SUF(const sb_ops_shape *s, const sb_ops_bufs *io,   \
                                 float *scratch)                                 \
    {                                                                            \
        const TY *x = io->x;                                                     \
        TY *y = io->y;                                                           \
        const int64_t T = s->tokens, d = s->d;                                   \
        size_t sb__row_off;                                                      \
        sb__scratch_stride(s, &sb__row_off);                                     \
        SB__EXP_BOUNDS(lo, hi);                                                  \
        _Pragma("omp parallel for schedule(runtime) firstprivate(lo, hi)") for ( \
            int64_t t = 0; t < T; t++)                                           \
        {                                                                        \
            const TY *a = x + 2 * t * d, *b = a + d;                             \
            TY *rowbuf = SB__ROWBUF(TY, s, scratch);                             \
            TY *yr = rowbuf ? rowbuf : y + t * d;                                \
            _Pragma("omp simd") for (int64_t i = 0; i < d; i++)                  \
            {                                                                    \
                float av = LD(a, i);                                             \
                ST(yr, i, av / (1.0f + sb__expf(-av, lo, hi)) * LD(b, i));       \
            }                                                                    \
            if (rowbuf)                                                          \
                sb__stream_row(y + t * d, rowbuf, sizeof(TY) * (size_t)d);       \
        }                                                                        \
    }                                                                            \
    static void sb__rope_##SUF(const sb_ops_shape *s, const sb_ops_bufs *io,     \
                               float *scratch)                                   \
    {                                                                            \
        const TY *x = io->x;                                                     \
        const float *ct = io->cos_t, *st = io->sin_t;                            \
        TY *y = io->y;                                                           \
        const int64_t T = s->tokens, d = s->d;                                   \
        const int hd = s->head_dim, h = hd / 2;                                  \
        size_t sb__row_off;                                                      \
        sb__scratch_stride(s, &sb__row_off);                                     \
        _Pragma("omp parallel for schedule(runtime)") for (int64_t t = 0;        \
                                                           t < T; t++)           \
        {                                                                        \
            const float *c = ct + t * h, *sn = st + t * h;                       \
            TY *rowbuf = SB__ROWBUF(TY, s, scratch);                             \
            TY *yrow = rowbuf ? rowbuf : y + t * d;                              \
            for (int64_t hb = 0; hb < d; hb += hd) {                             \
                const TY *lo = x + t * d + hb, *hi = lo + h;                     \
                TY *ylo = yrow + hb, *yhi = ylo + h;                             \
                _Pragma("omp simd") for (int i = 0; i < h; i++)                  \
                {                                                                \
                    float l = LD(lo, i), u = LD(hi, i);                          \
                    ST(ylo, i, l *c[i] - u * sn[i]);                             \
                    ST(yhi, i, u *c[i] + l * sn[i]);                             \
                }                                                                \
            }                                                                    \
            if (rowbuf)                                                          \
                sb__stream_row(y + t * d, rowbuf, sizeof(TY) * (size_t)d);       \
        }                                                                        \
    }                                                                            \
    static void sb__softmax_##SUF(const sb_ops_shape *s,                         \
                                  const sb_ops_bufs *io, float *scratch)         \
    {                                                                            \
        const TY *x = io->x;                                                     \
        TY *y = io->y;                                                           \
        const int64_t T = s->tokens, d = s->d;                                   \
        size_t sb__row_off;                                                      \
        const size_t stride = sb__scratch_stride(s, &sb__row_off);               \
        SB__EXP_BOUNDS(lo, hi);                                                  \
        _Pragma("omp parallel firstprivate(lo, hi)")                             \
        {                                                                        \
            float *e = (float *)((char *)scratch +                               \
                                 stride * (size_t)omp_get_thread_num());         \
            TY *rowbuf = SB__ROWBUF(TY, s, scratch);                             \
            _Pragma("omp for schedule(runtime)") for (int64_t t = 0; t < T;      \
                                                      t++)                       \
            {                                                                    \
                const TY *xr = x + t * d;                                        \
                TY *yr = rowbuf ? rowbuf : y + t * d;                            \
                /* Eight running maxima, one per lane: a float max is no         \
                 * reduction a compiler may reorder on its own (NaN), but        \
                 * eight independent ones vectorise as they stand. */            \
                float m8[8], acc[32], mx = -INFINITY, sum = 0.0f;                \
                int64_t i0 = 0;                                                  \
                for (int l = 0; l < 8; l++)                                      \
                    m8[l] = -INFINITY;                                           \
                for (int l = 0; l < 32; l++)                                     \
                    acc[l] = 0.0f; /* 32 partial sums, as in rmsnorm */          \
                for (; i0 + 8 <= d; i0 += 8)                                     \
                    _Pragma("omp simd") for (int l = 0; l < 8; l++)              \
                    {                                                            \
                        float v = LD(xr, i0 + l);                                \
                        m8[l] = v > m8[l] ? v : m8[l];                           \
                    }                                                            \
                for (; i0 < d; i0++) {                                           \
                    float v = LD(xr, i0);                                        \
                    mx = v > mx ? v : mx;                                        \
                }                                                                \
                for (int l = 0; l < 8; l++)                                      \
                    mx = m8[l] > mx ? m8[l] : mx;                                \
                for (int64_t c0 = 0; c0 < d; c0 += SB__CHUNK) {                  \
                    const int64_t c1 =                                           \
                        c0 + SB__CHUNK < d ? c0 + SB__CHUNK : d;                 \
                    if (t + 1 < T)                                               \
                        sb__prefetch_span(xr + d + c0, y + (t + 1) * d + c0,     \
                                          sizeof(TY) * (size_t)(c1 - c0));       \
                    int64_t i = c0;                                              \
                    for (; i + 32 <= c1; i += 32)                                \
                        _Pragma("omp simd") for (int l = 0; l < 32; l++)         \
                        {                                                        \
                            float ev = sb__expf(LD(xr, i + l) - mx, lo, hi);     \
                            e[i + l] = ev;                                       \
                            acc[l] += ev;                                        \
                        }                                                        \
                    for (; i < c1; i++) {                                        \
                        e[i] = sb__expf(LD(xr, i) - mx, lo, hi);                 \
                        sum += e[i];                                             \
                    }                                                            \
                }                                                                \
                for (int l = 0; l < 32; l++)                                     \
                    sum += acc[l];                                               \
                float inv = 1.0f / sum;                                          \
                _Pragma("omp simd") for (int64_t i = 0; i < d; i++)              \
                    ST(yr, i, e[i] * inv);                                       \
                if (rowbuf)                                                      \
                    sb__stream_row(y + t * d, rowbuf, sizeof(TY) * (size_t)d);   \
            }                                                                    \
        }                                                                        \
    }

#ifndef SB__OPS_AVX2
/* Without AVX2 and FMA these portable kernels run (the AVX2 ones below
 * replace them otherwise; unit.test_ops_portable builds and checks them). */
SB__DEFINE_OPS(f32, float, SB__LD_F32, SB__ST_F32)
SB__DEFINE_OPS(bf16, uint16_t, SB__LD_BF16, SB__ST_BF16)
#endif

/* The AVX2 kernels, then the AVX-512 ones that replace them where the
 * CPU has AVX-512F and BW: one translation unit with the portable ones. */
#include "bench/ops/ops_avx2.inc"
#include "bench/ops/ops_avx512.inc"

const char *sb_ops_cpu_isa(void)
{
#if defined(SB__OPS_AVX512_BF16)
    return "avx512+bf16";
#elif defined(SB__OPS_AVX512)
    return "avx512";
#elif defined(SB__OPS_AVX2)
    return "avx2";
#else
    return "portable";
#endif
}

size_t sb_ops_cpu_scratch(const sb_ops_shape *s)
{
    return sb__scratch_stride(s, NULL) * (size_t)omp_get_max_threads();
}

/* ---- each op's kernels (the ops table's .cpu) ---------------------------- */

/* A kernel where this build's ISA has it, else NULL. */
#if defined(SB__OPS_AVX512)
#define SB__PORTABLE(f) NULL
#define SB__AVX2(f) NULL
#define SB__AVX512(f) f
#elif defined(SB__OPS_AVX2)
#define SB__PORTABLE(f) NULL
#define SB__AVX2(f) f
#define SB__AVX512(f) NULL
#else
#define SB__PORTABLE(f) f
#define SB__AVX2(f) NULL
#define SB__AVX512(f) NULL
#endif

#ifdef SB__OPS_AVX2
/* The bf16 SwiGLU's silu table, made before the timed runs. */
static void sb__swiglu_prepare(const sb_ops_shape *s)
{
    if (s->bf16)
        sb__silu_ready();
}
#endif

const sb_ops_kernels sb_ops_cpu_rmsnorm = {
    .portable = {SB__PORTABLE(sb__rmsnorm_f32), SB__PORTABLE(sb__rmsnorm_bf16)},
    .avx2 = {SB__AVX2(sb__rmsnorm_avx2_F32), SB__AVX2(sb__rmsnorm_avx2_BF16)},
    .avx512 = {SB__AVX512(sb__rmsnorm_512_F32),
               SB__AVX512(sb__rmsnorm_512_BF16)},
};

const sb_ops_kernels sb_ops_cpu_swiglu = {
    .portable = {SB__PORTABLE(sb__swiglu_f32), SB__PORTABLE(sb__swiglu_bf16)},
    .avx2 = {SB__AVX2(sb__swiglu_avx2_F32), SB__AVX2(sb__swiglu_lut_bf16)},
    .avx512 = {SB__AVX512(sb__swiglu_512_F32), SB__AVX512(sb__swiglu_512_BF16)},
#ifdef SB__OPS_AVX2
    .prepare = sb__swiglu_prepare,
#endif
};

const sb_ops_kernels sb_ops_cpu_rope = {
    .portable = {SB__PORTABLE(sb__rope_f32), SB__PORTABLE(sb__rope_bf16)},
    .avx2 = {SB__AVX2(sb__rope_avx2_F32), SB__AVX2(sb__rope_avx2_BF16)},
    .avx512 = {SB__AVX512(sb__rope_512_F32), SB__AVX512(sb__rope_512_BF16)},
};

const sb_ops_kernels sb_ops_cpu_softmax = {
    .portable = {SB__PORTABLE(sb__softmax_f32), SB__PORTABLE(sb__softmax_bf16)},
    .avx2 = {SB__AVX2(sb__softmax_avx2_F32), SB__AVX2(sb__softmax_avx2_BF16)},
    .avx512 = {SB__AVX512(sb__softmax_512_F32),
               SB__AVX512(sb__softmax_512_BF16)},
    .row_scratch = true,
};

/* ---- running a row's kernels --------------------------------------------- */

void sb_ops_cpu_exec(const sb_ops_shape *s, const sb_ops_bufs *io,
                     float *scratch)
{
    const sb_ops_kernels *k = sb_ops_row(s->op)->cpu;
    /* the widest kernel this build has for the dtype (the portable one
     * always) */
    const int b = s->bf16;
    const sb_ops_kernel run = k->avx512[b] ? k->avx512[b]
                              : k->avx2[b] ? k->avx2[b]
                                           : k->portable[b];
    /* every kernel's row loop is schedule(runtime): this one */
    if (s->chunk > 0)
        omp_set_schedule(omp_sched_dynamic, (int)s->chunk);
    else
        omp_set_schedule(omp_sched_static, 0);
    run(s, io, scratch);
}

void sb_ops_cpu_run(const sb_ops_shape *s, const void *x, const void *g,
                    const float *cos_t, const float *sin_t, void *y,
                    float *scratch)
{
    const sb_ops_bufs io = {x, g, NULL, cos_t, sin_t, y};
    sb_ops_cpu_exec(s, &io, scratch);
}

void sb_ops_cpu_prepare(const sb_ops_shape *s)
{
    const sb_ops_kernels *k = sb_ops_row(s->op)->cpu;
    if (k->prepare)
        k->prepare(s);
}
