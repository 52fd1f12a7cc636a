/*
 * stretch.c — an LD_PRELOAD shim for scripts/gate-rates.sh --inject: every
 * CLOCK_MONOTONIC reading is multiplied by $SB_STRETCH (default 1.0), so
 * every interval the process times comes out that much longer. The
 * benchmark still runs on the real machine with its real noise; only the
 * time scale is stretched: a steady slowdown of every sample, as a code
 * regression makes one, of a size known in advance.
 *
 *   cc -O2 -shared -fPIC -o stretch.so stretch.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static long double factor = 1.0L;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!real_clock_gettime) {
        const char *e = getenv("SB_STRETCH");
        if (e && atof(e) > 0)
            factor = atof(e);
        real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(
            RTLD_NEXT, "clock_gettime");
        if (!real_clock_gettime)
            return -1;
    }
    int rc = real_clock_gettime(id, ts);
    if (rc == 0 && (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW)) {
        long double t =
            ((long double)ts->tv_sec + ts->tv_nsec * 1e-9L) * factor;
        ts->tv_sec = (time_t)t;
        ts->tv_nsec = (long)((t - (long double)ts->tv_sec) * 1e9L);
    }
    return rc;
}
