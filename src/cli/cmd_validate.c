/*
 * cmd_validate.c — `solbench validate [WORKLOAD] [--dtype fp32|bf16]
 * [--batch N] [--prompt P] [--output O] [--requests N] [--quick]
 * [--threads N] [--trace FILE] [--json FILE] [--db PATH] [--no-store]
 * [--strict]`: runs the reference decoder (src/bench/llm) sized by a
 * workload file, measures in the same run the ceilings predict needs (GEMM
 * at the model's shapes, decode GEMM, memory read, paged attention), then
 * predicts the same workload against them and prints prediction beside
 * measurement per phase and in total (docs/VALIDATE.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "backend/cpu/cpu_gemm.h"
#include "bench/llm/serve.h"
#include "cli/cli.h"
#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/output.h"
#include "solbench/predict.h"
#include "solbench/runner.h"
#include "solbench/stability.h"
#include "solbench/store.h"
#include "solbench/util.h"

static const char validate_help[] =
    "usage: solbench validate [WORKLOAD] [--dtype fp32|bf16] [--batch N]\n"
    "                         [--prompt P] [--output O] [--requests N] "
    "[--quick]\n"
    "                         [--threads N] [--trace FILE] [--json FILE] "
    "[--db PATH]\n"
    "                         [--no-store] [--strict]\n"
    "  WORKLOAD     a workload file or preset (default validate-dense; "
    "validate-moe)\n"
    "  --dtype      fp32 (default) or bf16 weights and matmul inputs\n"
    "  --batch N    concurrent sequences for TPOT and serving (default the "
    "workload's)\n"
    "  --prompt P, --output O  mean prompt and output tokens (default the "
    "workload's)\n"
    "  --requests N requests the serving run completes (default 2 x batch, "
    "at least 3)\n"
    "  --quick      a few seconds in all: short samples, prompts of at most "
    "64 and\n"
    "               outputs of at most 16 tokens unless given, one request a "
    "slot\n"
    "  --trace F    the serving run's timeline as a Chrome trace (trace show "
    "reads it)\n"
    "  --json F     prediction beside measurement, per phase, as JSON\n"
    "  --rounds N   the interleaved samples split in N rounds in time order\n"
    "               (default 5, --quick 3): the ratios are given as their\n"
    "               median and range over the rounds whose ceilings were\n"
    "               stable (over all when too few were)\n"
    "  --strict     exit 1 when TTFT or TPOT (calibrated) is off by more than "
    "20%\n"
    "  --force      run a reference that needs more than 80% of the memory "
    "available\n";

/* Phases off by more than this factor are named when they hold more than
 * SB__VAL_SHARE of their stage. */
#define SB__VAL_PHASE_TOL 1.30
#define SB__VAL_SHARE 0.10
#define SB__VAL_TOTAL_TOL 0.20

typedef struct sb__vopts {
    const char *file, *trace, *json, *db;
    bool bf16, quick, no_store, strict, force;
    int batch, prompt, output, requests, threads, rounds;
} sb__vopts;

/* Appends the points of one benchmark (its parameters from spec) to all. */
static int sb__add(sb_plan *all, const char *bench, const char *spec,
                   const sb_ctx *ctx, sb_err *err)
{
    sb_selection sel;
    int rc = sb_select(NULL, bench, SB_SUITE_QUICK, "cpu", &sel, err);
    if (rc)
        return rc;
    sb_pset ps;
    memset(&ps, 0, sizeof ps);
    sb_plan p = {0};
    rc = sb_pset_add_all(&ps, spec, err);
    if (rc == 0)
        rc = sb_plan_build(&sel, &ps, ctx, &p, err);
    sb_selection_free(&sel);
    if (rc)
        return rc;
    sb_plan_item *items =
        realloc(all->items, sizeof *items * (size_t)(all->n + p.n));
    if (!items) {
        sb_plan_free(&p);
        return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    memcpy(items + all->n, p.items, sizeof *items * (size_t)p.n);
    all->items = items;
    all->n += p.n;
    sb_plan_free(&p);
    return 0;
}

static const sb_result *sb__find(const sb_run *run, const char *bench,
                                 const char *key, const char *val)
{
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        if (strcmp(r->bench, bench) != 0 || r->skipped)
            continue;
        const sb_pval *v = key ? sb_p_find(&r->params, key) : NULL;
        if (!key || (v && strcmp(v->text, val) == 0))
            return r;
    }
    return NULL;
}

static double sb__metric(const sb_result *r, const char *name)
{
    const sb_metric *m = r ? sb_result_get(r, name) : NULL;
    return m ? m->value : 0;
}

/* A phase's measured seconds, from its llm result; -1 when not measured. */
static double sb__measured(const sb_result *r, const char *phase)
{
    for (int i = 0; i < SB_REF_NPH; i++)
        if (strcmp(sb_ref_phase_name(i), phase) == 0) {
            const sb_metric *m =
                r ? sb_result_get(r, sb_llm_phase_metric(i)) : NULL;
            return m ? m->value * 1e-3 : 0;
        }
    return -1;
}

static const char *sb__t(double s, char *buf, size_t len)
{
    return sb_fmt_time(s, "us", buf, len);
}

/* What the ceilings were measured at, for the reasons given. */
typedef struct sb__vshape {
    int prompt, batch, experts, top_k;
} sb__vshape;

/* Why a phase is off, as far as the run can tell: a product with fewer
 * rows than the ceiling's, the attention kernel's way, or in general a
 * kernel below its ceiling (ratio > 1) or a ceiling below what the phase
 * gets (ratio < 1). */
static void sb__why(const sb_phase *pc, const char *stage, double ratio,
                    const sb__vshape *v, char *out, size_t len)
{
    bool prefill = strcmp(stage, "prefill") == 0;
    int rows = prefill ? v->prompt : v->batch;
    double per_expert =
        v->experts > 0 ? (double)rows * v->top_k / v->experts : rows;
    if (strcmp(pc->name, "experts") == 0 && per_expert < rows &&
        !strchr(pc->ceiling, '@'))
        snprintf(out, len,
                 "its products have %.3g rows an expert, the %s ceiling "
                 "was measured at %d: a GEMM's rate depends on its rows "
                 "(%s here)",
                 per_expert, pc->ceiling, rows,
                 ratio > 1 ? "fewer rows, less of the peak"
                           : "fewer rows, fewer FLOPs a weight byte");
    else if (strcmp(pc->name, "attention core") == 0 && prefill && ratio > 1)
        snprintf(out, len,
                 "the paged kernel runs prompt chunks on vector FMAs; the "
                 "ceiling is the GEMM's (%.0f%% of it reached)",
                 100.0 / ratio);
    else if (ratio > 1)
        snprintf(out, len,
                 "the kernel runs below its ceiling: it reaches %.0f%% of "
                 "%s at its %s bound",
                 100.0 / ratio, pc->ceiling, sb_bound_name(pc->bound));
    else
        snprintf(out, len,
                 "%s understates what it gets here: data reused from "
                 "cache, or a faster unit than the ceiling's",
                 pc->ceiling);
}

/* Prints one stage's table and adds it to out; returns the phases off
 * (1000 more when the stage's total misses the target). */
static int sb__stage(const char *stage, const char *title,
                     const sb_prediction *sol, const sb_prediction *cal,
                     const sb_result *r, double measured, const sb__vshape *v,
                     json_t *out, char *off, size_t off_len)
{
    char a[32], b[32], c[32];
    printf("\n%s:\n", title);
    printf("  %-22s %11s %11s %11s %9s  %-8s %s\n", "phase", "SOL",
           "calibrated", "measured", "meas/cal", "class", "binding ceiling");
    json_t *rows = json_array();
    int n_off = 0;
    for (int i = 0; i < cal->n; i++) {
        const sb_phase *pc = &cal->ph[i], *ps = &sol->ph[i];
        if (strcmp(pc->stage, stage) != 0)
            continue;
        double m = sb__measured(r, pc->name);
        if (m < 0)
            continue; /* not a part of the reference (input transfer) */
        double ratio = pc->t > 0 && m > 0 ? m / pc->t : 0;
        bool big = measured > 0 && m / measured > SB__VAL_SHARE;
        bool bad = big && ratio > 0 &&
                   (ratio > SB__VAL_PHASE_TOL || ratio < 1 / SB__VAL_PHASE_TOL);
        printf("  %-22s %11s %11s %11s %8.2fx  %-8s %s%s\n", pc->name,
               sb__t(ps->t, a, sizeof a), sb__t(pc->t, b, sizeof b),
               sb__t(m, c, sizeof c), ratio, sb_bound_name(pc->bound),
               pc->ceiling, bad ? "  <- off" : "");
        char why[240] = "";
        if (bad) {
            n_off++;
            sb__why(pc, stage, ratio, v, why, sizeof why);
            size_t l = strlen(off);
            snprintf(off + l, off_len - l,
                     "  %s (%s): measured %.2fx the calibrated prediction:\n"
                     "    %s\n",
                     pc->name, stage, ratio, why);
        }
        json_array_append_new(
            rows, json_pack("{s:s,s:f,s:f,s:f,s:f,s:s,s:s,s:b,s:s}", "phase",
                            pc->name, "sol_s", ps->t, "calibrated_s", pc->t,
                            "measured_s", m, "ratio", ratio, "class",
                            sb_bound_name(pc->bound), "ceiling", pc->ceiling,
                            "off", bad, "why", why));
    }
    double ts = strcmp(stage, "prefill") == 0 ? sol->ttft_s : sol->tpot_s;
    double tc = strcmp(stage, "prefill") == 0 ? cal->ttft_s : cal->tpot_s;
    double ratio = tc > 0 ? measured / tc : 0;
    bool ok = fabs(ratio - 1.0) <= SB__VAL_TOTAL_TOL;
    printf("  %-22s %11s %11s %11s %8.2fx  %s\n",
           strcmp(stage, "prefill") == 0 ? "TTFT" : "TPOT",
           sb__t(ts, a, sizeof a), sb__t(tc, b, sizeof b),
           sb__t(measured, c, sizeof c), ratio,
           ok ? "within 20%" : "OFF by more than 20%");
    json_object_set_new(out, stage,
                        json_pack("{s:f,s:f,s:f,s:f,s:b,s:o}", "sol_s", ts,
                                  "calibrated_s", tc, "measured_s", measured,
                                  "ratio", ratio, "within", ok, "phases",
                                  rows));
    return ok ? n_off : n_off + 1000;
}

/* The reference's configuration from a workload's model block (the KV
 * page from job.kv_page): SB_EINVAL naming what the reference cannot run
 * (MLA, shared experts, ungated MLPs) or what does not fit its limits. */
static int sb__config(const sb_workload *w, bool bf16, sb_ref_config *c,
                      sb_err *err)
{
    memset(c, 0, sizeof *c);
    if (w->mla)
        return sb_fail(
            err, SB_EINVAL,
            "%s: validate: the reference model has no multi-head latent "
            "attention (model.mla)",
            w->name);
    if (!w->gated)
        return sb_fail(
            err, SB_EINVAL,
            "%s: validate: the reference model runs gated (SwiGLU) MLPs "
            "only (model.gated_mlp)",
            w->name);
    if (w->experts > 0 && w->shared_experts > 0)
        return sb_fail(
            err, SB_EINVAL,
            "%s: validate: the reference model has no shared experts "
            "(model.shared_experts)",
            w->name);
    c->layers = w->layers;
    c->d = w->d_model;
    c->hq = w->q_heads;
    c->hkv = w->kv_heads;
    c->hd = w->head_dim;
    c->ffn = w->ffn;
    c->vocab = w->vocab;
    c->experts = w->experts;
    c->top_k = w->top_k;
    c->expert_ffn = w->expert_ffn;
    c->moe_first = w->moe_first_layer;
    c->moe_every = w->moe_every > 0 ? w->moe_every : 1;
    c->bf16 = bf16;
    c->page = w->kv_page > 0 ? w->kv_page : 16;
    c->rope_theta = 10000.0;
    c->seed = 1;
    c->lib = -1;
    return sb_ref_config_check(c, err);
}

static int sb__parse(int argc, char **argv, sb__vopts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(validate_help, stdout);
            return -1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--dtype", &v))) {
            if (m < 0)
                return 2;
            if (strcmp(v, "fp32") && strcmp(v, "bf16"))
                return sb_cli_usage("validate",
                                    "--dtype %s: expected fp32 or bf16", v);
            o->bf16 = strcmp(v, "bf16") == 0;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--batch", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--batch", v, 1, 1024, &o->batch))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--prompt", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--prompt", v, 1, 65536, &o->prompt))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--output", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--output", v, 1, 65536, &o->output))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--requests", &v))) {
            if (m < 0 || sb_cli_int("validate", "--requests", v, 1, 100000,
                                    &o->requests))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--threads", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--threads", v, 1, 4096, &o->threads))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--rounds", &v))) {
            if (m < 0 ||
                sb_cli_int("validate", "--rounds", v, 1, 20, &o->rounds))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--trace", &v))) {
            if (m < 0)
                return 2;
            o->trace = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return 2;
            o->json = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return 2;
            o->db = v;
        } else if (strcmp(argv[i], "--quick") == 0) {
            o->quick = true;
        } else if (strcmp(argv[i], "--no-store") == 0) {
            o->no_store = true;
        } else if (strcmp(argv[i], "--strict") == 0) {
            o->strict = true;
        } else if (strcmp(argv[i], "--force") == 0) {
            o->force = true;
        } else if (argv[i][0] == '-') {
            return sb_cli_usage("validate",
                                "unknown option '%s' (see 'solbench "
                                "validate --help')",
                                argv[i]);
        } else if (o->file) {
            return sb_cli_usage("validate", "one workload only ('%s')",
                                argv[i]);
        } else {
            o->file = argv[i];
        }
    }
    return 0;
}

/* Reads the workload with the command's lengths and batch, and checks it
 * is one the reference runs: inference on one chip. */
static int sb__workload(const sb__vopts *o, sb_workload *w, char *path,
                        size_t plen, sb_err *err)
{
    json_t *doc = NULL;
    int rc = sb_workload_load_doc(o->file, &doc, path, (int)plen, err);
    char kv[64];
    if (rc == 0 && o->prompt) {
        snprintf(kv, sizeof kv, "prompt=%d", o->prompt);
        rc = sb_workload_doc_set(doc, kv, err);
    }
    if (rc == 0 && o->output) {
        snprintf(kv, sizeof kv, "output=%d", o->output);
        rc = sb_workload_doc_set(doc, kv, err);
    }
    if (rc == 0 && o->batch) {
        snprintf(kv, sizeof kv, "concurrency=%d", o->batch);
        rc = sb_workload_doc_set(doc, kv, err);
    }
    if (rc == 0)
        rc = sb_workload_from_json(doc, path, w, err);
    json_decref(doc);
    if (rc)
        return rc;
    if (w->kind != SB_JOB_INFER)
        return sb_fail(err, SB_EINVAL,
                       "%s: $.job.type: validate runs inference (the "
                       "reference decoder serves requests)",
                       path);
    if (w->chips != 1 ||
        w->data * w->fsdp * w->tensor * w->expert * w->pipeline * w->context !=
            1)
        return sb_fail(err, SB_EINVAL,
                       "%s: validate runs on one chip: $.topology.chips and "
                       "every parallel degree must be 1",
                       path);
    if (w->request_rate > 0)
        return sb_fail(err, SB_EINVAL,
                       "%s: $.job.request_rate: validate serves a constant "
                       "concurrency (job.concurrency)",
                       path);
    return 0;
}

/* ---- the run-to-run spread -------------------------------------------------
 * One interleaved run holds every point's samples in rounds (A B C, C B A,
 * ...): split in time order into k blocks, block j of every point covers
 * the same stretch of the machine. Each block is a run of its own: the
 * points' rates taken again from the block's median and best sample, its
 * ceilings, its calibration and its prediction; TTFT and TPOT measured
 * (the block's medians) over predicted. */

#define SB__VMAX_ROUNDS 20

typedef struct sb__vspread {
    int n, nstable;
    bool use_stable; /* enough rounds had stable ceilings to use them alone */
    struct {
        double ttft, tpot, eff[3];
        bool stable, used;
        char why[160];
    } r[SB__VMAX_ROUNDS];
    double ttft[3], tpot[3]; /* min, median, max over the rounds used */
} sb__vspread;

static int sb__cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* r's samples [lo, hi) as a result of their own, its rates taken from them */
static int sb__block(const sb_result *r, size_t lo, size_t hi, sb_result *out)
{
    *out = *r;
    out->samples_s = NULL;
    out->n_samples = out->cap_samples = 0;
    out->n_notes = 0; /* the notes stay with r */
    for (size_t i = lo; i < hi; i++)
        if (sb_result_add_sample(out, r->samples_s[i]))
            return SB_ENOMEM;
    sb_result_finish_stats(out);
    double med = r->stats.p50 > 0 && out->stats.p50 > 0
                     ? r->stats.p50 / out->stats.p50
                     : 1;
    double best = r->stats.min > 0 && out->stats.min > 0
                      ? r->stats.min / out->stats.min
                      : 1;
    static const char *const rates[] = {"GFLOPs", "TFLOPs", "GBps",
                                        "weight_GBps", "tokens_per_s"};
    for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
        char nb[48];
        const sb_metric *m = sb_result_get(r, rates[k]);
        if (m)
            sb_result_metric(out, rates[k], m->value * med, m->unit);
        snprintf(nb, sizeof nb, "%s_best", rates[k]);
        if ((m = sb_result_get(r, nb)))
            sb_result_metric(out, nb, m->value * best, m->unit);
    }
    /* its samples judged alone; the machine's context of the whole run
     * (another load, steal, the clock) still holds */
    unsigned ctxflags = r->stab_flags & (SB_UNSTABLE_LOAD | SB_UNSTABLE_STEAL |
                                         SB_UNSTABLE_FREQ);
    sb_stability_judge(out, NULL);
    if (ctxflags && out->stab_judged) {
        out->stab_flags |= ctxflags;
        out->stable = false;
    }
    return 0;
}

static void sb__spread(const sb_run *run, const sb_workload *w, int k,
                       sb__vspread *sp)
{
    memset(sp, 0, sizeof *sp);
    static const char *const need[6][3] = {
        {"llm.prefill", NULL, NULL},
        {"llm.decode", NULL, NULL},
        {"compute.gemm", "shape", "llm"},
        {"compute.gemm", "shape", "decode"},
        {"memory.read", NULL, NULL},
        {"attention.paged_decode", NULL, NULL}};
    static const char *const what[6] = {"",
                                        "",
                                        "the prefill GEMM",
                                        "the decode GEMM",
                                        "memory.read",
                                        "paged attention"};
    const sb_result *src[6];
    size_t nmin = (size_t)-1;
    for (int i = 0; i < 6; i++) {
        src[i] = sb__find(run, need[i][0], need[i][1], need[i][2]);
        if (!src[i] && i < 5)
            return;
        if (src[i] && src[i]->n_samples < nmin)
            nmin = src[i]->n_samples;
    }
    if (k > SB__VMAX_ROUNDS)
        k = SB__VMAX_ROUNDS;
    if (k < 2 || nmin < (size_t)(2 * k))
        return; /* too few samples to split */
    sp->n = k;
    for (int j = 0; j < k; j++) {
        sb_run v;
        sb_run_init(&v);
        v.system = run->system;
        v.config = run->config;
        sb_result *blk[6] = {0};
        bool ok = true;
        sp->r[j].stable = true;
        for (int i = 0; i < 6 && ok; i++) {
            if (!src[i])
                continue;
            size_t n = src[i]->n_samples;
            sb_result *b = sb_results_push(&v.results);
            if (!b || sb__block(src[i], n * (size_t)j / (size_t)k,
                                n * (size_t)(j + 1) / (size_t)k, b)) {
                ok = false;
                break;
            }
            blk[i] = b;
        }
        /* pointers are taken after every push (the list may move) */
        for (int i = 0, q = 0; ok && i < 6; i++)
            if (src[i])
                blk[i] = &v.results.items[q++];
        for (int i = 2; ok && i < 6; i++)
            if (blk[i] && blk[i]->stab_judged && !blk[i]->stable) {
                sp->r[j].stable = false;
                size_t l = strlen(sp->r[j].why);
                snprintf(sp->r[j].why + l, sizeof sp->r[j].why - l, "%s%s",
                         l ? ", " : "", what[i]);
            }
        sb_ceilings c;
        memset(&c, 0, sizeof c);
        sb_prediction *cal = ok ? malloc(sizeof *cal) : NULL;
        sb_workload wc = *w;
        sb_err e = {0};
        if (cal) {
            sb_ceil_from_run(&v, &c);
            double gb = sb__metric(blk[2], "GFLOPs_best"),
                   gm = sb__metric(blk[2], "GFLOPs"),
                   db = sb__metric(blk[3], "weight_GBps_best"),
                   dm = sb__metric(blk[3], "weight_GBps"),
                   rb = sb__metric(blk[4], "GBps_best");
            wc.eff_matmul = gb > 0 ? fmin(1.0, gm / gb) : 0;
            wc.eff_memory = db > 0 ? fmin(1.0, dm / db) : 0;
            wc.eff_attention = blk[5] && rb > 0
                                   ? fmin(1.0, sb__metric(blk[5], "GBps") / rb)
                                   : 0;
            wc.eff_network = 0;
            sp->r[j].eff[0] = wc.eff_matmul;
            sp->r[j].eff[1] = wc.eff_memory;
            sp->r[j].eff[2] = wc.eff_attention;
            if (sb_predict_calibrated(&wc, &c, cal, &e) == 0) {
                sp->r[j].ttft =
                    cal->ttft_s > 0 ? blk[0]->stats.p50 / cal->ttft_s : 0;
                sp->r[j].tpot =
                    cal->tpot_s > 0 ? blk[1]->stats.p50 / cal->tpot_s : 0;
            }
        }
        free(cal);
        v.system = v.config = NULL; /* the run's, not this view's */
        sb_run_free(&v);
        sp->nstable += sp->r[j].stable;
    }
    sp->use_stable = sp->nstable >= (k + 1) / 2;
    double tt[SB__VMAX_ROUNDS], tp[SB__VMAX_ROUNDS];
    int nu = 0;
    for (int j = 0; j < k; j++) {
        sp->r[j].used = !sp->use_stable || sp->r[j].stable;
        if (sp->r[j].used && sp->r[j].ttft > 0 && sp->r[j].tpot > 0) {
            tt[nu] = sp->r[j].ttft;
            tp[nu++] = sp->r[j].tpot;
        }
    }
    if (nu == 0) {
        sp->n = 0;
        return;
    }
    qsort(tt, (size_t)nu, sizeof tt[0], sb__cmpd);
    qsort(tp, (size_t)nu, sizeof tp[0], sb__cmpd);
    sp->ttft[0] = tt[0];
    sp->ttft[2] = tt[nu - 1];
    sp->ttft[1] = nu % 2 ? tt[nu / 2] : 0.5 * (tt[nu / 2 - 1] + tt[nu / 2]);
    sp->tpot[0] = tp[0];
    sp->tpot[2] = tp[nu - 1];
    sp->tpot[1] = nu % 2 ? tp[nu / 2] : 0.5 * (tp[nu / 2 - 1] + tp[nu / 2]);
}

int sb_cmd_validate(int argc, char **argv)
{
    sb__vopts o = {0};
    int prc = sb__parse(argc, argv, &o);
    if (prc)
        return prc < 0 ? 0 : prc;
    if (!o.file)
        o.file = "validate-dense";
    sb_err err = {0};
    char path[1024];
    sb_workload w;
    if (sb__workload(&o, &w, path, sizeof path, &err))
        return sb_cli_error(&err);
    if (o.quick && (!o.prompt || !o.output)) {
        /* a few seconds: short requests unless the lengths are given */
        if (!o.prompt)
            o.prompt = w.prompt_len < 64 ? w.prompt_len : 64;
        if (!o.output)
            o.output = w.output_len < 16 ? w.output_len : 16;
        if (!o.requests)
            o.requests = w.concurrency;
        if (sb__workload(&o, &w, path, sizeof path, &err))
            return sb_cli_error(&err);
    }
    sb_ref_config cfg;
    if (sb__config(&w, o.bf16, &cfg, &err))
        return sb_cli_error(&err);
    const char *dt = o.bf16 ? "bf16" : "fp32";
    int gdt = o.bf16 ? SB_GEMM_BF16 : SB_GEMM_F32;
    bool can = false;
    char why[200] = "";
    for (int lib = 0; lib < SB_GEMM_NLIBS && !can; lib++)
        can = sb_gemm_lib_supports(lib, gdt, why, sizeof why);
    if (!can)
        return sb_cli_usage("validate",
                            "--dtype %s: no GEMM library runs it "
                            "on this CPU (%s)",
                            dt, why);
    int B = w.concurrency, P = w.prompt_len, O = w.output_len;
    int C = P + O / 2; /* predict's decode context */
    int N = o.requests ? o.requests : (2 * B > 3 ? 2 * B : 3);
    if (N < B)
        return sb_cli_usage("validate",
                            "--requests %d: fewer than the batch (%d)", N, B);
    /* the serving run's model: the longest request and an iteration of
     * every decode plus two of the longest prompts */
    int maxp = P + P / 2 + 1, maxo = O + O / 2 + 1;
    int sctx = maxp + maxo + 8, stok = B + 2 * maxp;
    double need = sb_ref_footprint(&cfg, B, sctx, stok);
    double have = sb_mem_available();
    {
        char what[600];
        snprintf(what, sizeof what,
                 "%s: the reference (weights %.2f GB, KV cache for %d x %d "
                 "tokens)",
                 path, sb_ref_weight_bytes(&cfg) / 1e9, B, sctx);
        if (sb_mem_fits(need, o.force ? 0 : have, what, &err))
            return sb_cli_error(&err);
    }

    struct stat jid, tid;
    if ((o.json && sb_cli_check_out("--json", o.json, &jid, &err)) ||
        (o.trace && sb_cli_check_out("--trace", o.trace, &tid, &err)))
        return sb_cli_error(&err);
    if (o.json && o.trace && sb_cli_same_out(o.json, &jid, o.trace, &tid))
        return sb_cli_usage("validate", "--json and --trace name one file");

    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    if (o.threads)
        ctx.threads = o.threads;
    snprintf(ctx.backend, sizeof ctx.backend, "cpu");
    /* every point set up first, then sampled in rounds: the ceilings and
     * the model see the same stretches of a shared machine; when two
     * models and the ceilings' buffers do not fit together, one point
     * after the other */
    ctx.interleave = have <= 0 || 2 * need + 1e9 < SB_MEM_SHARE * have;
    ctx.force = o.force;
    if (!ctx.interleave)
        printf("note: the points run one after the other (two copies of "
               "the model and the ceilings' buffers do not fit in memory "
               "together)\n");
    if (o.quick) {
        ctx.min_time = 0.05;
        ctx.repeat = 3;
    }
    /* enough samples for every round to have three of each point */
    const int rounds = o.rounds ? o.rounds : (o.quick ? 3 : 5);
    if (ctx.interleave && ctx.repeat < 3 * rounds)
        ctx.repeat = 3 * rounds;
    sb_threads_setup(ctx.threads);

    /* the points: ceilings at the model's shapes, then the model */
    int F = cfg.experts > 0 && cfg.ffn == 0 ? cfg.expert_ffn : cfg.ffn;
    double llc = sb_llc_bytes();
    double rsize = fmax(256.0 * (1 << 20), 4 * llc);
    char spec[6][600];
    snprintf(spec[0], sizeof spec[0],
             "dtype=%s lib=auto shape=llm tokens=%d d_model=%d ffn=%d", dt, P,
             cfg.d, 2 * F);
    snprintf(spec[1], sizeof spec[1],
             "dtype=%s lib=auto shape=decode batch=%d d_model=%d ffn=0", dt, B,
             cfg.d);
    snprintf(spec[2], sizeof spec[2], "size=%.0fMiB dtype=fp32",
             ceil(rsize / (1 << 20)));
    snprintf(spec[3], sizeof spec[3],
             "batch=%d lens=uniform:%d:%d q_heads=%d kv_heads=%d head_dim=%d "
             "page_size=%d chunk=0 seed=1",
             B * cfg.layers, C, C, cfg.hq, cfg.hkv, cfg.hd, cfg.page);
    char model[400], llm_prefill[600], llm_decode[600];
    snprintf(model, sizeof model,
             "layers=%d d_model=%d q_heads=%d kv_heads=%d head_dim=%d ffn=%d "
             "vocab=%d experts=%d top_k=%d expert_ffn=%d moe_first_layer=%d "
             "moe_every=%d kv_page=%d",
             cfg.layers, cfg.d, cfg.hq, cfg.hkv, cfg.hd, cfg.ffn, cfg.vocab,
             cfg.experts, cfg.experts ? cfg.top_k : 1,
             cfg.experts ? cfg.expert_ffn : 1, cfg.moe_first, cfg.moe_every,
             cfg.page);
    snprintf(llm_prefill, sizeof llm_prefill, "%s dtype=%s batch=1 prompt=%d",
             model, dt, P);
    snprintf(llm_decode, sizeof llm_decode, "%s dtype=%s batch=%d context=%d",
             model, dt, B, C);
    /* an expert's products have fewer rows: the GEMMs at those too
     * (predict takes each matmul phase's ceiling at its rows) */
    int PE = 0, BE = 0;
    if (cfg.experts > 0) {
        PE = (int)lround((double)P * cfg.top_k / cfg.experts);
        BE = (int)lround((double)B * cfg.top_k / cfg.experts);
        PE = PE < 1 ? 1 : PE;
        BE = BE < 1 ? 1 : BE;
    }
    snprintf(spec[4], sizeof spec[4],
             "dtype=%s lib=auto shape=llm tokens=%d d_model=%d ffn=%d", dt, PE,
             cfg.d, 2 * cfg.expert_ffn);
    snprintf(spec[5], sizeof spec[5],
             "dtype=%s lib=auto shape=decode batch=%d d_model=%d ffn=0", dt, BE,
             cfg.d);
    sb_plan plan = {0};
    if (sb__add(&plan, "compute.gemm", spec[0], &ctx, &err) ||
        sb__add(&plan, "compute.gemm", spec[1], &ctx, &err) ||
        (PE > 0 && PE != P &&
         sb__add(&plan, "compute.gemm", spec[4], &ctx, &err)) ||
        (BE > 0 && BE != B &&
         sb__add(&plan, "compute.gemm", spec[5], &ctx, &err)) ||
        sb__add(&plan, "memory.read", spec[2], &ctx, &err) ||
        sb__add(&plan, "attention.paged_decode", spec[3], &ctx, &err) ||
        sb__add(&plan, "llm.prefill", llm_prefill, &ctx, &err) ||
        sb__add(&plan, "llm.decode", llm_decode, &ctx, &err)) {
        sb_plan_free(&plan);
        return sb_cli_error(&err);
    }

    sb_store *st = NULL;
    char db_file[1024] = "";
    if (!o.no_store && (sb_store_path(o.db, db_file, sizeof db_file, &err) ||
                        sb_store_open(db_file, &st, &err) ||
                        sb_store_check_writable(st, 16.0 * 1048576.0, &err))) {
        sb_store_close(st);
        sb_plan_free(&plan);
        return sb_cli_error(&err);
    }

    printf("validate %s (%s, %.2fB parameters): prefill of %d tokens, "
           "decode of %d sequences at %d keys, serving %d requests at "
           "concurrency %d\n",
           w.name, dt, sb_ref_weight_bytes(&cfg) / (o.bf16 ? 2.0 : 4.0) / 1e9,
           P, B, C, N, B);
    fflush(stdout);
    json_t *tags = json_pack("{s:s}", "validate", w.name);
    sb_run run;
    sb_run_init(&run);
    sb_run_begin(&run, &ctx, NULL,
                 "compute.gemm,memory.read,attention.paged_decode,llm.prefill,"
                 "llm.decode",
                 NULL, tags);
    json_decref(tags);
    int rc = sb_run_plan(&plan, &ctx, &run.results, &err);
    sb_plan_free(&plan);
    sb_utc_now(run.ended_at, sizeof run.ended_at);
    if (rc) {
        sb_store_close(st);
        sb_run_free(&run);
        return sb_cli_error(&err);
    }
    int code = 0;
    for (size_t i = 0; i < run.results.n; i++) {
        const sb_result *r = &run.results.items[i];
        if (r->skipped) {
            fprintf(stderr, "solbench validate: %s skipped: %s\n", r->bench,
                    r->n_notes ? r->notes[0] : "");
            code = 2;
        } else if (!r->valid) {
            fprintf(stderr, "solbench validate: %s failed its verification\n",
                    r->bench);
            code = 1;
        }
    }
    const sb_result *rp = sb__find(&run, "llm.prefill", NULL, NULL),
                    *rd = sb__find(&run, "llm.decode", NULL, NULL),
                    *gl = sb__find(&run, "compute.gemm", "shape", "llm"),
                    *gd = sb__find(&run, "compute.gemm", "shape", "decode"),
                    *mr = sb__find(&run, "memory.read", NULL, NULL),
                    *pa = sb__find(&run, "attention.paged_decode", NULL, NULL);
    if (!rp || !rd || !gl || !gd || !mr) {
        sb_store_close(st);
        sb_run_free(&run);
        if (code == 0)
            fprintf(stderr, "solbench validate: a measurement is missing\n");
        return code ? code : 2;
    }

    /* the serving run, on a model of its own */
    sb_serve_stats ss = {0};
    sb_ref_model *m = NULL;
    sb_ref_event *ev = NULL;
    int cap_ev = o.trace ? 2000000 : 0;
    cfg.seed = 1;
    rc = sb_ref_create(&cfg, B, sctx, stok, ctx.threads, &m, &err);
    if (rc == 0 && o.trace) {
        ev = malloc(sizeof *ev * (size_t)cap_ev);
        if (!ev)
            rc = sb_fail(&err, SB_ENOMEM, "out of memory");
        else
            sb_ref_record(m, ev, cap_ev);
    }
    if (rc == 0) {
        sb_serve_opts so = {B, N, P, O, true, 3, stok, sctx};
        rc = sb_serve_run(m, &so, &ss, &err);
    }
    if (rc == 0 && o.trace) {
        char label[128];
        snprintf(label, sizeof label, "solbench validate %s", w.name);
        json_t *tr =
            sb_serve_trace(m, ev, sb_ref_n_events(m), ss.t_start, label);
        rc = sb_cli_write_json(tr, o.trace, JSON_COMPACT, "the trace", &err);
        json_decref(tr);
    }
    free(ev);
    sb_ref_free(m);
    if (rc) {
        sb_store_close(st);
        sb_run_free(&run);
        return sb_cli_error(&err);
    }

    /* the prediction against this run's ceilings */
    sb_ceilings c;
    memset(&c, 0, sizeof c);
    sb_ceil_from_run(&run, &c);
    sb_workload wc = w;
    /* calibrated: what each kernel sustains (its median) against the
     * ceiling (the best sample) of the same run */
    double gb = sb__metric(gl, "GFLOPs_best"), gm = sb__metric(gl, "GFLOPs");
    double db = sb__metric(gd, "weight_GBps_best"),
           dm = sb__metric(gd, "weight_GBps");
    double rb = sb__metric(mr, "GBps_best");
    wc.eff_matmul = gb > 0 ? fmin(1.0, gm / gb) : 0;
    wc.eff_memory = db > 0 ? fmin(1.0, dm / db) : 0;
    wc.eff_attention =
        pa && rb > 0 ? fmin(1.0, sb__metric(pa, "GBps") / rb) : 0;
    wc.eff_network = 0;
    snprintf(wc.calib_source, sizeof wc.calib_source,
             "this run: medians over best samples");
    sb_prediction *sol = malloc(sizeof *sol), *cal = malloc(sizeof *cal);
    if (!sol || !cal || sb_predict(&w, &c, sol, &err) ||
        sb_predict_calibrated(&wc, &c, cal, &err)) {
        free(sol), free(cal);
        sb_store_close(st);
        sb_run_free(&run);
        return err.code ? sb_cli_error(&err) : 2;
    }

    /* The run-to-run spread: the samples split in rounds, in the order
     * they were taken (interleaved, every round saw every point), each
     * round predicted from its own ceilings. */
    sb__vspread sp;
    sb__spread(&run, &w, rounds, &sp);

    char a[32], b[32], x[32];
    printf("\nmachine (measured in this run): %s %s at the prefill shape, "
           "%s B/s weights streamed at the decode shape, %s B/s memory.read",
           sb_fmt_eng(gb * 1e9, a, sizeof a), "FLOP/s",
           sb_fmt_eng(db * 1e9, b, sizeof b),
           sb_fmt_eng(rb * 1e9, x, sizeof x));
    if (pa)
        printf(", paged attention %s B/s",
               sb_fmt_eng(sb__metric(pa, "GBps") * 1e9, a, sizeof a));
    printf("\ncalibrated: efficiencies matmul %.2f, memory %.2f, attention "
           "%.2f (%s)\n",
           wc.eff_matmul, wc.eff_memory, wc.eff_attention, wc.calib_source);
    for (int i = 0; i < rp->n_notes; i++)
        if (strncmp(rp->notes[i], "kernels: ", 9) == 0)
            printf("%s\n", rp->notes[i]);

    json_t *out = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i,s:s}", "schema",
                            "solbench.validate/1", "workload", w.name, "dtype",
                            dt, "batch", B, "prompt", P, "output", O, "context",
                            C, "run_id", run.run_id);
    json_object_set_new(out, "calibration",
                        json_pack("{s:f,s:f,s:f}", "matmul", wc.eff_matmul,
                                  "memory", wc.eff_memory, "attention",
                                  wc.eff_attention));
    char off[4000] = "", title[160];
    snprintf(title, sizeof title, "prefill of one %d-token prompt (TTFT)", P);
    sb__vshape vs = {P, B, cfg.experts, cfg.top_k};
    int bad = sb__stage("prefill", title, sol, cal, rp, rp->stats.p50, &vs, out,
                        off, sizeof off);
    snprintf(title, sizeof title,
             "decode step, %d sequence%s at %d keys (TPOT)", B,
             B > 1 ? "s" : "", C);
    bad += sb__stage("decode", title, sol, cal, rd, rd->stats.p50, &vs, out,
                     off, sizeof off);

    printf("\nserving (continuous batching, %d requests at concurrency %d, "
           "ragged lengths, %d iterations):\n",
           N, B, ss.iterations);
    printf("  %-22s %11s %11s\n", "", "predicted", "measured");
    printf("  %-22s %11s %11s   (p50 %s, p99 %s, over %d requests)\n",
           "TTFT under load", sb__t(cal->serve.ttft_s, a, sizeof a),
           sb__t(ss.ttft.mean, b, sizeof b), sb__t(ss.ttft.p50, x, sizeof x),
           sb__t(ss.ttft.p99, title, sizeof title), (int)ss.ttft.n);
    printf("  %-22s %11s %11s   (p50 %s, p90 %s, p99 %s)\n", "TPOT under load",
           sb__t(cal->serve.tpot_s, a, sizeof a),
           sb__t(ss.tpot.mean, b, sizeof b), sb__t(ss.tpot.p50, x, sizeof x),
           sb__t(ss.tpot.p90, title, sizeof title),
           sb__t(ss.tpot.p99, title + 40, sizeof title - 40));
    printf("  %-22s %11.4g %11.4g   (%.0f output and %.0f prompt tokens)\n",
           "output tokens/s", cal->serve.tokens_per_s, ss.tokens_per_s,
           ss.tokens, ss.prefill_tokens);
    printf("  %-22s %11s %11s\n", "request latency",
           sb__t(cal->ttft_s + O * cal->tpot_s, a, sizeof a),
           sb__t(ss.latency.mean, b, sizeof b));
    json_object_set_new(
        out, "serve",
        json_pack("{s:i,s:i,s:{s:f,s:f,s:f,s:f},s:{s:f,s:f,s:f,s:f,s:f,s:f,"
                  "s:f,s:f,s:f}}",
                  "requests", N, "iterations", ss.iterations, "predicted",
                  "ttft_s", cal->serve.ttft_s, "tpot_s", cal->serve.tpot_s,
                  "tokens_per_s", cal->serve.tokens_per_s, "latency_s",
                  cal->ttft_s + O * cal->tpot_s, "measured", "ttft_s",
                  ss.ttft.mean, "ttft_p99_s", ss.ttft.p99, "tpot_s",
                  ss.tpot.mean, "tpot_p50_s", ss.tpot.p50, "tpot_p90_s",
                  ss.tpot.p90, "tpot_p99_s", ss.tpot.p99, "tokens_per_s",
                  ss.tokens_per_s, "latency_s", ss.latency.mean,
                  "latency_p99_s", ss.latency.p99));

    /* the reference against its own ceilings: the decode's stream over
     * memory.read; the prefill's weight matmuls over the time they would
     * take at the GEMM ceilings of their shapes (each phase's, at its rows:
     * the speed-of-light prediction's matmul terms) */
    double stream = sb__metric(rd, "stream_GBps");
    double mm_sol = 0, mm_meas = 0;
    for (int i = 0; i < sol->n; i++) {
        const sb_phase *ph = &sol->ph[i];
        double meas = sb__measured(rp, ph->name);
        if (strcmp(ph->stage, "prefill") == 0 && ph->work == SB_WORK_MATMUL &&
            ph->bound == SB_BOUND_COMPUTE && meas > 0) {
            mm_sol += ph->t_compute;
            mm_meas += meas;
        }
    }
    double mm_eff = mm_meas > 0 ? mm_sol / mm_meas : 0;
    printf("\nthe reference against the ceilings: decode streams weights and "
           "KV at %.2f of memory.read (%s B/s)%s; prefill's compute-bound "
           "matmuls run at %.2f of the GEMM ceilings at their shapes\n",
           rb > 0 ? stream / rb : 0, sb_fmt_eng(stream * 1e9, a, sizeof a),
           B > 1 ? " (a batch: its products need not stream, batch 1 "
                   "tells the stream)"
                 : "",
           mm_eff);
    json_object_set_new(out, "reference",
                        json_pack("{s:f,s:f}", "decode_stream_of_read",
                                  rb > 0 ? stream / rb : 0,
                                  "prefill_matmul_of_gemm", mm_eff));
    if (off[0])
        printf("\nphases with more than %.0f%% of their stage off by more "
               "than %.0f%%:\n%s",
               100 * SB__VAL_SHARE, 100 * (SB__VAL_PHASE_TOL - 1), off);
    if (sp.n > 0) {
        printf("\nrun-to-run spread: the samples in %d rounds in time order, "
               "%d with stable ceilings; the ratios over %s:\n",
               sp.n, sp.nstable,
               sp.use_stable ? "those" : "all of them (too few were stable)");
        json_t *jr = json_array();
        for (int i = 0; i < sp.n; i++) {
            printf("  round %d: TTFT %.2fx, TPOT %.2fx; calibration matmul "
                   "%.2f, memory %.2f, attention %.2f%s%s%s\n",
                   i + 1, sp.r[i].ttft, sp.r[i].tpot, sp.r[i].eff[0],
                   sp.r[i].eff[1], sp.r[i].eff[2],
                   sp.r[i].stable ? "" : "; unstable: ", sp.r[i].why,
                   sp.r[i].used ? "" : " (left out)");
            json_array_append_new(
                jr, json_pack("{s:f,s:f,s:f,s:f,s:f,s:b,s:b,s:s}", "ttft_ratio",
                              sp.r[i].ttft, "tpot_ratio", sp.r[i].tpot,
                              "eff_matmul", sp.r[i].eff[0], "eff_memory",
                              sp.r[i].eff[1], "eff_attention", sp.r[i].eff[2],
                              "stable", sp.r[i].stable, "used", sp.r[i].used,
                              "unstable", sp.r[i].why));
        }
        printf("  TTFT measured/calibrated: median %.2fx, range %.2f-%.2f\n"
               "  TPOT measured/calibrated: median %.2fx, range %.2f-%.2f\n",
               sp.ttft[1], sp.ttft[0], sp.ttft[2], sp.tpot[1], sp.tpot[0],
               sp.tpot[2]);
        if (!sp.use_stable)
            printf("  the ceilings were unstable in most rounds: the spread "
                   "is the machine's, not the model's (quiet the machine)\n");
        json_object_set_new(out, "rounds", jr);
        json_object_set_new(out, "ttft_ratio",
                            json_pack("{s:f,s:f,s:f}", "min", sp.ttft[0],
                                      "median", sp.ttft[1], "max", sp.ttft[2]));
        json_object_set_new(out, "tpot_ratio",
                            json_pack("{s:f,s:f,s:f}", "min", sp.tpot[0],
                                      "median", sp.tpot[1], "max", sp.tpot[2]));
    }
    if (bad >= 1000 && o.strict && code == 0)
        code = 1;
    if (st && code != 2) {
        if (sb_store_save_run(st, &run, &err))
            code = sb_cli_error(&err);
        else
            printf("\nstored as run %s in %s (solbench check gates "
                   "llm.decode's tokens/s)\n",
                   run.run_id, db_file);
    }
    if (o.json &&
        sb_cli_write_json(out, o.json, JSON_INDENT(2), "the validation", &err))
        code = sb_cli_error(&err);
    if (o.trace)
        printf("timeline of the serving run: %s (solbench trace show %s)\n",
               o.trace, o.trace);
    json_decref(out);
    free(sol), free(cal);
    sb_store_close(st);
    sb_run_free(&run);
    return code;
}
