/*
 * test_chrome_trace.c — a run written as a Chrome trace and read back:
 * the event counts per phase, the metadata naming the process and the
 * tracks, every slice as long as its sample, slices in order and apart on
 * their track, the skipped point an instant with its reason, the invalid
 * point's category, and a path in a missing folder refused by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "bench_point.h"
#include "check.h"
#include "solbench/output.h"
#include "solbench/report.h"

static char dir[256];

/* One point of `bench` with `n` samples (none: skipped, with a note). */
static sb_result *add_point(sb_run *run, const char *bench, const char *area,
                            double size, const double *s, int n, bool valid)
{
    sb_result *r = sb_results_push(&run->results);
    sb_result_init(r, bench, area, "cpu");
    char txt[32];
    snprintf(txt, sizeof txt, "%.0f", size);
    sb_test_set_param(r, "size", SB_P_SIZE, size, txt);
    sb_test_set_param(r, "dtype", SB_P_STR, 0, "fp32");
    for (int i = 0; i < n; i++)
        sb_result_add_sample(r, s[i]);
    if (n == 0) {
        r->skipped = true;
        sb_result_note(r, "needs %.0f bytes, more than this machine has", size);
        return r;
    }
    sb_result_finish_stats(r);
    sb_result_metric(r, "latency_us", r->stats.p50 * 1e6, "us");
    sb_result_metric(r, "GBps", size / r->stats.p50 / 1e9, "GB/s");
    r->valid = valid;
    return r;
}

/* Two benchmarks of three points each, in interleaved result order:
 * triad 0, gemm 0, triad 1 (skipped), gemm 1 (invalid), triad 2, gemm 2,
 * then a summary of the triad's. 11 samples in all, from nanoseconds to
 * half a second. */
static const double triad0[] = {1e-3, 2e-3, 1.5e-3};
static const double gemm0[] = {0.5, 0.25};
static const double gemm1[] = {1e-6, 2e-6, 3e-6};
static const double triad2[] = {4e-3, 3e-3};
static const double gemm2[] = {7e-9};

static void make_run(sb_run *run)
{
    sb_run_init(run);
    snprintf(run->run_id, sizeof run->run_id, "20261129T100000Z-abc123");
    snprintf(run->started_at, sizeof run->started_at,
             "2026-11-29T10:00:00.000Z");
    snprintf(run->ended_at, sizeof run->ended_at, "2026-11-29T10:01:00.000Z");
    json_object_set_new(run->system, "os",
                        json_pack("{s:s}", "hostname", "bench-host"));
    add_point(run, "memory.triad", "memory", 1048576, triad0, 3, true);
    add_point(run, "compute.gemm", "compute", 4096, gemm0, 2, true);
    add_point(run, "memory.triad", "memory", 1099511627776.0, NULL, 0, false);
    add_point(run, "compute.gemm", "compute", 8192, gemm1, 3, false);
    add_point(run, "memory.triad", "memory", 4194304, triad2, 2, true);
    add_point(run, "compute.gemm", "compute", 16384, gemm2, 1, true);
    /* A summary of the triad's points, as a sweep writes: no samples,
     * not skipped. */
    sb_result *sum = sb_results_push(&run->results);
    sb_result_init(sum, "memory.triad", "memory", "cpu");
    sb_test_set_param(sum, "dtype", SB_P_STR, 0, "fp32");
    sb_result_metric(sum, "L2_GBps", 123.5, "GB/s");
    sb_result_note(sum, "summary of 3 sizes");
    sum->valid = true;
}

static const char *sget(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void test_write_read(void)
{
    sb_run run;
    make_run(&run);
    char path[300];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    sb_err err = {0};
    CHECK(sb_run_write_chrome_trace(&run, path, &err) == 0);

    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    CHECK(doc != NULL);
    if (!doc) {
        fprintf(stderr, "%s:%d: %s\n", path, je.line, je.text);
        sb_run_free(&run);
        return;
    }
    CHECK(strcmp(sget(doc, "displayTimeUnit"), "ms") == 0);
    json_t *other = json_object_get(doc, "otherData");
    CHECK(strcmp(sget(other, "solbench_run"), run.run_id) == 0);
    CHECK(strcmp(sget(other, "started_at"), run.started_at) == 0);
    CHECK(strcmp(sget(other, "host"), "bench-host") == 0);
    CHECK(strncmp(sget(other, "timeline"), "synthetic:", 10) == 0);

    json_t *evs = json_object_get(doc, "traceEvents");
    CHECK(json_is_array(evs));
    int n_m = 0, n_x = 0, n_i = 0, n_other = 0;
    /* Per track (tid 1, 2): where the last slice ended, and the last
     * (point, sample) seen, to check order and no overlap. */
    double end[3] = {0, 0, 0};
    long last_key[3] = {-1, -1, -1};
    int per_point[7] = {0};
    size_t k;
    json_t *ev;
    json_array_foreach(evs, k, ev)
    {
        const char *ph = sget(ev, "ph");
        json_t *args = json_object_get(ev, "args");
        CHECK(json_integer_value(json_object_get(ev, "pid")) == 1);
        int tid = (int)json_integer_value(json_object_get(ev, "tid"));
        if (strcmp(ph, "M") == 0) {
            n_m++;
            const char *what = sget(ev, "name");
            if (strcmp(what, "process_name") == 0) {
                CHECK(strcmp(sget(args, "name"),
                             "solbench run 20261129T100000Z-abc123") == 0);
            } else if (strcmp(what, "thread_name") == 0) {
                CHECK(tid == 1 || tid == 2);
                CHECK(strcmp(sget(args, "name"),
                             tid == 1 ? "memory.triad" : "compute.gemm") == 0);
            } else if (strcmp(what, "thread_sort_index") == 0) {
                CHECK(json_integer_value(json_object_get(args, "sort_index")) ==
                      tid);
            } else {
                CHECK(!"unknown metadata event");
            }
            continue;
        }
        CHECK(tid == 1 || tid == 2);
        if (tid < 1 || tid > 2)
            continue;
        double ts = json_number_value(json_object_get(ev, "ts"));
        int point = (int)json_integer_value(json_object_get(args, "point"));
        CHECK(point >= 0 && point < 7);
        if (point < 0 || point >= 7)
            continue;
        const sb_result *r = &run.results.items[point];
        CHECK(strcmp(r->bench, tid == 1 ? "memory.triad" : "compute.gemm") ==
              0);
        /* The name: the benchmark, then its point. */
        CHECK(strncmp(sget(ev, "name"), r->bench, strlen(r->bench)) == 0);
        CHECK(strstr(sget(ev, "name"), "dtype=fp32") != NULL);
        CHECK(strstr(sget(args, "params"), "dtype=fp32") != NULL);
        if (strcmp(ph, "i") == 0 && point == 6) {
            n_i++; /* the summary */
            CHECK(tid == 1);
            CHECK(strcmp(sget(ev, "cat"), "summary") == 0);
            CHECK(strcmp(sget(args, "note"), "summary of 3 sizes") == 0);
            CHECK(json_is_true(json_object_get(args, "valid")));
            json_t *head = json_object_get(args, "headline");
            CHECK(strcmp(sget(head, "name"), "L2_GBps") == 0);
            CHECK(ts > end[tid]);
            CHECK((long)point * 1000000 > last_key[tid]);
            last_key[tid] = (long)point * 1000000;
            end[tid] = ts;
            continue;
        }
        if (strcmp(ph, "i") == 0) {
            n_i++;
            CHECK(point == 2 && tid == 1);
            CHECK(strcmp(sget(ev, "cat"), "skipped") == 0);
            CHECK(strcmp(sget(ev, "s"), "t") == 0);
            CHECK(strstr(sget(args, "reason"), "more than this machine") !=
                  NULL);
            CHECK(strstr(sget(ev, "name"), "size=1TiB") != NULL);
            CHECK(ts >= end[tid]);
            CHECK((long)point * 1000000 > last_key[tid]);
            last_key[tid] = (long)point * 1000000;
            end[tid] = ts;
            continue;
        }
        if (strcmp(ph, "X") != 0) {
            n_other++;
            continue;
        }
        n_x++;
        per_point[point]++;
        int sample = (int)json_integer_value(json_object_get(args, "sample"));
        CHECK(sample >= 0 && (size_t)sample < r->n_samples);
        if (sample < 0 || (size_t)sample >= r->n_samples)
            continue;
        double want = r->samples_s[sample] * 1e6;
        double dur = json_number_value(json_object_get(ev, "dur"));
        CHECK(fabs(dur - want) <= 1e-6 * want);
        CHECK(json_number_value(json_object_get(args, "seconds")) ==
              r->samples_s[sample]);
        CHECK(json_is_boolean(json_object_get(args, "valid")) &&
              json_is_true(json_object_get(args, "valid")) == r->valid);
        CHECK(strcmp(sget(ev, "cat"), r->valid ? "sample" : "invalid") == 0);
        json_t *head = json_object_get(args, "headline");
        CHECK(strcmp(sget(head, "name"), "GBps") == 0);
        CHECK(strcmp(sget(head, "unit"), "GB/s") == 0);
        CHECK_NEAR(json_number_value(json_object_get(head, "value")),
                   sb_result_get(r, "GBps")->value, 1e-12);
        /* In result order, one after another, never overlapping. */
        long key = (long)point * 1000000 + sample;
        CHECK(key > last_key[tid]);
        CHECK(ts >= end[tid]);
        if (sample > 0)
            CHECK(ts <= end[tid] + 1e-9 * (1 + end[tid]));
        else if (last_key[tid] >= 0)
            CHECK(ts > end[tid]); /* a gap between points */
        last_key[tid] = key;
        end[tid] = ts + dur;
    }
    CHECK(n_m == 5); /* the process, and a name and place per track */
    CHECK(n_x == 11);
    CHECK(n_i == 2);
    CHECK(n_other == 0);
    for (int p = 0; p < 7; p++)
        CHECK(per_point[p] == (int)run.results.items[p].n_samples);
    json_decref(doc);
    sb_run_free(&run);
}

/* A run without results is still a trace: the process and no tracks. */
static void test_empty_run(void)
{
    sb_run run;
    sb_run_init(&run);
    snprintf(run.run_id, sizeof run.run_id, "empty-1");
    char path[300];
    snprintf(path, sizeof path, "%s/empty.json", dir);
    sb_err err = {0};
    CHECK(sb_run_write_chrome_trace(&run, path, &err) == 0);
    json_t *doc = json_load_file(path, 0, NULL);
    CHECK(doc != NULL);
    json_t *evs = json_object_get(doc, "traceEvents");
    CHECK(json_array_size(evs) == 1);
    CHECK(json_is_null(
        json_object_get(json_object_get(doc, "otherData"), "host")));
    json_decref(doc);
    sb_run_free(&run);
}

static void test_refusals(void)
{
    sb_run run;
    make_run(&run);
    char path[300];
    snprintf(path, sizeof path, "%s/no-such-dir/trace.json", dir);
    sb_err err = {0};
    CHECK(sb_run_write_chrome_trace(&run, path, &err) != 0);
    CHECK(strstr(err.msg, path) != NULL);
    CHECK(strchr(err.msg, '\n') == NULL);
    CHECK(access(path, F_OK) != 0);
    /* A folder is not a file to write. */
    sb_err err2 = {0};
    CHECK(sb_run_write_chrome_trace(&run, dir, &err2) != 0);
    CHECK(strstr(err2.msg, dir) != NULL);
    sb_run_free(&run);
}

int main(void)
{
    if (!sb_test_scratch(dir, sizeof dir, "trace"))
        return 1;
    test_write_read();
    test_empty_run();
    test_refusals();
    return sb_test_scratch_done(dir);
}
