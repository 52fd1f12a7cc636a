/*
 * cpu_gemm.h — matrix products on the CPU from the best library the
 * machine has: OpenBLAS through CBLAS (fp64, fp32, and bf16 where the
 * build exports cblas_sbgemm) and oneDNN's matmul primitive (fp32, and
 * bf16 with fp32 accumulation where the CPU has a bf16 path: AVX512-BF16,
 * AMX, or AVX-512 emulation in oneDNN itself). A caller describes one
 * product, gets a plan from a library, and runs it as often as it likes;
 * the plan says which kernel the library picked. Every library sits
 * behind the same small table of functions (cpu_gemm.c), so adding one is
 * one more row.
 *
 * Row-major throughout: C[m x n] = alpha · A[m x k] · B[k x n] + beta · C,
 * or B stored n x k when trans_b (C = A · Bᵀ). A and B are double, float
 * or bf16 (uint16_t); C is double for fp64, float otherwise.
 */
#ifndef SOLBENCH_BACKEND_CPU_GEMM_H
#define SOLBENCH_BACKEND_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/error.h"
#include "solbench/sysinfo.h"

/* Element types of A and B; the same numbering as the compute area's. */
enum { SB_GEMM_F64 = 0, SB_GEMM_F32 = 1, SB_GEMM_BF16 = 2, SB_GEMM_NDT };

/* The libraries, in the order "auto" tries them. */
enum { SB_GEMM_OPENBLAS = 0, SB_GEMM_ONEDNN = 1, SB_GEMM_NLIBS };

/* A product of at most this many rows is decode-sized: it streams its
 * weights, and may run split over the threads by the weights' rows, each
 * thread's block contiguous (the reference model's decode products,
 * compute.gemm split=rows). */
#define SB_GEMM_SPLIT_M 16

typedef struct sb_gemm_desc {
    int dt; /* SB_GEMM_F64, _F32, _BF16 */
    int64_t m, n, k;
    int64_t lda, ldb, ldc; /* leading dimensions (row-major); 0 = packed */
    bool trans_b;          /* B is stored n x k */
    float alpha, beta;     /* 0, 0 are read as 1, 0 */
} sb_gemm_desc;

typedef struct sb_gemm_plan sb_gemm_plan;

/* "openblas", "onednn"; "?" out of range. */
const char *sb_gemm_lib_name(int lib);
/* A library by name, -1 when unknown ("auto" is the caller's). */
int sb_gemm_lib_parse(const char *s);
/* Whether lib is built in and can run dt on this CPU; when not, why says
 * so in words (it may be NULL). bf16 is tried once per process. */
bool sb_gemm_lib_supports(int lib, int dt, char *why, size_t len);
/* The library's own version and configuration, for notes ("OpenBLAS
 * 0.3.21 ... core Zen", "oneDNN 2.6.3"). */
const char *sb_gemm_lib_version(int lib);

/* A plan for one product shape on lib, callable from up to `slots`
 * threads at once (slot 0 .. slots-1; OpenBLAS ignores it, oneDNN keeps a
 * stream and memory objects per slot). Returns 0 or a negative code
 * (SB_EUNSUP when the library cannot run it, with the reason). */
int sb_gemm_plan_create(int lib, const sb_gemm_desc *d, int slots,
                        sb_gemm_plan **out, sb_err *err);
/* C = alpha A B + beta C. Inside a parallel region the library runs on
 * the calling thread alone; outside it, on the OpenMP threads. */
void sb_gemm_run(sb_gemm_plan *p, int slot, const void *a, const void *b,
                 void *c);
/* The kernel the library runs: "OpenBLAS core Zen", "oneDNN gemm:jit",
 * "oneDNN brg:avx512_core_bf16". */
const char *sb_gemm_plan_kernel(const sb_gemm_plan *p);
int sb_gemm_plan_lib(const sb_gemm_plan *p);
const sb_gemm_desc *sb_gemm_plan_desc(const sb_gemm_plan *p);
void sb_gemm_plan_destroy(sb_gemm_plan *p);

/* Seconds of one call of fn(arg) at its best: one untimed call, then
 * the best of `tries` (fewer when one call lasts 50 ms or more). What
 * "auto" choices of a library time a caller's whole use of it with. */
double sb_gemm_time(void (*fn)(void *arg), void *arg, int tries);

/* "auto": times one run of d on every library that supports it (on the
 * caller's buffers, best of `tries` after one untimed run) and returns the
 * fastest library's plan. best_s[lib] gets each library's best time (0
 * where it did not run). why gets the reason when none can run it. */
int sb_gemm_plan_fastest(const sb_gemm_desc *d, int slots, const void *a,
                         const void *b, void *c, int tries,
                         double best_s[SB_GEMM_NLIBS], sb_gemm_plan **out,
                         sb_err *err);

/* The OPENBLAS_CORETYPE name of OpenBLAS's kernels for this CPU, judged
 * from its ISA (e.g. "Cooperlake" for AVX512-BF16, "SkylakeX" for
 * AVX-512, "Zen" or "Haswell" for AVX2) when the loaded library runs a
 * narrower core than that; NULL when it already matches. */
const char *sb_gemm_openblas_better_core(void);
/* The same judgement from given facts, for tests: the ISA, whether the
 * vendor is AMD, and the core OpenBLAS runs. */
const char *sb_gemm_core_for_isa(const sb_isa *isa, bool amd, const char *core);
/* Vector width in bits of the kernels of an OpenBLAS core name
 * (openblas_get_corename()): 512 for SkylakeX/Cooperlake/SapphireRapids,
 * 256 for Haswell/Zen/SandyBridge/Excavator..., 128 otherwise. */
int sb_gemm_openblas_core_width(const char *core);

#endif
