/*
 * ops.c — the backend-independent half of the elementwise ops (see
 * include/solbench/ops.h): shape checks, FLOP and byte accounting, the
 * RoPE tables and the double-precision verifier that every backend's
 * output is checked against.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

#include "solbench/ops.h"

const char *sb_ops_name(sb_op_kind op)
{
    switch (op) {
    case SB_OP_RMSNORM:
        return "rmsnorm";
    case SB_OP_SWIGLU:
        return "swiglu";
    case SB_OP_ROPE:
        return "rope";
    case SB_OP_SOFTMAX:
        return "softmax";
    }
    return "?";
}

int sb_ops_check(const sb_ops_shape *s, sb_err *err)
{
    if (s->tokens < 1 || s->tokens > SB_OPS_MAX_TOKENS)
        return sb_fail(err, SB_EINVAL,
                       "parameter tokens=%lld: must be in 1..%d",
                       (long long)s->tokens, SB_OPS_MAX_TOKENS);
    if (s->d < 1 || s->d > SB_OPS_MAX_D)
        return sb_fail(err, SB_EINVAL, "parameter d=%lld: must be in 1..%d",
                       (long long)s->d, SB_OPS_MAX_D);
    if (s->op == SB_OP_ROPE) {
        if (s->head_dim < 2 || s->head_dim % 2 != 0)
            return sb_fail(err, SB_EINVAL,
                           "parameter head_dim=%d: must be even and >= 2",
                           s->head_dim);
        if (s->d % s->head_dim != 0)
            return sb_fail(err, SB_EINVAL,
                           "parameter head_dim=%d: must divide d=%lld",
                           s->head_dim, (long long)s->d);
    }
    return 0;
}

int64_t sb_ops_in_elems(const sb_ops_shape *s)
{
    return s->tokens * s->d * (s->op == SB_OP_SWIGLU ? 2 : 1);
}

int64_t sb_ops_out_elems(const sb_ops_shape *s)
{
    return s->tokens * s->d;
}

int sb_ops_elem_bytes(const sb_ops_shape *s)
{
    return s->bf16 ? 2 : 4;
}

double sb_ops_flops(const sb_ops_shape *s)
{
    double T = (double)s->tokens, d = (double)s->d;
    switch (s->op) {
    case SB_OP_RMSNORM:
        return 4.0 * T * d + 3.0 * T;
    case SB_OP_SWIGLU:
        return 4.0 * T * d;
    case SB_OP_ROPE:
        return 3.0 * T * d;
    case SB_OP_SOFTMAX:
        return 5.0 * T * d + T;
    }
    return 0.0;
}

double sb_ops_bytes(const sb_ops_shape *s)
{
    double T = (double)s->tokens, d = (double)s->d, S = sb_ops_elem_bytes(s);
    switch (s->op) {
    case SB_OP_RMSNORM:
        return S * (2.0 * T * d + d);
    case SB_OP_SWIGLU:
        return 3.0 * S * T * d;
    case SB_OP_ROPE:
        return 2.0 * S * T * d + 4.0 * T * s->head_dim;
    case SB_OP_SOFTMAX:
        return 2.0 * S * T * d;
    }
    return 0.0;
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

/* ---- verification -------------------------------------------------------- */

typedef struct sb__ops_first {
    int64_t at;
    double got, want;
} sb__ops_first;

int64_t sb_ops_verify(const sb_ops_shape *s, const void *x, const void *g,
                      const void *out, char *why, int why_len)
{
    const int bf = s->bf16;
    const int64_t T = s->tokens, d = s->d;
    /* fp32 arithmetic error, relative to the magnitude of the terms; and
     * for bf16 the output rounding (half an ulp, <= 2^-9), relative to the
     * value itself. */
    const double rtol =
        s->op == SB_OP_RMSNORM || s->op == SB_OP_SOFTMAX ? 1e-4 : 1e-5;
    const double stol = bf ? 1.0 / 256.0 : 0.0;
    /* rope: the frequencies theta^(-2i/head_dim) in double, once; then
     * each thread's row of cos and sin (h of each), once a row: every head
     * of the row and both halves of a head take the same angles. */
    double *freq = NULL;
    const int h = s->head_dim / 2;
    if (s->op == SB_OP_ROPE) {
        freq = malloc(sizeof *freq * (size_t)h *
                      (1 + 2 * (size_t)omp_get_max_threads()));
        if (!freq) {
            if (why && why_len > 0)
                snprintf(why, (size_t)why_len,
                         "rope: no memory for the "
                         "reference's angles");
            return T * d;
        }
        for (int i = 0; i < h; i++)
            freq[i] = pow(SB_OPS_ROPE_THETA, -2.0 * i / (double)s->head_dim);
    }
    int64_t bad = 0;
    sb__ops_first first = {INT64_MAX, 0, 0};
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t t = 0; t < T; t++) {
        const int64_t in0 = t * d * (s->op == SB_OP_SWIGLU ? 2 : 1);
        double aux = 0.0, aux2 = 0.0;
        double *rc = NULL, *rs = NULL; /* rope: this row's cos, sin */
        if (s->op == SB_OP_ROPE) {
            rc = freq + (size_t)h * (1 + 2 * (size_t)omp_get_thread_num());
            rs = rc + h;
            for (int ii = 0; ii < h; ii++) {
                rc[ii] = cos((double)t * freq[ii]);
                rs[ii] = sin((double)t * freq[ii]);
            }
        } else if (s->op == SB_OP_RMSNORM) {
            for (int64_t i = 0; i < d; i++) {
                double v = sb_ops_elem(x, bf, in0 + i);
                aux += v * v;
            }
            aux = 1.0 / sqrt(aux / (double)d + SB_OPS_EPS);
        } else if (s->op == SB_OP_SOFTMAX) {
            aux = -INFINITY;
            for (int64_t i = 0; i < d; i++) {
                double v = sb_ops_elem(x, bf, in0 + i);
                aux = v > aux ? v : aux;
            }
            for (int64_t i = 0; i < d; i++)
                aux2 += exp(sb_ops_elem(x, bf, in0 + i) - aux);
        }
        for (int64_t i = 0; i < d; i++) {
            double ref = 0.0, scale = 0.0, atol = 1e-30;
            switch (s->op) {
            case SB_OP_RMSNORM: {
                double v =
                    sb_ops_elem(x, bf, in0 + i) * aux * sb_ops_elem(g, bf, i);
                ref = v;
                scale = fabs(v);
                break;
            }
            case SB_OP_SWIGLU: {
                double a = sb_ops_elem(x, bf, in0 + i),
                       b = sb_ops_elem(x, bf, in0 + d + i);
                ref = a / (1.0 + exp(-a)) * b;
                scale = fabs(ref);
                atol = 1e-6 * fabs(b); /* silu(a) near 0 for very negative a */
                break;
            }
            case SB_OP_ROPE: {
                const int hd = s->head_dim;
                const int64_t head = i / hd * hd;
                const int j = (int)(i - head);
                const int ii = j < h ? j : j - h;
                const double c = rc[ii], sn = rs[ii];
                double lo = sb_ops_elem(x, bf, in0 + head + ii),
                       hi = sb_ops_elem(x, bf, in0 + head + ii + h);
                if (j < h) {
                    ref = lo * c - hi * sn;
                    scale = fabs(lo * c) + fabs(hi * sn);
                } else {
                    ref = hi * c + lo * sn;
                    scale = fabs(hi * c) + fabs(lo * sn);
                }
                atol = 1e-7;
                break;
            }
            case SB_OP_SOFTMAX:
                ref = exp(sb_ops_elem(x, bf, in0 + i) - aux) / aux2;
                scale = ref;
                atol = 1e-12;
                break;
            }
            double got = sb_ops_elem(out, bf, t * d + i);
            if (!(fabs(got - ref) <= rtol * scale + stol * fabs(ref) + atol)) {
                bad++;
#pragma omp critical(sb_ops_first)
                if (t * d + i < first.at) {
                    first.at = t * d + i;
                    first.got = got;
                    first.want = ref;
                }
            }
        }
    }
    free(freq);
    if (bad && why && why_len > 0)
        snprintf(why, (size_t)why_len,
                 "%lld wrong; first: %s out[token %lld][%lld] = %.8g, "
                 "reference %.8g",
                 (long long)bad, sb_ops_name(s->op), (long long)(first.at / d),
                 (long long)(first.at % d), first.got, first.want);
    return bad;
}
