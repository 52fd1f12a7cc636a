/*
 * netmodel.h — the formulas of the network area, with no MPI in them so
 * they build and are tested everywhere: the bytes S of each operation as
 * nccl-tests defines them, algorithm and bus bandwidth, the deterministic
 * iteration counts (more iterations for small messages, as OSU does), and
 * the alpha-beta model t(S) = alpha + S / beta fitted by least squares.
 */
#ifndef SOLBENCH_NETMODEL_H
#define SOLBENCH_NETMODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sb_netop {
    SB_NET_ALLREDUCE = 0,
    SB_NET_ALLGATHER,
    SB_NET_REDUCE_SCATTER,
    SB_NET_ALLTOALL,
    SB_NET_BCAST,
    SB_NET_REDUCE,
    SB_NET_SENDRECV,
    SB_NET_PINGPONG,
    SB_NET_BW,
    SB_NET_BIBW,
    SB_NET_NOPS
} sb_netop;

/* One row an operation (sb_netop_row; the table is in src/def/netmodel.c):
 * what the op is for every backend and the model, with no call in it. The
 * backends key their own rows by the same sb_netop: the MPI call and its
 * verification in src/bench/network/mpi_ops.c, the NCCL call in
 * src/backend/cuda/cuda_nccl.cu. */
typedef struct sb_netop_def {
    const char *name; /* "allreduce": the benchmark network.<name> */
    /* S in bytes of one operation on `count` elements of `elem` bytes
     * (window: messages a point-to-point iteration sends one way) */
    double (*bytes)(size_t count, size_t elem, int window);
    /* bus-bandwidth factor over n >= 1 ranks */
    double (*busbw)(double n);
    /* the shares of S moved inside (*f_in) and across (*f_out) the
     * domains of n_in ranks, n = n_in x across; NULL: no two levels */
    void (*two_level)(double n, double n_in, double across, double *f_in,
                      double *f_out);
    bool chunked;   /* one equal chunk per rank: count a multiple of n */
    bool in_chunk;  /* each rank's input is its chunk (all-gather) */
    bool out_chunk; /* each rank's output is its chunk (reduce-scatter) */
    bool p2p;       /* ranks 0 and 1 alone; the count is in bytes */
    bool window;    /* a window of messages an iteration (bw, bibw) */
} sb_netop_def;

/* The row of an op; NULL for an unknown op. */
const sb_netop_def *sb_netop_row(sb_netop op);
/* "allreduce", "reduce_scatter", "pingpong", ... (the part after
 * "network."); NULL for an unknown op. */
const char *sb_netop_name(sb_netop op);
/* The op of a name, or -1. */
int sb_netop_from_name(const char *name);

/* Bus-bandwidth factor (nccl-tests): all-reduce 2(n-1)/n; all-gather,
 * reduce-scatter, all-to-all (n-1)/n; everything else 1. 0 for n < 1. */
double sb_net_busbw_factor(sb_netop op, int nranks);
/* The rates every backend's collective reports (the network section of
 * docs/METRICS.md): ranks, bytes (S), busbw_factor and, with samples,
 * algbw_GBps and busbw_GBps from the median and their _best pair from the
 * fastest sample. */
struct sb_result;
void sb_net_report_rates(struct sb_result *r, sb_netop op, int nranks,
                         double S);
/* A collective over n ranks that span several scale-up domains, n_in of
 * them in each (n_in divides n), run in two levels as NCCL's hierarchical
 * algorithms run it: inside each domain over the scale-up link `up`, and
 * across the domains between the ranks of the same local index over each
 * rank's share of the scale-out `out` (both B/s per rank and direction).
 * The share of S each rank moves at each level goes to *f_in and *f_out:
 * all-reduce 2(n_in-1)/n_in inside (reduce-scatter, then all-gather) and
 * 2(n_out-1)/n_out / n_in across (its shard of S); all-gather and
 * reduce-scatter half of those; all-to-all (n_in-1)/n inside and
 * (n-n_in)/n across (what is bound for other domains). n_in = 1 is the
 * flat collective across, n_in = n the one inside. The levels stream in
 * chunks, so the slower bounds: returns max(f_in/up, f_out/out), seconds
 * per byte of S; 0 for an op without two levels (send/recv, broadcast,
 * point to point) or bad counts. */
double sb_net_two_level(sb_netop op, int n, int n_in, double up, double out,
                        double *f_in, double *f_out);
/* The time of one collective as predict's model takes it
 * (src/model/predict_net.c, on a machine without a torus or measured
 * per-collective fits): over n ranks, n_in of them in each scale-up
 * domain; n_in >= n: inside, S busbw(n) / up + up_alpha; n_in <= 1:
 * flat across, S busbw(n) / out + out_alpha; else two levels,
 * S max(f_in / up, f_out / out) + up_alpha + out_alpha
 * (sb_net_two_level). Bandwidths per rank and direction, B/s. 0 where
 * a bandwidth the case needs is not > 0. */
double sb_net_coll_time(sb_netop op, int n, int n_in, double S, double up,
                        double up_alpha_s, double out, double out_alpha_s);
/* algbw = S / t in B/s; 0 when t <= 0. */
double sb_net_algbw(double bytes, double seconds);
/* busbw = algbw x factor, in B/s. */
double sb_net_busbw(sb_netop op, int nranks, double bytes, double seconds);

/* Elements in the op's buffer for a requested size in bytes: size / elem,
 * at least 1; for all-gather, reduce-scatter and all-to-all rounded down to
 * a multiple of nranks (at least nranks), since those split the buffer
 * into one equal chunk per rank. For pingpong, bw and bibw the "element"
 * is a byte. */
size_t sb_net_count(sb_netop op, double size, size_t elem, int nranks);
/* S in bytes, as nccl-tests counts it: count x elem for collectives (the
 * all-gather output, the reduce-scatter input, the whole all-to-all
 * buffer); for bw the window's bytes (size x window), for bibw both
 * directions (2 x size x window). */
double sb_net_bytes(sb_netop op, size_t count, size_t elem, int window);

/* Iterations for a message of `bytes` when the user gives none: 256 MiB
 * of traffic per point, between 20 and 1000 iterations (OSU uses 1000 up
 * to 8 KiB and 100 above; bw 100 and 20), scaled by min_time / 0.2 s (the
 * quick suite's time per point) and never under 5. Warm-up: iters / 10,
 * at least 2. Every rank computes the same numbers from the same inputs. */
void sb_net_auto_iters(double bytes, double min_time, int *iters, int *warmup);

/* ---- alpha-beta model ---------------------------------------------------- */

typedef struct sb_ab_fit {
    double alpha_s;  /* latency term, seconds */
    double beta_Bps; /* bandwidth term, B/s; +inf when the slope is <= 0 */
    double rel_rms;  /* sqrt(mean(((fit - t) / t)^2)) over the points */
    int n;           /* points used */
} sb_ab_fit;

/* Fits t = alpha + S / beta to n points by least squares. With `relative`
 * the squared residuals are weighted by 1 / t^2 (so a 10 us point and a
 * 10 ms point count alike, which keeps alpha meaningful); without it,
 * ordinary least squares. Needs n >= 2 and at least two distinct S with
 * t > 0; else SB_EINVAL. */
int sb_net_fit_ab(const double *bytes, const double *seconds, int n,
                  bool relative, sb_ab_fit *fit, sb_err *err);
/* The model's time for S bytes. */
double sb_net_ab_predict(const sb_ab_fit *fit, double bytes);

#ifdef __cplusplus
}
#endif

#endif
