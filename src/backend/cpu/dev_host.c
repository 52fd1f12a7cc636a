/*
 * dev_host.c — the host implementation of the device interface: the
 * "device" is a second host buffer, optionally bound to another NUMA node,
 * and a copy is memcpy on one thread per stream. It measures real host
 * memory copies (labelled as such), and lets the transfer logic — queuing,
 * timing, validation — run on machines without an accelerator.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <hwloc.h>
#include <omp.h>

#include "solbench/device.h"
#include "solbench/timer.h"
#include "solbench/util.h"

struct sb_dev {
    hwloc_topology_t topo;
    int numa; /* -1: no binding */
};

/* Device buffers carry their size in a header page, so dev_free can hand
 * a NUMA-bound mapping back to hwloc with its length. */
#define HDR 4096

const char *sb_host_kind_name(sb_host_kind k)
{
    switch (k) {
    case SB_HOST_PINNED:
        return "pinned";
    case SB_HOST_WC:
        return "wc";
    default:
        return "pageable";
    }
}

static int host_open(int index, int numa, sb_dev **out, sb_err *err)
{
    if (index != 0)
        return sb_fail(err, SB_EUNSUP,
                       "the host backend has one device "
                       "(device 0), not device %d",
                       index);
    sb_dev *d = calloc(1, sizeof *d);
    if (!d)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    d->numa = numa;
    d->topo = sb_topology(); /* shared: not destroyed here */
    if (!d->topo) {
        free(d);
        return sb_fail(err, SB_EIO, "hwloc could not read the topology");
    }
    if (numa >= 0 && !sb_numa_node_exists(numa)) {
        free(d);
        return sb_fail(err, SB_EINVAL,
                       "parameter numa=%d: this machine has "
                       "no NUMA node %d",
                       numa, numa);
    }
    *out = d;
    return 0;
}

static void host_close(sb_dev *d)
{
    if (!d)
        return;
    free(d);
}

static void host_describe(sb_dev *d, char *buf, size_t len)
{
    if (d->numa >= 0)
        snprintf(buf, len,
                 "host backend: the device is a host buffer bound "
                 "to NUMA node %d; copies are memcpy, one thread per stream",
                 d->numa);
    else
        snprintf(buf, len,
                 "host backend: the device is a second host buffer "
                 "(first-touch placement); copies are memcpy, one thread per "
                 "stream");
}

static void *host_dev_alloc(sb_dev *d, size_t bytes, sb_err *err)
{
    size_t total = bytes + HDR;
    char *base;
    if (d->numa >= 0) {
        hwloc_obj_t node =
            hwloc_get_numanode_obj_by_os_index(d->topo, (unsigned)d->numa);
        base = hwloc_alloc_membind(d->topo, total, node->nodeset,
                                   HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
    } else {
        base = sb_alloc_aligned(total);
    }
    if (!base) {
        sb_fail(err, SB_ENOMEM, "cannot allocate %zu bytes of device memory",
                bytes);
        return NULL;
    }
    memcpy(base, &total, sizeof total);
    memset(base + HDR, 0x5a, bytes); /* fault the pages in before timing */
    return base + HDR;
}

static void host_dev_free(sb_dev *d, void *p)
{
    if (!p)
        return;
    char *base = (char *)p - HDR;
    size_t total;
    memcpy(&total, base, sizeof total);
    if (d->numa >= 0)
        hwloc_free(d->topo, base, total);
    else
        sb_free_aligned(base);
}

static void *host_host_alloc(sb_dev *d, size_t bytes, sb_host_kind kind,
                             sb_err *err)
{
    if (kind == SB_HOST_WC) {
        sb_fail(err, SB_EUNSUP,
                "write-combined host memory needs an "
                "accelerator driver (cudaHostAllocWriteCombined)");
        return NULL;
    }
    void *p = sb_alloc_aligned(bytes);
    if (!p) {
        sb_fail(err, SB_ENOMEM, "cannot allocate %zu bytes of host memory",
                bytes);
        return NULL;
    }
    memset(p, 0x33, bytes);
    if (kind == SB_HOST_PINNED && mlock(p, bytes) != 0) {
        sb_free_aligned(p);
        sb_fail(err, SB_EUNSUP,
                "cannot page-lock %zu bytes (mlock; raise "
                "RLIMIT_MEMLOCK or run as root)",
                bytes);
        return NULL;
    }
    return p;
}

static void host_host_free(sb_dev *d, void *p, size_t bytes, sb_host_kind kind)
{
    if (!p)
        return;
    if (kind == SB_HOST_PINNED)
        munlock(p, bytes);
    sb_free_aligned(p);
}

static int host_copy(sb_dev *d, void *dst, const void *src, size_t bytes,
                     sb_dir dir, sb_err *err)
{
    memcpy(dst, src, bytes);
    return 0;
}

static void run_job(const sb_copy_job *j, double *seconds)
{
    double t0 = sb_now();
    for (int r = 0; r < j->reps; r++) {
        memcpy(j->dst, j->src, j->bytes);
        SB_KEEP(j->dst);
    }
    *seconds = sb_now() - t0;
}

static int host_timed_copies(sb_dev *d, const sb_copy_job *jobs, int njobs,
                             double *seconds, sb_err *err)
{
    if (njobs == 1) {
        run_job(&jobs[0], &seconds[0]);
        return 0;
    }
    /* One thread per stream, started together. */
#pragma omp parallel num_threads(njobs)
    {
        int t = omp_get_thread_num();
#pragma omp barrier
        if (t < njobs)
            run_job(&jobs[t], &seconds[t]);
    }
    return 0;
}

const sb_dev_ops sb_dev_host_ops = {
    .name = "host",
    .open = host_open,
    .close = host_close,
    .describe = host_describe,
    .dev_alloc = host_dev_alloc,
    .dev_free = host_dev_free,
    .host_alloc = host_host_alloc,
    .host_free = host_host_free,
    .copy = host_copy,
    .timed_copies = host_timed_copies,
};
