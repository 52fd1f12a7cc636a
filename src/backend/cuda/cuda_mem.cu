/*
 * cuda_mem.cu — memory.copy, memory.read, memory.write and memory.triad on
 * the GPU: grid-stride kernels with 16-byte vector accesses (float4 or
 * double2), four independent loads in flight per thread before the first
 * store (copy past the L2: tiles of 4 vectors a thread, one block a
 * tile, with streaming cache hints), and copy also as cudaMemcpyAsync
 * device-to-device (method=memcpy), launched on the stream. Bytes = arrays x
 * elements x element size (read + written, STREAM's convention). Working sets
 * from L2-resident to GiBs, so the L2 plateau and the HBM plateau both show.
 *
 * Inputs come from an integer hash of the element index (cuda_table.h), so
 * they are random, never zero, and recomputable anywhere. Verification
 * poisons the output (NaN bytes), runs the kernel once more, then checks
 * every element on the device against the formula and a sample of
 * elements on the host (and, for read, whole per-block partial sums
 * recomputed on the host in double, to 1e-9 relative: the order of the
 * additions differs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "backend/cuda/cuda_common.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_table.h"

extern "C" {
#include "solbench/util.h"
}

#define BLOCK 256
#define HOST_SAMPLES 4096
#define SEED 0x5eed0001ULL

typedef struct cmem_state {
    sb_cuda_base base;
    int kernel;
    bool fp64, use_memcpy;
    size_t n, elem, nv;           /* elements, bytes each, 16-byte vectors */
    void *a, *b, *c;              /* device arrays (unused ones NULL) */
    double *partial;              /* read: one sum per block */
    unsigned long long *counters; /* [0] wrong, [1] first wrong index */
    uint64_t *d_idx; /* sampled indices, and their gathered values */
    double *d_vals;
    int grid;
    int tiles;         /* copy past the L2: k_copy_tile's grid (else 0) */
    int blocks_per_sm; /* resident blocks an SM: the grid is one wave */
    double size;       /* the requested working set */
} cmem_state;

/* ---- kernels
 * ------------------------------------------------------------------ */

template <typename T> struct vec;
template <> struct vec<float> {
    typedef float4 t;
};
template <> struct vec<double> {
    typedef double2 t;
};

template <typename T>
__device__ __forceinline__ T input_value(uint64_t i, int arr);
template <>
__device__ __forceinline__ float input_value<float>(uint64_t i, int arr)
{
    return sb_cmem_value_f(i, arr, SEED);
}
template <>
__device__ __forceinline__ double input_value<double>(uint64_t i, int arr)
{
    return sb_cmem_value_d(i, arr, SEED);
}

template <typename T> __global__ void k_init(T *x, size_t n, int arr)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride)
        x[i] = input_value<T>(i, arr);
}

/* Between two passes over the same data: the compiler must neither merge
 * the passes nor keep loaded values from the last one. */
#define PASS_BARRIER() asm volatile("" ::: "memory")

/* c = a, `passes` times (small working sets: see enqueue) */
template <typename V>
__global__ void k_copy(const V *__restrict__ a, V *__restrict__ c, size_t nv,
                       int passes)
{
    for (int r = 0; r < passes; r++) {
        sb_cu_copy_vecs(a, c, nv);
        PASS_BARRIER();
    }
}

/* c = a in tiles: block b copies vectors [b T, (b + 1) T) of T = 4 x
 * BLOCK, all four loaded before the first store, with the streaming
 * (evict-first) cache hints; a grid of as many blocks as tiles, many
 * waves. One pass over a working set past the L2 (see enqueue). On an
 * H200 (scripts/gpu-lab/copy_lab.cu, 2 GiB an array) this form ran at
 * 4.09 TB/s where the one-wave grid-stride loop of k_copy ran at 3.93. */
template <typename V>
__global__ void k_copy_tile(const V *__restrict__ a, V *__restrict__ c,
                            size_t nv)
{
    size_t i = (size_t)blockIdx.x * (4 * BLOCK) + threadIdx.x;
    if (i + 3 * BLOCK < nv) {
        V x0 = __ldcs(a + i), x1 = __ldcs(a + i + BLOCK),
          x2 = __ldcs(a + i + 2 * BLOCK), x3 = __ldcs(a + i + 3 * BLOCK);
        __stcs(c + i, x0);
        __stcs(c + i + BLOCK, x1);
        __stcs(c + i + 2 * BLOCK, x2);
        __stcs(c + i + 3 * BLOCK, x3);
    } else {
        for (; i < nv; i += BLOCK)
            __stcs(c + i, __ldcs(a + i));
    }
}

__device__ __forceinline__ float4 triad_v(float4 b, float4 c, float s)
{
    return make_float4(b.x + s * c.x, b.y + s * c.y, b.z + s * c.z,
                       b.w + s * c.w);
}
__device__ __forceinline__ double2 triad_v(double2 b, double2 c, double s)
{
    return make_double2(b.x + s * c.x, b.y + s * c.y);
}

/* a = b + s c */
template <typename T, typename V>
__global__ void k_triad(V *__restrict__ a, const V *__restrict__ b,
                        const V *__restrict__ c, T s, size_t nv, int passes)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int r = 0; r < passes; r++) {
        size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        for (; i + stride < nv; i += 2 * stride) {
            V b0 = b[i], b1 = b[i + stride], c0 = c[i], c1 = c[i + stride];
            a[i] = triad_v(b0, c0, s);
            a[i + stride] = triad_v(b1, c1, s);
        }
        for (; i < nv; i += stride)
            a[i] = triad_v(b[i], c[i], s);
        PASS_BARRIER();
    }
}

__device__ __forceinline__ double vsum(float4 v)
{
    return (double)v.x + v.y + v.z + v.w;
}
__device__ __forceinline__ double vsum(double2 v)
{
    return v.x + v.y;
}

/* partial[block] = passes x the sum of the block's vectors (double
 * accumulation) */
template <typename V>
__global__ void k_read(const V *__restrict__ a, size_t nv, double *partial,
                       int passes)
{
    __shared__ double red[BLOCK / 32];
    size_t stride = (size_t)gridDim.x * blockDim.x;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int r = 0; r < passes; r++) {
        size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        for (; i + 3 * stride < nv; i += 4 * stride) {
            V x0 = a[i], x1 = a[i + stride], x2 = a[i + 2 * stride],
              x3 = a[i + 3 * stride];
            s0 += vsum(x0);
            s1 += vsum(x1);
            s2 += vsum(x2);
            s3 += vsum(x3);
        }
        for (; i < nv; i += stride)
            s0 += vsum(a[i]);
        PASS_BARRIER();
    }
    double s = (s0 + s1) + (s2 + s3);
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int w = 0; w < BLOCK / 32; w++)
            t += red[w];
        partial[blockIdx.x] = t;
    }
}

__device__ __forceinline__ void wstore(float4 *p, uint64_t e)
{
    *p = make_float4(
        (float)sb_cmem_write_value(e), (float)sb_cmem_write_value(e + 1),
        (float)sb_cmem_write_value(e + 2), (float)sb_cmem_write_value(e + 3));
}
__device__ __forceinline__ void wstore(double2 *p, uint64_t e)
{
    *p = make_double2(sb_cmem_write_value(e), sb_cmem_write_value(e + 1));
}

/* a[i] = (i mod 4096) + 0.5 */
template <typename T, typename V>
__global__ void k_write(V *__restrict__ a, size_t nv, int passes)
{
    const int L = (int)(sizeof(V) / sizeof(T));
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int r = 0; r < passes; r++) {
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv;
             i += stride)
            wstore(&a[i], (uint64_t)i * L);
        PASS_BARRIER();
    }
}

/* The expected output element i of each kernel (device side). */
template <typename T>
__device__ __forceinline__ T expected(int kernel, uint64_t i)
{
    switch (kernel) {
    case SB__CMEM_COPY:
        return input_value<T>(i, 0);
    case SB__CMEM_WRITE:
        return (T)sb_cmem_write_value(i);
    default: /* triad: a = b + s c */
        return input_value<T>(i, 1) + (T)SB__CMEM_SCALAR * input_value<T>(i, 2);
    }
}

/* Counts output elements that differ from the formula; cnt[1] gets the
 * smallest wrong index. */
template <typename T>
__global__ void k_check(const T *out, size_t n, int kernel, double rtol,
                        unsigned long long *cnt)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long bad = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        double want = (double)expected<T>(kernel, i), got = (double)out[i];
        if (!(fabs(got - want) <= rtol * fabs(want))) { /* NaN fails */
            bad++;
            atomicMin(&cnt[1], (unsigned long long)i);
        }
    }
    if (bad)
        atomicAdd(&cnt[0], bad);
}

template <typename T>
__global__ void k_gather(const T *x, const uint64_t *idx, int m, double *out)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < m)
        out[k] = (double)x[idx[k]];
}

template <typename T> __global__ void k_plant(T *x, size_t i)
{
    x[i] = (T)-1.0;
}

/* ---- host side
 * ------------------------------------------------------------------ */

static int enqueue(void *state, int iters, sb_err *err)
{
    cmem_state *s = (cmem_state *)state;
    cudaStream_t st = s->base.stream;
    for (int it = 0; it < iters; it++) {
        if (s->kernel == SB__CMEM_COPY && s->use_memcpy) {
            for (int r = 0; r < s->base.passes; r++) {
                cudaError_t e = cudaMemcpyAsync(s->c, s->a, s->n * s->elem,
                                                cudaMemcpyDeviceToDevice, st);
                if (e)
                    return sb_cuda_fail(err, e, "cudaMemcpyAsync");
            }
            continue;
        }
        int np = s->base.passes;
        switch (s->kernel) {
        case SB__CMEM_COPY:
            if (s->tiles && s->fp64)
                k_copy_tile<<<s->tiles, BLOCK, 0, st>>>((const double2 *)s->a,
                                                        (double2 *)s->c, s->nv);
            else if (s->tiles)
                k_copy_tile<<<s->tiles, BLOCK, 0, st>>>((const float4 *)s->a,
                                                        (float4 *)s->c, s->nv);
            else if (s->fp64)
                k_copy<<<s->grid, BLOCK, 0, st>>>((const double2 *)s->a,
                                                  (double2 *)s->c, s->nv, np);
            else
                k_copy<<<s->grid, BLOCK, 0, st>>>((const float4 *)s->a,
                                                  (float4 *)s->c, s->nv, np);
            break;
        case SB__CMEM_READ:
            if (s->fp64)
                k_read<<<s->grid, BLOCK, 0, st>>>((const double2 *)s->a, s->nv,
                                                  s->partial, np);
            else
                k_read<<<s->grid, BLOCK, 0, st>>>((const float4 *)s->a, s->nv,
                                                  s->partial, np);
            break;
        case SB__CMEM_WRITE:
            if (s->fp64)
                k_write<double>
                    <<<s->grid, BLOCK, 0, st>>>((double2 *)s->a, s->nv, np);
            else
                k_write<float>
                    <<<s->grid, BLOCK, 0, st>>>((float4 *)s->a, s->nv, np);
            break;
        default:
            if (s->fp64)
                k_triad<double><<<s->grid, BLOCK, 0, st>>>(
                    (double2 *)s->a, (const double2 *)s->b,
                    (const double2 *)s->c, SB__CMEM_SCALAR, s->nv, np);
            else
                k_triad<float><<<s->grid, BLOCK, 0, st>>>(
                    (float4 *)s->a, (const float4 *)s->b, (const float4 *)s->c,
                    (float)SB__CMEM_SCALAR, s->nv, np);
        }
        cudaError_t e = cudaGetLastError();
        if (e)
            return sb_cuda_fail(err, e, "kernel launch");
    }
    return 0;
}

/* Blocks of BLOCK threads of `kernel` one SM holds at once; 0 when the
 * occupancy API cannot say. */
template <typename K> static int occupancy(K kernel)
{
    int nb = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernel, BLOCK, 0)) {
        cudaGetLastError();
        return 0;
    }
    return nb;
}

/* This point's kernel's blocks an SM, from its registers and shared
 * memory: the grid is that many blocks an SM, one wave. A fixed 8 blocks
 * of 256 (2048 threads an SM) ran a second, partial wave for the kernels
 * above 32 registers: on sm_90a k_triad takes 34 and k_read (fp32) 46
 * (nvcc -Xptxas -v), so 6 and 5 blocks fit. */
static int blocks_per_sm(const cmem_state *s)
{
    switch (s->kernel) {
    case SB__CMEM_COPY:
        return s->fp64 ? occupancy(k_copy<double2>) : occupancy(k_copy<float4>);
    case SB__CMEM_READ:
        return s->fp64 ? occupancy(k_read<double2>) : occupancy(k_read<float4>);
    case SB__CMEM_WRITE:
        return s->fp64 ? occupancy(k_write<double, double2>)
                       : occupancy(k_write<float, float4>);
    default:
        return s->fp64 ? occupancy(k_triad<double, double2>)
                       : occupancy(k_triad<float, float4>);
    }
}

extern "C" void sb_cmem_teardown(void *state)
{
    cmem_state *s = (cmem_state *)state;
    if (!s)
        return;
    cudaFree(s->a);
    cudaFree(s->b);
    cudaFree(s->c);
    cudaFree(s->partial);
    cudaFree(s->counters);
    cudaFree(s->d_idx);
    cudaFree(s->d_vals);
    sb_cuda_base_free(&s->base);
    free(s);
}

static int init_array(cmem_state *s, void *x, int arr, sb_err *err)
{
    int g = s->base.sms * 4;
    if (s->fp64)
        k_init<<<g, BLOCK, 0, s->base.stream>>>((double *)x, s->n, arr);
    else
        k_init<<<g, BLOCK, 0, s->base.stream>>>((float *)x, s->n, arr);
    return sb_cuda_sync(&s->base, err, "initialising the arrays");
}

extern "C" int sb_cmem_setup(int kernel, const sb_params *p, void **state,
                             sb_err *err)
{
    static const char *const names[] = {"copy", "read", "write", "triad"};
    cmem_state *s = (cmem_state *)calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int rc = sb_cuda_base_init(&s->base, (int)sb_p_int(p, "device"), enqueue,
                               true, err);
    if (rc)
        goto fail;
    s->kernel = kernel;
    s->fp64 = strcmp(sb_p_str(p, "dtype"), "fp64") == 0;
    s->use_memcpy =
        kernel == SB__CMEM_COPY && strcmp(sb_p_str(p, "method"), "memcpy") == 0;
    s->base.plant_error = sb_p_bool(p, "plant_error");
    s->size = sb_p_num(p, "size");
    s->elem = s->fp64 ? 8 : 4;
    s->n = sb_cmem_elems(kernel, s->size, s->elem);
    s->nv = s->n * s->elem / 16;
    /* A launch over a small (L2-resident) working set lasts less than the
     * gap between two launches, so it sweeps the arrays several times:
     * at least 64 MiB of traffic per launch. Samples are per pass. */
    s->base.passes =
        sb_cmem_passes((double)sb_cmem_arrays(kernel) * s->n * s->elem);
    /* A memcpy captured into a CUDA graph becomes a memcpy node, which
     * the H200 ran at 2.72 TB/s where the same cudaMemcpyAsync on a
     * stream ran at 4.25 (the node likely goes to a copy engine): method
     * memcpy is timed as programs call it, on the stream. */
    if (s->use_memcpy)
        s->base.use_graph = false;
    if (s->n == 0) {
        rc = sb_fail(err, SB_EINVAL,
                     "memory.%s: parameter size=%.0f holds no "
                     "16-byte vector per array",
                     names[kernel], s->size);
        goto fail;
    }
    {
        size_t free_b = 0, total_b = 0;
        cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
        if (e) {
            rc = sb_cuda_fail(err, e, "cudaMemGetInfo");
            goto fail;
        }
        double need = (double)sb_cmem_arrays(kernel) * s->n * s->elem;
        if (need > 0.95 * (double)free_b) {
            char a[32], b[32];
            rc = sb_fail(err, SB_EINVAL,
                         "memory.%s size=%s: needs more than "
                         "the %s of device memory free on %s",
                         names[kernel], sb_fmt_size(need, a, sizeof a),
                         sb_fmt_size((double)free_b, b, sizeof b),
                         s->base.devname);
            goto fail;
        }
    }
    {
        /* One wave of as many blocks as every SM holds (2048 threads
         * an SM where the occupancy API cannot say), but no block without
         * a vector. */
        int nb = blocks_per_sm(s);
        s->blocks_per_sm = nb > 0 ? nb : 2048 / BLOCK;
        size_t want = (size_t)s->base.sms * (size_t)s->blocks_per_sm;
        size_t most = (s->nv + BLOCK - 1) / BLOCK;
        s->grid = (int)(want < most ? want : most);
        /* one pass a launch (past the L2): copy in tiles, many waves */
        size_t ntiles = (s->nv + 4 * BLOCK - 1) / (4 * BLOCK);
        if (kernel == SB__CMEM_COPY && !s->use_memcpy && s->base.passes <= 1 &&
            ntiles <= (size_t)INT32_MAX)
            s->tiles = (int)ntiles;
        size_t bytes = s->n * s->elem;
        cudaError_t e = cudaMalloc(&s->a, bytes);
        if (!e && sb_cmem_arrays(kernel) >= 2)
            e = cudaMalloc(&s->c, bytes);
        if (!e && sb_cmem_arrays(kernel) == 3)
            e = cudaMalloc(&s->b, bytes);
        if (!e)
            e = cudaMalloc(&s->partial, (size_t)s->grid * sizeof(double));
        if (!e)
            e = cudaMalloc(&s->counters, 2 * sizeof(unsigned long long));
        if (!e)
            e = cudaMalloc(&s->d_idx, HOST_SAMPLES * sizeof(uint64_t));
        if (!e)
            e = cudaMalloc(&s->d_vals, HOST_SAMPLES * sizeof(double));
        if (e) {
            rc = sb_cuda_fail(err, e, "cudaMalloc");
            goto fail;
        }
    }
    /* Inputs: a for copy and read, b and c for triad; the outputs are
     * filled too (c of copy, a of triad and write) so nothing is zero. */
    if ((rc = init_array(s, s->a, 0, err)) ||
        (s->b && (rc = init_array(s, s->b, 1, err))) ||
        (s->c && (rc = init_array(s, s->c, 2, err))))
        goto fail;
    *state = s;
    return 0;
fail:
    sb_cmem_teardown(s);
    return rc;
}

/* The output array of the kernel (read has none but its partials). */
static void *output_of(cmem_state *s)
{
    return s->kernel == SB__CMEM_COPY ? s->c : s->a;
}

/* Host expectation of output element i, in double. */
static double host_expected(const cmem_state *s, uint64_t i)
{
    if (s->fp64) {
        switch (s->kernel) {
        case SB__CMEM_COPY:
            return sb_cmem_value_d(i, 0, SEED);
        case SB__CMEM_WRITE:
            return sb_cmem_write_value(i);
        default:
            return sb_cmem_value_d(i, 1, SEED) +
                   SB__CMEM_SCALAR * sb_cmem_value_d(i, 2, SEED);
        }
    }
    switch (s->kernel) {
    case SB__CMEM_COPY:
        return sb_cmem_value_f(i, 0, SEED);
    case SB__CMEM_WRITE:
        return sb_cmem_write_value(i);
    default:
        return (double)sb_cmem_value_f(i, 1, SEED) +
               SB__CMEM_SCALAR * (double)sb_cmem_value_f(i, 2, SEED);
    }
}

/* Host sum of read's partial for block blk, in double. */
static double host_partial(const cmem_state *s, int blk)
{
    size_t stride = (size_t)s->grid * BLOCK, lanes = 16 / s->elem;
    double sum = 0;
    for (size_t base = (size_t)blk * BLOCK; base < s->nv; base += stride)
        for (size_t t = 0; t < BLOCK && base + t < s->nv; t++)
            for (size_t l = 0; l < lanes; l++) {
                uint64_t e = (uint64_t)(base + t) * lanes + l;
                sum += s->fp64 ? sb_cmem_value_d(e, 0, SEED)
                               : (double)sb_cmem_value_f(e, 0, SEED);
            }
    return sum;
}

static int verify_read(cmem_state *s, sb_result *r, sb_err *err)
{
    cudaError_t e;
    if ((e = cudaMemsetAsync(s->partial, 0xff, (size_t)s->grid * sizeof(double),
                             s->base.stream)))
        return sb_cuda_fail(err, e, "cudaMemset");
    int rc = enqueue(s, 1, err);
    if (!rc)
        rc = sb_cuda_sync(&s->base, err, "the read kernel");
    if (rc)
        return rc;
    double *part = (double *)malloc((size_t)s->grid * sizeof(double));
    if (!part)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    if (s->base.plant_error) {
        double wrong = 12345.0;
        e = cudaMemcpy(s->partial + s->grid / 2, &wrong, sizeof wrong,
                       cudaMemcpyHostToDevice);
    }
    if (!e)
        e = cudaMemcpy(part, s->partial, (size_t)s->grid * sizeof(double),
                       cudaMemcpyDeviceToHost);
    if (e) {
        free(part);
        return sb_cuda_fail(err, e, "reading the partial sums back");
    }
    /* The first, middle and last block's partials, recomputed in full;
     * every partial must be a finite, positive sum. */
    int blocks[3] = {0, s->grid / 2, s->grid - 1};
    int bad = 0;
    double worst = 0;
    for (int g = 0; g < s->grid; g++)
        if (!(part[g] > 0) || isinf(part[g]))
            bad++;
    for (int k = 0; k < 3; k++) {
        double want = host_partial(s, blocks[k]) * s->base.passes;
        double rel = fabs(part[blocks[k]] - want) / want;
        if (!(rel <= 1e-9)) {
            if (!bad)
                sb_result_note(r,
                               "verification: block %d's sum is %.17g, the "
                               "host's %.17g",
                               blocks[k], part[blocks[k]], want);
            bad++;
        }
        if (rel > worst || isnan(rel))
            worst = rel;
    }
    free(part);
    r->valid = bad == 0;
    sb_result_metric(r, "max_rel_err", worst, "");
    if (!bad)
        sb_result_note(r,
                       "verified: 3 of %d block sums recomputed on the host "
                       "(relative error <= 1e-9), all %d finite",
                       s->grid, s->grid);
    return 0;
}

extern "C" int sb_cmem_verify(void *state, sb_result *r)
{
    cmem_state *s = (cmem_state *)state;
    sb_err err = {};
    if (s->kernel == SB__CMEM_READ) {
        int rc = verify_read(s, r, &err);
        if (rc)
            sb_result_note(r, "%s", err.msg);
        return rc;
    }
    void *out = output_of(s);
    size_t bytes = s->n * s->elem;
    double rtol = s->fp64 ? 1e-14 : 1e-6;
    cudaError_t e;
    unsigned long long init[2] = {0, ~0ull}, cnt[2];
    int rc = 0;
    /* Poison, run once, and check that every element was written. */
    if ((e = cudaMemsetAsync(out, 0xff, bytes, s->base.stream))) {
        rc = sb_cuda_fail(&err, e, "preparing the verification");
        goto out;
    }
    /* on the benchmark's stream: the check kernel reads the counters */
    if ((rc = sb_cuda_put(&s->base, s->counters, init, sizeof init, &err,
                          "preparing the verification")))
        goto out;
    if ((rc = enqueue(s, 1, &err)) ||
        (rc = sb_cuda_sync(&s->base, &err, "the verified run")))
        goto out;
    if (s->base.plant_error) {
        size_t at = s->n / 2 + 1;
        if (s->fp64)
            k_plant<<<1, 1, 0, s->base.stream>>>((double *)out, at);
        else
            k_plant<<<1, 1, 0, s->base.stream>>>((float *)out, at);
    }
    if (s->fp64)
        k_check<<<s->base.sms * 4, BLOCK, 0, s->base.stream>>>(
            (const double *)out, s->n, s->kernel, rtol, s->counters);
    else
        k_check<<<s->base.sms * 4, BLOCK, 0, s->base.stream>>>(
            (const float *)out, s->n, s->kernel, rtol, s->counters);
    if ((rc = sb_cuda_sync(&s->base, &err, "the check kernel")))
        goto out;
    if ((e = cudaMemcpy(cnt, s->counters, sizeof cnt,
                        cudaMemcpyDeviceToHost))) {
        rc = sb_cuda_fail(&err, e, "reading the check back");
        goto out;
    }
    {
        /* Host check of sampled elements: first, last and random ones. */
        uint64_t idx[HOST_SAMPLES];
        double vals[HOST_SAMPLES];
        uint64_t rng = 0x5a5aULL ^ s->n;
        int m = s->n < HOST_SAMPLES ? (int)s->n : HOST_SAMPLES;
        for (int k = 0; k < m; k++)
            idx[k] = m == (int)s->n ? (uint64_t)k
                     : k == 0       ? 0
                     : k == 1       ? s->n - 1
                     : k == 2       ? s->n / 2 + 1
                                    : sb_rng_next(&rng) % s->n;
        if ((rc = sb_cuda_put(&s->base, s->d_idx, idx,
                              (size_t)m * sizeof(uint64_t), &err,
                              "uploading the sampled indices")))
            goto out;
        int g = (m + BLOCK - 1) / BLOCK;
        if (s->fp64)
            k_gather<<<g, BLOCK, 0, s->base.stream>>>((const double *)out,
                                                      s->d_idx, m, s->d_vals);
        else
            k_gather<<<g, BLOCK, 0, s->base.stream>>>((const float *)out,
                                                      s->d_idx, m, s->d_vals);
        if ((rc = sb_cuda_sync(&s->base, &err, "gathering samples")))
            goto out;
        if ((e = cudaMemcpy(vals, s->d_vals, (size_t)m * sizeof(double),
                            cudaMemcpyDeviceToHost))) {
            rc = sb_cuda_fail(&err, e, "cudaMemcpy");
            goto out;
        }
        int hbad = 0;
        double worst = 0;
        for (int k = 0; k < m; k++) {
            double want = host_expected(s, idx[k]);
            double rel = fabs(vals[k] - want) / fabs(want);
            if (!(rel <= rtol)) {
                if (!hbad)
                    sb_result_note(r,
                                   "verification: element %llu is %.17g, the "
                                   "host expects %.17g",
                                   (unsigned long long)idx[k], vals[k], want);
                hbad++;
            }
            if (rel > worst || isnan(rel))
                worst = rel;
        }
        r->valid = cnt[0] == 0 && hbad == 0;
        sb_result_metric(r, "wrong", (double)cnt[0], "elements");
        sb_result_metric(r, "max_rel_err", worst, "");
        if (cnt[0])
            sb_result_note(r,
                           "verification: %llu of %zu elements wrong on the "
                           "device check (first at %llu)",
                           cnt[0], s->n, cnt[1]);
        else if (!hbad)
            sb_result_note(r,
                           "verified: all %zu elements on the device, %d "
                           "sampled on the host (relative tolerance %g)",
                           s->n, m, rtol);
    }
out:
    if (rc)
        sb_result_note(r, "%s", err.msg);
    return rc;
}

extern "C" void sb_cmem_report(void *state, const sb_params *p, sb_ctx *ctx,
                               sb_result *r)
{
    cmem_state *s = (cmem_state *)state;
    (void)p;
    double ws = (double)sb_cmem_arrays(s->kernel) * s->n * s->elem;
    bool hbm = s->base.l2_bytes > 0 && ws >= 4.0 * s->base.l2_bytes;
    sb_cuda_note(&s->base, r);
    sb_result_metric(r, "l2_ratio",
                     s->base.l2_bytes > 0 ? ws / s->base.l2_bytes : 0, "x");
    sb_result_note(r, "working set %.3g x the L2: %s", ws / s->base.l2_bytes,
                   hbm                            ? "an HBM figure"
                   : ws <= 0.5 * s->base.l2_bytes ? "L2-resident"
                                                  : "between L2 and HBM");
    if (s->use_memcpy)
        sb_result_note(r, "cudaMemcpyAsync device to device, launched on "
                          "the stream (not from a CUDA graph)");
    else if (s->tiles)
        sb_result_note(r,
                       "%d tiles of %d vectors of 16 bytes, one block of %d "
                       "threads each, streaming cache hints",
                       s->tiles, 4 * BLOCK, BLOCK);
    else
        sb_result_note(r,
                       "grid of %d blocks of %d threads: %d blocks an SM "
                       "resident at once (occupancy API), one wave",
                       s->grid, BLOCK, s->blocks_per_sm);
    if (!r->valid || r->stats.min <= 0)
        return;
    double best = ws / r->stats.min;
    if (hbm && (s->kernel == SB__CMEM_COPY || s->kernel == SB__CMEM_READ) &&
        best > sb_ceil_get(&ctx->ceil, "bw.HBM"))
        sb_ceil_set(&ctx->ceil, "bw.HBM", best, "measured");
}
