/*
 * registry.c — the static table of every benchmark, built from one list
 * file per area (src/bench/<area>/<area>.def: one SB_BENCH(symbol) per
 * line). The order of the table is the run order: compute first, so that
 * later benchmarks find the measured peaks and bandwidths in the context.
 */
#include <string.h>

#include "solbench/bench.h"

#define SB_BENCH(sym) extern const sb_bench sym;
#include "bench/compute/compute.def"
#include "bench/memory/memory.def"
#include "bench/transfer/transfer.def"
#include "bench/attention/attention.def"
#include "bench/moe/moe.def"
#include "bench/ops/ops.def"
#ifdef SB_HAVE_MPI
#include "bench/network/network.def"
#endif
#ifdef SB_HAVE_CUDA
#include "backend/cuda/cuda.def"
#endif
#undef SB_BENCH

#define SB_BENCH(sym) &sym,
static const sb_bench *const registry[] = {
#include "bench/compute/compute.def"
#include "bench/memory/memory.def"
#include "bench/transfer/transfer.def"
#include "bench/attention/attention.def"
#include "bench/moe/moe.def"
#include "bench/ops/ops.def"
#ifdef SB_HAVE_MPI
#include "bench/network/network.def"
#endif
#ifdef SB_HAVE_CUDA
#include "backend/cuda/cuda.def"
#endif
    NULL};
#undef SB_BENCH

static const char *const areas[] = {"compute",   "memory", "transfer",
                                    "attention", "moe",    "ops",
                                    "network",   NULL};

const sb_bench *const *sb_registry(void)
{
    return registry;
}

const char *const *sb_areas(void)
{
    return areas;
}

const sb_bench *sb_bench_find(const char *name, const char *backend)
{
    for (const sb_bench *const *b = registry; *b; b++) {
        const char *be = (*b)->backend ? (*b)->backend : "cpu";
        if (strcmp((*b)->name, name) == 0 &&
            (!backend || !*backend || strcmp(be, backend) == 0))
            return *b;
    }
    return NULL;
}
