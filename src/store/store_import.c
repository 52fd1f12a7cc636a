/*
 * store_import.c — one store into another (`solbench import --db DEST
 * SOURCE` where SOURCE is a store): every run, baseline, profiler trace
 * and fleet record of the source, in one transaction of the destination,
 * all or nothing. What the destination already holds as it is, is
 * skipped, so a second import changes nothing; what it holds under the
 * same name with other contents (a different run under a stored id, a
 * baseline of other runs, another trace or fleet record) refuses the
 * whole import, naming it. Either store may be SQLite or PostgreSQL:
 * moving a team from files to a server is an import.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "solbench/bench.h"
#include "store/store_int.h"

/* The source's runs, oldest first, read from their stored documents. */
static int read_runs(sb_store *src, sb_run **out, int *n, sb_err *err)
{
    sb_stmt *s;
    *out = NULL;
    *n = 0;
    int rc = sb_st_prepare(src,
                           "SELECT run_id, doc FROM runs "
                           "ORDER BY started_at, id",
                           &s, err);
    if (rc)
        return rc;
    int cap = 0;
    while (sb_st_row(src, s, "reading the source's runs", &rc, err)) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            sb_run *g = realloc(*out, (size_t)cap * sizeof *g);
            if (!g) {
                rc = sb_fail(err, SB_ENOMEM, "out of memory");
                break;
            }
            *out = g;
        }
        json_error_t jerr;
        json_t *doc = json_loads(sb_st_col_text(s, 1), 0, &jerr);
        if (!doc) {
            rc = sb_fail(err, SB_EINVAL,
                         "database %s: run %s: its stored document does "
                         "not parse (%s); nothing was imported",
                         src->path, sb_st_col_text(s, 0), jerr.text);
            break;
        }
        rc = sb_run_from_json(doc, &(*out)[*n], err);
        json_decref(doc);
        if (rc) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            rc = sb_fail(err, SB_EINVAL,
                         "database %s: run %s: %s; nothing was imported",
                         src->path, sb_st_col_text(s, 0), why);
            break;
        }
        (*n)++;
    }
    sb_stmt_free(s);
    return rc;
}

/* The run ids of a baseline, sorted and joined by spaces ("" if none). */
static int baseline_set(sb_store *st, const char *name, char **out, sb_err *err)
{
    sb_stmt *s;
    *out = NULL;
    int rc = sb_st_prepare(st,
                           st->version >= 2
                               ? "SELECT run_id FROM baseline_runs WHERE "
                                 "name = ?1 ORDER BY run_id"
                               : "SELECT run_id FROM baselines WHERE "
                                 "name = ?1",
                           &s, err);
    if (rc)
        return rc;
    sb_st_bind_text(s, 1, name);
    size_t len = 0, cap = 256;
    char *buf = calloc(1, cap);
    if (!buf) {
        sb_stmt_free(s);
        return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    while (sb_st_row(st, s, "reading a baseline", &rc, err)) {
        const char *id = sb_st_col_text(s, 0);
        size_t need = len + strlen(id) + 2;
        if (need > cap) {
            cap = need * 2;
            char *g = realloc(buf, cap);
            if (!g) {
                rc = sb_fail(err, SB_ENOMEM, "out of memory");
                break;
            }
            buf = g;
        }
        len += (size_t)sprintf(buf + len, "%s%s", len ? " " : "", id);
    }
    sb_stmt_free(s);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    return 0;
}

static int import_baselines(sb_store *dst, sb_store *src,
                            sb_store_import_stats *n, sb_err *err)
{
    sb_stmt *s;
    int rc = sb_st_prepare(src,
                           "SELECT name, run_id, created_at FROM baselines "
                           "ORDER BY name",
                           &s, err);
    if (rc)
        return rc;
    while (sb_st_row(src, s, "reading the source's baselines", &rc, err)) {
        const char *name = sb_st_col_text(s, 0);
        char *want = NULL, *have = NULL;
        n->baselines++;
        if ((rc = baseline_set(src, name, &want, err)) ||
            (rc = baseline_set(dst, name, &have, err))) {
            free(want);
            break;
        }
        bool same = strcmp(want, have) == 0, absent = !have[0];
        free(have);
        if (!same && !absent) {
            free(want);
            rc = sb_fail(err, SB_EINVAL,
                         "baseline '%s' is in both stores with other runs; "
                         "nothing was imported (rename or delete it in "
                         "one of them)",
                         name);
            break;
        }
        if (same) {
            free(want);
            continue;
        }
        sb_stmt *w;
        if ((rc = sb_st_prepare(dst,
                                "INSERT INTO baselines(name, run_id, "
                                "created_at) VALUES (?1, ?2, ?3) "
                                "ON CONFLICT DO NOTHING",
                                &w, err))) {
            free(want);
            break;
        }
        sb_st_bind_text(w, 1, name);
        sb_st_bind_text(w, 2, sb_st_col_text(s, 1));
        sb_st_bind_text(w, 3, sb_st_col_text(s, 2));
        if ((rc = sb_st_run(dst, w, "storing a baseline", err))) {
            free(want);
            break;
        }
        char *save = NULL;
        for (char *id = strtok_r(want, " ", &save); id && !rc;
             id = strtok_r(NULL, " ", &save)) {
            if ((rc = sb_st_prepare(dst,
                                    "INSERT INTO baseline_runs(name, run_id, "
                                    "added_at) VALUES (?1, ?2, ?3) "
                                    "ON CONFLICT DO NOTHING",
                                    &w, err)))
                break;
            sb_st_bind_text(w, 1, name);
            sb_st_bind_text(w, 2, id);
            sb_st_bind_text(w, 3, sb_st_col_text(s, 2));
            rc = sb_st_run(dst, w, "storing a baseline", err);
        }
        free(want);
        if (rc)
            break;
        n->baselines_new++;
    }
    sb_stmt_free(s);
    return rc;
}

/* 1: dst holds `key` in `table` with the same `col` as the value given;
 * 0: dst does not hold it; 2: it holds another. */
static int same_row(sb_store *dst, const char *sql, const char *key,
                    const void *val, size_t len, bool blob, int *rc,
                    sb_err *err)
{
    sb_stmt *s;
    if ((*rc = sb_st_prepare(dst, sql, &s, err)))
        return -1;
    sb_st_bind_text(s, 1, key);
    int step = sb_stmt_step(s), res = 0;
    if (step == SB_STEP_ROW) {
        size_t have = 0;
        const void *p = blob ? sb_col_blob(s, 0, &have) : NULL;
        if (!blob) {
            p = sb_st_col_text(s, 0);
            have = strlen(p);
        }
        res = have == len && (len == 0 || memcmp(p, val, len) == 0) ? 1 : 2;
    } else if (step != SB_STEP_DONE) {
        *rc = sb_st_fail(dst, err, "reading the destination");
        res = -1;
    }
    sb_stmt_free(s);
    return res;
}

static int import_traces(sb_store *dst, sb_store *src, sb_store_import_stats *n,
                         sb_err *err)
{
    sb_stmt *s;
    int rc = sb_st_prepare(src,
                           "SELECT name, imported_at, source, format, events, "
                           "data FROM traces ORDER BY name",
                           &s, err);
    if (rc)
        return rc;
    while (sb_st_row(src, s, "reading the source's traces", &rc, err)) {
        const char *name = sb_st_col_text(s, 0);
        size_t len = 0;
        const void *data = sb_col_blob(s, 5, &len);
        n->traces++;
        int f = same_row(dst, "SELECT data FROM traces WHERE name = ?1", name,
                         data, len, true, &rc, err);
        if (f < 0)
            break;
        if (f == 2) {
            rc = sb_fail(err, SB_EINVAL,
                         "trace '%s' is in both stores with other contents; "
                         "nothing was imported",
                         name);
            break;
        }
        if (f == 1)
            continue;
        sb_stmt *w;
        if ((rc = sb_st_prepare(dst,
                                "INSERT INTO traces(name, imported_at, source, "
                                "format, events, data) VALUES (?1, ?2, ?3, "
                                "?4, ?5, ?6)",
                                &w, err)))
            break;
        for (int i = 0; i < 4; i++)
            sb_st_bind_text(w, i + 1, sb_st_col_text(s, i));
        sb_bind_int(w, 5, sb_col_int(s, 4));
        sb_bind_blob(w, 6, data, len);
        if ((rc = sb_st_run(dst, w, "storing a trace", err)))
            break;
        n->traces_new++;
    }
    sb_stmt_free(s);
    return rc;
}

static int import_fleets(sb_store *dst, sb_store *src, sb_store_import_stats *n,
                         sb_err *err)
{
    sb_stmt *s;
    int rc = sb_st_prepare(src,
                           "SELECT fleet_id, started_at, launcher, hosts, "
                           "healthy, stored_at, doc FROM fleets "
                           "ORDER BY started_at, fleet_id",
                           &s, err);
    if (rc)
        return rc;
    while (sb_st_row(src, s, "reading the source's fleet runs", &rc, err)) {
        const char *id = sb_st_col_text(s, 0), *doc = sb_st_col_text(s, 6);
        n->fleets++;
        int f = same_row(dst, "SELECT doc FROM fleets WHERE fleet_id = ?1", id,
                         doc, strlen(doc), false, &rc, err);
        if (f < 0)
            break;
        if (f == 2) {
            rc = sb_fail(err, SB_EINVAL,
                         "fleet run %s is in both stores with other "
                         "contents; nothing was imported",
                         id);
            break;
        }
        if (f == 1)
            continue;
        sb_stmt *w;
        if ((rc = sb_st_prepare(dst,
                                "INSERT INTO fleets(fleet_id, started_at, "
                                "launcher, hosts, healthy, stored_at, doc) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                &w, err)))
            break;
        for (int i = 0; i < 7; i++) {
            if (i == 3 || i == 4)
                sb_bind_int(w, i + 1, sb_col_int(s, i));
            else
                sb_st_bind_text(w, i + 1, sb_st_col_text(s, i));
        }
        if ((rc = sb_st_run(dst, w, "storing a fleet run", err)))
            break;
        n->fleets_new++;
    }
    sb_stmt_free(s);
    if (rc)
        return rc;
    /* the fleets named as baselines */
    if ((rc = sb_st_prepare(src,
                            "SELECT name, fleet_id, created_at FROM "
                            "fleet_baselines ORDER BY name",
                            &s, err)))
        return rc;
    while (
        sb_st_row(src, s, "reading the source's fleet baselines", &rc, err)) {
        const char *name = sb_st_col_text(s, 0), *id = sb_st_col_text(s, 1);
        int f = same_row(dst,
                         "SELECT fleet_id FROM fleet_baselines WHERE name = ?1",
                         name, id, strlen(id), false, &rc, err);
        if (f < 0)
            break;
        if (f == 2) {
            rc = sb_fail(err, SB_EINVAL,
                         "fleet baseline '%s' is in both stores naming "
                         "other fleet runs; nothing was imported",
                         name);
            break;
        }
        if (f == 1)
            continue;
        sb_stmt *w;
        if ((rc = sb_st_prepare(dst,
                                "INSERT INTO fleet_baselines(name, fleet_id, "
                                "created_at) VALUES (?1, ?2, ?3)",
                                &w, err)))
            break;
        for (int i = 0; i < 3; i++)
            sb_st_bind_text(w, i + 1, sb_st_col_text(s, i));
        if ((rc = sb_st_run(dst, w, "storing a fleet baseline", err)))
            break;
    }
    sb_stmt_free(s);
    return rc;
}

int sb_store_import_store(sb_store *dst, sb_store *src,
                          sb_store_import_stats *n, sb_err *err)
{
    memset(n, 0, sizeof *n);
    sb_st_arm(src);
    sb_st_arm(dst);
    if (dst->ro)
        return sb_fail(err, SB_EINVAL, "database %s: opened read-only",
                       dst->path);
    sb_run *runs = NULL;
    int nruns = 0;
    bool *inserted = NULL;
    int rc = read_runs(src, &runs, &nruns, err);
    if (rc)
        goto out;
    inserted = calloc((size_t)nruns + 1, sizeof *inserted);
    if (!inserted) {
        rc = sb_fail(err, SB_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = sb_st_begin(dst, err)))
        goto out;
    if ((rc = sb_st_import_in_tx(dst, runs, NULL, nruns, inserted, err)) ||
        (rc = import_baselines(dst, src, n, err)) ||
        (src->version >= 3 && (rc = import_traces(dst, src, n, err))) ||
        (src->version >= 7 && (rc = import_fleets(dst, src, n, err)))) {
        sb_st_rollback(dst);
        goto out;
    }
    if ((rc = sb_st_exec(dst, "COMMIT", err))) {
        sb_st_rollback(dst);
        goto out;
    }
    n->runs = nruns;
    for (int i = 0; i < nruns; i++)
        n->runs_new += inserted[i];
out:
    if (rc)
        memset(n, 0, sizeof *n);
    for (int i = 0; i < nruns; i++)
        sb_run_free(&runs[i]);
    free(runs);
    free(inserted);
    return rc;
}
