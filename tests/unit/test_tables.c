/*
 * test_tables.c — the run table reads at a glance: every point shows the
 * parameters that tell it from its neighbours (a row at the default size
 * of a size sweep shows its size), summary rows are set apart with their
 * figures in words and no sample columns, stored parameter texts compact
 * to the non-default ones without cutting a value, and a benchmark's own
 * headline metric holds at every size.
 */
#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "solbench/bench.h"
#include "solbench/output.h"
#include "solbench/result.h"

static sb_result *add(sb_result_list *l, const char *bench, const char *area,
                      const char *backend, const char *params, double s)
{
    sb_result *r = sb_results_push(l);
    sb_result_init(r, bench, area, backend);
    const sb_bench *b = sb_bench_find(bench, backend);
    const sb_impl *im = b ? sb_impl_find(b, backend) : NULL;
    /* "k=v k=v" through the definition's parser */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", params);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t;
         t = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(t, '=');
        *eq = 0;
        const sb_param_def *d = b ? sb_param_find(b, im, t) : NULL;
        sb_pval *v = &r->params.v[r->params.n++];
        if (d && sb_parse_value(d, eq + 1, v, NULL) == 0)
            continue;
        snprintf(v->name, sizeof v->name, "%s", t);
        snprintf(v->text, sizeof v->text, "%s", eq + 1);
        v->type = SB_P_STR;
    }
    if (s > 0) {
        for (int i = 0; i < 5; i++)
            sb_result_add_sample(r, s * (1 + 0.01 * i));
        sb_result_finish_stats(r);
        sb_result_metric(r, "latency_us", r->stats.p50 * 1e6, "us");
        sb_result_metric(r, "GBps", 8.0 / r->stats.p50 * 1e-9, "GB/s");
    }
    r->valid = true;
    return r;
}

static char *render(const sb_result_list *l)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    sb_print_results(f, l);
    fclose(f);
    return out;
}

/* The table line of the first row naming `bench` and holding `needle`. */
static const char *line_with(const char *text, const char *bench,
                             const char *needle, char *buf, size_t len)
{
    const char *p = text;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        snprintf(buf, len, "%.*s", (int)n, p);
        if (strncmp(buf, bench, strlen(bench)) == 0 && strstr(buf, needle))
            return buf;
        p = e ? e + 1 : NULL;
    }
    return NULL;
}

int main(void)
{
    char line[512];
    /* ---- memory.latency: its last size is the default, and still shown */
    {
        sb_result_list l = {0};
        const sb_bench *b = sb_bench_find("memory.latency", "cpu");
        CHECK(b != NULL);
        add(&l, "memory.latency", "memory", "cpu", "size=16KiB", 1e-9);
        add(&l, "memory.latency", "memory", "cpu", "size=256MiB", 2e-7);
        char *t = render(&l);
        CHECK(line_with(t, "memory.latency", "size=256MiB", line,
                        sizeof line) != NULL);
        CHECK(line_with(t, "memory.latency", "size=16KiB", line, sizeof line) !=
              NULL);
        free(t);
        sb_results_free(&l);
    }
    /* ---- alone, a default parameter is left out */
    {
        sb_result_list l = {0};
        add(&l, "memory.latency", "memory", "cpu", "size=256MiB", 2e-7);
        char *t = render(&l);
        CHECK(line_with(t, "memory.latency", "yes", line, sizeof line) != NULL);
        CHECK(!strstr(line, "size="));
        free(t);
        sb_results_free(&l);
    }
    /* ---- a summary row is set apart: named so, its figures in words, no
     * sample count (it has none) */
    {
        sb_result_list l = {0};
        add(&l, "memory.sweep", "memory", "cpu",
            "kernel=read threads=1 size=8KiB", 1e-8);
        sb_result *s = add(&l, "memory.sweep", "memory", "cpu",
                           "kernel=read threads=1", 0);
        sb_result_metric(s, "L1_GBps", 204.2, "GB/s");
        sb_result_metric(s, "L1_start_B", 8192, "B");
        sb_result_metric(s, "DRAM_GBps", 30.04, "GB/s");
        char *t = render(&l);
        CHECK(line_with(t, "memory.sweep (summary)", "L1 204.2 GB/s", line,
                        sizeof line) != NULL);
        CHECK(strstr(line, "DRAM 30.0 GB/s") != NULL);
        CHECK(!strstr(line, "8192")); /* bounds left to the notes */
        CHECK(!strstr(line, " yes")); /* no validity/sample columns */
        /* the measured row above it is not marked */
        CHECK(line_with(t, "memory.sweep ", "size=8KiB", line, sizeof line) !=
              NULL);
        CHECK(!strstr(line, "(summary)"));
        free(t);
        sb_results_free(&l);
    }
    /* ---- long parameters widen the column instead of being cut */
    {
        sb_result_list l = {0};
        add(&l, "memory.latency", "memory", "cpu",
            "size=64KiB pattern=random pages=4k stride=64 numa=local", 1e-9);
        char *t = render(&l);
        CHECK(strstr(t, "size=64KiB") != NULL);
        free(t);
        sb_results_free(&l);
    }
    /* ---- a stored parameter text, compacted */
    {
        char buf[128];
        sb_params_text_compact("compute.gemm", "cpu",
                               "dtype=fp64 lib=auto shape=square n=1024 m=0 "
                               "k=0 tokens=256",
                               buf, sizeof buf);
        CHECK(strstr(buf, "lib=") == NULL);
        CHECK(strstr(buf, "m=0") == NULL);
        CHECK(strstr(buf, "dtype=fp64") != NULL);
        /* too small a buffer keeps whole pairs only */
        sb_params_text_compact("no.such", "cpu", "size=64KiB dtype=fp32", buf,
                               14);
        CHECK(strcmp(buf, "size=64KiB") == 0);
    }
#ifdef SB_HAVE_MPI
    /* ---- a latency benchmark leads with latency at every size */
    {
        sb_result r;
        sb_result_init(&r, "network.pingpong", "network", "mpi");
        sb_result_metric(&r, "busbw_GBps", 0.03, "GB/s");
        sb_result_metric(&r, "latency_us", 0.27, "us");
        bool hb = true;
        const sb_metric *h = sb_result_headline(&r, &hb);
        CHECK(h && strcmp(h->name, "latency_us") == 0);
        CHECK(!hb);
        sb_result_free(&r);
        sb_result_init(&r, "network.allreduce", "network", "mpi");
        sb_result_metric(&r, "busbw_GBps", 0.03, "GB/s");
        sb_result_metric(&r, "latency_us", 0.27, "us");
        h = sb_result_headline(&r, &hb);
        CHECK(h && strcmp(h->name, "busbw_GBps") == 0);
        sb_result_free(&r);
    }
#endif
    return sb_check_done();
}
