/*
 * dl.h — a library opened with dlopen where it is first needed, its
 * functions read into a table of pointers (dl.c).
 *
 * The heavy libraries behind a few benchmarks (cuBLAS, cuBLASLt, NCCL,
 * oneDNN) are not linked: linked, they are mapped and relocated for every
 * command (cuBLASLt alone ~200 MB for `solbench --help`), and the binary
 * would not start where one is absent. A user of this module keeps
 *
 *     static sb_dl_lib lib = SB_DL_LIB("oneDNN", "libdnnl.so.2", LIBDIR);
 *     static struct { __typeof__(dnnl_version) *dnnl_version; ... } fn;
 *     static const char *const names[] = {"dnnl_version", ...};
 *
 * (an X-macro list writes both in one order) and calls
 * sb_dl_load(&lib, names, &fn, count, err) before the first use.
 */
#ifndef SOLBENCH_CORE_DL_H
#define SOLBENCH_CORE_DL_H

#include <pthread.h>
#include <stddef.h>

#include "solbench/error.h"

typedef struct sb_dl_lib {
    const char *name;   /* for messages: "cuBLASLt" */
    const char *soname; /* what dlopen is asked for: "libcublasLt.so.13" */
    const char *libdir; /* the build's folder of it, tried second; or NULL */
    pthread_mutex_t lock;
    int state;      /* 0 untried, 1 loaded, -1 failed */
    char path[512]; /* the file loaded (the loader's link map) */
    char why[512];  /* the failure, one line, kept for later callers */
} sb_dl_lib;

#define SB_DL_LIB(name, soname, libdir)                                        \
    {                                                                          \
        (name), (soname), (libdir), PTHREAD_MUTEX_INITIALIZER, 0, "", ""       \
    }

/* Opens l once a process (later calls return the first outcome) and reads
 * the n functions of `names` into `table`: a struct of n function pointers
 * in the same order (sizeof table == n * sizeof(void *)). 0, or SB_EUNSUP
 * with "oneDNN (libdnnl.so.2) does not load: <dlerror>" or "... lacks
 * <symbol>". Thread-safe. */
int sb_dl_load(sb_dl_lib *l, const char *const *names, void *table, size_t n,
               sb_err *err);

/* The loaded file's path, or "" before a successful sb_dl_load. */
const char *sb_dl_path(const sb_dl_lib *l);

/* A library a user names (a plugin) loaded first in a forked child that
 * then exits: dlopen runs the object's relocations and initialisers, and
 * a damaged or hostile object can crash or hang there, past what the
 * file checks see. 0 when the child loaded it and found `symbol` (NULL:
 * any), or failed in dlopen itself (the caller's own dlopen reports
 * that); SB_EINVAL with one line when the child died of a signal, ended
 * with another status (a sanitizer's report of a crash is an exit) or did
 * not finish within timeout_s. */
int sb_dl_probe(const char *path, const char *symbol, double timeout_s,
                sb_err *err);

#endif
