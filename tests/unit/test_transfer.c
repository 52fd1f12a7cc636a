/*
 * test_transfer.c — the transfer benchmarks over the host device: copies
 * arrive intact at several sizes (including ones that are not a multiple
 * of a word), a planted wrong byte is caught in each direction, the
 * per-direction metrics exist, and without a GPU the CUDA device reports
 * "no CUDA device" instead of failing.
 */
#include <stdlib.h>
#include <string.h>

#include "bench/transfer/transfer.h"
#include "check.h"
#include "solbench/runner.h"

static sb_params point(const char *size, const char *host)
{
    static const sb_param_def defs[] = {
        {"size", SB_P_SIZE, "64KiB", 0, 0, NULL, ""},
        {"host", SB_P_STR, "pageable", 0, 0, "pageable|pinned|wc", ""},
        {"device", SB_P_INT, "0", 0, 0, NULL, ""},
        {"numa", SB_P_INT, "-1", 0, 0, NULL, ""},
        {NULL, 0, NULL, 0, 0, NULL, NULL}};
    sb_pset ps = {0};
    sb_err err = {0};
    char kv[64];
    snprintf(kv, sizeof kv, "size=%s", size);
    sb_pset_add(&ps, kv, &err);
    snprintf(kv, sizeof kv, "host=%s", host);
    sb_pset_add(&ps, kv, &err);
    const sb_pset *layers[1] = {&ps};
    sb_params *pts = NULL;
    int n = 0;
    sb_params p = {0};
    if (sb_params_expand("t", defs, layers, NULL, 1, &pts, &n, &err) == 0 &&
        n == 1)
        p = pts[0];
    free(pts);
    return p;
}

static sb_ctx quick_ctx(void)
{
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    ctx.min_time = 0.01;
    ctx.repeat = 3;
    ctx.warmup = 0;
    return ctx;
}

/* Runs one mode end to end; returns the result's validity. With `plant`
 * a byte of the copied data is corrupted before verification. */
static int run_mode(sb_xfer_mode mode, const char *size, const char *host,
                    int plant, sb_result *r)
{
    sb_params p = point(size, host);
    sb_ctx ctx = quick_ctx();
    sb_err err = {0};
    void *st = NULL;
    if (sb_xfer_setup_with(&sb_dev_host_ops, mode, &p, &st, &err) != 0)
        return -1;
    sb_result_init(r, "transfer.test", "transfer", "host");
    if (sb_sample_loop(NULL, &sb_xfer_timer, st, &ctx, r, &err) != 0) {
        sb_xfer_teardown(st);
        return -1;
    }
    sb_xfer_state *s = st;
    if (plant == 1) /* corrupt what arrived on the device */
        ((unsigned char *)s->d_a)[s->bytes - 1] ^= 0x40;
    if (plant == 2) /* corrupt what arrived on the host */
        ((unsigned char *)s->h_dst)[s->bytes / 2] ^= 0x01;
    sb_xfer_verify(st, r);
    sb_point pt = {.params = &p};
    sb_xfer_report(st, &pt, &ctx, r);
    sb_xfer_teardown(st);
    return r->valid;
}

int main(void)
{
    const char *sizes[] = {"8", "1000", "4KiB", "100003", "1MiB"};
    for (int i = 0; i < 5; i++) {
        sb_result r;
        CHECK(run_mode(SB_XFER_H2D, sizes[i], "pageable", 0, &r) == 1);
        CHECK(r.n_samples >= 3 && r.stats.p50 > 0);
        CHECK(sb_result_get(&r, "h2d_GBps") != NULL);
        sb_result_free(&r);
        CHECK(run_mode(SB_XFER_D2H, sizes[i], "pinned", 0, &r) == 1);
        CHECK(sb_result_get(&r, "d2h_GBps") != NULL);
        sb_result_free(&r);
    }
    sb_result r;
    CHECK(run_mode(SB_XFER_BIDIR, "256KiB", "pageable", 0, &r) == 1);
    CHECK(sb_result_get(&r, "h2d_GBps") && sb_result_get(&r, "d2h_GBps"));
    sb_result_free(&r);

    /* Planted wrong bytes are caught, in each direction. */
    CHECK(run_mode(SB_XFER_H2D, "64KiB", "pageable", 1, &r) == 0);
    CHECK(sb_result_get(&r, "wrong") && sb_result_get(&r, "wrong")->value == 1);
    sb_result_free(&r);
    CHECK(run_mode(SB_XFER_D2H, "100003", "pageable", 2, &r) == 0);
    sb_result_free(&r);
    CHECK(run_mode(SB_XFER_BIDIR, "64KiB", "pageable", 2, &r) == 0);
    sb_result_free(&r);

    /* The tail check: a wrong byte in the last partial word counts. */
    unsigned char buf[13];
    sb_params p = point("13", "pageable");
    void *st = NULL;
    sb_err err = {0};
    CHECK(sb_xfer_setup_with(&sb_dev_host_ops, SB_XFER_H2D, &p, &st, &err) ==
          0);
    if (st) {
        sb_xfer_state *s = st;
        memcpy(buf, s->h_src, 13);
        CHECK(sb_xfer_count_wrong(buf, 13, 0x1234567ull) == 0);
        buf[12] ^= 1;
        CHECK(sb_xfer_count_wrong(buf, 13, 0x1234567ull) == 1);
        sb_xfer_teardown(st);
    }

    /* Write-combined memory needs a driver: the host device says so. */
    p = point("4KiB", "wc");
    st = NULL;
    CHECK(sb_xfer_setup_with(&sb_dev_host_ops, SB_XFER_H2D, &p, &st, &err) ==
          SB_EUNSUP);
    CHECK(strstr(err.msg, "write-combined") != NULL);

    /* A NUMA node that does not exist is bad input, not a crash. */
    sb_dev *dev = NULL;
    CHECK(sb_dev_host_ops.open(0, 4000, &dev, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "numa") != NULL);

#ifdef SB_HAVE_CUDA
    /* Without a GPU (CI), opening the CUDA device reports why. */
    if (getenv("SOLBENCH_EXPECT_GPU") == NULL) {
        dev = NULL;
        int rc = sb_dev_cuda_ops.open(0, -1, &dev, &err);
        if (rc == 0) {
            sb_dev_cuda_ops.close(dev); /* a GPU is present: nothing to check */
        } else {
            CHECK(rc == SB_EUNSUP);
            CHECK(strstr(err.msg, "no CUDA device") != NULL);
        }
    }
#endif
    return sb_check_done();
}
