/*
 * roofline.c — placing one measured kernel under a compute roof and a
 * bandwidth roof: attainable = min(peak, AI x BW), ridge = peak / BW,
 * %SOL = achieved / attainable. Every area that reports a roofline
 * position calls this one function.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "solbench/roofline.h"

const char *sb_bound_name(sb_bound b)
{
    switch (b) {
    case SB_BOUND_COMPUTE: return "compute";
    case SB_BOUND_MEMORY: return "memory";
    case SB_BOUND_NETWORK: return "network";
    case SB_BOUND_HOST: return "host";
    case SB_BOUND_LATENCY: return "latency";
    default: return "unknown";
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
    const char *bw_name = "bw.DRAM";
    double bw = sb_ceil_get(&ctx->ceil, bw_name);
    if (bw <= 0) {
        bw_name = "bw.read";
        bw = sb_ceil_get(&ctx->ceil, bw_name);
    }
    if (bw <= 0) {
        bw_name = "bw.triad";
        bw = sb_ceil_get(&ctx->ceil, bw_name);
    }
    sb_roof_point rp;
    if (r->stats.p50 <= 0 ||
        sb_roofline_place(flops, bytes, r->stats.p50, peak, bw, &rp) != 0)
        return;
    sb_result_metric(r, "attainable", flops > 0 ? rp.attainable * 1e-9
                                                : rp.attainable * 1e-9,
                     flops > 0 ? "GFLOP/s" : "GB/s");
    sb_result_metric(r, "pct_SOL", rp.pct_sol, "%");
    sb_result_note(r, "roofline: %s-bound against %s%s%s (%.1f%% of the "
                   "attainable %.1f %s)", sb_bound_name(rp.bound), bw_name,
                   flops > 0 ? " and " : "", flops > 0 ? key : "", rp.pct_sol,
                   rp.attainable * 1e-9, flops > 0 ? "GFLOP/s" : "GB/s");
}
