/*
 * device.h — the small device interface the transfer benchmarks (and the
 * accelerator benchmarks) run against: allocate, free, copy, synchronise,
 * and a timed region of concurrent copy jobs.
 *
 * Two implementations: "cuda" (src/backend/cuda/, copy engines timed with
 * CUDA events around many queued copies, nvbandwidth's method) and "host"
 * (src/backend/cpu/dev_host.c), whose "device" is a second host buffer,
 * optionally on another NUMA node — a real memcpy measurement, labelled as
 * such, so the transfer logic is exercised on machines without a GPU.
 */
#ifndef SOLBENCH_DEVICE_H
#define SOLBENCH_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sb_host_kind {
    SB_HOST_PAGEABLE = 0, /* plain malloc'ed memory */
    SB_HOST_PINNED = 1,   /* page-locked (cudaHostAlloc; mlock on host) */
    SB_HOST_WC = 2        /* write-combined pinned memory (CUDA only) */
} sb_host_kind;

typedef enum sb_dir {
    SB_H2D = 0, /* host to device */
    SB_D2H = 1, /* device to host */
    SB_D2D = 2  /* device to device */
} sb_dir;

/* One stream of back-to-back copies: `reps` copies of `bytes` from src to
 * dst in direction dir. Jobs given together run concurrently, one stream
 * (or thread) each. */
typedef struct sb_copy_job {
    void *dst;
    const void *src;
    size_t bytes;
    sb_dir dir;
    int reps;
    /* the device may hold its stream until every copy is queued: no copy
     * blocks the host (page-locked or write-combined host memory), so
     * queueing never waits on the held stream */
    bool held;
    /* copied by the device's cores through mapped host memory (CUDA: an
     * SM kernel), not by its copy engines; page-locked or write-combined
     * host memory only */
    bool sm;
} sb_copy_job;

typedef struct sb_dev sb_dev;

typedef struct sb_dev_ops {
    const char *name; /* "cuda", "host" */
    /* Opens device `index`; `numa` (host only) places device buffers on a
     * NUMA node (-1: wherever the OS puts them). SB_EUNSUP with the reason
     * when there is no such device. */
    int (*open)(int index, int numa, sb_dev **dev, sb_err *err);
    void (*close)(sb_dev *dev);
    /* One line: the device and where its memory is. */
    void (*describe)(sb_dev *dev, char *buf, size_t len);
    void *(*dev_alloc)(sb_dev *dev, size_t bytes, sb_err *err);
    void (*dev_free)(sb_dev *dev, void *p);
    /* Host memory of a kind, placed on the device's NUMA node where it can
     * be found (the placement goes into describe()). */
    void *(*host_alloc)(sb_dev *dev, size_t bytes, sb_host_kind kind,
                        sb_err *err);
    void (*host_free)(sb_dev *dev, void *p, size_t bytes, sb_host_kind kind);
    /* A synchronous copy (validation, filling device buffers). */
    int (*copy)(sb_dev *dev, void *dst, const void *src, size_t bytes,
                sb_dir dir, sb_err *err);
    /* Runs the jobs concurrently; seconds[i] is job i's elapsed time from
     * its first copy's start to its last copy's end. */
    int (*timed_copies)(sb_dev *dev, const sb_copy_job *jobs, int njobs,
                        double *seconds, sb_err *err);
} sb_dev_ops;

extern const sb_dev_ops sb_dev_host_ops;
#ifdef SB_HAVE_CUDA
extern const sb_dev_ops sb_dev_cuda_ops;
/* CUDA devices the driver reports; 0 when there are none or no driver
 * (src/backend/cuda/cuda_common.cu). Cheap, and never waits on a device:
 * the runner asks it to leave the cuda benchmarks out of a run that names
 * no backend on a machine without a GPU. */
int sb_cuda_device_count(void);
#endif

const char *sb_host_kind_name(sb_host_kind k);

#ifdef __cplusplus
}
#endif

#endif
