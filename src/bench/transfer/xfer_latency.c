/*
 * xfer_latency.c — transfer.latency: the time of one dependent load of
 * host memory by the device, by pointer chasing (bench/memory/chase.h).
 * On cuda one GPU thread chases a chain in mapped page-locked host memory
 * (nvbandwidth's host_device_latency_sm); on the host backend, whose
 * "device" is the CPU, one thread chases a chain in the backend's device
 * buffer, bound to NUMA node `numa`: the latency of that node's memory
 * from here, a real figure labelled as such.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/memory/chase.h"
#include "bench/transfer/transfer.h"
#include "solbench/util.h"

static const sb_param_def xlat_params[] = {
    {"size", SB_P_SIZE, "256MiB", 16, 17179869184.0, NULL,
     "bytes of the host buffer the chain runs through"},
    {"stride", SB_P_INT, "64", 8, 4096, NULL,
     "bytes between slots (a multiple of 8)"},
    {"pattern", SB_P_STR, "random", 0, 0, "random|page|sequential",
     "visiting order (as memory.latency's)"},
    {"device", SB_P_INT, "0", 0, 1024, NULL, "device index"},
    {"numa", SB_P_INT, "-1", -1, 4096, NULL,
     "host backend: NUMA node of the buffer (-1: first touch)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static int host_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    (void)ctx;
    /* the host backend's one device: device 0 */
    if (sb_p_int(pt->params, "device") != 0)
        return sb_fail(err, SB_EUNSUP,
                       "the host backend has one device (device 0), not "
                       "device %lld",
                       (long long)sb_p_int(pt->params, "device"));
    sb_chase_state *s = NULL;
    int rc = sb_chase_cpu_setup(
        pt->shape, strcmp(sb_p_str(pt->params, "pages"), "huge") == 0,
        (int)sb_p_int(pt->params, "numa"), &s, err);
    *state = s;
    return rc;
}

static void host_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    (void)ctx;
    sb_chase_state *s = state;
    sb_chase_report_latency(r, true);
    sb_chase_cpu_level_note(r, s->bytes);
    (void)pt;
    char where[48] = "placed by first touch";
    if (s->numa >= 0)
        snprintf(where, sizeof where, "bound to NUMA node %d", s->numa);
    sb_result_note(r,
                   "host backend: one CPU thread chases %zu slots %zu B "
                   "apart in a buffer %s, %s",
                   s->chain.nodes, s->chain.stride, where,
                   s->huge ? "huge pages asked for"
                           : "4 KiB pages (huge pages refused)");
}

static const sb_param_def xlat_host_params[] = {
    SB_CHASE_P_PAGES, {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const sb_impl xlat_host = {
    .backend = "host",
    .params = xlat_host_params,
    .desc = "host backend: one CPU thread chases a chain in the device "
            "buffer (host memory on NUMA node `numa`)",
    .setup = host_setup,
    .run = sb_chase_cpu_run,
    .verify = sb_chase_cpu_verify,
    .report = host_report,
    .teardown = sb_chase_cpu_teardown,
};

#ifdef SB_HAVE_CUDA
extern const sb_impl sb_impl_cuda_transfer_latency;
#endif

const sb_bench sb_bench_transfer_latency = {
    .name = "transfer.latency",
    .area = "transfer",
    .desc = "the device's load-to-use latency of host memory: a chain of "
            "dependent loads, one per hop",
    .params = xlat_params,
    .quick = "size=256MiB",
    .full = "size=256MiB pattern=random,page",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .kind = 1, /* host memory (the cuda backend's chase reads it) */
    .decode = sb_chase_decode,
    .shape_size = sizeof(sb_chase_shape),
    .check = sb_xfer_check,
    .footprint = sb_chase_footprint,
    .impls =
        (const sb_impl *const[]){
            &xlat_host, SB_IMPL_CUDA(sb_impl_cuda_transfer_latency) NULL},
};
