/*
 * predict_out.c — presenting a workload prediction: the phase table, totals,
 * interventions per dominant class, JSON, and the consistent application of
 * --set/--sweep changes to a workload document.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/predict.h"
#include "solbench/util.h"
#include "model/predict_int.h"

/* ---- --set / --sweep ----------------------------------------------------- */

static long sb__geti(json_t *doc, const char *obj, const char *key, long def)
{
    json_t *v = json_object_get(json_object_get(doc, obj), key);
    double x = json_is_number(v) ? json_number_value(v) : (double)def;
    /* Out of any valid range (and of a long): the reader reports it. */
    return x >= -2147483648.0 && x <= 2147483647.0 ? (long)x : def;
}

static bool sb__sets_key(const char *const *sets, int n, const char *a,
                         const char *b)
{
    for (int i = 0; i < n; i++) {
        size_t l = strcspn(sets[i], "=");
        if ((strlen(a) == l && strncmp(sets[i], a, l) == 0) ||
            (strlen(b) == l && strncmp(sets[i], b, l) == 0))
            return true;
    }
    return false;
}

/* What a measured figure was measured on: the model, its dtypes, the
 * job, its parallelism and topology, and the hardware (not its price). */
static json_t *sb__job_of(const json_t *doc)
{
    static const char *const part[] = {"model", "dtypes", "job", "parallelism",
                                       "topology"};
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof part / sizeof part[0]; i++) {
        json_t *v = json_object_get(doc, part[i]);
        if (v)
            json_object_set_new(o, part[i], json_deep_copy(v));
    }
    json_t *spec = json_object_get(json_object_get(doc, "hardware"), "spec");
    if (spec)
        json_object_set_new(o, "spec", json_deep_copy(spec));
    /* what only the serving simulator and the SLOs read: not the job */
    static const char *const sim_only[] = {
        "requests",      "scheduler", "max_seqs",   "lengths",
        "length_spread", "seed",      "slo_ttft_s", "slo_tpot_s"};
    json_t *job = json_object_get(o, "job");
    for (size_t i = 0; i < sizeof sim_only / sizeof sim_only[0]; i++)
        json_object_del(job, sim_only[i]);
    return o;
}

/* Whether a and b hold the same values: numbers by value (8192 is
 * 8192.0), objects by their keys, arrays in order. */
static bool sb__json_same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_is_object(a) && json_is_object(b)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v)
        {
            if (!sb__json_same(v, json_object_get(b, k)))
                return false;
        }
        return true;
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!sb__json_same(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    return a && b && json_equal(a, b);
}

int sb_workload_apply(json_t *doc, const char *const *sets, int n, sb_err *err)
{
    if (n == 0)
        return 0;
    long chips0 = sb__geti(doc, "topology", "chips", 0);
    json_t *job0 = sb__job_of(doc);
    json_t *hw0 = json_deep_copy(
        json_object_get(json_object_get(doc, "hardware"), "spec"));
    for (int i = 0; i < n; i++) {
        int rc = sb_workload_doc_set(doc, sets[i], err);
        if (rc) {
            json_decref(job0);
            json_decref(hw0);
            return rc;
        }
    }
    /* A published figure describes the job it was measured on: compared
     * after the settings change that job, it would judge the model by
     * another run's figure. */
    json_t *job1 = sb__job_of(doc), *meas = json_object_get(doc, "measured");
    if (json_is_object(meas) && !sb__json_same(job0, job1))
        json_object_set_new(meas, "dropped",
                            json_string("the settings changed the job it "
                                        "was measured on"));
    /* A price in the workload is the price of its hardware: another chip
     * has the price of its own sheet unless one is set with it. */
    json_t *hw = json_object_get(doc, "hardware"),
           *hw1 = json_object_get(hw, "spec");
    if (hw1 && !json_equal(hw0, hw1) &&
        !sb__sets_key(sets, n, "price", "hardware.price_per_chip_hour"))
        json_object_del(hw, "price_per_chip_hour");
    json_decref(job0);
    json_decref(job1);
    json_decref(hw0);
    long chips = sb__geti(doc, "topology", "chips", 0);
    long dp = sb__geti(doc, "parallelism", "data", 1),
         fs = sb__geti(doc, "parallelism", "fsdp", 1),
         tp = sb__geti(doc, "parallelism", "tensor", 1),
         pp = sb__geti(doc, "parallelism", "pipeline", 1) *
              sb__geti(doc, "parallelism", "context", 1);
    if (chips != chips0)
        json_object_del(json_object_get(doc, "topology"), "mesh");
    /* Products in double: four degrees of up to 2^31 overflow a long. */
    if (chips <= 0 || (double)dp * fs * tp * pp == (double)chips)
        return 0;
    bool set_fs = sb__sets_key(sets, n, "fsdp", "parallelism.fsdp");
    bool set_dp = sb__sets_key(sets, n, "data", "parallelism.data") ||
                  sb__sets_key(sets, n, "dp", "dp");
    const char *axis = NULL;
    double others_d = 0;
    if (fs > 1 && !set_fs) {
        axis = "fsdp";
        others_d = (double)dp * tp * pp;
    } else if (!set_dp) {
        axis = "data";
        others_d = (double)fs * tp * pp;
    }
    if (!axis || !(others_d > 0) || others_d > (double)chips)
        return 0; /* the reader reports the mismatch with its path */
    long others = (long)others_d;
    if (chips % others != 0)
        return 0;
    json_t *par = json_object_get(doc, "parallelism");
    if (!par) {
        par = json_object();
        json_object_set_new(doc, "parallelism", par);
    }
    json_object_set_new(par, axis, json_integer(chips / others));
    /* Expert parallelism cannot exceed the data axes it shards over. */
    long ep = sb__geti(doc, "parallelism", "expert", 1);
    long dfs = sb__geti(doc, "parallelism", "data", 1) *
               sb__geti(doc, "parallelism", "fsdp", 1);
    if (ep > 1 && dfs % ep != 0 &&
        !sb__sets_key(sets, n, "expert", "parallelism.expert")) {
        long e = ep;
        while (e > 1 && dfs % e != 0)
            e /= 2;
        json_object_set_new(par, "expert", json_integer(e < 1 ? 1 : e));
    }
    return 0;
}

/* ---- interventions ------------------------------------------------------- */

/* What a machine's matrix unit is called and how shapes fit it. */
static const char *mm_unit(const char *hw)
{
    if (hw && strcmp(hw, "gpu") == 0)
        return "kernel selection (cuBLASLt/CUTLASS algorithms, fused "
               "kernels for these shapes); tensor-core shapes (dims "
               "multiples of 64-128, at least of 16; no odd head or "
               "vocabulary sizes)";
    if (hw && strcmp(hw, "tpu") == 0)
        return "kernel selection (XLA fusion choices, a Pallas kernel for "
               "this op); MXU shapes (dims multiples of 128, of 256 on "
               "v6e and later; batch x sequence per chip a multiple of 8)";
    if (hw && strcmp(hw, "cpu") == 0)
        return "kernel selection (the GEMM library for these shapes: "
               "oneDNN or OpenBLAS, lib=auto times both); the SIMD and "
               "matrix units (AVX-512/BF16 or AMX where the CPU has them, "
               "threads pinned one a core)";
    return "kernel selection (the fastest GEMM or fused kernel for these "
           "shapes); shapes that fill the matrix unit's tiles";
}

static const char *lower_precision(const char *hw)
{
    if (hw && strcmp(hw, "gpu") == 0)
        return "fp8 on Hopper and later, bf16 elsewhere";
    if (hw && strcmp(hw, "tpu") == 0)
        return "int8/fp8 where the chip's MXU has them, bf16";
    if (hw && strcmp(hw, "cpu") == 0)
        return "bf16 where the CPU has AVX-512 BF16 or AMX, int8";
    return "a narrower type the matrix unit runs faster";
}

static const char *scaleup(const char *hw)
{
    if (hw && strcmp(hw, "gpu") == 0)
        return "the NVLink domain";
    if (hw && strcmp(hw, "tpu") == 0)
        return "the ICI torus (axes mapped to its dimensions)";
    return "the scale-up domain";
}

/* Network advice by what the collective carries. */
static void advice_network(const char *phase, const char *hw, char *out,
                           size_t len)
{
    if (strstr(phase, "fsdp") && strstr(phase, "all-gather"))
        snprintf(out, len,
                 "FSDP parameter all-gather: prefetch the next layer's "
                 "gather during this layer's compute; fewer, larger "
                 "units (wrap more layers together); hybrid sharding "
                 "(shard within %s, replicate across)",
                 scaleup(hw));
    else if (strstr(phase, "reduce-scatter"))
        snprintf(out, len,
                 "gradient reduce-scatter: overlap it with the backward "
                 "(buckets that start as gradients are ready); bf16 "
                 "gradients on the wire; hybrid sharding (reduce within %s "
                 "first)",
                 scaleup(hw));
    else if (strstr(phase, "tensor"))
        snprintf(out, len,
                 "tensor-parallel all-reduce: keep the tensor group inside "
                 "%s; sequence parallelism (reduce-scatter and all-gather "
                 "instead of all-reduce); a smaller tensor degree, more "
                 "data or pipeline parallelism",
                 scaleup(hw));
    else if (strstr(phase, "expert") || strstr(phase, "all-to-all") ||
             strstr(phase, "dispatch") || strstr(phase, "combine"))
        snprintf(out, len,
                 "expert all-to-all: keep expert parallelism inside %s; a "
                 "lower capacity factor (fewer padded tokens); overlap the "
                 "dispatch with the shared expert's compute",
                 scaleup(hw));
    else if (strstr(phase, "pipeline") || strstr(phase, "send"))
        snprintf(out, len,
                 "pipeline transfers: overlap sends with the next "
                 "microbatch (1F1B); fewer stages");
    else if (strstr(phase, "data") || strstr(phase, "gradient") ||
             strstr(phase, "dp"))
        snprintf(out, len,
                 "data-parallel gradient all-reduce: bucket it and overlap "
                 "it with the backward; shard it (ZeRO/FSDP); gradient "
                 "accumulation (fewer reductions per token)");
    else
        snprintf(out, len,
                 "fewer bytes per step (other tensor/fsdp/expert degrees); "
                 "the group inside %s; communication overlapped with "
                 "compute",
                 scaleup(hw));
}

const char *sb_advice(sb_bound cls, const char *phase, bool inference,
                      const char *hw, char *out, size_t len)
{
    out[0] = '\0';
    bool attn = strstr(phase, "attention") != NULL;
    switch (cls) {
    case SB_BOUND_COMPUTE:
        snprintf(out, len, "%s; fewer FLOPs (%s%s)", mm_unit(hw),
                 lower_precision(hw),
                 inference ? "" : ", less rematerialisation");
        if (attn)
            snprintf(out, len,
                     "attention kernel (a flash kernel with large tiles, "
                     "causal blocks skipped); %s; fewer FLOPs (%s%s)",
                     mm_unit(hw), lower_precision(hw),
                     inference ? "" : ", less rematerialisation");
        break;
    case SB_BOUND_MEMORY:
        if (attn)
            snprintf(out, len, "%s",
                     inference
                         ? "attention kernel (flash/paged decoding: K/V read "
                           "once, no score matrix in memory); the KV cache in "
                           "the layout the kernel reads; a quantised KV cache "
                           "(fp8/int8)"
                         : "attention kernel (fused/flash attention: no "
                           "score matrix in memory, K/V reused per tile); "
                           "rematerialisation policy; activation layout");
        else if (strstr(phase, "norm") || strstr(phase, "elementwise") ||
                 strstr(phase, "embedding"))
            snprintf(out, len,
                     "fusion (norms and elementwise work folded into the "
                     "neighbouring matmuls' prologue and epilogue: one pass "
                     "over the activations instead of several)%s",
                     inference ? ""
                               : "; rematerialisation policy (recompute "
                                 "only what is cheap)");
        else if (strstr(phase, "optimizer"))
            snprintf(out, len,
                     "a fused (multi-tensor) optimizer step; optimizer "
                     "state in lower precision or sharded (ZeRO)");
        else if (inference)
            snprintf(out, len,
                     "more tokens per weight read (a larger decode batch, "
                     "speculative decoding); quantised weights (int8, fp8, "
                     "int4)%s",
                     strstr(phase, "expert")
                         ? "; expert placement that batches each expert's "
                           "tokens"
                         : "");
        else
            snprintf(out, len,
                     "more tokens per weight read (a larger micro-batch); "
                     "activation layout (fuse elementwise ops into the "
                     "matmuls, avoid transposes); rematerialisation policy");
        break;
    case SB_BOUND_NETWORK:
        advice_network(phase, hw, out, len);
        break;
    case SB_BOUND_VECTOR:
        if (attn)
            snprintf(out, len,
                     "attention kernel (fewer elementwise passes per score: "
                     "the softmax scale folded into Q, exp2, masks only on "
                     "the diagonal blocks); wider heads (more matmul work "
                     "per score); a lower-precision softmax where the "
                     "vector unit has one");
        else
            snprintf(out, len,
                     "fusion (elementwise work folded into the matmuls' "
                     "epilogues); fewer elementwise passes; lower-precision "
                     "elementwise math where the vector unit has one");
        break;
    case SB_BOUND_HOST:
        snprintf(out, len,
                 "input pipeline (more loader workers, pre-tokenised "
                 "data); prefetching (the next batch during this step)%s",
                 hw && strcmp(hw, "cpu") == 0 ? "" : "; pinned host buffers");
        break;
    case SB_BOUND_LATENCY:
        if (strcmp(phase, "pipeline bubble") == 0)
            snprintf(out, len,
                     "more microbatches or an interleaved pipeline "
                     "schedule; fewer pipeline stages");
        else
            snprintf(out, len,
                     "fewer, larger collectives (bucketing, fusing "
                     "per-layer reductions); overlapping communication "
                     "with compute");
        break;
    default:
        break;
    }
    return out;
}

static int sb__cmp_iv(const void *a, const void *b)
{
    const sb_intervention *x = a, *y = b;
    return (x->at_stake_s < y->at_stake_s) - (x->at_stake_s > y->at_stake_s);
}

int sb_interventions(const sb_prediction *p, sb_intervention *out, int max)
{
    int n = 0;
    for (int i = 0; i < p->n && n < max; i++) {
        const sb_phase *ph = &p->ph[i];
        /* A phase under 3 % of its stage is not where the time goes. */
        if (ph->share < 0.03 || ph->bound == SB_BOUND_UNKNOWN)
            continue;
        double terms[5] = {ph->t_compute, ph->t_memory, ph->t_network,
                           ph->t_host, ph->t_latency};
        double top = 0, second = 0;
        for (int k = 0; k < 5; k++) {
            if (terms[k] > top) {
                second = top;
                top = terms[k];
            } else if (terms[k] > second) {
                second = terms[k];
            }
        }
        sb_intervention *iv = &out[n++];
        memset(iv, 0, sizeof *iv);
        iv->cls = ph->bound;
        snprintf(iv->phase, sizeof iv->phase, "%s", ph->name);
        snprintf(iv->stage, sizeof iv->stage, "%s", ph->stage);
        iv->t_s = ph->t;
        iv->share = ph->share;
        /* a collective hidden behind compute costs only what outlasts
         * it; any other phase what reaching its next roof saves */
        iv->at_stake_s = ph->comm_kind >= 0 ? ph->exposed : ph->t - second;
        if (iv->at_stake_s < 0)
            iv->at_stake_s = 0;
        sb_advice(ph->bound, ph->name, p->w.kind == SB_JOB_INFER, p->hw_kind,
                  iv->what, sizeof iv->what);
    }
    qsort(out, (size_t)n, sizeof *out, sb__cmp_iv);
    return n;
}

/* ---- printing ------------------------------------------------------------ */

/* Ends a phase table's heading: over pipeline stages, the micro-batches
 * the batch runs as (the table is one's pass of a stage). */
static void sb__heading_end(FILE *f, double microbatches, int stages)
{
    if (microbatches > 1)
        fprintf(f,
                "; %.4g micro-batches through %d pipeline stages, the table "
                "one micro-batch's pass of a stage",
                microbatches, stages);
    fprintf(f, "):\n");
}

static void sb__phase_table(FILE *f, const sb_prediction *p, const char *stage)
{
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(f, "  %-34s %10s %10s %10s %10s %10s %6s  %-8s %s\n", "phase",
            "FLOPs", "bytes", "comm B", "host B", "time", "share", "class",
            "binding ceiling");
    for (int i = 0; i < p->n; i++) {
        const sb_phase *ph = &p->ph[i];
        if (strcmp(ph->stage, stage) != 0)
            continue;
        fprintf(f, "  %-34s %10s %10s %10s %10s %10s %5.1f%%  %-8s %s",
                ph->name, sb_fmt_eng(ph->flops, a, sizeof a),
                sb_fmt_eng(ph->bytes, b, sizeof b),
                sb_fmt_eng(ph->comm_bytes, c, sizeof c),
                sb_fmt_eng(ph->host_bytes, d, sizeof d),
                sb_fmt_time(ph->t, "us", e, sizeof e), 100 * ph->share,
                sb_bound_name(ph->bound), ph->ceiling);
        if (ph->comm_kind >= 0 && ph->hidden > 0)
            fprintf(f, " (%.0f%% hidden)", 100 * ph->hidden);
        if (ph->measured_s > 0)
            fprintf(f, "  (measured %s: %.0f%% of SOL)",
                    sb_fmt_time(ph->measured_s, "us", a, sizeof a),
                    ph->pct_sol);
        fputc('\n', f);
    }
}

void sb_overlap_describe(const sb_workload *w, char *out, size_t len)
{
    if (w->overlap == SB_OVERLAP_NONE) {
        snprintf(out, len, "none (every collective on the critical path)");
        return;
    }
    if (w->overlap == SB_OVERLAP_FULL) {
        snprintf(out, len,
                 "full (communication hidden behind compute while it lasts)");
        return;
    }
    size_t n = (size_t)snprintf(out, len, "hidden fractions");
    for (int k = 0; k < SB_COMM_N && n < len; k++)
        n += (size_t)snprintf(out + n, len - n, "%s %s %.2f", k ? "," : "",
                              sb_comm_kind_name[k], w->hidden[k]);
}

/* "p50 1.2 ms, p90 ..., p99 ..." of one latency. */
static const char *sb__dist_text(const sb_sim_dist *d, char *out, size_t len)
{
    char a[32], b[32], c[32];
    if (d->n == 0) {
        snprintf(out, len, "none (no request has two output tokens)");
        return out;
    }
    snprintf(out, len, "p50 %s, p90 %s, p99 %s",
             sb_fmt_time(d->p50, "us", a, sizeof a),
             sb_fmt_time(d->p90, "us", b, sizeof b),
             sb_fmt_time(d->p99, "us", c, sizeof c));
    return out;
}

/* The serving simulator's run, under the steady state's lines. */
static void sb__sim_print(FILE *f, const sb_prediction *p)
{
    const sb_workload *w = &p->w;
    const sb_sim_out *s = &p->sim;
    if (s->requests == 0)
        return;
    char load[400], kv[64], t[96], lens[32];
    snprintf(lens, sizeof lens, "%s lengths", sb_sim_len_name[w->sim_len]);
    if (w->sim_file_n > 0) {
        snprintf(lens, sizeof lens, "lengths as given");
        if (p->sim_rate > 0)
            snprintf(load, sizeof load,
                     "the arrivals of %.200s, %.4g requests/s per replica",
                     w->sim_file_name, p->sim_rate);
        else
            snprintf(load, sizeof load, "the arrivals of %.200s",
                     w->sim_file_name);
    } else if (p->sim_closed > 0)
        snprintf(load, sizeof load, "a closed loop of %d per replica",
                 p->sim_closed);
    else
        snprintf(load, sizeof load, "Poisson, %.4g requests/s per replica",
                 p->sim_rate);
    if (p->sim_kv_blocks > 0)
        snprintf(kv, sizeof kv, "%ld KV blocks of %d tokens", p->sim_kv_blocks,
                 w->kv_page);
    else
        snprintf(kv, sizeof kv, "KV cache unbounded");
    fprintf(f,
            "  simulated        %zu requests (%s; %s; scheduler %s, "
            "%d sequences and %d tokens an iteration at most, %s):\n",
            s->requests, lens, load, sb_sim_sched_name[w->sim_sched],
            w->max_seqs, w->max_batched_tokens, kv);
    fprintf(f, "    TTFT           %s\n", sb__dist_text(&s->ttft, t, sizeof t));
    fprintf(f, "    TPOT           %s\n", sb__dist_text(&s->tpot, t, sizeof t));
    fprintf(f, "    inter-token    %s\n", sb__dist_text(&s->itl, t, sizeof t));
    fprintf(f, "    latency        %s\n", sb__dist_text(&s->e2e, t, sizeof t));
    fprintf(f, "    queueing       %s\n",
            sb__dist_text(&s->queue, t, sizeof t));
    fprintf(f,
            "    throughput     %.4g output tokens/s, %.4g requests/s (all "
            "replicas); %.1f sequences running on average, %zu "
            "preemption%s\n",
            s->tokens_per_s, s->requests_per_s, s->mean_running, s->preemptions,
            s->preemptions == 1 ? "" : "s");
    if (s->interrupts > 0)
        fprintf(f,
                "    interrupted    %zu times by the machine (its measured "
                "compute.noise), %.4g s in all\n",
                s->interrupts, s->noise_s);
    if (w->slo_ttft_s > 0 || w->slo_tpot_s > 0)
        fprintf(f,
                "    goodput        %.4g requests/s within the SLOs (%.1f%% "
                "of the requests)\n",
                s->goodput_rps, 100 * s->slo_attained);
}

void sb_predict_print(FILE *f, const sb_prediction *p)
{
    const sb_workload *w = &p->w;
    const sb_wl_sizes *s = &p->sizes;
    char a[32], b[32];
    fprintf(f,
            "workload %s: %s, %.2fB parameters (%.2fB active), %d chips "
            "(data %d, fsdp %d, tensor %d, expert %d, pipeline %d, context "
            "%d)\n",
            w->name, w->kind == SB_JOB_TRAIN ? "training" : "inference",
            s->params_total / 1e9, s->params_active / 1e9, w->chips, w->data,
            w->fsdp, w->tensor, w->expert, w->pipeline, w->context);
    char ov[160];
    sb_overlap_describe(w, ov, sizeof ov);
    fprintf(f,
            "machine: peak %s FLOP/s (%s), memory %s B/s (%s); overlap: "
            "%s\n",
            sb_fmt_eng(p->peak_flops, a, sizeof a), p->peak_name,
            sb_fmt_eng(p->mem_bw, b, sizeof b), p->bw_name, ov);
    if (p->calibrated)
        fprintf(f,
                "calibrated: efficiencies matmul %.2f, attention %.2f, "
                "memory %.2f, network %.2f\n",
                p->eff_matmul, p->eff_attention, p->eff_memory, p->eff_network);
    if (w->kind == SB_JOB_TRAIN) {
        fprintf(f, "\ntraining step (per chip):\n");
        sb__phase_table(f, p, "step");
        fprintf(f, "\ntotals:\n");
        fprintf(f, "  step time        %s",
                sb_fmt_time(p->step_s, "us", a, sizeof a));
        if (p->measured_step_s > 0)
            fprintf(f, "   (measured %s: %.0f%% of SOL)",
                    sb_fmt_time(p->measured_step_s, "us", b, sizeof b),
                    p->pct_sol);
        fprintf(f, "\n  tokens/s         %.4g (%.0f tokens per step)\n",
                p->tokens_per_s, p->tokens_per_step);
        if (p->vs_measured > 0)
            fprintf(f,
                    "  vs measured      %.2fx the measured throughput (%s)\n",
                    p->vs_measured,
                    w->measured_tokens_per_s > 0 ? "tokens/s"
                    : w->measured_step_s > 0     ? "step time"
                    : w->measured_mfu_causal     ? "MFU counting causal "
                                                   "attention"
                                                 : "MFU, PaLM's count");
        /* the causal count first: PaLM's counts the masked half of the
         * attention scores, FLOPs no kernel executes, and can pass 100 % */
        double causal_fpt =
            p->mfu > 0 ? p->model_flops_per_token * p->mfu_causal / p->mfu : 0;
        fprintf(f,
                "  MFU              %.1f%% counting causal attention "
                "(MaxText, Megatron: %.3g FLOP/token); %.1f%% in PaLM's "
                "count (6N + 12LHQT = %.3g FLOP/token)\n",
                100 * p->mfu_causal, causal_fpt, 100 * p->mfu,
                p->model_flops_per_token);
        if (p->model_flops_per_token > p->hw_flops_per_token)
            fprintf(f,
                    "                   (PaLM's count includes the masked "
                    "half of attention: %.3g FLOP/token more than the "
                    "%.3g executed%s)\n",
                    p->model_flops_per_token - p->hw_flops_per_token,
                    p->hw_flops_per_token,
                    p->mfu > 1 ? ", so its MFU passes 100 % and is no "
                                 "utilisation"
                               : "");
        fprintf(f,
                "  HFU              %.1f%% (%.3g FLOP/token executed, "
                "remat %s)\n",
                100 * p->hfu, p->hw_flops_per_token, sb_remat_name(w->remat));
        if (w->fsdp > 1) {
            const char *how = w->zero == 3
                                  ? (w->reshard_after_forward
                                         ? ", gathered again for the backward"
                                         : ", gathered weights kept through "
                                           "the backward")
                                  : "";
            fprintf(f, "  schedule         ZeRO-%d over fsdp %d%s%s\n", w->zero,
                    w->fsdp, how,
                    p->schedule_chosen
                        ? " (taken: the least communication that fits; "
                          "parallelism.zero pins one)"
                        : "");
        }
        if (p->price_chip_hour > 0)
            fprintf(f,
                    "  cost             $%.4g per step, $%.4g per million "
                    "tokens ($%.2f per chip-hour)\n",
                    p->cost_per_step, p->cost_per_mtok, p->price_chip_hour);
        else
            fprintf(f, "  cost             n/a: no price per chip-hour (the "
                       "hardware sheet's, or --set price=...)\n");
    } else {
        fprintf(f, "\nprefill of one %d-token prompt (per chip):\n",
                w->prompt_len);
        sb__phase_table(f, p, "prefill");
        double R = (double)w->data * w->fsdp;
        double running = fmin(w->concurrency, R * p->decode_batch);
        if (running < w->concurrency)
            fprintf(f,
                    "\ndecode step, %.0f sequence%s per replica: %.0f of "
                    "the %d concurrent requests, %s; context %.0f (per chip",
                    p->decode_batch, p->decode_batch == 1 ? "" : "s", running,
                    w->concurrency,
                    p->decode_batch >= sb_mdl_seq_cap(w)
                        ? "as many as max_seqs runs"
                        : "all the KV cache holds",
                    p->context);
        else
            fprintf(f,
                    "\ndecode step, %d concurrent requests, context %.0f "
                    "(per chip",
                    w->concurrency, p->context);
        sb__heading_end(f, p->decode_microbatches, w->pipeline);
        sb__phase_table(f, p, "decode");
        const sb_serve *sv = &p->serve;
        fprintf(f,
                "\nserving iteration: %.0f live sequences per replica and "
                "%.0f prompt tokens of prefill (continuous batching, %d "
                "tokens a batch at most; per chip",
                sv->batch, sv->prefill_tokens, w->max_batched_tokens);
        sb__heading_end(f, sv->microbatches, w->pipeline);
        sb__phase_table(f, p, "serve");
        fprintf(f, "\ntotals:\n");
        fprintf(f, "  TTFT             %s\n",
                sb_fmt_time(p->ttft_s, "us", a, sizeof a));
        fprintf(f,
                "  TPOT             %s (lower bound weights+KV over "
                "memory bandwidth: %s)%s\n",
                sb_fmt_time(p->tpot_s, "us", a, sizeof a),
                sb_fmt_time(p->tpot_bound_s, "us", b, sizeof b),
                w->output_len < 2 ? "; a decode step, which a request of one "
                                    "output token never takes"
                                  : "");
        fprintf(f,
                "  decode alone     %.4g output tokens/s (%.0f request%s, no "
                "prefill)\n",
                p->decode_tokens_per_s, running, running == 1 ? "" : "s");
        if (sv->tokens_per_s > 0) {
            fprintf(f,
                    "  served           %.4g output tokens/s (%.4g per chip), "
                    "prefill charged; under that load TTFT %s, TPOT %s\n",
                    sv->tokens_per_s, sv->tokens_per_s / w->chips,
                    sb_fmt_time(sv->ttft_s, "us", a, sizeof a),
                    w->output_len < 2
                        ? "none (one output token a request)"
                        : sb_fmt_time(sv->tpot_s, "us", b, sizeof b));
            if (sv->queue_s > 0)
                fprintf(f,
                        "                   (of the TTFT, %s waiting for a "
                        "place: a replica runs %.0f sequence%s at once)\n",
                        sb_fmt_time(sv->queue_s, "us", a, sizeof a), sv->batch,
                        sv->batch == 1 ? "" : "s");
        } else
            fprintf(f, "  served           nothing: %s\n",
                    !p->mem.fits ? "it does not fit (below)"
                                 : "no sequence can run (the warning says "
                                   "why)");
        if (w->request_rate > 0)
            fprintf(f,
                    "  offered load     %g requests/s: %.3g live sequences "
                    "per replica; the machine serves at most %.4g "
                    "requests/s%s\n",
                    w->request_rate, sv->batch, sv->max_request_rate,
                    sv->saturated ? " (SATURATED: queues grow)" : "");
        if (w->slo_ttft_s > 0 || w->slo_tpot_s > 0) {
            char lim[64] = "";
            if (w->slo_ttft_s > 0)
                snprintf(lim, sizeof lim, "TTFT %g s", w->slo_ttft_s);
            if (w->slo_tpot_s > 0)
                snprintf(lim + strlen(lim), sizeof lim - strlen(lim),
                         "%sTPOT %g s", lim[0] ? ", " : "", w->slo_tpot_s);
            if (sv->goodput_tokens_per_s > 0)
                fprintf(f,
                        "  goodput          %.4g output tokens/s within %s "
                        "at %.0f sequences per replica\n",
                        sv->goodput_tokens_per_s, lim, sv->goodput_batch);
            else
                fprintf(f, "  goodput          0: no batch size meets %s\n",
                        lim);
        }
        sb__sim_print(f, p);
        if (p->vs_measured > 0)
            fprintf(f,
                    "  vs measured      %.2fx the measured %.4g output "
                    "tokens/s (%s)\n",
                    p->vs_measured, w->measured_tokens_per_s,
                    p->sim.requests > 0 ? "the simulated requests' throughput"
                                        : "the steady state's");
        fprintf(f, "  request latency  %s (TTFT + %d x TPOT)\n",
                sb_fmt_time(p->request_s, "us", a, sizeof a),
                w->output_len - 1);
        fprintf(f, "  MFU (decode)     %.2f%%\n", 100 * p->mfu);
        if (p->cost_per_mtok > 0)
            fprintf(f,
                    "  cost             $%.4g per million output tokens "
                    "($%.2f per chip-hour)\n",
                    p->cost_per_mtok, p->price_chip_hour);
        else
            fprintf(f, "  cost             n/a: %s\n",
                    sv->tokens_per_s > 0
                        ? "no price per chip-hour (the hardware sheet's, or "
                          "--set price=...)"
                        : "nothing is served");
    }
    const sb_mem_use *m = &p->mem;
    fprintf(f,
            "  memory per chip  %.2f GB: weights %.2f, gradients %.2f, "
            "optimizer %.2f, activations %.2f, KV cache %.2f",
            m->total / 1e9, m->weights / 1e9, m->grads / 1e9,
            m->optimizer / 1e9, m->activations / 1e9, m->kv_cache / 1e9);
    if (m->capacity > 0)
        fprintf(f, " (of %.0f GB: %s)", m->capacity / 1e9,
                m->fits ? "fits" : "DOES NOT FIT");
    fputc('\n', f);
    if (w->kind == SB_JOB_INFER && p->serve.max_batch > 0)
        fprintf(f,
                "  KV cache         at the mean live context (prompt + half "
                "the output); %.0f sequences per replica fit at the full "
                "context\n",
                p->serve.max_batch);
    for (int i = 0; i < p->n_warnings; i++)
        fprintf(f, "warning: %s\n", p->warnings[i]);
}

void sb_interventions_print(FILE *f, const sb_prediction *p)
{
    sb_intervention iv[SB_MAX_INTERVENTIONS];
    int n = sb_interventions(p, iv, SB_MAX_INTERVENTIONS);
    if (n == 0)
        return;
    char a[32], b[32];
    fprintf(f, "\ninterventions (largest time at stake first):\n");
    for (int i = 0; i < n && i < 8; i++) {
        char label[64];
        if (p->w.kind == SB_JOB_INFER)
            snprintf(label, sizeof label, "%s (%s)", iv[i].phase, iv[i].stage);
        else
            snprintf(label, sizeof label, "%s", iv[i].phase);
        fprintf(f, "  %d. %s-bound %s: %s, %.0f%% of the %s; %s at stake\n",
                i + 1, sb_bound_name(iv[i].cls), label,
                sb_fmt_time(iv[i].t_s, "us", a, sizeof a), 100 * iv[i].share,
                p->w.kind == SB_JOB_TRAIN ? "step" : iv[i].stage,
                sb_fmt_time(iv[i].at_stake_s, "us", b, sizeof b));
        /* the same advice once: later phases that share it point back */
        int same = -1;
        for (int j = 0; j < i && same < 0; j++)
            if (strcmp(iv[j].what, iv[i].what) == 0)
                same = j;
        if (same >= 0)
            fprintf(f, "     -> as %d\n", same + 1);
        else
            fprintf(f, "     -> %s\n", iv[i].what);
    }
}

/* The job: schema, workload, kind, chips, overlap and what is hidden. */
static void sb__json_job(json_t *o, const sb_workload *w)
{
    json_object_set_new(o, "schema", json_string("solbench.predict/1"));
    json_object_set_new(o, "workload", json_string(w->name));
    json_object_set_new(
        o, "kind",
        json_string(w->kind == SB_JOB_TRAIN ? "training" : "inference"));
    json_object_set_new(o, "chips", json_integer(w->chips));
    json_object_set_new(o, "overlap",
                        json_string(w->overlap == SB_OVERLAP_FULL ? "full"
                                    : w->overlap == SB_OVERLAP_NONE
                                        ? "none"
                                        : "per-kind"));
    json_t *hid = json_object();
    for (int k = 0; k < SB_COMM_N; k++)
        json_object_set_new(hid, sb_comm_kind_name[k], json_real(w->hidden[k]));
    json_object_set_new(o, "hidden", hid);
}

/* The mode, its efficiencies when calibrated, and what was measured. */
static void sb__json_mode(json_t *o, const sb_prediction *p)
{
    const sb_workload *w = &p->w;
    json_object_set_new(
        o, "mode",
        json_string(p->calibrated ? "calibrated" : "speed-of-light"));
    if (p->calibrated) {
        json_t *e = json_object();
        json_object_set_new(e, "matmul", json_real(p->eff_matmul));
        json_object_set_new(e, "attention", json_real(p->eff_attention));
        json_object_set_new(e, "memory", json_real(p->eff_memory));
        json_object_set_new(e, "network", json_real(p->eff_network));
        json_object_set_new(o, "efficiencies", e);
    }
    if (w->measured_tokens_per_s > 0 || w->measured_mfu > 0 ||
        w->measured_step_s > 0) {
        json_t *m = json_object();
        if (w->measured_tokens_per_s > 0)
            json_object_set_new(m, "tokens_per_s",
                                json_real(w->measured_tokens_per_s));
        if (w->measured_mfu > 0) {
            json_object_set_new(m, "mfu", json_real(w->measured_mfu));
            json_object_set_new(
                m, "mfu_convention",
                json_string(w->measured_mfu_causal ? "causal" : "palm"));
        }
        if (w->measured_step_s > 0)
            json_object_set_new(m, "step_time_s",
                                json_real(w->measured_step_s));
        json_object_set_new(o, "measured", m);
    }
}

/* One phase: its work, its times, its class and ceiling. */
static json_t *sb__json_phase(const sb_phase *x)
{
    json_t *j = json_object();
    json_object_set_new(j, "name", json_string(x->name));
    json_object_set_new(j, "stage", json_string(x->stage));
    json_object_set_new(j, "flops", json_real(x->flops));
    json_object_set_new(j, "bytes", json_real(x->bytes));
    if (x->exps > 0)
        json_object_set_new(j, "exps", json_real(x->exps));
    if (x->vflops > 0)
        json_object_set_new(j, "vector_flops", json_real(x->vflops));
    json_object_set_new(j, "comm_bytes", json_real(x->comm_bytes));
    if (x->collective[0]) {
        json_object_set_new(j, "collective", json_string(x->collective));
        json_object_set_new(j, "group", json_integer(x->group));
    }
    json_object_set_new(j, "host_bytes", json_real(x->host_bytes));
    json_object_set_new(j, "t_compute_s", json_real(x->t_compute));
    json_object_set_new(j, "t_memory_s", json_real(x->t_memory));
    json_object_set_new(j, "t_network_s", json_real(x->t_network));
    json_object_set_new(j, "t_latency_s", json_real(x->t_latency));
    json_object_set_new(j, "t_host_s", json_real(x->t_host));
    json_object_set_new(j, "time_s", json_real(x->t));
    json_object_set_new(j, "peak_flops", json_real(x->peak_flops));
    json_object_set_new(j, "bw_Bps", json_real(x->bw_Bps));
    if (x->comm_kind >= 0) {
        json_object_set_new(j, "comm_kind",
                            json_string(sb_comm_kind_name[x->comm_kind]));
        json_object_set_new(j, "hidden", json_real(x->hidden));
        json_object_set_new(j, "exposed_s", json_real(x->exposed));
    }
    json_object_set_new(j, "share", json_real(x->share));
    json_object_set_new(j, "class", json_string(sb_bound_name(x->bound)));
    json_object_set_new(j, "ceiling", json_string(x->ceiling));
    if (x->measured_s > 0) {
        json_object_set_new(j, "measured_s", json_real(x->measured_s));
        json_object_set_new(j, "pct_sol", json_real(x->pct_sol));
    }
    return j;
}

static json_t *sb__json_dist(const sb_sim_dist *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "p50", json_real(d->p50));
    json_object_set_new(o, "p90", json_real(d->p90));
    json_object_set_new(o, "p99", json_real(d->p99));
    json_object_set_new(o, "mean", json_real(d->mean));
    return o;
}

/* The serving simulator's run (docs/SERVING.md). */
static json_t *sb__json_sim(const sb_prediction *p)
{
    const sb_workload *w = &p->w;
    const sb_sim_out *s = &p->sim;
    json_t *o = json_object();
    json_object_set_new(o, "requests", json_integer((json_int_t)s->requests));
    if (s->interrupts > 0) {
        json_object_set_new(o, "interrupts",
                            json_integer((json_int_t)s->interrupts));
        json_object_set_new(o, "noise_s", json_real(s->noise_s));
    }
    json_object_set_new(o, "scheduler",
                        json_string(sb_sim_sched_name[w->sim_sched]));
    json_object_set_new(
        o, "lengths",
        json_string(w->sim_file_n ? "file" : sb_sim_len_name[w->sim_len]));
    if (w->sim_len != SB_SIM_LEN_FIXED && !w->sim_file_n)
        json_object_set_new(o, "length_spread", json_real(w->sim_spread));
    if (w->sim_file_n) {
        json_object_set_new(o, "arrival", json_string("file"));
        json_object_set_new(o, "file", json_string(w->sim_file_name));
        json_object_set_new(o, "rate_per_replica", json_real(p->sim_rate));
    } else if (p->sim_closed > 0) {
        json_object_set_new(o, "arrival", json_string("closed"));
        json_object_set_new(o, "concurrency_per_replica",
                            json_integer(p->sim_closed));
    } else {
        json_object_set_new(o, "arrival", json_string("poisson"));
        json_object_set_new(o, "rate_per_replica", json_real(p->sim_rate));
    }
    json_object_set_new(o, "max_seqs", json_integer(w->max_seqs));
    json_object_set_new(o, "kv_blocks", json_integer(p->sim_kv_blocks));
    json_object_set_new(o, "ttft_s", sb__json_dist(&s->ttft));
    json_object_set_new(o, "tpot_s", sb__json_dist(&s->tpot));
    json_object_set_new(o, "itl_s", sb__json_dist(&s->itl));
    json_object_set_new(o, "latency_s", sb__json_dist(&s->e2e));
    json_object_set_new(o, "queue_s", sb__json_dist(&s->queue));
    json_object_set_new(o, "tokens_per_s", json_real(s->tokens_per_s));
    json_object_set_new(o, "requests_per_s", json_real(s->requests_per_s));
    json_object_set_new(o, "slo_attained", json_real(s->slo_attained));
    json_object_set_new(o, "goodput_requests_per_s", json_real(s->goodput_rps));
    json_object_set_new(o, "preemptions",
                        json_integer((json_int_t)s->preemptions));
    json_object_set_new(o, "iterations",
                        json_integer((json_int_t)s->iterations));
    json_object_set_new(o, "mean_running", json_real(s->mean_running));
    json_object_set_new(o, "duration_s", json_real(s->duration_s));
    return o;
}

/* The serving model's steady state, its SLOs and request rate. */
static json_t *sb__json_serving(const sb_prediction *p)
{
    const sb_workload *w = &p->w;
    json_t *sv = json_object();
    json_object_set_new(sv, "batch", json_real(p->serve.batch));
    json_object_set_new(sv, "microbatches", json_real(p->serve.microbatches));
    json_object_set_new(sv, "iteration_s", json_real(p->serve.iteration_s));
    json_object_set_new(sv, "prefill_tokens",
                        json_real(p->serve.prefill_tokens));
    json_object_set_new(sv, "tokens_per_s", json_real(p->serve.tokens_per_s));
    json_object_set_new(sv, "ttft_s", json_real(p->serve.ttft_s));
    json_object_set_new(sv, "queue_s", json_real(p->serve.queue_s));
    json_object_set_new(sv, "tpot_s", json_real(p->serve.tpot_s));
    json_object_set_new(sv, "max_batch", json_real(p->serve.max_batch));
    json_object_set_new(sv, "max_batched_tokens",
                        json_integer(w->max_batched_tokens));
    if (w->slo_ttft_s > 0 || w->slo_tpot_s > 0) {
        json_object_set_new(sv, "slo_ttft_s", json_real(w->slo_ttft_s));
        json_object_set_new(sv, "slo_tpot_s", json_real(w->slo_tpot_s));
        json_object_set_new(sv, "slo_met", json_boolean(p->serve.slo_met));
    }
    if (w->request_rate > 0) {
        json_object_set_new(sv, "request_rate", json_real(w->request_rate));
        json_object_set_new(sv, "max_request_rate",
                            json_real(p->serve.max_request_rate));
        json_object_set_new(sv, "saturated", json_boolean(p->serve.saturated));
    }
    json_object_set_new(sv, "goodput_tokens_per_s",
                        json_real(p->serve.goodput_tokens_per_s));
    json_object_set_new(sv, "goodput_batch", json_real(p->serve.goodput_batch));
    if (p->sim.requests > 0)
        json_object_set_new(sv, "simulation", sb__json_sim(p));
    return sv;
}

/* Memory per chip, by what holds it. */
static json_t *sb__json_memory(const sb_prediction *p)
{
    json_t *m = json_object();
    json_object_set_new(m, "weights", json_real(p->mem.weights));
    json_object_set_new(m, "grads", json_real(p->mem.grads));
    json_object_set_new(m, "optimizer", json_real(p->mem.optimizer));
    json_object_set_new(m, "activations", json_real(p->mem.activations));
    json_object_set_new(m, "kv_cache", json_real(p->mem.kv_cache));
    json_object_set_new(m, "total", json_real(p->mem.total));
    json_object_set_new(m, "capacity", json_real(p->mem.capacity));
    json_object_set_new(m, "fits", json_boolean(p->mem.fits));
    return m;
}

/* The totals: a step's or a request's, then throughput, cost and memory
 * per chip. */
static json_t *sb__json_totals(const sb_prediction *p)
{
    json_t *t = json_object();
    if (p->w.kind == SB_JOB_TRAIN) {
        json_object_set_new(t, "step_s", json_real(p->step_s));
        json_object_set_new(t, "tokens_per_step",
                            json_real(p->tokens_per_step));
        json_object_set_new(t, "mfu", json_real(p->mfu));
        json_object_set_new(t, "mfu_causal", json_real(p->mfu_causal));
        json_object_set_new(t, "hfu", json_real(p->hfu));
        if (p->w.fsdp > 1)
            json_object_set_new(
                t, "schedule",
                json_pack("{s:i,s:b,s:b}", "zero", p->w.zero,
                          "reshard_after_forward",
                          p->w.zero == 3 && p->w.reshard_after_forward,
                          "chosen", p->schedule_chosen));
        json_object_set_new(t, "model_flops_per_token",
                            json_real(p->model_flops_per_token));
        json_object_set_new(t, "cost_per_step", json_real(p->cost_per_step));
    } else {
        json_object_set_new(t, "ttft_s", json_real(p->ttft_s));
        json_object_set_new(t, "tpot_s", json_real(p->tpot_s));
        json_object_set_new(t, "tpot_bound_s", json_real(p->tpot_bound_s));
        json_object_set_new(t, "request_s", json_real(p->request_s));
        json_object_set_new(t, "context", json_real(p->context));
        json_object_set_new(t, "decode_microbatches",
                            json_real(p->decode_microbatches));
        json_object_set_new(t, "mfu", json_real(p->mfu));
        json_object_set_new(t, "decode_tokens_per_s",
                            json_real(p->decode_tokens_per_s));
        json_object_set_new(t, "serving", sb__json_serving(p));
    }
    json_object_set_new(t, "tokens_per_s", json_real(p->tokens_per_s));
    if (p->vs_measured > 0)
        json_object_set_new(t, "vs_measured", json_real(p->vs_measured));
    json_object_set_new(t, "cost_per_mtok", json_real(p->cost_per_mtok));
    json_object_set_new(t, "price_chip_hour", json_real(p->price_chip_hour));
    json_object_set_new(t, "memory_per_chip", sb__json_memory(p));
    return t;
}

/* The interventions for the dominant phases, as sb_predict_print lists
 * them. */
static json_t *sb__json_interventions(const sb_prediction *p)
{
    json_t *iv = json_array();
    sb_intervention ivs[SB_MAX_INTERVENTIONS];
    int n = sb_interventions(p, ivs, SB_MAX_INTERVENTIONS);
    for (int i = 0; i < n; i++) {
        json_t *j = json_object();
        json_object_set_new(j, "class", json_string(sb_bound_name(ivs[i].cls)));
        json_object_set_new(j, "phase", json_string(ivs[i].phase));
        json_object_set_new(j, "stage", json_string(ivs[i].stage));
        json_object_set_new(j, "time_s", json_real(ivs[i].t_s));
        json_object_set_new(j, "at_stake_s", json_real(ivs[i].at_stake_s));
        json_object_set_new(j, "interventions", json_string(ivs[i].what));
        json_array_append_new(iv, j);
    }
    return iv;
}

json_t *sb_predict_to_json(const sb_prediction *p)
{
    json_t *o = json_object();
    sb__json_job(o, &p->w);
    sb__json_mode(o, p);
    json_object_set_new(o, "params_total", json_real(p->sizes.params_total));
    json_object_set_new(o, "params_active", json_real(p->sizes.params_active));
    json_object_set_new(o, "kv_bytes_per_token",
                        json_real(p->sizes.kv_bytes_per_token));
    json_object_set_new(o, "peak_flops", json_real(p->peak_flops));
    json_object_set_new(o, "peak_name", json_string(p->peak_name));
    json_object_set_new(o, "mem_bw", json_real(p->mem_bw));
    json_t *ph = json_array();
    for (int i = 0; i < p->n; i++)
        json_array_append_new(ph, sb__json_phase(&p->ph[i]));
    json_object_set_new(o, "phases", ph);
    json_object_set_new(o, "totals", sb__json_totals(p));
    json_object_set_new(o, "interventions", sb__json_interventions(p));
    json_t *wa = json_array();
    for (int i = 0; i < p->n_warnings; i++)
        json_array_append_new(wa, json_string(p->warnings[i]));
    json_object_set_new(o, "warnings", wa);
    return o;
}

void sb_predict_print_modes(FILE *f, const sb_prediction *sol,
                            const sb_prediction *cal, const char *source)
{
    char a[32], b[32];
    fprintf(f,
            "\nspeed of light vs calibrated (efficiencies matmul %.2f, "
            "attention %.2f, memory %.2f, network %.2f; %s):\n",
            cal->eff_matmul, cal->eff_attention, cal->eff_memory,
            cal->eff_network, source && *source ? source : "no source given");
    fprintf(f, "  %-22s %14s %14s %8s\n", "", "speed of light", "calibrated",
            "ratio");
    if (sol->w.kind == SB_JOB_TRAIN) {
        fprintf(f, "  %-22s %14s %14s %7.2fx\n", "step time",
                sb_fmt_time(sol->step_s, "us", a, sizeof a),
                sb_fmt_time(cal->step_s, "us", b, sizeof b),
                cal->step_s / sol->step_s);
        fprintf(f, "  %-22s %14.4g %14.4g %7.2fx\n", "tokens/s",
                sol->tokens_per_s, cal->tokens_per_s,
                cal->tokens_per_s / sol->tokens_per_s);
        fprintf(f, "  %-22s %13.1f%% %13.1f%%\n", "MFU (causal)",
                100 * sol->mfu_causal, 100 * cal->mfu_causal);
        fprintf(f, "  %-22s %13.1f%% %13.1f%%%s\n", "MFU (PaLM)",
                100 * sol->mfu, 100 * cal->mfu,
                sol->model_flops_per_token > sol->hw_flops_per_token
                    ? "  (counts masked attention: more than executed)"
                    : "");
        if (sol->vs_measured > 0)
            fprintf(f, "  %-22s %13.2fx %13.2fx\n", "vs measured",
                    sol->vs_measured, cal->vs_measured);
        return;
    }
    fprintf(f, "  %-22s %14s %14s %7.2fx\n", "TTFT",
            sb_fmt_time(sol->ttft_s, "us", a, sizeof a),
            sb_fmt_time(cal->ttft_s, "us", b, sizeof b),
            cal->ttft_s / sol->ttft_s);
    fprintf(f, "  %-22s %14s %14s %7.2fx\n", "TPOT",
            sb_fmt_time(sol->tpot_s, "us", a, sizeof a),
            sb_fmt_time(cal->tpot_s, "us", b, sizeof b),
            cal->tpot_s / sol->tpot_s);
    /* nothing served (the weights and activations leave no room for a
     * sequence) is said, not printed as 0 and a ratio of 0 over 0 */
    if (sol->serve.tokens_per_s > 0 && cal->serve.tokens_per_s > 0)
        fprintf(f, "  %-22s %14.4g %14.4g %7.2fx\n", "served tokens/s",
                sol->serve.tokens_per_s, cal->serve.tokens_per_s,
                cal->serve.tokens_per_s / sol->serve.tokens_per_s);
    else {
        snprintf(a, sizeof a, "%.4g", sol->serve.tokens_per_s);
        snprintf(b, sizeof b, "%.4g", cal->serve.tokens_per_s);
        fprintf(f, "  %-22s %14s %14s %8s\n", "served tokens/s",
                sol->serve.tokens_per_s > 0 ? a : "nothing",
                cal->serve.tokens_per_s > 0 ? b : "nothing", "-");
    }
    if (sol->vs_measured > 0)
        fprintf(f, "  %-22s %13.2fx %13.2fx\n", "vs measured", sol->vs_measured,
                cal->vs_measured);
}
