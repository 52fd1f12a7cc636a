/*
 * ceilings.c — the measured ceilings of a run (peaks, bandwidths), keyed by
 * name, which later benchmarks and the roofline read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* M of ceiling i when it is base"@M" with a value > 0, else 0 */
static double sb__rows_of(const sb_ceilings *c, int i, const char *base,
                          size_t bl)
{
    const char *nm = c->c[i].name;
    if (strncmp(nm, base, bl) != 0 || nm[bl] != '@' || !(c->c[i].value > 0))
        return 0;
    char *end = NULL;
    double m = strtod(nm + bl + 1, &end);
    return end && !*end && m > 0 ? m : 0;
}

double sb_ceil_rows_max(const sb_ceilings *c, const char *base)
{
    size_t bl = strlen(base);
    double most = 0;
    for (int i = 0; i < c->n; i++)
        most = fmax(most, sb__rows_of(c, i, base, bl));
    return most;
}

double sb_ceil_at_rows(const sb_ceilings *c, const char *base, double rows,
                       char *name_out, size_t len)
{
    size_t bl = strlen(base);
    int below = -1, above = -1, least = -1;
    double m_below = 0, m_above = 0, m_least = 0;
    for (int i = 0; i < c->n; i++) {
        double m = sb__rows_of(c, i, base, bl);
        if (!(m > 0))
            continue;
        if (m <= rows && (below < 0 || m > m_below)) {
            below = i;
            m_below = m;
        }
        if (m > rows && (above < 0 || m < m_above)) {
            above = i;
            m_above = m;
        }
        if (least < 0 || m < m_least) {
            least = i;
            m_least = m;
        }
    }
    int k = below >= 0 ? below : least;
    if (k < 0)
        return 0;
    /* between two measured row counts: linear between them */
    if (below >= 0 && above >= 0 && rows > m_below) {
        double f = (rows - m_below) / (m_above - m_below);
        if (name_out)
            snprintf(name_out, len, "%s..%.0f", c->c[below].name, m_above);
        return c->c[below].value + f * (c->c[above].value - c->c[below].value);
    }
    if (name_out)
        snprintf(name_out, len, "%s", c->c[k].name);
    return c->c[k].value;
}

double sb_ceil_get(const sb_ceilings *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->c[i].name, name) == 0)
            return c->c[i].value;
    return 0.0;
}

const char *sb_ceil_source(const sb_ceilings *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->c[i].name, name) == 0)
            return c->c[i].source;
    return "";
}

const char *sb_ceil_unit(const char *name)
{
    /* a product's cost a call */
    if (strncmp(name, "gemv.call.", 10) == 0 ||
        strncmp(name, "gemm.call.", 10) == 0 || strcmp(name, "attn.call") == 0)
        return "s";
    if (strncmp(name, "peak.", 5) == 0 || strncmp(name, "gemm.", 5) == 0 ||
        strcmp(name, "vector.peak") == 0)
        return "FLOP/s";
    if (strcmp(name, "vector.exp") == 0)
        return "op/s";
    if (strncmp(name, "bw.", 3) == 0 || strncmp(name, "gemv.", 5) == 0 ||
        strncmp(name, "host.", 5) == 0 || strstr(name, "Bps"))
        return "B/s";
    if (strcmp(name, "noise.rate") == 0)
        return "1/s";
    if (strstr(name, "alpha") || strncmp(name, "noise.", 6) == 0)
        return "s";
    if (strcmp(name, "mem.bytes") == 0)
        return "B";
    return "";
}
