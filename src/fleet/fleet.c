/*
 * fleet.c — the fleet's diagnosis (include/solbench/fleet.h): each host
 * against its peers of the same class by the median and the MAD, the
 * link matrix summarised per host and each link against its ends, and
 * the round-robin rounds the links are measured in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/fleet.h"
#include "solbench/netmodel.h"
#include "solbench/output.h"
#include "solbench/result.h"

void sb_fleet_rules_default(sb_fleet_rules *r)
{
    r->floor_pct = 10.0;
    r->latency_floor_pct = 25.0;
    r->k_mad = 3.0;
    r->min_peers = 3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n) (sorted in place). */
static double median(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* The bar a value must pass to be flagged: floor, or k times the spread
 * of x[0..n) about m (the MAD scaled to a standard deviation, 1.4826 x
 * MAD), in percent of `of` (x reordered). */
static double bar_of(double *x, size_t n, double m, double of, double floor,
                     double k)
{
    for (size_t i = 0; i < n; i++)
        x[i] = fabs(x[i] - m);
    return fmax(floor, k * 1.4826 * median(x, n) / fabs(of) * 100.0);
}

static int cmp_flag(const void *a, const void *b)
{
    const sb_fleet_flag *x = a, *y = b;
    double dx = fabs(x->deviation_pct), dy = fabs(y->deviation_pct);
    if (dx != dy)
        return dx < dy ? 1 : -1;
    return x->host - y->host;
}

/* Whether value v is worse than the median m by at least bar percent. */
static bool worse(double v, double m, bool higher_better, double bar,
                  double *dev)
{
    *dev = 100.0 * (v - m) / fabs(m);
    return higher_better ? *dev <= -bar : *dev >= bar;
}

int sb_fleet_diagnose(const sb_fleet_host *hosts, int nh,
                      const sb_fleet_value *v, size_t nv,
                      const sb_fleet_rules *r, sb_fleet_flag **out,
                      size_t *nout, sb_err *err)
{
    *out = NULL;
    *nout = 0;
    if (nv == 0)
        return 0;
    /* the values of one metric and class: gathered by a mark per value */
    bool *done = calloc(nv, sizeof *done);
    double *x = malloc(nv * sizeof *x), *d = malloc(nv * sizeof *d);
    size_t *idx = malloc(nv * sizeof *idx);
    size_t cap = 0;
    if (!done || !x || !d || !idx) {
        free(done), free(x), free(d), free(idx);
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < nv && rc == 0; i++) {
        if (done[i])
            continue;
        const sb_fleet_value *a = &v[i];
        if (a->host < 0 || a->host >= nh) {
            rc = sb_fail(err, SB_EINVAL, "fleet: a value of host %d of %d",
                         a->host, nh);
            break;
        }
        size_t n = 0;
        for (size_t j = i; j < nv; j++) {
            const sb_fleet_value *b = &v[j];
            if (done[j] || strcmp(a->metric, b->metric) != 0 || b->host < 0 ||
                b->host >= nh ||
                strcmp(hosts[a->host].cls, hosts[b->host].cls) != 0)
                continue;
            done[j] = true;
            if (hosts[b->host].failed || !isfinite(b->value))
                continue;
            idx[n] = j;
            x[n++] = b->value;
        }
        if (n == 0 || n < (size_t)r->min_peers)
            continue;
        double m = median(x, n);
        if (!(fabs(m) > 0))
            continue;
        for (size_t k = 0; k < n; k++)
            d[k] = v[idx[k]].value;
        double floor =
            v[idx[0]].higher_better ? r->floor_pct : r->latency_floor_pct;
        double bar = bar_of(d, n, m, m, floor, r->k_mad);
        for (size_t k = 0; k < n; k++) {
            const sb_fleet_value *b = &v[idx[k]];
            double dev;
            if (!worse(b->value, m, b->higher_better, bar, &dev))
                continue;
            if (*nout == cap) {
                size_t nc = cap ? 2 * cap : 8;
                sb_fleet_flag *t = realloc(*out, nc * sizeof *t);
                if (!t) {
                    rc = sb_fail(err, SB_ENOMEM, "fleet: out of memory");
                    break;
                }
                *out = t;
                cap = nc;
            }
            sb_fleet_flag *f = &(*out)[(*nout)++];
            memset(f, 0, sizeof *f);
            f->host = b->host;
            memcpy(f->metric, b->metric, sizeof f->metric);
            f->value = b->value;
            f->median = m;
            f->deviation_pct = dev;
            f->threshold_pct = bar;
            f->peers = (int)n;
        }
    }
    free(done), free(x), free(d), free(idx);
    if (rc) {
        free(*out);
        *out = NULL;
        *nout = 0;
        return rc;
    }
    if (*nout > 1)
        qsort(*out, *nout, sizeof **out, cmp_flag);
    return 0;
}

static bool measured(double b)
{
    return isfinite(b) && b > 0;
}

/* The median of host h's measured entries of m (row and column). */
static double host_median(int n, const double *m, int h, double *scratch)
{
    size_t k = 0;
    for (int j = 0; j < n; j++) {
        if (j == h)
            continue;
        if (measured(m[(size_t)h * n + j]))
            scratch[k++] = m[(size_t)h * n + j];
        if (measured(m[(size_t)j * n + h]))
            scratch[k++] = m[(size_t)j * n + h];
    }
    return k ? median(scratch, k) : 0;
}

static int push_value(sb_fleet_value **v, size_t *nv, int h, const char *name,
                      double value, bool higher_better, sb_err *err)
{
    sb_fleet_value *t = realloc(*v, (*nv + 1) * sizeof *t);
    if (!t)
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    *v = t;
    sb_fleet_value *e = &t[(*nv)++];
    memset(e, 0, sizeof *e);
    e->host = h;
    snprintf(e->metric, sizeof e->metric, "%s", name);
    e->value = value;
    e->higher_better = higher_better;
    return 0;
}

int sb_fleet_link_values(int n, const double *bw, const double *lat,
                         sb_fleet_value **v, size_t *nv, sb_err *err)
{
    if (n < 1 || n > SB_FLEET_MAX_HOSTS)
        return sb_fail(err, SB_EINVAL, "fleet: %d hosts (1 to %d)", n,
                       SB_FLEET_MAX_HOSTS);
    double *s = malloc(2 * (size_t)n * sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    int rc = 0;
    for (int h = 0; h < n && rc == 0; h++) {
        double b = host_median(n, bw, h, s);
        if (b > 0)
            rc = push_value(v, nv, h, "links.bw Bps", b, true, err);
        double l = lat ? host_median(n, lat, h, s) : 0;
        if (rc == 0 && l > 0)
            rc = push_value(v, nv, h, "links.latency s", l, false, err);
    }
    free(s);
    return rc;
}

static int cmp_link(const void *a, const void *b)
{
    const sb_fleet_link_flag *x = a, *y = b;
    if (x->deviation_pct != y->deviation_pct)
        return x->deviation_pct < y->deviation_pct ? -1 : 1;
    return x->from != y->from ? x->from - y->from : x->to - y->to;
}

int sb_fleet_diagnose_links(int n, const double *bw, const sb_fleet_rules *r,
                            const sb_fleet_flag *flags, size_t nflags,
                            sb_fleet_link_flag **out, size_t *nout, sb_err *err)
{
    *out = NULL;
    *nout = 0;
    if (n < 2)
        return 0;
    if (n > SB_FLEET_MAX_HOSTS)
        return sb_fail(err, SB_EINVAL, "fleet: %d hosts (at most %d)", n,
                       SB_FLEET_MAX_HOSTS);
    double *med = malloc((size_t)n * sizeof *med),
           *s = malloc(2 * (size_t)n * sizeof *s);
    bool *slow_host = calloc((size_t)n, sizeof *slow_host);
    if (!med || !s || !slow_host) {
        free(med), free(s), free(slow_host);
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    }
    for (int h = 0; h < n; h++)
        med[h] = host_median(n, bw, h, s);
    for (size_t k = 0; k < nflags; k++)
        if (flags[k].host >= 0 && flags[k].host < n &&
            strcmp(flags[k].metric, "links.bw Bps") == 0)
            slow_host[flags[k].host] = true;
    /* the spread of the links between hosts not flagged for their links,
     * each against its reference: on a noisy fabric the bar rises above
     * the floor as the hosts' does (a slow host's links, up to half of
     * a small fleet's, would swamp a spread taken over all) */
    double *d = malloc((size_t)n * n * sizeof *d);
    if (!d) {
        free(med), free(s), free(slow_host);
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    }
    size_t nd = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double b = bw[(size_t)i * n + j], ref = fmax(med[i], med[j]);
            if (i != j && measured(b) && ref > 0 && !slow_host[i] &&
                !slow_host[j])
                d[nd++] = 100.0 * (b - ref) / ref;
        }
    /* the deviations are in percent already: the spread of them, of 100 */
    double bar =
        nd >= 3 ? bar_of(d, nd, median(d, nd), 100.0, r->floor_pct, r->k_mad)
                : r->floor_pct;
    free(d);
    int rc = 0;
    size_t cap = 0;
    for (int i = 0; i < n && rc == 0; i++)
        for (int j = 0; j < n; j++) {
            double b = bw[(size_t)i * n + j];
            if (i == j || !measured(b))
                continue;
            /* the better end's median: a healthy end's links are fast */
            double ref = fmax(med[i], med[j]), dev;
            if (!(ref > 0) || !worse(b, ref, true, bar, &dev))
                continue;
            if (*nout == cap) {
                size_t nc = cap ? 2 * cap : 8;
                sb_fleet_link_flag *t = realloc(*out, nc * sizeof *t);
                if (!t) {
                    rc = sb_fail(err, SB_ENOMEM, "fleet: out of memory");
                    break;
                }
                *out = t;
                cap = nc;
            }
            sb_fleet_link_flag *f = &(*out)[(*nout)++];
            f->from = i;
            f->to = j;
            f->bw_Bps = b;
            f->reference_Bps = ref;
            f->deviation_pct = dev;
            f->threshold_pct = bar;
            f->cause = slow_host[i] && !slow_host[j]   ? i
                       : slow_host[j] && !slow_host[i] ? j
                                                       : -1;
        }
    free(med), free(s), free(slow_host);
    if (rc) {
        free(*out);
        *out = NULL;
        *nout = 0;
        return rc;
    }
    if (*nout > 1)
        qsort(*out, *nout, sizeof **out, cmp_link);
    return 0;
}

int sb_fleet_rounds(int n, int **partner, int *nrounds, sb_err *err)
{
    *partner = NULL;
    *nrounds = 0;
    if (n < 1 || n > SB_FLEET_MAX_HOSTS)
        return sb_fail(err, SB_EINVAL, "fleet: %d hosts (1 to %d)", n,
                       SB_FLEET_MAX_HOSTS);
    /* the circle method over m = n rounded up to even: m - 1 fixed at
     * the centre, the others turning; an odd n's phantom m - 1 leaves
     * its partner idle */
    int m = n + (n % 2), rounds = m - 1;
    if (n == 1)
        return 0;
    int *p = malloc((size_t)rounds * n * sizeof *p);
    if (!p)
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    for (int r = 0; r < rounds; r++) {
        int *row = p + (size_t)r * n;
        for (int h = 0; h < n; h++)
            row[h] = -1;
        for (int k = 0; k < m / 2; k++) {
            int a = k == 0 ? m - 1 : (r + k) % (m - 1);
            int b = (r + m - 1 - k) % (m - 1);
            if (a < n && b < n) {
                row[a] = b;
                row[b] = a;
            }
        }
    }
    *partner = p;
    *nrounds = rounds;
    return 0;
}

/* ---- a host's runs as values ------------------------------------------ */

/* Each figure of a host's run as the diagnosis's values: the headline
 * of every valid, measured result, keyed by the benchmark, its point
 * and the figure. */
int sb_fleet_run_values(const sb_run *run, int h, sb_fleet_value **v,
                        size_t *nv, size_t *too_long, sb_err *err)
{
    *too_long = 0;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        bool hb = true;
        const sb_metric *m =
            r->valid && !r->skipped ? sb_result_headline(r, &hb) : NULL;
        if (!m)
            continue;
        char full[1024], compact[1024];
        sb_params_fmt(&r->params, full, sizeof full);
        sb_params_text_compact(r->bench, r->backend, full, compact,
                               sizeof compact);
        /* the headline (at the median sample) and, where the samples
         * say, the same figure over the mean sample: what the host
         * sustains. A host whose CPU is throttled (a quota, a noisy
         * neighbour) runs its samples at full speed between the pauses,
         * and the median does not see them; the mean does. */
        double p50 = r->stats.p50, mean = r->stats.mean;
        bool sustained = r->stats.n > 0 && p50 > 0 && mean > 0;
        sb_fleet_value *t = realloc(*v, (*nv + 2) * sizeof *t);
        if (!t)
            return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
        *v = t;
        for (int k = 0; k < (sustained ? 2 : 1); k++) {
            sb_fleet_value *e = &t[*nv];
            memset(e, 0, sizeof *e);
            e->host = h;
            int len = snprintf(e->metric, sizeof e->metric, "%s%s%s %s%s",
                               r->bench, compact[0] ? " " : "", compact,
                               m->name, k ? " sustained" : "");
            if (len < 0 || (size_t)len >= sizeof e->metric) {
                /* a key cut short could merge two points: left out */
                *too_long += k == 0;
                continue;
            }
            (*nv)++;
            e->value = k == 0 ? m->value
                       : hb   ? m->value * p50 / mean
                              : m->value * mean / p50;
            e->higher_better = hb;
        }
    }
    return 0;
}

static int cmp_round_value(const void *a, const void *b)
{
    const sb_fleet_value *x = a, *y = b;
    if (x->host != y->host)
        return x->host - y->host;
    int c = strcmp(x->metric, y->metric);
    if (c)
        return c;
    return (x->value > y->value) - (x->value < y->value);
}

/* The rounds' values as one a host and metric: the median over the
 * rounds (a host slowed for one round by something passing is not
 * flagged for it). v sorted and compacted in place. */
void sb_fleet_median_rounds(sb_fleet_value *v, size_t *nv)
{
    if (*nv < 2)
        return;
    qsort(v, *nv, sizeof *v, cmp_round_value);
    size_t out = 0;
    for (size_t i = 0; i < *nv;) {
        size_t j = i;
        while (j < *nv && v[j].host == v[i].host &&
               strcmp(v[j].metric, v[i].metric) == 0)
            j++;
        size_t n = j - i;
        sb_fleet_value m = v[i];
        m.value = n % 2 ? v[i + n / 2].value
                        : 0.5 * (v[i + n / 2 - 1].value + v[i + n / 2].value);
        v[out++] = m;
        i = j;
    }
    *nv = out;
}

/* ---- against a baseline fleet ------------------------------------------- */

typedef struct {
    const sb_fleet_host *h;
    const sb_fleet_value *v;
} base_ctx;

static int cmp_key(const char *metric, const char *cls, const char *name,
                   const sb_fleet_value *b, const sb_fleet_host *bh)
{
    int c = strcmp(metric, b->metric);
    if (c == 0)
        c = strcmp(cls, bh[b->host].cls);
    if (c == 0)
        c = strcmp(name, bh[b->host].name);
    return c;
}

static const base_ctx *sort_ctx;
static int cmp_base(const void *a, const void *b)
{
    const sb_fleet_value *x = &sort_ctx->v[*(const size_t *)a];
    const sb_fleet_value *y = &sort_ctx->v[*(const size_t *)b];
    const sb_fleet_host *h = sort_ctx->h;
    return cmp_key(x->metric, h[x->host].cls, h[x->host].name, y, h);
}

int sb_fleet_diagnose_baseline(const sb_fleet_host *hosts, int nh,
                               const sb_fleet_value *v, size_t nv,
                               const sb_fleet_host *bhosts, int nbh,
                               const sb_fleet_value *bv, size_t nbv,
                               const sb_fleet_rules *r, sb_fleet_flag **out,
                               size_t *nout, sb_err *err)
{
    if (nv == 0 || nbv == 0)
        return 0;
    for (size_t j = 0; j < nbv; j++)
        if (bv[j].host < 0 || bv[j].host >= nbh)
            return sb_fail(err, SB_EINVAL,
                           "fleet baseline: a value of host %d of %d",
                           bv[j].host, nbh);
    size_t *idx = malloc(nbv * sizeof *idx);
    double *bar = malloc(nbv * sizeof *bar), *x = malloc(nbv * sizeof *x);
    if (!idx || !bar || !x) {
        free(idx), free(bar), free(x);
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    }
    for (size_t j = 0; j < nbv; j++) {
        idx[j] = j;
        bar[j] = NAN;
    }
    /* sorted by (metric, class, host): a host's figure found by bisection,
     * and the figures of its class next to it (their spread: the bar) */
    base_ctx bc = {bhosts, bv};
    sort_ctx = &bc;
    qsort(idx, nbv, sizeof *idx, cmp_base);
    sort_ctx = NULL;
    size_t cap = *nout;
    int rc = 0;
    for (size_t i = 0; i < nv && rc == 0; i++) {
        const sb_fleet_value *a = &v[i];
        if (a->host < 0 || a->host >= nh || hosts[a->host].failed ||
            !isfinite(a->value))
            continue;
        const sb_fleet_host *ah = &hosts[a->host];
        size_t lo = 0, hi = nbv;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_key(a->metric, ah->cls, ah->name, &bv[idx[mid]], bhosts) >
                0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nbv ||
            cmp_key(a->metric, ah->cls, ah->name, &bv[idx[lo]], bhosts) != 0)
            continue; /* not in the baseline: nothing to compare */
        const sb_fleet_value *b = &bv[idx[lo]];
        if (bhosts[b->host].failed || !isfinite(b->value) ||
            !(fabs(b->value) > 0))
            continue;
        if (isnan(bar[lo])) {
            /* the class's figures of this metric in the baseline */
            size_t s = lo, e = lo + 1;
            const sb_fleet_host *bh = &bhosts[b->host];
            while (s > 0 && strcmp(bv[idx[s - 1]].metric, b->metric) == 0 &&
                   strcmp(bhosts[bv[idx[s - 1]].host].cls, bh->cls) == 0)
                s--;
            while (e < nbv && strcmp(bv[idx[e]].metric, b->metric) == 0 &&
                   strcmp(bhosts[bv[idx[e]].host].cls, bh->cls) == 0)
                e++;
            size_t n = 0;
            for (size_t k = s; k < e; k++)
                if (!bhosts[bv[idx[k]].host].failed &&
                    isfinite(bv[idx[k]].value))
                    x[n++] = bv[idx[k]].value;
            double floor =
                b->higher_better ? r->floor_pct : r->latency_floor_pct;
            double g = floor;
            if (n >= (size_t)r->min_peers) {
                double m = median(x, n);
                if (fabs(m) > 0) {
                    /* median() sorted x; bar_of takes |x - m| in place */
                    g = bar_of(x, n, m, m, floor, r->k_mad);
                }
            }
            for (size_t k = s; k < e; k++)
                bar[k] = g;
        }
        double dev;
        if (!worse(a->value, b->value, a->higher_better, bar[lo], &dev))
            continue;
        if (*nout == cap) {
            size_t nc = cap ? 2 * cap : 8;
            sb_fleet_flag *t = realloc(*out, nc * sizeof *t);
            if (!t) {
                rc = sb_fail(err, SB_ENOMEM, "fleet: out of memory");
                break;
            }
            *out = t;
            cap = nc;
        }
        sb_fleet_flag *f = &(*out)[(*nout)++];
        memset(f, 0, sizeof *f);
        f->host = a->host;
        memcpy(f->metric, a->metric, sizeof f->metric);
        f->value = a->value;
        f->median = b->value;
        f->deviation_pct = dev;
        f->threshold_pct = bar[lo];
        f->peers = 1;
        f->vs_baseline = true;
    }
    free(idx), free(bar), free(x);
    if (rc == 0 && *nout > 1)
        qsort(*out, *nout, sizeof **out, cmp_flag);
    return rc;
}

/* ---- the collectives against the model ----------------------------------- */

void sb_fleet_predict_colls(sb_fleet_report *r)
{
    int n = r->nhosts;
    if (r->bw) {
        size_t m = 0;
        double *x = malloc((size_t)n * n * sizeof *x);
        double *y = malloc((size_t)n * n * sizeof *y);
        size_t ml = 0;
        for (size_t k = 0; x && y && k < (size_t)n * n; k++) {
            if (k / n == k % n)
                continue;
            if (measured(r->bw[k]))
                x[m++] = r->bw[k];
            if (r->lat && measured(r->lat[k]))
                y[ml++] = r->lat[k];
        }
        if (x && m)
            r->out_Bps = median(x, m);
        if (y && ml)
            r->out_alpha_s = median(y, ml);
        free(x), free(y);
    }
    /* scale-up: the all-reduce inside the hosts, t = alpha + S / beta,
     * beta as busbw over the ranks of a host */
    double S[64], t[64];
    int np = 0, ranks = 0;
    for (size_t k = 0; k < r->ncoll && np < 64; k++)
        if (strcmp(r->coll[k].level, "host") == 0 && r->coll[k].seconds > 0 &&
            strcmp(r->coll[k].op, "allreduce") == 0) {
            S[np] = r->coll[k].bytes;
            t[np++] = r->coll[k].seconds;
            ranks = r->coll[k].ranks;
        }
    sb_ab_fit fit;
    sb_err e = {0};
    if (np >= 2 && sb_net_fit_ab(S, t, np, true, &fit, &e) == 0 &&
        isfinite(fit.beta_Bps) && fit.beta_Bps > 0) {
        r->up_Bps = fit.beta_Bps * sb_net_busbw_factor(SB_NET_ALLREDUCE, ranks);
        r->up_alpha_s = fmax(0, fit.alpha_s);
    }
    for (size_t k = 0; k < r->ncoll; k++) {
        sb_fleet_coll *c = &r->coll[k];
        int op = sb_netop_from_name(c->op);
        c->predicted_s = 0;
        if (op < 0 || c->ranks < 2)
            continue;
        bool all = strcmp(c->level, "all") == 0;
        int n_in =
            strcmp(c->level, "host") == 0    ? c->ranks
            : strcmp(c->level, "hosts") == 0 ? 1
            : all && c->per_host > 0 && n > 0 && c->per_host * n == c->ranks
                ? c->per_host
                : 0;
        if (n_in < 1)
            continue; /* hosts of unequal ranks: no two-level model */
        /* the model's scale-out is a rank's share of its host's link (the
         * n_in ranks of a host each move their shard across) */
        c->predicted_s = sb_net_coll_time(
            (sb_netop)op, c->ranks, n_in, c->bytes, r->up_Bps, r->up_alpha_s,
            all ? r->out_Bps / n_in : r->out_Bps, r->out_alpha_s);
    }
}
