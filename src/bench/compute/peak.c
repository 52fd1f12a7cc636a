/*
 * peak.c — compute.peak: the FMA throughput of one core or every core, per
 * ISA (scalar, AVX2+FMA, AVX-512) and precision (fp64, fp32), beside the
 * theoretical peak of the same cores (cores x measured GHz x FLOPs/cycle of
 * the ISA on this microarchitecture).
 *
 * Each thread keeps 12 independent accumulators in vector registers — more
 * than FMA latency x FMA pipes (4 x 2 on every current x86 core) — and
 * applies x = x * a + c to each, where a = 1 and c = 1 are hidden from the
 * compiler so it cannot turn the FMA into an add. The loop is inline
 * assembly so the instruction, its width and the dependency chains are
 * exactly those stated. The AVX-512 kernel is compiled with a target
 * attribute so it builds everywhere; a kernel the CPU cannot run is never
 * called and its point is reported as skipped.
 *
 * Verification is in closed form: every lane starts at a distinct integer
 * and grows by exactly 1 per FMA. Every 2^20 trips the kernel checks each
 * lane (still an exact integer below 2^24, so fp32 is exact too), adds its
 * growth to a per-thread total and restarts; verify() compares each
 * thread's total with trips x 48 x lanes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench/compute/compute.h"
#include "solbench/runner.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"
#include "solbench/util.h"

_Static_assert(SB__PEAK_ACC == 12 && SB__PEAK_UNROLL == 4,
               "the assembly below spells out 12 accumulators x 4");

/* ---- kernels ------------------------------------------------------------- */

int sb_peak_lanes(int isa, int dt)
{
    /* bf16: elements of the bf16 pairs one dot product multiplies. */
    int bytes = dt == SB__DT_FP64 ? 8 : dt == SB__DT_BF16 ? 2 : 4;
    switch (isa) {
    case SB__ISA_AVX2:
        return 32 / bytes;
    case SB__ISA_AVX512:
        return 64 / bytes;
    case SB__ISA_NEON:
        /* bfmmla multiplies 2 x 4 by 4 x 2 bf16: 16 pairs, 32 FLOPs */
        return dt == SB__DT_BF16 ? 16 : 16 / bytes;
    default:
        return 1;
    }
}

double sb_peak_flops_per_trip(int isa, int dt, int threads)
{
    return (double)threads * SB__PEAK_FMAS_PER_TRIP * sb_peak_lanes(isa, dt) *
           2.0;
}

double sb_peak_expected_growth(int isa, int dt, uint64_t trips)
{
    return (double)trips * SB__PEAK_FMAS_PER_TRIP * sb_peak_lanes(isa, dt);
}

#if defined(__x86_64__)

#define SB__FMA12(I)                                                           \
    I " %[c], %[a], %[x0]\n\t" I " %[c], %[a], %[x1]\n\t" I                    \
      " %[c], %[a], %[x2]\n\t" I " %[c], %[a], %[x3]\n\t" I                    \
      " %[c], %[a], %[x4]\n\t" I " %[c], %[a], %[x5]\n\t" I                    \
      " %[c], %[a], %[x6]\n\t" I " %[c], %[a], %[x7]\n\t" I                    \
      " %[c], %[a], %[x8]\n\t" I " %[c], %[a], %[x9]\n\t" I                    \
      " %[c], %[a], %[x10]\n\t" I " %[c], %[a], %[x11]\n\t"

/* vfmadd213 x, a, c (Intel order) is x = a * x + c: the multiply is on the
 * accumulator, so each chain is a true FMA dependency chain. */
#define SB__PEAK_LOOP(I)                                                       \
    "1:\n\t" SB__FMA12(I) SB__FMA12(I) SB__FMA12(I)                            \
        SB__FMA12(I) "dec %[n]\n\t"                                            \
                     "jnz 1b\n\t"

/* One kernel per (ISA, dtype). VT is the register type, ET the element of
 * the accumulators, ONE the bits of a and c (1 in ET; for vdpbf16ps two
 * bf16 ones, so a lane grows by 1 x 1 + 1 x 1 = GROW = 2 each time). */
#define SB__DEFINE_PEAK(FN, TARGET, VT, ET, INSN)                              \
    SB__DEFINE_PEAK_G(FN, TARGET, VT, ET, INSN, ones[l] = (ET)1, 1)
#define SB__DEFINE_PEAK_G(FN, TARGET, VT, ET, INSN, ONE, GROW)                 \
    __attribute__((target(TARGET), noinline)) static void FN(uint64_t trips,   \
                                                             sb_peak_tally *t) \
    {                                                                          \
        enum { L = sizeof(VT) / sizeof(ET) };                                  \
        ET init[SB__PEAK_ACC][L], fin[SB__PEAK_ACC][L], ones[L];               \
        for (int i = 0; i < SB__PEAK_ACC; i++)                                 \
            for (int l = 0; l < L; l++)                                        \
                init[i][l] = (ET)(i * L + l + 1);                              \
        for (int l = 0; l < L; l++)                                            \
            ONE;                                                               \
        VT a, c, x[SB__PEAK_ACC];                                              \
        memcpy(&a, ones, sizeof a);                                            \
        memcpy(&c, ones, sizeof c);                                            \
        /* Hide a and c: fma(x, 1, c) must not become an add. */               \
        __asm__("" : "+v"(a), "+v"(c));                                        \
        while (trips > 0) {                                                    \
            uint64_t n = trips < SB__PEAK_CHUNK ? trips : SB__PEAK_CHUNK;      \
            uint64_t cnt = n;                                                  \
            trips -= n;                                                        \
            memcpy(x, init, sizeof x);                                         \
            __asm__ volatile(                                                  \
                SB__PEAK_LOOP(INSN)                                            \
                : [x0] "+v"(x[0]), [x1] "+v"(x[1]), [x2] "+v"(x[2]),           \
                  [x3] "+v"(x[3]), [x4] "+v"(x[4]), [x5] "+v"(x[5]),           \
                  [x6] "+v"(x[6]), [x7] "+v"(x[7]), [x8] "+v"(x[8]),           \
                  [x9] "+v"(x[9]), [x10] "+v"(x[10]), [x11] "+v"(x[11]),       \
                  [n] "+r"(cnt)                                                \
                : [a] "v"(a), [c] "v"(c)                                       \
                : "cc");                                                       \
            memcpy(fin, x, sizeof fin);                                        \
            /* Each lane took n x UNROLL steps of +GROW. */                    \
            double chunk_want = (double)n * SB__PEAK_UNROLL * (GROW);          \
            for (int i = 0; i < SB__PEAK_ACC; i++)                             \
                for (int l = 0; l < L; l++) {                                  \
                    double g = (double)fin[i][l] - (double)init[i][l];         \
                    t->growth += g;                                            \
                    if (!(g == chunk_want))                                    \
                        t->bad++;                                              \
                }                                                              \
        }                                                                      \
    }

typedef double sb__v4d __attribute__((vector_size(32)));
typedef float sb__v8f __attribute__((vector_size(32)));
typedef double sb__v8d __attribute__((vector_size(64)));
typedef float sb__v16f __attribute__((vector_size(64)));

SB__DEFINE_PEAK(peak_scalar_fp64, "fma", double, double, "vfmadd213sd")
SB__DEFINE_PEAK(peak_scalar_fp32, "fma", float, float, "vfmadd213ss")
SB__DEFINE_PEAK(peak_avx2_fp64, "avx2,fma", sb__v4d, double, "vfmadd213pd")
SB__DEFINE_PEAK(peak_avx2_fp32, "avx2,fma", sb__v8f, float, "vfmadd213ps")
SB__DEFINE_PEAK(peak_avx512_fp64, "avx512f", sb__v8d, double, "vfmadd213pd")
SB__DEFINE_PEAK(peak_avx512_fp32, "avx512f", sb__v16f, float, "vfmadd213ps")
/* x += a·c over bf16 pairs into fp32 lanes (vdpbf16ps c, a, x in AT&T
 * order): every lane grows by exactly 2, kept below 2^24 as fp32 is. */
SB__DEFINE_PEAK_G(
    peak_avx512_bf16, "avx512f,avx512bf16", sb__v16f, float, "vdpbf16ps",
    do {
        uint32_t two_ones = 0x3f803f80u;
        memcpy(&ones[l], &two_ones, 4);
    } while (0),
    2)

void sb_peak_kernel(int isa, int dt, uint64_t trips, sb_peak_tally *t)
{
    bool d = dt == SB__DT_FP64;
    switch (isa) {
    case SB__ISA_AVX512:
        if (dt == SB__DT_BF16)
            peak_avx512_bf16(trips, t);
        else
            d ? peak_avx512_fp64(trips, t) : peak_avx512_fp32(trips, t);
        break;
    case SB__ISA_AVX2:
        d ? peak_avx2_fp64(trips, t) : peak_avx2_fp32(trips, t);
        break;
    default:
        d ? peak_scalar_fp64(trips, t) : peak_scalar_fp32(trips, t);
        break;
    }
}

#endif

#if !defined(__x86_64__)
/* The portable scalar kernel (isa=scalar where there is no x86 FMA):
 * the same closed form in C. */
#define SB__DEFINE_PEAK_C(FN, ET, FMA)                                         \
    static void FN(uint64_t trips, sb_peak_tally *t)                           \
    {                                                                          \
        ET init[SB__PEAK_ACC], x[SB__PEAK_ACC], a = 1, c = 1;                  \
        __asm__("" : "+r"(a), "+r"(c));                                        \
        for (int i = 0; i < SB__PEAK_ACC; i++)                                 \
            init[i] = (ET)(i + 1);                                             \
        while (trips > 0) {                                                    \
            uint64_t n = trips < SB__PEAK_CHUNK ? trips : SB__PEAK_CHUNK;      \
            trips -= n;                                                        \
            memcpy(x, init, sizeof x);                                         \
            for (uint64_t s = 0; s < n * SB__PEAK_UNROLL; s++)                 \
                for (int i = 0; i < SB__PEAK_ACC; i++)                         \
                    x[i] = FMA(a, x[i], c);                                    \
            for (int i = 0; i < SB__PEAK_ACC; i++) {                           \
                double g = (double)x[i] - (double)init[i];                     \
                t->growth += g;                                                \
                if (!(g == (double)n * SB__PEAK_UNROLL))                       \
                    t->bad++;                                                  \
            }                                                                  \
        }                                                                      \
    }
SB__DEFINE_PEAK_C(peak_c_fp64, double, __builtin_fma)
SB__DEFINE_PEAK_C(peak_c_fp32, float, __builtin_fmaf)

#endif

#if defined(__aarch64__)
/* The assembly strings are laid out by hand. */
/* clang-format off */

/* AArch64: NEON `fmla` on 2 fp64 or 4 fp32 lanes and `bfmmla` for bf16.
 * 24 accumulators (v0-v23), twice each per trip: 48 instructions a trip
 * as on x86, and 24 chains cover 4 FMA pipes x 4 cycles of latency
 * (Neoverse V1/V2) with room to spare. fmla x, a, c is x += a·c with
 * a = c = 1 (v24, v25); bfmmla x.4s, a.8h, c.8h adds to each of x's 4
 * fp32 lanes the dot product of 4 bf16 pairs, with a = c = ones: +4 a
 * lane. GCC's asm takes at most 30 operands, so the accumulators live in
 * named registers, loaded from and stored to memory around the loop. */
#define SB__N1(I, R, T, S) I " v" #R "." T ", v24." S ", v25." S "\n\t"
#define SB__N8(I, R0, R1, R2, R3, R4, R5, R6, R7, T, S)                      \
    SB__N1(I, R0, T, S) SB__N1(I, R1, T, S) SB__N1(I, R2, T, S)              \
    SB__N1(I, R3, T, S) SB__N1(I, R4, T, S) SB__N1(I, R5, T, S)              \
    SB__N1(I, R6, T, S) SB__N1(I, R7, T, S)
#define SB__N24(I, T, S)                                                     \
    SB__N8(I, 0, 1, 2, 3, 4, 5, 6, 7, T, S)                                  \
    SB__N8(I, 8, 9, 10, 11, 12, 13, 14, 15, T, S)                            \
    SB__N8(I, 16, 17, 18, 19, 20, 21, 22, 23, T, S)
#define SB__LD4(R0, R1, R2, R3)                                              \
    "ld1 {v" #R0 ".16b, v" #R1 ".16b, v" #R2 ".16b, v" #R3 ".16b}, [%[p]], #64\n\t"
#define SB__ST4(R0, R1, R2, R3)                                              \
    "st1 {v" #R0 ".16b, v" #R1 ".16b, v" #R2 ".16b, v" #R3 ".16b}, [%[p]], #64\n\t"

#define SB__NEON_ACC 24
_Static_assert(SB__NEON_ACC * 2 == SB__PEAK_FMAS_PER_TRIP,
               "48 instructions a trip on every ISA");

/* n trips of INSN over the 24 accumulators in x (16 bytes each), with
 * v24 = v25 = the 16 bytes at ones. */
#define SB__NEON_LOOP(INSN, T, S, x, ones, n)                                \
    do {                                                                     \
        void *p_ = (x);                                                      \
        uint64_t cnt_ = (n);                                                 \
        __asm__ volatile(".arch_extension bf16\n\t"                          \
                         "ld1 {v24.16b}, [%[o]]\n\t"                         \
                         "mov v25.16b, v24.16b\n\t"                          \
                         SB__LD4(0, 1, 2, 3) SB__LD4(4, 5, 6, 7)             \
                         SB__LD4(8, 9, 10, 11) SB__LD4(12, 13, 14, 15)       \
                         SB__LD4(16, 17, 18, 19) SB__LD4(20, 21, 22, 23)     \
                         "sub %[p], %[p], #384\n\t"                          \
                         "1:\n\t" SB__N24(INSN, T, S) SB__N24(INSN, T, S)    \
                         "subs %[n], %[n], #1\n\t"                           \
                         "b.ne 1b\n\t"                                       \
                         SB__ST4(0, 1, 2, 3) SB__ST4(4, 5, 6, 7)             \
                         SB__ST4(8, 9, 10, 11) SB__ST4(12, 13, 14, 15)       \
                         SB__ST4(16, 17, 18, 19) SB__ST4(20, 21, 22, 23)     \
                         : [p] "+r"(p_), [n] "+r"(cnt_)                      \
                         : [o] "r"(ones)                                     \
                         : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7",   \
                           "v8", "v9", "v10", "v11", "v12", "v13", "v14",    \
                           "v15", "v16", "v17", "v18", "v19", "v20", "v21",  \
                           "v22", "v23", "v24", "v25", "cc", "memory");      \
    } while (0)

/* ET: the accumulators' element; ONE: the bits of a and c in each 32-bit
 * word (fp64 ones take a double array); GROW: a lane's growth per
 * instruction. */
#define SB__DEFINE_PEAK_NEON(FN, ET, INSN, T, S, SETONES, GROW)              \
    static void FN(uint64_t trips, sb_peak_tally *t)                        \
    {                                                                        \
        enum { L = 16 / sizeof(ET) };                                        \
        ET init[SB__NEON_ACC][L], x[SB__NEON_ACC][L];                        \
        ET ones[L];                                                          \
        for (int l = 0; l < L; l++)                                          \
            SETONES;                                                         \
        for (int i = 0; i < SB__NEON_ACC; i++)                               \
            for (int l = 0; l < L; l++)                                      \
                init[i][l] = (ET)(i * L + l + 1);                            \
        while (trips > 0) {                                                  \
            uint64_t n = trips < SB__PEAK_CHUNK ? trips : SB__PEAK_CHUNK;    \
            trips -= n;                                                      \
            memcpy(x, init, sizeof x);                                       \
            SB__NEON_LOOP(INSN, T, S, x, ones, n);                           \
            /* Each lane took n x 2 steps of +GROW. */                       \
            double chunk_want = (double)n * 2 * (GROW);                      \
            for (int i = 0; i < SB__NEON_ACC; i++)                           \
                for (int l = 0; l < L; l++) {                                \
                    double g = (double)x[i][l] - (double)init[i][l];         \
                    t->growth += g;                                          \
                    if (!(g == chunk_want))                                  \
                        t->bad++;                                            \
                }                                                            \
        }                                                                    \
    }

SB__DEFINE_PEAK_NEON(peak_neon_fp64, double, "fmla", "2d", "2d",
                     ones[l] = 1.0, 1)
SB__DEFINE_PEAK_NEON(peak_neon_fp32, float, "fmla", "4s", "4s",
                     ones[l] = 1.0f, 1)
SB__DEFINE_PEAK_NEON(peak_neon_bf16, float, "bfmmla", "4s", "8h",
                     do { uint32_t two_ones = 0x3f803f80u;
                          memcpy(&ones[l], &two_ones, 4); } while (0), 4)

void sb_peak_kernel(int isa, int dt, uint64_t trips, sb_peak_tally *t)
{
    if (isa == SB__ISA_NEON) {
        if (dt == SB__DT_BF16)
            peak_neon_bf16(trips, t);
        else
            dt == SB__DT_FP64 ? peak_neon_fp64(trips, t)
                              : peak_neon_fp32(trips, t);
        return;
    }
    dt == SB__DT_FP64 ? peak_c_fp64(trips, t) : peak_c_fp32(trips, t);
}
/* clang-format on */
#elif !defined(__x86_64__) /* neither: the portable scalar kernel alone */

void sb_peak_kernel(int isa, int dt, uint64_t trips, sb_peak_tally *t)
{
    (void)isa;
    dt == SB__DT_FP64 ? peak_c_fp64(trips, t) : peak_c_fp32(trips, t);
}
#endif

/* ---- the benchmark ------------------------------------------------------- */

/* Per-thread tallies on their own cache lines. */
typedef struct peak_slot {
    sb_peak_tally t;
    char pad[64 - sizeof(sb_peak_tally)];
} peak_slot;

typedef struct peak_state {
    int isa, dt, threads;
    bool all_cores;
    uint64_t trips;    /* trips run so far, by every thread */
    uint64_t block;    /* trips per iteration of the sampling loop */
    int short_threads; /* parallel regions that got fewer threads */
    peak_slot *slot;
} peak_state;

static const sb_param_def peak_params[] = {
    {"dtype", SB_P_STR, "fp64,fp32", 0, 0, "fp64|fp32|bf16",
     "precision of the FMAs; bf16: the bf16 dot product into fp32 "
     "(AVX512-BF16 vdpbf16ps)"},
    {"isa", SB_P_STR, "auto", 0, 0, "auto|scalar|avx2|avx512|neon",
     "instruction set; auto = the widest this CPU runs (for bf16, the one "
     "with the dot product)"},
    {"cores", SB_P_STR, "all", 0, 0, "1|all",
     "one thread, or all of --threads (one per core by default)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* The ISA a point asks for, "auto" resolved against mask (for bf16, the
 * ISA of the dot product: AVX-512). */
static int peak_isa(const sb_params *p, unsigned mask)
{
    const char *s = sb_p_str(p, "isa");
    if (strcmp(s, "auto") != 0)
        return sb_isa_parse(s);
    if (strcmp(sb_p_str(p, "dtype"), "bf16") == 0)
        return sb_bf16_dot_isa();
    return sb_isa_best(mask);
}

static int peak_threads(const sb_params *p, const sb_ctx *ctx)
{
    if (strcmp(sb_p_str(p, "cores"), "1") == 0)
        return 1;
    return ctx->threads > 0 ? ctx->threads : 1;
}

static int peak_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    const sb_params *p = pt->params;
    (void)ctx;
    if (sb_dtype_parse(sb_p_str(p, "dtype")) < 0)
        return sb_fail(err, SB_EINVAL,
                       "compute.peak: parameter dtype=%s: expected fp64, "
                       "fp32 or bf16",
                       sb_p_str(p, "dtype"));
    int isa = peak_isa(p, sb_isa_supported_mask());
    if (isa < 0 || isa == SB__ISA_SVE)
        return sb_fail(err, SB_EINVAL,
                       "compute.peak: parameter isa=%s: expected auto, "
                       "scalar, avx2, avx512 or neon",
                       sb_p_str(p, "isa"));
    return 0;
}

/* Why a CPU with these ISAs (and bf16 dot product or not) cannot run p:
 * SB_EUNSUP with "unsupported: ...", which the runner keeps as a skipped
 * result; SB_EINVAL for an ISA it does not know; 0 when it can. */
static int peak_unsupported(const sb_params *p, unsigned mask, bool bf16_dot,
                            sb_err *err)
{
    int isa = peak_isa(p, mask);
    if (isa < 0)
        return sb_fail(err, SB_EINVAL,
                       "compute.peak: parameter isa=%s: "
                       "unknown",
                       sb_p_str(p, "isa"));
    if (!(mask & (1u << isa)))
        return sb_fail(err, SB_EUNSUP,
                       "unsupported: %s not available on this CPU",
                       sb_isa_name(isa));
    const int bf16_isa = sb_bf16_dot_isa();
    if (strcmp(sb_p_str(p, "dtype"), "bf16") == 0 &&
        (isa != bf16_isa || !bf16_dot))
        return sb_fail(err, SB_EUNSUP,
                       "unsupported: bf16 needs a bf16 dot product (%s)%s%s",
                       bf16_isa == SB__ISA_NEON ? "FEAT_BF16 bfmmla"
                                                : "AVX512-BF16 vdpbf16ps",
                       isa != bf16_isa ? " and isa="
                                       : ", which this CPU does not have",
                       isa != bf16_isa ? sb_isa_name(bf16_isa) : "");
    return 0;
}

static int peak_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    const sb_params *p = pt->params;
    unsigned mask = sb_isa_supported_mask();
    int rc = peak_unsupported(p, mask, sb_bf16_dot_supported(), err);
    if (rc)
        return rc;
    int isa = peak_isa(p, mask);
    peak_state *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "compute.peak: out of memory");
    s->isa = isa;
    s->dt = sb_dtype_parse(sb_p_str(p, "dtype"));
    s->threads = peak_threads(p, ctx);
    s->all_cores = s->threads == (ctx->threads > 0 ? ctx->threads : 1);
    s->slot = sb_alloc_aligned(sizeof(peak_slot) * (size_t)s->threads);
    if (!s->slot) {
        free(s);
        return sb_fail(err, SB_ENOMEM, "compute.peak: out of memory");
    }
    memset(s->slot, 0, sizeof(peak_slot) * (size_t)s->threads);
    /* One thread per core, bound, as for every CPU kernel; then one empty
     * parallel region, so creating the thread pool is never timed. */
    sb_threads_setup(s->threads);
    int woke = 0;
#pragma omp parallel num_threads(s->threads) reduction(+ : woke)
    woke += 1;
    SB_KEEP(woke);
    *state = s;
    return 0;
}

static void peak_run(void *state, uint64_t iters)
{
    peak_state *s = state;
    int got = s->threads;
#pragma omp parallel num_threads(s->threads)
    {
        sb_peak_kernel(s->isa, s->dt, iters, &s->slot[omp_get_thread_num()].t);
        if (omp_get_thread_num() == 0)
            got = omp_get_num_threads();
    }
    if (got != s->threads)
        s->short_threads++;
    s->trips += iters;
}

/* Peak samples last at least this long. Every sample is one fork/join of
 * all threads, so a sample that waits on one thread the OS descheduled for
 * a time slice (~4 ms) is slow as a whole; 20 ms samples keep that, and
 * the fork/join itself (a few microseconds), to a small share. */
#define SB__PEAK_SAMPLE_S 20e-3

/* One iteration of the shared sampling loop is a block of trips. */
static void peak_run_blocks(void *state, uint64_t iters)
{
    peak_state *s = state;
    peak_run(state, iters * s->block);
}

/* Sizes the block so one sample lasts SB__PEAK_SAMPLE_S, timing every
 * candidate twice and keeping the faster: one call slowed by preemption or
 * a waking thread must not fix a tiny block (then every sample would be
 * mostly fork/join). The runner's loop then samples whole blocks. */
static int peak_plan(void *state, const sb_ctx *ctx, sb_sampling *sp,
                     sb_err *err)
{
    (void)ctx, (void)err;
    peak_state *s = state;
    uint64_t b = 256;
    for (;;) {
        double t = INFINITY;
        for (int k = 0; k < 2; k++) {
            double t0 = sb_now();
            peak_run(s, b);
            double dt = sb_now() - t0;
            if (dt < t)
                t = dt;
        }
        if (t >= SB__PEAK_SAMPLE_S || b >= (1ull << 40))
            break;
        double grow = t > 0 ? 1.1 * SB__PEAK_SAMPLE_S / t : 1000.0;
        grow = grow < 2.0 ? 2.0 : grow > 1000.0 ? 1000.0 : grow;
        b = (uint64_t)ceil((double)b * grow);
    }
    s->block = b;
    (void)sp; /* the runner calibrates blocks per sample (one, mostly) */
    return 0;
}

static const sb_timer peak_timer = {.plan = peak_plan};

static int peak_verify(void *state, sb_result *r)
{
    peak_state *s = state;
    double want = sb_peak_expected_growth(s->isa, s->dt, s->trips);
    r->valid = s->trips > 0 && s->short_threads == 0;
    if (s->short_threads)
        sb_result_note(r, "verification: OpenMP ran fewer than %d threads",
                       s->threads);
    for (int t = 0; t < s->threads; t++) {
        const sb_peak_tally *tl = &s->slot[t].t;
        if (tl->bad || tl->growth != want) {
            if (r->valid)
                sb_result_note(r,
                               "verification: thread %d accumulators grew "
                               "by %.17g, closed form %.17g (%llu lanes "
                               "off)",
                               t, tl->growth, want,
                               (unsigned long long)tl->bad);
            r->valid = false;
        }
    }
    return 0;
}

static void peak_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    const sb_params *p = pt->params;
    peak_state *s = state;
    if (r->stats.p50 <= 0 || r->stats.min <= 0)
        return;
    double flops =
        sb_peak_flops_per_trip(s->isa, s->dt, s->threads) * (double)s->block;
    double achieved = flops / r->stats.p50;
    double best = flops / r->stats.min;
    sb_result_metric(r, "flops", flops, "FLOP");
    sb_result_metric(r, "GFLOPs", achieved * 1e-9, "GFLOP/s");
    sb_result_metric(r, "GFLOPs_best", best * 1e-9, "GFLOP/s");
    if (strcmp(sb_p_str(p, "isa"), "auto") == 0)
        sb_result_note(r, "isa=auto ran the %s kernel", sb_isa_name(s->isa));

    /* The clock of every core used, measured at once on all of them (an
     * all-core clock can be lower than a one-core one). A core whose
     * methods disagree leaves the clock, and the theoretical peak,
     * unknown. */
    double ghz_sum = 0;
    int uncertain = 0;
    sb_core_clock worst = {0}, first = {0};
#pragma omp parallel num_threads(s->threads) reduction(+ : ghz_sum, uncertain)
    {
        sb_core_clock ck;
        sb_core_clock_measure(&ck);
        ghz_sum += ck.ghz;
        if (omp_get_thread_num() == 0)
            first = ck;
        if (ck.uncertain || ck.ghz <= 0) {
            uncertain++;
#pragma omp critical(sb_peak_clock)
            worst = ck;
        }
    }
    double ghz = uncertain ? 0.0 : ghz_sum / s->threads;
    if (uncertain)
        sb_result_note(r,
                       "no theoretical peak: the core clock is uncertain on "
                       "%d of %d threads (e.g. add chain %.3f GHz, multiply "
                       "chain %.3f, cycle counter %.3f; 0 = not available)",
                       uncertain, s->threads, worst.ghz_add, worst.ghz_mul,
                       worst.ghz_perf);
    int cores = sb_cores();
    int used = (cores > 0 && s->threads > cores) ? cores : s->threads;

    sb_uarch u;
    sb_uarch_detect(&u);
    double fpc = u.fpc[s->isa][s->dt];
    const char *dt = sb_dtype_name(s->dt);
    char name[48];
    if (ghz > 0 && fpc > 0) {
        double theo = used * ghz * 1e9 * fpc;
        sb_result_metric(r, "theoretical_GFLOPs", theo * 1e-9, "GFLOP/s");
        sb_result_metric(r, "pct_of_theoretical", 100.0 * achieved / theo, "%");
        sb_result_note(r,
                       "theoretical = %d core%s x %.3f GHz (measured: %s) "
                       "x %g FLOP/cycle (%s %s: %s)",
                       used, used == 1 ? "" : "s", ghz, first.method, fpc,
                       u.name, sb_isa_name(s->isa),
                       s->dt == SB__DT_BF16 ? u.bf16_source : u.source[s->isa]);
        if (u.hybrid)
            sb_result_note(r, "hybrid CPU: the figure is the P-cores'; "
                              "threads on E-cores make the theoretical peak "
                              "too high");
        if (u.assumed)
            sb_result_note(r, "the FLOPs per cycle are assumed, not known "
                              "for this CPU (see the source above)");
        if (s->dt == SB__DT_BF16 && u.amx_bf16 > 0)
            sb_result_note(r,
                           "this CPU also has AMX-BF16: %g FLOP/cycle "
                           "per core with tiles (%s), which this kernel does "
                           "not use; oneDNN's GEMM does",
                           u.amx_bf16, u.amx_source);

        if (s->all_cores) {
            snprintf(name, sizeof name, "peak.%s.theoretical", dt);
            if (theo > sb_ceil_get(&ctx->ceil, name))
                sb_ceil_set(&ctx->ceil, name, theo, "theoretical");
        }
    }
    if (ghz > 0)
        sb_result_metric(r, "GHz", ghz, "GHz");
    if (fpc > 0)
        sb_result_metric(r, "flops_per_cycle", fpc, "FLOP/cycle");
    /* The all-core figure is the ceiling later benches compare against: a
     * speed of light, so the best sample (the least disturbed one) of the
     * best ISA measured. */
    if (s->all_cores && r->valid) {
        snprintf(name, sizeof name, "peak.%s", dt);
        if (best > sb_ceil_get(&ctx->ceil, name))
            sb_ceil_set(&ctx->ceil, name, best, "measured");
    }
}

static void peak_teardown(void *state)
{
    peak_state *s = state;
    if (!s)
        return;
    sb_free_aligned(s->slot);
    free(s);
}

static const sb_impl compute_peak_cpu = {
    .backend = "cpu",
    .setup = peak_setup,
    .run = peak_run_blocks,
    .timer = &peak_timer,
    .verify = peak_verify,
    .report = peak_report,
    .teardown = peak_teardown,
};

extern const sb_bench sb_bench_compute_peak;

int sb_peak_drive_mask(const sb_params *p, sb_ctx *ctx, sb_result_list *out,
                       sb_err *err, unsigned mask, bool bf16_dot)
{
    sb_err why = {0};
    int rc = peak_unsupported(p, mask, bf16_dot, &why);
    if (rc == SB_EUNSUP)
        return sb_results_push_skipped(out, "compute.peak", "compute", "cpu", p,
                                       err, "skipped: %s", why.msg);
    if (rc) {
        if (err)
            *err = why;
        return rc;
    }
    return sb_run_point(&sb_bench_compute_peak, NULL, p, ctx, out, err);
}

const sb_bench sb_bench_compute_peak = {
    .name = "compute.peak",
    .area = "compute",
    .desc = "FMA throughput (scalar, AVX2, AVX-512; fp64, fp32; bf16 dot "
            "product) vs the theoretical peak",
    .params = peak_params,
    .quick = "isa=auto cores=all dtype=fp64,fp32,bf16",
    .full = "isa=scalar,avx2,avx512 cores=1,all dtype=fp64,fp32,bf16",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .check = peak_check,
    .impls = (const sb_impl *const[]){&compute_peak_cpu, NULL},
};
