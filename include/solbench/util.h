/*
 * util.h — small shared helpers: page-aligned allocation, thread binding,
 * a fast deterministic random generator, string helpers.
 */
#ifndef SOLBENCH_UTIL_H
#define SOLBENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Page-aligned (4 KiB; 2 MiB for >= 64 MiB with THP advice); NULL on
 * failure. Free with sb_free_aligned. Not touched: callers first-touch in
 * the threads that will use the memory. */
void *sb_alloc_aligned(size_t bytes);
void sb_free_aligned(void *p);
/* Appends x to the growable array *v of *n values (capacity *cap,
 * doubled as needed, 64 at first). 0, or SB_ENOMEM with *v untouched. */
int sb_dpush(double **v, size_t *n, size_t *cap, double x);

/* Cache sizes the OS reports (hwloc), for DRAM-ness and the sweep. */
typedef struct sb_mem_caches {
    int nlevels;        /* highest data or unified level, 0 if unknown */
    double size[5];     /* bytes per instance, [1..4] */
    int shared_cpus[5]; /* logical CPUs sharing one instance */
    int cpus;           /* online logical CPUs */
    int smt;            /* hardware threads per core */
} sb_mem_caches;

void sb_mem_caches_read(sb_mem_caches *mc);
/* Capacity of level l reachable by `threads` threads bound one per core
 * (private caches add up; a shared one counts once per instance used). */
double sb_mem_cache_for_threads(const sb_mem_caches *mc, int level,
                                int threads);
/* The last-level cache of the whole machine (all instances). */
double sb_mem_llc_total(const sb_mem_caches *mc);

/* Sets the OpenMP thread count and binds thread i to core i (hwloc) in
 * the next parallel regions. Returns the count in effect. */
int sb_threads_setup(int threads);
/* Physical cores as hwloc sees them. */
int sb_cores(void);
double sb_phys_mem(void);
/* Bytes of memory available now (MemAvailable of /proc/meminfo), else
 * the physical memory. */
double sb_mem_available(void);
/* The share of the available memory one run may take: a footprint above
 * it is refused before anything is allocated (--force aside). */
#define SB_MEM_SHARE 0.8
/* 0 when `need` bytes fit in SB_MEM_SHARE of `have` (0: unknown, fits);
 * else SB_EINVAL with "WHAT: needs X of memory, more than 80% of the Y
 * available now". */
int sb_mem_fits(double need, double have, const char *what, sb_err *err);
/* Bytes of the last cache level, all its instances together (L3, else
 * L2): what data must exceed to come from memory, the same rule as the
 * memory area's DRAM test. 0 when unknown. */
double sb_llc_bytes(void);
/* NUMA nodes as hwloc sees them; 0 when unknown. */
int sb_numa_nodes(void);
/* The rank an MPI launcher gave this process, from its environment
 * (before MPI starts); -1 when none says. */
long sb_launcher_rank(void);
/* Whether an MPI launcher started this process. */
bool sb_launcher_present(void);

/* A duration for a table: "0", "%.1f <us>" below 1 ms (us names the
 * microsecond: "us" in plain text, "µs" in HTML), "%.2f ms" below 1 s,
 * else "%.3f s". Returns buf. */
const char *sb_fmt_time(double s, const char *us, char *buf, size_t len);
/* A figure with a decimal prefix and 3 significant digits: "1.23G",
 * "950", "0". Returns buf. */
const char *sb_fmt_eng(double v, char *buf, size_t len);
/* Whether the machine has a NUMA node of this OS index (hwloc). */
bool sb_numa_node_exists(int os_index);
/* The machine's hwloc topology, loaded once per process and shared (never
 * destroy it); NULL when hwloc cannot read it. (hwloc_topology_t is a
 * pointer to this struct.) */
struct hwloc_topology *sb_topology(void);

/* splitmix64: deterministic per-seed stream. */
static inline uint64_t sb_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* Uniform double in [0, 1). */
static inline double sb_rng_unif(uint64_t *s)
{
    return (double)(sb_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* bf16 <-> fp32. Rounding is to nearest, ties to even; NaN stays a quiet
 * NaN; overflow rounds to infinity as IEEE rounding does. */
static inline uint16_t sb_bf16_from_f32(float f)
{
    /* Branch-free (a select, not an early return), so loops of it
     * vectorise. */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t quiet = (u >> 16) | 0x40u;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}

static inline float sb_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* OCP fp8 E4M3 (E4M3FN: NVIDIA's __nv_fp8_e4m3, XLA's f8E4M3FN) to fp32:
 * bias 7, no infinities, only S.1111.111 is NaN, max 448. */
float sb_e4m3_to_f32(uint8_t x);
/* fp32 to E4M3FN, rounded to nearest (ties to even) and saturated to
 * +-448 (NVIDIA's __NV_SATFINITE conversion); NaN to 0x7f (signed). */
uint8_t sb_e4m3_from_f32(float f);

/* True when the loaded BLAS exports cblas_sbgemm (bf16 in, fp32 out): every
 * recent OpenBLAS header declares it, but only builds with bfloat16
 * support export it, so callers reference it weakly. */
bool sb_blas_have_sbgemm(void);

/* s written as XML text or attribute value: & < > " ' escaped, control
 * characters but tab as spaces (the JUnit reports). */
void sb_xml_text(FILE *f, const char *s);

/* Keeps the compiler from removing a computed value. */
#define SB_KEEP(x) __asm__ volatile("" : : "r,m"(x) : "memory")

#ifdef __cplusplus
}
#endif

#endif
