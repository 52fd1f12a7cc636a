/*
 * latency.c — memory.latency: the time of one load that depends on the
 * load before it, by pointer chasing (solbench/chase.h), at working sets
 * from L1 to DRAM (cpu: backend/cpu/chase_cpu.c) or HBM (cuda).
 *
 * One iteration is one hop, so the runner's per-iteration time is the
 * latency. A result is valid when the chase stands where the visiting
 * order says it must after every hop the timed runs took.
 */
#include "backend/cpu/chase_cpu.h"
#include "bench/memory/memory.h"
#include "solbench/chase.h"
#include "solbench/util.h"

static const sb_param_def lat_params[] = {
    SB_CHASE_PARAMS(
        "bytes of the buffer the chain runs through (the working set)"),
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const sb_param_def lat_cpu_params[] = {
    SB_CHASE_P_PAGES, {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* The quick suite: every cache level this CPU reports, and DRAM, whatever
 * their sizes. */
static const char *lat_cpu_suite(sb_suite suite)
{
    static char spec[128];
    if (suite != SB_SUITE_QUICK)
        return NULL;
    sb_mem_caches mc;
    sb_mem_caches_read(&mc);
    return sb_chase_quick_sizes(&mc, spec, sizeof spec);
}

static const sb_impl lat_cpu = {
    .backend = "cpu",
    .desc = "one thread chases a pointer chain (lmbench's lat_mem_rd)",
    .params = lat_cpu_params,
    .suite_spec = lat_cpu_suite,
    .setup = sb_chase_cpu_setup_point,
    .run = sb_chase_cpu_run,
    .verify = sb_chase_cpu_verify,
    .report = sb_chase_cpu_report,
    .teardown = sb_chase_cpu_teardown,
};

#ifdef SB_HAVE_CUDA
#endif

const sb_bench sb_bench_memory_latency = {
    .name = "memory.latency",
    .area = "memory",
    .desc = "load-to-use latency: a chain of dependent loads, one per hop",
    .params = lat_params,
    .quick = "size=256MiB",
    .full = "size=4KiB..1GiB:x2 pattern=random,page",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .kind = SB_CHASE_DEVICE_MEMORY,
    .decode = sb_chase_decode,
    .shape_size = sizeof(sb_chase_shape),
    .footprint = sb_chase_footprint,
    .impls = (const sb_impl *const[]){&lat_cpu, NULL},
};
