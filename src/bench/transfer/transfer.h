/*
 * transfer.h — the state of a transfer benchmark, shared by its backends
 * and by the tests (which plant wrong bytes to check the validation).
 */
#ifndef SOLBENCH_BENCH_TRANSFER_H
#define SOLBENCH_BENCH_TRANSFER_H

#include <stdint.h>

#include "solbench/bench.h"
#include "solbench/device.h"

typedef enum sb_xfer_mode {
    SB_XFER_H2D,
    SB_XFER_D2H,
    SB_XFER_BIDIR
} sb_xfer_mode;

typedef struct sb_xfer_state {
    const sb_dev_ops *ops;
    sb_dev *dev;
    sb_xfer_mode mode;
    sb_host_kind kind;
    bool sm; /* engine=sm: SM-kernel copies, not the copy engines */
    size_t bytes;
    void *h_src, *h_dst, *h_check; /* host buffers */
    void *d_a, *d_b;               /* device: H2D target, D2H source */
    char where[512];               /* the device and memory placement */
    double *dir_samples[2];        /* per-direction seconds per copy */
    size_t n_dir[2], cap_dir[2];
} sb_xfer_state;

int sb_xfer_setup_with(const sb_dev_ops *ops, sb_xfer_mode mode,
                       const sb_params *p, void **state, sb_err *err);
/* The transfers' timer: a sample is one batch of copies (both directions
 * at once for bidir) timed by the device's clock, each direction recorded
 * for the samples (not the calibration and warm-up). */
extern const sb_timer sb_xfer_timer;
int sb_xfer_verify(void *state, sb_result *r);
void sb_xfer_report(void *state, const sb_point *pt, sb_ctx *ctx, sb_result *r);
void sb_xfer_teardown(void *state);
double sb_xfer_footprint(const sb_point *pt, const sb_ctx *ctx);
/* Refuses a `numa` parameter naming a node this machine lacks, at
 * planning, before any point of the run is measured. */
int sb_xfer_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err);
/* Words of `got` that differ from the pattern of `seed`. */
size_t sb_xfer_count_wrong(const void *got, size_t bytes, uint64_t seed);

#endif
