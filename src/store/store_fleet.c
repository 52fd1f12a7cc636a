/*
 * store_fleet.c — fleet runs in the store (schema 7): the fleet's
 * document (solbench.fleet/1) with its hosts, link matrix and diagnosis,
 * found by id, prefix, "last" or a fleet baseline's name; the fleet
 * baselines. The hosts' runs are stored as runs (tagged with the fleet's
 * id), by the caller.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/store.h"
#include "solbench/util.h"
#include "store/store_int.h"

static int fleets_there(sb_store *st, sb_err *err)
{
    if (st->version >= 7)
        return 0;
    return sb_fail(err, SB_EINVAL,
                   "database %s: no fleet runs stored (its layout is "
                   "version %ld, from before fleets; a command that writes "
                   "upgrades it)",
                   st->path, st->version);
}

int sb_store_fleet_put(sb_store *st, const char *id, const char *started_at,
                       const char *launcher, int hosts, bool healthy,
                       const char *doc, sb_err *err)
{
    sb_st_arm(st);
    int rc = fleets_there(st, err);
    if (rc)
        return rc;
    if (!id || !*id || strlen(id) >= 64)
        return sb_fail(err, SB_EINVAL, "fleet: bad id");
    sb_stmt *s;
    if ((rc = sb_st_prepare(st,
                            "INSERT INTO fleets(fleet_id, started_at, "
                            "launcher, hosts, healthy, stored_at, doc) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                            &s, err)))
        return rc;
    char now[32];
    sb_utc_now(now, sizeof now);
    sb_st_bind_text(s, 1, id);
    sb_st_bind_text(s, 2, started_at ? started_at : now);
    sb_st_bind_text(s, 3, launcher ? launcher : "");
    sb_bind_int(s, 4, hosts);
    sb_bind_int(s, 5, healthy ? 1 : 0);
    sb_st_bind_text(s, 6, now);
    sb_st_bind_text(s, 7, doc);
    int step = sb_stmt_step(s);
    sb_stmt_free(s);
    if (step == SB_STEP_CONSTRAINT)
        return sb_fail(err, SB_EINVAL, "fleet %s is already stored in %s", id,
                       st->path);
    return step == SB_STEP_DONE ? 0
                                : sb_st_fail(st, err, "storing a fleet run");
}

/* ref to a fleet id: "last", a fleet baseline's name, an id or an
 * unambiguous prefix of one. */
static int resolve(sb_store *st, const char *ref, char *id, size_t len,
                   sb_err *err)
{
    int f;
    if (!ref || !*ref)
        return sb_fail(err, SB_EINVAL, "empty fleet reference");
    if (strcmp(ref, "last") == 0) {
        f = sb_st_lookup(st,
                         "SELECT fleet_id FROM fleets WHERE ?1 IS NOT NULL "
                         "ORDER BY started_at DESC, stored_at DESC LIMIT 1",
                         ref, id, len, err);
        if (f == 0)
            return sb_fail(err, SB_EINVAL,
                           "fleet 'last': database %s holds no fleet runs "
                           "yet (solbench fleet run stores them)",
                           st->path);
        return f < 0 ? f : 0;
    }
    f = sb_st_lookup(st, "SELECT fleet_id FROM fleet_baselines WHERE name = ?1",
                     ref, id, len, err);
    if (f)
        return f < 0 ? f : 0;
    f = sb_st_lookup(st, "SELECT fleet_id FROM fleets WHERE fleet_id = ?1", ref,
                     id, len, err);
    if (f)
        return f < 0 ? f : 0;
    f = sb_st_lookup(st,
                     "SELECT fleet_id FROM fleets WHERE substr(fleet_id, 1, "
                     "length(?1)) = ?1 LIMIT 2",
                     ref, id, len, err);
    if (f < 0)
        return f;
    if (f == 2)
        return sb_fail(err, SB_EINVAL,
                       "fleet '%s': ambiguous, several fleet ids start "
                       "with it",
                       ref);
    if (f == 0)
        return sb_fail(err, SB_EINVAL,
                       "fleet '%s': no such fleet id or fleet baseline in "
                       "%s (fleet list shows them)",
                       ref, st->path);
    return 0;
}

int sb_store_fleet_get(sb_store *st, const char *ref, char *id, size_t len,
                       char **doc, sb_err *err)
{
    *doc = NULL;
    sb_st_arm(st);
    int rc = fleets_there(st, err);
    if (rc || (rc = resolve(st, ref, id, len, err)))
        return rc;
    sb_stmt *s;
    if ((rc = sb_st_prepare(st, "SELECT doc FROM fleets WHERE fleet_id = ?1",
                            &s, err)))
        return rc;
    sb_st_bind_text(s, 1, id);
    int step = sb_stmt_step(s);
    if (step == SB_STEP_ROW) {
        *doc = strdup(sb_st_col_text(s, 0));
        if (!*doc)
            rc = sb_fail(err, SB_ENOMEM, "out of memory reading fleet %s", id);
    } else if (step == SB_STEP_DONE) {
        rc = sb_fail(err, SB_EINVAL, "fleet %s: removed while read", id);
    } else {
        rc = sb_st_fail(st, err, "reading a fleet run");
    }
    sb_stmt_free(s);
    return rc;
}

int sb_store_fleet_check_name(const char *name, sb_err *err)
{
    size_t nl = name ? strlen(name) : 0;
    bool ok = nl > 0 && nl <= SB_STORE_NAME_MAX &&
              isalpha((unsigned char)name[0]) && strcmp(name, "last") != 0;
    for (size_t i = 1; ok && i < nl; i++)
        ok = isalnum((unsigned char)name[i]) || strchr("._-", name[i]);
    if (!ok)
        return sb_fail(err, SB_EINVAL,
                       "fleet baseline name '%.80s': use a letter, then "
                       "letters, digits, '.', '_' or '-', at most %d "
                       "characters ('last' is reserved)",
                       name ? name : "", SB_STORE_NAME_MAX);
    return 0;
}

int sb_store_fleet_baseline_set(sb_store *st, const char *name, const char *ref,
                                char *id, size_t len, sb_err *err)
{
    sb_st_arm(st);
    int rc = fleets_there(st, err);
    if (rc || (rc = sb_store_fleet_check_name(name, err)) ||
        (rc = resolve(st, ref, id, len, err)))
        return rc;
    sb_stmt *s;
    if ((rc = sb_st_prepare(st,
                            "INSERT INTO fleet_baselines(name, fleet_id, "
                            "created_at) VALUES (?1, ?2, ?3) ON CONFLICT "
                            "(name) DO UPDATE SET fleet_id = "
                            "excluded.fleet_id, created_at = "
                            "excluded.created_at",
                            &s, err)))
        return rc;
    char now[32];
    sb_utc_now(now, sizeof now);
    sb_st_bind_text(s, 1, name);
    sb_st_bind_text(s, 2, id);
    sb_st_bind_text(s, 3, now);
    return sb_st_run(st, s, "setting a fleet baseline", err);
}

int sb_store_fleet_list(sb_store *st, sb_store_fleet_fn fn, void *arg,
                        sb_err *err)
{
    sb_st_arm(st);
    if (st->version < 7)
        return 0; /* none stored yet */
    sb_stmt *s;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT f.fleet_id, f.started_at, f.launcher, f.hosts, f.healthy,"
             " (SELECT %s(b.name, ',') FROM fleet_baselines b"
             "  WHERE b.fleet_id = f.fleet_id)"
             " FROM fleets f ORDER BY f.started_at, f.stored_at",
             sb_st_concat_agg(st));
    int rc = sb_st_prepare(st, sql, &s, err);
    if (rc)
        return rc;
    while (sb_st_row(st, s, "listing fleet runs", &rc, err)) {
        sb_store_fleet f = {
            .id = sb_st_col_text(s, 0),
            .started_at = sb_st_col_text(s, 1),
            .launcher = sb_st_col_text(s, 2),
            .hosts = sb_col_int(s, 3),
            .healthy = sb_col_int(s, 4) != 0,
            .baselines = sb_st_col_text(s, 5),
        };
        if ((rc = fn(&f, arg)))
            break;
    }
    sb_stmt_free(s);
    return rc;
}
