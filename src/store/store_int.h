/*
 * store_int.h — what the files of the store share: the handle, and the
 * SQLite helpers every query goes through (errors named by their cause,
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

#include <sqlite3.h>

#include "solbench/store.h"

struct sb_store {
    sqlite3 *db;
    char path[4096];
    bool ro;          /* opened read-only (or immutable) */
    bool immutable;   /* on read-only media: no locks at all */
    long version;     /* schema version of the file */
    double timeout_s; /* the longest wait for a lock */
    double deadline;  /* when the current operation stops waiting */
};

/* Starts the clock of one operation's lock waits. */
void sb_st_arm(sb_store *st);
/* One line naming the cause of a failed SQLite call: damaged, locked
 * (and by whom, where /proc/locks says), read-only, disk full; the code. */
int sb_st_fail(sb_store *st, sb_err *err, const char *what);
/* Runs SQL without results; 0 or the cause. */
int sb_st_exec(sb_store *st, const char *sql, sb_err *err);
/* Prepares one statement; 0 or the cause. */
int sb_st_prepare(sb_store *st, const char *sql, sqlite3_stmt **s, sb_err *err);
/* sb_st_exec, waiting out a busy database until the operation's deadline. */
int sb_st_exec_retry(sb_store *st, const char *sql, sb_err *err);
/* The one integer a query returns. */
int sb_st_query_int(sb_store *st, const char *sql, long *out, sb_err *err);
/* The row iterator: steps s to its next row; true while there is one.
 * At the end false with *rc untouched; on an error false with *rc the
 * cause, named for `what` (sb_st_fail). The loops over a query's rows:
 *     while (sb_st_row(st, s, "listing traces", &rc, err)) { ... } */
bool sb_st_row(sb_store *st, sqlite3_stmt *s, const char *what, int *rc,
               sb_err *err);
/* Runs a statement that returns no rows, and finalizes it; 0 or the
 * cause, named for `what`. */
int sb_st_run(sb_store *st, sqlite3_stmt *s, const char *what, sb_err *err);
/* Binds text (NULL: SQL NULL), copied. */
void sb_st_bind_text(sqlite3_stmt *s, int i, const char *t);
/* A text column, "" for NULL. */
const char *sb_st_col_text(sqlite3_stmt *s, int i);
/* Looks up one run id with a query taking ref as ?1; 1 found, 0 none,
 * 2 ambiguous, negative on error. */
int sb_st_lookup(sb_store *st, const char *sql, const char *ref, char *run_id,
                 size_t len, sb_err *err);

#endif
