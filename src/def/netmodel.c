/*
 * netmodel.c — the network area's definitions (see netmodel.h and the
 * network section of docs/METRICS.md): bytes of each operation, bus
 * bandwidth factors, iteration counts, the alpha-beta fit. Pure
 * arithmetic, no MPI, so every build has them: the MPI and NCCL
 * collectives report with them and the workload model predicts with the
 * same factors.
 */
#include <math.h>
#include <string.h>

#include "solbench/netmodel.h"
#include "solbench/result.h"

static const char *const netop_names[SB_NET_NOPS] = {
    "allreduce", "allgather", "reduce_scatter", "alltoall", "bcast",
    "reduce",    "sendrecv",  "pingpong",       "bw",       "bibw"};

const char *sb_netop_name(sb_netop op)
{
    return (op >= 0 && op < SB_NET_NOPS) ? netop_names[op] : NULL;
}

void sb_net_report_rates(sb_result *r, sb_netop op, int nranks, double S)
{
    const double f = sb_net_busbw_factor(op, nranks);
    const double med = r->stats.p50, best = r->stats.min;
    sb_result_metric(r, "ranks", nranks, "");
    sb_result_metric(r, "bytes", S, "B");
    sb_result_metric(r, "busbw_factor", f, "");
    if (!(med > 0))
        return;
    sb_result_metric(r, "algbw_GBps", sb_net_algbw(S, med) * 1e-9, "GB/s");
    sb_result_metric(r, "busbw_GBps", sb_net_algbw(S, med) * f * 1e-9, "GB/s");
    sb_result_metric(r, "algbw_GBps_best", sb_net_algbw(S, best) * 1e-9,
                     "GB/s");
    sb_result_metric(r, "busbw_GBps_best", sb_net_algbw(S, best) * f * 1e-9,
                     "GB/s");
}

int sb_netop_from_name(const char *name)
{
    for (int i = 0; name && i < SB_NET_NOPS; i++)
        if (strcmp(netop_names[i], name) == 0)
            return i;
    return -1;
}

double sb_net_busbw_factor(sb_netop op, int nranks)
{
    if (nranks < 1)
        return 0.0;
    double n = (double)nranks;
    switch (op) {
    case SB_NET_ALLREDUCE:
        return 2.0 * (n - 1.0) / n;
    case SB_NET_ALLGATHER:
    case SB_NET_REDUCE_SCATTER:
    case SB_NET_ALLTOALL:
        return (n - 1.0) / n;
    default:
        return 1.0;
    }
}

double sb_net_two_level(sb_netop op, int n, int n_in, double up, double out,
                        double *f_in, double *f_out)
{
    double fi = 0, fo = 0;
    if (n >= 1 && n_in >= 1 && n_in <= n && n % n_in == 0) {
        double g = n, in = n_in, across = (double)(n / n_in);
        switch (op) {
        case SB_NET_ALLREDUCE:
            fi = 2.0 * (in - 1) / in;
            fo = 2.0 * (across - 1) / across / in;
            break;
        case SB_NET_ALLGATHER:
        case SB_NET_REDUCE_SCATTER:
            fi = (in - 1) / in;
            fo = (across - 1) / across / in;
            break;
        case SB_NET_ALLTOALL:
            fi = (in - 1) / g;
            fo = (g - in) / g;
            break;
        default:
            break;
        }
    }
    if (f_in)
        *f_in = fi;
    if (f_out)
        *f_out = fo;
    if (!(fi > 0) && !(fo > 0))
        return 0.0;
    double ti = fi > 0 ? (up > 0 ? fi / up : INFINITY) : 0;
    double to = fo > 0 ? (out > 0 ? fo / out : INFINITY) : 0;
    return fmax(ti, to);
}

double sb_net_algbw(double bytes, double seconds)
{
    return seconds > 0 ? bytes / seconds : 0.0;
}

double sb_net_busbw(sb_netop op, int nranks, double bytes, double seconds)
{
    return sb_net_algbw(bytes, seconds) * sb_net_busbw_factor(op, nranks);
}

/* Ops that cut their buffer into one equal chunk per rank. */
static bool chunked(sb_netop op)
{
    return op == SB_NET_ALLGATHER || op == SB_NET_REDUCE_SCATTER ||
           op == SB_NET_ALLTOALL;
}

size_t sb_net_count(sb_netop op, double size, size_t elem, int nranks)
{
    if (op == SB_NET_PINGPONG || op == SB_NET_BW || op == SB_NET_BIBW)
        elem = 1;
    if (elem == 0)
        elem = 1;
    if (!(size > 0))
        size = 0;
    size_t count = (size_t)(size / (double)elem);
    if (count < 1)
        count = 1;
    if (chunked(op) && nranks > 0) {
        size_t n = (size_t)nranks;
        count = count / n * n;
        if (count < n)
            count = n;
    }
    return count;
}

double sb_net_bytes(sb_netop op, size_t count, size_t elem, int window)
{
    if (op == SB_NET_PINGPONG)
        return (double)count;
    if (op == SB_NET_BW)
        return (double)count * (window > 0 ? window : 1);
    if (op == SB_NET_BIBW)
        return 2.0 * (double)count * (window > 0 ? window : 1);
    return (double)count * (double)elem;
}

void sb_net_auto_iters(double bytes, double min_time, int *iters, int *warmup)
{
    double base = bytes > 0 ? 268435456.0 / bytes : 1000.0;
    if (base > 1000.0)
        base = 1000.0;
    if (base < 20.0)
        base = 20.0;
    double k = min_time > 0 ? min_time / 0.2 : 1.0;
    if (k < 0.05)
        k = 0.05;
    if (k > 20.0)
        k = 20.0;
    double it = floor(base * k + 0.5);
    if (it < 5.0)
        it = 5.0;
    *iters = (int)it;
    int w = *iters / 10;
    *warmup = w < 2 ? 2 : w;
}

/* ---- alpha-beta model ---------------------------------------------------- */

int sb_net_fit_ab(const double *bytes, const double *seconds, int n,
                  bool relative, sb_ab_fit *fit, sb_err *err)
{
    memset(fit, 0, sizeof *fit);
    if (n < 2)
        return sb_fail(err, SB_EINVAL,
                       "alpha-beta fit: needs 2 or more "
                       "sizes, got %d",
                       n);
    /* Weighted means first, then centred sums: S spans 1 B .. 1 GiB, and
     * the raw normal equations would lose most digits to cancellation. */
    double W = 0, mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        if (!(seconds[i] > 0) || !(bytes[i] >= 0))
            return sb_fail(err, SB_EINVAL,
                           "alpha-beta fit: point %d has "
                           "t=%g s, S=%g B",
                           i, seconds[i], bytes[i]);
        double w = relative ? 1.0 / (seconds[i] * seconds[i]) : 1.0;
        W += w;
        mx += w * bytes[i];
        my += w * seconds[i];
    }
    mx /= W;
    my /= W;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double w = relative ? 1.0 / (seconds[i] * seconds[i]) : 1.0;
        double dx = bytes[i] - mx;
        sxx += w * dx * dx;
        sxy += w * dx * (seconds[i] - my);
    }
    if (!(sxx > 0))
        return sb_fail(err, SB_EINVAL,
                       "alpha-beta fit: needs 2 or more "
                       "distinct sizes");
    double slope = sxy / sxx;
    fit->alpha_s = my - slope * mx;
    fit->beta_Bps = slope > 0 ? 1.0 / slope : INFINITY;
    fit->n = n;
    double ss = 0;
    for (int i = 0; i < n; i++) {
        double pred = fit->alpha_s + slope * bytes[i];
        double rel = (pred - seconds[i]) / seconds[i];
        ss += rel * rel;
    }
    fit->rel_rms = sqrt(ss / n);
    return 0;
}

double sb_net_ab_predict(const sb_ab_fit *fit, double bytes)
{
    double t = fit->alpha_s;
    if (isfinite(fit->beta_Bps) && fit->beta_Bps > 0)
        t += bytes / fit->beta_Bps;
    return t;
}
