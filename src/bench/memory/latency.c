/*
 * latency.c — memory.latency: the time of one load that depends on the
 * load before it, by pointer chasing (chase.h), at working sets from L1 to
 * DRAM (cpu) or HBM (cuda); and the chain and the CPU chase that
 * transfer.latency's host backend shares.
 *
 * One iteration is one hop, so the runner's per-iteration time is the
 * latency. A result is valid when the chase stands where the visiting
 * order says it must after every hop the timed runs took.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <hwloc.h>

#include "bench/memory/chase.h"
#include "bench/memory/memory.h"
#include "solbench/sysinfo.h"
#include "solbench/util.h"

/* ---- the chain
 * ----------------------------------------------------------------- */

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
    if (stride % 8 ||
        (pat == SB_CHASE_PAGE && (stride == 0 || SB_CHASE_PAGE_BYTES % stride)))
        return sb_fail(
            err, SB_EINVAL, "stride=%zu: a multiple of 8 bytes%s is needed",
            stride, pat == SB_CHASE_PAGE ? " that divides a 4 KiB page" : "");
    size_t n = sb_chase_nodes((double)bytes, stride);
    if (n == 0)
        return sb_fail(err, SB_EINVAL,
                       "%zu bytes at stride %zu hold fewer than 2 slots "
                       "(or more than 2^32)",
                       bytes, stride);
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

/* ---- the CPU's hooks
 * ------------------------------------------------------------ */

void sb_chase_cpu_run(void *state, uint64_t iters)
{
    sb_chase_state *s = state;
    s->cur = sb_chase_run(s->cur, iters);
    s->hops += iters;
}

int sb_chase_cpu_verify(void *state, sb_result *r)
{
    sb_chase_state *s = state;
    uint64_t want = sb_chase_expect(&s->chain, s->hops);
    r->valid = (uint64_t)(uintptr_t)s->cur == want;
    sb_result_metric(r, "hops", (double)s->hops, "");
    if (!r->valid)
        sb_result_note(
            r,
            "after %llu hops the chase stands at slot %lld, not "
            "at slot %llu of the visiting order",
            (unsigned long long)s->hops,
            (long long)(((uint64_t)(uintptr_t)s->cur - s->chain.base) /
                        s->chain.stride),
            (unsigned long long)((want - s->chain.base) / s->chain.stride));
    return 0;
}

void sb_chase_cpu_teardown(void *state)
{
    sb_chase_state *s = state;
    if (!s)
        return;
    sb_chase_free(&s->chain);
    if (s->map)
        munmap(s->map, s->map_len);
    free(s);
}

/* The core clock, measured once per process: 0 when uncertain. */
static double core_ghz(void)
{
    static double ghz = -1;
    if (ghz < 0)
        ghz = sb_measure_ghz();
    return ghz;
}

void sb_chase_report_latency(sb_result *r, bool cpu_clock)
{
    if (r->n_samples == 0)
        return;
    sb_result_metric(r, "latency_ns", r->stats.p50 * 1e9, "ns");
    sb_result_metric(r, "latency_ns_best", r->stats.min * 1e9, "ns");
    if (cpu_clock) {
        double ghz = core_ghz();
        if (ghz > 0)
            sb_result_metric(r, "latency_cycles", r->stats.p50 * ghz * 1e9,
                             "cycles");
        else
            sb_result_note(r, "no latency_cycles: the core clock is "
                              "uncertain (sysinfo says why)");
    }
}

/* ---- memory.latency, the definition
 * ------------------------------------------ */

static const sb_param_def lat_params[] = {
    {"size", SB_P_SIZE, "256MiB", 16, 17179869184.0, NULL,
     "bytes of the buffer the chain runs through (the working set)"},
    {"stride", SB_P_INT, "64", 8, 4096, NULL,
     "bytes between slots (a multiple of 8; one cache line by default)"},
    {"pattern", SB_P_STR, "random", 0, 0, "random|page|sequential",
     "visiting order: random over the whole buffer (a TLB miss where pages "
     "run out), page by page in random order with each page's slots in "
     "random order, or sequential (what the prefetchers hide)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

int sb_chase_decode(const sb_bench *b, const sb_params *p, void *out,
                    sb_err *err)
{
    sb_chase_shape *sh = out;
    double size = sb_p_num(p, "size");
    sh->stride = (size_t)sb_p_int(p, "stride");
    sh->pattern =
        (sb_chase_pattern)sb_chase_pattern_from_name(sb_p_str(p, "pattern"));
    if (sh->stride % 8)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter stride=%zu is not a multiple of 8",
                       b->name, sh->stride);
    if (sh->pattern == SB_CHASE_PAGE && SB_CHASE_PAGE_BYTES % sh->stride)
        return sb_fail(err, SB_EINVAL,
                       "%s: parameter stride=%zu with pattern=page: the "
                       "stride must divide a 4 KiB page",
                       b->name, sh->stride);
    sh->nodes = sb_chase_nodes(size, sh->stride);
    if (sh->nodes == 0)
        return sb_fail(err, SB_EINVAL,
                       "%s: size=%s holds fewer than 2 slots of stride %zu",
                       b->name, sb_p_str(p, "size"), sh->stride);
    sh->bytes = sh->nodes * sh->stride;
    return 0;
}

double sb_chase_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_chase_shape *sh = pt->shape;
    /* the buffer, and the visiting order beside it */
    return (double)sh->bytes + 4.0 * (double)sh->nodes;
}

#define HUGE_ALIGN (2u << 20)

int sb_chase_cpu_setup(const sb_chase_shape *sh, bool huge, int numa,
                       sb_chase_state **out, sb_err *err)
{
    sb_chase_state *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    s->huge = huge;
    s->numa = numa;
    s->bytes = sh->bytes;
    /* Its own mapping, so the page policy and the binding hold before
     * any page is touched; huge: room to start on a 2 MiB boundary. */
    s->map_len = sh->bytes + (huge ? HUGE_ALIGN : 0);
    void *m = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        free(s);
        return sb_fail(err, SB_ENOMEM, "cannot map %zu bytes", sh->bytes);
    }
    s->map = m;
    uintptr_t a = (uintptr_t)m;
    if (huge)
        a = (a + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
    s->buf = (void *)a;
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    /* advice: a kernel without transparent huge pages has 4 KiB ones */
    madvise(s->buf, sh->bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
    if (numa >= 0) {
        hwloc_topology_t topo = sb_topology();
        hwloc_obj_t node =
            topo ? hwloc_get_numanode_obj_by_os_index(topo, (unsigned)numa)
                 : NULL;
        if (!node || hwloc_set_area_membind(topo, s->buf, sh->bytes,
                                            node->nodeset, HWLOC_MEMBIND_BIND,
                                            HWLOC_MEMBIND_BYNODESET) != 0) {
            sb_chase_cpu_teardown(s);
            return sb_fail(err, SB_EUNSUP,
                           "cannot bind the buffer to NUMA node %d", numa);
        }
    }
    memset(s->buf, 0, sh->bytes); /* first touch, by the thread that chases */
    int rc = sb_chase_build(s->buf, sh->bytes, sh->stride, sh->pattern,
                            (uint64_t)(uintptr_t)s->buf, SB_CHASE_SEED,
                            &s->chain, err);
    if (rc) {
        sb_chase_cpu_teardown(s);
        return rc;
    }
    s->cur = (const void *)(uintptr_t)sb_chase_expect(&s->chain, 0);
    *out = s;
    return 0;
}

static int lat_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                     sb_err *err)
{
    (void)ctx;
    sb_chase_state *s = NULL;
    int rc = sb_chase_cpu_setup(
        pt->shape, strcmp(sb_p_str(pt->params, "pages"), "huge") == 0, -1, &s,
        err);
    *state = s;
    return rc;
}

/* Which level of this CPU's caches the working set fits in. */
void sb_chase_cpu_level_note(sb_result *r, size_t bytes)
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

static void lat_report(void *state, const sb_point *pt, sb_ctx *ctx,
                       sb_result *r)
{
    (void)ctx;
    (void)pt;
    sb_chase_state *s = state;
    sb_chase_report_latency(r, true);
    sb_chase_cpu_level_note(r, s->bytes);
    sb_result_note(r, "one thread, %zu slots %zu B apart, %s", s->chain.nodes,
                   s->chain.stride,
                   s->huge ? "huge pages asked for"
                           : "4 KiB pages (huge pages refused)");
}

static const sb_param_def lat_cpu_params[] = {
    SB_CHASE_P_PAGES, {NULL, 0, NULL, 0, 0, NULL, NULL}};

static const sb_impl lat_cpu = {
    .backend = "cpu",
    .desc = "one thread chases a pointer chain (lmbench's lat_mem_rd)",
    .params = lat_cpu_params,
    .setup = lat_setup,
    .run = sb_chase_cpu_run,
    .verify = sb_chase_cpu_verify,
    .report = lat_report,
    .teardown = sb_chase_cpu_teardown,
};

#ifdef SB_HAVE_CUDA
extern const sb_impl sb_impl_cuda_memory_latency;
#endif

const sb_bench sb_bench_memory_latency = {
    .name = "memory.latency",
    .area = "memory",
    .desc = "load-to-use latency: a chain of dependent loads, one per hop",
    .params = lat_params,
    .quick = "size=16KiB,512KiB,8MiB,256MiB",
    .full = "size=4KiB..1GiB:x2 pattern=random,page",
    .flags = SB_BF_QUICK | SB_BF_FULL,
    .decode = sb_chase_decode,
    .shape_size = sizeof(sb_chase_shape),
    .footprint = sb_chase_footprint,
    .impls = (const sb_impl *const[]){&lat_cpu,
                                      SB_IMPL_CUDA(sb_impl_cuda_memory_latency)
                                          NULL},
};
