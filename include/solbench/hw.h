/*
 * hw.h — the machine model: hardware specs read from data/hw/<name>.json (each
 * with its source), the data folder they live in, and the ceilings
 * (sb_ceilings, bench.h) built from a spec, from a measured run, or from a
 * spec overridden by measurements.
 *
 * Ceiling names beyond those of bench.h: "bw.HBM" (B/s, accelerator main
 * memory), "mem.bytes" (capacity per chip), "host.h2d" (B/s per chip),
 * "net.scaleup.beta_Bps" (per chip, per direction), "net.scaleup.alpha_s",
 * "net.scaleup.domain" (chips reachable over the scale-up fabric),
 * "net.scaleout.beta_Bps" (per chip), "net.scaleout.alpha_s",
 * "price.chip_hour" (USD).
 */
#ifndef SOLBENCH_HW_H
#define SOLBENCH_HW_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/bench.h"
#include "solbench/error.h"
#include "solbench/output.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SB_HW_MAX_PEAKS 8
#define SB_HW_MAX_LEVELS 6
/* The largest spec file read (bytes). */
#define SB_HW_MAX_FILE (64 * 1024)

typedef struct sb_hw_spec {
    char name[48];  /* file stem: "h100-sxm" */
    char title[96]; /* "NVIDIA H100 SXM5 80 GB" */
    char kind[16];  /* "gpu", "tpu", "cpu" */
    int n_peaks;
    struct {
        char dtype[8];
        double flops;
    } peak[SB_HW_MAX_PEAKS];
    int n_levels; /* fastest first; the last one is main memory */
    struct {
        char level[12];
        double bw_Bps;
        double bytes;
    } level[SB_HW_MAX_LEVELS];
    double mem_bytes; /* main memory per chip */
    char scaleup_name[32];
    double scaleup_Bps; /* per chip, per direction */
    double scaleup_alpha_s;
    int scaleup_domain; /* chips in one scale-up domain */
    char host_link[32];
    double host_Bps; /* per chip, host to device */
    char scaleout_name[48];
    double scaleout_Bps_node; /* per node (host) */
    int chips_per_node;
    double scaleout_alpha_s;
    double price_chip_hour; /* USD, 0 when unknown */
    double vector_flops;    /* non-matrix fp32 FLOP/s (elementwise work), 0 */
    double exp_ops;         /* transcendental ops/s (exp in softmax), 0 */
    char source[768];
    char notes[1024];
} sb_hw_spec;

/* The data folder: $SOLBENCH_DATA, else <exe>/../share/solbench/data,
 * else SB_DATADIR (the source tree's data/), the first that exists. */
int sb_datadir(char *out, size_t len);
/* Path of data/<sub>/<name>.json; `name` may also be a path to a file. */
int sb_data_file(const char *sub, const char *name, char *out, size_t len,
                 sb_err *err);

/* Loads data/hw/<name>.json (or a path). Errors name the file and the JSON
 * path of the wrong field. */
int sb_hw_load(const char *name, sb_hw_spec *hw, sb_err *err);
/* Names of the specs in data/hw, sorted; *names is malloc'ed (free each
 * and the array). */
int sb_hw_list(char ***names, int *n, sb_err *err);
/* The spec of data/hw a device's name stands for ("NVIDIA H100 80GB
 * HBM3" -> "h100-sxm"; a TPU by its runtime's device kind, "TPU v5 lite"
 * -> "tpu-v5e"); NULL when none does (PCIe and NVL cards, GH200, other
 * GPUs and TPUs). */
const char *sb_hw_spec_for_device(const char *name);
/* Peak FLOP/s of a dtype, 0 when the spec has none. */
double sb_hw_peak(const sb_hw_spec *hw, const char *dtype);

/* Ceilings from a spec (source "datasheet"). */
void sb_ceil_from_spec(const sb_hw_spec *hw, sb_ceilings *c);
/* Ceilings from a run's results (source "measured"): peak.<dtype> from
 * compute.peak / compute.gemm (best), gemm.<dtype> from compute.gemm,
 * gemv.<dtype> from decode-shaped compute.gemm (the weights' rate), bw.<level>
 * from memory.sweep summaries, bw.triad / bw.read / bw.DRAM from STREAM
 * kernels, host.h2d from transfer results, net.<coll>.alpha_s / beta_Bps from
 * fits. Values already in c are replaced by measured ones. Returns how many
 * were set. */
int sb_ceil_from_run(const sb_run *run, sb_ceilings *c);
/* The same ceilings at what each kernel sustains: every rate at its median
 * sample instead of its best (compute.gemm's GFLOPs, a decode GEMM's
 * weight_GBps, a STREAM kernel's GBps). A prediction under these is one
 * calibrated point by point by the run (validate's), each product's rows
 * at their own median rather than one efficiency for all. */
int sb_ceil_from_run_sustained(const sb_run *run, sb_ceilings *c);
/* The machine whose ceilings a run gives: "cuda" when it has valid CUDA
 * results, else "pjrt" when it has valid results of a PJRT plugin that is
 * not the CPU one, else "host" (cpu and mpi results). sb_ceil_from_run
 * takes that family's results only. */
const char *sb_run_device_family(const sb_run *run);
/* Sustained efficiencies a run shows against the datasheet of the
 * machine it measured (a calibration file's figures, docs/WORKLOAD.md):
 * matmul = compute.gemm's median over the spec's peak of its dtype (the
 * widest-peaked dtype measured, its best size), attention =
 * attention.paged_decode's median over the spec's memory bandwidth,
 * memory = memory.read's median over it; network is not derived (0).
 * Each clamped to [0.01, 1]; 0 where the run has no such result. `src`
 * gets the account. Returns how many were found (>= 1), or SB_EINVAL when
 * none is or the run measured another kind of machine (the host's CPU
 * against an accelerator's spec, or the reverse). */
enum {
    SB_CALIB_MATMUL = 0,
    SB_CALIB_ATTENTION,
    SB_CALIB_MEMORY,
    SB_CALIB_NETWORK,
    SB_CALIB_N
};
/* The matmul efficiency of each dtype a run's GEMMs measured, over that
 * dtype's datasheet peak (a calibration's matmul_by_dtype). */
#define SB_CALIB_MAX_DTYPES 8
typedef struct sb_calib_dtypes {
    int n;
    char dtype[SB_CALIB_MAX_DTYPES][8];
    double eff[SB_CALIB_MAX_DTYPES];
} sb_calib_dtypes;
/* by (NULL: not wanted) receives every dtype's matmul efficiency. */
int sb_calib_from_run(const sb_run *run, const sb_hw_spec *hw,
                      double eff[SB_CALIB_N], sb_calib_dtypes *by, char *src,
                      size_t len, sb_err *err);
/* Main-memory bandwidth: bw.HBM, else bw.DRAM, bw.read, bw.triad (0 when
 * none). *name receives which one. */
double sb_ceil_main_bw(const sb_ceilings *c, const char **name);
/* Best compute peak for a dtype: peak.<dtype>, falling back to the next
 * wider type (bf16 → fp32 → fp64) on machines without it. */
double sb_ceil_peak(const sb_ceilings *c, const char *dtype, const char **name);

/* The machine model of a command: the spec `hw` (NULL: none), then the
 * measured ceilings of `run` (NULL: none; the caller read it, from a file
 * or the store), which replace the spec's figures of the same name. At
 * least one source is required. `spec` (may be NULL) receives the spec;
 * `desc` a one-line account of the sources. */
int sb_machine_load(const char *hw, const sb_run *run, sb_ceilings *c,
                    sb_hw_spec *spec, char *desc, size_t len, sb_err *err);

/* The machine a workload is predicted on, as a command asked for it. */
typedef struct sb_machine_req {
    const char *hw, *results,
        *run; /* --hw, --results, --run; NULL: not given */
    /* report: the workload's own $.hardware (spec, run) first, the
     * command's when it names none; predict (false): the command's
     * --run/--results/--hw first, the workload's when none is given. */
    bool workload_first;
} sb_machine_req;

/* Resolves which spec, results file and stored run the machine is built
 * from, given the request and the workload's own $.hardware.spec and
 * .run (NULL or "" when it has none). A source the workload named is
 * returned as the workload's pointer itself (*hw == wspec, *results ==
 * wrun), so the caller can say where an error came from. */
void sb_machine_pick(const sb_machine_req *req, const char *wspec,
                     const char *wrun, const char **hw, const char **results,
                     const char **run);

#ifdef __cplusplus
}
#endif

#endif
