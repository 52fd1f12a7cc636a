/*
 * network.c — the network area's benchmarks: one definition a collective,
 * with its impls where this build has them (MPI ranks: collectives.c;
 * the node's GPUs over NCCL: src/backend/cuda; a PJRT client's devices:
 * src/backend/pjrt/pjrt_net.c). Built everywhere, like
 * the collectives' arithmetic (src/def/netmodel.c); a definition this build has
 * no impl of is not in the registry.
 */
#include "solbench/bench.h"
#include "solbench/netmodel.h"

#ifdef SB_HAVE_MPI
/* collectives.c: the MPI impl of each op, indexed by its sb_netop */
extern const sb_impl sb_impl_mpi_network[SB_NET_NOPS];
#endif

/* A latency test leads with its latency at every size (osu_latency's
 * column), the others with their bus bandwidth. */
#define NET_HEADLINE(OP) ((OP) == SB_NET_PINGPONG ? "latency_us" : NULL)
/* The MPI collectives are this area's own impls, built where MPI is. */
#ifdef SB_HAVE_MPI
#define SB_IMPL_MPI(OP) &sb_impl_mpi_network[OP],
#else
#define SB_IMPL_MPI(OP)
#endif

/* One benchmark an op; the other backends' impls join it by its name. */
#define NET_BENCH(OP, NAME, DESC)                                              \
    const sb_bench sb_bench_network_##NAME = {                                 \
        .name = "network." #NAME,                                              \
        .area = "network",                                                     \
        .desc = DESC,                                                          \
        .flags = SB_BF_QUICK | SB_BF_FULL,                                     \
        .kind = OP,                                                            \
        .headline = NET_HEADLINE(OP),                                          \
        .impls = (const sb_impl *const[]){SB_IMPL_MPI(OP) NULL},               \
    };

NET_BENCH(SB_NET_PINGPONG, pingpong, "latency: half a round trip")
NET_BENCH(SB_NET_BW, bw, "one-way bandwidth: a window of sends, then an ack")
NET_BENCH(SB_NET_BIBW, bibw, "bidirectional bandwidth: windows both ways")
NET_BENCH(SB_NET_SENDRECV, sendrecv,
          "send to the next, receive from the "
          "previous, in a ring")
NET_BENCH(SB_NET_BCAST, bcast, "broadcast from a root; busbw = algbw")
NET_BENCH(SB_NET_REDUCE, reduce, "reduce to a root; busbw = algbw")
NET_BENCH(SB_NET_ALLREDUCE, allreduce, "all-reduce; busbw = algbw x 2(n-1)/n")
NET_BENCH(SB_NET_ALLGATHER, allgather,
          "all-gather; S = output buffer; busbw = algbw x (n-1)/n")
NET_BENCH(SB_NET_REDUCE_SCATTER, reduce_scatter,
          "reduce-scatter; S = input buffer; busbw = algbw x (n-1)/n")
NET_BENCH(SB_NET_ALLTOALL, alltoall,
          "all-to-all; S = whole buffer; busbw = algbw x (n-1)/n")
