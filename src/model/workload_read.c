/*
 * workload_read.c — the sections of a workload document (docs/WORKLOAD.md)
 * read into an sb_workload, one reader each: the model (its attention and
 * MoE), the dtypes, the job (training or inference), the parallelism, the
 * topology, the hardware, the overlap, the calibration and the measured
 * times; then the sections checked against each other (workload_check.c).
 */
#include <stdio.h>
#include <string.h>

#include "model/workload_int.h"
#include "solbench/capacity.h"
#include "solbench/servesim.h"

/* The largest size or count a field takes. */
#define BIG (1L << 30)

/* ---- the model ----------------------------------------------------------- */

/* $.model.attention: the type, and MLA's ranks. */
static int sb__attention(const sb_wl_rd *rd, json_t *at, sb_workload *w)
{
    int rc;
    char type[8];
    TRY(sb_wl_known(rd, at, "$.model.attention", false));
    TRY(sb_wl_str(rd, at, "type", "$.model.attention", "gqa|mla", "gqa", type,
                  sizeof type));
    w->mla = strcmp(type, "mla") == 0;
    if (w->mla) {
        TRY(sb_wl_int(rd, at, "q_lora_rank", "$.model.attention", false, 0, BIG,
                      0, &w->q_lora_rank));
        TRY(sb_wl_int(rd, at, "kv_lora_rank", "$.model.attention", true, 1, BIG,
                      0, &w->kv_lora_rank));
        TRY(sb_wl_int(rd, at, "rope_dim", "$.model.attention", false, 0, BIG,
                      64, &w->rope_dim));
    }
    return 0;
}

/* $.model.moe: the experts, their routing and which layers have them. */
static int sb__moe(const sb_wl_rd *rd, json_t *moe, sb_workload *w)
{
    int rc;
    TRY(sb_wl_known(rd, moe, "$.model.moe", false));
    TRY(sb_wl_int(rd, moe, "experts", "$.model.moe", true, 1, 1 << 20, 0,
                  &w->experts));
    TRY(sb_wl_int(rd, moe, "top_k", "$.model.moe", true, 1, 1 << 20, 0,
                  &w->top_k));
    TRY(sb_wl_int(rd, moe, "shared_experts", "$.model.moe", false, 0, 1 << 20,
                  0, &w->shared_experts));
    TRY(sb_wl_int(rd, moe, "expert_ffn", "$.model.moe", true, 1, BIG, 0,
                  &w->expert_ffn));
    TRY(sb_wl_int(rd, moe, "first_layer", "$.model.moe", false, 0,
                  w->layers - 1, 0, &w->moe_first_layer));
    TRY(sb_wl_int(rd, moe, "every", "$.model.moe", false, 1, w->layers, 1,
                  &w->moe_every));
    TRY(sb_wl_num(rd, moe, "capacity_factor", "$.model.moe", 1.0, 16.0, 1.0,
                  &w->capacity_factor));
    if (w->top_k > w->experts)
        return sb_wl_bad(rd, "$.model.moe.top_k",
                         "%d is more than the %d "
                         "experts",
                         w->top_k, w->experts);
    return 0;
}

/* $.model: the shapes of the transformer. */
static int sb__model(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    json_t *m = sb_wl_obj(rd, doc, "model", "$.model", true, &rc);
    if (!m)
        return rc;
    TRY(sb_wl_known(rd, m, "$.model", false));
    TRY(sb_wl_int(rd, m, "layers", "$.model", true, 1, 100000, 0, &w->layers));
    TRY(sb_wl_int(rd, m, "d_model", "$.model", true, 1, BIG, 0, &w->d_model));
    TRY(sb_wl_int(rd, m, "q_heads", "$.model", true, 1, BIG, 0, &w->q_heads));
    TRY(sb_wl_int(rd, m, "kv_heads", "$.model", false, 1, BIG, w->q_heads,
                  &w->kv_heads));
    TRY(sb_wl_int(rd, m, "head_dim", "$.model", false, 1, BIG,
                  w->d_model / w->q_heads, &w->head_dim));
    TRY(sb_wl_int(rd, m, "ffn", "$.model", true, 0, BIG, 0, &w->ffn));
    TRY(sb_wl_bool(rd, m, "gated_mlp", "$.model", true, &w->gated));
    TRY(sb_wl_int(rd, m, "vocab", "$.model", true, 1, BIG, 0, &w->vocab));
    TRY(sb_wl_bool(rd, m, "tied_embeddings", "$.model", false,
                   &w->tied_embeddings));
    if (w->head_dim < 1)
        return sb_wl_bad(rd, "$.model.head_dim",
                         "missing and d_model / q_heads "
                         "is 0");
    if (w->q_heads % w->kv_heads != 0)
        return sb_wl_bad(rd, "$.model.kv_heads",
                         "%d does not divide q_heads (%d): grouped-query "
                         "attention needs whole groups",
                         w->kv_heads, w->q_heads);
    json_t *at = sb_wl_obj(rd, m, "attention", "$.model.attention", false, &rc);
    if (rc)
        return rc;
    if (at)
        TRY(sb__attention(rd, at, w));
    json_t *moe = sb_wl_obj(rd, m, "moe", "$.model.moe", false, &rc);
    if (rc)
        return rc;
    w->capacity_factor = 1.0;
    w->moe_every = 1;
    if (moe)
        TRY(sb__moe(rd, moe, w));
    if (w->ffn == 0 && !moe)
        return sb_wl_bad(rd, "$.model.ffn",
                         "0 with no MoE: the model has no "
                         "MLP");
    return 0;
}

/* ---- dtypes -------------------------------------------------------------- */

/* $.dtypes: what each tensor is stored in and each kind of work computes
 * in, each defaulting to the one it follows. */
static int sb__dtypes(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    json_t *dt = sb_wl_obj(rd, doc, "dtypes", "$.dtypes", false, &rc);
    if (rc)
        return rc;
    if (dt)
        TRY(sb_wl_known(rd, dt, "$.dtypes", false));
    TRY(sb_wl_dtype(rd, dt, "weights", "bf16", w->w_dtype, &w->w_bytes));
    TRY(sb_wl_dtype(rd, dt, "activations", w->w_dtype, w->a_dtype,
                    &w->a_bytes));
    TRY(sb_wl_dtype(rd, dt, "kv_cache", w->a_dtype, w->kv_dtype, &w->kv_bytes));
    TRY(sb_wl_dtype(rd, dt, "optimizer", "fp32", w->opt_dtype, &w->opt_bytes));
    TRY(sb_wl_dtype(rd, dt, "gradients", "fp32", w->g_dtype, &w->g_bytes));
    /* the dtype each kind of work computes in (the peak it runs under) */
    double unused;
    TRY(sb_wl_dtype(rd, dt, "matmul", w->a_dtype, w->mm_dtype, &unused));
    TRY(sb_wl_dtype(rd, dt, "attention", w->a_dtype, w->attn_dtype, &unused));
    TRY(sb_wl_dtype(rd, dt, "router", w->a_dtype, w->router_dtype, &unused));
    TRY(sb_wl_dtype(rd, dt, "dispatch", w->a_dtype, w->dispatch_dtype,
                    &w->dispatch_bytes));
    TRY(sb_wl_dtype(rd, dt, "combine", w->a_dtype, w->combine_dtype,
                    &w->combine_bytes));
    return 0;
}

/* ---- the job ------------------------------------------------------------- */

/* A training job's fields of $.job: the batch, the optimizer, the remat
 * policy. */
static int sb__job_training(const sb_wl_rd *rd, json_t *job, sb_workload *w)
{
    int rc;
    char remat[32];
    TRY(sb_wl_int(rd, job, "global_batch", "$.job", true, 1, BIG, 0,
                  &w->global_batch));
    TRY(sb_wl_int(rd, job, "seq_len", "$.job", true, 1, BIG, 0, &w->seq_len));
    TRY(sb_wl_int(rd, job, "microbatches", "$.job", false, 1, BIG, 1,
                  &w->microbatches));
    TRY(sb_wl_str(rd, job, "optimizer", "$.job", "adam|adafactor|sgd", "adam",
                  w->optimizer, sizeof w->optimizer));
    TRY(sb_wl_bool(rd, job, "optimizer_offload", "$.job", false,
                   &w->optimizer_offload));
    TRY(sb_wl_str(rd, job, "remat", "$.job",
                  "none|selective|minimal|save_dot_except_mlpwi|"
                  "save_qkv_proj|full",
                  "none", remat, sizeof remat));
    w->remat = SB_REMAT_NONE;
    for (int r = SB_REMAT_NONE; r <= SB_REMAT_FULL; r++)
        if (strcmp(remat, sb_remat_name((sb_remat)r)) == 0)
            w->remat = (sb_remat)r;
    return 0;
}

/* An inference job's fields of $.job: the requests, the batching, the
 * SLOs and the offered load. */
static int sb__job_inference(const sb_wl_rd *rd, json_t *job, sb_workload *w)
{
    int rc;
    TRY(sb_wl_int(rd, job, "prompt_len", "$.job", true, 1, BIG, 0,
                  &w->prompt_len));
    TRY(sb_wl_int(rd, job, "output_len", "$.job", true, 1, BIG, 0,
                  &w->output_len));
    TRY(sb_wl_int(rd, job, "concurrency", "$.job", false, 1, BIG, 1,
                  &w->concurrency));
    TRY(sb_wl_int(rd, job, "kv_page", "$.job", false, 1, 1 << 20, 16,
                  &w->kv_page));
    TRY(sb_wl_int(rd, job, "max_batched_tokens", "$.job", false, 1, BIG, 8192,
                  &w->max_batched_tokens));
    TRY(sb_wl_num(rd, job, "slo_ttft_s", "$.job", 0, 1e6, 0, &w->slo_ttft_s));
    TRY(sb_wl_num(rd, job, "slo_tpot_s", "$.job", 0, 1e6, 0, &w->slo_tpot_s));
    TRY(sb_wl_num(rd, job, "request_rate", "$.job", 0, 1e9, 0,
                  &w->request_rate));
    TRY(sb_wl_int(rd, job, "requests", "$.job", false, 0, SB_SIM_MAX_REQUESTS,
                  0, &w->sim_requests));
    TRY(sb_wl_int(rd, job, "max_seqs", "$.job", false, 1, BIG, 256,
                  &w->max_seqs));
    char name[16];
    TRY(sb_wl_str(rd, job, "scheduler", "$.job", "sarathi|vllm|orca", "sarathi",
                  name, sizeof name));
    for (int i = 0; i < SB_SIM_N_SCHED; i++)
        if (strcmp(name, sb_sim_sched_name[i]) == 0)
            w->sim_sched = i;
    TRY(sb_wl_str(rd, job, "lengths", "$.job", "fixed|uniform|lognormal",
                  "fixed", name, sizeof name));
    for (int i = 0; i <= SB_SIM_LEN_LOGNORMAL; i++)
        if (strcmp(name, sb_sim_len_name[i]) == 0)
            w->sim_len = i;
    TRY(sb_wl_num(rd, job, "length_spread", "$.job", 0, 4, 0.5,
                  &w->sim_spread));
    if (w->sim_len == SB_SIM_LEN_UNIFORM && w->sim_spread >= 1)
        return sb_wl_bad(rd, "$.job.length_spread",
                         "%g: uniform lengths need a spread below 1",
                         w->sim_spread);
    TRY(sb_wl_int(rd, job, "seed", "$.job", false, 0, BIG, 1, &w->sim_seed));
    w->microbatches = 1;
    return 0;
}

/* $.job: its type, then the fields of that type. */
static int sb__job(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    json_t *job = sb_wl_obj(rd, doc, "job", "$.job", true, &rc);
    if (!job)
        return rc;
    char type[16];
    TRY(sb_wl_str(rd, job, "type", "$.job", "training|inference", NULL, type,
                  sizeof type));
    TRY(sb_wl_known(rd, job, "$.job", strcmp(type, "inference") == 0));
    if (!type[0])
        return sb_wl_bad(rd, "$.job.type", "missing (training or inference)");
    w->kind = strcmp(type, "training") == 0 ? SB_JOB_TRAIN : SB_JOB_INFER;
    TRY(sb_wl_str(rd, job, "attention_kernel", "$.job", "flash|naive", "flash",
                  w->attention_kernel, sizeof w->attention_kernel));
    return w->kind == SB_JOB_TRAIN ? sb__job_training(rd, job, w)
                                   : sb__job_inference(rd, job, w);
}

/* ---- the machine --------------------------------------------------------- */

/* $.parallelism: the degrees (1 where absent) and the sharding options. */
static int sb__parallelism(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    const char *pp = "$.parallelism";
    json_t *par = sb_wl_obj(rd, doc, "parallelism", pp, false, &rc);
    if (rc)
        return rc;
    if (par)
        TRY(sb_wl_known(rd, par, pp, false));
    TRY(sb_wl_int(rd, par, "data", pp, false, 1, BIG, 1, &w->data));
    TRY(sb_wl_int(rd, par, "fsdp", pp, false, 1, BIG, 1, &w->fsdp));
    TRY(sb_wl_int(rd, par, "tensor", pp, false, 1, BIG, 1, &w->tensor));
    TRY(sb_wl_int(rd, par, "expert", pp, false, 1, BIG, 1, &w->expert));
    TRY(sb_wl_int(rd, par, "pipeline", pp, false, 1, BIG, 1, &w->pipeline));
    TRY(sb_wl_int(rd, par, "context", pp, false, 1, BIG, 1, &w->context));
    TRY(sb_wl_int(rd, par, "zero", pp, false, 1, 3, 3, &w->zero));
    TRY(sb_wl_bool(rd, par, "reshard_after_forward", pp, true,
                   &w->reshard_after_forward));
    w->zero_given = json_object_get(par, "zero") != NULL;
    w->reshard_given = json_object_get(par, "reshard_after_forward") != NULL;
    TRY(sb_wl_int(rd, par, "virtual_stages", pp, false, 1, 1024, 1,
                  &w->virtual_stages));
    return 0;
}

/* $.topology: the chips, per host, and the mesh's shape. */
static int sb__topology(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    json_t *top = sb_wl_obj(rd, doc, "topology", "$.topology", true, &rc);
    if (!top)
        return rc;
    TRY(sb_wl_known(rd, top, "$.topology", false));
    TRY(sb_wl_int(rd, top, "chips", "$.topology", true, 1, 1 << 24, 0,
                  &w->chips));
    TRY(sb_wl_int(rd, top, "chips_per_host", "$.topology", false, 1, 1 << 16,
                  w->chips < 8 ? w->chips : 8, &w->chips_per_host));
    TRY(sb_wl_str(rd, top, "mesh", "$.topology", NULL, "", w->mesh,
                  sizeof w->mesh));
    return 0;
}

/* $.hardware, when the workload names its machine: a spec or a run.
 * Optional: without it, the machine is the command's (--hw, --run,
 * --results; validate measures its own). */
static int sb__hardware(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    json_t *hw = sb_wl_obj(rd, doc, "hardware", "$.hardware", false, &rc);
    if (!hw)
        return rc;
    TRY(sb_wl_known(rd, hw, "$.hardware", false));
    TRY(sb_wl_str(rd, hw, "spec", "$.hardware", NULL, "", w->hw_spec,
                  sizeof w->hw_spec));
    TRY(sb_wl_str(rd, hw, "run", "$.hardware", NULL, "", w->hw_run,
                  sizeof w->hw_run));
    if (!w->hw_spec[0] && !w->hw_run[0])
        return sb_wl_bad(rd, "$.hardware.spec",
                         "missing (a data/hw spec name, "
                         "or hardware.run: a results file)");
    return sb_wl_num(rd, hw, "price_per_chip_hour", "$.hardware", 0, 1e6, 0,
                     &w->price_chip_hour);
}

/* $.overlap: "none", "full", "auto", or an object of hidden fractions per
 * kind (the others from "auto"). */
static int sb__overlap(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc;
    json_t *v = json_object_get(doc, "overlap");
    memcpy(w->hidden, sb_overlap_default, sizeof w->hidden);
    w->overlap = SB_OVERLAP_PER_KIND;
    if (json_is_object(v)) {
        TRY(sb_wl_known(rd, v, "$.overlap", false));
        for (int k = 0; k < SB_COMM_N; k++)
            TRY(sb_wl_num(rd, v, sb_comm_kind_name[k], "$.overlap", 0, 1,
                          sb_overlap_default[k], &w->hidden[k]));
        return 0;
    }
    char ov[8];
    if (v && !json_is_string(v))
        return sb_wl_bad(rd, "$.overlap",
                         "must be \"none\", \"full\", \"auto\" or an object "
                         "of hidden fractions per kind (fsdp, dp, tp, ep, pp, "
                         "host)");
    TRY(sb_wl_str(rd, doc, "overlap", "$", "none|full|auto", "auto", ov,
                  sizeof ov));
    double h = strcmp(ov, "full") == 0 ? 1.0 : 0.0;
    if (strcmp(ov, "auto") != 0) {
        w->overlap = h > 0 ? SB_OVERLAP_FULL : SB_OVERLAP_NONE;
        for (int k = 0; k < SB_COMM_N; k++)
            w->hidden[k] = h;
    }
    return 0;
}

/* ---- calibration and measurements ---------------------------------------- */

/* $.calibration: the workload's own efficiencies and their source. */
static int sb__calibration(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    json_t *cal =
        sb_wl_obj(rd, doc, "calibration", "$.calibration", false, &rc);
    if (!cal)
        return rc;
    TRY(sb_wl_known(rd, cal, "$.calibration", false));
    double e[4];
    TRY(sb_wl_effs(rd, cal, "$.calibration", e));
    w->eff_matmul = e[0];
    w->eff_attention = e[1];
    w->eff_memory = e[2];
    w->eff_network = e[3];
    return sb_wl_str(rd, cal, "source", "$.calibration", NULL,
                     "the workload's calibration", w->calib_source,
                     sizeof w->calib_source);
}

/* $.measured.phases: a time in seconds per named phase (the first 16
 * kept). */
static int sb__measured_phases(const sb_wl_rd *rd, json_t *ph, sb_workload *w)
{
    const char *k;
    json_t *v;
    json_object_foreach(ph, k, v)
    {
        char path[96];
        snprintf(path, sizeof path, "$.measured.phases.%s", k);
        if (!json_is_number(v) || json_number_value(v) <= 0)
            return sb_wl_bad(rd, path, "must be a time in seconds > 0");
        if (w->n_measured < 16) {
            snprintf(w->measured[w->n_measured].phase,
                     sizeof w->measured[0].phase, "%s", k);
            w->measured[w->n_measured++].s = json_number_value(v);
        }
    }
    return 0;
}

/* $.measured: what a run of the workload took, to compare against. */
static int sb__measured(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    json_t *meas = sb_wl_obj(rd, doc, "measured", "$.measured", false, &rc);
    if (!meas)
        return rc;
    TRY(sb_wl_known(rd, meas, "$.measured", false));
    /* set by sb_workload_apply when --set changed the job the figures
     * were measured on: nothing to compare against, and the reason */
    json_t *dropped = json_object_get(meas, "dropped");
    if (dropped) {
        if (!json_is_string(dropped))
            return sb_wl_bad(rd, "$.measured.dropped", "must be a string");
        snprintf(w->measured_dropped, sizeof w->measured_dropped, "%s",
                 json_string_value(dropped));
        return 0;
    }
    TRY(sb_wl_num(rd, meas, "step_time_s", "$.measured", 0, 1e9, 0,
                  &w->measured_step_s));
    TRY(sb_wl_num(rd, meas, "tokens_per_s", "$.measured", 0, 1e15, 0,
                  &w->measured_tokens_per_s));
    TRY(sb_wl_num(rd, meas, "mfu", "$.measured", 0, 1, 0, &w->measured_mfu));
    char conv[8];
    TRY(sb_wl_str(rd, meas, "mfu_convention", "$.measured", "palm|causal",
                  "palm", conv, sizeof conv));
    w->measured_mfu_causal = strcmp(conv, "causal") == 0;
    json_t *sv = json_object_get(meas, "source");
    if (sv && !json_is_string(sv))
        return sb_wl_bad(rd, "$.measured.source", "must be a string");
    json_t *slo = json_object_get(meas, "slo");
    if (slo) {
        sb_slo parsed;
        sb_err e = {0};
        if (!json_is_string(slo) ||
            json_string_length(slo) >= sizeof w->measured_slo)
            return sb_wl_bad(rd, "$.measured.slo",
                             "must be a string of objectives "
                             "(\"ttft_p99=2s,tpot_p99=200ms\")");
        if (sb_slo_parse(json_string_value(slo), &parsed, &e))
            return sb_wl_bad(rd, "$.measured.slo", "%s", e.msg);
        if (!(w->measured_tokens_per_s > 0))
            return sb_wl_bad(rd, "$.measured.slo",
                             "needs the tokens_per_s served under it");
        snprintf(w->measured_slo, sizeof w->measured_slo, "%s",
                 json_string_value(slo));
    }
    json_t *ph = sb_wl_obj(rd, meas, "phases", "$.measured.phases", false, &rc);
    if (rc)
        return rc;
    return sb__measured_phases(rd, ph, w);
}

/* ---- the document -------------------------------------------------------- */

int sb_wl_read(const sb_wl_rd *rd, json_t *doc, sb_workload *w)
{
    int rc = 0;
    memset(w, 0, sizeof *w);
    if (!json_is_object(doc))
        return sb_wl_bad(rd, "$", "a workload must be a JSON object");
    TRY(sb_wl_known(rd, doc, "$", false));
    TRY(sb_wl_str(rd, doc, "name", "$", NULL, "workload", w->name,
                  sizeof w->name));
    TRY(sb__model(rd, doc, w));
    TRY(sb__dtypes(rd, doc, w));
    TRY(sb__job(rd, doc, w));
    TRY(sb__parallelism(rd, doc, w));
    TRY(sb__topology(rd, doc, w));
    TRY(sb__hardware(rd, doc, w));
    TRY(sb__overlap(rd, doc, w));
    TRY(sb__calibration(rd, doc, w));
    TRY(sb__measured(rd, doc, w));
    return sb_wl_check(rd, w);
}
