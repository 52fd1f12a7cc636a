/*
 * cuda_table.h — the host-side facts of the CUDA backend, in plain C so
 * that a CPU-only test can check them: the cuBLASLt dtype table (which
 * cudaDataType A, B, C/D, compute type and scale type each compute.gemm
 * dtype uses, the compute capability it needs, its verification tolerance
 * and the datasheet peak it is compared with), the decoders of the narrow
 * types the GPU writes (bf16, fp16, fp8 e4m3), the datasheet peaks by
 * device name, and the element arithmetic of the device memory kernels.
 *
 * Nothing here calls the CUDA runtime: only the enum values of
 * library_types.h and cublas_api.h are used.
 */
#ifndef SOLBENCH_BACKEND_CUDA_TABLE_H
#define SOLBENCH_BACKEND_CUDA_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cublas_api.h>
#include <library_types.h>

#include "solbench/util.h" /* bf16: sb_bf16_to_f32, sb_bf16_from_f32 */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- clock events -------------------------------------------------------- */

/* NVML's clock event (throttle) reason bits, nvmlClocksEventReason*: why
 * the SM clock was below its maximum. */
#define SB_CU_CLK_IDLE 0x1ULL
#define SB_CU_CLK_APP_SETTING 0x2ULL
#define SB_CU_CLK_SW_POWER_CAP 0x4ULL
#define SB_CU_CLK_HW_SLOWDOWN 0x8ULL
#define SB_CU_CLK_SYNC_BOOST 0x10ULL
#define SB_CU_CLK_SW_THERMAL 0x20ULL
#define SB_CU_CLK_HW_THERMAL 0x40ULL
#define SB_CU_CLK_HW_POWER_BRAKE 0x80ULL
#define SB_CU_CLK_DISPLAY 0x100ULL

/* Writes the names of the reasons set in `bits` ("sw_power_cap,
 * hw_thermal"; an unknown bit as its hex value), "none" when no bit is
 * set; `buf` is always terminated. Returns the number of reasons. */
int sb_cu_clock_reasons(unsigned long long bits, char *buf, size_t len);

/* ---- cuBLASLt dtype table ------------------------------------------------ */

typedef struct sb_cu_dtype {
    const char *name;    /* compute.gemm dtype: "bf16", "fp8", ... */
    cudaDataType_t a, b; /* input types */
    cudaDataType_t c;    /* C and D (the output) */
    cublasComputeType_t compute;
    cudaDataType_t scale;    /* type of alpha and beta */
    int min_cc;              /* compute capability x 10 (89 = 8.9) */
    int in_bytes, out_bytes; /* bytes per element of A/B and of D */
    bool scale_ptrs;         /* fp8: A and B scale pointers required */
    bool trans_a;            /* A given as K x M (the "TN" layout) */
    double tol;              /* |d - ref| <= tol (|ref| + sqrt(sum (ab)^2)) */
    const char *peak;        /* datasheet peak key: "bf16", "fp8", ... */
} sb_cu_dtype;

/* The table, NULL-name terminated, and lookup by name (NULL: unknown). */
extern const sb_cu_dtype sb_cu_dtypes[];
const sb_cu_dtype *sb_cu_dtype_find(const char *name);
/* Bytes per element of a cudaDataType this backend uses; 0 otherwise. */
int sb_cu_type_bytes(cudaDataType_t t);

/* ---- narrow types -------------------------------------------------------- */

float sb_cu_fp16_to_float(uint16_t h);
/* Element idx of a buffer of type t, as double. */
double sb_cu_get(const void *buf, cudaDataType_t t, size_t idx);

/* ---- GEMM verification
 * -------------------------------------------------------- */

/* Whether d passes against the double reference `ref` of a dot product
 * whose terms have Euclidean norm `l2` (sqrt of sum of (a_k b_k)^2):
 * |d - ref| <= tol (|ref| + l2); NaN never passes. */
bool sb_cu_gemm_ok(double d, double ref, double l2, double tol);

/* ---- datasheet peaks
 * ----------------------------------------------------------- */

/* Dense peak FLOP/s of a GPU by its CUDA device name ("NVIDIA H200") for
 * a peak key, from a small built-in table; 0 when unknown. *spec gets the
 * data/hw name the device corresponds to ("h200-sxm"), "" when none. */
double sb_cu_datasheet_peak(const char *device_name, const char *key,
                            const char **spec);

/* ---- device memory kernels
 * ---------------------------------------------------- */

/* Arrays of memory kernel `kernel` (copy 2, read 1, write 1, triad 3). */
enum { SB__CMEM_COPY, SB__CMEM_READ, SB__CMEM_WRITE, SB__CMEM_TRIAD };
int sb_cmem_arrays(int kernel);
/* Elements per array for a working set of `size` bytes: a whole number of
 * 16-byte vectors (so every access is a vector), 0 when none fits. */
size_t sb_cmem_elems(int kernel, double size, size_t elem);
/* Sweeps of the arrays per launch for a working set of `bytes`: enough for
 * 64 MiB of traffic, so a launch outlasts the gap between launches
 * (1..1024). */
int sb_cmem_passes(double bytes);
/* Bytes one iteration moves: arrays x elems x elem (reads + writes). */
double sb_cmem_bytes(int kernel, double size, size_t elem);

/* Paged decode: the query heads one block computes for a group of
 * `group` query heads per KV head at head dimension d: the group rounded
 * up to a power of two, at most 8 (4 past d 128) or heads_per_block
 * (0: no cap). */
int sb_cpaged_heads_per_block(long long group, long long d,
                              long long heads_per_block);

/* Host and device share the element values: the same inline code runs on
 * both sides, so the host can check any element without a copy of the
 * inputs. */
#ifdef __CUDACC__
#define SB__HD __host__ __device__ __forceinline__
#else
#define SB__HD static inline
#endif

/* splitmix64's finaliser: a good 64-bit mix of the index. */
SB__HD uint64_t sb_cmem_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* Element i of input array `array` (0 = a, 1 = b, 2 = c) for a seed:
 * uniform in [1, 2) and exact in the element type (23 or 52 random
 * mantissa bits), never zero. */
SB__HD float sb_cmem_value_f(uint64_t i, int array, uint64_t seed)
{
    uint64_t h =
        sb_cmem_mix(i * 4u + (uint64_t)array + seed * 0x9e3779b97f4a7c15ULL);
    return 1.0f + (float)(h >> 41) * (1.0f / 8388608.0f);
}
SB__HD double sb_cmem_value_d(uint64_t i, int array, uint64_t seed)
{
    uint64_t h =
        sb_cmem_mix(i * 4u + (uint64_t)array + seed * 0x9e3779b97f4a7c15ULL);
    return 1.0 + (double)(h >> 12) * (1.0 / 4503599627370496.0);
}
/* The value write() stores at element i: (i mod 4096) + 0.5, exact in
 * both types and cheap enough not to slow a store stream. */
SB__HD double sb_cmem_write_value(uint64_t i)
{
    return (double)(i & 4095u) + 0.5;
}
/* STREAM's triad scalar. */
#define SB__CMEM_SCALAR 3.0

#ifdef __cplusplus
}
#endif

#endif
