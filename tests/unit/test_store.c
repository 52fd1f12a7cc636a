/*
 * test_store.c — the results store: saving and loading runs, no
 * duplicates, references (last, prefix, baseline), history, baselines,
 * refusal of foreign, damaged and newer databases; point keys; the
 * like-with-like diff; matching points between runs; the reports.
 * With SOLBENCH_TEST_PG set (the socket folder of a PostgreSQL cluster,
 * tests/scripts/store_pg_unit.sh) the tests that hold for every driver
 * run against that server instead, each on a database of its own, and
 * those about SQLite's files alone are left out: one suite, two drivers.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "bench_point.h"
#include "check.h"
#include "solbench/changes.h"
#include "solbench/compare.h"
#include "solbench/stability.h"
#include "solbench/store.h"
#include "solbench/util.h"

static char dir[256];
static const char *pg_host; /* SOLBENCH_TEST_PG */

/* A file of the scratch folder. */
static const char *tmp(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

/* A fresh store named `name`: a file of the scratch folder, or on
 * PostgreSQL a new database t_<name> (dropped first if there). */
static const char *tmp_store(const char *name, char *buf, size_t len)
{
    if (!pg_host)
        return tmp(name, buf, len);
    char db[64] = "t_", sql[160];
    for (size_t i = 0, o = 2; name[i] && o + 1 < sizeof db; i++)
        db[o++] = (char)(isalnum((unsigned char)name[i]) ? name[i] : '_'),
        db[o] = '\0';
    snprintf(buf, len, "postgresql:///postgres?host=%s&user=solbench", pg_host);
    PGconn *c = PQconnectdb(buf);
    CHECK(PQstatus(c) == CONNECTION_OK);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s", db);
    PQclear(PQexec(c, sql));
    snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
    PGresult *r = PQexec(c, sql);
    CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(c);
    snprintf(buf, len, "postgresql:///%s?host=%s&user=solbench", db, pg_host);
    return buf;
}

/* A run of `npoints` triad-like results with `ns` samples each around
 * `sec` seconds (GBps computed from the median as the runner does). */
static void make_run(sb_run *run, const char *id, int threads, int npoints,
                     int ns, double sec, uint64_t seed)
{
    sb_run_init(run);
    snprintf(run->run_id, sizeof run->run_id, "%s", id);
    snprintf(run->started_at, sizeof run->started_at,
             "2026-11-29T10:00:%02d.000Z", (int)(seed % 60));
    snprintf(run->ended_at, sizeof run->ended_at, "2026-11-29T10:01:00.000Z");
    json_object_set_new(run->system, "fingerprint", json_string("abcd1234"));
    json_object_set_new(run->system, "cpu_model", json_string("Test CPU"));
    json_object_set_new(run->config, "threads", json_integer(threads));
    json_object_set_new(run->config, "suite", json_string("quick"));
    json_object_set_new(run->tags, "image", json_string("v1"));
    for (int p = 0; p < npoints; p++) {
        sb_result *r = sb_results_push(&run->results);
        sb_result_init(r, "memory.triad", "memory", "cpu");
        double size = 1048576.0 * (double)(1 + p);
        char txt[32];
        snprintf(txt, sizeof txt, "%.0f", size);
        sb_test_set_param(r, "size", SB_P_SIZE, size, txt);
        sb_test_set_param(r, "nt", SB_P_BOOL, 0, "0");
        sb_test_set_param(r, "dtype", SB_P_STR, 0, "fp64");
        for (int i = 0; i < ns; i++)
            sb_result_add_sample(r, sec * (1.0 + 0.01 * sb_rng_unif(&seed)));
        sb_result_finish_stats(r);
        sb_result_metric(r, "latency_us", r->stats.p50 * 1e6, "us");
        sb_result_metric(r, "GBps", size / r->stats.p50 / 1e9, "GB/s");
        r->valid = true;
    }
}

static int count_hist(const sb_store_hist_row *row, void *arg)
{
    int *n = arg;
    (*n)++;
    CHECK(strcmp(row->metric, "GBps") == 0);
    CHECK(row->valid && row->n_samples == 7);
    return 0;
}

static int count_bl(const sb_store_baseline *b, void *arg)
{
    int *n = arg;
    (*n)++;
    CHECK(strcmp(b->name, "main") == 0);
    CHECK(strcmp(b->run_id, "run-aaa-1") == 0);
    CHECK(b->n_results == 2);
    return 0;
}

static void test_save_load(void)
{
    char db[512];
    sb_err err = {0};
    sb_store *st;
    tmp_store("a.db", db, sizeof db);
    CHECK(sb_store_open(db, &st, &err) == 0);
    CHECK(sb_store_count_runs(st, &err) == 0);
    CHECK(sb_store_resolve(st, "last", db, 0, &err) == SB_EINVAL);

    sb_run r1, r2;
    make_run(&r1, "run-aaa-1", 2, 2, 7, 1e-3, 1);
    make_run(&r2, "run-bbb-2", 2, 2, 7, 1e-3, 2);
    CHECK(sb_store_save_run(st, &r1, &err) == 0);
    CHECK(sb_store_save_run(st, &r2, &err) == 0);
    CHECK(sb_store_count_runs(st, &err) == 2);
    /* The same run again, by save or import, is not duplicated. */
    bool inserted = true;
    CHECK(sb_store_save_run(st, &r1, &err) == 0);
    CHECK(sb_store_import_run(st, &r1, &inserted, &err) == 0);
    CHECK(!inserted);
    CHECK(sb_store_count_runs(st, &err) == 2);
    /* Another run under a taken id is refused with a message, not dropped
     * without a word. */
    {
        sb_run other;
        make_run(&other, "run-aaa-1", 2, 2, 7, 1e-3, 3);
        snprintf(other.started_at, sizeof other.started_at, "%s",
                 "2031-01-01T00:00:00.000Z");
        CHECK(sb_store_save_run(st, &other, &err) == SB_EIO);
        CHECK(strstr(err.msg, "run-aaa-1") && strstr(err.msg, "not stored"));
        CHECK(sb_store_count_runs(st, &err) == 2);
        sb_run_free(&other);
    }

    char id[64];
    CHECK(sb_store_resolve(st, "last", id, sizeof id, &err) == 0);
    CHECK(strcmp(id, "run-bbb-2") == 0);
    CHECK(sb_store_resolve(st, "run-a", id, sizeof id, &err) == 0);
    CHECK(strcmp(id, "run-aaa-1") == 0);
    CHECK(sb_store_resolve(st, "run-", id, sizeof id, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "ambiguous") != NULL);
    CHECK(sb_store_resolve(st, "nope", id, sizeof id, &err) == SB_EINVAL);

    /* Loaded back exactly: samples, params, metrics, validity. */
    sb_run back;
    CHECK(sb_store_load_run(st, "run-aaa-1", &back, &err) == 0);
    CHECK(back.results.n == 2);
    if (back.results.n == 2) {
        const sb_result *a = &r1.results.items[1], *b = &back.results.items[1];
        CHECK(b->n_samples == 7);
        for (size_t i = 0; i < 7 && i < b->n_samples; i++)
            CHECK(a->samples_s[i] == b->samples_s[i]);
        CHECK(b->valid);
        char ka[512], kb[512];
        CHECK(strcmp(sb_point_key(a, ka, sizeof ka),
                     sb_point_key(b, kb, sizeof kb)) == 0);
        CHECK(strcmp(ka, "memory.triad|cpu|dtype=fp64 nt=false "
                         "size=2097152") == 0);
        CHECK(sb_result_get(b, "GBps") != NULL);
    }
    sb_run_free(&back);
    CHECK(sb_store_load_run(st, "missing", &back, &err) == SB_EINVAL);
    sb_run_free(&back);

    /* History: newest first, --last and --bench filters. */
    int n = 0;
    CHECK(sb_store_history(st, NULL, 0, count_hist, &n, &err) == 0);
    CHECK(n == 4);
    n = 0;
    CHECK(sb_store_history(st, "memory.*", 1, count_hist, &n, &err) == 0);
    CHECK(n == 2);
    n = 0;
    CHECK(sb_store_history(st, "compute.gemm", 0, count_hist, &n, &err) == 0);
    CHECK(n == 0);

    /* Baselines. */
    CHECK(sb_store_baseline_set(st, "main", "run-aaa-1", &err) == 0);
    CHECK(sb_store_baseline_set(st, "last", NULL, &err) == SB_EINVAL);
    CHECK(sb_store_baseline_set(st, "x", "nope", &err) == SB_EINVAL);
    /* Names that could hide a run id, break a table or need quoting. */
    CHECK(sb_store_baseline_set(st, "2026", "run-aaa-1", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "a letter") != NULL);
    CHECK(sb_store_baseline_set(st, "a\nb", "run-aaa-1", &err) == SB_EINVAL);
    CHECK(sb_store_baseline_set(st, "ab*", "run-aaa-1", &err) == SB_EINVAL);
    CHECK(sb_store_baseline_set(st, "run-aaa-1", "run-aaa-1", &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "hide") != NULL);
    char longname[80];
    memset(longname, 'a', 65);
    longname[65] = 0;
    CHECK(sb_store_baseline_set(st, longname, "run-aaa-1", &err) == SB_EINVAL);
    longname[64] = 0;
    CHECK(sb_store_baseline_set(st, longname, "run-aaa-1", &err) == 0);
    CHECK(sb_store_baseline_rm(st, longname, &err) == 0);
    CHECK(sb_store_baseline_set(st, "rel-1.2_rc-3", "run-aaa-1", &err) == 0);
    CHECK(sb_store_baseline_rm(st, "rel-1.2_rc-3", &err) == 0);
    CHECK(sb_store_resolve(st, "main", id, sizeof id, &err) == 0);
    CHECK(strcmp(id, "run-aaa-1") == 0);
    /* An imported run may not take a baseline's name or 'last': names
     * resolve first, so it could never be reached. */
    {
        sb_run named;
        bool ins = false;
        make_run(&named, "main", 2, 2, 7, 1e-3, 4);
        CHECK(sb_store_import_run(st, &named, &ins, &err) == SB_EINVAL);
        CHECK(strstr(err.msg, "baseline") != NULL && !ins);
        snprintf(named.run_id, sizeof named.run_id, "last");
        CHECK(sb_store_import_run(st, &named, &ins, &err) == SB_EINVAL);
        CHECK(strstr(err.msg, "reserved") != NULL && !ins);
        sb_run_free(&named);
    }
    n = 0;
    CHECK(sb_store_baseline_list(st, count_bl, &n, &err) == 0);
    CHECK(n == 1);
    CHECK(sb_store_baseline_rm(st, "main", &err) == 0);
    CHECK(sb_store_baseline_rm(st, "main", &err) == SB_EINVAL);
    sb_store_close(st);

    /* Reopening finds everything (and does not migrate twice). */
    CHECK(sb_store_open(db, &st, &err) == 0);
    CHECK(sb_store_count_runs(st, &err) == 2);
    sb_store_close(st);
    sb_run_free(&r1);
    sb_run_free(&r2);
}

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static void test_refusals(void)
{
    char db[512];
    sb_err err = {0};
    sb_store *st = NULL;

    /* Not SQLite at all. */
    tmp("foreign.db", db, sizeof db);
    const char *txt = "{\"schema\": \"something else\"}\n";
    write_file(db, txt, strlen(txt));
    CHECK(sb_store_open(db, &st, &err) == SB_EINVAL);
    CHECK(st == NULL && strstr(err.msg, db) != NULL);
    printf("foreign: %s\n", err.msg);

    /* SQLite, but another program's database. */
    tmp("other.db", db, sizeof db);
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    sqlite3_exec(h, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, NULL,
                 NULL);
    sqlite3_close(h);
    unsigned char before[100] = {0}, after[100] = {0};
    FILE *hf = fopen(db, "rb");
    CHECK(hf && fread(before, 1, sizeof before, hf) == sizeof before);
    if (hf)
        fclose(hf);
    CHECK(sb_store_open(db, &st, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "not a solbench results database") != NULL);
    /* ...and left as it was: not switched to WAL (header bytes 18-19),
     * its change counter (24-27) unmoved. */
    hf = fopen(db, "rb");
    CHECK(hf && fread(after, 1, sizeof after, hf) == sizeof after);
    if (hf)
        fclose(hf);
    CHECK(memcmp(before, after, sizeof before) == 0);

    /* Written by a newer solbench. */
    tmp("newer.db", db, sizeof db);
    CHECK(sb_store_open(db, &st, &err) == 0);
    sb_store_close(st);
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(sb_store_open(db, &st, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "newer solbench") != NULL);
    printf("newer: %s\n", err.msg);

    /* Cut short: a database of many pages truncated to half. */
    tmp("trunc.db", db, sizeof db);
    CHECK(sb_store_open(db, &st, &err) == 0);
    for (int i = 0; i < 20; i++) {
        sb_run r;
        char id[32];
        snprintf(id, sizeof id, "run-%03d", i);
        make_run(&r, id, 2, 4, 200, 1e-3, (uint64_t)i + 7);
        CHECK(sb_store_save_run(st, &r, &err) == 0);
        sb_run_free(&r);
    }
    sb_store_close(st); /* checkpoints the WAL into the file */
    FILE *f = fopen(db, "rb");
    long size = 0;
    char *data = NULL;
    if (f) {
        fseek(f, 0, SEEK_END);
        size = ftell(f);
        rewind(f);
        data = malloc((size_t)size);
        if (data && fread(data, 1, (size_t)size, f) != (size_t)size)
            size = 0;
        fclose(f);
    }
    CHECK(size > 100000);
    if (data && size > 0)
        write_file(db, data, (size_t)size / 2);
    free(data);
    CHECK(sb_store_open(db, &st, &err) == SB_EINVAL);
    printf("truncated: %s\n", err.msg);
    /* Only the header left. */
    write_file(db, "SQLite format 3", 16);
    CHECK(sb_store_open(db, &st, &err) == SB_EINVAL);

    /* A folder is not a database. */
    CHECK(sb_store_open(dir, &st, &err) == SB_EINVAL);
}

/* A process killed (SIGKILL) in the middle of writing a run: the
 * database stays valid and holds every earlier run, and none of the
 * killed one. The killed run is large enough (4 million samples) that the
 * kill lands inside its transaction. */
static void test_kill_mid_write(void)
{
    char db[512];
    sb_err err = {0};
    sb_store *st;
    tmp("kill.db", db, sizeof db);
    CHECK(sb_store_open(db, &st, &err) == 0);
    sb_run r;
    make_run(&r, "run-before", 2, 2, 50, 1e-3, 5);
    CHECK(sb_store_save_run(st, &r, &err) == 0);
    sb_run_free(&r);
    sb_store_close(st);

    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        sb_store *cst;
        sb_run big;
        make_run(&big, "run-killed", 2, 200, 20000, 1e-3, 6);
        if (sb_store_open(db, &cst, NULL) != 0)
            _exit(3);
        if (write(fd[1], "x", 1) != 1)
            _exit(4);
        sb_store_save_run(cst, &big, NULL);
        _exit(0);
    }
    close(fd[1]);
    char c;
    CHECK(read(fd[0], &c, 1) == 1);
    close(fd[0]);
    /* Kill once the write-ahead log holds pages of the unfinished
     * transaction (SQLite spills its cache there as the rows go in; the
     * whole run is ~100 MB, so this is early in the transaction). */
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", db);
    struct stat ws = {0};
    for (int i = 0; i < 3000; i++) {
        if (stat(wal, &ws) == 0 && ws.st_size > 4000000)
            break;
        usleep(10 * 1000);
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(ws.st_size > 4000000);
    printf("killed mid-write with %lld bytes in the WAL\n",
           (long long)ws.st_size);

    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    sqlite3_stmt *q;
    const char *res = NULL;
    CHECK(sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &q, NULL) ==
          SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW)
        res = (const char *)sqlite3_column_text(q, 0);
    CHECK(res && strcmp(res, "ok") == 0);
    sqlite3_finalize(q);
    sqlite3_close(h);

    CHECK(sb_store_open(db, &st, &err) == 0);
    CHECK(sb_store_count_runs(st, &err) == 1);
    sb_run back;
    CHECK(sb_store_load_run(st, "run-before", &back, &err) == 0);
    CHECK(back.results.n == 2 && back.results.items[0].n_samples == 50);
    sb_run_free(&back);
    CHECK(sb_store_load_run(st, "run-killed", &back, &err) == SB_EINVAL);
    sb_run_free(&back);
    sb_store_close(st);
}

static void test_diff_and_compare(void)
{
    sb_run a, b;
    make_run(&a, "A", 2, 3, 10, 1e-3, 11);
    make_run(&b, "B", 1, 3, 10, 1.1e-3, 12);
    sb_diff_list d = {0};
    CHECK(sb_runs_mismatch(&a, &b, &d) == 1);
    CHECK(d.n == 1 && strcmp(d.lines[0], "config.threads: 2 vs 1") == 0);
    sb_diff_free(&d);

    /* A different machine: the fingerprint and the differing fields. */
    json_object_set_new(b.config, "threads", json_integer(2));
    json_object_set_new(b.system, "fingerprint", json_string("ffff"));
    json_object_set_new(b.system, "cpu_model", json_string("Other CPU"));
    CHECK(sb_runs_mismatch(&a, &b, &d) == 2);
    CHECK(d.n == 2 &&
          strcmp(d.lines[0], "system.fingerprint: \"abcd1234\" vs "
                             "\"ffff\"") == 0 &&
          strcmp(d.lines[1], "system.cpu_model: \"Test CPU\" vs \"Other "
                             "CPU\"") == 0);
    sb_diff_free(&d);
    json_object_set_new(b.system, "fingerprint", json_string("abcd1234"));
    /* Numbers compare by value (2 == 2.0); nested paths are named. */
    json_object_set_new(b.config, "threads", json_real(2.0));
    json_object_set_new(a.config, "topology", json_pack("{s:i}", "ranks", 1));
    json_object_set_new(b.config, "topology", json_pack("{s:i}", "ranks", 4));
    CHECK(sb_runs_mismatch(&a, &b, &d) == 1);
    CHECK(d.n == 1 && strcmp(d.lines[0], "config.topology.ranks: 1 vs 4") == 0);
    sb_diff_free(&d);
    json_object_del(b.config, "topology");
    json_object_del(a.config, "topology");

    /* B is 10 % slower on every point, except: point 1 invalid in B, and
     * B lacks point 2 but has one A lacks. */
    b.results.items[1].valid = false;
    b.results.items[2].params.v[0].num *= 8;
    snprintf(b.results.items[2].params.v[0].text, SB_PTEXT_LEN, "%.0f",
             b.results.items[2].params.v[0].num);
    sb_cmp_opts o;
    sb_cmp_opts_default(&o);
    sb_cmp c;
    sb_err err = {0};
    CHECK(sb_compare_runs(&a, &b, &o, &c, &err) == 0);
    CHECK(c.n == 4);
    if (c.n == 4) {
        CHECK(c.lines[0].verdict == SB_VERDICT_REGRESSED);
        CHECK(strcmp(c.lines[0].metric, "GBps") == 0);
        CHECK(c.lines[0].higher_better);
        CHECK(c.lines[0].change_pct < -5.0);
        CHECK(c.lines[1].verdict == SB_VERDICT_NOT_COMPARABLE);
        CHECK(strstr(c.lines[1].why, "invalid in B") != NULL);
        CHECK(c.lines[2].verdict == SB_VERDICT_NOT_COMPARABLE);
        CHECK(strstr(c.lines[2].why, "missing in B") != NULL);
        CHECK(c.lines[3].verdict == SB_VERDICT_NOT_COMPARABLE);
        CHECK(strstr(c.lines[3].why, "missing in A") != NULL);
        CHECK(!c.lines[0].mismatched);
    }
    CHECK(c.count[SB_VERDICT_REGRESSED] == 1 &&
          c.count[SB_VERDICT_NOT_COMPARABLE] == 3);

    /* Reports: XML escaping and the figures in the failure message. */
    snprintf(c.lines[0].bench, sizeof c.lines[0].bench, "x<&\"'>y");
    char path[512];
    tmp("j.xml", path, sizeof path);
    CHECK(sb_cmp_write_junit(&c, "suite", 1.5, path, &err) == 0);
    FILE *f = fopen(path, "r");
    char buf[8192] = {0};
    if (f) {
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        buf[got] = '\0';
        fclose(f);
    }
    CHECK(strstr(buf, "classname=\"x&lt;&amp;&quot;&apos;&gt;y\"") != NULL);
    CHECK(strstr(buf, "<failure type=\"regression\" message=\"regressed: "
                      "GBps") != NULL);
    CHECK(strstr(buf, "tests=\"4\" failures=\"1\"") != NULL);
    tmp("m.md", path, sizeof path);
    CHECK(sb_cmp_write_markdown(&c, "t", path, &err) == 0);
    tmp("c.json", path, sizeof path);
    CHECK(sb_cmp_write_json(&c, path, &err) == 0);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    CHECK(doc && json_array_size(json_object_get(doc, "lines")) == 4);
    CHECK(json_integer_value(json_object_get(json_object_get(doc, "summary"),
                                             "regressed")) == 1);
    json_decref(doc);
    sb_cmp_free(&c);

    /* Same runs compared with themselves: all unchanged, p = 1. */
    CHECK(sb_compare_runs(&a, &a, &o, &c, &err) == 0);
    CHECK(c.count[SB_VERDICT_UNCHANGED] == 3);
    CHECK(c.n == 3 && c.lines[0].test.p > 0.99);
    sb_cmp_free(&c);
    sb_run_free(&a);
    sb_run_free(&b);
}

/* The history of a point on one machine: a run's stable result far from
 * the point's earlier steady medians is flagged; once three steady
 * results exist, an earlier stable mark far from their median is
 * withdrawn, in the results table and in the stored run document. */
static void hist_run(sb_store *st, const char *id, int sec_i, double sec,
                     bool stable)
{
    sb_run run;
    make_run(&run, id, 2, 1, 7, sec, 7 + (uint64_t)sec_i);
    snprintf(run.started_at, sizeof run.started_at,
             "2026-11-29T11:00:%02d.000Z", sec_i);
    sb_result *r = &run.results.items[0];
    r->stab_judged = true;
    r->stable = stable;
    if (!stable) {
        r->stab_flags = SB_UNSTABLE_CV;
        snprintf(r->stab_why, sizeof r->stab_why, "cv 30%% (> 10%%)");
    }
    int withdrawn = -1;
    sb_err err = {0};
    CHECK(sb_store_judge_history(st, &run, &withdrawn, &err) == 0);
    CHECK(sb_store_save_run(st, &run, &err) == 0);
    sb_run_free(&run);
}

static int stable_of(sb_store *st, const char *id, bool *stable, char *why,
                     size_t len)
{
    sb_run run;
    sb_err err = {0};
    if (sb_store_load_run(st, id, &run, &err))
        return -1;
    *stable = run.results.items[0].stable;
    snprintf(why, len, "%s", run.results.items[0].stab_why);
    sb_run_free(&run);
    return 0;
}

static void test_stability_history(void)
{
    char db[512];
    tmp_store("hist.db", db, sizeof db);
    sb_store *st = NULL;
    sb_err err = {0};
    CHECK(sb_store_open(db, &st, &err) == 0);
    if (!st)
        return;
    /* the first run ran 30 % slow and looked steady: nothing to hold it
     * against yet */
    hist_run(st, "h-1", 1, 1.3e-3, true);
    /* the second, at the usual speed, is 23 % off the first: flagged */
    sb_run run;
    make_run(&run, "h-2", 2, 1, 7, 1.0e-3, 9);
    snprintf(run.started_at, sizeof run.started_at, "2026-11-29T11:00:02.000Z");
    run.results.items[0].stab_judged = true;
    run.results.items[0].stable = true;
    int withdrawn = -1;
    CHECK(sb_store_judge_history(st, &run, &withdrawn, &err) == 0);
    CHECK(!run.results.items[0].stable);
    CHECK(run.results.items[0].stab_flags == SB_UNSTABLE_HISTORY);
    CHECK(strstr(run.results.items[0].stab_why, "earlier steady runs") != NULL);
    CHECK(withdrawn == 0);
    CHECK(sb_store_save_run(st, &run, &err) == 0);
    sb_run_free(&run);
    /* an unstable one (its own samples) counts in no median */
    hist_run(st, "h-3", 3, 2.0e-3, false);
    /* the third steady one: 15 % off the median of the two before it
     * (1.15 ms), so flagged too; but with it the point's median is
     * 1.0 ms, and the first run's mark is withdrawn */
    make_run(&run, "h-4", 2, 1, 7, 1.0e-3, 11);
    snprintf(run.started_at, sizeof run.started_at, "2026-11-29T11:00:04.000Z");
    run.results.items[0].stab_judged = true;
    run.results.items[0].stable = true;
    CHECK(sb_store_judge_history(st, &run, &withdrawn, &err) == 0);
    CHECK(withdrawn == 1);
    CHECK(sb_store_save_run(st, &run, &err) == 0);
    sb_run_free(&run);
    bool stable = true;
    char why[512];
    CHECK(stable_of(st, "h-1", &stable, why, sizeof why) == 0);
    CHECK(!stable);
    CHECK(strstr(why, "withdrawn by run h-4") != NULL);
    CHECK(stable_of(st, "h-4", &stable, why, sizeof why) == 0);
    CHECK(!stable);
    /* the fourth: at the median of the steady ones (1.3 withdrawn but
     * steady by its own samples, 1.0, 1.0): stable */
    hist_run(st, "h-5", 5, 1.0e-3, true);
    CHECK(stable_of(st, "h-5", &stable, why, sizeof why) == 0);
    CHECK(stable);
    sb_point_hist h[8];
    int n = 0;
    sb_run one;
    CHECK(sb_store_load_run(st, "h-5", &one, &err) == 0);
    char key[1024];
    sb_point_key(&one.results.items[0], key, sizeof key);
    sb_run_free(&one);
    CHECK(sb_store_point_history(st, key, "abcd1234", NULL, h, 8, &n, &err) ==
          0);
    CHECK(n == 5);
    /* newest first: h-5 stable; h-4 unstable by its history alone; h-3
     * by its samples; h-2 by its history; h-1 withdrawn */
    CHECK(n == 5 && strcmp(h[0].run_id, "h-5") == 0 && h[0].stable);
    CHECK(n == 5 && !h[1].stable && h[1].flags == SB_UNSTABLE_HISTORY);
    CHECK(n == 5 && !h[2].stable && h[2].flags == SB_UNSTABLE_CV);
    CHECK(n == 5 && !h[3].stable && h[3].flags == SB_UNSTABLE_HISTORY);
    CHECK(n == 5 && strcmp(h[4].run_id, "h-1") == 0 && !h[4].stable &&
          h[4].flags == SB_UNSTABLE_HISTORY);
    sb_store_close(st);
}

/* A run of one triad point whose samples are 1..10 ms in a shuffled
 * order: p10 1.9, p50 5.5, p90 9.1 ms (type 7). */
static void make_ramp_run(sb_run *run, const char *id)
{
    make_run(run, id, 2, 1, 0, 1e-3, 5);
    sb_result *r = &run->results.items[0];
    static const double ms[10] = {7, 3, 9, 1, 10, 2, 8, 5, 4, 6};
    for (int i = 0; i < 10; i++)
        sb_result_add_sample(r, ms[i] * 1e-3);
    sb_result_finish_stats(r);
    r->n_metrics = 0;
    sb_result_metric(r, "latency_us", r->stats.p50 * 1e6, "us");
    sb_result_metric(r, "GBps", 1048576.0 / r->stats.p50 / 1e9, "GB/s");
}

static int grab_hist(const sb_store_hist_row *row, void *arg)
{
    *(sb_store_hist_row *)arg = *row;
    return 0;
}

/* p10 is stored with each result (schema 6), and a store of schema 5
 * gets it from its samples when it is opened; a series' band is the
 * headline at p90 and p10 of the time. */
static void test_p10_band(void)
{
    char db[512];
    sb_err err = {0};
    sb_store *st;
    tmp_store("p10.db", db, sizeof db);
    CHECK(sb_store_open(db, &st, &err) == 0);
    sb_run run;
    make_ramp_run(&run, "ramp-1");
    CHECK(sb_store_save_run(st, &run, &err) == 0);
    sb_run_free(&run);
    sb_store_hist_row row = {0};
    CHECK(sb_store_history(st, NULL, 0, grab_hist, &row, &err) == 0);
    CHECK_NEAR(row.p10_s, 1.9e-3, 1e-15);
    CHECK_NEAR(row.p50_s, 5.5e-3, 1e-15);
    CHECK_NEAR(row.p90_s, 9.1e-3, 1e-15);
    sb_series_set set;
    CHECK(sb_series_load(st, NULL, 0, &set, &err) == 0);
    CHECK(set.n == 1 && set.s[0].n == 1 && set.s[0].higher_better == 1);
    const sb_series_run *sr = &set.s[0].runs[0];
    CHECK_NEAR(sr->lo, sr->value * 5.5 / 9.1, 1e-9 * sr->value);
    CHECK_NEAR(sr->hi, sr->value * 5.5 / 1.9, 1e-9 * sr->value);
    sb_series_free(&set);
    sb_store_close(st);
    if (pg_host) /* the migration below is SQLite's */
        return;

    /* Back to schema 5 as it was: no p10 column (nor version 7's fleet
     * tables); opening migrates and fills it from the samples by the
     * same rule. */
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h,
                       "ALTER TABLE results DROP COLUMN p10;"
                       "DROP TABLE fleet_baselines; DROP TABLE fleets;"
                       "DELETE FROM schema_version WHERE version >= 6;"
                       "PRAGMA user_version = 5",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    CHECK(sb_store_open(db, &st, &err) == 0);
    memset(&row, 0, sizeof row);
    CHECK(sb_store_history(st, NULL, 0, grab_hist, &row, &err) == 0);
    CHECK_NEAR(row.p10_s, 1.9e-3, 1e-15);
    sb_store_close(st);
}

/* What a path names: a store to import from (a URL, or a regular file
 * with SQLite's header), a store that exists (for commands that read). */
static void test_what_path(void)
{
    char st[512], doc[512], fifo[512], none[512];
    tmp("what.db", st, sizeof st);
    sb_store *s = NULL;
    sb_err err = {0};
    CHECK(sb_store_open(st, &s, &err) == 0);
    sb_store_close(s);
    FILE *f = fopen(tmp("what.json", doc, sizeof doc), "w");
    CHECK(f != NULL);
    if (f) {
        fputs("{\"schema\": \"solbench.run/1\"}\n", f);
        fclose(f);
    }
    CHECK(mkfifo(tmp("what.fifo", fifo, sizeof fifo), 0600) == 0);
    tmp("what-none.db", none, sizeof none);
    const char *url = "postgresql://ci@db.invalid/solbench";
    CHECK(sb_store_is_store(st) && sb_store_is_store(url));
    CHECK(!sb_store_is_store(doc) && !sb_store_is_store(fifo));
    CHECK(!sb_store_is_store(none) && !sb_store_is_store(dir));
    CHECK(sb_store_exists(st) && sb_store_exists(url) && sb_store_exists(doc));
    CHECK(!sb_store_exists(none) && !sb_store_exists(NULL));
    unlink(fifo);
}

int main(void)
{
    if (!sb_test_scratch(dir, sizeof dir, "store"))
        return 1;
    pg_host = getenv("SOLBENCH_TEST_PG");
    if (pg_host && !*pg_host)
        pg_host = NULL;
    test_save_load();
    if (!pg_host) { /* SQLite's files: foreign, damaged, killed mid-write */
        test_refusals();
        test_kill_mid_write();
        test_what_path();
    }
    test_diff_and_compare();
    test_stability_history();
    test_p10_band();
    return sb_test_scratch_done(dir);
}
