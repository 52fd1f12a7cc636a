/*
 * changes.c — a store's history as series (one point on one machine, its
 * runs in order) and the change points in each (changes.h).
 */
#include "solbench/changes.h"
#include "solbench/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* Series at most, so a store of many machines and points stays bounded. */
#define SERIES_MAX 100000

/* The commit a run's tags name ("commit"), or "". */
static void tag_commit(const char *tags, char *out, size_t len)
{
    out[0] = '\0';
    json_t *t = json_loads(tags ? tags : "{}", 0, NULL);
    const char *c = json_string_value(json_object_get(t, "commit"));
    if (c)
        snprintf(out, len, "%s", c);
    json_decref(t);
}

typedef struct load_ctx {
    sb_series_set *set;
    sb_err *err;
    size_t last; /* the series the previous row went to */
    /* the commit of the run the rows are of: its tags read once a run
     * (the rows come run by run) */
    char run_id[64], commit[72];
} load_ctx;

static sb_series *find_series(load_ctx *c, const sb_store_hist_row *row)
{
    sb_series_set *set = c->set;
    for (size_t k = 0; k < set->n; k++) {
        /* rows of one run come in point order: try the next one first */
        size_t i = (c->last + 1 + k) % set->n;
        sb_series *s = &set->s[i];
        if (strcmp(s->key, row->point_key) == 0 &&
            strcmp(s->fingerprint, row->fingerprint) == 0) {
            c->last = i;
            return s;
        }
    }
    if (set->n == set->cap) {
        if (set->cap >= SERIES_MAX)
            return NULL;
        size_t cap = set->cap ? 2 * set->cap : 64;
        if (cap > SERIES_MAX)
            cap = SERIES_MAX;
        sb_series *p = realloc(set->s, cap * sizeof *p);
        if (!p)
            return NULL;
        set->s = p;
        set->cap = cap;
    }
    sb_series *s = &set->s[set->n];
    memset(s, 0, sizeof *s);
    snprintf(s->key, sizeof s->key, "%s", row->point_key);
    snprintf(s->fingerprint, sizeof s->fingerprint, "%s", row->fingerprint);
    snprintf(s->bench, sizeof s->bench, "%s", row->bench);
    snprintf(s->backend, sizeof s->backend, "%s", row->backend);
    snprintf(s->params, sizeof s->params, "%s", row->params);
    snprintf(s->metric, sizeof s->metric, "%s", row->metric);
    snprintf(s->unit, sizeof s->unit, "%s", row->unit);
    s->higher_better = row->higher_better >= 0
                           ? row->higher_better
                           : sb_metric_higher_better(row->metric, row->unit);
    c->last = set->n;
    return &set->s[set->n++];
}

/* The figure's p10-p90 band from the time percentiles: a headline of a
 * run is its work over the median time (a rate) or the median time
 * itself (docs/METRICS.md "Headline = median"), so at another percentile
 * of the time it is scaled by their ratio. */
static void run_band(sb_series_run *r, const sb_store_hist_row *row,
                     int higher_better)
{
    r->lo = r->hi = NAN;
    double p10 = row->p10_s, p50 = row->p50_s, p90 = row->p90_s;
    if (!(p10 > 0 && p50 >= p10 && p90 >= p50 && isfinite(p90)))
        return;
    if (higher_better) {
        r->lo = r->value * p50 / p90;
        r->hi = r->value * p50 / p10;
    } else {
        r->lo = r->value * p10 / p50;
        r->hi = r->value * p90 / p50;
    }
}

static int load_row(const sb_store_hist_row *row, void *arg)
{
    load_ctx *c = arg;
    c->set->rows++;
    if (!row->valid || row->skipped || !(row->value > 0) ||
        !isfinite(row->value) || !row->point_key[0])
        return 0;
    sb_series *s = find_series(c, row);
    if (!s)
        return sb_fail(c->err, SB_ENOMEM,
                       "history: out of memory (or over %d series)",
                       SERIES_MAX);
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        sb_series_run *p = realloc(s->runs, cap * sizeof *p);
        if (!p)
            return sb_fail(c->err, SB_ENOMEM, "history: out of memory");
        s->runs = p;
        s->cap = cap;
    }
    sb_series_run *r = &s->runs[s->n++];
    snprintf(r->run_id, sizeof r->run_id, "%s", row->run_id);
    snprintf(r->started_at, sizeof r->started_at, "%s", row->started_at);
    if (strcmp(c->run_id, row->run_id) != 0) {
        snprintf(c->run_id, sizeof c->run_id, "%s", row->run_id);
        tag_commit(row->tags, c->commit, sizeof c->commit);
    }
    snprintf(r->commit, sizeof r->commit, "%s", c->commit);
    r->value = row->value;
    r->cv = row->cv;
    run_band(r, row, s->higher_better);
    r->stable = row->stable;
    return 0;
}

int sb_series_load(sb_store *st, const char *bench, int last_runs,
                   sb_series_set *out, sb_err *err)
{
    memset(out, 0, sizeof *out);
    load_ctx c = {.set = out, .err = err};
    int rc = sb_store_history(st, bench, last_runs, load_row, &c, err);
    if (rc) {
        sb_series_free(out);
        return rc;
    }
    /* the store gives the newest run first; a series reads oldest first */
    for (size_t i = 0; i < out->n; i++) {
        sb_series *s = &out->s[i];
        for (size_t a = 0, b = s->n ? s->n - 1 : 0; a < b; a++, b--) {
            sb_series_run t = s->runs[a];
            s->runs[a] = s->runs[b];
            s->runs[b] = t;
        }
    }
    return 0;
}

int sb_series_detect(sb_series_set *set, const sb_cp_opts *o, sb_err *err)
{
    sb_cp_opts def;
    if (!o) {
        sb_cp_opts_default(&def);
        o = &def;
    }
    for (size_t i = 0; i < set->n; i++) {
        sb_series *s = &set->s[i];
        free(s->cps);
        s->cps = NULL;
        s->n_cps = 0;
        if (!sb_series_testable(s, o))
            continue;
        /* the newest SB_CP_MAX_N runs of a longer series */
        const size_t base = s->n > SB_CP_MAX_N ? s->n - SB_CP_MAX_N : 0;
        const size_t n = s->n - base;
        double *x = malloc(n * sizeof *x);
        size_t most = n / 2 + 1;
        s->cps = calloc(most, sizeof *s->cps);
        if (!x || !s->cps) {
            free(x);
            return sb_fail(err, SB_ENOMEM, "history: out of memory");
        }
        for (size_t k = 0; k < n; k++)
            x[k] = s->runs[base + k].value;
        sb_err e2 = {0};
        int rc = sb_cp_detect(x, n, o, s->cps, most, &s->n_cps, &e2);
        free(x);
        for (size_t k = 0; k < s->n_cps; k++)
            s->cps[k].index += base;
        if (rc)
            return sb_fail(err, rc, "history: %s %s: %s", s->bench, s->params,
                           e2.msg);
    }
    return 0;
}

bool sb_series_regressed(const sb_series *s, const sb_cp_point *cp)
{
    return s->higher_better ? cp->change_pct < 0 : cp->change_pct > 0;
}

bool sb_series_testable(const sb_series *s, const sb_cp_opts *o)
{
    return s->n >= 2 * (size_t)(o->min_size > 1 ? o->min_size : 1);
}

void sb_series_keep_run(sb_series_set *set, const char *run_id)
{
    size_t kept = 0;
    for (size_t i = 0; i < set->n; i++) {
        sb_series *s = &set->s[i];
        if (s->n && strcmp(s->runs[s->n - 1].run_id, run_id) == 0) {
            set->s[kept++] = *s;
        } else {
            free(s->runs);
            free(s->cps);
        }
    }
    set->n = kept;
}

void sb_series_free(sb_series_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->s[i].runs);
        free(set->s[i].cps);
    }
    free(set->s);
    memset(set, 0, sizeof *set);
}
