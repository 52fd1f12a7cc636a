/*
 * roofline.c — placing one measured kernel under a compute roof and a
 * bandwidth roof: attainable = min(peak, AI x BW), ridge = peak / BW,
 * %SOL = achieved / attainable. The runner places every result of a
 * bench that declares a `roof` with it; the roofline command and the
 * workload model use the same arithmetic.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solbench/roofline.h"

const char *sb_bound_name(sb_bound b)
{
    switch (b) {
    case SB_BOUND_COMPUTE:
        return "compute";
    case SB_BOUND_MEMORY:
        return "memory";
    case SB_BOUND_NETWORK:
        return "network";
    case SB_BOUND_HOST:
        return "host";
    case SB_BOUND_LATENCY:
        return "latency";
    case SB_BOUND_VECTOR:
        return "vector";
    default:
        return "-";
    }
}

int sb_roofline_place(double flops, double bytes, double seconds,
                      double peak_flops, double bw_Bps, sb_roof_point *out)
{
    memset(out, 0, sizeof *out);
    if (!(seconds > 0) || !(bw_Bps > 0) || bytes <= 0)
        return SB_EINVAL;
    if (flops <= 0) {
        /* A pure data mover: its only roof is bandwidth. */
        out->achieved = bytes / seconds;
        out->attainable = bw_Bps;
        out->pct_sol = 100.0 * out->achieved / out->attainable;
        out->bound = SB_BOUND_MEMORY;
        return 0;
    }
    if (!(peak_flops > 0))
        return SB_EINVAL;
    out->ai = flops / bytes;
    out->ridge = peak_flops / bw_Bps;
    out->achieved = flops / seconds;
    double mem_roof = out->ai * bw_Bps;
    out->attainable = mem_roof < peak_flops ? mem_roof : peak_flops;
    out->bound = out->ai < out->ridge ? SB_BOUND_MEMORY : SB_BOUND_COMPUTE;
    out->pct_sol = 100.0 * out->achieved / out->attainable;
    return 0;
}

void sb_roofline_annotate(sb_result *r, const sb_ctx *ctx, const char *dtype,
                          double flops, double bytes)
{
    if (bytes > 0 && flops > 0)
        sb_result_metric(r, "AI", flops / bytes, "FLOP/B");
    char key[48];
    snprintf(key, sizeof key, "peak.%s", dtype ? dtype : "fp32");
    double peak = sb_ceil_get(&ctx->ceil, key);
    if (r->stats.p50 <= 0)
        return;

    /* The memory roofs from the slowest level up. A kernel that beats a
     * roof got its data from a faster level (its working set fits in a
     * cache): it is placed under the slowest roof it does not exceed. */
    static const char *levels[] = {"bw.DRAM", "bw.L3", "bw.L2", "bw.L1"};
    static const char *fallback[] = {"bw.read", "bw.triad"};
    const char *names[6];
    double bws[6];
    int n = 0;
    for (int i = 0; i < 4; i++) {
        double bw = sb_ceil_get(&ctx->ceil, levels[i]);
        if (bw > 0) {
            names[n] = levels[i];
            bws[n++] = bw;
        }
    }
    if (n == 0)
        for (int i = 0; i < 2 && n == 0; i++) {
            double bw = sb_ceil_get(&ctx->ceil, fallback[i]);
            if (bw > 0) {
                names[n] = fallback[i];
                bws[n++] = bw;
            }
        }
    sb_roof_point rp;
    int chosen = -1;
    for (int i = 0; i < n; i++) {
        if (sb_roofline_place(flops, bytes, r->stats.p50, peak, bws[i], &rp) !=
            0)
            return;
        chosen = i;
        if (rp.pct_sol <= 100.0 || rp.bound == SB_BOUND_COMPUTE)
            break;
    }
    if (chosen < 0)
        return;
    const char *unit = flops > 0 ? "GFLOP/s" : "GB/s";
    sb_result_metric(r, "attainable", rp.attainable * 1e-9, unit);
    sb_result_metric(r, "pct_SOL", rp.pct_sol, "%");
    sb_result_note(r,
                   "roofline: %s-bound under %s%s%s (%.1f%% of the "
                   "attainable %.1f %s)%s",
                   sb_bound_name(rp.bound), names[chosen],
                   flops > 0 ? " and " : "", flops > 0 ? key : "", rp.pct_sol,
                   rp.attainable * 1e-9, unit,
                   chosen > 0 ? "; faster than the slower memory roofs, so "
                                "its data came from a cache"
                              : "");
}
