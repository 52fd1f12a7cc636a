/*
 * copy_lab.cu — device-to-device copy variants side by side on one GPU, to
 * choose memory.copy's kernel from measurements (docs/REFERENCE-GPU.md).
 * Not part of solbench: a lab program the device run builds and runs once.
 *
 * Each variant copies N 16-byte vectors from a to c. Before each variant
 * c is poisoned (0xff bytes, NaN), the variant runs once and every element
 * is checked against a; then it is timed with CUDA events: 3 warm-up
 * launches, then 9 trials of enough launches for 20 ms each; the median
 * and best trial are printed in TB/s counting bytes read plus written.
 *
 *   nvcc -O3 -arch=sm_90a -o copy_lab copy_lab.cu
 *   ./copy_lab [MiB per array ...]        (default 256 1024 2048)
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,         \
                    cudaGetErrorString(e_));                                   \
            exit(2);                                                           \
        }                                                                      \
    } while (0)

__device__ __forceinline__ float4 ld(const float4 *p, bool hint)
{
    return hint ? __ldcs(p) : *p;
}
__device__ __forceinline__ void st(float4 *p, float4 v, bool hint)
{
    if (hint)
        __stcs(p, v);
    else
        *p = v;
}

/* c[j] = a[j] for j = i, i + s, ... < end: U vectors loaded before the
 * first store, then the rest one at a time. Every variant is this loop
 * over its own range and step. */
template <int U, bool H>
__device__ __forceinline__ void copy_run(const float4 *__restrict__ a,
                                         float4 *__restrict__ c, size_t i,
                                         size_t end, size_t s)
{
    for (; i + (U - 1) * s < end; i += U * s) {
        float4 x[U];
#pragma unroll
        for (int k = 0; k < U; k++)
            x[k] = ld(a + i + k * s, H);
#pragma unroll
        for (int k = 0; k < U; k++)
            st(c + i + k * s, x[k], H);
    }
    for (; i < end; i += s)
        st(c + i, ld(a + i, H), H);
}

/* grid-stride over the whole array, one wave (solbench's k_copy is U = 4
 * without hints) */
template <int U, bool H>
__global__ void k_stride(const float4 *__restrict__ a, float4 *__restrict__ c,
                         size_t nv)
{
    copy_run<U, H>(a, c, (size_t)blockIdx.x * blockDim.x + threadIdx.x, nv,
                   (size_t)gridDim.x * blockDim.x);
}

/* one tile of blockDim x U vectors a block, many waves (the elementwise
 * kernels of the frameworks; solbench's k_copy_tile is U = 4 with hints) */
template <int U, bool H>
__global__ void k_tile(const float4 *__restrict__ a, float4 *__restrict__ c,
                       size_t nv)
{
    size_t lo = (size_t)blockIdx.x * blockDim.x * U;
    size_t hi = lo + (size_t)blockDim.x * U;
    copy_run<U, H>(a, c, lo + threadIdx.x, hi < nv ? hi : nv, blockDim.x);
}

/* one wave; each block copies its own contiguous chunk, U in flight */
template <int U, bool H>
__global__ void k_chunk(const float4 *__restrict__ a, float4 *__restrict__ c,
                        size_t nv)
{
    size_t per = (nv + gridDim.x - 1) / gridDim.x;
    size_t lo = (size_t)blockIdx.x * per, hi = lo + per < nv ? lo + per : nv;
    copy_run<U, H>(a, c, lo + threadIdx.x, hi, blockDim.x);
}

__global__ void k_init(float *x, size_t n)
{
    size_t s = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += s) {
        unsigned long long h = (i + 1) * 0x9e3779b97f4a7c15ULL;
        h ^= h >> 31;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
        x[i] = (float)(h >> 40) * (1.0f / 16777216.0f) + 0.5f;
    }
}

__global__ void k_check(const float *a, const float *c, size_t n,
                        unsigned long long *bad)
{
    size_t s = (size_t)gridDim.x * blockDim.x;
    unsigned long long b = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += s)
        b += !(a[i] == c[i]);
    if (b)
        atomicAdd(bad, b);
}

typedef void (*kfn)(const float4 *, float4 *, size_t);
struct variant {
    const char *name;
    kfn k;
    int block, mode; /* mode 0: one wave of occupancy; 1: tiles of U; 2:
                        cudaMemcpyAsync */
    int u;
};

int main(int argc, char **argv)
{
    std::vector<double> mibs;
    for (int i = 1; i < argc; i++)
        mibs.push_back(atof(argv[i]));
    if (mibs.empty())
        mibs = {256, 1024, 2048};
    int dev = 0, sms = 0;
    CK(cudaSetDevice(dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, dev));
    printf("device %s, %d SMs, L2 %d MiB\n", pr.name, sms,
           pr.l2CacheSize >> 20);
    const variant vs[] = {
        {"stride U4 b256 (solbench)", k_stride<4, false>, 256, 0, 4},
        {"stride U4 b256 cs hints", k_stride<4, true>, 256, 0, 4},
        {"stride U8 b256", k_stride<8, false>, 256, 0, 8},
        {"stride U8 b256 cs hints", k_stride<8, true>, 256, 0, 8},
        {"stride U4 b512", k_stride<4, false>, 512, 0, 4},
        {"stride U2 b256", k_stride<2, false>, 256, 0, 2},
        {"tile U4 b256", k_tile<4, false>, 256, 1, 4},
        {"tile U4 b256 cs hints", k_tile<4, true>, 256, 1, 4},
        {"tile U8 b128", k_tile<8, false>, 128, 1, 8},
        {"chunk U4 b256", k_chunk<4, false>, 256, 0, 4},
        {"chunk U8 b512 cs hints", k_chunk<8, true>, 512, 0, 8},
        {"cudaMemcpyAsync", NULL, 0, 2, 0},
    };
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    unsigned long long *bad;
    CK(cudaMalloc(&bad, sizeof *bad));
    int fails = 0;
    for (double mib : mibs) {
        size_t bytes = (size_t)(mib * 1048576.0) / 16 * 16, nv = bytes / 16;
        float4 *a, *c;
        CK(cudaMalloc(&a, bytes));
        CK(cudaMalloc(&c, bytes));
        k_init<<<sms * 8, 256, 0, st>>>((float *)a, bytes / 4);
        CK(cudaGetLastError());
        printf("\n%.0f MiB an array (%.2f GB read + written a copy)\n", mib,
               2e-9 * bytes);
        printf("%-28s %6s %10s %10s %s\n", "variant", "grid", "median", "best",
               "TB/s  check");
        for (const variant &v : vs) {
            int grid = 0;
            if (v.mode == 0) {
                int nb = 0;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, v.k,
                                                                 v.block, 0));
                grid = sms * nb;
            } else if (v.mode == 1) {
                size_t per = (size_t)v.block * v.u;
                grid = (int)((nv + per - 1) / per);
            }
            auto launch = [&]() {
                if (v.mode == 2)
                    CK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice,
                                       st));
                else
                    v.k<<<grid, v.block, 0, st>>>(a, c, nv);
            };
            CK(cudaMemsetAsync(c, 0xff, bytes, st));
            CK(cudaMemsetAsync(bad, 0, sizeof *bad, st));
            launch();
            CK(cudaGetLastError());
            k_check<<<sms * 8, 256, 0, st>>>((const float *)a, (const float *)c,
                                             bytes / 4, bad);
            unsigned long long nbad = 0;
            CK(cudaMemcpyAsync(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost,
                               st));
            CK(cudaStreamSynchronize(st));
            for (int w = 0; w < 3; w++)
                launch();
            CK(cudaEventRecord(e0, st));
            launch();
            CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1));
            float ms1 = 0;
            CK(cudaEventElapsedTime(&ms1, e0, e1));
            int reps = std::max(1, std::min(1000, (int)(20.0 / ms1)));
            std::vector<double> t;
            for (int tr = 0; tr < 9; tr++) {
                CK(cudaEventRecord(e0, st));
                for (int r = 0; r < reps; r++)
                    launch();
                CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                t.push_back(1e-3 * ms / reps);
            }
            std::sort(t.begin(), t.end());
            double tbs = 2.0 * bytes * 1e-12;
            printf("%-28s %6d %10.3f %10.3f       %s\n", v.name, grid,
                   tbs / t[4], tbs / t[0], nbad ? "WRONG" : "ok");
            fails += nbad != 0;
        }
        CK(cudaFree(a));
        CK(cudaFree(c));
    }
    return fails ? 1 : 0;
}
