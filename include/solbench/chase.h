/*
 * chase.h — pointer chasing, for memory.latency and transfer.latency
 * (src/bench/memory/chase.c; the CPU's chase in src/backend/cpu/
 * chase_cpu.c, the GPU's in src/backend/cuda/cuda_chase.cu): a
 * buffer of `nodes` slots `stride` bytes apart, each slot holding the
 * address of the next slot to visit, all of them one cycle, so every load
 * depends on the one before it and the time per hop is the latency of the
 * memory the buffer sits in (lmbench's lat_mem_rd, nvbandwidth's
 * host_device_latency_sm).
 *
 * The addresses written are base + offset, so a chain built in a host
 * buffer can be chased by a device that sees the buffer at `base`. The
 * visiting order is kept beside the chain: after h hops from the start, a
 * correct chase stands at order[h mod nodes], whatever did the chasing.
 */
#ifndef SOLBENCH_CHASE_H
#define SOLBENCH_CHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/bench.h"

typedef enum sb_chase_pattern {
    SB_CHASE_RANDOM,     /* every slot in one random order */
    SB_CHASE_PAGE,       /* pages in random order, each page's slots in a
                            random order before the next page: a TLB miss
                            is paid once per page, not once per hop */
    SB_CHASE_SEQUENTIAL, /* slot after slot: what the prefetchers hide */
} sb_chase_pattern;

#define SB_CHASE_PAGE_BYTES 4096u
#define SB_CHASE_SEED 0xc4a5e0001ull /* the visiting order's */

typedef struct sb_chase {
    size_t nodes;    /* slots in the cycle */
    size_t stride;   /* bytes from one slot to the next in memory */
    uint64_t base;   /* the address the chaser sees the buffer at */
    uint32_t *order; /* order[j]: the slot visited j hops after the start */
} sb_chase;

/* "random", "page" or "sequential"; -1 when unknown. */
int sb_chase_pattern_from_name(const char *name);
/* Slots a buffer of `bytes` holds at `stride` (0 when fewer than 2, or
 * more than a 32-bit index reaches). */
size_t sb_chase_nodes(double bytes, size_t stride);
/* Writes the chain into buf (bytes long, 8-byte aligned; the slots only
 * are written) and fills c; the order comes from seed. The layout must
 * pass sb_chase_layout. SB_EINVAL or SB_ENOMEM with err set. */
int sb_chase_build(void *buf, size_t bytes, size_t stride, sb_chase_pattern pat,
                   uint64_t base, uint64_t seed, sb_chase *c, sb_err *err);
void sb_chase_free(sb_chase *c);
/* The address a chase stands at after `hops` hops from the start. */
uint64_t sb_chase_expect(const sb_chase *c, uint64_t hops);
/* Follows the chain `hops` times from p on this CPU; the address reached. */
const void *sb_chase_run(const void *p, uint64_t hops);

/* What a chase reads: device memory, or host memory from the device
 * (the definitions' kind, which the GPU's impl reads). */
enum { SB_CHASE_DEVICE_MEMORY = 0, SB_CHASE_HOST_MEMORY = 1 };

/* A point of memory.latency or transfer.latency, decoded once: the
 * buffer's bytes (whole slots), the stride, the slots and the order. */
typedef struct sb_chase_shape {
    size_t bytes, stride, nodes;
    sb_chase_pattern pattern;
} sb_chase_shape;

/* The working set of `level` ("L1", "L2", "L3", "DRAM") as one thread
 * sees this machine's caches (mc: struct sb_mem_caches, solbench/util.h):
 * half of one instance of the level, so the chain fits it beside what
 * else is cached; DRAM: 4 x the last level's instance, at least 256 MiB.
 * 0 when the machine reports no such level. */
/* memory.latency's quick suite on the CPU: "size=..." with the working
 * set of every level this machine reports and of DRAM (NULL for the full
 * suite, which sweeps sizes as written). */
struct sb_mem_caches;
const char *sb_chase_quick_sizes(const struct sb_mem_caches *mc, char *buf,
                                 size_t len);
double sb_chase_level_bytes(const struct sb_mem_caches *mc, const char *level);

/* Checks a layout and fills sh: stride a multiple of 8 (with
 * SB_CHASE_PAGE, dividing a page), at least 2 slots and at most 2^32.
 * SB_EINVAL with err naming the problem. */
int sb_chase_layout(double bytes, size_t stride, sb_chase_pattern pat,
                    sb_chase_shape *sh, sb_err *err);

/* The definitions' parameters: size, stride, pattern (SIZE_DOC: what the
 * buffer is). */
#define SB_CHASE_PARAMS(SIZE_DOC)                                              \
    {"size", SB_P_SIZE, "256MiB", 16, 17179869184.0, NULL, SIZE_DOC},          \
        {"stride",                                                             \
         SB_P_INT,                                                             \
         "64",                                                                 \
         8,                                                                    \
         4096,                                                                 \
         NULL,                                                                 \
         "bytes between slots (a multiple of 8; one cache line by default)"},  \
    {                                                                          \
        "pattern", SB_P_STR, "random", 0, 0, "random|page|sequential",         \
            "visiting order: random over the whole buffer (a TLB miss where "  \
            "pages run out), page by page in random order with each page's "   \
            "slots in random order, or sequential (what the prefetchers hide)" \
    }

/* The CPU impls' `pages` parameter (4k or huge). */
#define SB_CHASE_P_PAGES                                                       \
    {                                                                          \
        "pages", SB_P_STR, "4k", 0, 0, "4k|huge",                              \
            "the buffer's pages: 4k (transparent huge pages refused, so a "    \
            "TLB miss shows wherever the pages outrun the TLB) or huge (2 "    \
            "MiB pages asked for; the kernel may grant fewer)"                 \
    }

/* The definitions' decode (size, stride, pattern) and footprint. */
int sb_chase_decode(const sb_bench *b, const sb_params *p, void *shape,
                    sb_err *err);
double sb_chase_footprint(const sb_point *pt, const sb_ctx *ctx);

/* latency_ns and latency_ns_best from the samples; with cpu_clock,
 * latency_cycles at the core clock (the process's one measurement) where
 * it is known. */
void sb_chase_report_latency(sb_result *r, bool cpu_clock);
/* Notes which of this CPU's cache levels (as the OS reports them) a
 * working set of `bytes` fits in, or its ratio to the last level. */
void sb_chase_level_note(sb_result *r, size_t bytes);

#endif
