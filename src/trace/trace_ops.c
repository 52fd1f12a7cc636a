/*
 * trace_ops.c — the ops of a trace's analysis (trace_analyze.c, step 1):
 * the cost of each (its FLOP/byte rule, an XLA op's HLO cost, a
 * collective's size), cached per name and signature, and the host
 * operators nested per thread, each a wrapper (ruled ops below it, only
 * its self time counted) or the owner of its subtree.
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include "trace/trace_analyze_int.h"

/* A child may end this much after its parent (the profiler's rounding). */
#define NEST_TOL_US 0.05

/* Doubles the cache; false when out of memory. */
static bool cc_grow(sb_tr_costs *x)
{
    size_t cap = x->ccap * 2;
    sb_tr_cost_ent *n = calloc(cap, sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < x->ccap; i++) {
        if (!x->cc[i].used)
            continue;
        size_t k = sb_tr_key_hash(x->cc[i].name, x->cc[i].sig) & (cap - 1);
        while (n[k].used)
            k = (k + 1) & (cap - 1);
        n[k] = x->cc[i];
    }
    free(x->cc);
    x->cc = n;
    x->ccap = cap;
    return true;
}

/* The HLO cost of an XLA op (sb_trace_add_hlo), by its name, else by its
 * signature (an hlo_op or long_name); NULL when none. */
static const sb_tr_cost *hlo_cost(const sb_trace *t, const sb_tr_event *e)
{
    int32_t keys[2] = {e->name, e->sig};
    for (int i = 0; t->hlo && i < 2; i++) {
        int32_t k = keys[i];
        if (k >= 0 && (size_t)k < t->nhlo &&
            (t->hlo[k].cat != SB_TC_UNKNOWN || t->hlo[k].bytes > 0))
            return &t->hlo[k];
    }
    return NULL;
}

const sb_tr_cost *sb_tr_cost_of(sb_tr_costs *x, const sb_tr_event *e)
{
    /* A collective's size is in its event (e->aux, the elements), not in
     * its name or signature: costed every time, never from the cache (an
     * all-reduce of 26 MB and one of 8 KB share one kernel name). */
    if (e->coll >= 0 && !hlo_cost(x->t, e)) {
        const char *sig = e->sig >= 0 ? sb_trace_str(x->t, e->sig) : NULL;
        memset(&x->scratch, 0, sizeof x->scratch);
        sb_tr_cost_collective(
            sb_trace_str(x->t, e->coll), sig ? sig : "", e->aux,
            e->group ? e->group : (x->t->world > 0 ? x->t->world : 0),
            &x->scratch);
        return &x->scratch;
    }
    if ((x->cn + 1) * 2 > x->ccap && !cc_grow(x)) {
        memset(&x->scratch, 0, sizeof x->scratch); /* out of memory */
        return &x->scratch;
    }
    for (size_t k = sb_tr_key_hash(e->name, e->sig) & (x->ccap - 1);;
         k = (k + 1) & (x->ccap - 1)) {
        sb_tr_cost_ent *c = &x->cc[k];
        if (c->used && c->name == e->name && c->sig == e->sig)
            return &c->cost;
        if (!c->used) {
            c->used = true;
            c->name = e->name;
            c->sig = e->sig;
            x->cn++;
            const char *nm = sb_trace_str(x->t, e->name);
            const char *sig = e->sig >= 0 ? sb_trace_str(x->t, e->sig) : NULL;
            const sb_tr_cost *h = hlo_cost(x->t, e);
            if (h)
                c->cost = *h;
            else if (e->coll >= 0) /* record_param_comms, NCCL kernels */
                /* the group: the event's, else the trace's world */
                sb_tr_cost_collective(
                    sb_trace_str(x->t, e->coll), sig ? sig : "", e->aux,
                    e->group ? e->group : (x->t->world > 0 ? x->t->world : 0),
                    &c->cost);
            else if (x->t->format == SB_TR_JAX)
                sb_tr_cost_hlo(nm, sig, &c->cost);
            else
                sb_tr_cost_torch(nm, sig, &c->cost);
            return &c->cost;
        }
    }
}

/* Operators that PyTorch implements by calling another of the same
 * span (aten::linear over aten::addmm): on a tie of start and duration
 * they enclose, whatever order the file has them in. */
static bool composite(const char *name)
{
    static const char *const c[] = {
        "linear",       "matmul",      "scaled_dot_product_attention",
        "layer_norm",   "group_norm",  "batch_norm",
        "softmax",      "log_softmax", "cross_entropy_loss",
        "dropout",      "einsum",      "conv1d",
        "conv2d",       "conv3d",      "convolution",
        "_convolution", "to",          "contiguous",
        "reshape",      "flatten",     NULL};
    const char *p = strstr(name, "::");
    p = p ? p + 2 : name;
    for (int i = 0; c[i]; i++)
        if (strcmp(p, c[i]) == 0)
            return true;
    return false;
}

int sb_tr_cmp_start(const void *pa, const void *pb, void *arg)
{
    const sb_trace *t = arg;
    const sb_tr_event *a = &t->ev[*(const size_t *)pa],
                      *b = &t->ev[*(const size_t *)pb];
    if (a->track != b->track)
        return a->track < b->track ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->dur != b->dur) /* the enclosing one first */
        return a->dur > b->dur ? -1 : 1;
    /* the same span: a composite operator encloses; else the one written
     * first (deterministic) */
    bool ca = composite(sb_trace_str(t, a->name)),
         cb = composite(sb_trace_str(t, b->name));
    if (ca != cb)
        return ca ? -1 : 1;
    return (a > b) - (a < b);
}

bool sb_tr_ruled(const sb_tr_cost *c)
{
    return c->cat != SB_TC_UNKNOWN && c->cat != SB_TC_FRAMEWORK;
}

/* Which ruled op owns time when one is nested in another: the matmuls,
 * convolutions and attention (3) over the vector ops (2) over copies and
 * transfers (1); 0 for no rule. */
static int rank_of(const sb_tr_cost *c)
{
    switch (c->cat) {
    case SB_TC_MATMUL:
    case SB_TC_CONV:
    case SB_TC_ATTENTION:
        return 3;
    case SB_TC_SOFTMAX:
    case SB_TC_NORM:
    case SB_TC_EMBEDDING:
    case SB_TC_REDUCE:
    case SB_TC_ELEMWISE:
        return 2;
    case SB_TC_COPY:
    case SB_TC_TRANSFER:
    case SB_TC_COLLECTIVE:
        return 1;
    default:
        return 0;
    }
}

void sb_tr_work_free(sb_tr_work *w)
{
    free(w->ord);
    free(w->parent);
    free(w->owner);
    free(w->wrap);
    free(w->pos);
    free(w->in);
    free(w->busy);
    free(w->comm);
    free(w->work);
}

int sb_tr_host_tree(sb_tr_costs *x, sb_tr_work *w, sb_tr_analysis *a)
{
    const sb_trace *t = x->t;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->ev[i].kind == SB_TK_CPU_OP;
    w->ord = malloc((n ? n : 1) * sizeof *w->ord);
    w->parent = malloc((n ? n : 1) * sizeof *w->parent);
    w->owner = malloc((n ? n : 1) * sizeof *w->owner);
    w->wrap = calloc(n ? n : 1, sizeof *w->wrap);
    w->pos = malloc((t->n ? t->n : 1) * sizeof *w->pos);
    if (!w->ord || !w->parent || !w->owner || !w->wrap || !w->pos)
        return SB_ENOMEM;
    n = 0;
    for (size_t i = 0; i < t->n; i++) {
        w->pos[i] = SIZE_MAX;
        if (t->ev[i].kind == SB_TK_CPU_OP)
            w->ord[n++] = i;
    }
    w->nord = n;
    qsort_r(w->ord, n, sizeof *w->ord, sb_tr_cmp_start, (void *)t);
    int64_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!stack)
        return SB_ENOMEM;
    size_t sp = 0;
    for (size_t k = 0; k < n; k++) {
        const sb_tr_event *e = &t->ev[w->ord[k]];
        w->pos[w->ord[k]] = k;
        /* the enclosing op: on the same thread, starting no later and
         * ending no earlier (an op that starts inside another and ends
         * after it overlaps it partly: counted, and taken as a sibling) */
        while (sp) {
            const sb_tr_event *p = &t->ev[w->ord[stack[sp - 1]]];
            if (p->track == e->track && e->ts + NEST_TOL_US < p->ts + p->dur) {
                if (e->ts + e->dur <= p->ts + p->dur + NEST_TOL_US)
                    break;
                a->n_overlapping++;
            }
            sp--;
        }
        w->parent[k] = sp ? stack[sp - 1] : -1;
        stack[sp++] = (int64_t)k;
    }
    free(stack);
    /* wrappers: an op with an op of its rank or higher below it (aten::
     * linear over aten::addmm; not aten::addmm over the aten::copy_ it
     * calls). Children come after their parents. */
    int8_t *below = calloc(n ? n : 1, sizeof *below);
    if (!below)
        return SB_ENOMEM;
    for (size_t k = n; k-- > 0;) {
        int r = rank_of(sb_tr_cost_of(x, &t->ev[w->ord[k]]));
        w->wrap[k] = r > 0 && below[k] >= r;
        int up = r > below[k] ? r : below[k];
        if (w->parent[k] >= 0 && up > below[w->parent[k]])
            below[w->parent[k]] = (int8_t)up;
    }
    free(below);
    /* owners: a ruled op that is not a wrapper owns its subtree */
    for (size_t k = 0; k < n; k++) {
        int64_t p = w->parent[k];
        if (p >= 0 && w->owner[p] != p) /* the parent is absorbed */
            w->owner[k] = w->owner[p];
        else if (p >= 0 && !w->wrap[p] &&
                 sb_tr_ruled(sb_tr_cost_of(x, &t->ev[w->ord[p]])))
            w->owner[k] = p;
        else
            w->owner[k] = (int64_t)k;
    }
    return 0;
}
