/*
 * error.c — filling an sb_err and mapping error codes to exit codes.
 */
#include <stdio.h>

#include "solbench/error.h"

int sb_fail(sb_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int sb_exit_code(int code)
{
    switch (code) {
    case SB_OK: return 0;
    case SB_EVALID: return 1;
    default: return 2;
    }
}
