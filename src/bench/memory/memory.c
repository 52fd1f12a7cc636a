/*
 * memory.c — the CPU memory-bandwidth kernels: STREAM's copy, scale, add
 * and triad, a read (sum reduction) and a write (fill), each with optional
 * non-temporal stores, plus what the memory area shares (partition,
 * initial values, verification, cache sizes, ceilings).
 *
 * Every kernel is idempotent — its inputs are never written — so the
 * output after any number of iterations equals one application, and the
 * verification recomputes every element from its index (the initial values
 * are a hash of the index, so no reference copy is stored). Threads take
 * one contiguous chunk each (a static partition aligned to 16 elements),
 * the same chunk in setup (first touch) and in every iteration, and run
 * their iterations without a barrier between them, as likwid-bench does:
 * the time of a call is the slowest thread's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <omp.h>

#include "bench/memory/memory.h"
#include "solbench/util.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SB__MEM_X86 1
#endif

/* Tells the compiler memory may have changed: every iteration must load
 * and store again (no hoisting, no dead-store removal across iterations). */
#define SB__CLOBBER() __asm__ volatile("" ::: "memory")

/* A copy loop must stay a load/store loop: a memcpy/memset call would bring
 * the C library's own choice of (possibly non-temporal) stores. */
#if defined(__clang__)
#define SB__NO_IDIOM __attribute__((no_builtin("memcpy"), no_builtin("memset")))
#else
#define SB__NO_IDIOM                                                           \
    __attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif

/* Element alignment of chunk boundaries: 16 elements = 64 B (fp32) or
 * 128 B (fp64), so aligned vector and stream stores start every chunk. */
#define SB__CHUNK_ALIGN 16
/* Doubles between two per-thread partial sums (one cache line). */
#define SB__PAD 8

static const uint64_t seed_a = 0x243f6a8885a308d3ULL;
static const uint64_t seed_b = 0x13198a2e03707344ULL;
static const uint64_t seed_c = 0xa4093822299f31d0ULL;

static inline double init_value(uint64_t seed, size_t i)
{
    uint64_t z = seed + (uint64_t)i * 0x9e3779b97f4a7c15ULL;
    return 1.0 + sb_rng_unif(&z);
}

static inline void chunk_of(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    size_t blocks = (n + SB__CHUNK_ALIGN - 1) / SB__CHUNK_ALIGN;
    size_t b0 = blocks * (size_t)t / (size_t)nt;
    size_t b1 = blocks * (size_t)(t + 1) / (size_t)nt;
    *lo = b0 * SB__CHUNK_ALIGN < n ? b0 * SB__CHUNK_ALIGN : n;
    *hi = b1 * SB__CHUNK_ALIGN < n ? b1 * SB__CHUNK_ALIGN : n;
}

/* ---- kernel facts -------------------------------------------------------- */

static const char *const kernel_names[SB_MEM_NKERNELS] = {
    "copy", "scale", "add", "triad", "read", "write"};

int sb_mem_kernel_from_name(const char *name)
{
    for (int k = 0; k < SB_MEM_NKERNELS; k++)
        if (strcmp(kernel_names[k], name) == 0)
            return k;
    return -1;
}

int sb_mem_arrays(sb_mem_kernel k)
{
    switch (k) {
    case SB_MEM_COPY:
    case SB_MEM_SCALE:
        return 2;
    case SB_MEM_ADD:
    case SB_MEM_TRIAD:
        return 3;
    default:
        return 1;
    }
}

/* Each array is either read or written once per element and iteration,
 * so the STREAM count is the number of arrays. */
int sb_mem_words(sb_mem_kernel k)
{
    return sb_mem_arrays(k);
}

int sb_mem_words_wa(sb_mem_kernel k, bool nt)
{
    int written = k == SB_MEM_READ ? 0 : 1;
    return sb_mem_words(k) + (nt ? 0 : written);
}

size_t sb_mem_elems(sb_mem_kernel k, double size, size_t elem)
{
    double n = floor(size / ((double)sb_mem_arrays(k) * (double)elem));
    return n > 0 ? (size_t)n : 0;
}

/* ---- plain kernels (vectorised by the compiler) -------------------------- */

#define SB__DEFINE_PLAIN(T, S)                                                 \
    static SB__NO_IDIOM void copy_##S(T *restrict c, const T *restrict a,      \
                                      size_t lo, size_t hi, uint64_t iters)    \
    {                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                              \
            for (size_t i = lo; i < hi; i++)                                   \
                c[i] = a[i];                                                   \
            SB__CLOBBER();                                                     \
        }                                                                      \
    }                                                                          \
    static SB__NO_IDIOM void scale_##S(T *restrict b, const T *restrict c,     \
                                       T s, size_t lo, size_t hi,              \
                                       uint64_t iters)                         \
    {                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                              \
            for (size_t i = lo; i < hi; i++)                                   \
                b[i] = s * c[i];                                               \
            SB__CLOBBER();                                                     \
        }                                                                      \
    }                                                                          \
    static SB__NO_IDIOM void add_##S(T *restrict c, const T *restrict a,       \
                                     const T *restrict b, size_t lo,           \
                                     size_t hi, uint64_t iters)                \
    {                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                              \
            for (size_t i = lo; i < hi; i++)                                   \
                c[i] = a[i] + b[i];                                            \
            SB__CLOBBER();                                                     \
        }                                                                      \
    }                                                                          \
    static SB__NO_IDIOM void triad_##S(T *restrict a, const T *restrict b,     \
                                       const T *restrict c, T s, size_t lo,    \
                                       size_t hi, uint64_t iters)              \
    {                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                              \
            for (size_t i = lo; i < hi; i++)                                   \
                a[i] = b[i] + s * c[i];                                        \
            SB__CLOBBER();                                                     \
        }                                                                      \
    }                                                                          \
    static SB__NO_IDIOM void fill_##S(T *restrict a, T v, size_t lo,           \
                                      size_t hi, uint64_t iters)               \
    {                                                                          \
        for (uint64_t it = 0; it < iters; it++) {                              \
            for (size_t i = lo; i < hi; i++)                                   \
                a[i] = v;                                                      \
            SB__CLOBBER();                                                     \
        }                                                                      \
    }

SB__DEFINE_PLAIN(double, d)
SB__DEFINE_PLAIN(float, f)

/* The read kernel keeps 8 independent vector partial sums, enough to hide
 * the add latency behind two loads per cycle. Vector types of the
 * compiler (not intrinsics) keep it portable; AVX-512 builds use 64-byte
 * vectors. Chunks start 128-byte aligned (64 for fp32), so the vector
 * loads are aligned. */
#if defined(__AVX512F__)
#define SB__VBYTES 64
#else
#define SB__VBYTES 32
#endif
typedef double sb__vd __attribute__((vector_size(SB__VBYTES)));
typedef float sb__vf __attribute__((vector_size(SB__VBYTES)));
#define SB__VD (SB__VBYTES / 8)
#define SB__VF (SB__VBYTES / 4)

static double sum_chunk_d(const double *restrict a, size_t lo, size_t hi)
{
    sb__vd s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, s4 = {0}, s5 = {0}, s6 = {0},
           s7 = {0};
    size_t i = lo;
    for (; i + 8 * SB__VD <= hi; i += 8 * SB__VD) {
        const sb__vd *v = (const sb__vd *)(const void *)(a + i);
        s0 += v[0];
        s1 += v[1];
        s2 += v[2];
        s3 += v[3];
        s4 += v[4];
        s5 += v[5];
        s6 += v[6];
        s7 += v[7];
    }
    sb__vd t = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
    double s = 0;
    for (int j = 0; j < SB__VD; j++)
        s += t[j];
    for (; i < hi; i++)
        s += a[i];
    return s;
}

/* Single precision sums blocks of 2048 elements in float vectors and adds
 * each block's sum to a double, so the rounding error stays ~1e-6 of the
 * sum whatever the array length. */
static double sum_chunk_f(const float *restrict a, size_t lo, size_t hi)
{
    double total = 0;
    size_t i = lo;
    const size_t step = 8 * SB__VF;
    while (i + step <= hi) {
        size_t end = i + 2048 <= hi ? i + 2048 : hi - (hi - i) % step;
        sb__vf s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, s4 = {0}, s5 = {0},
               s6 = {0}, s7 = {0};
        for (; i < end; i += step) {
            const sb__vf *v = (const sb__vf *)(const void *)(a + i);
            s0 += v[0];
            s1 += v[1];
            s2 += v[2];
            s3 += v[3];
            s4 += v[4];
            s5 += v[5];
            s6 += v[6];
            s7 += v[7];
        }
        sb__vf t = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
        float bs = 0;
        for (int j = 0; j < SB__VF; j++)
            bs += t[j];
        total += bs;
    }
    for (; i < hi; i++)
        total += a[i];
    return total;
}

/* ---- non-temporal kernels (x86 stream stores) ---------------------------- */

#ifdef SB__MEM_X86
#define SB__DEFINE_NT(NAME, TGT, VT, T, W, LOAD, STREAM, SET1, ADD, MUL)       \
    __attribute__((target(TGT))) static void NAME(                             \
        const sb_mem_state *s, size_t lo, size_t hi, uint64_t iters)           \
    {                                                                          \
        T *a = s->a, *b = s->b, *c = s->c;                                     \
        const T ts = (T)s->scalar, tf = (T)s->fill;                            \
        const VT vs = SET1(ts), vf = SET1(tf);                                 \
        const size_t vend = lo + (hi - lo) / (W) * (W);                        \
        for (uint64_t it = 0; it < iters; it++) {                              \
            switch (s->kernel) {                                               \
            case SB_MEM_COPY:                                                  \
                for (size_t i = lo; i < vend; i += (W))                        \
                    STREAM(c + i, LOAD(a + i));                                \
                for (size_t i = vend; i < hi; i++)                             \
                    c[i] = a[i];                                               \
                break;                                                         \
            case SB_MEM_SCALE:                                                 \
                for (size_t i = lo; i < vend; i += (W))                        \
                    STREAM(b + i, MUL(vs, LOAD(c + i)));                       \
                for (size_t i = vend; i < hi; i++)                             \
                    b[i] = ts * c[i];                                          \
                break;                                                         \
            case SB_MEM_ADD:                                                   \
                for (size_t i = lo; i < vend; i += (W))                        \
                    STREAM(c + i, ADD(LOAD(a + i), LOAD(b + i)));              \
                for (size_t i = vend; i < hi; i++)                             \
                    c[i] = a[i] + b[i];                                        \
                break;                                                         \
            case SB_MEM_TRIAD:                                                 \
                for (size_t i = lo; i < vend; i += (W))                        \
                    STREAM(a + i, ADD(LOAD(b + i), MUL(vs, LOAD(c + i))));     \
                for (size_t i = vend; i < hi; i++)                             \
                    a[i] = b[i] + ts * c[i];                                   \
                break;                                                         \
            case SB_MEM_WRITE:                                                 \
                for (size_t i = lo; i < vend; i += (W))                        \
                    STREAM(a + i, vf);                                         \
                for (size_t i = vend; i < hi; i++)                             \
                    a[i] = tf;                                                 \
                break;                                                         \
            default:                                                           \
                break;                                                         \
            }                                                                  \
            _mm_sfence(); /* stream stores are weakly ordered */               \
            SB__CLOBBER();                                                     \
        }                                                                      \
    }

SB__DEFINE_NT(nt512_d, "avx512f", __m512d, double, 8, _mm512_load_pd,
              _mm512_stream_pd, _mm512_set1_pd, _mm512_add_pd, _mm512_mul_pd)
SB__DEFINE_NT(nt512_f, "avx512f", __m512, float, 16, _mm512_load_ps,
              _mm512_stream_ps, _mm512_set1_ps, _mm512_add_ps, _mm512_mul_ps)
SB__DEFINE_NT(nt256_d, "avx", __m256d, double, 4, _mm256_load_pd,
              _mm256_stream_pd, _mm256_set1_pd, _mm256_add_pd, _mm256_mul_pd)
SB__DEFINE_NT(nt256_f, "avx", __m256, float, 8, _mm256_load_ps,
              _mm256_stream_ps, _mm256_set1_ps, _mm256_add_ps, _mm256_mul_ps)
SB__DEFINE_NT(nt128_d, "sse2", __m128d, double, 2, _mm_load_pd, _mm_stream_pd,
              _mm_set1_pd, _mm_add_pd, _mm_mul_pd)
SB__DEFINE_NT(nt128_f, "sse2", __m128, float, 4, _mm_load_ps, _mm_stream_ps,
              _mm_set1_ps, _mm_add_ps, _mm_mul_ps)
#endif

int sb_mem_nt_bits(void)
{
#ifdef SB__MEM_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return 512;
    if (__builtin_cpu_supports("avx"))
        return 256;
    if (__builtin_cpu_supports("sse2"))
        return 128;
#endif
    return 0;
}

/* ---- running ------------------------------------------------------------- */

static void run_chunk(sb_mem_state *s, int t, size_t lo, size_t hi,
                      uint64_t iters)
{
#ifdef SB__MEM_X86
    if (s->nt && s->kernel != SB_MEM_READ) {
        if (s->nt_bits == 512)
            (s->fp32 ? nt512_f : nt512_d)(s, lo, hi, iters);
        else if (s->nt_bits == 256)
            (s->fp32 ? nt256_f : nt256_d)(s, lo, hi, iters);
        else
            (s->fp32 ? nt128_f : nt128_d)(s, lo, hi, iters);
        return;
    }
#endif
    if (s->fp32) {
        float *a = s->a, *b = s->b, *c = s->c;
        float sc = (float)s->scalar;
        switch (s->kernel) {
        case SB_MEM_COPY:
            copy_f(c, a, lo, hi, iters);
            break;
        case SB_MEM_SCALE:
            scale_f(b, c, sc, lo, hi, iters);
            break;
        case SB_MEM_ADD:
            add_f(c, a, b, lo, hi, iters);
            break;
        case SB_MEM_TRIAD:
            triad_f(a, b, c, sc, lo, hi, iters);
            break;
        case SB_MEM_WRITE:
            fill_f(a, (float)s->fill, lo, hi, iters);
            break;
        case SB_MEM_READ:
            for (uint64_t it = 0; it < iters; it++) {
                s->partial[(size_t)t * SB__PAD] = sum_chunk_f(a, lo, hi);
                SB__CLOBBER();
            }
            break;
        default:
            break;
        }
    } else {
        double *a = s->a, *b = s->b, *c = s->c;
        double sc = s->scalar;
        switch (s->kernel) {
        case SB_MEM_COPY:
            copy_d(c, a, lo, hi, iters);
            break;
        case SB_MEM_SCALE:
            scale_d(b, c, sc, lo, hi, iters);
            break;
        case SB_MEM_ADD:
            add_d(c, a, b, lo, hi, iters);
            break;
        case SB_MEM_TRIAD:
            triad_d(a, b, c, sc, lo, hi, iters);
            break;
        case SB_MEM_WRITE:
            fill_d(a, s->fill, lo, hi, iters);
            break;
        case SB_MEM_READ:
            for (uint64_t it = 0; it < iters; it++) {
                s->partial[(size_t)t * SB__PAD] = sum_chunk_d(a, lo, hi);
                SB__CLOBBER();
            }
            break;
        default:
            break;
        }
    }
}

void sb_mem_run(void *state, uint64_t iters)
{
    sb_mem_state *s = state;
#pragma omp parallel num_threads(s->threads)
    {
        int nth = omp_get_num_threads(), tid = omp_get_thread_num();
        /* Normally one chunk per thread; fewer threads than asked for
         * still cover every chunk. */
        for (int t = tid; t < s->threads; t += nth) {
            size_t lo, hi;
            chunk_of(s->n, t, s->threads, &lo, &hi);
            run_chunk(s, t, lo, hi, iters);
        }
    }
}

/* ---- set-up and verification --------------------------------------------- */

static void fill_init(void *p, bool fp32, uint64_t seed, size_t lo, size_t hi)
{
    if (!p)
        return;
    if (fp32) {
        float *x = p;
        for (size_t i = lo; i < hi; i++)
            x[i] = (float)init_value(seed, i);
    } else {
        double *x = p;
        for (size_t i = lo; i < hi; i++)
            x[i] = init_value(seed, i);
    }
}

int sb_mem_setup(sb_mem_kernel k, bool fp32, bool nt, double size, int threads,
                 sb_mem_state **out, sb_err *err)
{
    *out = NULL;
    if (threads < 1)
        threads = 1;
    size_t elem = fp32 ? sizeof(float) : sizeof(double);
    size_t n = sb_mem_elems(k, size, elem);
    if (n < 1)
        return sb_fail(err, SB_EINVAL, "size=%.0f B holds no element", size);
    sb_mem_state *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->kernel = k;
    s->fp32 = fp32;
    s->nt_bits = sb_mem_nt_bits();
    s->nt = nt && s->nt_bits > 0 && k != SB_MEM_READ;
    s->n = n;
    s->elem = elem;
    s->threads = threads;
    s->scalar = SB_MEM_SCALAR;
    s->fill = init_value(0x5be0cd19137e2179ULL, 0);
    if (fp32)
        s->fill = (float)s->fill;
    s->partial = calloc((size_t)threads * SB__PAD, sizeof *s->partial);
    /* The arrays a kernel uses: copy a->c, scale c->b, add a,b->c,
     * triad b,c->a, read a, write a. */
    bool use_a = k != SB_MEM_SCALE;
    bool use_b = k == SB_MEM_SCALE || k == SB_MEM_ADD || k == SB_MEM_TRIAD;
    bool use_c = k != SB_MEM_READ && k != SB_MEM_WRITE;
    size_t bytes = n * elem;
    if (use_a)
        s->a = sb_alloc_aligned(bytes);
    if (use_b)
        s->b = sb_alloc_aligned(bytes);
    if (use_c)
        s->c = sb_alloc_aligned(bytes);
    if (!s->partial || (use_a && !s->a) || (use_b && !s->b) ||
        (use_c && !s->c)) {
        sb_mem_teardown(s);
        char buf[32];
        return sb_fail(err, SB_ENOMEM, "could not allocate %d arrays of %s",
                       sb_mem_arrays(k),
                       sb_fmt_size((double)bytes, buf, sizeof buf));
    }
    /* First touch: each thread writes the pages of the chunk it will run. */
#pragma omp parallel num_threads(threads)
    {
        int nth = omp_get_num_threads(), tid = omp_get_thread_num();
        for (int t = tid; t < threads; t += nth) {
            size_t lo, hi;
            chunk_of(n, t, threads, &lo, &hi);
            fill_init(s->a, fp32, seed_a, lo, hi);
            fill_init(s->b, fp32, seed_b, lo, hi);
            fill_init(s->c, fp32, seed_c, lo, hi);
        }
    }
    *out = s;
    return 0;
}

void sb_mem_teardown(void *state)
{
    sb_mem_state *s = state;
    if (!s)
        return;
    sb_free_aligned(s->a);
    sb_free_aligned(s->b);
    sb_free_aligned(s->c);
    free(s->partial);
    free(s);
}

static inline double elem_at(const void *p, bool fp32, size_t i)
{
    return fp32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* The initial value of an input as stored (rounded to float for fp32). */
static inline double stored_init(bool fp32, uint64_t seed, size_t i)
{
    double v = init_value(seed, i);
    return fp32 ? (double)(float)v : v;
}

int sb_mem_verify(void *state, sb_result *r)
{
    sb_mem_state *s = state;
    const bool f = s->fp32;
    /* Outputs may differ from the reference by the rounding of a fused or
     * unfused multiply-add; inputs and copies must be bit-exact. */
    const double tol = f ? 1e-6 : 1e-12;
    const double sum_tol = f ? 1e-5 : 1e-9;
    const size_t n = s->n;
    size_t nbad = 0, first_bad = (size_t)-1;
    double ref_sum = 0;

#pragma omp parallel for schedule(static) reduction(+ : nbad, ref_sum) \
    reduction(min : first_bad)
    for (size_t i = 0; i < n; i++) {
        double A = stored_init(f, seed_a, i), B = stored_init(f, seed_b, i);
        double C = stored_init(f, seed_c, i);
        bool ok = true;
        switch (s->kernel) {
        case SB_MEM_COPY:
            ok = elem_at(s->a, f, i) == A && elem_at(s->c, f, i) == A;
            break;
        case SB_MEM_SCALE:
            ok = elem_at(s->c, f, i) == C &&
                 fabs(elem_at(s->b, f, i) - s->scalar * C) <=
                     tol * s->scalar * C;
            break;
        case SB_MEM_ADD:
            ok = elem_at(s->a, f, i) == A && elem_at(s->b, f, i) == B &&
                 fabs(elem_at(s->c, f, i) - (A + B)) <= tol * (A + B);
            break;
        case SB_MEM_TRIAD: {
            double want = B + s->scalar * C;
            ok = elem_at(s->b, f, i) == B && elem_at(s->c, f, i) == C &&
                 fabs(elem_at(s->a, f, i) - want) <= tol * want;
            break;
        }
        case SB_MEM_READ:
            ok = elem_at(s->a, f, i) == A;
            ref_sum += A;
            break;
        case SB_MEM_WRITE:
            ok = elem_at(s->a, f, i) == s->fill;
            break;
        default:
            break;
        }
        if (!ok) {
            nbad++;
            if (i < first_bad)
                first_bad = i;
        }
    }

    r->valid = nbad == 0;
    if (nbad)
        sb_result_note(r,
                       "verification: %zu of %zu elements wrong (first at "
                       "index %zu)",
                       nbad, n, first_bad);
    if (s->kernel == SB_MEM_READ) {
        double sum = 0;
        for (int t = 0; t < s->threads; t++)
            sum += s->partial[(size_t)t * SB__PAD];
        s->sum = sum;
        if (!(fabs(sum - ref_sum) <= sum_tol * ref_sum)) {
            r->valid = false;
            sb_result_note(r,
                           "verification: sum %.17g, reference %.17g "
                           "(relative error %.2g, tolerance %.0e)",
                           sum, ref_sum, fabs(sum - ref_sum) / ref_sum,
                           sum_tol);
        }
    }
    return 0;
}

/* ---- caches and ceilings ------------------------------------------------- */

void sb_mem_ceil_offer(sb_ceilings *c, const char *name, double bps,
                       bool dram_level)
{
    if (!(bps > 0))
        return;
    const sb_ceiling *old = NULL;
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->c[i].name, name) == 0)
            old = &c->c[i];
    bool old_dram = old && strcmp(old->source, "measured") == 0;
    if (dram_level) {
        if (!old || !old_dram || bps > old->value)
            sb_ceil_set(c, name, bps, "measured");
    } else if (!old || (!old_dram && bps > old->value)) {
        sb_ceil_set(c, name, bps, "measured-in-cache");
    }
}

/* ---- the benchmarks ------------------------------------------------------ */

static const sb_param_def mem_params[] = {
    {"size", SB_P_SIZE, "256MiB", 256, 1125899906842624.0, NULL,
     "total bytes of all arrays of the kernel"},
    {"dtype", SB_P_STR, "fp64", 0, 0, "fp64|fp32", "element type"},
    {"nt", SB_P_BOOL, "0", 0, 0, NULL,
     "non-temporal (streaming) stores, where the ISA has them"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* A point once decoded: which kernel, the bytes asked for, the element
 * type, the elements per array and non-temporal stores asked for. */
typedef struct mem_shape {
    sb_mem_kernel k;
    double size;
    bool fp32, nt;
    size_t elem, elems;
    double used; /* bytes the arrays hold: whole elements, every array */
} mem_shape;

static int mem_decode(const sb_bench *b, const sb_params *p, void *out,
                      sb_err *err)
{
    (void)err;
    mem_shape *sh = out;
    sh->k = (sb_mem_kernel)b->kind;
    sh->size = sb_p_num(p, "size");
    sh->fp32 = strcmp(sb_p_str(p, "dtype"), "fp32") == 0;
    sh->nt = sb_p_find(p, "nt") && sb_p_bool(p, "nt");
    sh->elem = sh->fp32 ? sizeof(float) : sizeof(double);
    sh->elems = sb_mem_elems(sh->k, sh->size, sh->elem);
    sh->used = (double)sh->elems * (double)sh->elem * sb_mem_arrays(sh->k);
    return 0;
}

static double mem_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    return ((const mem_shape *)pt->shape)->used;
}

static double mem_bytes(const sb_point *pt)
{
    return ((const mem_shape *)pt->shape)->used; /* one pass over every array */
}

static int mem_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    const mem_shape *sh = pt->shape;
    double need = (double)sb_mem_arrays(sh->k) * (double)sh->elem * 64.0;
    char a[32], b[32];
    if (sh->size < need)
        return sb_fail(err, SB_EINVAL,
                       "%s: size=%s is too small: it needs "
                       "at least %s (%d arrays of 64 elements)",
                       pt->bench->name, sb_fmt_size(sh->size, a, sizeof a),
                       sb_fmt_size(need, b, sizeof b), sb_mem_arrays(sh->k));
    if (ctx && ctx->phys_mem > 0 && sh->used > ctx->phys_mem)
        return sb_fail(err, SB_EINVAL,
                       "%s: size=%s is more than this "
                       "machine's physical memory (%s)",
                       pt->bench->name, sb_fmt_size(sh->size, a, sizeof a),
                       sb_fmt_size(ctx->phys_mem, b, sizeof b));
    return 0;
}

static int mem_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                     sb_err *err)
{
    const mem_shape *sh = pt->shape;
    sb_mem_state *s = NULL;
    int rc =
        sb_mem_setup(sh->k, sh->fp32, sh->nt, sh->size, ctx->threads, &s, err);
    *state = s;
    return rc;
}

static void mem_report(void *state, const sb_point *pt, sb_ctx *ctx,
                       sb_result *r)
{
    sb_mem_state *s = state;
    const mem_shape *sh = pt->shape;
    if (r->n_samples == 0)
        return;
    double bytes = (double)s->n * (double)s->elem;
    double wa = bytes * sb_mem_words_wa(s->kernel, s->nt);
    double med = r->stats.p50, best = r->stats.min;
    if (med > 0 && best > 0) {
        sb_result_metric(r, "GBps_wa", wa / med * 1e-9, "GB/s");
        sb_result_metric(r, "GBps_wa_best", wa / best * 1e-9, "GB/s");
    }
    if (s->kernel != SB_MEM_READ)
        sb_result_note(r,
                       "GBps_wa counts write-allocate traffic: +1 word "
                       "per element written%s",
                       s->nt ? " (none with "
                               "non-temporal stores, so GBps_wa = GBps)"
                             : "");
    if (sh->used != sh->size)
        sb_result_note(r,
                       "size rounded down to %.0f B: %d array%s of %zu "
                       "whole %d-byte elements",
                       sh->used, sb_mem_arrays(s->kernel),
                       sb_mem_arrays(s->kernel) == 1 ? "" : "s", sh->elems,
                       (int)s->elem);
    if (sh->nt && s->kernel == SB_MEM_READ)
        sb_result_note(r, "nt has no effect on read (it stores nothing)");
    else if (sh->nt && !s->nt)
        sb_result_note(r, "nt not available on this CPU: regular stores "
                          "used");
    else if (s->nt)
        sb_result_note(r, "non-temporal stores, %d-bit (%s)", s->nt_bits,
                       s->nt_bits == 512   ? "AVX-512"
                       : s->nt_bits == 256 ? "AVX"
                                           : "SSE2");

    sb_mem_caches mc;
    sb_mem_caches_read(&mc);
    double llc = sb_mem_llc_total(&mc);
    /* DRAM-ness is judged on the size asked for: the arrays hold whole
     * elements, so the bytes used may fall a few short of it. */
    double ws = sh->size;
    bool dram = llc <= 0 || ws >= 4.0 * llc;
    char a[32], b[32];
    if (llc > 0)
        sb_result_note(r,
                       "working set %s is %.3gx the last-level cache "
                       "(%s): %s",
                       sb_fmt_size(ws, a, sizeof a), ws / llc,
                       sb_fmt_size(llc, b, sizeof b),
                       dram ? "a DRAM figure" : "not a DRAM figure (< 4x)");
    if (!r->valid)
        return;
    double bps_best = sb_mem_words(s->kernel) * bytes / best;
    if (s->kernel == SB_MEM_TRIAD)
        sb_mem_ceil_offer(&ctx->ceil, "bw.triad", bps_best, dram);
    if (s->kernel == SB_MEM_READ) {
        sb_mem_ceil_offer(&ctx->ceil, "bw.read", bps_best, dram);
        if (dram)
            sb_mem_ceil_offer(&ctx->ceil, "bw.DRAM", bps_best, true);
    }
}

/* The CPU's impl, one for the six kernels: the hooks read the kernel from
 * the definition (its kind). */
static const sb_impl mem_cpu = {
    .backend = "cpu",
    .params = mem_params,
    .quick = "size=128MiB",
    .full = "size=2GiB",
    .check = mem_check,
    .footprint = mem_footprint,
    .bytes = mem_bytes,
    .setup = mem_setup,
    .run = sb_mem_run,
    .verify = sb_mem_verify,
    .report = mem_report,
    .teardown = sb_mem_teardown,
};

#ifdef SB_HAVE_CUDA
#endif
#ifdef SB_HAVE_PJRT
#endif

#define SB__MEM_BENCH(K, NAME, DESC)                                           \
    const sb_bench sb_bench_memory_##NAME = {                                  \
        .name = "memory." #NAME,                                               \
        .area = "memory",                                                      \
        .desc = DESC,                                                          \
        .flags = SB_BF_QUICK | SB_BF_FULL,                                     \
        .kind = K,                                                             \
        .decode = mem_decode,                                                  \
        .shape_size = sizeof(mem_shape),                                       \
        .impls = (const sb_impl *const[]){&mem_cpu, NULL},                     \
    };

SB__MEM_BENCH(SB_MEM_COPY, copy, "STREAM copy c = a (2 words/element)")
SB__MEM_BENCH(SB_MEM_SCALE, scale, "STREAM scale b = s*c (2 words/element)")
SB__MEM_BENCH(SB_MEM_ADD, add, "STREAM add c = a + b (3 words/element)")
SB__MEM_BENCH(SB_MEM_TRIAD, triad, "STREAM triad a = b + s*c (3 words/element)")
SB__MEM_BENCH(SB_MEM_READ, read, "read: sum of a (1 word/element)")
SB__MEM_BENCH(SB_MEM_WRITE, write, "write: fill a = v (1 word/element)")
