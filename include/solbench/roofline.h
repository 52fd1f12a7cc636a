/*
 * roofline.h — the one function that places a measured kernel on a
 * roofline: attainable = min(peak, AI x BW); AI = FLOPs / bytes;
 * ridge = peak / BW; %SOL = achieved / attainable.
 */
#ifndef SOLBENCH_ROOFLINE_H
#define SOLBENCH_ROOFLINE_H

#include "solbench/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sb_bound {
    SB_BOUND_UNKNOWN = 0,
    SB_BOUND_COMPUTE,
    SB_BOUND_MEMORY,
    SB_BOUND_NETWORK,
    SB_BOUND_HOST,
    SB_BOUND_LATENCY,
    /* a unit beside the matrix unit: the vector unit (elementwise work,
     * softmax) or the transcendental unit (exp) */
    SB_BOUND_VECTOR,
    SB_BOUND_N
} sb_bound;

typedef struct sb_roof_point {
    double ai;         /* FLOP per byte */
    double achieved;   /* FLOP/s (or B/s when flops == 0) */
    double attainable; /* FLOP/s (or B/s) */
    double ridge;      /* FLOP per byte */
    double pct_sol;    /* 100 * achieved / attainable */
    sb_bound bound;    /* which roof binds at this AI */
} sb_roof_point;

/* compute, memory, network, host, latency; "-" when unknown. */
const char *sb_bound_name(sb_bound b);

/* Places a kernel that did `flops` and moved `bytes` in `seconds` under a
 * compute peak (FLOP/s) and a bandwidth (B/s). With flops == 0 the kernel
 * is a pure data mover: achieved and attainable are in B/s. Returns 0, or
 * SB_EINVAL when the inputs cannot place it (no time, no ceilings). */
int sb_roofline_place(double flops, double bytes, double seconds,
                      double peak_flops, double bw_Bps, sb_roof_point *out);

/* Adds AI, attainable and %SOL metrics to a result, using the run's
 * ceilings ("peak.<dtype>", and "bw.DRAM" else "bw.triad"). The runner
 * calls it for every bench with a `roof` (bench.h). */
void sb_roofline_annotate(sb_result *r, const sb_ctx *ctx, const char *dtype,
                          double flops, double bytes);

#ifdef __cplusplus
}
#endif

#endif
