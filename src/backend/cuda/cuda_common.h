/*
 * cuda_common.h — what every CUDA benchmark shares (cuda_common.cu): opening
 * a device (or saying why there is none), the state header with its stream
 * and events, and the measurement loop that times batches of launches with
 * CUDA events, replayed from a CUDA graph so launch gaps stay out of the
 * figures.
 *
 * The benchmark tables live in C (cuda_benches.c); the kernels and library
 * calls in the .cu files. Every CUDA call is checked: a failure becomes an
 * sb_err naming the call and the driver's message.
 */
#ifndef SOLBENCH_BACKEND_CUDA_COMMON_H
#define SOLBENCH_BACKEND_CUDA_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "solbench/bench.h"

/* Enqueues `iters` back-to-back runs of the kernel on b->stream (no
 * synchronisation). Returns 0 or a negative code with err set. */
typedef int (*sb_cuda_enqueue_fn)(void *state, int iters, sb_err *err);

/* What NVML showed of the device across a result's samples: clocks,
 * power and temperature at the first sample and the last, the lowest SM
 * clock, the highest power and temperature, and every clock event
 * (throttle) reason seen while sampling. polls = 0: NVML not loaded. */
typedef struct sb_cuda_watch {
    int polls;
    unsigned sm_start, sm_end, sm_min, mem_start, mem_end, temp_max;
    double watts_start, watts_end, watts_max;
    unsigned long long reasons;
} sb_cuda_watch;

/* The first member of every CUDA benchmark state. */
typedef struct sb_cuda_base {
    int device;
    cudaStream_t stream;
    cudaEvent_t ev[2];
    sb_cuda_enqueue_fn enqueue;
    bool use_graph;   /* capture the batch into a graph (else direct) */
    bool plant_error; /* verify() corrupts one output element first */
    int iters;        /* launches per sample, set by the measurement */
    void *graph;      /* cudaGraphExec_t of `graph_iters` launches */
    int graph_iters;
    bool no_graph; /* this stream's work could not be captured */
    bool launched; /* launched directly once (module loaded) */
    int passes;    /* repetitions of the work inside one launch (0 or
                      1: one); a sample is divided by iters x passes */
    char how[96];  /* how the samples were timed, for a note */
    char devname[256];
    int cc; /* compute capability x 10 */
    int sms;
    double l2_bytes;
    sb_cuda_watch watch; /* the device's state while sampling */
} sb_cuda_base;

/* Checks that a CUDA device exists and selects it. SB_EUNSUP with
 * "no CUDA device (<driver's reason>)" when none; SB_EINVAL when `device`
 * is past the last one. Calls nothing that can wait on a device. */
int sb_cuda_open(int device, sb_err *err);
/* Opens the device and creates the stream and events. */
int sb_cuda_base_init(sb_cuda_base *b, int device, sb_cuda_enqueue_fn fn,
                      bool use_graph, sb_err *err);
void sb_cuda_base_free(sb_cuda_base *b);
/* 0, or SB_EIO with "what: message (name)" when e is an error. */
int sb_cuda_fail(sb_err *err, cudaError_t e, const char *what);
/* Waits for the stream and reports any error a kernel left behind. */
int sb_cuda_sync(sb_cuda_base *b, sb_err *err, const char *what);
/* Waits for the setup's uploads on the current device: uploads through
 * the legacy stream may still be in flight (pageable copies return once
 * staged), and a benchmark's own stream does not wait for them. */
int sb_cuda_uploads_done(sb_err *err);
/* A gate that holds a stream while work is queued behind it (nvbandwidth's
 * method): a one-thread kernel spins on a flag in mapped page-locked host
 * memory until the host releases it (or about 2 s of clock cycles pass,
 * so a host that never releases it cannot hang the GPU). Work queued
 * behind a held gate then starts back to back, so a batch of short
 * operations is timed without the host's queueing in it. Queue at most a
 * few hundred operations behind it: a full queue would make the host wait
 * on the held stream until the spin's limit. */
typedef struct sb_cuda_gate {
    volatile int *flag; /* NULL: no gate (mapped memory unavailable) */
    int *dflag;
} sb_cuda_gate;
/* Makes the gate; false (and no gate) when mapped memory is refused. */
bool sb_cuda_gate_open(sb_cuda_gate *g);
void sb_cuda_gate_close(sb_cuda_gate *g);
/* Holds `st` (the spin kernel queued on it); 0 or a CUDA error code. */
int sb_cuda_gate_hold(sb_cuda_gate *g, cudaStream_t st);
void sb_cuda_gate_release(sb_cuda_gate *g);
#define SB_CUDA_GATE_MAX 512 /* operations queued behind a held gate */

/* Host to device on the benchmark's stream, complete when it returns: a
 * copy the stream's next kernel reads (a plain cudaMemcpy goes through the
 * legacy stream, which the non-blocking benchmark stream does not wait
 * for, and may return before a pageable copy has landed). */

int sb_cuda_put(sb_cuda_base *b, void *dst, const void *src, size_t bytes,
                sb_err *err, const char *what);
/* The timer of any state that begins with sb_cuda_base: a sample is a
 * batch of launches (captured once per count into a CUDA graph when
 * allowed, then replayed) between two CUDA events on the state's stream;
 * at least 2 ms and at most 4096 launches a sample, each launch
 * b->passes kernel iterations. The runner's loop calibrates, warms up and
 * samples with it. */
extern const sb_timer sb_cuda_timer;
/* Adds the device and timing-method notes to a result. */
void sb_cuda_note(const sb_cuda_base *b, sb_result *r);
/* Devices visible to the runtime, or a negative code with err set. */
int sb_cuda_count(int *n, sb_err *err);
/* The devices as the fingerprint has them (a new JSON array), or NULL
 * when there is none or the driver does not answer. */
struct json_t;
struct json_t *sb_cuda_devices_json(void);

/* "plant_error" parameter shared by the CUDA benches (tests). */
#define SB__CUDA_P_PLANT                                                        \
    {                                                                           \
        "plant_error", SB_P_BOOL, "0", 0, 0, NULL,                              \
            "testing: corrupt one output element before verification (the run " \
            "must then fail)"                                                   \
    }
#define SB__CUDA_P_DEVICE                                                      \
    {                                                                          \
        "device", SB_P_INT, "0", 0, 1024, NULL, "CUDA device index"            \
    }

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* dst[i] = src[i] for i < nv, grid-stride, four vectors loaded before the
 * first is stored so that several loads are in flight per thread: the
 * body of every device copy kernel (memory.copy, the SM host copies). */
template <typename V>
__device__ __forceinline__ void sb_cu_copy_vecs(const V *__restrict__ src,
                                                V *__restrict__ dst, size_t nv)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < nv; i += 4 * stride) {
        V x0 = src[i], x1 = src[i + stride], x2 = src[i + 2 * stride],
          x3 = src[i + 3 * stride];
        dst[i] = x0;
        dst[i + stride] = x1;
        dst[i + 2 * stride] = x2;
        dst[i + 3 * stride] = x3;
    }
    for (; i < nv; i += stride)
        dst[i] = src[i];
}
#endif

#endif
