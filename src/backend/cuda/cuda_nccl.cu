/*
 * cuda_nccl.cu — the network area over NCCL across the GPUs of one node:
 * all-reduce, all-gather, reduce-scatter, all-to-all (grouped send/recv)
 * and broadcast, one process driving every GPU (ncclCommInitAll).
 *
 * Bytes S of each operation as nccl-tests defines them (netmodel.h):
 * algbw = S / t, busbw = algbw x factor (2(n-1)/n all-reduce; (n-1)/n
 * all-gather, reduce-scatter, all-to-all; 1 broadcast). A sample is a
 * batch of operations between CUDA events on every GPU's stream; the
 * batch's time is the slowest GPU's, divided by the batch size. Inputs are
 * small integers (exact in float sums); after timing, one more operation
 * on poisoned outputs is checked element by element on every GPU.
 *
 * Only built when NCCL is found (SB_HAVE_NCCL).
 */
#ifdef SB_HAVE_NCCL

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "backend/cuda/cuda_common.h"
#include "backend/cuda/cuda_kernels.h"

extern "C" {
#include "solbench/netmodel.h"
#include "solbench/timer.h"
}

#define MAXDEV 16

typedef struct cnccl_state {
    sb_cuda_base base; /* device 0; its fields name the device */
    int op, n;
    bool comms_up;
    ncclComm_t comm[MAXDEV];
    cudaStream_t st[MAXDEV];
    cudaEvent_t e0[MAXDEV], e1[MAXDEV];
    float *send[MAXDEV], *recv[MAXDEV];
    size_t count, scount, rcount; /* op count; send and recv elements */
    double S;                     /* nccl-tests bytes */
    int iters;
} cnccl_state;

static int nccl_fail(sb_err *err, ncclResult_t r, const char *what)
{
    return sb_fail(err, SB_EIO, "%s: %s", what, ncclGetErrorString(r));
}

/* Rank r's input element i. */
static float input(int r, size_t i)
{
    return (float)((int)(i % 13) - 6 + r);
}

/* Issues one operation on every GPU (one NCCL group). */
static int issue(cnccl_state *s, sb_err *err)
{
    ncclResult_t r = ncclGroupStart();
    size_t cnt = s->count / (size_t)s->n;
    for (int d = 0; d < s->n && r == ncclSuccess; d++) {
        switch (s->op) {
        case SB_NET_ALLREDUCE:
            r = ncclAllReduce(s->send[d], s->recv[d], s->count, ncclFloat,
                              ncclSum, s->comm[d], s->st[d]);
            break;
        case SB_NET_ALLGATHER:
            r = ncclAllGather(s->send[d], s->recv[d], cnt, ncclFloat,
                              s->comm[d], s->st[d]);
            break;
        case SB_NET_REDUCE_SCATTER:
            r = ncclReduceScatter(s->send[d], s->recv[d], cnt, ncclFloat,
                                  ncclSum, s->comm[d], s->st[d]);
            break;
        case SB_NET_ALLTOALL:
            for (int q = 0; q < s->n && r == ncclSuccess; q++) {
                r = ncclSend(s->send[d] + (size_t)q * cnt, cnt, ncclFloat, q,
                             s->comm[d], s->st[d]);
                if (r == ncclSuccess)
                    r = ncclRecv(s->recv[d] + (size_t)q * cnt, cnt, ncclFloat,
                                 q, s->comm[d], s->st[d]);
            }
            break;
        default: /* broadcast from rank 0 */
            r = ncclBroadcast(s->send[d], s->recv[d], s->count, ncclFloat, 0,
                              s->comm[d], s->st[d]);
        }
    }
    ncclResult_t r2 = ncclGroupEnd();
    if (r != ncclSuccess)
        return nccl_fail(err, r, "NCCL operation");
    if (r2 != ncclSuccess)
        return nccl_fail(err, r2, "ncclGroupEnd");
    return 0;
}

extern "C" void sb_cnccl_teardown(void *state)
{
    cnccl_state *s = (cnccl_state *)state;
    if (!s)
        return;
    for (int d = 0; d < s->n; d++) {
        cudaSetDevice(d);
        if (s->comms_up && s->comm[d])
            ncclCommDestroy(s->comm[d]);
        cudaFree(s->send[d]);
        cudaFree(s->recv[d]);
        if (s->e0[d])
            cudaEventDestroy(s->e0[d]);
        if (s->e1[d])
            cudaEventDestroy(s->e1[d]);
        if (s->st[d])
            cudaStreamDestroy(s->st[d]);
    }
    cudaSetDevice(0);
    free(s);
}

extern "C" int sb_cnccl_setup(int op, const sb_params *p, void **state,
                              sb_err *err)
{
    int ndev = 0;
    int rc = sb_cuda_count(&ndev, err);
    if (rc) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return sb_fail(err, rc,
                       "%.400s: collectives need two or more CUDA "
                       "devices (found 0)",
                       why);
    }
    int want = (int)sb_p_int(p, "gpus");
    if (want > 0 && want < ndev)
        ndev = want;
    if (ndev > MAXDEV)
        ndev = MAXDEV;
    if (ndev < 2)
        return sb_fail(err, SB_EUNSUP,
                       "collectives need two or more CUDA "
                       "devices (found %d)",
                       ndev);
    cnccl_state *s = (cnccl_state *)calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->op = op;
    s->n = ndev;
    s->base.plant_error = sb_p_bool(p, "plant_error");
    s->base.device = 0;
    {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
            snprintf(s->base.devname, sizeof s->base.devname, "%s", prop.name);
            s->base.cc = prop.major * 10 + prop.minor;
            s->base.sms = prop.multiProcessorCount;
            s->base.l2_bytes = prop.l2CacheSize;
        }
    }
    s->count = sb_net_count((sb_netop)op, sb_p_num(p, "size"), 4, ndev);
    s->S = sb_net_bytes((sb_netop)op, s->count, 4, 1);
    size_t cnt = s->count / (size_t)ndev;
    s->scount = op == SB_NET_ALLGATHER ? cnt : s->count;
    s->rcount = op == SB_NET_REDUCE_SCATTER ? cnt : s->count;
    {
        int devs[MAXDEV];
        for (int d = 0; d < ndev; d++)
            devs[d] = d;
        ncclResult_t nr = ncclCommInitAll(s->comm, ndev, devs);
        if (nr != ncclSuccess) {
            rc = nccl_fail(err, nr, "ncclCommInitAll");
            goto fail;
        }
        s->comms_up = true;
    }
    {
        float *h = (float *)malloc(s->scount * sizeof(float));
        if (!h) {
            rc = sb_fail(err, SB_ENOMEM, "out of memory");
            goto fail;
        }
        for (int d = 0; d < ndev; d++) {
            cudaError_t e;
            for (size_t i = 0; i < s->scount; i++)
                h[i] = input(d, i);
            if ((e = cudaSetDevice(d)) ||
                (e = cudaStreamCreateWithFlags(&s->st[d],
                                               cudaStreamNonBlocking)) ||
                (e = cudaEventCreate(&s->e0[d])) ||
                (e = cudaEventCreate(&s->e1[d])) ||
                (e = cudaMalloc((void **)&s->send[d], s->scount * 4)) ||
                (e = cudaMalloc((void **)&s->recv[d], s->rcount * 4)) ||
                (e = cudaMemcpy(s->send[d], h, s->scount * 4,
                                cudaMemcpyHostToDevice)) ||
                (e = cudaMemset(s->recv[d], 0x3f, s->rcount * 4))) {
                free(h);
                rc = sb_cuda_fail(err, e, "preparing the NCCL buffers");
                goto fail;
            }
        }
        free(h);
    }
    /* Pageable uploads return once staged: wait for them on every GPU. */
    for (int d = 0; d < ndev; d++) {
        if ((rc = sb_cuda_fail(err, cudaSetDevice(d), "cudaSetDevice")) ||
            (rc = sb_cuda_uploads_done(err)))
            goto fail;
    }
    cudaSetDevice(0);
    *state = s;
    return 0;
fail:
    sb_cnccl_teardown(s);
    return rc;
}

/* One batch of `iters` operations; *t = the slowest GPU's seconds. */
static int batch(cnccl_state *s, int iters, double *t, sb_err *err)
{
    cudaError_t e;
    for (int d = 0; d < s->n; d++)
        if ((e = cudaSetDevice(d)) || (e = cudaEventRecord(s->e0[d], s->st[d])))
            return sb_cuda_fail(err, e, "cudaEventRecord");
    for (int it = 0; it < iters; it++) {
        int rc = issue(s, err);
        if (rc)
            return rc;
    }
    double worst = 0;
    for (int d = 0; d < s->n; d++)
        if ((e = cudaSetDevice(d)) || (e = cudaEventRecord(s->e1[d], s->st[d])))
            return sb_cuda_fail(err, e, "cudaEventRecord");
    for (int d = 0; d < s->n; d++) {
        float ms = 0;
        if ((e = cudaEventSynchronize(s->e1[d])) ||
            (e = cudaEventElapsedTime(&ms, s->e0[d], s->e1[d])))
            return sb_cuda_fail(err, e, "timing the collectives");
        if (ms * 1e-3 > worst)
            worst = ms * 1e-3;
    }
    *t = worst;
    return 0;
}

/* Batches of at most 50 operations (many samples, each >> the events'
 * resolution), at least as many as sb_net_auto_iters asks for this size;
 * the warm-up about its count of operations. */
static int cnccl_plan(void *state, const sb_ctx *ctx, sb_sampling *sp,
                      sb_err *err)
{
    (void)err;
    cnccl_state *s = (cnccl_state *)state;
    int iters = 0, warm = 0;
    sb_net_auto_iters(s->S, ctx->min_time, &iters, &warm);
    int per = iters < 50 ? iters : 50;
    if (per < 1)
        per = 1;
    s->iters = per;
    sp->inner = (uint64_t)per;
    sp->samples = (iters + per - 1) / per;
    sp->warmup = warm > per ? (warm + per - 1) / per : 1;
    return 0;
}

/* The slowest GPU's event time of the batch. */
static int cnccl_sample(void *state, int idx, uint64_t iters, double *secs,
                        sb_err *err)
{
    (void)idx;
    return batch((cnccl_state *)state, (int)iters, secs, err);
}

extern "C" const sb_timer sb_cnccl_timer = {0,    0,   cnccl_plan, cnccl_sample,
                                            NULL, NULL};

/* Expected element i of rank r's output. */
static float expect(const cnccl_state *s, int r, size_t i)
{
    int n = s->n;
    size_t cnt = s->count / (size_t)n;
    switch (s->op) {
    case SB_NET_ALLREDUCE:
        return (float)(n * ((int)(i % 13) - 6) + n * (n - 1) / 2);
    case SB_NET_ALLGATHER:
        return input((int)(i / cnt), i % cnt);
    case SB_NET_REDUCE_SCATTER: {
        size_t g = (size_t)r * cnt + i;
        return (float)(n * ((int)(g % 13) - 6) + n * (n - 1) / 2);
    }
    case SB_NET_ALLTOALL: /* from rank q = i / cnt, its chunk r */
        return input((int)(i / cnt), (size_t)r * cnt + i % cnt);
    default:
        return input(0, i);
    }
}

extern "C" int sb_cnccl_verify(void *state, sb_result *r)
{
    cnccl_state *s = (cnccl_state *)state;
    sb_err err = {};
    cudaError_t e;
    int rc = 0;
    size_t wrong = 0;
    float *h = (float *)malloc(s->rcount * sizeof(float));
    if (!h)
        return SB_ENOMEM;
    for (int d = 0; d < s->n; d++)
        if ((e = cudaSetDevice(d)) ||
            (e = cudaMemsetAsync(s->recv[d], 0xff, s->rcount * 4, s->st[d]))) {
            rc = sb_cuda_fail(&err, e, "poisoning the outputs");
            goto out;
        }
    if ((rc = issue(s, &err)))
        goto out;
    for (int d = 0; d < s->n; d++)
        if ((e = cudaSetDevice(d)) || (e = cudaStreamSynchronize(s->st[d]))) {
            rc = sb_cuda_fail(&err, e, "the verified operation");
            goto out;
        }
    if (s->base.plant_error) {
        float bad = 12345.0f;
        if ((e = cudaSetDevice(0)) ||
            (e = cudaMemcpy(s->recv[0], &bad, 4, cudaMemcpyHostToDevice))) {
            rc = sb_cuda_fail(&err, e, "planting an error");
            goto out;
        }
    }
    for (int d = 0; d < s->n; d++) {
        if ((e = cudaSetDevice(d)) ||
            (e = cudaMemcpy(h, s->recv[d], s->rcount * 4,
                            cudaMemcpyDeviceToHost))) {
            rc = sb_cuda_fail(&err, e, "reading the outputs back");
            goto out;
        }
        for (size_t i = 0; i < s->rcount; i++)
            if (h[i] != expect(s, d, i)) {
                if (!wrong)
                    sb_result_note(r,
                                   "verification: GPU %d element %zu is %g, "
                                   "expected %g",
                                   d, i, h[i], expect(s, d, i));
                wrong++;
            }
    }
    r->valid = wrong == 0;
    sb_result_metric(r, "wrong", (double)wrong, "elements");
    if (!wrong)
        sb_result_note(r, "verified every output element on %d GPUs", s->n);
out:
    cudaSetDevice(0);
    free(h);
    if (rc)
        sb_result_note(r, "%s", err.msg);
    return rc;
}

extern "C" void sb_cnccl_report(void *state, const sb_params *p, sb_ctx *ctx,
                                sb_result *r)
{
    cnccl_state *s = (cnccl_state *)state;
    (void)p;
    (void)ctx;
    sb_net_report_rates(r, (sb_netop)s->op, s->n, s->S);
    int v = 0;
    ncclGetVersion(&v);
    sb_result_note(r,
                   "NCCL %d over %d GPUs of one process (ncclCommInitAll, "
                   "%s first); batches of %d operations timed with CUDA "
                   "events, the slowest GPU's time",
                   v, s->n, s->base.devname, s->iters);
}

#endif /* SB_HAVE_NCCL */
