/*
 * store_pg.c — the store on a PostgreSQL server, through libpq: a team's
 * one history that many machines and CI jobs write at once.
 *
 * The store's statements are written once, in the SQL both databases
 * take (ON CONFLICT, RETURNING, IS NOT DISTINCT FROM); this driver turns
 * their ?N placeholders into $N, sends typed parameters (text, int8,
 * float8, bytea) and reads the text of each column. The schema is made
 * whole at its current version (there are no older PostgreSQL stores to
 * migrate), under an advisory lock so two first writers cannot both make
 * it; a table `solbench_meta` holds what SQLite keeps in its header
 * (application id, schema version). Transactions are READ COMMITTED: a
 * run is one transaction, and the store's writes either insert rows of
 * their own or resolve a conflict on a key (ON CONFLICT), so concurrent
 * writers never wait on each other's rows; a serialization failure or a
 * deadlock is retried by the caller's transaction loop (sb_st_retryable).
 * A password in the URL is never printed: messages name the store by its
 * URL with the password taken out.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "solbench/sysinfo.h"
#include "solbench/util.h"
#include "store/store_int.h"

/* Type OIDs of the parameters sent (pg_type.h's values, fixed). */
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_TEXT 25
#define OID_FLOAT8 701

/* Parameters a statement may take. */
#define PG_MAX_PARAMS 64

struct sb_pgstmt {
    char *sql; /* with $N placeholders */
    int nparams;
    char *val[PG_MAX_PARAMS];
    int len[PG_MAX_PARAMS];
    int fmt[PG_MAX_PARAMS];
    unsigned oid[PG_MAX_PARAMS];
    PGresult *res;
    int row, nrows;
    unsigned char *blob; /* the last blob column read, unescaped */
    bool reused;         /* run again after a reset: worth preparing */
    char name[24];       /* its name on the server once prepared, or "" */
};

bool sb_store_is_url(const char *path)
{
    return path && (strncmp(path, "postgresql://", 13) == 0 ||
                    strncmp(path, "postgres://", 11) == 0);
}

/* The URL without its password: user:secret@host -> user@host, and a
 * password=... parameter dropped. */
void sb_pg_redact(const char *url, char *out, size_t len)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", url);
    char *auth = strstr(buf, "://");
    if (auth) {
        auth += 3;
        char *at = strchr(auth, '@'), *slash = strchr(auth, '/');
        char *colon = strchr(auth, ':');
        if (at && (!slash || at < slash) && colon && colon < at)
            memmove(colon, at, strlen(at) + 1);
    }
    char *q = strchr(buf, '?');
    while (q) {
        char *p = strstr(q, "password=");
        if (!p)
            break;
        char *end = strchr(p, '&');
        if (end)
            memmove(p, end + 1, strlen(end + 1) + 1);
        else
            *(p > q + 1 ? p - 1 : p) = '\0';
    }
    snprintf(out, len, "%s", buf);
}

/* ?N -> $N; a bare ? takes the number after the highest seen (SQLite's
 * rule). Text in quotes is copied as it is. */
static char *translate(const char *sql, int *nparams)
{
    size_t n = strlen(sql);
    char *out = malloc(n * 2 + 16);
    if (!out)
        return NULL;
    size_t o = 0;
    int high = 0;
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = sql[i];
        if (quote) {
            out[o++] = c;
            if (c == quote)
                quote = 0;
            continue;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            out[o++] = c;
            continue;
        }
        if (c != '?') {
            out[o++] = c;
            continue;
        }
        int k = 0;
        while (i + 1 < n && sql[i + 1] >= '0' && sql[i + 1] <= '9')
            k = k * 10 + (sql[++i] - '0');
        if (k == 0)
            k = high + 1;
        if (k > high)
            high = k;
        o += (size_t)sprintf(out + o, "$%d", k);
    }
    out[o] = '\0';
    *nparams = high;
    return out;
}

int sb_pg_prepare(sb_stmt *s, const char *sql, sb_err *err)
{
    struct sb_pgstmt *p = calloc(1, sizeof *p);
    if (!p)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    p->sql = translate(sql, &p->nparams);
    if (!p->sql || p->nparams > PG_MAX_PARAMS) {
        free(p->sql);
        free(p);
        return sb_fail(err, SB_EINVAL, "a query with too many parameters");
    }
    s->pg = p;
    return 0;
}

static void clear_result(struct sb_pgstmt *p)
{
    PQclear(p->res);
    p->res = NULL;
    PQfreemem(p->blob);
    p->blob = NULL;
    p->row = p->nrows = 0;
}

void sb_pg_reset(sb_stmt *s)
{
    struct sb_pgstmt *p = s->pg;
    clear_result(p);
    p->reused = true;
    for (int i = 0; i < PG_MAX_PARAMS; i++) {
        free(p->val[i]);
        p->val[i] = NULL;
        p->oid[i] = 0;
        p->len[i] = p->fmt[i] = 0;
    }
}

void sb_pg_free(sb_stmt *s)
{
    if (!s->pg)
        return;
    sb_pg_reset(s);
    if (s->pg->name[0]) {
        char sql[48];
        sb_pg_sync(s->st);
        snprintf(sql, sizeof sql, "DEALLOCATE %s", s->pg->name);
        PQclear(PQexec(s->st->pg, sql));
    }
    free(s->pg->sql);
    free(s->pg);
    s->pg = NULL;
}

static void set_param(sb_stmt *s, int i, char *v, int len, int fmt,
                      unsigned oid)
{
    struct sb_pgstmt *p = s->pg;
    if (i < 1 || i > PG_MAX_PARAMS) {
        free(v);
        return;
    }
    free(p->val[i - 1]);
    p->val[i - 1] = v;
    p->len[i - 1] = len;
    p->fmt[i - 1] = fmt;
    p->oid[i - 1] = oid;
}

void sb_pg_bind_int(sb_stmt *s, int i, int64_t v)
{
    char *t = malloc(24);
    if (t)
        snprintf(t, 24, "%lld", (long long)v);
    set_param(s, i, t, 0, 0, OID_INT8);
}

void sb_pg_bind_double(sb_stmt *s, int i, double v)
{
    char *t = malloc(40);
    /* NaN and infinities as PostgreSQL spells them */
    if (t)
        snprintf(t, 40, "%s",
                 isnan(v)   ? "NaN"
                 : isinf(v) ? (v > 0 ? "Infinity" : "-Infinity")
                            : "");
    if (t && !t[0])
        snprintf(t, 40, "%.17g", v);
    set_param(s, i, t, 0, 0, OID_FLOAT8);
}

void sb_pg_bind_text(sb_stmt *s, int i, const char *t)
{
    if (!t) { /* a text NULL: typed, so that "?1 IS NULL" can be planned */
        set_param(s, i, NULL, 0, 0, OID_TEXT);
        return;
    }
    set_param(s, i, strdup(t), 0, 0, OID_TEXT);
}

void sb_pg_bind_blob(sb_stmt *s, int i, const void *b, size_t len)
{
    char *v = malloc(len ? len : 1);
    if (v && len)
        memcpy(v, b, len);
    set_param(s, i, v, (int)len, 1, OID_BYTEA);
}

/* Keeps the connection's last failure for sb_st_fail: its SQLSTATE and
 * its first line. */
static void keep_error(sb_store *st, const PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg =
        res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (!msg || !*msg)
        msg = PQerrorMessage(st->pg);
    snprintf(st->pg_state, sizeof st->pg_state, "%s", state ? state : "");
    snprintf(st->pg_msg, sizeof st->pg_msg, "%s", msg ? msg : "");
    char *nl = strchr(st->pg_msg, '\n');
    if (nl)
        *nl = '\0';
}

/* Prepares p on the server under a name of its own, with the types of
 * its present binds; 0, or SB_STEP_ERROR with the cause kept. */
static int prepare_named(sb_store *st, struct sb_pgstmt *p,
                         const unsigned *oids)
{
    char name[24];
    snprintf(name, sizeof name, "sb_%u", ++st->pg_nstmt);
    PGresult *pr = PQprepare(st->pg, name, p->sql, p->nparams, oids);
    bool ok = pr && PQresultStatus(pr) == PGRES_COMMAND_OK;
    if (ok)
        snprintf(p->name, sizeof p->name, "%s", name);
    else
        keep_error(st, pr);
    PQclear(pr);
    return ok ? 0 : SB_STEP_ERROR;
}

int sb_pg_step(sb_stmt *s)
{
    struct sb_pgstmt *p = s->pg;
    sb_store *st = s->st;
    if (!p->res) {
        int prc = sb_pg_sync(st); /* what was sent before, first */
        if (prc != SB_STEP_DONE)
            return prc;
        const char *vals[PG_MAX_PARAMS];
        unsigned oids[PG_MAX_PARAMS];
        for (int i = 0; i < p->nparams; i++) {
            vals[i] = p->val[i];
            oids[i] = p->oid[i];
        }
        /* A statement run again (a row a result) is prepared on the
         * server once, with the types of its first run, and executed by
         * name: parsed and planned once, not every time. */
        if (p->reused && !p->name[0] && prepare_named(st, p, oids))
            return SB_STEP_ERROR;
        p->res = p->name[0] ? PQexecPrepared(st->pg, p->name, p->nparams, vals,
                                             p->len, p->fmt, 0)
                            : PQexecParams(st->pg, p->sql, p->nparams, oids,
                                           vals, p->len, p->fmt, 0);
        ExecStatusType es = p->res ? PQresultStatus(p->res) : PGRES_FATAL_ERROR;
        if (es != PGRES_TUPLES_OK && es != PGRES_COMMAND_OK) {
            keep_error(st, p->res);
            bool constraint = strncmp(st->pg_state, "23", 2) == 0;
            PQclear(p->res);
            p->res = NULL;
            return constraint ? SB_STEP_CONSTRAINT : SB_STEP_ERROR;
        }
        const char *ct = PQcmdTuples(p->res);
        st->pg_changes = ct && *ct ? atol(ct) : 0;
        p->nrows = es == PGRES_TUPLES_OK ? PQntuples(p->res) : 0;
        p->row = -1;
    }
    if (p->row + 1 < p->nrows) {
        p->row++;
        return SB_STEP_ROW;
    }
    p->row = p->nrows;
    return SB_STEP_DONE;
}

static const char *cell(sb_stmt *s, int i)
{
    struct sb_pgstmt *p = s->pg;
    if (!p->res || p->row < 0 || p->row >= p->nrows || i >= PQnfields(p->res) ||
        PQgetisnull(p->res, p->row, i))
        return NULL;
    return PQgetvalue(p->res, p->row, i);
}

/* ---- a pipeline of statements without rows ------------------------------
 * A run's results are sent one after another without waiting for each
 * reply (libpq's pipeline mode), and their replies read at the end: the
 * client encodes the next result while the server stores the last one.
 * At most PG_PIPE_MAX are in flight, so the server's replies never fill
 * the socket while the client still writes. */
#define PG_PIPE_MAX 128

static int pipe_collect(sb_store *st)
{
    int rc = 0;
    if (PQpipelineSync(st->pg) != 1) {
        keep_error(st, NULL);
        rc = SB_STEP_ERROR;
    }
    /* every query's reply (a result, then NULL), then the sync's */
    for (;;) {
        PGresult *r = PQgetResult(st->pg);
        if (!r) {
            if (PQstatus(st->pg) == CONNECTION_BAD) {
                if (!rc)
                    keep_error(st, NULL);
                rc = SB_STEP_ERROR;
                break;
            }
            continue;
        }
        ExecStatusType es = PQresultStatus(r);
        if (es == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            break;
        }
        if (!rc && es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK) {
            keep_error(st, r);
            rc = strncmp(st->pg_state, "23", 2) == 0 ? SB_STEP_CONSTRAINT
                                                     : SB_STEP_ERROR;
        }
        PQclear(r);
    }
    st->pg_pending = 0;
    if (PQexitPipelineMode(st->pg) != 1 && !rc) {
        keep_error(st, NULL);
        rc = SB_STEP_ERROR;
    }
    return rc;
}

int sb_pg_send(sb_stmt *s)
{
    struct sb_pgstmt *p = s->pg;
    sb_store *st = s->st;
    const char *vals[PG_MAX_PARAMS];
    unsigned oids[PG_MAX_PARAMS];
    for (int i = 0; i < p->nparams; i++) {
        vals[i] = p->val[i];
        oids[i] = p->oid[i];
    }
    if (!p->name[0]) { /* prepared first, outside the pipeline */
        if (st->pg_pending && pipe_collect(st))
            return SB_STEP_ERROR;
        if (prepare_named(st, p, oids))
            return SB_STEP_ERROR;
    }
    if (PQpipelineStatus(st->pg) == PQ_PIPELINE_OFF &&
        PQenterPipelineMode(st->pg) != 1) {
        keep_error(st, NULL);
        return SB_STEP_ERROR;
    }
    if (PQsendQueryPrepared(st->pg, p->name, p->nparams, vals, p->len, p->fmt,
                            0) != 1) {
        keep_error(st, NULL);
        pipe_collect(st);
        return SB_STEP_ERROR;
    }
    if (++st->pg_pending >= PG_PIPE_MAX)
        return pipe_collect(st);
    return SB_STEP_DONE;
}

int sb_pg_sync(sb_store *st)
{
    return st->pg_pending || PQpipelineStatus(st->pg) != PQ_PIPELINE_OFF
               ? pipe_collect(st)
               : SB_STEP_DONE;
}

int64_t sb_pg_col_int(sb_stmt *s, int i)
{
    const char *v = cell(s, i);
    if (!v)
        return 0;
    if (v[0] == 't' && !v[1]) /* a boolean expression */
        return 1;
    if (v[0] == 'f' && !v[1])
        return 0;
    if (strchr(v, '.') || strchr(v, 'e'))
        return (int64_t)strtod(v, NULL);
    return (int64_t)strtoll(v, NULL, 10);
}

double sb_pg_col_double(sb_stmt *s, int i)
{
    const char *v = cell(s, i);
    return v ? strtod(v, NULL) : 0.0;
}

bool sb_pg_col_null(sb_stmt *s, int i)
{
    return cell(s, i) == NULL;
}

const char *sb_pg_col_text(sb_stmt *s, int i)
{
    return cell(s, i);
}

const void *sb_pg_col_blob(sb_stmt *s, int i, size_t *len)
{
    struct sb_pgstmt *p = s->pg;
    const char *v = cell(s, i);
    PQfreemem(p->blob);
    p->blob = NULL;
    *len = 0;
    if (!v)
        return NULL;
    p->blob = PQunescapeBytea((const unsigned char *)v, len);
    return p->blob;
}

int sb_pg_exec(sb_store *st, const char *sql)
{
    /* a ROLLBACK goes on whatever the pipeline's outcome */
    if (sb_pg_sync(st) != SB_STEP_DONE && strcmp(sql, "ROLLBACK") != 0)
        return -1;
    PGresult *res = PQexec(st->pg, sql);
    ExecStatusType es = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    int ok = es == PGRES_COMMAND_OK || es == PGRES_TUPLES_OK;
    if (!ok)
        keep_error(st, res);
    PQclear(res);
    return ok ? 0 : -1;
}

int sb_pg_fail(sb_store *st, sb_err *err, const char *what)
{
    if (PQstatus(st->pg) == CONNECTION_BAD)
        return sb_fail(err, SB_EIO,
                       "database %s: the server went away while %s (%s); "
                       "nothing of it was stored",
                       st->path, what, st->pg_msg[0] ? st->pg_msg : "no reply");
    if (strcmp(st->pg_state, "25006") == 0)
        return sb_fail(err, SB_EIO, "database %s: read-only (%s)", st->path,
                       what);
    if (strcmp(st->pg_state, "55P03") == 0)
        return sb_fail(err, SB_EIO,
                       "database %s: locked by another writer for more than "
                       "%g s while %s; nothing was changed "
                       "(SOLBENCH_LOCK_TIMEOUT sets the wait)",
                       st->path, st->timeout_s, what);
    return sb_fail(err, SB_EIO, "database %s: %s: %s%s%s%s", st->path, what,
                   st->pg_msg, st->pg_state[0] ? " (SQLSTATE " : "",
                   st->pg_state, st->pg_state[0] ? ")" : "");
}

bool sb_pg_retryable(const sb_store *st)
{
    /* serialization failure, deadlock */
    return strcmp(st->pg_state, "40001") == 0 ||
           strcmp(st->pg_state, "40P01") == 0;
}

/* The schema at SB_STORE_SCHEMA_VERSION, in PostgreSQL's types: text
 * compared byte by byte (COLLATE "C", as SQLite compares it), integers
 * 64-bit, ids generated. */
static const char pg_schema[] =
    "CREATE TABLE solbench_meta ("
    "  key TEXT PRIMARY KEY,"
    "  value BIGINT NOT NULL);"
    "CREATE TABLE schema_version ("
    "  version BIGINT PRIMARY KEY,"
    "  applied_at TEXT NOT NULL,"
    "  solbench_version TEXT);"
    "CREATE TABLE runs ("
    "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  run_id TEXT COLLATE \"C\" NOT NULL UNIQUE,"
    "  started_at TEXT COLLATE \"C\" NOT NULL,"
    "  ended_at TEXT,"
    "  fingerprint TEXT COLLATE \"C\","
    "  config_hash TEXT NOT NULL,"
    "  config TEXT NOT NULL,"
    "  system TEXT NOT NULL,"
    "  tags TEXT NOT NULL,"
    "  version TEXT,"
    "  git_commit TEXT,"
    "  stored_at TEXT NOT NULL,"
    "  doc TEXT NOT NULL);"
    "CREATE INDEX runs_started ON runs(started_at);"
    "CREATE TABLE results ("
    "  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    "  run_id TEXT COLLATE \"C\" NOT NULL"
    "    REFERENCES runs(run_id) ON DELETE CASCADE,"
    "  idx BIGINT NOT NULL,"
    "  bench TEXT COLLATE \"C\" NOT NULL,"
    "  area TEXT NOT NULL,"
    "  backend TEXT COLLATE \"C\" NOT NULL,"
    "  params TEXT NOT NULL,"
    "  params_text TEXT COLLATE \"C\" NOT NULL,"
    "  point_key TEXT COLLATE \"C\" NOT NULL,"
    "  valid BIGINT NOT NULL,"
    "  skipped BIGINT NOT NULL,"
    "  n BIGINT NOT NULL,"
    "  min DOUBLE PRECISION, p50 DOUBLE PRECISION, p90 DOUBLE PRECISION,"
    "  p99 DOUBLE PRECISION, max DOUBLE PRECISION, mean DOUBLE PRECISION,"
    "  stddev DOUBLE PRECISION, cv DOUBLE PRECISION,"
    "  headline TEXT, headline_value DOUBLE PRECISION, headline_unit TEXT,"
    "  higher_better BIGINT,"
    "  metrics TEXT NOT NULL,"
    "  notes TEXT NOT NULL,"
    "  stable BIGINT,"
    "  stab_flags BIGINT,"
    "  p10 DOUBLE PRECISION,"
    "  UNIQUE (run_id, idx));"
    "CREATE INDEX results_bench ON results(bench);"
    "CREATE INDEX results_point ON results(point_key);"
    "CREATE TABLE samples ("
    "  result_id BIGINT NOT NULL REFERENCES results(id) ON DELETE CASCADE,"
    "  i BIGINT NOT NULL,"
    "  seconds DOUBLE PRECISION NOT NULL,"
    "  PRIMARY KEY (result_id, i));"
    "CREATE TABLE baselines ("
    "  name TEXT COLLATE \"C\" PRIMARY KEY,"
    "  run_id TEXT COLLATE \"C\" NOT NULL"
    "    REFERENCES runs(run_id) ON DELETE CASCADE,"
    "  created_at TEXT NOT NULL);"
    "CREATE TABLE baseline_runs ("
    "  name TEXT COLLATE \"C\" NOT NULL"
    "    REFERENCES baselines(name) ON DELETE CASCADE,"
    "  run_id TEXT COLLATE \"C\" NOT NULL"
    "    REFERENCES runs(run_id) ON DELETE CASCADE,"
    "  added_at TEXT NOT NULL,"
    "  PRIMARY KEY (name, run_id));"
    "CREATE TABLE traces ("
    "  name TEXT COLLATE \"C\" PRIMARY KEY,"
    "  imported_at TEXT COLLATE \"C\" NOT NULL,"
    "  source TEXT NOT NULL,"
    "  format TEXT NOT NULL,"
    "  events BIGINT NOT NULL,"
    "  data BYTEA NOT NULL);"
    "CREATE TABLE fleets ("
    "  fleet_id TEXT COLLATE \"C\" PRIMARY KEY,"
    "  started_at TEXT COLLATE \"C\" NOT NULL,"
    "  launcher TEXT NOT NULL,"
    "  hosts BIGINT NOT NULL,"
    "  healthy BIGINT NOT NULL,"
    "  stored_at TEXT COLLATE \"C\" NOT NULL,"
    "  doc TEXT NOT NULL);"
    "CREATE INDEX fleets_started ON fleets(started_at);"
    "CREATE TABLE fleet_baselines ("
    "  name TEXT COLLATE \"C\" PRIMARY KEY,"
    "  fleet_id TEXT COLLATE \"C\" NOT NULL"
    "    REFERENCES fleets(fleet_id) ON DELETE CASCADE,"
    "  created_at TEXT NOT NULL);";

/* The advisory lock key of schema creation: the application id. */
#define PG_SCHEMA_LOCK "SELECT pg_advisory_xact_lock(1936682082)"

/* One integer of a query; -1 with the error kept when it fails. */
static int query_long(sb_store *st, const char *sql, long *out)
{
    PGresult *res = PQexec(st->pg, sql);
    if (!res || PQresultStatus(res) != PGRES_TUPLES_OK) {
        keep_error(st, res);
        PQclear(res);
        return -1;
    }
    *out = PQntuples(res) > 0 && !PQgetisnull(res, 0, 0)
               ? atol(PQgetvalue(res, 0, 0))
               : 0;
    PQclear(res);
    return 0;
}

/* The stored version (0: no solbench schema yet) and whether the database
 * holds tables of another program. */
static int read_meta(sb_store *st, long *ver, long *app, long *foreign,
                     sb_err *err)
{
    long has = 0;
    *ver = *app = *foreign = 0;
    if (query_long(st,
                   "SELECT count(*) FROM pg_tables WHERE schemaname = "
                   "current_schema() AND tablename = 'solbench_meta'",
                   &has))
        return sb_pg_fail(st, err, "reading the store's version");
    if (!has) {
        if (query_long(st,
                       "SELECT count(*) FROM pg_tables WHERE schemaname = "
                       "current_schema()",
                       foreign))
            return sb_pg_fail(st, err, "reading the store's version");
        return 0;
    }
    if (query_long(st,
                   "SELECT value FROM solbench_meta WHERE key = "
                   "'schema_version'",
                   ver) ||
        query_long(st,
                   "SELECT value FROM solbench_meta WHERE key = "
                   "'application_id'",
                   app))
        return sb_pg_fail(st, err, "reading the store's version");
    return 0;
}

static int create_schema(sb_store *st, sb_err *err)
{
    char sql[512];
    char now[32];
    sb_utc_now(now, sizeof now);
    if (sb_pg_exec(st, "BEGIN") || sb_pg_exec(st, PG_SCHEMA_LOCK))
        return sb_pg_fail(st, err, "creating the store's tables");
    long ver = 0, app = 0, foreign = 0;
    int rc = read_meta(st, &ver, &app, &foreign, err);
    if (rc)
        goto fail;
    if (ver == 0) { /* not made by another writer meanwhile */
        snprintf(sql, sizeof sql,
                 "INSERT INTO solbench_meta VALUES ('application_id', %d),"
                 " ('schema_version', %d);"
                 "INSERT INTO schema_version VALUES (%d, '%s', '%s')",
                 SB_STORE_APP_ID, SB_STORE_SCHEMA_VERSION,
                 SB_STORE_SCHEMA_VERSION, now, sb_version());
        if (sb_pg_exec(st, pg_schema) || sb_pg_exec(st, sql)) {
            rc = sb_pg_fail(st, err, "creating the store's tables");
            goto fail;
        }
    }
    if (sb_pg_exec(st, "COMMIT"))
        return sb_pg_fail(st, err, "creating the store's tables");
    return 0;
fail:
    sb_pg_exec(st, "ROLLBACK");
    return rc;
}

/* The server's notices (a shutdown's "terminating connection") are not
 * printed: what failed is said once, by the failing call. */
static void quiet_notice(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

int sb_pg_open(sb_store *st, const char *url, int mode, sb_err *err)
{
    sb_pg_redact(url, st->path, sizeof st->path);
    st->pg = PQconnectdb(url);
    if (!st->pg)
        return sb_fail(err, SB_ENOMEM, "out of memory connecting to %s",
                       st->path);
    if (PQstatus(st->pg) != CONNECTION_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(st->pg));
        char *nl = strchr(msg, '\n');
        if (nl)
            *nl = '\0';
        return sb_fail(err, SB_EIO, "database %s: cannot connect (%s)",
                       st->path, msg);
    }
    PQsetNoticeProcessor(st->pg, quiet_notice, NULL);
    /* Quiet notices; lock waits bounded as on SQLite. */
    char set[256];
    snprintf(set, sizeof set,
             "SET client_min_messages = warning; SET lock_timeout = %ld",
             (long)(st->timeout_s * 1000.0));
    if (sb_pg_exec(st, set))
        return sb_pg_fail(st, err, "setting up the session");
    long ver = 0, app = 0, foreign = 0;
    int rc = read_meta(st, &ver, &app, &foreign, err);
    if (rc)
        return rc;
    if (ver == 0 && foreign > 0)
        return sb_fail(err, SB_EINVAL,
                       "database %s: not a solbench store (it holds %ld "
                       "tables of another program)",
                       st->path, foreign);
    if (ver != 0 && app != SB_STORE_APP_ID)
        return sb_fail(err, SB_EINVAL,
                       "database %s: not a solbench store (application id "
                       "%ld)",
                       st->path, app);
    if (ver > SB_STORE_SCHEMA_VERSION)
        return sb_fail(err, SB_EINVAL,
                       "database %s: written by a newer solbench (schema "
                       "version %ld; this build reads up to %d): upgrade "
                       "solbench or use another --db",
                       st->path, ver, SB_STORE_SCHEMA_VERSION);
    /* A store with no tables yet gets them, reader or writer (as a SQLite
     * store is created by the first command that opens it). Schema
     * changes after this version will come as migrations of the
     * PostgreSQL schema, each under PG_SCHEMA_LOCK. */
    if (ver == 0 && (rc = create_schema(st, err)))
        return rc;
    st->version = ver ? ver : SB_STORE_SCHEMA_VERSION;
    st->ro = mode == SB_STORE_RO;
    /* a reader cannot write by mistake */
    if (st->ro && sb_pg_exec(st, "SET default_transaction_read_only = on"))
        return sb_pg_fail(st, err, "setting up the session");
    return 0;
}

void sb_pg_close(sb_store *st)
{
    if (st->pg)
        PQfinish(st->pg);
    st->pg = NULL;
}
