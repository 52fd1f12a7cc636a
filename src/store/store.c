/*
 * store.c — the SQLite results store: opening and checking a database,
 * its schema and forward migrations, the locks and the helpers every
 * query goes through (store_int.h); saving and loading runs are in
 * store_runs.c, baselines and traces in store_baseline.c.
 *
 * The run document (JSON) is stored whole in runs.doc: it is the source of
 * truth when a run is loaded back, so nothing is lost to the normalised
 * tables. Those tables (runs, results, samples) exist for queries and for
 * other tools reading the database with plain SQL; docs/STORE.md lists
 * their columns. Durability comes from SQLite itself: WAL mode and one
 * transaction per run mean a process killed at any moment leaves either
 * the whole run or none of it.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include <sqlite3.h>
#include <jansson.h>

#include "solbench/bench.h"
#include "solbench/stability.h"
#include "solbench/store.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"
#include "store/store_int.h"

/* Wait this long for another writer before giving up (seconds; the
 * environment's SOLBENCH_LOCK_TIMEOUT overrides it). A run holds the write
 * lock only while its rows are inserted, well under a second. */
#define SB_STORE_LOCK_TIMEOUT_S 30.0

double sb_store_lock_timeout(void)
{
    const char *e = getenv("SOLBENCH_LOCK_TIMEOUT");
    char *end = NULL;
    double v = e && *e ? strtod(e, &end) : -1;
    if (e && *e && end && *end == '\0' && v >= 0 && v <= 86400)
        return v;
    return SB_STORE_LOCK_TIMEOUT_S;
}

/* SQLite's busy handler: sleep and try again until this operation's
 * deadline. (sqlite3_busy_timeout would restart its wait at every call,
 * and a loop of calls multiplied it: one wait lasted hours.) */
static int busy_wait(void *arg, int count)
{
    sb_store *st = arg;
    if (sb_now() >= st->deadline)
        return 0;
    sqlite3_sleep(count < 20 ? 1 : 10);
    return 1;
}

/* Starts the clock of one operation's lock waits. */
void sb_st_arm(sb_store *st)
{
    st->deadline = sb_now() + st->timeout_s;
}

/* The processes (other than this one) holding a lock on the database or
 * its -wal and -shm files, from /proc/locks: "pid 1234 (python3)". */
static void lock_holders(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    struct stat f[3];
    char name[4200];
    bool have[3];
    static const char *const sfx[3] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s%s", path, sfx[i]);
        have[i] = stat(name, &f[i]) == 0;
    }
    FILE *pl = fopen("/proc/locks", "r");
    if (!pl)
        return;
    char line[256];
    long seen[8];
    int nseen = 0;
    size_t off = 0;
    while (fgets(line, sizeof line, pl)) {
        long pid = 0;
        unsigned maj = 0, min = 0;
        unsigned long ino = 0;
        char type[16] = "", end_s[32] = "";
        unsigned long long start = 0;
        /* "1: POSIX  ADVISORY  WRITE 12345 fd:01:131085 120 120"; a waiter
         * reads "1: -> POSIX ..." and is not a holder (its %ld fails) */
        char *p = strchr(line, ':');
        if (!p ||
            sscanf(p + 1, "%*s %*s %15s %ld %x:%x:%lu %llu %31s", type, &pid,
                   &maj, &min, &ino, &start, end_s) != 7 ||
            pid == (long)getpid() || strcmp(type, "WRITE") != 0)
            continue;
        unsigned long long end =
            strcmp(end_s, "EOF") == 0 ? ~0ull : strtoull(end_s, NULL, 10);
        /* Only the write lock: byte 120 of the WAL index (-shm), or the
         * database file's reserved byte (rollback journal). Every open
         * connection, a waiting one too, holds read locks: not holders. */
        bool mine = false;
        for (int i = 0; i < 3 && !mine; i++) {
            if (!have[i] || f[i].st_ino != ino || major(f[i].st_dev) != maj ||
                minor(f[i].st_dev) != min)
                continue;
            unsigned long long byte = i == 2 ? 120ull : 0x40000001ull;
            mine = i != 1 && start <= byte && byte <= end;
        }
        bool dup = false;
        for (int i = 0; i < nseen; i++)
            dup |= seen[i] == pid;
        if (!mine || dup || nseen == 8)
            continue;
        seen[nseen++] = pid;
        char comm[64] = "?", cp[64];
        snprintf(cp, sizeof cp, "/proc/%ld/comm", pid);
        FILE *c = fopen(cp, "r");
        if (c) {
            if (fgets(comm, sizeof comm, c))
                comm[strcspn(comm, "\n")] = '\0';
            fclose(c);
        }
        int w = snprintf(out + off, len - off, "%spid %ld (%s)",
                         off ? ", " : "", pid, comm);
        if (w < 0 || (size_t)w >= len - off)
            break;
        off += (size_t)w;
    }
    fclose(pl);
}

/* ---- small helpers ------------------------------------------------------- */

/* Whether the file system holding path has no block left for this user. */
static bool no_room(const char *path)
{
    struct statvfs v;
    return statvfs(path, &v) == 0 && v.f_bavail == 0;
}

/* Whether the process's file size limit (ulimit -f) is what stopped a
 * write to the database at path: the database, its journal or its WAL
 * is within a 64 KiB write of the limit. */
static bool size_limited(const char *path)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_FSIZE, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
        return false;
    static const char *const side[] = {"", "-journal", "-wal"};
    for (int i = 0; i < 3; i++) {
        char f[4200];
        struct stat sbuf;
        snprintf(f, sizeof f, "%s%s", path, side[i]);
        if (stat(f, &sbuf) == 0 &&
            (double)sbuf.st_size + 65536.0 >= (double)r.rlim_cur)
            return true;
    }
    return false;
}

/* ---- statements: SQLite here, PostgreSQL in store_pg.c --------------------
 */

int sb_stmt_step(sb_stmt *s)
{
    if (s->pg)
        return sb_pg_step(s);
    int step = sqlite3_step(s->lite);
    if (step == SQLITE_ROW)
        return SB_STEP_ROW;
    if (step == SQLITE_DONE)
        return SB_STEP_DONE;
    return (step & 0xff) == SQLITE_CONSTRAINT ? SB_STEP_CONSTRAINT
                                              : SB_STEP_ERROR;
}

int sb_stmt_send(sb_stmt *s)
{
    return s->pg ? sb_pg_send(s) : sb_stmt_step(s);
}

int sb_st_sync(sb_store *st)
{
    return st->pg ? sb_pg_sync(st) : SB_STEP_DONE;
}

void sb_stmt_reset(sb_stmt *s)
{
    if (s->pg) {
        sb_pg_reset(s);
        return;
    }
    sqlite3_reset(s->lite);
    sqlite3_clear_bindings(s->lite);
}

void sb_stmt_free(sb_stmt *s)
{
    if (!s)
        return;
    if (s->pg)
        sb_pg_free(s);
    else
        sqlite3_finalize(s->lite);
    free(s);
}

bool sb_st_row(sb_store *st, sb_stmt *s, const char *what, int *rc, sb_err *err)
{
    int step = sb_stmt_step(s);
    if (step == SB_STEP_ROW)
        return true;
    if (step != SB_STEP_DONE)
        *rc = sb_st_fail(st, err, what);
    return false;
}

int sb_st_run(sb_store *st, sb_stmt *s, const char *what, sb_err *err)
{
    int step = sb_stmt_step(s);
    int rc = step == SB_STEP_DONE ? 0 : sb_st_fail(st, err, what);
    sb_stmt_free(s);
    return rc;
}

void sb_bind_int(sb_stmt *s, int i, int64_t v)
{
    if (s->pg)
        sb_pg_bind_int(s, i, v);
    else
        sqlite3_bind_int64(s->lite, i, (sqlite3_int64)v);
}

void sb_bind_double(sb_stmt *s, int i, double v)
{
    if (s->pg)
        sb_pg_bind_double(s, i, v);
    else
        sqlite3_bind_double(s->lite, i, v);
}

void sb_st_bind_text(sb_stmt *s, int i, const char *t)
{
    if (s->pg)
        sb_pg_bind_text(s, i, t);
    else if (t)
        sqlite3_bind_text(s->lite, i, t, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s->lite, i);
}

void sb_bind_blob(sb_stmt *s, int i, const void *p, size_t len)
{
    if (s->pg)
        sb_pg_bind_blob(s, i, p, len);
    else
        sqlite3_bind_blob64(s->lite, i, p, (sqlite3_uint64)len,
                            SQLITE_TRANSIENT);
}

int64_t sb_col_int(sb_stmt *s, int i)
{
    return s->pg ? sb_pg_col_int(s, i)
                 : (int64_t)sqlite3_column_int64(s->lite, i);
}

double sb_col_double(sb_stmt *s, int i)
{
    return s->pg ? sb_pg_col_double(s, i) : sqlite3_column_double(s->lite, i);
}

bool sb_col_null(sb_stmt *s, int i)
{
    return s->pg ? sb_pg_col_null(s, i)
                 : sqlite3_column_type(s->lite, i) == SQLITE_NULL;
}

const char *sb_col_text_or_null(sb_stmt *s, int i)
{
    return s->pg ? sb_pg_col_text(s, i)
                 : (const char *)sqlite3_column_text(s->lite, i);
}

const char *sb_st_col_text(sb_stmt *s, int i)
{
    const char *t = sb_col_text_or_null(s, i);
    return t ? t : "";
}

const void *sb_col_blob(sb_stmt *s, int i, size_t *len)
{
    if (s->pg)
        return sb_pg_col_blob(s, i, len);
    const void *p = sqlite3_column_blob(s->lite, i);
    *len = (size_t)sqlite3_column_bytes(s->lite, i);
    return p;
}

long sb_st_changes(sb_store *st)
{
    return st->pg ? st->pg_changes : (long)sqlite3_changes(st->db);
}

void sb_st_rollback(sb_store *st)
{
    if (st->pg)
        sb_pg_exec(st, "ROLLBACK");
    else
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int sb_st_begin(sb_store *st, sb_err *err)
{
    if (st->pg)
        return sb_pg_exec(st, "BEGIN") ? sb_pg_fail(st, err, "BEGIN") : 0;
    return sb_st_exec_retry(st, "BEGIN IMMEDIATE", err);
}

bool sb_st_retryable(const sb_store *st)
{
    return st->pg && sb_pg_retryable(st);
}

const char *sb_st_glob_op(const sb_store *st)
{
    return st->pg ? "~" : "GLOB";
}

void sb_st_glob_pattern(const sb_store *st, const char *glob, char *out,
                        size_t len)
{
    if (!st->pg) {
        snprintf(out, len, "%s", glob);
        return;
    }
    /* GLOB's * ? [..] as an anchored POSIX regular expression */
    size_t o = 0;
    if (len < 4)
        return;
    out[o++] = '^';
    bool cls = false;
    for (const char *c = glob; *c && o + 4 < len; c++) {
        if (cls) {
            out[o++] = *c;
            cls = *c != ']';
        } else if (*c == '*') {
            out[o++] = '.';
            out[o++] = '*';
        } else if (*c == '?') {
            out[o++] = '.';
        } else if (*c == '[') {
            out[o++] = '[';
            cls = true;
            if (c[1] == '^') {
                out[o++] = '^';
                c++;
            }
        } else {
            if (strchr(".+(){}|\\$^", *c))
                out[o++] = '\\';
            out[o++] = *c;
        }
    }
    out[o++] = '$';
    out[o] = '\0';
}

const char *sb_st_concat_agg(const sb_store *st)
{
    return st->pg ? "string_agg" : "group_concat";
}

int sb_st_fail(sb_store *st, sb_err *err, const char *what)
{
    if (st->pg)
        return sb_pg_fail(st, err, what);
    int rc = sqlite3_extended_errcode(st->db);
    int prim = rc & 0xff;
    int sys = sqlite3_system_errno(st->db);
    if (prim == SQLITE_NOTADB || prim == SQLITE_CORRUPT)
        return sb_fail(err, SB_EINVAL,
                       "database %s: not a SQLite database, or a damaged "
                       "one (%s: %s)",
                       st->path, what, sqlite3_errmsg(st->db));
    if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED) {
        char who[256];
        lock_holders(st->path, who, sizeof who);
        return sb_fail(err, SB_EIO,
                       "database %s: locked by another process (%s) for "
                       "more than %g s while %s; nothing was changed "
                       "(SOLBENCH_LOCK_TIMEOUT sets the wait)",
                       st->path, who[0] ? who : "it does not say which",
                       st->timeout_s, what);
    }
    /* A write cut short (part of a page written, then no room) leaves
     * SQLite with a bare "disk I/O error" and no errno: the cause is read
     * from the file system and the process's limits instead. */
    bool short_write = rc == SQLITE_IOERR_WRITE && sys == 0;
    if (prim == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT ||
        (short_write && no_room(st->path)))
        return sb_fail(err, SB_EIO, "database %s: the disk is full (%s)",
                       st->path, what);
    if (sys == EFBIG || (short_write && size_limited(st->path)))
        return sb_fail(err, SB_EIO,
                       "database %s: the file may not grow "
                       "(file size limit, ulimit -f) (%s)",
                       st->path, what);
    if (prim == SQLITE_READONLY || sys == EROFS || sys == EACCES ||
        sys == EPERM)
        return sb_fail(err, SB_EIO,
                       "database %s: read-only (%s): the file, its folder "
                       "or the file system cannot be written%s",
                       st->path, what,
                       sys == EROFS ? " (read-only file "
                                      "system)"
                                    : "");
    if (prim == SQLITE_CANTOPEN)
        return sb_fail(err, SB_EIO, "database %s: cannot open it (%s%s%s)",
                       st->path, what, sys ? ": " : "",
                       sys ? strerror(sys) : "");
    return sb_fail(err, SB_EIO, "database %s: %s: %s", st->path, what,
                   sqlite3_errmsg(st->db));
}

int sb_st_exec(sb_store *st, const char *sql, sb_err *err)
{
    if (st->pg) {
        if (!sb_pg_exec(st, sql))
            return 0;
        char what[96];
        snprintf(what, sizeof what, "%.80s", sql);
        return sb_pg_fail(st, err, what);
    }
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        char what[96];
        snprintf(what, sizeof what, "%.80s", sql);
        int rc = sb_st_fail(st, err, what);
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

int sb_st_prepare(sb_store *st, const char *sql, sb_stmt **s, sb_err *err)
{
    *s = (sb_stmt *)calloc(1, sizeof **s);
    if (!*s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    (*s)->st = st;
    if (st->pg) {
        int rc = sb_pg_prepare(*s, sql, err);
        if (rc) {
            free(*s);
            *s = NULL;
        }
        return rc;
    }
    if (sqlite3_prepare_v2(st->db, sql, -1, &(*s)->lite, NULL) != SQLITE_OK) {
        free(*s);
        *s = NULL;
        return sb_st_fail(st, err, "preparing a query");
    }
    return 0;
}

/* Like exec_sql, retrying while another process holds a lock that the
 * busy handler does not wait for (switching a new database to WAL, or
 * two processes creating the schema at once), until the operation's
 * deadline: one clock for every wait of the operation. */
int sb_st_exec_retry(sb_store *st, const char *sql, sb_err *err)
{
    if (st->pg)
        return sb_st_exec(st, sql, err); /* the server waits (lock_timeout) */
    for (;;) {
        int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return 0;
        int prim = sqlite3_extended_errcode(st->db) & 0xff;
        if ((prim != SQLITE_BUSY && prim != SQLITE_LOCKED) ||
            sb_now() >= st->deadline) {
            char what[96];
            snprintf(what, sizeof what, "%.80s", sql);
            return sb_st_fail(st, err, what);
        }
        sqlite3_sleep(20);
    }
}

/* Runs a query that returns one integer (a PRAGMA, a count). */
int sb_st_query_int(sb_store *st, const char *sql, long *out, sb_err *err)
{
    sb_stmt *s;
    int rc = sb_st_prepare(st, sql, &s, err);
    if (rc)
        return rc;
    int step = sb_stmt_step(s);
    if (step == SB_STEP_ROW) {
        *out = (long)sb_col_int(s, 0);
        rc = 0;
    } else if (step == SB_STEP_DONE) {
        *out = 0;
        rc = 0;
    } else {
        rc = sb_st_fail(st, err, sql);
    }
    sb_stmt_free(s);
    return rc;
}

/* Creates every missing folder of a path (mkdir -p of its parent). */
static int make_parent(const char *path, sb_err *err)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return sb_fail(err, SB_EINVAL, "database path too long: %.80s...",
                       path);
    char *slash = strrchr(buf, '/');
    if (!slash || slash == buf)
        return 0;
    *slash = '\0';
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return sb_fail(err, SB_EIO, "cannot create folder %s: %s", buf,
                           strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return sb_fail(err, SB_EIO, "cannot create folder %s: %s", buf,
                       strerror(errno));
    return 0;
}

int sb_store_path(const char *explicit_path, char *out, size_t len, sb_err *err)
{
    const char *env = getenv("SOLBENCH_DB");
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    int n;
    if (explicit_path && !*explicit_path)
        return sb_fail(err, SB_EINVAL, "--db: empty path");
    if (explicit_path)
        n = snprintf(out, len, "%s", explicit_path);
    else if (env && *env)
        n = snprintf(out, len, "%s", env);
    else if (xdg && *xdg)
        n = snprintf(out, len, "%s/solbench/results.db", xdg);
    else if (home && *home)
        n = snprintf(out, len, "%s/.local/share/solbench/results.db", home);
    else
        return sb_fail(err, SB_EINVAL,
                       "no database path: give --db PATH or set "
                       "SOLBENCH_DB (HOME is not set)");
    if (n < 0 || (size_t)n >= len)
        return sb_fail(err, SB_EINVAL, "database path too long");
    if (sb_store_is_url(out)) /* a server: no folder to make */
        return 0;
    return make_parent(out, err);
}

/* ---- schema and migrations ----------------------------------------------- */

/* migrations[i] takes a database from version i to version i + 1. Never
 * edit a released step: add a new one and raise SB_STORE_SCHEMA_VERSION. */
static const char *const migrations[SB_STORE_SCHEMA_VERSION] = {
    /* 0 -> 1: the first layout. */
    "CREATE TABLE schema_version ("
    "  version INTEGER PRIMARY KEY,"
    "  applied_at TEXT NOT NULL,"
    "  solbench_version TEXT);"
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id TEXT NOT NULL UNIQUE,"
    "  started_at TEXT NOT NULL,"
    "  ended_at TEXT,"
    "  fingerprint TEXT,"
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
    "  id INTEGER PRIMARY KEY,"
    "  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
    "  idx INTEGER NOT NULL,"
    "  bench TEXT NOT NULL,"
    "  area TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  params TEXT NOT NULL,"
    "  params_text TEXT NOT NULL,"
    "  point_key TEXT NOT NULL,"
    "  valid INTEGER NOT NULL,"
    "  skipped INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  min REAL, p50 REAL, p90 REAL, p99 REAL, max REAL,"
    "  mean REAL, stddev REAL, cv REAL,"
    "  headline TEXT, headline_value REAL, headline_unit TEXT,"
    "  higher_better INTEGER,"
    "  metrics TEXT NOT NULL,"
    "  notes TEXT NOT NULL,"
    "  UNIQUE (run_id, idx));"
    "CREATE INDEX results_bench ON results(bench);"
    "CREATE INDEX results_point ON results(point_key);"
    "CREATE TABLE samples ("
    "  result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,"
    "  i INTEGER NOT NULL,"
    "  seconds REAL NOT NULL,"
    "  PRIMARY KEY (result_id, i)) WITHOUT ROWID;"
    "CREATE TABLE baselines ("
    "  name TEXT PRIMARY KEY,"
    "  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
    "  created_at TEXT NOT NULL);",
    /* 1 -> 2: a baseline may hold several runs (the gate judges a change
     * against the spread between them); baselines.run_id stays the
     * newest, so a reader of version 1's layout still finds one run. */
    "CREATE TABLE baseline_runs ("
    "  name TEXT NOT NULL REFERENCES baselines(name) ON DELETE CASCADE,"
    "  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,"
    "  added_at TEXT NOT NULL,"
    "  PRIMARY KEY (name, run_id)) WITHOUT ROWID;"
    "INSERT INTO baseline_runs(name, run_id, added_at)"
    "  SELECT name, run_id, created_at FROM baselines;",
    /* 2 -> 3: profiler traces (solbench trace import), kept gzip'd. */
    "CREATE TABLE traces ("
    "  name TEXT PRIMARY KEY,"
    "  imported_at TEXT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  format TEXT NOT NULL,"
    "  events INTEGER NOT NULL,"
    "  data BLOB NOT NULL);",
    /* 3 -> 4: a result's stability verdict (NULL: not judged, or stored
     * before the verdict existed), for a point's history of stable runs. */
    "ALTER TABLE results ADD COLUMN stable INTEGER;",
    /* 4 -> 5: the reasons of a verdict as flags (SB_UNSTABLE_*), so a
     * point's history tells a result unstable by its own samples from one
     * its machine's history alone put aside. */
    "ALTER TABLE results ADD COLUMN stab_flags INTEGER;",
    /* 5 -> 6: the 10th percentile of the samples, for a series' p10-p90
     * band; the results already stored get it from their samples by the
     * rule of sb_percentile_sorted (type 7: x[h] + (h - [h])(x[h+1] - x[h]),
     * h = (n - 1) / 10), NULL where no samples were kept. */
    "ALTER TABLE results ADD COLUMN p10 REAL;"
    "CREATE TEMP TABLE sb_rank AS SELECT result_id, seconds,"
    "  row_number() OVER (PARTITION BY result_id ORDER BY seconds) - 1 AS k"
    "  FROM samples;"
    "CREATE INDEX temp.sb_rank_k ON sb_rank(result_id, k);"
    "UPDATE results SET p10 = (SELECT a.seconds + ((results.n - 1) * 0.1 - a.k)"
    "  * (b.seconds - a.seconds) FROM sb_rank a JOIN sb_rank b"
    "  ON b.result_id = a.result_id AND b.k = min(a.k + 1, results.n - 1)"
    "  WHERE a.result_id = results.id"
    "  AND a.k = CAST((results.n - 1) * 0.1 AS INTEGER));"
    "DROP TABLE temp.sb_rank;",
    /* 6 -> 7: fleet runs (solbench fleet run): the fleet's document
     * (solbench.fleet/1: its hosts' figures, the link matrix, the
     * diagnosis), its hosts' runs tied to it by their "fleet" tag; and
     * the fleets named as baselines (fleet show --baseline). */
    "CREATE TABLE fleets ("
    "  fleet_id TEXT PRIMARY KEY,"
    "  started_at TEXT NOT NULL,"
    "  launcher TEXT NOT NULL,"
    "  hosts INTEGER NOT NULL,"
    "  healthy INTEGER NOT NULL,"
    "  stored_at TEXT NOT NULL,"
    "  doc TEXT NOT NULL);"
    "CREATE INDEX fleets_started ON fleets(started_at);"
    "CREATE TABLE fleet_baselines ("
    "  name TEXT PRIMARY KEY,"
    "  fleet_id TEXT NOT NULL REFERENCES fleets(fleet_id) ON DELETE CASCADE,"
    "  created_at TEXT NOT NULL);",
};

/* The database's application id, schema version and number of schema
 * objects, read in one statement and so from one snapshot: read one by one,
 * a creator committing in between gives a mixture (no objects yet, a
 * version already) that looks like another program's file. */
static int read_header(sb_store *st, long *app, long *ver, long *nobj,
                       sb_err *err)
{
    sb_stmt *s;
    int rc = sb_st_prepare(
        st,
        "SELECT (SELECT application_id FROM pragma_application_id),"
        " (SELECT user_version FROM pragma_user_version),"
        " (SELECT count(*) FROM sqlite_master)",
        &s, err);
    if (rc)
        return rc;
    if (sb_stmt_step(s) != SB_STEP_ROW) {
        rc = sb_st_fail(st, err, "reading the database header");
    } else {
        *app = (long)sb_col_int(s, 0);
        *ver = (long)sb_col_int(s, 1);
        *nobj = (long)sb_col_int(s, 2);
    }
    sb_stmt_free(s);
    return rc;
}

/* A database that is neither ours nor empty belongs to another program. */
static int refuse_foreign(const sb_store *st, long app, long ver, long ntables,
                          sb_err *err)
{
    if (app == SB_STORE_APP_ID || (app == 0 && ver == 0 && ntables == 0))
        return 0;
    return sb_fail(err, SB_EINVAL,
                   "database %s: not a solbench results database (it holds "
                   "other data: application_id %ld, %ld schema objects)",
                   st->path, app, ntables);
}

static int migrate(sb_store *st, sb_err *err)
{
    long ver = 0, app = 0, ntables = 0;
    int rc;

    /* A database at this build's version needs no write transaction: a
     * command that only reads must not wait for a writer's lock. */
    if ((rc = sb_st_query_int(st, "PRAGMA user_version", &ver, err)) ||
        (rc = sb_st_query_int(st, "PRAGMA application_id", &app, err)))
        return rc;
    if (ver == SB_STORE_SCHEMA_VERSION && app == SB_STORE_APP_ID) {
        st->version = ver;
        return 0;
    }
    /* IMMEDIATE takes the write lock first, so two processes creating the
     * same new database cannot both run the migrations. */
    if ((rc = sb_st_exec_retry(st, "BEGIN IMMEDIATE", err)))
        return rc;
    if ((rc = read_header(st, &app, &ver, &ntables, err)))
        goto fail;

    if ((rc = refuse_foreign(st, app, ver, ntables, err)))
        goto fail;
    if (ver > SB_STORE_SCHEMA_VERSION) {
        rc = sb_fail(err, SB_EINVAL,
                     "database %s: written by a newer solbench (schema "
                     "version %ld; this build reads up to %d): upgrade "
                     "solbench or use another --db",
                     st->path, ver, SB_STORE_SCHEMA_VERSION);
        goto fail;
    }
    for (long v = ver; v < SB_STORE_SCHEMA_VERSION; v++) {
        char sql[256];
        if ((rc = sb_st_exec(st, migrations[v], err)))
            goto fail;
        sb_stmt *s;
        if ((rc =
                 sb_st_prepare(st,
                               "INSERT INTO schema_version(version, applied_at,"
                               " solbench_version) VALUES (?, ?, ?)",
                               &s, err)))
            goto fail;
        char now[32];
        sb_utc_now(now, sizeof now);
        sb_bind_int(s, 1, v + 1);
        sb_st_bind_text(s, 2, now);
        sb_st_bind_text(s, 3, sb_version());
        int step = sb_stmt_step(s);
        sb_stmt_free(s);
        if (step != SB_STEP_DONE) {
            rc = sb_st_fail(st, err, "recording the schema version");
            goto fail;
        }
        snprintf(sql, sizeof sql,
                 "PRAGMA user_version = %ld; PRAGMA application_id = %d", v + 1,
                 SB_STORE_APP_ID);
        if ((rc = sb_st_exec(st, sql, err)))
            goto fail;
    }
    st->version = ver > SB_STORE_SCHEMA_VERSION ? ver : SB_STORE_SCHEMA_VERSION;
    return sb_st_exec(st, "COMMIT", err);
fail:
    sb_st_rollback(st);
    return rc;
}

/* Databases up to this size get a full quick_check when opened. */
#define SB_STORE_QUICK_CHECK_MAX (16L << 20)

/* A database file shorter than the page count its header records was cut
 * short (header: page size at offset 16, big-endian, 1 meaning 65536; page
 * count at 28, valid when the counter at 92 equals the one at 24). */
static int check_not_truncated(const char *path, sb_err *err)
{
    unsigned char h[100];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* a new, empty database */
    size_t got = fread(h, 1, sizeof h, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    if (got == 0)
        return 0;
    if (got < sizeof h)
        return sb_fail(err, SB_EINVAL, "database %s: truncated (%zu bytes)",
                       path, got);
    uint32_t psize = (uint32_t)h[16] << 8 | h[17];
    if (psize == 1)
        psize = 65536;
    uint32_t pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 |
                     (uint32_t)h[30] << 8 | h[31];
    bool valid = memcmp(h + 24, h + 92, 4) == 0;
    if (valid && pages > 0 && (double)size < (double)pages * psize)
        return sb_fail(err, SB_EINVAL,
                       "database %s: truncated (%ld bytes, "
                       "its header records %u pages of %u bytes)",
                       path, size, pages, psize);
    return 0;
}

/* Whether the file system holding path (or its folder, for a file not
 * there yet) is mounted read-only. */
static bool on_readonly_fs(const char *path)
{
    struct statvfs v;
    if (statvfs(path, &v) == 0)
        return (v.f_flag & ST_RDONLY) != 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = slash == dir ? (slash[1] = '\0', '/') : '\0';
    return statvfs(slash ? dir : ".", &v) == 0 && (v.f_flag & ST_RDONLY);
}

/* Whether this process may create files beside path (the WAL and its
 * shared memory): in a folder it cannot write, a read opens the file
 * immutable, as on read-only media. */
static bool dir_writable(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = slash == dir ? (slash[1] = '\0', '/') : '\0';
    return access(slash ? dir : ".", W_OK) == 0;
}

/* Removes a database file this open created and left empty (a new
 * database on a full disk was left as a 0-byte file). */
static void remove_if_new_and_empty(const char *path, bool existed)
{
    struct stat sbuf;
    if (existed || stat(path, &sbuf) != 0 || sbuf.st_size != 0)
        return;
    char side[4200];
    remove(path);
    snprintf(side, sizeof side, "%s-wal", path);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", path);
    remove(side);
}

/* Refuses a mode the file system cannot serve: no database to read and
 * none can be made, or a write on read-only media. */
static int refuse_readonly_fs(const char *path, int mode, bool existed,
                              sb_err *err)
{
    if (mode == SB_STORE_RO && !existed && on_readonly_fs(path))
        return sb_fail(err, SB_EINVAL,
                       "database %s: there is none, and the "
                       "file system is read-only",
                       path);
    if (mode != SB_STORE_RO && on_readonly_fs(path))
        return sb_fail(err, SB_EIO,
                       existed ? "database %s: read-only (the file system "
                                 "is mounted read-only): reading it works "
                                 "(history, export, compare); to store, "
                                 "give --db on a writable disk, or "
                                 "--no-store"
                               : "database %s: cannot be created (the file "
                                 "system is mounted read-only): give --db "
                                 "on a writable disk, or --no-store",
                       path);
    return 0;
}

/* Opens the SQLite connection: read-only or read-write (creating the
 * file), immutable through a URI; extended codes, the busy handler. */
static int open_connection(sb_store *st, const char *path, sb_err *err)
{
    int flags = st->ro ? SQLITE_OPEN_READONLY
                       : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    char uri[4200];
    const char *name = path;
    if (st->immutable) {
        /* a URI: '%', '?' and '#' in the path are escaped */
        size_t o = (size_t)snprintf(uri, sizeof uri, "file:");
        for (const char *c = path; *c && o + 4 < sizeof uri; c++)
            o += (size_t)(strchr("%?#", *c)
                              ? snprintf(uri + o, sizeof uri - o, "%%%02X",
                                         (unsigned char)*c)
                              : snprintf(uri + o, sizeof uri - o, "%c", *c));
        snprintf(uri + o, sizeof uri - o, "?immutable=1");
        name = uri;
        flags |= SQLITE_OPEN_URI;
    }
    if (sqlite3_open_v2(name, &st->db, flags, NULL) != SQLITE_OK)
        return st->db
                   ? sb_st_fail(st, err, "opening")
                   : sb_fail(err, SB_ENOMEM, "out of memory opening %s", path);
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_handler(st->db, busy_wait, st);
    return 0;
}

/* quick_check's verdict on a damaged database, in one line: the first
 * problem SQLite reports (its first row, in s), and how many more. */
static int damaged(sb_stmt *s, const char *path, sb_err *err)
{
    char first[160];
    snprintf(first, sizeof first, "%s", sb_st_col_text(s, 0));
    for (char *c = first; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    long more = 0;
    while (sb_stmt_step(s) == SB_STEP_ROW && more < 1000)
        more++;
    char tail[48] = "";
    if (more)
        snprintf(tail, sizeof tail, "; %ld more problem%s", more,
                 more == 1 ? "" : "s");
    return sb_fail(err, SB_EINVAL, "database %s: damaged (quick_check: %s%s)",
                   path, first, tail);
}

/* The full quick_check, on a small database or one whose header looked
 * truncated (suspect: then its failure reports trunc's message). */
static int check_integrity(sb_store *st, const char *path, bool suspect,
                           const sb_err *trunc, sb_err *err)
{
    struct stat sbuf;
    if (!suspect &&
        !(stat(path, &sbuf) == 0 && sbuf.st_size <= SB_STORE_QUICK_CHECK_MAX))
        return 0;
    sb_stmt *s;
    int rc = sb_st_prepare(st, "PRAGMA quick_check", &s, err);
    if (rc)
        return rc;
    int step = sb_stmt_step(s);
    if (step != SB_STEP_ROW)
        rc = suspect ? sb_fail(err, SB_EINVAL, "%s", trunc->msg)
                     : sb_st_fail(st, err, "checking integrity");
    else if (strcmp(sb_st_col_text(s, 0), "ok") != 0)
        rc = suspect ? sb_fail(err, SB_EINVAL, "%s", trunc->msg)
                     : damaged(s, path, err);
    sb_stmt_free(s);
    return rc;
}

/* Refuses another program's database, and one of a newer schema than
 * this build reads. */
static int check_owner(const sb_store *st, const char *path, long app, long ver,
                       long nobj, sb_err *err)
{
    int rc = refuse_foreign(st, app, ver, nobj, err);
    if (rc)
        return rc;
    if (ver > SB_STORE_SCHEMA_VERSION)
        return sb_fail(err, SB_EINVAL,
                       "database %s: written by a newer solbench (schema "
                       "version %ld; this build reads up to %d): upgrade "
                       "solbench or use another --db",
                       path, ver, SB_STORE_SCHEMA_VERSION);
    return 0;
}

/* WAL: readers never block the writer and a killed writer leaves the
 * last committed state. synchronous=NORMAL is safe against a killed
 * process (only a power loss may drop the newest commits). The mode
 * is switched only when it is not WAL yet: the switch takes a lock. */
static int setup_journal(sb_store *st, sb_err *err)
{
    sb_stmt *jm;
    bool wal = false;
    int rc = sb_st_prepare(st, "PRAGMA journal_mode", &jm, err);
    if (rc)
        return rc;
    if (sb_stmt_step(jm) == SB_STEP_ROW)
        wal = strcmp(sb_st_col_text(jm, 0), "wal") == 0;
    sb_stmt_free(jm);
    if ((!wal &&
         (rc = sb_st_exec_retry(st, "PRAGMA journal_mode = WAL", err))) ||
        (rc = sb_st_exec(st, "PRAGMA synchronous = NORMAL", err)) ||
        (rc = sb_st_exec(st, "PRAGMA foreign_keys = ON", err)))
        return rc;
    return 0;
}

int sb_store_open_mode(const char *path, int mode, sb_store **out, sb_err *err)
{
    *out = NULL;
    if (sb_store_is_url(path)) {
        sb_store *st = calloc(1, sizeof *st);
        if (!st)
            return sb_fail(err, SB_ENOMEM, "out of memory");
        st->timeout_s = sb_store_lock_timeout();
        sb_st_arm(st);
        int rc = sb_pg_open(st, path, mode, err);
        if (rc) {
            sb_pg_close(st);
            free(st);
            return rc;
        }
        *out = st;
        return 0;
    }
    struct stat sbuf;
    bool existed = stat(path, &sbuf) == 0;
    if (existed && !S_ISREG(sbuf.st_mode))
        return sb_fail(err, SB_EINVAL, "database %s: not a regular file", path);

    /* The header is read before SQLite opens the file: closing any
     * descriptor of a file drops every POSIX lock this process holds on it,
     * SQLite's included, and a connection that lost its locks may
     * checkpoint and reset the WAL under another process's fresh commit
     * (two concurrent runs, one of them lost, is how this showed). A
     * header that disagrees with the file size can also be a checkpoint of
     * another process caught half-way: then quick_check decides. */
    sb_err trunc = {0};
    bool suspect = check_not_truncated(path, &trunc) != 0;

    sb_store *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "out of memory opening %s", path);
    snprintf(st->path, sizeof st->path, "%s", path);
    st->timeout_s = sb_store_lock_timeout();
    sb_st_arm(st);

    /* Read-only: a command that only reads opens the file read-only and
     * takes no write lock; on read-only media (where SQLite could not even
     * create the WAL's shared-memory file) immutable, which takes no lock
     * at all. A database not there yet is created as before, read-only or
     * not (a first `history` finds an empty store, not an error). */
    st->ro = mode == SB_STORE_RO && existed;
    st->immutable = st->ro && (on_readonly_fs(path) || !dir_writable(path));
    int rc = refuse_readonly_fs(path, mode, existed, err);
    if (rc) {
        free(st);
        return rc;
    }
    if ((rc = open_connection(st, path, err)))
        goto fail;

    /* The first read finds a file that is not SQLite at all (NOTADB). A
     * file cut short is found from its header, which costs nothing at any
     * size; a full quick_check, which reads every page, runs only on small
     * databases, so that commands do not slow down as the store grows.
     * Damage found later by SQLite still ends the command with exit 2. */
    long n = 0, app = 0, ver = 0;
    if ((rc = read_header(st, &app, &ver, &n, err)) ||
        (rc = check_integrity(st, path, suspect, &trunc, err)))
        goto fail;

    /* Another program's database is refused before anything is written
     * to it (switching to WAL rewrites the header); migrate() checks again
     * under its lock. */
    if ((rc = check_owner(st, path, app, ver, n, err)))
        goto fail;
    if (st->ro && ver == 0 && !st->immutable) {
        /* No schema yet: a database another process is creating this very
         * moment (or an empty file). Opened read-write, the creator's lock
         * is waited for and the schema found (or made). */
        sqlite3_close(st->db);
        free(st);
        return sb_store_open_mode(path, SB_STORE_RW, out, err);
    }
    if (st->ro) {
        /* An older layout is read as it is (the queries know version 1);
         * migrating needs the write lock, which a reader does not take. */
        st->version = ver;
        *out = st;
        return 0;
    }
    if ((rc = setup_journal(st, err)) || (rc = migrate(st, err)))
        goto fail;
    *out = st;
    return 0;
fail:
    sqlite3_close(st->db);
    free(st);
    remove_if_new_and_empty(path, existed);
    return rc;
}

int sb_store_open(const char *path, sb_store **out, sb_err *err)
{
    return sb_store_open_mode(path, SB_STORE_RW, out, err);
}

int sb_store_open_default(const char *explicit_path, sb_store **st,
                          char *path_out, size_t len, sb_err *err)
{
    return sb_store_open_default_mode(explicit_path, SB_STORE_RW, st, path_out,
                                      len, err);
}

int sb_store_open_default_mode(const char *explicit_path, int mode,
                               sb_store **st, char *path_out, size_t len,
                               sb_err *err)
{
    char path[4096];
    *st = NULL;
    int rc = sb_store_path(explicit_path, path, sizeof path, err);
    if (rc)
        return rc;
    if (path_out && len)
        snprintf(path_out, len, "%s", path);
    return sb_store_open_mode(path, mode, st, err);
}

const char *sb_store_file(const sb_store *st)
{
    return st->path;
}

bool sb_store_exists(const char *path)
{
    struct stat sb;
    return sb_store_is_url(path) || (path && stat(path, &sb) == 0);
}

bool sb_store_is_store(const char *path)
{
    if (sb_store_is_url(path))
        return true;
    struct stat sb;
    if (!path || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return false;
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, "SQLite format 3", 16) == 0;
}

int sb_store_check_space(const char *path, double need_bytes, sb_err *err)
{
    if (sb_store_is_url(path)) /* the server's disk: its own concern */
        return 0;
    /* the file, or the folder that would hold it: found before a new
     * database is created on a full disk */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    struct statvfs v;
    if (statvfs(dir, &v) != 0) {
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, slash ? "/" : ".");
        if (statvfs(dir, &v) != 0)
            return 0; /* the open says what is wrong */
    }
    double free_b = (double)v.f_bavail * (double)v.f_frsize;
    if (free_b < need_bytes)
        return sb_fail(err, SB_EIO,
                       "database %s: the disk is full (%.1f MiB free, a "
                       "run needs about %.1f)",
                       path, free_b / 1048576.0, need_bytes / 1048576.0);
    return 0;
}

int sb_store_check_writable(sb_store *st, double need_bytes, sb_err *err)
{
    if (st->ro)
        return sb_fail(err, SB_EINVAL, "database %s: opened read-only",
                       st->path);
    sb_st_arm(st);
    if (st->pg) /* a server refuses a write in its own words */
        return 0;
    /* The write lock, taken and given back at once: what a run's commit
     * will need, found now and not after the run. */
    int rc = sb_st_exec_retry(st, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    sb_st_rollback(st);
    /* Writing a page of the file itself: a read-only file or folder can
     * still take the lock above through the WAL's shared memory. */
    if (access(st->path, W_OK) != 0)
        return sb_fail(err, SB_EIO, "database %s: read-only (%s)", st->path,
                       strerror(errno));
    struct statvfs v;
    if (statvfs(st->path, &v) == 0) {
        double free_b = (double)v.f_bavail * (double)v.f_frsize;
        if (v.f_flag & ST_RDONLY)
            return sb_fail(err, SB_EIO,
                           "database %s: read-only (the file "
                           "system is mounted read-only)",
                           st->path);
        if (free_b < need_bytes)
            return sb_fail(err, SB_EIO,
                           "database %s: the disk is full (%.1f "
                           "MiB free, a run needs about %.1f)",
                           st->path, free_b / 1048576.0,
                           need_bytes / 1048576.0);
    }
    return 0;
}

void sb_store_close(sb_store *st)
{
    if (!st)
        return;
    sb_pg_close(st);
    sqlite3_close(st->db);
    free(st);
}
