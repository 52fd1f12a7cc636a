/*
 * chase_cpu.h — the CPU's pointer chase (chase_cpu.c), the hooks of
 * memory.latency's cpu impl and of transfer.latency's host impl: one
 * thread follows the chain (solbench/chase.h) through a buffer in its own
 * mapping, with the page size asked for and, where a point has `numa`,
 * bound to that NUMA node.
 */
#ifndef SOLBENCH_BACKEND_CPU_CHASE_H
#define SOLBENCH_BACKEND_CPU_CHASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/chase.h"

typedef struct sb_chase_state {
    sb_chase chain;
    void *buf; /* the slots, inside the mapping */
    size_t bytes;
    void *map; /* the buffer's own mapping (munmap'ed at teardown) */
    size_t map_len;
    bool huge;       /* transparent huge pages asked for (else refused) */
    int numa;        /* the NUMA node the buffer is bound to, -1: none */
    const void *cur; /* where the chase stands */
    uint64_t hops;   /* hops taken since the start */
} sb_chase_state;

/* Maps a buffer for the chain of sh with the page policy asked for
 * (huge: transparent huge pages asked for, 2 MiB aligned; else refused,
 * so every page is 4 KiB), bound to NUMA node numa when >= 0, touched
 * page by page by this thread, and builds the chain in it. */
int sb_chase_cpu_setup(const sb_chase_shape *sh, bool huge, int numa,
                       sb_chase_state **out, sb_err *err);

/* The impls' hooks: setup from the point (its shape, `pages`, and `numa`
 * and `device` where it has them), one hop an iteration, verification
 * against the visiting order, the latency metrics with the cache level
 * the working set fits. */
int sb_chase_cpu_setup_point(const sb_point *pt, const sb_ctx *ctx,
                             void **state, sb_err *err);
void sb_chase_cpu_run(void *state, uint64_t iters);
int sb_chase_cpu_verify(void *state, sb_result *r);
void sb_chase_cpu_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r);
void sb_chase_cpu_teardown(void *state);

#endif
