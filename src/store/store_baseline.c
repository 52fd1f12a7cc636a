/*
 * store_baseline.c — what the store keeps beside runs: named baselines of
 * one or several runs, profiler traces (compressed), and a point's
 * judged history on one machine with the stable marks later runs
 * withdraw (stab_history.c decides; this file reads and writes).
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

/* ---- baselines ----------------------------------------------------------- */

/* A baseline name: a letter first (the run ids solbench makes begin with
 * a digit; a stored run's id, which an imported document may choose, is
 * refused too), then letters, digits, '.', '_' or '-': a name prints in
 * one cell and types without quoting. */
static int check_baseline_name(sb_store *st, const char *name, sb_err *err)
{
    if (!name || !*name)
        return sb_fail(err, SB_EINVAL, "baseline: empty name");
    if (strcmp(name, "last") == 0)
        return sb_fail(err, SB_EINVAL,
                       "baseline name 'last' is reserved (it means the "
                       "newest run)");
    size_t nl = strlen(name);
    bool ok = nl <= SB_STORE_NAME_MAX && isalpha((unsigned char)name[0]);
    for (size_t i = 1; ok && i < nl; i++)
        ok = isalnum((unsigned char)name[i]) || strchr("._-", name[i]);
    if (!ok) {
        char shown[84]; /* printable, one line */
        size_t k = 0;
        for (; k < 80 && k < nl; k++)
            shown[k] = isprint((unsigned char)name[k]) ? name[k] : '?';
        shown[k] = 0;
        return sb_fail(err, SB_EINVAL,
                       "baseline name '%s%s': use a letter, then letters, "
                       "digits, '.', '_' or '-', at most %d characters",
                       shown, nl > 80 ? "..." : "", SB_STORE_NAME_MAX);
    }
    char other[64];
    int f = sb_st_lookup(st, "SELECT run_id FROM runs WHERE run_id = ?1", name,
                         other, sizeof other, err);
    if (f < 0)
        return f;
    if (f)
        return sb_fail(err, SB_EINVAL,
                       "baseline name '%s' is a stored run's "
                       "id (it would hide that run)",
                       name);
    return 0;
}

/* Inserts (name, run) into baseline_runs and makes baselines.run_id the
 * newest of the baseline's runs; inside the caller's transaction. */
static int add_baseline_run(sb_store *st, const char *name, const char *id,
                            const char *now, sb_err *err)
{
    sb_stmt *s;
    int rc;
    if ((rc = sb_st_prepare(st,
                            "INSERT INTO baselines(name, run_id, created_at) "
                            "VALUES (?1, ?2, ?3) ON CONFLICT(name) DO NOTHING",
                            &s, err)))
        return rc;
    sb_st_bind_text(s, 1, name);
    sb_st_bind_text(s, 2, id);
    sb_st_bind_text(s, 3, now);
    if ((rc = sb_st_run(st, s, "setting a baseline", err)))
        return rc;
    if ((rc = sb_st_prepare(st,
                            "INSERT INTO baseline_runs(name, run_id, "
                            "added_at) VALUES (?1, ?2, ?3) ON CONFLICT DO "
                            "NOTHING",
                            &s, err)))
        return rc;
    sb_st_bind_text(s, 1, name);
    sb_st_bind_text(s, 2, id);
    sb_st_bind_text(s, 3, now);
    if ((rc = sb_st_run(st, s, "adding a run to a baseline", err)))
        return rc;
    if ((rc = sb_st_prepare(
             st,
             "UPDATE baselines SET run_id = (SELECT b.run_id FROM "
             "baseline_runs b JOIN runs r ON r.run_id = b.run_id "
             "WHERE b.name = ?1 ORDER BY r.started_at DESC, r.id "
             "DESC LIMIT 1) WHERE name = ?1",
             &s, err)))
        return rc;
    sb_st_bind_text(s, 1, name);
    return sb_st_run(st, s, "setting a baseline", err);
}

int sb_store_baseline_set_runs(sb_store *st, const char *name,
                               const char *const *refs, int nrefs, bool append,
                               sb_err *err)
{
    sb_st_arm(st);
    int rc = check_baseline_name(st, name, err);
    if (rc)
        return rc;
    if (nrefs < 0 || nrefs > SB_STORE_BASELINE_RUNS_MAX)
        return sb_fail(err, SB_EINVAL, "baseline %s: %d runs, at most %d", name,
                       nrefs, SB_STORE_BASELINE_RUNS_MAX);
    /* Every reference resolves before anything changes. */
    char(*ids)[64] = calloc((size_t)(nrefs > 0 ? nrefs : 1), sizeof *ids);
    if (!ids)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int n = nrefs > 0 ? nrefs : 1;
    for (int i = 0; i < n; i++)
        if ((rc = sb_store_resolve(st, nrefs > 0 ? refs[i] : "last", ids[i],
                                   sizeof ids[i], err))) {
            free(ids);
            return rc;
        }
    char now[32];
    sb_utc_now(now, sizeof now);
    sb_st_arm(st);
    if ((rc = sb_st_begin(st, err))) {
        free(ids);
        return rc;
    }
    if (!append) {
        sb_stmt *s;
        if ((rc = sb_st_prepare(st, "DELETE FROM baselines WHERE name = ?1", &s,
                                err)))
            goto fail;
        sb_st_bind_text(s, 1, name);
        if ((rc = sb_st_run(st, s, "replacing a baseline", err)))
            goto fail;
        /* foreign_keys cascade baseline_runs; say it outright as well */
        if ((rc = sb_st_prepare(st, "DELETE FROM baseline_runs WHERE name = ?1",
                                &s, err)))
            goto fail;
        sb_st_bind_text(s, 1, name);
        if ((rc = sb_st_run(st, s, "replacing a baseline", err)))
            goto fail;
    }
    for (int i = 0; i < n; i++)
        if ((rc = add_baseline_run(st, name, ids[i], now, err)))
            goto fail;
    long count = 0;
    {
        sb_stmt *s;
        if ((rc = sb_st_prepare(st,
                                "SELECT count(*) FROM baseline_runs WHERE "
                                "name = ?1",
                                &s, err)))
            goto fail;
        sb_st_bind_text(s, 1, name);
        if (sb_stmt_step(s) == SB_STEP_ROW)
            count = (long)sb_col_int(s, 0);
        sb_stmt_free(s);
    }
    if (count > SB_STORE_BASELINE_RUNS_MAX) {
        rc = sb_fail(err, SB_EINVAL,
                     "baseline %s would hold %ld runs, at "
                     "most %d",
                     name, count, SB_STORE_BASELINE_RUNS_MAX);
        goto fail;
    }
    free(ids);
    return sb_st_exec(st, "COMMIT", err);
fail:
    sb_st_rollback(st);
    free(ids);
    return rc;
}

int sb_store_baseline_update(sb_store *st, const char *name, const char *run_id,
                             int keep, sb_err *err)
{
    if (st->version < 2)
        return sb_fail(err, SB_EINVAL,
                       "database %s: its layout (version "
                       "%ld) keeps one run a baseline",
                       st->path, st->version);
    const char *refs[1] = {run_id};
    int rc = sb_store_baseline_set_runs(st, name, refs, 1, true, err);
    if (rc)
        return rc;
    /* The oldest runs beyond `keep` leave the baseline (not the store). */
    sb_st_arm(st);
    sb_stmt *s;
    if ((rc = sb_st_prepare(
             st,
             "DELETE FROM baseline_runs WHERE name = ?1 AND run_id "
             "NOT IN (SELECT b.run_id FROM baseline_runs b JOIN runs "
             "r ON r.run_id = b.run_id WHERE b.name = ?1 ORDER BY "
             "r.started_at DESC, r.id DESC LIMIT ?2)",
             &s, err)))
        return rc;
    sb_st_bind_text(s, 1, name);
    sb_bind_int(s, 2, keep);
    return sb_st_run(st, s, "trimming a baseline", err);
}

int sb_store_baseline_set(sb_store *st, const char *name, const char *ref,
                          sb_err *err)
{
    const char *refs[1] = {ref ? ref : "last"};
    return sb_store_baseline_set_runs(st, name, refs, 1, false, err);
}

int sb_store_baseline_runs(sb_store *st, const char *name, char ids[][64],
                           int max, int *n, sb_err *err)
{
    sb_st_arm(st);
    *n = 0;
    sb_stmt *s;
    /* Version 1 of the layout kept one run a baseline. */
    int rc = sb_st_prepare(
        st,
        st->version >= 2 ? "SELECT b.run_id FROM baseline_runs b JOIN runs "
                           "r ON r.run_id = b.run_id WHERE b.name = ?1 "
                           "ORDER BY r.started_at, r.id"
                         : "SELECT run_id FROM baselines WHERE name = ?1",
        &s, err);
    if (rc)
        return rc;
    sb_st_bind_text(s, 1, name);
    while (sb_st_row(st, s, "reading a baseline", &rc, err)) {
        if (*n < max)
            snprintf(ids[(*n)++], 64, "%s", sb_st_col_text(s, 0));
    }
    sb_stmt_free(s);
    return rc;
}

int sb_store_baseline_rm(sb_store *st, const char *name, sb_err *err)
{
    sb_st_arm(st);
    sb_stmt *s;
    int rc = sb_st_prepare(st, "DELETE FROM baselines WHERE name = ?", &s, err);
    if (rc)
        return rc;
    sb_st_bind_text(s, 1, name);
    if (sb_stmt_step(s) != SB_STEP_DONE)
        rc = sb_st_fail(st, err, "removing a baseline");
    else if (sb_st_changes(st) == 0)
        rc = sb_fail(err, SB_EINVAL, "baseline '%s': no such baseline in %s",
                     name, st->path);
    sb_stmt_free(s);
    return rc;
}

int sb_store_baseline_list(sb_store *st, sb_store_baseline_fn fn, void *arg,
                           sb_err *err)
{
    sb_st_arm(st);
    sb_stmt *s;
    int rc = sb_st_prepare(
        st,
        st->version >= 2
            ? "SELECT b.name, b.run_id, b.created_at, r.started_at, "
              "r.tags, (SELECT count(*) FROM results x WHERE "
              "x.run_id = b.run_id), (SELECT count(*) FROM "
              "baseline_runs y WHERE y.name = b.name) FROM "
              "baselines b JOIN runs r ON r.run_id = b.run_id "
              "ORDER BY b.name"
            : "SELECT b.name, b.run_id, b.created_at, r.started_at, "
              "r.tags, (SELECT count(*) FROM results x WHERE "
              "x.run_id = b.run_id), 1 FROM baselines b JOIN runs r "
              "ON r.run_id = b.run_id ORDER BY b.name",
        &s, err);
    if (rc)
        return rc;
    while (sb_st_row(st, s, "listing baselines", &rc, err)) {
        sb_store_baseline b = {
            .name = sb_st_col_text(s, 0),
            .run_id = sb_st_col_text(s, 1),
            .created_at = sb_st_col_text(s, 2),
            .started_at = sb_st_col_text(s, 3),
            .tags = sb_st_col_text(s, 4),
            .n_results = (long)sb_col_int(s, 5),
            .n_runs = (long)sb_col_int(s, 6),
        };
        if ((rc = fn(&b, arg)))
            break;
    }
    sb_stmt_free(s);
    return rc;
}

/* ---- profiler traces ------------------------------------------------------
 */

static int traces_there(sb_store *st, sb_err *err)
{
    if (st->version >= 3)
        return 0;
    return sb_fail(err, SB_EINVAL,
                   "database %s: no traces stored (its layout is version "
                   "%ld, from before traces; a command that writes "
                   "upgrades it)",
                   st->path, st->version);
}

int sb_store_trace_put(sb_store *st, const char *name, const char *source,
                       const char *format, long events, const void *gz,
                       size_t len, sb_err *err)
{
    int rc;
    sb_st_arm(st);
    if (len > (size_t)SB_STORE_TRACE_MAX)
        return sb_fail(err, SB_EINVAL,
                       "trace '%s': %zu bytes gzip'd, more than the store "
                       "keeps (%ld)",
                       name, len, SB_STORE_TRACE_MAX);
    if (!name || !*name)
        return sb_fail(err, SB_EINVAL, "trace: empty name");
    if ((rc = check_baseline_name(st, name, err))) {
        /* the same rule, said for a trace */
        if (strncmp(err->msg, "baseline name", 13) == 0) {
            char m[sizeof err->msg];
            snprintf(m, sizeof m, "trace name%s", err->msg + 13);
            snprintf(err->msg, sizeof err->msg, "%s", m);
        }
        return rc;
    }
    if ((rc = traces_there(st, err)))
        return rc;
    sb_stmt *s;
    if ((rc = sb_st_prepare(
             st,
             "INSERT INTO traces(name, imported_at, source, format,"
             " events, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
             &s, err)))
        return rc;
    char now[32];
    sb_utc_now(now, sizeof now);
    sb_st_bind_text(s, 1, name);
    sb_st_bind_text(s, 2, now);
    sb_st_bind_text(s, 3, source);
    sb_st_bind_text(s, 4, format);
    sb_bind_int(s, 5, events);
    sb_bind_blob(s, 6, gz, len);
    int step = sb_stmt_step(s);
    sb_stmt_free(s);
    if (step == SB_STEP_CONSTRAINT)
        return sb_fail(err, SB_EINVAL,
                       "trace '%s' is already stored in %s: give another "
                       "--name, or remove it (trace rm %s)",
                       name, st->path, name);
    return step == SB_STEP_DONE ? 0 : sb_st_fail(st, err, "storing a trace");
}

int sb_store_trace_get(sb_store *st, const char *name, void **data, size_t *len,
                       sb_err *err)
{
    *data = NULL;
    *len = 0;
    sb_st_arm(st);
    int rc = traces_there(st, err);
    if (rc)
        return rc;
    sb_stmt *s;
    if ((rc = sb_st_prepare(st, "SELECT data FROM traces WHERE name = ?1", &s,
                            err)))
        return rc;
    sb_st_bind_text(s, 1, name);
    int step = sb_stmt_step(s);
    if (step == SB_STEP_ROW) {
        size_t n = 0;
        const void *b = sb_col_blob(s, 0, &n);
        *data = malloc(n > 0 ? n : 1);
        if (!*data)
            rc = sb_fail(err, SB_ENOMEM, "out of memory reading trace '%s'",
                         name);
        else if (n > 0)
            memcpy(*data, b, n);
        *len = n;
    } else if (step == SB_STEP_DONE) {
        rc = sb_fail(err, SB_EINVAL,
                     "trace '%s': no such trace in %s (trace list shows "
                     "them)",
                     name, st->path);
    } else {
        rc = sb_st_fail(st, err, "reading a trace");
    }
    sb_stmt_free(s);
    return rc;
}

int sb_store_trace_rm(sb_store *st, const char *name, sb_err *err)
{
    sb_st_arm(st);
    int rc = traces_there(st, err);
    if (rc)
        return rc;
    sb_stmt *s;
    if ((rc = sb_st_prepare(st, "DELETE FROM traces WHERE name = ?1", &s, err)))
        return rc;
    sb_st_bind_text(s, 1, name);
    if (sb_stmt_step(s) != SB_STEP_DONE)
        rc = sb_st_fail(st, err, "removing a trace");
    else if (sb_st_changes(st) == 0)
        rc = sb_fail(err, SB_EINVAL, "trace '%s': no such trace in %s", name,
                     st->path);
    sb_stmt_free(s);
    return rc;
}

int sb_store_trace_list(sb_store *st, sb_store_trace_fn fn, void *arg,
                        sb_err *err)
{
    sb_st_arm(st);
    if (st->version < 3)
        return 0; /* none stored yet */
    sb_stmt *s;
    int rc =
        sb_st_prepare(st,
                      "SELECT name, imported_at, source, format, events, "
                      "length(data) FROM traces ORDER BY imported_at, name",
                      &s, err);
    if (rc)
        return rc;
    while (sb_st_row(st, s, "listing traces", &rc, err)) {
        sb_store_trace t = {
            .name = sb_st_col_text(s, 0),
            .imported_at = sb_st_col_text(s, 1),
            .source = sb_st_col_text(s, 2),
            .format = sb_st_col_text(s, 3),
            .events = (long)sb_col_int(s, 4),
            .bytes = (long long)sb_col_int(s, 5),
        };
        if ((rc = fn(&t, arg)))
            break;
    }
    sb_stmt_free(s);
    return rc;
}

int sb_store_point_history(sb_store *st, const char *point_key,
                           const char *fingerprint, const char *except_run,
                           sb_point_hist *out, int max, int *n, sb_err *err)
{
    *n = 0;
    sb_st_arm(st);
    sb_stmt *s;
    int rc = sb_st_prepare(
        st,
        st->version >= 5
            ? "SELECT x.run_id, x.idx, x.p50, x.stable, "
              "coalesce(x.stab_flags, 0) FROM results x JOIN "
              "runs r ON r.run_id = x.run_id WHERE x.point_key = "
              "?1 AND x.stable IS NOT NULL AND x.valid = 1 AND "
              "r.fingerprint IS NOT DISTINCT FROM ?2 AND (?3 IS NULL OR r.run_id "
              "<> ?3) ORDER BY r.started_at DESC, r.id DESC "
              "LIMIT ?4"
            : "SELECT x.run_id, x.idx, x.p50, x.stable, 0 FROM "
              "results x JOIN runs r ON r.run_id = x.run_id "
              "WHERE x.point_key = ?1 AND x.stable IS NOT NULL "
              "AND x.valid = 1 AND r.fingerprint IS NOT DISTINCT FROM ?2 AND (?3 "
              "IS NULL OR r.run_id <> ?3) ORDER BY r.started_at "
              "DESC, r.id DESC LIMIT ?4",
        &s, err);
    if (rc)
        return rc;
    sb_st_bind_text(s, 1, point_key);
    sb_st_bind_text(s, 2, fingerprint);
    sb_st_bind_text(s, 3, except_run);
    sb_bind_int(s, 4, max);
    while (*n < max &&
           sb_st_row(st, s, "reading a point's history", &rc, err)) {
        sb_point_hist *h = &out[*n];
        const char *id = sb_col_text_or_null(s, 0);
        snprintf(h->run_id, sizeof h->run_id, "%s", id ? id : "");
        h->idx = sb_col_int(s, 1);
        h->p50 = sb_col_double(s, 2);
        h->stable = sb_col_int(s, 3) != 0;
        h->flags = (unsigned)sb_col_int(s, 4);
        (*n)++;
    }
    sb_stmt_free(s);
    return rc;
}

int sb_store_withdraw_stable(sb_store *st, const char *run_id, int idx,
                             const char *why, sb_err *err)
{
    sb_st_arm(st);
    int rc = sb_st_begin(st, err);
    if (rc)
        return rc;
    if ((rc = sb_st_withdraw_in_tx(st, run_id, idx, why, err))) {
        sb_st_rollback(st);
        return rc;
    }
    return sb_st_exec(st, "COMMIT", err);
}

int sb_st_withdraw_in_tx(sb_store *st, const char *run_id, int idx,
                         const char *why, sb_err *err)
{
    int rc = 0;
    sb_stmt *s = NULL;
    json_t *doc = NULL;
    char *text = NULL;
    if ((rc = sb_st_prepare(
             st,
             st->version >= 5
                 ? "UPDATE results SET stable = 0, stab_flags = "
                   "coalesce(stab_flags, 0) | ?3 WHERE run_id = ?1 "
                   "AND idx = ?2"
                 : "UPDATE results SET stable = 0 WHERE run_id = ?1 "
                   "AND idx = ?2 AND ?3 IS NOT NULL",
             &s, err)))
        goto fail;
    sb_st_bind_text(s, 1, run_id);
    sb_bind_int(s, 2, idx);
    sb_bind_int(s, 3, (int)SB_UNSTABLE_HISTORY);
    if (sb_stmt_step(s) != SB_STEP_DONE) {
        rc = sb_st_fail(st, err, "withdrawing a stable mark");
        goto fail;
    }
    sb_stmt_free(s);
    s = NULL;
    /* the run document, as export and compare read the run */
    if ((rc = sb_st_prepare(st, "SELECT doc FROM runs WHERE run_id = ?1", &s,
                            err)))
        goto fail;
    sb_st_bind_text(s, 1, run_id);
    if (sb_stmt_step(s) == SB_STEP_ROW && sb_col_text_or_null(s, 0))
        doc = json_loads(sb_col_text_or_null(s, 0), 0, NULL);
    sb_stmt_free(s);
    s = NULL;
    json_t *r = json_array_get(json_object_get(doc, "results"), (size_t)idx);
    if (json_is_object(r)) {
        json_object_set_new(r, "stable", json_false());
        json_t *w = json_object_get(r, "stability");
        if (!json_is_array(w)) {
            w = json_array();
            json_object_set_new(r, "stability", w);
        }
        json_array_append_new(w, json_string(why));
        text = json_dumps(doc, JSON_COMPACT);
        if (!text) {
            rc = sb_fail(err, SB_ENOMEM, "out of memory");
            goto fail;
        }
        if ((rc = sb_st_prepare(
                 st, "UPDATE runs SET doc = ?2 WHERE run_id = ?1", &s, err)))
            goto fail;
        sb_st_bind_text(s, 1, run_id);
        sb_st_bind_text(s, 2, text);
        if (sb_stmt_step(s) != SB_STEP_DONE) {
            rc = sb_st_fail(st, err, "withdrawing a stable mark");
            goto fail;
        }
        sb_stmt_free(s);
        s = NULL;
    }
fail:
    if (s)
        sb_stmt_free(s);
    free(text);
    json_decref(doc);
    return rc;
}
