/*
 * error.h — error codes and the error record that carries context from the
 * place an error is found to the one place that prints it (the CLI).
 *
 * Every fallible function returns 0 on success or a negative SB_E* code, and
 * fills an sb_err with one human line: what went wrong and where.
 */
#ifndef SOLBENCH_ERROR_H
#define SOLBENCH_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SB_OK = 0,
    SB_EINVAL = -1,   /* bad usage or bad input: CLI exit code 2 */
    SB_ENOMEM = -2,   /* an allocation failed */
    SB_EIO = -3,      /* a file or database could not be read or written */
    SB_EUNSUP = -4,   /* not supported on this machine or build */
    SB_EVALID = -5,   /* a result failed its verification: exit code 1 */
    SB_EMISMATCH = -6 /* runs that must not be compared */
};

typedef struct sb_err {
    int code;
    char msg[512];
} sb_err;

/* Sets err (when non-NULL) and returns code, so callers can write
 * `return sb_fail(err, SB_EINVAL, "parameter %s: ...", name);`. */
int sb_fail(sb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Copies `in` into out (len bytes, the NUL included) with every control
 * character escaped — "\n", "\t", "\r", else "\xNN" — so that text a
 * user typed cannot break an error's one line. Stops before an escape
 * that would not fit. Returns the length written. sb_fail applies it to
 * every message. */
size_t sb_err_escape(char *out, size_t len, const char *in);

/* The CLI exit code for an error code: 2 for bad input, 1 for a failed
 * check, 2 for anything else that stops a command. */
int sb_exit_code(int code);

#ifdef __cplusplus
}
#endif

#endif
