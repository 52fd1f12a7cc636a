/*
 * store.c — the SQLite results store: opening and checking a database,
 * its schema and forward migrations, saving a run in one transaction,
 * loading runs back, history and baselines.
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

/* "solb": marks a database as ours, so a foreign SQLite file is refused
 * instead of being written into. */
#define SB_STORE_APP_ID 0x736f6c62

/* Wait this long for another writer before giving up (seconds; the
 * environment's SOLBENCH_LOCK_TIMEOUT overrides it). A run holds the write
 * lock only while its rows are inserted, well under a second. */
#define SB_STORE_LOCK_TIMEOUT_S 30.0

struct sb_store {
    sqlite3 *db;
    char path[4096];
    bool ro;          /* opened read-only (or immutable) */
    bool immutable;   /* on read-only media: no locks at all */
    long version;     /* schema version of the file */
    double timeout_s; /* the longest wait for a lock */
    double deadline;  /* when the current operation stops waiting */
};

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
static void arm(sb_store *st)
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

/* One line naming the cause of a failed SQLite call: damaged, locked
 * (and by whom, where /proc/locks says), read-only, disk full. */
static int store_fail(sb_store *st, sb_err *err, const char *what)
{
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

static int exec_sql(sb_store *st, const char *sql, sb_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        char what[96];
        snprintf(what, sizeof what, "%.80s", sql);
        int rc = store_fail(st, err, what);
        sqlite3_free(msg);
        return rc;
    }
    return 0;
}

static int prepare(sb_store *st, const char *sql, sqlite3_stmt **s, sb_err *err)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK) {
        *s = NULL;
        return store_fail(st, err, "preparing a query");
    }
    return 0;
}

/* Like exec_sql, retrying while another process holds a lock that the
 * busy handler does not wait for (switching a new database to WAL, or
 * two processes creating the schema at once), until the operation's
 * deadline: one clock for every wait of the operation. */
static int exec_retry(sb_store *st, const char *sql, sb_err *err)
{
    for (;;) {
        int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return 0;
        int prim = sqlite3_extended_errcode(st->db) & 0xff;
        if ((prim != SQLITE_BUSY && prim != SQLITE_LOCKED) ||
            sb_now() >= st->deadline) {
            char what[96];
            snprintf(what, sizeof what, "%.80s", sql);
            return store_fail(st, err, what);
        }
        sqlite3_sleep(20);
    }
}

/* Runs a query that returns one integer (a PRAGMA, a count). */
static int query_int(sb_store *st, const char *sql, long *out, sb_err *err)
{
    sqlite3_stmt *s;
    int rc = prepare(st, sql, &s, err);
    if (rc)
        return rc;
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
        *out = (long)sqlite3_column_int64(s, 0);
        rc = 0;
    } else if (step == SQLITE_DONE) {
        *out = 0;
        rc = 0;
    } else {
        rc = store_fail(st, err, sql);
    }
    sqlite3_finalize(s);
    return rc;
}

static void bind_text(sqlite3_stmt *s, int i, const char *t)
{
    if (t)
        sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

static const char *col_text(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? (const char *)t : "";
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
};

/* The database's application id, schema version and number of schema
 * objects, read in one statement and so from one snapshot: read one by one,
 * a creator committing in between gives a mixture (no objects yet, a
 * version already) that looks like another program's file. */
static int read_header(sb_store *st, long *app, long *ver, long *nobj,
                       sb_err *err)
{
    sqlite3_stmt *s;
    int rc =
        prepare(st,
                "SELECT (SELECT application_id FROM pragma_application_id),"
                " (SELECT user_version FROM pragma_user_version),"
                " (SELECT count(*) FROM sqlite_master)",
                &s, err);
    if (rc)
        return rc;
    if (sqlite3_step(s) != SQLITE_ROW) {
        rc = store_fail(st, err, "reading the database header");
    } else {
        *app = (long)sqlite3_column_int64(s, 0);
        *ver = (long)sqlite3_column_int64(s, 1);
        *nobj = (long)sqlite3_column_int64(s, 2);
    }
    sqlite3_finalize(s);
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
    if ((rc = query_int(st, "PRAGMA user_version", &ver, err)) ||
        (rc = query_int(st, "PRAGMA application_id", &app, err)))
        return rc;
    if (ver == SB_STORE_SCHEMA_VERSION && app == SB_STORE_APP_ID) {
        st->version = ver;
        return 0;
    }
    /* IMMEDIATE takes the write lock first, so two processes creating the
     * same new database cannot both run the migrations. */
    if ((rc = exec_retry(st, "BEGIN IMMEDIATE", err)))
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
        if ((rc = exec_sql(st, migrations[v], err)))
            goto fail;
        sqlite3_stmt *s;
        if ((rc = prepare(st,
                          "INSERT INTO schema_version(version, applied_at,"
                          " solbench_version) VALUES (?, ?, ?)",
                          &s, err)))
            goto fail;
        char now[32];
        sb_utc_now(now, sizeof now);
        sqlite3_bind_int64(s, 1, v + 1);
        bind_text(s, 2, now);
        bind_text(s, 3, sb_version());
        int step = sqlite3_step(s);
        sqlite3_finalize(s);
        if (step != SQLITE_DONE) {
            rc = store_fail(st, err, "recording the schema version");
            goto fail;
        }
        snprintf(sql, sizeof sql,
                 "PRAGMA user_version = %ld; PRAGMA application_id = %d", v + 1,
                 SB_STORE_APP_ID);
        if ((rc = exec_sql(st, sql, err)))
            goto fail;
    }
    st->version = ver > SB_STORE_SCHEMA_VERSION ? ver : SB_STORE_SCHEMA_VERSION;
    return exec_sql(st, "COMMIT", err);
fail:
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
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

int sb_store_open_mode(const char *path, int mode, sb_store **out, sb_err *err)
{
    *out = NULL;
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
    arm(st);

    /* Read-only: a command that only reads opens the file read-only and
     * takes no write lock; on read-only media (where SQLite could not even
     * create the WAL's shared-memory file) immutable, which takes no lock
     * at all. A database not there yet is created as before, read-only or
     * not (a first `history` finds an empty store, not an error). */
    st->ro = mode == SB_STORE_RO && existed;
    st->immutable = st->ro && (on_readonly_fs(path) || !dir_writable(path));
    if (mode == SB_STORE_RO && !existed && on_readonly_fs(path)) {
        free(st);
        return sb_fail(err, SB_EINVAL,
                       "database %s: there is none, and the "
                       "file system is read-only",
                       path);
    }
    if (mode != SB_STORE_RO && on_readonly_fs(path)) {
        free(st);
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
    }
    int rc;
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
    if (sqlite3_open_v2(name, &st->db, flags, NULL) != SQLITE_OK) {
        rc = st->db ? store_fail(st, err, "opening")
                    : sb_fail(err, SB_ENOMEM, "out of memory opening %s", path);
        goto fail;
    }
    sqlite3_extended_result_codes(st->db, 1);
    sqlite3_busy_handler(st->db, busy_wait, st);

    /* The first read finds a file that is not SQLite at all (NOTADB). A
     * file cut short is found from its header, which costs nothing at any
     * size; a full quick_check, which reads every page, runs only on small
     * databases, so that commands do not slow down as the store grows.
     * Damage found later by SQLite still ends the command with exit 2. */
    long n = 0, app = 0, ver = 0;
    if ((rc = read_header(st, &app, &ver, &n, err)))
        goto fail;
    if (suspect ||
        (stat(path, &sbuf) == 0 && sbuf.st_size <= SB_STORE_QUICK_CHECK_MAX)) {
        sqlite3_stmt *s;
        if ((rc = prepare(st, "PRAGMA quick_check", &s, err)))
            goto fail;
        int step = sqlite3_step(s);
        if (step != SQLITE_ROW) {
            rc = suspect ? sb_fail(err, SB_EINVAL, "%s", trunc.msg)
                         : store_fail(st, err, "checking integrity");
            sqlite3_finalize(s);
            goto fail;
        }
        if (strcmp(col_text(s, 0), "ok") != 0) {
            /* One line: the first problem SQLite reports, and how many. */
            char first[160];
            snprintf(first, sizeof first, "%s", col_text(s, 0));
            for (char *c = first; *c; c++)
                if ((unsigned char)*c < 0x20)
                    *c = ' ';
            long more = 0;
            while (sqlite3_step(s) == SQLITE_ROW && more < 1000)
                more++;
            char tail[48] = "";
            if (more)
                snprintf(tail, sizeof tail, "; %ld more problem%s", more,
                         more == 1 ? "" : "s");
            rc = suspect ? sb_fail(err, SB_EINVAL, "%s", trunc.msg)
                         : sb_fail(err, SB_EINVAL,
                                   "database %s: damaged (quick_check: %s%s)",
                                   path, first, tail);
            sqlite3_finalize(s);
            goto fail;
        }
        sqlite3_finalize(s);
    }

    /* Another program's database is refused before anything is written
     * to it (switching to WAL rewrites the header); migrate() checks again
     * under its lock. */
    if ((rc = refuse_foreign(st, app, ver, n, err)))
        goto fail;
    if (ver > SB_STORE_SCHEMA_VERSION) {
        rc = sb_fail(err, SB_EINVAL,
                     "database %s: written by a newer solbench (schema "
                     "version %ld; this build reads up to %d): upgrade "
                     "solbench or use another --db",
                     path, ver, SB_STORE_SCHEMA_VERSION);
        goto fail;
    }
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

    /* WAL: readers never block the writer and a killed writer leaves the
     * last committed state. synchronous=NORMAL is safe against a killed
     * process (only a power loss may drop the newest commits). The mode
     * is switched only when it is not WAL yet: the switch takes a lock. */
    sqlite3_stmt *jm;
    bool wal = false;
    if ((rc = prepare(st, "PRAGMA journal_mode", &jm, err)))
        goto fail;
    if (sqlite3_step(jm) == SQLITE_ROW)
        wal = strcmp(col_text(jm, 0), "wal") == 0;
    sqlite3_finalize(jm);
    if ((!wal && (rc = exec_retry(st, "PRAGMA journal_mode = WAL", err))) ||
        (rc = exec_sql(st, "PRAGMA synchronous = NORMAL", err)) ||
        (rc = exec_sql(st, "PRAGMA foreign_keys = ON", err)))
        goto fail;
    if ((rc = migrate(st, err)))
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

int sb_store_check_space(const char *path, double need_bytes, sb_err *err)
{
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
    arm(st);
    /* The write lock, taken and given back at once: what a run's commit
     * will need, found now and not after the run. */
    int rc = exec_retry(st, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
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
    sqlite3_close(st->db);
    free(st);
}

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

static int save_results(sb_store *st, const sb_run *run, sb_err *err)
{
    sqlite3_stmt *res = NULL, *smp = NULL;
    int rc;
    if ((rc = prepare(st,
                      "INSERT INTO results(run_id, idx, bench, area, "
                      "backend, params, params_text, point_key, valid, "
                      "skipped, n, min, p50, p90, p99, max, mean, stddev, "
                      "cv, headline, headline_value, headline_unit, "
                      "higher_better, metrics, notes, stable, stab_flags) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                      "?,?,?,?)",
                      &res, err)) ||
        (rc = prepare(st,
                      "INSERT INTO samples(result_id, i, seconds) VALUES "
                      "(?,?,?)",
                      &smp, err)))
        goto done;

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

        sqlite3_reset(res);
        sqlite3_clear_bindings(res);
        bind_text(res, 1, run->run_id);
        sqlite3_bind_int64(res, 2, (sqlite3_int64)k);
        bind_text(res, 3, r->bench);
        bind_text(res, 4, r->area);
        bind_text(res, 5, r->backend);
        bind_text(res, 6, ps);
        bind_text(res, 7, ptext);
        bind_text(res, 8, key);
        sqlite3_bind_int(res, 9, r->valid);
        sqlite3_bind_int(res, 10, r->skipped);
        sqlite3_bind_int64(res, 11, (sqlite3_int64)r->n_samples);
        const double st_vals[] = {r->stats.min,    r->stats.p50, r->stats.p90,
                                  r->stats.p99,    r->stats.max, r->stats.mean,
                                  r->stats.stddev, r->stats.cv};
        for (int i = 0; i < 8; i++)
            sqlite3_bind_double(res, 12 + i, st_vals[i]);
        if (h) {
            bind_text(res, 20, h->name);
            sqlite3_bind_double(res, 21, h->value);
            bind_text(res, 22, h->unit);
            sqlite3_bind_int(res, 23, hb);
        }
        bind_text(res, 24, ms);
        bind_text(res, 25, ns);
        if (r->stab_judged) {
            sqlite3_bind_int(res, 26, r->stable);
            sqlite3_bind_int64(res, 27, (sqlite3_int64)r->stab_flags);
        }
        int step = sqlite3_step(res);
        free(ps);
        free(ms);
        free(ns);
        if (step != SQLITE_DONE) {
            rc = store_fail(st, err, "storing a result");
            goto done;
        }
        sqlite3_int64 rid = sqlite3_last_insert_rowid(st->db);
        for (size_t i = 0; i < r->n_samples; i++) {
            sqlite3_reset(smp);
            sqlite3_bind_int64(smp, 1, rid);
            sqlite3_bind_int64(smp, 2, (sqlite3_int64)i);
            sqlite3_bind_double(smp, 3, r->samples_s[i]);
            if (sqlite3_step(smp) != SQLITE_DONE) {
                rc = store_fail(st, err, "storing a sample");
                goto done;
            }
        }
    }
    rc = 0;
done:
    sqlite3_finalize(res);
    sqlite3_finalize(smp);
    return rc;
}

/* Stores run; in_tx: inside the caller's transaction (no BEGIN, COMMIT
 * or ROLLBACK here). */
static int save(sb_store *st, const sb_run *run, bool imported, bool in_tx,
                bool *inserted, sb_err *err)
{
    if (!in_tx)
        arm(st);
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
    sqlite3_stmt *s = NULL;
    if (!docs) {
        rc = sb_fail(err, SB_ENOMEM, "cannot encode run %s", run->run_id);
        goto out;
    }
    if (!in_tx && (rc = exec_retry(st, "BEGIN IMMEDIATE", err)))
        goto out;
    if ((rc = prepare(st,
                      "INSERT OR IGNORE INTO runs(run_id, started_at, "
                      "ended_at, fingerprint, config_hash, config, system, "
                      "tags, version, git_commit, stored_at, doc) VALUES "
                      "(?,?,?,?,?,?,?,?,?,?,?,?)",
                      &s, err)))
        goto rollback;
    bind_text(s, 1, run->run_id);
    bind_text(s, 2, run->started_at);
    bind_text(s, 3, run->ended_at[0] ? run->ended_at : NULL);
    bind_text(s, 4, fp);
    bind_text(s, 5, hash);
    bind_text(s, 6, cfg);
    bind_text(s, 7, sys);
    bind_text(s, 8, tags);
    bind_text(s, 9, ver);
    bind_text(s, 10, commit);
    bind_text(s, 11, now);
    bind_text(s, 12, docs);
    if (sqlite3_step(s) != SQLITE_DONE) {
        rc = store_fail(st, err, "storing the run");
        goto rollback;
    }
    if (sqlite3_changes(st->db) == 1) {
        if ((rc = save_results(st, run, err)))
            goto rollback;
        if (inserted)
            *inserted = true;
    } else if (!imported) {
        /* Storing or importing the same run twice is a no-op; a different
         * run whose id is taken must not vanish without a word. */
        sqlite3_finalize(s);
        s = NULL;
        if ((rc = prepare(st,
                          "SELECT count(*) FROM runs WHERE run_id = ? "
                          "AND started_at = ? AND config_hash = ?",
                          &s, err)))
            goto rollback;
        bind_text(s, 1, run->run_id);
        bind_text(s, 2, run->started_at);
        bind_text(s, 3, hash);
        if (sqlite3_step(s) != SQLITE_ROW || sqlite3_column_int64(s, 0) != 1) {
            rc = sb_fail(err, SB_EIO,
                         "run id %s is already in the store for "
                         "another run; this run was not stored",
                         run->run_id);
            goto rollback;
        }
    }
    sqlite3_finalize(s);
    s = NULL;
    if (!in_tx && (rc = exec_sql(st, "COMMIT", err)))
        goto rollback;
    goto out;
rollback:
    if (!in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_finalize(s);
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

static int lookup(sb_store *st, const char *sql, const char *ref, char *run_id,
                  size_t len, sb_err *err);

/* The stored document of run id as JSON (new reference), or NULL with
 * *found false when there is none; negative return on error. */
static int stored_doc(sb_store *st, const char *id, json_t **doc, bool *found,
                      sb_err *err)
{
    *doc = NULL;
    *found = false;
    sqlite3_stmt *s;
    int rc = prepare(st, "SELECT doc FROM runs WHERE run_id = ?1", &s, err);
    if (rc)
        return rc;
    bind_text(s, 1, id);
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
        *found = true;
        *doc = json_loads(col_text(s, 0), JSON_REJECT_DUPLICATES, NULL);
    } else if (step != SQLITE_DONE) {
        rc = store_fail(st, err, "looking up a run");
    }
    sqlite3_finalize(s);
    return rc;
}

/* Whether run is the very run doc holds (the same JSON document). */
static bool same_run(const json_t *doc, const sb_run *run)
{
    json_t *mine = sb_run_to_json(run);
    bool same = doc && mine && json_equal((json_t *)doc, mine);
    json_decref(mine);
    return same;
}

int sb_store_import_runs(sb_store *st, const sb_run *runs,
                         const char *const *names, int n, bool *inserted,
                         sb_err *err)
{
    arm(st);
    for (int i = 0; i < n; i++)
        inserted[i] = false;
    int rc = exec_retry(st, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    /* Every document and id is checked before anything is written: a bad
     * one imports nothing. An imported run may be named anything a
     * document allows: not 'last', nor a baseline's name, which would
     * hide it (names resolve before run ids); nor a stored run's id
     * unless it is that very run. */
    bool *skip = calloc((size_t)(n > 0 ? n : 1), sizeof *skip);
    if (!skip) {
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
        int f = lookup(st, "SELECT name FROM baselines WHERE name = ?1",
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
        if (found) {
            bool same = same_run(doc, run);
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
            skip[i] = true;
            continue;
        }
        /* the same id twice in the files given */
        for (int j = 0; j < i; j++) {
            if (strcmp(runs[j].run_id, run->run_id) != 0)
                continue;
            json_t *dj = sb_run_to_json(&runs[j]);
            bool same = same_run(dj, run);
            json_decref(dj);
            if (!same) {
                rc =
                    sb_fail(err, SB_EINVAL,
                            "%s and %s: two different runs under one run id "
                            "%s; nothing was imported",
                            names ? names[j] : runs[j].run_id, nm, run->run_id);
                goto fail;
            }
            skip[i] = true;
        }
    }
    for (int i = 0; i < n; i++) {
        if (skip[i])
            continue;
        if ((rc = save(st, &runs[i], true, true, &inserted[i], err)))
            goto fail;
    }
    free(skip);
    return exec_sql(st, "COMMIT", err);
fail:
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    for (int i = 0; i < n; i++)
        inserted[i] = false;
    free(skip);
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

/* A run the store could not take is written beside it (or to the
 * temporary folder), so a measured run is never lost. */
int sb_store_save_fallback(const sb_run *run, const char *db_path, char *out,
                           size_t len, sb_err *err)
{
    char dir[4096] = ".";
    if (db_path && *db_path) {
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
static int lookup(sb_store *st, const char *sql, const char *ref, char *run_id,
                  size_t len, sb_err *err)
{
    sqlite3_stmt *s;
    int rc = prepare(st, sql, &s, err);
    if (rc)
        return rc;
    bind_text(s, 1, ref);
    int found = 0;
    for (;;) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            found = store_fail(st, err, "looking up a run");
            break;
        }
        if (++found == 1)
            snprintf(run_id, len, "%s", col_text(s, 0));
        if (found == 2)
            break;
    }
    sqlite3_finalize(s);
    return found;
}

int sb_store_resolve(sb_store *st, const char *ref, char *run_id, size_t len,
                     sb_err *err)
{
    arm(st);
    int f;
    if (!ref || !*ref)
        return sb_fail(err, SB_EINVAL, "empty run reference");
    if (strcmp(ref, "last") == 0) {
        f = lookup(st,
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
    f = lookup(st, "SELECT run_id FROM baselines WHERE name = ?1", ref, run_id,
               len, err);
    if (f)
        return f < 0 ? f : 0;
    f = lookup(st, "SELECT run_id FROM runs WHERE run_id = ?1", ref, run_id,
               len, err);
    if (f)
        return f < 0 ? f : 0;
    f = lookup(st,
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
    sqlite3_stmt *s;
    if ((rc = prepare(st, "SELECT doc FROM runs WHERE run_id = ?", &s, err)))
        return rc;
    bind_text(s, 1, id);
    if (sqlite3_step(s) != SQLITE_ROW) {
        rc = store_fail(st, err, "reading a run");
        sqlite3_finalize(s);
        return rc;
    }
    json_error_t jerr;
    json_t *doc = json_loads(col_text(s, 0), JSON_REJECT_DUPLICATES, &jerr);
    sqlite3_finalize(s);
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
    arm(st);
    long n = 0;
    int rc = query_int(st, "SELECT count(*) FROM runs", &n, err);
    return rc ? rc : n;
}

/* ---- history ------------------------------------------------------------- */

int sb_store_history(sb_store *st, const char *bench, int last_runs,
                     sb_store_hist_fn fn, void *arg, sb_err *err)
{
    arm(st);
    sqlite3_stmt *s;
    int rc = prepare(
        st,
        "WITH r AS (SELECT id, run_id, started_at, tags FROM runs "
        "  WHERE ?1 IS NULL OR EXISTS (SELECT 1 FROM results x "
        "    WHERE x.run_id = runs.run_id AND x.bench GLOB ?1) "
        "  ORDER BY started_at DESC, id DESC LIMIT ?2) "
        "SELECT r.run_id, r.started_at, r.tags, s.bench, s.backend, "
        "  s.params_text, s.headline, s.headline_unit, s.headline_value, "
        "  s.cv, s.n, s.valid, s.skipped "
        "FROM r JOIN results s ON s.run_id = r.run_id "
        "WHERE ?1 IS NULL OR s.bench GLOB ?1 "
        "ORDER BY r.started_at DESC, r.id DESC, s.idx",
        &s, err);
    if (rc)
        return rc;
    bind_text(s, 1, bench);
    sqlite3_bind_int(s, 2, last_runs > 0 ? last_runs : -1);
    for (;;) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_fail(st, err, "reading history");
            break;
        }
        sb_store_hist_row row = {
            .run_id = col_text(s, 0),
            .started_at = col_text(s, 1),
            .tags = col_text(s, 2),
            .bench = col_text(s, 3),
            .backend = col_text(s, 4),
            .params = col_text(s, 5),
            .metric = col_text(s, 6),
            .unit = col_text(s, 7),
            .value = sqlite3_column_double(s, 8),
            .cv = sqlite3_column_double(s, 9),
            .n_samples = (long)sqlite3_column_int64(s, 10),
            .valid = sqlite3_column_int(s, 11) != 0,
            .skipped = sqlite3_column_int(s, 12) != 0,
        };
        if ((rc = fn(&row, arg)))
            break;
    }
    sqlite3_finalize(s);
    return rc;
}

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
    int f = lookup(st, "SELECT run_id FROM runs WHERE run_id = ?1", name, other,
                   sizeof other, err);
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
    sqlite3_stmt *s;
    int rc;
    if ((rc = prepare(st,
                      "INSERT INTO baselines(name, run_id, created_at) "
                      "VALUES (?1, ?2, ?3) ON CONFLICT(name) DO NOTHING",
                      &s, err)))
        return rc;
    bind_text(s, 1, name);
    bind_text(s, 2, id);
    bind_text(s, 3, now);
    int step = sqlite3_step(s);
    sqlite3_finalize(s);
    if (step != SQLITE_DONE)
        return store_fail(st, err, "setting a baseline");
    if ((rc = prepare(st,
                      "INSERT OR IGNORE INTO baseline_runs(name, run_id, "
                      "added_at) VALUES (?1, ?2, ?3)",
                      &s, err)))
        return rc;
    bind_text(s, 1, name);
    bind_text(s, 2, id);
    bind_text(s, 3, now);
    step = sqlite3_step(s);
    sqlite3_finalize(s);
    if (step != SQLITE_DONE)
        return store_fail(st, err, "adding a run to a baseline");
    if ((rc = prepare(st,
                      "UPDATE baselines SET run_id = (SELECT b.run_id FROM "
                      "baseline_runs b JOIN runs r ON r.run_id = b.run_id "
                      "WHERE b.name = ?1 ORDER BY r.started_at DESC, r.id "
                      "DESC LIMIT 1) WHERE name = ?1",
                      &s, err)))
        return rc;
    bind_text(s, 1, name);
    step = sqlite3_step(s);
    sqlite3_finalize(s);
    return step == SQLITE_DONE ? 0 : store_fail(st, err, "setting a baseline");
}

int sb_store_baseline_set_runs(sb_store *st, const char *name,
                               const char *const *refs, int nrefs, bool append,
                               sb_err *err)
{
    arm(st);
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
    arm(st);
    if ((rc = exec_retry(st, "BEGIN IMMEDIATE", err))) {
        free(ids);
        return rc;
    }
    if (!append) {
        sqlite3_stmt *s;
        if ((rc =
                 prepare(st, "DELETE FROM baselines WHERE name = ?1", &s, err)))
            goto fail;
        bind_text(s, 1, name);
        int step = sqlite3_step(s);
        sqlite3_finalize(s);
        if (step != SQLITE_DONE) {
            rc = store_fail(st, err, "replacing a baseline");
            goto fail;
        }
        /* foreign_keys cascade baseline_runs; say it outright as well */
        if ((rc = prepare(st, "DELETE FROM baseline_runs WHERE name = ?1", &s,
                          err)))
            goto fail;
        bind_text(s, 1, name);
        step = sqlite3_step(s);
        sqlite3_finalize(s);
        if (step != SQLITE_DONE) {
            rc = store_fail(st, err, "replacing a baseline");
            goto fail;
        }
    }
    for (int i = 0; i < n; i++)
        if ((rc = add_baseline_run(st, name, ids[i], now, err)))
            goto fail;
    long count = 0;
    {
        sqlite3_stmt *s;
        if ((rc = prepare(st,
                          "SELECT count(*) FROM baseline_runs WHERE "
                          "name = ?1",
                          &s, err)))
            goto fail;
        bind_text(s, 1, name);
        if (sqlite3_step(s) == SQLITE_ROW)
            count = (long)sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    if (count > SB_STORE_BASELINE_RUNS_MAX) {
        rc = sb_fail(err, SB_EINVAL,
                     "baseline %s would hold %ld runs, at "
                     "most %d",
                     name, count, SB_STORE_BASELINE_RUNS_MAX);
        goto fail;
    }
    free(ids);
    return exec_sql(st, "COMMIT", err);
fail:
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
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
    arm(st);
    sqlite3_stmt *s;
    if ((rc = prepare(st,
                      "DELETE FROM baseline_runs WHERE name = ?1 AND run_id "
                      "NOT IN (SELECT b.run_id FROM baseline_runs b JOIN runs "
                      "r ON r.run_id = b.run_id WHERE b.name = ?1 ORDER BY "
                      "r.started_at DESC, r.id DESC LIMIT ?2)",
                      &s, err)))
        return rc;
    bind_text(s, 1, name);
    sqlite3_bind_int(s, 2, keep);
    if (sqlite3_step(s) != SQLITE_DONE)
        rc = store_fail(st, err, "trimming a baseline");
    sqlite3_finalize(s);
    return rc;
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
    arm(st);
    *n = 0;
    sqlite3_stmt *s;
    /* Version 1 of the layout kept one run a baseline. */
    int rc = prepare(st,
                     st->version >= 2
                         ? "SELECT b.run_id FROM baseline_runs b JOIN runs "
                           "r ON r.run_id = b.run_id WHERE b.name = ?1 "
                           "ORDER BY r.started_at, r.id"
                         : "SELECT run_id FROM baselines WHERE name = ?1",
                     &s, err);
    if (rc)
        return rc;
    bind_text(s, 1, name);
    for (;;) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_fail(st, err, "reading a baseline");
            break;
        }
        if (*n < max)
            snprintf(ids[(*n)++], 64, "%s", col_text(s, 0));
    }
    sqlite3_finalize(s);
    return rc;
}

int sb_store_baseline_rm(sb_store *st, const char *name, sb_err *err)
{
    arm(st);
    sqlite3_stmt *s;
    int rc = prepare(st, "DELETE FROM baselines WHERE name = ?", &s, err);
    if (rc)
        return rc;
    bind_text(s, 1, name);
    if (sqlite3_step(s) != SQLITE_DONE)
        rc = store_fail(st, err, "removing a baseline");
    else if (sqlite3_changes(st->db) == 0)
        rc = sb_fail(err, SB_EINVAL, "baseline '%s': no such baseline in %s",
                     name, st->path);
    sqlite3_finalize(s);
    return rc;
}

int sb_store_baseline_list(sb_store *st, sb_store_baseline_fn fn, void *arg,
                           sb_err *err)
{
    arm(st);
    sqlite3_stmt *s;
    int rc =
        prepare(st,
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
    for (;;) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_fail(st, err, "listing baselines");
            break;
        }
        sb_store_baseline b = {
            .name = col_text(s, 0),
            .run_id = col_text(s, 1),
            .created_at = col_text(s, 2),
            .started_at = col_text(s, 3),
            .tags = col_text(s, 4),
            .n_results = (long)sqlite3_column_int64(s, 5),
            .n_runs = (long)sqlite3_column_int64(s, 6),
        };
        if ((rc = fn(&b, arg)))
            break;
    }
    sqlite3_finalize(s);
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
    arm(st);
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
    sqlite3_stmt *s;
    if ((rc = prepare(st,
                      "INSERT INTO traces(name, imported_at, source, format,"
                      " events, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                      &s, err)))
        return rc;
    char now[32];
    sb_utc_now(now, sizeof now);
    bind_text(s, 1, name);
    bind_text(s, 2, now);
    bind_text(s, 3, source);
    bind_text(s, 4, format);
    sqlite3_bind_int64(s, 5, events);
    sqlite3_bind_blob64(s, 6, gz, len, SQLITE_STATIC);
    int step = sqlite3_step(s);
    sqlite3_finalize(s);
    if ((step & 0xff) == SQLITE_CONSTRAINT)
        return sb_fail(err, SB_EINVAL,
                       "trace '%s' is already stored in %s: give another "
                       "--name, or remove it (trace rm %s)",
                       name, st->path, name);
    return step == SQLITE_DONE ? 0 : store_fail(st, err, "storing a trace");
}

int sb_store_trace_get(sb_store *st, const char *name, void **data, size_t *len,
                       sb_err *err)
{
    *data = NULL;
    *len = 0;
    arm(st);
    int rc = traces_there(st, err);
    if (rc)
        return rc;
    sqlite3_stmt *s;
    if ((rc = prepare(st, "SELECT data FROM traces WHERE name = ?1", &s, err)))
        return rc;
    bind_text(s, 1, name);
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
        int n = sqlite3_column_bytes(s, 0);
        const void *b = sqlite3_column_blob(s, 0);
        *data = malloc(n > 0 ? (size_t)n : 1);
        if (!*data)
            rc = sb_fail(err, SB_ENOMEM, "out of memory reading trace '%s'",
                         name);
        else if (n > 0)
            memcpy(*data, b, (size_t)n);
        *len = n > 0 ? (size_t)n : 0;
    } else if (step == SQLITE_DONE) {
        rc = sb_fail(err, SB_EINVAL,
                     "trace '%s': no such trace in %s (trace list shows "
                     "them)",
                     name, st->path);
    } else {
        rc = store_fail(st, err, "reading a trace");
    }
    sqlite3_finalize(s);
    return rc;
}

int sb_store_trace_rm(sb_store *st, const char *name, sb_err *err)
{
    arm(st);
    int rc = traces_there(st, err);
    if (rc)
        return rc;
    sqlite3_stmt *s;
    if ((rc = prepare(st, "DELETE FROM traces WHERE name = ?1", &s, err)))
        return rc;
    bind_text(s, 1, name);
    if (sqlite3_step(s) != SQLITE_DONE)
        rc = store_fail(st, err, "removing a trace");
    else if (sqlite3_changes(st->db) == 0)
        rc = sb_fail(err, SB_EINVAL, "trace '%s': no such trace in %s", name,
                     st->path);
    sqlite3_finalize(s);
    return rc;
}

int sb_store_trace_list(sb_store *st, sb_store_trace_fn fn, void *arg,
                        sb_err *err)
{
    arm(st);
    if (st->version < 3)
        return 0; /* none stored yet */
    sqlite3_stmt *s;
    int rc = prepare(st,
                     "SELECT name, imported_at, source, format, events, "
                     "length(data) FROM traces ORDER BY imported_at, name",
                     &s, err);
    if (rc)
        return rc;
    for (;;) {
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE)
            break;
        if (step != SQLITE_ROW) {
            rc = store_fail(st, err, "listing traces");
            break;
        }
        sb_store_trace t = {
            .name = col_text(s, 0),
            .imported_at = col_text(s, 1),
            .source = col_text(s, 2),
            .format = col_text(s, 3),
            .events = (long)sqlite3_column_int64(s, 4),
            .bytes = (long long)sqlite3_column_int64(s, 5),
        };
        if ((rc = fn(&t, arg)))
            break;
    }
    sqlite3_finalize(s);
    return rc;
}

int sb_store_point_history(sb_store *st, const char *point_key,
                           const char *fingerprint, const char *except_run,
                           sb_point_hist *out, int max, int *n, sb_err *err)
{
    *n = 0;
    arm(st);
    sqlite3_stmt *s;
    int rc = prepare(st,
                     st->version >= 5
                         ? "SELECT x.run_id, x.idx, x.p50, x.stable, "
                           "coalesce(x.stab_flags, 0) FROM results x JOIN "
                           "runs r ON r.run_id = x.run_id WHERE x.point_key = "
                           "?1 AND x.stable IS NOT NULL AND x.valid = 1 AND "
                           "r.fingerprint IS ?2 AND (?3 IS NULL OR r.run_id "
                           "<> ?3) ORDER BY r.started_at DESC, r.id DESC "
                           "LIMIT ?4"
                         : "SELECT x.run_id, x.idx, x.p50, x.stable, 0 FROM "
                           "results x JOIN runs r ON r.run_id = x.run_id "
                           "WHERE x.point_key = ?1 AND x.stable IS NOT NULL "
                           "AND x.valid = 1 AND r.fingerprint IS ?2 AND (?3 "
                           "IS NULL OR r.run_id <> ?3) ORDER BY r.started_at "
                           "DESC, r.id DESC LIMIT ?4",
                     &s, err);
    if (rc)
        return rc;
    bind_text(s, 1, point_key);
    bind_text(s, 2, fingerprint);
    bind_text(s, 3, except_run);
    sqlite3_bind_int(s, 4, max);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW && *n < max) {
        sb_point_hist *h = &out[*n];
        const char *id = (const char *)sqlite3_column_text(s, 0);
        snprintf(h->run_id, sizeof h->run_id, "%s", id ? id : "");
        h->idx = sqlite3_column_int(s, 1);
        h->p50 = sqlite3_column_double(s, 2);
        h->stable = sqlite3_column_int(s, 3) != 0;
        h->flags = (unsigned)sqlite3_column_int64(s, 4);
        (*n)++;
    }
    sqlite3_finalize(s);
    if (step != SQLITE_DONE && step != SQLITE_ROW)
        return store_fail(st, err, "reading a point's history");
    return 0;
}

int sb_store_withdraw_stable(sb_store *st, const char *run_id, int idx,
                             const char *why, sb_err *err)
{
    arm(st);
    int rc = exec_retry(st, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    sqlite3_stmt *s = NULL;
    json_t *doc = NULL;
    char *text = NULL;
    if ((rc = prepare(st,
                      st->version >= 5
                          ? "UPDATE results SET stable = 0, stab_flags = "
                            "coalesce(stab_flags, 0) | ?3 WHERE run_id = ?1 "
                            "AND idx = ?2"
                          : "UPDATE results SET stable = 0 WHERE run_id = ?1 "
                            "AND idx = ?2 AND ?3 IS NOT NULL",
                      &s, err)))
        goto fail;
    bind_text(s, 1, run_id);
    sqlite3_bind_int(s, 2, idx);
    sqlite3_bind_int(s, 3, (int)SB_UNSTABLE_HISTORY);
    if (sqlite3_step(s) != SQLITE_DONE) {
        rc = store_fail(st, err, "withdrawing a stable mark");
        goto fail;
    }
    sqlite3_finalize(s);
    s = NULL;
    /* the run document, as export and compare read the run */
    if ((rc = prepare(st, "SELECT doc FROM runs WHERE run_id = ?1", &s, err)))
        goto fail;
    bind_text(s, 1, run_id);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        doc = json_loads((const char *)sqlite3_column_text(s, 0), 0, NULL);
    sqlite3_finalize(s);
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
        if ((rc = prepare(st, "UPDATE runs SET doc = ?2 WHERE run_id = ?1", &s,
                          err)))
            goto fail;
        bind_text(s, 1, run_id);
        bind_text(s, 2, text);
        if (sqlite3_step(s) != SQLITE_DONE) {
            rc = store_fail(st, err, "withdrawing a stable mark");
            goto fail;
        }
        sqlite3_finalize(s);
        s = NULL;
    }
    free(text);
    json_decref(doc);
    return exec_sql(st, "COMMIT", err);
fail:
    if (s)
        sqlite3_finalize(s);
    free(text);
    json_decref(doc);
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}
