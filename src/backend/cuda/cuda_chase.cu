/*
 * cuda_chase.cu — pointer chasing on the GPU (solbench/chase.h): memory.latency
 * through device memory, and transfer.latency through mapped page-locked
 * host memory (nvbandwidth's host_device_latency_sm). One thread of one
 * block follows the chain; a launch is `hops` hops (below), so the timer
 * divides a sample by launches x hops.
 *
 * Device memory is read with plain loads: a small working set shows L1,
 * a larger one L2, past a few times L2 the figure is HBM's (TLB misses
 * included at pattern=random; pattern=page groups 4 KiB, far smaller
 * than the GPU's own pages). Host memory is read with __ldcv
 * (ld.global.cv: fetched again at every load, neither L1 nor L2 answers),
 * so every hop crosses the link to the host and back, whatever the
 * working set.
 *
 * Verification puts the chase back at its start, runs one launch, and
 * compares where it stands with the visiting order; plant_error first
 * makes one slot of that launch's path skip a slot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "backend/cuda/cuda_common.h"
#include "backend/cuda/cuda_kernels.h"

extern "C" {
#include "solbench/chase.h"
#include "solbench/device.h"
#include "solbench/util.h"
}

/* Hops a launch: 1024 through host memory; through device memory enough
 * to go round a small chain 16 times, so the L1, which a launch starts
 * cold, is warm for all but the first round (at most 65536). */
#define HOPS_MIN 1024
#define HOPS_MAX 65536

typedef unsigned long long u64;

typedef struct cchase_state {
    sb_cuda_base base;
    bool host; /* the chain is in mapped host memory */
    sb_chase chain;
    size_t bytes;
    void *buf;     /* device memory, or the host buffer (host) */
    void *staging; /* device memory: the chain built here, then copied */
    u64 *d_cur;    /* where the chase stands, on the device */
    int hops;      /* hops a launch */
    const sb_dev_ops *ops; /* host memory through the device interface */
    sb_dev *dev;
    char where[512];
} cchase_state;

template <bool HOST> __global__ void k_chase(u64 *cur, int hops)
{
    u64 p = *cur;
    for (int i = 0; i < hops; i++)
        p = HOST ? __ldcv((const u64 *)p) : *(const u64 *)p;
    *cur = p;
}

static int chase_enqueue(void *state, int iters, sb_err *err)
{
    cchase_state *s = (cchase_state *)state;
    for (int i = 0; i < iters; i++) {
        if (s->host)
            k_chase<true><<<1, 1, 0, s->base.stream>>>(s->d_cur, s->hops);
        else
            k_chase<false><<<1, 1, 0, s->base.stream>>>(s->d_cur, s->hops);
    }
    return sb_cuda_fail(err, cudaGetLastError(), "k_chase launch");
}

extern "C" void sb_cchase_teardown(void *state)
{
    cchase_state *s = (cchase_state *)state;
    if (!s)
        return;
    sb_chase_free(&s->chain);
    if (s->d_cur)
        cudaFree(s->d_cur);
    if (s->host) {
        if (s->buf)
            s->ops->host_free(s->dev, s->buf, s->bytes, SB_HOST_PINNED);
    } else if (s->buf) {
        cudaFree(s->buf);
    }
    free(s->staging);
    if (s->dev)
        s->ops->close(s->dev);
    sb_cuda_base_free(&s->base);
    free(s);
}

/* Puts the chase at its start. */
static int chase_restart(cchase_state *s, sb_err *err)
{
    u64 start = sb_chase_expect(&s->chain, 0);
    return sb_cuda_put(&s->base, s->d_cur, &start, sizeof start, err,
                       "the chase's start");
}

extern "C" int sb_cchase_setup(bool host, const sb_chase_shape *sh,
                               const sb_params *p, void **state, sb_err *err)
{
    cchase_state *s = (cchase_state *)calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->host = host;
    s->bytes = sh->bytes;
    s->base.plant_error = sb_p_bool(p, "plant_error");
    s->hops = HOPS_MIN;
    if (!host && sh->nodes * 16 > HOPS_MIN)
        s->hops = sh->nodes * 16 < HOPS_MAX ? (int)(sh->nodes * 16) : HOPS_MAX;
    s->base.passes = s->hops;
    int device = (int)sb_p_int(p, "device");
    int rc = sb_cuda_base_init(&s->base, device, chase_enqueue, true, err);
    if (rc)
        goto fail;
    cudaError_t e;
    if ((e = cudaMalloc(&s->d_cur, sizeof(u64)))) {
        rc = sb_cuda_fail(err, e, "cudaMalloc");
        goto fail;
    }
    if (host) {
        /* page-locked and mapped, on the GPU's NUMA node where known */
        s->ops = &sb_dev_cuda_ops;
        if ((rc = s->ops->open(device, -1, &s->dev, err)))
            goto fail;
        s->ops->describe(s->dev, s->where, sizeof s->where);
        s->buf = s->ops->host_alloc(s->dev, sh->bytes, SB_HOST_PINNED, err);
        if (!s->buf) {
            rc = err->code ? err->code : SB_ENOMEM;
            goto fail;
        }
        void *dp = NULL;
        if ((e = cudaHostGetDevicePointer(&dp, s->buf, 0))) {
            rc = sb_cuda_fail(err, e, "cudaHostGetDevicePointer");
            goto fail;
        }
        rc = sb_chase_build(s->buf, sh->bytes, sh->stride, sh->pattern,
                            (uint64_t)(uintptr_t)dp, SB_CHASE_SEED, &s->chain,
                            err);
        if (rc)
            goto fail;
    } else {
        if ((e = cudaMalloc(&s->buf, sh->bytes))) {
            rc = sb_cuda_fail(err, e, "cudaMalloc");
            goto fail;
        }
        s->staging = calloc(1, sh->bytes);
        if (!s->staging) {
            rc =
                sb_fail(err, SB_ENOMEM, "out of memory (%zu bytes)", sh->bytes);
            goto fail;
        }
        rc = sb_chase_build(s->staging, sh->bytes, sh->stride, sh->pattern,
                            (uint64_t)(uintptr_t)s->buf, SB_CHASE_SEED,
                            &s->chain, err);
        if (rc || (rc = sb_cuda_put(&s->base, s->buf, s->staging, sh->bytes,
                                    err, "the chain")))
            goto fail;
        free(s->staging);
        s->staging = NULL;
    }
    if ((rc = chase_restart(s, err)))
        goto fail;
    *state = s;
    return 0;
fail:
    sb_cchase_teardown(s);
    return rc;
}

extern "C" int sb_cchase_verify(void *state, sb_result *r)
{
    cchase_state *s = (cchase_state *)state;
    sb_err err = {0};
    u64 got = 0, want = sb_chase_expect(&s->chain, (uint64_t)s->hops);
    cudaError_t e;
    int rc = chase_restart(s, &err);
    if (rc)
        goto fail;
    if (s->base.plant_error) {
        /* the slot 5 hops in now leads 2 slots on: the chase skips one */
        size_t at =
            (size_t)s->chain.order[5 % s->chain.nodes] * s->chain.stride;
        u64 wrong = sb_chase_expect(&s->chain, 7);
        if (s->host)
            memcpy((char *)s->buf + at, &wrong, sizeof wrong);
        else if ((rc = sb_cuda_put(&s->base, (char *)s->buf + at, &wrong,
                                   sizeof wrong, &err, "plant_error")))
            goto fail;
    }
    if ((rc = chase_enqueue(s, 1, &err)) ||
        (rc = sb_cuda_sync(&s->base, &err, "k_chase")))
        goto fail;
    e = cudaMemcpy(&got, s->d_cur, sizeof got, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        rc = sb_cuda_fail(&err, e, "reading the chase back");
        goto fail;
    }
    r->valid = got == want;
    if (!r->valid)
        sb_result_note(
            r,
            "after %d hops the chase stands at slot %lld, not at "
            "slot %llu of the visiting order",
            s->hops, (long long)((got - s->chain.base) / s->chain.stride),
            (unsigned long long)((want - s->chain.base) / s->chain.stride));
    return 0;
fail:
    /* the runner says only that verification could not run: say why */
    sb_result_note(r, "%s", err.msg);
    return rc;
}

extern "C" void sb_cchase_report(void *state, sb_result *r)
{
    cchase_state *s = (cchase_state *)state;
    sb_chase_report_latency(r, false);
    sb_cuda_note(&s->base, r);
    char a[32], b[32];
    sb_fmt_size((double)s->bytes, a, sizeof a);
    if (s->host) {
        sb_result_note(r, "%s", s->where);
        sb_result_note(r,
                       "one GPU thread chases %zu slots %zu B apart in mapped "
                       "page-locked host memory (%s) with ld.global.cv loads, "
                       "%d hops a launch: every hop a round trip over the "
                       "link",
                       s->chain.nodes, s->chain.stride, a, s->hops);
        return;
    }
    sb_fmt_size(s->base.l2_bytes, b, sizeof b);
    sb_result_note(r,
                   "one GPU thread chases %zu slots %zu B apart in device "
                   "memory, %d hops a launch; working set %s against L2 %s: "
                   "%s",
                   s->chain.nodes, s->chain.stride, s->hops, a, b,
                   (double)s->bytes >= 4 * s->base.l2_bytes ? "an HBM figure"
                   : (double)s->bytes <= s->base.l2_bytes ? "an L1 or L2 figure"
                                                          : "partly cached");
}
