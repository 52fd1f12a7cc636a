/*
 * store_int.h — what the files of the store share: the handle, and the
 * statements every query goes through (errors named by their cause,
 * lock waits bounded by one clock per operation).
 *
 *   store.c          opening, checking and migrating a database; locks
 *   store_runs.c     point keys, saving, importing, loading, history
 *   store_baseline.c baselines, profiler traces, a point's history and
 *                    stable marks withdrawn
 */
#ifndef SOLBENCH_STORE_INT_H
#define SOLBENCH_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "solbench/store.h"

/* The store's application id ("solb"): SQLite's header field, a row of
 * solbench_meta on PostgreSQL. */
#define SB_STORE_APP_ID 0x736f6c62

struct sb_store {
    sqlite3 *db;        /* the SQLite driver's connection, or */
    struct pg_conn *pg; /* the PostgreSQL driver's (libpq's PGconn) */
    char pg_state[8];   /* SQLSTATE of its last failure */
    char pg_msg[512];   /* and its first line */
    long pg_changes;    /* rows its last statement changed */
    unsigned pg_nstmt;  /* statements it has prepared (their names) */
    int pg_pending;     /* statements sent in a pipeline, replies unread */
    char path[4096];
    bool ro;          /* opened read-only (or immutable) */
    bool immutable;   /* on read-only media: no locks at all */
    long version;     /* schema version of the file */
    double timeout_s; /* the longest wait for a lock */
    double deadline;  /* when the current operation stops waiting */
};

/* ---- statements: the store's one way to a database ---------------------
 * Every query of the store goes through these: a prepared statement, typed
 * binds (1-based, as in SQL), a step, typed columns (0-based), so the
 * files of the store name no database library. */
typedef struct sb_stmt sb_stmt;
struct sb_stmt {
    sb_store *st;
    sqlite3_stmt *lite;   /* SQLite, or */
    struct sb_pgstmt *pg; /* PostgreSQL (store_pg.c) */
};

/* What a step gives. */
enum {
    SB_STEP_ROW = 1,         /* a row: read it with sb_col_* */
    SB_STEP_DONE = 0,        /* no more rows; a statement without rows ran */
    SB_STEP_ERROR = -1,      /* failed: sb_st_fail names the cause */
    SB_STEP_CONSTRAINT = -2, /* a UNIQUE or other constraint refused it */
};

/* Starts the clock of one operation's lock waits. */
void sb_st_arm(sb_store *st);
/* One line naming the cause of the connection's last failure: damaged,
 * locked (and by whom, where /proc/locks says), read-only, disk full; the
 * code. */
int sb_st_fail(sb_store *st, sb_err *err, const char *what);
/* Runs SQL without results; 0 or the cause. */
int sb_st_exec(sb_store *st, const char *sql, sb_err *err);
/* Undoes the open transaction, if any; never fails loudly (the cause of
 * the failure that led here is the one reported). */
void sb_st_rollback(sb_store *st);
/* Prepares one statement; 0 or the cause. */
int sb_st_prepare(sb_store *st, const char *sql, sb_stmt **s, sb_err *err);
/* sb_st_exec, waiting out a busy database until the operation's deadline. */
int sb_st_exec_retry(sb_store *st, const char *sql, sb_err *err);
/* The one integer a query returns. */
int sb_st_query_int(sb_store *st, const char *sql, long *out, sb_err *err);
/* Opens the transaction of a write: SQLite's write lock taken at once
 * (BEGIN IMMEDIATE, waited for until the operation's deadline), a plain
 * BEGIN on PostgreSQL. */
int sb_st_begin(sb_store *st, sb_err *err);
/* True when the last failure is one a transaction run again can get past
 * (a serialization failure or a deadlock on PostgreSQL). */
bool sb_st_retryable(const sb_store *st);
/* The SQL of the store's dialect: the operator matching a glob pattern
 * and the aggregate joining text, and the pattern as the operator takes
 * it (out: at least 2 * strlen(glob) + 3 bytes). */
const char *sb_st_glob_op(const sb_store *st);
void sb_st_glob_pattern(const sb_store *st, const char *glob, char *out,
                        size_t len);
const char *sb_st_concat_agg(const sb_store *st);

/* Rows the last INSERT, UPDATE or DELETE changed. */
long sb_st_changes(sb_store *st);

/* Steps s: SB_STEP_ROW, _DONE, _ERROR or _CONSTRAINT. */
int sb_stmt_step(sb_stmt *s);
/* Runs s, a statement without rows, where its outcome may be learnt
 * later: SQLite runs it at once; on a server it is sent without waiting
 * for the reply (a pipeline), so a run's results travel back to back.
 * SB_STEP_DONE, or a failure known now. sb_st_sync gives the outcome of
 * every statement sent since the last sync: call it before reading
 * anything or committing. */
int sb_stmt_send(sb_stmt *s);
int sb_st_sync(sb_store *st);
/* Makes s ready to run again, its binds cleared. */
void sb_stmt_reset(sb_stmt *s);
/* Frees s (NULL is fine). */
void sb_stmt_free(sb_stmt *s);
/* The row iterator: steps s to its next row; true while there is one.
 * At the end false with *rc untouched; on an error false with *rc the
 * cause, named for `what` (sb_st_fail). The loops over a query's rows:
 *     while (sb_st_row(st, s, "listing traces", &rc, err)) { ... } */
bool sb_st_row(sb_store *st, sb_stmt *s, const char *what, int *rc,
               sb_err *err);
/* Runs a statement that returns no rows, and frees it; 0 or the cause,
 * named for `what`. */
int sb_st_run(sb_store *st, sb_stmt *s, const char *what, sb_err *err);

/* Binds, 1-based. Text and blobs are copied. */
void sb_bind_int(sb_stmt *s, int i, int64_t v);
void sb_bind_double(sb_stmt *s, int i, double v);
/* Text; NULL binds SQL NULL. */
void sb_st_bind_text(sb_stmt *s, int i, const char *t);
void sb_bind_blob(sb_stmt *s, int i, const void *p, size_t len);

/* Columns of the current row, 0-based. */
int64_t sb_col_int(sb_stmt *s, int i);
double sb_col_double(sb_stmt *s, int i);
bool sb_col_null(sb_stmt *s, int i);
/* A text column, "" for NULL. */
const char *sb_st_col_text(sb_stmt *s, int i);
/* A text column, NULL for NULL. */
const char *sb_col_text_or_null(sb_stmt *s, int i);
/* A blob column and its length (valid until the next step). */
const void *sb_col_blob(sb_stmt *s, int i, size_t *len);

/* sb_store_import_runs inside the caller's transaction (a store's import
 * of another store); nothing is rolled back here. */
int sb_st_import_in_tx(sb_store *st, const sb_run *runs,
                       const char *const *names, int n, bool *inserted,
                       sb_err *err);

/* sb_store_withdraw_stable inside the caller's transaction. */
int sb_st_withdraw_in_tx(sb_store *st, const char *run_id, int idx,
                         const char *why, sb_err *err);

/* ---- the PostgreSQL driver (store_pg.c) ---- */
int sb_pg_open(sb_store *st, const char *url, int mode, sb_err *err);
void sb_pg_close(sb_store *st);
void sb_pg_redact(const char *url, char *out, size_t len);
int sb_pg_exec(sb_store *st, const char *sql);
int sb_pg_fail(sb_store *st, sb_err *err, const char *what);
bool sb_pg_retryable(const sb_store *st);
int sb_pg_prepare(sb_stmt *s, const char *sql, sb_err *err);
int sb_pg_step(sb_stmt *s);
int sb_pg_send(sb_stmt *s);
int sb_pg_sync(sb_store *st);
void sb_pg_reset(sb_stmt *s);
void sb_pg_free(sb_stmt *s);
void sb_pg_bind_int(sb_stmt *s, int i, int64_t v);
void sb_pg_bind_double(sb_stmt *s, int i, double v);
void sb_pg_bind_text(sb_stmt *s, int i, const char *t);
void sb_pg_bind_blob(sb_stmt *s, int i, const void *p, size_t len);
int64_t sb_pg_col_int(sb_stmt *s, int i);
double sb_pg_col_double(sb_stmt *s, int i);
bool sb_pg_col_null(sb_stmt *s, int i);
const char *sb_pg_col_text(sb_stmt *s, int i);
const void *sb_pg_col_blob(sb_stmt *s, int i, size_t *len);

/* Looks up one run id with a query taking ref as ?1; 1 found, 0 none,
 * 2 ambiguous, negative on error. */
int sb_st_lookup(sb_store *st, const char *sql, const char *ref, char *run_id,
                 size_t len, sb_err *err);

#endif
