/*
 * trace_int.h — what the files of src/trace share and the public header
 * does not say: adding an event, the Nsight Systems reader, and the
 * Chrome-trace reader's state between its scanner and its events.
 *
 *   trace_events.c  a trace in memory: strings, tracks, events
 *   trace_read.c    a file or buffer told apart by content; the streaming
 *                   scanner of Chrome-trace JSON
 *   trace_chrome.c  Chrome-trace events reduced to sb_tr_event
 *   trace_nsys.c    Nsight Systems' SQLite export
 */
#ifndef SOLBENCH_TRACE_INT_H
#define SOLBENCH_TRACE_INT_H

#include <jansson.h>
#include <sqlite3.h>

#include "solbench/trace.h"

/* Adds one complete event (µs) on track (pid, tid); *out gets it, its
 * ids -1, its name interned. 0, SB_ENOMEM, or SB_EINVAL past
 * SB_TRACE_MAX_EVENTS. */
int sb_trace_push(sb_trace *t, double ts, double dur, int64_t pid, int64_t tid,
                  const char *name, sb_tr_kind kind, sb_tr_event **out);
/* The index of track (pid, tid), added when new; -1 when out of memory
 * or past 2^20 tracks. */
int32_t sb_trace_track(sb_trace *t, int64_t pid, int64_t tid);
/* Reads an Nsight Systems SQLite export opened as `db` into `t`
 * (initialised). */
int sb_trace_read_nsys_db(sqlite3 *db, const char *label, sb_trace *t,
                          sb_err *err);
/* Marks the tracks that hold device work. */
void sb_trace_mark_devices(sb_trace *t);

/* ---- the Chrome-trace reader --------------------------------------------- */

typedef struct sb_trace_pname {
    int64_t pid;
    int32_t name;
} sb_trace_pname;

typedef struct sb_trace_reader {
    sb_trace *t;
    struct sb_trace_src *s;        /* the bytes (trace_read.c's) */
    sb_err *err;                   /* the source's */
    const unsigned long long *off; /* the source's bytes taken */
    sb_trace_pname *pn; /* process names (metadata may come after the events) */
    size_t npn, pncap;
    bool kineto_keys;
} sb_trace_reader;

/* Takes event number idx of traceEvents. 0, SB_ENOMEM, or SB_EINVAL
 * (reported). */
int sb_trace_chrome_event(sb_trace_reader *r, json_t *e, size_t idx);
/* Takes the value v of a top-level key other than traceEvents. */
void sb_trace_chrome_top(sb_trace_reader *r, const char *key, json_t *v);
/* Format, process names and device tracks, once everything is read. */
void sb_trace_chrome_finish(sb_trace_reader *r);

#endif
