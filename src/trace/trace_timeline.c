/*
 * trace_timeline.c — the timeline of a trace's analysis (trace_analyze.c):
 * the steps and the window they span, the time the analysed side is busy
 * (the union of its ops' spans), its idle gaps, and how much of the
 * communication overlaps other work.
 */
#include <stdlib.h>

#include "trace/trace_analyze_int.h"

/* Idle gaps shorter than this are not counted as gaps. */
#define GAP_MIN_US 1.0

static int cmp_ivl(const void *pa, const void *pb)
{
    const sb_tr_ivl *a = pa, *b = pb;
    return (a->a > b->a) - (a->a < b->a);
}

/* Merges intervals in place; returns the count. */
static size_t merge(sb_tr_ivl *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_ivl);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].a <= v[m].b) {
            if (v[i].b > v[m].b)
                v[m].b = v[i].b;
        } else {
            v[++m] = v[i];
        }
    }
    return m + 1;
}

/* Length of [a, b) covered by the merged, sorted intervals u[0..n). */
static double covered(const sb_tr_ivl *u, size_t n, double a, double b)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first interval ending after a */
        size_t mid = (lo + hi) / 2;
        if (u[mid].b <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    double s = 0;
    for (size_t i = lo; i < n && u[i].a < b; i++) {
        double x = u[i].a > a ? u[i].a : a, y = u[i].b < b ? u[i].b : b;
        if (y > x)
            s += y - x;
    }
    return s;
}

int sb_tr_push_ivl(sb_tr_ivl **v, size_t *n, size_t *cap, double a, double b)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        sb_tr_ivl *p = realloc(*v, c * sizeof *p);
        if (!p)
            return SB_ENOMEM;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = (sb_tr_ivl){a, b};
    return 0;
}

sb_tr_win sb_tr_steps(const sb_trace *t, bool device, int *nsteps)
{
    /* the window spans every step event; the count is the most on any
     * one track (Kineto writes a device's ProfilerStep#N once per stream,
     * JAX a step once per device) */
    sb_tr_win v = {0};
    int *per = calloc(t->ntracks ? t->ntracks : 1, sizeof *per);
    int n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const sb_tr_event *e = &t->ev[i];
        if (!(e->flags & SB_TEF_STEP) || t->tracks[e->track].device != device)
            continue;
        if (!v.set || e->ts < v.a)
            v.a = e->ts;
        if (!v.set || e->ts + e->dur > v.b)
            v.b = e->ts + e->dur;
        v.set = true;
        if (per && ++per[e->track] > n)
            n = per[e->track];
    }
    free(per);
    *nsteps = n;
    return v;
}

void sb_tr_timeline(sb_tr_work *w, const sb_tr_win *v, sb_tr_analysis *a)
{
    /* the timeline: busy, idle gaps, communication overlap */
    w->nbusy = merge(w->busy, w->nbusy);
    double lo = v->set ? v->a : 0, hi = v->set ? v->b : 0;
    if (!v->set && w->nbusy) {
        lo = w->busy[0].a;
        hi = w->busy[w->nbusy - 1].b;
    }
    for (size_t i = 0; i < w->nbusy; i++) {
        double aa = w->busy[i].a > lo ? w->busy[i].a : lo;
        double bb = w->busy[i].b < hi ? w->busy[i].b : hi;
        if (bb > aa)
            a->busy_s += (bb - aa) * 1e-6;
        double gap_end = i + 1 < w->nbusy ? w->busy[i + 1].a : hi;
        double g = (gap_end < hi ? gap_end : hi) -
                   (w->busy[i].b > lo ? w->busy[i].b : lo);
        if (i == 0 && w->busy[0].a - lo >= GAP_MIN_US) {
            a->n_gaps++;
            if ((w->busy[0].a - lo) * 1e-6 > a->max_gap_s)
                a->max_gap_s = (w->busy[0].a - lo) * 1e-6;
        }
        if (g >= GAP_MIN_US) {
            a->n_gaps++;
            if (g * 1e-6 > a->max_gap_s)
                a->max_gap_s = g * 1e-6;
        }
    }
    a->window_s = hi > lo ? (hi - lo) * 1e-6 : 0;
    a->idle_s = a->window_s > a->busy_s ? a->window_s - a->busy_s : 0;
    a->step_s = a->n_steps ? a->window_s / a->n_steps : a->window_s;
    if (w->ncomm) {
        size_t nw = merge(w->work, w->nwork);
        size_t nc = merge(w->comm, w->ncomm);
        for (size_t i = 0; i < nc; i++) {
            a->comm_s += (w->comm[i].b - w->comm[i].a) * 1e-6;
            a->comm_overlap_s +=
                covered(w->work, nw, w->comm[i].a, w->comm[i].b) * 1e-6;
        }
    }
}
