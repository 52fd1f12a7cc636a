/*
 * rooftable.c — every measured kernel of a run placed on the hierarchical
 * roofline: which memory level its working set lives in, its arithmetic
 * intensity, achieved and attainable performance, % of speed-of-light, the
 * ceiling that binds it and its class. Collectives are placed on the
 * alpha-beta model (latency-bound below S = alpha x beta, network-bound
 * above); host transfers against the host link.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/bench.h"
#include "solbench/hw.h"
#include "solbench/output.h"
#include "solbench/predict.h"
#include "solbench/report.h"

void sb_cache_sizes_from_run(const sb_run *run, sb_cache_sizes *cs)
{
    memset(cs, 0, sizeof *cs);
    json_t *caches =
        run && run->system ? json_object_get(run->system, "caches") : NULL;
    static const char *names[3] = {"L1d", "L2", "L3"};
    for (int l = 0; l < 3; l++) {
        json_t *c = json_object_get(caches, names[l]);
        double b = json_number_value(json_object_get(c, "bytes"));
        double inst = json_number_value(json_object_get(c, "instances"));
        cs->bytes[l] = b * (inst >= 1 ? inst : 1);
    }
}

static double sb__m(const sb_result *r, const char *name)
{
    const sb_metric *m = sb_result_get(r, name);
    return m ? m->value : 0;
}

/* Memory levels present in the ceilings, fastest first. */
static int sb__levels(const sb_ceilings *c, const char **names, double *bw)
{
    static const char *order[] = {"bw.L1", "bw.L2", "bw.L3", "bw.HBM",
                                  "bw.DRAM"};
    int n = 0;
    for (int i = 0; i < 5; i++) {
        double v = sb_ceil_get(c, order[i]);
        if (v > 0) {
            names[n] = order[i];
            bw[n++] = v;
        }
    }
    if (n == 0) {
        const char *nm;
        double v = sb_ceil_main_bw(c, &nm);
        if (v > 0) {
            names[0] = nm;
            bw[0] = v;
            n = 1;
        }
    }
    return n;
}

/* Compulsory bytes of one GEMM of compute.gemm's parameters (square:
 * M = N = K = n unless m or k is set; llm: M = tokens, K = d_model,
 * N = 4 d_model); bf16 reads 2-byte inputs and writes fp32, other
 * dtypes read and write their own size. */
static double sb__gemm_bytes(const sb_result *r)
{
    if (strcmp(r->bench, "compute.gemm") != 0)
        return 0;
    const sb_pval *shape = sb_p_find(&r->params, "shape");
    const sb_pval *dt = sb_p_find(&r->params, "dtype");
    const sb_pval *v;
    double M, N, K;
    if (shape && strcmp(shape->text, "llm") == 0) {
        M = sb_pval_num(sb_p_find(&r->params, "tokens"));
        K = sb_pval_num(sb_p_find(&r->params, "d_model"));
        N = 4 * K;
    } else {
        double n = sb_pval_num(sb_p_find(&r->params, "n"));
        M = (v = sb_p_find(&r->params, "m")) && sb_pval_num(v) > 0
                ? sb_pval_num(v)
                : n;
        K = (v = sb_p_find(&r->params, "k")) && sb_pval_num(v) > 0
                ? sb_pval_num(v)
                : n;
        N = n;
    }
    /* Element sizes from the dtype (fp64 when none or unknown); the CPU
     * bf16 kernel writes fp32. */
    double in = dt ? sb_dtype_bytes(dt->text) : 0;
    if (!(in > 0))
        in = 8;
    double out = dt && strcmp(dt->text, "bf16") == 0 ? 4 : in;
    return (M * K + K * N) * in + M * N * out;
}

/* A network point: its bus bandwidth at its message size (what one
 * timed sample moves, S: a window of messages for bw and bibw) against
 * the link — t = alpha + S f / beta, alpha and beta the link's
 * (net.link.*: ping-pong's latency, the fastest point-to-point stream;
 * a datasheet's net.scaleup.*), f the collective's bus factor, bibw
 * against both directions. With no link in the model, against the
 * collective's own alpha-beta fit. */
static int sb__network(const sb_result *r, const sb_ceilings *c, sb_roof_row *o)
{
    const char *coll =
        strchr(r->bench, '.') ? strchr(r->bench, '.') + 1 : r->bench;
    const sb_pval *sz = sb_p_find(&r->params, "size");
    if (!(sb_pval_num(sz) > 0))
        return 1; /* a fit, not a point */
    double t = r->stats.p50;
    if (!(t > 0))
        t = sb__m(r, "latency_us") * 1e-6;
    double S = sb__m(r, "bytes");
    if (!(S > 0))
        S = sb_pval_num(sz);
    if (!(t > 0))
        return 1;
    double f = sb__m(r, "busbw_factor");
    if (!(f > 0))
        f = 1;
    double beta = sb_ceil_get(c, "net.link.beta_Bps");
    double alpha = sb_ceil_get(c, "net.link.alpha_s");
    const char *src = "link";
    if (!(beta > 0)) {
        beta = sb_ceil_get(c, "net.scaleup.beta_Bps");
        alpha = sb_ceil_get(c, "net.scaleup.alpha_s");
        src = "scaleup";
    }
    if (strcmp(coll, "bibw") == 0)
        beta *= 2; /* both directions at once */
    if (!(beta > 0)) {
        char nm[48];
        snprintf(nm, sizeof nm, "net.%s.alpha_s", coll);
        alpha = sb_ceil_get(c, nm);
        snprintf(nm, sizeof nm, "net.%s.beta_Bps", coll);
        beta = sb_ceil_get(c, nm);
        f = 1;
        src = coll;
    }
    if (!(beta > 0) && !(alpha > 0))
        return SB_EINVAL;
    double t_bw = beta > 0 ? S * f / beta : 0;
    double t_model = (alpha > 0 ? alpha : 0) + t_bw;
    o->bytes_s = S * f / t;
    o->achieved = S * f / t;
    o->attainable = S * f / t_model;
    o->pct_sol = 100.0 * t_model / t;
    snprintf(o->unit, sizeof o->unit, "B/s");
    if (alpha > t_bw) {
        o->bound = SB_BOUND_LATENCY;
        snprintf(o->ceiling, sizeof o->ceiling, "net.%s.alpha", src);
    } else {
        o->bound = SB_BOUND_NETWORK;
        snprintf(o->ceiling, sizeof o->ceiling, "net.%s.beta", src);
    }
    return 0;
}

/* The precision of a result's arithmetic, whose peak is its compute roof:
 * as the runner places it (bench.h's sb_roof_kind) — fp32 for a
 * benchmark that computes in fp32 whatever it stores (ops, paged decode,
 * MoE), else the point's dtype; fp32 when it has none (never the fp64
 * fallback: no kernel of the suite computes in fp64 without saying so). */
static const char *roof_dtype(const sb_result *r)
{
    const sb_bench *b = sb_bench_find(r->bench, r->backend);
    const sb_pval *dt = sb_p_find(&r->params, "dtype");
    if (b && b->roof == SB_ROOF_FP32)
        return "fp32";
    return dt && dt->text[0] ? dt->text : "fp32";
}

int sb_roof_classify(const sb_result *r, const sb_ceilings *c,
                     const sb_cache_sizes *cs, sb_roof_row *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->bench, sizeof o->bench, "%s", r->bench);
    sb_params_fmt(&r->params, o->params, sizeof o->params);
    o->valid = r->valid;
    if (r->skipped || strcmp(r->bench, "memory.sweep") == 0)
        return 1;
    const sb_pval *sz = sb_p_find(&r->params, "size");
    if (sz && strcmp(sz->text, "fit") == 0)
        return 1;
    if (strcmp(r->area, "network") == 0)
        return sb__network(r, c, o);

    snprintf(o->dtype, sizeof o->dtype, "%s", roof_dtype(r));
    double t = sb__m(r, "latency_us") * 1e-6;
    if (!(t > 0))
        t = r->stats.p50;
    o->flops_s = sb__m(r, "GFLOPs") * 1e9;
    if (!(o->flops_s > 0))
        o->flops_s = sb__m(r, "TFLOPs") * 1e12;
    o->bytes_s = sb__m(r, "GBps") * 1e9;
    if (!(o->flops_s > 0) && !(o->bytes_s > 0))
        return 1;
    /* Rates place a kernel; its time only tells the working set. */
    bool timed = t > 0;
    if (!timed)
        t = 1.0;
    if (o->flops_s > 0 && !(o->bytes_s > 0)) {
        /* A kernel that reports FLOPs but not bytes: its own AI metric, or
         * for GEMM the compulsory traffic (A and B read, C written). */
        double ai = sb__m(r, "AI");
        double gb = sb__gemm_bytes(r);
        if (ai > 0)
            o->bytes_s = o->flops_s / ai;
        else if (gb > 0 && timed)
            o->bytes_s = gb / t;
    }

    if (strcmp(r->area, "transfer") == 0) {
        double h = sb_ceil_get(c, "host.h2d");
        if (!(h > 0))
            return SB_EINVAL;
        o->achieved = o->bytes_s;
        o->attainable = h;
        o->pct_sol = 100.0 * o->achieved / h;
        o->bound = SB_BOUND_HOST;
        snprintf(o->unit, sizeof o->unit, "B/s");
        snprintf(o->ceiling, sizeof o->ceiling, "host.h2d");
        return 0;
    }

    const char *pk_name = "none";
    double peak = sb_ceil_peak(c, o->dtype, &pk_name);
    if (!(o->bytes_s > 0)) {
        /* Pure compute (FMA chains): the only roof is the peak. */
        if (!(peak > 0))
            return SB_EINVAL;
        o->achieved = o->flops_s;
        o->attainable = peak;
        o->pct_sol = 100.0 * o->achieved / peak;
        o->bound = SB_BOUND_COMPUTE;
        snprintf(o->unit, sizeof o->unit, "FLOP/s");
        snprintf(o->ceiling, sizeof o->ceiling, "%s", pk_name);
        return 0;
    }

    /* Which memory level feeds it: the smallest cache its working set
     * (bytes of one iteration) fits in, else main memory; and never a level
     * slower than what it achieved (then the data came from closer). */
    const char *lv[5];
    double bw[5];
    int nl = sb__levels(c, lv, bw);
    if (nl == 0)
        return SB_EINVAL;
    double ws = o->bytes_s * t;
    int li = nl - 1;
    bool known = timed && cs &&
                 (cs->bytes[0] > 0 || cs->bytes[1] > 0 || cs->bytes[2] > 0);
    if (known) {
        for (int i = 0; i < nl; i++) {
            int cl = strcmp(lv[i], "bw.L1") == 0   ? 0
                     : strcmp(lv[i], "bw.L2") == 0 ? 1
                     : strcmp(lv[i], "bw.L3") == 0 ? 2
                                                   : -1;
            if (cl >= 0 && cs->bytes[cl] > 0 && ws <= cs->bytes[cl]) {
                li = i;
                break;
            }
        }
    }
    while (li > 0 && o->bytes_s > 1.1 * bw[li])
        li--;

    double flops_it = o->flops_s * t, bytes_it = o->bytes_s * t;
    sb_roof_point rp;
    if (sb_roofline_place(flops_it, bytes_it, t, peak, bw[li], &rp) != 0)
        return SB_EINVAL;
    o->ai = rp.ai;
    o->achieved = rp.achieved;
    o->attainable = rp.attainable;
    o->pct_sol = rp.pct_sol;
    o->bound = rp.bound;
    o->on_chart = o->flops_s > 0;
    snprintf(o->unit, sizeof o->unit, o->flops_s > 0 ? "FLOP/s" : "B/s");
    snprintf(o->ceiling, sizeof o->ceiling, "%s",
             rp.bound == SB_BOUND_COMPUTE ? pk_name : lv[li]);
    return 0;
}

/* What a result needs of the machine model, for the line that names
 * what could not be placed. */
static void why_unplaced(const sb_result *r, sb_roof_row *o)
{
    if (strcmp(r->area, "network") == 0)
        snprintf(o->why, sizeof o->why,
                 "no alpha-beta fit of its collective in the machine model "
                 "(a size sweep)");
    else if (strcmp(r->area, "transfer") == 0 &&
             strcmp(r->backend, "host") == 0)
        snprintf(o->why, sizeof o->why,
                 "host backend: copies between host buffers, no link");
    else if (strcmp(r->area, "transfer") == 0)
        snprintf(o->why, sizeof o->why,
                 "no host.h2d ceiling in the machine model");
    else
        snprintf(o->why, sizeof o->why,
                 "no peak.%s or memory ceiling in the machine model",
                 o->dtype[0] ? o->dtype : "fp32");
}

int sb_roof_points(const sb_roof_row *rows, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += rows[i].placed && rows[i].on_chart && rows[i].ai > 0 &&
             rows[i].achieved > 0;
    return k;
}

int sb_roof_table(const sb_run *run, const sb_ceilings *c, sb_roof_row **rows,
                  int *n)
{
    sb_cache_sizes cs;
    sb_cache_sizes_from_run(run, &cs);
    *n = 0;
    *rows = calloc(run->results.n ? run->results.n : 1, sizeof **rows);
    if (!*rows)
        return SB_ENOMEM;
    int num = 0;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        sb_roof_row *o = &(*rows)[*n];
        int rc = sb_roof_classify(r, c, &cs, o);
        if (rc == 1)
            continue;
        sb_result_params_shown(&run->results, r, o->params, sizeof o->params);
        o->placed = rc == 0;
        if (rc < 0) {
            o->bound = SB_BOUND_UNKNOWN;
            o->on_chart = false;
            snprintf(o->ceiling, sizeof o->ceiling, "(no ceiling)");
            why_unplaced(r, o);
        }
        if (o->placed && o->on_chart && o->ai > 0 && o->achieved > 0)
            o->num = ++num;
        (*n)++;
    }
    return 0;
}

int sb_roof_print(FILE *f, const sb_roof_row *rows, int n, const sb_ceilings *c)
{
    char a[32], b[32];
    fprintf(f, "machine ceilings:\n");
    for (int i = 0; i < c->n; i++) {
        const sb_ceiling *x = &c->c[i];
        const char *u = sb_ceil_unit(x->name);
        fprintf(f, "  %-28s %14s  %s\n", x->name,
                sb_fmt_si(x->value, u, 3, a, sizeof a), x->source);
    }
    const char *bwn;
    double main_bw = sb_ceil_main_bw(c, &bwn);
    for (int i = 0; i < c->n; i++)
        if (strncmp(c->c[i].name, "peak.", 5) == 0 && main_bw > 0 &&
            !strstr(c->c[i].name, "theoretical"))
            fprintf(f, "  ridge %-22s %10.3g FLOP/B against %s\n",
                    c->c[i].name + 5, c->c[i].value / main_bw, bwn);
    /* column widths from the rows, so no value is cut */
    int wk = 6, wp = 6, placed = 0, above = 0;
    for (int i = 0; i < n; i++) {
        if (!rows[i].placed)
            continue;
        placed++;
        int lk = (int)strlen(rows[i].bench), lp = (int)strlen(rows[i].params);
        wk = lk > wk ? lk : wk;
        wp = lp > wp ? lp : wp;
    }
    if (placed) {
        fprintf(f, "\n%3s %-*s %-*s %9s %14s %14s %7s  %-18s %s\n", "#", wk,
                "kernel", wp, "params", "AI", "achieved", "attainable", "%SOL",
                "binding ceiling", "class");
        for (int i = 0; i < n; i++) {
            const sb_roof_row *r = &rows[i];
            if (!r->placed)
                continue;
            char ai[16], num[8];
            if (r->ai > 0)
                snprintf(ai, sizeof ai, "%.3g", r->ai);
            else
                snprintf(ai, sizeof ai, "-");
            if (r->num > 0)
                snprintf(num, sizeof num, "%d", r->num);
            else
                snprintf(num, sizeof num, "-");
            fprintf(f, "%3s %-*s %-*s %9s %14s %14s %6.1f%%  %-18s %s%s%s\n",
                    num, wk, r->bench, wp, r->params[0] ? r->params : "-", ai,
                    sb_fmt_si(r->achieved, r->unit, 3, a, sizeof a),
                    sb_fmt_si(r->attainable, r->unit, 3, b, sizeof b),
                    r->pct_sol, r->ceiling, sb_bound_name(r->bound),
                    r->pct_sol > 100.5 ? "  (!)" : "",
                    r->valid ? "" : "  (INVALID result)");
            above += r->pct_sol > 100.5;
        }
        bool net = false;
        for (int i = 0; i < n && !net; i++)
            net = rows[i].placed && strncmp(rows[i].ceiling, "net.", 4) == 0;
        if (net)
            fprintf(f, "network rows: bus bandwidth at the message size "
                       "against the link, t = alpha + S x busbw factor / "
                       "beta (docs/METRICS.md)\n");
        if (above)
            fprintf(f,
                    "(!) %d result%s above its own roof: the ceiling and the "
                    "kernel were measured in different stretches of the "
                    "machine (one of the two is not its figure: measure them "
                    "together, --interleave), or the kernel's data came from "
                    "closer than its working set says\n",
                    above, above == 1 ? "" : "s");
    }
    /* What could not be placed: one line a benchmark, with its reason. */
    for (int i = 0; i < n; i++) {
        if (rows[i].placed)
            continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = !rows[j].placed && strcmp(rows[j].bench, rows[i].bench) == 0;
        if (seen)
            continue;
        int count = 0;
        for (int j = i; j < n; j++)
            count +=
                !rows[j].placed && strcmp(rows[j].bench, rows[i].bench) == 0;
        fprintf(f, "not placed: %s (%d result%s): %s\n", rows[i].bench, count,
                count == 1 ? "" : "s", rows[i].why);
    }
    if (n == 0)
        fprintf(f, "(no kernel results to place)\n");
    return placed;
}
