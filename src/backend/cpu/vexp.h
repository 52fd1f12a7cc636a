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

static inline __m256 sb_vexp2(__m256 t)
{
    const __m256 shifter = _mm256_set1_ps(SB_VEXP_SHIFTER);
    t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps(-127.0f)),
                      _mm256_set1_ps(127.0f));
    __m256 ti = _mm256_add_ps(t, shifter);
    __m256 f = _mm256_sub_ps(t, _mm256_sub_ps(ti, shifter));
    __m256 p = _mm256_set1_ps(1.330882482e-3f);
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.671516374e-3f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.550582455e-2f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.402224203e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.931470917e-1f));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_castps_si256(ti), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* sb_vexp2 on four vectors in place, stage by stage: the four dependency
 * chains advance together, so a loop of them keeps the units busy instead
 * of waiting on one chain of some 40 cycles at a time. */
static inline void sb_vexp2_x4(__m256 t[4])
{
    static const float c[6] = {1.0f, 6.931470917e-1f, 2.402224203e-1f,
                               5.550582455e-2f, 9.671516374e-3f,
                               1.330882482e-3f};
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
        t[k] = _mm256_mul_ps(p[k], _mm256_castsi256_ps(_mm256_slli_epi32(
                   _mm256_add_epi32(_mm256_castps_si256(ti[k]),
                                    _mm256_set1_epi32(127)), 23)));
}

/* 2^t for t <= 127 (a softmax's scaled x - max, or x minus a guess of
 * the max), to 2.7e-6 relative, for results stored in bf16:
 *   - 2^f by a degree-4 fit (relative error 2.6e-6 on [-1/2, 1/2]).
 *     Softmax divides each value by the sum of all of them, so a row's
 *     outputs carry the spread of the fit's error, up to twice its
 *     maximum: 5.2e-6 here, against the bf16 verifier's 1e-4 beyond half
 *     an ulp. Degree 3 (7.5e-5, a spread of 1.5e-4) would not fit: the
 *     verifier caught one value rounded the wrong way;
 *   - no upper clamp (the caller keeps t <= 127); the lower clamp is
 *     -127, where the exponent field built below is 0 and the result
 *     exactly 0 (e^-inf is 0, not 2^-126);
 *   - the exponent bias 127 rides in the rounding shifter (1.5·2^23 +
 *     127: the shifted sum's low bits are n + 127, shifted into place as
 *     they are; the rest of the sum's bits shift out);
 *   - a NaN passes the clamp (vmaxps returns its second operand when one
 *     is NaN) and comes out NaN. */
static inline __m256 sb_vexp2_bf16(__m256 t)
{
    static const float c[5] = {9.999992847442627e-1f, 6.931218504905701e-1f,
                               2.40247443318367e-1f, 5.5917747318744659e-2f,
                               9.57004725933075e-3f};
    const __m256 sh = _mm256_set1_ps(SB_VEXP_SHIFTER + 127.0f);
    t = _mm256_max_ps(_mm256_set1_ps(-127.0f), t);
    const __m256 ti = _mm256_add_ps(t, sh);
    const __m256 f = _mm256_sub_ps(t, _mm256_sub_ps(ti, sh));
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(c[4]), f, _mm256_set1_ps(c[3]));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(c[2]));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(c[1]));
    p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(c[0]));
    return _mm256_mul_ps(
        p, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(ti), 23)));
}
#endif

#endif
