/*
 * test_gate.c — the regression gate and what it stands on in the store:
 * a run's config read back into a context (the round trip of
 * sb_run_config), the comparable config, a point judged against a
 * baseline of several runs (the spread between them), a regression
 * confirmed by measuring again; baselines of several runs (set, add,
 * update with trimming), imports all or nothing, a different run under a
 * stored id refused, read-only opens that take no lock, and a lock wait
 * bounded by its clock.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>
#include <jansson.h>

#include "check.h"
#include "solbench/gate.h"
#include "solbench/store.h"
#include "solbench/timer.h"
#include "solbench/util.h"

static char dir[256];

static const char *tmp(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

/* A run with one triad-like point whose samples sit around `gbps`. */
static void make_run(sb_run *run, const char *id, int second, double gbps,
                     uint64_t seed)
{
    sb_run_init(run);
    snprintf(run->run_id, sizeof run->run_id, "%s", id);
    snprintf(run->started_at, sizeof run->started_at,
             "2026-11-29T10:00:%02d.000Z", second);
    snprintf(run->ended_at, sizeof run->ended_at, "2026-11-29T10:01:00.000Z");
    json_object_set_new(run->system, "fingerprint", json_string("abcd1234"));
    json_object_set_new(run->config, "threads", json_integer(2));
    sb_result *r = sb_results_push(&run->results);
    sb_result_init(r, "memory.triad", "memory", "cpu");
    sb_pval *v = &r->params.v[r->params.n++];
    snprintf(v->name, sizeof v->name, "size");
    snprintf(v->text, sizeof v->text, "1048576");
    v->type = SB_P_SIZE;
    v->num = 1048576;
    const double bytes = 1e9;
    for (int i = 0; i < 9; i++)
        sb_result_add_sample(r, bytes / (gbps * 1e9) *
                                    (1.0 + 0.01 * sb_rng_unif(&seed)));
    sb_result_finish_stats(r);
    sb_result_metric(r, "latency_us", r->stats.p50 * 1e6, "us");
    sb_result_metric(r, "GBps", bytes / r->stats.p50 / 1e9, "GB/s");
    r->valid = true;
}

/* ---- the config round trip ----------------------------------------------- */

static void test_config_round_trip(void)
{
    sb_ctx ctx, back;
    sb_ctx_defaults(&ctx);
    ctx.suite = SB_SUITE_FULL;
    ctx.threads = 3;
    ctx.min_time = 0.75;
    ctx.repeat = 7;
    ctx.warmup = 2;
    ctx.interleave = true;
    snprintf(ctx.backend, sizeof ctx.backend, "cpu");
    sb_pset user = {0};
    sb_err err = {0};
    CHECK(sb_pset_add(&user, "size=4MiB", &err) == 0);
    CHECK(sb_pset_add(&user, "memory:dtype=fp32", &err) == 0);
    json_t *cfg =
        sb_run_config(&ctx, "memory", "memory.triad,memory.read", &user);
    sb_ctx_defaults(&back);
    sb_gate_sel sel;
    memset(&sel, 0, sizeof sel);
    CHECK(sb_gate_config(cfg, "b", &back, &sel, &err) == 0);
    CHECK(back.suite == SB_SUITE_FULL && back.threads == 3);
    CHECK(back.min_time == 0.75 && back.repeat == 7 && back.warmup == 2);
    CHECK(back.interleave && strcmp(back.backend, "cpu") == 0);
    CHECK(sel.has_areas && strcmp(sel.areas, "memory") == 0);
    CHECK(sel.has_names && strcmp(sel.names, "memory.triad,memory.read") == 0);
    CHECK(sel.has_backend && sel.user.n == 2);
    /* ... and the config made from the context read back is the same */
    json_t *again = sb_run_config(&back, sel.areas, sel.names, &sel.user);
    CHECK(json_equal(cfg, again));
    json_decref(again);

    /* A missing or mistyped field names itself. */
    json_t *bad = json_deep_copy(cfg);
    json_object_set_new(bad, "threads", json_string("two"));
    CHECK(sb_gate_config(bad, "nightly", &back, &sel, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "config.threads") && strstr(err.msg, "nightly"));
    json_decref(bad);

    /* The comparable config takes the baseline's sampling only where the
     * user overrode it. */
    json_t *now = json_deep_copy(cfg);
    json_object_set_new(now, "min_time_s", json_real(2.0));
    json_object_set_new(now, "repeat", json_integer(30));
    json_t *c1 = sb_gate_comparable_config(cfg, now, true, true);
    CHECK(json_equal(c1, cfg));
    json_t *c2 = sb_gate_comparable_config(cfg, now, true, false);
    CHECK(json_integer_value(json_object_get(c2, "repeat")) == 30);
    CHECK(json_real_value(json_object_get(c2, "min_time_s")) == 0.75);
    json_decref(c1);
    json_decref(c2);
    json_decref(now);
    json_decref(cfg);
}

/* ---- judging against several runs ---------------------------------------- */

static void test_spread(void)
{
    sb_run base[3], now;
    make_run(&base[0], "b1", 1, 100.0, 1);
    make_run(&base[1], "b2", 2, 110.0, 2);
    make_run(&base[2], "b3", 3, 90.0, 3);
    sb_cmp_opts o;
    sb_cmp_opts_default(&o);
    sb_err err = {0};
    sb_cmp c;

    /* 15 % under the baseline's median: a regression against one run of
     * 100, but within the 20 % the baseline itself moved. */
    make_run(&now, "n1", 4, 85.0, 4);
    CHECK(sb_compare_runs(&base[0], &now, &o, &c, &err) == 0);
    CHECK(c.n == 1 && c.lines[0].verdict == SB_VERDICT_REGRESSED);
    sb_cmp_free(&c);
    CHECK(sb_compare_baseline(base, 3, &now, &o, &c, &err) == 0);
    CHECK(c.n == 1 && c.lines[0].verdict == SB_VERDICT_UNCHANGED);
    CHECK(c.lines[0].base_runs == 3);
    printf("spread %.2f %%, threshold used %.2f %%, change %.2f %%\n",
           c.lines[0].spread_pct, c.lines[0].threshold_used,
           c.lines[0].change_pct);
    CHECK(c.lines[0].spread_pct > 19.0 && c.lines[0].spread_pct < 21.5);
    CHECK(c.lines[0].threshold_used == c.lines[0].spread_pct);
    CHECK(fabs(c.lines[0].a_value - 100.0) < 1.5); /* the median run */
    CHECK(strstr(c.lines[0].why, "baseline of 3 runs"));
    sb_cmp_free(&c);
    sb_run_free(&now);

    /* 30 % under: beyond the spread, a regression. */
    make_run(&now, "n2", 5, 70.0, 5);
    CHECK(sb_compare_baseline(base, 3, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].verdict == SB_VERDICT_REGRESSED);
    CHECK(c.lines[0].change_pct < -25.0);
    sb_cmp_free(&c);
    sb_run_free(&now);

    /* A tight baseline (spread under the threshold) keeps the threshold. */
    sb_run tight[2];
    make_run(&tight[0], "t1", 6, 100.0, 6);
    make_run(&tight[1], "t2", 7, 101.0, 7);
    make_run(&now, "n3", 8, 92.0, 8);
    CHECK(sb_compare_baseline(tight, 2, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].verdict == SB_VERDICT_REGRESSED);
    CHECK(c.lines[0].threshold_used == o.threshold_pct);
    sb_cmp_free(&c);
    sb_run_free(&now);
    /* One run is the plain comparison. */
    make_run(&now, "n4", 9, 100.0, 9);
    CHECK(sb_compare_baseline(base, 1, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].base_runs == 0);
    sb_cmp_free(&c);
    sb_run_free(&now);
    /* An invalid baseline run makes the point not comparable. */
    base[1].results.items[0].valid = false;
    make_run(&now, "n5", 10, 100.0, 10);
    CHECK(sb_compare_baseline(base, 3, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].verdict == SB_VERDICT_NOT_COMPARABLE);
    sb_cmp_free(&c);
    sb_run_free(&now);
    CHECK(sb_compare_baseline(base, 0, &now, &o, &c, &err) == SB_EINVAL);
    for (int i = 0; i < 3; i++)
        sb_run_free(&base[i]);
    sb_run_free(&tight[0]);
    sb_run_free(&tight[1]);
}

/* A baseline run far from the others (a neighbour's burst on a shared
 * machine) is set aside: it does not widen the spread until a regression
 * hides in it. Spread-out runs are all kept. */
static void test_set_aside(void)
{
    sb_run base[5], now;
    make_run(&base[0], "o1", 1, 133.0, 21);
    make_run(&base[1], "o2", 2, 112.7, 22); /* 15 % slow, alone */
    make_run(&base[2], "o3", 3, 135.0, 23);
    sb_cmp_opts o;
    sb_cmp_opts_default(&o);
    sb_err err = {0};
    sb_cmp c;
    /* 11 % under the two close runs: a regression; with the slow run
     * counted the spread would be 16 % and hide it */
    make_run(&now, "n1", 4, 119.0, 24);
    CHECK(sb_compare_baseline(base, 3, &now, &o, &c, &err) == 0);
    CHECK(c.n == 1 && c.lines[0].verdict == SB_VERDICT_REGRESSED);
    CHECK(c.lines[0].base_aside == 1);
    CHECK(c.lines[0].spread_pct > 0.5 && c.lines[0].spread_pct < 3.0);
    CHECK(c.lines[0].threshold_used == o.threshold_pct);
    CHECK(fabs(c.lines[0].a_value - 134.0) < 1.5); /* median of the kept */
    CHECK(strstr(c.lines[0].why, "1 set aside (11"));
    sb_cmp_free(&c);
    sb_run_free(&now);
    /* and at the baseline's level, unchanged */
    make_run(&now, "n2", 5, 134.0, 25);
    CHECK(sb_compare_baseline(base, 3, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].verdict == SB_VERDICT_UNCHANGED);
    sb_cmp_free(&c);
    sb_run_free(&now);
    /* A fast run alone is set aside as well. */
    sb_run_free(&base[1]);
    make_run(&base[1], "o2", 2, 160.0, 26);
    make_run(&now, "n3", 6, 134.0, 27);
    CHECK(sb_compare_baseline(base, 3, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].base_aside == 1);
    CHECK(c.lines[0].verdict == SB_VERDICT_UNCHANGED);
    sb_cmp_free(&c);
    sb_run_free(&now);
    /* Evenly spread runs (100, 110, 120, 130, 140): none set aside. */
    for (int i = 0; i < 3; i++)
        sb_run_free(&base[i]);
    for (int i = 0; i < 5; i++) {
        char id[8];
        snprintf(id, sizeof id, "e%d", i);
        make_run(&base[i], id, 10 + i, 100.0 + 10.0 * i, 30 + (uint64_t)i);
    }
    make_run(&now, "n4", 20, 110.0, 40);
    CHECK(sb_compare_baseline(base, 5, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].base_aside == 0);
    CHECK(c.lines[0].spread_pct > 30.0);
    CHECK(c.lines[0].verdict == SB_VERDICT_UNCHANGED);
    sb_cmp_free(&c);
    sb_run_free(&now);
    /* Runs that agree to within 1 %: a hair's gap sets none aside. */
    for (int i = 0; i < 5; i++)
        sb_run_free(&base[i]);
    make_run(&base[0], "t1", 50, 100.0, 60);
    make_run(&base[1], "t2", 51, 100.0, 60);
    make_run(&base[2], "t3", 52, 100.6, 60);
    make_run(&now, "n6", 53, 100.0, 61);
    CHECK(sb_compare_baseline(base, 3, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].base_aside == 0);
    CHECK(c.lines[0].spread_pct > 0.3 && c.lines[0].spread_pct < 1.0);
    sb_cmp_free(&c);
    sb_run_free(&now);
    /* Two runs can't say which is out: both kept. */
    make_run(&now, "n5", 21, 100.0, 41);
    CHECK(sb_compare_baseline(base, 2, &now, &o, &c, &err) == 0);
    CHECK(c.lines[0].base_aside == 0);
    sb_cmp_free(&c);
    sb_run_free(&now);
    for (int i = 0; i < 3; i++)
        sb_run_free(&base[i]);
}

/* ---- confirming by measuring again --------------------------------------- */

static void note_count(const char *what, void *arg)
{
    (void)what;
    (*(int *)arg)++;
}

/* A one-point baseline on paper from a measured run: every sample
 * `factor` times the measured fastest (factor < 1: faster than any sample
 * of it) or slowest (factor > 1: slower than any), the bandwidths scaled
 * to match; what it is compared with is then certain, however the
 * machine's load spread the samples. */
static void paper_baseline(const sb_run *now, double factor, sb_run *base)
{
    sb_run_init(base);
    sb_result *r = sb_results_push(&base->results);
    *r = now->results.items[0];
    r->samples_s = malloc(r->n_samples * sizeof *r->samples_s);
    const sb_result *m = &now->results.items[0];
    double edge = m->samples_s[0];
    for (size_t i = 0; i < m->n_samples; i++)
        edge = factor < 1 ? fmin(edge, m->samples_s[i])
                          : fmax(edge, m->samples_s[i]);
    for (size_t i = 0; i < r->n_samples; i++)
        r->samples_s[i] = edge * factor * (1.0 + 1e-3 * (double)i);
    r->cap_samples = r->n_samples;
    for (int i = 0; i < r->n_notes; i++)
        r->notes[i] = strdup(r->notes[i]);
    sb_result_finish_stats(r);
    for (int i = 0; i < r->n_metrics; i++)
        if (strncmp(r->metrics[i].name, "GBps", 4) == 0)
            r->metrics[i].value /= factor;
}

static void test_confirm(void)
{
    /* A real point, measured; a baseline made three times faster than its
     * fastest sample on paper (a certain regression) and one made as it is (a
     * first "regression" planted in the verdict, which the re-measurement must
     * clear). */
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    ctx.min_time = 0.02;
    ctx.repeat = 7;
    ctx.threads = 1;
    ctx.progress = false;
    sb_err err = {0};
    sb_selection sel;
    sb_pset user = {0};
    CHECK(sb_pset_add(&user, "size=256KiB", &err) == 0);
    CHECK(sb_select(NULL, "memory.triad", ctx.suite, "cpu", &sel, &err) == 0);
    sb_plan plan;
    CHECK(sb_plan_build(&sel, &user, &ctx, &plan, &err) == 0);
    sb_run now;
    sb_run_init(&now);
    int *item_of = NULL;
    CHECK(sb_gate_measure(&plan, &ctx, &now.results, &item_of, &err) == 0);
    CHECK(now.results.n == 1 && item_of && item_of[0] == 0);
    sb_run base;
    paper_baseline(&now, 1.0 / 3.0, &base);

    sb_cmp_opts o;
    sb_cmp_opts_default(&o);
    sb_cmp c;
    CHECK(sb_compare_runs(&base, &now, &o, &c, &err) == 0);
    if (c.n)
        printf("against a 3x faster baseline: %s %s %.4g -> %.4g (%+.1f%%, "
               "p %.2g, n %zu/%zu), %s %s\n",
               c.lines[0].bench, c.lines[0].metric, c.lines[0].a_value,
               c.lines[0].b_value, c.lines[0].change_pct, c.lines[0].test.p,
               c.lines[0].na, c.lines[0].nb,
               sb_verdict_name(c.lines[0].verdict), c.lines[0].why);
    CHECK(c.count[SB_VERDICT_REGRESSED] == 1);
    int notes = 0;
    CHECK(sb_gate_confirm(&c, &base, 1, &plan, item_of, &ctx, &o, NULL,
                          note_count, &notes, &err) == 0);
    CHECK(notes == 1);
    CHECK(c.count[SB_VERDICT_REGRESSED] == 1);
    CHECK(strstr(c.lines[0].why, "confirmed: re-measured"));
    sb_cmp_free(&c);

    /* Confirmed twice, the second time after a pause: two re-measurements,
     * both in the note; the pause was waited. */
    CHECK(sb_compare_runs(&base, &now, &o, &c, &err) == 0);
    notes = 0;
    sb_gate_confirm_opts co = {.times = 2, .pause_s = 0.2};
    double t0 = sb_now();
    CHECK(sb_gate_confirm(&c, &base, 1, &plan, item_of, &ctx, &o, &co,
                          note_count, &notes, &err) == 0);
    CHECK(sb_now() - t0 >= 0.2);
    CHECK(notes == 2);
    CHECK(c.count[SB_VERDICT_REGRESSED] == 1);
    CHECK(strstr(c.lines[0].why, "confirmed: re-measured") &&
          strstr(c.lines[0].why, "; after 0.2 s"));
    sb_cmp_free(&c);

    /* Against a baseline ten times slower, a "regression" planted: not
     * confirmed (a first alarm the re-measurement does not repeat). */
    sb_run slow_base;
    paper_baseline(&now, 10.0, &slow_base);
    CHECK(sb_compare_runs(&slow_base, &now, &o, &c, &err) == 0);
    c.lines[0].verdict = SB_VERDICT_REGRESSED;
    c.lines[0].change_pct = -50;
    sb_cmp_recount(&c);
    CHECK(sb_gate_confirm(&c, &slow_base, 1, &plan, item_of, &ctx, &o, NULL,
                          NULL, NULL, &err) == 0);
    CHECK(c.count[SB_VERDICT_REGRESSED] == 0);
    CHECK(strstr(c.lines[0].why, "not confirmed"));
    sb_cmp_free(&c);
    /* cleared at the first re-measurement, no second one (nor pause) */
    CHECK(sb_compare_runs(&slow_base, &now, &o, &c, &err) == 0);
    c.lines[0].verdict = SB_VERDICT_REGRESSED;
    c.lines[0].change_pct = -50;
    sb_cmp_recount(&c);
    notes = 0;
    sb_gate_confirm_opts slow = {.times = 3, .pause_s = 30.0};
    t0 = sb_now();
    CHECK(sb_gate_confirm(&c, &slow_base, 1, &plan, item_of, &ctx, &o, &slow,
                          note_count, &notes, &err) == 0);
    CHECK(notes == 1 && sb_now() - t0 < 20.0);
    CHECK(c.count[SB_VERDICT_REGRESSED] == 0);
    sb_cmp_free(&c);

    free(item_of);
    sb_plan_free(&plan);
    sb_selection_free(&sel);
    sb_run_free(&base);
    sb_run_free(&slow_base);
    sb_run_free(&now);
}

/* ---- the store: several runs a baseline, imports, locks ------------------ */

static void test_store(void)
{
    char db[300];
    tmp("gate.db", db, sizeof db);
    sb_store *st = NULL;
    sb_err err = {0};
    CHECK(sb_store_open(db, &st, &err) == 0);
    if (!st)
        return;
    sb_run r[4];
    for (int i = 0; i < 4; i++) {
        char id[32];
        snprintf(id, sizeof id, "run-%d", i);
        make_run(&r[i], id, 10 + i, 100.0 + i, (uint64_t)i);
        CHECK(sb_store_save_run(st, &r[i], &err) == 0);
    }
    const char *three[3] = {"run-0", "run-1", "run-2"};
    CHECK(sb_store_baseline_set_runs(st, "nightly", three, 3, false, &err) ==
          0);
    char ids[8][64];
    int n = 0;
    CHECK(sb_store_baseline_runs(st, "nightly", ids, 8, &n, &err) == 0);
    CHECK(n == 3 && strcmp(ids[0], "run-0") == 0 &&
          strcmp(ids[2], "run-2") == 0);
    char id[64];
    CHECK(sb_store_resolve(st, "nightly", id, sizeof id, &err) == 0);
    CHECK(strcmp(id, "run-2") == 0); /* the name means its newest run */
    /* update: add run-3, keep the newest 2 */
    CHECK(sb_store_baseline_update(st, "nightly", "run-3", 2, &err) == 0);
    CHECK(sb_store_baseline_runs(st, "nightly", ids, 8, &n, &err) == 0);
    CHECK(n == 2 && strcmp(ids[0], "run-2") == 0 &&
          strcmp(ids[1], "run-3") == 0);
    CHECK(sb_store_resolve(st, "nightly", id, sizeof id, &err) == 0);
    CHECK(strcmp(id, "run-3") == 0);
    /* set replaces; a bad reference changes nothing */
    const char *bad[2] = {"run-0", "no-such-run"};
    CHECK(sb_store_baseline_set_runs(st, "nightly", bad, 2, false, &err) ==
          SB_EINVAL);
    CHECK(sb_store_baseline_runs(st, "nightly", ids, 8, &n, &err) == 0 &&
          n == 2);
    CHECK(sb_store_baseline_set(st, "nightly", "run-1", &err) == 0);
    CHECK(sb_store_baseline_runs(st, "nightly", ids, 8, &n, &err) == 0);
    CHECK(n == 1 && strcmp(ids[0], "run-1") == 0);
    CHECK(sb_store_baseline_runs(st, "none", ids, 8, &n, &err) == 0 && n == 0);

    /* Import: all or nothing. A new run and one under the reserved id
     * 'last': nothing stored. */
    sb_run in[3];
    make_run(&in[0], "imp-1", 30, 50.0, 30);
    make_run(&in[1], "last", 31, 50.0, 31);
    bool ins[3];
    long before = sb_store_count_runs(st, &err);
    const char *names[3] = {"a.json", "b.json", "c.json"};
    CHECK(sb_store_import_runs(st, in, names, 2, ins, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "b.json") && strstr(err.msg, "'last'"));
    CHECK(sb_store_count_runs(st, &err) == before);
    /* a baseline's name as a run id */
    sb_run_free(&in[1]);
    make_run(&in[1], "nightly", 32, 50.0, 32);
    CHECK(sb_store_import_runs(st, in, names, 2, ins, &err) == SB_EINVAL);
    CHECK(sb_store_count_runs(st, &err) == before);
    /* a different run under a stored id: refused, naming both */
    sb_run_free(&in[1]);
    make_run(&in[1], "run-2", 33, 75.0, 33);
    CHECK(sb_store_import_runs(st, in, names, 2, ins, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "run-2") &&
          strstr(err.msg, "already stored with other"));
    CHECK(sb_store_count_runs(st, &err) == before);
    /* the very run stored under that id: skipped, the rest imported */
    sb_run_free(&in[1]);
    make_run(&in[1], "run-2", 12, 102.0, 2);
    make_run(&in[2], "imp-1", 30, 50.0, 30); /* the same run twice: once */
    CHECK(sb_store_import_runs(st, in, names, 3, ins, &err) == 0);
    CHECK(ins[0] && !ins[1] && !ins[2]);
    CHECK(sb_store_count_runs(st, &err) == before + 1);
    /* two different runs under one id among the files */
    sb_run twin[2];
    make_run(&twin[0], "twin", 40, 50.0, 40);
    make_run(&twin[1], "twin", 41, 60.0, 41);
    CHECK(sb_store_import_runs(st, twin, NULL, 2, ins, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "two different runs"));
    for (int i = 0; i < 3; i++)
        sb_run_free(&in[i]);
    sb_run_free(&twin[0]);
    sb_run_free(&twin[1]);

    /* Another connection holds the write lock: a read-only open and read
     * are not held up; a write gives up after SOLBENCH_LOCK_TIMEOUT
     * seconds, naming the lock. */
    sb_store_close(st);
    sqlite3 *other = NULL;
    CHECK(sqlite3_open(db, &other) == SQLITE_OK);
    CHECK(sqlite3_exec(other,
                       "BEGIN IMMEDIATE; INSERT INTO baselines(name, "
                       "run_id, created_at) VALUES ('held', 'run-0', "
                       "'x')",
                       NULL, NULL, NULL) == SQLITE_OK);
    setenv("SOLBENCH_LOCK_TIMEOUT", "1", 1);
    CHECK(sb_store_lock_timeout() == 1.0);
    double t0 = sb_now();
    sb_store *ro = NULL;
    CHECK(sb_store_open_mode(db, SB_STORE_RO, &ro, &err) == 0);
    CHECK(ro && sb_store_count_runs(ro, &err) == before + 1);
    CHECK(sb_store_baseline_runs(ro, "nightly", ids, 8, &n, &err) == 0 &&
          n == 1);
    sb_store_close(ro);
    double t_read = sb_now() - t0;
    printf("read-only open and reads beside a held write lock: %.3f s\n",
           t_read);
    CHECK(t_read < 0.5);
    t0 = sb_now();
    CHECK(sb_store_open(db, &st, &err) == 0);
    sb_run late;
    make_run(&late, "late", 50, 50.0, 50);
    CHECK(sb_store_save_run(st, &late, &err) != 0);
    double t_write = sb_now() - t0;
    printf("write beside a held lock gave up after %.2f s: %s\n", t_write,
           err.msg);
    CHECK(t_write >= 0.9 && t_write < 2.5);
    CHECK(strstr(err.msg, "locked by another process") &&
          strstr(err.msg, "SOLBENCH_LOCK_TIMEOUT"));
    CHECK(sb_store_check_writable(st, 1.0, &err) != 0 &&
          strstr(err.msg, "locked"));
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
    /* The lock gone, the write goes through; a disk with less free space
     * than asked is refused before anything is written. */
    CHECK(sb_store_check_writable(st, 1.0, &err) == 0);
    CHECK(sb_store_save_run(st, &late, &err) == 0);
    CHECK(sb_store_check_writable(st, 1e18, &err) != 0 &&
          strstr(err.msg, "disk is full"));
    unsetenv("SOLBENCH_LOCK_TIMEOUT");
    CHECK(sb_store_lock_timeout() == 30.0);
    sb_run_free(&late);

    /* The fallback file: the document, importable. */
    char kept[4200];
    CHECK(sb_store_save_fallback(&r[0], db, kept, sizeof kept, &err) == 0);
    CHECK(strstr(kept, dir) && strstr(kept, "solbench-unsaved-run-0.json"));
    sb_run back;
    CHECK(sb_run_read_json(kept, &back, &err) == 0);
    CHECK(strcmp(back.run_id, "run-0") == 0 && back.results.n == 1);
    sb_run_free(&back);
    remove(kept);
    sb_store_close(st);
    for (int i = 0; i < 4; i++)
        sb_run_free(&r[i]);
}

/* ---- a baseline's runs, loaded for the gate --------------------------------
 */

static void test_load_baseline(void)
{
    char db[300];
    tmp("gate-load.db", db, sizeof db);
    sb_store *st = NULL;
    sb_err err = {0};
    CHECK(sb_store_open(db, &st, &err) == 0);
    if (!st)
        return;
    sb_run r[3];
    for (int i = 0; i < 3; i++) {
        char id[32];
        snprintf(id, sizeof id, "load-%d", i);
        make_run(&r[i], id, 10 + i, 100.0 + i, (uint64_t)i);
    }
    /* the third made with another thread count: another config */
    json_object_set_new(r[2].config, "threads", json_integer(1));
    for (int i = 0; i < 3; i++)
        CHECK(sb_store_save_run(st, &r[i], &err) == 0);
    const char *alike[2] = {"load-1", "load-0"};
    CHECK(sb_store_baseline_set_runs(st, "alike", alike, 2, false, &err) == 0);
    const char *mixed[2] = {"load-0", "load-2"};
    CHECK(sb_store_baseline_set_runs(st, "mixed", mixed, 2, false, &err) == 0);

    sb_run *base = NULL;
    int n = 0;
    /* oldest first, whatever order the names were given in */
    CHECK(sb_gate_load_baseline(st, "alike", false, &base, &n, &err) == 0);
    CHECK(n == 2 && base && strcmp(base[0].run_id, "load-0") == 0 &&
          strcmp(base[1].run_id, "load-1") == 0);
    sb_gate_free_baseline(base, n);
    /* runs of two configs: refused, naming both and the difference */
    CHECK(sb_gate_load_baseline(st, "mixed", false, &base, &n, &err) ==
          SB_EINVAL);
    CHECK(base == NULL && n == 0);
    CHECK(strstr(err.msg, "baseline mixed") && strstr(err.msg, "load-0") &&
          strstr(err.msg, "load-2") && strstr(err.msg, "threads"));
    /* ... unless told to allow it */
    CHECK(sb_gate_load_baseline(st, "mixed", true, &base, &n, &err) == 0);
    CHECK(n == 2);
    sb_gate_free_baseline(base, n);
    /* a run id, or last, is a baseline of one run */
    CHECK(sb_gate_load_baseline(st, "load-1", false, &base, &n, &err) == 0);
    CHECK(n == 1 && strcmp(base[0].run_id, "load-1") == 0);
    sb_gate_free_baseline(base, n);
    CHECK(sb_gate_load_baseline(st, "last", false, &base, &n, &err) == 0);
    CHECK(n == 1 && strcmp(base[0].run_id, "load-2") == 0);
    sb_gate_free_baseline(base, n);
    /* nothing of that name */
    CHECK(sb_gate_load_baseline(st, "no-such", false, &base, &n, &err) != 0);
    CHECK(base == NULL && n == 0);
    /* the invalid results of a run, skipped ones aside */
    r[0].results.items[0].valid = false;
    CHECK(sb_gate_count_invalid(&r[0].results) == 1);
    r[0].results.items[0].skipped = true;
    CHECK(sb_gate_count_invalid(&r[0].results) == 0);
    for (int i = 0; i < 3; i++)
        sb_run_free(&r[i]);
    sb_store_close(st);
}

int main(void)
{
    if (!sb_test_scratch(dir, sizeof dir, "gate"))
        return 1;
    test_config_round_trip();
    test_spread();
    test_set_aside();
    test_confirm();
    test_store();
    test_load_baseline();
    return sb_test_scratch_done(dir);
}
