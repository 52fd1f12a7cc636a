/*
 * pjrt.h — the PJRT backend's plumbing (pjrt.c): the plugin a process
 * loads once (dlopen, GetPjrtApi, the API version check, the client and
 * its devices), device buffers, programs compiled from StableHLO text, and
 * executions awaited through their events. Every PJRT error becomes one
 * sb_err line naming the call and the plugin's message.
 */
#ifndef SOLBENCH_BACKEND_PJRT_H
#define SOLBENCH_BACKEND_PJRT_H

#include <stddef.h>
#include <stdint.h>

#include "solbench/bench.h"
#include "solbench/error.h"

typedef struct sb_pjrt sb_pjrt;
typedef struct sb_pjrt_buf sb_pjrt_buf;
typedef struct sb_pjrt_exe sb_pjrt_exe;

/* Element types of the buffers solbench makes. */
typedef enum { SB_PJRT_F32, SB_PJRT_BF16, SB_PJRT_S32 } sb_pjrt_type;

/* The plugin of this process, loaded and its client created on the first
 * call: $SOLBENCH_PJRT_PLUGIN (set by `run --pjrt-plugin`), else the one
 * found at build time. SB_EUNSUP (a skipped result) with the reason when
 * there is none or it does not load. */
int sb_pjrt_open(sb_pjrt **out, sb_err *err);
/* "cpu", "tpu", "cuda"... */
const char *sb_pjrt_platform(const sb_pjrt *p);
/* The platform, the first device's kind, the devices, the PJRT API
 * version and the plugin's path in one line: the note every PJRT result
 * carries. */
const char *sb_pjrt_describe(const sb_pjrt *p);

/* A device buffer of `type` and dims on device 0 from host data: returns
 * once the host data may be reused and the buffer is ready on the device. */
int sb_pjrt_upload(sb_pjrt *p, const void *data, sb_pjrt_type type,
                   const int64_t *dims, int ndims, sb_pjrt_buf **out,
                   sb_err *err);
/* Copies a buffer to host memory of `bytes`. */
int sb_pjrt_download(sb_pjrt *p, sb_pjrt_buf *b, void *dst, size_t bytes,
                     sb_err *err);
void sb_pjrt_buf_free(sb_pjrt *p, sb_pjrt_buf *b);

/* Compiles a StableHLO module given as MLIR text (a printf format and its
 * arguments) for one replica and one partition. */
int sb_pjrt_compile(sb_pjrt *p, sb_pjrt_exe **out, sb_err *err, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));
void sb_pjrt_exe_free(sb_pjrt *p, sb_pjrt_exe *e);
/* Executes on device 0 with `nargs` arguments, waits for the device to
 * finish (the execution's completion event) and returns its one output
 * (free it with sb_pjrt_buf_free). */
int sb_pjrt_execute(sb_pjrt *p, sb_pjrt_exe *e, sb_pjrt_buf *const *args,
                    int nargs, sb_pjrt_buf **out, sb_err *err);

/* The device scalar (s32) of a program's loop count, uploaded again only
 * when the count changes. */
typedef struct sb_pjrt_count {
    sb_pjrt_buf *buf;
    uint64_t n;
} sb_pjrt_count;
int sb_pjrt_count_set(sb_pjrt *p, sb_pjrt_count *c, uint64_t n, sb_err *err);
void sb_pjrt_count_free(sb_pjrt *p, sb_pjrt_count *c);
/* The first member of every PJRT benchmark state: the plugin, the
 * compiled program (a loop whose last argument is its count) and the
 * arguments of a launch before the count (owned by the state). */
typedef struct sb_pjrt_loop {
    sb_pjrt *p;
    sb_pjrt_exe *exe;
    sb_pjrt_buf *args[4];
    int nargs; /* with the count */
    sb_pjrt_count count;
} sb_pjrt_loop;
/* One launch of the loop with count n, awaited; its output in *out. */
int sb_pjrt_loop_run(sb_pjrt_loop *l, uint64_t n, sb_pjrt_buf **out,
                     sb_err *err);
/* Frees the program and the count (not the arguments). */
void sb_pjrt_loop_free(sb_pjrt_loop *l);
/* The timer of every state that begins with sb_pjrt_loop: a sample is one
 * launch of `iters` iterations, timed on the host clock from
 * PJRT_LoadedExecutable_Execute to the end of PJRT_Event_Await on its
 * completion event; at least 10 ms, so dispatch and the await stay a small
 * share. The runner's loop calibrates, warms up and samples with it. */
extern const sb_timer sb_pjrt_timer;

#endif
