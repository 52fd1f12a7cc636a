/*
 * trace_analyze.c — a trace's op instances on the roofline (docs/TRACE.md).
 *
 * 1. Host operators are nested per thread (a stack over events sorted by
 *    start). An operator with a FLOP/byte rule and no ruled operator
 *    below it owns its whole subtree (aten::addmm and what it calls); an
 *    operator with ruled ones below it (aten::linear over aten::addmm) is
 *    a wrapper and keeps only its self time, so nothing is counted twice.
 * 2. The side analysed: the device's kernels, copies and sets when the
 *    trace has them (joined to the operator that launched them through
 *    "External id", else "correlation" and the runtime call), else the
 *    host's operators.
 * 3. Instances are summed into rows (operator and shape signature), each
 *    placed under the binding ceiling of the machine model; phases group
 *    rows by user annotation and by solbench's phase names; the timeline
 *    gives idle gaps and the overlap of communication with other work.
 */
#define _GNU_SOURCE /* qsort_r */
#include <ctype.h>
#include <math.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "solbench/hw.h"
#include "solbench/netmodel.h"
#include "solbench/trace.h"

/* An instance whose time at its ceiling is under this cannot reach the
 * roof: one operator dispatch or kernel launch costs more. */
#define LAT_CEIL_S 1e-6
/* A child may end this much after its parent (the profiler's rounding). */
#define NEST_TOL_US 0.05
/* Idle gaps shorter than this are not counted as gaps. */
#define GAP_MIN_US 1.0

typedef struct inst {
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
} inst;

typedef struct ivl {
    double a, b;
} ivl;

typedef struct cost_cache {
    int32_t name, sig;
    sb_tr_cost cost;
    bool used;
} cost_cache;

typedef struct ctx {
    const sb_trace *t;
    cost_cache *cc;
    size_t ccap, cn;
    sb_tr_cost scratch; /* when the cache cannot grow */
} ctx;

static size_t cc_hash(int32_t name, int32_t sig)
{
    return ((size_t)(uint32_t)name * 2654435761u) ^
           ((size_t)(uint32_t)sig * 40503u);
}

/* Doubles the cache; false when out of memory. */
static bool cc_grow(ctx *x)
{
    size_t cap = x->ccap * 2;
    cost_cache *n = calloc(cap, sizeof *n);
    if (!n)
        return false;
    for (size_t i = 0; i < x->ccap; i++) {
        if (!x->cc[i].used)
            continue;
        size_t k = cc_hash(x->cc[i].name, x->cc[i].sig) & (cap - 1);
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

/* The cost of an event's op, computed once per (name, signature). The
 * pointer holds until the next call. */
static const sb_tr_cost *cost_of(ctx *x, const sb_tr_event *e)
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
    for (size_t k = cc_hash(e->name, e->sig) & (x->ccap - 1);;
         k = (k + 1) & (x->ccap - 1)) {
        cost_cache *c = &x->cc[k];
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

static int cmp_start(const void *pa, const void *pb, void *arg)
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

static int cmp_ivl(const void *pa, const void *pb)
{
    const ivl *a = pa, *b = pb;
    return (a->a > b->a) - (a->a < b->a);
}

/* Merges intervals in place; returns the count. */
static size_t merge(ivl *v, size_t n)
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
static double covered(const ivl *u, size_t n, double a, double b)
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

static bool ruled(const sb_tr_cost *c)
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

/* ---- the rows ------------------------------------------------------------ */

/* "[[[2,16,64],[192,64],[]],["float",...]]" -> "2x16x64 192x64"; other
 * signatures (HLO text) as they are. */
static void pretty_shapes(const char *sig, char *out, size_t len)
{
    snprintf(out, len, "%s", sig);
    if (strncmp(sig, "[[", 2) != 0)
        return;
    json_t *j = json_loads(sig, 0, NULL);
    json_t *dims = json_array_get(j, 0);
    if (!json_is_array(dims)) {
        json_decref(j);
        return;
    }
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < json_array_size(dims) && n + 1 < len; i++) {
        json_t *d = json_array_get(dims, i);
        if (!json_is_array(d) || json_array_size(d) == 0)
            continue;
        if (n && n + 1 < len)
            out[n++] = ' ';
        for (size_t k = 0; k < json_array_size(d) && n + 1 < len; k++) {
            int w =
                snprintf(out + n, len - n, "%s%lld", k ? "x" : "",
                         (long long)json_number_value(json_array_get(d, k)));
            n += w > 0 ? (size_t)w : 0;
            if (n >= len)
                n = len - 1;
        }
    }
    out[n] = '\0';
    json_decref(j);
}

/* What the rows' hash and the kernel column need beside a row. */
typedef struct rowkey {
    int32_t name, sig; /* the key; sig -2: a wrapper's self time */
    int32_t kname;     /* the longest kernel seen, -1 */
    double kdur;       /* its duration */
    /* its instances' own costs summed: one name and signature may still
     * differ in size from one instance to the next (copies, memsets, NCCL
     * kernels carry their bytes in their arguments), so a row is costed
     * per instance, never as the first one's times the count */
    double fl, by, bmin, bmax;
} rowkey;

typedef struct rowmap {
    sb_tr_row *rows;
    rowkey *key; /* one per row */
    size_t n, cap;
    size_t *h;
    size_t hcap;
} rowmap;

/* A row whose instances differ in size says so: "allreduce, 15 instances
 * of 8.19 KB to 26.5 MB, 306.7 MB in all, over 8". */
static void size_label(sb_tr_row *r, const rowkey *kk)
{
    char lo[32], hi[32], all[32];
    sb_fmt_si(kk->bmin, "B", 3, lo, sizeof lo);
    sb_fmt_si(kk->bmax, "B", 3, hi, sizeof hi);
    sb_fmt_si(kk->by, "B", 4, all, sizeof all);
    if (r->cost.cat == SB_TC_COLLECTIVE)
        snprintf(r->shapes, sizeof r->shapes,
                 "%s, %ld instances of %s to %s, %s in all, over %d%s%s",
                 r->cost.coll, r->count, lo, hi, all, r->cost.group,
                 r->cost.dtype[0] ? ", " : "", r->cost.dtype);
    else if (!r->shapes[0] || r->cost.cat == SB_TC_TRANSFER ||
             r->cost.cat == SB_TC_COPY)
        snprintf(r->shapes, sizeof r->shapes,
                 "%ld instances of %s to %s, %s in all", r->count, lo, hi, all);
}

static long row_of(rowmap *m, const ctx *x, const inst *in)
{
    if ((m->n + 1) * 2 > m->hcap) {
        size_t cap = m->hcap ? m->hcap * 2 : 256;
        size_t *h = malloc(cap * sizeof *h);
        if (!h)
            return -1;
        for (size_t i = 0; i < cap; i++)
            h[i] = SIZE_MAX;
        for (size_t i = 0; i < m->n; i++) {
            size_t k = cc_hash(m->key[i].name, m->key[i].sig) & (cap - 1);
            while (h[k] != SIZE_MAX)
                k = (k + 1) & (cap - 1);
            h[k] = i;
        }
        free(m->h);
        m->h = h;
        m->hcap = cap;
    }
    int32_t sig = in->wrapper ? -2 : in->sig;
    size_t k = cc_hash(in->name, sig) & (m->hcap - 1);
    for (; m->h[k] != SIZE_MAX; k = (k + 1) & (m->hcap - 1)) {
        size_t i = m->h[k];
        if (m->key[i].name == in->name && m->key[i].sig == sig)
            return (long)i;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 128;
        sb_tr_row *r = realloc(m->rows, cap * sizeof *r);
        if (!r)
            return -1;
        m->rows = r;
        rowkey *k2 = realloc(m->key, cap * sizeof *k2);
        if (!k2)
            return -1;
        m->key = k2;
        m->cap = cap;
    }
    size_t i = m->n++;
    m->h[k] = i;
    m->key[i] = (rowkey){in->name, sig, -1, 0, 0, 0, INFINITY, 0};
    sb_tr_row *r = &m->rows[i];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", sb_trace_str(x->t, in->name));
    sb_utf8_trim(r->name);
    if (in->wrapper) {
        snprintf(r->shapes, sizeof r->shapes, "(self time)");
        r->cost.cat = SB_TC_FRAMEWORK;
    } else {
        if (in->cost.cat == SB_TC_COLLECTIVE && in->cost.bytes <= 0)
            snprintf(r->shapes, sizeof r->shapes, "%s (size not recorded)",
                     in->cost.coll);
        else if (in->cost.cat == SB_TC_COLLECTIVE)
            snprintf(r->shapes, sizeof r->shapes, "%s of %.0f B over %d%s%s",
                     in->cost.coll, in->cost.bytes, in->cost.group,
                     in->cost.dtype[0] ? ", " : "", in->cost.dtype);
        else if (in->sig >= 0)
            pretty_shapes(sb_trace_str(x->t, in->sig), r->shapes,
                          sizeof r->shapes);
        sb_utf8_trim(r->shapes);
        r->cost = in->cost;
    }
    return (long)i;
}

/* ---- joins ------------------------------------------------------------------
 * Events keyed by an id that may repeat (correlation ids and External ids
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

static bool has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (strncasecmp(s, w, n) == 0)
            return true;
    return false;
}

/* The dtype a kernel's name says, for ops recorded without types (Nsight
 * Systems' NVTX ranges): "bf16", "f16"/"fp16"/"half", "e4m3"/"fp8",
 * "tf32", "f64"/"double"; "" when it says none. */
static void dtype_of_kernel(const char *k, char *dt, size_t len)
{
    /* fp8 first: an fp8 GEMM's name also names its bf16 output */
    static const char *const m[][2] = {
        {"e4m3", "fp8"},   {"e5m2", "fp8"},      {"fp8", "fp8"},
        {"bf16", "bf16"},  {"bfloat16", "bf16"}, {"tf32", "tf32"},
        {"f16", "fp16"},   {"half", "fp16"},     {"f64", "fp64"},
        {"double", "fp64"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (has_word(k, m[i][0])) {
            snprintf(dt, len, "%s", m[i][1]);
            return;
        }
}

static const char *phase_of(const sb_tr_cost *c, const char *annot)
{
    switch (c->cat) {
    case SB_TC_ATTENTION:
    case SB_TC_SOFTMAX:
        return "attention";
    case SB_TC_NORM:
        return "norms";
    case SB_TC_COLLECTIVE:
        return "communication";
    case SB_TC_TRANSFER:
        return "host transfer";
    case SB_TC_EMBEDDING:
        return "embedding";
    case SB_TC_COPY:
        return "copies";
    case SB_TC_FRAMEWORK:
        return "framework";
    case SB_TC_UNKNOWN:
        return "unclassified";
    case SB_TC_REDUCE:
        return "reductions";
    case SB_TC_MATMUL:
    case SB_TC_CONV:
    case SB_TC_ELEMWISE:
    default:
        if (has_word(annot, "attn") || has_word(annot, "attention"))
            return "attention";
        if (has_word(annot, "mlp") || has_word(annot, "ffn") ||
            has_word(annot, "moe") || has_word(annot, "expert"))
            return "mlp";
        return c->cat == SB_TC_ELEMWISE ? "elementwise" : "matmul";
    }
}

/* ---- placement -------------------------------------------------------------
 */

static void place(sb_tr_row *r, const sb_ceilings *c)
{
    double mean = r->count ? r->t_s / r->count : 0;
    const sb_tr_cost *k = &r->cost;
    r->bound = SB_BOUND_UNKNOWN;
    r->flops = k->flops * r->count;
    r->bytes = k->bytes * r->count;
    r->ai = k->bytes > 0 ? k->flops / k->bytes : 0;
    snprintf(r->cls, sizeof r->cls, "-");
    if (k->cat == SB_TC_UNKNOWN) {
        snprintf(r->cls, sizeof r->cls, "unclassified");
        return;
    }
    if (k->cat == SB_TC_FRAMEWORK) {
        /* no data moved: all of its time is dispatch */
        r->bound = SB_BOUND_LATENCY;
        snprintf(r->cls, sizeof r->cls, "latency");
        r->at_stake_s = r->t_s;
        return;
    }
    if (mean <= 0)
        return;
    double ceil = 0, t1 = 0;
    if (k->cat == SB_TC_COLLECTIVE && k->bytes <= 0) {
        /* no message size recorded (an Nsight Systems export): timed,
         * counted as communication, not placed */
        r->bound = SB_BOUND_NETWORK;
        snprintf(r->cls, sizeof r->cls, "network");
        return;
    }
    if (k->cat == SB_TC_COLLECTIVE) {
        int op = sb_netop_from_name(k->coll);
        int g = k->group > 0 ? k->group : 2;
        double f = op >= 0 ? sb_net_busbw_factor((sb_netop)op, g) : 1;
        r->achieved = r->busbw = k->bytes * f / mean;
        char nm[40];
        snprintf(nm, sizeof nm, "net.%s.beta_Bps", k->coll);
        ceil = sb_ceil_get(c, nm);
        if (ceil <= 0) {
            double dom = sb_ceil_get(c, "net.scaleup.domain");
            snprintf(nm, sizeof nm, "%s",
                     dom <= 0 || g <= dom ? "net.scaleup.beta_Bps"
                                          : "net.scaleout.beta_Bps");
            ceil = sb_ceil_get(c, nm);
        }
        snprintf(r->ceiling, sizeof r->ceiling, "%s", nm);
        r->bound = SB_BOUND_NETWORK;
        snprintf(r->cls, sizeof r->cls, "network");
        if (ceil > 0)
            t1 = k->bytes * f / ceil;
    } else if (k->cat == SB_TC_TRANSFER) {
        r->achieved = k->bytes / mean;
        ceil = sb_ceil_get(c, "host.h2d");
        snprintf(r->ceiling, sizeof r->ceiling, "host.h2d");
        r->bound = SB_BOUND_HOST;
        snprintf(r->cls, sizeof r->cls, "host");
        if (ceil > 0)
            t1 = k->bytes / ceil;
    } else {
        const char *pn = NULL, *bn = NULL;
        double peak = sb_ceil_peak(c, k->dtype[0] ? k->dtype : "fp32", &pn);
        double bw = sb_ceil_main_bw(c, &bn);
        sb_roof_point p;
        if (k->flops <= 0 && bw > 0) {
            r->achieved = k->bytes / mean;
            ceil = bw;
            t1 = k->bytes / bw;
            r->bound = SB_BOUND_MEMORY;
            snprintf(r->ceiling, sizeof r->ceiling, "%s", bn);
        } else if (k->flops > 0 && peak > 0 && !(bw > 0)) {
            /* a machine model without a bandwidth (a GEMM run alone):
             * the compute roof only */
            r->achieved = k->flops / mean;
            ceil = peak;
            t1 = k->flops / peak;
            r->bound = SB_BOUND_COMPUTE;
            snprintf(r->ceiling, sizeof r->ceiling, "%s", pn);
        } else if (sb_roofline_place(k->flops, k->bytes, mean, peak, bw, &p) ==
                   0) {
            r->achieved = p.achieved;
            ceil = p.attainable;
            r->bound = p.bound;
            t1 = k->flops / peak;
            if (bw > 0 && k->bytes / bw > t1)
                t1 = k->bytes / bw;
            snprintf(r->ceiling, sizeof r->ceiling, "%s",
                     p.bound == SB_BOUND_COMPUTE ? pn : bn);
        } else {
            return;
        }
        snprintf(r->cls, sizeof r->cls, "%s", sb_bound_name(r->bound));
    }
    if (ceil > 0) {
        r->attainable = ceil;
        r->pct_sol = 100 * r->achieved / ceil;
        r->t_ceil_s = t1 * r->count;
        r->at_stake_s = r->t_s > r->t_ceil_s ? r->t_s - r->t_ceil_s : 0;
        if (t1 < LAT_CEIL_S && r->pct_sol < 50) {
            r->bound = SB_BOUND_LATENCY;
            snprintf(r->cls, sizeof r->cls, "latency");
        }
    }
}

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

typedef struct work {
    size_t *ord; /* host ops in nesting order */
    size_t nord;
    int64_t *parent; /* per host op (index into ord), -1 */
    int64_t *owner;  /* per host op: index into ord of its owner */
    bool *wrap;      /* per host op: has ruled ops below */
    size_t *pos;     /* event index -> position in ord (SIZE_MAX) */
    inst *in;
    size_t nin, incap;
    ivl *busy, *comm, *work;
    size_t nbusy, ncomm, nwork;
    size_t cbusy, ccomm, cwork;
} work;

static int push_inst(work *w, const inst *x)
{
    if (w->nin == w->incap) {
        size_t cap = w->incap ? w->incap * 2 : 1024;
        inst *p = realloc(w->in, cap * sizeof *p);
        if (!p)
            return SB_ENOMEM;
        w->in = p;
        w->incap = cap;
    }
    w->in[w->nin++] = *x;
    return 0;
}

static void work_free(work *w)
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

/* Nesting of the host operators, wrappers and owners (step 1). */
static int host_tree(ctx *x, work *w, sb_tr_analysis *a)
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
    qsort_r(w->ord, n, sizeof *w->ord, cmp_start, (void *)t);
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
        int r = rank_of(cost_of(x, &t->ev[w->ord[k]]));
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
        else if (p >= 0 && !w->wrap[p] && ruled(cost_of(x, &t->ev[w->ord[p]])))
            w->owner[k] = p;
        else
            w->owner[k] = (int64_t)k;
    }
    return 0;
}

static double self_time(const sb_trace *t, const work *w, size_t k,
                        const double *child)
{
    double s = t->ev[w->ord[k]].dur - child[k];
    return s > 0 ? s : 0;
}

typedef struct win {
    double a, b; /* µs */
    bool set;
} win;

static bool in_win(const win *v, const sb_tr_event *e)
{
    return !v->set || (e->ts >= v->a && e->ts < v->b);
}

static int push_ivl(ivl **v, size_t *n, size_t *cap, double a, double b)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        ivl *p = realloc(*v, c * sizeof *p);
        if (!p)
            return SB_ENOMEM;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = (ivl){a, b};
    return 0;
}

/* Steps and the window, from step annotations on one side. */
static win steps(const sb_trace *t, bool device, int *nsteps)
{
    /* the window spans every step event; the count is the most on any
     * one track (Kineto writes a device's ProfilerStep#N once per stream,
     * JAX a step once per device) */
    win v = {0};
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

static bool jax_op_track(const sb_trace *t, int32_t tr, bool *has_ops_line)
{
    const sb_tr_track *k = &t->tracks[tr];
    const char *tn = sb_trace_str(t, k->tname);
    if (strstr(tn, "XLA Ops") || strstr(tn, "TPU Ops"))
        return true;
    return !has_ops_line[tr];
}

int sb_trace_analyze(const sb_trace *t, const sb_ceilings *c, sb_tr_analysis *a,
                     sb_err *err)
{
    memset(a, 0, sizeof *a);
    if (c)
        snprintf(a->hw_kind, sizeof a->hw_kind, "%s", c->kind);
    ctx x = {.t = t};
    x.ccap = 1024;
    x.cc = calloc(x.ccap, sizeof *x.cc);
    work w = {0};
    annots an = {0};
    rowmap m = {0};
    bool *ops_line = NULL;
    double *child = NULL;
    int rc = SB_ENOMEM;
    if (!x.cc)
        goto out;
    if ((rc = host_tree(&x, &w, a)))
        goto out;
    rc = SB_ENOMEM;

    /* which side: device when it has work */
    ops_line = calloc(t->ntracks ? t->ntracks : 1, sizeof *ops_line);
    if (!ops_line)
        goto out;
    for (size_t i = 0; i < t->ntracks; i++) {
        const char *tn = sb_trace_str(t, t->tracks[i].tname);
        if (t->tracks[i].device &&
            (strstr(tn, "XLA Ops") || strstr(tn, "TPU Ops")))
            for (size_t k = 0; k < t->ntracks; k++)
                if (t->tracks[k].pid == t->tracks[i].pid)
                    ops_line[k] = true;
    }
    for (size_t i = 0; i < t->n && !a->device; i++) {
        const sb_tr_event *e = &t->ev[i];
        a->device = t->tracks[e->track].device &&
                    (e->kind == SB_TK_KERNEL || e->kind == SB_TK_MEMCPY ||
                     e->kind == SB_TK_MEMSET ||
                     (t->format == SB_TR_JAX && e->kind == SB_TK_OTHER));
    }

    /* the window */
    int ns;
    win v = steps(t, a->device, &ns);
    if (!ns && a->device)
        v = steps(t, false, &ns);
    a->n_steps = ns;

    /* annotations for the phase lookup */
    an.idx = malloc((t->n ? t->n : 1) * sizeof *an.idx);
    if (!an.idx)
        goto out;
    for (size_t i = 0; i < t->n; i++)
        if ((t->ev[i].kind == SB_TK_ANNOT ||
             t->ev[i].kind == SB_TK_GPU_ANNOT) &&
            !(t->ev[i].flags & SB_TEF_STEP))
            an.idx[an.n++] = i;
    qsort_r(an.idx, an.n, sizeof *an.idx, cmp_start, (void *)t);

    if (!a->device) {
        /* host: owners take their subtree; the rest their self time */
        child = calloc(w.nord ? w.nord : 1, sizeof *child);
        if (!child)
            goto out;
        for (size_t k = 0; k < w.nord; k++)
            if (w.parent[k] >= 0)
                child[w.parent[k]] += t->ev[w.ord[k]].dur;
        for (size_t k = 0; k < w.nord; k++) {
            const sb_tr_event *e = &t->ev[w.ord[k]];
            if (w.owner[k] != (int64_t)k)
                continue; /* absorbed by its owner */
            /* only what starts in the window; nested ops follow their
             * top-level op */
            int64_t top = (int64_t)k;
            while (w.parent[top] >= 0)
                top = w.parent[top];
            if (!in_win(&v, &t->ev[w.ord[top]]))
                continue;
            const sb_tr_cost *co = cost_of(&x, e);
            bool leaf = !w.wrap[k] && ruled(co);
            inst in = {.name = e->name,
                       .sig = e->sig,
                       .kname = -1,
                       .at_us = e->ts,
                       .atrack = e->track,
                       .cost = *co,
                       .wrapper = w.wrap[k]};
            in.t_us = leaf ? e->dur : self_time(t, &w, k, child);
            if (in.wrapper)
                memset(&in.cost, 0, sizeof in.cost);
            if (push_inst(&w, &in))
                goto out;
            if (w.parent[k] < 0 &&
                push_ivl(&w.busy, &w.nbusy, &w.cbusy, e->ts, e->ts + e->dur))
                goto out;
        }
    } else {
        /* device: kernels joined to their launching operator's owner,
         * only where the times agree: a correlation id and an External id
         * restart per process (and per rank of merged traces), so of the
         * events sharing one the launch is the last before the kernel,
         * and the operator is one whose span holds that launch (or that
         * started before the kernel, when no launch is known) */
        size_t nrt = 0, nex = 0;
        for (size_t i = 0; i < t->n; i++)
            nrt += t->ev[i].kind == SB_TK_RUNTIME && t->ev[i].corr >= 0;
        for (size_t k = 0; k < w.nord; k++)
            nex += t->ev[w.ord[k]].ext >= 0;
        keyed *by_corr = malloc((nrt ? nrt : 1) * sizeof *by_corr);
        keyed *by_ext = malloc((nex ? nex : 1) * sizeof *by_ext);
        if (!by_ext || !by_corr) {
            free(by_ext);
            free(by_corr);
            goto out;
        }
        nrt = nex = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->ev[i].kind == SB_TK_RUNTIME && t->ev[i].corr >= 0)
                by_corr[nrt++] =
                    (keyed){t->ev[i].corr, t->ev[i].ts,
                            t->ev[i].ts + t->ev[i].dur, (int64_t)i};
        for (size_t k = 0; k < w.nord; k++) {
            const sb_tr_event *oe = &t->ev[w.ord[k]];
            if (oe->ext >= 0)
                by_ext[nex++] =
                    (keyed){oe->ext, oe->ts, oe->ts + oe->dur, (int64_t)k};
        }
        qsort(by_corr, nrt, sizeof *by_corr, cmp_keyed);
        qsort(by_ext, nex, sizeof *by_ext, cmp_keyed);
        /* per launching op: index into the instances */
        int64_t *inst_of = malloc((w.nord ? w.nord : 1) * sizeof *inst_of);
        if (!inst_of) {
            free(by_ext);
            free(by_corr);
            goto out;
        }
        for (size_t k = 0; k < w.nord; k++)
            inst_of[k] = -1;
        win dv = {0};
        bool dsteps = false;
        for (size_t i = 0; i < t->n; i++) {
            const sb_tr_event *e = &t->ev[i];
            if ((e->flags & SB_TEF_STEP) && t->tracks[e->track].device)
                dsteps = true;
        }
        for (size_t i = 0; i < t->n; i++) {
            const sb_tr_event *e = &t->ev[i];
            if (!t->tracks[e->track].device)
                continue;
            bool jaxop = t->format == SB_TR_JAX && e->kind == SB_TK_OTHER &&
                         !(e->flags & SB_TEF_STEP) &&
                         jax_op_track(t, e->track, ops_line);
            if (e->kind != SB_TK_KERNEL && e->kind != SB_TK_MEMCPY &&
                e->kind != SB_TK_MEMSET && !jaxop)
                continue;
            /* the launching runtime call and operator */
            const sb_tr_event *rt = NULL;
            int64_t ext = e->ext;
            if (e->corr >= 0) {
                /* the last launch with this id at or before the kernel */
                int64_t ri = keyed_last(by_corr, nrt, e->corr, e->ts, false);
                if (ri >= 0) {
                    rt = &t->ev[ri];
                    if (ext < 0)
                        ext = rt->ext;
                }
            }
            int64_t op = -1;
            if (ext >= 0) {
                /* the innermost operator with this id that holds the
                 * launch (or began before the kernel) */
                int64_t k = keyed_last(by_ext, nex, ext, rt ? rt->ts : e->ts,
                                       rt != NULL);
                if (k >= 0)
                    op = w.owner[k];
            }
            /* the window: device steps, else launched within the host's */
            if (dsteps || !v.set) {
                if (!in_win(&v, e))
                    continue;
            } else {
                double when = rt        ? rt->ts
                              : op >= 0 ? t->ev[w.ord[op]].ts
                                        : e->ts;
                if (when < v.a || when >= v.b)
                    continue;
            }
            if (!dv.set || e->ts < dv.a)
                dv.a = e->ts;
            if (!dv.set || e->ts + e->dur > dv.b)
                dv.b = e->ts + e->dur;
            dv.set = true;
            if (push_ivl(&w.busy, &w.nbusy, &w.cbusy, e->ts, e->ts + e->dur))
                goto dev_fail;
            inst in = {.name = e->name,
                       .sig = e->sig,
                       .kname = -1,
                       .t_us = e->dur,
                       .at_us = e->ts,
                       .atrack = e->track};
            if (e->coll >= 0) {
                in.cost = *cost_of(&x, e);
                in.kname = e->name;
                in.kdur = e->dur;
                if (op >= 0) /* the row keeps the kernel's name */
                    in.at_us = t->ev[w.ord[op]].ts,
                    in.atrack = t->ev[w.ord[op]].track;
                if (push_ivl(&w.comm, &w.ncomm, &w.ccomm, e->ts,
                             e->ts + e->dur))
                    goto dev_fail;
            } else if (e->kind == SB_TK_MEMCPY || e->kind == SB_TK_MEMSET) {
                const char *nm = sb_trace_str(t, e->name);
                bool h2d = strstr(nm, "HtoD") || strstr(nm, "DtoH") ||
                           strstr(nm, "HtoH");
                in.cost.cat = e->kind == SB_TK_MEMCPY && h2d ? SB_TC_TRANSFER
                                                             : SB_TC_COPY;
                in.cost.bytes =
                    e->aux * (e->kind == SB_TK_MEMCPY && !h2d ? 2 : 1);
                /* one row per direction, whatever the size */
                in.sig = -1;
                if (push_ivl(&w.work, &w.nwork, &w.cwork, e->ts,
                             e->ts + e->dur))
                    goto dev_fail;
            } else if (jaxop) {
                in.cost = *cost_of(&x, e);
                if (in.cost.cat == SB_TC_COLLECTIVE) {
                    if (push_ivl(&w.comm, &w.ncomm, &w.ccomm, e->ts,
                                 e->ts + e->dur))
                        goto dev_fail;
                } else if (push_ivl(&w.work, &w.nwork, &w.cwork, e->ts,
                                    e->ts + e->dur)) {
                    goto dev_fail;
                }
            } else {
                if (push_ivl(&w.work, &w.nwork, &w.cwork, e->ts,
                             e->ts + e->dur))
                    goto dev_fail;
                if (op >= 0) {
                    /* one instance per launching operator */
                    const sb_tr_event *oe = &t->ev[w.ord[op]];
                    if (inst_of[op] >= 0) {
                        inst *p = &w.in[inst_of[op]];
                        p->t_us += e->dur;
                        if (e->dur > p->kdur) {
                            p->kdur = e->dur;
                            p->kname = e->name;
                        }
                        continue;
                    }
                    in.name = oe->name;
                    in.sig = oe->sig;
                    in.cost = *cost_of(&x, oe);
                    if (w.wrap[op])
                        memset(&in.cost, 0, sizeof in.cost);
                    in.at_us = oe->ts;
                    in.atrack = oe->track;
                    inst_of[op] = (int64_t)w.nin;
                }
                in.kname = e->name;
                in.kdur = e->dur;
            }
            if (push_inst(&w, &in))
                goto dev_fail;
            continue;
        dev_fail:
            free(by_ext);
            free(by_corr);
            free(inst_of);
            goto out;
        }
        free(by_ext);
        free(by_corr);
        free(inst_of);
        if (!v.set || !dsteps)
            v = dv;
    }

    /* the timeline: busy, idle gaps, communication overlap */
    w.nbusy = merge(w.busy, w.nbusy);
    double lo = v.set ? v.a : 0, hi = v.set ? v.b : 0;
    if (!v.set && w.nbusy) {
        lo = w.busy[0].a;
        hi = w.busy[w.nbusy - 1].b;
    }
    for (size_t i = 0; i < w.nbusy; i++) {
        double aa = w.busy[i].a > lo ? w.busy[i].a : lo;
        double bb = w.busy[i].b < hi ? w.busy[i].b : hi;
        if (bb > aa)
            a->busy_s += (bb - aa) * 1e-6;
        double gap_end = i + 1 < w.nbusy ? w.busy[i + 1].a : hi;
        double g = (gap_end < hi ? gap_end : hi) -
                   (w.busy[i].b > lo ? w.busy[i].b : lo);
        if (i == 0 && w.busy[0].a - lo >= GAP_MIN_US) {
            a->n_gaps++;
            if ((w.busy[0].a - lo) * 1e-6 > a->max_gap_s)
                a->max_gap_s = (w.busy[0].a - lo) * 1e-6;
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
    if (w.ncomm) {
        size_t nw = merge(w.work, w.nwork);
        size_t nc = merge(w.comm, w.ncomm);
        for (size_t i = 0; i < nc; i++) {
            a->comm_s += (w.comm[i].b - w.comm[i].a) * 1e-6;
            a->comm_overlap_s +=
                covered(w.work, nw, w.comm[i].a, w.comm[i].b) * 1e-6;
        }
    }

    /* rows */
    for (size_t i = 0; i < w.nin; i++) {
        inst *in = &w.in[i];
        long r = row_of(&m, &x, in);
        if (r < 0)
            goto out;
        in->row = r;
        in->annot = annot_at(t, &an, in->atrack, in->at_us);
        /* a JAX op: its named scope, from the module's metadata (by
         * its name, else its signature) */
        for (int ki = 0; !in->annot[0] && t->hlo_scope && ki < 2; ki++) {
            int32_t hk = ki ? in->sig : in->name;
            if (hk >= 0 && (size_t)hk < t->nhlo && t->hlo_scope[hk] >= 0)
                in->annot = sb_trace_str(t, t->hlo_scope[hk]);
        }
        sb_tr_row *row = &m.rows[r];
        if (row->count == 0) {
            snprintf(row->annot, sizeof row->annot, "%s", in->annot);
            sb_utf8_trim(row->annot);
            if (row->cost.cat == SB_TC_COLLECTIVE && in->kname >= 0)
                snprintf(row->name, sizeof row->name, "%s",
                         sb_trace_str(t, in->kname));
        } else if (strncmp(row->annot, in->annot, sizeof row->annot - 1)) {
            snprintf(row->annot, sizeof row->annot, "(several)");
        }
        row->count++;
        row->t_s += in->t_us * 1e-6;
        if (!in->wrapper) {
            rowkey *kk = &m.key[r];
            kk->fl += in->cost.flops;
            kk->by += in->cost.bytes;
            kk->bmin = fmin(kk->bmin, in->cost.bytes);
            kk->bmax = fmax(kk->bmax, in->cost.bytes);
        }
        if (in->kname >= 0 && in->kdur > m.key[r].kdur) {
            m.key[r].kdur = in->kdur;
            m.key[r].kname = in->kname;
        }
    }
    for (size_t i = 0; i < m.n; i++) {
        sb_tr_row *r = &m.rows[i];
        const rowkey *kk = &m.key[i];
        if (m.key[i].sig != -2 && r->count > 0) {
            /* the mean instance: the totals are the instances' own sums */
            r->cost.flops = kk->fl / (double)r->count;
            r->cost.bytes = kk->by / (double)r->count;
            if (kk->bmax > kk->bmin * 1.0001 && kk->bmin < INFINITY)
                size_label(r, kk);
        }
        if (!r->cost.dtype[0] && m.key[i].kname >= 0 &&
            r->cost.cat != SB_TC_UNKNOWN && r->cost.cat != SB_TC_FRAMEWORK) {
            /* no types recorded: the rules counted 4 bytes an element;
             * the kernel's name may say the real size */
            dtype_of_kernel(sb_trace_str(t, m.key[i].kname), r->cost.dtype,
                            sizeof r->cost.dtype);
            int es = sb_tr_dtype_size(r->cost.dtype);
            if (es > 0 && r->cost.cat != SB_TC_TRANSFER &&
                r->cost.cat != SB_TC_COLLECTIVE)
                r->cost.bytes *= es / 4.0;
        }
        if (m.key[i].kname >= 0 && r->cost.cat != SB_TC_COLLECTIVE &&
            strcmp(r->name, sb_trace_str(t, m.key[i].kname)) != 0)
            snprintf(r->kernel, sizeof r->kernel, "%s",
                     sb_trace_str(t, m.key[i].kname));
        sb_utf8_trim(r->kernel);
        snprintf(r->phase, sizeof r->phase, "%s", phase_of(&r->cost, r->annot));
        place(r, c);
        a->op_s += r->t_s;
        if (r->cost.cat == SB_TC_UNKNOWN) {
            a->n_unclassified += r->count;
            a->unclassified_s += r->t_s;
        }
        if (add_group(&a->phases, &a->nphases, r->phase, r, r->t_s, NULL))
            goto out;
    }
    /* annotations: each instance under its own (instances come in runs
     * of one annotation: the last one is tried first) */
    const char *prev = NULL;
    size_t gi = 0;
    for (size_t i = 0; i < w.nin; i++) {
        const inst *in = &w.in[i];
        const sb_tr_row *r = &m.rows[in->row];
        const rowkey *kk = &m.key[in->row];
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
                goto out;
            prev = in->annot;
        }
    }
    if (a->idle_s > 0 &&
        add_group(&a->phases, &a->nphases, "idle", NULL, a->idle_s, NULL))
        goto out;
    a->share_of_s = fmax(a->window_s, a->op_s + a->idle_s);
    double den = a->share_of_s > 0 ? a->share_of_s : 1;
    for (size_t i = 0; i < a->nphases; i++)
        a->phases[i].share = a->phases[i].t_s / den;
    for (size_t i = 0; i < a->nannots; i++)
        a->annots[i].share = a->annots[i].t_s / den;
    if (m.n)
        qsort(m.rows, m.n, sizeof *m.rows, cmp_row);
    if (a->nphases)
        qsort(a->phases, a->nphases, sizeof *a->phases, cmp_group);
    if (a->nannots)
        qsort(a->annots, a->nannots, sizeof *a->annots, cmp_group);
    a->rows = m.rows;
    a->nrows = m.n;
    m.rows = NULL;
    rc = 0;
out:
    if (rc == SB_ENOMEM)
        sb_fail(err, SB_ENOMEM, "%s: out of memory analysing the trace",
                t->label);
    if (rc)
        sb_tr_analysis_free(a);
    free(m.rows);
    free(m.key);
    free(m.h);
    free(child);
    free(ops_line);
    free(an.idx);
    work_free(&w);
    free(x.cc);
    return rc;
}
