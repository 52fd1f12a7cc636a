/*
 * pjrt_xfer.c — transfer.h2d and transfer.d2h on a PJRT device: a sample
 * is a batch of copies of `size` bytes, each one complete before the next
 * (h2d: PJRT_Client_BufferFromHostBuffer until the host data is released
 * and the buffer's ready event; d2h: PJRT_Buffer_ToHostBuffer until its
 * event), timed on the host clock. transfer.bidir issues one copy each
 * way and awaits both, so the two are in flight together; each direction's
 * time is taken when its event fires (an OnReady stamp, at most the
 * pair's end) from the pair's common start. The bytes arrive where they were
 * sent: the last h2d buffer is read back, the last d2h copy compared with what
 * was uploaded, word for word.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/bench.h"
#include "solbench/stats.h"
#include "solbench/timer.h"
#include "solbench/util.h"

enum { K_H2D, K_D2H, K_BIDIR };

/* The definition's host memory, narrowed to what a plugin takes. */
static const sb_param_def pxfer_params[] = {
    {"host", SB_P_STR, "pageable", 0, 0, "pageable",
     "host memory: pageable (the plugin takes host buffers as they are)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

typedef struct pxfer_state {
    sb_pjrt *p;
    int kind;
    size_t bytes, words;
    uint64_t *src, *dst; /* host: what is sent, what came back */
    sb_pjrt_buf *dev;    /* d2h: the source; h2d: the last copy */
    sb_pjrt_buf *dsrc;   /* bidir: the d2h source */
    double *dir[2];      /* bidir: seconds per copy of each sample, h2d, d2h */
    size_t ndir, capdir;
    sb_pjrt_stamp stamp[2]; /* bidir: when each copy landed (h2d, d2h); kept
                               here, not on the stack: a callback may write
                               after the wait */
} pxfer_state;

static int pxfer_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    if (sb_p_int(pt->params, "device") != 0)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: parameter device=%lld: the plugin's "
                       "first device only",
                       pt->bench->name,
                       (long long)sb_p_int(pt->params, "device"));
    if (sb_p_int(pt->params, "numa") != -1)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: parameter numa is the host backend's",
                       pt->bench->name);
    if (sb_p_num(pt->params, "size") < 8)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: parameter size=%s: at least 8 bytes",
                       pt->bench->name, sb_p_str(pt->params, "size"));
    return 0;
}

static void pxfer_teardown(void *state)
{
    pxfer_state *st = state;
    if (!st)
        return;
    sb_pjrt_stamp_settle(&st->stamp[0]);
    sb_pjrt_stamp_settle(&st->stamp[1]);
    if (st->p) {
        sb_pjrt_buf_free(st->p, st->dev);
        sb_pjrt_buf_free(st->p, st->dsrc);
    }
    free(st->dir[0]);
    free(st->dir[1]);
    free(st->src);
    free(st->dst);
    free(st);
}

static int pxfer_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    (void)ctx;
    sb_pjrt *p = NULL;
    int rc = sb_pjrt_open(&p, err);
    if (rc)
        return rc;
    pxfer_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    st->p = p;
    st->kind = pt->impl->kind;
    st->words = (size_t)(sb_p_num(pt->params, "size") / 8.0);
    st->bytes = st->words * 8;
    st->src = malloc(st->bytes);
    st->dst = malloc(st->bytes);
    if (!st->src || !st->dst) {
        pxfer_teardown(st);
        return sb_fail(err, SB_ENOMEM, "%s on pjrt: out of memory",
                       pt->bench->name);
    }
    uint64_t seed = 0x7866657200ULL + st->words;
    for (size_t i = 0; i < st->words; i++)
        st->src[i] = sb_rng_next(&seed);
    memset(st->dst, 0, st->bytes);
    if (st->kind != K_H2D) {
        /* bytes as 32-bit integers: any pattern survives the copy */
        const int64_t dims[1] = {(int64_t)(st->words * 2)};
        if ((rc = sb_pjrt_upload(p, st->src, SB_PJRT_S32, dims, 1,
                                 st->kind == K_D2H ? &st->dev : &st->dsrc,
                                 err))) {
            pxfer_teardown(st);
            return rc;
        }
    }
    *state = st;
    return 0;
}

static int pxfer_sample(void *state, int idx, uint64_t iters, double *secs,
                        sb_err *err)
{
    (void)idx;
    pxfer_state *st = state;
    const int64_t dims[1] = {(int64_t)(st->words * 2)};
    int rc = 0;
    double t0 = sb_now();
    for (uint64_t i = 0; i < iters && rc == 0; i++) {
        if (st->kind == K_D2H) {
            rc = sb_pjrt_download(st->p, st->dev, st->dst, st->bytes, err);
        } else {
            sb_pjrt_buf_free(st->p, st->dev);
            st->dev = NULL;
            rc = sb_pjrt_upload(st->p, st->src, SB_PJRT_S32, dims, 1, &st->dev,
                                err);
        }
    }
    *secs = sb_now() - t0;
    return rc;
}

/* bidir: an upload and a download issued together, then both awaited;
 * the sample is the pair's span, each direction's time its own event's. */
static int pxfer_bidir_sample(void *state, int idx, uint64_t iters,
                              double *secs, sb_err *err)
{
    pxfer_state *st = state;
    const int64_t dims[1] = {(int64_t)(st->words * 2)};
    double span = 0, dt[2] = {0, 0};
    int rc = 0;
    for (uint64_t i = 0; i < iters && rc == 0; i++) {
        sb_pjrt_pending w = {0};
        sb_pjrt_stamp *up = &st->stamp[0], *down = &st->stamp[1];
        sb_pjrt_buf_free(st->p, st->dev);
        st->dev = NULL;
        const double t0 = sb_now();
        if ((rc = sb_pjrt_upload_begin(st->p, 0, st->src, SB_PJRT_S32, dims, 1,
                                       &st->dev, &w, err)) ||
            (rc = sb_pjrt_stamp_last(st->p, &w, up, err)) ||
            (rc = sb_pjrt_download_begin(st->p, st->dsrc, st->dst, st->bytes,
                                         &w, err)) ||
            (rc = sb_pjrt_stamp_last(st->p, &w, down, err))) {
            sb_pjrt_wait(st->p, &w, NULL);
            break;
        }
        rc = sb_pjrt_wait(st->p, &w, err);
        const double t1 = sb_now(), tu = sb_pjrt_stamp_get(up),
                     td = sb_pjrt_stamp_get(down);
        span += t1 - t0;
        /* A callback can run after the awaiter woke (seen under ASan: the
         * d2h stamp later than t1 by a fifth of the pair): both copies had
         * landed by t1, so a stamp past it says when the callback ran,
         * not the copy. */
        dt[0] += (tu > 0 && tu < t1 ? tu : t1) - t0;
        dt[1] += (td > 0 && td < t1 ? td : t1) - t0;
    }
    *secs = span;
    if (rc == 0 && idx >= 0 && iters > 0) {
        if (st->ndir == st->capdir) {
            size_t cap = st->capdir ? 2 * st->capdir : 64;
            for (int d = 0; d < 2; d++) {
                double *n = realloc(st->dir[d], cap * sizeof *n);
                if (!n)
                    return sb_fail(err, SB_ENOMEM, "out of memory");
                st->dir[d] = n;
            }
            st->capdir = cap;
        }
        st->dir[0][st->ndir] = dt[0] / (double)iters;
        st->dir[1][st->ndir++] = dt[1] / (double)iters;
    }
    return rc;
}

static const sb_timer pxfer_timer = {.sample = pxfer_sample};
static const sb_timer pxfer_bidir_timer = {.sample = pxfer_bidir_sample};

static int pxfer_verify(void *state, sb_result *r)
{
    pxfer_state *st = state;
    sb_err err = {0};
    if (st->kind == K_BIDIR) { /* the d2h side first, as it came back */
        size_t w = 0;
        for (size_t i = 0; i < st->words; i++)
            w += st->dst[i] != st->src[i];
        if (w)
            sb_result_note(r, "d2h: %zu of %zu words differ", w, st->words);
        r->valid = w == 0;
        if (w)
            return 0;
    }
    if (st->kind != K_D2H) {
        memset(st->dst, 0, st->bytes);
        if (!st->dev ||
            sb_pjrt_download(st->p, st->dev, st->dst, st->bytes, &err)) {
            sb_result_note(r, "verification could not run: %s", err.msg);
            return err.code ? err.code : SB_EIO;
        }
    }
    size_t wrong = 0;
    for (size_t i = 0; i < st->words; i++)
        wrong += st->dst[i] != st->src[i];
    if (wrong)
        sb_result_note(r,
                       "verification: %zu of %zu words differ from what "
                       "was sent",
                       wrong, st->words);
    r->valid = wrong == 0;
    return 0;
}

static void pxfer_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    (void)pt, (void)ctx;
    pxfer_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->p));
    static const char *names[2] = {"h2d", "d2h"};
    for (int d = 0; d < 2 && st->ndir > 0; d++) {
        sb_stats t;
        sb_stats_compute(st->dir[d], st->ndir, &t);
        char m[32];
        snprintf(m, sizeof m, "%s_GBps", names[d]);
        sb_result_metric(r, m, (double)st->bytes / t.p50 * 1e-9, "GB/s");
        snprintf(m, sizeof m, "%s_GBps_best", names[d]);
        sb_result_metric(r, m, (double)st->bytes / t.min * 1e-9, "GB/s");
    }
    if (st->bytes != (size_t)sb_p_num(pt->params, "size"))
        sb_result_note(r, "size rounded down to %zu B (whole 8-byte words)",
                       st->bytes);
}

#define PXFER_IMPL(NAME, K, TIMER, DESC)                                       \
    const sb_impl sb_impl_pjrt_transfer_##NAME = {                             \
        .backend = "pjrt",                                                     \
        .desc = DESC,                                                          \
        .params = pxfer_params,                                                \
        .quick = "size=1MiB,64MiB",                                            \
        .full = "size=4KiB..1GiB:x4",                                          \
        .kind = K,                                                             \
        .check = pxfer_check,                                                  \
        .setup = pxfer_setup,                                                  \
        .timer = &TIMER,                                                       \
        .verify = pxfer_verify,                                                \
        .report = pxfer_report,                                                \
        .teardown = pxfer_teardown,                                            \
    };

PXFER_IMPL(h2d, K_H2D, pxfer_timer,
           "PJRT_Client_BufferFromHostBuffer, until ready")
PXFER_IMPL(d2h, K_D2H, pxfer_timer, "PJRT_Buffer_ToHostBuffer, until its event")
PXFER_IMPL(bidir, K_BIDIR, pxfer_bidir_timer,
           "an upload and a download in flight together, each direction "
           "timed to its own event")
