/*
 * backend.h — what the core knows of a backend: one descriptor per
 * backend, installed from above (sb_library_init, src/bench/library.c),
 * so the runner, the run document and the machine's facts ask a backend
 * instead of comparing its name, and the core includes no backend.
 *
 * Adding a backend: its folder (src/backend/NAME/) with its impls and one
 * `const sb_backend sb_backend_NAME` listing them, and one line in the
 * list of src/bench/library.c (docs/ARCHITECTURE.md, "A new backend").
 */
#ifndef SOLBENCH_CORE_BACKEND_H
#define SOLBENCH_CORE_BACKEND_H

#include <stdbool.h>

#include <jansson.h>

#include "solbench/bench.h"
#include "solbench/sysinfo.h"

enum {
    /* --backend NAME selects it (cpu, cuda, pjrt; host and mpi come with
     * cpu) */
    SB_BK_SELECT = 1u << 0,
    /* its results measure the host: the host's ceilings and fingerprint */
    SB_BK_HOST = 1u << 1,
    /* its rates are read in TFLOP/s beside GFLOP/s (an accelerator) */
    SB_BK_TFLOPS = 1u << 2,
    /* its impls join a plan only when asked for (--backend NAME, or the
     * backend's own wanted() says so): a plugin is loaded only then */
    SB_BK_ON_REQUEST = 1u << 3,
};

/* One impl a backend registers: the benchmark it implements, by name. */
typedef struct sb_impl_entry {
    const char *bench; /* "compute.gemm" */
    const sb_impl *impl;
} sb_impl_entry;

typedef struct sb_backend {
    const char *name; /* the impls' backend: "cpu", "host", "mpi", ... */
    const char *what; /* one line: what runs there */
    int phase;        /* the plan's order: 0 the host's, then each device */
    unsigned caps;    /* SB_BK_* */
    /* Optional: devices present now; 0 leaves its impls out of a plan
     * that names no backend. NULL: always present. */
    int (*devices)(void);
    /* Optional, with SB_BK_ON_REQUEST: whether a plan that names no
     * backend wants it anyway (a plugin named in the environment). */
    bool (*wanted)(void);
    /* Optional: the machine's facts this backend adds (a device's
     * description, a plugin's platform), when it is wanted. */
    void (*describe)(sb_sysinfo *si);
    /* Optional: the devices, as the fingerprint has them; NULL: none. */
    json_t *(*devices_json)(void);
    /* Optional: what of its software makes a run another configuration
     * (library versions), into the run config's "software". */
    void (*software)(json_t *sw);
    /* Optional: notes on how the machine is set up for it. */
    void (*notes)(const sb_sysinfo *si, json_t *env, json_t *notes);
    /* Optional, a backend that spans processes (MPI): the session. */
    int (*session_begin)(int *argc, char ***argv, bool want, sb_ctx *ctx,
                         sb_err *err);
    void (*session_end)(void);
    void (*session_abort)(const char *msg, int code);
    /* Its impls of the benchmarks, ended by {NULL}: they join each
     * definition's own in the registry (sb_bench_impls), so a backend's
     * impl is its file and one line here, none in the definition. */
    const sb_impl_entry *impls;
} sb_backend;

/* Installs the backends (NULL-terminated); the table is copied. */
void sb_backends_use(const sb_backend *const *all);
/* The installed backends, NULL-terminated. */
const sb_backend *const *sb_backends(void);
/* The backend of that name, or NULL (a document from another build). */
const sb_backend *sb_backend_find(const char *name);
/* Whether results of that backend name measure the host (an empty or
 * unknown name from an old document: cpu's). */
bool sb_backend_is_host(const char *name);

#endif
