/*
 * avx512_emu_check.c — the emulated AVX-512 intrinsics (avx512_emu.h)
 * against lanes computed by hand from the Intel Intrinsics Guide and the
 * SDM, so that the emulation unit.test_ops_avx512emu runs the ops'
 * AVX-512 kernels on cannot be silently wrong: lane order (set/setr,
 * casts and extracts, the 128-bit-lane unpack and pack, the qword
 * permute, the bf16 conversion's halves), masked loads and stores
 * touching only their lanes, the bf16 conversion's rounding (ties, NaN,
 * infinities, overflow, denormals flushed), vmaxps's NaN and zero rule,
 * the fused multiply-adds' single rounding, vrcp14ps's bound and special
 * values, the compare predicates, the reductions' order, the word maxima
 * (signed, unsigned, masked), the shifts and the streaming store.
 * Called from test_ops.c's main in the emulation builds; returns the
 * number of failed checks (each printed).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/avx512_emu.h"

#include "check.h"

static float fb(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static uint32_t bf(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Lanes out of the vectors, through memory (not the emulation's union). */
static void lanes_ps(__m512 v, float out[16])
{
    memcpy(out, &v, 64);
}
static void lanes_w(__m512i v, uint16_t out[32])
{
    memcpy(out, &v, 64);
}
static void lanes_d(__m512i v, uint32_t out[16])
{
    memcpy(out, &v, 64);
}
static void lanes_q(__m512i v, uint64_t out[8])
{
    memcpy(out, &v, 64);
}

static void check_set_cast(void)
{
    float f[16];
    lanes_ps(
        _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        f);
    int ok = 1;
    for (int i = 0; i < 16; i++)
        ok &= f[i] == (float)i;
    CHECK(ok);
    uint64_t q[8];
    lanes_q(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), q);
    ok = 1;
    for (int i = 0; i < 8; i++)
        ok &= q[i] == (uint64_t)i;
    CHECK(ok);
    uint16_t w[32];
    lanes_w(_mm512_set1_epi16(-128), w);
    CHECK(w[0] == 0xff80 && w[31] == 0xff80);
    uint32_t d[16];
    lanes_d(_mm512_castps_si512(_mm512_set1_ps(1.0f)), d);
    CHECK(d[0] == 0x3f800000u && d[15] == 0x3f800000u);
    lanes_ps(_mm512_castsi512_ps(_mm512_set1_epi32(0x40490fdb)), f);
    CHECK(f[7] == fb(0x40490fdbu));
    lanes_ps(_mm512_setzero_ps(), f);
    CHECK(f[0] == 0.0f && !signbit(f[0]) && f[15] == 0.0f);
    lanes_d(_mm512_setzero_si512(), d);
    CHECK(d[0] == 0 && d[15] == 0);

    /* the low 256 bits, and either half */
    const __m512 v =
        _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    float h[8];
    _mm256_storeu_ps(h, _mm512_castps512_ps256(v));
    CHECK(h[0] == 0.0f && h[7] == 7.0f);
    _mm256_storeu_ps(
        h, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    CHECK(h[0] == 8.0f && h[7] == 15.0f);
    uint32_t e[8];
    const __m512i vi = _mm512_castps_si512(v);
    _mm256_storeu_si256((__m256i *)e, _mm512_extracti64x4_epi64(vi, 1));
    CHECK(e[0] == bf(8.0f) && e[7] == bf(15.0f));
    _mm256_storeu_si256((__m256i *)e, _mm512_castsi512_si256(vi));
    CHECK(e[0] == bf(0.0f) && e[7] == bf(7.0f));
    _mm256_storeu_si256((__m256i *)e, _mm512_extracti64x4_epi64(vi, 0));
    CHECK(e[3] == bf(3.0f));
}

/* Masked loads read, and masked stores write, only their lanes: the
 * source is a heap block of exactly the enabled elements (ASan, in the
 * sanitizer build, would catch a read past it), the destination sentinels. */
static void check_masked(void)
{
    float *src = malloc(5 * sizeof *src);
    uint16_t *src16 = malloc(7 * sizeof *src16);
    if (!src || !src16) {
        CHECK(!"out of memory");
        free(src);
        free(src16);
        return;
    }
    for (int i = 0; i < 5; i++)
        src[i] = (float)(i + 1);
    for (int i = 0; i < 7; i++)
        src16[i] = (uint16_t)(0x100 + i);
    float f[16];
    lanes_ps(_mm512_maskz_loadu_ps(0x1f, src), f);
    int ok = 1;
    for (int i = 0; i < 16; i++)
        ok &= f[i] == (i < 5 ? (float)(i + 1) : 0.0f);
    CHECK(ok);
    lanes_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), 0x1f, src), f);
    ok = 1;
    for (int i = 0; i < 16; i++)
        ok &= f[i] == (i < 5 ? (float)(i + 1) : -INFINITY);
    CHECK(ok);
    /* a sparse mask: lanes 1 and 3 */
    lanes_ps(_mm512_maskz_loadu_ps(0x0a, src), f);
    CHECK(f[0] == 0.0f && f[1] == 2.0f && f[2] == 0.0f && f[3] == 4.0f &&
          f[4] == 0.0f);
    uint16_t w[32];
    lanes_w(_mm512_maskz_loadu_epi16(0x7f, src16), w);
    ok = 1;
    for (int i = 0; i < 32; i++)
        ok &= w[i] == (i < 7 ? 0x100 + i : 0);
    CHECK(ok);
    lanes_w(_mm512_mask_loadu_epi16(_mm512_set1_epi16(-128), 0x7f, src16), w);
    ok = 1;
    for (int i = 0; i < 32; i++)
        ok &= w[i] == (i < 7 ? 0x100 + i : 0xff80);
    CHECK(ok);
    free(src);
    free(src16);

    float dst[18];
    uint16_t dst16[34];
    for (int i = 0; i < 18; i++)
        dst[i] = -1.0f;
    for (int i = 0; i < 34; i++)
        dst16[i] = 0xeeee;
    _mm512_mask_storeu_ps(
        dst + 1, 0x8005,
        _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    ok = 1; /* lanes 0, 2 and 15 at dst[1], dst[3], dst[16] */
    for (int i = 0; i < 18; i++)
        ok &= dst[i] == (i == 1    ? 0.0f
                         : i == 3  ? 2.0f
                         : i == 16 ? 15.0f
                                   : -1.0f);
    CHECK(ok);
    _mm512_mask_storeu_epi16(dst16 + 1, 0x80000007u, _mm512_set1_epi16(0x1234));
    ok = 1; /* lanes 0-2 and 31 */
    for (int i = 0; i < 34; i++)
        ok &= dst16[i] == ((i >= 1 && i <= 3) || i == 32 ? 0x1234 : 0xeeee);
    CHECK(ok);
    lanes_ps(_mm512_maskz_mov_ps(0x8001, _mm512_set1_ps(NAN)), f);
    CHECK(isnan(f[0]) && isnan(f[15]) && bf(f[1]) == 0 && bf(f[14]) == 0);
}

static void check_stores(void)
{
    float *a = NULL;
    if (posix_memalign((void **)&a, 64, 64 * sizeof *a) != 0 || !a) {
        CHECK(!"out of memory");
        return;
    }
    for (int i = 0; i < 64; i++)
        a[i] = 0.0f;
    _mm512_stream_si512((__m512i *)(a + 16),
                        _mm512_castps_si512(_mm512_set1_ps(2.5f)));
    _mm512_storeu_si512(a + 33, _mm512_castps_si512(_mm512_set1_ps(1.5f)));
    _mm512_storeu_ps(a + 50 - 2, _mm512_set1_ps(3.5f));
    CHECK(a[15] == 0.0f && a[16] == 2.5f && a[31] == 2.5f && a[32] == 0.0f);
    CHECK(a[33] == 1.5f && a[47] == 1.5f && a[48] == 3.5f && a[63] == 3.5f);
    float f[16];
    lanes_ps(_mm512_loadu_ps(a + 40), f);
    CHECK(f[0] == 1.5f && f[7] == 1.5f && f[8] == 3.5f);
    uint32_t d[16];
    lanes_d(_mm512_loadu_si512(a + 9), d);
    CHECK(d[6] == 0 && d[7] == bf(2.5f));
    free(a);
}

/* The SDM's convert_fp32_to_bfloat16, lane by lane, and the halves. */
static void check_cvtne2ps(void)
{
    static const struct {
        uint32_t in;
        uint16_t out;
    } c[] = {
        {0x3f800000u, 0x3f80}, /* 1 */
        {0x3f808000u, 0x3f80}, /* a tie: to the even 0x3f80 */
        {0x3f818000u, 0x3f82}, /* a tie: to the even 0x3f82 */
        {0x3f808001u, 0x3f81}, /* above the tie */
        {0x3f807fffu, 0x3f80}, /* below it */
        {0xbf818000u, 0xbf82}, /* negative tie */
        {0x7f800000u, 0x7f80}, /* +inf */
        {0xff800000u, 0xff80}, /* -inf */
        {0x7f7fffffu, 0x7f80}, /* FLT_MAX rounds to +inf */
        {0x7f800001u, 0x7fc0}, /* a signalling NaN: quieted, truncated */
        {0xffa00000u, 0xffe0}, /* a negative NaN keeps its sign, payload */
        {0x7fc12345u, 0x7fc1}, /* a quiet NaN: truncated, no rounding */
        {0x00000001u, 0x0000}, /* the smallest denormal: +0 */
        {0x007fffffu, 0x0000}, /* the largest denormal: +0, not 0x0080 */
        {0x807fffffu, 0x8000}, /* negative denormal: -0 */
        {0x00800000u, 0x0080}, /* the smallest normal stays */
        {0x00808000u, 0x0080}, /* tie at the smallest normal: even */
        {0x80000000u, 0x8000}, /* -0 */
    };
    enum { N = sizeof c / sizeof c[0] };
    float a[16], b[16];
    for (int j = 0; j < 16; j++) {
        a[j] = fb(c[j % N].in);
        b[j] = fb(c[(j + 16) % N].in);
    }
    uint16_t w[32];
    const __m512bh r =
        _mm512_cvtne2ps_pbh(_mm512_loadu_ps(a), _mm512_loadu_ps(b));
    memcpy(w, &r, sizeof w);
    int bad = 0;
    for (int j = 0; j < 16; j++) {
        /* b's lanes in words 0-15, a's in 16-31 */
        bad += w[j] != c[(j + 16) % N].out;
        bad += w[j + 16] != c[j % N].out;
    }
    CHECK(bad == 0);
    if (bad)
        for (int j = 0; j < 32; j++)
            fprintf(stderr, "cvtne2ps word %d: %04x\n", j, w[j]);
    /* and the cast the kernels take of the result */
    uint16_t w2[32];
    lanes_w((__m512i)r, w2);
    CHECK(memcmp(w, w2, sizeof w) == 0);
}

/* Within each 128-bit lane: unpack interleaves words 0-3 (lo) or 4-7 (hi)
 * of a and b; pack saturates a's four dwords then b's. */
static void check_unpack_pack(void)
{
    uint16_t in[32];
    for (int i = 0; i < 32; i++)
        in[i] = (uint16_t)(0x4000 + i);
    const __m512i v = _mm512_loadu_si512(in), z = _mm512_setzero_si512();
    uint32_t d[16];
    lanes_d(_mm512_unpacklo_epi16(z, v), d);
    /* lane j: element (j / 4) * 8 + j % 4 in the high half */
    int ok = 1;
    for (int j = 0; j < 16; j++)
        ok &= d[j] == (uint32_t)(0x4000 + j / 4 * 8 + j % 4) << 16;
    CHECK(ok);
    lanes_d(_mm512_unpackhi_epi16(z, v), d);
    ok = 1;
    for (int j = 0; j < 16; j++)
        ok &= d[j] == (uint32_t)(0x4000 + j / 4 * 8 + 4 + j % 4) << 16;
    CHECK(ok);
    uint16_t w[32];
    lanes_w(_mm512_unpacklo_epi16(v, z), w);
    CHECK(w[0] == 0x4000 && w[1] == 0 && w[2] == 0x4001 && w[8] == 0x4008 &&
          w[30] == 0x401b && w[31] == 0);

    int32_t a[16], b[16];
    for (int i = 0; i < 16; i++) {
        a[i] = i == 0 ? -5 : i == 1 ? 70000 : i == 2 ? 65535 : 1000 + i;
        b[i] = i == 5 ? INT32_MIN : 2000 + i;
    }
    lanes_w(_mm512_packus_epi32(_mm512_loadu_si512(a), _mm512_loadu_si512(b)),
            w);
    CHECK(w[0] == 0 && w[1] == 65535 && w[2] == 65535 && w[3] == 1003);
    CHECK(w[4] == 2000 && w[7] == 2003);                /* b's lane 0 */
    CHECK(w[8] == 1004 && w[12] == 2004 && w[13] == 0); /* lane 1 */
    CHECK(w[24] == 1012 && w[31] == 2015);              /* lane 3 */
}

static void check_permute_shift_widen(void)
{
    uint64_t in[8], q[8];
    for (int i = 0; i < 8; i++)
        in[i] = 0x1111111111111111ull * (uint64_t)i;
    /* lanes {0, 4, 1, 5, 2, 6, 3, 7}; an index's high bits are ignored */
    lanes_q(_mm512_permutexvar_epi64(_mm512_set_epi64(7, 3, 6, 2, 5, 1, 4, 8),
                                     _mm512_loadu_si512(in)),
            q);
    CHECK(q[0] == in[0] && q[1] == in[4] && q[2] == in[1] && q[3] == in[5] &&
          q[6] == in[3] && q[7] == in[7]);
    uint32_t d[16];
    const __m512i x = _mm512_set1_epi32((int)0x80018003u);
    lanes_d(_mm512_srli_epi32(x, 16), d);
    CHECK(d[0] == 0x8001u && d[15] == 0x8001u); /* logical, not arithmetic */
    lanes_d(_mm512_slli_epi32(x, 16), d);
    CHECK(d[3] == 0x80030000u);
    lanes_d(_mm512_slli_epi32(x, 32), d);
    CHECK(d[0] == 0);
    lanes_d(_mm512_add_epi32(x, _mm512_set1_epi32(0x7ffe8000)), d);
    CHECK(d[0] == 0x00000003u); /* wraps */
    lanes_d(_mm512_and_si512(x, _mm512_set1_epi32(0xffff)), d);
    CHECK(d[9] == 0x8003u);
    uint16_t w16[16];
    for (int i = 0; i < 16; i++)
        w16[i] = (uint16_t)(0xfff0 + i);
    lanes_d(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)w16)), d);
    CHECK(d[0] == 0xfff0u && d[15] == 0xffffu); /* zero-extended, in order */
}

static void check_word_max(void)
{
    int16_t a[32], b[32];
    for (int i = 0; i < 32; i++) {
        a[i] = (int16_t)(i % 2 ? -2 : 3);
        b[i] = (int16_t)(i % 2 ? 1 : -32768);
    }
    const __m512i va = _mm512_loadu_si512(a), vb = _mm512_loadu_si512(b);
    uint16_t w[32];
    lanes_w(_mm512_max_epi16(va, vb), w);
    CHECK(w[0] == 3 && w[1] == 1);
    lanes_w(_mm512_max_epu16(va, vb), w);
    CHECK(w[0] == 0x8000 && w[1] == 0xfffe);
    lanes_w(_mm512_mask_max_epi16(_mm512_set1_epi16(77), 0x00000002u, va, vb),
            w);
    CHECK(w[0] == 77 && w[1] == 1 && w[2] == 77 && w[31] == 77);
    lanes_w(_mm512_mask_max_epu16(_mm512_set1_epi16(77), 0x80000000u, va, vb),
            w);
    CHECK(w[0] == 77 && w[31] == 0xfffe);
}

static void check_arith(void)
{
    float f[16];
    /* vmaxps/vminps: the second operand on NaN or two zeros */
    lanes_ps(_mm512_max_ps(_mm512_set1_ps(NAN), _mm512_set1_ps(1.0f)), f);
    CHECK(f[0] == 1.0f);
    lanes_ps(_mm512_max_ps(_mm512_set1_ps(1.0f), _mm512_set1_ps(NAN)), f);
    CHECK(isnan(f[0]));
    lanes_ps(_mm512_max_ps(_mm512_set1_ps(0.0f), _mm512_set1_ps(-0.0f)), f);
    CHECK(f[0] == 0.0f && signbit(f[0]));
    lanes_ps(_mm512_min_ps(_mm512_set1_ps(-0.0f), _mm512_set1_ps(0.0f)), f);
    CHECK(f[0] == 0.0f && !signbit(f[0]));
    lanes_ps(_mm512_min_ps(_mm512_set1_ps(2.0f), _mm512_set1_ps(NAN)), f);
    CHECK(isnan(f[3]));
    lanes_ps(_mm512_min_ps(_mm512_set1_ps(2.0f), _mm512_set1_ps(-3.0f)), f);
    CHECK(f[3] == -3.0f);
    /* fused: (1 + 2^-12)^2 - (1 + 2^-11) is 2^-24 exactly; a multiply
     * rounded first leaves 0 */
    const __m512 a = _mm512_set1_ps(1.0f + 0x1p-12f),
                 c = _mm512_set1_ps(1.0f + 0x1p-11f);
    lanes_ps(_mm512_fmsub_ps(a, a, c), f);
    CHECK(f[0] == 0x1p-24f);
    lanes_ps(_mm512_fmadd_ps(a, a, _mm512_sub_ps(_mm512_setzero_ps(), c)), f);
    CHECK(f[5] == 0x1p-24f);
    lanes_ps(_mm512_fnmadd_ps(a, a, c), f);
    CHECK(f[9] == -0x1p-24f);
    lanes_ps(_mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_set1_ps(0x1p-24f)), f);
    CHECK(f[0] == 1.0f); /* a tie, to even */
    lanes_ps(_mm512_mul_ps(_mm512_set1_ps(3.0f), _mm512_set1_ps(0.5f)), f);
    CHECK(f[15] == 1.5f);
    lanes_ps(_mm512_mul_ps(_mm512_set1_ps(0x1p-140f), _mm512_set1_ps(0x1p-5f)),
             f);
    CHECK(f[0] == 0x1p-145f); /* denormal results kept (no FTZ) */

    /* vrcp14ps: within 2^-14, exact special values */
    float x[16], worst = 0.0f;
    int spec = 1;
    for (int it = 0; it < 64; it++) {
        for (int i = 0; i < 16; i++)
            x[i] = ldexpf(1.0f + (float)(it * 16 + i) / 1024.0f, it % 40 - 20) *
                   (i % 3 ? 1.0f : -1.0f);
        lanes_ps(_mm512_rcp14_ps(_mm512_loadu_ps(x)), f);
        for (int i = 0; i < 16; i++) {
            const float e = fabsf((float)((double)f[i] * x[i] - 1.0));
            worst = e > worst ? e : worst;
        }
    }
    CHECK(worst < 0x1p-14f && worst > 0x1p-15f);
    lanes_ps(_mm512_rcp14_ps(_mm512_setr_ps(0.0f, -0.0f, INFINITY, -INFINITY,
                                            NAN, 0x1p-140f, 0x1p127f, 4.0f, 1,
                                            1, 1, 1, 1, 1, 1, 1)),
             f);
    spec &= f[0] == INFINITY && f[1] == -INFINITY;
    spec &= f[2] == 0.0f && !signbit(f[2]) && f[3] == 0.0f && signbit(f[3]);
    spec &= isnan(f[4]) && f[5] == INFINITY;
    spec &=
        f[6] > 0.0f && fabsf(f[6] * 0x1p127f - 1.0f) < 0x1p-14f; /* denormal */
    spec &= fabsf(f[7] * 4.0f - 1.0f) < 0x1p-14f;
    CHECK(spec);
}

static void check_cmp_reduce(void)
{
    const __m512 a = _mm512_setr_ps(1, NAN, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                    14, NAN, 16),
                 b = _mm512_setr_ps(1, 2, NAN, 5, 4, 6, 7, 8, 9, 10, 11, 12, 13,
                                    14, 15, NAN);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q) == 0xc006);
    CHECK(_mm512_mask_cmp_ps_mask(0x4002, a, b, _CMP_UNORD_Q) == 0x4002);
    CHECK(_mm512_mask_cmp_ps_mask(0x00ff, a, b, _CMP_UNORD_Q) == 0x0006);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_ORD_Q) == 0x3ff9);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_LT_OS) == 0x0008);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_NLE_US) == 0xc016);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ) == 0x3fe1);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ) == 0xc01e);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_GE_OS) == 0x3ff1);
    CHECK(_mm512_cmp_ps_mask(a, b, _CMP_TRUE_UQ) == 0xffff);

    /* the guide's tree: lane 0 + lane 8 first, so 1e8 and -1e8 cancel
     * before the ones are added (a left-to-right sum loses seven: 7) */
    float v[16];
    for (int i = 0; i < 16; i++)
        v[i] = i == 0 ? 1e8f : i == 8 ? -1e8f : 1.0f;
    CHECK(_mm512_reduce_add_ps(_mm512_loadu_ps(v)) == 14.0f);
    for (int i = 0; i < 16; i++)
        v[i] = (float)((i * 7) % 16) - 20.0f;
    v[11] = 3.5f;
    CHECK(_mm512_reduce_max_ps(_mm512_loadu_ps(v)) == 3.5f);
    v[11] = -INFINITY;
    CHECK(_mm512_reduce_max_ps(_mm512_loadu_ps(v)) == -5.0f);
}

int sb_avx512_emu_check(void);
int sb_avx512_emu_check(void)
{
    check_set_cast();
    check_masked();
    check_stores();
    check_cvtne2ps();
    check_unpack_pack();
    check_permute_shift_widen();
    check_word_max();
    check_arith();
    check_cmp_reduce();
    printf("avx512 emulation: ");
    return sb_check_done();
}
