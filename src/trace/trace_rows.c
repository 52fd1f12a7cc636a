/*
 * trace_rows.c — the rows of a trace's analysis (trace_analyze.c, step 3):
 * instances summed per operator and shape signature (each costed by its
 * own size), each row's dtype and kernel, its phase by solbench's names,
 * and its place under the binding ceiling of the machine model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "solbench/hw.h"
#include "solbench/netmodel.h"
#include "trace/trace_analyze_int.h"

/* An instance whose time at its ceiling is under this cannot reach the
 * roof: one operator dispatch or kernel launch costs more. */
#define LAT_CEIL_S 1e-6

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

/* A row whose instances differ in size says so: "allreduce, 15 instances
 * of 8.19 KB to 26.5 MB, 306.7 MB in all, over 8". */
static void size_label(sb_tr_row *r, const sb_tr_rowkey *kk)
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

static long row_of(sb_tr_rowmap *m, const sb_trace *t, const sb_tr_inst *in)
{
    if ((m->n + 1) * 2 > m->hcap) {
        size_t cap = m->hcap ? m->hcap * 2 : 256;
        size_t *h = malloc(cap * sizeof *h);
        if (!h)
            return -1;
        for (size_t i = 0; i < cap; i++)
            h[i] = SIZE_MAX;
        for (size_t i = 0; i < m->n; i++) {
            size_t k =
                sb_tr_key_hash(m->key[i].name, m->key[i].sig) & (cap - 1);
            while (h[k] != SIZE_MAX)
                k = (k + 1) & (cap - 1);
            h[k] = i;
        }
        free(m->h);
        m->h = h;
        m->hcap = cap;
    }
    int32_t sig = in->wrapper ? -2 : in->sig;
    size_t k = sb_tr_key_hash(in->name, sig) & (m->hcap - 1);
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
        sb_tr_rowkey *k2 = realloc(m->key, cap * sizeof *k2);
        if (!k2)
            return -1;
        m->key = k2;
        m->cap = cap;
    }
    size_t i = m->n++;
    m->h[k] = i;
    m->key[i] = (sb_tr_rowkey){in->name, sig, -1, 0, 0, 0, INFINITY, 0};
    sb_tr_row *r = &m->rows[i];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", sb_trace_str(t, in->name));
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
            pretty_shapes(sb_trace_str(t, in->sig), r->shapes,
                          sizeof r->shapes);
        sb_utf8_trim(r->shapes);
        r->cost = in->cost;
    }
    return (long)i;
}

/* ---- the dtype and the phase --------------------------------------------- */

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

/* ---- the analysis' rows -------------------------------------------------- */

int sb_tr_rows_sum(sb_tr_rowmap *m, const sb_trace *t, sb_tr_work *w)
{
    for (size_t i = 0; i < w->nin; i++) {
        sb_tr_inst *in = &w->in[i];
        long r = row_of(m, t, in);
        if (r < 0)
            return SB_ENOMEM;
        in->row = r;
        sb_tr_row *row = &m->rows[r];
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
            sb_tr_rowkey *kk = &m->key[r];
            kk->fl += in->cost.flops;
            kk->by += in->cost.bytes;
            kk->bmin = fmin(kk->bmin, in->cost.bytes);
            kk->bmax = fmax(kk->bmax, in->cost.bytes);
        }
        if (in->kname >= 0 && in->kdur > m->key[r].kdur) {
            m->key[r].kdur = in->kdur;
            m->key[r].kname = in->kname;
        }
    }
    return 0;
}

void sb_tr_rows_finish(sb_tr_rowmap *m, const sb_trace *t, const sb_ceilings *c)
{
    for (size_t i = 0; i < m->n; i++) {
        sb_tr_row *r = &m->rows[i];
        const sb_tr_rowkey *kk = &m->key[i];
        if (m->key[i].sig != -2 && r->count > 0) {
            /* the mean instance: the totals are the instances' own sums */
            r->cost.flops = kk->fl / (double)r->count;
            r->cost.bytes = kk->by / (double)r->count;
            if (kk->bmax > kk->bmin * 1.0001 && kk->bmin < INFINITY)
                size_label(r, kk);
        }
        if (!r->cost.dtype[0] && m->key[i].kname >= 0 &&
            r->cost.cat != SB_TC_UNKNOWN && r->cost.cat != SB_TC_FRAMEWORK) {
            /* no types recorded: the rules counted 4 bytes an element;
             * the kernel's name may say the real size */
            dtype_of_kernel(sb_trace_str(t, m->key[i].kname), r->cost.dtype,
                            sizeof r->cost.dtype);
            int es = sb_tr_dtype_size(r->cost.dtype);
            if (es > 0 && r->cost.cat != SB_TC_TRANSFER &&
                r->cost.cat != SB_TC_COLLECTIVE)
                r->cost.bytes *= es / 4.0;
        }
        if (m->key[i].kname >= 0 && r->cost.cat != SB_TC_COLLECTIVE &&
            strcmp(r->name, sb_trace_str(t, m->key[i].kname)) != 0)
            snprintf(r->kernel, sizeof r->kernel, "%s",
                     sb_trace_str(t, m->key[i].kname));
        sb_utf8_trim(r->kernel);
        snprintf(r->phase, sizeof r->phase, "%s", phase_of(&r->cost, r->annot));
        place(r, c);
    }
}
