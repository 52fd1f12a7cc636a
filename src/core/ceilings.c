/*
 * ceilings.c — the measured ceilings of a run (peaks, bandwidths), keyed by
 * name, which later benchmarks and the roofline read.
 */
#include <stdio.h>
#include <string.h>

#include "solbench/bench.h"

void sb_ceil_set(sb_ceilings *c, const char *name, double value,
                 const char *source)
{
    int i = 0;
    while (i < c->n && strcmp(c->c[i].name, name) != 0)
        i++;
    if (i == c->n) {
        if (c->n >= SB_MAX_CEILINGS)
            return;
        c->n++;
    }
    snprintf(c->c[i].name, sizeof c->c[i].name, "%s", name);
    snprintf(c->c[i].source, sizeof c->c[i].source, "%s",
             source ? source : "measured");
    c->c[i].value = value;
}

double sb_ceil_get(const sb_ceilings *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->c[i].name, name) == 0)
            return c->c[i].value;
    return 0.0;
}

const char *sb_ceil_unit(const char *name)
{
    if (strncmp(name, "peak.", 5) == 0 || strncmp(name, "gemm.", 5) == 0 ||
        strcmp(name, "vector.peak") == 0)
        return "FLOP/s";
    if (strcmp(name, "vector.exp") == 0)
        return "op/s";
    if (strncmp(name, "bw.", 3) == 0 || strncmp(name, "gemv.", 5) == 0 ||
        strncmp(name, "host.", 5) == 0 || strstr(name, "Bps"))
        return "B/s";
    if (strstr(name, "alpha"))
        return "s";
    if (strcmp(name, "mem.bytes") == 0)
        return "B";
    return "";
}
