/*
 * error.c — filling an sb_err and mapping error codes to exit codes.
 *
 * An error is one line. Its message often quotes what the user typed (a
 * parameter, a path, a key), and a newline or another control character
 * in that text would break the line, or move the cursor of a terminal:
 * every message is therefore stored with its control characters escaped
 * (sb_err_escape), and the CLI's printers escape what they print again.
 */
#include <stdio.h>

#include "solbench/error.h"

size_t sb_err_escape(char *out, size_t len, const char *in)
{
    size_t n = 0;
    if (len == 0)
        return 0;
    for (; *in; in++) {
        unsigned char c = (unsigned char)*in;
        char esc[5];
        size_t k;
        if (c >= 0x20 && c != 0x7f) {
            esc[0] = (char)c;
            k = 1;
        } else if (c == '\n' || c == '\t' || c == '\r') {
            esc[0] = '\\';
            esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
            k = 2;
        } else {
            snprintf(esc, sizeof esc, "\\x%02x", c);
            k = 4;
        }
        if (n + k >= len) /* an escape is never cut in two */
            break;
        for (size_t i = 0; i < k; i++)
            out[n++] = esc[i];
    }
    out[n] = '\0';
    return n;
}

int sb_fail(sb_err *err, int code, const char *fmt, ...)
{
    if (err) {
        char raw[sizeof err->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        sb_err_escape(err->msg, sizeof err->msg, raw);
        err->code = code;
    }
    return code;
}

int sb_exit_code(int code)
{
    switch (code) {
    case SB_OK:
        return 0;
    case SB_EVALID:
        return 1;
    default:
        return 2;
    }
}
