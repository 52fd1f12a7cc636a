/*
 * gemm.c — compute.gemm: C = A B from the best GEMM library on the
 * machine (backend/cpu/cpu_gemm.h: OpenBLAS, oneDNN), row-major, in three
 * shapes: square, LLM (tokens x d_model times d_model x 4 d_model, the
 * FFN up-projection) and decode (a few tokens against a weight matrix
 * four times the last-level cache: what one decode step's matmuls are).
 * FLOPs = 2 M N K. Reports MFU against the measured all-core peak of the
 * same precision (compute.peak, earlier in the run) and against the
 * theoretical one; decode points add the weights' streaming rate, the
 * gemv.<dtype> ceiling. Every result says which library and which of its
 * kernels ran, and when OpenBLAS runs kernels narrower than the CPU,
 * which OPENBLAS_CORETYPE would match it.
 *
 * lib=auto times the product once on every library that can run it (on
 * the point's own buffers, outside the timed samples) and keeps the
 * fastest; the others' times are recorded beside it.
 *
 * Verification, after the timed runs: 64 sampled elements of C (the four
 * corners and 60 random ones) recomputed in double precision from the very
 * inputs the library saw, and every column sum of C checked against
 * (1^T A) B. The bound is the classical worst case of a K-term dot product,
 * |error| <= (K + 2) u sum_k |a_ik b_kj| with u the unit roundoff of the
 * accumulation (2^-53 fp64, 2^-24 fp32 and bf16 with fp32 accumulation),
 * plus the double-precision reference's own rounding. docs/METRICS.md
 * states the bounds.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <omp.h>

#include "backend/cpu/cpu_gemm.h"
#include "solbench/gemm.h"
#include "bench/compute/compute.h"
#include "solbench/runner.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* ---- state --------------------------------------------------------------- */

static size_t in_size(int dt)
{
    return dt == SB__DT_FP64 ? 8 : dt == SB__DT_FP32 ? 4 : 2;
}

static size_t out_size(int dt)
{
    return dt == SB__DT_FP64 ? 8 : 4;
}

double sb_gemm_unit_roundoff(int dt)
{
    return dt == SB__DT_FP64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
}

static double in_get(const sb_gemm *g, const void *x, int64_t idx)
{
    switch (g->dt) {
    case SB__DT_FP64:
        return ((const double *)x)[idx];
    case SB__DT_FP32:
        return ((const float *)x)[idx];
    default:
        return sb_bf16_to_f32(((const uint16_t *)x)[idx]);
    }
}

double sb_gemm_c_get(const sb_gemm *g, int64_t i, int64_t j)
{
    int64_t idx = i * g->n + j;
    return g->dt == SB__DT_FP64 ? ((const double *)g->c)[idx]
                                : ((const float *)g->c)[idx];
}

void sb_gemm_c_set(sb_gemm *g, int64_t i, int64_t j, double v)
{
    int64_t idx = i * g->n + j;
    if (g->dt == SB__DT_FP64)
        ((double *)g->c)[idx] = v;
    else
        ((float *)g->c)[idx] = (float)v;
}

/* Fills rows x cols of x with uniform values in [-1, 1), each row from
 * its own seed, so the values do not depend on the thread count; the rows
 * are first-touched by the threads of a static schedule. */
static void fill_random(int dt, void *x, int64_t rows, int64_t cols,
                        uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        uint64_t s = seed ^ ((uint64_t)(r + 1) * 0x9e3779b97f4a7c15ULL);
        for (int64_t c = 0; c < cols; c++) {
            double v = 2.0 * sb_rng_unif(&s) - 1.0;
            int64_t idx = r * cols + c;
            if (dt == SB__DT_FP64)
                ((double *)x)[idx] = v;
            else if (dt == SB__DT_FP32)
                ((float *)x)[idx] = (float)v;
            else
                ((uint16_t *)x)[idx] = sb_bf16_from_f32((float)v);
        }
    }
}

/* C starts as NaN: an element the BLAS never writes fails the check. */
static void fill_nan(int dt, void *x, int64_t rows, int64_t cols)
{
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            if (dt == SB__DT_FP64)
                ((double *)x)[r * cols + c] = NAN;
            else
                ((float *)x)[r * cols + c] = NAN;
        }
}

int sb_gemm_create(int dt, int64_t m, int64_t n, int64_t k, int threads,
                   uint64_t seed, int lib, sb_gemm **out, sb_err *err)
{
    *out = NULL;
    if (dt < 0 || dt >= SB__DT_N || m < 1 || n < 1 || k < 1 || m > INT_MAX ||
        n > INT_MAX || k > INT_MAX)
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: M=%lld N=%lld K=%lld: each must be in "
                       "1..%d",
                       (long long)m, (long long)n, (long long)k, INT_MAX);
    char why[192];
    bool any = false;
    for (int l = 0; l < SB_GEMM_NLIBS; l++)
        if ((lib < 0 || l == lib) &&
            sb_gemm_lib_supports(l, dt, why, sizeof why))
            any = true;
    if (!any)
        return sb_fail(err, SB_EUNSUP, "unsupported: %s %s: %s",
                       lib < 0 ? "no library runs" : sb_gemm_lib_name(lib),
                       sb_dtype_name(dt), why);
    sb_gemm *g = calloc(1, sizeof *g);
    if (!g)
        return sb_fail(err, SB_ENOMEM, "compute.gemm: out of memory");
    g->dt = dt;
    g->m = m;
    g->n = n;
    g->k = k;
    g->threads = threads > 0 ? threads : 1;
    g->seed = seed;
    g->a = sb_alloc_aligned((size_t)m * (size_t)k * in_size(dt));
    g->b = sb_alloc_aligned((size_t)k * (size_t)n * in_size(dt));
    g->c = sb_alloc_aligned((size_t)m * (size_t)n * out_size(dt));
    if (!g->a || !g->b || !g->c) {
        sb_gemm_destroy(g);
        return sb_fail(err, SB_ENOMEM,
                       "compute.gemm: cannot allocate %lldx%lldx%lld "
                       "matrices",
                       (long long)m, (long long)n, (long long)k);
    }
    fill_random(dt, g->a, m, k, seed);
    fill_random(dt, g->b, k, n, seed ^ 0xb0b0b0b0b0b0b0b0ULL);
    fill_nan(dt, g->c, m, n);

    /* The library's plan, made once; auto times each library on these
     * buffers (C is NaN again afterwards). */
    sb_gemm_desc d = {.dt = dt, .m = m, .n = n, .k = k, .alpha = 1, .beta = 0};
    int rc = lib >= 0 ? sb_gemm_plan_create(lib, &d, 1, &g->plan, err)
                      : sb_gemm_plan_fastest(&d, 1, g->a, g->b, g->c, 3,
                                             g->lib_s, &g->plan, err);
    if (rc < 0) {
        sb_gemm_destroy(g);
        return rc;
    }
    g->lib_auto = lib < 0;
    fill_nan(dt, g->c, m, n);

    /* The corners catch edge-tile bugs; the rest are spread at random. */
    uint64_t s = seed ^ 0x5a5a5a5a5a5a5a5aULL;
    int64_t ci[4] = {0, 0, m - 1, m - 1}, cj[4] = {0, n - 1, 0, n - 1};
    for (int q = 0; q < SB__GEMM_SAMPLES; q++) {
        if (q < 4) {
            g->si[q] = ci[q];
            g->sj[q] = cj[q];
        } else {
            g->si[q] = (int64_t)(sb_rng_next(&s) % (uint64_t)m);
            g->sj[q] = (int64_t)(sb_rng_next(&s) % (uint64_t)n);
        }
    }
    *out = g;
    return 0;
}

int sb_gemm_rotate(sb_gemm *g, int copies, sb_err *err)
{
    if (copies <= 1 || g->n_copies > 0)
        return 0;
    size_t bytes = (size_t)g->k * (size_t)g->n * in_size(g->dt);
    /* one allocation, each copy on a cache line of its own */
    g->stride = (bytes + 63) / 64 * 64;
    g->copies = sb_alloc_aligned(g->stride * (size_t)(copies - 1));
    if (!g->copies)
        return sb_fail(err, SB_ENOMEM,
                       "compute.gemm: cannot allocate %d copies of the "
                       "%.2f MiB weights",
                       copies - 1, bytes / 1048576.0);
    for (int i = 0; i < copies - 1; i++)
        memcpy(g->copies + (size_t)i * g->stride, g->b, bytes);
    g->n_copies = copies;
    return 0;
}

int sb_gemm_split(sb_gemm *g, sb_err *err)
{
    const int nt = g->threads;
    if (g->split)
        return 1;
    if (g->m > SB_GEMM_SPLIT_M || nt < 2 || g->k < 16 * (int64_t)nt)
        return 0;
    int64_t chunk = (g->k + nt - 1) / nt;
    chunk = (chunk + 15) / 16 * 16;
    const int used = (int)((g->k + chunk - 1) / chunk);
    const int64_t last = g->k - chunk * (used - 1);
    const int lib = sb_gemm_plan_lib(g->plan);
    sb_gemm_desc d = {.dt = g->dt,
                      .m = g->m,
                      .n = g->n,
                      .k = chunk,
                      .lda = g->k,
                      .ldb = g->n,
                      .ldc = g->n,
                      .alpha = 1,
                      .beta = 0};
    int rc = sb_gemm_plan_create(lib, &d, nt, &g->split_plan, err);
    if (rc == 0 && last != chunk) {
        d.k = last;
        rc = sb_gemm_plan_create(lib, &d, nt, &g->split_last, err);
    }
    if (rc < 0)
        return rc;
    size_t part =
        (size_t)(used - 1) * (size_t)g->m * (size_t)g->n * out_size(g->dt);
    g->part = sb_alloc_aligned(part > 0 ? part : 64);
    if (!g->part)
        return sb_fail(err, SB_ENOMEM,
                       "compute.gemm: cannot allocate the split's partials");
    g->chunk = chunk;
    g->used = used;
    g->split = true;
    return 1;
}

void sb_gemm_destroy(sb_gemm *g)
{
    if (!g)
        return;
    sb_gemm_plan_destroy(g->split_plan);
    sb_gemm_plan_destroy(g->split_last);
    sb_free_aligned(g->part);
    sb_free_aligned(g->copies);
    sb_gemm_plan_destroy(g->plan);
    sb_free_aligned(g->a);
    sb_free_aligned(g->b);
    sb_free_aligned(g->c);
    free(g);
}

/* The product split by B's rows: thread t multiplies A's columns and B's
 * rows [t chunk, (t + 1) chunk) into its partial, then every thread sums a
 * share of C's elements over the partials. */
static void split_once(sb_gemm *g, const unsigned char *b)
{
    const size_t ie = in_size(g->dt);
    const int64_t mn = g->m * g->n;
    const int used = g->used;
#pragma omp parallel num_threads(g->threads)
    {
        const int t = omp_get_thread_num();
        if (t < used) {
            const int64_t k0 = g->chunk * t;
            sb_gemm_plan *p =
                t == used - 1 && g->split_last ? g->split_last : g->split_plan;
            void *ct = t == 0
                           ? g->c
                           : (unsigned char *)g->part +
                                 (size_t)(t - 1) * (size_t)mn * out_size(g->dt);
            sb_gemm_run(p, t, (const unsigned char *)g->a + (size_t)k0 * ie,
                        b + (size_t)k0 * (size_t)g->n * ie, ct);
        }
#pragma omp barrier
        if (g->dt == SB__DT_FP64) {
            double *c = g->c;
            const double *q = g->part;
#pragma omp for schedule(static)
            for (int64_t i = 0; i < mn; i++)
                for (int u = 1; u < used; u++)
                    c[i] += q[(size_t)(u - 1) * (size_t)mn + (size_t)i];
        } else {
            float *c = g->c;
            const float *q = g->part;
#pragma omp for schedule(static)
            for (int64_t i = 0; i < mn; i++)
                for (int u = 1; u < used; u++)
                    c[i] += q[(size_t)(u - 1) * (size_t)mn + (size_t)i];
        }
    }
}

void sb_gemm_once(sb_gemm *g)
{
    void *b = g->b;
    if (g->n_copies > 1) {
        if (g->next > 0)
            b = g->copies + (size_t)(g->next - 1) * g->stride;
        g->next = (g->next + 1) % g->n_copies;
    }
    if (g->split)
        split_once(g, b);
    else
        sb_gemm_run(g->plan, 0, g->a, b, g->c);
}

/* ---- verification -------------------------------------------------------- */

int sb_gemm_check(sb_gemm *g, char *why, size_t len)
{
    const int64_t m = g->m, n = g->n, k = g->k;
    const double u = sb_gemm_unit_roundoff(g->dt);
    const double ud = ldexp(1.0, -53);
    int bad = 0;
    if (why && len)
        why[0] = 0;
    g->max_rel_err = 0;
    g->max_colsum_err = 0;

    /* Sampled elements against a double-precision dot product. */
    const double tol_el = (double)(k + 2) * u + (double)(k + 2) * ud;
    for (int q = 0; q < SB__GEMM_SAMPLES; q++) {
        int64_t i = g->si[q], j = g->sj[q];
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < k; p++) {
            double t = in_get(g, g->a, i * k + p) * in_get(g, g->b, p * n + j);
            ref += t;
            mag += fabs(t);
        }
        double c = sb_gemm_c_get(g, i, j);
        double e = fabs(c - ref);
        double rel = mag > 0 ? e / mag : e;
        if (!(rel <= g->max_rel_err))
            g->max_rel_err = isnan(rel) ? INFINITY : rel;
        if (!(e <= tol_el * mag + 1e-300)) {
            if (!bad && why)
                snprintf(why, len,
                         "C[%lld][%lld] = %.9g, reference %.9g (error %.3g "
                         "> bound %.3g)",
                         (long long)i, (long long)j, c, ref, e, tol_el * mag);
            bad++;
        }
    }

    /* Every column sum of C against (1^T A) B: catches a wrong element
     * anywhere, to the precision the bound allows. */
    double *s = calloc((size_t)k, sizeof *s);
    double *sa = calloc((size_t)k, sizeof *sa);
    double *cs = calloc((size_t)n, sizeof *cs);
    if (!s || !sa || !cs) {
        free(s);
        free(sa);
        free(cs);
        if (why && !bad)
            snprintf(why, len, "out of memory for the column-sum check");
        return bad + 1;
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) {
            double a = in_get(g, g->a, i * k + p);
            s[p] += a;
            sa[p] += fabs(a);
        }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            cs[j] += sb_gemm_c_get(g, i, j);
    const double tol_col =
        (double)(k + 2) * u + (double)(2 * k + 2 * m + 4) * ud;
    for (int64_t j = 0; j < n; j++) {
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < k; p++) {
            double b = in_get(g, g->b, p * n + j);
            ref += s[p] * b;
            mag += sa[p] * fabs(b);
        }
        double e = fabs(cs[j] - ref);
        double rel = mag > 0 ? e / mag : e;
        if (!(rel <= g->max_colsum_err))
            g->max_colsum_err = isnan(rel) ? INFINITY : rel;
        if (!(e <= tol_col * mag + 1e-300)) {
            if (!bad && why)
                snprintf(why, len,
                         "column %lld of C sums to %.9g, reference %.9g "
                         "(error %.3g > bound %.3g)",
                         (long long)j, cs[j], ref, e, tol_col * mag);
            bad++;
        }
    }
    free(s);
    free(sa);
    free(cs);
    return bad;
}

/* ---- parameters ---------------------------------------------------------- */

static const sb_param_def gemm_params[] = {
    {"dtype", SB_P_STR, "fp64,fp32,bf16", 0, 0, "fp64|fp32|bf16",
     "precision: fp64, fp32, bf16 (bf16 in, fp32 accumulate and out)"},
    {"lib", SB_P_STR, "auto", 0, 0, "auto|openblas|onednn",
     "GEMM library; auto = the fastest on this point, timed"},
    {"shape", SB_P_STR, "square", 0, 0, "square|llm|decode",
     "square: M = N = K = n; llm: M = tokens, K = d_model, N = ffn "
     "(4 d_model when 0); decode: M = batch, K = d_model, N = ffn"},
    {"n", SB_P_INT, "1024", 1, 1048576, NULL, "square: the matrix order"},
    {"m", SB_P_INT, "0", 0, 16777216, NULL,
     "square: rows of A and C when not n (0 = n)"},
    {"k", SB_P_INT, "0", 0, 1048576, NULL,
     "square: inner dimension when not n (0 = n)"},
    {"tokens", SB_P_INT, "256", 1, 16777216, NULL,
     "llm: tokens in the batch (M); a full-size layer is 2048"},
    {"d_model", SB_P_INT, "1024", 1, 262144, NULL,
     "llm, decode: model width (K); a full-size layer is 4096"},
    {"batch", SB_P_INT, "1", 1, 4096, NULL,
     "decode: sequences decoding at once, one token each (M)"},
    {"ffn", SB_P_INT, "0", 0, 1048576, NULL,
     "llm, decode: columns of the weight matrix (N); 0 = llm: 4 d_model, "
     "decode: enough that the weights are 4x the last-level cache"},
    {"rotate", SB_P_INT, "0", 0, 1, NULL,
     "decode, llm: 1 = copies of the K x N weights, together past 4x the "
     "last-level cache, multiplied in turn (a model's layers or experts, "
     "one product after another); 0 = one matrix"},
    {"split", SB_P_STR, "auto", 0, 0, "auto|lib|rows",
     "decode, llm of at most 16 rows: rows = the weights' rows split over "
     "the threads, each a contiguous block into its own partial, summed "
     "(the reference model's decode product); lib = the library's own "
     "threads; auto = the faster of the two, timed"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static bool is_decode(const sb_params *p)
{
    return strcmp(sb_p_str(p, "shape"), "decode") == 0;
}

/* rotate=1 reads small weights in turn: a model's shapes only */
static bool can_rotate(const sb_params *p)
{
    return is_decode(p) || strcmp(sb_p_str(p, "shape"), "llm") == 0;
}

static int gemm_dtype(const sb_params *p)
{
    return sb_dtype_parse(sb_p_str(p, "dtype"));
}

/* The library a point asks for: -1 for auto, -2 when unknown. */
static int gemm_lib(const sb_params *p)
{
    const char *s = sb_p_str(p, "lib");
    if (strcmp(s, "auto") == 0)
        return -1;
    int lib = sb_gemm_lib_parse(s);
    return lib >= 0 ? lib : -2;
}

/* The product's dimensions, once per point, on every backend. */
static int gemm_decode(const sb_bench *b, const sb_params *p, void *shape,
                       sb_err *err)
{
    (void)b;
    sb_gemm_shape *s = shape;
    s->decode = is_decode(p);
    return sb_gemm_dims(p, &s->m, &s->n, &s->k, err);
}

static int gemm_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    const sb_params *p = pt->params;
    (void)ctx;
    if (gemm_dtype(p) < 0)
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: parameter dtype=%s: expected fp64, "
                       "fp32 or bf16",
                       sb_p_str(p, "dtype"));
    if (sb_p_int(p, "rotate") && !can_rotate(p))
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: parameter rotate=1 applies to "
                       "shape=decode or shape=llm, not shape=%s",
                       sb_p_str(p, "shape"));
    if (strcmp(sb_p_str(p, "split"), "rows") == 0 && !can_rotate(p))
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: parameter split=rows applies to "
                       "shape=decode or shape=llm, not shape=%s",
                       sb_p_str(p, "shape"));
    if (gemm_lib(p) == -2)
        return sb_fail(err, SB_EINVAL,
                       "compute.gemm: parameter lib=%s: expected auto, "
                       "openblas or onednn",
                       sb_p_str(p, "lib"));
    return 0;
}

/* rotate=1 (decode, llm): the copies of the weights that together pass
 * 4x the last-level cache (32 MiB taken when unknown; at most 2^20
 * copies, what a matrix of 128 bytes needs past 32 MiB); else 1. */
static int rotate_copies(const sb_params *p, const sb_gemm_shape *s)
{
    int dt = gemm_dtype(p);
    if (!can_rotate(p) || !sb_p_int(p, "rotate") || dt < 0)
        return 1;
    double llc = sb_llc_bytes() > 0 ? sb_llc_bytes() : 32.0 * 1048576;
    double one = (double)s->k * (double)s->n * in_size(dt);
    double c = ceil(4.0 * llc / one);
    return c < 1 ? 1 : c > 1048576 ? 1048576 : (int)c;
}

/* A, `copies` of B and C, in bytes */
static double product_bytes(const sb_gemm_shape *s, int dt, double copies)
{
    return ((double)s->m * s->k + (double)s->k * s->n * copies) * in_size(dt) +
           (double)s->m * s->n * out_size(dt);
}

static double gemm_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    int dt = gemm_dtype(pt->params);
    return dt < 0 ? 0
                  : product_bytes(pt->shape, dt,
                                  rotate_copies(pt->params, pt->shape));
}

static double gemm_flops(const sb_point *pt)
{
    const sb_gemm_shape *s = pt->shape;
    return 2.0 * (double)s->m * (double)s->n * (double)s->k;
}

/* Decode points are read as memory traffic: the least a product can move
 * (A and the weights read once, C written once). The other shapes are
 * compute-bound and report FLOP/s alone. */
static double gemm_bytes(const sb_point *pt)
{
    const sb_gemm_shape *s = pt->shape;
    int dt = gemm_dtype(pt->params);
    return s->decode && dt >= 0 ? product_bytes(s, dt, 1) : 0;
}

/* ---- the benchmark ------------------------------------------------------- */

/* The mean of `tries` products as they run (the copies in turn), after
 * one untimed */
static double gemm_mean_s(sb_gemm *g, int tries)
{
    sb_gemm_once(g);
    double t0 = sb_now();
    for (int i = 0; i < tries; i++)
        sb_gemm_once(g);
    return (sb_now() - t0) / tries;
}

/* split=rows: split where the product can be; auto: the faster of the
 * library's own threads and the split, a few products of each timed as
 * they run (C is NaN again afterwards) */
static int gemm_pick_split(sb_gemm *g, const sb_params *p, sb_err *err)
{
    const char *how = sb_p_str(p, "split");
    if (strcmp(how, "lib") == 0 || !can_rotate(p))
        return 0;
    int rc = sb_gemm_split(g, err);
    if (rc <= 0 || strcmp(how, "rows") == 0)
        return rc;
    /* copies in turn: half of them a side (3 to 64), each read from
     * memory as the run reads them */
    int tries = g->n_copies > 1 ? g->n_copies / 2 : 5;
    tries = tries < 3 ? 3 : tries > 64 ? 64 : tries;
    g->split = false;
    g->split_s[0] = gemm_mean_s(g, tries);
    g->split = true;
    g->split_s[1] = gemm_mean_s(g, tries);
    g->split = g->split_s[1] < g->split_s[0];
    g->next = 0;
    fill_nan(g->dt, g->c, g->m, g->n);
    return 0;
}

static int gemm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    const sb_params *p = pt->params;
    const sb_gemm_shape *s = pt->shape;
    const int64_t m = s->m, n = s->n, k = s->k;
    int threads = ctx->threads > 0 ? ctx->threads : 1;
    /* The libraries' own parallel regions use the run's thread count. */
    openblas_set_num_threads(threads);
    sb_threads_setup(threads);
    sb_gemm *g;
    int rc =
        sb_gemm_create(gemm_dtype(p), m, n, k, threads,
                       0x9e3779b97f4a7c15ULL ^ (uint64_t)(m * 31 + n * 7 + k),
                       gemm_lib(p), &g, err);
    if (rc < 0)
        return rc;
    if ((rc = sb_gemm_rotate(g, rotate_copies(p, s), err)) < 0 ||
        (rc = gemm_pick_split(g, p, err)) < 0) {
        sb_gemm_destroy(g);
        return rc;
    }
    *state = g;
    return 0;
}

static void gemm_run(void *state, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        sb_gemm_once(state);
}

static int gemm_verify(void *state, sb_result *r)
{
    sb_gemm *g = state;
    char why[256];
    int bad = sb_gemm_check(g, why, sizeof why);
    r->valid = bad == 0;
    if (bad)
        sb_result_note(r, "verification failed (%d of %d checks): %s", bad,
                       SB__GEMM_SAMPLES + (int)g->n, why);
    sb_result_metric(r, "max_rel_err", g->max_rel_err, "");
    return 0;
}

static void gemm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    sb_gemm *g = state;
    const char *dt = sb_dtype_name(g->dt);
    double flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    char name[48];
    if (r->stats.p50 > 0) {
        double achieved = flops / r->stats.p50;
        if (((const sb_gemm_shape *)pt->shape)->decode) {
            /* The weights' streaming rate: a decode step reads every
             * weight once whatever the batch; the best of it is the
             * gemv.<dtype> ceiling (bytes per second of weights). */
            double wbytes = (double)g->k * (double)g->n * in_size(g->dt);
            sb_result_metric(r, "weight_GBps", wbytes / r->stats.p50 * 1e-9,
                             "GB/s");
            sb_result_metric(r, "weight_GBps_best",
                             wbytes / r->stats.min * 1e-9, "GB/s");
            snprintf(name, sizeof name, "gemv.%s", dt);
            /* Weights under 4x the LLC stream partly from the caches,
             * faster than a model's decode ever reads them from DRAM:
             * such a point sets no gemv ceiling (as memory.read's
             * figure is a DRAM one only past 4x; unknown LLC: taken as
             * DRAM). */
            double llc = sb_llc_bytes();
            bool dram = !(llc > 0) || wbytes >= 4.0 * llc;
            if (g->n_copies <= 1 && dram && r->valid &&
                wbytes / r->stats.min > sb_ceil_get(&ctx->ceil, name))
                sb_ceil_set(&ctx->ceil, name, wbytes / r->stats.min,
                            "measured");
            sb_result_note(r,
                           "decode: %lld token%s x weights %lld x %lld "
                           "(%.0f MiB, %.1fx the last-level cache): %s",
                           (long long)g->m, g->m == 1 ? "" : "s",
                           (long long)g->k, (long long)g->n, wbytes / 1048576,
                           llc > 0 ? wbytes / llc : 0.0,
                           dram ? "a DRAM figure"
                                : "not a DRAM figure (< 4x), no gemv ceiling");
        } else {
            /* The best GEMM rate of each dtype is a ceiling of its own:
             * the primitives built on GEMM (attention, MoE) report
             * against it. */
            snprintf(name, sizeof name, "gemm.%s", dt);
            if (g->n_copies <= 1 && r->valid &&
                flops / r->stats.min > sb_ceil_get(&ctx->ceil, name))
                sb_ceil_set(&ctx->ceil, name, flops / r->stats.min, "measured");
        }
        if (g->n_copies > 1) {
            /* small weights in turn: a product's time, which the machine
             * model splits into the one-matrix rate at its rows
             * (gemv.<dtype>@M for decode, gemm.<dtype>@M for llm) and a
             * cost a call (gemv.call.<dtype>, gemm.call.<dtype>) */
            double wbytes = (double)g->k * (double)g->n * in_size(g->dt);
            sb_result_note(r,
                           "rotate: %d copies multiplied in turn "
                           "(%.0f MiB together, %.1fx the last-level "
                           "cache), %.1f us a product",
                           g->n_copies, wbytes * g->n_copies / 1048576,
                           sb_llc_bytes() > 0
                               ? wbytes * g->n_copies / sb_llc_bytes()
                               : 0.0,
                           r->stats.p50 * 1e6);
        }
        snprintf(name, sizeof name, "peak.%s", dt);
        double peak = sb_ceil_get(&ctx->ceil, name);
        snprintf(name, sizeof name, "peak.%s.theoretical", dt);
        double theo = sb_ceil_get(&ctx->ceil, name);
        if (peak > 0)
            sb_result_metric(r, "MFU", achieved / peak, "ratio");
        if (theo > 0)
            sb_result_metric(r, "MFU_theoretical", achieved / theo, "ratio");
        if (peak > 0 || theo > 0)
            sb_result_note(r,
                           "MFU against peak.%s = %.1f GFLOP/s (measured by "
                           "compute.peak, all cores, this run); "
                           "MFU_theoretical against peak.%s.theoretical = "
                           "%.1f GFLOP/s",
                           dt, peak * 1e-9, dt, theo * 1e-9);
        else
            sb_result_note(r,
                           "no MFU: no peak.%s ceiling in this run (run "
                           "compute.peak with dtype=%s first)",
                           dt, dt);
    }

    if (g->split_s[0] > 0)
        sb_result_note(r,
                       "split=auto: %s (a product %.1f us split by the "
                       "weights' rows, %.1f us on the library's threads, "
                       "the mean of a few at setup)",
                       g->split ? "the weights' rows over the threads"
                                : "the library's own threads",
                       g->split_s[1] * 1e6, g->split_s[0] * 1e6);
    else if (g->split)
        sb_result_note(r,
                       "split=rows: the weights' %lld rows in %d blocks of "
                       "%lld, one a thread, partials summed",
                       (long long)g->k, g->used, (long long)g->chunk);
    else if (strcmp(sb_p_str(pt->params, "split"), "rows") == 0)
        sb_result_note(r,
                       "split=rows: not split, the library's threads ran it "
                       "(a split takes at most %d rows, 2 threads or more "
                       "and 16 of the weights' rows a thread)",
                       SB_GEMM_SPLIT_M);
    int lib = sb_gemm_plan_lib(g->plan);
    sb_result_note(
        r, "library: %s, kernel %s; %s, %d threads%s", sb_gemm_lib_name(lib),
        sb_gemm_plan_kernel(g->plan), sb_gemm_lib_version(lib), g->threads,
        g->lib_auto ? " (lib=auto: the fastest of those timed)" : "");
    if (g->lib_auto)
        for (int l = 0; l < SB_GEMM_NLIBS; l++)
            if (g->lib_s[l] > 0) {
                snprintf(name, sizeof name, "auto_%s_GFLOPs",
                         sb_gemm_lib_name(l));
                sb_result_metric(r, name, flops / g->lib_s[l] * 1e-9,
                                 "GFLOP/s");
            }
    const char *better = sb_gemm_openblas_better_core();
    char *core = openblas_get_corename();
    if (better && (lib == SB_GEMM_OPENBLAS || g->lib_auto))
        sb_result_note(r,
                       "OpenBLAS runs its %s kernels (%d-bit) on a CPU "
                       "whose ISA its %s kernels match: run with "
                       "OPENBLAS_CORETYPE=%s to use them",
                       core ? core : "?", sb_gemm_openblas_core_width(core),
                       better, better);
}

static void gemm_teardown(void *state)
{
    sb_gemm_destroy(state);
}

/* The CPU's GEMM: its libraries' dtypes and shapes (decode among them),
 * the library choice. */
static const sb_impl compute_gemm_cpu = {
    .backend = "cpu",
    .params = gemm_params,
    .quick = "dtype=fp64,fp32,bf16 shape=square,llm,decode n=1024 "
             "tokens=256 d_model=1024 batch=1",
    .full = "dtype=fp64,fp32,bf16 shape=square,llm,decode n=2048 "
            "tokens=1024 d_model=4096 batch=1,16,64",
    .check = gemm_check,
    .footprint = gemm_footprint,
    .bytes = gemm_bytes,
    .setup = gemm_setup,
    .run = gemm_run,
    .verify = gemm_verify,
    .report = gemm_report,
    .teardown = gemm_teardown,
};

#ifdef SB_HAVE_CUDA
#endif
#ifdef SB_HAVE_PJRT
#endif

/* C = A B of M x K by K x N (sb_gemm_dims): 2 M N K FLOPs on every
 * backend; which dtypes and shapes each takes is the backend's. */
const sb_bench sb_bench_compute_gemm = {
    .name = "compute.gemm",
    .area = "compute",
    .desc = "GEMM C = A B (CPU: OpenBLAS or oneDNN, the fastest or as asked; "
            "CUDA: cuBLASLt; PJRT: StableHLO): square, LLM and decode shapes, "
            "with MFU",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .decode = gemm_decode,
    .shape_size = sizeof(sb_gemm_shape),
    .flops = gemm_flops,
    .impls = (const sb_impl *const[]){&compute_gemm_cpu, NULL},
};
