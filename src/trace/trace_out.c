/*
 * trace_out.c — a trace's analysis as a table, JSON and CSV, and the
 * difference between two traces of one workload.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/fileio.h"
#include "solbench/output.h"
#include "solbench/predict.h"
#include "solbench/trace.h"
#include "solbench/util.h"

static void cut(char *out, size_t w, const char *in)
{
    size_t n = strlen(in);
    if (n < w) {
        snprintf(out, w + 1, "%s", in);
        return;
    }
    snprintf(out, w + 1, "%.*s~", (int)(w - 1), in);
}

static sb_bound bound_of_cls(const char *cls)
{
    if (strcmp(cls, "compute") == 0)
        return SB_BOUND_COMPUTE;
    if (strcmp(cls, "memory") == 0)
        return SB_BOUND_MEMORY;
    if (strcmp(cls, "network") == 0)
        return SB_BOUND_NETWORK;
    if (strcmp(cls, "host") == 0)
        return SB_BOUND_HOST;
    if (strcmp(cls, "latency") == 0)
        return SB_BOUND_LATENCY;
    if (strcmp(cls, "vector") == 0)
        return SB_BOUND_VECTOR;
    return SB_BOUND_UNKNOWN;
}

static bool training(const sb_tr_analysis *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        if (strstr(a->rows[i].name, "ackward") ||
            strstr(a->rows[i].name, "grad"))
            return true;
    return false;
}

static void interventions(FILE *f, const sb_tr_analysis *a)
{
    /* time at stake per class, and the phase where most of it is */
    static const char *const cls[] = {"compute", "memory", "network", "host",
                                      "latency"};
    double at[5] = {0}, top[5] = {0};
    const char *where[5] = {0};
    for (size_t i = 0; i < a->nrows; i++)
        for (int k = 0; k < 5; k++)
            if (strcmp(a->rows[i].cls, cls[k]) == 0) {
                at[k] += a->rows[i].at_stake_s;
                if (a->rows[i].at_stake_s > top[k]) {
                    top[k] = a->rows[i].at_stake_s;
                    where[k] = a->rows[i].phase;
                }
            }
    /* device idle time waits on the host */
    double host_rows = at[3];
    if (a->device)
        at[3] += a->idle_s;
    int ord[5] = {0, 1, 2, 3, 4};
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (at[ord[j]] > at[ord[i]]) {
                int x = ord[i];
                ord[i] = ord[j];
                ord[j] = x;
            }
    fprintf(f, "\ninterventions (largest time at stake first):\n");
    int shown = 0;
    for (int i = 0; i < 5; i++) {
        int k = ord[i];
        if (at[k] <= 0 || at[k] < 0.01 * a->share_of_s)
            continue;
        char tb[32];
        char advice[400];
        const char *what =
            sb_advice(bound_of_cls(cls[k]), where[k] ? where[k] : "",
                      !training(a), a->hw_kind, advice, sizeof advice);
        if (k == 4 && (!where[k] || strcmp(where[k], "communication")))
            what = "fewer, larger operations: operator fusion "
                   "(torch.compile, jax.jit), CUDA graphs for launch-bound "
                   "steps, larger batches per op, no Python work between "
                   "ops";
        if (k == 3 && a->device && a->idle_s > host_rows)
            what = "the device waits for the host: fewer, larger kernels "
                   "(fusion, CUDA graphs, torch.compile); a faster input "
                   "pipeline; no synchronisation inside the step";
        fprintf(f, "  %-8s %10s at stake (%4.1f%% of the %s)%s%s\n    %s\n",
                cls[k], sb_fmt_time(at[k], "us", tb, sizeof tb),
                a->share_of_s > 0 ? 100 * at[k] / a->share_of_s : 0,
                a->share_of_s > a->window_s ? "ops' time" : "window",
                where[k] ? ", mostly in " : "", where[k] ? where[k] : "", what);
        shown++;
    }
    if (!shown)
        fprintf(f, "  none: no class has 1%% of the window at stake\n");
}

void sb_tr_print(FILE *f, const sb_trace *t, const sb_tr_analysis *a, int top)
{
    char b1[32], b2[32], b3[32];
    fprintf(f, "trace %s: %s, %zu events (%zu kept)", t->label,
            sb_tr_format_name(t->format), t->n_total, t->n);
    if (t->device_name[0])
        fprintf(f, ", device %s", t->device_name);
    if (t->world > 0)
        fprintf(f, ", rank %d of %d", t->rank, t->world);
    fprintf(f, "\n");
    fprintf(f, "analysed: %s; %d step%s in a window of %s",
            a->device ? "device work (kernels, copies, sets)"
                      : "host operators",
            a->n_steps, a->n_steps == 1 ? "" : "s",
            sb_fmt_time(a->window_s, "us", b1, sizeof b1));
    if (a->n_steps > 1)
        fprintf(f, " (%s per step)",
                sb_fmt_time(a->step_s, "us", b2, sizeof b2));
    fprintf(f, "\n");
    fprintf(f, "busy %s (%.1f%%), idle %s in %ld gap%s (largest %s)\n",
            sb_fmt_time(a->busy_s, "us", b1, sizeof b1),
            a->window_s > 0 ? 100 * a->busy_s / a->window_s : 0,
            sb_fmt_time(a->idle_s, "us", b2, sizeof b2), a->n_gaps,
            a->n_gaps == 1 ? "" : "s",
            sb_fmt_time(a->max_gap_s, "us", b3, sizeof b3));
    if (a->comm_s > 0)
        fprintf(
            f,
            "communication %s, %.1f%% overlapped with other work "
            "(exposed %s)\n",
            sb_fmt_time(a->comm_s, "us", b1, sizeof b1),
            100 * a->comm_overlap_s / a->comm_s,
            sb_fmt_time(a->comm_s - a->comm_overlap_s, "us", b2, sizeof b2));
    if (a->share_of_s > a->window_s * 1.0001)
        fprintf(f,
                "ops overlap (streams, threads): their times sum to %s, "
                "so shares are of that and the idle time, %s\n",
                sb_fmt_time(a->op_s, "us", b1, sizeof b1),
                sb_fmt_time(a->share_of_s, "us", b2, sizeof b2));
    if (t->n == 0)
        fprintf(f, "note: the trace has no complete events (ph X): nothing "
                   "to analyse\n");
    if (a->n_unclassified)
        fprintf(f,
                "unclassified: %ld instance%s, %s (no FLOP/byte rule: "
                "kept, not placed)\n",
                a->n_unclassified, a->n_unclassified == 1 ? "" : "s",
                sb_fmt_time(a->unclassified_s, "us", b1, sizeof b1));
    if (t->n_unknown_cat || t->n_begin_end || a->n_overlapping)
        fprintf(f,
                "notes: %zu events of unknown categories (read, not "
                "analysed); %zu B/E events ignored; %ld operators overlap "
                "their parent partly\n",
                t->n_unknown_cat, t->n_begin_end, a->n_overlapping);

    fprintf(f, "\n%-34s %-30s %6s %9s %6s %8s %8s %7s %6s %-12s %9s\n", "op",
            "shapes", "n", "time", "share", "FLOP/s", "B/s", "AI", "%SOL",
            "class", "at stake");
    size_t n = top > 0 && (size_t)top < a->nrows ? (size_t)top : a->nrows;
    int over = 0;
    for (size_t i = 0; i < n; i++) {
        const sb_tr_row *r = &a->rows[i];
        char nm[40], sh[40], fl[16], by[16], ai[16], pct[16];
        cut(nm, 34, r->name);
        cut(sh, 30, r->shapes);
        double mean = r->count ? r->t_s / r->count : 0;
        sb_fmt_eng(mean > 0 ? r->cost.flops / mean : 0, fl, sizeof fl);
        sb_fmt_eng(mean > 0 ? r->cost.bytes / mean : 0, by, sizeof by);
        if (r->cost.cat == SB_TC_COLLECTIVE)
            sb_fmt_eng(r->busbw, by, sizeof by);
        snprintf(ai, sizeof ai,
                 r->cost.bytes > 0 && r->cost.flops > 0 ? "%.3g" : "-", r->ai);
        snprintf(pct, sizeof pct, r->attainable > 0 ? "%.1f" : "-", r->pct_sol);
        if (r->attainable > 0 && r->pct_sol > 100) {
            snprintf(pct, sizeof pct, "%.0f!", r->pct_sol);
            over++;
        }
        fprintf(f, "%-34s %-30s %6ld %9s %5.1f%% %8s %8s %7s %6s %-12s %9s\n",
                nm, sh, r->count, sb_fmt_time(r->t_s, "us", b1, sizeof b1),
                a->share_of_s > 0 ? 100 * r->t_s / a->share_of_s : 0, fl, by,
                ai, pct, r->cls,
                sb_fmt_time(r->at_stake_s, "us", b2, sizeof b2));
    }
    if (over)
        fprintf(f, "! above its ceiling: the machine model is slower than "
                   "the machine the trace ran on (measure it: --run), or "
                   "the op moves less than its byte rule assumes (data "
                   "reused in cache)\n");
    if (n < a->nrows)
        fprintf(f,
                "... %zu more rows (--top 0 shows all; --json/--csv keep "
                "all)\n",
                a->nrows - n);

    fprintf(f, "\n%-24s %6s %10s %6s %10s\n", "phase", "n", "time", "share",
            "at stake");
    for (size_t i = 0; i < a->nphases; i++) {
        const sb_tr_group *g = &a->phases[i];
        fprintf(f, "%-24s %6ld %10s %5.1f%% %10s\n", g->name, g->count,
                sb_fmt_time(g->t_s, "us", b1, sizeof b1), 100 * g->share,
                sb_fmt_time(g->at_stake_s, "us", b2, sizeof b2));
    }
    if (a->nannots > 1 ||
        (a->nannots == 1 && strcmp(a->annots[0].name, "(none)"))) {
        fprintf(f, "\n%-40s %6s %10s %6s %10s\n", "annotation", "n", "time",
                "share", "at stake");
        size_t na = a->nannots < 20 ? a->nannots : 20;
        for (size_t i = 0; i < na; i++) {
            const sb_tr_group *g = &a->annots[i];
            char nm[48];
            cut(nm, 40, g->name);
            fprintf(f, "%-40s %6ld %10s %5.1f%% %10s\n", nm, g->count,
                    sb_fmt_time(g->t_s, "us", b1, sizeof b1), 100 * g->share,
                    sb_fmt_time(g->at_stake_s, "us", b2, sizeof b2));
        }
    }
    interventions(f, a);
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *group_json(const sb_tr_group *g, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(g[i].name));
        json_object_set_new(o, "count", json_integer(g[i].count));
        json_object_set_new(o, "seconds", num(g[i].t_s));
        json_object_set_new(o, "share", num(g[i].share));
        json_object_set_new(o, "flops", num(g[i].flops));
        json_object_set_new(o, "bytes", num(g[i].bytes));
        json_object_set_new(o, "at_stake_s", num(g[i].at_stake_s));
        json_array_append_new(arr, o);
    }
    return arr;
}

static int write_file(const char *path, const char *data, size_t len,
                      sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    size_t w = fwrite(data, 1, len, f);
    if (fclose(f) != 0 || w != len)
        return sb_fail(err, SB_EIO, "%s: write failed", path);
    return 0;
}

int sb_tr_write_json(const sb_trace *t, const sb_tr_analysis *a,
                     const char *machine, const char *path, sb_err *err)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("solbench.trace/1"));
    json_object_set_new(o, "trace", json_string(t->label));
    json_object_set_new(o, "format", json_string(sb_tr_format_name(t->format)));
    json_object_set_new(o, "events", json_integer((json_int_t)t->n_total));
    json_object_set_new(o, "events_kept", json_integer((json_int_t)t->n));
    if (t->device_name[0])
        json_object_set_new(o, "device", json_string(t->device_name));
    if (t->world > 0) {
        json_object_set_new(o, "rank", json_integer(t->rank));
        json_object_set_new(o, "world_size", json_integer(t->world));
    }
    json_object_set_new(o, "machine", json_string(machine ? machine : ""));
    json_object_set_new(o, "side", json_string(a->device ? "device" : "host"));
    json_object_set_new(o, "steps", json_integer(a->n_steps));
    json_object_set_new(o, "window_s", num(a->window_s));
    json_object_set_new(o, "step_s", num(a->step_s));
    json_object_set_new(o, "busy_s", num(a->busy_s));
    json_object_set_new(o, "idle_s", num(a->idle_s));
    json_object_set_new(o, "op_s", num(a->op_s));
    json_object_set_new(o, "share_of_s", num(a->share_of_s));
    json_object_set_new(o, "idle_gaps", json_integer(a->n_gaps));
    json_object_set_new(o, "max_gap_s", num(a->max_gap_s));
    json_object_set_new(o, "comm_s", num(a->comm_s));
    json_object_set_new(o, "comm_overlap_s", num(a->comm_overlap_s));
    json_object_set_new(o, "unclassified", json_integer(a->n_unclassified));
    json_object_set_new(o, "unclassified_s", num(a->unclassified_s));
    json_object_set_new(o, "unknown_categories",
                        json_integer((json_int_t)t->n_unknown_cat));
    json_t *rows = json_array();
    for (size_t i = 0; i < a->nrows; i++) {
        const sb_tr_row *r = &a->rows[i];
        json_t *x = json_object();
        json_object_set_new(x, "op", json_string(r->name));
        json_object_set_new(x, "shapes", json_string(r->shapes));
        if (r->kernel[0])
            json_object_set_new(x, "kernel", json_string(r->kernel));
        json_object_set_new(x, "annotation", json_string(r->annot));
        json_object_set_new(x, "phase", json_string(r->phase));
        json_object_set_new(x, "category",
                            json_string(sb_tr_cat_name(r->cost.cat)));
        json_object_set_new(x, "dtype", json_string(r->cost.dtype));
        json_object_set_new(x, "count", json_integer(r->count));
        json_object_set_new(x, "seconds", num(r->t_s));
        json_object_set_new(
            x, "share", num(a->share_of_s > 0 ? r->t_s / a->share_of_s : 0));
        json_object_set_new(x, "flops", num(r->flops));
        json_object_set_new(x, "bytes", num(r->bytes));
        json_object_set_new(x, "ai", num(r->ai));
        json_object_set_new(x, "achieved", num(r->achieved));
        json_object_set_new(x, "attainable", num(r->attainable));
        json_object_set_new(x, "pct_sol", num(r->pct_sol));
        if (r->cost.cat == SB_TC_COLLECTIVE) {
            json_object_set_new(x, "collective", json_string(r->cost.coll));
            json_object_set_new(x, "group", json_integer(r->cost.group));
            json_object_set_new(x, "busbw_Bps", num(r->busbw));
        }
        json_object_set_new(x, "class", json_string(r->cls));
        json_object_set_new(x, "ceiling", json_string(r->ceiling));
        json_object_set_new(x, "t_ceiling_s", num(r->t_ceil_s));
        json_object_set_new(x, "at_stake_s", num(r->at_stake_s));
        json_array_append_new(rows, x);
    }
    json_object_set_new(o, "ops", rows);
    json_object_set_new(o, "phases", group_json(a->phases, a->nphases));
    json_object_set_new(o, "annotations", group_json(a->annots, a->nannots));
    char *s = json_dumps(o, JSON_INDENT(1));
    json_decref(o);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory writing %s", path);
    int rc = write_file(path, s, strlen(s), err);
    free(s);
    return rc;
}

int sb_tr_write_csv(const sb_tr_analysis *a, const char *path, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    fprintf(f, "op,shapes,kernel,annotation,phase,category,dtype,count,"
               "seconds,flops,bytes,ai,achieved,attainable,pct_sol,class,"
               "ceiling,at_stake_s\n");
    for (size_t i = 0; i < a->nrows; i++) {
        const sb_tr_row *r = &a->rows[i];
        sb_csv_field(f, r->name);
        fputc(',', f);
        sb_csv_field(f, r->shapes);
        fputc(',', f);
        sb_csv_field(f, r->kernel);
        fputc(',', f);
        sb_csv_field(f, r->annot);
        fprintf(f,
                ",%s,%s,%s,%ld,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%.4g,%s,%s,%.9g\n",
                r->phase, sb_tr_cat_name(r->cost.cat), r->cost.dtype, r->count,
                r->t_s, r->flops, r->bytes, r->ai, r->achieved, r->attainable,
                r->pct_sol, r->cls, r->ceiling, r->at_stake_s);
    }
    if (fclose(f) != 0)
        return sb_fail(err, SB_EIO, "%s: write failed", path);
    return 0;
}

/* ---- diff -----------------------------------------------------------------
 */

typedef struct drow {
    const char *name, *shapes, *phase;
    double ta, tb;
    long na, nb;
} drow;

static int cmp_drow(const void *pa, const void *pb)
{
    const drow *a = pa, *b = pb;
    double x = fabs(a->tb - a->ta), y = fabs(b->tb - b->ta);
    return (x < y) - (x > y);
}

void sb_tr_print_diff(FILE *f, const sb_tr_analysis *a, const sb_tr_analysis *b,
                      int top)
{
    char b1[32], b2[32], b3[32];
    double sa = a->step_s, sb = b->step_s;
    fprintf(f, "step time: A %s, B %s: %+.1f%%\n",
            sb_fmt_time(sa, "us", b1, sizeof b1),
            sb_fmt_time(sb, "us", b2, sizeof b2),
            sa > 0 ? 100 * (sb - sa) / sa : 0);
    if (a->device != b->device)
        fprintf(f, "warning: A analyses %s work and B %s work\n",
                a->device ? "device" : "host", b->device ? "device" : "host");
    /* rows are matched by op and shapes; time per step */
    size_t cap = a->nrows + b->nrows + 1, n = 0;
    drow *d = calloc(cap, sizeof *d);
    if (!d)
        return;
    double pa = a->n_steps > 0 ? a->n_steps : 1,
           pb = b->n_steps > 0 ? b->n_steps : 1;
    for (size_t i = 0; i < a->nrows; i++)
        d[n++] = (drow){a->rows[i].name,
                        a->rows[i].shapes,
                        a->rows[i].phase,
                        a->rows[i].t_s / pa,
                        0,
                        a->rows[i].count,
                        0};
    for (size_t i = 0; i < b->nrows; i++) {
        const sb_tr_row *r = &b->rows[i];
        size_t k = 0;
        for (; k < n; k++)
            if (d[k].nb == 0 && strcmp(d[k].name, r->name) == 0 &&
                strcmp(d[k].shapes, r->shapes) == 0)
                break;
        if (k == n)
            d[n++] = (drow){r->name, r->shapes, r->phase, 0, 0, 0, 0};
        d[k].tb = r->t_s / pb;
        d[k].nb = r->count;
    }
    qsort(d, n, sizeof *d, cmp_drow);
    fprintf(f, "\nper step, the ops that changed most:\n");
    fprintf(f, "%-34s %-30s %10s %10s %10s %8s\n", "op", "shapes", "A", "B",
            "B - A", "change");
    size_t m = top > 0 && (size_t)top < n ? (size_t)top : n;
    for (size_t i = 0; i < m; i++) {
        char nm[40], sh[40], ch[16];
        cut(nm, 34, d[i].name);
        cut(sh, 30, d[i].shapes);
        if (d[i].ta > 0)
            snprintf(ch, sizeof ch, "%+.1f%%",
                     100 * (d[i].tb - d[i].ta) / d[i].ta);
        else
            snprintf(ch, sizeof ch, "new");
        if (d[i].nb == 0)
            snprintf(ch, sizeof ch, "gone");
        double dd = d[i].tb - d[i].ta;
        fprintf(f, "%-34s %-30s %10s %10s %s%9s %8s\n", nm, sh,
                sb_fmt_time(d[i].ta, "us", b1, sizeof b1),
                sb_fmt_time(d[i].tb, "us", b2, sizeof b2), dd < 0 ? "-" : "+",
                sb_fmt_time(fabs(dd), "us", b3, sizeof b3), ch);
    }
    free(d);
    fprintf(f, "\nper step, by phase:\n%-24s %10s %10s %10s\n", "phase", "A",
            "B", "change");
    for (int side = 0; side < 2; side++) {
        const sb_tr_analysis *x = side ? b : a, *y = side ? a : b;
        for (size_t i = 0; i < x->nphases; i++) {
            const sb_tr_group *g = &x->phases[i];
            const sb_tr_group *o = NULL;
            for (size_t k = 0; k < y->nphases; k++)
                if (strcmp(y->phases[k].name, g->name) == 0)
                    o = &y->phases[k];
            if (side && o)
                continue; /* printed from A */
            double ta = side ? (o ? o->t_s : 0) : g->t_s,
                   tb = side ? g->t_s : (o ? o->t_s : 0);
            ta /= pa;
            tb /= pb;
            char ch[16];
            if (ta > 0)
                snprintf(ch, sizeof ch, "%+.1f%%", 100 * (tb - ta) / ta);
            else
                snprintf(ch, sizeof ch, "new");
            fprintf(f, "%-24s %10s %10s %10s\n", g->name,
                    sb_fmt_time(ta, "us", b1, sizeof b1),
                    sb_fmt_time(tb, "us", b2, sizeof b2), ch);
        }
    }
}
