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

/* A table copied row by row: each source row's key (column 0) looked up
 * in the destination, its compared column held against what is stored
 * there: the same, skipped; absent, inserted; another, the import
 * refused. */
typedef struct copy_spec {
    const char *select;  /* from the source: the key first */
    const char *lookup;  /* from dst: the compared column WHERE key = ?1 */
    const char *insert;  /* into dst: ?1.. the selected columns in order */
    int ncols, cmp_col;  /* columns selected; the one compared */
    unsigned int_cols;   /* bit i: column i an integer */
    int blob_col;        /* a blob column (-1: none) */
    const char *what;    /* "trace": in messages */
    const char *differs; /* "with other contents" */
} copy_spec;

/* 1: dst holds the row's key with the same compared column; 0: it does
 * not hold the key; 2: it holds another; -1: *rc says what failed. */
static int same_row(sb_store *dst, const copy_spec *c, sb_stmt *row, int *rc,
                    sb_err *err)
{
    bool blob = c->cmp_col == c->blob_col;
    size_t len = 0;
    const void *val = blob ? sb_col_blob(row, c->cmp_col, &len)
                           : sb_st_col_text(row, c->cmp_col);
    if (!blob)
        len = strlen(val);
    sb_stmt *s;
    if ((*rc = sb_st_prepare(dst, c->lookup, &s, err)))
        return -1;
    sb_st_bind_text(s, 1, sb_st_col_text(row, 0));
    int step = sb_stmt_step(s), res = 0;
    if (step == SB_STEP_ROW) {
        size_t have = 0;
        const void *p = blob ? sb_col_blob(s, 0, &have) : sb_st_col_text(s, 0);
        if (!blob)
            have = strlen(p);
        res = have == len && (len == 0 || memcmp(p, val, len) == 0) ? 1 : 2;
    } else if (step != SB_STEP_DONE) {
        *rc = sb_st_fail(dst, err, "reading the destination");
        res = -1;
    }
    sb_stmt_free(s);
    return res;
}

/* Copies c's table from src into dst; *seen and *added (may be NULL)
 * count the source's rows and those inserted. */
static int copy_rows(sb_store *dst, sb_store *src, const copy_spec *c,
                     int *seen, int *added, sb_err *err)
{
    sb_stmt *s;
    int rc = sb_st_prepare(src, c->select, &s, err);
    if (rc)
        return rc;
    char reading[80], storing[80];
    snprintf(reading, sizeof reading, "reading the source's %ss", c->what);
    snprintf(storing, sizeof storing, "storing a %s", c->what);
    while (sb_st_row(src, s, reading, &rc, err)) {
        if (seen)
            (*seen)++;
        int f = same_row(dst, c, s, &rc, err);
        if (f < 0)
            break;
        if (f == 2) {
            rc = sb_fail(err, SB_EINVAL,
                         "%s '%s' is in both stores %s; nothing was imported",
                         c->what, sb_st_col_text(s, 0), c->differs);
            break;
        }
        if (f == 1)
            continue;
        sb_stmt *w;
        if ((rc = sb_st_prepare(dst, c->insert, &w, err)))
            break;
        for (int i = 0; i < c->ncols; i++) {
            if (c->int_cols & (1u << i)) {
                sb_bind_int(w, i + 1, sb_col_int(s, i));
            } else if (i == c->blob_col) {
                size_t len = 0;
                const void *p = sb_col_blob(s, i, &len);
                sb_bind_blob(w, i + 1, p, len);
            } else {
                sb_st_bind_text(w, i + 1, sb_st_col_text(s, i));
            }
        }
        if ((rc = sb_st_run(dst, w, storing, err)))
            break;
        if (added)
            (*added)++;
    }
    sb_stmt_free(s);
    return rc;
}

static const copy_spec traces_spec = {
    "SELECT name, imported_at, source, format, events, data FROM traces "
    "ORDER BY name",
    "SELECT data FROM traces WHERE name = ?1",
    "INSERT INTO traces(name, imported_at, source, format, events, data) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    6,
    5,
    1u << 4,
    5,
    "trace",
    "with other contents"};

static const copy_spec fleets_spec = {
    "SELECT fleet_id, started_at, launcher, hosts, healthy, stored_at, doc "
    "FROM fleets ORDER BY started_at, fleet_id",
    "SELECT doc FROM fleets WHERE fleet_id = ?1",
    "INSERT INTO fleets(fleet_id, started_at, launcher, hosts, healthy, "
    "stored_at, doc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    7,
    6,
    1u << 3 | 1u << 4,
    -1,
    "fleet run",
    "with other contents"};

/* the fleets named as baselines */
static const copy_spec fleet_baselines_spec = {
    "SELECT name, fleet_id, created_at FROM fleet_baselines ORDER BY name",
    "SELECT fleet_id FROM fleet_baselines WHERE name = ?1",
    "INSERT INTO fleet_baselines(name, fleet_id, created_at) "
    "VALUES (?1, ?2, ?3)",
    3,
    1,
    0,
    -1,
    "fleet baseline",
    "naming other fleet runs"};

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
        (src->version >= 3 &&
         (rc = copy_rows(dst, src, &traces_spec, &n->traces, &n->traces_new,
                         err))) ||
        (src->version >= 7 &&
         ((rc = copy_rows(dst, src, &fleets_spec, &n->fleets, &n->fleets_new,
                          err)) ||
          (rc =
               copy_rows(dst, src, &fleet_baselines_spec, NULL, NULL, err))))) {
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
