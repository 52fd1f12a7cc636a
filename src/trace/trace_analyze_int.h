/*
 * trace_analyze_int.h — what the files of a trace's analysis share
 * (docs/TRACE.md): op instances, the cost of an op, the host operators'
 * tree, the timeline's intervals and the rows.
 *
 *   trace_ops.c       the cost of an op; the host operators' nesting,
 *                     wrappers and owners
 *   trace_join.c      the instances: the host's operators, or the
 *                     device's work joined to the operators that launched it
 *   trace_timeline.c  steps and the window, busy time, idle gaps, the
 *                     overlap of communication with other work
 *   trace_rows.c      instances summed into rows, each classified and
 *                     placed under its ceiling
 *   trace_analyze.c   the analysis step by step; phases and annotations
 */
#ifndef SOLBENCH_TRACE_ANALYZE_INT_H
#define SOLBENCH_TRACE_ANALYZE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/trace.h"

/* One op instance: an operator, or the device's work for one. */
typedef struct sb_tr_inst {
    int32_t name, sig;
    int32_t kname;  /* the longest kernel, -1 */
    double kdur;    /* its duration */
    double t_us;    /* time */
    double at_us;   /* host timestamp (annotation lookup) */
    int32_t atrack; /* host track of the annotation lookup */
    sb_tr_cost cost;
    bool wrapper;      /* self time of an op with ruled ops below */
    long row;          /* its row */
    const char *annot; /* innermost user annotation */
} sb_tr_inst;

/* A span of the timeline (µs). */
typedef struct sb_tr_ivl {
    double a, b;
} sb_tr_ivl;

/* The window analysed (µs); unset: all of the trace. */
typedef struct sb_tr_win {
    double a, b; /* µs */
    bool set;
} sb_tr_win;

static inline bool sb_tr_in_win(const sb_tr_win *v, const sb_tr_event *e)
{
    return !v->set || (e->ts >= v->a && e->ts < v->b);
}

/* ---- the cost of an op (trace_ops.c) ------------------------------------ */

typedef struct sb_tr_cost_ent {
    int32_t name, sig;
    sb_tr_cost cost;
    bool used;
} sb_tr_cost_ent;

/* The costs of a trace's ops, cached per (name, signature): cc is a
 * table of ccap (a power of two) entries, made by the caller. */
typedef struct sb_tr_costs {
    const sb_trace *t;
    sb_tr_cost_ent *cc;
    size_t ccap, cn;
    sb_tr_cost scratch; /* when the cache cannot grow */
} sb_tr_costs;

/* The hash of a (name, signature) key. */
static inline size_t sb_tr_key_hash(int32_t name, int32_t sig)
{
    return ((size_t)(uint32_t)name * 2654435761u) ^
           ((size_t)(uint32_t)sig * 40503u);
}

/* The cost of an event's op, computed once per (name, signature). The
 * pointer holds until the next call. */
const sb_tr_cost *sb_tr_cost_of(sb_tr_costs *x, const sb_tr_event *e);
/* Whether a cost comes from a FLOP/byte rule. */
bool sb_tr_ruled(const sb_tr_cost *c);
/* Orders indices of the events of `arg` (an sb_trace) by track, then
 * start, the enclosing one first (qsort_r). */
int sb_tr_cmp_start(const void *pa, const void *pb, void *arg);

/* ---- the host operators and the instances -------------------------------- */

typedef struct sb_tr_work {
    size_t *ord; /* host ops in nesting order */
    size_t nord;
    int64_t *parent; /* per host op (index into ord), -1 */
    int64_t *owner;  /* per host op: index into ord of its owner */
    bool *wrap;      /* per host op: has ruled ops below */
    size_t *pos;     /* event index -> position in ord (SIZE_MAX) */
    sb_tr_inst *in;
    size_t nin, incap;
    sb_tr_ivl *busy, *comm, *work;
    size_t nbusy, ncomm, nwork;
    size_t cbusy, ccomm, cwork;
} sb_tr_work;

/* Nesting of the host operators, wrappers and owners (trace_ops.c);
 * a->n_overlapping counts the operators that overlap a sibling partly.
 * 0 or SB_ENOMEM. */
int sb_tr_host_tree(sb_tr_costs *x, sb_tr_work *w, sb_tr_analysis *a);
void sb_tr_work_free(sb_tr_work *w);

/* Whether the trace has device work (kernels, copies, sets; a JAX
 * device's ops) to analyse (trace_join.c). */
bool sb_tr_device_side(const sb_trace *t);
/* The instances of the host's operators that start in the window v, and
 * their busy time. 0 or SB_ENOMEM. */
int sb_tr_host_insts(sb_tr_costs *x, sb_tr_work *w, const sb_tr_win *v);
/* The instances of the device's work, each joined to the operator that
 * launched it, their busy time and communication; *v becomes the span
 * of the device's work analysed unless the device has steps. 0 or
 * SB_ENOMEM. */
int sb_tr_device_insts(sb_tr_costs *x, sb_tr_work *w, sb_tr_win *v);

/* ---- the timeline (trace_timeline.c) ------------------------------------ */

/* Appends [a, b) to v[0..*n) (capacity *cap). 0 or SB_ENOMEM. */
int sb_tr_push_ivl(sb_tr_ivl **v, size_t *n, size_t *cap, double a, double b);
/* Steps and the window, from step annotations on one side. */
sb_tr_win sb_tr_steps(const sb_trace *t, bool device, int *nsteps);
/* The window's busy time, idle gaps and communication overlap into a
 * (a->n_steps set); merges w->busy. */
void sb_tr_timeline(sb_tr_work *w, const sb_tr_win *v, sb_tr_analysis *a);

/* ---- the rows (trace_rows.c) -------------------------------------------- */

/* What the rows' hash and the kernel column need beside a row. */
typedef struct sb_tr_rowkey {
    int32_t name, sig; /* the key; sig -2: a wrapper's self time */
    int32_t kname;     /* the longest kernel seen, -1 */
    double kdur;       /* its duration */
    /* its instances' own costs summed: one name and signature may still
     * differ in size from one instance to the next (copies, memsets, NCCL
     * kernels carry their bytes in their arguments), so a row is costed
     * per instance, never as the first one's times the count */
    double fl, by, bmin, bmax;
} sb_tr_rowkey;

typedef struct sb_tr_rowmap {
    sb_tr_row *rows;
    sb_tr_rowkey *key; /* one per row */
    size_t n, cap;
    size_t *h;
    size_t hcap;
} sb_tr_rowmap;

/* Sums the instances (annotated) into rows; each instance's row is set.
 * 0 or SB_ENOMEM. */
int sb_tr_rows_sum(sb_tr_rowmap *m, const sb_trace *t, sb_tr_work *w);
/* Each row's mean instance, dtype, kernel and phase, and its place under
 * the ceilings c. */
void sb_tr_rows_finish(sb_tr_rowmap *m, const sb_trace *t,
                       const sb_ceilings *c);

#endif
