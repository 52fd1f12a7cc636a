/*
 * sysinfo.h — the machine fingerprint: CPU, topology, caches, memory, ISA,
 * measured clock, OS, compiler, libraries, performance-relevant environment,
 * and a stable hash of the parts that define the machine.
 */
#ifndef SOLBENCH_SYSINFO_H
#define SOLBENCH_SYSINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "solbench/json_fwd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sb_isa {
    bool sse42, avx, avx2, fma, avx512f, avx512bw, avx512vl, avx512_bf16,
        avx512_fp16, amx_tile, amx_bf16, amx_int8;
} sb_isa;

/* Methods agreeing within this fraction give a clock; beyond it the clock
 * is uncertain and no figure is given. */
#define SB_CLOCK_AGREE 0.05

/* The core clock of the calling thread's core, by every method this
 * machine offers (docs/SYSINFO.md): each figure in GHz, 0 where the
 * method is not available. */
typedef struct sb_core_clock {
    double ghz;      /* the mean of the methods when they agree; 0 when
                        uncertain or none ran */
    double ghz_add;  /* dependent `add reg, reg` chain (1 cycle each) */
    double ghz_mul;  /* dependent integer multiply chain */
    double ghz_perf; /* hardware cycle counter over the add runs */
    int mul_latency; /* cycles per multiply assumed; 0 = not used */
    int methods;     /* how many of the three ran */
    double spread;   /* largest / smallest - 1 over the methods */
    bool uncertain;  /* two or more methods disagree beyond SB_CLOCK_AGREE */
    char method[96]; /* in words: which methods, agreeing or not */
} sb_core_clock;

/* The devices of a PJRT plugin (docs/PJRT.md), when a run uses one. */
typedef struct sb_pjrt_info {
    char platform[32];          /* "cpu", "tpu", "cuda" */
    char platform_version[128]; /* the client's: the runtime's version */
    char device_kind[96];       /* the first device's */
    int devices;                /* addressable devices */
    int api_major, api_minor;   /* the plugin's PJRT C API */
    char xla_version[32];       /* plugin attributes; "" when absent */
    char stablehlo_version[32];
    double device_mem_bytes; /* device 0's allocatable memory; 0: unknown */
    char plugin[512];        /* the path loaded */
    char error[256];         /* why there is none ("" when loaded) */
} sb_pjrt_info;

typedef struct sb_sysinfo {
    char cpu_model[128];
    char vendor[32];
    int sockets, cores, threads; /* physical cores, hardware threads */
    int numa_nodes;
    double cache_bytes[5];  /* [1]=L1d per core, [2]=L2, [3]=L3 (per
                               instance); 0 if unknown */
    int cache_shared_by[5]; /* cores sharing one instance */
    double mem_bytes;
    sb_isa isa;
    double ghz_measured; /* agreed core clock, one core; 0 when
                            not measured or uncertain */
    char os[64], kernel[128], hostname[128];
    char compiler[96], cflags[256];
    char openblas_core[48], openblas_config[160];
    int openblas_threads;
    char hwloc_version[24], jansson_version[24];
    /* Identification beyond the model name, and where the figures above
     * came from. */
    char arch[32];                              /* uname machine: "x86_64" */
    int cpu_family, cpu_model_id, cpu_stepping; /* cpuid; -1 unknown */
    char hypervisor[16];    /* cpuid hypervisor vendor; "" bare metal */
    int cache_instances[5]; /* how many instances of each level */
    double numa_mem_bytes;  /* sum over NUMA nodes (hwloc) */
    sb_isa isa_cpu;         /* what the CPU implements, OS or not */
    uint64_t xcr0;          /* OS-enabled register state (XGETBV) */
    char sqlite_version[24];
    char mpi_version[128]; /* first line; "" without MPI */
    sb_core_clock clock;   /* every method's figure (when measured) */
    /* A run on a PJRT plugin: its devices are part of the machine (and of
     * the fingerprint, when the plugin loaded). */
    bool has_pjrt;
    sb_pjrt_info pjrt;
} sb_sysinfo;

/* Adds what each backend a run under --backend `want` (NULL or "":
 * every one present) uses says of its devices: a PJRT plugin's platform
 * and devices (loading the plugin: $SOLBENCH_PJRT_PLUGIN, else the
 * build's default; si->has_pjrt, and si->pjrt.error says why not). */
void sb_sysinfo_add_backends(sb_sysinfo *si, const char *want);

/* Fills si; with measure_clock, the clock is the process's one
 * measurement (sb_core_clock_once). */
void sb_sysinfo_collect(sb_sysinfo *si, bool measure_clock);
void sb_isa_detect(sb_isa *isa);
/* Measures the core clock of the calling thread's core (50 ms, up to
 * 300 ms while the methods disagree). */
void sb_core_clock_measure(sb_core_clock *c);
/* The process's one measurement, taken at the first call: the run's
 * fingerprint and the figures that convert to cycles share it. */
const sb_core_clock *sb_core_clock_once(void);
/* Fills c from given method figures (0 = not available) and decides as
 * sb_core_clock_measure does: for tests and for documents read back. */
void sb_core_clock_from_methods(sb_core_clock *c, double add, double mul,
                                double perf);
/* sb_core_clock_measure's agreed figure: GHz, or 0 when uncertain. */
double sb_measure_ghz(void);

/* The fingerprint as JSON (new reference). Includes "fingerprint": a hex
 * hash of CPU model, topology, caches, memory (rounded to GiB), ISA and
 * OS kernel — not of clocks, load or environment. */
json_t *sb_sysinfo_json(const sb_sysinfo *si);
/* FNV-1a 64-bit hex of a string. */
void sb_hash_hex(const char *s, char out[17]);
/* The canonical string the fingerprint hashes (see docs/SYSINFO.md).
 * Returns the length it needs, like snprintf. */
int sb_sysinfo_canonical(const sb_sysinfo *si, char *out, int len);
/* A readable summary of a fingerprint document (from sb_sysinfo_json or
 * the "system" of a stored run). */
void sb_sysinfo_print(FILE *f, const json_t *doc);

/* Version of solbench and the git commit it was built from. */
const char *sb_version(void);
const char *sb_git_commit(void);

#ifdef __cplusplus
}
#endif

#endif
