/*
 * pjrt.h — the PJRT backend's plumbing (pjrt.c): the plugin a process
 * loads once (dlopen, GetPjrtApi, the API version check, the client and
 * its devices), device buffers, programs compiled from StableHLO text, and
 * executions awaited through their events. Every PJRT error becomes one
 * sb_err line naming the call and the plugin's message.
 */
#ifndef SOLBENCH_BACKEND_PJRT_H
#define SOLBENCH_BACKEND_PJRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/bench.h"
#include "solbench/error.h"

typedef struct sb_pjrt sb_pjrt;
typedef struct sb_pjrt_buf sb_pjrt_buf;
typedef struct sb_pjrt_exe sb_pjrt_exe;

/* Element types of the buffers solbench makes. */
typedef enum {
    SB_PJRT_F32,
    SB_PJRT_BF16,
    SB_PJRT_S32,
    SB_PJRT_F8E4M3 /* OCP fp8 E4M3FN */
} sb_pjrt_type;

/* The plugin of this process, loaded and its client created on the first
 * call: $SOLBENCH_PJRT_PLUGIN (set by `run --pjrt-plugin`), else the one
 * found at build time. SB_EUNSUP (a skipped result) with the reason when
 * there is none or it does not load. */
int sb_pjrt_open(sb_pjrt **out, sb_err *err);
/* The plugin's facts for the machine's (loading it as sb_pjrt_open does):
 * 0 when it loaded, else out->error says why. */
struct sb_pjrt_info;
int sb_pjrt_info_get(struct sb_pjrt_info *out);
/* "cpu", "tpu", "cuda"... */
const char *sb_pjrt_platform(const sb_pjrt *p);
/* The first device's kind ("TPU v5 lite", "NVIDIA H100 80GB HBM3", "cpu"). */
const char *sb_pjrt_device_kind(const sb_pjrt *p);
/* The datasheet of the device (data/hw, by its kind), read on the first
 * call; false when none stands for it. */
struct sb_hw_spec;
bool sb_pjrt_datasheet(sb_pjrt *p, const struct sb_hw_spec **hw);
/* The platform, the first device's kind, the devices, the PJRT API
 * version and the plugin's path in one line: the note every PJRT result
 * carries. */
const char *sb_pjrt_describe(const sb_pjrt *p);

/* Devices a program may run on: the client's addressable devices. */
#define SB_PJRT_MAXDEV 64
int sb_pjrt_ndev(const sb_pjrt *p);

/* A device buffer of `type` and dims on device `dev` (an index into the
 * client's addressable devices) from host data: returns once the host data
 * may be reused and the buffer is ready on the device. sb_pjrt_upload is
 * device 0's. */
int sb_pjrt_upload_to(sb_pjrt *p, int dev, const void *data, sb_pjrt_type type,
                      const int64_t *dims, int ndims, sb_pjrt_buf **out,
                      sb_err *err);
int sb_pjrt_upload(sb_pjrt *p, const void *data, sb_pjrt_type type,
                   const int64_t *dims, int ndims, sb_pjrt_buf **out,
                   sb_err *err);
/* Copies a buffer to host memory of `bytes`. */
int sb_pjrt_download(sb_pjrt *p, sb_pjrt_buf *b, void *dst, size_t bytes,
                     sb_err *err);

/* Copies in flight: the _begin calls return once the copy is issued, its
 * events added to a pending set; sb_pjrt_wait awaits them all (an upload
 * is done when its host data is released and its buffer ready). Several
 * copies issued before one wait are in flight together. */
#define SB_PJRT_MAXPENDING 8
typedef struct sb_pjrt_pending {
    void *ev[SB_PJRT_MAXPENDING];
    const char *what[SB_PJRT_MAXPENDING];
    int n;
} sb_pjrt_pending;
int sb_pjrt_upload_begin(sb_pjrt *p, int dev, const void *data,
                         sb_pjrt_type type, const int64_t *dims, int ndims,
                         sb_pjrt_buf **out, sb_pjrt_pending *w, sb_err *err);
int sb_pjrt_download_begin(sb_pjrt *p, sb_pjrt_buf *b, void *dst, size_t bytes,
                           sb_pjrt_pending *w, sb_err *err);
int sb_pjrt_wait(sb_pjrt *p, sb_pjrt_pending *w, sb_err *err);
/* The host time (sb_now) the last event added to w fires, taken by an
 * OnReady callback: register before the wait, read after it
 * (sb_pjrt_stamp_get: -1 if the callback never ran). The callback may
 * run after the event's awaiter woke, so a stamp must outlive it: keep
 * stamps in memory that lives past the wait (not a loop's stack frame),
 * and sb_pjrt_stamp_settle each before that memory is freed or the stamp
 * registered again (stamp_last does the latter itself). */
typedef struct sb_pjrt_stamp {
    double t;
    int set;   /* the time is written */
    int armed; /* a callback is registered and has not finished */
} sb_pjrt_stamp;
int sb_pjrt_stamp_last(sb_pjrt *p, sb_pjrt_pending *w, sb_pjrt_stamp *at,
                       sb_err *err);
double sb_pjrt_stamp_get(const sb_pjrt_stamp *at);
/* Waits (at most 10 s) until no callback will write to at any more. */
void sb_pjrt_stamp_settle(sb_pjrt_stamp *at);
void sb_pjrt_buf_free(sb_pjrt *p, sb_pjrt_buf *b);

/* Compiles a StableHLO module given as MLIR text (a printf format and its
 * arguments) for one replica and one partition. */
int sb_pjrt_compile(sb_pjrt *p, sb_pjrt_exe **out, sb_err *err, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));
/* The same for `nrep` replicas (a collective's program: replica groups
 * name replicas 0..nrep-1), placed by the client's default device
 * assignment; the devices it runs on, in replica order, are put in
 * dev[0..nrep-1] as indices into the client's addressable devices. */
int sb_pjrt_compile_replicated(sb_pjrt *p, int nrep, int *dev,
                               sb_pjrt_exe **out, sb_err *err, const char *fmt,
                               ...) __attribute__((format(printf, 6, 7)));
void sb_pjrt_exe_free(sb_pjrt *p, sb_pjrt_exe *e);
/* Executes on `ndev` devices (1: device 0; more: a replicated program, in
 * the order of its devices) with `nargs` arguments a device (args[d *
 * nargs + i]), waits until every device has finished (the completion
 * events) and returns each device's one output in outs[d] (free them with
 * sb_pjrt_buf_free). */
int sb_pjrt_execute(sb_pjrt *p, sb_pjrt_exe *e, int ndev,
                    sb_pjrt_buf *const *args, int nargs, sb_pjrt_buf **outs,
                    sb_err *err);

/* The device scalars (s32) of a program's loop count, one a device,
 * uploaded again only when the count changes. */
typedef struct sb_pjrt_count {
    sb_pjrt_buf *buf[SB_PJRT_MAXDEV];
    uint64_t n;
} sb_pjrt_count;
/* The first member of every PJRT benchmark state: the plugin, the
 * compiled program (a loop whose last argument is its count), the devices
 * it runs on (ndev 0 or 1: device 0 alone) and each device's arguments
 * before the count (owned by the state). */
typedef struct sb_pjrt_loop {
    sb_pjrt *p;
    sb_pjrt_exe *exe;
    int ndev;
    int dev[SB_PJRT_MAXDEV];
    sb_pjrt_buf *args[SB_PJRT_MAXDEV][8];
    int nargs; /* with the count */
    sb_pjrt_count count;
    double work; /* the definition's runs one iteration is (0: 1) */
} sb_pjrt_loop;
/* A new zeroed benchmark state of `size` bytes (which begins with an
 * sb_pjrt_loop) in *out, the plugin opened and set in its loop; the
 * plugin's reason (SB_EUNSUP) when there is none. */
int sb_pjrt_state_new(size_t size, void **out, sb_err *err);
/* Sets the loop count of the next launches (uploaded when it changes). */
int sb_pjrt_loop_count(sb_pjrt_loop *l, uint64_t n, sb_err *err);
/* One launch of the loop with count n, awaited; each device's output in
 * outs[d] (ndev of them). */
int sb_pjrt_loop_run(sb_pjrt_loop *l, uint64_t n, sb_pjrt_buf **outs,
                     sb_err *err);
/* One launch of a one-device loop with count n, its output copied to
 * host memory of `bytes` and released: what a verification reads. */
int sb_pjrt_loop_fetch(sb_pjrt_loop *l, uint64_t n, void *dst, size_t bytes,
                       sb_err *err);
/* Frees the program and the counts (not the arguments). */
void sb_pjrt_loop_free(sb_pjrt_loop *l);
/* The timer of every state that begins with sb_pjrt_loop: a sample is one
 * launch of `iters` iterations, timed on the host clock from
 * PJRT_LoadedExecutable_Execute to the end of PJRT_Event_Await on the
 * last device's completion event; at least 100 ms, so dispatch, the
 * await and what a plugin does once a launch (the CPU plugin maps and
 * faults in fresh output buffers) stay a small share; the time per run
 * divides by `work` too. The
 * runner's loop calibrates, warms up and samples with it. */
extern const sb_timer sb_pjrt_timer;

#endif
