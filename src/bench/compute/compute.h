/*
 * compute.h — internals of the compute area (compute.peak, compute.gemm)
 * shared by its source files and its unit tests: ISA and dtype names, the
 * FMA-throughput kernels and their closed-form results, the FLOPs-per-cycle
 * table of known microarchitectures, the OpenBLAS kernel-width check, and
 * the GEMM state with its verification.
 *
 * Nothing here is public API: the area's files and its tests share it
 * (`sb_` like every name used across files; `sb__` is for file-local ones).
 */
#ifndef SOLBENCH_COMPUTE_H
#define SOLBENCH_COMPUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/cpu/cpu_gemm.h"
#include "solbench/bench.h"

/* ---- ISAs and dtypes ---------------------------------------------------- */

/* x86: scalar FMA, AVX2+FMA, AVX-512; Arm: NEON (fmla, bfmmla kernels)
 * and SVE (figures in the table; no kernel). */
enum {
    SB__ISA_SCALAR = 0,
    SB__ISA_AVX2,
    SB__ISA_AVX512,
    SB__ISA_NEON,
    SB__ISA_SVE,
    SB__ISA_N
};
enum { SB__DT_FP64 = 0, SB__DT_FP32, SB__DT_BF16, SB__DT_N };

/* "scalar", "avx2", "avx512", "neon", "sve"; "fp64", "fp32", "bf16". */
const char *sb_isa_name(int isa);
const char *sb_dtype_name(int dt);
/* Index by name, -1 when unknown ("auto" is handled by callers). */
int sb_isa_parse(const char *s);
int sb_dtype_parse(const char *s);

/* Bit (1 << isa) set for every ISA this CPU and OS can run (cpuid with the
 * OS's saved-register state: AVX-512 needs the kernel to save ZMM). */
unsigned sb_isa_supported_mask(void);
/* The widest ISA in mask; SB__ISA_SCALAR when mask is empty. */
int sb_isa_best(unsigned mask);
/* Whether this CPU and OS run a bf16 dot product compute.peak has a
 * kernel for (x86: AVX512-BF16's vdpbf16ps; AArch64: FEAT_BF16's
 * bfmmla), and the ISA that kernel is filed under (avx512, neon). */
bool sb_bf16_dot_supported(void);
int sb_bf16_dot_isa(void);

/* ---- FMA-throughput kernels (peak.c) ------------------------------------- */

/* Each kernel keeps SB__PEAK_ACC independent accumulators in vector
 * registers and applies x = x * 1 + 1 to each, SB__PEAK_UNROLL times per
 * loop trip. One "trip" is one iteration of compute.peak per thread. */
#define SB__PEAK_ACC 12
#define SB__PEAK_UNROLL 4
#define SB__PEAK_FMAS_PER_TRIP (SB__PEAK_ACC * SB__PEAK_UNROLL)
/* Trips between two exactness checks: keeps every fp32 accumulator an
 * exact integer (below 2^24) however long the run is. */
#define SB__PEAK_CHUNK (1u << 20)

/* Lanes of one vector of dtype under isa (scalar: 1). */
int sb_peak_lanes(int isa, int dt);
/* FLOPs of one trip on every thread: threads x FMAs per trip x lanes x 2.
 * One iteration of the sampling loop is a block of trips sized to ~20 ms
 * (the "flops" metric of a result is the FLOPs of that block). */
double sb_peak_flops_per_trip(int isa, int dt, int threads);

/* What one thread's kernel left behind: the sum, over every accumulator
 * lane, of its growth (final - initial), and how many lane checks missed
 * the closed form. */
typedef struct sb_peak_tally {
    double growth;
    uint64_t bad;
} sb_peak_tally;

/* Runs `trips` trips of the isa/dt kernel on the calling thread and adds
 * to *t. The caller checks the ISA is supported. */
void sb_peak_kernel(int isa, int dt, uint64_t trips, sb_peak_tally *t);
/* The closed form of tally.growth after `trips` trips: every lane of every
 * accumulator grows by exactly 1 per FMA, so trips x FMAs/trip x lanes. */
double sb_peak_expected_growth(int isa, int dt, uint64_t trips);

/* One point of compute.peak with an explicit ISA mask and bf16 dot
 * product, so tests can pretend one is missing: what this CPU could not
 * run is a skipped result ("skipped: unsupported: ..."), as the runner
 * keeps it; the rest runs through the runner. Appends one result. */
int sb_peak_drive_mask(const sb_params *p, sb_ctx *ctx, sb_result_list *out,
                       sb_err *err, unsigned supported_mask, bool bf16_dot);

/* ---- microarchitecture (cpu_model.c) ------------------------------------- */

/* What the table is looked up by: detected here, made up in tests. */
typedef struct sb_cpu_facts {
    char vendor[16];   /* "Intel", "AMD", "Arm", else as cpuid says */
    int family, model; /* x86 display family and model; Arm: MIDR
                          implementer and part number */
    int stepping;
    char brand[64];    /* the brand string (SKU: Skylake-SP FMA units) */
    bool fp512;        /* AMD cpuid 8000001Ah EAX bit 3: 512-bit FP path */
    unsigned isa_mask; /* 1 << SB__ISA_* the CPU and OS run */
    bool bf16_dot;     /* AVX512-BF16 (x86), FEAT_BF16 (Arm) */
    bool amx_bf16;
} sb_cpu_facts;

typedef struct sb_uarch {
    char name[48]; /* "Zen 3", "Sapphire/Emerald/Granite Rapids" */
    int family, model;
    /* FLOPs per cycle per core for [isa][dt]; 0 where the ISA or the
     * dtype is not available. bf16 is the dot product of that ISA
     * (AVX-512: vdpbf16ps; NEON: bfmmla). */
    double fpc[SB__ISA_N][SB__DT_N];
    /* Why: "2 FMA pipes x 256-bit (FP0, FP1; AMD 19h, IL)". */
    char source[SB__ISA_N][200];
    char bf16_source[160];
    double amx_bf16; /* AMX-BF16 tiles, FLOPs per cycle; 0 none */
    char amx_source[64];
    bool hybrid;  /* P-core figures on a CPU with slower E-cores */
    bool assumed; /* no entry, or an entry the SKU could change */
} sb_uarch;

void sb_cpu_facts_detect(sb_cpu_facts *f);
void sb_uarch_detect(sb_uarch *u);
/* The table lookup itself, for tests: fills u from facts. */
void sb_uarch_lookup(sb_uarch *u, const sb_cpu_facts *f);

/* ---- GEMM (gemm.c) ------------------------------------------------------- */

#define SB__GEMM_SAMPLES 64

typedef struct sb_gemm {
    int dt;          /* SB__DT_* */
    int64_t m, n, k; /* C[m x n] = A[m x k] B[k x n], row-major */
    void *a, *b;     /* double, float, or uint16_t (bf16) */
    void *c;         /* double for fp64, float otherwise */
    int threads;
    uint64_t seed;
    /* Where the verification samples C (fixed at setup). */
    int64_t si[SB__GEMM_SAMPLES], sj[SB__GEMM_SAMPLES];
    /* Filled by the check: worst sampled error / tolerance scale. */
    double max_rel_err;
    double max_colsum_err;
    /* rotate=1 (decode, llm): n_copies of B, B itself then the others one
     * stride apart in `copies`, multiplied in turn, each product reading
     * the next one, as a decode step reads its layers */
    unsigned char *copies;
    size_t stride;
    int n_copies, next;
    /* split over the threads by B's rows (K): `used` blocks of `chunk`
     * rows (the last one's own plan when shorter), each thread's product
     * into its own partial (thread 0's into C, the others' in `part`),
     * summed after */
    bool split;
    sb_gemm_plan *split_plan, *split_last;
    int64_t chunk;
    int used;
    void *part;
    double split_s[2];  /* split=auto: the library's and the split's mean */
    sb_gemm_plan *plan; /* the library's plan (cpu_gemm.h) */
    bool lib_auto;      /* chosen by timing every library */
    double
        lib_s[SB_GEMM_NLIBS]; /* auto: each library's best time (0: not run) */
} sb_gemm;

/* Allocates and fills A, B (random in [-1, 1), rounded to bf16 for bf16)
 * and C; picks the sample points; makes the plan of library lib
 * (SB_GEMM_OPENBLAS, SB_GEMM_ONEDNN), or of the fastest when lib < 0.
 * Returns 0 or a negative code (SB_EUNSUP: no library asked for runs dt
 * here). */
int sb_gemm_create(int dt, int64_t m, int64_t n, int64_t k, int threads,
                   uint64_t seed, int lib, sb_gemm **out, sb_err *err);
void sb_gemm_destroy(sb_gemm *g);
/* Makes B `copies` identical matrices that sb_gemm_once reads in turn
 * (copies <= 1: one). Returns 0 or SB_ENOMEM. */
int sb_gemm_rotate(sb_gemm *g, int copies, sb_err *err);
/* Makes the products run split over the threads by B's rows (each
 * thread's block contiguous, its own partial, summed after) when they can
 * be: at most SB_GEMM_SPLIT_M rows, 2 threads or more, K at least 16 a
 * thread. Returns 1 when split, 0 when not splittable, or a negative code
 * (the plans, or memory). */
int sb_gemm_split(sb_gemm *g, sb_err *err);
/* C = A B once (through the plan's library, or its split), with the next
 * of B's copies when it has several. */
void sb_gemm_once(sb_gemm *g);
/* Checks C: the sampled elements against a double-precision reference
 * and every column sum against (1^T A) B. Returns the number of failures
 * (0 = right) and writes the first one's description into why. */
int sb_gemm_check(sb_gemm *g, char *why, size_t len);
/* Unit roundoff of the accumulation for dt (2^-53 fp64, 2^-24 otherwise). */
double sb_gemm_unit_roundoff(int dt);
/* Element of C as double, and setting one (tests plant wrong values). */
double sb_gemm_c_get(const sb_gemm *g, int64_t i, int64_t j);
void sb_gemm_c_set(sb_gemm *g, int64_t i, int64_t j, double v);

/* ---- compute.noise ------------------------------------------------------ */

/* The interruptions among n quantum times t[] (reordered: their excesses
 * over the shortest, those above the threshold, first): *tmin the
 * shortest, *thr the threshold max(0.25 x shortest, 50 us), *lost the sum
 * of every excess. Returns how many were above it. */
size_t sb_noise_interrupts(double *t, size_t n, double *tmin, double *thr,
                           double *lost);

#endif
