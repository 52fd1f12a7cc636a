/*
 * fuzz_common.h — what the libFuzzer harnesses of tests/fuzz share: a
 * NUL-terminated copy of the input, a temporary file with a fixed name per
 * process for the readers that only take a path, a sink for the printing
 * functions, and the abort used for a broken invariant (a finding, not bad
 * input: bad input is the point, and is simply refused by the library).
 *
 * Header-only on purpose: every harness is one source file.
 */
#ifndef SOLBENCH_FUZZ_COMMON_H
#define SOLBENCH_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solbench/library.h"

/* The library's benchmarks registered before libFuzzer starts. */
__attribute__((constructor)) static void fz_library_init(void)
{
    sb_library_init();
}

/* A malloc'ed, NUL-terminated copy of the input (embedded NULs end it). */
static inline char *fz_strdup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* The temporary files of this process: $TMPDIR (else /tmp), a fixed name
 * per harness, process id and suffix ("json": the data readers take a
 * name ending in .json as a path). Up to eight; removed at exit. */
#define FZ_MAX_TMP 8
static char fz__tmp_paths[FZ_MAX_TMP][512];

static void fz__tmp_remove(void)
{
    for (int i = 0; i < FZ_MAX_TMP; i++)
        if (fz__tmp_paths[i][0])
            unlink(fz__tmp_paths[i]);
}

static inline const char *fz_tmp_file(const char *harness, const char *sfx)
{
    char want[512];
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    snprintf(want, sizeof want, "%s/solbench-fuzz-%s-%ld.%s", dir, harness,
             (long)getpid(), sfx);
    for (int i = 0; i < FZ_MAX_TMP; i++) {
        if (strcmp(fz__tmp_paths[i], want) == 0)
            return fz__tmp_paths[i];
        if (!fz__tmp_paths[i][0]) {
            if (i == 0)
                atexit(fz__tmp_remove);
            snprintf(fz__tmp_paths[i], sizeof fz__tmp_paths[i], "%s", want);
            return fz__tmp_paths[i];
        }
    }
    abort(); /* more names than FZ_MAX_TMP: a harness bug */
}

static inline const char *fz_tmp_path(const char *harness)
{
    return fz_tmp_file(harness, "json");
}

/* Writes the input to the temporary file; its path, or NULL when it
 * cannot be written (then the input is skipped). */
static inline const char *fz_write_tmp(const char *harness, const uint8_t *data,
                                       size_t size)
{
    const char *path = fz_tmp_path(harness);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t w = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || w != size)
        return NULL;
    return path;
}

/* Where the printing functions that take a FILE write: /dev/null, opened
 * once. (The writers that take a path accept regular files only: they get
 * fz_tmp_file.) */
static inline FILE *fz_sink(void)
{
    static FILE *f;
    if (!f) {
        f = fopen("/dev/null", "w");
        if (!f)
            abort();
    }
    return f;
}

/* A broken invariant: say which and abort, so libFuzzer keeps the input. */
#define FZ_INVARIANT(cond, ...)                                                \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz invariant failed at %s:%d: %s: ", __FILE__,  \
                    __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

#endif
