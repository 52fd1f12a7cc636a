/*
 * trace_join.c — the op instances of a trace's analysis (trace_analyze.c,
 * step 2): the host's operators (an owner with its subtree, a wrapper or
 * an unruled op with its self time), or, when the trace has device work,
 * its kernels, copies and sets, each joined to the operator that
 * launched it through "External id", else "correlation" and the runtime
 * call, with the time they keep the device busy and communicating.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/trace_analyze_int.h"

/* Events keyed by an id that may repeat (correlation ids and External ids
 * restart per process), sorted by id then start. */
typedef struct keyed {
    int64_t key;
    double a, b; /* the event's span */
    int64_t idx;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *p = x, *q = y;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx); /* outer first */
}

/* Timestamps of one trace agree to within this (microseconds): device
 * times are converted to the host's clock, and µs with three decimals
 * round. */
#define JOIN_SLACK_US 1.0

/* Of the events with `key`, the one that started last at or before `at`
 * (holding `at` within its span when `holds`); -1 when none does. */
static int64_t keyed_last(const keyed *v, size_t n, int64_t key, double at,
                          bool holds)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first entry with this key */
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t best = -1;
    for (size_t i = lo;
         i < n && v[i].key == key && v[i].a <= at + JOIN_SLACK_US; i++)
        if (!holds || at <= v[i].b + JOIN_SLACK_US)
            best = v[i].idx; /* later starts win: the innermost */
    return best;
}

static int push_inst(sb_tr_work *w, const sb_tr_inst *x)
{
    if (w->nin == w->incap) {
        size_t cap = w->incap ? w->incap * 2 : 1024;
        sb_tr_inst *p = realloc(w->in, cap * sizeof *p);
        if (!p)
            return SB_ENOMEM;
        w->in = p;
        w->incap = cap;
    }
    w->in[w->nin++] = *x;
    return 0;
}

static double self_time(const sb_trace *t, const sb_tr_work *w, size_t k,
                        const double *child)
{
    double s = t->ev[w->ord[k]].dur - child[k];
    return s > 0 ? s : 0;
}

static bool jax_op_track(const sb_trace *t, int32_t tr, bool *has_ops_line)
{
    const sb_tr_track *k = &t->tracks[tr];
    const char *tn = sb_trace_str(t, k->tname);
    if (strstr(tn, "XLA Ops") || strstr(tn, "TPU Ops"))
        return true;
    return !has_ops_line[tr];
}

/* ---- the host side ------------------------------------------------------- */

int sb_tr_host_insts(sb_tr_costs *x, sb_tr_work *w, const sb_tr_win *v)
{
    /* host: owners take their subtree; the rest their self time */
    const sb_trace *t = x->t;
    double *child = calloc(w->nord ? w->nord : 1, sizeof *child);
    if (!child)
        return SB_ENOMEM;
    for (size_t k = 0; k < w->nord; k++)
        if (w->parent[k] >= 0)
            child[w->parent[k]] += t->ev[w->ord[k]].dur;
    int rc = 0;
    for (size_t k = 0; k < w->nord; k++) {
        const sb_tr_event *e = &t->ev[w->ord[k]];
        if (w->owner[k] != (int64_t)k)
            continue; /* absorbed by its owner */
        /* only what starts in the window; nested ops follow their
         * top-level op */
        int64_t top = (int64_t)k;
        while (w->parent[top] >= 0)
            top = w->parent[top];
        if (!sb_tr_in_win(v, &t->ev[w->ord[top]]))
            continue;
        const sb_tr_cost *co = sb_tr_cost_of(x, e);
        bool leaf = !w->wrap[k] && sb_tr_ruled(co);
        sb_tr_inst in = {.name = e->name,
                         .sig = e->sig,
                         .kname = -1,
                         .at_us = e->ts,
                         .atrack = e->track,
                         .cost = *co,
                         .wrapper = w->wrap[k]};
        in.t_us = leaf ? e->dur : self_time(t, w, k, child);
        if (in.wrapper)
            memset(&in.cost, 0, sizeof in.cost);
        if (push_inst(w, &in) ||
            (w->parent[k] < 0 && sb_tr_push_ivl(&w->busy, &w->nbusy, &w->cbusy,
                                                e->ts, e->ts + e->dur))) {
            rc = SB_ENOMEM;
            break;
        }
    }
    free(child);
    return rc;
}

/* ---- the device side ----------------------------------------------------- */

bool sb_tr_device_side(const sb_trace *t)
{
    bool device = false;
    for (size_t i = 0; i < t->n && !device; i++) {
        const sb_tr_event *e = &t->ev[i];
        device = t->tracks[e->track].device &&
                 (e->kind == SB_TK_KERNEL || e->kind == SB_TK_MEMCPY ||
                  e->kind == SB_TK_MEMSET ||
                  (t->format == SB_TR_JAX && e->kind == SB_TK_OTHER));
    }
    return device;
}

/* The device's work joined to the host's operators: kernels to their
 * launching operator's owner, only where the times agree: a correlation
 * id and an External id restart per process (and per rank of merged
 * traces), so of the events sharing one the launch is the last before
 * the kernel, and the operator is one whose span holds that launch (or
 * that started before the kernel, when no launch is known). */
typedef struct join {
    sb_tr_costs *x;
    sb_tr_work *w;
    bool *ops_line; /* per track: its process has an "XLA Ops" line */
    keyed *by_corr; /* the runtime calls, by correlation id */
    keyed *by_ext;  /* the host operators, by External id */
    size_t nrt, nex;
    int64_t *inst_of; /* per launching op: index into the instances */
} join;

static void join_free(join *j)
{
    free(j->ops_line);
    free(j->by_ext);
    free(j->by_corr);
    free(j->inst_of);
}

/* The tracks of a device with an "XLA Ops" (or "TPU Ops") line: only
 * that line's events are its ops. NULL when out of memory. */
static bool *ops_lines(const sb_trace *t)
{
    bool *ops_line = calloc(t->ntracks ? t->ntracks : 1, sizeof *ops_line);
    if (!ops_line)
        return NULL;
    for (size_t i = 0; i < t->ntracks; i++) {
        const char *tn = sb_trace_str(t, t->tracks[i].tname);
        if (t->tracks[i].device &&
            (strstr(tn, "XLA Ops") || strstr(tn, "TPU Ops")))
            for (size_t k = 0; k < t->ntracks; k++)
                if (t->tracks[k].pid == t->tracks[i].pid)
                    ops_line[k] = true;
    }
    return ops_line;
}

/* The runtime calls and operators keyed by their ids. 0 or SB_ENOMEM. */
static int join_index(join *j)
{
    const sb_trace *t = j->x->t;
    const sb_tr_work *w = j->w;
    size_t nrt = 0, nex = 0;
    for (size_t i = 0; i < t->n; i++)
        nrt += t->ev[i].kind == SB_TK_RUNTIME && t->ev[i].corr >= 0;
    for (size_t k = 0; k < w->nord; k++)
        nex += t->ev[w->ord[k]].ext >= 0;
    j->by_corr = malloc((nrt ? nrt : 1) * sizeof *j->by_corr);
    j->by_ext = malloc((nex ? nex : 1) * sizeof *j->by_ext);
    if (!j->by_ext || !j->by_corr)
        return SB_ENOMEM;
    nrt = nex = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].kind == SB_TK_RUNTIME && t->ev[i].corr >= 0)
            j->by_corr[nrt++] = (keyed){t->ev[i].corr, t->ev[i].ts,
                                        t->ev[i].ts + t->ev[i].dur, (int64_t)i};
    for (size_t k = 0; k < w->nord; k++) {
        const sb_tr_event *oe = &t->ev[w->ord[k]];
        if (oe->ext >= 0)
            j->by_ext[nex++] =
                (keyed){oe->ext, oe->ts, oe->ts + oe->dur, (int64_t)k};
    }
    qsort(j->by_corr, nrt, sizeof *j->by_corr, cmp_keyed);
    qsort(j->by_ext, nex, sizeof *j->by_ext, cmp_keyed);
    j->nrt = nrt;
    j->nex = nex;
    /* per launching op: index into the instances */
    j->inst_of = malloc((w->nord ? w->nord : 1) * sizeof *j->inst_of);
    if (!j->inst_of)
        return SB_ENOMEM;
    for (size_t k = 0; k < w->nord; k++)
        j->inst_of[k] = -1;
    return 0;
}

/* The operator (index into ord, its owner) that launched e, -1; *rt the
 * launching runtime call, NULL. */
static int64_t launcher(const join *j, const sb_tr_event *e,
                        const sb_tr_event **rt)
{
    const sb_trace *t = j->x->t;
    *rt = NULL;
    int64_t ext = e->ext;
    if (e->corr >= 0) {
        /* the last launch with this id at or before the kernel */
        int64_t ri = keyed_last(j->by_corr, j->nrt, e->corr, e->ts, false);
        if (ri >= 0) {
            *rt = &t->ev[ri];
            if (ext < 0)
                ext = (*rt)->ext;
        }
    }
    int64_t op = -1;
    if (ext >= 0) {
        /* the innermost operator with this id that holds the
         * launch (or began before the kernel) */
        int64_t k = keyed_last(j->by_ext, j->nex, ext, *rt ? (*rt)->ts : e->ts,
                               *rt != NULL);
        if (k >= 0)
            op = j->w->owner[k];
    }
    return op;
}

/* The instance of the device's work e (a JAX op when jaxop), launched by
 * the operator op (-1: none known), and its time as communication or as
 * other work. 0 or SB_ENOMEM. */
static int device_inst(join *j, const sb_tr_event *e, bool jaxop, int64_t op)
{
    const sb_trace *t = j->x->t;
    sb_tr_work *w = j->w;
    sb_tr_inst in = {.name = e->name,
                     .sig = e->sig,
                     .kname = -1,
                     .t_us = e->dur,
                     .at_us = e->ts,
                     .atrack = e->track};
    if (e->coll >= 0) {
        in.cost = *sb_tr_cost_of(j->x, e);
        in.kname = e->name;
        in.kdur = e->dur;
        if (op >= 0) /* the row keeps the kernel's name */
            in.at_us = t->ev[w->ord[op]].ts,
            in.atrack = t->ev[w->ord[op]].track;
        if (sb_tr_push_ivl(&w->comm, &w->ncomm, &w->ccomm, e->ts,
                           e->ts + e->dur))
            return SB_ENOMEM;
    } else if (e->kind == SB_TK_MEMCPY || e->kind == SB_TK_MEMSET) {
        const char *nm = sb_trace_str(t, e->name);
        bool h2d =
            strstr(nm, "HtoD") || strstr(nm, "DtoH") || strstr(nm, "HtoH");
        in.cost.cat =
            e->kind == SB_TK_MEMCPY && h2d ? SB_TC_TRANSFER : SB_TC_COPY;
        in.cost.bytes = e->aux * (e->kind == SB_TK_MEMCPY && !h2d ? 2 : 1);
        /* one row per direction, whatever the size */
        in.sig = -1;
        if (sb_tr_push_ivl(&w->work, &w->nwork, &w->cwork, e->ts,
                           e->ts + e->dur))
            return SB_ENOMEM;
    } else if (jaxop) {
        in.cost = *sb_tr_cost_of(j->x, e);
        if (in.cost.cat == SB_TC_COLLECTIVE) {
            if (sb_tr_push_ivl(&w->comm, &w->ncomm, &w->ccomm, e->ts,
                               e->ts + e->dur))
                return SB_ENOMEM;
        } else if (sb_tr_push_ivl(&w->work, &w->nwork, &w->cwork, e->ts,
                                  e->ts + e->dur)) {
            return SB_ENOMEM;
        }
    } else {
        if (sb_tr_push_ivl(&w->work, &w->nwork, &w->cwork, e->ts,
                           e->ts + e->dur))
            return SB_ENOMEM;
        if (op >= 0) {
            /* one instance per launching operator */
            const sb_tr_event *oe = &t->ev[w->ord[op]];
            if (j->inst_of[op] >= 0) {
                sb_tr_inst *p = &w->in[j->inst_of[op]];
                p->t_us += e->dur;
                if (e->dur > p->kdur) {
                    p->kdur = e->dur;
                    p->kname = e->name;
                }
                return 0;
            }
            in.name = oe->name;
            in.sig = oe->sig;
            in.cost = *sb_tr_cost_of(j->x, oe);
            if (w->wrap[op])
                memset(&in.cost, 0, sizeof in.cost);
            in.at_us = oe->ts;
            in.atrack = oe->track;
            j->inst_of[op] = (int64_t)w->nin;
        }
        in.kname = e->name;
        in.kdur = e->dur;
    }
    return push_inst(w, &in);
}

int sb_tr_device_insts(sb_tr_costs *x, sb_tr_work *w, sb_tr_win *v)
{
    const sb_trace *t = x->t;
    join j = {.x = x, .w = w, .ops_line = ops_lines(t)};
    int rc = j.ops_line ? join_index(&j) : SB_ENOMEM;
    sb_tr_win dv = {0};
    bool dsteps = false;
    for (size_t i = 0; i < t->n; i++) {
        const sb_tr_event *e = &t->ev[i];
        if ((e->flags & SB_TEF_STEP) && t->tracks[e->track].device)
            dsteps = true;
    }
    for (size_t i = 0; !rc && i < t->n; i++) {
        const sb_tr_event *e = &t->ev[i];
        if (!t->tracks[e->track].device)
            continue;
        bool jaxop = t->format == SB_TR_JAX && e->kind == SB_TK_OTHER &&
                     !(e->flags & SB_TEF_STEP) &&
                     jax_op_track(t, e->track, j.ops_line);
        if (e->kind != SB_TK_KERNEL && e->kind != SB_TK_MEMCPY &&
            e->kind != SB_TK_MEMSET && !jaxop)
            continue;
        /* the launching runtime call and operator */
        const sb_tr_event *rt;
        int64_t op = launcher(&j, e, &rt);
        /* the window: device steps, else launched within the host's */
        if (dsteps || !v->set) {
            if (!sb_tr_in_win(v, e))
                continue;
        } else {
            double when = rt ? rt->ts : op >= 0 ? t->ev[w->ord[op]].ts : e->ts;
            if (when < v->a || when >= v->b)
                continue;
        }
        if (!dv.set || e->ts < dv.a)
            dv.a = e->ts;
        if (!dv.set || e->ts + e->dur > dv.b)
            dv.b = e->ts + e->dur;
        dv.set = true;
        rc = sb_tr_push_ivl(&w->busy, &w->nbusy, &w->cbusy, e->ts,
                            e->ts + e->dur);
        if (!rc)
            rc = device_inst(&j, e, jaxop, op);
    }
    join_free(&j);
    if (!rc && (!v->set || !dsteps))
        *v = dv;
    return rc;
}
