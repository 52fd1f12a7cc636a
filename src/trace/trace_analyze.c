/*
 * trace_analyze.c — a trace's op instances on the roofline (docs/TRACE.md),
 * step by step; the steps' files share trace_analyze_int.h.
 *
 * 1. Host operators are nested per thread (a stack over events sorted by
 *    start). An operator with a FLOP/byte rule and no ruled operator
 *    below it owns its whole subtree (aten::addmm and what it calls); an
 *    operator with ruled ones below it (aten::linear over aten::addmm) is
 *    a wrapper and keeps only its self time, so nothing is counted twice
 *    (trace_ops.c).
 * 2. The side analysed: the device's kernels, copies and sets when the
 *    trace has them (joined to the operator that launched them through
 *    "External id", else "correlation" and the runtime call), else the
 *    host's operators (trace_join.c).
 * 3. Instances are summed into rows (operator and shape signature), each
 *    placed under the binding ceiling of the machine model (trace_rows.c);
 *    phases group rows by user annotation and by solbench's phase names
 *    (here); the timeline gives idle gaps and the overlap of communication
 *    with other work (trace_timeline.c).
 */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_analyze_int.h"

/* ---- annotations -----------------------------------------------------------
 */

typedef struct annots {
    size_t *idx; /* ANNOT events (not steps), by track then start */
    size_t n;
} annots;

static const char *annot_at(const sb_trace *t, const annots *an, int32_t track,
                            double ts)
{
    /* last annotation on `track` starting at or before ts */
    size_t lo = 0, hi = an->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const sb_tr_event *e = &t->ev[an->idx[mid]];
        if (e->track < track || (e->track == track && e->ts <= ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i-- > 0 && k < 4096; k++) {
        const sb_tr_event *e = &t->ev[an->idx[i]];
        if (e->track != track)
            break;
        if (e->ts + e->dur >= ts)
            return sb_trace_str(t, e->name);
    }
    return "";
}

/* ---- groups -------------------------------------------------------------- */

static int cmp_row(const void *pa, const void *pb)
{
    const sb_tr_row *a = pa, *b = pb;
    if (a->at_stake_s != b->at_stake_s)
        return a->at_stake_s < b->at_stake_s ? 1 : -1;
    if (a->t_s != b->t_s)
        return a->t_s < b->t_s ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int cmp_group(const void *pa, const void *pb)
{
    const sb_tr_group *a = pa, *b = pb;
    if (a->t_s != b->t_s)
        return a->t_s < b->t_s ? 1 : -1;
    return strcmp(a->name, b->name);
}

static void group_add(sb_tr_group *x, const sb_tr_row *r, double t_s)
{
    x->count += r ? r->count : 0;
    x->t_s += t_s;
    x->flops += r ? r->flops : 0;
    x->bytes += r ? r->bytes : 0;
    x->at_stake_s += r ? r->at_stake_s : t_s;
}

/* Adds to the group `name` (made when new); *at (may be NULL) gets its
 * index. */
static int add_group(sb_tr_group **g, size_t *n, const char *name,
                     const sb_tr_row *r, double t_s, size_t *at)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*g)[i].name, name) == 0) {
            group_add(&(*g)[i], r, t_s);
            if (at)
                *at = i;
            return 0;
        }
    sb_tr_group *p = realloc(*g, (*n + 1) * sizeof *p);
    if (!p)
        return SB_ENOMEM;
    *g = p;
    sb_tr_group *x = &p[*n];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    sb_utf8_trim(x->name);
    group_add(x, r, t_s);
    if (at)
        *at = *n;
    (*n)++;
    return 0;
}

/* ---- the analysis ----------------------------------------------------------
 */

void sb_tr_efficiencies(const sb_tr_analysis *a, double eff[SB_TR_EFF_N],
                        double t[SB_TR_EFF_N], long n[SB_TR_EFF_N])
{
    double ceil_s[SB_TR_EFF_N] = {0};
    for (int k = 0; k < SB_TR_EFF_N; k++) {
        eff[k] = t[k] = 0;
        n[k] = 0;
    }
    for (size_t i = 0; i < a->nrows; i++) {
        const sb_tr_row *r = &a->rows[i];
        if (!(r->t_s > 0) || !(r->t_ceil_s > 0) || r->bound == SB_BOUND_UNKNOWN)
            continue;
        int k;
        switch (r->cost.cat) {
        case SB_TC_MATMUL:
        case SB_TC_CONV:
            k = SB_TR_EFF_MATMUL;
            break;
        case SB_TC_ATTENTION:
            k = SB_TR_EFF_ATTENTION;
            break;
        case SB_TC_SOFTMAX:
        case SB_TC_NORM:
        case SB_TC_ELEMWISE:
        case SB_TC_REDUCE:
        case SB_TC_EMBEDDING:
        case SB_TC_COPY:
            k = SB_TR_EFF_MEMORY;
            break;
        case SB_TC_COLLECTIVE:
            k = SB_TR_EFF_NETWORK;
            break;
        default:
            continue; /* host transfers, framework, unknown */
        }
        /* an op faster than its ceiling (data reused in cache) counts as
         * at its ceiling */
        ceil_s[k] += r->t_ceil_s < r->t_s ? r->t_ceil_s : r->t_s;
        t[k] += r->t_s;
        n[k] += r->count;
    }
    for (int k = 0; k < SB_TR_EFF_N; k++)
        eff[k] = t[k] > 0 ? ceil_s[k] / t[k] : 0;
}

void sb_tr_analysis_free(sb_tr_analysis *a)
{
    free(a->rows);
    free(a->phases);
    free(a->annots);
    memset(a, 0, sizeof *a);
}

/* One analysis under way: what its steps hand on. */
typedef struct run {
    const sb_trace *t;
    sb_tr_analysis *a;
    sb_tr_costs x;  /* the ops' costs */
    sb_tr_work w;   /* the host operators, the instances, the timeline */
    annots an;      /* annotations for the phase lookup */
    sb_tr_rowmap m; /* the rows */
} run;

/* The side analysed (device when it has work), its steps and the
 * window. */
static sb_tr_win side_and_window(const sb_trace *t, sb_tr_analysis *a)
{
    /* which side: device when it has work */
    a->device = sb_tr_device_side(t);
    /* the window */
    int ns;
    sb_tr_win v = sb_tr_steps(t, a->device, &ns);
    if (!ns && a->device)
        v = sb_tr_steps(t, false, &ns);
    a->n_steps = ns;
    return v;
}

/* The annotations for the phase lookup (steps are not), by track then
 * start. 0 or SB_ENOMEM. */
static int annot_index(const sb_trace *t, annots *an)
{
    an->idx = malloc((t->n ? t->n : 1) * sizeof *an->idx);
    if (!an->idx)
        return SB_ENOMEM;
    for (size_t i = 0; i < t->n; i++)
        if ((t->ev[i].kind == SB_TK_ANNOT ||
             t->ev[i].kind == SB_TK_GPU_ANNOT) &&
            !(t->ev[i].flags & SB_TEF_STEP))
            an->idx[an->n++] = i;
    qsort_r(an->idx, an->n, sizeof *an->idx, sb_tr_cmp_start, (void *)t);
    return 0;
}

/* Each instance's innermost annotation: the user's around its host
 * timestamp, else a JAX op's named scope. */
static void annotate(const sb_trace *t, const annots *an, sb_tr_work *w)
{
    for (size_t i = 0; i < w->nin; i++) {
        sb_tr_inst *in = &w->in[i];
        in->annot = annot_at(t, an, in->atrack, in->at_us);
        /* a JAX op: its named scope, from the module's metadata (by
         * its name, else its signature) */
        for (int ki = 0; !in->annot[0] && t->hlo_scope && ki < 2; ki++) {
            int32_t hk = ki ? in->sig : in->name;
            if (hk >= 0 && (size_t)hk < t->nhlo && t->hlo_scope[hk] >= 0)
                in->annot = sb_trace_str(t, t->hlo_scope[hk]);
        }
    }
}

/* The rows' time, the unclassified ones and the phases they make. 0 or
 * SB_ENOMEM. */
static int phase_groups(sb_tr_analysis *a, const sb_tr_rowmap *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const sb_tr_row *r = &m->rows[i];
        a->op_s += r->t_s;
        if (r->cost.cat == SB_TC_UNKNOWN) {
            a->n_unclassified += r->count;
            a->unclassified_s += r->t_s;
        }
        if (add_group(&a->phases, &a->nphases, r->phase, r, r->t_s, NULL))
            return SB_ENOMEM;
    }
    return 0;
}

/* The annotations' groups: each instance under its own. 0 or
 * SB_ENOMEM. */
static int annot_groups(sb_tr_analysis *a, const sb_tr_work *w,
                        const sb_tr_rowmap *m)
{
    /* annotations: each instance under its own (instances come in runs
     * of one annotation: the last one is tried first) */
    const char *prev = NULL;
    size_t gi = 0;
    for (size_t i = 0; i < w->nin; i++) {
        const sb_tr_inst *in = &w->in[i];
        const sb_tr_row *r = &m->rows[in->row];
        const sb_tr_rowkey *kk = &m->key[in->row];
        /* this instance's share of its row: by its own bytes (or FLOPs) */
        double fr = kk->by > 0   ? in->cost.bytes / kk->by
                    : kk->fl > 0 ? in->cost.flops / kk->fl
                    : r->count   ? 1.0 / (double)r->count
                                 : 0;
        double t1 = r->t_ceil_s * fr;
        double ts = in->t_us * 1e-6;
        sb_tr_row one = {.count = 1,
                         .flops = r->flops * fr,
                         .bytes = r->bytes * fr,
                         .at_stake_s =
                             r->attainable > 0 || r->bound == SB_BOUND_LATENCY
                                 ? (ts > t1 ? ts - t1 : 0)
                                 : 0};
        if (in->annot == prev && gi < a->nannots) {
            group_add(&a->annots[gi], &one, ts);
        } else {
            if (add_group(&a->annots, &a->nannots,
                          in->annot[0] ? in->annot : "(none)", &one, ts, &gi))
                return SB_ENOMEM;
            prev = in->annot;
        }
    }
    return 0;
}

/* Idle time as a phase, each group's share, the order of rows and groups;
 * the rows handed to a. 0 or SB_ENOMEM. */
static int summarise(sb_tr_analysis *a, sb_tr_rowmap *m)
{
    if (a->idle_s > 0 &&
        add_group(&a->phases, &a->nphases, "idle", NULL, a->idle_s, NULL))
        return SB_ENOMEM;
    a->share_of_s = fmax(a->window_s, a->op_s + a->idle_s);
    double den = a->share_of_s > 0 ? a->share_of_s : 1;
    for (size_t i = 0; i < a->nphases; i++)
        a->phases[i].share = a->phases[i].t_s / den;
    for (size_t i = 0; i < a->nannots; i++)
        a->annots[i].share = a->annots[i].t_s / den;
    if (m->n)
        qsort(m->rows, m->n, sizeof *m->rows, cmp_row);
    if (a->nphases)
        qsort(a->phases, a->nphases, sizeof *a->phases, cmp_group);
    if (a->nannots)
        qsort(a->annots, a->nannots, sizeof *a->annots, cmp_group);
    a->rows = m->rows;
    a->nrows = m->n;
    m->rows = NULL;
    return 0;
}

/* The steps in order. 0 or SB_ENOMEM. */
static int analyze(run *r, const sb_ceilings *c)
{
    const sb_trace *t = r->t;
    sb_tr_analysis *a = r->a;
    int rc = sb_tr_host_tree(&r->x, &r->w, a);
    if (rc)
        return rc;
    sb_tr_win v = side_and_window(t, a);
    if ((rc = annot_index(t, &r->an)))
        return rc;
    rc = a->device ? sb_tr_device_insts(&r->x, &r->w, &v)
                   : sb_tr_host_insts(&r->x, &r->w, &v);
    if (rc)
        return rc;
    sb_tr_timeline(&r->w, &v, a);
    annotate(t, &r->an, &r->w);
    if ((rc = sb_tr_rows_sum(&r->m, t, &r->w)))
        return rc;
    sb_tr_rows_finish(&r->m, t, c);
    if ((rc = phase_groups(a, &r->m)) || (rc = annot_groups(a, &r->w, &r->m)))
        return rc;
    return summarise(a, &r->m);
}

int sb_trace_analyze(const sb_trace *t, const sb_ceilings *c, sb_tr_analysis *a,
                     sb_err *err)
{
    memset(a, 0, sizeof *a);
    if (c)
        snprintf(a->hw_kind, sizeof a->hw_kind, "%s", c->kind);
    run r = {.t = t, .a = a, .x = {.t = t, .ccap = 1024}};
    r.x.cc = calloc(r.x.ccap, sizeof *r.x.cc);
    int rc = r.x.cc ? analyze(&r, c) : SB_ENOMEM;
    if (rc == SB_ENOMEM)
        sb_fail(err, SB_ENOMEM, "%s: out of memory analysing the trace",
                t->label);
    if (rc)
        sb_tr_analysis_free(a);
    free(r.m.rows);
    free(r.m.key);
    free(r.m.h);
    free(r.an.idx);
    sb_tr_work_free(&r.w);
    free(r.x.cc);
    return rc;
}
