/*
 * validate.c — `solbench validate` as a library (validate.h): the plan of
 * points at the model's shapes, the measurement, the serving run, the
 * prediction and the run-to-run spread. Nothing here prints.
 */
#include "validate/validate.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backend/cpu/cpu_gemm.h"
#include "solbench/hw.h"
#include "solbench/stability.h"
#include "solbench/stats.h"
#include "solbench/util.h"

/* Appends the points of one benchmark (its parameters from spec) to all. */
static int add_points(sb_plan *all, const char *bench, const char *spec,
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

/* paged decode of `batch` sequences a call at the decode context, the
 * model's heads and page */
static void paged_spec(char *out, size_t len, int batch, int ctxlen,
                       const sb_ref_config *cfg)
{
    snprintf(out, len,
             "batch=%d lens=uniform:%d:%d q_heads=%d kv_heads=%d head_dim=%d "
             "page_size=%d chunk=0 seed=1",
             batch, ctxlen, ctxlen, cfg->hq, cfg->hkv, cfg->hd, cfg->page);
}

/* the prefill-shaped GEMM at `tokens` rows over d x ffn, one matrix or
 * copies in turn */
static int add_llm_gemm(sb_plan *plan, const char *dt, int tokens, int d,
                        int ffn, int rotate, const sb_ctx *ctx, sb_err *err)
{
    char spec[200];
    snprintf(spec, sizeof spec,
             "dtype=%s lib=auto shape=llm tokens=%d d_model=%d ffn=%d "
             "rotate=%d",
             dt, tokens, d, ffn, rotate);
    return add_points(plan, "compute.gemm", spec, ctx, err);
}

const sb_result *sb_validate_find(const sb_run *run, const char *bench,
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

double sb_validate_metric(const sb_result *r, const char *name)
{
    const sb_metric *m = r ? sb_result_get(r, name) : NULL;
    return m ? m->value : 0;
}

/* A phase's measured seconds, from its llm result; -1 when not measured. */
double sb_validate_measured(const sb_result *r, const char *phase)
{
    for (int i = 0; i < SB_REF_NPH; i++)
        if (strcmp(sb_ref_phase_name(i), phase) == 0) {
            const sb_metric *m =
                r ? sb_result_get(r, sb_llm_phase_metric(i)) : NULL;
            return m ? m->value * 1e-3 : 0;
        }
    return -1;
}

/* The reference's configuration from a workload's model block (the KV
 * page from job.kv_page): SB_EINVAL naming what the reference cannot run
 * (MLA, shared experts, ungated MLPs) or what does not fit its limits. */
static int ref_config(const sb_workload *w, bool bf16, sb_ref_config *c,
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

/* Reads the workload with the command's lengths and batch, and checks it
 * is one the reference runs: inference on one chip. */
static int read_workload(const sb_validate_opts *o, sb_workload *w, char *path,
                         size_t plen, sb_err *err)
{
    json_t *doc = NULL;
    int rc = sb_workload_load_doc(o->workload ? o->workload : "validate-dense",
                                  &doc, path, (int)plen, err);
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

/* ---- the calibration -------------------------------------------------------
 * Calibrated = every kernel at what it sustains in this run: the ceilings
 * at each point's median sample (sb_ceil_from_run_sustained), so each
 * product's rows run under their own median (a one-row GEMM's median far
 * under its best must not slow the 16-row one that had no such outlier),
 * and paged attention at its median over memory.read's (the attention
 * core's bandwidth; it has no ceiling of its own). `eff` gets what the
 * run shows beside it: the prefill GEMM's and the decode GEMM's median
 * over best, and that attention ratio. */
static void calibrate(const sb_run *run, const sb_result *gl,
                      const sb_result *gd, const sb_result *mr,
                      const sb_result *pa, sb_workload *wc, sb_ceilings *c,
                      double eff[3])
{
    memset(c, 0, sizeof *c);
    sb_ceil_from_run_sustained(run, c);
    double gb = sb_validate_metric(gl, "GFLOPs_best"),
           gm = sb_validate_metric(gl, "GFLOPs"),
           db = sb_validate_metric(gd, "weight_GBps_best"),
           dm = sb_validate_metric(gd, "weight_GBps"),
           rm = sb_validate_metric(mr, "GBps");
    eff[0] = gb > 0 ? fmin(1.0, gm / gb) : 0;
    eff[1] = db > 0 ? fmin(1.0, dm / db) : 0;
    eff[2] = pa && rm > 0 ? fmin(1.0, sb_validate_metric(pa, "GBps") / rm) : 0;
    /* with a cost a call measured (attn.call, predict adds it a layer),
     * the stream's rate is the rest of the call's time */
    double a = sb_ceil_get(c, "attn.call"),
           pb = sb_validate_metric(pa, "bytes");
    if (pa && rm > 0 && a > 0 && pb > 0 && pa->stats.p50 > a)
        eff[2] = fmin(1.0, pb / (pa->stats.p50 - a) * 1e-9 / rm);
    /* the ceilings are the medians already: matmuls and streams at 1 */
    wc->eff_matmul = 1.0;
    wc->eff_memory = 1.0;
    wc->eff_attention = eff[2];
    wc->eff_network = 0;
}

/* ---- the run-to-run spread -------------------------------------------------
 * One interleaved run holds every point's samples in rounds (A B C, C B A,
 * ...): split in time order into k blocks, block j of every point covers
 * the same stretch of the machine. Each block is a run of its own: the
 * points' rates taken again from the block's median and best sample, its
 * ceilings, its calibration and its prediction; TTFT and TPOT measured
 * (the block's medians) over predicted. */

/* r's samples [lo, hi) as a result of their own, its rates taken from them */
static int block(const sb_result *r, size_t lo, size_t hi, sb_result *out)
{
    *out = *r;
    out->samples_s = NULL;
    out->n_samples = out->cap_samples = 0;
    /* its own copies of the notes (the machine model reads some: "a DRAM
     * figure") */
    for (int i = 0; i < r->n_notes; i++)
        if (!(out->notes[i] = strdup(r->notes[i]))) {
            out->n_notes = i;
            return SB_ENOMEM;
        }
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

static void spread(const sb_run *run, const sb_workload *w, int k,
                   sb_validate_spread *sp)
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
        src[i] = sb_validate_find(run, need[i][0], need[i][1], need[i][2]);
        if (!src[i] && i < 5)
            return;
        if (src[i] && src[i]->n_samples < nmin)
            nmin = src[i]->n_samples;
    }
    if (k > SB_VALIDATE_MAX_ROUNDS)
        k = SB_VALIDATE_MAX_ROUNDS;
    if (k < 2 || nmin < (size_t)(2 * k))
        return; /* too few samples to split */
    sp->n = k;
    for (int j = 0; j < k; j++) {
        sb_run v;
        sb_run_init(&v);
        /* a view: the run's fingerprint and config, not new ones */
        json_decref(v.system);
        json_decref(v.config);
        v.system = run->system;
        v.config = run->config;
        sb_result *blk[6] = {0};
        bool ok = true;
        sp->r[j].stable = true;
        /* every point of the run, as its block j (a point of too few
         * samples to split, whole): the round's machine model is the
         * run's, every ceiling (the GEMMs at their rows, the costs a
         * call) from that stretch */
        for (size_t i = 0; i < run->results.n && ok; i++) {
            const sb_result *r = &run->results.items[i];
            size_t n = r->n_samples;
            bool split = n >= (size_t)(2 * k);
            sb_result *b = sb_results_push(&v.results);
            ok =
                b && block(r, split ? n * (size_t)j / (size_t)k : 0,
                           split ? n * (size_t)(j + 1) / (size_t)k : n, b) == 0;
        }
        /* pointers are taken after every push (the list may move) */
        for (int i = 0; ok && i < 6; i++)
            if (src[i])
                blk[i] = &v.results.items[src[i] - run->results.items];
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
            calibrate(&v, blk[2], blk[3], blk[4], blk[5], &wc, &c,
                      sp->r[j].eff);
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
    double tt[SB_VALIDATE_MAX_ROUNDS], tp[SB_VALIDATE_MAX_ROUNDS];
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
    sb_stats st;
    sb_stats_compute(tt, (size_t)nu, &st);
    sp->ttft[0] = st.min;
    sp->ttft[1] = st.p50;
    sp->ttft[2] = st.max;
    sb_stats_compute(tp, (size_t)nu, &st);
    sp->tpot[0] = st.min;
    sp->tpot[1] = st.p50;
    sp->tpot[2] = st.max;
}

/* ---- the steps
 * ---------------------------------------------------------------- */

int sb_validate_prepare(const sb_validate_opts *o, sb_validate *v, sb_err *err)
{
    memset(v, 0, sizeof *v);
    sb_run_init(&v->run);
    sb_validate_opts q = *o;
    int rc = read_workload(&q, &v->w, v->path, sizeof v->path, err);
    if (rc)
        return rc;
    if (q.quick && (!q.prompt || !q.output)) {
        /* a few seconds: short requests unless the lengths are given */
        if (!q.prompt)
            q.prompt = v->w.prompt_len < 64 ? v->w.prompt_len : 64;
        if (!q.output)
            q.output = v->w.output_len < 16 ? v->w.output_len : 16;
        if (!q.requests)
            q.requests = v->w.concurrency;
        if ((rc = read_workload(&q, &v->w, v->path, sizeof v->path, err)))
            return rc;
    }
    if ((rc = ref_config(&v->w, q.bf16, &v->cfg, err)))
        return rc;
    v->dtype = q.bf16 ? "bf16" : "fp32";
    int gdt = q.bf16 ? SB_GEMM_BF16 : SB_GEMM_F32;
    bool can = false;
    char why[200] = "";
    for (int lib = 0; lib < SB_GEMM_NLIBS && !can; lib++)
        can = sb_gemm_lib_supports(lib, gdt, why, sizeof why);
    if (!can)
        return sb_fail(err, SB_EINVAL,
                       "--dtype %s: no GEMM library runs it on this CPU (%s)",
                       v->dtype, why);
    const int B = v->w.concurrency, P = v->w.prompt_len, O = v->w.output_len;
    v->B = B;
    v->P = P;
    v->O = O;
    v->C = P + O / 2; /* predict's decode context */
    /* the serving loads: closed loops of 1 (light), a quarter of the
     * saturating one (medium) and max(16, batch) (saturating), each of
     * 2 x its concurrency requests (at least 8: a light load's medians
     * over 3 requests were one request's; --requests: that many);
     * --quick keeps the light one */
    static const char *const load_name[SB_VALIDATE_LOADS] = {"light", "medium",
                                                             "saturating"};
    const int sat = B > 16 ? B : 16;
    const int conc[SB_VALIDATE_LOADS] = {1, sat / 4 > 2 ? sat / 4 : 2, sat};
    v->n_loads = q.quick ? 1 : SB_VALIDATE_LOADS;
    /* each load's model: the longest request, and an iteration of every
     * decode plus two of the longest prompts */
    int maxp = P + P / 2 + 1, maxo = O + O / 2 + 1;
    v->sctx = maxp + maxo + 8;
    v->stok = B + 2 * maxp;
    v->need_bytes = sb_ref_footprint(&v->cfg, B, v->sctx, v->stok);
    for (int k = 0; k < v->n_loads; k++) {
        sb_validate_load *l = &v->load[k];
        l->name = load_name[k];
        l->concurrency = conc[k];
        l->requests =
            q.requests ? q.requests : (2 * conc[k] > 8 ? 2 * conc[k] : 8);
        if (l->requests < l->concurrency)
            return sb_fail(err, SB_EINVAL,
                           "--requests %d: fewer than the %s load's "
                           "concurrency (%d)",
                           l->requests, l->name, l->concurrency);
        l->stok = l->concurrency + 2 * maxp;
        l->settle_s = l->settle_kib = l->during_kib = -1;
        double need =
            sb_ref_footprint(&v->cfg, l->concurrency, v->sctx, l->stok);
        if (need > v->need_bytes)
            v->need_bytes = need;
    }
    v->N = v->load[v->n_loads - 1].requests;
    double have = sb_mem_available();
    char what[1200];
    snprintf(what, sizeof what,
             "%s: the reference (weights %.2f GB, KV cache for %d x %d "
             "tokens)",
             v->path, sb_ref_weight_bytes(&v->cfg) / 1e9,
             B > v->load[v->n_loads - 1].concurrency
                 ? B
                 : v->load[v->n_loads - 1].concurrency,
             v->sctx);
    if ((rc = sb_mem_fits(v->need_bytes, q.force ? 0 : have, what, err)))
        return rc;

    sb_ctx *ctx = &v->ctx;
    sb_ctx_defaults(ctx);
    if (q.threads)
        ctx->threads = q.threads;
    snprintf(ctx->backend, sizeof ctx->backend, "cpu");
    /* every point set up first, then sampled in rounds: the ceilings and
     * the model see the same stretches of a shared machine; when two
     * models and the ceilings' buffers do not fit together, one point
     * after the other */
    ctx->interleave =
        have <= 0 || 2 * v->need_bytes + 1e9 < SB_MEM_SHARE * have;
    /* the loads among the points' rounds when a third copy of the model
     * fits beside them: the serving runs then see the stretches of the
     * machine the ceilings saw (served after every point, they ran 12-23 %
     * slower than the reference's own decode measured among the points
     * minutes before, the machine having slowed meanwhile) */
    v->opts = *o;
    v->serves = q.serves ? q.serves : (q.quick ? 1 : 3);
    if (v->serves > SB_VALIDATE_MAX_SERVES)
        v->serves = SB_VALIDATE_MAX_SERVES;
    if (v->serves < 1)
        v->serves = 1;
    v->loads_mid = ctx->interleave &&
                   (have <= 0 || 3 * v->need_bytes + 1e9 < SB_MEM_SHARE * have);
    ctx->force = q.force;
    if (q.quick) {
        ctx->min_time = 0.05;
        ctx->repeat = 3;
    }
    /* enough samples for every round to have three of each point */
    v->rounds = q.rounds ? q.rounds : (q.quick ? 3 : 5);
    if (ctx->interleave && ctx->repeat < 3 * v->rounds)
        ctx->repeat = 3 * v->rounds;
    sb_threads_setup(ctx->threads);

    /* the points: ceilings at the model's shapes, then the model */
    const sb_ref_config *cfg = &v->cfg;
    const char *dt = v->dtype;
    int F = cfg->experts > 0 && cfg->ffn == 0 ? cfg->expert_ffn : cfg->ffn;
    double llc = sb_llc_bytes();
    double rsize = fmax(256.0 * (1 << 20), 4 * llc);
    char spec[7][600];
    snprintf(spec[0], sizeof spec[0],
             "dtype=%s lib=auto shape=llm tokens=%d d_model=%d ffn=%d", dt, P,
             cfg->d, 2 * F);
    snprintf(spec[1], sizeof spec[1],
             "dtype=%s lib=auto shape=decode batch=%d d_model=%d ffn=0", dt, B,
             cfg->d);
    snprintf(spec[2], sizeof spec[2], "size=%.0fMiB dtype=fp32",
             ceil(rsize / (1 << 20)));
    paged_spec(spec[3], sizeof spec[3], B * cfg->layers, v->C, cfg);
    char model[400], llm_prefill[600], llm_decode[600];
    snprintf(model, sizeof model,
             "layers=%d d_model=%d q_heads=%d kv_heads=%d head_dim=%d ffn=%d "
             "vocab=%d experts=%d top_k=%d expert_ffn=%d moe_first_layer=%d "
             "moe_every=%d kv_page=%d",
             cfg->layers, cfg->d, cfg->hq, cfg->hkv, cfg->hd, cfg->ffn,
             cfg->vocab, cfg->experts, cfg->experts ? cfg->top_k : 1,
             cfg->experts ? cfg->expert_ffn : 1, cfg->moe_first, cfg->moe_every,
             cfg->page);
    snprintf(llm_prefill, sizeof llm_prefill, "%s dtype=%s batch=1 prompt=%d",
             model, dt, P);
    snprintf(llm_decode, sizeof llm_decode, "%s dtype=%s batch=%d context=%d",
             model, dt, B, v->C);
    /* an expert's products have fewer rows: the GEMMs at those too
     * (predict takes each matmul phase's ceiling at its rows) */
    int PE = 0, BE = 0;
    if (cfg->experts > 0) {
        PE = (int)lround((double)P * cfg->top_k / cfg->experts);
        BE = (int)lround((double)B * cfg->top_k / cfg->experts);
        PE = PE < 1 ? 1 : PE;
        BE = BE < 1 ? 1 : BE;
    }
    snprintf(spec[4], sizeof spec[4],
             "dtype=%s lib=auto shape=llm tokens=%d d_model=%d ffn=%d", dt, PE,
             cfg->d, 2 * cfg->expert_ffn);
    snprintf(spec[5], sizeof spec[5],
             "dtype=%s lib=auto shape=decode batch=%d d_model=%d ffn=0", dt, BE,
             cfg->d);
    /* the serving loads' prompts are uniform in [P/2, 3P/2]: the prefill
     * GEMM at P/2 rows too, so a shorter prompt's products run under the
     * ceiling between the two */
    snprintf(spec[6], sizeof spec[6],
             "dtype=%s lib=auto shape=llm tokens=%d d_model=%d ffn=%d", dt,
             P / 2, cfg->d, 2 * F);
    sb_plan *plan = &v->plan;
    if ((rc = add_points(plan, "compute.gemm", spec[0], ctx, err)) ||
        (rc = add_points(plan, "compute.gemm", spec[1], ctx, err)) ||
        (PE > 0 && PE != P &&
         (rc = add_points(plan, "compute.gemm", spec[4], ctx, err))) ||
        (BE > 0 && BE != B &&
         (rc = add_points(plan, "compute.gemm", spec[5], ctx, err))) ||
        (rc = add_points(plan, "memory.read", spec[2], ctx, err)) ||
        (rc = add_points(plan, "compute.noise", "quantum=1000 sample=0.2", ctx,
                         err)) ||
        (P / 2 >= 1 && P / 2 != PE &&
         (rc = add_points(plan, "compute.gemm", spec[6], ctx, err))) ||
        (rc = add_points(plan, "attention.paged_decode", spec[3], ctx, err)) ||
        (rc = add_points(plan, "llm.prefill", llm_prefill, ctx, err)) ||
        (rc = add_points(plan, "llm.decode", llm_decode, ctx, err)))
        return rc;
    /* the serving loads decode at their own concurrency, and an
     * iteration decodes any number of a load's sequences up to it (the
     * first wave's prompts, the wind-down): the decode GEMM at each
     * load's concurrency and at the powers of two below the largest (and
     * an expert's share of each), so the simulator times each
     * iteration's matmuls at the ceiling measured nearest below its rows
     * (the reference's 2-row products took twice its 1-row ones, and an
     * iteration of 8-15 decodes 1.9x a 4-row one, where the 4-row
     * ceiling stood for all of them) */
    const int sat_c = v->load[v->n_loads - 1].concurrency;
    int cand[SB_VALIDATE_LOADS + 16], ncand = 0;
    for (int k = 0; k < v->n_loads; k++)
        cand[ncand++] = v->load[k].concurrency;
    for (int r = 2; r < sat_c && ncand < SB_VALIDATE_LOADS + 16; r *= 2)
        cand[ncand++] = r;
    int rows[2 * (SB_VALIDATE_LOADS + 16) + 2], nrows = 0;
    rows[nrows++] = B; /* measured above */
    if (BE > 0)
        rows[nrows++] = BE;
    for (int k = 0; k < ncand; k++) {
        int c = cand[k];
        int want[2] = {c,
                       cfg->experts > 0
                           ? (int)lround((double)c * cfg->top_k / cfg->experts)
                           : 0};
        for (int u = 0; u < 2; u++) {
            bool seen = want[u] < 1;
            for (int j = 0; j < nrows && !seen; j++)
                seen = rows[j] == want[u];
            if (seen)
                continue;
            rows[nrows++] = want[u];
            snprintf(spec[1], sizeof spec[1],
                     "dtype=%s lib=auto shape=decode batch=%d d_model=%d "
                     "ffn=0",
                     dt, want[u], cfg->d);
            if ((rc = add_points(plan, "compute.gemm", spec[1], ctx, err)))
                return rc;
        }
    }
    /* the batch's rows and the saturating load's over the model's own
     * MLP-sized weights multiplied in turn, past 4x the LLC, as a decode
     * step reads its layers: a product's cost beyond its stream
     * (gemv.call.<dtype>@M; the simulator takes it linear between) */
    const int rot_rows[2] = {B, sat_c};
    for (int k = 0; k < 2 && !(k == 1 && sat_c == B); k++) {
        snprintf(spec[1], sizeof spec[1],
                 "dtype=%s lib=auto shape=decode batch=%d d_model=%d ffn=%d "
                 "rotate=1",
                 dt, rot_rows[k], cfg->d, F);
        if ((rc = add_points(plan, "compute.gemm", spec[1], ctx, err)))
            return rc;
    }
    /* decode attention one layer's call at a time, as the model runs it:
     * beside every layer's sequences in one call, its cost a call
     * (attn.call) */
    if (cfg->layers > 1) {
        paged_spec(spec[1], sizeof spec[1], B, v->C, cfg);
        if ((rc =
                 add_points(plan, "attention.paged_decode", spec[1], ctx, err)))
            return rc;
    }
    /* a MoE's prompt: each expert multiplies its share of the tokens by
     * weights read after the other experts' (a cost a product beyond its
     * FLOPs at gemm.<dtype>@M, gemm.call.<dtype>@M), at the prompt's
     * expert rows and the shortest prompt's (P/2: a product of half the
     * rows took as long here, where the rate at P's rows would halve it),
     * the latter's one-matrix GEMM too */
    if (PE > 0 && PE != P) {
        const int F2 = 2 * cfg->expert_ffn;
        const int PE2 =
            (int)lround((double)(P / 2) * cfg->top_k / cfg->experts);
        /* PE's one matrix is spec[4], above */
        if ((rc = add_llm_gemm(plan, dt, PE, cfg->d, F2, 1, ctx, err)))
            return rc;
        for (int rot = 0; rot < 2 && PE2 >= 1 && PE2 != PE; rot++)
            if ((rc = add_llm_gemm(plan, dt, PE2, cfg->d, F2, rot, ctx, err)))
                return rc;
    }
    return 0;
}

static int serve_loads(sb_validate *v, sb_err *err);

/* ctx.on_round: the loads' j-th serving when (2j + 1) / 2k of the points'
 * rounds are done (k servings: the middles of k equal stretches) */
static int loads_between_rounds(void *arg, int round, int rounds, sb_err *err)
{
    sb_validate *v = arg;
    int j = v->served;
    if (j >= v->serves ||
        2.0 * v->serves * (round + 1) < (2.0 * j + 1) * rounds)
        return 0;
    if (v->ctx.progress) {
        fprintf(stderr, "\r\033[K[round %d] serving the loads", round + 1);
        fflush(stderr);
    }
    v->serve_round[j] = round + 1;
    return serve_loads(v, err);
}

int sb_validate_measure(sb_validate *v, sb_err *err)
{
    json_t *tags = json_pack("{s:s}", "validate", v->w.name);
    sb_run_begin(&v->run, &v->ctx, NULL,
                 "compute.gemm,memory.read,compute.noise,"
                 "attention.paged_decode,llm.prefill,llm.decode",
                 NULL, tags);
    json_decref(tags);
    if (v->loads_mid) {
        v->ctx.on_round = loads_between_rounds;
        v->ctx.on_round_arg = v;
    }
    int rc = sb_run_plan(&v->plan, &v->ctx, &v->run.results, err);
    v->ctx.on_round = NULL;
    v->ctx.on_round_arg = NULL;
    sb_utc_now(v->run.ended_at, sizeof v->run.ended_at);
    if (rc)
        return rc;
    v->code = 0;
    for (size_t i = 0; i < v->run.results.n; i++) {
        const sb_result *r = &v->run.results.items[i];
        if (r->skipped)
            v->code = 2;
        else if (!r->valid && v->code == 0)
            v->code = 1;
    }
    const sb_run *run = &v->run;
    v->rp = sb_validate_find(run, "llm.prefill", NULL, NULL);
    v->rd = sb_validate_find(run, "llm.decode", NULL, NULL);
    v->gl = sb_validate_find(run, "compute.gemm", "shape", "llm");
    v->gd = sb_validate_find(run, "compute.gemm", "shape", "decode");
    v->mr = sb_validate_find(run, "memory.read", NULL, NULL);
    v->pa = sb_validate_find(run, "attention.paged_decode", NULL, NULL);
    v->complete = v->rp && v->rd && v->gl && v->gd && v->mr;
    /* interleaved, the points' rounds are their samples */
    v->points_rounds = v->rd ? (int)v->rd->n_samples : 0;
    return 0;
}

/* How load l is served: its slots and requests, the workload's lengths
 * spread uniformly over [L/2, 3L/2]. */
static sb_serve_opts serve_opts(const sb_validate *v, const sb_validate_load *l)
{
    return (sb_serve_opts){l->concurrency, l->requests, v->P,    v->O,
                           true,           3,           l->stok, v->sctx};
}

/* Serves load l once more on the serving model (its events kept for a
 * trace when `ev` is given), after the host has taken back what was
 * freed when `settle`. */
static int serve_load(sb_validate *v, sb_validate_load *l, bool settle,
                      sb_ref_event *ev, int cap_ev, sb_err *err)
{
    const sb_validate_opts *o = &v->opts;
    sb_ref_model *m = v->sm;
    sb_ref_record(m, ev, ev ? cap_ev : 0);
    /* On a VM that reports freed memory to its host, what the run freed
     * is taken back seconds later, stalling the vCPUs for tens of
     * milliseconds: the TPOT tail of a load served then was that (p99
     * 22-34 ms, 14-18 ms after it settled). Serve once it has; over the
     * servings, the seconds waited and the KiB taken are summed. */
    double settle_s = -1, settle_kib = -1;
    if (settle && sb_mem_settle(2.5, 20, &settle_s, &settle_kib)) {
        l->settle_s = (l->settle_s < 0 ? 0 : l->settle_s) + settle_s;
        l->settle_kib = (l->settle_kib < 0 ? 0 : l->settle_kib) + settle_kib;
    }
    double before = sb_mem_reported_kib();
    sb_serve_opts so = serve_opts(v, l);
    sb_serve_stats *st = &l->run[l->n_runs];
    int rc = sb_serve_run(m, &so, st, err);
    l->n_runs += rc == 0;
    double now = sb_mem_reported_kib();
    if (rc == 0 && before >= 0 && now >= before)
        l->during_kib = (l->during_kib < 0 ? 0 : l->during_kib) + now - before;
    if (rc == 0 && ev) {
        json_decref(v->trace);
        v->trace = sb_serve_trace(m, ev, sb_ref_n_events(m), st->t_start,
                                  o->trace_label ? o->trace_label
                                                 : "solbench validate");
        if (!v->trace)
            rc = sb_fail(err, SB_ENOMEM, "out of memory");
    }
    sb_ref_record(m, NULL, 0);
    return rc;
}

/* The serving simulator's prediction of load l, calibrated by this run:
 * the requests the engine served, its closed loop, its scheduler (every
 * decode, then whole prompts within its token budget: orca) and slots. */
static int predict_load(sb_validate *v, const sb_ceilings *c,
                        sb_validate_load *l, sb_err *err)
{
    sb_workload w = v->wc;
    w.concurrency = l->concurrency;
    w.request_rate = 0;
    w.sim_requests = l->requests;
    w.sim_sched = SB_SIM_ORCA;
    w.max_seqs = l->concurrency;
    w.max_batched_tokens = l->stok;
    /* the very requests the engine served, in the order they joined: a
     * median over 8 requests is one request's, and drawing other lengths
     * of the same distribution moved it by 20 % */
    sb_sim_req *req = malloc(sizeof *req * (size_t)l->requests);
    int *pl = malloc(sizeof(int) * (size_t)l->requests),
        *ol = malloc(sizeof(int) * (size_t)l->requests);
    sb_prediction *p = malloc(sizeof *p);
    if (!p || !req || !pl || !ol) {
        free(p);
        free(req);
        free(pl);
        free(ol);
        return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    sb_serve_opts so = serve_opts(v, l);
    sb_serve_lengths(&so, pl, ol);
    for (int i = 0; i < l->requests; i++)
        req[i] = (sb_sim_req){0, pl[i], ol[i]};
    free(pl);
    free(ol);
    w.sim_file = req;
    w.sim_file_n = (size_t)l->requests;
    w.sim_file_closed = true;
    snprintf(w.sim_file_name, sizeof w.sim_file_name,
             "the requests the reference served");
    int rc = sb_predict_calibrated(&w, c, p, err);
    free(req);
    if (rc == 0) {
        l->pred = p->sim;
        l->why[0] = '\0';
        for (int i = 0; !p->sim.requests && i < p->n_warnings; i++)
            if (strstr(p->warnings[i], "simulation"))
                snprintf(l->why, sizeof l->why, "%s", p->warnings[i]);
    }
    free(p);
    return rc;
}

/* Serves every load once more on the serving model; the last serving's
 * last load's timeline kept for --trace. */
static int serve_loads(sb_validate *v, sb_err *err)
{
    bool last = v->served == v->serves - 1;
    const int cap_ev = v->opts.trace_events > 0 ? v->opts.trace_events : 0;
    /* the trace's events: kept, as the model, until the end */
    if (cap_ev && !v->ev && !(v->ev = malloc(sizeof *v->ev * (size_t)cap_ev)))
        return sb_fail(err, SB_ENOMEM, "out of memory");
    sb_ref_event *ev = last ? v->ev : NULL;
    int rc = 0;
    /* one model serves every load, every time, sized for the largest: kept
     * until the end, so that nothing it holds is freed (and taken back by
     * the host) among the points' samples */
    if (!v->sm) {
        const sb_validate_load *top = &v->load[v->n_loads - 1];
        v->cfg.seed = 1;
        rc = sb_ref_create(&v->cfg, top->concurrency, v->sctx, top->stok,
                           v->ctx.threads, &v->sm, err);
    }
    for (int k = 0; rc == 0 && k < v->n_loads; k++)
        rc = serve_load(v, &v->load[k], k == 0, k == v->n_loads - 1 ? ev : NULL,
                        cap_ev, err);
    v->served += rc == 0;
    return rc;
}

/* Writes the median over the servings of the figure at byte offset `off`
 * of sb_serve_stats into l->ms; returns the servings' statistics of it. */
static sb_stats median_at(sb_validate_load *l, size_t off)
{
    double x[SB_VALIDATE_MAX_SERVES];
    for (int i = 0; i < l->n_runs; i++)
        x[i] = *(const double *)((const char *)&l->run[i] + off);
    sb_stats st;
    sb_stats_compute(x, (size_t)l->n_runs, &st);
    *(double *)((char *)&l->ms + off) = st.p50;
    return st;
}

/* A load's figures over its servings: each the median of the servings'
 * (the counts the first's: every serving serves the same requests); the
 * servings' range of throughput and TPOT p50, apart by more than 10 % of
 * the median: unstable. */
static void combine_runs(sb_validate_load *l)
{
    l->ms = l->run[0];
    l->servings_stable = true;
    if (l->n_runs < 1)
        return;
    static const size_t whole[] = {offsetof(sb_serve_stats, ttft),
                                   offsetof(sb_serve_stats, tpot),
                                   offsetof(sb_serve_stats, latency)};
    static const size_t part[] = {
        offsetof(sb_stats, min), offsetof(sb_stats, p10),
        offsetof(sb_stats, p50), offsetof(sb_stats, p90),
        offsetof(sb_stats, p99), offsetof(sb_stats, max),
        offsetof(sb_stats, mean)};
    median_at(l, offsetof(sb_serve_stats, wall_s));
    sb_stats tps = median_at(l, offsetof(sb_serve_stats, tokens_per_s));
    sb_stats tpot = {0};
    for (size_t w = 0; w < sizeof whole / sizeof whole[0]; w++)
        for (size_t q = 0; q < sizeof part / sizeof part[0]; q++) {
            sb_stats st = median_at(l, whole[w] + part[q]);
            if (whole[w] == offsetof(sb_serve_stats, tpot) &&
                part[q] == offsetof(sb_stats, p50))
                tpot = st;
        }
    l->tps_range[0] = tps.min;
    l->tps_range[1] = tps.max;
    l->tpot_range[0] = tpot.min;
    l->tpot_range[1] = tpot.max;
    l->servings_stable = !(tps.max - tps.min > 0.10 * tps.p50) &&
                         !(tpot.max - tpot.min > 0.10 * tpot.p50);
}

int sb_validate_serve_predict(sb_validate *v, sb_err *err)
{
    if (!v->complete)
        return sb_fail(err, SB_EINVAL, "validate: a measurement is missing");
    /* speed of light: this run's ceilings (the best samples) */
    sb_ceilings c;
    memset(&c, 0, sizeof c);
    sb_ceil_from_run(&v->run, &c);
    /* calibrated: the same run's ceilings at their medians */
    sb_ceilings cs;
    v->wc = v->w;
    calibrate(&v->run, v->gl, v->gd, v->mr, v->pa, &v->wc, &cs, v->eff);
    snprintf(v->wc.calib_source, sizeof v->wc.calib_source,
             "this run: every ceiling at its median sample");
    v->sol = malloc(sizeof *v->sol);
    v->cal = malloc(sizeof *v->cal);
    if (!v->sol || !v->cal)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int rc;
    if ((rc = sb_predict(&v->w, &c, v->sol, err)) ||
        (rc = sb_predict_calibrated(&v->wc, &cs, v->cal, err)))
        return rc;

    /* the serving loads (unless served among the points' rounds), each
     * predicted */
    while (v->served < v->serves) {
        v->serve_round[v->served] = -1;
        if ((rc = serve_loads(v, err)))
            return rc;
    }
    for (int k = 0; k < v->n_loads; k++)
        combine_runs(&v->load[k]);
    for (int k = 0; rc == 0 && k < v->n_loads; k++)
        rc = predict_load(v, &cs, &v->load[k], err);
    if (rc)
        return rc;
    /* the run-to-run spread: the samples split in rounds, in the order
     * they were taken (interleaved, every round saw every point), each
     * round predicted from its own ceilings */
    spread(&v->run, &v->w, v->rounds, &v->sp);
    return 0;
}

void sb_validate_free(sb_validate *v)
{
    sb_ref_free(v->sm);
    free(v->ev);
    sb_plan_free(&v->plan);
    sb_run_free(&v->run);
    json_decref(v->trace);
    free(v->sol);
    free(v->cal);
    memset(v, 0, sizeof *v);
}
