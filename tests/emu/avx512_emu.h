/*
 * avx512_emu.h — the AVX-512 intrinsics the ops' AVX-512 kernels use
 * (src/bench/ops/ops_cpu.c, src/backend/cpu/vexp.h), emulated in plain C
 * so that those kernels build and run on a machine without AVX-512.
 *
 * unit.test_ops_avx512emu compiles ops_cpu.c with this header
 * force-included (-include) and SB_OPS_EMULATE_AVX512 defined, which
 * selects the AVX-512 kernels; test_ops.c's checks then verify them as
 * they verify the native ones, and tests/emu/avx512_emu_check.c checks
 * every function here against hand-computed lanes.
 *
 * How: <immintrin.h> is included first; then each name below is a macro
 * for a function of this file (sb_emu_<name>), so the kernels' text calls
 * these and never the real intrinsics (a real AVX-512 intrinsic left out
 * here fails to compile for want of the target, it is not called
 * silently). The types are GCC/Clang vector types of the same sizes,
 * element types and alignment as the real ones (__m512 is 16 floats in 64
 * bytes, 64-byte aligned), so the kernels' casts between vector types
 * mean what they mean natively; the masks are the integers they are.
 * Each function works lane by lane, written from the pseudocode of the
 * Intel Intrinsics Guide and, for instructions it defers to, the SDM:
 *   - lanes are numbered from the lowest address / least significant bits;
 *     the 128-bit-lane operations (unpack, pack) work within each 128-bit
 *     lane, as the hardware does;
 *   - arithmetic is fp32 C arithmetic, one operation per lane, rounded to
 *     nearest even with the default MXCSR (no DAZ, no FTZ), as the
 *     instructions are; FMAs are fused (fmaf, one rounding). An operation
 *     with a NaN operand returns a NaN operand quieted, an invalid one the
 *     default NaN (0xffc00000), since the C operations run on the same
 *     x86 hardware; which of two NaN operands is returned is not fixed by
 *     the intrinsics either (the compiler picks the instruction form).
 *     The compiler may contract a multiply and an add of these functions
 *     into an FMA exactly as it may for the native intrinsics, which GCC
 *     writes as the same vector operations (-ffp-contract=fast, its C
 *     default);
 *   - min/max: (a < b) ? a : b and (a > b) ? a : b, the instructions'
 *     rule: the second operand when either is a NaN or both are zeros;
 *   - vrcp14ps: the guide promises a relative error under 2^-14, not the
 *     bits; this returns 1/x (in double) off by 0.75·2^-14, up or down by
 *     one bit of x, rounded to fp32: within the promise, near its limit,
 *     so a kernel that needs more precision (a Newton step) fails its
 *     tests here if it lacks it. Zeros give infinities of their sign,
 *     infinities zeros, NaN a quiet NaN; denormal inputs and results are
 *     computed (no DAZ/FTZ), as the SDM has it with the default MXCSR;
 *   - vcvtne2ps2bf16: the SDM's convert_fp32_to_bfloat16: a zero or
 *     denormal input gives a zero of its sign (the instruction treats
 *     denormals as zero; a normal fp32 value never rounds to a bf16
 *     denormal, so that is also the flush of denormal results), an
 *     infinity its high half, a NaN its high half with the quiet bit set,
 *     a normal value rounded to nearest even by adding 0x7fff plus the
 *     kept half's lowest bit (which carries to infinity past the largest
 *     bf16); b's 16 lanes go to the low half of the result, a's to the
 *     high half;
 *   - masked loads read only the enabled lanes' bytes and masked stores
 *     write only theirs (the instructions suppress faults on the others,
 *     so a kernel may point a masked access past its row): under ASan
 *     (make test-sanitize) a lane enabled past an allocation is caught;
 *   - the streaming store requires 64-byte alignment as vmovntdq does
 *     (#GP otherwise): this one aborts;
 *   - _mm512_reduce_add_ps and _mm512_reduce_max_ps follow the guide's
 *     halving tree (lane j with lane j + 8, then j + 4, j + 2, then lanes
 *     0 and 1; max by (a > b) ? a : b, the lower half as a). Compilers
 *     may sum in another order (Clang's reduction is reassociable) and
 *     take other operands on NaN or zeros of either sign: the kernels use
 *     the max only on lanes without NaN, and the sums' order only moves
 *     rounding.
 * Only what the kernels use is here; to use another intrinsic in them,
 * add it (and a check in avx512_emu_check.c).
 */
#ifndef SOLBENCH_TEST_AVX512_EMU_H
#define SOLBENCH_TEST_AVX512_EMU_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 64-byte vectors passed by value between these static functions, in a
 * build without AVX-512: GCC and Clang warn that their ABI differs from an
 * AVX-512 build's, which does not matter within one file (CMake also adds
 * -Wno-psabi, which quiets GCC's accompanying note). */
#pragma GCC diagnostic ignored "-Wpsabi"

#define SB_EMU_AVX512 1

typedef float sb_emu_m512 __attribute__((__vector_size__(64), __may_alias__));
typedef double sb_emu_m512d __attribute__((__vector_size__(64), __may_alias__));
typedef long long sb_emu_m512i
    __attribute__((__vector_size__(64), __may_alias__));
typedef short sb_emu_m512bh __attribute__((__vector_size__(64), __may_alias__));
typedef uint16_t sb_emu_mmask16;
typedef uint32_t sb_emu_mmask32;

#undef __m512
#undef __m512d
#undef __m512i
#undef __m512bh
#undef __mmask16
#undef __mmask32
#define __m512 sb_emu_m512
#define __m512d sb_emu_m512d
#define __m512i sb_emu_m512i
#define __m512bh sb_emu_m512bh
#define __mmask16 sb_emu_mmask16
#define __mmask32 sb_emu_mmask32

/* One 64-byte register seen as lanes of each width. */
typedef union sb_emu_u512 {
    float f[16];
    double pd[8];
    int64_t q[8];
    int32_t d[16];
    uint32_t ud[16];
    int16_t w[32];
    uint16_t uw[32];
} sb_emu_u512;

static inline sb_emu_u512 sb_emu_u_ps(sb_emu_m512 v)
{
    sb_emu_u512 u;
    memcpy(&u, &v, sizeof u);
    return u;
}
static inline sb_emu_u512 sb_emu_u_si(sb_emu_m512i v)
{
    sb_emu_u512 u;
    memcpy(&u, &v, sizeof u);
    return u;
}
static inline sb_emu_m512 sb_emu_ps_of(sb_emu_u512 u)
{
    sb_emu_m512 v;
    memcpy(&v, &u, sizeof v);
    return v;
}
static inline sb_emu_m512i sb_emu_si_of(sb_emu_u512 u)
{
    sb_emu_m512i v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* ---- set, casts, extracts ---------------------------------------------- */

static inline sb_emu_m512 sb_emu_mm512_setzero_ps(void)
{
    sb_emu_u512 u;
    memset(&u, 0, sizeof u);
    return sb_emu_ps_of(u);
}
static inline sb_emu_m512i sb_emu_mm512_setzero_si512(void)
{
    sb_emu_u512 u;
    memset(&u, 0, sizeof u);
    return sb_emu_si_of(u);
}
static inline sb_emu_m512 sb_emu_mm512_set1_ps(float a)
{
    sb_emu_u512 u;
    for (int i = 0; i < 16; i++)
        u.f[i] = a;
    return sb_emu_ps_of(u);
}
static inline sb_emu_m512i sb_emu_mm512_set1_epi32(int a)
{
    sb_emu_u512 u;
    for (int i = 0; i < 16; i++)
        u.d[i] = a;
    return sb_emu_si_of(u);
}
static inline sb_emu_m512i sb_emu_mm512_set1_epi16(short a)
{
    sb_emu_u512 u;
    for (int i = 0; i < 32; i++)
        u.w[i] = a;
    return sb_emu_si_of(u);
}
/* e0 is lane 0 (setr), e7 of set_epi64 lane 7. */
static inline sb_emu_m512i sb_emu_mm512_set_epi64(long long e7, long long e6,
                                                  long long e5, long long e4,
                                                  long long e3, long long e2,
                                                  long long e1, long long e0)
{
    sb_emu_u512 u;
    u.q[0] = e0, u.q[1] = e1, u.q[2] = e2, u.q[3] = e3;
    u.q[4] = e4, u.q[5] = e5, u.q[6] = e6, u.q[7] = e7;
    return sb_emu_si_of(u);
}
static inline sb_emu_m512
sb_emu_mm512_setr_ps(float e0, float e1, float e2, float e3, float e4, float e5,
                     float e6, float e7, float e8, float e9, float e10,
                     float e11, float e12, float e13, float e14, float e15)
{
    sb_emu_u512 u;
    u.f[0] = e0, u.f[1] = e1, u.f[2] = e2, u.f[3] = e3;
    u.f[4] = e4, u.f[5] = e5, u.f[6] = e6, u.f[7] = e7;
    u.f[8] = e8, u.f[9] = e9, u.f[10] = e10, u.f[11] = e11;
    u.f[12] = e12, u.f[13] = e13, u.f[14] = e14, u.f[15] = e15;
    return sb_emu_ps_of(u);
}

static inline sb_emu_m512i sb_emu_mm512_castps_si512(sb_emu_m512 a)
{
    return sb_emu_si_of(sb_emu_u_ps(a));
}
static inline sb_emu_m512 sb_emu_mm512_castsi512_ps(sb_emu_m512i a)
{
    return sb_emu_ps_of(sb_emu_u_si(a));
}
static inline sb_emu_m512d sb_emu_mm512_castps_pd(sb_emu_m512 a)
{
    sb_emu_m512d r;
    memcpy(&r, &a, sizeof r);
    return r;
}
/* The low 256 bits. */
static inline __m256 sb_emu_mm512_castps512_ps256(sb_emu_m512 a)
{
    __m256 r;
    memcpy(&r, &a, sizeof r);
    return r;
}
static inline __m256i sb_emu_mm512_castsi512_si256(sb_emu_m512i a)
{
    __m256i r;
    memcpy(&r, &a, sizeof r);
    return r;
}
/* The 256-bit half imm & 1 (0 low, 1 high). */
static inline __m256d sb_emu_mm512_extractf64x4_pd(sb_emu_m512d a, int imm)
{
    __m256d r;
    memcpy(&r, (const char *)&a + 32 * (imm & 1), sizeof r);
    return r;
}
static inline __m256i sb_emu_mm512_extracti64x4_epi64(sb_emu_m512i a, int imm)
{
    __m256i r;
    memcpy(&r, (const char *)&a + 32 * (imm & 1), sizeof r);
    return r;
}

/* ---- loads and stores -------------------------------------------------- */

static inline sb_emu_m512 sb_emu_mm512_loadu_ps(void const *p)
{
    sb_emu_u512 u;
    memcpy(&u, p, sizeof u);
    return sb_emu_ps_of(u);
}
static inline sb_emu_m512i sb_emu_mm512_loadu_si512(void const *p)
{
    sb_emu_u512 u;
    memcpy(&u, p, sizeof u);
    return sb_emu_si_of(u);
}
static inline void sb_emu_mm512_storeu_ps(void *p, sb_emu_m512 a)
{
    memcpy(p, &a, sizeof a);
}
static inline void sb_emu_mm512_storeu_si512(void *p, sb_emu_m512i a)
{
    memcpy(p, &a, sizeof a);
}
/* vmovntdq: 64-byte aligned or #GP. */
static inline void sb_emu_mm512_stream_si512(void *p, sb_emu_m512i a)
{
    if ((uintptr_t)p & 63)
        abort();
    memcpy(p, &a, sizeof a);
}
/* Masked: lane i is read (written) only if bit i of k is set; the
 * others are src's (maskz: zero), and their memory is not touched. */
static inline sb_emu_m512
sb_emu_mm512_mask_loadu_ps(sb_emu_m512 src, sb_emu_mmask16 k, void const *p)
{
    sb_emu_u512 u = sb_emu_u_ps(src);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1)
            memcpy(&u.f[i], (const char *)p + 4 * i, 4);
    return sb_emu_ps_of(u);
}
static inline sb_emu_m512 sb_emu_mm512_maskz_loadu_ps(sb_emu_mmask16 k,
                                                      void const *p)
{
    return sb_emu_mm512_mask_loadu_ps(sb_emu_mm512_setzero_ps(), k, p);
}
static inline sb_emu_m512i
sb_emu_mm512_mask_loadu_epi16(sb_emu_m512i src, sb_emu_mmask32 k, void const *p)
{
    sb_emu_u512 u = sb_emu_u_si(src);
    for (int i = 0; i < 32; i++)
        if (k >> i & 1)
            memcpy(&u.uw[i], (const char *)p + 2 * i, 2);
    return sb_emu_si_of(u);
}
static inline sb_emu_m512i sb_emu_mm512_maskz_loadu_epi16(sb_emu_mmask32 k,
                                                          void const *p)
{
    return sb_emu_mm512_mask_loadu_epi16(sb_emu_mm512_setzero_si512(), k, p);
}
static inline void sb_emu_mm512_mask_storeu_ps(void *p, sb_emu_mmask16 k,
                                               sb_emu_m512 a)
{
    const sb_emu_u512 u = sb_emu_u_ps(a);
    for (int i = 0; i < 16; i++)
        if (k >> i & 1)
            memcpy((char *)p + 4 * i, &u.f[i], 4);
}
static inline void sb_emu_mm512_mask_storeu_epi16(void *p, sb_emu_mmask32 k,
                                                  sb_emu_m512i a)
{
    const sb_emu_u512 u = sb_emu_u_si(a);
    for (int i = 0; i < 32; i++)
        if (k >> i & 1)
            memcpy((char *)p + 2 * i, &u.uw[i], 2);
}
static inline sb_emu_m512 sb_emu_mm512_maskz_mov_ps(sb_emu_mmask16 k,
                                                    sb_emu_m512 a)
{
    sb_emu_u512 u = sb_emu_u_ps(a);
    for (int i = 0; i < 16; i++)
        if (!(k >> i & 1))
            u.ud[i] = 0;
    return sb_emu_ps_of(u);
}

/* ---- fp32 arithmetic --------------------------------------------------- */

#define SB_EMU_PS2(NAME, EXPR)                                                 \
    static inline sb_emu_m512 sb_emu_mm512_##NAME(sb_emu_m512 va,              \
                                                  sb_emu_m512 vb)              \
    {                                                                          \
        sb_emu_u512 a = sb_emu_u_ps(va), b = sb_emu_u_ps(vb), r;               \
        for (int i = 0; i < 16; i++)                                           \
            r.f[i] = (EXPR);                                                   \
        return sb_emu_ps_of(r);                                                \
    }
SB_EMU_PS2(add_ps, a.f[i] + b.f[i])
SB_EMU_PS2(sub_ps, a.f[i] - b.f[i])
SB_EMU_PS2(mul_ps, a.f[i] * b.f[i])
SB_EMU_PS2(max_ps, a.f[i] > b.f[i] ? a.f[i] : b.f[i])
SB_EMU_PS2(min_ps, a.f[i] < b.f[i] ? a.f[i] : b.f[i])
#undef SB_EMU_PS2

/* a·b + c, a·b - c, -(a·b) + c, each rounded once. */
#define SB_EMU_PS3(NAME, EXPR)                                                 \
    static inline sb_emu_m512 sb_emu_mm512_##NAME(                             \
        sb_emu_m512 va, sb_emu_m512 vb, sb_emu_m512 vc)                        \
    {                                                                          \
        sb_emu_u512 a = sb_emu_u_ps(va), b = sb_emu_u_ps(vb),                  \
                    c = sb_emu_u_ps(vc), r;                                    \
        for (int i = 0; i < 16; i++)                                           \
            r.f[i] = (EXPR);                                                   \
        return sb_emu_ps_of(r);                                                \
    }
SB_EMU_PS3(fmadd_ps, fmaf(a.f[i], b.f[i], c.f[i]))
SB_EMU_PS3(fmsub_ps, fmaf(a.f[i], b.f[i], -c.f[i]))
SB_EMU_PS3(fnmadd_ps, fmaf(-a.f[i], b.f[i], c.f[i]))
#undef SB_EMU_PS3

/* Within 2^-14 of 1/x (see the header's comment for the model). */
static inline float sb_emu_rcp14(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if (x != x) {
        u |= 0x00400000u;
        memcpy(&x, &u, sizeof x);
        return x;
    }
    if (x == 0.0f)
        return signbit(x) ? -INFINITY : INFINITY;
    if (isinf(x))
        return signbit(x) ? -0.0f : 0.0f;
    const double off = (u & 1u ? 0.75 : -0.75) * 0x1p-14;
    return (float)(1.0 / (double)x * (1.0 + off));
}
static inline sb_emu_m512 sb_emu_mm512_rcp14_ps(sb_emu_m512 va)
{
    sb_emu_u512 a = sb_emu_u_ps(va), r;
    for (int i = 0; i < 16; i++)
        r.f[i] = sb_emu_rcp14(a.f[i]);
    return sb_emu_ps_of(r);
}

/* vcmpps's 32 predicates: bits 0-1 and 3 pick the relation, bit 2
 * negates it; bit 4 (signalling or quiet) changes only exceptions. */
static inline int sb_emu_cmp_ps(float a, float b, int imm)
{
    const int un = a != a || b != b;
    int r;
    switch (imm & 0xb) {
    case 0x0:
        r = !un && a == b;
        break; /* EQ_OQ   (4: NEQ_UQ)   */
    case 0x1:
        r = !un && a < b;
        break; /* LT_OS   (5: NLT_US)   */
    case 0x2:
        r = !un && a <= b;
        break; /* LE_OS   (6: NLE_US)   */
    case 0x3:
        r = un;
        break; /* UNORD_Q (7: ORD_Q)    */
    case 0x8:
        r = un || a == b;
        break; /* EQ_UQ   (12: NEQ_OQ)  */
    case 0x9:
        r = un || a < b;
        break; /* NGE_US  (13: GE_OS)   */
    case 0xa:
        r = un || a <= b;
        break; /* NGT_US  (14: GT_OS)   */
    default:
        r = 0;
        break; /* FALSE_OQ (15: TRUE_UQ) */
    }
    return imm & 0x4 ? !r : r;
}
static inline sb_emu_mmask16 sb_emu_mm512_mask_cmp_ps_mask(sb_emu_mmask16 k,
                                                           sb_emu_m512 va,
                                                           sb_emu_m512 vb,
                                                           int imm)
{
    const sb_emu_u512 a = sb_emu_u_ps(va), b = sb_emu_u_ps(vb);
    unsigned r = 0;
    for (int i = 0; i < 16; i++)
        if ((k >> i & 1) && sb_emu_cmp_ps(a.f[i], b.f[i], imm))
            r |= 1u << i;
    return (sb_emu_mmask16)r;
}
static inline sb_emu_mmask16 sb_emu_mm512_cmp_ps_mask(sb_emu_m512 va,
                                                      sb_emu_m512 vb, int imm)
{
    return sb_emu_mm512_mask_cmp_ps_mask(0xffff, va, vb, imm);
}

/* The guide's REDUCE_ADD / REDUCE_MAX: halves, then halves of those. */
static inline float sb_emu_mm512_reduce_add_ps(sb_emu_m512 va)
{
    sb_emu_u512 a = sb_emu_u_ps(va);
    for (int len = 8; len >= 1; len /= 2)
        for (int j = 0; j < len; j++)
            a.f[j] = a.f[j] + a.f[j + len];
    return a.f[0];
}
static inline float sb_emu_mm512_reduce_max_ps(sb_emu_m512 va)
{
    sb_emu_u512 a = sb_emu_u_ps(va);
    for (int len = 8; len >= 1; len /= 2)
        for (int j = 0; j < len; j++)
            a.f[j] = a.f[j] > a.f[j + len] ? a.f[j] : a.f[j + len];
    return a.f[0];
}

/* ---- integer ----------------------------------------------------------- */

static inline sb_emu_m512i sb_emu_mm512_add_epi32(sb_emu_m512i va,
                                                  sb_emu_m512i vb)
{
    sb_emu_u512 a = sb_emu_u_si(va), b = sb_emu_u_si(vb), r;
    for (int i = 0; i < 16; i++)
        r.ud[i] = a.ud[i] + b.ud[i];
    return sb_emu_si_of(r);
}
static inline sb_emu_m512i sb_emu_mm512_and_si512(sb_emu_m512i va,
                                                  sb_emu_m512i vb)
{
    sb_emu_u512 a = sb_emu_u_si(va), b = sb_emu_u_si(vb), r;
    for (int i = 0; i < 8; i++)
        r.q[i] = a.q[i] & b.q[i];
    return sb_emu_si_of(r);
}
/* Logical shifts; a count above 31 gives 0. */
static inline sb_emu_m512i sb_emu_mm512_slli_epi32(sb_emu_m512i va,
                                                   unsigned int imm)
{
    sb_emu_u512 a = sb_emu_u_si(va), r;
    for (int i = 0; i < 16; i++)
        r.ud[i] = imm > 31 ? 0u : a.ud[i] << imm;
    return sb_emu_si_of(r);
}
static inline sb_emu_m512i sb_emu_mm512_srli_epi32(sb_emu_m512i va,
                                                   unsigned int imm)
{
    sb_emu_u512 a = sb_emu_u_si(va), r;
    for (int i = 0; i < 16; i++)
        r.ud[i] = imm > 31 ? 0u : a.ud[i] >> imm;
    return sb_emu_si_of(r);
}
/* 16 unsigned words zero-extended to 16 dwords, in order. */
static inline sb_emu_m512i sb_emu_mm512_cvtepu16_epi32(__m256i va)
{
    uint16_t a[16];
    sb_emu_u512 r;
    memcpy(a, &va, sizeof a);
    for (int i = 0; i < 16; i++)
        r.ud[i] = a[i];
    return sb_emu_si_of(r);
}
/* Per 128-bit lane L (words 8L to 8L + 7): a's and b's words 0-3 (lo) or
 * 4-7 (hi) of the lane, interleaved a, b, a, b... */
static inline sb_emu_m512i sb_emu_unpack_epi16(sb_emu_m512i va, sb_emu_m512i vb,
                                               int half)
{
    sb_emu_u512 a = sb_emu_u_si(va), b = sb_emu_u_si(vb), r;
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < 4; k++) {
            r.uw[8 * l + 2 * k] = a.uw[8 * l + 4 * half + k];
            r.uw[8 * l + 2 * k + 1] = b.uw[8 * l + 4 * half + k];
        }
    return sb_emu_si_of(r);
}
static inline sb_emu_m512i sb_emu_mm512_unpacklo_epi16(sb_emu_m512i va,
                                                       sb_emu_m512i vb)
{
    return sb_emu_unpack_epi16(va, vb, 0);
}
static inline sb_emu_m512i sb_emu_mm512_unpackhi_epi16(sb_emu_m512i va,
                                                       sb_emu_m512i vb)
{
    return sb_emu_unpack_epi16(va, vb, 1);
}
/* Per 128-bit lane L: a's four signed dwords of the lane saturated to
 * unsigned words, then b's. */
static inline uint16_t sb_emu_satu16(int32_t v)
{
    return (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
}
static inline sb_emu_m512i sb_emu_mm512_packus_epi32(sb_emu_m512i va,
                                                     sb_emu_m512i vb)
{
    sb_emu_u512 a = sb_emu_u_si(va), b = sb_emu_u_si(vb), r;
    for (int l = 0; l < 4; l++)
        for (int k = 0; k < 4; k++) {
            r.uw[8 * l + k] = sb_emu_satu16(a.d[4 * l + k]);
            r.uw[8 * l + 4 + k] = sb_emu_satu16(b.d[4 * l + k]);
        }
    return sb_emu_si_of(r);
}
/* Word maxima, signed and unsigned; masked: src where bit i of k is 0. */
static inline sb_emu_m512i sb_emu_mm512_mask_max_epi16(sb_emu_m512i vsrc,
                                                       sb_emu_mmask32 k,
                                                       sb_emu_m512i va,
                                                       sb_emu_m512i vb)
{
    sb_emu_u512 s = sb_emu_u_si(vsrc), a = sb_emu_u_si(va), b = sb_emu_u_si(vb);
    for (int i = 0; i < 32; i++)
        if (k >> i & 1)
            s.w[i] = a.w[i] > b.w[i] ? a.w[i] : b.w[i];
    return sb_emu_si_of(s);
}
static inline sb_emu_m512i sb_emu_mm512_mask_max_epu16(sb_emu_m512i vsrc,
                                                       sb_emu_mmask32 k,
                                                       sb_emu_m512i va,
                                                       sb_emu_m512i vb)
{
    sb_emu_u512 s = sb_emu_u_si(vsrc), a = sb_emu_u_si(va), b = sb_emu_u_si(vb);
    for (int i = 0; i < 32; i++)
        if (k >> i & 1)
            s.uw[i] = a.uw[i] > b.uw[i] ? a.uw[i] : b.uw[i];
    return sb_emu_si_of(s);
}
static inline sb_emu_m512i sb_emu_mm512_max_epi16(sb_emu_m512i va,
                                                  sb_emu_m512i vb)
{
    return sb_emu_mm512_mask_max_epi16(va, 0xffffffffu, va, vb);
}
static inline sb_emu_m512i sb_emu_mm512_max_epu16(sb_emu_m512i va,
                                                  sb_emu_m512i vb)
{
    return sb_emu_mm512_mask_max_epu16(va, 0xffffffffu, va, vb);
}
/* Lane i of the result: a's qword idx[i] & 7. */
static inline sb_emu_m512i sb_emu_mm512_permutexvar_epi64(sb_emu_m512i vidx,
                                                          sb_emu_m512i va)
{
    sb_emu_u512 idx = sb_emu_u_si(vidx), a = sb_emu_u_si(va), r;
    for (int i = 0; i < 8; i++)
        r.q[i] = a.q[idx.q[i] & 7];
    return sb_emu_si_of(r);
}

/* ---- bf16 -------------------------------------------------------------- */

/* The SDM's convert_fp32_to_bfloat16 (VCVTNE2PS2BF16). */
static inline uint16_t sb_emu_cvtne_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    const uint32_t mag = u & 0x7fffffffu;
    if (mag < 0x00800000u) /* zero or denormal: a zero of its sign */
        return (uint16_t)((u >> 16) & 0x8000u);
    if (mag == 0x7f800000u) /* infinity */
        return (uint16_t)(u >> 16);
    if (mag > 0x7f800000u) /* NaN: truncated, quiet bit set */
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
/* Words 0-15: b's lanes converted; words 16-31: a's. */
static inline sb_emu_m512bh sb_emu_mm512_cvtne2ps_pbh(sb_emu_m512 va,
                                                      sb_emu_m512 vb)
{
    const sb_emu_u512 a = sb_emu_u_ps(va), b = sb_emu_u_ps(vb);
    sb_emu_u512 r;
    for (int j = 0; j < 16; j++) {
        r.uw[j] = sb_emu_cvtne_bf16(b.f[j]);
        r.uw[j + 16] = sb_emu_cvtne_bf16(a.f[j]);
    }
    sb_emu_m512bh v;
    memcpy(&v, &r, sizeof v);
    return v;
}

/* ---- the names ---------------------------------------------------------- */

/* Some are macros in the compilers' headers (immediate operands, or
 * without optimisation): each name is undefined first. */
#undef _mm512_add_epi32
#undef _mm512_add_ps
#undef _mm512_and_si512
#undef _mm512_castps512_ps256
#undef _mm512_castps_pd
#undef _mm512_castps_si512
#undef _mm512_castsi512_ps
#undef _mm512_castsi512_si256
#undef _mm512_cmp_ps_mask
#undef _mm512_cvtepu16_epi32
#undef _mm512_cvtne2ps_pbh
#undef _mm512_extractf64x4_pd
#undef _mm512_extracti64x4_epi64
#undef _mm512_fmadd_ps
#undef _mm512_fmsub_ps
#undef _mm512_fnmadd_ps
#undef _mm512_loadu_ps
#undef _mm512_loadu_si512
#undef _mm512_mask_cmp_ps_mask
#undef _mm512_mask_loadu_epi16
#undef _mm512_mask_loadu_ps
#undef _mm512_mask_max_epi16
#undef _mm512_mask_max_epu16
#undef _mm512_mask_storeu_epi16
#undef _mm512_mask_storeu_ps
#undef _mm512_maskz_loadu_epi16
#undef _mm512_maskz_loadu_ps
#undef _mm512_maskz_mov_ps
#undef _mm512_max_epi16
#undef _mm512_max_epu16
#undef _mm512_max_ps
#undef _mm512_min_ps
#undef _mm512_mul_ps
#undef _mm512_packus_epi32
#undef _mm512_permutexvar_epi64
#undef _mm512_rcp14_ps
#undef _mm512_reduce_add_ps
#undef _mm512_reduce_max_ps
#undef _mm512_set1_epi16
#undef _mm512_set1_epi32
#undef _mm512_set1_ps
#undef _mm512_set_epi64
#undef _mm512_setr_ps
#undef _mm512_setzero_ps
#undef _mm512_setzero_si512
#undef _mm512_slli_epi32
#undef _mm512_srli_epi32
#undef _mm512_storeu_ps
#undef _mm512_storeu_si512
#undef _mm512_stream_si512
#undef _mm512_sub_ps
#undef _mm512_unpackhi_epi16
#undef _mm512_unpacklo_epi16

#define _mm512_add_epi32 sb_emu_mm512_add_epi32
#define _mm512_add_ps sb_emu_mm512_add_ps
#define _mm512_and_si512 sb_emu_mm512_and_si512
#define _mm512_castps512_ps256 sb_emu_mm512_castps512_ps256
#define _mm512_castps_pd sb_emu_mm512_castps_pd
#define _mm512_castps_si512 sb_emu_mm512_castps_si512
#define _mm512_castsi512_ps sb_emu_mm512_castsi512_ps
#define _mm512_castsi512_si256 sb_emu_mm512_castsi512_si256
#define _mm512_cmp_ps_mask sb_emu_mm512_cmp_ps_mask
#define _mm512_cvtepu16_epi32 sb_emu_mm512_cvtepu16_epi32
#define _mm512_cvtne2ps_pbh sb_emu_mm512_cvtne2ps_pbh
#define _mm512_extractf64x4_pd sb_emu_mm512_extractf64x4_pd
#define _mm512_extracti64x4_epi64 sb_emu_mm512_extracti64x4_epi64
#define _mm512_fmadd_ps sb_emu_mm512_fmadd_ps
#define _mm512_fmsub_ps sb_emu_mm512_fmsub_ps
#define _mm512_fnmadd_ps sb_emu_mm512_fnmadd_ps
#define _mm512_loadu_ps sb_emu_mm512_loadu_ps
#define _mm512_loadu_si512 sb_emu_mm512_loadu_si512
#define _mm512_mask_cmp_ps_mask sb_emu_mm512_mask_cmp_ps_mask
#define _mm512_mask_loadu_epi16 sb_emu_mm512_mask_loadu_epi16
#define _mm512_mask_loadu_ps sb_emu_mm512_mask_loadu_ps
#define _mm512_mask_max_epi16 sb_emu_mm512_mask_max_epi16
#define _mm512_mask_max_epu16 sb_emu_mm512_mask_max_epu16
#define _mm512_mask_storeu_epi16 sb_emu_mm512_mask_storeu_epi16
#define _mm512_mask_storeu_ps sb_emu_mm512_mask_storeu_ps
#define _mm512_maskz_loadu_epi16 sb_emu_mm512_maskz_loadu_epi16
#define _mm512_maskz_loadu_ps sb_emu_mm512_maskz_loadu_ps
#define _mm512_maskz_mov_ps sb_emu_mm512_maskz_mov_ps
#define _mm512_max_epi16 sb_emu_mm512_max_epi16
#define _mm512_max_epu16 sb_emu_mm512_max_epu16
#define _mm512_max_ps sb_emu_mm512_max_ps
#define _mm512_min_ps sb_emu_mm512_min_ps
#define _mm512_mul_ps sb_emu_mm512_mul_ps
#define _mm512_packus_epi32 sb_emu_mm512_packus_epi32
#define _mm512_permutexvar_epi64 sb_emu_mm512_permutexvar_epi64
#define _mm512_rcp14_ps sb_emu_mm512_rcp14_ps
#define _mm512_reduce_add_ps sb_emu_mm512_reduce_add_ps
#define _mm512_reduce_max_ps sb_emu_mm512_reduce_max_ps
#define _mm512_set1_epi16 sb_emu_mm512_set1_epi16
#define _mm512_set1_epi32 sb_emu_mm512_set1_epi32
#define _mm512_set1_ps sb_emu_mm512_set1_ps
#define _mm512_set_epi64 sb_emu_mm512_set_epi64
#define _mm512_setr_ps sb_emu_mm512_setr_ps
#define _mm512_setzero_ps sb_emu_mm512_setzero_ps
#define _mm512_setzero_si512 sb_emu_mm512_setzero_si512
#define _mm512_slli_epi32 sb_emu_mm512_slli_epi32
#define _mm512_srli_epi32 sb_emu_mm512_srli_epi32
#define _mm512_storeu_ps sb_emu_mm512_storeu_ps
#define _mm512_storeu_si512 sb_emu_mm512_storeu_si512
#define _mm512_stream_si512 sb_emu_mm512_stream_si512
#define _mm512_sub_ps sb_emu_mm512_sub_ps
#define _mm512_unpackhi_epi16 sb_emu_mm512_unpackhi_epi16
#define _mm512_unpacklo_epi16 sb_emu_mm512_unpacklo_epi16

#endif
