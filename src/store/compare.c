/*
 * compare.c — comparing two runs: matching points, judging each pair of
 * sample sets (U test + threshold), and finding the config and machine
 * fields that make two runs unfit to compare.
 *
 * A verdict other than "unchanged" needs two things at once: statistical
 * evidence (p < alpha, so noise alone rarely triggers it) and a change
 * large enough to matter (|change| > threshold, so a real but tiny shift
 * does not fail a build). docs/STORE.md explains the choice.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/compare.h"
#include "solbench/stats.h"
#include "solbench/store.h"

const char *sb_verdict_name(sb_verdict v)
{
    switch (v) {
    case SB_VERDICT_UNCHANGED:
        return "unchanged";
    case SB_VERDICT_IMPROVED:
        return "improved";
    case SB_VERDICT_REGRESSED:
        return "regressed";
    case SB_VERDICT_NOT_COMPARABLE:
        return "not comparable";
    }
    return "?";
}

void sb_cmp_opts_default(sb_cmp_opts *o)
{
    o->alpha = SB_CMP_ALPHA;
    o->threshold_pct = SB_CMP_THRESHOLD;
    o->allow_mismatch = false;
}

void sb_cmp_free(sb_cmp *c)
{
    free(c->lines);
    memset(c, 0, sizeof *c);
}

static double median_of(const double *x, size_t n)
{
    sb_stats s;
    sb_stats_compute(x, n, &s);
    return s.p50;
}

void sb_cmp_judge(sb_cmp_line *L, const double *a, size_t na, const double *b,
                  size_t nb, const sb_cmp_opts *o)
{
    L->na = na;
    L->nb = nb;
    L->tested = false;
    L->few_samples = na < SB_CMP_MIN_SAMPLES || nb < SB_CMP_MIN_SAMPLES;
    if (na == 0 || nb == 0) {
        /* Headline figures without samples (e.g. a sweep's fit summary)
         * are still shown: give them their true change, not 0. */
        L->change_pct = L->a_value > 0.0 && L->b_value > 0.0
                            ? (L->b_value - L->a_value) / L->a_value * 100.0
                            : 0.0;
        L->verdict = SB_VERDICT_NOT_COMPARABLE;
        snprintf(L->why, sizeof L->why, "no samples in %s",
                 na == 0 ? "A" : "B");
        return;
    }
    if (!(L->a_value > 0.0 && L->b_value > 0.0)) {
        /* No headline figure: compare the median times themselves. */
        L->a_value = median_of(a, na);
        L->b_value = median_of(b, nb);
        L->higher_better = false;
        snprintf(L->metric, sizeof L->metric, "median_time");
        snprintf(L->unit, sizeof L->unit, "s");
    }
    L->change_pct =
        L->a_value > 0.0 ? (L->b_value - L->a_value) / L->a_value * 100.0 : 0.0;
    if (sb_mwu_test(a, na, b, nb, &L->test) != 0) {
        L->verdict = SB_VERDICT_NOT_COMPARABLE;
        snprintf(L->why, sizeof L->why, "samples not finite");
        return;
    }
    L->tested = true;
    bool significant = L->test.p < o->alpha;
    bool large = fabs(L->change_pct) > o->threshold_pct;
    if (significant && large) {
        bool worse =
            L->higher_better ? L->change_pct < 0.0 : L->change_pct > 0.0;
        L->verdict = worse ? SB_VERDICT_REGRESSED : SB_VERDICT_IMPROVED;
    } else {
        L->verdict = SB_VERDICT_UNCHANGED;
    }
    if (L->few_samples)
        snprintf(L->why, sizeof L->why,
                 "too few samples for the test (%zu and %zu; %d per side "
                 "needed)",
                 na, nb, SB_CMP_MIN_SAMPLES);
}

/* ---- matching runs ------------------------------------------------------- */

static sb_cmp_line *push_line(sb_cmp *c, size_t *cap)
{
    if (c->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        sb_cmp_line *l = realloc(c->lines, nc * sizeof *l);
        if (!l)
            return NULL;
        c->lines = l;
        *cap = nc;
    }
    sb_cmp_line *L = &c->lines[c->n++];
    memset(L, 0, sizeof *L);
    L->ia = L->ib = -1;
    return L;
}

/* The line's benchmark and point: the point in a few words, the
 * parameters that tell it from its run's other results of the benchmark
 * and those not at their default, as the run table shows them (the key
 * names it whole). */
static void fill_ident(sb_cmp_line *L, const sb_result_list *l,
                       const sb_result *r)
{
    snprintf(L->bench, sizeof L->bench, "%s", r->bench);
    snprintf(L->backend, sizeof L->backend, "%s", r->backend);
    sb_result_params_shown(l, r, L->params, (int)sizeof L->params);
    sb_point_key(r, L->key, sizeof L->key);
}

/* Index of the occurrence `nth` (0-based) of key among results, skipping
 * none; -1 when absent. */
static int find_nth(const sb_result_list *l, const char *key, int nth)
{
    char k[512];
    for (size_t i = 0; i < l->n; i++) {
        sb_point_key(&l->items[i], k, sizeof k);
        if (strcmp(k, key) == 0 && nth-- == 0)
            return (int)i;
    }
    return -1;
}

static int count_before(const sb_result_list *l, size_t upto, const char *key)
{
    char k[512];
    int n = 0;
    for (size_t i = 0; i < upto; i++) {
        sb_point_key(&l->items[i], k, sizeof k);
        if (strcmp(k, key) == 0)
            n++;
    }
    return n;
}

static const char *unusable(const sb_result *r)
{
    if (r->skipped)
        return "skipped";
    if (!r->valid)
        return "invalid";
    return NULL;
}

void sb_cmp_judge_results(sb_cmp_line *L, const sb_result *ra,
                          const sb_result *rb, const sb_cmp_opts *o)
{
    const char *ua = unusable(ra), *ub = unusable(rb);
    L->na = ra->n_samples;
    L->nb = rb->n_samples;
    if (ua || ub) {
        L->verdict = SB_VERDICT_NOT_COMPARABLE;
        if (ua && ub)
            snprintf(L->why, sizeof L->why, "%s in A, %s in B", ua, ub);
        else
            snprintf(L->why, sizeof L->why, "%s in %s", ua ? ua : ub,
                     ua ? "A" : "B");
        return;
    }
    bool hb = false;
    const sb_metric *ma = sb_result_headline(ra, &hb);
    const sb_metric *mb = ma ? sb_result_get(rb, ma->name) : NULL;
    if (ma && mb && isfinite(ma->value) && isfinite(mb->value)) {
        snprintf(L->metric, sizeof L->metric, "%s", ma->name);
        snprintf(L->unit, sizeof L->unit, "%s", ma->unit);
        L->higher_better = hb;
        L->a_value = ma->value;
        L->b_value = mb->value;
    }
    sb_cmp_judge(L, ra->samples_s, ra->n_samples, rb->samples_s, rb->n_samples,
                 o);
}

/* A run's figure and its index among the baseline's runs. */
typedef struct {
    double v;
    int run;
} sb__fig;

static int fig_cmp(const void *a, const void *b)
{
    double x = ((const sb__fig *)a)->v, y = ((const sb__fig *)b)->v;
    return (x > y) - (x < y);
}

/* The baseline's runs set aside: on a shared machine one run now and then
 * lands in a stretch where a neighbour takes a core or the memory bus
 * (tens of percent slower, or faster once the neighbour leaves), and
 * counting it would widen the spread until no regression shows. A run at
 * either end of the sorted figures is set aside when its gap to the next
 * is more than twice the range of the runs kept (Dixon's ratio above 2/3)
 * and at least 1 % of the figure, at most max(1, n / 5) of n >= 3 runs;
 * two runs can't tell which is out.
 * Sorts figs; marks aside[run]; returns how many. */
static int set_aside(sb__fig *figs, int n, bool *aside)
{
    if (n < 3)
        return 0;
    qsort(figs, (size_t)n, sizeof *figs, fig_cmp);
    int most = n / 5 > 1 ? n / 5 : 1, lo = 0, hi = n - 1, out = 0;
    while (out < most && hi - lo + 1 >= 3) {
        double gap_lo = figs[lo + 1].v - figs[lo].v,
               gap_hi = figs[hi].v - figs[hi - 1].v;
        /* the end with the larger gap is the only candidate: the other's
         * gap is at most as large and its rest at least as wide */
        /* and the gap is at least 1 % of the figure: among tied runs a
         * hair's difference is not an outlier */
        double min_gap = 0.01 * figs[(lo + hi) / 2].v;
        if (gap_lo >= gap_hi && gap_lo > min_gap &&
            gap_lo > 2.0 * (figs[hi].v - figs[lo + 1].v))
            aside[figs[lo++].run] = true;
        else if (gap_hi > gap_lo && gap_hi > min_gap &&
                 gap_hi > 2.0 * (figs[hi - 1].v - figs[lo].v))
            aside[figs[hi--].run] = true;
        else
            break;
        out++;
    }
    return out;
}

void sb_cmp_judge_multi(sb_cmp_line *L, const sb_result *const *ra, int k,
                        const sb_result *rb, const sb_cmp_opts *o)
{
    if (k > SB_CMP_MAX_BASE_RUNS) { /* the newest that fit */
        ra += k - SB_CMP_MAX_BASE_RUNS;
        k = SB_CMP_MAX_BASE_RUNS;
    }
    if (k <= 1) {
        sb_cmp_judge_results(L, ra[0], rb, o);
        return;
    }
    /* The newest baseline run picks the metric, as for one run. */
    const sb_result *newest = ra[k - 1];
    const char *ua = NULL;
    for (int i = 0; i < k && !ua; i++)
        ua = unusable(ra[i]);
    if (ua || unusable(rb)) {
        sb_cmp_judge_results(L, newest, rb, o);
        if (ua && L->verdict != SB_VERDICT_NOT_COMPARABLE) {
            L->verdict = SB_VERDICT_NOT_COMPARABLE;
            snprintf(L->why, sizeof L->why, "%s in a baseline run", ua);
        }
        return;
    }
    bool hb = false;
    const sb_metric *mn = sb_result_headline(newest, &hb);
    const sb_metric *mb = mn ? sb_result_get(rb, mn->name) : NULL;
    bool values = mn && mb && isfinite(mb->value);
    /* Each run's figure: its headline metric, or (none) its median time
     * per iteration. */
    sb__fig figs[SB_CMP_MAX_BASE_RUNS];
    int nf = 0;
    for (int i = 0; i < k && nf < SB_CMP_MAX_BASE_RUNS; i++) {
        const sb_metric *m = mn ? sb_result_get(ra[i], mn->name) : NULL;
        double v = values ? (m && isfinite(m->value) ? m->value : NAN)
                          : median_of(ra[i]->samples_s, ra[i]->n_samples);
        if (isfinite(v) && v > 0)
            figs[nf++] = (sb__fig){v, i};
    }
    bool aside[SB_CMP_MAX_BASE_RUNS] = {false};
    int n_aside = set_aside(figs, nf, aside);
    size_t total = 0;
    for (int i = 0; i < k; i++)
        if (!aside[i])
            total += ra[i]->n_samples;
    double *pool = malloc((total ? total : 1) * sizeof *pool);
    if (!pool) {
        sb_cmp_judge_results(L, newest, rb, o);
        return;
    }
    size_t at = 0;
    for (int i = 0; i < k; i++)
        if (!aside[i]) {
            memcpy(pool + at, ra[i]->samples_s,
                   ra[i]->n_samples * sizeof *pool);
            at += ra[i]->n_samples;
        }
    double vals[SB_CMP_MAX_BASE_RUNS], out_v = 0;
    int nv = 0;
    for (int i = 0; i < nf; i++) {
        if (aside[figs[i].run])
            out_v = figs[i].v;
        else
            vals[nv++] = figs[i].v;
    }
    /* The spread between the baseline's runs: a change no larger than
     * what the baseline itself moved by from run to run is not counted,
     * whatever a test on samples (which share their run's conditions)
     * says. */
    double lo = 0, hi = 0, sum = 0;
    for (int i = 0; i < nv; i++) {
        lo = i == 0 || vals[i] < lo ? vals[i] : lo;
        hi = i == 0 || vals[i] > hi ? vals[i] : hi;
        sum += vals[i];
    }
    L->base_runs = k;
    L->base_aside = n_aside;
    L->spread_pct = nv >= 2 ? (hi - lo) / (sum / nv) * 100.0 : 0.0;
    sb_cmp_opts wide = *o;
    if (L->spread_pct > wide.threshold_pct)
        wide.threshold_pct = L->spread_pct;
    if (values) {
        snprintf(L->metric, sizeof L->metric, "%s", mn->name);
        snprintf(L->unit, sizeof L->unit, "%s", mn->unit);
        L->higher_better = hb;
        /* the baseline's figure: the median of its runs' */
        double sorted[SB_CMP_MAX_BASE_RUNS];
        memcpy(sorted, vals, (size_t)nv * sizeof *sorted);
        L->a_value = nv ? median_of(sorted, (size_t)nv) : 0;
        L->b_value = mb->value;
    } else {
        L->a_value = L->b_value = 0;
    }
    sb_cmp_judge(L, pool, total, rb->samples_s, rb->n_samples, &wide);
    L->threshold_used = wide.threshold_pct;
    if (!L->why[0] && n_aside)
        snprintf(L->why, sizeof L->why,
                 "baseline of %d runs, %d set aside "
                 "(%s%.4g, far from the others): spread %.1f%%, a change "
                 "counts beyond %.1f%%",
                 k, n_aside, n_aside > 1 ? "one of them " : "", out_v,
                 L->spread_pct, wide.threshold_pct);
    else if (!L->why[0])
        snprintf(L->why, sizeof L->why,
                 "baseline of %d runs: spread %.1f%%, "
                 "a change counts beyond %.1f%%",
                 k, L->spread_pct, wide.threshold_pct);
    free(pool);
}

int sb_compare_baseline(const sb_run *base, int nbase, const sb_run *b,
                        const sb_cmp_opts *o, sb_cmp *out, sb_err *err)
{
    if (nbase < 1)
        return sb_fail(err, SB_EINVAL, "a baseline without runs");
    if (nbase > SB_CMP_MAX_BASE_RUNS)
        return sb_fail(err, SB_EINVAL, "a baseline of %d runs, at most %d",
                       nbase, SB_CMP_MAX_BASE_RUNS);
    const sb_run *newest = &base[nbase - 1];
    int rc = sb_compare_runs(newest, b, o, out, err);
    if (rc || nbase == 1)
        return rc;
    for (size_t i = 0; i < out->n; i++) {
        sb_cmp_line *L = &out->lines[i];
        if (L->ia < 0 || L->ib < 0)
            continue;
        /* The same point in every baseline run (the same occurrence). */
        int nth = count_before(&newest->results, (size_t)L->ia, L->key);
        const sb_result *ra[SB_CMP_MAX_BASE_RUNS];
        int k = 0;
        for (int r = 0; r < nbase; r++) {
            int j = r == nbase - 1 ? L->ia
                                   : find_nth(&base[r].results, L->key, nth);
            if (j >= 0)
                ra[k++] = &base[r].results.items[j];
        }
        sb_cmp_line fresh = *L;
        memset(fresh.why, 0, sizeof fresh.why);
        fresh.a_value = fresh.b_value = 0;
        sb_cmp_judge_multi(&fresh, ra, k, &b->results.items[L->ib], o);
        *L = fresh;
    }
    sb_cmp_recount(out);
    return 0;
}

int sb_compare_runs(const sb_run *a, const sb_run *b, const sb_cmp_opts *o,
                    sb_cmp *out, sb_err *err)
{
    memset(out, 0, sizeof *out);
    out->alpha = o->alpha;
    out->threshold_pct = o->threshold_pct;
    snprintf(out->a_id, sizeof out->a_id, "%s", a->run_id);
    snprintf(out->b_id, sizeof out->b_id, "%s", b->run_id);
    size_t cap = 0;
    bool *used = calloc(b->results.n + 1, sizeof *used);
    if (!used)
        return sb_fail(err, SB_ENOMEM, "out of memory comparing runs");

    for (size_t i = 0; i < a->results.n; i++) {
        const sb_result *ra = &a->results.items[i];
        sb_cmp_line *L = push_line(out, &cap);
        if (!L)
            goto oom;
        fill_ident(L, &a->results, ra);
        L->ia = (int)i;
        int j =
            find_nth(&b->results, L->key, count_before(&a->results, i, L->key));
        if (j < 0) {
            L->verdict = SB_VERDICT_NOT_COMPARABLE;
            L->na = ra->n_samples;
            snprintf(L->why, sizeof L->why, "missing in B");
            continue;
        }
        used[j] = true;
        L->ib = j;
        sb_cmp_judge_results(L, ra, &b->results.items[j], o);
    }
    for (size_t j = 0; j < b->results.n; j++) {
        if (used[j])
            continue;
        sb_cmp_line *L = push_line(out, &cap);
        if (!L)
            goto oom;
        fill_ident(L, &b->results, &b->results.items[j]);
        L->ib = (int)j;
        L->nb = b->results.items[j].n_samples;
        L->verdict = SB_VERDICT_NOT_COMPARABLE;
        snprintf(L->why, sizeof L->why, "missing in A");
    }
    free(used);
    sb_diff_list diffs = {0};
    out->mismatched = sb_runs_mismatch(a, b, &diffs) > 0;
    sb_diff_free(&diffs);
    for (size_t i = 0; i < out->n; i++)
        out->lines[i].mismatched = out->mismatched;
    sb_cmp_recount(out);
    return 0;
oom:
    free(used);
    sb_cmp_free(out);
    return sb_fail(err, SB_ENOMEM, "out of memory comparing runs");
}

void sb_cmp_recount(sb_cmp *c)
{
    memset(c->count, 0, sizeof c->count);
    for (size_t i = 0; i < c->n; i++)
        c->count[c->lines[i].verdict]++;
}

/* ---- like with like ------------------------------------------------------ */

void sb_diff_free(sb_diff_list *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->lines[i]);
    free(d->lines);
    memset(d, 0, sizeof *d);
}

static void diff_add(sb_diff_list *d, const char *line)
{
    if (d->n == d->cap) {
        size_t nc = d->cap ? 2 * d->cap : 16;
        char **l = realloc(d->lines, nc * sizeof *l);
        if (!l)
            return;
        d->lines = l;
        d->cap = nc;
    }
    char *s = strdup(line);
    if (s)
        d->lines[d->n++] = s;
}

/* Compact JSON text of a value, "(absent)" for a missing one, cut to fit
 * one line. */
static void show(const json_t *v, char *buf, size_t len)
{
    if (!v) {
        snprintf(buf, len, "(absent)");
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
                                JSON_REAL_PRECISION(15));
    if (!s) {
        snprintf(buf, len, "?");
        return;
    }
    if (strlen(s) >= len && len > 4)
        snprintf(buf, len, "%.*s...", (int)len - 4, s);
    else
        snprintf(buf, len, "%s", s);
    free(s);
}

static bool leaf_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

void sb_json_diff(const json_t *a, const json_t *b, const char *path,
                  sb_diff_list *d)
{
    char sub[512];
    if (json_is_object(a) && json_is_object(b)) {
        size_t n = json_object_size(a) + json_object_size(b), k = 0;
        const char **keys = malloc((n + 1) * sizeof *keys);
        if (!keys)
            return;
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)a, key, v) keys[k++] = key;
        json_object_foreach((json_t *)b, key, v) if (!json_object_get(a, key))
            keys[k++] = key;
        qsort(keys, k, sizeof *keys, cmp_str);
        for (size_t i = 0; i < k; i++) {
            snprintf(sub, sizeof sub, "%s.%s", path, keys[i]);
            sb_json_diff(json_object_get(a, keys[i]),
                         json_object_get(b, keys[i]), sub, d);
        }
        free(keys);
        return;
    }
    if (json_is_array(a) && json_is_array(b)) {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < (na > nb ? na : nb); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            sb_json_diff(json_array_get(a, i), json_array_get(b, i), sub, d);
        }
        return;
    }
    if (a && b && leaf_equal(a, b))
        return;
    if (!a && !b)
        return;
    char va[160], vb[160], line[640];
    show(a, va, sizeof va);
    show(b, vb, sizeof vb);
    snprintf(line, sizeof line, "%s: %s vs %s", path, va, vb);
    diff_add(d, line);
}

/* The machine's comparability class: its fingerprint's text without the
 * kernel release, which changes how fast things run, never what a figure
 * means. NULL when the run has no fingerprint text (then the fingerprint
 * itself is the class). */
static const char *machine_class(const json_t *system, char *out, size_t len)
{
    const char *fp =
        json_string_value(json_object_get(system, "fingerprint_of"));
    if (!fp)
        return NULL;
    snprintf(out, len, "%s", fp);
    char *k = strstr(out, ";kernel=");
    if (k) {
        char *end = strchr(k + 1, ';');
        if (end)
            memmove(k, end, strlen(end) + 1);
        else
            *k = '\0';
    }
    return out;
}

bool sb_runs_same_machine_class(const sb_run *a, const sb_run *b)
{
    const json_t *fa = json_object_get(a->system, "fingerprint");
    const json_t *fb = json_object_get(b->system, "fingerprint");
    if (!fa && !fb)
        return true;
    if (fa && fb && leaf_equal(fa, fb))
        return true;
    char ca[2048], cb[2048];
    const char *xa = machine_class(a->system, ca, sizeof ca),
               *xb = machine_class(b->system, cb, sizeof cb);
    return xa && xb && strcmp(xa, xb) == 0;
}

/* The fingerprint's text "k=v;k=v" as an object of its fields (NULL
 * when the run has none). */
static json_t *fingerprint_fields(const json_t *system)
{
    const char *fp =
        json_string_value(json_object_get(system, "fingerprint_of"));
    if (!fp)
        return NULL;
    json_t *o = json_object();
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", fp);
    for (char *save = NULL, *t = strtok_r(buf, ";", &save); t;
         t = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = '\0';
        json_object_set_new(o, t, json_string(eq + 1));
    }
    return o;
}

/* A config without its software stack (a copy). */
static json_t *config_meaning(const json_t *config)
{
    json_t *c = json_deep_copy(config);
    if (json_is_object(c))
        json_object_del(c, "software");
    return c;
}

size_t sb_runs_soft_diff(const sb_run *a, const sb_run *b, sb_diff_list *d)
{
    size_t before = d->n;
    sb_json_diff(json_object_get(a->config, "software"),
                 json_object_get(b->config, "software"), "config.software", d);
    const json_t *fa = json_object_get(a->system, "fingerprint");
    const json_t *fb = json_object_get(b->system, "fingerprint");
    if (fa && fb && !leaf_equal(fa, fb) && sb_runs_same_machine_class(a, b)) {
        const json_t *oa = json_object_get(a->system, "os"),
                     *ob = json_object_get(b->system, "os");
        sb_json_diff(json_object_get(oa, "kernel"),
                     json_object_get(ob, "kernel"), "system.os.kernel", d);
    }
    return d->n - before;
}

size_t sb_runs_mismatch(const sb_run *a, const sb_run *b, sb_diff_list *d)
{
    size_t before = d->n;
    json_t *ca = config_meaning(a->config), *cb = config_meaning(b->config);
    sb_json_diff(ca, cb, "config", d);
    json_decref(ca);
    json_decref(cb);
    const json_t *fa = json_object_get(a->system, "fingerprint");
    const json_t *fb = json_object_get(b->system, "fingerprint");
    if ((fa || fb) && !sb_runs_same_machine_class(a, b)) {
        /* Different machines: name the fingerprint, then what tells the
         * machines apart — the fields of the fingerprint's text where both
         * runs have it (not the clock measured that day), else every
         * differing field of the descriptions — so the reader sees why. */
        sb_json_diff(fa, fb, "system.fingerprint", d);
        json_t *ta = fingerprint_fields(a->system),
               *tb = fingerprint_fields(b->system);
        if (ta && tb) {
            sb_json_diff(ta, tb, "system.fingerprint_of", d);
        } else {
            json_t *sa = json_deep_copy(a->system),
                   *sbj = json_deep_copy(b->system);
            json_object_del(sa, "fingerprint");
            json_object_del(sbj, "fingerprint");
            sb_json_diff(sa, sbj, "system", d);
            json_decref(sa);
            json_decref(sbj);
        }
        json_decref(ta);
        json_decref(tb);
    }
    return d->n - before;
}
