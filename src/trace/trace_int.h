/*
 * trace_int.h — what the files of src/trace share and the public header
 * does not say: adding an event, and the Nsight Systems reader.
 */
#ifndef SOLBENCH_TRACE_INT_H
#define SOLBENCH_TRACE_INT_H

#include <sqlite3.h>

#include "solbench/trace.h"

/* Adds one complete event (µs) on track (pid, tid); *out gets it, its
 * ids -1, its name interned. 0, SB_ENOMEM, or SB_EINVAL past
 * SB_TRACE_MAX_EVENTS. */
int sb_trace_push(sb_trace *t, double ts, double dur, int64_t pid, int64_t tid,
                  const char *name, sb_tr_kind kind, sb_tr_event **out);
/* Reads an Nsight Systems SQLite export opened as `db` into `t`
 * (initialised). */
int sb_trace_read_nsys_db(sqlite3 *db, const char *label, sb_trace *t,
                          sb_err *err);
/* Marks the tracks that hold device work. */
void sb_trace_mark_devices(sb_trace *t);

#endif
