/*
 * test_workload_schedule.c — the workload model's schedule and serving
 * against hand calculations: overlap per kind of collective (none, full,
 * auto, an object), ZeRO stages and resharding (bytes gathered and
 * reduced per step, memory held), interleaved and uneven pipelines, the
 * serving model (prefill charged, the chunk a steady state needs, the KV
 * cache at the mean live context, the batch that fits, the token budget,
 * goodput under SLOs), precision per phase, measured GEMM and decode-GEMM
 * ceilings (and those measured at a product's rows), the calibrated
 * mode and calibration files, MFU with causal attention, remat policies, the
 * hardware fixes, the published cases (never slower than reality), and errors
 * with their JSON paths.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "workload_fixtures.h"
#include "solbench/hw.h"
#include "solbench/predict.h"

static sb_prediction P, Q; /* large: static */

static const char infer_job[] =
    "job={\"type\":\"inference\",\"prompt_len\":2048,\"output_len\":512}";

/* The stage total by the documented rule: max(compute stream, hidden
 * network, hidden host) + exposed. */
static double by_hand(const sb_prediction *p, const char *stage)
{
    double comp = 0, hn = 0, hh = 0, ex = 0;
    for (int i = 0; i < p->n; i++) {
        const sb_phase *ph = &p->ph[i];
        if (strcmp(ph->stage, stage) != 0)
            continue;
        if (ph->comm_kind < 0) {
            comp += ph->t;
            continue;
        }
        ex += (1 - ph->hidden) * ph->t;
        if (ph->comm_kind == SB_COMM_HOST)
            hh += ph->hidden * ph->t;
        else
            hn += ph->hidden * ph->t;
    }
    return fmax(comp, fmax(hn, hh)) + ex;
}

static void test_overlap(void)
{
    /* none: everything in sequence */
    const char *none[] = {"overlap=\"none\""};
    CHECK(predict_on("llama3-8b", none, 1, "h100-sxm", &P) == 0);
    double sum = 0;
    for (int i = 0; i < P.n; i++)
        sum += P.ph[i].t;
    CHECK_NEAR(P.step_s, sum, 1e-12);
    double step_none = P.step_s;
    /* full: the largest stream */
    const char *full[] = {"overlap=\"full\""};
    CHECK(predict_on("llama3-8b", full, 1, "h100-sxm", &P) == 0);
    CHECK_NEAR(P.step_s, by_hand(&P, "step"), 1e-12);
    CHECK(P.step_s < step_none);
    /* auto on a step whose collectives (ZeRO-3, every microbatch) all hide
     * behind a longer compute stream: the step is the sum less them */
    const char *au[] = {"overlap=\"auto\""};
    CHECK(predict_on("llama3-8b", au, 1, "h100-sxm", &Q) == 0);
    const sb_phase *g = phase(&Q, "step", "fsdp all-gather");
    const sb_phase *r = phase(&Q, "step", "fsdp reduce-scatter");
    const sb_phase *in = phase(&Q, "step", "input transfer");
    CHECK(g && r && in);
    if (g && r && in) {
        CHECK_NEAR(Q.step_s, step_none - g->t - r->t - in->t, 1e-12);
        CHECK(g->exposed == 0 && g->share == 0);
    }
    /* ZeRO-1's one reduce-scatter a step hides behind the last
     * microbatch's backward only: 2/3 of a microbatch's compute */
    const char *z1[] = {"overlap=\"auto\"", "zero=1"};
    CHECK(predict_on("llama3-8b", z1, 2, "h100-sxm", &Q) == 0);
    r = phase(&Q, "step", "fsdp reduce-scatter");
    double comp = 0;
    for (int i = 0; i < Q.n; i++)
        if (Q.ph[i].comm_kind < 0 &&
            strcmp(Q.ph[i].name, "optimizer update") != 0)
            comp += Q.ph[i].t;
    CHECK(r != NULL);
    if (r) {
        CHECK_NEAR(r->hide_cap, 2.0 / 3.0 * comp / 8, 1e-12);
        CHECK_NEAR(r->exposed, fmax(0.0, r->t - r->hide_cap), 1e-12);
    }
    for (int i = 0; i < P.n; i++)
        if (P.ph[i].comm_kind >= 0)
            CHECK(P.ph[i].hidden == 1.0);
    /* auto: fsdp hidden, tensor all-reduce exposed; tp 2 so there is one */
    const char *aut[] = {"overlap=\"auto\"", "tensor=2"};
    CHECK(predict_on("llama3-8b", aut, 2, "h100-sxm", &P) == 0);
    const sb_phase *ag = phase(&P, "step", "fsdp all-gather");
    const sb_phase *tp = phase(&P, "step", "tensor all-reduce");
    CHECK(ag && tp);
    if (ag && tp) {
        CHECK(ag->hidden == 1.0 && ag->comm_kind == SB_COMM_FSDP);
        CHECK(tp->hidden == 0.0 && tp->comm_kind == SB_COMM_TP);
        CHECK_NEAR(tp->exposed, tp->t, 1e-12);
    }
    CHECK_NEAR(P.step_s, by_hand(&P, "step"), 1e-12);
    /* an object: the kinds it names, the others as auto */
    const char *obj[] = {"overlap={\"fsdp\":0.25}", "tensor=2"};
    CHECK(predict_on("llama3-8b", obj, 2, "h100-sxm", &Q) == 0);
    ag = phase(&Q, "step", "fsdp all-gather");
    CHECK(ag && ag->hidden == 0.25);
    if (ag)
        CHECK_NEAR(ag->exposed, 0.75 * ag->t, 1e-12);
    CHECK_NEAR(Q.step_s, by_hand(&Q, "step"), 1e-12);
    CHECK(Q.step_s > P.step_s); /* less hidden, longer */
    CHECK(Q.w.hidden[SB_COMM_EP] == sb_overlap_default[SB_COMM_EP]);
}

static void test_zero(void)
{
    sb_wl_sizes s;
    sb_workload w;
    sb_err err = {0};
    CHECK(load("llama3-8b", NULL, 0, &w, &err) == 0);
    sb_workload_sizes(&w, &s);
    const double whole = s.params_dense; /* tp 1, pp 1 */
    const double mb = 8, F = 8;
    struct {
        const char *zero, *reshard;
        double gathers, reduces;
    } cases[] = {{"zero=3", "reshard_after_forward=true", 2 * mb, mb},
                 {"zero=3", "reshard_after_forward=false", mb, mb},
                 {"zero=2", "reshard_after_forward=true", 1, mb},
                 {"zero=1", "reshard_after_forward=true", 1, 1}};
    for (int k = 0; k < 4; k++) {
        const char *sets[] = {cases[k].zero, cases[k].reshard};
        CHECK(predict_on("llama3-8b", sets, 2, "h100-sxm", &P) == 0);
        const sb_phase *ag = phase(&P, "step", "fsdp all-gather");
        const sb_phase *rs = phase(&P, "step", "fsdp reduce-scatter");
        CHECK(ag && rs);
        if (!ag || !rs)
            continue;
        CHECK_NEAR(ag->comm_bytes, whole * 2 * cases[k].gathers, 1e-12);
        CHECK_NEAR(rs->comm_bytes, whole * 4 * cases[k].reduces, 1e-12);
        /* memory: 1 and 2 keep the weights whole, 1 the gradients too; 3
         * without resharding holds the gathered weights as well */
        double wts = k == 0 ? whole / F * 2 : whole * 2;
        double grads = k == 3 ? whole * 4 : whole / F * 4;
        CHECK_NEAR(P.mem.weights, wts, 1e-12);
        CHECK_NEAR(P.mem.grads, grads, 1e-12);
        /* Adam's two states and the fp32 master copy of bf16 weights */
        CHECK_NEAR(P.mem.optimizer, whole / F * 3 * 4, 1e-12);
    }
}

/* ZeRO-Offload: no optimizer state on the chip; gradient shard out and
 * weights back over the host link once a step */
static void test_offload(void)
{
    const char *off[] = {"job.optimizer_offload=true"};
    CHECK(predict_on("llama3-8b", off, 1, "h100-sxm", &P) == 0);
    CHECK(P.mem.optimizer == 0);
    const sb_phase *o = phase(&P, "step", "optimizer offload transfer");
    const sb_phase *u = phase(&P, "step", "optimizer update");
    CHECK(o && u && u->bytes == 0);
    sb_wl_sizes s;
    sb_workload_sizes(&P.w, &s);
    if (o) {
        CHECK_NEAR(o->host_bytes, s.params_dense / 8 * (4 + 2), 1e-12);
        CHECK(o->comm_kind == SB_COMM_HOST && o->hide_cap > 0);
    }
}

static void test_pipeline(void)
{
    /* interleaved: bubble = compute x (PP-1) / (mb x v) */
    const char *il[] = {"pipeline=2", "virtual_stages=2"};
    CHECK(predict_on("llama3-8b", il, 2, "h100-sxm", &P) == 0);
    /* the bubble's base: the microbatches' compute, not the update */
    double comp = 0;
    for (int i = 0; i < P.n; i++)
        if (P.ph[i].comm_kind < 0 &&
            strcmp(P.ph[i].name, "pipeline bubble") != 0 &&
            strcmp(P.ph[i].name, "optimizer update") != 0)
            comp += P.ph[i].t;
    const sb_phase *b = phase(&P, "step", "pipeline bubble");
    CHECK(b != NULL);
    if (b)
        CHECK_NEAR(b->t_latency, comp * 1.0 / (8 * 2), 1e-12);
    const sb_phase *sr = phase(&P, "step", "pipeline send/recv");
    CHECK(sr && sr->n_coll == 8 * 2 * 2); /* mb x v x (fwd, bwd) */
    /* the tensor all-reduce a microbatch waits for is part of its slot */
    const char *tp[] = {"pipeline=2", "tensor=2", "fsdp=2"};
    CHECK(predict_on("llama3-8b", tp, 3, "h100-sxm", &P) == 0);
    comp = 0;
    for (int i = 0; i < P.n; i++)
        if (P.ph[i].comm_kind < 0 &&
            strcmp(P.ph[i].name, "pipeline bubble") != 0 &&
            strcmp(P.ph[i].name, "optimizer update") != 0)
            comp += P.ph[i].t;
    const sb_phase *ar = phase(&P, "step", "tensor all-reduce");
    b = phase(&P, "step", "pipeline bubble");
    CHECK(ar && b && ar->t > 0);
    if (ar && b)
        CHECK_NEAR(b->t_latency, (comp + ar->t) * 1.0 / 8, 1e-12);
    /* uneven stages: 32 layers over 3 stages, the fullest holds 11 */
    const char *one[] = {"chips=1", "fsdp=1"};
    const char *three[] = {"chips=3", "fsdp=1", "pipeline=3"};
    CHECK(predict_on("llama3-8b", one, 2, "h100-sxm", &P) == 0);
    CHECK(predict_on("llama3-8b", three, 3, "h100-sxm", &Q) == 0);
    const sb_phase *a = phase(&P, "step", "qkv projection");
    b = phase(&Q, "step", "qkv projection");
    CHECK(a && b);
    if (a && b)
        CHECK_NEAR(b->flops / a->flops, 11.0 / 32.0, 1e-12);
}

/* Context parallelism: a sequence over 2 chips halves every per-chip
 * token count and the attention pairs, gathers K and V every layer and
 * pass, and sums the gradients over the pair. */
static void test_context(void)
{
    const char *one[] = {"remat=none"};
    const char *two[] = {"remat=none", "context=2", "chips=16"};
    CHECK(predict_on("llama3-8b", one, 1, "h100-sxm", &P) == 0);
    CHECK(predict_on("llama3-8b", two, 3, "h100-sxm", &Q) == 0);
    CHECK(Q.w.context == 2 && Q.w.fsdp == 8 && Q.w.chips == 16);
    const char *halved[] = {"qkv projection", "attention core", "mlp",
                            "lm head"};
    for (int k = 0; k < 4; k++) {
        const sb_phase *a = phase(&P, "step", halved[k]);
        const sb_phase *b = phase(&Q, "step", halved[k]);
        CHECK(a && b);
        if (a && b)
            CHECK_NEAR(b->flops, a->flops / 2, 1e-12);
    }
    const sb_phase *g = phase(&Q, "step", "context all-gather");
    CHECK(g != NULL);
    if (g) {
        /* 8 sequences of 8192 tokens per replica, K and V of 8 heads of
         * 128 in bf16, 32 layers, forward and backward */
        CHECK_NEAR(g->comm_bytes, 8.0 * 8192 * 2 * 8 * 128 * 2 * 32 * 2, 1e-12);
        CHECK(g->group == 2 && g->comm_kind == SB_COMM_CP && g->hidden == 0);
    }
    const sb_phase *ar =
        phase(&Q, "step", "context-parallel gradient all-reduce");
    CHECK(ar && ar->group == 2 && ar->hide_cap > 0);
    CHECK_NEAR(Q.mem.activations, P.mem.activations / 2, 1e-12);
    /* the context axis sits inside fsdp: the fsdp group of 8 now spans 16
     * chips, past the 8-GPU NVLink domain, 4 of it in each node */
    const sb_phase *f1 = phase(&P, "step", "fsdp all-gather");
    const sb_phase *f2 = phase(&Q, "step", "fsdp all-gather");
    CHECK(f1 && f2 && strcmp(f1->ceiling, "net.scaleup") == 0 &&
          strstr(f2->ceiling, "(4x2, 2-level)") != NULL);
}

/* A group over two 8-GPU nodes, eight of it in each: the collectives run
 * in two levels (NVLink inside, each GPU's share of the scale-out across),
 * the slower bounding; all sixteen in one 16-chip scale-up domain would be
 * the flat collective on NVLink. */
static void test_two_level(void)
{
    const char *sets[] = {"chips=16", "batch=128"};
    CHECK(predict_on("llama3-8b", sets, 2, "h100-sxm", &P) == 0);
    CHECK(P.w.fsdp == 16 && P.w.tensor == 1);
    sb_ceilings c;
    machine("h100-sxm", &c);
    double up = sb_ceil_get(&c, "net.scaleup.beta_Bps");
    double out = sb_ceil_get(&c, "net.scaleout.beta_Bps");
    CHECK(up > 0 && out > 0 && sb_ceil_get(&c, "net.scaleup.domain") == 8);
    const sb_phase *ag = phase(&P, "step", "fsdp all-gather");
    CHECK(ag != NULL);
    if (ag) {
        double t = ag->comm_bytes * fmax(7.0 / 8 / up, 0.5 / 8 / out);
        CHECK_NEAR(ag->t_network, t, 1e-12);
        CHECK(strstr(ag->ceiling, "(8x2, 2-level)") != NULL);
        /* far below the flat ring on the scale-out the model used to take */
        CHECK(ag->t_network < ag->comm_bytes * 15.0 / 16 / out / 4);
    }
    /* fsdp 2 outside tensor 8: one GPU a node in each group, flat across */
    const char *tp8[] = {"chips=16", "batch=128", "tensor=8"};
    CHECK(predict_on("llama3-8b", tp8, 3, "h100-sxm", &Q) == 0);
    ag = phase(&Q, "step", "fsdp all-gather");
    CHECK(ag && strcmp(ag->ceiling, "net.scaleout") == 0);
    if (ag)
        CHECK_NEAR(ag->t_network, ag->comm_bytes * 0.5 / out, 1e-12);
}

/* A torus mesh: a group uses the links of the axes it spans (the last
 * axis innermost). On TPU7x's 4x4x4 cube, tensor 4 spans one axis of
 * three, the fsdp group of 16 outside it the other two. */
static void test_torus(void)
{
    const char *t4[] = {"tensor=4"};
    CHECK(predict_on("moe-110b-tpu7x-4x4x4", t4, 1, "tpu7x", &P) == 0);
    CHECK(strcmp(P.w.mesh, "4x4x4") == 0 && P.w.fsdp == 16);
    const sb_phase *tp = phase(&P, "step", "tensor all-reduce");
    const sb_phase *ag = phase(&P, "step", "fsdp all-gather");
    CHECK(tp && ag);
    if (tp && ag) {
        CHECK(strcmp(tp->ceiling, "net.scaleup (1/3 axes)") == 0);
        CHECK_NEAR(tp->t_network, tp->comm_bytes * 2 * 3 / 4 / (600e9 / 3),
                   1e-12);
        CHECK(strstr(ag->ceiling, "2/3") != NULL);
    }
    /* all three axes: the whole of the chip's links */
    CHECK(predict_on("moe-110b-tpu7x-4x4x4", NULL, 0, "tpu7x", &Q) == 0);
    ag = phase(&Q, "step", "fsdp all-gather");
    CHECK(ag && strcmp(ag->ceiling, "net.scaleup") == 0);
    /* the experts' all-to-all over 8 chips of the cube (the last axis
     * and half the middle one): g S / 4 each way across a cut of 2 g / 4
     * links of 600/6 GB/s, S k axes / (4 up) = 4 x 3 / 4 / 600e9 S, slower
     * than its ring share (2/3 of the links) gives */
    const sb_phase *a2a = phase(&Q, "step", "moe dispatch all-to-all");
    CHECK(a2a && strcmp(a2a->ceiling, "net.scaleup (bisection)") == 0);
    if (a2a)
        CHECK_NEAR(a2a->t_network, a2a->comm_bytes * 4 * 3 / 4 / 600e9, 1e-12);
    /* no mesh (a GPU node): the whole scale-up link */
    const char *gpu[] = {"tensor=8"};
    CHECK(predict_on("llama3-8b", gpu, 1, "h100-sxm", &Q) == 0);
    tp = phase(&Q, "step", "tensor all-reduce");
    CHECK(tp && strcmp(tp->ceiling, "net.scaleup") == 0);
}

static void test_serving(void)
{
    sb_workload w;
    sb_ceilings c;
    sb_err err = {0};
    machine("h200-sxm", &c);
    CHECK(load("llama3-70b", NULL, 0, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    const double B = 64, Pl = 2048, O = 512, T = 8;
    const sb_serve *sv = &P.serve;
    CHECK(sv->batch == B);
    CHECK_NEAR(sv->prefill_tokens, B * Pl / O, 1e-12);
    /* prefill charged: fewer tokens/s than decode alone */
    CHECK(sv->tokens_per_s < P.decode_tokens_per_s);
    CHECK_NEAR(sv->tokens_per_s, B / sv->iteration_s, 1e-12);
    CHECK_NEAR(P.tokens_per_s, sv->tokens_per_s, 1e-12);
    CHECK(sv->iteration_s > P.tpot_s); /* the decode step plus a chunk */
    /* a new prompt is prefilled in what the budget leaves beside the
     * decodes (here all of it in one iteration): never sooner than on an
     * idle machine, and later by at most the decodes it shares with */
    CHECK(sv->ttft_s >= P.ttft_s);
    CHECK(sv->ttft_s <= P.ttft_s + sv->iteration_s);
    double ttft_8k = sv->ttft_s;
    /* a serve phase holds the decode and the chunk: FLOPs of B + chunk
     * tokens */
    const sb_phase *d = phase(&P, "decode", "qkv projection");
    const sb_phase *s = phase(&P, "serve", "qkv projection");
    CHECK(d && s);
    if (d && s)
        CHECK_NEAR(s->flops / d->flops, (B + B * Pl / O) / B, 1e-12);
    /* the KV cache at the mean live context, in pages; the batch whose
     * full context fits */
    double kv_tok = 2.0 * 80 * 8 * 128 * 2 / T;
    CHECK_NEAR(P.mem.kv_cache, B * ceil((Pl + O / 2) / 16) * 16 * kv_tok,
               1e-12);
    double free_b = P.mem.capacity - P.mem.weights - P.mem.activations;
    CHECK(sv->max_batch == floor(free_b / (ceil((Pl + O) / 16) * 16 * kv_tok)));
    /* a budget of 1088 leaves 1024 tokens a chunk: two iterations */
    const char *b1k[] = {"job.max_batched_tokens=1088"};
    CHECK(load("llama3-70b", b1k, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &Q, &err) == 0);
    CHECK(Q.serve.ttft_s > ttft_8k);
    /* the token budget caps the batch it can keep fed */
    const char *budget[] = {"job.max_batched_tokens=512", "concurrency=512"};
    CHECK(load("llama3-70b", budget, 2, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.serve.batch == floor(512 * O / (Pl + O)));
    int warned = 0;
    for (int i = 0; i < P.n_warnings; i++)
        warned += strstr(P.warnings[i], "token budget") != NULL;
    CHECK(warned == 1);
    /* fewer requests than replicas: only they are served */
    const char *few[] = {"concurrency=1", "data=8", "tensor=1", "chips=8",
                         "dtypes.weights=fp8"};
    CHECK(load("llama3-70b", few, 5, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.serve.batch == 1);
    CHECK_NEAR(P.serve.tokens_per_s, 1 / P.serve.iteration_s, 1e-12);
    CHECK(P.serve.tokens_per_s <= P.decode_tokens_per_s);
    /* a budget that admits no prompt, weights that leave no room: nothing
     * is served, and the output says why */
    const char *none[] = {"job.max_batched_tokens=1"};
    CHECK(load("llama3-70b", none, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.serve.tokens_per_s == 0 && P.tokens_per_s == 0 &&
          P.cost_per_mtok == 0);
    CHECK(P.n_warnings >= 1 && strstr(P.warnings[0], "token budget"));
    const char *big[] = {"chips=1", "tensor=1", "dtypes.weights=fp32"};
    CHECK(load("llama3-70b", big, 3, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.serve.tokens_per_s == 0 && P.serve.max_batch == 0);
    CHECK(P.n_warnings >= 2 && strstr(P.warnings[0], "does not fit") &&
          strstr(P.warnings[1], "no room"));
    /* a concurrency the memory cannot hold: the KV cache of the batch that
     * runs, which fits */
    const char *huge[] = {"concurrency=100000000"};
    CHECK(load("llama3-70b", huge, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.serve.batch > 64 && P.serve.batch < 1e5 && P.mem.fits);
    CHECK_NEAR(P.mem.kv_cache,
               P.serve.batch * ceil((Pl + O / 2) / 16) * 16 * kv_tok, 1e-12);
    /* an offered load: the live batch that serves it, output tokens/s =
     * rate x output_len; above what the machine serves, saturation */
    const char *rate[] = {"job.request_rate=0.5"};
    CHECK(load("llama3-70b", rate, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &Q, &err) == 0);
    CHECK(Q.serve.batch > 0 && Q.serve.batch < 64 && !Q.serve.saturated);
    CHECK_NEAR(Q.serve.tokens_per_s, 0.5 * O, 1e-5);
    CHECK(Q.serve.max_request_rate > 0.5);
    const char *flood[] = {"job.request_rate=1e6"};
    CHECK(load("llama3-70b", flood, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &Q, &err) == 0);
    CHECK(Q.serve.saturated && Q.serve.max_request_rate < 1e6);
    warned = 0;
    for (int i = 0; i < Q.n_warnings; i++)
        warned += strstr(Q.warnings[i], "queues grow") != NULL;
    CHECK(warned == 1);
    /* goodput: an SLO no batch meets; one every batch meets */
    const char *tight[] = {"job.slo_tpot_s=1e-6"};
    CHECK(load("llama3-70b", tight, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.serve.goodput_tokens_per_s == 0 && !P.serve.slo_met);
    const char *loose[] = {"job.slo_tpot_s=10", "job.slo_ttft_s=10"};
    CHECK(load("llama3-70b", loose, 2, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.serve.slo_met && P.serve.goodput_batch == 64);
    CHECK_NEAR(P.serve.goodput_tokens_per_s, P.serve.tokens_per_s, 1e-12);
    /* a TPOT limit between batch 1's and batch 64's picks a smaller one */
    const char *mid[] = {"job.slo_tpot_s=0.0085"};
    CHECK(load("llama3-70b", mid, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &Q, &err) == 0);
    CHECK(Q.serve.goodput_batch >= 1 && Q.serve.goodput_batch < 64);
    CHECK(Q.serve.goodput_tokens_per_s > 0 &&
          Q.serve.goodput_tokens_per_s < P.serve.tokens_per_s);
}

static void test_precision(void)
{
    const char *fp8[] = {"dtypes.matmul=fp8"};
    CHECK(predict_on("llama3-8b", fp8, 1, "h100-sxm", &P) == 0);
    const sb_phase *q = phase(&P, "step", "qkv projection");
    const sb_phase *a = phase(&P, "step", "attention core");
    CHECK(q && a);
    if (q && a) {
        CHECK_NEAR(q->t_compute, q->flops / 1978.9e12, 1e-12);
        CHECK_NEAR(a->t_compute, a->flops / 989.4e12, 1e-12);
    }
    /* an fp32 router runs under the fp32 peak */
    const char *r32[] = {"dtypes.router=fp32"};
    CHECK(predict_on("mixtral-8x7b", r32, 1, "h100-sxm", &P) == 0);
    const sb_phase *r = phase(&P, "decode", "router");
    CHECK(r != NULL);
    if (r)
        CHECK_NEAR(r->peak_flops, 66.9e12, 1e-12);
    /* fp8 dispatch halves the all-to-all's bytes of bf16 */
    const char *ep[] = {"expert=8"};
    const char *ep8[] = {"expert=8", "dtypes.dispatch=fp8"};
    CHECK(predict_on("moe-110b-tpu7x-4x4x4", ep, 1, "tpu7x", &P) == 0);
    CHECK(predict_on("moe-110b-tpu7x-4x4x4", ep8, 2, "tpu7x", &Q) == 0);
    const sb_phase *d1 = phase(&P, "step", "moe dispatch all-to-all");
    const sb_phase *d2 = phase(&Q, "step", "moe dispatch all-to-all");
    const sb_phase *c2 = phase(&Q, "step", "moe combine all-to-all");
    CHECK(d1 && d2 && c2);
    if (d1 && d2 && c2) {
        CHECK_NEAR(d2->comm_bytes, d1->comm_bytes / 2, 1e-12);
        CHECK_NEAR(c2->comm_bytes, d1->comm_bytes, 1e-12);
    }
}

/* The units beside the matrix unit: elementwise work and the softmax's
 * elementwise ops under the vector rate, its exps on the transcendental
 * unit (binding fp8 attention with 64-wide heads on an H100); a TPU has a
 * vector rate (its VPU) but no transcendental one. A phase bound by either
 * is classed "vector". */
static void test_vector(void)
{
    sb_ceilings c;
    machine("h100-sxm", &c);
    CHECK_NEAR(sb_ceil_get(&c, "vector.peak"), 66.9e12, 1e-12);
    CHECK_NEAR(sb_ceil_get(&c, "vector.exp"), 4.18e12, 1e-12);
    const char *base[] = {"remat=none"};
    CHECK(predict_on("llama3-8b", base, 1, "h100-sxm", &P) == 0);
    const sb_phase *n = phase(&P, "step", "norms & elementwise");
    const sb_phase *a = phase(&P, "step", "attention core");
    CHECK(n && a);
    if (n && a) {
        CHECK_NEAR(n->peak_flops, 66.9e12, 1e-12);
        /* 8 sequences of 8192: S(S+1)/2 pairs, 32 heads, 32 layers; one exp
         * forward and one in the flash backward */
        CHECK_NEAR(a->exps, 8.0 * 8192 * 8193 / 2 * 32 * 32 * 2, 1e-12);
        /* 4 vector ops a score forward, 5 in the backward */
        CHECK_NEAR(a->vflops, 8.0 * 8192 * 8193 / 2 * 32 * 32 * (4 + 5), 1e-12);
        CHECK_NEAR(a->t_compute, a->flops / 989.4e12, 1e-12);
        CHECK(strcmp(a->ceiling, "peak.bf16") == 0);
        CHECK(a->bound == SB_BOUND_COMPUTE);
    }
    /* selective remat recomputes the forward's softmax too */
    const char *sel[] = {"remat=selective"};
    CHECK(predict_on("llama3-8b", sel, 1, "h100-sxm", &Q) == 0);
    const sb_phase *s = phase(&Q, "step", "attention core");
    CHECK(s && a);
    if (s && a)
        CHECK_NEAR(s->vflops / a->vflops, (4.0 + 4 + 5) / (4 + 5), 1e-12);
    /* 256 FLOPs a score at fp8 (0.13 ps) against one exp (0.24 ps) */
    const char *fp8[] = {infer_job, "model.head_dim=64",
                         "dtypes.attention=fp8"};
    CHECK(predict_on("llama3-8b", fp8, 3, "h100-sxm", &P) == 0);
    a = phase(&P, "prefill", "attention core");
    CHECK(a != NULL);
    if (a) {
        CHECK_NEAR(a->t_compute, a->exps / 4.18e12, 1e-12);
        CHECK(a->t_compute > a->flops / 1978.9e12);
        CHECK(a->bound == SB_BOUND_MEMORY ||
              (a->bound == SB_BOUND_VECTOR &&
               strcmp(a->ceiling, "vector.exp") == 0));
        CHECK(strcmp(sb_bound_name(SB_BOUND_VECTOR), "vector") == 0);
    }
    /* a TPU: the VPU's rate, no transcendental one; 4 ops a score at
     * 14.3 TFLOP/s (0.28 ps) against 256 FLOPs at 4614 TFLOP/s (0.055) */
    machine("tpu7x", &c);
    CHECK_NEAR(sb_ceil_get(&c, "vector.peak"), 14.3e12, 1e-12);
    CHECK(sb_ceil_get(&c, "vector.exp") == 0);
    CHECK(predict_on("llama3-8b", fp8, 3, "tpu7x", &P) == 0);
    a = phase(&P, "prefill", "attention core");
    CHECK(a && a->exps > 0 && a->vflops > 0);
    if (a) {
        CHECK_NEAR(a->vflops, a->exps * 4, 1e-12);
        CHECK_NEAR(a->t_compute, a->vflops / 14.3e12, 1e-12);
        CHECK(a->bound == SB_BOUND_VECTOR);
        CHECK(strcmp(a->ceiling, "vector.peak") == 0);
    }
    /* the same on the H100's CUDA cores: the exps bind there, not the
     * 4 ops a score at 66.9 TFLOP/s */
    CHECK(predict_on("llama3-8b", fp8, 3, "h100-sxm", &P) == 0);
    a = phase(&P, "prefill", "attention core");
    CHECK(a && a->vflops / 66.9e12 < a->exps / 4.18e12);
}

static void test_measured_ceilings(void)
{
    /* a CPU-like machine: FMA peak 1 TFLOP/s, the GEMM 0.4, the decode
     * GEMM's weight stream 50 GB/s, DRAM 100 GB/s */
    sb_ceilings c = {0};
    sb_ceil_set(&c, "peak.fp32", 1e12, "measured");
    sb_ceil_set(&c, "gemm.fp32", 4e11, "measured");
    sb_ceil_set(&c, "gemv.fp32", 5e10, "measured");
    sb_ceil_set(&c, "bw.DRAM", 1e11, "measured");
    const char *sets[] = {"dtypes={\"weights\":\"fp32\"}", "chips=1",
                          "tensor=1", "concurrency=1"};
    sb_workload w;
    sb_err err = {0};
    CHECK(load("llama3-70b", sets, 4, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    const sb_phase *pre = phase(&P, "prefill", "mlp");
    const sb_phase *dec = phase(&P, "decode", "mlp");
    const sb_phase *nrm = phase(&P, "prefill", "norms & elementwise");
    CHECK(pre && dec && nrm);
    if (pre && dec && nrm) {
        CHECK_NEAR(pre->t_compute, pre->flops / 4e11, 1e-12);
        CHECK(strcmp(pre->ceiling, "gemm.fp32") == 0);
        CHECK_NEAR(dec->t_memory, dec->bytes / 5e10, 1e-12);
        CHECK(dec->bound == SB_BOUND_MEMORY &&
              strstr(dec->ceiling, "gemv") != NULL);
        CHECK_NEAR(nrm->t_compute, nrm->flops / 1e12, 1e-12);
        CHECK_NEAR(nrm->t_memory, nrm->bytes / 1e11, 1e-12);
    }
}

/* A CPU's machine model of measured ceilings: fp32 peak 200 and GEMM 100
 * GFLOP/s, a decode weight stream of 20 GB/s, memory.read 25 GB/s */
static void cpu_ceilings(sb_ceilings *c)
{
    sb_ceil_set(c, "peak.fp32", 2e11, "measured");
    sb_ceil_set(c, "gemm.fp32", 1e11, "measured");
    sb_ceil_set(c, "gemv.fp32", 2e10, "measured");
    sb_ceil_set(c, "bw.read", 2.5e10, "measured");
}

/* validate-dense one request at a time on the CPU ceilings, predicted
 * into P: the machine and the job the costs a call are added to */
static void dense_alone(sb_ceilings *c, sb_workload *w)
{
    sb_err err = {0};
    cpu_ceilings(c);
    const char *sets[] = {"concurrency=1"};
    CHECK(load("validate-dense", sets, 1, w, &err) == 0);
    CHECK(sb_predict(w, c, &P, &err) == 0);
}

/* A decode product's cost a call (gemv.call.<dtype>[@M], from compute.gemm
 * rotate=1): each decode matmul phase adds its products times the cost at
 * its rows; prefill's compute-bound products and the other phases do not. */
static void test_gemv_call(void)
{
    sb_ceilings c = {0};
    sb_workload w;
    sb_err err = {0};
    dense_alone(&c, &w);
    const sb_phase *q = phase(&P, "decode", "qkv projection");
    double tq = q ? q->t_memory : 0, tpot = P.tpot_s;
    sb_ceil_set(&c, "gemv.call.fp32@1", 20e-6, "measured");
    sb_ceil_set(&c, "gemv.call.fp32@16", 40e-6, "measured");
    sb_ceil_set(&c, "gemv.call.fp32", 40e-6, "measured");
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    const sb_phase *dq = phase(&P, "decode", "qkv projection");
    const sb_phase *dm = phase(&P, "decode", "mlp");
    const sb_phase *dl = phase(&P, "decode", "lm head");
    const sb_phase *pq = phase(&P, "prefill", "qkv projection");
    CHECK(dq && dm && dl && pq);
    if (dq && dm && dl && pq) {
        /* 12 layers: one product each for qkv, two for the MLP; one LM
         * head; at 1 row, 20 us a product */
        CHECK_NEAR(dq->calls, 12, 1e-12);
        CHECK_NEAR(dm->calls, 24, 1e-12);
        CHECK_NEAR(dl->calls, 1, 1e-12);
        CHECK_NEAR(dq->t_memory, dq->bytes / 2e10 + 12 * 20e-6, 1e-12);
        CHECK_NEAR(dq->t_memory - tq, 12 * 20e-6, 1e-12);
        CHECK_NEAR(dm->t_memory, dm->bytes / 2e10 + 24 * 20e-6, 1e-12);
        CHECK_NEAR(dl->t_memory, dl->bytes / 2e10 + 20e-6, 1e-12);
        /* prefill's products: under the GEMM, no cost a call */
        CHECK_NEAR(pq->t_memory, pq->bytes / 2.5e10, 1e-12);
        /* 49 products a step, everything else the same */
        CHECK_NEAR(P.tpot_s - tpot, 49 * 20e-6, 1e-9);
    }
    /* 16 sequences: the cost at 16 rows */
    const char *sets16[] = {"concurrency=16"};
    CHECK(load("validate-dense", sets16, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    dq = phase(&P, "decode", "qkv projection");
    CHECK(dq && fabs(dq->t_memory - (dq->bytes / 2e10 + 12 * 40e-6)) < 1e-12);
    /* more rows than any it was measured at: a GEMM's products, none */
    const char *sets32[] = {"concurrency=32"};
    CHECK(load("validate-dense", sets32, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    dq = phase(&P, "decode", "qkv projection");
    CHECK(dq && dq->rows == 32 && dq->calls == 12 &&
          fabs(dq->t_memory - dq->bytes / 2e10) < 1e-12);
}

/* An expert's share of a prompt: few rows multiplied by weights read after
 * the other experts' (gemm.call.<dtype>@M, compute.gemm shape=llm
 * rotate=1) costs its products' calls on the compute term, at the rows it
 * was measured at and fewer; a prompt's own products (more rows) and the
 * decode's (gemv side) take none of it. */
static void test_gemm_call(void)
{
    sb_ceilings c = {0};
    cpu_ceilings(&c);
    sb_ceil_set(&c, "gemm.fp32@16", 8e10, "measured");
    sb_ceil_set(&c, "gemm.fp32@64", 1e11, "measured");
    const char *sets[] = {"prompt=64", "output=16", "concurrency=1"};
    sb_workload w;
    sb_err err = {0};
    CHECK(load("validate-moe", sets, 3, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    const sb_phase *ex = phase(&P, "prefill", "experts");
    double t_ex = ex ? ex->t_compute : 0, ttft = P.ttft_s, tpot = P.tpot_s;
    sb_ceil_set(&c, "gemm.call.fp32@8", 150e-6, "measured");
    sb_ceil_set(&c, "gemm.call.fp32@16", 100e-6, "measured");
    sb_ceil_set(&c, "gemm.call.fp32", 150e-6, "measured");
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    ex = phase(&P, "prefill", "experts");
    const sb_phase *qkv = phase(&P, "prefill", "qkv projection");
    const sb_phase *de = phase(&P, "decode", "experts");
    CHECK(ex && qkv && de);
    if (ex && qkv && de) {
        /* 64 tokens, top-2 of 8: 16 rows an expert, every expert touched,
         * two products each in each of 8 layers: 128 products at 100 us */
        CHECK_NEAR(ex->rows, 16, 1e-12);
        CHECK_NEAR(ex->calls, 128, 1e-12);
        CHECK_NEAR(ex->t_compute, ex->flops / 8e10 + 128 * 100e-6, 1e-12);
        CHECK_NEAR(ex->t_compute - t_ex, 128 * 100e-6, 1e-12);
        CHECK(strcmp(ex->ceiling, "gemm.fp32@16") == 0);
        /* the prompt's own products, 64 rows: none */
        CHECK_NEAR(qkv->t_compute, qkv->flops / 1e11, 1e-12);
        /* everything else the same: TTFT by the products' cost alone, the
         * decode untouched */
        CHECK_NEAR(P.ttft_s - ttft, 128 * 100e-6, 1e-9);
        CHECK_NEAR(P.tpot_s, tpot, 1e-15);
    }
    /* a 32-token prompt: 8 rows an expert, the cost measured there */
    const char *sets32[] = {"prompt=32", "output=16", "concurrency=1"};
    CHECK(load("validate-moe", sets32, 3, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    ex = phase(&P, "prefill", "experts");
    CHECK(ex && ex->rows == 8 &&
          fabs(ex->t_compute - (ex->flops / 8e10 + 128 * 150e-6)) < 1e-12);
    /* a 256-token prompt: 64 rows an expert, more than it was measured
     * at: a GEMM's products, none */
    const char *sets256[] = {"prompt=256", "output=16", "concurrency=1"};
    CHECK(load("validate-moe", sets256, 3, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    ex = phase(&P, "prefill", "experts");
    CHECK(ex && ex->rows == 64 &&
          fabs(ex->t_compute - ex->flops / 1e11) < 1e-12);
}

/* Decode attention's cost a call (attn.call): one call a layer in a
 * decode step and a serving iteration's decodes, none in a prefill. */
static void test_attn_call(void)
{
    sb_ceilings c = {0};
    sb_workload w;
    sb_err err = {0};
    dense_alone(&c, &w);
    double tpot = P.tpot_s, ttft = P.ttft_s;
    const sb_phase *a = phase(&P, "decode", "attention core");
    double ta = a ? a->t_memory : 0;
    sb_ceil_set(&c, "attn.call", 15e-6, "measured");
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    a = phase(&P, "decode", "attention core");
    const sb_phase *pa = phase(&P, "prefill", "attention core");
    CHECK(a && pa);
    if (a && pa) {
        /* 12 layers, a call each */
        CHECK_NEAR(a->calls, 12, 1e-12);
        CHECK_NEAR(a->t_memory - ta, 12 * 15e-6, 1e-12);
        CHECK(pa->calls == 0);
        CHECK_NEAR(P.tpot_s - tpot, 12 * 15e-6, 1e-9);
        CHECK_NEAR(P.ttft_s, ttft, 1e-12);
    }
}

/* GEMMs measured at several rows: each matmul phase under the one at its
 * products' rows (linear between the two nearest, the largest above all,
 * the smallest below all): a MoE's expert products have tokens x k / E
 * rows. */
static void test_ceilings_at_rows(void)
{
    sb_ceilings c = {0};
    char nm[40];
    sb_ceil_set(&c, "gemm.fp32@128", 1e11, "measured");
    sb_ceil_set(&c, "gemm.fp32@32", 5e10, "measured");
    sb_ceil_set(&c, "gemm.fp32@x", 9e11, "measured"); /* not a row count */
    CHECK(sb_ceil_at_rows(&c, "gemm.fp32", 32, nm, sizeof nm) == 5e10 &&
          strcmp(nm, "gemm.fp32@32") == 0);
    /* between two: linear, 100 rows 68/96 of the way from 32 to 128 */
    CHECK_NEAR(sb_ceil_at_rows(&c, "gemm.fp32", 100, nm, sizeof nm),
               5e10 + 5e10 * 68.0 / 96.0, 1e-3);
    CHECK(strcmp(nm, "gemm.fp32@32..128") == 0);
    CHECK(sb_ceil_at_rows(&c, "gemm.fp32", 4096, nm, sizeof nm) == 1e11 &&
          strcmp(nm, "gemm.fp32@128") == 0);
    CHECK(sb_ceil_at_rows(&c, "gemm.fp32", 2, nm, sizeof nm) == 5e10);
    CHECK(sb_ceil_at_rows(&c, "gemm.bf16", 32, nm, sizeof nm) == 0);
    CHECK(sb_ceil_at_rows(&c, "gemm.fp3", 32, nm, sizeof nm) == 0);
    /* the most rows measured: 128 (gemm.fp32@x is no row count) */
    CHECK(sb_ceil_rows_max(&c, "gemm.fp32") == 128);
    CHECK(sb_ceil_rows_max(&c, "gemm.bf16") == 0);

    cpu_ceilings(&c);
    sb_ceil_set(&c, "gemv.fp32@16", 5e9, "measured");
    sb_ceil_set(&c, "gemv.fp32@4", 1e10, "measured");
    const char *sets[] = {"prompt=128", "output=64", "concurrency=16"};
    sb_workload w;
    sb_err err = {0};
    CHECK(load("validate-moe", sets, 3, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    const sb_phase *qkv = phase(&P, "prefill", "qkv projection");
    const sb_phase *ex = phase(&P, "prefill", "experts");
    const sb_phase *dq = phase(&P, "decode", "qkv projection");
    const sb_phase *de = phase(&P, "decode", "experts");
    CHECK(qkv && ex && dq && de);
    if (qkv && ex && dq && de) {
        /* 128 tokens, top-2 of 8: 32 rows an expert */
        CHECK_NEAR(qkv->rows, 128, 1e-12);
        CHECK_NEAR(ex->rows, 32, 1e-12);
        CHECK(strcmp(qkv->ceiling, "gemm.fp32@128") == 0);
        CHECK(strcmp(ex->ceiling, "gemm.fp32@32") == 0);
        CHECK_NEAR(ex->t_compute, ex->flops / 5e10, 1e-12);
        CHECK_NEAR(qkv->t_compute, qkv->flops / 1e11, 1e-12);
        /* decode: 16 rows, an expert 4 */
        CHECK_NEAR(de->rows, 4, 1e-12);
        CHECK(strcmp(dq->ceiling, "gemv.fp32@16") == 0);
        CHECK(strcmp(de->ceiling, "gemv.fp32@4") == 0);
        CHECK_NEAR(dq->t_memory, dq->bytes / 5e9, 1e-12);
        CHECK_NEAR(de->t_memory, de->bytes / 1e10, 1e-12);
    }
    /* without rows-specific ceilings, as before */
    sb_ceilings d = {0};
    sb_ceil_set(&d, "peak.fp32", 2e11, "measured");
    sb_ceil_set(&d, "gemm.fp32", 1e11, "measured");
    sb_ceil_set(&d, "bw.read", 2.5e10, "measured");
    CHECK(sb_predict(&w, &d, &P, &err) == 0);
    ex = phase(&P, "prefill", "experts");
    CHECK(ex && strcmp(ex->ceiling, "gemm.fp32") == 0);
}

static void test_calibration(void)
{
    sb_workload w;
    sb_ceilings c;
    sb_err err = {0};
    machine("h100-sxm", &c);
    const char *tp[] = {"tensor=2"};
    CHECK(load("llama3-8b", tp, 1, &w, &err) == 0);
    CHECK(!sb_workload_calibrated(&w));
    w.eff_matmul = 0.5;
    w.eff_attention = 0.25;
    w.eff_memory = 0.8;
    w.eff_network = 0.5;
    CHECK(sb_workload_calibrated(&w));
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(sb_predict_calibrated(&w, &c, &Q, &err) == 0);
    CHECK(!P.calibrated && Q.calibrated);
    const char *names[] = {"mlp", "attention core", "norms & elementwise",
                           "tensor all-reduce"};
    for (int k = 0; k < 4; k++) {
        const sb_phase *a = phase(&P, "step", names[k]);
        const sb_phase *b = phase(&Q, "step", names[k]);
        CHECK(a && b);
        if (!a || !b)
            continue;
        if (k == 0)
            CHECK_NEAR(b->t_compute, 2 * a->t_compute, 1e-12);
        if (k == 1) {
            CHECK_NEAR(b->t_compute, 4 * a->t_compute, 1e-12);
            CHECK_NEAR(b->t_memory, 4 * a->t_memory, 1e-12);
        }
        if (k == 2)
            CHECK_NEAR(b->t_memory, a->t_memory / 0.8, 1e-12);
        if (k == 3)
            CHECK_NEAR(b->t_network, 2 * a->t_network, 1e-12);
    }
    CHECK(Q.step_s > P.step_s);
    /* a calibration file fills what the workload leaves */
    CHECK(load("llama3-8b", NULL, 0, &w, &err) == 0);
    w.eff_matmul = 0.5;
    CHECK(sb_workload_calibration(&w, NULL, &err) == 0); /* h100-sxm's */
    CHECK(w.eff_matmul == 0.5 && w.eff_memory == 0.92 &&
          w.eff_attention == 0.75 && w.eff_network == 0);
    /* a file for other hardware is refused */
    CHECK(load("llama3-8b", NULL, 0, &w, &err) == 0);
    CHECK(sb_workload_calibration(&w, "h200-sxm", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.hardware") && strstr(err.msg, "h100-sxm"));
    const char *h200[] = {"hw=h200-sxm"};
    CHECK(load("llama3-8b", h200, 1, &w, &err) == 0);
    CHECK(sb_workload_calibration(&w, "h200-sxm", &err) == 0);
    CHECK(w.eff_matmul == 0.69 && strstr(w.calib_source, "h200-sxm.json"));
    /* no file for this hardware: nothing changes */
    const char *v5e[] = {"hw=tpu-v5e"};
    CHECK(load("llama3-8b", v5e, 1, &w, &err) == 0);
    CHECK(sb_workload_calibration(&w, NULL, &err) == 0);
    CHECK(!sb_workload_calibrated(&w));
    /* a named file that is missing or wrong is an error with its path */
    CHECK(sb_workload_calibration(&w, "/nonexistent/c.json", &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "/nonexistent/c.json") != NULL);
    char path[] = "/tmp/sb_calib_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd >= 0) {
        const char *bad[] = {"{\"matmul\": 1.5}", "{\"mamtul\": 0.5}", "[1]"};
        const char *want[] = {"$.matmul", "$.mamtul", "$"};
        for (int k = 0; k < 3; k++) {
            FILE *f = fopen(path, "w");
            if (!f)
                break;
            fputs(bad[k], f);
            fclose(f);
            CHECK(load("llama3-8b", NULL, 0, &w, &err) == 0);
            CHECK(sb_workload_calibration(&w, path, &err) == SB_EINVAL);
            CHECK(strstr(err.msg, want[k]) != NULL);
        }
        close(fd);
        unlink(path);
    }
}

static void test_mfu_and_remat(void)
{
    CHECK(predict_on("llama3-8b", NULL, 0, "h100-sxm", &P) == 0);
    const double S = 8192, attn = 12.0 * 32 * 32 * 128 * S;
    double causal = (P.model_flops_per_token - attn * (1 - (S + 1) / (2 * S))) /
                    P.model_flops_per_token;
    CHECK_NEAR(P.mfu_causal, P.mfu * causal, 1e-12);
    CHECK(P.mfu_causal < P.mfu);
    /* save_dot_except_mlpwi recomputes the MLP's gate and up (2 of 3
     * matmuls) and the attention core; q/k/v and the output projection
     * are saved */
    const char *sd[] = {"remat=save_dot_except_mlpwi"};
    const char *no[] = {"remat=none"};
    CHECK(predict_on("llama3-8b", no, 1, "h100-sxm", &P) == 0);
    CHECK(predict_on("llama3-8b", sd, 1, "h100-sxm", &Q) == 0);
    const char *nm[] = {"mlp", "qkv projection", "output projection",
                        "attention core"};
    const double ratio[] = {(3 + 2.0 / 3) / 3, 1, 1, 4.0 / 3};
    for (int k = 0; k < 4; k++) {
        const sb_phase *a = phase(&P, "step", nm[k]);
        const sb_phase *b = phase(&Q, "step", nm[k]);
        CHECK(a && b);
        if (a && b)
            CHECK_NEAR(b->flops / a->flops, ratio[k], 1e-12);
    }
    /* activations: full < save_qkv_proj < save_dot_except_mlpwi < none */
    const char *pol[] = {"remat=full", "remat=save_qkv_proj",
                         "remat=save_dot_except_mlpwi", "remat=none"};
    double prev = 0;
    for (int k = 0; k < 4; k++) {
        CHECK(predict_on("llama3-8b", &pol[k], 1, "h100-sxm", &P) == 0);
        CHECK(P.mem.activations > prev);
        prev = P.mem.activations;
    }
    CHECK(strcmp(sb_remat_name(SB_REMAT_SAVE_DOT_EXCEPT_MLPWI),
                 "save_dot_except_mlpwi") == 0);
}

static void test_hardware(void)
{
    sb_ceilings c;
    machine("tpu-v5e", &c);
    /* 2 x 100 Gb/s per 8-chip host */
    CHECK_NEAR(sb_ceil_get(&c, "net.scaleout.beta_Bps"), 25e9 / 8, 1e-12);
    machine("tpu-v6e", &c);
    CHECK(sb_ceil_get(&c, "host.h2d") == 64e9); /* PCIe Gen5 x16 */
    machine("tpu7x", &c);
    CHECK_NEAR(sb_ceil_get(&c, "mem.bytes"), 192 * 1.073741824e9, 2e-3);
    machine("tpu-v5p", &c);
    CHECK_NEAR(sb_ceil_get(&c, "mem.bytes"), 95 * 1.073741824e9, 2e-3);
    static const struct {
        const char *hw;
        double bf16, bw;
    } t[] = {{"a100-sxm", 312e12, 2039e9},
             {"h800-sxm", 989.4e12, 3350e9},
             {"b200", 2250e12, 8000e9},
             {"gb200-nvl72", 2500e12, 8000e9},
             {"mi300x", 1307.4e12, 5300e9}};
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        machine(t[k].hw, &c);
        CHECK_NEAR(sb_ceil_get(&c, "peak.bf16"), t[k].bf16, 1e-12);
        CHECK_NEAR(sb_ceil_get(&c, "bw.HBM"), t[k].bw, 1e-12);
    }
    machine("gb200-nvl72", &c);
    CHECK(sb_ceil_get(&c, "net.scaleup.domain") == 72);
}

/* The published cases: the speed of light is never slower than the run
 * the source reports, a configuration that ran fits, and the calibrated
 * mode (efficiencies from the project's H200 run) lands within 25 %. */
static void test_published(void)
{
    static const char *const cases[] = {"llama3-405b-h100-8k",
                                        "llama2-70b-tpu-v5p-512",
                                        "llama2-70b-mlperf-h200"};
    for (int k = 0; k < 3; k++) {
        sb_workload w;
        sb_ceilings c;
        sb_err err = {0};
        CHECK(load(cases[k], NULL, 0, &w, &err) == 0);
        machine(w.hw_spec, &c);
        CHECK(sb_workload_calibration(&w, NULL, &err) == 0);
        CHECK(sb_predict(&w, &c, &P, &err) == 0);
        CHECK(P.vs_measured >= 1.0);
        CHECK(P.mem.fits);
        if (P.vs_measured < 1.0 || !P.mem.fits)
            fprintf(stderr, "%s: %.3f of the measured, %s\n", cases[k],
                    P.vs_measured, P.mem.fits ? "fits" : "does not fit");
        if (!sb_workload_calibrated(&w))
            continue; /* no measured run of this hardware */
        CHECK(sb_predict_calibrated(&w, &c, &Q, &err) == 0);
        CHECK(Q.vs_measured >= 0.75 && Q.vs_measured <= 1.25);
        CHECK(Q.vs_measured < P.vs_measured);
    }
}

static void test_errors(void)
{
    sb_workload w;
    sb_err err = {0};
    static const struct {
        const char *set, *path;
    } bad[] = {
        {"overlap={\"tpp\":0.5}", "$.overlap.tpp"},
        {"overlap={\"tp\":1.5}", "$.overlap.tp"},
        {"overlap=\"some\"", "$.overlap"},
        {"overlap=3", "$.overlap"},
        {"zero=4", "$.parallelism.zero"},
        {"context=3", "$.parallelism"},
        {"virtual_stages=9", "$.parallelism.pipeline"},
        {"virtual_stages=2", "$.parallelism.virtual_stages"},
        {"remat=most", "$.job.remat"},
        {"dtypes.matmul=fp7", "$.dtypes.matmul"},
        {"calibration={\"matmul\":0}", "$.calibration.matmul"},
        {"measured={\"mfu_convention\":\"x\"}", "$.measured.mfu_convention"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        /* 4 stages x 9 virtual stages = 36 > 32 layers; 16 stages and 8
         * microbatches cannot interleave */
        bool nine = strcmp(bad[k].set, "virtual_stages=9") == 0;
        const char *sets[] = {nine ? "pipeline=4" : "pipeline=16", "fsdp=1",
                              nine ? "chips=4" : "chips=16", bad[k].set};
        bool pp = strncmp(bad[k].set, "virtual_stages", 14) == 0;
        int rc =
            load("llama3-8b", pp ? sets : &bad[k].set, pp ? 4 : 1, &w, &err);
        CHECK(rc == SB_EINVAL);
        CHECK(strstr(err.msg, bad[k].path) != NULL);
        if (rc != SB_EINVAL || !strstr(err.msg, bad[k].path))
            fprintf(stderr, "%s: %s\n", bad[k].set, err.msg);
    }
    /* context parallelism: training only, in 2 x cp equal chunks */
    const char *cpi[] = {infer_job, "context=2", "chips=16"};
    CHECK(load("llama3-8b", cpi, 3, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.parallelism.context") != NULL);
    const char *cp3[] = {"context=3", "chips=24"}; /* 8192 = 6 x 1365.3 */
    CHECK(load("llama3-8b", cp3, 2, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.parallelism.context") && strstr(err.msg, "2 x 3"));
    /* 32 layers on 3 stages is accepted (uneven) */
    const char *un[] = {"chips=3", "fsdp=1", "pipeline=3"};
    CHECK(load("llama3-8b", un, 3, &w, &err) == 0);
}

int main(void)
{
    test_overlap();
    test_zero();
    test_pipeline();
    test_context();
    test_torus();
    test_two_level();
    test_offload();
    test_serving();
    test_precision();
    test_vector();
    test_measured_ceilings();
    test_ceilings_at_rows();
    test_gemv_call();
    test_gemm_call();
    test_attn_call();
    test_calibration();
    test_mfu_and_remat();
    test_hardware();
    test_published();
    test_errors();
    return sb_check_done();
}
