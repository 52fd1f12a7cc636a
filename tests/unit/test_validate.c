/*
 * test_validate.c — the steps of `solbench validate` as a library
 * (src/validate): what a workload prepares (its sizes under --quick and
 * the options, the points planned at the model's shapes, the expert
 * GEMMs of a MoE), what it refuses (a job that is not inference on one
 * chip, fewer requests than the batch, a model the reference cannot run,
 * an unknown dtype's absence of a library never reached), and the
 * helpers that read a run. Measuring is held by llm.validate_cli.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "validate/validate.h"

static int count(const sb_plan *p, const char *bench, const char *key,
                 const char *val)
{
    int n = 0;
    for (int i = 0; i < p->n; i++) {
        if (strcmp(p->items[i].bench->name, bench) != 0)
            continue;
        const sb_pval *v = key ? sb_p_find(&p->items[i].point, key) : NULL;
        n += !key || (v && strcmp(v->text, val) == 0);
    }
    return n;
}

static void test_prepare_dense(void)
{
    sb_validate v;
    sb_err err = {0};
    sb_validate_opts o = {
        .workload = "validate-dense", .quick = true, .threads = 1};
    CHECK(sb_validate_prepare(&o, &v, &err) == 0);
    /* --quick: prompts of at most 64 tokens, outputs of at most 16, one
     * request a slot, the light load alone */
    CHECK(v.P == 64 && v.O == 16 && v.B == 1 && v.N == 1);
    CHECK(v.n_loads == 1 && v.load[0].concurrency == 1 &&
          v.load[0].requests == 1 && strcmp(v.load[0].name, "light") == 0);
    CHECK(v.C == v.P + v.O / 2); /* predict's decode context */
    CHECK(strcmp(v.dtype, "fp32") == 0 && v.rounds == 3);
    CHECK(v.need_bytes > 0 && v.ctx.threads == 1);
    /* the ceilings at the model's shapes, the machine's interruptions,
     * then the model: ten points */
    CHECK(v.plan.n == 10);
    CHECK(count(&v.plan, "compute.noise", NULL, NULL) == 1);
    CHECK(count(&v.plan, "compute.gemm", "shape", "llm") == 2);
    /* the decode GEMM on one large matrix and over the model's own
     * d x ffn weights in turn (a product's cost a call), at the batch's
     * rows */
    CHECK(count(&v.plan, "compute.gemm", "shape", "decode") == 2);
    CHECK(count(&v.plan, "compute.gemm", "rotate", "1") == 1);
    for (int i = 0; i < v.plan.n; i++) {
        const sb_params *p = &v.plan.items[i].point;
        if (strcmp(v.plan.items[i].bench->name, "compute.gemm") == 0 &&
            sb_p_int(p, "rotate") == 1)
            CHECK(sb_p_int(p, "ffn") == v.cfg.ffn &&
                  sb_p_int(p, "d_model") == v.cfg.d &&
                  sb_p_int(p, "batch") == 1 &&
                  strcmp(sb_p_str(p, "shape"), "decode") == 0);
    }
    CHECK(count(&v.plan, "memory.read", NULL, NULL) == 1);
    /* paged decode over every layer's sequences in one call, and one
     * layer's (the batch's) alone: its cost a call */
    CHECK(count(&v.plan, "attention.paged_decode", NULL, NULL) == 2);
    CHECK(count(&v.plan, "attention.paged_decode", "batch", "12") == 1 &&
          count(&v.plan, "attention.paged_decode", "batch", "1") == 1);
    CHECK(count(&v.plan, "llm.prefill", NULL, NULL) == 1);
    CHECK(count(&v.plan, "llm.decode", NULL, NULL) == 1);
    /* the prefill GEMM at the prompt's tokens and half of them (the
     * serving loads' shortest prompts), the model's width, the prompt's
     * first */
    int toks = 0, first = 0;
    for (int i = 0; i < v.plan.n; i++) {
        const sb_params *p = &v.plan.items[i].point;
        if (strcmp(v.plan.items[i].bench->name, "compute.gemm") == 0 &&
            strcmp(sb_p_str(p, "shape"), "llm") == 0) {
            CHECK(sb_p_int(p, "d_model") == v.cfg.d);
            toks += (int)sb_p_int(p, "tokens");
            if (!first)
                first = (int)sb_p_int(p, "tokens");
        }
    }
    CHECK(toks == 64 + 32 && first == 64);
    sb_validate_free(&v);

    /* the options change the workload: batch, lengths, requests */
    sb_validate_opts o2 = {.workload = "validate-dense",
                           .batch = 4,
                           .prompt = 32,
                           .output = 8,
                           .threads = 1};
    CHECK(sb_validate_prepare(&o2, &v, &err) == 0);
    CHECK(v.B == 4 && v.P == 32 && v.O == 8 && v.rounds == 5);
    /* three loads: closed loops of 1, 4 and 16, twice as many requests
     * (at least 8); the decode GEMM at each one's rows (4 is the batch's)
     * and at the powers of two below 16 (2, 8); the rotated one at the
     * batch's rows and the saturating load's */
    CHECK(v.n_loads == 3);
    CHECK(v.load[0].concurrency == 1 && v.load[0].requests == 8);
    CHECK(v.load[1].concurrency == 4 && v.load[1].requests == 8);
    CHECK(v.load[2].concurrency == 16 && v.load[2].requests == 32);
    CHECK(strcmp(v.load[2].name, "saturating") == 0 && v.N == 32);
    CHECK(count(&v.plan, "compute.gemm", "shape", "decode") == 7);
    int seen = 0, rot = 0;
    for (int i = 0; i < v.plan.n; i++) {
        const sb_params *p = &v.plan.items[i].point;
        if (strcmp(v.plan.items[i].bench->name, "compute.gemm") == 0 &&
            strcmp(sb_p_str(p, "shape"), "decode") == 0) {
            if (sb_p_int(p, "rotate"))
                rot |= 1 << sb_p_int(p, "batch");
            else
                seen |= 1 << sb_p_int(p, "batch");
        }
    }
    CHECK(seen == ((1 << 1) | (1 << 2) | (1 << 4) | (1 << 8) | (1 << 16)));
    CHECK(rot == ((1 << 4) | (1 << 16)));
    CHECK(v.plan.n == 15);
    sb_validate_free(&v);
    o2.requests = 3; /* fewer than the medium load's concurrency */
    CHECK(sb_validate_prepare(&o2, &v, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "--requests 3") &&
          strstr(err.msg, "medium load's concurrency (4)"));
    sb_validate_free(&v);
}

static void test_prepare_moe(void)
{
    sb_validate v;
    sb_err err = {0};
    sb_validate_opts o = {
        .workload = "validate-moe", .quick = true, .threads = 1};
    CHECK(sb_validate_prepare(&o, &v, &err) == 0);
    /* an expert's products have fewer rows: GEMMs at those too */
    CHECK(v.cfg.experts == 8 && v.cfg.top_k == 2);
    /* the prefill's expert rows 64 x 2/8 = 16 get their GEMM (and the
     * prompt's half, 32, and its expert rows 8); the decode's 1 x 2/8
     * rounds to 1, the batch's own: no point of its own */
    CHECK(count(&v.plan, "compute.gemm", "shape", "llm") == 6);
    /* over an expert's weights in turn: the decode's at the batch's row,
     * the prompts' expert rows 16 and 8 over gate and up (768 x 2048) */
    CHECK(count(&v.plan, "compute.gemm", "rotate", "1") == 3);
    int rot_llm = 0;
    for (int i = 0; i < v.plan.n; i++) {
        const sb_params *p = &v.plan.items[i].point;
        const sb_pval *r = sb_p_find(p, "rotate");
        if (strcmp(v.plan.items[i].bench->name, "compute.gemm") != 0 || !r ||
            r->num != 1 || strcmp(sb_p_find(p, "shape")->text, "llm") != 0)
            continue;
        rot_llm++;
        double t = sb_p_find(p, "tokens")->num;
        CHECK((t == 16 || t == 8) && sb_p_find(p, "d_model")->num == 768 &&
              sb_p_find(p, "ffn")->num == 2048);
    }
    CHECK(rot_llm == 2);
    CHECK(v.plan.n == 14);
    sb_validate_free(&v);
}

static void test_refusals(void)
{
    sb_validate v;
    sb_err err = {0};
    /* many chips, a job too large for one: the reference runs one */
    sb_validate_opts o = {.workload = "deepseek-v3", .threads = 1};
    CHECK(sb_validate_prepare(&o, &v, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "one chip") || strstr(err.msg, "latent"));
    sb_validate_free(&v);
    /* a training job */
    o.workload = "llama3-8b";
    CHECK(sb_validate_prepare(&o, &v, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "inference") || strstr(err.msg, "one chip"));
    sb_validate_free(&v);
    /* no such workload */
    o.workload = "no-such-workload";
    CHECK(sb_validate_prepare(&o, &v, &err) != 0);
    sb_validate_free(&v);
}

static void test_helpers(void)
{
    sb_run run;
    sb_run_init(&run);
    sb_result *a = sb_results_push(&run.results);
    sb_result_init(a, "compute.gemm", "compute", "cpu");
    sb_pval *pv = &a->params.v[a->params.n++];
    snprintf(pv->name, sizeof pv->name, "shape");
    snprintf(pv->text, sizeof pv->text, "decode");
    sb_result_metric(a, "GFLOPs", 12.5, "GFLOP/s");
    sb_result *b = sb_results_push(&run.results);
    sb_result_init(b, "compute.gemm", "compute", "cpu");
    pv = &b->params.v[b->params.n++];
    snprintf(pv->name, sizeof pv->name, "shape");
    snprintf(pv->text, sizeof pv->text, "llm");
    sb_result *c = sb_results_push(&run.results);
    sb_result_init(c, "memory.read", "memory", "cpu");
    c->skipped = true;
    const sb_result *f = sb_validate_find(&run, "compute.gemm", "shape", "llm");
    CHECK(f == &run.results.items[1]);
    f = sb_validate_find(&run, "compute.gemm", NULL, NULL);
    CHECK(f == &run.results.items[0]);
    /* a skipped result is not a measurement */
    CHECK(sb_validate_find(&run, "memory.read", NULL, NULL) == NULL);
    CHECK(sb_validate_metric(&run.results.items[0], "GFLOPs") == 12.5);
    CHECK(sb_validate_metric(&run.results.items[0], "GBps") == 0);
    CHECK(sb_validate_metric(NULL, "GBps") == 0);
    /* a phase the reference does not have */
    CHECK(sb_validate_measured(&run.results.items[0], "no such phase") == -1);
    sb_run_free(&run);
}

int main(void)
{
    test_prepare_dense();
    test_prepare_moe();
    test_refusals();
    test_helpers();
    return sb_check_done();
}
