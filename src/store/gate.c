/*
 * gate.c — the regression gate (docs/STORE.md): a baseline's config read
 * back into a context and a selection, its points measured again as the
 * baseline measured them, and a regression confirmed by measuring the
 * point again (by default twice, the second time after a pause) before it
 * fails a build. `solbench check` is the CLI of
 * it; unit.test_gate tests it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "solbench/gate.h"
#include "solbench/store.h"

static int cfg_get(const json_t *cfg, const char *key, json_type t,
                   json_t **out, const char *base, sb_err *err)
{
    json_t *v = json_object_get(cfg, key);
    bool ok =
        v && (json_typeof(v) == t || (t == JSON_REAL && json_is_number(v)));
    if (!ok)
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.%s is missing or of the wrong "
                       "type; this run cannot be re-run by check",
                       base, key);
    *out = v;
    return 0;
}

int sb_gate_config(const json_t *cfg, const char *base, sb_ctx *ctx,
                   sb_gate_sel *bc, sb_err *err)
{
    json_t *v = NULL;
    if (cfg_get(cfg, "suite", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    ctx->suite = strcmp(json_string_value(v), "full") == 0 ? SB_SUITE_FULL
                                                           : SB_SUITE_QUICK;
    if (cfg_get(cfg, "areas", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    snprintf(bc->areas, sizeof bc->areas, "%s", json_string_value(v));
    bc->has_areas = bc->areas[0] != '\0';
    if (cfg_get(cfg, "benches", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    snprintf(bc->names, sizeof bc->names, "%s", json_string_value(v));
    bc->has_names = bc->names[0] != '\0';
    if (cfg_get(cfg, "params", JSON_OBJECT, &v, base, err))
        return SB_EINVAL;
    const char *key;
    json_t *pv;
    json_object_foreach(v, key, pv)
    {
        char kv[512];
        if (!json_is_string(pv))
            return sb_fail(err, SB_EINVAL,
                           "baseline %s: config.params.%s is not a string",
                           base, key);
        snprintf(kv, sizeof kv, "%s=%s", key, json_string_value(pv));
        if (sb_pset_add(&bc->user, kv, err))
            return SB_EINVAL;
    }
    if (cfg_get(cfg, "threads", JSON_INTEGER, &v, base, err))
        return SB_EINVAL;
    json_int_t th = json_integer_value(v);
    if (th < 1 || th > 4096)
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.threads %lld is "
                       "out of range",
                       base, (long long)th);
    ctx->threads = (int)th;
    if (cfg_get(cfg, "min_time_s", JSON_REAL, &v, base, err))
        return SB_EINVAL;
    ctx->min_time = json_number_value(v);
    if (cfg_get(cfg, "repeat", JSON_INTEGER, &v, base, err))
        return SB_EINVAL;
    const json_int_t rep = json_integer_value(v);
    if (cfg_get(cfg, "warmup", JSON_INTEGER, &v, base, err))
        return SB_EINVAL;
    const json_int_t wu = json_integer_value(v);
    if (!(ctx->min_time >= 0 && ctx->min_time <= 86400))
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.min_time_s %g "
                       "is out of range [0, 86400]",
                       base, ctx->min_time);
    if (rep < 1 || rep > 100000)
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.repeat %lld is "
                       "out of range [1, 100000]",
                       base, (long long)rep);
    if (wu < 0 || wu > 1000)
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.warmup %lld is "
                       "out of range [0, 1000]",
                       base, (long long)wu);
    ctx->repeat = (int)rep;
    ctx->warmup = (int)wu;
    /* Absent: one point after the other (runs from before the option). */
    json_t *smp = json_object_get(cfg, "sampling");
    if (smp && !(json_is_string(smp) &&
                 strcmp(json_string_value(smp), "interleaved") == 0))
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.sampling is "
                       "neither absent nor \"interleaved\"",
                       base);
    ctx->interleave = smp != NULL;
    if (cfg_get(cfg, "backend", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    const char *be = json_string_value(v);
    bc->has_backend = strcmp(be, "all") != 0 && be[0];
    snprintf(ctx->backend, sizeof ctx->backend, "%s",
             bc->has_backend ? be : "");
    return 0;
}

/* ---- measuring ----------------------------------------------------------- */

int sb_gate_measure(const sb_plan *plan, sb_ctx *ctx, sb_result_list *out,
                    int **item_of, sb_err *err)
{
    size_t cap = 0;
    *item_of = NULL;
    if (ctx->interleave) { /* the baseline's points were sampled in rounds */
        size_t before = out->n;
        int rc = sb_run_plan(plan, ctx, out, err);
        if (rc)
            return rc;
        /* one result per point: interleaving takes no benchmark that
         * drives several */
        *item_of = malloc((out->n + 1) * sizeof **item_of);
        if (!*item_of)
            return sb_fail(err, SB_ENOMEM, "out of memory");
        for (size_t k = before; k < out->n; k++)
            (*item_of)[k] = (int)(k - before);
        return 0;
    }
    for (int i = 0; i < plan->n; i++) {
        size_t before = out->n;
        int rc = sb_run_point(plan->items[i].bench, plan->items[i].impl,
                              &plan->items[i].point, ctx, out, err);
        if (rc)
            return rc;
        if (out->n > cap) {
            size_t nc = out->n * 2 + 16;
            int *p = realloc(*item_of, nc * sizeof *p);
            if (!p)
                return sb_fail(err, SB_ENOMEM, "out of memory");
            *item_of = p;
            cap = nc;
        }
        for (size_t k = before; k < out->n; k++)
            (*item_of)[k] = i;
    }
    return 0;
}

/* One round of confirmation: every line still regressed is measured again
 * (its point alone, or interleaved the whole plan) and judged against the
 * baseline as at first. `round` counts from 1; `waited` the seconds paused
 * before it. */
static int confirm_round(sb_cmp *c, const sb_run *base, int nbase,
                         const sb_plan *plan, const int *item_of, sb_ctx *ctx,
                         const sb_cmp_opts *o, int round, double waited,
                         sb_gate_note_fn note, void *arg, sb_err *err)
{
    const sb_run *newest = &base[nbase - 1];
    int *done = calloc((size_t)plan->n + 1, sizeof *done);
    sb_result_list *again = calloc((size_t)plan->n + 1, sizeof *again);
    int rc = 0;
    if (!done || !again) {
        rc = sb_fail(err, SB_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < c->n; i++) {
        sb_cmp_line *L = &c->lines[i];
        if (L->verdict != SB_VERDICT_REGRESSED || L->ib < 0 || L->ia < 0)
            continue;
        /* Interleaved, a point is re-measured as it was measured: the
         * whole plan once more in rounds (alone it would run faster or
         * slower than beside the others), into again[0]. */
        int item = ctx->interleave ? 0 : item_of[L->ib];
        if (!done[item]) {
            done[item] = 1;
            char what[400];
            int w = waited > 0
                        ? snprintf(what, sizeof what, "(after %g s) ", waited)
                        : 0;
            if (ctx->interleave)
                snprintf(what + w, sizeof what - (size_t)w,
                         "all %d points "
                         "again, interleaved",
                         plan->n);
            else
                snprintf(what + w, sizeof what - (size_t)w, "%s %s", L->bench,
                         L->params);
            if (note)
                note(what, arg);
            if ((rc = ctx->interleave ? sb_run_plan(plan, ctx, &again[0], err)
                                      : sb_run_point(plan->items[item].bench,
                                                     plan->items[item].impl,
                                                     &plan->items[item].point,
                                                     ctx, &again[item], err)))
                goto out;
        }
        /* The re-measured result of this point. */
        const sb_result *nr = NULL;
        char key[512];
        for (size_t k = 0; k < again[item].n && !nr; k++)
            if (strcmp(sb_point_key(&again[item].items[k], key, sizeof key),
                       L->key) == 0)
                nr = &again[item].items[k];
        if (!nr) {
            size_t l = strlen(L->why);
            snprintf(L->why + l, sizeof L->why - l,
                     "%sconfirmation found "
                     "no such point; kept",
                     l ? "; " : "");
            continue;
        }
        sb_cmp_line R = *L;
        memset(R.why, 0, sizeof R.why);
        R.a_value = R.b_value = 0;
        /* against every baseline run that has the point, as at first */
        const sb_result *ra[SB_CMP_MAX_BASE_RUNS];
        int k = 0;
        int nth = 0;
        for (int q = 0; q < L->ia; q++)
            if (strcmp(sb_point_key(&newest->results.items[q], key, sizeof key),
                       L->key) == 0)
                nth++;
        for (int b = 0; b < nbase && k < SB_CMP_MAX_BASE_RUNS; b++) {
            if (b == nbase - 1) {
                ra[k++] = &newest->results.items[L->ia];
                continue;
            }
            int seen = 0;
            for (size_t q = 0; q < base[b].results.n; q++)
                if (strcmp(sb_point_key(&base[b].results.items[q], key,
                                        sizeof key),
                           L->key) == 0 &&
                    seen++ == nth) {
                    ra[k++] = &base[b].results.items[q];
                    break;
                }
        }
        sb_cmp_judge_multi(&R, ra, k, nr, o);
        if (R.verdict == SB_VERDICT_REGRESSED) {
            if (round == 1) {
                snprintf(L->why, sizeof L->why,
                         "confirmed: re-measured "
                         "%+.1f%% p %.2g",
                         R.change_pct, R.test.p);
            } else {
                size_t l = strlen(L->why);
                snprintf(L->why + l, sizeof L->why - l,
                         "; after %g s "
                         "%+.1f%% p %.2g",
                         waited, R.change_pct, R.test.p);
            }
        } else {
            /* the figures of every measurement, the earlier ones kept */
            char prev[sizeof L->why] = "";
            if (round > 1)
                snprintf(prev, sizeof prev, ", %s",
                         strncmp(L->why, "confirmed: ", 11) == 0 ? L->why + 11
                                                                 : L->why);
            snprintf(L->why, sizeof L->why,
                     "not confirmed: first %+.1f%% p %.2g%s, re-measured%s "
                     "%+.1f%% p %.2g",
                     L->change_pct, L->test.p, prev,
                     round > 1 ? " after a pause" : "", R.change_pct, R.test.p);
            L->verdict = R.verdict == SB_VERDICT_NOT_COMPARABLE
                             ? SB_VERDICT_NOT_COMPARABLE
                             : SB_VERDICT_UNCHANGED;
        }
    }
out:
    if (again)
        for (int i = 0; i < plan->n; i++)
            sb_results_free(&again[i]);
    free(again);
    free(done);
    return rc;
}

int sb_gate_confirm(sb_cmp *c, const sb_run *base, int nbase,
                    const sb_plan *plan, const int *item_of, sb_ctx *ctx,
                    const sb_cmp_opts *o, const sb_gate_confirm_opts *co,
                    sb_gate_note_fn note, void *arg, sb_err *err)
{
    int times = co && co->times > 0 ? co->times : 1;
    double pause = co && co->pause_s > 0 ? co->pause_s : 0.0;
    int rc = 0;
    for (int round = 1; round <= times && rc == 0; round++) {
        sb_cmp_recount(c);
        if (c->count[SB_VERDICT_REGRESSED] == 0)
            break;
        double waited = 0;
        if (round > 1 && pause > 0) {
            /* a neighbour's burst on a shared machine lasts seconds to
             * tens of seconds; a regression of the code outlasts it */
            struct timespec ts = {
                (time_t)pause, (long)((pause - (double)(time_t)pause) * 1e9)};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
            waited = pause;
        }
        rc = confirm_round(c, base, nbase, plan, item_of, ctx, o, round, waited,
                           note, arg, err);
    }
    sb_cmp_recount(c);
    return rc;
}

json_t *sb_gate_comparable_config(const json_t *base_cfg, const json_t *now_cfg,
                                  bool min_time_given, bool repeat_given)
{
    json_t *c = json_deep_copy(now_cfg);
    const char *keys[2] = {min_time_given ? "min_time_s" : NULL,
                           repeat_given ? "repeat" : NULL};
    for (int k = 0; k < 2 && c; k++) {
        if (!keys[k])
            continue;
        json_t *bv = json_object_get(base_cfg, keys[k]);
        if (bv)
            json_object_set(c, keys[k], bv);
    }
    return c;
}

/* ---- a baseline's runs ------------------------------------------------------
 */

int sb_gate_load_baseline(sb_store *st, const char *name, bool allow_mismatch,
                          sb_run **base, int *n, sb_err *err)
{
    static char ids[SB_STORE_BASELINE_RUNS_MAX][64];
    int nid = 0;
    *base = NULL;
    *n = 0;
    int rc = sb_store_baseline_runs(st, name, ids, SB_STORE_BASELINE_RUNS_MAX,
                                    &nid, err);
    if (rc)
        return rc;
    /* no baseline of that name: a run id or `last` stands for one */
    const int want = nid > 0 ? nid : 1;
    sb_run *runs = calloc((size_t)want, sizeof *runs);
    if (!runs)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int loaded = 0;
    for (; loaded < want; loaded++) {
        if ((rc = sb_store_load_run(st, nid > 0 ? ids[loaded] : name,
                                    &runs[loaded], err))) {
            sb_gate_free_baseline(runs, loaded + 1);
            return rc;
        }
    }
    const sb_run *newest = &runs[want - 1];
    for (int i = 0; i + 1 < want && !allow_mismatch; i++) {
        sb_diff_list d = {0};
        if (sb_runs_mismatch(&runs[i], newest, &d) > 0)
            rc = sb_fail(err, SB_EINVAL,
                         "baseline %s: its runs %s and %s were made with "
                         "different configs or machines (%s)",
                         name, runs[i].run_id, newest->run_id,
                         d.n ? d.lines[0] : "?");
        sb_diff_free(&d);
        if (rc) {
            sb_gate_free_baseline(runs, want);
            return rc;
        }
    }
    *base = runs;
    *n = want;
    return 0;
}

void sb_gate_free_baseline(sb_run *base, int n)
{
    for (int i = 0; base && i < n; i++)
        sb_run_free(&base[i]);
    free(base);
}

int sb_gate_count_invalid(const sb_result_list *l)
{
    int bad = 0;
    for (size_t i = 0; i < l->n; i++)
        bad += !l->items[i].valid && !l->items[i].skipped;
    return bad;
}
