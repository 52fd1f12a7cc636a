/*
 * gemm.c — what a compute.gemm point computes, whatever runs it: its
 * M, N, K from the shape parameters (include/solbench/gemm.h). The CPU
 * benchmark (gemm.c) and the CUDA one (backend/cuda) both read it here.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "solbench/gemm.h"
#include "solbench/util.h"

/* decode's N when ffn=0: the weights K x N fill four times the LLC (a
 * multiple of 256 columns; 32 MiB taken when the LLC is unknown). */
static int64_t decode_auto_n(int64_t k, const char *dtype)
{
    double llc = sb_llc_bytes();
    if (!(llc > 0))
        llc = 32.0 * 1048576;
    /* the CPU's dtypes; another's (fp16, fp8 on a GPU) sized as fp32 */
    double elem = !dtype                       ? 4.0
                  : strcmp(dtype, "fp64") == 0 ? 8.0
                  : strcmp(dtype, "bf16") == 0 ? 2.0
                                               : 4.0;
    double n = 4.0 * llc / ((double)k * elem);
    int64_t cols = ((int64_t)ceil(n) + 255) / 256 * 256;
    return cols < 256 ? 256 : cols;
}

int sb_gemm_dims(const sb_params *p, int64_t *m, int64_t *n, int64_t *k,
                 sb_err *err)
{
    const char *shape = sb_p_str(p, "shape");
    bool square = strcmp(shape, "square") == 0;
    if (!square && (sb_p_int(p, "m") != 0 || sb_p_int(p, "k") != 0))
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: parameters m and k apply to "
                       "shape=square; shape=%s takes %s",
                       shape,
                       strcmp(shape, "llm") == 0 ? "tokens and d_model"
                                                 : "batch, d_model and ffn");
    if (strcmp(shape, "llm") == 0) {
        *m = sb_p_int(p, "tokens");
        *k = sb_p_int(p, "d_model");
        /* a model's own up-projection width where the backend takes it */
        *n = sb_p_find(p, "ffn") && sb_p_int(p, "ffn") ? sb_p_int(p, "ffn")
                                                       : 4 * *k;
    } else if (strcmp(shape, "decode") == 0) {
        *m = sb_p_int(p, "batch");
        *k = sb_p_int(p, "d_model");
        *n = sb_p_int(p, "ffn") ? sb_p_int(p, "ffn")
                                : decode_auto_n(*k, sb_p_str(p, "dtype"));
    } else if (square) {
        *n = sb_p_int(p, "n");
        *m = sb_p_int(p, "m") ? sb_p_int(p, "m") : *n;
        *k = sb_p_int(p, "k") ? sb_p_int(p, "k") : *n;
    } else {
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: parameter shape=%s: expected square, "
                       "llm or decode",
                       shape);
    }
    if (*m < 1 || *n < 1 || *k < 1 || *m > INT_MAX || *n > INT_MAX ||
        *k > INT_MAX)
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: M=%lld N=%lld K=%lld out of range",
                       (long long)*m, (long long)*n, (long long)*k);
    return 0;
}
