/*
 * xfer_latency.c — transfer.latency: the time of one dependent load of
 * host memory by the device, by pointer chasing (solbench/chase.h).
 * On cuda one GPU thread chases a chain in mapped page-locked host memory
 * (nvbandwidth's host_device_latency_sm); on the host backend, whose
 * "device" is the CPU, one thread chases a chain in the backend's device
 * buffer, bound to NUMA node `numa`: the latency of that node's memory
 * from here, a real figure labelled as such.
 */
#include "backend/cpu/chase_cpu.h"
#include "bench/transfer/transfer.h"
#include "solbench/chase.h"

static const sb_param_def xlat_params[] = {
    SB_CHASE_PARAMS("bytes of the host buffer the chain runs through"),
    {"device", SB_P_INT, "0", 0, 1024, NULL, "device index"},
    {"numa", SB_P_INT, "-1", -1, 4096, NULL,
     "host backend: NUMA node of the buffer (-1: first touch)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const sb_param_def xlat_host_params[] = {
    SB_CHASE_P_PAGES, {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const sb_impl xlat_host = {
    .backend = "host",
    .params = xlat_host_params,
    .desc = "host backend: one CPU thread chases a chain in the device "
            "buffer (host memory on NUMA node `numa`)",
    .setup = sb_chase_cpu_setup_point,
    .run = sb_chase_cpu_run,
    .verify = sb_chase_cpu_verify,
    .report = sb_chase_cpu_report,
    .teardown = sb_chase_cpu_teardown,
};

#ifdef SB_HAVE_CUDA
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
    .kind = SB_CHASE_HOST_MEMORY,
    .decode = sb_chase_decode,
    .shape_size = sizeof(sb_chase_shape),
    .check = sb_xfer_check,
    .footprint = sb_chase_footprint,
    .impls = (const sb_impl *const[]){&xlat_host, NULL},
};
