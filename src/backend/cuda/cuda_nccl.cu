/*
 * cuda_nccl.cu — the network area over NCCL across the GPUs of one node:
 * all-reduce, all-gather, reduce-scatter, all-to-all (grouped send/recv)
 * and broadcast, one process driving every GPU (ncclCommInitAll, the
 * communicators made once a process for a GPU count and kept across
 * sizes and collectives), out of place or in place (`inplace`).
 *
 * Bytes S of each operation as nccl-tests defines them (netmodel.h):
 * algbw = S / t, busbw = algbw x factor (2(n-1)/n all-reduce; (n-1)/n
 * all-gather, reduce-scatter, all-to-all; 1 broadcast). A sample is a
 * batch of operations between CUDA events on every GPU's stream, divided
 * by the batch size: the GPUs' average time is the sample (nccl-tests'
 * default across ranks, -a 1, one process per GPU), the slowest GPU's is
 * reported beside it (what nccl-tests times with -g N in one process). Inputs
 * are small integers (exact in float sums); after timing, one more operation on
 * fresh inputs and poisoned outputs is checked element by element on
 * every GPU.
 *
 * No wait can hang: the host polls the events while it checks every
 * communicator's asynchronous error, and past the run's `--timeout` (5
 * minutes without one), or on such an error, it aborts the communicators
 * and fails the point, naming the GPU (rank), the collective and the
 * size.
 *
 * Each collective is one row of nccl_ops (below), keyed by the
 * definition's sb_netop (netmodel.h, whose row gives its bytes, factor
 * and chunks): its call on one GPU, its expected output, and why it has
 * no in-place form, if so. A new collective here is its call, its
 * expected value and its row.
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
#include "backend/cuda/cuda_dl.h"
#include "backend/cuda/cuda_kernels.h"

#include <time.h>

extern "C" {
#include "solbench/netmodel.h"
#include "solbench/stats.h"
#include "solbench/timer.h"
#include "solbench/util.h"
}

#define MAXDEV 16

struct cnccl_op;

typedef struct cnccl_state {
    sb_cuda_base base; /* device 0; its fields name the device */
    int op, n;
    const struct cnccl_op *row; /* its row of nccl_ops */
    bool inplace;
    double timeout; /* seconds a wait may last before the abort */
    ncclComm_t comm[MAXDEV];
    cudaStream_t st[MAXDEV];
    cudaEvent_t e0[MAXDEV], e1[MAXDEV];
    float *buf[MAXDEV], *obuf[MAXDEV];  /* allocations: input, output */
    float *send[MAXDEV], *recv[MAXDEV]; /* what the operation is given */
    size_t count, scount, rcount;       /* op count; send and recv elements */
    double S;                           /* nccl-tests bytes */
    int iters;
    double *slowest; /* per sample: the slowest GPU's seconds an op */
    size_t n_slowest, cap_slowest;
    bool graph;                   /* batches replayed from CUDA graphs */
    cudaGraphExec_t exec[MAXDEV]; /* per GPU: graph_iters operations */
    int graph_iters;
} cnccl_state;

static void graphs_free(cnccl_state *s);

static int nccl_fail(sb_err *err, ncclResult_t r, const char *what)
{
    return sb_fail(err, SB_EIO, "%s: %s", what,
                   sb_cuda_dl.ncclGetErrorString(r));
}

/* ---- communicators, once a process ---------------------------------------
 * Made for the first point that needs n GPUs and kept for every later
 * size and collective (nccl-tests makes them once a run); made again only
 * for another GPU count, or after an abort. */

static ncclComm_t g_comm[MAXDEV];
static int g_ncomm; /* GPUs the kept communicators span; 0: none */

static void comms_drop(bool abort)
{
    /* on an abort the GPUs may still spin in NCCL kernels: only the
     * abort stops them, after which the device can be synchronised */
    for (int d = 0; d < g_ncomm; d++) {
        cudaSetDevice(d);
        if (g_comm[d])
            (abort ? sb_cuda_dl.ncclCommAbort
                   : sb_cuda_dl.ncclCommDestroy)(g_comm[d]);
        g_comm[d] = NULL;
    }
    g_ncomm = 0;
    cudaSetDevice(0);
}

/* Aborts the kept communicators after a failure (the other GPUs may
 * still spin in the collective) and forgets the state's copies. */
static void comms_abort(cnccl_state *s)
{
    comms_drop(true);
    memset(s->comm, 0, sizeof s->comm);
}

/* At exit, before the CUDA runtime's own teardown (registered earlier,
 * so run later): the kept communicators are destroyed. */
static void comms_at_exit(void)
{
    comms_drop(false);
}

static int comms_get(int n, ncclComm_t *out, sb_err *err)
{
    static bool registered;
    if (!registered) {
        atexit(comms_at_exit);
        registered = true;
    }
    if (g_ncomm != n) {
        comms_drop(false);
        int devs[MAXDEV];
        for (int d = 0; d < n; d++)
            devs[d] = d;
        ncclResult_t nr = sb_cuda_dl.ncclCommInitAll(g_comm, n, devs);
        if (nr != ncclSuccess) {
            memset(g_comm, 0, sizeof g_comm);
            return nccl_fail(err, nr, "ncclCommInitAll");
        }
        g_ncomm = n;
    }
    memcpy(out, g_comm, (size_t)n * sizeof *out);
    return 0;
}

/* Waits until every GPU has passed `ev` (NULL: its stream is idle),
 * polling rather than blocking, and checks each communicator's
 * asynchronous error as it waits. An error, or `timeout` seconds without
 * completion, aborts the communicators and fails with the GPU, the
 * collective and the size. */
static int wait_all(cnccl_state *s, cudaEvent_t *ev, const char *what,
                    sb_err *err)
{
    bool done[MAXDEV] = {};
    int left = s->n;
    double t0 = sb_now();
    const char *coll = sb_netop_name((sb_netop)s->op);
    for (;;) {
        for (int d = 0; d < s->n; d++) {
            if (done[d])
                continue;
            cudaError_t e = cudaSetDevice(d);
            if (!e)
                e = ev ? cudaEventQuery(ev[d]) : cudaStreamQuery(s->st[d]);
            if (e == cudaSuccess) {
                done[d] = true;
                left--;
            } else if (e != cudaErrorNotReady) {
                /* the other GPUs may be spinning in the collective */
                int rc = sb_cuda_fail(err, e, what);
                comms_abort(s);
                return rc;
            }
        }
        if (!left)
            return 0;
        for (int d = 0; d < s->n; d++) {
            ncclResult_t ae = ncclSuccess;
            if (sb_cuda_dl.ncclCommGetAsyncError(s->comm[d], &ae) ==
                    ncclSuccess &&
                ae != ncclSuccess && ae != ncclInProgress) {
                comms_abort(s);
                return sb_fail(err, SB_EIO,
                               "%s: NCCL %s of %.0f bytes: GPU %d (rank %d) "
                               "reported %s; communicators aborted",
                               what, coll, s->S, d, d,
                               sb_cuda_dl.ncclGetErrorString(ae));
            }
        }
        double waited = sb_now() - t0;
        if (waited > s->timeout) {
            int late = 0;
            while (late < s->n && done[late])
                late++;
            comms_abort(s);
            return sb_fail(err, SB_EIO,
                           "%s: NCCL %s of %.0f bytes: GPU %d (rank %d) not "
                           "done after %.0f s (timeout); communicators "
                           "aborted",
                           what, coll, s->S, late, late, waited);
        }
        struct timespec nap = {0, 20000}; /* 20 us */
        nanosleep(&nap, NULL);
    }
}

/* Rank r's input element i. */
static float input(int r, size_t i)
{
    return (float)((int)(i % 13) - 6 + r);
}

/* ---- the collectives ------------------------------------------------------
 * One GPU's part of each operation (issued for every GPU in one NCCL
 * group), and the value of element i of rank r's output after it. */

/* Elements of one rank's chunk. */
static size_t chunk(const cnccl_state *s)
{
    return s->count / (size_t)s->n;
}

static ncclResult_t nccl_allreduce(cnccl_state *s, int d)
{
    return sb_cuda_dl.ncclAllReduce(s->send[d], s->recv[d], s->count, ncclFloat,
                                    ncclSum, s->comm[d], s->st[d]);
}

static ncclResult_t nccl_allgather(cnccl_state *s, int d)
{
    return sb_cuda_dl.ncclAllGather(s->send[d], s->recv[d], chunk(s), ncclFloat,
                                    s->comm[d], s->st[d]);
}

static ncclResult_t nccl_reduce_scatter(cnccl_state *s, int d)
{
    return sb_cuda_dl.ncclReduceScatter(s->send[d], s->recv[d], chunk(s),
                                        ncclFloat, ncclSum, s->comm[d],
                                        s->st[d]);
}

/* grouped sends and receives: chunk q to and from rank q */
static ncclResult_t nccl_alltoall(cnccl_state *s, int d)
{
    size_t cnt = chunk(s);
    ncclResult_t r = ncclSuccess;
    for (int q = 0; q < s->n && r == ncclSuccess; q++) {
        r = sb_cuda_dl.ncclSend(s->send[d] + (size_t)q * cnt, cnt, ncclFloat, q,
                                s->comm[d], s->st[d]);
        if (r == ncclSuccess)
            r = sb_cuda_dl.ncclRecv(s->recv[d] + (size_t)q * cnt, cnt,
                                    ncclFloat, q, s->comm[d], s->st[d]);
    }
    return r;
}

/* broadcast from rank 0 */
static ncclResult_t nccl_bcast(cnccl_state *s, int d)
{
    return sb_cuda_dl.ncclBroadcast(s->send[d], s->recv[d], s->count, ncclFloat,
                                    0, s->comm[d], s->st[d]);
}

/* The sum over the n ranks of input element i. */
static float expect_sum(const cnccl_state *s, size_t i)
{
    int n = s->n;
    return (float)(n * ((int)(i % 13) - 6) + n * (n - 1) / 2);
}

static float expect_allreduce(const cnccl_state *s, int r, size_t i)
{
    (void)r;
    return expect_sum(s, i);
}

/* chunk i / cnt of the output is that rank's chunk */
static float expect_allgather(const cnccl_state *s, int r, size_t i)
{
    (void)r;
    size_t cnt = chunk(s);
    return input((int)(i / cnt), i % cnt);
}

/* rank r's chunk of the sum */
static float expect_reduce_scatter(const cnccl_state *s, int r, size_t i)
{
    return expect_sum(s, (size_t)r * chunk(s) + i);
}

/* from rank q = i / cnt, its chunk r */
static float expect_alltoall(const cnccl_state *s, int r, size_t i)
{
    size_t cnt = chunk(s);
    return input((int)(i / cnt), (size_t)r * cnt + i % cnt);
}

static float expect_bcast(const cnccl_state *s, int r, size_t i)
{
    (void)s, (void)r;
    return input(0, i);
}

/* ---- the table ----------------------------------------------------------- */

typedef struct cnccl_op {
    int op;                                      /* sb_netop */
    ncclResult_t (*call)(cnccl_state *s, int d); /* GPU d's part */
    float (*expect)(const cnccl_state *s, int r, size_t i);
    const char *no_inplace; /* why inplace=true is refused; NULL: allowed */
} cnccl_op;

static const cnccl_op nccl_ops[] = {
    {SB_NET_ALLREDUCE, nccl_allreduce, expect_allreduce, NULL},
    {SB_NET_ALLGATHER, nccl_allgather, expect_allgather, NULL},
    {SB_NET_REDUCE_SCATTER, nccl_reduce_scatter, expect_reduce_scatter, NULL},
    {SB_NET_ALLTOALL, nccl_alltoall, expect_alltoall,
     "the all-to-all is grouped sends and receives, which have no in-place "
     "form"},
    {SB_NET_BCAST, nccl_bcast, expect_bcast, NULL},
};

static const cnccl_op *nccl_op_row(int op)
{
    for (size_t i = 0; i < sizeof nccl_ops / sizeof nccl_ops[0]; i++)
        if (nccl_ops[i].op == op)
            return &nccl_ops[i];
    return NULL;
}

/* Issues one operation on every GPU (one NCCL group). */
static int issue(cnccl_state *s, sb_err *err)
{
    ncclResult_t r = sb_cuda_dl.ncclGroupStart();
    for (int d = 0; d < s->n && r == ncclSuccess; d++)
        r = s->row->call(s, d);
    ncclResult_t r2 = sb_cuda_dl.ncclGroupEnd();
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
    graphs_free(s);
    for (int d = 0; d < s->n; d++) {
        cudaSetDevice(d);
        /* the communicators are the process's, kept for the next point */
        cudaFree(s->buf[d]);
        cudaFree(s->obuf[d]);
        if (s->e0[d])
            cudaEventDestroy(s->e0[d]);
        if (s->e1[d])
            cudaEventDestroy(s->e1[d]);
        if (s->st[d])
            cudaStreamDestroy(s->st[d]);
    }
    cudaSetDevice(0);
    free(s->slowest);
    free(s);
}

/* Poisons every output and writes each GPU's input (its send buffer,
 * which in place lies inside the output), on the GPUs' streams, and
 * waits for them. */
static int load_inputs(cnccl_state *s, sb_err *err)
{
    float *h = (float *)malloc(s->scount * sizeof(float));
    if (!h)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int rc = 0;
    for (int d = 0; d < s->n && !rc; d++) {
        for (size_t i = 0; i < s->scount; i++)
            h[i] = input(d, i);
        cudaError_t e;
        if ((e = cudaSetDevice(d)) ||
            (e = cudaMemsetAsync(s->recv[d], 0xff, s->rcount * 4, s->st[d])) ||
            (e = cudaMemcpyAsync(s->send[d], h, s->scount * 4,
                                 cudaMemcpyHostToDevice, s->st[d])) ||
            (e = cudaStreamSynchronize(s->st[d])))
            rc = sb_cuda_fail(err, e, "writing the NCCL inputs");
    }
    free(h);
    return rc;
}

extern "C" int sb_cnccl_setup(int op, const sb_params *p, double timeout_s,
                              void **state, sb_err *err)
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
    if ((rc = sb_cuda_dl_load(SB_CUDA_DL_NCCL, err)))
        return rc;
    const sb_netop_def *def = sb_netop_row((sb_netop)op);
    const cnccl_op *row = nccl_op_row(op);
    if (!def || !row)
        return sb_fail(err, SB_EUNSUP, "network.%s: no NCCL call for it",
                       def ? def->name : "?");
    bool inplace = sb_p_bool(p, "inplace");
    if (inplace && row->no_inplace)
        return sb_fail(err, SB_EINVAL,
                       "network.%s: inplace=true: %s; use inplace=false",
                       def->name, row->no_inplace);
    cnccl_state *s = (cnccl_state *)calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->op = op;
    s->row = row;
    s->n = ndev;
    s->inplace = inplace;
    s->graph = sb_p_bool(p, "graph");
    s->timeout = timeout_s;
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
    s->scount = def->in_chunk ? cnt : s->count;
    s->rcount = def->out_chunk ? cnt : s->count;
    if ((rc = comms_get(ndev, s->comm, err)))
        goto fail;
    for (int d = 0; d < ndev; d++) {
        cudaError_t e;
        if ((e = cudaSetDevice(d)) ||
            (e = cudaStreamCreateWithFlags(&s->st[d], cudaStreamNonBlocking)) ||
            (e = cudaEventCreate(&s->e0[d])) ||
            (e = cudaEventCreate(&s->e1[d]))) {
            rc = sb_cuda_fail(err, e, "preparing the NCCL streams");
            goto fail;
        }
        /* In place, one buffer: the all-gather's input is its rank's
         * chunk of the output, the reduce-scatter's output its rank's
         * chunk of the input (nccl-tests' layout); otherwise two. */
        size_t in_n = s->inplace
                          ? (s->scount > s->rcount ? s->scount : s->rcount)
                          : s->scount;
        if ((e = cudaMalloc((void **)&s->buf[d], in_n * 4)) ||
            (!s->inplace &&
             (e = cudaMalloc((void **)&s->obuf[d], s->rcount * 4)))) {
            rc = sb_cuda_fail(err, e, "allocating the NCCL buffers");
            goto fail;
        }
        if (!s->inplace) {
            s->send[d] = s->buf[d];
            s->recv[d] = s->obuf[d];
        } else {
            s->send[d] = s->buf[d] + (def->in_chunk ? (size_t)d * cnt : 0);
            s->recv[d] = s->buf[d] + (def->out_chunk ? (size_t)d * cnt : 0);
        }
    }
    if ((rc = load_inputs(s, err)))
        goto fail;
    cudaSetDevice(0);
    *state = s;
    return 0;
fail:
    sb_cnccl_teardown(s);
    return rc;
}

static void graphs_free(cnccl_state *s)
{
    for (int d = 0; d < s->n; d++)
        if (s->exec[d]) {
            cudaSetDevice(d);
            cudaGraphExecDestroy(s->exec[d]);
            s->exec[d] = NULL;
        }
    s->graph_iters = 0;
    cudaSetDevice(0);
}

/* graph=true: captures `iters` operations on every GPU's stream into one
 * graph per GPU, as nccl-tests' -G does with several GPUs in one thread
 * (every stream in capture, the grouped calls issued, every capture
 * ended). Captured again when the count changes. */
static int graphs_make(cnccl_state *s, int iters, sb_err *err)
{
    if (s->graph_iters == iters)
        return 0;
    graphs_free(s);
    cudaError_t e = cudaSuccess;
    int began = 0;
    for (; began < s->n; began++)
        if ((e = cudaSetDevice(began)) ||
            (e = cudaStreamBeginCapture(s->st[began],
                                        cudaStreamCaptureModeRelaxed)))
            break;
    int rc = e ? sb_cuda_fail(err, e, "cudaStreamBeginCapture") : 0;
    for (int it = 0; !rc && it < iters; it++)
        rc = issue(s, err);
    for (int d = 0; d < began; d++) {
        cudaGraph_t g = NULL;
        cudaSetDevice(d);
        cudaError_t ee = cudaStreamEndCapture(s->st[d], &g);
        if (!ee && !rc)
            ee = cudaGraphInstantiate(&s->exec[d], g, 0);
        if (g)
            cudaGraphDestroy(g);
        if (ee && !rc)
            rc = sb_cuda_fail(err, ee, "capturing the collectives");
    }
    cudaSetDevice(0);
    if (rc) {
        graphs_free(s);
        return rc;
    }
    s->graph_iters = iters;
    return 0;
}

/* One batch of `iters` operations; *t = the GPUs' average seconds,
 * *worst the slowest GPU's. */
static int batch(cnccl_state *s, int iters, double *t, double *worst,
                 sb_err *err)
{
    cudaError_t e;
    if (s->graph) {
        int rc = graphs_make(s, iters, err);
        if (rc)
            return rc;
    }
    for (int d = 0; d < s->n; d++)
        if ((e = cudaSetDevice(d)) || (e = cudaEventRecord(s->e0[d], s->st[d])))
            return sb_cuda_fail(err, e, "cudaEventRecord");
    int rc = 0;
    for (int d = 0; s->graph && !rc && d < s->n; d++)
        if ((e = cudaSetDevice(d)) ||
            (e = cudaGraphLaunch(s->exec[d], s->st[d])))
            rc = sb_cuda_fail(err, e, "cudaGraphLaunch");
    for (int it = 0; !s->graph && !rc && it < iters; it++)
        rc = issue(s, err);
    for (int d = 0; !rc && d < s->n; d++)
        if ((e = cudaSetDevice(d)) || (e = cudaEventRecord(s->e1[d], s->st[d])))
            rc = sb_cuda_fail(err, e, "cudaEventRecord");
    if (rc) { /* what was issued may never complete */
        comms_abort(s);
        return rc;
    }
    rc = wait_all(s, s->e1, "timing the collectives", err);
    if (rc)
        return rc;
    double sum = 0, most = 0;
    for (int d = 0; d < s->n; d++) {
        float ms = 0;
        if ((e = cudaSetDevice(d)) ||
            (e = cudaEventElapsedTime(&ms, s->e0[d], s->e1[d])))
            return sb_cuda_fail(err, e, "timing the collectives");
        sum += ms * 1e-3;
        most = fmax(most, ms * 1e-3);
    }
    cudaSetDevice(0);
    *t = sum / s->n;
    *worst = most;
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

/* The GPUs' average event time of the batch; the slowest GPU's kept
 * for the report. */
static int cnccl_sample(void *state, int idx, uint64_t iters, double *secs,
                        sb_err *err)
{
    cnccl_state *s = (cnccl_state *)state;
    double worst = 0;
    int rc = batch(s, (int)iters, secs, &worst, err);
    if (rc || idx < 0)
        return rc;
    if (idx == 0)
        s->n_slowest = 0;
    if (sb_dpush(&s->slowest, &s->n_slowest, &s->cap_slowest,
                 worst / (double)iters))
        return sb_fail(err, SB_ENOMEM, "out of memory");
    return 0;
}

extern "C" const sb_timer sb_cnccl_timer = {0,    0,   cnccl_plan, cnccl_sample,
                                            NULL, NULL};

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
    /* fresh inputs (in place, the timed operations overwrote them) and
     * poisoned outputs */
    if ((rc = load_inputs(s, &err)) || (rc = issue(s, &err)) ||
        (rc = wait_all(s, NULL, "the verified operation", &err)))
        goto out;
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
            if (h[i] != s->row->expect(s, d, i)) {
                if (!wrong)
                    sb_result_note(r,
                                   "verification: GPU %d element %zu is %g, "
                                   "expected %g",
                                   d, i, h[i], s->row->expect(s, d, i));
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
    /* the slowest GPU's time beside the average the samples hold */
    sb_stats st = {};
    if (s->n_slowest)
        sb_stats_compute(s->slowest, s->n_slowest, &st);
    if (st.p50 > 0) {
        sb_result_metric(r, "time_slowest_us", st.p50 * 1e6, "us");
        sb_result_metric(r, "algbw_slowest_GBps",
                         sb_net_algbw(s->S, st.p50) * 1e-9, "GB/s");
        sb_result_metric(
            r, "busbw_slowest_GBps",
            sb_net_busbw((sb_netop)s->op, s->n, s->S, st.p50) * 1e-9, "GB/s");
    }
    int v = 0;
    sb_cuda_dl.ncclGetVersion(&v);
    sb_result_note(r,
                   "NCCL %d over %d GPUs of one process (ncclCommInitAll "
                   "once a process, %s first), %s; batches of %d "
                   "operations%s timed with CUDA events: the GPUs' average "
                   "time (nccl-tests' -a 1 across ranks), the slowest GPU's "
                   "(nccl-tests' -g N in one process) as "
                   "*_slowest; waits polled for NCCL's asynchronous errors "
                   "with a %.0f s timeout",
                   v, s->n, s->base.devname,
                   s->inplace ? "in place" : "out of place", s->iters,
                   s->graph ? " replayed from a CUDA graph per GPU" : "",
                   s->timeout);
}

#endif /* SB_HAVE_NCCL */
