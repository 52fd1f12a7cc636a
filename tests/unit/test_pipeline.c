/*
 * test_pipeline.c — the machine and the workload a prediction is made
 * for, from what a user names (src/pipeline): a datasheet, a run
 * document, a stored run, and a workload file with its --set changes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "solbench/hw.h"
#include "solbench/output.h"
#include "solbench/pipeline.h"
#include "solbench/store.h"
#include "solbench/workload.h"

static char dir[256];

/* A run document of one memory.read point at `gbps` on this machine. */
static void make_run(sb_run *run, const char *id, double gbps)
{
    sb_run_init(run);
    snprintf(run->run_id, sizeof run->run_id, "%s", id);
    snprintf(run->started_at, sizeof run->started_at,
             "2026-12-03T10:00:00.000Z");
    snprintf(run->ended_at, sizeof run->ended_at, "2026-12-03T10:01:00.000Z");
    json_object_set_new(run->system, "fingerprint", json_string("abcd1234"));
    sb_result *r = sb_results_push(&run->results);
    sb_result_init(r, "memory.read", "memory", "cpu");
    sb_pval *v = &r->params.v[r->params.n++];
    snprintf(v->name, sizeof v->name, "size");
    snprintf(v->text, sizeof v->text, "1073741824");
    v->type = SB_P_SIZE;
    v->num = 1073741824.0;
    for (int i = 0; i < 5; i++)
        sb_result_add_sample(r, 1e9 / (gbps * 1e9));
    sb_result_finish_stats(r);
    sb_result_metric(r, "bytes", 1e9, "B");
    sb_result_metric(r, "GBps", gbps, "GB/s");
    sb_result_metric(r, "GBps_best", gbps, "GB/s");
    r->valid = true;
}

static void test_machine(void)
{
    sb_ceilings c;
    sb_err err = {0};
    char desc[512];
    const char *name;
    /* a datasheet alone */
    CHECK(sb_machine_open("h100-sxm", NULL, NULL, NULL, &c, NULL, NULL, NULL,
                          desc, sizeof desc, &err) == 0);
    CHECK(sb_ceil_peak(&c, "bf16", &name) > 5e14);
    /* both a document and a stored run: one only */
    CHECK(sb_machine_open(NULL, "a.json", "last", NULL, &c, NULL, NULL, NULL,
                          desc, sizeof desc, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "choose one") != NULL);

    /* a run document: its bandwidth is the machine's */
    sb_run run;
    make_run(&run, "pipe-1", 42.0);
    char doc[300], db[300];
    snprintf(doc, sizeof doc, "%s/run.json", dir);
    snprintf(db, sizeof db, "%s/p.db", dir);
    CHECK(sb_run_write_json(&run, doc, &err) == 0);
    sb_run kept;
    int have = 0;
    CHECK(sb_machine_open(NULL, doc, NULL, NULL, &c, NULL, &kept, &have, desc,
                          sizeof desc, &err) == 0);
    CHECK(have == 1 && strcmp(kept.run_id, "pipe-1") == 0);
    CHECK_NEAR(sb_ceil_main_bw(&c, &name), 42e9, 1e-6);
    sb_run_free(&kept);
    /* the same run from the store, by `last` */
    sb_store *st = NULL;
    CHECK(sb_store_open(db, &st, &err) == 0);
    CHECK(st && sb_store_save_run(st, &run, &err) == 0);
    sb_store_close(st);
    CHECK(sb_machine_open(NULL, NULL, "last", db, &c, NULL, NULL, NULL, desc,
                          sizeof desc, &err) == 0);
    CHECK_NEAR(sb_ceil_main_bw(&c, &name), 42e9, 1e-6);
    /* a run the store does not hold */
    CHECK(sb_machine_open(NULL, NULL, "no-such-run", db, &c, NULL, NULL, NULL,
                          desc, sizeof desc, &err) != 0);
    sb_run_free(&run);
    unlink(doc);
}

static void test_workload(void)
{
    sb_workload w;
    sb_ceilings c;
    sb_err err = {0};
    char desc[512];
    json_t *doc = NULL;
    /* a preset on the datasheet it names, a --set applied */
    const char *sets[1] = {"concurrency=8"};
    sb_machine_req req = {0};
    CHECK(sb_workload_open("llama3-70b", sets, 1, &req, NULL, &doc, &w, &c,
                           desc, sizeof desc, &err) == 0);
    CHECK(doc != NULL);
    CHECK(w.kind == SB_JOB_INFER && w.concurrency == 8); /* 64 in the file */
    CHECK(strcmp(w.hw_spec, "h200-sxm") == 0); /* its own $.hardware.spec */
    json_decref(doc);
    /* the command's --hw over the workload's own */
    req.hw = "a100-sxm";
    CHECK(sb_workload_open("llama3-70b", NULL, 0, &req, NULL, NULL, &w, &c,
                           desc, sizeof desc, &err) == 0);
    CHECK(strcmp(w.hw_spec, "a100-sxm") == 0);
    /* a spec that does not exist, named by the command */
    req.hw = "no-such-spec";
    CHECK(sb_workload_open("llama3-70b", NULL, 0, &req, NULL, NULL, &w, &c,
                           desc, sizeof desc, &err) != 0);
    CHECK(strstr(err.msg, "no-such-spec") != NULL);
    /* a setting the workload does not have */
    const char *bad[1] = {"no_such_key=1"};
    req.hw = NULL;
    CHECK(sb_workload_open("llama3-70b", bad, 1, &req, NULL, NULL, &w, &c, desc,
                           sizeof desc, &err) != 0);
}

int main(void)
{
    if (!sb_test_scratch(dir, sizeof dir, "pipeline"))
        return 1;
    test_machine();
    test_workload();
    return sb_test_scratch_done(dir);
}
