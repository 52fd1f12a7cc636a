/*
 * store.h — the results store (SQLite): every run kept as a baseline.
 *
 * One database file holds every run ever stored: the run document as it
 * was written (JSON, schema "solbench.run/1"), and normalised tables of
 * runs, results and raw samples for queries (history, baselines). Writes
 * are one transaction per run in WAL mode with a busy timeout, so a run
 * killed at any moment leaves the database valid and two runs writing at
 * once both land. docs/STORE.md describes the schema and its versions.
 */
#ifndef SOLBENCH_STORE_H
#define SOLBENCH_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/error.h"
#include "solbench/output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the database layout this build writes; a database with a
 * higher version was written by a newer solbench and is refused. */
#define SB_STORE_SCHEMA_VERSION 7
/* Longest baseline name. */
#define SB_STORE_NAME_MAX 64
/* Most runs one baseline holds. */
#define SB_STORE_BASELINE_RUNS_MAX 64

/* How a store is opened: read-write (creating it when absent), or
 * read-only for commands that only read (no write lock is ever taken;
 * immutable on a read-only file system). */
enum { SB_STORE_RW = 0, SB_STORE_RO = 1 };

typedef struct sb_store sb_store;

/* The database path: `explicit` if non-NULL, else $SOLBENCH_DB, else
 * $XDG_DATA_HOME/solbench/results.db, else ~/.local/share/solbench/
 * results.db. Creates the parent folder. */
int sb_store_path(const char *explicit_path, char *out, size_t len,
                  sb_err *err);
/* Opens (creating if needed) and checks the database: a file that is not
 * a SQLite database, is damaged, belongs to another program or was
 * written by a newer solbench gives SB_EINVAL with a message naming it. */
int sb_store_open(const char *path, sb_store **st, sb_err *err);
/* The same, read-write or read-only (SB_STORE_RW, SB_STORE_RO). A lock
 * held by another process is waited for up to sb_store_lock_timeout()
 * seconds per operation, then the operation fails with one line naming
 * the lock (and the processes holding it, where /proc/locks says). */
int sb_store_open_mode(const char *path, int mode, sb_store **st, sb_err *err);
/* Seconds a store operation waits for a lock: SOLBENCH_LOCK_TIMEOUT
 * (0..86400), else 30. */
double sb_store_lock_timeout(void);
/* The database file's path. */
const char *sb_store_file(const sb_store *st);
/* True for a PostgreSQL URL (postgresql://… or postgres://…): the store
 * on a server (docs/STORE.md) rather than a SQLite file. */
bool sb_store_is_url(const char *path);
/* Whether a store may already be at `path`: a URL (the server knows), or
 * a file that exists. Commands that only read use it not to create an
 * empty store where none was. */
bool sb_store_exists(const char *path);
/* Whether `path` names a store to import from, not a run document: a
 * URL, or a regular file that begins with SQLite's header (a FIFO or a
 * device is not opened). */
bool sb_store_is_store(const char *path);
/* 0 when the disk that holds (or would hold) the database at `path` has
 * need_bytes free; else "the disk is full", before anything is created. */
int sb_store_check_space(const char *path, double need_bytes, sb_err *err);
/* Before measuring: takes the write lock and gives it back, and checks
 * that the file can be written and the disk has need_bytes free, so a run
 * is not measured only to be lost at its commit. */
int sb_store_check_writable(sb_store *st, double need_bytes, sb_err *err);
/* Stores a whole run in one transaction. A run whose run_id is already
 * stored is left as it is (not duplicated). */
int sb_store_save_run(sb_store *st, const sb_run *run, sb_err *err);
/* Like sb_store_save_run, for runs from elsewhere (import): the version
 * and commit recorded are the run's own, never this build's. *inserted
 * (may be NULL) tells whether the run was new. */
int sb_store_import_run(sb_store *st, const sb_run *run, bool *inserted,
                        sb_err *err);
/* What sb_store_import_store found in the source and added. */
typedef struct sb_store_import_stats {
    int runs, runs_new;
    int baselines, baselines_new;
    int traces, traces_new;
    int fleets, fleets_new;
} sb_store_import_stats;
/* Imports every run, baseline, profiler trace and fleet record of src
 * into dst, all or nothing, in one transaction of dst: what dst holds as
 * it is is skipped (a second import adds nothing); a name dst holds with
 * other contents refuses the import, naming it. Either store may be
 * SQLite or PostgreSQL. */
int sb_store_import_store(sb_store *dst, sb_store *src,
                          sb_store_import_stats *n, sb_err *err);
/* Imports n runs all or nothing, in one transaction: every document and
 * id is checked first ('last', a baseline's name, a stored id holding a
 * different run, one id for two different runs among these), then all
 * are written. A run already stored as it is is skipped (inserted[i]
 * false). names[i] (may be NULL) names run i in messages (its file). */
int sb_store_import_runs(sb_store *st, const sb_run *runs,
                         const char *const *names, int n, bool *inserted,
                         sb_err *err);
/* Saves run in st; where the store cannot take it, keeps the document
 * beside it (sb_store_save_fallback). 0: stored; 1: kept, err says why
 * it was not stored and where it is ("...; the run was kept in F
 * (solbench import F)"); else the store's error code, nothing kept. */
int sb_store_save_or_keep(sb_store *st, const sb_run *run, const char *db_path,
                          sb_err *err);
/* Writes run's document where a store that could not take it lives (its
 * folder, else $TMPDIR or /tmp, else .) as solbench-unsaved-<run_id>.json;
 * the path goes to out. So a measured run is never lost. */
int sb_store_save_fallback(const sb_run *run, const char *db_path, char *out,
                           size_t len, sb_err *err);
void sb_store_close(sb_store *st);
/* sb_store_path then sb_store_open; the path used goes to path_out (may
 * be NULL). */
int sb_store_open_default(const char *explicit_path, sb_store **st,
                          char *path_out, size_t len, sb_err *err);
int sb_store_open_default_mode(const char *explicit_path, int mode,
                               sb_store **st, char *path_out, size_t len,
                               sb_err *err);

/* Resolves a run reference — "last", a baseline name, a run id or an
 * unambiguous prefix of one — to a run id. SB_EINVAL when none or
 * several match. */
int sb_store_resolve(sb_store *st, const char *ref, char *run_id, size_t len,
                     sb_err *err);
/* Loads a stored run (by reference, as above) into run, which needs no
 * sb_run_init beforehand (it is overwritten); sb_run_free it after, also
 * on failure. */
int sb_store_load_run(sb_store *st, const char *ref, sb_run *run, sb_err *err);
/* Number of stored runs (for tests and summaries); negative on error. */
long sb_store_count_runs(sb_store *st, sb_err *err);

/* ---- history ------------------------------------------------------------- */

/* One result of one run, newest run first, results in run order. */
typedef struct sb_store_hist_row {
    const char *run_id;
    const char *started_at;
    const char *tags; /* compact JSON object */
    const char *bench;
    const char *backend;
    const char *params; /* "size=67108864 nt=0" */
    const char *metric; /* headline metric name, "" if none */
    const char *unit;
    double value; /* headline value */
    double cv;    /* of the samples */
    long n_samples;
    bool valid, skipped;
    const char *point_key;   /* sb_point_key: the same point in every run */
    const char *fingerprint; /* the machine's, "" if none */
    int higher_better;       /* 1, 0, or -1 when not recorded */
    int stable;              /* 1, 0, or -1 when not judged */
    /* the samples' 10th, 50th and 90th percentiles, seconds per iteration
     * (NaN where not stored: p10 before schema 6) */
    double p10_s, p50_s, p90_s;
    const char *system; /* the run's system document (compact JSON) */
} sb_store_hist_row;

typedef int (*sb_store_hist_fn)(const sb_store_hist_row *row, void *arg);

/* Calls fn for every result of the `last_runs` newest runs (0: all) that
 * have a result of `bench` (NULL: any; only that bench's rows are given).
 * A non-zero return from fn stops the walk and is returned. */
int sb_store_history(sb_store *st, const char *bench, int last_runs,
                     sb_store_hist_fn fn, void *arg, sb_err *err);

/* One earlier judged result of a point on one machine. */
typedef struct sb_point_hist {
    char run_id[64];
    int idx;        /* its place in its run */
    double p50;     /* median time, seconds */
    bool stable;    /* as stored now (a later run may have withdrawn it) */
    unsigned flags; /* SB_UNSTABLE_* (stability.h); 0 before schema 5 */
} sb_point_hist;

/* The newest `max` judged, valid results of point `point_key`
 * (sb_point_key) on the machine `fingerprint`, newest first, leaving out
 * run `except_run` (NULL: none); *n gets how many. Results stored before
 * the stability verdict (schema 3) are not among them. */
int sb_store_point_history(sb_store *st, const char *point_key,
                           const char *fingerprint, const char *except_run,
                           sb_point_hist *out, int max, int *n, sb_err *err);

/* Holds each judged result of `run` (not yet stored) against its point's
 * history on the run's machine (stab_history.c): flags a stable result
 * whose median lies more than SB_STAB_HISTORY from the point's newest
 * steady medians, and withdraws the stable mark of earlier results that
 * lie more than SB_STAB_HISTORY_RETRO from the point's median once
 * SB_STAB_HISTORY_RETRO_MIN steady results exist; *withdrawn counts
 * those. */
int sb_store_judge_history(sb_store *st, sb_run *run, int *withdrawn,
                           sb_err *err);

/* Withdraws the stable mark of result `idx` of run `run_id`: later runs
 * on its machine put it more than SB_STAB_HISTORY from the point's
 * median. Sets results.stable to 0, adds SB_UNSTABLE_HISTORY to its flags
 * and `why` to the reasons in the stored run document, in one
 * transaction. */
int sb_store_withdraw_stable(sb_store *st, const char *run_id, int idx,
                             const char *why, sb_err *err);

/* ---- baselines ----------------------------------------------------------- */

/* Names a run (a reference as for sb_store_resolve; NULL means "last") as
 * baseline `name`, replacing an earlier baseline of that name. */
int sb_store_baseline_set(sb_store *st, const char *name, const char *ref,
                          sb_err *err);
/* Names several runs (nrefs >= 1; 0 means "last") as baseline `name`:
 * replacing it, or with append adding them to the runs it holds. All in
 * one transaction; every reference resolves first. As a run reference the
 * name means the newest of its runs. */
int sb_store_baseline_set_runs(sb_store *st, const char *name,
                               const char *const *refs, int nrefs, bool append,
                               sb_err *err);
/* Adds run_id to baseline `name` (creating it) and keeps its newest
 * `keep` runs (check --update-baseline). */
int sb_store_baseline_update(sb_store *st, const char *name, const char *run_id,
                             int keep, sb_err *err);
/* The run ids of baseline `name`, oldest first (at most max); *n = 0 when
 * there is no such baseline. */
int sb_store_baseline_runs(sb_store *st, const char *name, char ids[][64],
                           int max, int *n, sb_err *err);
/* SB_EINVAL when there is no such baseline. */
int sb_store_baseline_rm(sb_store *st, const char *name, sb_err *err);

typedef struct sb_store_baseline {
    const char *name;
    const char *run_id;
    const char *created_at; /* when the name was set */
    const char *started_at; /* of the run */
    const char *tags;
    long n_results; /* of its newest run */
    long n_runs;    /* runs it holds */
} sb_store_baseline;

typedef int (*sb_store_baseline_fn)(const sb_store_baseline *b, void *arg);
int sb_store_baseline_list(sb_store *st, sb_store_baseline_fn fn, void *arg,
                           sb_err *err);

/* ---- profiler traces (schema 3) ------------------------------------------ */

/* Most bytes of one stored trace (gzip'd): SQLite's default blob limit. */
#define SB_STORE_TRACE_MAX 1000000000L

/* Stores a trace under `name` (the baseline names' rule), its data
 * gzip'd (`gz`, `len`), the file it came from, its format and event
 * count. SB_EINVAL when the name is taken or not a valid name. */
int sb_store_trace_put(sb_store *st, const char *name, const char *source,
                       const char *format, long events, const void *gz,
                       size_t len, sb_err *err);
/* The data of stored trace `name` (malloc'ed; free it). SB_EINVAL when
 * there is none. */
int sb_store_trace_get(sb_store *st, const char *name, void **data, size_t *len,
                       sb_err *err);
/* SB_EINVAL when there is no such trace. */
int sb_store_trace_rm(sb_store *st, const char *name, sb_err *err);

typedef struct sb_store_trace {
    const char *name, *imported_at, *source, *format;
    long events;
    long long bytes; /* stored (gzip'd) */
} sb_store_trace;
typedef int (*sb_store_trace_fn)(const sb_store_trace *t, void *arg);
int sb_store_trace_list(sb_store *st, sb_store_trace_fn fn, void *arg,
                        sb_err *err);

/* ---- fleet runs (schema 7) ---------------------------------------------- */

/* Stores a fleet run's document (solbench.fleet/1, text); its hosts'
 * runs are stored as runs. An id already stored is refused. */
int sb_store_fleet_put(sb_store *st, const char *id, const char *started_at,
                       const char *launcher, int hosts, bool healthy,
                       const char *doc, sb_err *err);
/* The document of a fleet run: ref is "last", a fleet baseline's name,
 * a fleet id or an unambiguous prefix of one; its id to id, the
 * document to *doc (malloc'ed). */
int sb_store_fleet_get(sb_store *st, const char *ref, char *id, size_t len,
                       char **doc, sb_err *err);
/* A fleet baseline's name: a letter, then letters, digits, '.', '_' or
 * '-', at most SB_STORE_NAME_MAX characters, not "last"; 0 or SB_EINVAL. */
int sb_store_fleet_check_name(const char *name, sb_err *err);
/* Names the fleet run ref (as above) as the fleet baseline `name`
 * (replacing what it named); its id to id. */
int sb_store_fleet_baseline_set(sb_store *st, const char *name, const char *ref,
                                char *id, size_t len, sb_err *err);
typedef struct sb_store_fleet {
    const char *id, *started_at, *launcher;
    int hosts;
    bool healthy;
    const char *baselines; /* the names given it, comma-separated, "" */
} sb_store_fleet;
typedef int (*sb_store_fleet_fn)(const sb_store_fleet *f, void *arg);
/* The stored fleet runs, oldest first. */
int sb_store_fleet_list(sb_store *st, sb_store_fleet_fn fn, void *arg,
                        sb_err *err);

/* ---- helpers shared with compare ----------------------------------------- */

/* The canonical key of a measured point: "bench|backend|k=v k=v" with the
 * parameters sorted by name and in canonical text. */
const char *sb_point_key(const sb_result *r, char *buf, size_t len);
/* Human text of a point ("size=64MiB nt=false"); sizes are shown with
 * units also for a result read back from JSON, by the registered bench's
 * parameter definitions. */
const char *sb_point_text(const sb_result *r, char *buf, size_t len);
/* FNV-1a hex of the canonical (sorted keys, compact) JSON of config. */
void sb_config_hash(const json_t *config, char out[17]);

#ifdef __cplusplus
}
#endif

#endif
