/*
 * netmodel.c — the network area's definitions (see netmodel.h and the
 * network section of docs/METRICS.md): the table of the operations (one
 * row an op: name, bytes S, bus-bandwidth factor, two-level shares, chunking),
 * iteration counts, the alpha-beta fit. Pure arithmetic, no MPI, so every
 * build has them: the MPI and NCCL collectives report with them and the
 * workload model predicts with the same factors.
 *
 * Adding a collective: its id before SB_NET_NOPS (netmodel.h) and its row
 * below; for MPI its call, fill and check and their row in mpi_ops.c, its
 * impl row in collectives.c, and its NET_BENCH (network.c) and SB_BENCH
 * (network.def) lines; for NCCL its call, expected value and row in
 * cuda_nccl.cu, and its impl in cuda_benches.c and backend_cuda.c.
 */
#include <math.h>
#include <string.h>

#include "solbench/netmodel.h"
#include "solbench/result.h"

/* ---- the rules the rows use ---------------------------------------------- */

/* S: the op's buffer; one message; a window of messages one way; both. */
static double S_buffer(size_t count, size_t elem, int window)
{
    (void)window;
    return (double)count * (double)elem;
}
static double S_message(size_t count, size_t elem, int window)
{
    (void)elem, (void)window;
    return (double)count;
}
static double S_window(size_t count, size_t elem, int window)
{
    (void)elem;
    return (double)count * (window > 0 ? window : 1);
}
static double S_both_windows(size_t count, size_t elem, int window)
{
    (void)elem;
    return 2.0 * (double)count * (window > 0 ? window : 1);
}

/* Bus-bandwidth factors (nccl-tests). */
static double bus_allreduce(double n)
{
    return 2.0 * (n - 1.0) / n;
}
static double bus_ring(double n)
{
    return (n - 1.0) / n;
}
static double bus_one(double n)
{
    (void)n;
    return 1.0;
}

/* Two levels (sb_net_two_level): all-reduce is a reduce-scatter and an
 * all-gather at each level; all-to-all sends what is bound elsewhere. */
static void two_allreduce(double g, double in, double across, double *fi,
                          double *fo)
{
    (void)g;
    *fi = 2.0 * (in - 1) / in;
    *fo = 2.0 * (across - 1) / across / in;
}
static void two_gather(double g, double in, double across, double *fi,
                       double *fo)
{
    (void)g;
    *fi = (in - 1) / in;
    *fo = (across - 1) / across / in;
}
static void two_alltoall(double g, double in, double across, double *fi,
                         double *fo)
{
    (void)across;
    *fi = (in - 1) / g;
    *fo = (g - in) / g;
}

/* ---- the table ----------------------------------------------------------- */

static const sb_netop_def netops[SB_NET_NOPS] = {
    [SB_NET_ALLREDUCE] = {.name = "allreduce",
                          .bytes = S_buffer,
                          .busbw = bus_allreduce,
                          .two_level = two_allreduce},
    [SB_NET_ALLGATHER] = {.name = "allgather",
                          .bytes = S_buffer,
                          .busbw = bus_ring,
                          .two_level = two_gather,
                          .chunked = true,
                          .in_chunk = true},
    [SB_NET_REDUCE_SCATTER] = {.name = "reduce_scatter",
                               .bytes = S_buffer,
                               .busbw = bus_ring,
                               .two_level = two_gather,
                               .chunked = true,
                               .out_chunk = true},
    [SB_NET_ALLTOALL] = {.name = "alltoall",
                         .bytes = S_buffer,
                         .busbw = bus_ring,
                         .two_level = two_alltoall,
                         .chunked = true},
    [SB_NET_BCAST] = {.name = "bcast", .bytes = S_buffer, .busbw = bus_one},
    [SB_NET_REDUCE] = {.name = "reduce", .bytes = S_buffer, .busbw = bus_one},
    [SB_NET_SENDRECV] = {.name = "sendrecv",
                         .bytes = S_buffer,
                         .busbw = bus_one},
    [SB_NET_PINGPONG] = {.name = "pingpong",
                         .bytes = S_message,
                         .busbw = bus_one,
                         .p2p = true},
    [SB_NET_BW] = {.name = "bw",
                   .bytes = S_window,
                   .busbw = bus_one,
                   .p2p = true,
                   .window = true},
    [SB_NET_BIBW] = {.name = "bibw",
                     .bytes = S_both_windows,
                     .busbw = bus_one,
                     .p2p = true,
                     .window = true},
};

const sb_netop_def *sb_netop_row(sb_netop op)
{
    return (op >= 0 && op < SB_NET_NOPS && netops[op].name) ? &netops[op]
                                                            : NULL;
}

const char *sb_netop_name(sb_netop op)
{
    const sb_netop_def *d = sb_netop_row(op);
    return d ? d->name : NULL;
}

int sb_netop_from_name(const char *name)
{
    for (int i = 0; name && i < SB_NET_NOPS; i++)
        if (netops[i].name && strcmp(netops[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- the formulas -------------------------------------------------------- */

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

double sb_net_busbw_factor(sb_netop op, int nranks)
{
    if (nranks < 1)
        return 0.0;
    const sb_netop_def *d = sb_netop_row(op);
    return d ? d->busbw((double)nranks) : 1.0;
}

double sb_net_two_level(sb_netop op, int n, int n_in, double up, double out,
                        double *f_in, double *f_out)
{
    double fi = 0, fo = 0;
    const sb_netop_def *d = sb_netop_row(op);
    if (d && d->two_level && n >= 1 && n_in >= 1 && n_in <= n && n % n_in == 0)
        d->two_level(n, n_in, (double)(n / n_in), &fi, &fo);
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

size_t sb_net_count(sb_netop op, double size, size_t elem, int nranks)
{
    const sb_netop_def *d = sb_netop_row(op);
    if ((d && d->p2p) || elem == 0)
        elem = 1;
    if (!(size > 0))
        size = 0;
    size_t count = (size_t)(size / (double)elem);
    if (count < 1)
        count = 1;
    if (d && d->chunked && nranks > 0) {
        size_t n = (size_t)nranks;
        count = count / n * n;
        if (count < n)
            count = n;
    }
    return count;
}

double sb_net_bytes(sb_netop op, size_t count, size_t elem, int window)
{
    const sb_netop_def *d = sb_netop_row(op);
    return (d ? d->bytes : S_buffer)(count, elem, window);
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

double sb_net_coll_time(sb_netop op, int n, int n_in, double S, double up,
                        double up_alpha_s, double out, double out_alpha_s)
{
    if (n <= 1 || !(S > 0))
        return 0;
    if (n_in >= n)
        return up > 0 ? S * sb_net_busbw_factor(op, n) / up + up_alpha_s : 0;
    if (n_in <= 1)
        return out > 0 ? S * sb_net_busbw_factor(op, n) / out + out_alpha_s : 0;
    double fi, fo;
    double spb = up > 0 && out > 0
                     ? sb_net_two_level(op, n, n_in, up, out, &fi, &fo)
                     : 0;
    return spb > 0 ? S * spb + up_alpha_s + out_alpha_s : 0;
}
