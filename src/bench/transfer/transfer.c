/*
 * transfer.c — the Host-transfer area: transfer.h2d, transfer.d2h and
 * transfer.bidir (both directions at once, on two streams, each direction
 * reported), against the device interface (device.h).
 *
 * Timing follows nvbandwidth: a sample is one batch of `reps` copies queued
 * back to back on a stream and timed around the whole batch (CUDA events on
 * the cuda backend, the monotonic clock on the host backend), so launch
 * overhead is spread over the batch. Validation copies the data back and
 * compares every byte with the pattern that was sent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/transfer/transfer.h"
#include "solbench/runner.h"
#include "solbench/timer.h"
#include "solbench/util.h"

static const sb_param_def xfer_params[] = {
    {"size", SB_P_SIZE, "64MiB", 1, 64.0 * 1073741824.0, NULL,
     "bytes per copy"},
    {"host", SB_P_STR, "pageable,pinned", 0, 0, "pageable|pinned|wc",
     "host memory: pageable, pinned (page-locked) or write-combined"},
    {"device", SB_P_INT, "0", 0, 1024, NULL, "device index"},
    {"numa", SB_P_INT, "-1", -1, 4096, NULL,
     "host backend: NUMA node of the device buffer (-1: first touch)"},
    {"engine", SB_P_STR, "ce", 0, 0, "ce|sm",
     "cuda: the copy engines (cudaMemcpyAsync), or an SM kernel reading or "
     "writing mapped host memory (pinned or wc only; nvbandwidth's two "
     "methods)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static sb_host_kind kind_of(const char *s)
{
    if (strcmp(s, "pinned") == 0)
        return SB_HOST_PINNED;
    if (strcmp(s, "wc") == 0)
        return SB_HOST_WC;
    return SB_HOST_PAGEABLE;
}

static void fill_pattern(uint64_t *p, size_t words, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < words; i++)
        p[i] = sb_rng_next(&s);
}

size_t sb_xfer_count_wrong(const void *got, size_t bytes, uint64_t seed)
{
    const uint64_t *g = got;
    uint64_t s = seed;
    size_t wrong = 0;
    for (size_t i = 0; i < bytes / 8; i++)
        wrong += g[i] != sb_rng_next(&s);
    /* A tail shorter than a word is compared byte by byte. */
    size_t tail = bytes % 8;
    if (tail) {
        uint64_t w = sb_rng_next(&s);
        const unsigned char *gb = (const unsigned char *)got + bytes - tail;
        for (size_t i = 0; i < tail; i++)
            wrong += gb[i] != (unsigned char)(w >> (8 * i));
    }
    return wrong;
}

static void fill_bytes(void *p, size_t bytes, uint64_t seed)
{
    fill_pattern(p, bytes / 8, seed);
    size_t tail = bytes % 8;
    if (tail) {
        uint64_t s = seed;
        uint64_t w = 0;
        for (size_t i = 0; i <= bytes / 8; i++)
            w = sb_rng_next(&s);
        unsigned char *pb = (unsigned char *)p + bytes - tail;
        for (size_t i = 0; i < tail; i++)
            pb[i] = (unsigned char)(w >> (8 * i));
    }
}

#define SEED_H2D 0x1234567ull
#define SEED_D2H 0x7654321ull

void sb_xfer_teardown(void *state)
{
    sb_xfer_state *s = state;
    if (!s)
        return;
    if (s->dev) {
        s->ops->host_free(s->dev, s->h_src, s->bytes, s->kind);
        s->ops->host_free(s->dev, s->h_dst, s->bytes, s->kind);
        free(s->h_check);
        s->ops->dev_free(s->dev, s->d_a);
        s->ops->dev_free(s->dev, s->d_b);
        s->ops->close(s->dev);
    }
    free(s->dir_samples[0]);
    free(s->dir_samples[1]);
    free(s);
}

int sb_xfer_setup_with(const sb_dev_ops *ops, sb_xfer_mode mode,
                       const sb_params *p, void **state, sb_err *err)
{
    sb_xfer_state *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->ops = ops;
    s->mode = mode;
    s->bytes = (size_t)sb_p_num(p, "size");
    s->kind = kind_of(sb_p_str(p, "host"));
    const sb_pval *eng = sb_p_find(p, "engine");
    s->sm = eng && strcmp(eng->text, "sm") == 0;
    if (s->sm && strcmp(ops->name, "cuda") != 0) {
        free(s);
        return sb_fail(err, SB_EUNSUP,
                       "engine=sm: SM-kernel copies need a CUDA device");
    }
    if (s->sm && s->kind == SB_HOST_PAGEABLE) {
        free(s);
        return sb_fail(err, SB_EUNSUP,
                       "engine=sm with host=pageable: an SM kernel reads "
                       "only mapped (pinned or wc) host memory");
    }
    int rc = ops->open((int)sb_p_int(p, "device"), (int)sb_p_int(p, "numa"),
                       &s->dev, err);
    if (rc) {
        free(s);
        return rc;
    }
    ops->describe(s->dev, s->where, sizeof s->where);
    bool need_h2d = mode != SB_XFER_D2H, need_d2h = mode != SB_XFER_H2D;
    if (need_h2d) {
        if (!(s->h_src = ops->host_alloc(s->dev, s->bytes, s->kind, err)) ||
            !(s->d_a = ops->dev_alloc(s->dev, s->bytes, err)))
            goto fail;
        fill_bytes(s->h_src, s->bytes, SEED_H2D);
    }
    if (need_d2h) {
        if (!(s->h_dst = ops->host_alloc(s->dev, s->bytes, s->kind, err)) ||
            !(s->d_b = ops->dev_alloc(s->dev, s->bytes, err)))
            goto fail;
        /* The device source of D2H holds a known pattern. */
        void *pat = malloc(s->bytes);
        if (!pat) {
            sb_fail(err, SB_ENOMEM, "out of memory");
            goto fail;
        }
        fill_bytes(pat, s->bytes, SEED_D2H);
        rc = ops->copy(s->dev, s->d_b, pat, s->bytes, SB_H2D, err);
        free(pat);
        if (rc)
            goto fail;
    }
    s->h_check = malloc(s->bytes);
    if (!s->h_check) {
        sb_fail(err, SB_ENOMEM, "out of memory");
        goto fail;
    }
    *state = s;
    return 0;
fail:
    rc = err->code ? err->code : SB_ENOMEM;
    sb_xfer_teardown(s);
    return rc;
}

/* The copy jobs of one sample. */
static int make_jobs(sb_xfer_state *s, int reps, sb_copy_job *jobs)
{
    int n = 0;
    bool held = s->kind != SB_HOST_PAGEABLE;
    if (s->mode != SB_XFER_D2H)
        jobs[n++] = (sb_copy_job){s->d_a, s->h_src, s->bytes, SB_H2D,
                                  reps,   held,     s->sm};
    if (s->mode != SB_XFER_H2D)
        jobs[n++] = (sb_copy_job){s->h_dst, s->d_b, s->bytes, SB_D2H,
                                  reps,     held,   s->sm};
    return n;
}

static int xfer_sample(void *state, int idx, uint64_t iters, double *secs,
                       sb_err *err)
{
    sb_xfer_state *s = state;
    sb_copy_job jobs[2];
    double t[2] = {0, 0};
    int reps = (int)iters;
    int n = make_jobs(s, reps, jobs);
    if (s->ops->timed_copies(s->dev, jobs, n, t, err))
        return err->code ? err->code : SB_EIO;
    /* A bidirectional sample is the pair's span: the slower stream. */
    *secs = n == 2 && t[1] > t[0] ? t[1] : t[0];
    for (int j = 0; idx >= 0 && j < n; j++) {
        int k = jobs[j].dir == SB_H2D ? 0 : 1;
        if (sb_dpush(&s->dir_samples[k], &s->n_dir[k], &s->cap_dir[k],
                     t[j] / reps))
            return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    return 0;
}

/* Batches of copies timed by the device's own clock (the host backend's
 * is the host's), each direction recorded apart; at most 256 copies a
 * batch, so a device that holds its stream while they are queued never
 * fills its queue (a full queue would make the host wait on the held
 * stream). */
const sb_timer sb_xfer_timer = {.max_iters = 256, .sample = xfer_sample};

int sb_xfer_verify(void *state, sb_result *r)
{
    sb_xfer_state *s = state;
    sb_err err = {0};
    size_t wrong = 0;
    if (s->mode != SB_XFER_D2H) {
        /* What the timed H2D copies left on the device. */
        if (s->ops->copy(s->dev, s->h_check, s->d_a, s->bytes, SB_D2H, &err))
            return err.code;
        size_t w = sb_xfer_count_wrong(s->h_check, s->bytes, SEED_H2D);
        if (w)
            sb_result_note(r, "h2d: %zu wrong words after the copy", w);
        wrong += w;
    }
    if (s->mode != SB_XFER_H2D) {
        size_t w = sb_xfer_count_wrong(s->h_dst, s->bytes, SEED_D2H);
        if (w)
            sb_result_note(r, "d2h: %zu wrong words after the copy", w);
        wrong += w;
    }
    sb_result_metric(r, "wrong", (double)wrong, "words");
    r->valid = wrong == 0;
    return 0;
}

void sb_xfer_report(void *state, const sb_point *pt, sb_ctx *ctx, sb_result *r)
{
    sb_xfer_state *s = state;
    static const char *names[2] = {"h2d", "d2h"};
    for (int d = 0; d < 2; d++) {
        if (s->n_dir[d] == 0)
            continue;
        sb_stats t;
        sb_stats_compute(s->dir_samples[d], s->n_dir[d], &t);
        const double med = t.p50, best = t.min;
        char m[32];
        snprintf(m, sizeof m, "%s_GBps", names[d]);
        sb_result_metric(r, m, s->bytes / med * 1e-9, "GB/s");
        snprintf(m, sizeof m, "%s_GBps_best", names[d]);
        sb_result_metric(r, m, s->bytes / best * 1e-9, "GB/s");
        if (strcmp(s->ops->name, "host") != 0) {
            char key[40];
            snprintf(key, sizeof key, "host.%s.%s", names[d],
                     sb_host_kind_name(s->kind));
            double prev = sb_ceil_get(&ctx->ceil, key);
            if (s->bytes / best > prev)
                sb_ceil_set(&ctx->ceil, key, s->bytes / best, "measured");
        }
    }
    sb_result_note(r, "%s", s->where);
    sb_result_note(r, "%s",
                   s->sm ? "copies by an SM kernel through mapped host memory"
                         : "copies by the copy engines");
}

double sb_xfer_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    const sb_params *p = pt->params;
    /* Two host buffers, two device buffers and a check buffer at most; on
     * the host backend the device buffers are host memory too. */
    return 5.0 * sb_p_num(p, "size");
}

/* One direction moves size bytes per iteration, bidir both. */
static double xfer_bytes(const sb_point *pt)
{
    double size = sb_p_num(pt->params, "size");
    return pt->bench->kind == SB_XFER_BIDIR ? 2.0 * size : size;
}

#define XFER_QUICK "size=1MiB,64MiB host=pageable,pinned"
#define XFER_FULL "size=4KiB..1GiB:x4 host=pageable,pinned,wc"

/* A NUMA node that does not exist is refused at planning, before any
 * point of the run is measured (setup would find it only when its turn
 * came). */
int sb_xfer_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const long long numa = sb_p_int(pt->params, "numa");
    if (numa >= 0 && !sb_numa_node_exists((int)numa))
        return sb_fail(err, SB_EINVAL,
                       "parameter numa=%lld: this machine "
                       "has no NUMA node %lld",
                       numa, numa);
    return 0;
}

/* The host backend: host-to-host memcpy through sb_dev_host_ops. */
static int host_setup(const sb_point *pt, const sb_ctx *ctx, void **st,
                      sb_err *e)
{
    (void)ctx;
    return sb_xfer_setup_with(&sb_dev_host_ops, (sb_xfer_mode)pt->bench->kind,
                              pt->params, st, e);
}

static const sb_impl xfer_host = {
    .backend = "host",
    .desc = "host backend: host-to-host memcpy",
    .setup = host_setup,
    .timer = &sb_xfer_timer,
    .verify = sb_xfer_verify,
    .report = sb_xfer_report,
    .teardown = sb_xfer_teardown,
};

#ifdef SB_HAVE_CUDA
/* The CUDA backend: the copy engine, timed with CUDA events. */
static int cuda_setup(const sb_point *pt, const sb_ctx *ctx, void **st,
                      sb_err *e)
{
    (void)ctx;
    return sb_xfer_setup_with(&sb_dev_cuda_ops, (sb_xfer_mode)pt->bench->kind,
                              pt->params, st, e);
}

static const sb_impl xfer_cuda = {
    .backend = "cuda",
    .desc = "over the copy engine (CUDA events)",
    .setup = cuda_setup,
    .timer = &sb_xfer_timer,
    .verify = sb_xfer_verify,
    .report = sb_xfer_report,
    .teardown = sb_xfer_teardown,
};
/* the copy engine's copies are the host's transfers through the CUDA
 * device ops: this area's own impl (a device backend's impls register
 * with their backend, core/backend.h) */
#define XFER_CUDA &xfer_cuda,
#else
#define XFER_CUDA
#endif

#define XFER_BENCH(sym, nm, MODE, dsc)                                         \
    const sb_bench sym = {                                                     \
        .name = nm,                                                            \
        .area = "transfer",                                                    \
        .desc = dsc,                                                           \
        .params = xfer_params,                                                 \
        .quick = XFER_QUICK,                                                   \
        .full = XFER_FULL,                                                     \
        .flags = SB_BF_QUICK | SB_BF_FULL,                                     \
        .kind = MODE,                                                          \
        .check = sb_xfer_check,                                                \
        .footprint = sb_xfer_footprint,                                        \
        .bytes = xfer_bytes,                                                   \
        .impls = (const sb_impl *const[]){&xfer_host, XFER_CUDA NULL},         \
    }

XFER_BENCH(sb_bench_transfer_h2d, "transfer.h2d", SB_XFER_H2D,
           "host to device copies");
XFER_BENCH(sb_bench_transfer_d2h, "transfer.d2h", SB_XFER_D2H,
           "device to host copies");
XFER_BENCH(sb_bench_transfer_bidir, "transfer.bidir", SB_XFER_BIDIR,
           "both directions at once on two streams, each direction reported");
