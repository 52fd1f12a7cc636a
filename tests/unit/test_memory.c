/*
 * test_memory.c — the memory area's kernels through their sb_bench entries:
 * a clean run verifies; a kernel that did nothing, a planted wrong element
 * (first, middle, last) in the output or an input, and a wrong sum are
 * all caught; byte counts match hand counts; checks reject bad sizes; the
 * sweep emits one valid result per size plus a summary.
 */
#include <stdlib.h>
#include <string.h>

#include "bench/memory/memory.h"
#include "bench_point.h"
#include "check.h"
#include "solbench/bench.h"
#include "solbench/runner.h"
#include "solbench/util.h"

extern const sb_bench sb_bench_memory_copy, sb_bench_memory_scale,
    sb_bench_memory_add, sb_bench_memory_triad, sb_bench_memory_read,
    sb_bench_memory_write, sb_bench_memory_sweep;

/* One point of a bench from "k=v k=v" text over its CPU defaults. */
static bool point(const sb_bench *b, const char *spec, sb_params *out)
{
    sb_err err = {0};
    if (sb_test_point(b, spec, out, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return false;
    }
    return true;
}

static bool verify_ok(const sb_bench *b, void *state)
{
    sb_result r;
    sb_result_init(&r, b->name, b->area, "cpu");
    int rc = sb_test_cpu(b)->verify(state, &r);
    bool ok = rc == 0 && r.valid;
    sb_result_free(&r);
    return ok;
}

/* The array a kernel writes, and one it only reads. */
static void *output_of(sb_mem_state *s)
{
    switch (s->kernel) {
    case SB_MEM_COPY:
        return s->c;
    case SB_MEM_SCALE:
        return s->b;
    case SB_MEM_ADD:
        return s->c;
    case SB_MEM_TRIAD:
        return s->a;
    case SB_MEM_WRITE:
        return s->a;
    default:
        return NULL;
    }
}

static void *input_of(sb_mem_state *s)
{
    switch (s->kernel) {
    case SB_MEM_COPY:
        return s->a;
    case SB_MEM_SCALE:
        return s->c;
    case SB_MEM_ADD:
        return s->b;
    case SB_MEM_TRIAD:
        return s->c;
    case SB_MEM_READ:
        return s->a;
    default:
        return NULL;
    }
}

static double get(sb_mem_state *s, void *arr, size_t i)
{
    return s->fp32 ? ((float *)arr)[i] : ((double *)arr)[i];
}

static void put(sb_mem_state *s, void *arr, size_t i, double v)
{
    if (s->fp32)
        ((float *)arr)[i] = (float)v;
    else
        ((double *)arr)[i] = v;
}

/* Plants a wrong value at i, checks verification fails, restores it and
 * checks verification passes again. */
static void plant(const sb_bench *b, sb_mem_state *s, void *arr, size_t i,
                  bool rerun)
{
    double old = get(s, arr, i);
    put(s, arr, i, old * 1.25 + 0.5);
    if (rerun)
        sb_test_cpu(b)->run(s, 1);
    CHECK(!verify_ok(b, s));
    put(s, arr, i, old);
    if (rerun)
        sb_test_cpu(b)->run(s, 1);
    CHECK(verify_ok(b, s));
}

static void test_kernel(const sb_bench *b, sb_ctx *ctx, const char *spec)
{
    sb_params p;
    CHECK(point(b, spec, &p));
    sb_err err = {0};
    CHECK(sb_test_check(b, &p, ctx, &err) == 0);
    void *state = NULL;
    CHECK(sb_test_setup(b, &p, ctx, &state, &err) == 0);
    if (!state)
        return;
    sb_mem_state *s = state;
    CHECK(s->n > 0);

    /* Before the kernel has run the outputs hold other values: a kernel
     * that does nothing fails. */
    CHECK(!verify_ok(b, s));
    sb_test_cpu(b)->run(s, 3);
    CHECK(verify_ok(b, s));
    sb_test_cpu(b)->run(s, 2); /* idempotent: more iterations, same answer */
    CHECK(verify_ok(b, s));

    size_t where[3] = {0, s->n / 2 + 1, s->n - 1};
    for (int w = 0; w < 3; w++) {
        if (output_of(s))
            plant(b, s, output_of(s), where[w], false);
        if (input_of(s)) {
            plant(b, s, input_of(s), where[w], false);
            /* Read: the wrong input also changes the sum. */
            if (s->kernel == SB_MEM_READ)
                plant(b, s, input_of(s), where[w], true);
        }
    }
    if (s->kernel == SB_MEM_READ) {
        double old = s->partial[0];
        s->partial[0] += 1.0;
        CHECK(!verify_ok(b, s));
        s->partial[0] = old;
        CHECK(verify_ok(b, s));
    }
    sb_test_cpu(b)->teardown(state);
}

static void test_kernels(sb_ctx *ctx)
{
    const sb_bench *all[] = {&sb_bench_memory_copy, &sb_bench_memory_scale,
                             &sb_bench_memory_add,  &sb_bench_memory_triad,
                             &sb_bench_memory_read, &sb_bench_memory_write};
    /* Sizes that leave a tail after the vector loops and the chunks. */
    const char *specs[] = {
        "size=200000 dtype=fp64 nt=0", "size=200000 dtype=fp64 nt=1",
        "size=99996 dtype=fp32 nt=0", "size=99996 dtype=fp32 nt=1"};
    for (int t = 1; t <= 2; t++) {
        ctx->threads = t;
        sb_threads_setup(t);
        for (size_t i = 0; i < sizeof all / sizeof *all; i++)
            for (size_t j = 0; j < sizeof specs / sizeof *specs; j++)
                test_kernel(all[i], ctx, specs[j]);
    }
}

static void test_bytes(sb_ctx *ctx)
{
    sb_params p;
    /* copy: 1e6 B over 2 arrays of fp64 = 62500 elements, 2 words each. */
    CHECK(point(&sb_bench_memory_copy, "size=1000000", &p));
    CHECK_NEAR(sb_test_bytes(&sb_bench_memory_copy, &p), 2.0 * 62500 * 8, 0);
    CHECK_NEAR(sb_test_footprint(&sb_bench_memory_copy, &p, ctx), 1e6, 0);
    /* triad: 1e6 B over 3 arrays = 41666 elements, 3 words each. */
    CHECK(point(&sb_bench_memory_triad, "size=1000000", &p));
    CHECK_NEAR(sb_test_bytes(&sb_bench_memory_triad, &p), 3.0 * 41666 * 8, 0);
    CHECK(point(&sb_bench_memory_add, "size=3MiB", &p));
    CHECK_NEAR(sb_test_bytes(&sb_bench_memory_add, &p), 3.0 * 131072 * 8, 0);
    CHECK(point(&sb_bench_memory_scale, "size=1MiB dtype=fp32", &p));
    CHECK_NEAR(sb_test_bytes(&sb_bench_memory_scale, &p), 2.0 * 131072 * 4, 0);
    CHECK(point(&sb_bench_memory_read, "size=4096 dtype=fp32", &p));
    CHECK_NEAR(sb_test_bytes(&sb_bench_memory_read, &p), 4096, 0);
    CHECK(point(&sb_bench_memory_write, "size=8KiB", &p));
    CHECK_NEAR(sb_test_bytes(&sb_bench_memory_write, &p), 8192, 0);

    /* Write-allocate words: +1 per written array unless nt. */
    CHECK(sb_mem_words(SB_MEM_COPY) == 2 &&
          sb_mem_words_wa(SB_MEM_COPY, false) == 3);
    CHECK(sb_mem_words(SB_MEM_SCALE) == 2 &&
          sb_mem_words_wa(SB_MEM_SCALE, false) == 3);
    CHECK(sb_mem_words(SB_MEM_ADD) == 3 &&
          sb_mem_words_wa(SB_MEM_ADD, false) == 4);
    CHECK(sb_mem_words(SB_MEM_TRIAD) == 3 &&
          sb_mem_words_wa(SB_MEM_TRIAD, false) == 4);
    CHECK(sb_mem_words_wa(SB_MEM_TRIAD, true) == 3);
    CHECK(sb_mem_words(SB_MEM_READ) == 1 &&
          sb_mem_words_wa(SB_MEM_READ, false) == 1);
    CHECK(sb_mem_words(SB_MEM_WRITE) == 1 &&
          sb_mem_words_wa(SB_MEM_WRITE, false) == 2);
    CHECK(sb_mem_words_wa(SB_MEM_WRITE, true) == 1);

    /* report() adds GBps_wa = wa bytes / median time. */
    CHECK(point(&sb_bench_memory_triad, "size=240000", &p));
    void *state = NULL;
    sb_err err = {0};
    ctx->threads = 1;
    CHECK(sb_test_setup(&sb_bench_memory_triad, &p, ctx, &state, &err) == 0);
    if (state) {
        sb_result r;
        sb_result_init(&r, "memory.triad", "memory", "cpu");
        sb_result_add_sample(&r, 2e-3);
        sb_result_add_sample(&r, 1e-3);
        sb_result_add_sample(&r, 3e-3);
        sb_result_finish_stats(&r);
        sb_test_cpu(&sb_bench_memory_triad)->run(state, 1);
        sb_test_cpu(&sb_bench_memory_triad)->verify(state, &r);
        sb_test_report(&sb_bench_memory_triad, state, &p, ctx, &r);
        const sb_metric *m = sb_result_get(&r, "GBps_wa");
        const sb_metric *mb = sb_result_get(&r, "GBps_wa_best");
        CHECK(m && mb);
        if (m && mb) {
            CHECK_NEAR(m->value, 4.0 * 10000 * 8 / 2e-3 * 1e-9, 1e-12);
            CHECK_NEAR(mb->value, 4.0 * 10000 * 8 / 1e-3 * 1e-9, 1e-12);
        }
        /* A valid triad offers its best figure as bw.triad. */
        CHECK(sb_ceil_get(&ctx->ceil, "bw.triad") > 0);
        sb_result_free(&r);
        sb_test_cpu(&sb_bench_memory_triad)->teardown(state);
    }
}

static void test_checks(sb_ctx *ctx)
{
    sb_params p;
    sb_err err = {0};
    CHECK(point(&sb_bench_memory_triad, "size=1KiB", &p));
    CHECK(sb_test_check(&sb_bench_memory_triad, &p, ctx, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "size=") != NULL);
    CHECK(point(&sb_bench_memory_triad, "size=1PiB", &p));
    CHECK(sb_test_check(&sb_bench_memory_triad, &p, ctx, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "physical memory") != NULL);
    CHECK(point(&sb_bench_memory_sweep, "kernels=read threads=abc", &p));
    CHECK(sb_test_check(&sb_bench_memory_sweep, &p, ctx, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "threads=abc") != NULL);
    CHECK(point(&sb_bench_memory_sweep,
                "kernels=read threads=1 min_size=1MiB max_size=64KiB", &p));
    CHECK(sb_test_check(&sb_bench_memory_sweep, &p, ctx, &err) == SB_EINVAL);
    CHECK(point(&sb_bench_memory_sweep, "kernels=triad threads=all", &p));
    CHECK(sb_test_check(&sb_bench_memory_sweep, &p, ctx, &err) == 0);
    CHECK(sb_test_footprint(&sb_bench_memory_sweep, &p, ctx) >=
              1024.0 * 1024 * 1024 ||
          sb_test_footprint(&sb_bench_memory_sweep, &p, ctx) >=
              0.25 * ctx->phys_mem - 1);
}

static void test_caches(void)
{
    sb_mem_caches mc = {0};
    mc.nlevels = 3;
    mc.cpus = 32;
    mc.smt = 2;
    mc.size[1] = 32768;
    mc.shared_cpus[1] = 2; /* per core (2 hardware threads) */
    mc.size[2] = 1 << 20;
    mc.shared_cpus[2] = 2;
    mc.size[3] = 32 << 20;
    mc.shared_cpus[3] = 16; /* 8 cores per L3, 2 instances */
    CHECK_NEAR(sb_mem_cache_for_threads(&mc, 1, 1), 32768, 0);
    CHECK_NEAR(sb_mem_cache_for_threads(&mc, 1, 4), 4 * 32768, 0);
    CHECK_NEAR(sb_mem_cache_for_threads(&mc, 3, 4), 32 << 20, 0);
    CHECK_NEAR(sb_mem_cache_for_threads(&mc, 3, 9), 64 << 20, 0);
    CHECK_NEAR(sb_mem_cache_for_threads(&mc, 3, 64), 64 << 20, 0);
    CHECK_NEAR(sb_mem_llc_total(&mc), 64 << 20, 0);
    CHECK(sb_mem_cache_for_threads(&mc, 4, 1) == 0);

    sb_ceilings c = {0};
    sb_mem_ceil_offer(&c, "bw.read", 100e9, false);
    CHECK_NEAR(sb_ceil_get(&c, "bw.read"), 100e9, 0);
    sb_mem_ceil_offer(&c, "bw.read", 20e9, true); /* DRAM beats in-cache */
    CHECK_NEAR(sb_ceil_get(&c, "bw.read"), 20e9, 0);
    sb_mem_ceil_offer(&c, "bw.read", 90e9, false);
    CHECK_NEAR(sb_ceil_get(&c, "bw.read"), 20e9, 0);
    sb_mem_ceil_offer(&c, "bw.read", 22e9, true);
    CHECK_NEAR(sb_ceil_get(&c, "bw.read"), 22e9, 0);
}

static void test_sweep(sb_ctx *ctx)
{
    sb_params p;
    CHECK(point(&sb_bench_memory_sweep,
                "kernels=read threads=1 "
                "min_size=8KiB max_size=128KiB step=2 point_time=0.001",
                &p));
    sb_result_list out = {0};
    sb_err err = {0};
    sb_ctx lc = *ctx;
    lc.min_time = 0.01;
    lc.repeat = 3;
    lc.threads = 2;
    sb_point spt = sb_test_pt(&sb_bench_memory_sweep, &p);
    CHECK(sb_test_cpu(&sb_bench_memory_sweep)->drive(&spt, &lc, &out, &err) ==
          0);
    sb_point_release(&spt);
    CHECK(out.n == 6); /* 8, 16, 32, 64, 128 KiB and the summary */
    for (size_t i = 0; i < out.n; i++) {
        sb_result *r = &out.items[i];
        CHECK(strcmp(r->bench, "memory.sweep") == 0);
        CHECK(r->valid);
        const sb_pval *k = sb_p_find(&r->params, "kernel");
        const sb_pval *t = sb_p_find(&r->params, "threads");
        CHECK(k && strcmp(k->text, "read") == 0);
        CHECK(t && t->num == 1);
        if (i + 1 < out.n) {
            const sb_pval *s = sb_p_find(&r->params, "size");
            CHECK(s && s->num == 8192.0 * (double)(1u << i));
            const sb_metric *g = sb_result_get(r, "GBps");
            CHECK(g && g->value > 0);
            CHECK(r->n_samples >= 3);
        } else {
            CHECK(sb_p_find(&r->params, "size") == NULL);
            CHECK(r->n_notes >= 1);
        }
    }
    sb_results_free(&out);
}

/* The caches as the kernel's sysfs lists them for cpu0 (an independent
 * reading): sb_mem_caches_read must agree with it, level by level. */
static int sysfs_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *ok = fgets(buf, (int)len, f);
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static int sysfs_count(const char *s)
{
    int n = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        n += (int)(b - a + 1);
        if (*end != ',')
            break;
        s = end + 1;
    }
    return n;
}

static void test_caches_sysfs(void)
{
    sb_mem_caches mc;
    sb_mem_caches_read(&mc);
    char buf[256], path[160];
    int seen = 0;
    for (int idx = 0; idx < 16; idx++) {
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        if (sysfs_line(path, buf, sizeof buf))
            break;
        int level = atoi(buf);
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
        if (sysfs_line(path, buf, sizeof buf) ||
            strcmp(buf, "Instruction") == 0 || level < 1 || level > 4)
            continue;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        if (sysfs_line(path, buf, sizeof buf))
            continue;
        char *end;
        double v = strtod(buf, &end);
        v *= *end == 'K' ? 1024 : *end == 'M' ? 1048576 : 1;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list",
                 idx);
        int shared = sysfs_line(path, buf, sizeof buf) ? 0 : sysfs_count(buf);
        CHECK_NEAR(mc.size[level], v, 0);
        if (shared > 0)
            CHECK(mc.shared_cpus[level] == shared);
        seen++;
    }
    if (!seen)
        printf("no cache list in sysfs: nothing to compare\n");
    else
        printf("caches: %d levels as sysfs lists them (L1 %.0f, last %.0f B)\n",
               seen, mc.size[1], mc.size[mc.nlevels]);
    if (sysfs_line("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list",
                   buf, sizeof buf) == 0)
        CHECK(mc.smt == sysfs_count(buf));
}

int main(void)
{
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    ctx.min_time = 0.01;
    test_kernels(&ctx);
    test_bytes(&ctx);
    test_checks(&ctx);
    test_caches();
    test_caches_sysfs();
    test_sweep(&ctx);
    return sb_check_done();
}
