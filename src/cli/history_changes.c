/*
 * history_changes.c — `solbench history --changes`: the change points of
 * every stored series (one point on one machine over its runs), printed
 * as a table or written as JSON (docs/HISTORY.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "solbench/changes.h"
#include "solbench/output.h"

static json_t *change_json(const sb_series *s, const sb_cp_point *cp)
{
    const sb_series_run *r = &s->runs[cp->index];
    json_t *point = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "bench", s->bench, "backend",
        s->backend, "params", s->params, "key", s->key, "fingerprint",
        s->fingerprint, "metric", s->metric, "unit", s->unit);
    json_t *run = json_pack("{s:s, s:s, s:s}", "id", r->run_id, "started_at",
                            r->started_at, "commit", r->commit);
    json_t *c = json_pack(
        "{s:o, s:o, s:I, s:I, s:f, s:f, s:f, s:f, s:s}", "point", point, "run",
        run, "index", (json_int_t)cp->index, "runs", (json_int_t)s->n, "before",
        cp->before, "after", cp->after, "p", cp->p, "q", cp->q, "direction",
        sb_series_regressed(s, cp) ? "regression" : "improvement");
    json_object_set_new(c, "change_pct",
                        isfinite(cp->change_pct) ? json_real(cp->change_pct)
                                                 : json_null());
    return c;
}

static void print_change(const sb_series *s, const sb_cp_point *cp)
{
    char params[512], name[96];
    const sb_series_run *r = &s->runs[cp->index];
    sb_params_text_compact(s->bench, s->backend, s->params, params,
                           sizeof params);
    snprintf(name, sizeof name, "%s%s%s", s->bench,
             strcmp(s->backend, "cpu") ? "@" : "",
             strcmp(s->backend, "cpu") ? s->backend : "");
    printf("%-24s %-30s %-8s %-26s %-12.12s %10.4g %10.4g %+7.1f%% %6.3f  "
           "%s\n",
           name, params[0] ? params : "-", s->metric, r->run_id,
           r->commit[0] ? r->commit : "-", cp->before, cp->after,
           cp->change_pct, cp->p,
           sb_series_regressed(s, cp) ? "REGRESSION" : "improvement");
}

int sb_cli_history_changes(sb_store *st, const char *path, const char *bench,
                           int last, const char *json_path, const sb_cp_opts *o)
{
    sb_err err = {0};
    sb_series_set set;
    if (sb_series_load(st, bench, last, &set, &err))
        return sb_cli_error(&err);
    if (sb_series_detect(&set, o, &err)) {
        sb_series_free(&set);
        return sb_cli_error(&err);
    }
    size_t n = 0, regressed = 0, tested = 0;
    for (size_t i = 0; i < set.n; i++) {
        tested += sb_series_testable(&set.s[i], o);
        for (size_t k = 0; k < set.s[i].n_cps; k++) {
            n++;
            regressed += sb_series_regressed(&set.s[i], &set.s[i].cps[k]);
        }
    }
    int rc = 0;
    if (json_path) {
        json_t *changes = json_array();
        for (size_t i = 0; i < set.n; i++)
            for (size_t k = 0; k < set.s[i].n_cps; k++)
                json_array_append_new(changes,
                                      change_json(&set.s[i], &set.s[i].cps[k]));
        json_t *doc = json_pack(
            "{s:s, s:I, s:I, s:{s:s, s:i, s:i, s:f, s:f}, s:o}", "schema",
            "solbench.changes/1", "series", (json_int_t)set.n, "tested",
            (json_int_t)tested, "detector", "method", "e-divisive-means",
            "min_size", o->min_size, "permutations", o->permutations, "alpha",
            o->alpha, "min_change_pct", o->min_change_pct, "changes", changes);
        if (sb_cli_write_json(doc, strcmp(json_path, "-") ? json_path : NULL,
                              JSON_INDENT(2) | JSON_REAL_PRECISION(10),
                              "the change points", &err))
            rc = sb_cli_error(&err);
        json_decref(doc);
        sb_series_free(&set);
        return rc;
    }
    printf("%zu change point%s (%zu regression%s) in %zu series of %s "
           "(%zu with at least %d runs a side to test; E-Divisive means, "
           "%d permutations, alpha %g, changes of %g %% or more)\n",
           n, n == 1 ? "" : "s", regressed, regressed == 1 ? "" : "s", set.n,
           path, tested, o->min_size, o->permutations, o->alpha,
           o->min_change_pct);
    if (n) {
        printf("%-24s %-30s %-8s %-26s %-12s %10s %10s %8s %6s\n", "benchmark",
               "point", "metric", "first run after", "commit", "before",
               "after", "change", "p");
        for (size_t i = 0; i < set.n; i++)
            for (size_t k = 0; k < set.s[i].n_cps; k++)
                print_change(&set.s[i], &set.s[i].cps[k]);
    }
    sb_series_free(&set);
    return 0;
}
