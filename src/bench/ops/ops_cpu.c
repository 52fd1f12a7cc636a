/*
 * ops_cpu.c — the elementwise ops on the CPU (ops.rmsnorm, ops.swiglu,
 * ops.rope, ops.softmax) in fp32 and bf16 storage: OpenMP over rows, the
 * inner loops written so the compiler vectorises them (an exp that
 * vectorises, explicit simd reductions), each row read from memory once
 * and written once. Definitions, accounting and verification: ops_def.c.
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
    size_t e = s->op == SB_OP_SOFTMAX ? sizeof(float) * (size_t)s->d : 0;
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
    static void sb__rmsnorm_##SUF(const sb_ops_shape *s, const TY *x,            \
                                  const TY *g, TY *y, float *scratch)            \
    {                                                                            \
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
    static void sb__swiglu_##SUF(const sb_ops_shape *s, const TY *x, TY *y,      \
                                 float *scratch)                                 \
    {                                                                            \
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
    static void sb__rope_##SUF(const sb_ops_shape *s, const TY *x,               \
                               const float *ct, const float *st, TY *y,          \
                               float *scratch)                                   \
    {                                                                            \
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
    static void sb__softmax_##SUF(const sb_ops_shape *s, const TY *x, TY *y,     \
                                  float *scratch)                                \
    {                                                                            \
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

/* ---- softmax with AVX2 and FMA
 * ------------------------------------------------------ The generic softmax
 * above keeps its 32 partial sums in an array GCC leaves on the stack next to
 * the exponential's constants, so every step waits on a store-to-load round
 * trip. This version keeps everything in registers: two running maxima, four
 * exponentials of 8 per step into two sums, and writes the normalised row
 * straight to its destination (streaming stores with `nt`), one pass fewer than
 * a row buffer. The exponential is vexp.h's sb_vexp2_fused (its degree-5 fit of
 * 2^f, with the two-FMA range reduction), 8 lanes at a time. */
#ifdef SB__OPS_AVX2

/* Both softmax kernels take t = x·log2e + R with the row's constant R
 * an integer near -max·log2e (softmax is the same whatever constant it
 * takes from x, and an integer one is exact: the rounding of max·log2e
 * once made a row of equal values of 1e30 garbage), folded into the
 * exponential's rounding shifter (sb_vexp2_fused). R must be below 2^22
 * for that: from a max of 2^20 on (or an infinite or NaN one, whose row is
 * NaN), the difference x - max is taken first and R = 0
 * (test_softmax_specials). sb__row_r gives R and whether to take the
 * difference; sb__exp2_tail is the same t for a row's scalar tail, and
 * 2^t: the tail must carry the vector part's shift of t (which the
 * normalisation cancels only if every element has it; e^(x - max) there
 * could be up to 0.5 % off at logits of 1e5). */
static inline float sb__row_r(float mx, bool *diff)
{
    *diff = !(fabsf(mx) < 0x1p20f);
    return *diff ? 0.0f : nearbyintf(-mx * SB_VEXP_LOG2E);
}
#ifndef SB__OPS_AVX512 /* (the AVX-512 kernels replace these) */
static inline float sb__exp2_tail(float x, float mx, float r, bool diff)
{
    return exp2f(diff ? (x - mx) * SB_VEXP_LOG2E : fmaf(x, SB_VEXP_LOG2E, r));
}

/* bf16 storage, 16 elements at a time. Natural order: 8 bf16 widened
 * to 8 fp32 lanes in order. Lane order ("p" variants): one 32-byte load
 * split by unpacking each 16-bit value into the high half of a 32-bit
 * lane, which is its fp32 bit pattern already: one instruction per 8
 * elements instead of three, with the elements in the order AVX2 unpacks
 * them ({0-3, 8-11} and {4-7, 12-15}); the matching store packs them back
 * into natural order. Ops whose 16 elements meet no fp32 data laid out
 * in natural order (rmsnorm with its bf16 weights, swiglu, softmax and its
 * own scratch) use those; rope, with fp32 tables, the natural ones.
 * Rounding is sb_bf16_from_f32's (to nearest, ties to even: add 0x7fff
 * and the kept half's lowest bit, keep the high half), with no test for
 * NaN: the carry of that add can only reach the kept half from low bits
 * that are not all zero, and every NaN these kernels make has them all
 * zero. Their NaNs come from a bf16 input (its bits in the high half),
 * from the default NaN of an invalid operation (0xffc00000), or from the
 * silu table, which holds each NaN code's own fp32 value; x86 arithmetic
 * passes a NaN operand's payload on unchanged but for the quiet bit, which
 * is in the high half. So a NaN stays a quiet NaN, an infinity stays
 * infinite and a finite value past the largest bf16 rounds to infinity,
 * as sb_bf16_from_f32 has it (unit.test_ops, test_bf16_specials, every
 * NaN code through every bf16 op). It replaces a test per 16 elements
 * (two compares, an or, a movemask and a branch): with it gone and the
 * swiglu's lookups in lane order, the bf16 swiglu ran a median 9 % faster
 * and the bf16 rmsnorm (with its four sums) ~45 % (docs/PRIMITIVES.md). */
static inline __m256 sb__ld8_bf16(const uint16_t *p)
{
    __m128i h = _mm_loadu_si128((const __m128i *)p);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* The rounded bf16 of each lane, in the low 16 bits of the lane. */
static inline __m256i sb__bf16_bits8(__m256 v)
{
    __m256i u = _mm256_castps_si256(v);
    __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r =
        _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    return _mm256_srli_epi32(r, 16);
}

static inline void sb__ld16_f32(const float *p, __m256 *a, __m256 *b)
{
    *a = _mm256_loadu_ps(p);
    *b = _mm256_loadu_ps(p + 8);
}
static inline void sb__ld16_bf16(const uint16_t *p, __m256 *a, __m256 *b)
{
    *a = sb__ld8_bf16(p);
    *b = sb__ld8_bf16(p + 8);
}
/* 16 bf16 codes already loaded, widened in lane order. */
static inline void sb__unpack16_bf16p(__m256i v, __m256 *a, __m256 *b)
{
    const __m256i z = _mm256_setzero_si256();
    *a = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, v));
    *b = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, v));
}
static inline void sb__ld16_bf16p(const uint16_t *p, __m256 *a, __m256 *b)
{
    sb__unpack16_bf16p(_mm256_loadu_si256((const __m256i *)p), a, b);
}

/* Stores, streaming when nt (dst 32-byte aligned then). */
static inline void sb__st32b(void *p, __m256i v, bool nt)
{
    if (nt)
        _mm256_stream_si256((__m256i *)p, v);
    else
        _mm256_storeu_si256((__m256i *)p, v);
}
static inline void sb__st16_f32(float *p, __m256 a, __m256 b, bool nt)
{
    sb__st32b(p, _mm256_castps_si256(a), nt);
    sb__st32b(p + 8, _mm256_castps_si256(b), nt);
}
static inline void sb__st16_bf16(uint16_t *p, __m256 a, __m256 b, bool nt)
{
    /* packus interleaves 128-bit halves; the permute restores the order */
    __m256i v = _mm256_packus_epi32(sb__bf16_bits8(a), sb__bf16_bits8(b));
    sb__st32b(p, _mm256_permute4x64_epi64(v, 0xd8), nt);
}
static inline void sb__st16_bf16p(uint16_t *p, __m256 a, __m256 b, bool nt)
{
    sb__st32b(p, _mm256_packus_epi32(sb__bf16_bits8(a), sb__bf16_bits8(b)), nt);
}

/* One step of both softmax kernels' exponential pass, 8 values: x - mx
 * first with `diff` (sb__row_r), raised to vlo with `clamp` (a NaN passes:
 * vmaxps returns its second operand when one is NaN), then 2^(x·log2e +
 * R) to fp32 accuracy, or to the bf16 kernels' (sb_vexp2_bf16) with
 * `bf16`. All three are constants at each call. */
static inline __attribute__((always_inline)) __m256
sb__softmax_exp8(__m256 x, __m256 vr, __m256 vlo, __m256 vmx, bool clamp,
                 bool diff, bool bf16)
{
    if (diff)
        x = _mm256_sub_ps(x, vmx);
    if (clamp)
        x = _mm256_max_ps(vlo, x);
    return bf16 ? sb_vexp2_bf16(x, vr) : sb_vexp2_fused(x, vr);
}

/* The fp32 softmax's exponential pass over the first d16 elements of a
 * row: e = 2^(x·log2e + R) (sb_vexp2_fused, vr from sb_vexp2_fused_vr)
 * into the scratch row, each x first raised to vlo (where 2^t is exactly
 * 0; the row's max is known, so t <= 1/2 and no upper clamp), or with
 * `diff` (a max of 2^20 or more, where R would not be exact: R = 0 then)
 * 2^((x - mx)·log2e); the next row's input (and output when stored
 * through the caches) prefetched at the pace this one is read; returns
 * the 8 lanes of the sum. */
static inline __attribute__((always_inline)) __m256
sb__softmax_exp_f32(const float *xr, float *e, int64_t d16, __m256 vr,
                    __m256 vlo, __m256 vmx, bool diff, const char *px, char *py,
                    bool pf, bool pfy)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, v[4];
    int64_t i = 0;
    for (; i + 32 <= d16; i += 32) {
        if (pf) {
            __builtin_prefetch(px + 4 * i, 0, 3);
            __builtin_prefetch(px + 4 * (i + 16), 0, 3);
        }
        if (pfy) {
            __builtin_prefetch(py + 4 * i, 1, 3);
            __builtin_prefetch(py + 4 * (i + 16), 1, 3);
        }
        sb__ld16_f32(xr + i, &v[0], &v[1]);
        sb__ld16_f32(xr + i + 16, &v[2], &v[3]);
        for (int k = 0; k < 4; k++) {
            v[k] = sb__softmax_exp8(v[k], vr, vlo, vmx, true, diff, false);
            _mm256_storeu_ps(e + i + 8 * k, v[k]);
        }
        s0 = _mm256_add_ps(s0, _mm256_add_ps(v[0], v[2]));
        s1 = _mm256_add_ps(s1, _mm256_add_ps(v[1], v[3]));
    }
    for (; i < d16; i += 16) {
        if (pf)
            __builtin_prefetch(px + 4 * i, 0, 3);
        if (pfy)
            __builtin_prefetch(py + 4 * i, 1, 3);
        sb__ld16_f32(xr + i, &v[0], &v[1]);
        for (int k = 0; k < 2; k++) {
            v[k] = sb__softmax_exp8(v[k], vr, vlo, vmx, true, diff, false);
            _mm256_storeu_ps(e + i + 8 * k, v[k]);
        }
        s0 = _mm256_add_ps(s0, v[0]);
        s1 = _mm256_add_ps(s1, v[1]);
    }
    return _mm256_add_ps(s0, s1);
}

static float sb__hsum8(__m256 v)
{
    float l8[8], sum = 0.0f;
    _mm256_storeu_ps(l8, v);
    for (int l = 0; l < 8; l++)
        sum += l8[l];
    return sum;
}

#endif

static float sb__hmax8(__m256 v)
{
    float l8[8], mx = -INFINITY;
    _mm256_storeu_ps(l8, v);
    for (int l = 0; l < 8; l++)
        mx = l8[l] > mx ? l8[l] : mx;
    return mx;
}

#ifndef SB__OPS_AVX512 /* (the AVX-512 kernels replace these) */
static void sb__softmax_avx2_F32(const sb_ops_shape *s, const float *x,
                                 float *y, float *scratch)
{
    const int64_t T = s->tokens, d = s->d, d16 = d / 16 * 16;
    const size_t stride = sb__scratch_stride(s, NULL);
#pragma omp parallel
    {
        float *e =
            (float *)((char *)scratch + stride * (size_t)omp_get_thread_num());
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const float *xr = x + t * d;
            float *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 31) == 0;
            __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, a, b;
            __m256 un = _mm256_setzero_ps(); /* NaN seen (vmaxps drops them) */
            int64_t i = 0;
            for (; i < d16; i += 16) {
                sb__ld16_f32(xr + i, &a, &b);
                m0 = _mm256_max_ps(m0, a);
                m1 = _mm256_max_ps(m1, b);
                un = _mm256_or_ps(un, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
            }
            float mx = sb__hmax8(_mm256_max_ps(m0, m1));
            bool row_nan = _mm256_movemask_ps(un) != 0;
            for (int64_t k = i; k < d; k++) {
                mx = xr[k] > mx ? xr[k] : mx;
                row_nan |= xr[k] != xr[k];
            }
            if (row_nan) { /* a NaN anywhere makes every output NaN */
                for (int64_t k = 0; k < d; k++)
                    yr[k] = NAN;
                continue;
            }
            const char *px = (const char *)(xr + d);
            char *py = (char *)(yr + d);
            const bool pf = t + 1 < T, pfy = pf && !s->nt;
            bool diff;
            const float r = sb__row_r(mx, &diff);
            const __m256 vr = sb_vexp2_fused_vr(r),
                         vlo = _mm256_set1_ps(sb_vexp2_fused_lo(r)),
                         vmx = _mm256_set1_ps(mx);
            float sum =
                sb__hsum8(diff ? sb__softmax_exp_f32(xr, e, d16, vr, vlo, vmx,
                                                     true, px, py, pf, pfy)
                               : sb__softmax_exp_f32(xr, e, d16, vr, vlo, vmx,
                                                     false, px, py, pf, pfy));
            for (int64_t k = d16; k < d; k++) {
                e[k] = sb__exp2_tail(xr[k], mx, r, diff);
                sum += e[k];
            }
            const float inv = 1.0f / sum;
            const __m256 vi = _mm256_set1_ps(inv);
            for (i = 0; i < d16; i += 16)
                sb__st16_f32(yr + i, _mm256_mul_ps(_mm256_loadu_ps(e + i), vi),
                             _mm256_mul_ps(_mm256_loadu_ps(e + i + 8), vi), nt);
            for (int64_t k = i; k < d; k++)
                yr[k] = e[k] * inv;
        }
        _mm_sfence();
    }
}
#endif

/* rmsnorm, swiglu and rope in the same style: 16 elements a step in
 * registers, the next row prefetched at the pace this one is read, the
 * output stored straight to its place (streamed with `nt`). */
#define SB__PF_NEXT(ptr, bytes_ahead, write)                                   \
    __builtin_prefetch((const char *)(ptr) + (bytes_ahead), write, 3)

#define SB__DEFINE_OPS_AVX2(SUF, TY, LD, ST, LDN, STN)                         \
    static void sb__rmsnorm_avx2_##SUF(const sb_ops_shape *s, const TY *x,     \
                                       const TY *g, TY *y)                     \
    {                                                                          \
        const int64_t T = s->tokens, d = s->d, d16 = d / 16 * 16;              \
        _Pragma("omp parallel")                                                \
        {                                                                      \
            _Pragma("omp for schedule(runtime)") for (int64_t t = 0; t < T;    \
                                                      t++)                     \
            {                                                                  \
                const TY *xr = x + t * d;                                      \
                TY *yr = y + t * d;                                            \
                const bool nt = s->nt && ((uintptr_t)yr & 31) == 0;            \
                const bool pf = t + 1 < T, pfy = pf && !s->nt;                 \
                /* four sums: with two, one FMA a step on each chain,          \
                 * the loop waited on the FMA latency (4 cycles) */            \
                __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;    \
                __m256 a, b, c, e, ga, gb;                                     \
                int64_t i = 0;                                                 \
                for (; i + 32 <= d16; i += 32) {                               \
                    LD(xr + i, &a, &b);                                        \
                    LD(xr + i + 16, &c, &e);                                   \
                    s0 = _mm256_fmadd_ps(a, a, s0);                            \
                    s1 = _mm256_fmadd_ps(b, b, s1);                            \
                    s2 = _mm256_fmadd_ps(c, c, s2);                            \
                    s3 = _mm256_fmadd_ps(e, e, s3);                            \
                }                                                              \
                for (; i < d16; i += 16) {                                     \
                    LD(xr + i, &a, &b);                                        \
                    s0 = _mm256_fmadd_ps(a, a, s0);                            \
                    s1 = _mm256_fmadd_ps(b, b, s1);                            \
                }                                                              \
                float ss = sb__hsum8(_mm256_add_ps(_mm256_add_ps(s0, s2),      \
                                                   _mm256_add_ps(s1, s3)));    \
                for (int64_t k = i; k < d; k++) {                              \
                    float v = SB__LD_##SUF(xr, k);                             \
                    ss += v * v;                                               \
                }                                                              \
                const float rs =                                               \
                    1.0f / sqrtf(ss / (float)d + (float)SB_OPS_EPS);           \
                const __m256 vr = _mm256_set1_ps(rs);                          \
                for (i = 0; i < d16; i += 16) {                                \
                    if (pf)                                                    \
                        SB__PF_NEXT(xr + i, d * sizeof(TY), 0);                \
                    if (pfy)                                                   \
                        SB__PF_NEXT(yr + i, d * sizeof(TY), 1);                \
                    LD(xr + i, &a, &b);                                        \
                    LD(g + i, &ga, &gb);                                       \
                    ST(yr + i, _mm256_mul_ps(_mm256_mul_ps(a, vr), ga),        \
                       _mm256_mul_ps(_mm256_mul_ps(b, vr), gb), nt);           \
                }                                                              \
                for (int64_t k = i; k < d; k++)                                \
                    SB__ST_##SUF(                                              \
                        yr, k, SB__LD_##SUF(xr, k) * rs * SB__LD_##SUF(g, k)); \
            }                                                                  \
            _mm_sfence();                                                      \
        }                                                                      \
    }                                                                          \
    static void sb__rope_avx2_##SUF(const sb_ops_shape *s, const TY *x,        \
                                    const float *ct, const float *st, TY *y)   \
    {                                                                          \
        const int64_t T = s->tokens, d = s->d;                                 \
        const int hd = s->head_dim, h = hd / 2, h16 = h / 16 * 16;             \
        _Pragma("omp parallel")                                                \
        {                                                                      \
            _Pragma("omp for schedule(runtime)") for (int64_t t = 0; t < T;    \
                                                      t++)                     \
            {                                                                  \
                const float *c = ct + t * h, *sn = st + t * h;                 \
                TY *yr = y + t * d;                                            \
                const bool nt =                                                \
                    s->nt && ((uintptr_t)yr & 31) == 0 && h % 16 == 0;         \
                const bool pf = t + 1 < T, pfy = pf && !s->nt;                 \
                for (int64_t hb = 0; hb < d; hb += hd) {                       \
                    const TY *lo = x + t * d + hb, *hi = lo + h;               \
                    TY *ylo = yr + hb, *yhi = ylo + h;                         \
                    __m256 l0, l1, u0, u1;                                     \
                    int i = 0;                                                 \
                    for (; i < h16; i += 16) {                                 \
                        if (pf) {                                              \
                            SB__PF_NEXT(lo + i, d * sizeof(TY), 0);            \
                            SB__PF_NEXT(hi + i, d * sizeof(TY), 0);            \
                        }                                                      \
                        if (pfy) {                                             \
                            SB__PF_NEXT(ylo + i, d * sizeof(TY), 1);           \
                            SB__PF_NEXT(yhi + i, d * sizeof(TY), 1);           \
                        }                                                      \
                        LDN(lo + i, &l0, &l1);                                 \
                        LDN(hi + i, &u0, &u1);                                 \
                        __m256 c0 = _mm256_loadu_ps(c + i),                    \
                               c1 = _mm256_loadu_ps(c + i + 8),                \
                               s0 = _mm256_loadu_ps(sn + i),                   \
                               s1 = _mm256_loadu_ps(sn + i + 8);               \
                        STN(ylo + i,                                           \
                            _mm256_fmsub_ps(l0, c0, _mm256_mul_ps(u0, s0)),    \
                            _mm256_fmsub_ps(l1, c1, _mm256_mul_ps(u1, s1)),    \
                            nt);                                               \
                        STN(yhi + i,                                           \
                            _mm256_fmadd_ps(u0, c0, _mm256_mul_ps(l0, s0)),    \
                            _mm256_fmadd_ps(u1, c1, _mm256_mul_ps(l1, s1)),    \
                            nt);                                               \
                    }                                                          \
                    for (; i < h; i++) {                                       \
                        float l = SB__LD_##SUF(lo, i),                         \
                              u = SB__LD_##SUF(hi, i);                         \
                        SB__ST_##SUF(ylo, i, l *c[i] - u * sn[i]);             \
                        SB__ST_##SUF(yhi, i, u *c[i] + l * sn[i]);             \
                    }                                                          \
                }                                                              \
            }                                                                  \
            _mm_sfence();                                                      \
        }                                                                      \
    }

#ifndef SB__OPS_AVX512
/* swiglu in fp32 (bf16 inputs take sb__swiglu_lut_bf16 below). */
static void sb__swiglu_avx2_F32(const sb_ops_shape *s, const float *x, float *y)
{
    const int64_t T = s->tokens, d = s->d;
    SB__EXP_BOUNDS(lo_s, hi_s);
    const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f),
                 nl2e = _mm256_set1_ps(-SB__LOG2E);
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const float *ar = x + 2 * t * d, *br = ar + d;
            float *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 31) == 0;
            const bool pf = t + 1 < T, pfy = pf && !s->nt;
            int64_t i = 0;
            /* 32 elements a step; the rest (d % 32) one by one. */
            for (; i + 32 <= d; i += 32) {
                if (pf) {
                    SB__PF_NEXT(ar + i, 2 * d * sizeof(float), 0);
                    SB__PF_NEXT(br + i, 2 * d * sizeof(float), 0);
                }
                if (pfy)
                    SB__PF_NEXT(yr + i, d * sizeof(float), 1);
                __m256 av[4], bv[4], ev[4], r[4];
                sb__ld16_f32(ar + i, &av[0], &av[1]);
                sb__ld16_f32(ar + i + 16, &av[2], &av[3]);
                sb__ld16_f32(br + i, &bv[0], &bv[1]);
                sb__ld16_f32(br + i + 16, &bv[2], &bv[3]);
                for (int k = 0; k < 4; k++)
                    ev[k] = _mm256_mul_ps(av[k], nl2e);
                sb_vexp2_x4(ev);
                /* a / (1 + e^-a): a reciprocal estimate and one
                 * Newton step (relative error ~1e-7), where a
                 * division would hold the divider 3.5 cycles a vector. */
                for (int k = 0; k < 4; k++) {
                    ev[k] = _mm256_add_ps(one, ev[k]);
                    r[k] = _mm256_rcp_ps(ev[k]);
                }
                for (int k = 0; k < 4; k++)
                    r[k] =
                        _mm256_mul_ps(r[k], _mm256_fnmadd_ps(ev[k], r[k], two));
                for (int k = 0; k < 4; k++)
                    av[k] = _mm256_mul_ps(_mm256_mul_ps(av[k], r[k]), bv[k]);
                sb__st16_f32(yr + i, av[0], av[1], nt);
                sb__st16_f32(yr + i + 16, av[2], av[3], nt);
            }
            for (; i < d; i++) {
                float av = SB__LD_F32(ar, i);
                SB__ST_F32(yr, i,
                           av / (1.0f + sb__expf(-av, lo_s, hi_s)) *
                               SB__LD_F32(br, i));
            }
        }
        _mm_sfence();
    }
}
#endif

/* swiglu with bf16 inputs: a bf16 gate value is one of 65536 codes, so
 * silu(a) = a / (1 + e^-a) comes from a table of all of them (computed in
 * double, rounded to fp32: more exact than the polynomial), times the up
 * value, rounded to bf16. No exponential at run time, and the op is a
 * stream again. The lookups are scalar loads: on Zen 3 they ran 1.4-2.4x
 * faster than two vgatherdps per 16 elements (docs/PRIMITIVES.md). The
 * table is 256 KiB; the codes real activations take (and the benchmark's
 * inputs) are a few thousand, which stay in L1/L2. Built once per process
 * (~1 ms) when the first bf16 swiglu point is set up. As on the other bf16
 * paths a NaN gives NaN (the table holds it) and rounding is to nearest
 * even. */
static float sb__silu_tab[65536];
static pthread_once_t sb__silu_once = PTHREAD_ONCE_INIT;

static void sb__silu_build(void)
{
    for (uint32_t c = 0; c < 65536; c++) {
        float f = sb_bf16_to_f32((uint16_t)c);
        double a = f;
        /* a NaN code keeps its own value (its bits in the high half, as
         * the store's rounding needs; see sb__bf16_bits8) */
        sb__silu_tab[c] = a != a ? f : (float)(a / (1.0 + exp(-a)));
    }
}

/* Builds the table if this process has not yet: the benchmark's setup
 * calls it, so no timed call pays for it; the kernel calls it too for
 * callers without a setup (the unit tests), where it is one atomic load. */
static void sb__silu_ready(void)
{
    pthread_once(&sb__silu_once, sb__silu_build);
}

#ifndef SB__OPS_AVX512 /* (the AVX-512 kernels replace these) */
/* 16 elements of a bf16 swiglu row from element i: the looked-up values
 * in the lane order of the up values (sb__ld16_bf16p: {0-3, 8-11},
 * {4-7, 12-15}), so the up row takes one load and two unpacks and the
 * store no permute. */
static inline __attribute__((always_inline)) void
sb__swiglu16_bf16(const uint16_t *ar, const uint16_t *br, uint16_t *yr,
                  int64_t i, bool nt)
{
    const uint16_t *c = ar + i;
    const __m256 fa = _mm256_setr_ps(sb__silu_tab[c[0]], sb__silu_tab[c[1]],
                                     sb__silu_tab[c[2]], sb__silu_tab[c[3]],
                                     sb__silu_tab[c[8]], sb__silu_tab[c[9]],
                                     sb__silu_tab[c[10]], sb__silu_tab[c[11]]);
    const __m256 fb = _mm256_setr_ps(sb__silu_tab[c[4]], sb__silu_tab[c[5]],
                                     sb__silu_tab[c[6]], sb__silu_tab[c[7]],
                                     sb__silu_tab[c[12]], sb__silu_tab[c[13]],
                                     sb__silu_tab[c[14]], sb__silu_tab[c[15]]);
    __m256 ba, bb;
    sb__ld16_bf16p(br + i, &ba, &bb);
    sb__st16_bf16p(yr + i, _mm256_mul_ps(fa, ba), _mm256_mul_ps(fb, bb), nt);
}

/* One row's first d / 16 * 16 elements, 32 a step with the next row's
 * lines prefetched pf_bytes on (its own row again when there is no next:
 * no test in the loop); `nt` and `pfy` are constants at each call, so
 * each call inlines as its own loop. Returns the elements done. With the
 * loop by 16, its two tests for the prefetch and the one for the store
 * ran in every step: the row by 32 was 9-17 % faster (docs/PRIMITIVES.md). */
static inline __attribute__((always_inline)) int64_t
sb__swiglu_row_bf16(const uint16_t *ar, const uint16_t *br, uint16_t *yr,
                    int64_t d, int64_t pf_bytes, bool pfy, bool nt)
{
    int64_t i = 0;
    for (; i + 32 <= d; i += 32) {
        SB__PF_NEXT(ar + i, pf_bytes, 0);
        SB__PF_NEXT(br + i, pf_bytes, 0);
        if (pfy)
            SB__PF_NEXT(yr + i, pf_bytes / 2, 1);
        sb__swiglu16_bf16(ar, br, yr, i, nt);
        sb__swiglu16_bf16(ar, br, yr, i + 16, nt);
    }
    if (i + 16 <= d) { /* at most one step of 16 after those of 32 */
        sb__swiglu16_bf16(ar, br, yr, i, nt);
        i += 16;
    }
    return i;
}

static void sb__swiglu_lut_bf16(const sb_ops_shape *s, const uint16_t *x,
                                uint16_t *y)
{
    sb__silu_ready();
    const int64_t T = s->tokens, d = s->d;
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const uint16_t *ar = x + 2 * t * d, *br = ar + d;
            uint16_t *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 31) == 0;
            const bool pf = t + 1 < T;
            /* the next row's gate and up lie 2·d elements on, its output d */
            const int64_t pf_bytes = pf ? 2 * d * (int64_t)sizeof *ar : 0;
            /* prefetch the next output row only when it is stored
             * through the caches */
            const bool pfy = pf && !s->nt;
            int64_t i =
                nt ? sb__swiglu_row_bf16(ar, br, yr, d, pf_bytes, false, true)
                : pfy
                    ? sb__swiglu_row_bf16(ar, br, yr, d, pf_bytes, true, false)
                    : sb__swiglu_row_bf16(ar, br, yr, d, pf_bytes, false,
                                          false);
            for (; i < d; i++)
                yr[i] = sb_bf16_from_f32(sb__silu_tab[ar[i]] *
                                         sb_bf16_to_f32(br[i]));
        }
        _mm_sfence();
    }
}

/* 16 values of [0, 1] (lane order of sb__ld16_bf16p) as bf16, rounded
 * half up, back in natural order. */
static inline void sb__st16_bf16p_unit(uint16_t *p, __m256 a, __m256 b, bool nt)
{
    const __m256i h = _mm256_set1_epi32(0x8000);
    __m256i ua =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_castps_si256(a), h), 16);
    __m256i ub =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_castps_si256(b), h), 16);
    sb__st32b(p, _mm256_packus_epi32(ua, ub), nt);
}

/* ---- softmax with bf16 storage
 * ---------------------------------------------------- Half the bytes of fp32
 * per element for the same arithmetic, so this one is bound by its instructions
 * more than by memory: the fp32 kernel's text took ~30 vector instructions per
 * 8 elements and spilled (GCC kept the exponential's intermediates on the
 * stack). This one makes two passes over a row (exponentials into fp32 scratch,
 * their sum; scale and store) and drops what softmax does not need:
 *   - no pass for the max (below, in the kernel);
 *   - the exponential is sb_vexp2_bf16 (vexp.h): two FMAs of range
 *     reduction, with the row's constant (an integer R near -max·log2e)
 *     folded into the rounding shifter, and no clamp unless the row needs
 *     one (sb__softmax_exp_row_bf16);
 *   - the checks on the row's values are made on the bf16 codes, 16 to an
 *     instruction (sb__softmax_exp_bf16);
 *   - no NaN test on the inputs: a NaN (or +inf, whose x - max is NaN)
 *     comes out of the exponential as NaN, so the row's sum is NaN, and
 *     one test of the sum sends the row to all-NaN, as the reference has
 *     it;
 *   - the stored values lie in [0, 1], finite: no NaN path in the store,
 *     and the bf16 rounding is half-up (add 0x8000, keep the high half),
 *     which differs from ties-to-even only on exact ties, where either is
 *     half an ulp from the fp32 value (itself ~5e-6 from the exact one):
 *     the same bound.
 * With the two-FMA reduction, the 16-bit checks and the clamp dropped,
 * the exponential pass takes ~26 vector instructions per 16 elements
 * where it took ~30: +11 to +13 % on the best samples in cache, +6 to
 * +8 % on the medians at DRAM sizes (docs/PRIMITIVES.md). */

/* The bf16 softmax's exponential pass over the first d16 elements of a
 * row: e = 2^(x·log2e + R) (vr from sb_vexp2_fused_vr) into the scratch
 * row, in the lane order of sb__ld16_bf16p, returning the 8 lanes of the
 * sum. With `diff` (a max of 2^20 or more, where R would not be exact:
 * R = 0 then) the exponent is (x - mx)·log2e (sb__row_r).
 * With `clamp` each x (or x - mx) is first raised to vlo, where 2^t is
 * exactly 0. Beside the sum it keeps two maxima of the bf16 codes
 * themselves, one instruction per 16 elements each:
 *   - *hi16, signed: the largest code of a value >= +0 (a positive NaN
 *     above every number), which is the row's max when that is >= 0;
 *   - *lo16, unsigned, without the clamp only: the largest code with the
 *     sign set, which is the most negative value (a negative NaN above
 *     -inf).
 * In fp32 the max took one instruction per 8 elements, and so did the
 * clamp. */
static inline __attribute__((always_inline)) void
sb__softmax_exp16_bf16(__m256i c, float *e, __m256 vr, __m256 vlo, __m256 vmx,
                       bool clamp, bool diff, __m256 *a, __m256 *b)
{
    __m256 v[2];
    sb__unpack16_bf16p(c, &v[0], &v[1]);
    for (int k = 0; k < 2; k++) {
        v[k] = sb__softmax_exp8(v[k], vr, vlo, vmx, clamp, diff, true);
        _mm256_storeu_ps(e + 8 * k, v[k]);
    }
    *a = v[0];
    *b = v[1];
}
static inline __attribute__((always_inline)) float
sb__softmax_exp_bf16(const uint16_t *xr, float *e, int64_t d16, __m256 vr,
                     __m256 vlo, __m256 vmx, bool clamp, bool diff,
                     const char *px, char *py, bool pf, bool pfy, int16_t *hi16,
                     uint16_t *lo16)
{
    __m256 s = _mm256_setzero_ps(), a, b, c, dd;
    __m256i hi = _mm256_set1_epi16(INT16_MIN), lo = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 32 <= d16; i += 32) {
        if (pf)
            __builtin_prefetch(px + 2 * i, 0, 3);
        if (pfy)
            __builtin_prefetch(py + 2 * i, 1, 3);
        const __m256i c0 = _mm256_loadu_si256((const __m256i *)(xr + i));
        const __m256i c1 = _mm256_loadu_si256((const __m256i *)(xr + i + 16));
        hi = _mm256_max_epi16(hi, _mm256_max_epi16(c0, c1));
        if (!clamp)
            lo = _mm256_max_epu16(lo, _mm256_max_epu16(c0, c1));
        sb__softmax_exp16_bf16(c0, e + i, vr, vlo, vmx, clamp, diff, &a, &b);
        sb__softmax_exp16_bf16(c1, e + i + 16, vr, vlo, vmx, clamp, diff, &c,
                               &dd);
        s = _mm256_add_ps(
            s, _mm256_add_ps(_mm256_add_ps(a, c), _mm256_add_ps(b, dd)));
    }
    if (i < d16) {
        if (pf)
            __builtin_prefetch(px + 2 * i, 0, 3);
        if (pfy)
            __builtin_prefetch(py + 2 * i, 1, 3);
        const __m256i c0 = _mm256_loadu_si256((const __m256i *)(xr + i));
        hi = _mm256_max_epi16(hi, c0);
        if (!clamp)
            lo = _mm256_max_epu16(lo, c0);
        sb__softmax_exp16_bf16(c0, e + i, vr, vlo, vmx, clamp, diff, &a, &b);
        s = _mm256_add_ps(s, _mm256_add_ps(a, b));
    }
    int16_t hl[16];
    uint16_t ll[16];
    _mm256_storeu_si256((__m256i *)hl, hi);
    _mm256_storeu_si256((__m256i *)ll, lo);
    *hi16 = INT16_MIN;
    *lo16 = 0;
    for (int k = 0; k < 16; k++) {
        *hi16 = hl[k] > *hi16 ? hl[k] : *hi16;
        *lo16 = ll[k] > *lo16 ? ll[k] : *lo16;
    }
    return sb__hsum8(s);
}

/* The exponentials of a row of bf16 against its max or a guess mx into e,
 * returning their sum; *hi is the row's max if that is >= 0 (else -inf,
 * or the scalar tail's max: the tail's values count whatever their sign;
 * a NaN if the vector part has a positive NaN). Without the clamp the
 * values must keep n >= -127: the row is checked after the pass (its most
 * negative value against sb_vexp2_fused_lo) and done again with the clamp
 * if one is below (-inf, a large negative logit, a masked position) or a
 * negative NaN: *clamp then turns true, and the thread's later rows start
 * with the clamp (rows of one tensor tend to be alike). */
static float sb__softmax_exp_row_bf16(const uint16_t *xr, float *e, int64_t d,
                                      int64_t d16, float mx, bool *clamp,
                                      const char *px, char *py, bool pf,
                                      bool pfy, float *hi)
{
    bool diff;
    const float r = sb__row_r(mx, &diff);
    const float xlo = sb_vexp2_fused_lo(r);
    const __m256 vr = sb_vexp2_fused_vr(r), vlo = _mm256_set1_ps(xlo),
                 vmx = _mm256_set1_ps(mx);
    /* without the clamp only the negatives are checked: x >= 0 must be
     * safe (xlo <= 0), as it is for any max under ~88 */
    bool cl = *clamp || diff || !(xlo <= 0.0f);
    for (;;) {
        int16_t hc;
        uint16_t lc;
#define SB__EXP_PASS(CLAMP, DIFF)                                              \
    sb__softmax_exp_bf16(xr, e, d16, vr, vlo, vmx, CLAMP, DIFF, px, py, pf,    \
                         pfy, &hc, &lc)
        float sum = diff ? SB__EXP_PASS(true, true)
                    : cl ? SB__EXP_PASS(true, false)
                         : SB__EXP_PASS(false, false);
#undef SB__EXP_PASS
        *hi = hc >= 0 ? sb_bf16_to_f32((uint16_t)hc) : -INFINITY;
        float lo = lc >= 0x8000 ? sb_bf16_to_f32(lc) : 0.0f;
        if (!cl && !(lo >= xlo)) {
            *clamp = cl = true;
            continue;
        }
        for (int64_t k = d16; k < d; k++) {
            const float v = sb_bf16_to_f32(xr[k]);
            *hi = v > *hi ? v : *hi;
            e[k] = sb__exp2_tail(v, mx, r, diff);
            sum += e[k];
        }
        return sum;
    }
}

/* The max of a row of bf16. */
static float sb__softmax_max_bf16(const uint16_t *xr, int64_t d, int64_t d16,
                                  int64_t d32)
{
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0, a, b;
    int64_t i = 0;
    for (; i < d32; i += 32) {
        sb__ld16_bf16p(xr + i, &a, &b);
        m0 = _mm256_max_ps(m0, a);
        m1 = _mm256_max_ps(m1, b);
        sb__ld16_bf16p(xr + i + 16, &a, &b);
        m2 = _mm256_max_ps(m2, a);
        m3 = _mm256_max_ps(m3, b);
    }
    for (; i < d16; i += 16) {
        sb__ld16_bf16p(xr + i, &a, &b);
        m0 = _mm256_max_ps(m0, a);
        m1 = _mm256_max_ps(m1, b);
    }
    float mx =
        sb__hmax8(_mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
    for (int64_t k = i; k < d; k++) {
        float v = sb_bf16_to_f32(xr[k]);
        mx = v > mx ? v : mx;
    }
    return mx;
}

static void sb__softmax_avx2_BF16(const sb_ops_shape *s, const uint16_t *x,
                                  uint16_t *y, float *scratch)
{
    const int64_t T = s->tokens, d = s->d, d16 = d / 16 * 16, d32 = d / 32 * 32;
    const size_t stride = sb__scratch_stride(s, NULL);
#pragma omp parallel
    {
        float *e =
            (float *)((char *)scratch + stride * (size_t)omp_get_thread_num());
        bool clamp = false;
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const uint16_t *xr = x + t * d;
            uint16_t *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 31) == 0;
            const char *px = (const char *)(xr + d);
            char *py = (char *)(yr + d);
            const bool pf = t + 1 < T, pfy = pf && !s->nt;
            /* Softmax is the same whatever constant is taken from x, as
             * long as no exponential overflows: first with the max of the
             * first 32 values, checking the row's max on the way, with no
             * pass of its own; if that is no more than 64 above the guess
             * (no t beyond 93, where 2^t is still a normal float), the
             * row is done. Otherwise (or with a positive NaN, or a guess
             * under -64, where the 16-bit max of the values >= 0 says
             * nothing), again with the true max. One pass over the row
             * fewer, ~5 % in cache. */
            float sum = NAN, mx = NAN, hi = NAN;
            bool done = false;
            if (d32 > 0) {
                __m256 a, b, c, dd;
                sb__ld16_bf16p(xr, &a, &b);
                sb__ld16_bf16p(xr + 16, &c, &dd);
                mx = sb__hmax8(
                    _mm256_max_ps(_mm256_max_ps(a, b), _mm256_max_ps(c, dd)));
                if (mx >= -64.0f) {
                    sum = sb__softmax_exp_row_bf16(xr, e, d, d16, mx, &clamp,
                                                   px, py, pf, pfy, &hi);
                    done = hi <= mx + 64.0f;
                }
            }
            if (!done) {
                /* A guess that was made (>= -64) failed because the row's
                 * max, which hi is then (>= 0), lies more than 64 above
                 * it, or hi is a NaN, which makes the row NaN either way:
                 * no pass for the max. Without a guess, the pass. */
                mx = d32 > 0 && mx >= -64.0f
                         ? hi
                         : sb__softmax_max_bf16(xr, d, d16, d32);
                sum = sb__softmax_exp_row_bf16(xr, e, d, d16, mx, &clamp, px,
                                               py, pf, pfy, &hi);
            }
            if (sum != sum) { /* a NaN or +inf in the row: all NaN */
                for (int64_t k = 0; k < d; k++)
                    yr[k] = sb_bf16_from_f32(NAN);
                continue;
            }
            const float inv = 1.0f / sum;
            const __m256 vi = _mm256_set1_ps(inv);
            int64_t i = 0;
            for (; i < d16; i += 16)
                sb__st16_bf16p_unit(
                    yr + i, _mm256_mul_ps(_mm256_loadu_ps(e + i), vi),
                    _mm256_mul_ps(_mm256_loadu_ps(e + i + 8), vi), nt);
            for (int64_t k = i; k < d; k++)
                yr[k] = sb_bf16_from_f32(e[k] * inv);
        }
        _mm_sfence();
    }
}
SB__DEFINE_OPS_AVX2(F32, float, sb__ld16_f32, sb__st16_f32, sb__ld16_f32,
                    sb__st16_f32)
SB__DEFINE_OPS_AVX2(BF16, uint16_t, sb__ld16_bf16p, sb__st16_bf16p,
                    sb__ld16_bf16, sb__st16_bf16)
#endif
#endif

/* ---- AVX-512
 * --------------------------------------------------------------------- With
 * AVX-512F and BW (SB__OPS_AVX512) these kernels replace the AVX2 ones: the
 * same algorithms and structure (rows over OpenMP, the next row prefetched at
 * the pace this one is read, streaming stores with `nt`, the fused exponential
 * of vexp.h in its 16-lane form, the bf16 softmax's guessed max and its 16-bit
 * checks, the bf16 swiglu's silu table), one 64-byte line per vector: 16 fp32
 * or 32 bf16 a vector, and 32 elements a step (two vectors of 16 in fp32
 * arithmetic; 64 where four exponentials run together, as AVX2 runs four of 8).
 * What changes beside the width:
 *   - a row's tail (d, or rope's half head, not a multiple of 32) is one
 *     masked step instead of a scalar loop: masked loads (zeros, or -inf
 *     where a max or an exponential must ignore the lanes) and masked
 *     stores, which touch no byte outside the row;
 *   - bf16 in lane order ({0-3, 8-11, 16-19, 24-27} and {4-7, 12-15,
 *     20-23, 28-31}: one 64-byte load and two unpacks, as in AVX2) where
 *     the elements meet no fp32 data in natural order; rope, with its
 *     fp32 tables, and the tails widen in natural order;
 *   - with AVX512_BF16 (SB__OPS_AVX512_BF16) the bf16 stores of rmsnorm,
 *     rope and softmax convert with vcvtne2ps2bf16 (sb__pack32_bf16):
 *     round to nearest even, NaN quieted, as sb_bf16_from_f32, except that
 *     the instruction treats denormal inputs as zero and flushes denormal
 *     results (Intel SDM, VCVTNE2PS2BF16): an fp32 value under 2^-126 in
 *     magnitude is stored as a zero of its sign. The verifier
 *     (sb_ops_verify) accepts that for these three ops: its absolute term
 *     is 1e-30 for rmsnorm, 1e-7 for rope and 1e-12 for softmax, all above
 *     2^-126 (1.2e-38), and unit.test_ops's softmax checks allow 1e-37
 *     where the reference is that small. Not for swiglu, whose absolute term
 *     is 1e-6·|up| (a flushed result with an up value under ~1e-32 would
 *     fail) and whose every-code test is bit for bit with denormal
 *     results among them: its stores keep the integer rounding, exact to
 *     sb_bf16_from_f32 (and the table lookups, not the store, bound it);
 *   - without AVX512_BF16 the stores round as the AVX2 ones do (the same
 *     integer sequence and the same reasons: sb__bf16_bits8), packed back
 *     into natural order by vpackusdw, plus a vpermq where the lanes were
 *     in natural order;
 *   - swiglu in fp32 divides with vrcp14ps and one Newton step (relative
 *     error ~1e-8; AVX2's vrcpps has 12 bits).
 * Their speed on AVX-512 hardware is still to be measured (this project's
 * machine is a Zen 3); unit.test_ops verifies them where the build has
 * AVX-512, and unit.test_ops_avx512emu / _avx512emu_nobf16 on any AVX2
 * machine through tests/emu/avx512_emu.h. */
#ifdef SB__OPS_AVX512

/* Masks of the first n lanes (none for n <= 0, all from the width on). */
static inline __mmask16 sb__lanes16(int64_t n)
{
    return (__mmask16)(n <= 0 ? 0u : n >= 16 ? 0xffffu : (1u << n) - 1u);
}
static inline __mmask32 sb__lanes32(int64_t n)
{
    return (__mmask32)(n <= 0 ? 0u : n >= 32 ? 0xffffffffu : (1u << n) - 1u);
}

/* 64 bytes, streaming when nt (p 64-byte aligned then). */
static inline void sb__st64b(void *p, __m512i v, bool nt)
{
    if (nt)
        _mm512_stream_si512((__m512i *)p, v);
    else
        _mm512_storeu_si512(p, v);
}

/* 32 bf16 codes in a register, widened: in natural order (a: elements
 * 0-15, b: 16-31), or in lane order (a: {0-3, 8-11, 16-19, 24-27}, b:
 * {4-7, 12-15, 20-23, 28-31}), where each unpack puts a code in the high
 * half of a 32-bit lane, its fp32 pattern. */
static inline void sb__unpack32n_bf16(__m512i v, __m512 *a, __m512 *b)
{
    *a = _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)), 16));
    *b = _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)), 16));
}
static inline void sb__unpack32p_bf16(__m512i v, __m512 *a, __m512 *b)
{
    const __m512i z = _mm512_setzero_si512();
    *a = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v));
    *b = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v));
}

/* 32 elements from element i of an fp32 (bf16 false) or bf16 row: fp32 in
 * natural order; bf16 in lane order with `porder`, else natural. The
 * flags are constants at each call. */
static inline __attribute__((always_inline)) void
sb__ld32(const void *p, int64_t i, bool bf16, bool porder, __m512 *a, __m512 *b)
{
    if (bf16) {
        const uint16_t *q = (const uint16_t *)p + i;
        if (porder) {
            sb__unpack32p_bf16(_mm512_loadu_si512(q), a, b);
        } else {
            *a = _mm512_castsi512_ps(_mm512_slli_epi32(
                _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)q)),
                16));
            *b = _mm512_castsi512_ps(
                _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(
                                      (const __m256i *)(q + 16))),
                                  16));
        }
    } else {
        *a = _mm512_loadu_ps((const float *)p + i);
        *b = _mm512_loadu_ps((const float *)p + i + 16);
    }
}
/* The first n (< 32) of those 32, in natural order, zeros beyond. */
static inline __attribute__((always_inline)) void
sb__ld32_tail(const void *p, int64_t i, int64_t n, bool bf16, __m512 *a,
              __m512 *b)
{
    if (bf16) {
        sb__unpack32n_bf16(
            _mm512_maskz_loadu_epi16(sb__lanes32(n), (const uint16_t *)p + i),
            a, b);
    } else {
        *a = _mm512_maskz_loadu_ps(sb__lanes16(n), (const float *)p + i);
        *b = _mm512_maskz_loadu_ps(sb__lanes16(n - 16),
                                   (const float *)p + i + 16);
    }
}

/* The bf16 of each lane in its low 16 bits, by the integer rounding of
 * sb__bf16_bits8 (to nearest even; see there for NaN), or half up for
 * values in [0, 1] (the softmax's stores, as sb__st16_bf16p_unit). */
static inline __m512i sb__bf16_bits16(__m512 v)
{
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb =
        _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r =
        _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    return _mm512_srli_epi32(r, 16);
}
static inline __m512i sb__bf16_unit_bits16(__m512 v)
{
    return _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_castps_si512(v), _mm512_set1_epi32(0x8000)),
        16);
}

/* How sb__pack32_bf16 rounds: SB__BF_EXACT, sb_bf16_from_f32 bit for bit
 * (integer sequence); SB__BF_NE, vcvtne2ps2bf16 where there is AVX512_BF16
 * (denormal results flushed, see above), else as SB__BF_EXACT; SB__BF_UNIT,
 * values in [0, 1]: vcvtne2ps2bf16, else half up. */
enum { SB__BF_EXACT, SB__BF_NE, SB__BF_UNIT };

/* 32 fp32 values (a, b as sb__ld32 gives them: in lane order with
 * `porder`, else natural) as 32 bf16 codes in natural order. vpackusdw
 * packs within 128-bit lanes, which puts lane order back into natural
 * order and natural order needs the vpermq; vcvtne2ps2bf16 puts a's 16
 * below b's, the other way round. Constants at each call. */
static inline __attribute__((always_inline)) __m512i
sb__pack32_bf16(__m512 a, __m512 b, bool porder, int how)
{
#ifdef SB__OPS_AVX512_BF16
    if (how != SB__BF_EXACT) {
        const __m512i v = (__m512i)_mm512_cvtne2ps_pbh(b, a);
        return porder ? _mm512_permutexvar_epi64(
                            _mm512_set_epi64(7, 3, 6, 2, 5, 1, 4, 0), v)
                      : v;
    }
#endif
    const __m512i v =
        how == SB__BF_UNIT
            ? _mm512_packus_epi32(sb__bf16_unit_bits16(a),
                                  sb__bf16_unit_bits16(b))
            : _mm512_packus_epi32(sb__bf16_bits16(a), sb__bf16_bits16(b));
    return porder ? v
                  : _mm512_permutexvar_epi64(
                        _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0), v);
}

/* 32 elements to element i of an fp32 or bf16 row (streamed with nt), and
 * the first n (< 32) of 32 (a, b in natural order). */
static inline __attribute__((always_inline)) void
sb__st32(void *p, int64_t i, __m512 a, __m512 b, bool bf16, bool porder,
         int how, bool nt)
{
    if (bf16) {
        sb__st64b((uint16_t *)p + i, sb__pack32_bf16(a, b, porder, how), nt);
    } else {
        sb__st64b((float *)p + i, _mm512_castps_si512(a), nt);
        sb__st64b((float *)p + i + 16, _mm512_castps_si512(b), nt);
    }
}
static inline __attribute__((always_inline)) void
sb__st32_tail(void *p, int64_t i, int64_t n, __m512 a, __m512 b, bool bf16,
              int how)
{
    if (bf16) {
        _mm512_mask_storeu_epi16((uint16_t *)p + i, sb__lanes32(n),
                                 sb__pack32_bf16(a, b, false, how));
    } else {
        _mm512_mask_storeu_ps((float *)p + i, sb__lanes16(n), a);
        _mm512_mask_storeu_ps((float *)p + i + 16, sb__lanes16(n - 16), b);
    }
}

/* The next row's lines of a 32-element step of a row of elements of
 * `size` bytes, `ahead` bytes on. */
static inline __attribute__((always_inline)) void
sb__pf32(const void *p, int64_t i, int size, int64_t ahead, int write)
{
    for (int o = 0; o < 32 * size; o += 64) {
        if (write)
            SB__PF_NEXT((const char *)p + i * size + o, ahead, 1);
        else
            SB__PF_NEXT((const char *)p + i * size + o, ahead, 0);
    }
}

/* The largest of 16 lanes, NaN lanes left out (as sb__hmax8). */
static inline float sb__hmax16(__m512 v)
{
    return sb__hmax8(_mm256_max_ps(
        _mm512_castps512_ps256(v),
        _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

/* One rmsnorm row: the sum of squares on four accumulators (as the AVX2
 * kernel: two chains would wait on the FMA latency), then x·rs·g. */
static inline __attribute__((always_inline)) void
sb__rmsnorm_row512(const void *xr, const void *g, void *yr, int64_t d, bool pf,
                   bool pfy, bool nt, bool bf16)
{
    const int S = bf16 ? 2 : 4;
    const int64_t d32 = d / 32 * 32, n = d - d32;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, a, b, c, e;
    int64_t i = 0;
    for (; i + 64 <= d32; i += 64) {
        sb__ld32(xr, i, bf16, true, &a, &b);
        sb__ld32(xr, i + 32, bf16, true, &c, &e);
        s0 = _mm512_fmadd_ps(a, a, s0);
        s1 = _mm512_fmadd_ps(b, b, s1);
        s2 = _mm512_fmadd_ps(c, c, s2);
        s3 = _mm512_fmadd_ps(e, e, s3);
    }
    if (i < d32) {
        sb__ld32(xr, i, bf16, true, &a, &b);
        s0 = _mm512_fmadd_ps(a, a, s0);
        s1 = _mm512_fmadd_ps(b, b, s1);
    }
    if (n) {
        sb__ld32_tail(xr, d32, n, bf16, &a, &b);
        s2 = _mm512_fmadd_ps(a, a, s2);
        s3 = _mm512_fmadd_ps(b, b, s3);
    }
    const float ss = _mm512_reduce_add_ps(
        _mm512_add_ps(_mm512_add_ps(s0, s2), _mm512_add_ps(s1, s3)));
    const float rs = 1.0f / sqrtf(ss / (float)d + (float)SB_OPS_EPS);
    const __m512 vr = _mm512_set1_ps(rs);
    __m512 ga, gb;
    for (i = 0; i < d32; i += 32) {
        if (pf)
            sb__pf32(xr, i, S, d * S, 0);
        if (pfy)
            sb__pf32(yr, i, S, d * S, 1);
        sb__ld32(xr, i, bf16, true, &a, &b);
        sb__ld32(g, i, bf16, true, &ga, &gb);
        sb__st32(yr, i, _mm512_mul_ps(_mm512_mul_ps(a, vr), ga),
                 _mm512_mul_ps(_mm512_mul_ps(b, vr), gb), bf16, true, SB__BF_NE,
                 nt);
    }
    if (n) {
        sb__ld32_tail(xr, d32, n, bf16, &a, &b);
        sb__ld32_tail(g, d32, n, bf16, &ga, &gb);
        sb__st32_tail(yr, d32, n, _mm512_mul_ps(_mm512_mul_ps(a, vr), ga),
                      _mm512_mul_ps(_mm512_mul_ps(b, vr), gb), bf16, SB__BF_NE);
    }
}

/* One rope row, head by head: natural order (the tables are fp32). */
static inline __attribute__((always_inline)) void
sb__rope_row512(const void *xr, const float *c, const float *sn, void *yr,
                int64_t d, int hd, bool pf, bool pfy, bool nt, bool bf16)
{
    const int S = bf16 ? 2 : 4, h = hd / 2, h32 = h / 32 * 32, n = h - h32;
    for (int64_t hb = 0; hb < d; hb += hd) {
        const char *lo = (const char *)xr + hb * S, *hi = lo + (int64_t)h * S;
        char *ylo = (char *)yr + hb * S, *yhi = ylo + (int64_t)h * S;
        __m512 l0, l1, u0, u1, c0, c1, s0, s1;
        for (int i = 0; i < h32; i += 32) {
            if (pf) {
                sb__pf32(lo, i, S, d * S, 0);
                sb__pf32(hi, i, S, d * S, 0);
            }
            if (pfy) {
                sb__pf32(ylo, i, S, d * S, 1);
                sb__pf32(yhi, i, S, d * S, 1);
            }
            sb__ld32(lo, i, bf16, false, &l0, &l1);
            sb__ld32(hi, i, bf16, false, &u0, &u1);
            sb__ld32(c, i, false, false, &c0, &c1);
            sb__ld32(sn, i, false, false, &s0, &s1);
            sb__st32(ylo, i, _mm512_fmsub_ps(l0, c0, _mm512_mul_ps(u0, s0)),
                     _mm512_fmsub_ps(l1, c1, _mm512_mul_ps(u1, s1)), bf16,
                     false, SB__BF_NE, nt);
            sb__st32(yhi, i, _mm512_fmadd_ps(u0, c0, _mm512_mul_ps(l0, s0)),
                     _mm512_fmadd_ps(u1, c1, _mm512_mul_ps(l1, s1)), bf16,
                     false, SB__BF_NE, nt);
        }
        if (n) {
            sb__ld32_tail(lo, h32, n, bf16, &l0, &l1);
            sb__ld32_tail(hi, h32, n, bf16, &u0, &u1);
            sb__ld32_tail(c, h32, n, false, &c0, &c1);
            sb__ld32_tail(sn, h32, n, false, &s0, &s1);
            sb__st32_tail(ylo, h32, n,
                          _mm512_fmsub_ps(l0, c0, _mm512_mul_ps(u0, s0)),
                          _mm512_fmsub_ps(l1, c1, _mm512_mul_ps(u1, s1)), bf16,
                          SB__BF_NE);
            sb__st32_tail(yhi, h32, n,
                          _mm512_fmadd_ps(u0, c0, _mm512_mul_ps(l0, s0)),
                          _mm512_fmadd_ps(u1, c1, _mm512_mul_ps(l1, s1)), bf16,
                          SB__BF_NE);
        }
    }
}

/* rmsnorm and rope: OpenMP over rows, each row's flags fixed (the row
 * function inlines with them, and bf16, as constants); a row is streamed
 * out only if it starts on a 64-byte boundary (and, for rope, every half
 * head does: NTCOND). */
#define SB__ROWS512(TY, NTCOND, ROW)                                           \
    const int64_t T = s->tokens, d = s->d;                                     \
    _Pragma("omp parallel")                                                    \
    {                                                                          \
        _Pragma("omp for schedule(runtime)") for (int64_t t = 0; t < T; t++)   \
        {                                                                      \
            TY *yr = y + t * d;                                                \
            const bool nt = s->nt && ((uintptr_t)yr & 63) == 0 && (NTCOND);    \
            const bool pf = t + 1 < T, pfy = pf && !s->nt;                     \
            ROW;                                                               \
        }                                                                      \
        _mm_sfence();                                                          \
    }

static void sb__rmsnorm_512_F32(const sb_ops_shape *s, const float *x,
                                const float *g, float *y)
{
    SB__ROWS512(float, true,
                sb__rmsnorm_row512(x + t * d, g, yr, d, pf, pfy, nt, false))
}
static void sb__rmsnorm_512_BF16(const sb_ops_shape *s, const uint16_t *x,
                                 const uint16_t *g, uint16_t *y)
{
    SB__ROWS512(uint16_t, true,
                sb__rmsnorm_row512(x + t * d, g, yr, d, pf, pfy, nt, true))
}
static void sb__rope_512_F32(const sb_ops_shape *s, const float *x,
                             const float *ct, const float *st, float *y)
{
    const int h = s->head_dim / 2;
    SB__ROWS512(float, h * 4 % 64 == 0,
                sb__rope_row512(x + t * d, ct + t * h, st + t * h, yr, d,
                                s->head_dim, pf, pfy, nt, false))
}
static void sb__rope_512_BF16(const sb_ops_shape *s, const uint16_t *x,
                              const float *ct, const float *st, uint16_t *y)
{
    const int h = s->head_dim / 2;
    SB__ROWS512(uint16_t, h * 2 % 64 == 0,
                sb__rope_row512(x + t * d, ct + t * h, st + t * h, yr, d,
                                s->head_dim, pf, pfy, nt, true))
}

/* swiglu in fp32: 64 elements a step, four exponentials stage by stage
 * (sb_vexp2_x4_512), a / (1 + e^-a) by vrcp14ps and one Newton step;
 * then 16 at a time, the last masked. */
static inline __attribute__((always_inline)) __m512 sb__silu_mul16(__m512 a,
                                                                   __m512 b)
{
    const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
    __m512 e = _mm512_add_ps(
        one, sb_vexp2_512(_mm512_mul_ps(a, _mm512_set1_ps(-SB__LOG2E))));
    __m512 r = _mm512_rcp14_ps(e);
    r = _mm512_mul_ps(r, _mm512_fnmadd_ps(e, r, two));
    return _mm512_mul_ps(_mm512_mul_ps(a, r), b);
}

static void sb__swiglu_512_F32(const sb_ops_shape *s, const float *x, float *y)
{
    const int64_t T = s->tokens, d = s->d;
    const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f),
                 nl2e = _mm512_set1_ps(-SB__LOG2E);
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const float *ar = x + 2 * t * d, *br = ar + d;
            float *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 63) == 0;
            const bool pf = t + 1 < T, pfy = pf && !s->nt;
            int64_t i = 0;
            for (; i + 64 <= d; i += 64) {
                if (pf) {
                    sb__pf32(ar, i, 4, 2 * d * 4, 0);
                    sb__pf32(ar, i + 32, 4, 2 * d * 4, 0);
                    sb__pf32(br, i, 4, 2 * d * 4, 0);
                    sb__pf32(br, i + 32, 4, 2 * d * 4, 0);
                }
                if (pfy) {
                    sb__pf32(yr, i, 4, d * 4, 1);
                    sb__pf32(yr, i + 32, 4, d * 4, 1);
                }
                __m512 av[4], bv[4], ev[4], r[4];
                for (int k = 0; k < 4; k++) {
                    av[k] = _mm512_loadu_ps(ar + i + 16 * k);
                    bv[k] = _mm512_loadu_ps(br + i + 16 * k);
                    ev[k] = _mm512_mul_ps(av[k], nl2e);
                }
                sb_vexp2_x4_512(ev);
                for (int k = 0; k < 4; k++) {
                    ev[k] = _mm512_add_ps(one, ev[k]);
                    r[k] = _mm512_rcp14_ps(ev[k]);
                }
                for (int k = 0; k < 4; k++)
                    r[k] =
                        _mm512_mul_ps(r[k], _mm512_fnmadd_ps(ev[k], r[k], two));
                for (int k = 0; k < 4; k++)
                    sb__st64b(yr + i + 16 * k,
                              _mm512_castps_si512(_mm512_mul_ps(
                                  _mm512_mul_ps(av[k], r[k]), bv[k])),
                              nt);
            }
            for (; i < d; i += 16) {
                const __mmask16 m = sb__lanes16(d - i);
                _mm512_mask_storeu_ps(
                    yr + i, m,
                    sb__silu_mul16(_mm512_maskz_loadu_ps(m, ar + i),
                                   _mm512_maskz_loadu_ps(m, br + i)));
            }
        }
        _mm_sfence();
    }
}

/* swiglu with bf16 inputs: silu from the table (sb__silu_tab, as the AVX2
 * kernel), 32 elements a step, the looked-up values in the lane order of
 * the up values (one load, two unpacks), stored rounded exactly as
 * sb_bf16_from_f32 (SB__BF_EXACT, see the section's comment). `c` holds
 * the 32 gate codes; m masks the store (a row's tail). */
static inline __attribute__((always_inline)) void
sb__swiglu32_bf16(const uint16_t *c, __m512i up, uint16_t *yo, __mmask32 m,
                  bool full, bool nt)
{
#define SB__T(k) sb__silu_tab[c[k]]
    const __m512 fa = _mm512_setr_ps(
        SB__T(0), SB__T(1), SB__T(2), SB__T(3), SB__T(8), SB__T(9), SB__T(10),
        SB__T(11), SB__T(16), SB__T(17), SB__T(18), SB__T(19), SB__T(24),
        SB__T(25), SB__T(26), SB__T(27));
    const __m512 fb = _mm512_setr_ps(
        SB__T(4), SB__T(5), SB__T(6), SB__T(7), SB__T(12), SB__T(13), SB__T(14),
        SB__T(15), SB__T(20), SB__T(21), SB__T(22), SB__T(23), SB__T(28),
        SB__T(29), SB__T(30), SB__T(31));
#undef SB__T
    __m512 ba, bb;
    sb__unpack32p_bf16(up, &ba, &bb);
    const __m512i v = sb__pack32_bf16(
        _mm512_mul_ps(fa, ba), _mm512_mul_ps(fb, bb), true, SB__BF_EXACT);
    if (full)
        sb__st64b(yo, v, nt);
    else
        _mm512_mask_storeu_epi16(yo, m, v);
}

/* One row, as sb__swiglu_row_bf16 (the next row's lines prefetched
 * pf_bytes on, its own again when there is no next; `nt` and `pfy`
 * constants at each call), the tail's codes copied to a zero-padded
 * buffer so its lookups stay in the row. */
static inline __attribute__((always_inline)) void
sb__swiglu_row_bf16_512(const uint16_t *ar, const uint16_t *br, uint16_t *yr,
                        int64_t d, int64_t pf_bytes, bool pfy, bool nt)
{
    int64_t i = 0;
    for (; i + 32 <= d; i += 32) {
        SB__PF_NEXT(ar + i, pf_bytes, 0);
        SB__PF_NEXT(br + i, pf_bytes, 0);
        if (pfy)
            SB__PF_NEXT(yr + i, pf_bytes / 2, 1);
        sb__swiglu32_bf16(ar + i, _mm512_loadu_si512(br + i), yr + i,
                          0xffffffffu, true, nt);
    }
    if (i < d) {
        uint16_t cb[32] = {0};
        const __mmask32 m = sb__lanes32(d - i);
        memcpy(cb, ar + i, sizeof *cb * (size_t)(d - i));
        sb__swiglu32_bf16(cb, _mm512_maskz_loadu_epi16(m, br + i), yr + i, m,
                          false, false);
    }
}

static void sb__swiglu_512_BF16(const sb_ops_shape *s, const uint16_t *x,
                                uint16_t *y)
{
    sb__silu_ready();
    const int64_t T = s->tokens, d = s->d;
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const uint16_t *ar = x + 2 * t * d, *br = ar + d;
            uint16_t *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 63) == 0;
            const bool pf = t + 1 < T;
            const int64_t pf_bytes = pf ? 2 * d * (int64_t)sizeof *ar : 0;
            const bool pfy = pf && !s->nt;
            if (nt)
                sb__swiglu_row_bf16_512(ar, br, yr, d, pf_bytes, false, true);
            else if (pfy)
                sb__swiglu_row_bf16_512(ar, br, yr, d, pf_bytes, true, false);
            else
                sb__swiglu_row_bf16_512(ar, br, yr, d, pf_bytes, false, false);
        }
        _mm_sfence();
    }
}

/* One step of both softmax kernels' exponential pass, 16 values: as
 * sb__softmax_exp8. */
static inline __attribute__((always_inline)) __m512
sb__softmax_exp16_512(__m512 x, __m512 vr, __m512 vlo, __m512 vmx, bool clamp,
                      bool diff, bool bf16)
{
    if (diff)
        x = _mm512_sub_ps(x, vmx);
    if (clamp)
        x = _mm512_max_ps(vlo, x);
    return bf16 ? sb_vexp2_bf16_512(x, vr) : sb_vexp2_fused512(x, vr);
}

/* The fp32 softmax's exponential pass over a row, as sb__softmax_exp_f32:
 * 64 elements a step, then 16 at a time, the last masked with -inf in
 * the lanes beyond the row (raised to vlo, their 2^t is exactly 0, so
 * they add nothing to the sum); returns the 16 lanes of the sum. */
static inline __attribute__((always_inline)) __m512
sb__softmax_exp_f32_512(const float *xr, float *e, int64_t d, __m512 vr,
                        __m512 vlo, __m512 vmx, bool diff, const char *px,
                        char *py, bool pf, bool pfy)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, v[4];
    int64_t i = 0;
    for (; i + 64 <= d; i += 64) {
        if (pf) {
            sb__pf32(px, i, 4, 0, 0);
            sb__pf32(px, i + 32, 4, 0, 0);
        }
        if (pfy) {
            sb__pf32(py, i, 4, 0, 1);
            sb__pf32(py, i + 32, 4, 0, 1);
        }
        for (int k = 0; k < 4; k++) {
            v[k] = sb__softmax_exp16_512(_mm512_loadu_ps(xr + i + 16 * k), vr,
                                         vlo, vmx, true, diff, false);
            _mm512_storeu_ps(e + i + 16 * k, v[k]);
        }
        s0 = _mm512_add_ps(s0, _mm512_add_ps(v[0], v[2]));
        s1 = _mm512_add_ps(s1, _mm512_add_ps(v[1], v[3]));
    }
    for (; i < d; i += 16) {
        const __mmask16 m = sb__lanes16(d - i);
        if (pf)
            __builtin_prefetch(px + 4 * i, 0, 3);
        if (pfy)
            __builtin_prefetch(py + 4 * i, 1, 3);
        v[0] = sb__softmax_exp16_512(
            _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), m, xr + i), vr, vlo,
            vmx, true, diff, false);
        _mm512_mask_storeu_ps(e + i, m, v[0]);
        s0 = _mm512_add_ps(s0, v[0]);
    }
    return _mm512_add_ps(s0, s1);
}

static void sb__softmax_512_F32(const sb_ops_shape *s, const float *x, float *y,
                                float *scratch)
{
    const int64_t T = s->tokens, d = s->d, d32 = d / 32 * 32;
    const size_t stride = sb__scratch_stride(s, NULL);
#pragma omp parallel
    {
        float *e =
            (float *)((char *)scratch + stride * (size_t)omp_get_thread_num());
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const float *xr = x + t * d;
            float *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 63) == 0;
            const __m512 ninf = _mm512_set1_ps(-INFINITY);
            __m512 m0 = ninf, m1 = m0, a, b;
            __mmask16 un = 0; /* NaN seen (vmaxps drops them) */
            int64_t i = 0;
            for (; i < d32; i += 32) {
                a = _mm512_loadu_ps(xr + i);
                b = _mm512_loadu_ps(xr + i + 16);
                m0 = _mm512_max_ps(m0, a);
                m1 = _mm512_max_ps(m1, b);
                un |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
            }
            for (; i < d; i += 16) {
                const __mmask16 m = sb__lanes16(d - i);
                a = _mm512_mask_loadu_ps(ninf, m, xr + i);
                m0 = _mm512_max_ps(m0, a);
                un |= _mm512_mask_cmp_ps_mask(m, a, a, _CMP_UNORD_Q);
            }
            if (un) { /* a NaN anywhere makes every output NaN */
                for (int64_t k = 0; k < d; k++)
                    yr[k] = NAN;
                continue;
            }
            /* no NaN in the lanes: the reduction's order cannot matter */
            const float mx = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
            const char *px = (const char *)(xr + d);
            char *py = (char *)(yr + d);
            const bool pf = t + 1 < T, pfy = pf && !s->nt;
            bool diff;
            const float r = sb__row_r(mx, &diff);
            const __m512 vr = sb_vexp2_fused_vr512(r),
                         vlo = _mm512_set1_ps(sb_vexp2_fused_lo(r)),
                         vmx = _mm512_set1_ps(mx);
            const float sum = _mm512_reduce_add_ps(
                diff ? sb__softmax_exp_f32_512(xr, e, d, vr, vlo, vmx, true, px,
                                               py, pf, pfy)
                     : sb__softmax_exp_f32_512(xr, e, d, vr, vlo, vmx, false,
                                               px, py, pf, pfy));
            const __m512 vi = _mm512_set1_ps(1.0f / sum);
            for (i = 0; i < d32; i += 32)
                sb__st32(yr, i, _mm512_mul_ps(_mm512_loadu_ps(e + i), vi),
                         _mm512_mul_ps(_mm512_loadu_ps(e + i + 16), vi), false,
                         false, SB__BF_NE, nt);
            if (i < d)
                sb__st32_tail(
                    yr, i, d - i,
                    _mm512_mul_ps(
                        _mm512_maskz_loadu_ps(sb__lanes16(d - i), e + i), vi),
                    _mm512_mul_ps(_mm512_maskz_loadu_ps(sb__lanes16(d - i - 16),
                                                        e + i + 16),
                                  vi),
                    false, SB__BF_NE);
        }
        _mm_sfence();
    }
}

/* ---- the bf16 softmax with AVX-512: sb__softmax_avx2_BF16's algorithm
 * (the guessed max, the exponentials against it with the 16-bit checks
 * of the codes, the clamp only where a row needs it), 64 elements a step,
 * the tail (d % 32) one masked step in natural order: its codes' checks
 * masked (vpmaxsw/vpmaxuw with a mask), its exponentials zeroed beyond
 * the row. The scratch row holds the full steps in lane order and the
 * tail in natural order; the store pass reads them back the same way. */
static inline __attribute__((always_inline)) void
sb__softmax_exp32_bf16_512(__m512i c, float *e, __m512 vr, __m512 vlo,
                           __m512 vmx, bool clamp, bool diff, __m512 *a,
                           __m512 *b)
{
    __m512 v[2];
    sb__unpack32p_bf16(c, &v[0], &v[1]);
    for (int k = 0; k < 2; k++) {
        v[k] = sb__softmax_exp16_512(v[k], vr, vlo, vmx, clamp, diff, true);
        _mm512_storeu_ps(e + 16 * k, v[k]);
    }
    *a = v[0];
    *b = v[1];
}

/* As sb__softmax_exp_bf16, over the whole row (tail included). */
static inline __attribute__((always_inline)) float
sb__softmax_exp_bf16_512(const uint16_t *xr, float *e, int64_t d, __m512 vr,
                         __m512 vlo, __m512 vmx, bool clamp, bool diff,
                         const char *px, char *py, bool pf, bool pfy,
                         int16_t *hi16, uint16_t *lo16)
{
    const int64_t d32 = d / 32 * 32;
    __m512 s = _mm512_setzero_ps(), a, b, c, dd;
    __m512i hi = _mm512_set1_epi16(INT16_MIN), lo = _mm512_setzero_si512();
    int64_t i = 0;
    for (; i + 64 <= d32; i += 64) {
        if (pf) {
            sb__pf32(px, i, 2, 0, 0);
            sb__pf32(px, i + 32, 2, 0, 0);
        }
        if (pfy) {
            sb__pf32(py, i, 2, 0, 1);
            sb__pf32(py, i + 32, 2, 0, 1);
        }
        const __m512i c0 = _mm512_loadu_si512(xr + i);
        const __m512i c1 = _mm512_loadu_si512(xr + i + 32);
        hi = _mm512_max_epi16(hi, _mm512_max_epi16(c0, c1));
        if (!clamp)
            lo = _mm512_max_epu16(lo, _mm512_max_epu16(c0, c1));
        sb__softmax_exp32_bf16_512(c0, e + i, vr, vlo, vmx, clamp, diff, &a,
                                   &b);
        sb__softmax_exp32_bf16_512(c1, e + i + 32, vr, vlo, vmx, clamp, diff,
                                   &c, &dd);
        s = _mm512_add_ps(
            s, _mm512_add_ps(_mm512_add_ps(a, c), _mm512_add_ps(b, dd)));
    }
    if (i < d32) {
        if (pf)
            sb__pf32(px, i, 2, 0, 0);
        if (pfy)
            sb__pf32(py, i, 2, 0, 1);
        const __m512i c0 = _mm512_loadu_si512(xr + i);
        hi = _mm512_max_epi16(hi, c0);
        if (!clamp)
            lo = _mm512_max_epu16(lo, c0);
        sb__softmax_exp32_bf16_512(c0, e + i, vr, vlo, vmx, clamp, diff, &a,
                                   &b);
        s = _mm512_add_ps(s, _mm512_add_ps(a, b));
        i += 32;
    }
    if (i < d) {
        const __mmask32 m = sb__lanes32(d - i);
        const __mmask16 ma = (__mmask16)m, mb = (__mmask16)(m >> 16);
        if (pf)
            sb__pf32(px, i, 2, 0, 0);
        if (pfy)
            sb__pf32(py, i, 2, 0, 1);
        const __m512i c0 = _mm512_maskz_loadu_epi16(m, xr + i);
        hi = _mm512_mask_max_epi16(hi, m, hi, c0);
        if (!clamp)
            lo = _mm512_mask_max_epu16(lo, m, lo, c0);
        sb__unpack32n_bf16(c0, &a, &b);
        a = _mm512_maskz_mov_ps(
            ma, sb__softmax_exp16_512(a, vr, vlo, vmx, clamp, diff, true));
        b = _mm512_maskz_mov_ps(
            mb, sb__softmax_exp16_512(b, vr, vlo, vmx, clamp, diff, true));
        _mm512_mask_storeu_ps(e + i, ma, a);
        _mm512_mask_storeu_ps(e + i + 16, mb, b);
        s = _mm512_add_ps(s, _mm512_add_ps(a, b));
    }
    int16_t hl[16];
    uint16_t ll[16];
    _mm256_storeu_si256((__m256i *)hl,
                        _mm256_max_epi16(_mm512_castsi512_si256(hi),
                                         _mm512_extracti64x4_epi64(hi, 1)));
    _mm256_storeu_si256((__m256i *)ll,
                        _mm256_max_epu16(_mm512_castsi512_si256(lo),
                                         _mm512_extracti64x4_epi64(lo, 1)));
    *hi16 = INT16_MIN;
    *lo16 = 0;
    for (int k = 0; k < 16; k++) {
        *hi16 = hl[k] > *hi16 ? hl[k] : *hi16;
        *lo16 = ll[k] > *lo16 ? ll[k] : *lo16;
    }
    return _mm512_reduce_add_ps(s);
}

/* As sb__softmax_exp_row_bf16; *hi is the row's max if that is >= 0,
 * else -inf (a NaN if the row has a positive NaN). */
static float sb__softmax_exp_row_bf16_512(const uint16_t *xr, float *e,
                                          int64_t d, float mx, bool *clamp,
                                          const char *px, char *py, bool pf,
                                          bool pfy, float *hi)
{
    bool diff;
    const float r = sb__row_r(mx, &diff);
    const float xlo = sb_vexp2_fused_lo(r);
    const __m512 vr = sb_vexp2_fused_vr512(r), vlo = _mm512_set1_ps(xlo),
                 vmx = _mm512_set1_ps(mx);
    bool cl = *clamp || diff || !(xlo <= 0.0f);
    for (;;) {
        int16_t hc;
        uint16_t lc;
#define SB__EXP_PASS(CLAMP, DIFF)                                              \
    sb__softmax_exp_bf16_512(xr, e, d, vr, vlo, vmx, CLAMP, DIFF, px, py, pf,  \
                             pfy, &hc, &lc)
        const float sum = diff ? SB__EXP_PASS(true, true)
                          : cl ? SB__EXP_PASS(true, false)
                               : SB__EXP_PASS(false, false);
#undef SB__EXP_PASS
        *hi = hc >= 0 ? sb_bf16_to_f32((uint16_t)hc) : -INFINITY;
        const float lo = lc >= 0x8000 ? sb_bf16_to_f32(lc) : 0.0f;
        if (!cl && !(lo >= xlo)) {
            *clamp = cl = true;
            continue;
        }
        return sum;
    }
}

/* The max of a row of bf16 (NaNs left out). */
static float sb__softmax_max_bf16_512(const uint16_t *xr, int64_t d)
{
    const int64_t d32 = d / 32 * 32;
    __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0, m2 = m0, m3 = m0, a, b;
    int64_t i = 0;
    for (; i + 64 <= d32; i += 64) {
        sb__ld32(xr, i, true, true, &a, &b);
        m0 = _mm512_max_ps(m0, a);
        m1 = _mm512_max_ps(m1, b);
        sb__ld32(xr, i + 32, true, true, &a, &b);
        m2 = _mm512_max_ps(m2, a);
        m3 = _mm512_max_ps(m3, b);
    }
    if (i < d32) {
        sb__ld32(xr, i, true, true, &a, &b);
        m0 = _mm512_max_ps(m0, a);
        m1 = _mm512_max_ps(m1, b);
        i += 32;
    }
    if (i < d) { /* -inf (0xff80) beyond the row */
        sb__unpack32n_bf16(_mm512_mask_loadu_epi16(_mm512_set1_epi16(-128),
                                                   sb__lanes32(d - i), xr + i),
                           &a, &b);
        m2 = _mm512_max_ps(m2, a);
        m3 = _mm512_max_ps(m3, b);
    }
    return sb__hmax16(
        _mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

static void sb__softmax_512_BF16(const sb_ops_shape *s, const uint16_t *x,
                                 uint16_t *y, float *scratch)
{
    const int64_t T = s->tokens, d = s->d, d32 = d / 32 * 32;
    const size_t stride = sb__scratch_stride(s, NULL);
#pragma omp parallel
    {
        float *e =
            (float *)((char *)scratch + stride * (size_t)omp_get_thread_num());
        bool clamp = false;
#pragma omp for schedule(runtime)
        for (int64_t t = 0; t < T; t++) {
            const uint16_t *xr = x + t * d;
            uint16_t *yr = y + t * d;
            const bool nt = s->nt && ((uintptr_t)yr & 63) == 0;
            const char *px = (const char *)(xr + d);
            char *py = (char *)(yr + d);
            const bool pf = t + 1 < T, pfy = pf && !s->nt;
            /* the guess: the max of the first 32 values (see
             * sb__softmax_avx2_BF16) */
            float sum = NAN, mx = NAN, hi = NAN;
            bool done = false;
            if (d32 > 0) {
                __m512 a, b;
                sb__ld32(xr, 0, true, true, &a, &b);
                mx = sb__hmax16(_mm512_max_ps(a, b));
                if (mx >= -64.0f) {
                    sum = sb__softmax_exp_row_bf16_512(xr, e, d, mx, &clamp, px,
                                                       py, pf, pfy, &hi);
                    done = hi <= mx + 64.0f;
                }
            }
            if (!done) {
                mx = d32 > 0 && mx >= -64.0f ? hi
                                             : sb__softmax_max_bf16_512(xr, d);
                sum = sb__softmax_exp_row_bf16_512(xr, e, d, mx, &clamp, px, py,
                                                   pf, pfy, &hi);
            }
            if (sum != sum) { /* a NaN or +inf in the row: all NaN */
                for (int64_t k = 0; k < d; k++)
                    yr[k] = sb_bf16_from_f32(NAN);
                continue;
            }
            const __m512 vi = _mm512_set1_ps(1.0f / sum);
            int64_t i = 0;
            for (; i < d32; i += 32)
                sb__st32(yr, i, _mm512_mul_ps(_mm512_loadu_ps(e + i), vi),
                         _mm512_mul_ps(_mm512_loadu_ps(e + i + 16), vi), true,
                         true, SB__BF_UNIT, nt);
            if (i < d)
                sb__st32_tail(
                    yr, i, d - i,
                    _mm512_mul_ps(
                        _mm512_maskz_loadu_ps(sb__lanes16(d - i), e + i), vi),
                    _mm512_mul_ps(_mm512_maskz_loadu_ps(sb__lanes16(d - i - 16),
                                                        e + i + 16),
                                  vi),
                    true, SB__BF_UNIT);
        }
        _mm_sfence();
    }
}
#endif

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

void sb_ops_cpu_run(const sb_ops_shape *s, const void *x, const void *g,
                    const float *cos_t, const float *sin_t, void *y,
                    float *scratch)
{
    /* every kernel's row loop is schedule(runtime): this one */
    if (s->chunk > 0)
        omp_set_schedule(omp_sched_dynamic, (int)s->chunk);
    else
        omp_set_schedule(omp_sched_static, 0);
#if defined(SB__OPS_AVX512)
    if (!s->bf16) {
        switch (s->op) {
        case SB_OP_RMSNORM:
            sb__rmsnorm_512_F32(s, x, g, y);
            break;
        case SB_OP_SWIGLU:
            sb__swiglu_512_F32(s, x, y);
            break;
        case SB_OP_ROPE:
            sb__rope_512_F32(s, x, cos_t, sin_t, y);
            break;
        case SB_OP_SOFTMAX:
            sb__softmax_512_F32(s, x, y, scratch);
            break;
        }
    } else {
        switch (s->op) {
        case SB_OP_RMSNORM:
            sb__rmsnorm_512_BF16(s, x, g, y);
            break;
        case SB_OP_SWIGLU:
            sb__swiglu_512_BF16(s, x, y);
            break;
        case SB_OP_ROPE:
            sb__rope_512_BF16(s, x, cos_t, sin_t, y);
            break;
        case SB_OP_SOFTMAX:
            sb__softmax_512_BF16(s, x, y, scratch);
            break;
        }
    }
#elif defined(SB__OPS_AVX2)
    if (!s->bf16) {
        switch (s->op) {
        case SB_OP_RMSNORM:
            sb__rmsnorm_avx2_F32(s, x, g, y);
            break;
        case SB_OP_SWIGLU:
            sb__swiglu_avx2_F32(s, x, y);
            break;
        case SB_OP_ROPE:
            sb__rope_avx2_F32(s, x, cos_t, sin_t, y);
            break;
        case SB_OP_SOFTMAX:
            sb__softmax_avx2_F32(s, x, y, scratch);
            break;
        }
    } else {
        switch (s->op) {
        case SB_OP_RMSNORM:
            sb__rmsnorm_avx2_BF16(s, x, g, y);
            break;
        case SB_OP_SWIGLU:
            sb__swiglu_lut_bf16(s, x, y);
            break;
        case SB_OP_ROPE:
            sb__rope_avx2_BF16(s, x, cos_t, sin_t, y);
            break;
        case SB_OP_SOFTMAX:
            sb__softmax_avx2_BF16(s, x, y, scratch);
            break;
        }
    }
#else
    if (!s->bf16) {
        switch (s->op) {
        case SB_OP_RMSNORM:
            sb__rmsnorm_f32(s, x, g, y, scratch);
            break;
        case SB_OP_SWIGLU:
            sb__swiglu_f32(s, x, y, scratch);
            break;
        case SB_OP_ROPE:
            sb__rope_f32(s, x, cos_t, sin_t, y, scratch);
            break;
        case SB_OP_SOFTMAX:
            sb__softmax_f32(s, x, y, scratch);
            break;
        }
    } else {
        switch (s->op) {
        case SB_OP_RMSNORM:
            sb__rmsnorm_bf16(s, x, g, y, scratch);
            break;
        case SB_OP_SWIGLU:
            sb__swiglu_bf16(s, x, y, scratch);
            break;
        case SB_OP_ROPE:
            sb__rope_bf16(s, x, cos_t, sin_t, y, scratch);
            break;
        case SB_OP_SOFTMAX:
            sb__softmax_bf16(s, x, y, scratch);
            break;
        }
    }
#endif
}

/* ---- benchmark plumbing
 * --------------------------------------------------------- */

typedef struct sb_ops_state {
    sb_ops_shape s;
    void *x, *g, *y;
    float *cos_t, *sin_t, *scratch;
} sb_ops_state;

#define SB__OPS_COMMON_PARAMS                                                  \
    {"tokens",                                                                 \
     SB_P_INT,                                                                 \
     "256",                                                                    \
     1,                                                                        \
     SB_OPS_MAX_TOKENS,                                                        \
     NULL,                                                                     \
     "rows of the [tokens, d] matrix"},                                        \
        {"d", SB_P_INT, "4096", 1, SB_OPS_MAX_D, NULL, "row width"},           \
        {"dtype",                                                              \
         SB_P_STR,                                                             \
         "fp32",                                                               \
         0,                                                                    \
         0,                                                                    \
         "fp32|bf16",                                                          \
         "storage type (arithmetic is fp32)"},                                 \
        {"nt",                                                                 \
         SB_P_STR,                                                             \
         "auto",                                                               \
         0,                                                                    \
         0,                                                                    \
         "auto|on|off",                                                        \
         "non-temporal stores of the output; auto: on when the output "        \
         "exceeds the last-level cache"},                                      \
    {                                                                          \
        "schedule", SB_P_STR, "auto", 0, 0, "auto|static|dynamic",             \
            "rows to threads: one block each (static, as first touched) or "   \
            "chunks of up to 128 (dynamic); auto: dynamic on one NUMA node"    \
    }

static const sb_param_def sb__ops_params[] = {
    SB__OPS_COMMON_PARAMS, {NULL, 0, NULL, 0, 0, NULL, NULL}};
static const sb_param_def sb__rope_params[] = {
    SB__OPS_COMMON_PARAMS,
    {"head_dim", SB_P_INT, "128", 2, 65536, NULL,
     "head size (even, divides d)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* Rows are handed out in chunks of up to 128 (a thread that finishes its
 * chunk takes the next) where the machine has one NUMA node (schedule=auto)
 * or when asked (schedule=dynamic): on a shared host one core is often
 * slowed while the other is not, and with one block of rows per thread the
 * fast one then waits for the slow one at the end. At least 8 chunks per
 * thread, so small shapes still spread. On several NUMA nodes the static
 * schedule keeps each thread on the rows it touched first (sb_ops_cpu_fill),
 * in its own node's memory. */
int64_t sb_ops_cpu_chunk(int64_t tokens, bool dynamic)
{
    if (!dynamic && sb_numa_nodes() != 1)
        return 0;
    int64_t c = tokens / (8 * (int64_t)omp_get_max_threads());
    return c < 1 ? 1 : c > 128 ? 128 : c;
}

static void sb__ops_shape(const sb_params *p, sb_op_kind op, sb_ops_shape *s)
{
    memset(s, 0, sizeof *s);
    s->op = op;
    s->tokens = sb_p_int(p, "tokens");
    s->d = sb_p_int(p, "d");
    s->bf16 = strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
    s->head_dim = op == SB_OP_ROPE ? (int)sb_p_int(p, "head_dim") : 2;
    const char *nt = sb_p_str(p, "nt");
    double out = sb_ops_elem_bytes(s) * (double)sb_ops_out_elems(s);
    double llc = sb_llc_bytes();
    s->nt = strcmp(nt, "on") == 0 ||
            (strcmp(nt, "auto") == 0 && llc > 0 && out > llc);
    const char *sched = sb_p_str(p, "schedule");
    s->chunk = strcmp(sched, "static") == 0
                   ? 0
                   : sb_ops_cpu_chunk(s->tokens, strcmp(sched, "dynamic") == 0);
}

static double sb__ops_footprint_shape(const sb_ops_shape *s)
{
    double S = sb_ops_elem_bytes(s);
    return S * ((double)sb_ops_in_elems(s) + (double)sb_ops_out_elems(s) +
                (double)s->d) +
           4.0 * (double)s->tokens * s->head_dim +
           4.0 * (double)s->d * omp_get_max_threads();
}

static void sb__ops_teardown(void *state)
{
    sb_ops_state *st = state;
    if (!st)
        return;
    sb_free_aligned(st->x);
    sb_free_aligned(st->g);
    sb_free_aligned(st->y);
    sb_free_aligned(st->cos_t);
    sb_free_aligned(st->sin_t);
    sb_free_aligned(st->scratch);
    free(st);
}

/* Inputs: uniform in [-2, 2) (rmsnorm weights in [0.5, 1.5)), rounded to
 * bf16 when stored so. Rows are touched first by the thread of the
 * kernel's static schedule. */
void sb_ops_cpu_fill(void *a, int64_t rows, int64_t width, bool bf16,
                     uint64_t seed, double lo, double hi)
{
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < rows; t++)
        for (int64_t i = 0; i < width; i++) {
            uint64_t st =
                seed * 0x2545f4914f6cdd1dULL + (uint64_t)(t * width + i);
            float v = (float)(lo + (hi - lo) * sb_rng_unif(&st));
            if (bf16)
                ((uint16_t *)a)[t * width + i] = sb_bf16_from_f32(v);
            else
                ((float *)a)[t * width + i] = v;
        }
}

int sb_ops_cpu_setup(const sb_ops_shape *s, void **state, sb_err *err)
{
    int rc = sb_ops_check(s, err);
    if (rc)
        return rc;
    sb_ops_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "ops: out of memory");
    st->s = *s;
    const size_t S = (size_t)sb_ops_elem_bytes(s);
    const int64_t T = s->tokens, d = s->d;
    const int64_t in_w = sb_ops_in_elems(s) / T;
    st->x = sb_alloc_aligned(S * (size_t)sb_ops_in_elems(s));
    st->y = sb_alloc_aligned(S * (size_t)sb_ops_out_elems(s));
    st->g = sb_alloc_aligned(S * (size_t)d);
    int fail = !st->x || !st->y || !st->g;
    if (s->op == SB_OP_ROPE) {
        size_t tb = sizeof(float) * (size_t)T * (size_t)(s->head_dim / 2);
        st->cos_t = sb_alloc_aligned(tb);
        st->sin_t = sb_alloc_aligned(tb);
        fail |= !st->cos_t || !st->sin_t;
    }
    if (sb_ops_cpu_scratch(s) > 0) {
        st->scratch = sb_alloc_aligned(sb_ops_cpu_scratch(s));
        fail |= !st->scratch;
    }
#ifdef SB__OPS_AVX2
    if (s->op == SB_OP_SWIGLU && s->bf16)
        sb__silu_ready();
#endif
    if (fail) {
        sb__ops_teardown(st);
        return sb_fail(err, SB_ENOMEM,
                       "could not allocate the buffers of this point");
    }
    sb_ops_cpu_fill(st->x, T, in_w, s->bf16, 11, -2.0, 2.0);
    /* the output too, so its pages are placed before the timed runs */
    sb_ops_cpu_fill(st->y, T, d, s->bf16, 12, -1.0, 1.0);
    sb_ops_cpu_fill(st->g, 1, d, s->bf16, 13, 0.5, 1.5);
    if (s->op == SB_OP_ROPE)
        sb_ops_rope_tables(s, st->cos_t, st->sin_t);
    *state = st;
    return 0;
}

void sb_ops_cpu_state_buffers(void *state, void **x, void **g, void **y,
                              float **cos_t, float **sin_t)
{
    sb_ops_state *st = state;
    *x = st->x;
    *g = st->g;
    *y = st->y;
    *cos_t = st->cos_t;
    *sin_t = st->sin_t;
}

void sb_ops_cpu_free(void *state)
{
    sb__ops_teardown(state);
}

static void sb__ops_run(void *state, uint64_t iters)
{
    sb_ops_state *st = state;
    for (uint64_t it = 0; it < iters; it++) {
        sb_ops_cpu_run(&st->s, st->x, st->g, st->cos_t, st->sin_t, st->y,
                       st->scratch);
        SB_KEEP(st->y);
    }
}

int64_t sb_ops_cpu_verify_state(void *state, char *why, int why_len)
{
    sb_ops_state *st = state;
    return sb_ops_verify(&st->s, st->x, st->g, st->y, why, why_len);
}

static int sb__ops_verify(void *state, sb_result *r)
{
    char why[320] = "";
    int64_t bad = sb_ops_cpu_verify_state(state, why, sizeof why);
    r->valid = bad == 0;
    if (bad)
        sb_result_note(r, "verification failed: %s", why);
    return 0;
}

static void sb__ops_report(void *state, const sb_point *pt, sb_ctx *ctx,
                           sb_result *r)
{
    sb_ops_state *st = state;
    (void)pt, (void)ctx;
    if (st->s.nt)
        sb_result_note(r, "output rows written with non-temporal stores "
                          "(no write-allocate read)");
}

/* Every op's hooks, on the shape decoded once per point (the op is the
 * definition's kind). */
static int sb__ops_decode(const sb_bench *b, const sb_params *p, void *shape,
                          sb_err *err)
{
    (void)err;
    sb__ops_shape(p, (sb_op_kind)b->kind, shape);
    return 0;
}

static int sb__ops_check_pt(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    return sb_ops_check(pt->shape, err);
}

static double sb__ops_fp(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    return sb__ops_footprint_shape(pt->shape);
}

static double sb__ops_flops_pt(const sb_point *pt)
{
    return sb_ops_flops(pt->shape);
}

static double sb__ops_bytes_pt(const sb_point *pt)
{
    return sb_ops_bytes(pt->shape);
}

static int sb__ops_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                         sb_err *err)
{
    (void)ctx;
    return sb_ops_cpu_setup(pt->shape, state, err);
}

static const sb_impl sb__ops_cpu = {
    .backend = "cpu",
    .setup = sb__ops_setup,
    .run = sb__ops_run,
    .verify = sb__ops_verify,
    .report = sb__ops_report,
    .teardown = sb__ops_teardown,
};

#define SB__OPS_BENCH(OPNAME, KIND, PARAMS, DESC)                              \
    const sb_bench sb_bench_ops_##OPNAME = {                                   \
        .name = "ops." #OPNAME,                                                \
        .area = "ops",                                                         \
        .desc = DESC,                                                          \
        .params = PARAMS,                                                      \
        .quick = "tokens=256 d=4096 dtype=fp32",                               \
        .full = "tokens=16384 d=4096 dtype=fp32,bf16",                         \
        .flags = SB_BF_QUICK | SB_BF_FULL,                                     \
        .roof = SB_ROOF_FP32,                                                  \
        .kind = KIND,                                                          \
        .decode = sb__ops_decode,                                              \
        .shape_size = sizeof(sb_ops_shape),                                    \
        .check = sb__ops_check_pt,                                             \
        .footprint = sb__ops_fp,                                               \
        .flops = sb__ops_flops_pt,                                             \
        .bytes = sb__ops_bytes_pt,                                             \
        .impls = (const sb_impl *const[]){&sb__ops_cpu, NULL},                 \
    };

SB__OPS_BENCH(rmsnorm, SB_OP_RMSNORM, sb__ops_params,
              "RMSNorm over rows: x / sqrt(mean(x^2) + eps) * g")
SB__OPS_BENCH(swiglu, SB_OP_SWIGLU, sb__ops_params,
              "SwiGLU: silu(gate) * up, input rows [gate | up]")
SB__OPS_BENCH(rope, SB_OP_ROPE, sb__rope_params,
              "rotary position embedding (rotate-half), fp32 cos/sin tables")
SB__OPS_BENCH(softmax, SB_OP_SOFTMAX, sb__ops_params,
              "row softmax: exp(x - max) / sum")
