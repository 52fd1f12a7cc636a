/*
 * pjrt_xfer.c — transfer.h2d and transfer.d2h on a PJRT device: a sample
 * is a batch of copies of `size` bytes, each one complete before the next
 * (h2d: PJRT_Client_BufferFromHostBuffer until the host data is released
 * and the buffer's ready event; d2h: PJRT_Buffer_ToHostBuffer until its
 * event), timed on the host clock. The bytes arrive where they were sent:
 * the last h2d buffer is read back, the last d2h copy compared with what
 * was uploaded, word for word.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/bench.h"
#include "solbench/timer.h"
#include "solbench/util.h"

enum { K_H2D, K_D2H };

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
    if (st->p)
        sb_pjrt_buf_free(st->p, st->dev);
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
    if (st->kind == K_D2H) {
        /* bytes as 32-bit integers: any pattern survives the copy */
        const int64_t dims[1] = {(int64_t)(st->words * 2)};
        if ((rc = sb_pjrt_upload(p, st->src, SB_PJRT_S32, dims, 1, &st->dev,
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

static const sb_timer pxfer_timer = {.sample = pxfer_sample};

static int pxfer_verify(void *state, sb_result *r)
{
    pxfer_state *st = state;
    sb_err err = {0};
    if (st->kind == K_H2D) {
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
    const pxfer_state *st = state;
    sb_result_note(r, "%s", sb_pjrt_describe(st->p));
    if (st->bytes != (size_t)sb_p_num(pt->params, "size"))
        sb_result_note(r, "size rounded down to %zu B (whole 8-byte words)",
                       st->bytes);
}

#define PXFER_IMPL(NAME, K, DESC)                                              \
    const sb_impl sb_impl_pjrt_transfer_##NAME = {                             \
        .backend = "pjrt",                                                     \
        .desc = DESC,                                                          \
        .params = pxfer_params,                                                \
        .quick = "size=1MiB,64MiB",                                            \
        .full = "size=4KiB..1GiB:x4",                                          \
        .kind = K,                                                             \
        .check = pxfer_check,                                                  \
        .setup = pxfer_setup,                                                  \
        .timer = &pxfer_timer,                                                 \
        .verify = pxfer_verify,                                                \
        .report = pxfer_report,                                                \
        .teardown = pxfer_teardown,                                            \
    };

PXFER_IMPL(h2d, K_H2D, "PJRT_Client_BufferFromHostBuffer, until ready")
PXFER_IMPL(d2h, K_D2H, "PJRT_Buffer_ToHostBuffer, until its event")
