/*
 * library.c — the list of every benchmark of this build, one list file per
 * area (src/bench/<area>/<area>.def: one SB_BENCH(symbol) per line), and
 * sb_library_init, which gives it to the core's registry with the list of
 * this build's backends. The lists live here, above the benchmarks and
 * the backends, so the core names none of them.
 */
#include "solbench/library.h"

#include "core/backend.h"
#include "solbench/bench.h"

#define SB_BENCH(sym) extern const sb_bench sym;
#include "bench/compute/compute.def"
#include "bench/memory/memory.def"
#include "bench/transfer/transfer.def"
#include "bench/attention/attention.def"
#include "bench/moe/moe.def"
#include "bench/ops/ops.def"
#include "bench/llm/llm.def"
#include "bench/network/network.def"
#undef SB_BENCH

#define SB_BENCH(sym) &sym,
static const sb_bench *const every[] = {
#include "bench/compute/compute.def"
#include "bench/memory/memory.def"
#include "bench/transfer/transfer.def"
#include "bench/attention/attention.def"
#include "bench/moe/moe.def"
#include "bench/ops/ops.def"
#include "bench/llm/llm.def"
#include "bench/network/network.def"
    NULL};
#undef SB_BENCH

/* The backends of this build, the host's first (core/backend.h): a new
 * backend is its folder and one line here. */
extern const sb_backend sb_backend_cpu, sb_backend_host, sb_backend_mpi,
    sb_backend_cuda, sb_backend_pjrt;
static const sb_backend *const backends[] = {&sb_backend_cpu,
                                             &sb_backend_host,
#ifdef SB_HAVE_MPI
                                             &sb_backend_mpi,
#endif
#ifdef SB_HAVE_CUDA
                                             &sb_backend_cuda,
#endif
#ifdef SB_HAVE_PJRT
                                             &sb_backend_pjrt,
#endif
                                             NULL};

const sb_bench *const *sb_benches(void)
{
    return every;
}

void sb_library_init(void)
{
    sb_backends_use(backends);
    sb_registry_use(every);
}
