/*
 * test_chase.c — pointer chasing (solbench/chase.h, backend/cpu/chase_cpu.h):
 * every pattern links all slots into one cycle in the order it records; the
 * page pattern leaves a page only when its slots are done; a chase on this CPU
 * stands where the order says after any number of hops; a chain that
 * skips a slot fails memory.latency's verification; bad strides and sizes
 * are refused.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/chase_cpu.h"
#include "bench/memory/memory.h"
#include "solbench/chase.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/util.h"

extern const sb_bench sb_bench_memory_latency;

static uint64_t slot_value(const void *buf, size_t off)
{
    uint64_t v;
    memcpy(&v, (const char *)buf + off, sizeof v);
    return v;
}

/* The chain in buf is the cycle c->order says, and every slot is in it. */
static void check_cycle(const void *buf, const sb_chase *c, uint64_t base)
{
    unsigned char *seen = calloc(c->nodes, 1);
    size_t dup = 0, badlink = 0;
    for (size_t j = 0; j < c->nodes; j++) {
        uint32_t at = c->order[j];
        dup += at >= c->nodes || seen[at]++;
        uint64_t want =
            base + (uint64_t)c->order[(j + 1) % c->nodes] * c->stride;
        badlink += slot_value(buf, (size_t)at * c->stride) != want;
    }
    CHECK(dup == 0);
    CHECK(badlink == 0);
    free(seen);
}

static void test_patterns(void)
{
    static const struct {
        size_t bytes, stride;
        sb_chase_pattern pat;
    } cases[] = {
        {64 * 1024, 64, SB_CHASE_RANDOM},     {64 * 1024, 64, SB_CHASE_PAGE},
        {64 * 1024, 64, SB_CHASE_SEQUENTIAL}, {10000, 8, SB_CHASE_PAGE},
        {3 * 4096 + 640, 128, SB_CHASE_PAGE}, {1 << 20, 4096, SB_CHASE_PAGE},
        {1 << 20, 256, SB_CHASE_RANDOM},      {16, 8, SB_CHASE_RANDOM},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t bytes = cases[k].bytes, stride = cases[k].stride;
        void *buf = sb_alloc_aligned(bytes);
        memset(buf, 0, bytes);
        sb_chase c;
        sb_err err = {0};
        uint64_t base = (uint64_t)(uintptr_t)buf;
        CHECK(sb_chase_build(buf, bytes, stride, cases[k].pat, base, 42, &c,
                             &err) == 0);
        CHECK(c.nodes == bytes / stride);
        check_cycle(buf, &c, base);

        /* the chase on this CPU agrees with the order at any count */
        const void *start = (const void *)(uintptr_t)sb_chase_expect(&c, 0);
        uint64_t counts[] = {0, 1,           7,       8,
                             9, c.nodes - 1, c.nodes, 3 * c.nodes + 5};
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            CHECK((uint64_t)(uintptr_t)sb_chase_run(start, counts[i]) ==
                  sb_chase_expect(&c, counts[i]));

        size_t per = SB_CHASE_PAGE_BYTES / stride, pages = 0, steps = 0;
        for (size_t j = 0; j < c.nodes; j++) {
            size_t a = c.order[j], b = c.order[(j + 1) % c.nodes];
            pages += a / per != b / per;
            steps += b == a + 1;
        }
        size_t want_pages = (c.nodes + per - 1) / per;
        if (cases[k].pat == SB_CHASE_PAGE)
            /* each page entered once: as many page changes as pages */
            CHECK(pages == (want_pages > 1 ? want_pages : 0));
        if (cases[k].pat == SB_CHASE_SEQUENTIAL)
            CHECK(steps == c.nodes - 1);
        if (cases[k].pat == SB_CHASE_RANDOM && c.nodes >= 1024)
            CHECK(steps < c.nodes / 64); /* not a walk the prefetcher sees */
        sb_chase_free(&c);
        sb_free_aligned(buf);
    }
}

/* A chain built for another address space (a device's view of the
 * buffer) holds that space's addresses. */
static void test_base(void)
{
    uint64_t buf[64] = {0};
    sb_chase c;
    sb_err err = {0};
    const uint64_t base = 0x7f0000000000ull;
    CHECK(sb_chase_build(buf, sizeof buf, 16, SB_CHASE_RANDOM, base, 7, &c,
                         &err) == 0);
    CHECK(c.nodes == 32);
    check_cycle(buf, &c, base);
    CHECK(sb_chase_expect(&c, 32) == sb_chase_expect(&c, 0));
    CHECK(sb_chase_expect(&c, 0) >= base &&
          sb_chase_expect(&c, 0) < base + sizeof buf);
    sb_chase_free(&c);
}

static void test_refusals(void)
{
    uint64_t buf[16];
    sb_chase c;
    sb_err err = {0};
    CHECK(sb_chase_build(buf, sizeof buf, 12, SB_CHASE_RANDOM, 0, 1, &c,
                         &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "multiple of 8") != NULL);
    err = (sb_err){0};
    CHECK(sb_chase_build(buf, 8, 8, SB_CHASE_RANDOM, 0, 1, &c, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "fewer than 2") != NULL);
    err = (sb_err){0};
    CHECK(sb_chase_build(buf, sizeof buf, 8192, SB_CHASE_PAGE, 0, 1, &c,
                         &err) == SB_EINVAL);
    /* a page pattern's groups are whole pages: the stride divides one */
    err = (sb_err){0};
    CHECK(sb_chase_build(buf, sizeof buf, 24, SB_CHASE_PAGE, 0, 1, &c, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "divide a 4 KiB page") != NULL);
    CHECK(sb_chase_build(buf, sizeof buf, 24, SB_CHASE_RANDOM, 0, 1, &c,
                         &err) == 0);
    sb_chase_free(&c);
    CHECK(sb_chase_nodes(1e300, 8) == 0);
    CHECK(sb_chase_nodes(64, 8) == 8);
    CHECK(sb_chase_pattern_from_name("page") == SB_CHASE_PAGE);
    CHECK(sb_chase_pattern_from_name("zigzag") == -1);

    /* the definition refuses the same, before anything is allocated */
    const sb_bench *b = &sb_bench_memory_latency;
    sb_params p;
    sb_point pt;
    err = (sb_err){0};
    CHECK(sb_test_point(b, "stride=12", &p, &err) == 0);
    CHECK(sb_point_make(b, sb_test_cpu(b), &p, &pt, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "stride=12") != NULL);
    err = (sb_err){0};
    CHECK(sb_test_point(b, "size=64 stride=64", &p, &err) == 0);
    CHECK(sb_point_make(b, sb_test_cpu(b), &p, &pt, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "fewer than 2 slots") != NULL);
    err = (sb_err){0};
    CHECK(sb_test_point(b, "stride=24 pattern=page", &p, &err) == 0);
    CHECK(sb_point_make(b, sb_test_cpu(b), &p, &pt, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "must divide a 4 KiB page") != NULL);
    /* the footprint is the buffer and its order */
    CHECK(sb_test_point(b, "size=1MiB", &p, &err) == 0);
    CHECK_NEAR(sb_test_footprint(b, &p, NULL), 1048576.0 + 4 * 16384.0, 0);
}

/* The working set of a cache level, from the sizes the OS reports: half
 * of one instance, DRAM 4x the last level and at least 256 MiB, nothing
 * for a level the machine lacks; the cpu quick suite is those sizes. */
static void test_levels(void)
{
    sb_mem_caches mc;
    memset(&mc, 0, sizeof mc);
    mc.nlevels = 3;
    mc.size[1] = 48 * 1024.0;
    mc.size[2] = 1048576.0;
    mc.size[3] = 32 * 1048576.0;
    CHECK_NEAR(sb_chase_level_bytes(&mc, "L1"), 24 * 1024.0, 0);
    CHECK_NEAR(sb_chase_level_bytes(&mc, "L2"), 524288.0, 0);
    CHECK_NEAR(sb_chase_level_bytes(&mc, "L3"), 16 * 1048576.0, 0);
    CHECK_NEAR(sb_chase_level_bytes(&mc, "DRAM"), 256 * 1048576.0, 0);
    mc.size[3] = 96 * 1048576.0; /* a stacked L3 */
    CHECK_NEAR(sb_chase_level_bytes(&mc, "DRAM"), 384 * 1048576.0, 0);
    mc.nlevels = 2; /* no L3 reported (an Arm part with only L2) */
    CHECK(sb_chase_level_bytes(&mc, "L3") == 0);
    CHECK_NEAR(sb_chase_level_bytes(&mc, "DRAM"), 256 * 1048576.0, 0);
    CHECK(sb_chase_level_bytes(&mc, "L0") == 0);
    CHECK(sb_chase_level_bytes(&mc, "L5") == 0);

    /* the quick suite's sizes: every level reported, then DRAM */
    char spec[128];
    CHECK(strcmp(sb_chase_quick_sizes(&mc, spec, sizeof spec),
                 "size=24576,524288,268435456") == 0);
    mc.nlevels = 0; /* nothing reported: DRAM alone */
    CHECK(strcmp(sb_chase_quick_sizes(&mc, spec, sizeof spec),
                 "size=268435456") == 0);
    /* on this machine, as the cpu impl gives it to the runner */
    const sb_impl *im = sb_test_cpu(&sb_bench_memory_latency);
    CHECK(im->suite_spec != NULL);
    sb_mem_caches_read(&mc);
    CHECK(strcmp(im->suite_spec(SB_SUITE_QUICK),
                 sb_chase_quick_sizes(&mc, spec, sizeof spec)) == 0);
    CHECK(im->suite_spec(SB_SUITE_FULL) == NULL);
}

/* memory.latency on the CPU: valid after the timed hops; a chain that
 * skips one slot on the path still to come is caught. */
static void test_verify(void)
{
    const sb_bench *b = &sb_bench_memory_latency;
    sb_params p;
    sb_err err = {0};
    sb_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.threads = 1;
    CHECK(sb_test_point(b, "size=64KiB pattern=random", &p, &err) == 0);
    void *st = NULL;
    CHECK(sb_test_setup(b, &p, &ctx, &st, &err) == 0);
    if (!st)
        return;
    sb_chase_state *s = st;
    const sb_impl *im = sb_test_cpu(b);
    im->run(st, 12345);
    im->run(st, 1);
    sb_result r;
    memset(&r, 0, sizeof r);
    CHECK(im->verify(st, &r) == 0);
    CHECK(r.valid);
    CHECK(s->hops == 12346);
    sb_result_free(&r);

    /* the slot 3 hops ahead now leads 2 on */
    uint64_t h = s->hops + 3;
    size_t at = (size_t)s->chain.order[h % s->chain.nodes] * s->chain.stride;
    uint64_t skip = sb_chase_expect(&s->chain, h + 2);
    memcpy((char *)s->buf + at, &skip, sizeof skip);
    im->run(st, 100);
    memset(&r, 0, sizeof r);
    CHECK(im->verify(st, &r) == 0);
    CHECK(!r.valid);
    CHECK(r.n_notes > 0 && strstr(r.notes[0], "not at slot") != NULL);
    sb_result_free(&r);
    im->teardown(st);

    /* with huge pages asked for the buffer starts on a 2 MiB boundary and
     * the chase is as valid */
    CHECK(sb_test_point(b, "size=4MiB pages=huge stride=192", &p, &err) == 0);
    st = NULL;
    CHECK(sb_test_setup(b, &p, &ctx, &st, &err) == 0);
    if (!st)
        return;
    s = st;
    CHECK(s->huge && ((uintptr_t)s->buf & ((2u << 20) - 1)) == 0);
    CHECK(s->chain.nodes == (4u << 20) / 192);
    im->run(st, 100003);
    memset(&r, 0, sizeof r);
    CHECK(im->verify(st, &r) == 0);
    CHECK(r.valid);
    sb_result_free(&r);
    im->teardown(st);
}

int main(void)
{
    test_patterns();
    test_base();
    test_refusals();
    test_levels();
    test_verify();
    return sb_check_done();
}
