/*
 * chase.c — the pointer chain of memory.latency and transfer.latency
 * (solbench/chase.h): its layout, visiting orders, expected positions and
 * the CPU's chase loop; the definitions' decode and footprint; the
 * latency metrics every backend reports.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/chase.h"
#include "solbench/sysinfo.h"
#include "solbench/util.h"

int sb_chase_pattern_from_name(const char *name)
{
    if (strcmp(name, "random") == 0)
        return SB_CHASE_RANDOM;
    if (strcmp(name, "page") == 0)
        return SB_CHASE_PAGE;
    if (strcmp(name, "sequential") == 0)
        return SB_CHASE_SEQUENTIAL;
    return -1;
}

size_t sb_chase_nodes(double bytes, size_t stride)
{
    if (stride == 0 || !(bytes > 0))
        return 0;
    double n = floor(bytes / (double)stride);
    return n >= 2 && n <= (double)UINT32_MAX ? (size_t)n : 0;
}

int sb_chase_layout(double bytes, size_t stride, sb_chase_pattern pat,
                    sb_chase_shape *sh, sb_err *err)
{
    if (stride == 0 || stride % 8)
        return sb_fail(err, SB_EINVAL, "stride=%zu is not a multiple of 8",
                       stride);
    if (pat == SB_CHASE_PAGE && SB_CHASE_PAGE_BYTES % stride)
        return sb_fail(err, SB_EINVAL,
                       "stride=%zu with pattern=page: the stride must divide "
                       "a 4 KiB page",
                       stride);
    size_t n = sb_chase_nodes(bytes, stride);
    if (n == 0)
        return sb_fail(err, SB_EINVAL,
                       "%.0f bytes hold fewer than 2 slots of stride %zu (or "
                       "more than 2^32)",
                       bytes, stride);
    sh->stride = stride;
    sh->pattern = pat;
    sh->nodes = n;
    sh->bytes = n * stride;
    return 0;
}

/* Uniform in [0, n). */
static uint32_t below(uint64_t *rng, size_t n)
{
    return (uint32_t)(((unsigned __int128)sb_rng_next(rng) * n) >> 64);
}

static void shuffle(uint32_t *v, size_t n, uint64_t *rng)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = below(rng, i);
        uint32_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

int sb_chase_build(void *buf, size_t bytes, size_t stride, sb_chase_pattern pat,
                   uint64_t base, uint64_t seed, sb_chase *c, sb_err *err)
{
    memset(c, 0, sizeof *c);
    sb_chase_shape sh;
    int rc = sb_chase_layout((double)bytes, stride, pat, &sh, err);
    if (rc)
        return rc;
    size_t n = sh.nodes;
    uint32_t *order = malloc(n * sizeof *order);
    if (!order)
        return sb_fail(err, SB_ENOMEM, "out of memory (%zu slots)", n);
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    uint64_t rng = seed;
    if (pat == SB_CHASE_RANDOM) {
        shuffle(order, n, &rng);
    } else if (pat == SB_CHASE_PAGE) {
        /* The pages in a random order, then each page's slots shuffled
         * where they stand. */
        size_t per = SB_CHASE_PAGE_BYTES / stride;
        size_t pages = (n + per - 1) / per;
        uint32_t *pg = malloc(pages * sizeof *pg);
        if (!pg) {
            free(order);
            return sb_fail(err, SB_ENOMEM, "out of memory (%zu pages)", pages);
        }
        for (size_t i = 0; i < pages; i++)
            pg[i] = (uint32_t)i;
        shuffle(pg, pages, &rng);
        size_t k = 0;
        for (size_t i = 0; i < pages; i++) {
            size_t first = (size_t)pg[i] * per;
            size_t cnt = first + per <= n ? per : n - first;
            for (size_t j = 0; j < cnt; j++)
                order[k + j] = (uint32_t)(first + j);
            shuffle(order + k, cnt, &rng);
            k += cnt;
        }
        free(pg);
    }
    unsigned char *b = buf;
    for (size_t j = 0; j < n; j++) {
        size_t next = order[j + 1 < n ? j + 1 : 0];
        uint64_t v = base + (uint64_t)next * stride;
        memcpy(b + (size_t)order[j] * stride, &v, sizeof v);
    }
    c->nodes = n;
    c->stride = stride;
    c->base = base;
    c->order = order;
    return 0;
}

void sb_chase_free(sb_chase *c)
{
    free(c->order);
    c->order = NULL;
}

uint64_t sb_chase_expect(const sb_chase *c, uint64_t hops)
{
    return c->base + (uint64_t)c->order[hops % c->nodes] * c->stride;
}

const void *sb_chase_run(const void *p, uint64_t hops)
{
#define HOP p = *(const void *const *)p
    for (; hops >= 8; hops -= 8) {
        HOP;
        HOP;
        HOP;
        HOP;
        HOP;
        HOP;
        HOP;
        HOP;
    }
    while (hops--)
        HOP;
#undef HOP
    return p;
}

void sb_chase_report_latency(sb_result *r, bool cpu_clock)
{
    if (r->n_samples == 0)
        return;
    sb_result_metric(r, "latency_ns", r->stats.p50 * 1e9, "ns");
    sb_result_metric(r, "latency_ns_best", r->stats.min * 1e9, "ns");
    if (cpu_clock) {
        /* the process's one measurement (the run's fingerprint took it) */
        double ghz = sb_core_clock_once()->ghz;
        if (ghz > 0)
            sb_result_metric(r, "latency_cycles", r->stats.p50 * ghz * 1e9,
                             "cycles");
        else
            sb_result_note(r, "no latency_cycles: the core clock is "
                              "uncertain (sysinfo says why)");
    }
}

double sb_chase_level_bytes(const struct sb_mem_caches *mc, const char *level)
{
    if (strcmp(level, "DRAM") == 0) {
        double llc = mc->nlevels ? mc->size[mc->nlevels] : 0;
        return 4 * llc > 256.0 * 1048576 ? 4 * llc : 256.0 * 1048576;
    }
    int l = level[0] == 'L' ? atoi(level + 1) : 0;
    if (l < 1 || l > mc->nlevels || l > 4 || !(mc->size[l] > 0))
        return 0;
    return mc->size[l] / 2;
}

const char *sb_chase_quick_sizes(const struct sb_mem_caches *mc, char *buf,
                                 size_t len)
{
    static const char *levels[] = {"L1", "L2", "L3", "DRAM"};
    size_t at = (size_t)snprintf(buf, len, "size=");
    for (int i = 0; i < 4 && at < len; i++) {
        double b = sb_chase_level_bytes(mc, levels[i]);
        if (b > 0)
            at += (size_t)snprintf(buf + at, len - at, "%s%.0f",
                                   at > 5 ? "," : "", b);
    }
    return buf;
}

int sb_chase_decode(const sb_bench *b, const sb_params *p, void *out,
                    sb_err *err)
{
    int rc = sb_chase_layout(
        sb_p_num(p, "size"), (size_t)sb_p_int(p, "stride"),
        (sb_chase_pattern)sb_chase_pattern_from_name(sb_p_str(p, "pattern")),
        out, err);
    if (rc) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return sb_fail(err, rc, "%s: parameter %.400s", b->name, why);
    }
    return 0;
}

double sb_chase_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_chase_shape *sh = pt->shape;
    /* the buffer, and the visiting order beside it */
    return (double)sh->bytes + 4.0 * (double)sh->nodes;
}

/* Which level of this CPU's caches the working set fits in. */
void sb_chase_level_note(sb_result *r, size_t bytes)
{
    sb_mem_caches mc;
    sb_mem_caches_read(&mc);
    char a[32], b[32];
    sb_fmt_size((double)bytes, a, sizeof a);
    for (int l = 1; l <= mc.nlevels; l++) {
        if (mc.size[l] > 0 && (double)bytes <= mc.size[l]) {
            sb_result_note(r, "working set %s fits L%d (%s)", a, l,
                           sb_fmt_size(mc.size[l], b, sizeof b));
            return;
        }
    }
    double llc = mc.nlevels ? mc.size[mc.nlevels] : 0;
    if (llc > 0)
        sb_result_note(
            r, "working set %s is %.3gx the last-level cache (%s): %s", a,
            (double)bytes / llc, sb_fmt_size(llc, b, sizeof b),
            (double)bytes >= 4 * llc ? "a DRAM figure" : "partly cached");
}
