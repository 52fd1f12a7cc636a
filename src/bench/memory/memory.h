/*
 * memory.h — state and kernels shared by the memory area's benchmarks
 * (memory.c: the STREAM kernels, read and write; sweep.c: memory.sweep)
 * and by the unit tests, which reach into the arrays to plant wrong
 * elements and check that verification catches them.
 */
#ifndef SOLBENCH_BENCH_MEMORY_H
#define SOLBENCH_BENCH_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/bench.h"

typedef enum sb_mem_kernel {
    SB_MEM_COPY,  /* c = a */
    SB_MEM_SCALE, /* b = s*c */
    SB_MEM_ADD,   /* c = a + b */
    SB_MEM_TRIAD, /* a = b + s*c */
    SB_MEM_READ,  /* sum of a */
    SB_MEM_WRITE, /* a = v (fill) */
    SB_MEM_NKERNELS
} sb_mem_kernel;

typedef struct sb_mem_state {
    sb_mem_kernel kernel;
    bool fp32;       /* element type: float (else double) */
    bool nt;         /* non-temporal stores in use */
    int nt_bits;     /* vector width of the stream stores: 512, 256, 128 */
    size_t n;        /* elements per array */
    size_t elem;     /* bytes per element */
    int threads;     /* the static partition: chunk t belongs to thread t */
    void *a, *b, *c; /* page-aligned arrays; NULL where unused */
    double scalar;   /* s of scale and triad */
    double fill;     /* v of write */
    double *partial; /* per-chunk sums of read, one cache line apart */
    double sum;      /* the last full sum of read */
} sb_mem_state;

/* STREAM's scalar. */
#define SB_MEM_SCALAR 3.0

/* Kernel by name ("copy", "scale", "add", "triad", "read", "write");
 * -1 when unknown. */
int sb_mem_kernel_from_name(const char *name);
/* Arrays a kernel touches (1, 2 or 3). */
int sb_mem_arrays(sb_mem_kernel k);
/* STREAM bytes per element of one array: arrays read + arrays written. */
int sb_mem_words(sb_mem_kernel k);
/* Words with write-allocate: +1 per array written with normal stores. */
int sb_mem_words_wa(sb_mem_kernel k, bool nt);
/* Elements per array for a total working set of `size` bytes. */
size_t sb_mem_elems(sb_mem_kernel k, double size, size_t elem);

/* Vector width (bits) of the non-temporal stores this CPU runs, 0 if none. */
int sb_mem_nt_bits(void);

/* Allocates and first-touches the arrays (each thread initialises its own
 * chunk, with the kernel's partition) with values from the element index,
 * so verification can recompute them. Returns 0 or a negative code. */
int sb_mem_setup(sb_mem_kernel k, bool fp32, bool nt, double size, int threads,
                 sb_mem_state **out, sb_err *err);
void sb_mem_run(void *state, uint64_t iters);
/* Checks every element of every array (and the sum of read) against
 * values recomputed from the index; sets r->valid and notes the first
 * wrong element. */
int sb_mem_verify(void *state, sb_result *r);
void sb_mem_teardown(void *state);

/* Offers a bandwidth ceiling (B/s): a DRAM-level figure (working set >= 4x
 * the last-level cache) replaces an in-cache one and keeps the larger of
 * two DRAM-level ones; an in-cache figure is kept only while nothing
 * better exists, marked "measured-in-cache". */
void sb_mem_ceil_offer(sb_ceilings *c, const char *name, double bps,
                       bool dram_level);

#endif
