/*
 * test_workload_presets.c — the workload model against hand calculations:
 * parameter counts of the presets against their published sizes (Llama-3
 * 8B 8.03B and 70B 70.6B within 2 %, Mixtral 46.7B/12.9B active,
 * DeepSeek-V3 671B/37B active), the 8B KV cache per token (131072 B
 * exactly), per-phase FLOPs and bytes of a training step, MFU per PaLM,
 * the decode lower bound (by hand, and never above the predicted TPOT for
 * any preset on several machines), memory per chip and its warnings, the
 * overlap assumption, --set/--sweep rebalancing, and errors with JSON
 * paths.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "check.h"
#include "workload_fixtures.h"
#include "solbench/hw.h"
#include "solbench/predict.h"

static int from_text(const char *text, sb_workload *w, sb_err *err)
{
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc)
        return -100;
    int rc = sb_workload_from_json(doc, "t.json", w, err);
    json_decref(doc);
    return rc;
}

/* A training preset's job turned into inference. */
static const char infer_job[] =
    "job={\"type\":\"inference\",\"prompt_len\":2048,\"output_len\":512}";

/* Predicts `preset` as an inference job on machine c with the sets of
 * `layout` and variant v (concurrency 1, 8 or 512; tied embeddings; full
 * overlap): 1 when the decode lower bound is not in (0, TPOT], 0 when it
 * is, -1 when the prediction fails. */
static int bound_over_tpot(const char *preset, bool training,
                           const char *const *layout, int v,
                           const sb_ceilings *c, const char *hw)
{
    static const char *const batch[] = {"concurrency=1", "concurrency=8",
                                        "concurrency=512"};
    static sb_prediction p;
    sb_workload w;
    sb_err err = {0};
    const char *sets[8];
    int n = 0;
    if (training)
        sets[n++] = infer_job;
    for (int k = 0; layout[k]; k++)
        sets[n++] = layout[k];
    sets[n++] = batch[v % 3];
    if (v / 3 & 1)
        sets[n++] = "model.tied_embeddings=true";
    if (v / 3 & 2)
        sets[n++] = "overlap=\"full\"";
    int rc = load(preset, sets, n, &w, &err);
    if (rc == 0)
        rc = sb_predict(&w, c, &p, &err);
    if (rc) {
        fprintf(stderr, "%s on %s: %s\n", preset, hw, err.msg);
        return -1;
    }
    if (p.tpot_bound_s > 0 && p.tpot_bound_s <= p.tpot_s)
        return 0;
    fprintf(stderr,
            "%s on %s (layout %s ..., %s%s%s): TPOT bound %.4g ms > "
            "TPOT %.4g ms\n",
            preset, hw, layout[0] ? layout[0] : "as given", batch[v % 3],
            v / 3 & 1 ? ", tied" : "", v / 3 & 2 ? ", overlap full" : "",
            p.tpot_bound_s * 1e3, p.tpot_s * 1e3);
    return 1;
}

/* Which sources a workload's machine is built from: predict takes the
 * command's first, report the workload's; a source the workload named
 * comes back as the workload's own pointer. */
static void test_machine_pick(void)
{
    const char *ws = "h100-sxm", *wr = "run.json", *hw, *res, *run;
    sb_machine_req p = {NULL, NULL, NULL, false};
    /* predict, nothing given: the workload's spec and run */
    sb_machine_pick(&p, ws, wr, &hw, &res, &run);
    CHECK(hw == ws && res == wr && run == NULL);
    /* predict --run: the measured machine alone */
    p.run = "last";
    sb_machine_pick(&p, ws, wr, &hw, &res, &run);
    CHECK(hw == NULL && res == NULL && run && strcmp(run, "last") == 0);
    /* predict --hw --results: that spec under those measurements */
    p = (sb_machine_req){"a100", "r.json", NULL, false};
    sb_machine_pick(&p, ws, wr, &hw, &res, &run);
    CHECK(strcmp(hw, "a100") == 0 && strcmp(res, "r.json") == 0 && !run);
    /* predict --hw alone: the spec, not the workload's run */
    p = (sb_machine_req){"a100", NULL, NULL, false};
    sb_machine_pick(&p, ws, wr, &hw, &res, &run);
    CHECK(strcmp(hw, "a100") == 0 && res == NULL && run == NULL);
    /* report: the workload's spec and run win over --results/--run */
    p = (sb_machine_req){NULL, "r.json", "last", true};
    sb_machine_pick(&p, ws, wr, &hw, &res, &run);
    CHECK(hw == ws && res == wr && run == NULL);
    /* report, a workload without $.hardware: the command's run */
    sb_machine_pick(&p, "", NULL, &hw, &res, &run);
    CHECK(hw == NULL && strcmp(res, "r.json") == 0 && run == NULL);
    p.results = NULL;
    sb_machine_pick(&p, NULL, "", &hw, &res, &run);
    CHECK(hw == NULL && res == NULL && strcmp(run, "last") == 0);
    /* report --hw: that spec, and the workload's run over it */
    p = (sb_machine_req){"a100", NULL, "last", true};
    sb_machine_pick(&p, ws, wr, &hw, &res, &run);
    CHECK(strcmp(hw, "a100") == 0 && res == wr && run == NULL);
}

int main(void)
{
    sb_err err = {0};
    sb_workload w;
    sb_wl_sizes s;
    static sb_prediction p;
    sb_ceilings c;

    test_machine_pick();

    /* ---- Llama-3-8B ----------------------------------------------------- */
    CHECK(load("llama3-8b", NULL, 0, &w, &err) == 0);
    sb_workload_sizes(&w, &s);
    /* By hand: per layer q (4096x4096) + k, v (4096x1024 each) + o
     * (4096x4096) + SwiGLU 3 x 4096 x 14336 + 2 norms; embeddings and the
     * LM head 128256 x 4096 each; a final norm. */
    double d = 4096, L = 32, V = 128256;
    double layer = d * d + 2 * d * 1024 + d * d + 3 * d * 14336 + 2 * d;
    double n8 = L * layer + 2 * V * d + d;
    CHECK_NEAR(s.params_total, n8, 1e-12);
    CHECK(fabs(s.params_total / 8.03e9 - 1) < 0.02);
    CHECK(s.kv_bytes_per_token == 131072.0); /* 2 x 32 x 8 x 128 x 2 B */
    CHECK_NEAR(s.params_active, s.params_total, 1e-12);

    /* Training step on 8 H100 with FSDP, hand-checked phases. The preset
     * gives no ZeRO stage: the schedule with the least communication that
     * fits is taken, ZeRO-2 (ZeRO-1's whole bf16 gradients do not fit),
     * one gather of the weights a step. */
    machine("h100-sxm", &c);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    CHECK(p.schedule_chosen && p.w.zero == 2 && p.mem.fits);
    const sb_phase *gather = phase(&p, "step", "fsdp all-gather");
    CHECK(gather != NULL);
    if (gather)
        CHECK_NEAR(gather->comm_bytes, s.params_dense * 2, 1e-12);
    sb_workload w1 = w;
    w1.zero = 1;
    w1.zero_given = true;
    CHECK(sb_predict(&w1, &c, &p, &err) == 0);
    CHECK(!p.mem.fits && !p.schedule_chosen);
    /* ZeRO-3 as pinned: gathered per microbatch, forward and backward */
    w.zero = 3;
    w.zero_given = true;
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    CHECK(!p.schedule_chosen && p.w.zero == 3);
    double tok_chip = 64.0 * 8192 / 8; /* tokens per chip per step */
    double mult = 3.0;                 /* selective remat: fwd + 2x bwd */
    const sb_phase *ph = phase(&p, "step", "mlp");
    CHECK(ph != NULL);
    if (ph)
        CHECK_NEAR(ph->flops, 2 * tok_chip * 3 * d * 14336 * L * mult, 1e-12);
    ph = phase(&p, "step", "attention core");
    CHECK(ph != NULL);
    /* causal: S(S+1)/2 pairs, 2 FLOPs each for QK^T and PV per head dim;
     * 8 sequences per chip; selective remat recomputes it (x4). */
    double pairs = 8192.0 * 8193 / 2;
    if (ph)
        CHECK_NEAR(ph->flops, 2 * pairs * 32 * 256 * 8 * L * 4, 1e-12);
    ph = phase(&p, "step", "fsdp all-gather");
    CHECK(ph != NULL);
    /* weights gathered forward and backward per microbatch (8) in bf16 */
    if (ph) {
        CHECK_NEAR(ph->comm_bytes, s.params_dense * 2 * 2 * 8, 1e-12);
        CHECK_NEAR(ph->t_network, ph->comm_bytes * 7.0 / 8 / 450e9, 1e-9);
        CHECK(ph->bound == SB_BOUND_NETWORK);
    }
    ph = phase(&p, "step", "optimizer update");
    CHECK(ph && ph->bound == SB_BOUND_MEMORY);
    /* Adam with fp32 master weights: read+write of 3 x 4 B plus grad read
     * (4 B) and the bf16 weight write, per parameter shard. */
    if (ph)
        CHECK_NEAR(ph->bytes, s.params_total / 8 * (2 * 12 + 4 + 2), 1e-12);
    /* MFU per PaLM: (6N + 12 L H Q T) x tokens/s / (chips x peak). */
    double n_mfu = s.params_total - V * d; /* input lookup is no matmul */
    double mf = 6 * n_mfu + 12 * L * 32 * 128 * 8192;
    CHECK_NEAR(p.model_flops_per_token, mf, 1e-12);
    CHECK_NEAR(p.mfu, mf * p.tokens_per_s / (8 * 989.4e12), 1e-12);
    CHECK(p.mfu > 0.2 && p.mfu < 1.0);
    /* No overlap: the step is the sum of its phases. */
    double sum = 0;
    for (int i = 0; i < p.n; i++)
        sum += p.ph[i].t;
    CHECK_NEAR(p.step_s, sum, 1e-12);
    CHECK(p.mem.fits);
    CHECK_NEAR(p.cost_per_step, 3.0 * 8 * p.step_s / 3600, 1e-12);
    CHECK_NEAR(p.cost_per_mtok, p.cost_per_step / (64.0 * 8192) * 1e6, 1e-12);
    double step_none = p.step_s;
    /* Full overlap: communication hidden, so the step gets shorter. */
    const char *full[] = {"overlap=\"full\""};
    CHECK(load("llama3-8b", full, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    CHECK(p.step_s < step_none);
    /* Full remat runs the forward again: HFU rises, MFU drops. */
    double mfu_sel = p.mfu;
    const char *remat[] = {"overlap=\"full\"", "remat=full"};
    CHECK(load("llama3-8b", remat, 2, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    CHECK(p.mfu < mfu_sel);
    CHECK(p.hfu > p.mfu);

    /* Independent check of the phase sum: with no rematerialisation the
     * FLOPs executed per token are 6N (Kaplan et al. 2020) plus causal
     * attention, 6 L Hq D (S+1), within 2 % (norms, optimizer). */
    const char *plain[] = {"remat=none"};
    CHECK(load("llama3-8b", plain, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    sb_workload_sizes(&w, &s);
    double six_n = 6 * s.n_for_mfu + 6.0 * 32 * 32 * 128 * 8193;
    CHECK(fabs(p.hw_flops_per_token / six_n - 1) < 0.02);
    /* % of SOL against a measured step. */
    const char *meas[] = {"measured.step_time_s=10"};
    CHECK(load("llama3-8b", meas, 1, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    CHECK_NEAR(p.pct_sol, 100.0 * p.step_s / 10.0, 1e-12);

    /* ---- Llama-3-70B, inference -------------------------------------- */
    CHECK(load("llama3-70b", NULL, 0, &w, &err) == 0);
    sb_workload_sizes(&w, &s);
    d = 8192;
    L = 80;
    layer = d * d + 2 * d * 1024 + d * d + 3 * d * 28672 + 2 * d;
    CHECK_NEAR(s.params_total, L * layer + 2 * V * d + d, 1e-12);
    CHECK(fabs(s.params_total / 70.6e9 - 1) < 0.02);
    CHECK(s.kv_bytes_per_token == 2.0 * 80 * 8 * 128 * 2);
    machine("h200-sxm", &c);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    /* Decode lower bound: (what a step reads) / HBM bw: the layers'
     * weights and the LM head split 8 ways, the norms whole on each chip,
     * one embedding row per sequence (not the table), and the KV cache
     * with its heads split 8 ways. */
    double ctx = 2048 + 512 / 2.0;
    double body = L * (d * d + 2 * d * 1024 + d * d + 3 * d * 28672);
    double bound = ((body / 8 + 2 * d * L + d + V * d / 8 + 64.0 / 8 * d) * 2 +
                    64 * ctx * s.kv_bytes_per_token / 8) /
                   4.8e12;
    CHECK_NEAR(p.tpot_bound_s, bound, 1e-9);
    CHECK(p.tpot_s >= p.tpot_bound_s);
    CHECK(p.tpot_s < 2 * p.tpot_bound_s);
    CHECK(p.ttft_s > 0);
    ph = phase(&p, "decode", "mlp");
    CHECK(ph && ph->bound == SB_BOUND_MEMORY); /* decode reads weights */
    ph = phase(&p, "prefill", "mlp");
    CHECK(ph && ph->bound == SB_BOUND_COMPUTE); /* 2048 tokens per read */
    CHECK_NEAR(p.decode_tokens_per_s, 64 / p.tpot_s, 1e-9);
    CHECK_NEAR(p.request_s, p.ttft_s + 511 * p.tpot_s, 1e-12);
    /* A decode step executes about 2N FLOPs per token (forward only) plus
     * attention over the context, 4 L Hq D ctx: within 2 %. */
    double dec = 0;
    for (int i = 0; i < p.n; i++)
        if (strcmp(p.ph[i].stage, "decode") == 0)
            dec += p.ph[i].flops;
    dec = dec * 8 / 64; /* all chips, per sequence */
    CHECK(fabs(dec / (2 * s.n_for_mfu + 4.0 * 80 * 64 * 128 * ctx) - 1) < 0.02);
    /* 70B on one H100: does not fit (a warning), but is not absurd. */
    const char *one[] = {"chips=1", "tensor=1", "hw=h100-sxm"};
    CHECK(load("llama3-70b", one, 3, &w, &err) == 0);
    machine("h100-sxm", &c);
    CHECK(sb_workload_check_machine(&w, &c, "t", &err) == 0);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    CHECK(!p.mem.fits);
    CHECK(p.n_warnings >= 1 && strstr(p.warnings[0], "does not fit"));

    /* Llama-3-8B decoding one sequence on one H200: the bound counts one
     * embedding row, not the 1.05 GB table (with it, 3.41 ms against a
     * predicted TPOT of 3.19 ms). */
    const char *one8[] = {infer_job, "chips=1", "fsdp=1"};
    CHECK(load("llama3-8b", one8, 3, &w, &err) == 0);
    machine("h200-sxm", &c);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    d = 4096;
    L = 32;
    body = L * (d * d + 2 * d * 1024 + d * d + 3 * d * 14336);
    bound = ((body + 2 * d * L + d + V * d + d) * 2 + ctx * 131072.0) / 4.8e12;
    CHECK_NEAR(p.tpot_bound_s, bound, 1e-9);
    CHECK(p.tpot_bound_s <= p.tpot_s);
    CHECK(p.tpot_s < 1.01 * p.tpot_bound_s); /* memory-bound: close */

    /* ---- the decode bound never exceeds TPOT ------------------------------
     * Every preset as an inference job (the training ones with their FSDP
     * axis turned into replicas), in several parallel layouts, on several
     * machines, over batch sizes, tied embeddings and both overlap
     * assumptions. */
    static const struct {
        const char *preset;
        bool training;            /* needs an inference job */
        const char *layout[3][4]; /* up to three layouts of up to 3 sets */
    } cases[] = {
        {"llama3-8b",
         true,
         {{"fsdp=1"},
          {"chips=1", "fsdp=1"},
          {"fsdp=1", "tensor=2", "pipeline=2"}}},
        {"llama3-70b",
         false,
         {{NULL}, {"tensor=4", "pipeline=2"}, {"chips=1", "tensor=1"}}},
        {"mixtral-8x7b",
         false,
         {{NULL}, {"chips=1", "tensor=1"}, {"tensor=2"}}},
        {"deepseek-v3", false, {{NULL}, {"chips=16", "data=16", "expert=16"}}},
        {"moe-110b-tpu7x-4x4x4", true, {{"fsdp=1"}, {"fsdp=1", "tensor=4"}}},
    };
    static const char *const hws[] = {"h100-sxm", "h200-sxm", "tpu-v5e",
                                      "tpu7x"};
    int combos = 0, over = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int l = 0; l < 3; l++)
            for (int h = 0; h < 4 && (l == 0 || cases[i].layout[l][0]); h++) {
                machine(hws[h], &c);
                for (int v = 0; v < 3 * 4; v++) {
                    int r = bound_over_tpot(cases[i].preset, cases[i].training,
                                            cases[i].layout[l], v, &c, hws[h]);
                    CHECK(r >= 0);
                    combos += r >= 0;
                    over += r > 0;
                }
            }
    CHECK(combos >= 300);
    CHECK(over == 0);

    /* ---- MoE presets ----------------------------------------------------- */
    CHECK(load("mixtral-8x7b", NULL, 0, &w, &err) == 0);
    sb_workload_sizes(&w, &s);
    CHECK(fabs(s.params_total / 46.7e9 - 1) < 0.02);
    CHECK(fabs(s.params_active / 12.9e9 - 1) < 0.02);
    CHECK(load("deepseek-v3", NULL, 0, &w, &err) == 0);
    sb_workload_sizes(&w, &s);
    CHECK(fabs(s.params_total / 671e9 - 1) < 0.02);
    CHECK(fabs(s.params_active / 37e9 - 1) < 0.03);
    /* MLA caches the latent (512) and the rope key (64) per layer. */
    CHECK(s.kv_bytes_per_token == 61.0 * (512 + 64) * 2);
    CHECK(s.moe_layers == 58);

    CHECK(load("moe-110b-tpu7x-4x4x4", NULL, 0, &w, &err) == 0);
    sb_workload_sizes(&w, &s);
    CHECK(fabs(s.params_total / 110e9 - 1) < 0.05);
    machine("tpu7x", &c);
    CHECK(sb_predict(&w, &c, &p, &err) == 0);
    CHECK(phase(&p, "step", "moe dispatch all-to-all") != NULL);
    ph = phase(&p, "step", "router");
    CHECK(ph && ph->bound == SB_BOUND_MEMORY);
    CHECK(p.step_s > 0 && p.mfu > 0 && p.mfu < 1);

    /* ---- --set / --sweep keep the parallelism consistent -------------- */
    const char *c16[] = {"chips=16"};
    CHECK(load("moe-110b-tpu7x-4x4x4", c16, 1, &w, &err) == 0);
    CHECK(w.chips == 16 && w.fsdp == 16 && w.expert == 8 && !w.mesh[0]);
    const char *t4[] = {"tensor=4"};
    CHECK(load("llama3-8b", t4, 1, &w, &err) == 0);
    CHECK(w.tensor == 4 && w.fsdp == 2 && w.chips == 8);
    const char *bad[] = {"tensor=3"};
    CHECK(load("llama3-8b", bad, 1, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.parallelism") != NULL);
    /* Degrees whose product overflows a long, and one past any int: a
     * clean error (the sanitizer build aborts on the overflow itself). */
    const char *huge[] = {"data=1073741824", "fsdp=1073741824",
                          "tensor=1073741824", "pipeline=1073741824"};
    CHECK(load("llama3-8b", huge, 4, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.parallelism") != NULL);
    const char *past[] = {"tensor=1e30"};
    CHECK(load("llama3-8b", past, 1, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.parallelism.tensor") != NULL);

    /* ---- errors carry the JSON path ------------------------------------ */
    const char *base =
        "{\"model\":{\"layers\":2,\"d_model\":%s,\"q_heads\":8,"
        "\"kv_heads\":%s,\"ffn\":64,\"gated_mlp\":true,\"vocab\":100},"
        "\"job\":{\"type\":\"training\",\"global_batch\":8,\"seq_len\":%s},"
        "\"topology\":{\"chips\":1},\"hardware\":{\"spec\":\"h100-sxm\"}}";
    char doc[1024];
    snprintf(doc, sizeof doc, base, "64", "2", "128");
    CHECK(from_text(doc, &w, &err) == 0);
    snprintf(doc, sizeof doc, base, "\"64\"", "2", "128");
    CHECK(from_text(doc, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.model.d_model") && strstr(err.msg, "integer"));
    snprintf(doc, sizeof doc, base, "64", "3", "128");
    CHECK(from_text(doc, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.model.kv_heads") && strstr(err.msg, "divide"));
    snprintf(doc, sizeof doc, base, "64", "2", "-128");
    CHECK(from_text(doc, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.job.seq_len") && strstr(err.msg, "negative"));
    CHECK(from_text("{\"job\":{}}", &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.model") != NULL);
    /* A 10 TB model on one chip is refused with the path to change. */
    snprintf(doc, sizeof doc, base, "64", "2", "128");
    CHECK(from_text(doc, &w, &err) == 0);
    w.layers = 1200;
    w.d_model = 16384;
    w.q_heads = w.kv_heads = 128;
    w.head_dim = 128;
    w.ffn = 65536;
    sb_workload_sizes(&w, &s);
    CHECK(s.params_total * 2 > 10e12);
    machine("h100-sxm", &c);
    CHECK(sb_workload_check_machine(&w, &c, "t.json", &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "$.topology.chips") != NULL);
    return sb_check_done();
}
