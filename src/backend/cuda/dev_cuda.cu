/*
 * dev_cuda.cu — the CUDA implementation of the device interface
 * (device.h). Copies run on the copy engines through cudaMemcpyAsync; a
 * timed region is a batch of copies queued back to back on one stream per
 * job, timed with CUDA events recorded before the first and after the last
 * copy, so launch overhead is spread over the batch. With page-locked or
 * write-combined host memory a spin kernel holds the first stream until
 * every copy is queued (nvbandwidth's method): the copies then run back to
 * back from the start event, and small ones measure the link, not how
 * fast the host queues them. Pageable copies are not held: the host
 * stages them and would wait on the held stream.
 * Host memory is placed on the GPU's NUMA node where the node can be read
 * from sysfs: pageable and pinned buffers are allocated bound to that node
 * with hwloc (pinned ones then page-locked with cudaHostRegister), so the
 * copies do not cross the socket interconnect; write-combined buffers come
 * from cudaHostAlloc, which places them itself. The calling thread is
 * bound to the node's CPUs while the device is open (its binding before
 * is put back at close).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <hwloc.h>

#include "backend/cuda/cuda_common.h"

extern "C" {
#include "solbench/device.h"
#include "solbench/util.h"
}

struct sb_dev {
    int index;
    int numa;          /* the GPU's NUMA node, -1 if unknown */
    int sms;           /* streaming multiprocessors: the SM copy's grid */
    sb_cuda_gate gate; /* holds the first stream while a batch is queued */
    cudaStream_t stream[2];
    cudaEvent_t ev[2][2]; /* [stream][start, stop] */
    char name[256];
    hwloc_topology_t topo; /* NULL when the node is unknown */
    hwloc_obj_t node;      /* the GPU's NUMA node in topo */
    /* the calling thread's CPUs before open bound it to the node's, put
     * back by close; NULL when it was not bound. Right while a thread's
     * opens do not nest (a point opens its device and closes it before
     * the next point's; CUDA points are never interleaved). */
    hwloc_bitmap_t saved_cpus;
};

/* A copy by the SM: 16-byte vectors, four in flight per thread, then the
 * bytes past the last whole vector (every buffer here is page-aligned). */
__global__ void k_copy_sm(const uint4 *__restrict__ src,
                          uint4 *__restrict__ dst, size_t nv,
                          const unsigned char *__restrict__ tsrc,
                          unsigned char *__restrict__ tdst, size_t tail)
{
    sb_cu_copy_vecs(src, dst, nv);
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < tail)
        tdst[t] = tsrc[t];
}

static int cuda_fail(sb_err *err, int code, const char *what, cudaError_t e)
{
    return sb_fail(err, code, "%s: %s (%s)", what, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

/* The NUMA node of a PCI device, from sysfs; -1 when not known. */
static int gpu_numa_node(int index)
{
    char bus[32];
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) != cudaSuccess)
        return -1;
    for (char *c = bus; *c; c++)
        if (*c >= 'A' && *c <= 'F')
            *c = (char)(*c - 'A' + 'a');
    char path[128];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", bus);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int node = -1;
    if (fscanf(f, "%d", &node) != 1)
        node = -1;
    fclose(f);
    return node;
}

static int cuda_open(int index, int numa, sb_dev **out, sb_err *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
        return sb_fail(err, SB_EUNSUP, "no CUDA device (%s)",
                       cudaGetErrorString(e));
    if (count == 0)
        return sb_fail(err, SB_EUNSUP, "no CUDA device (the driver reports 0)");
    if (index >= count)
        return sb_fail(err, SB_EINVAL,
                       "parameter device=%d: there are %d "
                       "CUDA devices",
                       index, count);
    if ((e = cudaSetDevice(index)) != cudaSuccess)
        return cuda_fail(err, SB_EUNSUP, "cudaSetDevice", e);
    sb_dev *d = (sb_dev *)calloc(1, sizeof *d);
    if (!d)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    d->index = index;
    d->numa = gpu_numa_node(index);
    if (d->numa >= 0) {
        d->topo = sb_topology(); /* shared: not destroyed here */
        if (d->topo)
            d->node =
                hwloc_get_numanode_obj_by_os_index(d->topo, (unsigned)d->numa);
        if (!d->node) {
            d->topo = NULL;
            d->numa = -1;
        }
    }
    if (d->node && d->node->cpuset && !hwloc_bitmap_iszero(d->node->cpuset)) {
        /* The thread that queues the copies and touches the host buffers
         * runs on the GPU's node too (a node of memory alone has no CPUs:
         * then the thread stays where it is). */
        hwloc_bitmap_t saved = hwloc_bitmap_alloc();
        if (saved &&
            hwloc_get_cpubind(d->topo, saved, HWLOC_CPUBIND_THREAD) == 0 &&
            hwloc_set_cpubind(d->topo, d->node->cpuset, HWLOC_CPUBIND_THREAD) ==
                0)
            d->saved_cpus = saved;
        else if (saved)
            hwloc_bitmap_free(saved);
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) {
        snprintf(d->name, sizeof d->name, "%s", prop.name);
        d->sms = prop.multiProcessorCount;
    }
    for (int s = 0; s < 2; s++) {
        if ((e = cudaStreamCreateWithFlags(&d->stream[s],
                                           cudaStreamNonBlocking)) ||
            (e = cudaEventCreate(&d->ev[s][0])) ||
            (e = cudaEventCreate(&d->ev[s][1]))) {
            /* What was created before the failure goes too. */
            for (int k = 0; k <= s; k++) {
                if (d->ev[k][0])
                    cudaEventDestroy(d->ev[k][0]);
                if (d->ev[k][1])
                    cudaEventDestroy(d->ev[k][1]);
                if (d->stream[k])
                    cudaStreamDestroy(d->stream[k]);
            }
            if (d->saved_cpus) {
                hwloc_set_cpubind(d->topo, d->saved_cpus, HWLOC_CPUBIND_THREAD);
                hwloc_bitmap_free(d->saved_cpus);
            }
            free(d);
            return cuda_fail(err, SB_EIO, "creating streams and events", e);
        }
    }
    /* without the gate (no mapped memory) copies are timed unheld */
    sb_cuda_gate_open(&d->gate);
    *out = d;
    return 0;
}

static void cuda_close(sb_dev *d)
{
    if (!d)
        return;
    sb_cuda_gate_close(&d->gate);
    for (int s = 0; s < 2; s++) {
        cudaEventDestroy(d->ev[s][0]);
        cudaEventDestroy(d->ev[s][1]);
        cudaStreamDestroy(d->stream[s]);
    }
    if (d->saved_cpus) {
        hwloc_set_cpubind(d->topo, d->saved_cpus, HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(d->saved_cpus);
    }
    free(d);
}

static void cuda_describe(sb_dev *d, char *buf, size_t len)
{
    const char *held = d->gate.flag ? "; with page-locked or write-combined "
                                      "host memory a spin kernel holds the "
                                      "stream until every copy of a batch is "
                                      "queued"
                                    : "";
    if (d->node)
        snprintf(buf, len,
                 "cuda device %d (%s); pageable and pinned host "
                 "memory bound to the GPU's NUMA node %d (hwloc), "
                 "write-combined placed by the driver; %s%s",
                 d->index, d->name, d->numa,
                 d->saved_cpus ? "the calling thread bound to the node's CPUs"
                               : "the calling thread not bound (the node has "
                                 "no CPUs, or binding was refused)",
                 held);
    else
        snprintf(buf, len,
                 "cuda device %d (%s); host memory placed by first "
                 "touch (GPU NUMA node unknown)%s",
                 d->index, d->name, held);
}

static void *cuda_dev_alloc(sb_dev *d, size_t bytes, sb_err *err)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        cuda_fail(err, SB_ENOMEM, "cudaMalloc", e);
        return NULL;
    }
    if ((e = cudaMemset(p, 0x5a, bytes)) != cudaSuccess) {
        cudaFree(p);
        cuda_fail(err, SB_EIO, "cudaMemset", e);
        return NULL;
    }
    return p;
}

static void cuda_dev_free(sb_dev *d, void *p)
{
    if (p)
        cudaFree(p);
}

static void *cuda_host_alloc(sb_dev *d, size_t bytes, sb_host_kind kind,
                             sb_err *err)
{
    void *p = NULL;
    if (d->node && kind != SB_HOST_WC) {
        /* Bound to the GPU's node (hwloc falls back to a plain mapping where
         * the OS cannot bind); the first touch below faults the pages in
         * there. Pinned memory is then page-locked where it lies. */
        p = hwloc_alloc_membind(d->topo, bytes, d->node->nodeset,
                                HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
        if (!p) {
            sb_fail(err, SB_ENOMEM,
                    "cannot allocate %zu bytes of host memory "
                    "on NUMA node %d",
                    bytes, d->numa);
            return NULL;
        }
        memset(p, 0x33, bytes);
        if (kind == SB_HOST_PINNED) {
            cudaError_t e = cudaHostRegister(
                p, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
            if (e != cudaSuccess) {
                hwloc_free(d->topo, p, bytes);
                cuda_fail(err, SB_ENOMEM, "cudaHostRegister", e);
                return NULL;
            }
        }
        return p;
    }
    if (kind == SB_HOST_PAGEABLE) {
        p = sb_alloc_aligned(bytes);
        if (!p) {
            sb_fail(err, SB_ENOMEM, "cannot allocate %zu bytes", bytes);
            return NULL;
        }
        memset(p, 0x33, bytes);
        return p;
    }
    unsigned flags = cudaHostAllocPortable | cudaHostAllocMapped;
    if (kind == SB_HOST_WC)
        flags |= cudaHostAllocWriteCombined;
    cudaError_t e = cudaHostAlloc(&p, bytes, flags);
    if (e != cudaSuccess) {
        cuda_fail(err, SB_ENOMEM, "cudaHostAlloc", e);
        return NULL;
    }
    memset(p, 0x33, bytes);
    return p;
}

static void cuda_host_free(sb_dev *d, void *p, size_t bytes, sb_host_kind kind)
{
    if (!p)
        return;
    if (d->node && kind != SB_HOST_WC) {
        if (kind == SB_HOST_PINNED)
            cudaHostUnregister(p);
        hwloc_free(d->topo, p, bytes);
    } else if (kind == SB_HOST_PAGEABLE)
        sb_free_aligned(p);
    else
        cudaFreeHost(p);
}

static cudaMemcpyKind kind_of(sb_dir dir)
{
    switch (dir) {
    case SB_H2D:
        return cudaMemcpyHostToDevice;
    case SB_D2H:
        return cudaMemcpyDeviceToHost;
    default:
        return cudaMemcpyDeviceToDevice;
    }
}

static int cuda_copy(sb_dev *d, void *dst, const void *src, size_t bytes,
                     sb_dir dir, sb_err *err)
{
    cudaError_t e = cudaMemcpy(dst, src, bytes, kind_of(dir));
    /* A pageable host-to-device cudaMemcpy returns once the data is staged;
     * the copy streams do not wait for it, so wait here. */
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    return e == cudaSuccess ? 0 : cuda_fail(err, SB_EIO, "cudaMemcpy", e);
}

/* Queues every job: the start event on the first stream, the others
 * waiting on it, then each job's copies and its end event. SM copies
 * reach the host buffer through its device mapping, looked up before the
 * start event. */
static int queue_copies(sb_dev *d, const sb_copy_job *jobs, int njobs,
                        sb_err *err)
{
    cudaError_t e;
    void *dst[2];
    const void *src[2];
    for (int j = 0; j < njobs; j++) {
        dst[j] = jobs[j].dst;
        src[j] = jobs[j].src;
        if (!jobs[j].sm)
            continue;
        void *host = jobs[j].dir == SB_H2D ? (void *)src[j] : dst[j], *mapped;
        if ((e = cudaHostGetDevicePointer(&mapped, host, 0)))
            return cuda_fail(err, SB_EUNSUP,
                             "engine=sm: the host buffer has no device "
                             "mapping (cudaHostGetDevicePointer)",
                             e);
        if (jobs[j].dir == SB_H2D)
            src[j] = mapped;
        else
            dst[j] = mapped;
    }
    if ((e = cudaEventRecord(d->ev[0][0], d->stream[0])))
        return cuda_fail(err, SB_EIO, "cudaEventRecord", e);
    for (int j = 1; j < njobs; j++)
        if ((e = cudaStreamWaitEvent(d->stream[j], d->ev[0][0], 0)))
            return cuda_fail(err, SB_EIO, "cudaStreamWaitEvent", e);
    for (int j = 0; j < njobs; j++) {
        cudaStream_t s = d->stream[j];
        size_t bytes = jobs[j].bytes, nv = bytes / 16;
        unsigned grid = (unsigned)(d->sms > 0 ? d->sms * 8 : 1024);
        e = cudaSuccess;
        for (int r = 0; !e && r < jobs[j].reps; r++) {
            if (jobs[j].sm)
                k_copy_sm<<<grid, 256, 0, s>>>(
                    (const uint4 *)src[j], (uint4 *)dst[j], nv,
                    (const unsigned char *)src[j] + nv * 16,
                    (unsigned char *)dst[j] + nv * 16, bytes % 16);
            else
                e = cudaMemcpyAsync(dst[j], src[j], bytes, kind_of(jobs[j].dir),
                                    s);
        }
        if (e || (e = cudaGetLastError()) ||
            (e = cudaEventRecord(d->ev[j][1], s)))
            return cuda_fail(
                err, SB_EIO,
                jobs[j].sm ? "the SM copy kernel" : "cudaMemcpyAsync", e);
    }
    return 0;
}

static int cuda_timed_copies(sb_dev *d, const sb_copy_job *jobs, int njobs,
                             double *seconds, sb_err *err)
{
    cudaError_t e;
    if (njobs > 2)
        return sb_fail(err, SB_EINVAL, "at most two concurrent copy streams");
    /* One start for every stream: the first stream records it and the
     * others wait on it, and each direction is timed from it to its own
     * end. Timed from their own starts, two directions that ran one after
     * the other (pageable copies are staged in the order they are issued)
     * would each look as fast as alone, and the pair's span as short as
     * the longer one. Every job is queued before any is waited on, so the
     * streams overlap where the hardware lets them. */
    bool hold = d->gate.flag != NULL;
    int queued = 0;
    for (int j = 0; j < njobs; j++) {
        hold = hold && jobs[j].held;
        queued += jobs[j].reps;
    }
    hold = hold && queued <= SB_CUDA_GATE_MAX;
    if (hold && (e = (cudaError_t)sb_cuda_gate_hold(&d->gate, d->stream[0])))
        return cuda_fail(err, SB_EIO, "the spin kernel", e);
    int rc = queue_copies(d, jobs, njobs, err);
    if (hold) /* every copy queued (or an error): release the stream */
        sb_cuda_gate_release(&d->gate);
    if (rc)
        return rc;
    for (int j = 0; j < njobs; j++) {
        float ms = 0;
        if ((e = cudaEventSynchronize(d->ev[j][1])) ||
            (e = cudaEventElapsedTime(&ms, d->ev[0][0], d->ev[j][1])))
            return cuda_fail(err, SB_EIO, "timing the copies", e);
        seconds[j] = 1e-3 * (double)ms;
    }
    return 0;
}

extern "C" const sb_dev_ops sb_dev_cuda_ops = {
    "cuda",         cuda_open,         cuda_close,      cuda_describe,
    cuda_dev_alloc, cuda_dev_free,     cuda_host_alloc, cuda_host_free,
    cuda_copy,      cuda_timed_copies,
};
