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
 * in SI base units. A GEMM measured at M rows also gives "gemm.<dtype>@M"
 * (FLOP/s) or, decode-shaped, "gemv.<dtype>@M" (B/s of weights);
 * compute.noise gives "noise.rate" (1/s) and "noise.p0_s" .. "noise.max_s"
 * (the interruptions' sizes). */
#define SB_MAX_CEILINGS 160
typedef struct sb_ceiling {
    char name[40];
    double value;
    char source[24]; /* "measured", "theoretical", "datasheet" */
} sb_ceiling;

typedef struct sb_ceilings {
    int n;
    sb_ceiling c[SB_MAX_CEILINGS];
    /* the kind of machine they describe: "cpu", "gpu", "tpu", or ""
     * (unknown): what its advice may name (tensor cores, MXUs, AMX) */
    char kind[16];
} sb_ceilings;

void sb_ceil_set(sb_ceilings *c, const char *name, double value,
                 const char *source);
/* 0 when unknown. */
double sb_ceil_get(const sb_ceilings *c, const char *name);
/* Where a ceiling came from ("measured", "measured, unstable",
 * "datasheet", ...); "" when unknown. */
const char *sb_ceil_source(const sb_ceilings *c, const char *name);
/* The value of base"@M" at `rows` among those c holds: the one at M =
 * rows, linear between the nearest M below and above, the largest M's
 * above every one, the smallest M's below every one; its name in name_out
 * ("gemm.fp32@64..128" between two); 0 when c holds none. */
double sb_ceil_at_rows(const sb_ceilings *c, const char *base, double rows,
                       char *name_out, size_t len);
/* The largest M of the base"@M" ceilings c holds (with a value > 0); 0
 * when it holds none. */
double sb_ceil_rows_max(const sb_ceilings *c, const char *base);
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
    double mem_avail; /* bytes available when the run began (MemAvailable) */
    bool force;       /* run points above SB_MEM_SHARE of mem_avail */
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
    /* the machine's speed sampled between points (stability.h); NULL:
     * not probed */
    struct sb_probe *probe;
    /* interleaved sampling: called after every round with its index (from
     * 0) and the rounds the run is expected to take (each point's
     * --repeat, or the samples its --min-time needs at its pace so far),
     * so that other work runs in the same stretches as the points
     * (validate serves its loads among them); non-zero stops the run.
     * NULL: none */
    int (*on_round)(void *arg, int round, int rounds, sb_err *err);
    void *on_round_arg;
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
typedef struct sb_impl sb_impl;

/* One point as every hook sees it: the benchmark's definition, the
 * backend's implementation chosen for it, its parameters and what the
 * definition's decode made of them (the shape: sizes, element counts,
 * strides), decoded once per point before any hook runs. */
typedef struct sb_point {
    const sb_bench *bench;
    const sb_impl *impl;
    const sb_params *params;
    const void *shape; /* NULL when the definition has no decode */
} sb_point;

/* How a backend's samples are taken, where the runner's defaults do not
 * fit (device events, the slowest MPI rank, a fixed count every rank
 * agrees on). The timing loop itself is the runner's, for every backend:
 * calibration of the inner count, warm-up, sampling until --repeat and
 * --min-time, statistics (runner.h). */
typedef struct sb_sampling {
    uint64_t inner; /* runs per sample; 0: the runner calibrates it */
    int samples;    /* at least this many samples (beside --repeat) */
    bool exact;     /* exactly `samples`, --min-time and --repeat aside:
                       every MPI rank takes the same count */
    int warmup;     /* untimed samples first; -1: --warmup */
} sb_sampling;

typedef struct sb_timer {
    /* A sample lasts at least this long (0: the runner's 100 clock ticks
     * and 1 ms), and its inner count never exceeds max_iters (0: no cap,
     * e.g. the launches a CUDA graph holds). */
    double min_sample_s;
    uint64_t max_iters;
    /* Optional: fixes what the runner would calibrate or stop by time
     * (sp comes filled with the defaults: 0, 0, false, -1). */
    int (*plan)(void *state, const sb_ctx *ctx, sb_sampling *sp, sb_err *err);
    /* Runs the kernel `iters` times and says how long that took on this
     * backend's clock (CUDA events around a graph replay; the local time
     * after a barrier under MPI). idx: the sample's index, -1 for the
     * calibration and warm-up runs (nothing to record). NULL: the host's
     * monotonic clock around run(). */
    int (*sample)(void *state, int idx, uint64_t iters, double *secs,
                  sb_err *err);
    /* Kernel iterations one run is (CUDA: passes of one launch); NULL: 1.
     * A sample's time is divided by iters x work. */
    double (*work)(void *state);
    /* Optional, after the last sample: the seconds per iteration of every
     * sample, as the backend reports them (MPI: the slowest rank's). */
    int (*reduce)(void *state, double *secs, size_t n, sb_err *err);
} sb_timer;

/* One backend's implementation of a benchmark: how it runs there. Every
 * field but backend and setup/run (or drive) may be left NULL: the
 * definition's then holds. */
struct sb_impl {
    const char *backend; /* "cpu", "host", "mpi", "cuda", "pjrt" */
    const char *desc;    /* how this backend runs it; NULL: the definition's */
    /* This backend's own parameters, added to the definition's; one of the
     * same name replaces the definition's (its default, bounds or choices
     * differ here). NULL-terminated by name == NULL. */
    const sb_param_def *params;
    const char *quick, *full; /* suite points here; NULL: the definition's */
    /* Optional: the suite's points computed for this machine (working sets
     * from the cache sizes it reports); NULL, or a NULL return: quick and
     * full as written. */
    const char *(*suite_spec)(sb_suite suite);
    unsigned flags; /* added to the definition's (SB_BF_NEEDS_MPI) */
    int kind; /* the backend's own number for the kernel, read by the hooks
                 a family of impls shares */

    /* After the definition's check, what this backend cannot run. */
    int (*check)(const sb_point *pt, const sb_ctx *ctx, sb_err *err);
    /* When the backend's differ from the definition's (its own dtypes). */
    double (*footprint)(const sb_point *pt, const sb_ctx *ctx);
    double (*flops)(const sb_point *pt);
    double (*bytes)(const sb_point *pt);

    int (*setup)(const sb_point *pt, const sb_ctx *ctx, void **state,
                 sb_err *err);
    /* Runs the kernel `iters` times back to back (the timed region; a
     * timer's sample may run it another way). */
    void (*run)(void *state, uint64_t iters);
    /* Checks the output against a reference; sets r->valid, adds notes.
     * Return 0, or a negative code for an error that is not a wrong
     * result. */
    int (*verify)(void *state, sb_result *r);
    /* Adds metrics beyond the runner's (MFU, imbalance, ceilings...). */
    void (*report)(void *state, const sb_point *pt, sb_ctx *ctx, sb_result *r);
    void (*teardown)(void *state);

    /* How samples are taken here; NULL: the host clock around run(). */
    const sb_timer *timer;
    /* Optional, after each point's result: summarises the points so far
     * (the network's alpha-beta fit over a size sweep), appending to or
     * editing `out`. */
    int (*summarize)(const sb_point *pt, sb_ctx *ctx, sb_result_list *out,
                     sb_err *err);
    /* Optional: the whole point is driven by the impl (sweeps that emit
     * many results). When set, only the checks and this are used; it
     * appends to `out`. */
    int (*drive)(const sb_point *pt, sb_ctx *ctx, sb_result_list *out,
                 sb_err *err);
};

/* A benchmark: what the kernel is, once, whatever runs it. */
struct sb_bench {
    const char *name; /* "area.kernel" */
    const char *area;
    const char *desc;
    /* The parameters every backend takes (an impl adds its own).
     * NULL-terminated by name == NULL; NULL: none. */
    const sb_param_def *params;
    const char *quick; /* suite defaults, "k=v k=v", may be NULL */
    const char *full;
    unsigned flags;
    sb_roof_kind roof;
    int kind; /* the family's own number for this member (memory's
                 kernel, a collective, a transfer's direction), read by
                 the hooks a family shares */
    /* The metric its tables, history and comparisons lead with on every
     * backend and at every size (network.pingpong: "latency_us", as
     * osu_latency reports 8 B and 1 MiB alike); NULL: sb_result_headline's
     * rule. */
    const char *headline;

    /* Decodes a point's parameters into its shape once, before any other
     * hook (shape_size bytes, zeroed); a point it refuses is bad input.
     * shape_free releases what the shape holds. NULL: no shape. */
    int (*decode)(const sb_bench *b, const sb_params *p, void *shape,
                  sb_err *err);
    void (*shape_free)(void *shape);
    size_t shape_size;

    /* Checks a point before anything is allocated; NULL: no check. */
    int (*check)(const sb_point *pt, const sb_ctx *ctx, sb_err *err);
    /* Bytes of memory the point allocates (checked against physical
     * memory before setup); NULL: negligible. */
    double (*footprint)(const sb_point *pt, const sb_ctx *ctx);
    /* Work of one iteration; NULL or 0: not applicable. */
    double (*flops)(const sb_point *pt);
    double (*bytes)(const sb_point *pt);

    /* The area's own implementations (the CPU's, the host's, MPI's),
     * NULL-terminated: the first is the default. A device backend's impls
     * register with their backend (core/backend.h) and join these in the
     * registry: sb_bench_impls lists them all. */
    const sb_impl *const *impls;
};

/* ---- registry ------------------------------------------------------------ */

/* All benchmarks installed (sb_registry_use; a program calls
 * sb_library_init, solbench/library.h), in suite order (compute before
 * memory before primitives, so ceilings exist when later benches need
 * them). NULL-terminated; empty before anything is installed. */
const sb_bench *const *sb_registry(void);
/* Installs the benchmarks, NULL-terminated, in run order; those without an
 * impl in this build are left out. The table is copied (up to 256). */
void sb_registry_use(const sb_bench *const *all);
/* The benchmark of that name with an impl on backend (NULL or "": any);
 * NULL when there is none in this build. */
const sb_bench *sb_bench_find(const char *name, const char *backend);
/* This build's implementations of b, NULL-terminated, the first the
 * default: its own (b->impls), then each installed backend's registered
 * ones in the backends' order. For a definition the registry does not
 * hold (a test's), b->impls. */
const sb_impl *const *sb_bench_impls(const sb_bench *b);
/* b's impl on backend (NULL or "": its first); NULL when it has none. */
const sb_impl *sb_impl_find(const sb_bench *b, const char *backend);
/* The suite's points of b on im: the impl's computed ones, else its
 * quick or full, else the definition's (NULL: none). */
const char *sb_suite_spec(const sb_bench *b, const sb_impl *im, sb_suite suite);
/* The parameter `name` of b on im (the impl's own first, then the
 * definition's; im may be NULL); NULL when it takes none of that name. */
const sb_param_def *sb_param_find(const sb_bench *b, const sb_impl *im,
                                  const char *name);
/* Every parameter b takes on im, in out[] (the definition's, each replaced
 * by the impl's of the same name, then the impl's others), terminated by a
 * name == NULL entry; cap entries at most, the terminator included. */
int sb_params_of(const sb_bench *b, const sb_impl *im, sb_param_def *out,
                 int cap);
/* The hooks of a point, the impl's where it has one, else the
 * definition's (0 or NULL where neither has it). */
double sb_point_flops(const sb_point *pt);
double sb_point_bytes(const sb_point *pt);
double sb_point_footprint(const sb_point *pt, const sb_ctx *ctx);
/* The definition's check, then the impl's. */
int sb_point_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err);
/* Decodes p for b into *shape (allocated; NULL without decode) and fills
 * pt; sb_point_release frees what it made. */
int sb_point_make(const sb_bench *b, const sb_impl *im, const sb_params *p,
                  sb_point *pt, sb_err *err);
void sb_point_release(sb_point *pt);
/* The flags of b on im: the definition's and the impl's. */
unsigned sb_impl_flags(const sb_bench *b, const sb_impl *im);
/* Names of areas in registry order, NULL-terminated. */
const char *const *sb_areas(void);

#ifdef __cplusplus
}
#endif

#endif
