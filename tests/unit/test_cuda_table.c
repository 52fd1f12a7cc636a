/*
 * test_cuda_table.c — the host-side facts of the CUDA backend, checked on
 * any machine (no GPU needed): the cuBLASLt dtype table of compute.gemm,
 * the decoders of the narrow types the GPU writes, the GEMM tolerance
 * test, the datasheet peaks (and their agreement with data/hw), and the
 * element arithmetic of the device memory kernels.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#ifdef SB_HAVE_CUDA
#include "backend/cuda/cuda_table.h"
#include "solbench/hw.h"

static void test_dtype_table(void)
{
    const sb_cu_dtype *f32 = sb_cu_dtype_find("fp32");
    const sb_cu_dtype *tf32 = sb_cu_dtype_find("tf32");
    const sb_cu_dtype *f16 = sb_cu_dtype_find("fp16");
    const sb_cu_dtype *bf16 = sb_cu_dtype_find("bf16");
    const sb_cu_dtype *f8 = sb_cu_dtype_find("fp8");
    const sb_cu_dtype *f8f = sb_cu_dtype_find("fp8_f32");
    CHECK(f32 && tf32 && f16 && bf16 && f8 && f8f);
    if (!(f32 && tf32 && f16 && bf16 && f8 && f8f))
        return;
    CHECK(sb_cu_dtype_find("fp64") == NULL);
    CHECK(sb_cu_dtype_find("") == NULL);
    CHECK(sb_cu_dtype_find(NULL) == NULL);

    CHECK(f32->a == CUDA_R_32F && f32->c == CUDA_R_32F);
    CHECK(f32->compute == CUBLAS_COMPUTE_32F);
    CHECK(tf32->a == CUDA_R_32F &&
          tf32->compute == CUBLAS_COMPUTE_32F_FAST_TF32);
    CHECK(tf32->min_cc == 80);
    CHECK(f16->a == CUDA_R_16F && f16->b == CUDA_R_16F && f16->c == CUDA_R_16F);
    CHECK(bf16->a == CUDA_R_16BF && bf16->b == CUDA_R_16BF &&
          bf16->c == CUDA_R_16BF);
    CHECK(bf16->compute == CUBLAS_COMPUTE_32F && bf16->scale == CUDA_R_32F);
    CHECK(bf16->min_cc == 80);
    /* fp8: e4m3 in, bf16 out, fp32 scale, scale pointers, Ada/Hopper. */
    CHECK(f8->a == CUDA_R_8F_E4M3 && f8->b == CUDA_R_8F_E4M3);
    CHECK(f8->c == CUDA_R_16BF && f8f->c == CUDA_R_32F);
    CHECK(f8->scale == CUDA_R_32F && f8->scale_ptrs && f8f->scale_ptrs);
    CHECK(f8->min_cc == 89 && f8f->min_cc == 89);
    CHECK(!bf16->scale_ptrs && !f32->scale_ptrs);
    CHECK(strcmp(f8->peak, "fp8") == 0 && strcmp(f8f->peak, "fp8") == 0);
    CHECK(strcmp(tf32->peak, "tf32") == 0);

    int n = 0;
    for (const sb_cu_dtype *d = sb_cu_dtypes; d->name; d++, n++) {
        /* Element sizes agree with the CUDA types; TN layout everywhere;
         * fp32 accumulation with fp32 alpha/beta. */
        CHECK(d->in_bytes == sb_cu_type_bytes(d->a));
        CHECK(d->in_bytes == sb_cu_type_bytes(d->b));
        CHECK(d->out_bytes == sb_cu_type_bytes(d->c));
        CHECK(d->trans_a);
        CHECK(d->scale == CUDA_R_32F);
        CHECK(d->tol > 0 && d->tol <= 0.05);
        CHECK(d->min_cc >= 50 && d->min_cc <= 90);
    }
    CHECK(n == 6);
    /* Tolerances follow the precision. */
    CHECK(f32->tol < tf32->tol && tf32->tol <= bf16->tol &&
          bf16->tol < f8->tol && f16->tol <= bf16->tol);
    CHECK(sb_cu_type_bytes(CUDA_R_64F) == 0);
}

static void test_narrow_types(void)
{
    /* e4m3: bias 7, 3 mantissa bits, max 448, only S.1111.111 is NaN. */
    CHECK(sb_e4m3_to_f32(0x38) == 1.0f);
    CHECK(sb_e4m3_to_f32(0xb8) == -1.0f);
    CHECK(sb_e4m3_to_f32(0x7e) == 448.0f);
    CHECK(sb_e4m3_to_f32(0x39) == 1.125f);
    CHECK(sb_e4m3_to_f32(0x01) == ldexpf(1.0f, -9));
    CHECK(sb_e4m3_to_f32(0x08) == ldexpf(1.0f, -6));
    CHECK(sb_e4m3_to_f32(0x00) == 0.0f);
    CHECK(isnan(sb_e4m3_to_f32(0x7f)) && isnan(sb_e4m3_to_f32(0xff)));
    /* Positive codes increase strictly; the sign bit negates. */
    int mono = 1, sym = 1;
    for (int x = 1; x < 0x7f; x++) {
        mono &= sb_e4m3_to_f32((uint8_t)x) > sb_e4m3_to_f32((uint8_t)(x - 1));
        sym &=
            sb_e4m3_to_f32((uint8_t)(x | 0x80)) == -sb_e4m3_to_f32((uint8_t)x);
    }
    CHECK(mono && sym);

    CHECK(sb_cu_fp16_to_float(0x3c00) == 1.0f);
    CHECK(sb_cu_fp16_to_float(0xc000) == -2.0f);
    CHECK(sb_cu_fp16_to_float(0x7bff) == 65504.0f);
    CHECK(sb_cu_fp16_to_float(0x0001) == ldexpf(1.0f, -24));
    CHECK(isinf(sb_cu_fp16_to_float(0x7c00)) &&
          isnan(sb_cu_fp16_to_float(0x7e00)));

    CHECK(sb_bf16_from_f32(1.0f) == 0x3f80);
    CHECK(sb_bf16_to_f32(0x3f80) == 1.0f);
    CHECK(sb_bf16_to_f32(0xc040) == -3.0f);
    /* Round to nearest, ties to even. */
    CHECK(sb_bf16_from_f32(1.0f + ldexpf(1.0f, -8)) == 0x3f80);
    CHECK(sb_bf16_from_f32(1.0f + 3 * ldexpf(1.0f, -8)) == 0x3f82);
    CHECK(sb_bf16_from_f32(1.0f + ldexpf(1.0f, -7) + ldexpf(1.0f, -9)) ==
          0x3f81);
    CHECK(isnan(sb_bf16_to_f32(sb_bf16_from_f32(NAN))));

    uint16_t h[2] = {0x3f80, 0xc000};
    uint8_t q[2] = {0x38, 0x7e};
    float f[2] = {0.5f, -7.0f};
    CHECK(sb_cu_get(h, CUDA_R_16BF, 1) == -2.0);
    CHECK(sb_cu_get(h, CUDA_R_16F, 1) == -2.0);
    CHECK(sb_cu_get(q, CUDA_R_8F_E4M3, 1) == 448.0);
    CHECK(sb_cu_get(f, CUDA_R_32F, 1) == -7.0);
    CHECK(isnan(sb_cu_get(f, CUDA_R_64F, 0)));
}

/* fp32's tolerance is "1e-5-ish": tight enough that a wrong element of
 * ordinary size cannot hide in it. */
static bool f32_tol_ok(void)
{
    const sb_cu_dtype *d = sb_cu_dtype_find("fp32");
    return d && d->tol >= 1e-5 && d->tol <= 3e-5;
}

static void test_gemm_tolerance(void)
{
    CHECK(f32_tol_ok());
    CHECK(sb_cu_gemm_ok(10.0, 10.0, 5.0, 1e-5));
    CHECK(sb_cu_gemm_ok(10.0 + 1.5e-4, 10.0, 5.0, 1e-5)); /* 1e-5 x 15 */
    CHECK(!sb_cu_gemm_ok(10.0 + 1.6e-4, 10.0, 5.0, 1e-5));
    CHECK(!sb_cu_gemm_ok(NAN, 10.0, 5.0, 1.0));
    CHECK(!sb_cu_gemm_ok(INFINITY, 10.0, 5.0, 1.0));
    /* A planted +1000 is caught even at fp8's tolerance for a K = 8192
     * product of inputs in [-1, 1) (l2 ~ sqrt(K)/3). */
    double l2 = sqrt(8192.0) / 3.0;
    CHECK(!sb_cu_gemm_ok(30.0 + 1000.0, 30.0, l2, 5e-2));
    /* bf16 output rounding (half an ulp, 2^-9 relative) passes. */
    CHECK(sb_cu_gemm_ok(30.0 * (1 + ldexp(1.0, -9)), 30.0, l2, 1e-2));
}

static void test_peaks(void)
{
    const char *spec = NULL;
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA H200", "bf16", &spec), 989.4e12,
               1e-9);
    CHECK(spec && strcmp(spec, "h200-sxm") == 0);
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA H200", "fp8", &spec), 1978.9e12,
               1e-9);
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA H100 80GB HBM3", "bf16", &spec),
               989.4e12, 1e-9);
    CHECK(strcmp(spec, "h100-sxm") == 0);
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA H100 PCIe", "bf16", &spec), 756e12,
               1e-9);
    CHECK(strcmp(spec, "h100-pcie") == 0);
    CHECK(sb_cu_datasheet_peak("NVIDIA A100-SXM4-80GB", "fp8", &spec) == 0.0);
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA A100-SXM4-80GB", "bf16", &spec),
               312e12, 1e-9);
    CHECK(strcmp(spec, "a100") == 0);
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA L40S", "fp8", &spec), 733e12, 1e-9);
    /* the NVL parts are not their SXM siblings */
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA H100 NVL", "bf16", &spec), 835.5e12,
               1e-9);
    CHECK(strcmp(spec, "h100-nvl") == 0);
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA H200 NVL", "fp8", &spec), 1670.5e12,
               1e-9);
    CHECK(strcmp(spec, "h200-nvl") == 0);
    CHECK_NEAR(sb_cu_datasheet_peak("NVIDIA B200", "bf16", &spec), 2250e12,
               1e-9);
    CHECK(sb_cu_datasheet_peak("NVIDIA B200", "fp32", &spec) == 0.0);
    CHECK(sb_cu_datasheet_peak("Tesla T4", "bf16", &spec) == 0.0);
    CHECK(strcmp(spec, "") == 0);
    CHECK(sb_cu_datasheet_peak("NVIDIA H200", "int4", NULL) == 0.0);

    /* The built-in table agrees with data/hw where a spec exists. */
    static const char *specs[] = {"h200-sxm", "h100-sxm"};
    static const char *names[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3"};
    static const char *keys[] = {"bf16", "fp16", "fp8", "tf32", "fp32"};
    for (int i = 0; i < 2; i++) {
        sb_hw_spec hw;
        sb_err err = {0};
        if (sb_hw_load(specs[i], &hw, &err)) {
            printf("note: data/hw/%s not readable (%s)\n", specs[i], err.msg);
            continue;
        }
        for (int k = 0; k < 5; k++) {
            double v = sb_hw_peak(&hw, keys[k]);
            if (v > 0)
                CHECK_NEAR(sb_cu_datasheet_peak(names[i], keys[k], NULL) / v,
                           1.0, 0.01);
        }
    }
}

static void test_memory_arithmetic(void)
{
    /* Whole 16-byte vectors per array; bytes = arrays x elems x elem. */
    CHECK(sb_cmem_arrays(SB__CMEM_COPY) == 2 &&
          sb_cmem_arrays(SB__CMEM_TRIAD) == 3);
    CHECK(sb_cmem_arrays(SB__CMEM_READ) == 1 &&
          sb_cmem_arrays(SB__CMEM_WRITE) == 1);
    CHECK(sb_cmem_elems(SB__CMEM_COPY, 64.0 * 1048576, 4) == 8u * 1048576);
    CHECK(sb_cmem_bytes(SB__CMEM_COPY, 64.0 * 1048576, 4) == 64.0 * 1048576);
    CHECK(sb_cmem_elems(SB__CMEM_TRIAD, 100, 4) == 8); /* 2 vectors of 4 */
    CHECK(sb_cmem_elems(SB__CMEM_TRIAD, 100, 8) == 4); /* 2 vectors of 2 */
    CHECK(sb_cmem_bytes(SB__CMEM_TRIAD, 100, 4) == 96.0);
    CHECK(sb_cmem_elems(SB__CMEM_READ, 8, 4) == 0);
    CHECK(sb_cmem_elems(SB__CMEM_READ, 16, 4) == 4);
    CHECK(sb_cmem_elems(SB__CMEM_READ, 1e6, 0) == 0);
    CHECK(sb_cmem_bytes(SB__CMEM_TRIAD, 8.0 * 1073741824, 8) ==
          8.0 * 1073741824 - 32);

    /* Small working sets are swept several times per launch. */
    CHECK(sb_cmem_passes(4.0 * 1048576) == 16);
    CHECK(sb_cmem_passes(64.0 * 1048576) == 1);
    CHECK(sb_cmem_passes(8.0 * 1073741824) == 1);
    /* paged decode's query heads a block: the group to a power of two,
     * capped at 8 (4 past head_dim 128) and by heads_per_block */
    CHECK(sb_cpaged_heads_per_block(4, 128, 0) == 4);
    CHECK(sb_cpaged_heads_per_block(8, 128, 0) == 8);
    CHECK(sb_cpaged_heads_per_block(16, 128, 0) == 8);
    CHECK(sb_cpaged_heads_per_block(8, 256, 0) == 4);
    CHECK(sb_cpaged_heads_per_block(3, 128, 0) == 4);
    CHECK(sb_cpaged_heads_per_block(8, 128, 2) == 2);
    CHECK(sb_cpaged_heads_per_block(1, 128, 4) == 1);
    CHECK(sb_cpaged_heads_per_block(8, 256, 8) == 4);
    CHECK(sb_cmem_passes(100.0 * 1048576) == 1);
    CHECK(sb_cmem_passes(48.0) == 1024);
    CHECK(sb_cmem_passes(0.0) == 1);
    CHECK(sb_cmem_passes(3.0 * 1048576) == 22);

    /* Inputs: in [1, 2), exact in float, different per array and index. */
    int ok = 1, same = 0;
    for (uint64_t i = 0; i < 10000; i++) {
        float a = sb_cmem_value_f(i, 0, 7), b = sb_cmem_value_f(i, 1, 7);
        double d = sb_cmem_value_d(i, 2, 7);
        ok &= a >= 1.0f && a < 2.0f && b >= 1.0f && b < 2.0f && d >= 1.0 &&
              d < 2.0;
        same += a == b;
        ok &= sb_cmem_write_value(i) == (double)(float)sb_cmem_write_value(i);
        ok &= sb_cmem_write_value(i) > 0;
    }
    CHECK(ok);
    CHECK(same < 10);
    CHECK(sb_cmem_value_f(5, 0, 7) != sb_cmem_value_f(5, 0, 8));
    /* float and double inputs come from the same hash: the float is the
     * double cut to 23 mantissa bits */
    double vd = sb_cmem_value_d(5, 0, 7), vf = sb_cmem_value_f(5, 0, 7);
    CHECK(vd - vf >= 0.0 && vd - vf < 1.0 / 8388608.0);
}

/* NVML's clock event reasons named for the result's note: the bits of
 * nvml.h, an unknown bit kept as hex, "none" for none. */
static void test_clock_reasons(void)
{
    char buf[160];
    CHECK(sb_cu_clock_reasons(0, buf, sizeof buf) == 0);
    CHECK(strcmp(buf, "none") == 0);
    CHECK(sb_cu_clock_reasons(SB_CU_CLK_SW_POWER_CAP | SB_CU_CLK_HW_THERMAL,
                              buf, sizeof buf) == 2);
    CHECK(strcmp(buf, "sw_power_cap,hw_thermal") == 0);
    CHECK(SB_CU_CLK_SW_POWER_CAP == 0x4 && SB_CU_CLK_HW_SLOWDOWN == 0x8 &&
          SB_CU_CLK_SW_THERMAL == 0x20 && SB_CU_CLK_HW_POWER_BRAKE == 0x80);
    CHECK(sb_cu_clock_reasons(0x8ULL | 0x1000ULL, buf, sizeof buf) == 2);
    CHECK(strcmp(buf, "hw_slowdown,0x1000") == 0);
    /* a short buffer is cut, never overrun */
    char tiny[6];
    CHECK(sb_cu_clock_reasons(0x1ffULL, tiny, sizeof tiny) == 9);
    CHECK(strlen(tiny) < sizeof tiny);
}

int main(void)
{
    test_clock_reasons();
    test_dtype_table();
    test_narrow_types();
    test_gemm_tolerance();
    test_peaks();
    test_memory_arithmetic();
    return sb_check_done();
}

#else

int main(void)
{
    printf("built without the CUDA backend: nothing to check\n");
    return 77; /* ctest: skipped (SKIP_RETURN_CODE) */
}

#endif
