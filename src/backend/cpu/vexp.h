/*
 * vexp.h — 2^t on 8 fp32 lanes with AVX2 and FMA, shared by the CPU
 * kernels that exponentiate in bulk (the attention softmax, the ops).
 *
 * t = n + f with n = round(t) by the 1.5·2^23 shifter (whose low mantissa
 * bits then hold n), |f| <= 1/2; 2^f by a degree-5 polynomial fitted for
 * relative error (1.2e-7 on [-1/2, 1/2]); 2^n built in the exponent bits
 * of the same shifted sum. t is clamped to [-127, 127]: at n = -127 the
 * exponent field is 0 and the result exactly 0 (2^t below 2^-126.5, which
 * only a denormal could hold, flushes to 0; e^-inf is 0). The clamp turns
 * a NaN into 0 or 2^127: callers that must propagate NaN check for it.
 * Overall about 2.5e-7 relative.
 */
#ifndef SOLBENCH_BACKEND_CPU_VEXP_H
#define SOLBENCH_BACKEND_CPU_VEXP_H

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#define SB_VEXP_SHIFTER 12582912.0f
/* log2(e) and ln(2) in fp32: a scalar tail that must match the vector
 * part's t = x·log2e + R takes the same SB_VEXP_LOG2E. */
#define SB_VEXP_LOG2E 1.44269504088896341f
#define SB_VEXP_LN2 0.6931471805599453f

/* 2^f on [-1/2, 1/2], coefficients from the constant term up: degree 5
 * (1.2e-7 relative, fp32 results) and degree 4 (2.6e-6, for results
 * stored in bf16; see sb_vexp2_bf16). */
static const float sb_vexp2_c5[6] = {1.0f,
                                     6.931470917e-1f,
                                     2.402224203e-1f,
                                     5.550582455e-2f,
                                     9.671516374e-3f,
                                     1.330882482e-3f};
static const float sb_vexp2_c4[5] = {
    9.999992847442627e-1f, 6.931218504905701e-1f, 2.40247443318367e-1f,
    5.5917747318744659e-2f, 9.57004725933075e-3f};

/* Horner's rule for the degree-deg polynomial c (a constant at each call,
 * so the loop unrolls into deg FMAs). */
static inline __m256 sb_vexp2_poly(__m256 f, const float *c, int deg)
{
    __m256 p =
        _mm256_fmadd_ps(_mm256_set1_ps(c[deg]), f, _mm256_set1_ps(c[deg - 1]));
    for (int j = deg - 2; j >= 0; j--)
        p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(c[j]));
    return p;
}

static inline __m256 sb_vexp2(__m256 t)
{
    const __m256 shifter = _mm256_set1_ps(SB_VEXP_SHIFTER);
    t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps(-127.0f)),
                      _mm256_set1_ps(127.0f));
    __m256 ti = _mm256_add_ps(t, shifter);
    __m256 f = _mm256_sub_ps(t, _mm256_sub_ps(ti, shifter));
    __m256 p = sb_vexp2_poly(f, sb_vexp2_c5, 5);
    __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_castps_si256(ti), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* sb_vexp2 on four vectors in place, stage by stage: the four dependency
 * chains advance together, so a loop of them keeps the units busy instead
 * of waiting on one chain of some 40 cycles at a time. */
static inline void sb_vexp2_x4(__m256 t[4])
{
    const float *c = sb_vexp2_c5;
    const __m256 shifter = _mm256_set1_ps(SB_VEXP_SHIFTER);
    __m256 ti[4], f[4], p[4];
    for (int k = 0; k < 4; k++) {
        t[k] = _mm256_min_ps(_mm256_max_ps(t[k], _mm256_set1_ps(-127.0f)),
                             _mm256_set1_ps(127.0f));
        ti[k] = _mm256_add_ps(t[k], shifter);
    }
    for (int k = 0; k < 4; k++) {
        f[k] = _mm256_sub_ps(t[k], _mm256_sub_ps(ti[k], shifter));
        p[k] = _mm256_set1_ps(c[5]);
    }
    for (int j = 4; j >= 0; j--)
        for (int k = 0; k < 4; k++)
            p[k] = _mm256_fmadd_ps(p[k], f[k], _mm256_set1_ps(c[j]));
    for (int k = 0; k < 4; k++)
        t[k] =
            _mm256_mul_ps(p[k], _mm256_castsi256_ps(_mm256_slli_epi32(
                                    _mm256_add_epi32(_mm256_castps_si256(ti[k]),
                                                     _mm256_set1_epi32(127)),
                                    23)));
}

/* 2^t with t = x·log2e + R for a softmax, whose rows may take any
 * constant R from x: here an integer-valued float, |R| < 2^22, near
 * -max·log2e, which the caller folds into vr = R + 1.5·2^23 + 127
 * (sb_vexp2_fused_vr):
 *   - the range reduction is two FMAs: ti = x·log2e + vr rounds to
 *     n + vr (n = round(t)) in one step, and f = x·log2e + (vr - ti) is
 *     t - n rounded once (vr - ti is exact: both lie in [2^23, 2^24)).
 *     The usual form (t, t + shifter, minus the shifter, t minus that)
 *     takes four, and rounds t first;
 *   - the exponent bias 127 rides in vr: ti's low bits are n + 127,
 *     shifted into the exponent field as they are (the rest of ti's bits
 *     shift out);
 *   - no clamp: n must lie in [-127, 127]. At n = -127 the exponent field
 *     is 0 and the result exactly 0; below, the field wraps. The caller
 *     knows its x are in range or raises x to sb_vexp2_fused_lo first
 *     (2^t exactly 0 there: e^-inf is 0, not 2^-126);
 *   - a NaN comes out NaN.
 * sb_vexp2_fused takes sb_vexp2's degree-5 fit (fp32 results);
 * sb_vexp2_bf16 a degree-4 fit (relative error 2.6e-6 on [-1/2, 1/2]),
 * for results stored in bf16. Softmax divides each value by the sum of
 * all of them, so a row's outputs carry the spread of the fit's error, up
 * to twice its maximum: 5.2e-6 there, against the bf16 verifier's 1e-4
 * beyond half an ulp. Degree 3 (7.5e-5, a spread of 1.5e-4) would not
 * fit: the verifier caught one value rounded the wrong way. */
static inline __m256 sb_vexp2_fused_vr(float r)
{
    return _mm256_set1_ps(r + (SB_VEXP_SHIFTER + 127.0f));
}
static inline float sb_vexp2_fused_lo(float r)
{
    return (-126.75f - r) * SB_VEXP_LN2; /* t = -126.75: n = -127 */
}
static inline __m256 sb_vexp2_fused_f(__m256 x, __m256 vr, __m256 *ti)
{
    const __m256 vl = _mm256_set1_ps(SB_VEXP_LOG2E);
    *ti = _mm256_fmadd_ps(x, vl, vr);
    return _mm256_fmadd_ps(x, vl, _mm256_sub_ps(vr, *ti));
}
static inline __m256 sb_vexp2_fused_scale(__m256 p, __m256 ti)
{
    return _mm256_mul_ps(
        p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(ti), 23)));
}
static inline __m256 sb_vexp2_fused(__m256 x, __m256 vr)
{
    __m256 ti, f = sb_vexp2_fused_f(x, vr, &ti);
    return sb_vexp2_fused_scale(sb_vexp2_poly(f, sb_vexp2_c5, 5), ti);
}
static inline __m256 sb_vexp2_bf16(__m256 x, __m256 vr)
{
    __m256 ti, f = sb_vexp2_fused_f(x, vr, &ti);
    return sb_vexp2_fused_scale(sb_vexp2_poly(f, sb_vexp2_c4, 4), ti);
}

/* The same functions on 16 lanes with AVX-512F (the ops' AVX-512 kernels,
 * src/bench/ops/ops_cpu.c): the same constants and the same operations in
 * the same order as the 8-lane functions above, whose comments hold for
 * them (range, clamps, NaN, error). SB_OPS_EMULATE_AVX512 compiles them for
 * tests/emu/avx512_emu.h, which emulates the intrinsics on machines
 * without AVX-512 (unit.test_ops_avx512emu). */
#if defined(__AVX512F__) || defined(SB_OPS_EMULATE_AVX512)
static inline __m512 sb_vexp2_poly512(__m512 f, const float *c, int deg)
{
    __m512 p =
        _mm512_fmadd_ps(_mm512_set1_ps(c[deg]), f, _mm512_set1_ps(c[deg - 1]));
    for (int j = deg - 2; j >= 0; j--)
        p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(c[j]));
    return p;
}

static inline __m512 sb_vexp2_512(__m512 t)
{
    const __m512 shifter = _mm512_set1_ps(SB_VEXP_SHIFTER);
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_set1_ps(-127.0f)),
                      _mm512_set1_ps(127.0f));
    __m512 ti = _mm512_add_ps(t, shifter);
    __m512 f = _mm512_sub_ps(t, _mm512_sub_ps(ti, shifter));
    __m512 p = sb_vexp2_poly512(f, sb_vexp2_c5, 5);
    __m512i e = _mm512_slli_epi32(
        _mm512_add_epi32(_mm512_castps_si512(ti), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

static inline void sb_vexp2_x4_512(__m512 t[4])
{
    const float *c = sb_vexp2_c5;
    const __m512 shifter = _mm512_set1_ps(SB_VEXP_SHIFTER);
    __m512 ti[4], f[4], p[4];
    for (int k = 0; k < 4; k++) {
        t[k] = _mm512_min_ps(_mm512_max_ps(t[k], _mm512_set1_ps(-127.0f)),
                             _mm512_set1_ps(127.0f));
        ti[k] = _mm512_add_ps(t[k], shifter);
    }
    for (int k = 0; k < 4; k++) {
        f[k] = _mm512_sub_ps(t[k], _mm512_sub_ps(ti[k], shifter));
        p[k] = _mm512_set1_ps(c[5]);
    }
    for (int j = 4; j >= 0; j--)
        for (int k = 0; k < 4; k++)
            p[k] = _mm512_fmadd_ps(p[k], f[k], _mm512_set1_ps(c[j]));
    for (int k = 0; k < 4; k++)
        t[k] =
            _mm512_mul_ps(p[k], _mm512_castsi512_ps(_mm512_slli_epi32(
                                    _mm512_add_epi32(_mm512_castps_si512(ti[k]),
                                                     _mm512_set1_epi32(127)),
                                    23)));
}

static inline __m512 sb_vexp2_fused_vr512(float r)
{
    return _mm512_set1_ps(r + (SB_VEXP_SHIFTER + 127.0f));
}
static inline __m512 sb_vexp2_fused_f512(__m512 x, __m512 vr, __m512 *ti)
{
    const __m512 vl = _mm512_set1_ps(SB_VEXP_LOG2E);
    *ti = _mm512_fmadd_ps(x, vl, vr);
    return _mm512_fmadd_ps(x, vl, _mm512_sub_ps(vr, *ti));
}
static inline __m512 sb_vexp2_fused_scale512(__m512 p, __m512 ti)
{
    return _mm512_mul_ps(
        p, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(ti), 23)));
}
static inline __m512 sb_vexp2_fused512(__m512 x, __m512 vr)
{
    __m512 ti, f = sb_vexp2_fused_f512(x, vr, &ti);
    return sb_vexp2_fused_scale512(sb_vexp2_poly512(f, sb_vexp2_c5, 5), ti);
}
static inline __m512 sb_vexp2_bf16_512(__m512 x, __m512 vr)
{
    __m512 ti, f = sb_vexp2_fused_f512(x, vr, &ti);
    return sb_vexp2_fused_scale512(sb_vexp2_poly512(f, sb_vexp2_c4, 4), ti);
}
#endif
#endif

#endif
