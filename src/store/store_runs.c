/*
 * store_runs.c — runs in the store: the point keys that identify a result
 * across runs, saving a run in one transaction (its document whole in
 * runs.doc, the normalised rows beside), imports all or nothing, the file
 * a run is kept in when it cannot be stored, loading runs back by id,
 * prefix, baseline or `last`, and the history list.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "solbench/bench.h"
#include "solbench/stability.h"
#include "solbench/store.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"
#include "store/store_int.h"

/* ---- keys and hashes ----------------------------------------------------- */

static int cmp_pval(const void *a, const void *b)
{
    return strcmp(((const sb_pval *)a)->name, ((const sb_pval *)b)->name);
}

/* The canonical text of a value, identical for a point measured now and
 * the same point read back from JSON (where sizes and integers come back
 * as numbers and booleans as true/false). */
static const char *canon_value(const sb_pval *v, char *buf, size_t len)
{
    switch (v->type) {
    case SB_P_BOOL:
        return v->num != 0.0 ? "true" : "false";
    case SB_P_STR:
        return v->text;
    default:
        if (v->num == floor(v->num) && fabs(v->num) < 9e15)
            snprintf(buf, len, "%.0f", v->num);
        else
            snprintf(buf, len, "%.17g", v->num);
        return buf;
    }
}

const char *sb_point_key(const sb_result *r, char *buf, size_t len)
{
    sb_pval v[SB_MAX_PARAMS];
    int n = r->params.n;
    if (n < 0)
        n = 0;
    if (n > SB_MAX_PARAMS)
        n = SB_MAX_PARAMS;
    memcpy(v, r->params.v, (size_t)n * sizeof v[0]);
    qsort(v, (size_t)n, sizeof v[0], cmp_pval);
    size_t off = 0;
    int w = snprintf(buf, len, "%s|%s|", r->bench, r->backend);
    off = w > 0 ? (size_t)w : 0;
    for (int i = 0; i < n && off < len; i++) {
        char tmp[40];
        w = snprintf(buf + off, len - off, "%s%s=%s", i ? " " : "", v[i].name,
                     canon_value(&v[i], tmp, sizeof tmp));
        if (w < 0)
            break;
        off += (size_t)w;
    }
    return buf;
}

/* Human text of a point. A run read back from JSON has lost the types
 * of its parameters (a size is just an integer there); when the bench is
 * registered in this build its definitions give them back, so sizes
 * print with their unit. */
const char *sb_point_text(const sb_result *r, char *buf, size_t len)
{
    sb_params p = r->params;
    const sb_bench *b = sb_bench_find(r->bench, r->backend);
    if (!b)
        b = sb_bench_find(r->bench, NULL);
    const sb_impl *im = b ? sb_impl_find(b, r->backend) : NULL;
    if (b && !im)
        im = sb_impl_find(b, NULL);
    for (int i = 0; b && i < p.n; i++) {
        const sb_param_def *d = sb_param_find(b, im, p.v[i].name);
        if (d && d->type == SB_P_SIZE &&
            (p.v[i].type == SB_P_INT || p.v[i].type == SB_P_FLOAT))
            p.v[i].type = SB_P_SIZE;
    }
    return sb_params_fmt(&p, buf, (int)len);
}

void sb_config_hash(const json_t *config, char out[17])
{
    char *s = config ? json_dumps(config, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    sb_hash_hex(s ? s : "null", out);
    free(s);
}

/* A string member of obj, trying several names; NULL if none. */
static const char *json_str_any(const json_t *obj, const char *const *names)
{
    if (!json_is_object(obj))
        return NULL;
    for (; *names; names++) {
        const char *s = json_string_value(json_object_get(obj, *names));
        if (s)
            return s;
    }
    return NULL;
}

/* ---- saving -------------------------------------------------------------- */

static char *dump_or(const json_t *j, const char *fallback)
{
    char *s = j ? json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY)
                : NULL;
    return s ? s : strdup(fallback);
}

/* Samples as an array literal, "{1.5e-06,...}", every digit kept. */
static char *sample_array(const double *x, size_t n)
{
    char *a = malloc(n * 26 + 3), *p = a;
    if (!a)
        return NULL;
    *p++ = '{';
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s%.17g", i ? "," : "", x[i]);
    *p++ = '}';
    *p = '\0';
    return a;
}

static int save_results(sb_store *st, const sb_run *run, sb_err *err)
{
    sb_stmt *res = NULL, *smp = NULL;
    int rc;
#define RESULT_INSERT                                                          \
    "INSERT INTO results(run_id, idx, bench, area, backend, params, "          \
    "params_text, point_key, valid, skipped, n, min, p50, p90, p99, max, "     \
    "mean, stddev, cv, headline, headline_value, headline_unit, "              \
    "higher_better, metrics, notes, stable, stab_flags, p10) VALUES "          \
    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
    /* On a server a result and its samples are one statement, one round
     * trip (the samples an array, unnested); in SQLite, where a statement
     * costs no trip, the result, then a row a sample. */
    if ((rc = sb_st_prepare(
             st,
             st->pg ? "WITH r AS (" RESULT_INSERT " RETURNING id) "
                      "INSERT INTO samples(result_id, i, seconds) SELECT "
                      "r.id, t.i - 1, t.x FROM r, unnest(CAST(?29 AS "
                      "float8[])) WITH ORDINALITY AS t(x, i)"
                    : RESULT_INSERT " RETURNING id",
             &res, err)) ||
        (!st->pg && (rc = sb_st_prepare(st,
                                        "INSERT INTO samples(result_id, i, "
                                        "seconds) VALUES (?,?,?)",
                                        &smp, err))))
        goto done;
#undef RESULT_INSERT

    for (size_t k = 0; k < run->results.n; k++) {
        const sb_result *r = &run->results.items[k];
        char key[1024], ptext[512];
        json_t *params = json_object(), *metrics = json_object(),
               *notes = json_array();
        for (int i = 0; i < r->params.n; i++) {
            char tmp[40];
            json_object_set_new(
                params, r->params.v[i].name,
                json_string(canon_value(&r->params.v[i], tmp, sizeof tmp)));
        }
        for (int i = 0; i < r->n_metrics; i++) {
            json_t *m = json_object();
            json_object_set_new(m, "value", json_real(r->metrics[i].value));
            json_object_set_new(m, "unit", json_string(r->metrics[i].unit));
            json_object_set_new(metrics, r->metrics[i].name, m);
        }
        for (int i = 0; i < r->n_notes; i++)
            json_array_append_new(notes, json_string(r->notes[i]));
        char *ps = dump_or(params, "{}"), *ms = dump_or(metrics, "{}"),
             *ns = dump_or(notes, "[]");
        json_decref(params);
        json_decref(metrics);
        json_decref(notes);

        bool hb = false;
        const sb_metric *h = sb_result_headline(r, &hb);
        sb_point_key(r, key, sizeof key);
        sb_point_text(r, ptext, sizeof ptext);

        sb_stmt_reset(res);
        sb_st_bind_text(res, 1, run->run_id);
        sb_bind_int(res, 2, (int64_t)k);
        sb_st_bind_text(res, 3, r->bench);
        sb_st_bind_text(res, 4, r->area);
        sb_st_bind_text(res, 5, r->backend);
        sb_st_bind_text(res, 6, ps);
        sb_st_bind_text(res, 7, ptext);
        sb_st_bind_text(res, 8, key);
        sb_bind_int(res, 9, r->valid);
        sb_bind_int(res, 10, r->skipped);
        sb_bind_int(res, 11, (int64_t)r->n_samples);
        const double st_vals[] = {r->stats.min,    r->stats.p50, r->stats.p90,
                                  r->stats.p99,    r->stats.max, r->stats.mean,
                                  r->stats.stddev, r->stats.cv};
        for (int i = 0; i < 8; i++)
            sb_bind_double(res, 12 + i, st_vals[i]);
        if (h) {
            sb_st_bind_text(res, 20, h->name);
            sb_bind_double(res, 21, h->value);
            sb_st_bind_text(res, 22, h->unit);
            sb_bind_int(res, 23, hb);
        }
        sb_st_bind_text(res, 24, ms);
        sb_st_bind_text(res, 25, ns);
        if (r->stab_judged) {
            sb_bind_int(res, 26, r->stable);
            sb_bind_int(res, 27, (int64_t)r->stab_flags);
        }
        sb_bind_double(res, 28, r->stats.p10);
        char *arr = NULL;
        if (st->pg) {
            if (!(arr = sample_array(r->samples_s, r->n_samples))) {
                free(ps);
                free(ms);
                free(ns);
                rc = sb_fail(err, SB_ENOMEM, "out of memory");
                goto done;
            }
            sb_st_bind_text(res, 29, arr);
        }
        /* on a server sent without waiting; its outcome below */
        int step = st->pg ? sb_stmt_send(res) : sb_stmt_step(res);
        free(ps);
        free(ms);
        free(ns);
        free(arr);
        if (st->pg) {
            if (step != SB_STEP_DONE) {
                rc = sb_st_fail(st, err, "storing a result");
                goto done;
            }
            continue;
        }
        int64_t rid = step == SB_STEP_ROW ? sb_col_int(res, 0) : 0;
        if (step != SB_STEP_ROW || sb_stmt_step(res) != SB_STEP_DONE) {
            rc = sb_st_fail(st, err, "storing a result");
            goto done;
        }
        for (size_t i = 0; i < r->n_samples; i++) {
            sb_stmt_reset(smp);
            sb_bind_int(smp, 1, rid);
            sb_bind_int(smp, 2, (int64_t)i);
            sb_bind_double(smp, 3, r->samples_s[i]);
            if (sb_stmt_step(smp) != SB_STEP_DONE) {
                rc = sb_st_fail(st, err, "storing a sample");
                goto done;
            }
        }
    }
    if (sb_st_sync(st) != SB_STEP_DONE) {
        rc = sb_st_fail(st, err, "storing a result");
        goto done;
    }
    rc = 0;
done:
    sb_stmt_free(res);
    sb_stmt_free(smp);
    return rc;
}

/* Stores run; in_tx: inside the caller's transaction (no BEGIN, COMMIT
 * or ROLLBACK here). */
static int save(sb_store *st, const sb_run *run, bool imported, bool in_tx,
                bool *inserted, sb_err *err)
{
    if (!in_tx)
        sb_st_arm(st);
    static const char *const ver_keys[] = {"version", "solbench_version", NULL};
    static const char *const commit_keys[] = {"git_commit", "commit", NULL};
    if (inserted)
        *inserted = false;
    if (!run->run_id[0])
        return sb_fail(err, SB_EINVAL,
                       "a run without a run_id cannot be "
                       "stored");

    json_t *doc = sb_run_to_json(run);
    if (!doc)
        return sb_fail(err, SB_ENOMEM, "cannot encode run %s as JSON",
                       run->run_id);
    char *docs = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    char *cfg = dump_or(run->config, "{}");
    char *sys = dump_or(run->system, "{}");
    char *tags = dump_or(run->tags, "{}");
    char hash[17], now[32];
    sb_config_hash(run->config, hash);
    sb_utc_now(now, sizeof now);
    const char *fp =
        json_str_any(run->system, (const char *const[]){"fingerprint", NULL});
    /* The measuring solbench: system.solbench.{version,git_commit}, or
     * flat fields in older or foreign documents. */
    const json_t *who = json_object_get(run->system, "solbench");
    const char *ver = json_str_any(who, ver_keys);
    const char *commit = json_str_any(who, commit_keys);
    if (!ver)
        ver = json_str_any(run->system, ver_keys);
    if (!commit)
        commit = json_str_any(run->system, commit_keys);
    if (!imported) {
        if (!ver)
            ver = sb_version();
        if (!commit)
            commit = sb_git_commit();
    }

    int rc;
    sb_stmt *s = NULL;
    if (!docs) {
        rc = sb_fail(err, SB_ENOMEM, "cannot encode run %s", run->run_id);
        goto out;
    }
    if (!in_tx && (rc = sb_st_begin(st, err)))
        goto out;
    if ((rc = sb_st_prepare(
             st,
             "INSERT INTO runs(run_id, started_at, "
             "ended_at, fingerprint, config_hash, config, system, "
             "tags, version, git_commit, stored_at, doc) VALUES "
             "(?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
             &s, err)))
        goto rollback;
    sb_st_bind_text(s, 1, run->run_id);
    sb_st_bind_text(s, 2, run->started_at);
    sb_st_bind_text(s, 3, run->ended_at[0] ? run->ended_at : NULL);
    sb_st_bind_text(s, 4, fp);
    sb_st_bind_text(s, 5, hash);
    sb_st_bind_text(s, 6, cfg);
    sb_st_bind_text(s, 7, sys);
    sb_st_bind_text(s, 8, tags);
    sb_st_bind_text(s, 9, ver);
    sb_st_bind_text(s, 10, commit);
    sb_st_bind_text(s, 11, now);
    sb_st_bind_text(s, 12, docs);
    if (sb_stmt_step(s) != SB_STEP_DONE) {
        rc = sb_st_fail(st, err, "storing the run");
        goto rollback;
    }
    if (sb_st_changes(st) == 1) {
        if ((rc = save_results(st, run, err)))
            goto rollback;
        if (inserted)
            *inserted = true;
    } else if (!imported) {
        /* Storing or importing the same run twice is a no-op; a different
         * run whose id is taken must not vanish without a word. */
        sb_stmt_free(s);
        s = NULL;
        if ((rc = sb_st_prepare(st,
                                "SELECT count(*) FROM runs WHERE run_id = ? "
                                "AND started_at = ? AND config_hash = ?",
                                &s, err)))
            goto rollback;
        sb_st_bind_text(s, 1, run->run_id);
        sb_st_bind_text(s, 2, run->started_at);
        sb_st_bind_text(s, 3, hash);
        if (sb_stmt_step(s) != SB_STEP_ROW || sb_col_int(s, 0) != 1) {
            rc = sb_fail(err, SB_EIO,
                         "run id %s is already in the store for "
                         "another run; this run was not stored",
                         run->run_id);
            goto rollback;
        }
    }
    sb_stmt_free(s);
    s = NULL;
    if (!in_tx && (rc = sb_st_exec(st, "COMMIT", err)))
        goto rollback;
    goto out;
rollback:
    if (!in_tx)
        sb_st_rollback(st);
out:
    sb_stmt_free(s);
    free(docs);
    free(cfg);
    free(sys);
    free(tags);
    return rc;
}

int sb_store_save_run(sb_store *st, const sb_run *run, sb_err *err)
{
    return save(st, run, false, false, NULL, err);
}

/* The stored document of run id as JSON (new reference), or NULL with
 * *found false when there is none; negative return on error. */
static int stored_doc(sb_store *st, const char *id, json_t **doc, bool *found,
                      sb_err *err)
{
    *doc = NULL;
    *found = false;
    sb_stmt *s;
    int rc =
        sb_st_prepare(st, "SELECT doc FROM runs WHERE run_id = ?1", &s, err);
    if (rc)
        return rc;
    sb_st_bind_text(s, 1, id);
    if (sb_st_row(st, s, "looking up a run", &rc, err)) {
        *found = true;
        *doc = json_loads(sb_st_col_text(s, 0), JSON_REJECT_DUPLICATES, NULL);
    }
    sb_stmt_free(s);
    return rc;
}

static bool is_withdrawal(const json_t *why)
{
    return json_is_string(why) &&
           strncmp(json_string_value(why), SB_STAB_WITHDRAWN,
                   strlen(SB_STAB_WITHDRAWN)) == 0;
}

/* A run document as it was measured: the stable marks that later runs
 * withdrew (stab_history.c) put back. A new reference. */
static json_t *as_measured(const json_t *doc)
{
    json_t *d = json_deep_copy(doc);
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(d, "results"), i, r)
    {
        json_t *why = json_object_get(r, "stability");
        bool had = false;
        for (size_t k = 0; k < json_array_size(why);) {
            if (is_withdrawal(json_array_get(why, k))) {
                json_array_remove(why, k);
                had = true;
            } else {
                k++;
            }
        }
        if (had) /* only a stable mark is withdrawn */
            json_object_set_new(r, "stable", json_true());
    }
    return d;
}

/* Whether mine (a run's document) is the very run doc holds: the same
 * JSON document, apart from the stable marks later runs withdrew in
 * either copy (a run exported before such a verdict, or a store's copy
 * judged by other runs). */
static bool same_run(const json_t *doc, const json_t *mine)
{
    json_t *a = doc ? as_measured(doc) : NULL,
           *b = mine ? as_measured(mine) : NULL;
    bool same = a && b && json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return same;
}

/* Calls fn for every withdrawal in mine that the same result of have
 * lacks; stops at fn's first non-zero return. */
typedef int (*withdrawal_fn)(int idx, const char *why, void *arg);
static int new_withdrawals(const json_t *have, const json_t *mine,
                           withdrawal_fn fn, void *arg)
{
    const json_t *had = json_object_get(have, "results");
    size_t i, k;
    json_t *r, *w;
    json_array_foreach(json_object_get(mine, "results"), i, r)
    {
        json_t *there = json_object_get(json_array_get(had, i), "stability");
        json_array_foreach(json_object_get(r, "stability"), k, w)
        {
            if (!is_withdrawal(w))
                continue;
            bool known = false;
            for (size_t j = 0; j < json_array_size(there) && !known; j++)
                known = json_equal(w, json_array_get(there, j));
            int rc = known ? 0 : fn((int)i, json_string_value(w), arg);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int one_found(int idx, const char *why, void *arg)
{
    (void)idx, (void)why, (void)arg;
    return 1;
}

typedef struct withdraw_arg {
    sb_store *st;
    const char *run_id;
    sb_err *err;
} withdraw_arg;

static int withdraw_one(int idx, const char *why, void *arg)
{
    const withdraw_arg *a = arg;
    return sb_st_withdraw_in_tx(a->st, a->run_id, idx, why, a->err);
}

/* The withdrawals run carries that its stored copy lacks are made there
 * too (inside the caller's transaction): an import loses no verdict. */
static int carry_withdrawals(sb_store *st, const sb_run *run, sb_err *err)
{
    json_t *doc;
    bool found;
    int rc = stored_doc(st, run->run_id, &doc, &found, err);
    if (rc || !found) {
        json_decref(doc);
        return rc;
    }
    json_t *mine = sb_run_to_json(run);
    withdraw_arg a = {st, run->run_id, err};
    rc = new_withdrawals(doc, mine, withdraw_one, &a);
    json_decref(mine);
    json_decref(doc);
    return rc;
}

int sb_store_import_runs(sb_store *st, const sb_run *runs,
                         const char *const *names, int n, bool *inserted,
                         sb_err *err)
{
    sb_st_arm(st);
    int rc = sb_st_begin(st, err);
    if (rc)
        return rc;
    if ((rc = sb_st_import_in_tx(st, runs, names, n, inserted, err))) {
        sb_st_rollback(st);
        return rc;
    }
    return sb_st_exec(st, "COMMIT", err);
}

int sb_st_import_in_tx(sb_store *st, const sb_run *runs,
                       const char *const *names, int n, bool *inserted,
                       sb_err *err)
{
    int rc = 0;
    for (int i = 0; i < n; i++)
        inserted[i] = false;
    /* Every document and id is checked before anything is written: a bad
     * one imports nothing. An imported run may be named anything a
     * document allows: not 'last', nor a baseline's name, which would
     * hide it (names resolve before run ids); nor a stored run's id
     * unless it is that very run. */
    /* each run: stored as new, skipped (stored as it is), or skipped
     * with withdrawals its stored copy lacks made there */
    enum { SAVE, SKIP, CARRY };
    unsigned char *plan = calloc((size_t)(n > 0 ? n : 1), sizeof *plan);
    json_t *mine = NULL;
    if (!plan) {
        rc = sb_fail(err, SB_ENOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        const sb_run *run = &runs[i];
        const char *nm = names ? names[i] : run->run_id;
        char other[64];
        if (strcmp(run->run_id, "last") == 0) {
            rc = sb_fail(err, SB_EINVAL,
                         "%s: run id 'last' is reserved (it "
                         "means the newest run); nothing was imported",
                         nm);
            goto fail;
        }
        int f = sb_st_lookup(st, "SELECT name FROM baselines WHERE name = ?1",
                             run->run_id, other, sizeof other, err);
        if (f < 0) {
            rc = f;
            goto fail;
        }
        if (f) {
            rc = sb_fail(err, SB_EINVAL,
                         "%s: run id '%s' is a baseline's "
                         "name (it would be hidden by it); nothing was "
                         "imported",
                         nm, run->run_id);
            goto fail;
        }
        json_t *doc;
        bool found;
        if ((rc = stored_doc(st, run->run_id, &doc, &found, err)))
            goto fail;
        json_decref(mine);
        mine = sb_run_to_json(run);
        if (found) {
            bool same = same_run(doc, mine);
            unsigned char how =
                same && new_withdrawals(doc, mine, one_found, NULL) ? CARRY
                                                                    : SKIP;
            const char *at =
                json_string_value(json_object_get(doc, "started_at"));
            char when[40];
            snprintf(when, sizeof when, "%s", at ? at : "?");
            json_decref(doc);
            if (!same) {
                rc = sb_fail(err, SB_EINVAL,
                             "%s: run id %s is already stored with other "
                             "contents (the stored run started %s, this "
                             "one %s); nothing was imported",
                             nm, run->run_id, when, run->started_at);
                goto fail;
            }
            plan[i] = how;
            continue;
        }
        /* the same id twice in the files given */
        for (int j = 0; j < i; j++) {
            if (strcmp(runs[j].run_id, run->run_id) != 0)
                continue;
            json_t *dj = sb_run_to_json(&runs[j]);
            bool same = same_run(dj, mine);
            unsigned char how =
                same && new_withdrawals(dj, mine, one_found, NULL) ? CARRY
                                                                   : SKIP;
            json_decref(dj);
            if (!same) {
                rc =
                    sb_fail(err, SB_EINVAL,
                            "%s and %s: two different runs under one run id "
                            "%s; nothing was imported",
                            names ? names[j] : runs[j].run_id, nm, run->run_id);
                goto fail;
            }
            plan[i] = how;
        }
    }
    json_decref(mine);
    mine = NULL;
    for (int i = 0; i < n; i++) {
        if ((rc = plan[i] == SAVE
                      ? save(st, &runs[i], true, true, &inserted[i], err)
                  : plan[i] == CARRY ? carry_withdrawals(st, &runs[i], err)
                                     : 0))
            goto fail;
    }
    free(plan);
    return 0;
fail:
    for (int i = 0; i < n; i++)
        inserted[i] = false;
    json_decref(mine);
    free(plan);
    return rc;
}

int sb_store_import_run(sb_store *st, const sb_run *run, bool *inserted,
                        sb_err *err)
{
    bool ins = false;
    int rc = sb_store_import_runs(st, run, NULL, 1, &ins, err);
    if (inserted)
        *inserted = ins;
    return rc;
}

int sb_store_save_or_keep(sb_store *st, const sb_run *run, const char *db_path,
                          sb_err *err)
{
    int rc = sb_store_save_run(st, run, err);
    if (!rc)
        return 0;
    char kept[4200];
    sb_err e2 = {0};
    if (sb_store_save_fallback(run, db_path, kept, sizeof kept, &e2))
        return rc;
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    sb_fail(err, err->code, "%s; the run was kept in %s (solbench import %s)",
            why, kept, kept);
    return 1;
}

/* A run the store could not take is written beside it (or to the
 * temporary folder), so a measured run is never lost. */
int sb_store_save_fallback(const sb_run *run, const char *db_path, char *out,
                           size_t len, sb_err *err)
{
    char dir[4096] = ".";
    /* beside a SQLite file; in the working folder for a server's store */
    if (db_path && *db_path && !sb_store_is_url(db_path)) {
        snprintf(dir, sizeof dir, "%s", db_path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
            *slash = '\0';
        else if (slash)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, ".");
    }
    const char *tmp = getenv("TMPDIR");
    const char *dirs[3] = {dir, tmp && *tmp ? tmp : "/tmp", "."};
    for (int i = 0; i < 3; i++) {
        snprintf(out, len, "%s/solbench-unsaved-%s.json", dirs[i],
                 run->run_id[0] ? run->run_id : "run");
        sb_err e = {0};
        if (sb_run_write_json(run, out, &e) == 0)
            return 0;
        unlink(out); /* no part of a document left where it failed */
    }
    out[0] = '\0';
    return sb_fail(err, SB_EIO,
                   "the run document could not be written "
                   "anywhere (%s, %s, .)",
                   dir, dirs[1]);
}

/* ---- loading ------------------------------------------------------------- */

/* Looks up one run id with a query taking ref as ?1; 1 found, 0 none,
 * 2 ambiguous, negative on error. */
int sb_st_lookup(sb_store *st, const char *sql, const char *ref, char *run_id,
                 size_t len, sb_err *err)
{
    sb_stmt *s;
    int rc = sb_st_prepare(st, sql, &s, err);
    if (rc)
        return rc;
    sb_st_bind_text(s, 1, ref);
    int found = 0;
    while (sb_st_row(st, s, "looking up a run", &found, err)) {
        if (++found == 1)
            snprintf(run_id, len, "%s", sb_st_col_text(s, 0));
        if (found == 2)
            break;
    }
    sb_stmt_free(s);
    return found;
}

int sb_store_resolve(sb_store *st, const char *ref, char *run_id, size_t len,
                     sb_err *err)
{
    sb_st_arm(st);
    int f;
    if (!ref || !*ref)
        return sb_fail(err, SB_EINVAL, "empty run reference");
    if (strcmp(ref, "last") == 0) {
        f = sb_st_lookup(st,
                         "SELECT run_id FROM runs WHERE ?1 IS NOT NULL "
                         "ORDER BY started_at DESC, id DESC LIMIT 1",
                         ref, run_id, len, err);
        if (f < 0)
            return f;
        if (f == 0)
            return sb_fail(err, SB_EINVAL,
                           "run 'last': database %s holds no runs yet",
                           st->path);
        return 0;
    }
    f = sb_st_lookup(st, "SELECT run_id FROM baselines WHERE name = ?1", ref,
                     run_id, len, err);
    if (f)
        return f < 0 ? f : 0;
    f = sb_st_lookup(st, "SELECT run_id FROM runs WHERE run_id = ?1", ref,
                     run_id, len, err);
    if (f)
        return f < 0 ? f : 0;
    f = sb_st_lookup(st,
                     "SELECT run_id FROM runs WHERE substr(run_id, 1, "
                     "length(?1)) = ?1 LIMIT 2",
                     ref, run_id, len, err);
    if (f < 0)
        return f;
    if (f == 2)
        return sb_fail(err, SB_EINVAL,
                       "run '%s': ambiguous, several run ids start with it",
                       ref);
    if (f == 0)
        return sb_fail(err, SB_EINVAL,
                       "run '%s': no such run id or baseline in %s", ref,
                       st->path);
    return 0;
}

int sb_store_load_run(sb_store *st, const char *ref, sb_run *run, sb_err *err)
{
    char id[64];
    sb_run_init(run);
    int rc = sb_store_resolve(st, ref, id, sizeof id, err);
    if (rc)
        return rc;
    sb_stmt *s;
    if ((rc = sb_st_prepare(st, "SELECT doc FROM runs WHERE run_id = ?", &s,
                            err)))
        return rc;
    sb_st_bind_text(s, 1, id);
    if (sb_stmt_step(s) != SB_STEP_ROW) {
        rc = sb_st_fail(st, err, "reading a run");
        sb_stmt_free(s);
        return rc;
    }
    json_error_t jerr;
    json_t *doc =
        json_loads(sb_st_col_text(s, 0), JSON_REJECT_DUPLICATES, &jerr);
    sb_stmt_free(s);
    /* sb_run_from_json initialises the run itself. */
    sb_run_free(run);
    if (!doc) {
        sb_run_init(run);
        return sb_fail(err, SB_EINVAL,
                       "database %s: run %s: stored document does not "
                       "parse (line %d column %d: %s)",
                       st->path, id, jerr.line, jerr.column, jerr.text);
    }
    rc = sb_run_from_json(doc, run, err);
    json_decref(doc);
    if (rc) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err ? err->msg : "bad document");
        return sb_fail(err, rc, "database %s: run %s: %s", st->path, id, why);
    }
    return 0;
}

long sb_store_count_runs(sb_store *st, sb_err *err)
{
    sb_st_arm(st);
    long n = 0;
    int rc = sb_st_query_int(st, "SELECT count(*) FROM runs", &n, err);
    return rc ? rc : n;
}

/* ---- history ------------------------------------------------------------- */

/* A REAL column's value, NaN where it is NULL. */
static double col_double_or_nan(sb_stmt *s, int i)
{
    return sb_col_null(s, i) ? NAN : sb_col_double(s, i);
}

int sb_store_history(sb_store *st, const char *bench, int last_runs,
                     sb_store_hist_fn fn, void *arg, sb_err *err)
{
    sb_st_arm(st);
    sb_stmt *s;
    char sql[1024];
    /* the stability verdict is kept from schema 4 on, p10 from 6 */
    snprintf(
        sql, sizeof sql,
        "WITH r AS (SELECT id, run_id, started_at, tags, fingerprint, system "
        "  FROM runs "
        "  WHERE ?1 IS NULL OR EXISTS (SELECT 1 FROM results x "
        "    WHERE x.run_id = runs.run_id AND x.bench %s ?1) "
        "  ORDER BY started_at DESC, id DESC LIMIT ?2) "
        "SELECT r.run_id, r.started_at, r.tags, s.bench, s.backend, "
        "  s.params_text, s.headline, s.headline_unit, s.headline_value, "
        "  s.cv, s.n, s.valid, s.skipped, s.point_key, r.fingerprint, "
        "  s.higher_better, %s, %s, s.p50, s.p90, r.system "
        "FROM r JOIN results s ON s.run_id = r.run_id "
        "WHERE ?1 IS NULL OR s.bench %s ?1 "
        "ORDER BY r.started_at DESC, r.id DESC, s.idx",
        sb_st_glob_op(st), st->version >= 4 ? "s.stable" : "NULL",
        st->version >= 6 ? "s.p10" : "NULL", sb_st_glob_op(st));
    int rc = sb_st_prepare(st, sql, &s, err);
    if (rc)
        return rc;
    char pat[1024];
    if (bench)
        sb_st_glob_pattern(st, bench, pat, sizeof pat);
    sb_st_bind_text(s, 1, bench ? pat : NULL);
    sb_bind_int(s, 2, last_runs > 0 ? last_runs : INT64_MAX);
    while (sb_st_row(st, s, "reading history", &rc, err)) {
        sb_store_hist_row row = {
            .run_id = sb_st_col_text(s, 0),
            .started_at = sb_st_col_text(s, 1),
            .tags = sb_st_col_text(s, 2),
            .bench = sb_st_col_text(s, 3),
            .backend = sb_st_col_text(s, 4),
            .params = sb_st_col_text(s, 5),
            .metric = sb_st_col_text(s, 6),
            .unit = sb_st_col_text(s, 7),
            .value = sb_col_double(s, 8),
            .cv = sb_col_double(s, 9),
            .n_samples = (long)sb_col_int(s, 10),
            .valid = sb_col_int(s, 11) != 0,
            .skipped = sb_col_int(s, 12) != 0,
            .point_key = sb_st_col_text(s, 13),
            .fingerprint = sb_st_col_text(s, 14),
            .higher_better = sb_col_null(s, 15) ? -1 : sb_col_int(s, 15) != 0,
            .stable = sb_col_null(s, 16) ? -1 : sb_col_int(s, 16) != 0,
            .p10_s = col_double_or_nan(s, 17),
            .p50_s = col_double_or_nan(s, 18),
            .p90_s = col_double_or_nan(s, 19),
            .system = sb_st_col_text(s, 20),
        };
        if ((rc = fn(&row, arg)))
            break;
    }
    sb_stmt_free(s);
    return rc;
}
