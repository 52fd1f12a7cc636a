/*
 * ops.c — the backend-independent half of the elementwise ops (see
 * include/solbench/ops.h): element counts and sizes, the RoPE tables and
 * the double-precision reference of each op (its row of the ops table,
 * src/bench/ops/ops_table.def, names it) that every backend's output is
 * checked against.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

#include "solbench/ops.h"

int64_t sb_ops_out_elems(const sb_ops_shape *s)
{
    return s->tokens * s->d;
}

int sb_ops_elem_bytes(const sb_ops_shape *s)
{
    return s->bf16 ? 2 : 4;
}

void sb_ops_rope_tables(const sb_ops_shape *s, float *cos_t, float *sin_t)
{
    const int h = s->head_dim / 2;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < s->tokens; t++)
        for (int i = 0; i < h; i++) {
            double a = (double)t *
                       pow(SB_OPS_ROPE_THETA, -2.0 * i / (double)s->head_dim);
            cos_t[t * h + i] = (float)cos(a);
            sin_t[t * h + i] = (float)sin(a);
        }
}

/* ---- the references ------------------------------------------------------ */

/* The first wrong element (the lowest index) and its values. */
typedef struct sb__ops_first {
    int64_t at;
    double got, want;
} sb__ops_first;

#define SB__OPS_NONE_WRONG                                                     \
    {                                                                          \
        INT64_MAX, 0, 0                                                        \
    }

/* 1 when out[at] = got is not within tol of ref (NaN included), which
 * then becomes the first wrong one if it comes before it; else 0. */
static int sb__ops_wrong(sb__ops_first *f, int64_t at, double got, double ref,
                         double tol)
{
    if (fabs(got - ref) <= tol)
        return 0;
#pragma omp critical(sb_ops_first)
    if (at < f->at) {
        f->at = at;
        f->got = got;
        f->want = ref;
    }
    return 1;
}

/* The tolerance's bf16 term: the output rounding (half an ulp, <= 2^-9),
 * relative to the value itself. */
static double sb__ops_stol(const sb_ops_shape *s)
{
    return s->bf16 ? 1.0 / 256.0 : 0.0;
}

static int64_t sb__ops_done(const sb_ops_shape *s, const char *name,
                            int64_t bad, const sb__ops_first *f, char *why,
                            int why_len)
{
    if (bad && why && why_len > 0)
        snprintf(why, (size_t)why_len,
                 "%lld wrong; first: %s out[token %lld][%lld] = %.8g, "
                 "reference %.8g",
                 (long long)bad, name, (long long)(f->at / s->d),
                 (long long)(f->at % s->d), f->got, f->want);
    return bad;
}

/* The tolerances' rtol is of fp32 arithmetic error, relative to the
 * magnitude of the terms (ops.h). */
int64_t sb_ops_verify_rmsnorm(const sb_ops_shape *s, const sb_ops_bufs *io,
                              char *why, int why_len)
{
    const bool bf = s->bf16;
    const int64_t T = s->tokens, d = s->d;
    const double stol = sb__ops_stol(s);
    int64_t bad = 0;
    sb__ops_first first = SB__OPS_NONE_WRONG;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < T; t++) {
        double ss = 0.0;
        for (int64_t i = 0; i < d; i++) {
            double v = sb_ops_elem(io->x, bf, t * d + i);
            ss += v * v;
        }
        const double r = 1.0 / sqrt(ss / (double)d + SB_OPS_EPS);
        for (int64_t i = 0; i < d; i++) {
            double ref = sb_ops_elem(io->x, bf, t * d + i) * r *
                         sb_ops_elem(io->g, bf, i);
            bad += sb__ops_wrong(&first, t * d + i,
                                 sb_ops_elem(io->y, bf, t * d + i), ref,
                                 1e-4 * fabs(ref) + stol * fabs(ref) + 1e-30);
        }
    }
    return sb__ops_done(s, "rmsnorm", bad, &first, why, why_len);
}

int64_t sb_ops_verify_swiglu(const sb_ops_shape *s, const sb_ops_bufs *io,
                             char *why, int why_len)
{
    const bool bf = s->bf16;
    const int64_t T = s->tokens, d = s->d;
    const double stol = sb__ops_stol(s);
    int64_t bad = 0;
    sb__ops_first first = SB__OPS_NONE_WRONG;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < d; i++) {
            double a = sb_ops_elem(io->x, bf, 2 * t * d + i),
                   b = sb_ops_elem(io->x, bf, 2 * t * d + d + i);
            double ref = a / (1.0 + exp(-a)) * b;
            /* 1e-6·|b|: silu(a) near 0 for very negative a */
            bad += sb__ops_wrong(
                &first, t * d + i, sb_ops_elem(io->y, bf, t * d + i), ref,
                1e-5 * fabs(ref) + stol * fabs(ref) + 1e-6 * fabs(b));
        }
    return sb__ops_done(s, "swiglu", bad, &first, why, why_len);
}

int64_t sb_ops_verify_rope(const sb_ops_shape *s, const sb_ops_bufs *io,
                           char *why, int why_len)
{
    const bool bf = s->bf16;
    const int64_t T = s->tokens, d = s->d;
    const int hd = s->head_dim, h = hd / 2;
    const double stol = sb__ops_stol(s);
    /* the frequencies theta^(-2i/head_dim) in double, once; then each
     * thread's row of cos and sin (h of each), once a row: every head of
     * the row and both halves of a head take the same angles. */
    double *freq = malloc(sizeof *freq * (size_t)h *
                          (1 + 2 * (size_t)omp_get_max_threads()));
    if (!freq) {
        if (why && why_len > 0)
            snprintf(why, (size_t)why_len,
                     "rope: no memory for the reference's angles");
        return T * d;
    }
    for (int i = 0; i < h; i++)
        freq[i] = pow(SB_OPS_ROPE_THETA, -2.0 * i / (double)hd);
    int64_t bad = 0;
    sb__ops_first first = SB__OPS_NONE_WRONG;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < T; t++) {
        double *rc = freq + (size_t)h * (1 + 2 * (size_t)omp_get_thread_num());
        double *rs = rc + h;
        for (int ii = 0; ii < h; ii++) {
            rc[ii] = cos((double)t * freq[ii]);
            rs[ii] = sin((double)t * freq[ii]);
        }
        for (int64_t i = 0; i < d; i++) {
            const int64_t head = i / hd * hd;
            const int j = (int)(i - head);
            const int ii = j < h ? j : j - h;
            const double c = rc[ii], sn = rs[ii];
            double lo = sb_ops_elem(io->x, bf, t * d + head + ii),
                   hi = sb_ops_elem(io->x, bf, t * d + head + ii + h);
            double ref, scale;
            if (j < h) {
                ref = lo * c - hi * sn;
                scale = fabs(lo * c) + fabs(hi * sn);
            } else {
                ref = hi * c + lo * sn;
                scale = fabs(hi * c) + fabs(lo * sn);
            }
            bad += sb__ops_wrong(&first, t * d + i,
                                 sb_ops_elem(io->y, bf, t * d + i), ref,
                                 1e-5 * scale + stol * fabs(ref) + 1e-7);
        }
    }
    free(freq);
    return sb__ops_done(s, "rope", bad, &first, why, why_len);
}

int64_t sb_ops_verify_softmax(const sb_ops_shape *s, const sb_ops_bufs *io,
                              char *why, int why_len)
{
    const bool bf = s->bf16;
    const int64_t T = s->tokens, d = s->d;
    const double stol = sb__ops_stol(s);
    int64_t bad = 0;
    sb__ops_first first = SB__OPS_NONE_WRONG;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < T; t++) {
        double mx = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < d; i++) {
            double v = sb_ops_elem(io->x, bf, t * d + i);
            mx = v > mx ? v : mx;
        }
        for (int64_t i = 0; i < d; i++)
            sum += exp(sb_ops_elem(io->x, bf, t * d + i) - mx);
        for (int64_t i = 0; i < d; i++) {
            double ref = exp(sb_ops_elem(io->x, bf, t * d + i) - mx) / sum;
            bad += sb__ops_wrong(&first, t * d + i,
                                 sb_ops_elem(io->y, bf, t * d + i), ref,
                                 1e-4 * ref + stol * fabs(ref) + 1e-12);
        }
    }
    return sb__ops_done(s, "softmax", bad, &first, why, why_len);
}

int64_t sb_ops_verify_layernorm(const sb_ops_shape *s, const sb_ops_bufs *io,
                                char *why, int why_len)
{
    const bool bf = s->bf16;
    const int64_t T = s->tokens, d = s->d;
    const double stol = sb__ops_stol(s);
    int64_t bad = 0;
    sb__ops_first first = SB__OPS_NONE_WRONG;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < T; t++) {
        double sum = 0.0, v = 0.0;
        for (int64_t i = 0; i < d; i++)
            sum += sb_ops_elem(io->x, bf, t * d + i);
        const double mean = sum / (double)d;
        for (int64_t i = 0; i < d; i++) {
            double c = sb_ops_elem(io->x, bf, t * d + i) - mean;
            v += c * c;
        }
        const double r = 1.0 / sqrt(v / (double)d + SB_OPS_LAYERNORM_EPS);
        for (int64_t i = 0; i < d; i++) {
            double n = (sb_ops_elem(io->x, bf, t * d + i) - mean) * r *
                       sb_ops_elem(io->g, bf, i);
            double bi = sb_ops_elem(io->b, bf, i), ref = n + bi;
            /* fp32 arithmetic: 1e-4 of the output's terms, and the fp32
             * mean's rounding (relative 1e-5 of it: some 1000x what a row
             * of 1000 elements loses here, about 3x at d = 2^20) carried
             * through the scaling */
            double tol =
                1e-4 * (fabs(n) + fabs(bi)) +
                1e-5 * fabs(mean) * r * fabs(sb_ops_elem(io->g, bf, i)) +
                stol * fabs(ref) + 1e-6;
            bad += sb__ops_wrong(&first, t * d + i,
                                 sb_ops_elem(io->y, bf, t * d + i), ref, tol);
        }
    }
    return sb__ops_done(s, "layernorm", bad, &first, why, why_len);
}
