/*
 * predict_net.c — the workload model's collectives: a collective's bytes on
 * the fabric its group spans (scale-up, scale-out, or two levels), the
 * torus spans and bisection of a mesh, and the phase's time (predict.c
 * builds the phases; docs/METRICS.md, "model").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/predict_int.h"

/* ---- collectives --------------------------------------------------------- */

/* The share of S each chip sends: the bus-bandwidth factor the
 * collectives report with (netmodel.h); nothing moves in a group of one. */
static double sb__factor(const char *coll, int g)
{
    int op = sb_netop_from_name(coll);
    return g <= 1 || op < 0 ? 0.0 : sb_net_busbw_factor((sb_netop)op, g);
}

/* How a group lies on the torus mesh (topology.mesh, the last axis
 * innermost; its chips `stride` apart in the mesh's linear order): the
 * axes it spans, the mesh's axes (of more than one chip), and the most
 * chips it covers along one axis. */
typedef struct sb__span {
    int spanned, total;
    double kmax;
} sb__span;

static sb__span sb__torus_span(const sb_mdl_ctx *x, int group, int stride)
{
    sb__span sp = {0, 0, 0};
    double lo = stride, hi = (double)stride * group, cum = 1;
    for (int i = x->ndims - 1; i >= 0; i--) {
        double d = x->dims[i];
        if (d > 1) {
            sp.total++;
            if (hi > cum && lo < cum * d) {
                sp.spanned++;
                sp.kmax = fmax(sp.kmax, fmin(hi, cum * d) / fmax(lo, cum));
            }
        }
        cum *= d;
    }
    return sp;
}

/* The share of a chip's scale-up links a group uses: the axes it spans
 * over the mesh's (a ring runs over the links of the axes it spans; a 1-D
 * group on a 3-D torus has 2 of its 6); 1 with no mesh. */
static double sb__torus_share(const sb_mdl_ctx *x, const sb__span *sp)
{
    return x->ndims >= 2 && sp->total > 0 && sp->spanned > 0
               ? (double)sp->spanned / sp->total
               : 1.0;
}

/* The time an all-to-all of S_total bytes a chip takes to cross the
 * bisection of the torus its group spans: half the group sends to the
 * other half, g S / 4 each way, over the links that cut the longest axis
 * it spans (each of its g / k_max rings cut in 2 places: 2 g / k_max
 * links each way), each link the chip's scale-up bandwidth `up` over its
 * 2 links an axis; 0 for a ring of 2 or no mesh. */
static double sb__torus_bisection(const sb__span *sp, int group, double S_total,
                                  double up)
{
    if (!(sp->kmax > 2) || sp->total < 1)
        return 0;
    double link = up / (2.0 * sp->total);
    double g = group;
    return (g * S_total / 4.0) / (2.0 * g / sp->kmax * link);
}

/* A group that spans several scale-up domains with several of its chips
 * inside each (n_in of them a domain, the largest divisor of the group
 * the domain holds at this stride): the two levels of NCCL's hierarchical
 * algorithms, inside over the scale-up links the part spans and across
 * over each chip's share of the scale-out (sb_net_two_level has the
 * shares of S). Returns false, filling nothing, where there are no two
 * levels: one chip a domain, or an operation without them. */
static bool sb__net_two_level(const sb_mdl_ctx *x, sb_phase *ph,
                              const char *coll, int group, int stride,
                              double S_total, double calls, double domain,
                              double up, double out)
{
    int op = sb_netop_from_name(coll);
    if (op < 0 || !(out > 0) || !(domain > stride))
        return false;
    int n_in = (int)fmin(group, floor(domain / stride));
    while (n_in > 1 && group % n_in != 0)
        n_in--;
    if (n_in < 2)
        return false;
    sb__span sp = sb__torus_span(x, n_in, stride);
    double up_b = up * sb__torus_share(x, &sp), fi, fo;
    double spb =
        sb_net_two_level((sb_netop)op, group, n_in, up_b, out, &fi, &fo);
    if (!(spb > 0))
        return false;
    ph->t_network = S_total * spb / x->eff_net;
    snprintf(ph->ceiling, sizeof ph->ceiling, "%s (%dx%d, 2-level)",
             fo / out >= fi / up_b ? "net.scaleout" : "net.scaleup", n_in,
             group / n_in);
    ph->t_latency = calls * (x->up_alpha_s + x->out_alpha_s);
    return true;
}

/* Fills the network terms of a phase. `stride` is the product of the mesh
 * axes inside this one (the group's chips are `stride` apart). */
void sb_mdl_net(const sb_mdl_ctx *x, sb_phase *ph, const char *coll, int group,
                int stride, double S_total, double calls)
{
    snprintf(ph->collective, sizeof ph->collective, "%s", coll);
    ph->group = group;
    ph->n_coll = (int)(calls + 0.5);
    ph->comm_bytes = S_total;
    if (group <= 1 || S_total <= 0)
        return;
    char nm[40];
    double beta = 0, alpha = 0;
    if (x->net_fits) { /* the names looked up only where there are fits */
        snprintf(nm, sizeof nm, "net.%s.beta_Bps", coll);
        beta = sb_ceil_get(x->c, nm);
        snprintf(nm, sizeof nm, "net.%s.alpha_s", coll);
        alpha = sb_ceil_get(x->c, nm);
    }
    if (beta > 0) {
        /* Measured fit: t = alpha + S / beta for S as nccl-tests defines. */
        ph->t_network = S_total / beta;
        ph->t_latency = calls * alpha;
        snprintf(ph->ceiling, sizeof ph->ceiling, "net.%s (measured)", coll);
        return;
    }
    double domain = x->up_domain, up = x->up_Bps, out = x->out_Bps;
    bool inside = up > 0 && (double)group * stride <= (domain > 0 ? domain : 1);
    if (!inside && !(out > 0))
        inside = up > 0;
    if (!inside && up > 0 &&
        sb__net_two_level(x, ph, coll, group, stride, S_total, calls, domain,
                          up, out))
        return;
    double b = inside ? up : out;
    double a = inside ? x->up_alpha_s : x->out_alpha_s;
    snprintf(ph->ceiling, sizeof ph->ceiling, "%s",
             inside ? "net.scaleup" : "net.scaleout");
    sb__span sp =
        inside ? sb__torus_span(x, group, stride) : (sb__span){0, 0, 0};
    double share = sb__torus_share(x, &sp);
    double t_bisect = strcmp(coll, "alltoall") == 0
                          ? sb__torus_bisection(&sp, group, S_total, up)
                          : 0;
    if (share < 1.0) {
        b *= share;
        snprintf(ph->ceiling, sizeof ph->ceiling, "net.scaleup (%d/%d axes)",
                 sp.spanned, sp.total);
    }
    if (!(b > 0)) {
        /* No network in the machine model: a single host; say so. */
        snprintf(ph->ceiling, sizeof ph->ceiling, "net (unknown)");
        b = 1e30;
    }
    ph->t_network = S_total * sb__factor(coll, group) / (b * x->eff_net);
    if (t_bisect / x->eff_net > ph->t_network) {
        ph->t_network = t_bisect / x->eff_net;
        snprintf(ph->ceiling, sizeof ph->ceiling, "net.scaleup (bisection)");
    }
    ph->t_latency = calls * a;
}
