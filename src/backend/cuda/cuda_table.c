/*
 * cuda_table.c — the host-side facts of the CUDA backend (cuda_table.h):
 * the cuBLASLt dtype table of compute.gemm, decoders of the narrow types
 * the GPU writes, the GEMM tolerance test, the datasheet peaks by device
 * name, and the element arithmetic of the device memory kernels. Plain C
 * with no CUDA calls, so tests/unit/test_cuda_table.c checks it on any
 * machine.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_table.h"

/* ---- cuBLASLt dtype table ------------------------------------------------ */

/*
 * Every dtype runs the "TN" layout cuBLASLt requires of fp8 (A transposed,
 * column-major): A is stored K x M, B K x N, D M x N, so row i of A and
 * column j of B are both contiguous K-vectors. Accumulation is fp32 for
 * all; fp16/bf16 write their own type as PyTorch's matmul does, fp8 writes
 * bf16 (or fp32 for fp8_f32).
 *
 * Tolerances, against a double reference computed from the very inputs the
 * GPU read (decoded from its buffers), scaled by |ref| + sqrt(sum (ab)^2):
 *   fp32  2e-5 : fp32 accumulation, one FMA chain over K per element:
 *                rms error ~ 2^-24 sqrt(K/6) of the scale (3e-6 at
 *                K = 16384), and the worst of 256 samples ~4 sigma;
 *   tf32  5e-3 : the tensor cores round A and B to 10 mantissa bits (2^-11
 *                relative per product, random across K) — ~1e-3 typical;
 *   fp16  1e-2, bf16 1e-2 : output rounding (2^-12, 2^-9 of |ref|) plus
 *                fp32 accumulation;
 *   fp8   5e-2 : bf16 output rounding plus the reduced-precision fp8
 *                accumulation of the tensor cores.
 */
const sb_cu_dtype sb_cu_dtypes[] = {
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F,
     50, 4, 4, false, true, 2e-5, "fp32"},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32,
     CUDA_R_32F, 80, 4, 4, false, true, 5e-3, "tf32"},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F,
     70, 2, 2, false, true, 1e-2, "fp16"},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
     CUDA_R_32F, 80, 2, 2, false, true, 1e-2, "bf16"},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F,
     CUDA_R_32F, 89, 1, 2, true, true, 5e-2, "fp8"},
    {"fp8_f32", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_32F, CUBLAS_COMPUTE_32F,
     CUDA_R_32F, 89, 1, 4, true, true, 5e-2, "fp8"},
    {NULL, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F,
     0, 0, 0, false, false, 0, NULL}};

const sb_cu_dtype *sb_cu_dtype_find(const char *name)
{
    for (const sb_cu_dtype *d = sb_cu_dtypes; name && d->name; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

int sb_cu_type_bytes(cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_32F:
        return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF:
        return 2;
    case CUDA_R_8F_E4M3:
        return 1;
    default:
        return 0;
    }
}

/* ---- narrow types -------------------------------------------------------- */

float sb_cu_fp16_to_float(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp((double)m, -24); /* subnormal: m 2^-10 2^-14 */
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(1.0 + m / 1024.0, e - 15);
    return (float)(sign ? -v : v);
}

double sb_cu_get(const void *buf, cudaDataType_t t, size_t idx)
{
    switch (t) {
    case CUDA_R_32F:
        return ((const float *)buf)[idx];
    case CUDA_R_16F:
        return sb_cu_fp16_to_float(((const uint16_t *)buf)[idx]);
    case CUDA_R_16BF:
        return sb_bf16_to_f32(((const uint16_t *)buf)[idx]);
    case CUDA_R_8F_E4M3:
        return sb_e4m3_to_f32(((const uint8_t *)buf)[idx]);
    default:
        return NAN;
    }
}

/* ---- clock events -------------------------------------------------------- */

int sb_cu_clock_reasons(unsigned long long bits, char *buf, size_t len)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } names[] = {
        {SB_CU_CLK_IDLE, "idle"},
        {SB_CU_CLK_APP_SETTING, "applications_clocks"},
        {SB_CU_CLK_SW_POWER_CAP, "sw_power_cap"},
        {SB_CU_CLK_HW_SLOWDOWN, "hw_slowdown"},
        {SB_CU_CLK_SYNC_BOOST, "sync_boost"},
        {SB_CU_CLK_SW_THERMAL, "sw_thermal"},
        {SB_CU_CLK_HW_THERMAL, "hw_thermal"},
        {SB_CU_CLK_HW_POWER_BRAKE, "hw_power_brake"},
        {SB_CU_CLK_DISPLAY, "display_clocks"},
    };
    size_t at = 0;
    int n = 0;
    if (len)
        buf[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (bits & names[i].bit) {
            bits &= ~names[i].bit;
            if (at < len)
                at += (size_t)snprintf(buf + at, len - at, "%s%s", n ? "," : "",
                                       names[i].name);
            n++;
        }
    if (bits) {
        if (at < len)
            at += (size_t)snprintf(buf + at, len - at, "%s0x%llx", n ? "," : "",
                                   bits);
        n++;
    }
    if (!n && len)
        snprintf(buf, len, "none");
    return n;
}

/* ---- GEMM verification
 * -------------------------------------------------------- */

bool sb_cu_gemm_ok(double d, double ref, double l2, double tol)
{
    if (isnan(d) || isnan(ref) || isinf(d))
        return false;
    return fabs(d - ref) <= tol * (fabs(ref) + l2);
}

/* ---- datasheet peaks
 * ----------------------------------------------------------- */

/* Dense tensor-core peaks (TFLOP/s) from NVIDIA's datasheets (the sparsity
 * figures halved; fp32 is the non-tensor rate; 0 where the sheet gives
 * none); used when data/hw has no spec for the device. The first row
 * whose `match` is in the device's name (and `nomatch` is not) wins, so
 * the NVL parts come before their SXM rows. Sources:
 *   H200 SXM, H200 NVL: NVIDIA H200 Tensor Core GPU datasheet (SXM: FP32
 *     67, TF32 989*, BF16/FP16 1979*, FP8 3958*; NVL: FP32 60, TF32 835*,
 *     BF16/FP16 1671*, FP8 3341*; * with sparsity);
 *   H100 SXM, PCIe, NVL: NVIDIA H100 Tensor Core GPU datasheet (SXM: FP32
 *     67, TF32 989*, BF16 1979*, FP8 3958*; PCIe: 51, 756*, 1513*, 3026*;
 *     NVL: 60, 835*, 1671*, 3341*);
 *   A100 (SXM and PCIe alike): NVIDIA A100 datasheet (FP32 19.5, TF32 312*,
 *     BF16/FP16 624*; no FP8);
 *   L40S: NVIDIA L40S datasheet (FP32 91.6, TF32 366*, BF16/FP16 733*, FP8
 *     1466*);
 *   B200: NVIDIA HGX B200 datasheet, per GPU of eight (TF32 18 PF*, FP16/
 *     BF16 36 PF*, FP8 72 PF* for the eight; no FP32 figure). */
static const struct {
    const char *match, *nomatch; /* substring of the name; must not have */
    const char *spec;
    double bf16, fp16, fp8, tf32, fp32;
} peaks[] = {
    {"H200 NVL", NULL, "h200-nvl", 835.5, 835.5, 1670.5, 417.5, 60.0},
    {"H200", NULL, "h200-sxm", 989.4, 989.4, 1978.9, 494.7, 66.9},
    {"H100 NVL", NULL, "h100-nvl", 835.5, 835.5, 1670.5, 417.5, 60.0},
    {"H100", "PCIe", "h100-sxm", 989.4, 989.4, 1978.9, 494.7, 66.9},
    {"H100", NULL, "h100-pcie", 756.0, 756.0, 1513.0, 378.0, 51.2},
    {"A100", NULL, "a100", 312.0, 312.0, 0.0, 156.0, 19.5},
    {"L40S", NULL, "l40s", 362.1, 362.1, 733.0, 183.0, 91.6},
    {"B200", NULL, "b200", 2250.0, 2250.0, 4500.0, 1125.0, 0.0},
};

double sb_cu_datasheet_peak(const char *device_name, const char *key,
                            const char **spec)
{
    if (spec)
        *spec = "";
    if (!device_name || !key)
        return 0.0;
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++) {
        if (!strstr(device_name, peaks[i].match) ||
            (peaks[i].nomatch && strstr(device_name, peaks[i].nomatch)))
            continue;
        if (spec)
            *spec = peaks[i].spec;
        double t = strcmp(key, "bf16") == 0   ? peaks[i].bf16
                   : strcmp(key, "fp16") == 0 ? peaks[i].fp16
                   : strcmp(key, "fp8") == 0  ? peaks[i].fp8
                   : strcmp(key, "tf32") == 0 ? peaks[i].tf32
                   : strcmp(key, "fp32") == 0 ? peaks[i].fp32
                                              : 0.0;
        return t * 1e12;
    }
    return 0.0;
}

/* ---- device memory kernels
 * ---------------------------------------------------- */

int sb_cmem_arrays(int kernel)
{
    switch (kernel) {
    case SB__CMEM_COPY:
        return 2;
    case SB__CMEM_TRIAD:
        return 3;
    default:
        return 1;
    }
}

size_t sb_cmem_elems(int kernel, double size, size_t elem)
{
    if (elem == 0 || elem > 16 || size <= 0)
        return 0;
    size_t per_vec = 16 / elem;
    double vecs = floor(size / ((double)sb_cmem_arrays(kernel) * 16.0));
    return vecs >= 1 ? (size_t)vecs * per_vec : 0;
}

int sb_cmem_passes(double bytes)
{
    if (!(bytes > 0))
        return 1;
    double p = ceil(64.0 * 1048576.0 / bytes);
    return p < 1 ? 1 : p > 1024 ? 1024 : (int)p;
}

double sb_cmem_bytes(int kernel, double size, size_t elem)
{
    return (double)sb_cmem_arrays(kernel) *
           (double)sb_cmem_elems(kernel, size, elem) * (double)elem;
}

int sb_cpaged_heads_per_block(long long group, long long d,
                              long long heads_per_block)
{
    long long gmax = d > 128 ? 4 : 8;
    if (heads_per_block > 0 && heads_per_block < gmax)
        gmax = heads_per_block;
    int gm = 1;
    while (gm < group && gm < gmax)
        gm *= 2;
    return gm;
}
