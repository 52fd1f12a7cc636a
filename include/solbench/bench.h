/*
 * bench.h — what a benchmark is, the context it runs in, and the registry.
 *
 * A kernel file states what it computes (setup/run), how much work one
 * iteration is (flops/bytes), how to check it (verify) and which metrics it
 * adds (report). The runner owns timing, statistics and output. Adding a
 * kernel means one new file and one new line in its area's .def list
 * (src/bench/<area>/<area>.def), which src/core/registry.c includes.
 */
#ifndef SOLBENCH_BENCH_H
#define SOLBENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "solbench/error.h"
#include "solbench/param.h"
#include "solbench/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sb_suite { SB_SUITE_QUICK = 0, SB_SUITE_FULL = 1 } sb_suite;

/* Ceilings measured so far in this run (or loaded), keyed by name:
 * "peak.fp64", "peak.fp32", "peak.bf16" (FLOP/s), "gemm.<dtype>" (FLOP/s,
 * the best GEMM), "gemv.<dtype>" (B/s of weights, decode-shaped GEMM),
 * "bw.L1", "bw.L2", "bw.L3", "bw.DRAM" (B/s, read), "bw.triad" (B/s),
 * "net.<coll>.alpha_s", "net.<coll>.beta_Bps", "host.h2d" (B/s). Values
 * in SI base units. */
#define SB_MAX_CEILINGS 64
typedef struct sb_ceiling {
    char name[40];
    double value;
    char source[24]; /* "measured", "theoretical", "datasheet" */
} sb_ceiling;

typedef struct sb_ceilings {
    int n;
    sb_ceiling c[SB_MAX_CEILINGS];
} sb_ceilings;

void sb_ceil_set(sb_ceilings *c, const char *name, double value,
                 const char *source);
/* 0 when unknown. */
double sb_ceil_get(const sb_ceilings *c, const char *name);
/* The unit of a ceiling by its name: "FLOP/s", "B/s", "s", "B", or "". */
const char *sb_ceil_unit(const char *name);

/* Everything a benchmark may need to know about how it is run. */
typedef struct sb_ctx {
    int threads;     /* OpenMP threads for CPU kernels */
    double min_time; /* seconds of timed samples per point */
    int repeat;      /* at least this many samples per point */
    int warmup;      /* untimed runs before sampling */
    sb_suite suite;
    double tick_s;    /* measured clock resolution */
    double phys_mem;  /* bytes of physical memory */
    int rank, nranks; /* MPI rank and size (0/1 without MPI) */
    bool progress;    /* progress lines allowed (stderr is a terminal) */
    double timeout_s; /* per-point limit (network), 0 = none */
    bool interleave;  /* sample all points in rounds, not one by one */
    /* Topology, for the config (filled by sb_mpi_begin under MPI). */
    int hosts, ranks_per_host;
    char mpi_library[96];
    char transport[64];
    char backend[16]; /* "cpu", "cuda", or "" for every backend */
    sb_ceilings ceil; /* measured ceilings, filled as the run goes */
} sb_ctx;

/* Benchmark flags. */
enum {
    SB_BF_QUICK = 1u << 0,    /* part of the quick suite */
    SB_BF_FULL = 1u << 1,     /* part of the full suite */
    SB_BF_NEEDS_MPI = 1u << 2 /* needs 2+ ranks; skipped otherwise */
};

/* Where the runner places a result on the roofline (after the bench's
 * report), from its "flops" and "bytes" metrics, its median time and the
 * run's ceilings (sb_roofline_annotate). Kernels never call the roofline
 * themselves. */
typedef enum sb_roof_kind {
    SB_ROOF_NONE = 0, /* not placed (ceilings themselves, transfers...) */
    SB_ROOF_FP32,     /* under peak.fp32: the arithmetic is fp32 whatever
                         the storage type (ops, paged decode, MoE) */
    SB_ROOF_DTYPE     /* under peak.<dtype> of the point's "dtype"
                         parameter (fp32 when it has none) */
} sb_roof_kind;

typedef struct sb_bench sb_bench;

/* A custom measurement: fills r->samples_s itself (e.g. collectives whose
 * per-iteration time is the slowest rank's). Return 0 or a negative code. */
typedef int (*sb_measure_fn)(void *state, const sb_ctx *ctx, sb_result *r,
                             sb_err *err);

struct sb_bench {
    const char *name; /* "area.kernel" */
    const char *area;
    const char *backend; /* "cpu" (NULL means cpu), "cuda", "mpi" */
    const char *desc;
    const sb_param_def *params; /* NULL-terminated by name == NULL */
    const char *quick;          /* suite defaults, "k=v k=v", may be NULL */
    const char *full;
    unsigned flags;
    sb_roof_kind roof;

    /* Checks a point before anything is allocated; NULL: no check. */
    int (*check)(const sb_params *p, const sb_ctx *ctx, sb_err *err);
    /* Bytes of memory the point allocates (checked against physical
     * memory before setup); NULL: negligible. */
    double (*footprint)(const sb_params *p, const sb_ctx *ctx);
    /* Work of one iteration; NULL or 0: not applicable. */
    double (*flops)(const sb_params *p);
    double (*bytes)(const sb_params *p);

    int (*setup)(const sb_params *p, const sb_ctx *ctx, void **state,
                 sb_err *err);
    /* Runs the kernel `iters` times back to back (the timed region). */
    void (*run)(void *state, uint64_t iters);
    /* Checks the output against a reference; sets r->valid, adds notes.
     * Return 0, or a negative code for an error that is not a wrong
     * result. */
    int (*verify)(void *state, sb_result *r);
    /* Adds metrics beyond the runner's (MFU, imbalance, ceilings...). */
    void (*report)(void *state, const sb_params *p, sb_ctx *ctx, sb_result *r);
    void (*teardown)(void *state);

    /* Optional: replaces the runner's timing loop. */
    sb_measure_fn measure;
    /* Optional: the whole point is driven by the bench (e.g. sweeps that
     * emit many results). When set, only check/footprint and this are
     * used; it appends to `out`. */
    int (*drive)(const sb_params *p, sb_ctx *ctx, sb_result_list *out,
                 sb_err *err);
};

/* ---- registry ------------------------------------------------------------ */

/* All benchmarks, in suite order (compute before memory before primitives,
 * so ceilings exist when later benches need them). NULL-terminated. */
const sb_bench *const *sb_registry(void);
const sb_bench *sb_bench_find(const char *name, const char *backend);
/* Names of areas in registry order, NULL-terminated. */
const char *const *sb_areas(void);

#ifdef __cplusplus
}
#endif

#endif
