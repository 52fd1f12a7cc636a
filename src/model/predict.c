/*
 * predict.c — the workload model's arithmetic: per-chip FLOPs, main-memory
 * bytes, collective bytes and host bytes of every phase of a training step
 * or of an inference request (prefill and one decode step), their times
 * against the ceilings, their class (the largest term), and the totals
 * (step time, MFU, HFU, TTFT, TPOT, memory per chip, cost). The
 * collectives are predict_net.c's, memory per chip and serving
 * predict_serve.c's (predict_int.h).
 *
 * Conventions (docs/METRICS.md, section "model", has every formula and its
 * source): FLOPs of a matmul = 2 x tokens x parameters; training = forward
 * + backward (2x forward) + a second forward under full rematerialisation
 * (the attention core also under selective); causal attention counts the
 * S(S+1)/2 unmasked query-key pairs exactly. Mesh axes from the innermost:
 * tensor, fsdp (experts shard over the data axes starting there), data,
 * pipeline; a collective whose span fits the scale-up domain runs on the
 * scale-up fabric, one with several chips in each of several domains in
 * two levels (inside, then across), otherwise on the scale-out network.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/predict_int.h"
#include "solbench/hw.h"
#include "solbench/netmodel.h"
#include "solbench/workload.h"

/* ---- phases
 * ------------------------------------------------------------------ */

/* src into dst of `size` bytes, cut to fit, terminated: a copy, not
 * snprintf (the serving simulator builds and times phases for every
 * iteration it runs, and formatting was most of its time). */
static void sb__copy(char *dst, size_t size, const char *src)
{
    size_t n = 0;
    for (; n + 1 < size && src[n]; n++)
        dst[n] = src[n];
    dst[n] = '\0';
}

static sb_phase *sb__add_kind(sb_mdl_ctx *x, const char *name, int work,
                              int comm_kind)
{
    sb_prediction *p = x->p;
    if (p->n >= SB_WL_MAX_PHASES)
        return NULL;
    sb_phase *ph = &p->ph[p->n++];
    memset(ph, 0, sizeof *ph);
    sb__copy(ph->name, sizeof ph->name, name);
    sb__copy(ph->stage, sizeof ph->stage, x->stage);
    ph->work = work;
    ph->comm_kind = comm_kind;
    ph->hidden = comm_kind >= 0 ? x->w->hidden[comm_kind] : 0;
    return ph;
}

static sb_phase *sb__add(sb_mdl_ctx *x, const char *name, int work)
{
    return sb__add_kind(x, name, work, -1);
}

static sb_phase *sb__add_comm(sb_mdl_ctx *x, const char *name, int comm_kind)
{
    return sb__add_kind(x, name, SB_WORK_VECTOR, comm_kind);
}

/* Marks a phase of the step as run once a step (see sb_mdl_ctx.once). */
static void sb__once(sb_mdl_ctx *x, const sb_phase *ph, double window)
{
    if (ph)
        x->once[ph - x->p->ph] = window;
}

/* Parts of a layer, for what a remat policy recomputes. */
enum { SB_PART_QKV, SB_PART_ATTN, SB_PART_OPROJ, SB_PART_MLP, SB_PART_ELEM };

/* The share of `part`'s forward the backward pass recomputes. */
static double sb__recompute(const sb_mdl_ctx *x, int part)
{
    switch (x->w->remat) {
    case SB_REMAT_FULL:
        return 1.0;
    case SB_REMAT_SAVE_QKV:
        return part != SB_PART_QKV;
    case SB_REMAT_SAVE_DOT_EXCEPT_MLPWI:
        /* the MLP's input matmuls (gate and up) of its `mats` */
        return part == SB_PART_MLP ? (x->mats - 1.0) / x->mats
               : part == SB_PART_QKV || part == SB_PART_OPROJ ? 0.0
                                                              : 1.0;
    case SB_REMAT_MINIMAL:
        return part == SB_PART_ATTN || part == SB_PART_ELEM;
    case SB_REMAT_SELECTIVE:
        return part == SB_PART_ATTN;
    default:
        return 0.0;
    }
}

/* Forward passes of `part` in a training step: fwd + bwd (2x) + the
 * recomputed forward; 1 in inference. */
static double sb__mult(const sb_mdl_ctx *x, int part)
{
    if (x->w->kind != SB_JOB_TRAIN)
        return 1.0;
    return 3.0 + sb__recompute(x, part);
}

/* Main-memory bytes of `params` weights (per chip) used once per
 * microbatch, `reads` times: inference reads them; training reads them in
 * the forward, the backward (and the recomputed forward) and reads and
 * writes their gradient accumulators. */
static double sb__weight_bytes(const sb_mdl_ctx *x, double params, double reads,
                               int part)
{
    const sb_workload *w = x->w;
    if (w->kind != SB_JOB_TRAIN)
        return params * w->w_bytes * reads;
    return params * (w->w_bytes * reads * (2.0 + sb__recompute(x, part)) +
                     w->g_bytes * 2.0 * reads /* accumulate per microbatch:
                         read + write */);
}

/* Routed experts per chip whose weights a pass reads: all E/ep local
 * experts in training and prefill; in decode, the expected number hit by
 * `tokens` tokens from each of the ep replicas (uniform routing). */
double sb_mdl_experts_touched(const sb_mdl_ctx *x, double tokens, bool decode)
{
    const sb_workload *w = x->w;
    double E = w->experts, k = w->top_k, ep = w->expert;
    double local = E / ep;
    if (!decode)
        return local;
    return local * (1.0 - pow(1.0 - k / E, tokens * ep));
}

/* Norm weights per chip and stage: two per layer, whole on every chip
 * (each scales its sequence-parallel share of the tokens), and the final
 * norm, a 1/pp share per stage as for the LM head. */
static double sb__norm_params(const sb_mdl_ctx *x)
{
    double d = x->w->d_model;
    return 2.0 * d * x->Ls + d / x->w->pipeline;
}

/* A matmul applied to `tokens` tokens (per chip) in `layers` layers with a
 * per-chip weight of din x dout. Training multiplies FLOPs and activation
 * traffic by fwd+bwd(+remat) and adds weight-gradient writes. */
static void sb__linear(sb_mdl_ctx *x, sb_phase *ph, double tokens, double din,
                       double dout, double layers, double weight_reads,
                       int part)
{
    const sb_workload *w = x->w;
    double mult = sb__mult(x, part);
    /* the rows one product multiplies: a microbatch's tokens */
    double mb = weight_reads > 0 ? weight_reads : 1;
    if (!(ph->rows > 0))
        ph->rows = tokens / mb;
    ph->calls += layers * mb; /* a product a layer and microbatch */
    ph->flops += 2.0 * tokens * din * dout * layers * mult;
    double acts = tokens * (din + dout) * layers * w->a_bytes * mult;
    ph->bytes +=
        sb__weight_bytes(x, din * dout * layers, weight_reads, part) + acts;
}

/* Attention core (scores, softmax, weighted values) over `seqs` sequences
 * of `sq` queries against `skv` keys (causal when sq == skv). */
static void sb__attention(sb_mdl_ctx *x, sb_phase *ph, double seqs, double sq,
                          double skv, bool causal)
{
    const sb_workload *w = x->w;
    double hq = (double)w->q_heads / w->tensor;
    double hkv = w->mla ? hq : fmax(1.0, (double)w->kv_heads / w->tensor);
    /* causal: each of the sq queries sees the skv - sq keys cached before
     * it (a prompt chunk after the ones before) and the chunk's own up to
     * itself */
    double pairs =
        causal ? sq * fmax(0.0, skv - sq) + sq * (sq + 1) / 2.0 : sq * skv;
    /* context parallelism: each chip holds sq / cp queries (2 cp chunks,
     * paired so that every chip has the same share of the causal pairs)
     * against the whole sequence's keys */
    double cp = w->kind == SB_JOB_TRAIN ? w->context : 1;
    pairs /= cp;
    double mult = sb__mult(x, SB_PART_ATTN);
    double layers = x->Ls;
    ph->flops += 2.0 * pairs * hq * (x->dqk + x->dv) * seqs * layers * mult;
    /* one exp per score in the forward, again in a flash backward (it
     * recomputes P), and in a recomputed forward */
    double rc = sb__recompute(x, SB_PART_ATTN);
    ph->exps +=
        pairs * hq * seqs * layers * (w->kind == SB_JOB_TRAIN ? 2.0 + rc : 1.0);
    ph->vflops += pairs * hq * seqs * layers *
                  (w->kind == SB_JOB_TRAIN
                       ? SB_SOFTMAX_FWD_OPS * (1.0 + rc) + SB_SOFTMAX_BWD_OPS
                       : SB_SOFTMAX_FWD_OPS);
    double io;
    if (w->kind == SB_JOB_INFER && sq == 1) {
        /* Decode: read the whole KV cache of the context once. */
        double kv_shard = w->mla ? 1.0 : fmin((double)w->tensor, w->kv_heads);
        double kv_layer = w->mla
                              ? (w->kv_lora_rank + w->rope_dim) * w->kv_bytes
                              : 2.0 * w->kv_heads * w->head_dim * w->kv_bytes;
        io = skv * kv_layer / kv_shard + hq * (x->dqk + x->dv) * w->a_bytes;
    } else {
        /* Flash-style tiling: Q and O once, K and V once per block of
         * SB_ATTN_Q_REUSE queries (half of the blocks on average under the
         * causal mask). Kernels run 128-query tiles, but the tiles of one
         * head run side by side and share K/V tiles through the on-chip
         * cache, so main memory sees about one K/V pass per 512 queries. */
        double sql = sq / cp; /* this chip's queries */
        double tiles = ceil(sql / SB_ATTN_Q_REUSE);
        double kv_passes = causal ? (tiles + 1) / 2.0 : tiles;
        io = (sql * hq * (x->dqk + x->dv) +
              kv_passes * skv * hkv * (x->dqk + x->dv)) *
             w->a_bytes;
        if (strcmp(w->attention_kernel, "naive") == 0)
            /* Scores materialised: fp32 S written and read, P written and
             * read at the activation width, for all sq x skv entries. */
            io += hq * sql * skv * (2 * 4.0 + 2 * w->a_bytes);
        if (w->kind == SB_JOB_INFER) /* prefill writes its tokens' K/V */
            io += sq *
                  (w->mla ? (w->kv_lora_rank + w->rope_dim)
                          : 2.0 * hkv * w->head_dim) *
                  w->kv_bytes;
    }
    ph->bytes += io * seqs * layers * mult;
}

/* Whether a phase of `stage` multiplies decode-sized batches by weights:
 * its time is the weights' stream, under the decode-GEMM ceiling when the
 * machine model has one. */
static bool sb__decode_matmul(const sb_phase *ph)
{
    return ph->work == SB_WORK_MATMUL && strcmp(ph->stage, "prefill") != 0 &&
           strcmp(ph->stage, "step") != 0;
}

/* Times and classifies a phase: compute under its kind's peak, memory
 * under the main-memory bandwidth (decode matmuls under the decode-GEMM
 * ceiling), each scaled by its efficiency in the calibrated mode; a phase
 * takes max(compute, memory) + network + host (a phase has one kind of
 * term or the other: overlap between phases is the stage total's). */
void sb_mdl_time(const sb_mdl_ctx *x, sb_phase *ph)
{
    const sb_workload *w = x->w;
    /* a weight matmul under the GEMM measured at its products' rows
     * where the machine model has one (gemm.<dtype>@M, gemv.<dtype>@M) */
    char pk_at[40] = "", gv_at[40] = "";
    double pk_rows = 0, gv_rows = 0;
    if (ph->work == SB_WORK_MATMUL && ph->rows > 0) {
        if (x->gemm_rows)
            pk_rows = sb_ceil_at_rows(x->c, x->gemm_base, ph->rows, pk_at,
                                      sizeof pk_at);
        if (x->gemv_rows)
            gv_rows = sb_ceil_at_rows(x->c, x->gemv_base, ph->rows, gv_at,
                                      sizeof gv_at);
    }
    double pk = (pk_rows > 0 ? pk_rows : x->pk[ph->work]) * x->eff[ph->work];
    bool gemv = (gv_rows > 0 || x->bw_gemv > 0) && sb__decode_matmul(ph);
    double bw = (gemv ? (gv_rows > 0 ? gv_rows : x->bw_gemv) : x->bw) *
                (ph->work == SB_WORK_ATTENTION ? x->eff[ph->work] : x->eff_mem);
    ph->peak_flops = pk;
    ph->bw_Bps = bw;
    ph->t_compute = ph->flops > 0 ? ph->flops / pk : 0;
    /* the vector and transcendental units run beside the matrix unit: the
     * slowest of the three sets the compute term */
    double t_exp = x->exp_rate > 0 && ph->exps > 0
                       ? ph->exps / (x->exp_rate * x->eff[ph->work])
                       : 0;
    double t_vec = x->vec_rate > 0 && ph->vflops > 0
                       ? ph->vflops / (x->vec_rate * x->eff[ph->work])
                       : 0;
    const char *side = NULL;
    if (t_exp > ph->t_compute || t_vec > ph->t_compute) {
        side = t_exp >= t_vec ? "vector.exp" : "vector.peak";
        ph->t_compute = fmax(t_exp, t_vec);
    }
    /* elementwise work under the vector unit's own rate */
    if (!side && ph->work == SB_WORK_VECTOR && x->vec_rate > 0)
        side = "vector.peak";
    ph->t_memory = ph->bytes > 0 ? ph->bytes / bw : 0;
    /* a decode product costs more than its weights' stream: small
     * matrices read one after another never reach the rate of one large
     * one (gemv.call.<dtype>, measured as compute.gemm rotate=1), at the
     * rows it was measured at and fewer; more rows (an iteration with a
     * prompt) are a GEMM's, under gemm.<dtype>@M */
    const double call_rows = x->gemv_call_max_rows;
    bool gemv_call =
        gemv && ph->calls > 0 && !(call_rows > 0 && ph->rows > call_rows);
    if (gemv_call)
        ph->t_memory +=
            ph->calls *
            (call_rows > 0
                 ? sb_ceil_at_rows(x->c, x->gemv_call_base, ph->rows, NULL, 0)
                 : x->gemv_call);
    /* and a GEMM of few rows (an expert's share of a prompt) more than
     * its FLOPs at gemm.<dtype>@M, where it was measured
     * (gemm.call.<dtype>@M, compute.gemm shape=llm rotate=1) at those
     * rows or more */
    else if (ph->work == SB_WORK_MATMUL && ph->calls > 0 && ph->rows > 0 &&
             ph->rows <= x->gemm_call_max_rows)
        ph->t_compute += ph->calls * sb_ceil_at_rows(x->c, x->gemm_call_base,
                                                     ph->rows, NULL, 0);
    /* a decode attention call costs more than its K/V stream (attn.call:
     * paged decode at one layer's batch against every layer's in one) */
    if (ph->work == SB_WORK_ATTENTION && ph->calls > 0 && x->attn_call > 0)
        ph->t_memory += ph->calls * x->attn_call;
    if (ph->host_bytes > 0 && x->host_bw > 0)
        ph->t_host = ph->host_bytes / x->host_bw;
    double net = ph->t_network + ph->t_latency;
    ph->t = fmax(ph->t_compute, ph->t_memory) + net + ph->t_host;
    double terms[5] = {ph->t_compute, ph->t_memory, ph->t_network, ph->t_host,
                       ph->t_latency};
    sb_bound kinds[5] = {SB_BOUND_COMPUTE, SB_BOUND_MEMORY, SB_BOUND_NETWORK,
                         SB_BOUND_HOST, SB_BOUND_LATENCY};
    int best = 0;
    for (int i = 1; i < 5; i++)
        if (terms[i] > terms[best])
            best = i;
    ph->bound = terms[best] > 0 ? kinds[best] : SB_BOUND_UNKNOWN;
    if (ph->bound == SB_BOUND_COMPUTE && side)
        ph->bound = SB_BOUND_VECTOR;
    char keep[40];
    sb__copy(keep, sizeof keep, ph->ceiling);
    switch (ph->bound) {
    case SB_BOUND_COMPUTE:
        sb__copy(ph->ceiling, sizeof ph->ceiling,
                 pk_at[0] ? pk_at : x->pk_name[ph->work]);
        break;
    case SB_BOUND_VECTOR:
        sb__copy(ph->ceiling, sizeof ph->ceiling, side);
        break;
    case SB_BOUND_MEMORY:
        sb__copy(ph->ceiling, sizeof ph->ceiling,
                 gemv && gv_at[0] ? gv_at
                 : gemv           ? "gemv (measured)"
                                  : x->p->bw_name);
        break;
    case SB_BOUND_HOST:
        sb__copy(ph->ceiling, sizeof ph->ceiling, "host.h2d");
        break;
    case SB_BOUND_LATENCY:
        if (!keep[0])
            snprintf(ph->ceiling, sizeof ph->ceiling, "pipeline schedule");
        else
            snprintf(ph->ceiling, sizeof ph->ceiling, "%.30s alpha", keep);
        break;
    default:
        break;
    }
    for (int i = 0; i < w->n_measured; i++)
        if (strcmp(w->measured[i].phase, ph->name) == 0) {
            ph->measured_s = w->measured[i].s;
            ph->pct_sol = 100.0 * ph->t / ph->measured_s;
        }
}

/* An expert all-to-all (dispatch or combine): k x capacity copies of
 * each of `tok_sp` tokens, `bytes` an element, per MoE layer and pass. */
static void sb__moe_a2a(sb_mdl_ctx *x, const char *name, double tok_sp,
                        double bytes, double passes, double calls)
{
    const sb_workload *w = x->w;
    sb_phase *ph = sb__add_comm(x, name, SB_COMM_EP);
    if (!ph)
        return;
    double S = tok_sp * w->top_k * w->capacity_factor * w->d_model * bytes;
    sb_mdl_net(x, ph, "alltoall", w->expert, w->tensor * w->context,
               S * x->moe_layers_chip * passes,
               x->moe_layers_chip * passes * calls);
}

/* The phases of one forward (or forward+backward) pass over `tokens`
 * tokens per tensor-parallel group, in `seqs` sequences of length `sq`
 * against `skv` keys, `mb` microbatches (each reads the weights once; 0:
 * the weights are read by another pass of the same iteration). */
void sb_mdl_pass(sb_mdl_ctx *x, double tokens, double seqs, double sq,
                 double skv, double mb, bool decode)
{
    const sb_workload *w = x->w;
    bool train = w->kind == SB_JOB_TRAIN;
    double T = w->tensor, d = w->d_model;
    double tok_sp = tokens / T; /* sequence-parallel share */
    /* passes that need tensor-parallel communication: fwd, bwd, and the
     * recomputed forward of the sharded matmuls */
    double fb = train ? 2.0 + fmax(sb__recompute(x, SB_PART_OPROJ),
                                   sb__recompute(x, SB_PART_MLP))
                      : 1.0;
    /* microbatches a pass: collectives per iteration, products per
     * layer and weight */
    double calls = mb > 0 ? mb : 1;
    sb_phase *ph;

    if ((ph = sb__add_comm(x, "input transfer", SB_COMM_HOST))) {
        ph->host_bytes = tokens * (train ? 8.0 : 4.0); /* int32 ids+labels */
    }
    if ((ph = sb__add(x, "embedding", SB_WORK_VECTOR))) {
        ph->bytes = tok_sp * d * (w->w_bytes + w->a_bytes) *
                    (train ? 2.0 : 1.0) / w->pipeline;
        if (train) /* scatter-add of the gradient rows */
            ph->bytes +=
                tok_sp * d * (w->a_bytes + 2 * w->g_bytes) / w->pipeline;
    }
    if ((ph = sb__add(x, "qkv projection", SB_WORK_MATMUL)))
        sb__linear(x, ph, tokens, d, x->p_qkv / d / T, x->Ls, mb, SB_PART_QKV);
    if ((ph = sb__add(x, "attention core", SB_WORK_ATTENTION))) {
        sb__attention(x, ph, seqs, sq, skv, !decode);
        if (decode && w->kind == SB_JOB_INFER)
            ph->calls += x->Ls; /* one call a layer (attn.call) */
    }
    if (train && w->context > 1 &&
        (ph = sb__add_comm(x, "context all-gather", SB_COMM_CP))) {
        /* Llama 3's all-gather context parallelism: every layer gathers
         * the sequence's K and V (of this chip's kv heads) before its
         * attention, and reduce-scatters their gradients in the backward
         * (again for a recomputed forward): S = the gathered K and V. */
        double hkv = w->mla ? (double)w->q_heads / T
                            : fmax(1.0, (double)w->kv_heads / T);
        double width =
            w->mla ? (w->kv_lora_rank + w->rope_dim) : 2.0 * hkv * w->head_dim;
        double passes = 2.0 + sb__recompute(x, SB_PART_ATTN);
        sb_mdl_net(x, ph, "allgather", w->context, w->tensor,
                   seqs * sq * width * w->a_bytes * x->Ls * passes,
                   x->Ls * passes * calls);
    }
    if ((ph = sb__add(x, "output projection", SB_WORK_MATMUL)))
        sb__linear(x, ph, tokens, x->p_o / d / T, d, x->Ls, mb, SB_PART_OPROJ);
    if (x->dense_layers_chip > 0 && (ph = sb__add(x, "mlp", SB_WORK_MATMUL))) {
        sb__linear(x, ph, tokens, d, x->mats * w->ffn / T, x->dense_layers_chip,
                   mb, SB_PART_MLP);
        /* two products a layer: up (gate and up fused) and down */
        ph->calls += x->dense_layers_chip * calls;
    }
    if (x->moe_layers_chip > 0) {
        double E = w->experts, k = w->top_k, ep = w->expert;
        double rb = sb_dtype_bytes(w->router_dtype);
        if ((ph = sb__add(x, "router", SB_WORK_ROUTER))) {
            double mult = sb__mult(x, SB_PART_ELEM);
            ph->flops = 2.0 * tok_sp * d * E * x->moe_layers_chip * mult;
            ph->exps = tok_sp * E * x->moe_layers_chip * mult; /* softmax */
            /* hidden in, logits (router dtype) out and back, then the local
             * permutation of k copies of each token and its inverse */
            ph->bytes =
                tok_sp *
                (d * w->a_bytes + 2 * rb * E + 4.0 * k * d * w->a_bytes) *
                x->moe_layers_chip * mult;
            /* its weights, d x E per MoE layer, whole on every chip */
            ph->bytes += sb__weight_bytes(x, d * E * x->moe_layers_chip, mb,
                                          SB_PART_ELEM);
        }
        if (ep > 1)
            sb__moe_a2a(x, "moe dispatch all-to-all", tok_sp, w->dispatch_bytes,
                        fb, calls);
        if ((ph = sb__add(x, "experts", SB_WORK_MATMUL))) {
            double eff = w->expert_ffn;
            double routed = tokens * k * w->capacity_factor;
            double touched = sb_mdl_experts_touched(x, tokens, decode);
            /* FLOPs and activations: the routed tokens (capacity factor
             * included); weights: the experts those tokens touch. */
            double mult = sb__mult(x, SB_PART_MLP);
            double L = x->moe_layers_chip;
            /* an expert's rows: the routed tokens of the expert group's
             * chips over the experts, a microbatch at a time */
            ph->rows = routed * ep / E / calls;
            ph->flops += 2.0 * routed * d * x->mats * eff / T * L * mult;
            ph->bytes +=
                routed * (2 * d + x->mats * eff / T) * w->a_bytes * L * mult;
            double wts = touched * x->mats * d * eff / T * L;
            ph->bytes +=
                train ? wts * (w->w_bytes * mb *
                                   (2.0 + sb__recompute(x, SB_PART_MLP)) +
                               2.0 * w->g_bytes)
                      : wts * w->w_bytes * mb;
            /* two products an expert touched, a layer and microbatch */
            ph->calls += 2.0 * touched * L * calls;
            if (w->shared_experts > 0) {
                sb__linear(x, ph, tokens, d,
                           w->shared_experts * x->mats * eff / T,
                           x->moe_layers_chip, mb, SB_PART_MLP);
                ph->calls += x->moe_layers_chip * calls;
            }
        }
        if (ep > 1)
            sb__moe_a2a(x, "moe combine all-to-all", tok_sp, w->combine_bytes,
                        fb, calls);
    }
    if ((ph = sb__add(x, "norms & elementwise", SB_WORK_VECTOR))) {
        double ffn_act = 0;
        if (x->dense_layers_chip > 0)
            ffn_act += x->dense_layers_chip * w->ffn;
        if (x->moe_layers_chip > 0)
            ffn_act += x->moe_layers_chip *
                       (w->top_k * w->capacity_factor + w->shared_experts) *
                       w->expert_ffn;
        double per_tok =
            x->Ls * (4 * d + 6 * d +
                     2.0 * (w->q_heads + w->kv_heads) * w->head_dim) +
            ffn_act * (w->gated ? 3.0 : 2.0);
        double mult = sb__mult(x, SB_PART_ELEM);
        ph->bytes = tok_sp * per_tok * w->a_bytes * mult;
        ph->flops = tok_sp * per_tok * 2.0 * mult;
        /* the gate's sigmoid (silu): one exp per gated element */
        if (w->gated)
            ph->exps = tok_sp * ffn_act * mult;
        /* the norms' weights: two per layer, whole on every chip, and a
         * 1/pp share of the final norm */
        ph->bytes += sb__weight_bytes(x, sb__norm_params(x), mb, SB_PART_ELEM);
    }
    if ((ph = sb__add(x, "lm head", SB_WORK_MATMUL))) {
        double lm_tokens = train ? tokens : seqs; /* inference: last token */
        sb__linear(x, ph, lm_tokens / w->pipeline, d, (double)w->vocab / T, 1,
                   mb / w->pipeline, SB_PART_QKV /* never recomputed */);
        /* softmax / cross-entropy over the logits (fp32) */
        ph->bytes +=
            lm_tokens / w->pipeline * w->vocab / T * 4.0 * (train ? 3.0 : 1.0);
    }
    if (w->pipeline > 1 &&
        (ph = sb__add_comm(x, "pipeline send/recv", SB_COMM_PP))) {
        /* Activations forward and their gradients backward across each
         * stage boundary, once per microbatch and model chunk (an
         * interleaved schedule has virtual_stages chunks per stage), the
         * sequence-parallel share. */
        double v = w->virtual_stages;
        double S = tok_sp * d * w->a_bytes * (train ? 2.0 : 1.0) * v;
        sb_mdl_net(x, ph, "sendrecv", 2,
                   w->tensor * w->context * w->fsdp * w->data, S,
                   calls * v * (train ? 2.0 : 1.0));
    }
    if (T > 1 && (ph = sb__add_comm(x, "tensor all-reduce", SB_COMM_TP))) {
        double S = tokens * d * w->a_bytes;
        double per_layer = 2.0 * fb;
        sb_mdl_net(x, ph, "allreduce", w->tensor, 1, S * x->Ls * per_layer,
                   x->Ls * per_layer * calls);
    }
}

static void sb__train(sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    const sb_wl_sizes *s = &p->sizes;
    double R = (double)w->data * w->fsdp;
    double tokens_step = (double)w->global_batch * w->seq_len;
    double tokens = tokens_step / R; /* per tensor x pipeline group */
    double seqs = (double)w->global_batch / R;
    double mb = w->microbatches;
    double T = w->tensor, PP = w->pipeline;
    x->stage = "step";
    /* context parallelism splits each sequence over `context` chips */
    sb_mdl_pass(x, tokens / w->context, seqs, w->seq_len, w->seq_len, mb,
                false);

    /* Weights per chip before FSDP sharding (what an all-gather rebuilds),
     * of the fullest stage. */
    double dense_unsh = s->params_dense / (T * PP) * x->stage_frac;
    double exp_unsh = s->params_expert / (T * PP * w->expert) * x->stage_frac;
    sb_phase *ph;
    /* Full-weight gathers and gradient reductions per step over the fsdp
     * axis, by ZeRO stage: 3 gathers for every microbatch's forward and
     * (resharded after the forward) again for its backward, and
     * reduce-scatters every microbatch's gradients; 2 keeps the weights
     * whole (one gather after the update) and reduce-scatters every
     * microbatch; 1 keeps weights and gradients whole, one reduce-scatter
     * and one gather a step. */
    double gathers =
        w->zero == 3 ? mb * (w->reshard_after_forward ? 2.0 : 1.0) : 1.0;
    double reduces = w->zero == 1 ? 1.0 : mb;
    if (w->fsdp > 1 &&
        (ph = sb__add_comm(x, "fsdp all-gather", SB_COMM_FSDP))) {
        if (w->zero < 3) /* after the update, before the first forward */
            sb__once(x, ph, 1.0 / 3.0);
        sb_mdl_net(x, ph, "allgather", w->fsdp, w->tensor * w->context,
                   dense_unsh * w->w_bytes * gathers, x->Ls * gathers);
        if (x->fsdp_e > 1 && exp_unsh > 0) {
            sb_phase e = *ph;
            e.t_network = e.t_latency = 0;
            sb_mdl_net(x, &e, "allgather", x->fsdp_e,
                       w->tensor * w->context * w->expert,
                       exp_unsh * w->w_bytes * gathers, 0);
            ph->t_network += e.t_network;
            ph->comm_bytes += e.comm_bytes;
        }
    }
    if (w->fsdp > 1 &&
        (ph = sb__add_comm(x, "fsdp reduce-scatter", SB_COMM_FSDP))) {
        if (w->zero == 1) /* during the last microbatch's backward */
            sb__once(x, ph, 2.0 / 3.0);
        sb_mdl_net(x, ph, "reduce_scatter", w->fsdp, w->tensor * w->context,
                   dense_unsh * w->g_bytes * reduces, x->Ls * reduces);
        if (x->fsdp_e > 1 && exp_unsh > 0) {
            sb_phase e = *ph;
            e.t_network = e.t_latency = 0;
            sb_mdl_net(x, &e, "reduce_scatter", x->fsdp_e,
                       w->tensor * w->context * w->expert,
                       exp_unsh * w->g_bytes * reduces, 0);
            ph->t_network += e.t_network;
            ph->comm_bytes += e.comm_bytes;
        }
    }
    double dense_chip = dense_unsh / w->fsdp;
    double exp_chip = exp_unsh / x->fsdp_e;
    if ((w->data > 1 || (x->dp_e > 1 && exp_chip > 0)) &&
        (ph = sb__add_comm(x, "data-parallel gradient all-reduce",
                           SB_COMM_DP))) {
        sb__once(x, ph, 2.0 / 3.0);
        if (w->data > 1)
            sb_mdl_net(x, ph, "allreduce", w->data,
                       w->tensor * w->context * w->fsdp,
                       dense_chip * w->g_bytes, x->Ls);
        if (x->dp_e > 1 && exp_chip > 0) {
            sb_phase e = *ph;
            e.t_network = e.t_latency = 0;
            sb_mdl_net(x, &e, "allreduce", x->dp_e,
                       w->tensor * w->context * w->expert * x->fsdp_e,
                       exp_chip * w->g_bytes, x->Ls);
            ph->t_network += e.t_network;
            ph->t_latency = fmax(ph->t_latency, e.t_latency);
            ph->comm_bytes += e.comm_bytes;
            ph->group = ph->group ? ph->group : e.group;
            snprintf(ph->collective, sizeof ph->collective, "allreduce");
        }
    }
    if (w->context > 1 &&
        (ph = sb__add_comm(x, "context-parallel gradient all-reduce",
                           SB_COMM_DP))) {
        sb__once(x, ph, 2.0 / 3.0);
        /* weights are whole on every chip of a context group: their
         * gradients (the shard each holds) are summed over it once a
         * step */
        sb_mdl_net(x, ph, "allreduce", w->context, w->tensor,
                   (dense_chip + exp_chip) * w->g_bytes, x->Ls);
    }
    if ((ph = sb__add(x, "optimizer update", SB_WORK_VECTOR))) {
        sb__once(x, ph, 1.0);
        double params_chip = dense_chip + exp_chip;
        double states = strcmp(w->optimizer, "adam") == 0  ? 2.0
                        : strcmp(w->optimizer, "sgd") == 0 ? 1.0
                                                           : 0.1;
        double master = w->w_bytes < 4 ? w->opt_bytes : 0;
        ph->bytes = params_chip * (2.0 * (states * w->opt_bytes + master) +
                                   w->g_bytes + w->w_bytes);
        ph->flops = params_chip * (states >= 2 ? 12.0 : 4.0);
        if (w->optimizer_offload) {
            /* ZeRO-Offload: the update runs on the host, against its own
             * memory; the chip sends its gradient shard and receives the
             * updated weights over the host link */
            ph->bytes = ph->flops = 0;
            sb_phase *o =
                sb__add_comm(x, "optimizer offload transfer", SB_COMM_HOST);
            if (o)
                o->host_bytes = params_chip * (w->g_bytes + w->w_bytes);
            sb__once(x, o, 2.0 / 3.0); /* gradients stream out during the
                                           last backward */
        }
    }
    /* Time every phase, then the pipeline bubble: (PP - 1) / (microbatches
     * x virtual stages) of the time a stage spends on its microbatches
     * (1F1B; interleaved with virtual stages), which is the compute stream
     * and the communication exposed inside each microbatch (tensor
     * all-reduces, the exposed part of expert all-to-alls). */
    double comp = 0;
    for (int i = 0; i < p->n; i++) {
        sb_phase *q = &p->ph[i];
        sb_mdl_time(x, q);
        if (q->comm_kind < 0 && !(x->once[i] > 0))
            comp += q->t; /* the update runs once, after the microbatches */
        else if (q->comm_kind == SB_COMM_TP || q->comm_kind == SB_COMM_EP)
            comp += (1.0 - q->hidden) * q->t;
    }
    if (PP > 1 && (ph = sb__add(x, "pipeline bubble", SB_WORK_VECTOR))) {
        ph->t_latency = comp * (PP - 1) / (mb * w->virtual_stages);
        sb_mdl_time(x, ph);
    }
    /* A collective that runs once a step can hide only behind the compute
     * next to it: the gradient reduction behind the last microbatch's
     * backward (2/3 of a microbatch), the gather of the updated weights
     * behind the first microbatch's forward (1/3); one that runs every
     * microbatch (ZeRO-3, reduce-scatters of ZeRO-2) behind the whole
     * step. */
    for (int i = 0; i < p->n; i++)
        if (p->ph[i].comm_kind >= 0 && x->once[i] > 0)
            p->ph[i].hide_cap = x->once[i] * comp / mb;
    p->tokens_per_step = tokens_step;
}

static void sb__infer(sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    double R = (double)w->data * w->fsdp;
    double b = ceil(w->concurrency / R);
    /* the decode step of the sequences that run at once: no more than
     * the KV cache holds, nor than the scheduler runs (max_seqs, a
     * micro-batch's; sb_mdl_serve says how many of how many) */
    double fit = sb_mdl_fit_live(x);
    if (fit >= 1 && fit < b)
        b = fit;
    b = fmin(b, sb_mdl_seq_cap(w));
    p->decode_batch = b;
    x->stage = "prefill";
    int first = p->n;
    sb_mdl_pass(x, w->prompt_len, 1, w->prompt_len, w->prompt_len, 1, false);
    for (int i = first; i < p->n; i++)
        sb_mdl_time(x, &p->ph[i]);
    /* over pipeline stages, micro-batches of b / m, one a stage at a time
     * (sb_mdl_microbatches): the phases are one micro-batch's */
    x->stage = "decode";
    p->context = w->prompt_len + w->output_len / 2.0;
    p->decode_microbatches = sb_mdl_microbatches(w, b);
    double mb = b / p->decode_microbatches;
    first = p->n;
    sb_mdl_pass(x, mb, mb, 1, p->context, 1, true);
    for (int i = first; i < p->n; i++)
        sb_mdl_time(x, &p->ph[i]);
}

/* Bytes one decode step of `b` sequences at `context` must read from main
 * memory per chip and stage, the floor under TPOT: every weight it
 * multiplies by (attention projections, dense MLP, router, the routed
 * experts the batch touches, shared experts, norms) and the LM head, whole
 * every token whether or not it is tied to the embedding; of the embedding
 * table only the row of each sequence's token (the table itself is read
 * by no decode step); and the KV cache of the context. The decode phases
 * of sb_mdl_pass read each of these (and activations besides), so the bound
 * cannot exceed TPOT. */
static double sb__decode_reads(const sb_mdl_ctx *x, double b, double context)
{
    const sb_workload *w = x->w;
    double T = w->tensor, PP = w->pipeline, d = w->d_model;
    double params = (x->p_qkv + x->p_o) / T * x->Ls +
                    x->mats * d * w->ffn / T * x->dense_layers_chip +
                    sb__norm_params(x) + (double)w->vocab * d / T / PP;
    if (x->moe_layers_chip > 0) {
        double expert = x->mats * d * w->expert_ffn / T;
        params += (d * w->experts +
                   (sb_mdl_experts_touched(x, b, true) + w->shared_experts) *
                       expert) *
                  x->moe_layers_chip;
    }
    double rows = b / T * d / PP; /* the lookup's sequence-parallel share */
    double kv_shard = w->mla ? 1.0 : fmin(T, w->kv_heads);
    return (params + rows) * w->w_bytes +
           b * context * x->p->sizes.kv_bytes_per_token / (PP * kv_shard);
}

/* Stage total: the compute stream (every phase that is not
 * communication, the pipeline bubble included), plus what communication
 * leaves exposed; the hidden part runs beside the compute stream and adds
 * only what outlasts it (network and host transfers are streams of their
 * own). Sets each phase's exposed time. */
double sb_mdl_total(sb_prediction *p, const char *stage)
{
    double comp = 0, exposed = 0, hid[2] = {0, 0}; /* network, host */
    for (int i = 0; i < p->n; i++) {
        sb_phase *ph = &p->ph[i];
        if (strcmp(ph->stage, stage) != 0)
            continue;
        if (ph->comm_kind < 0) {
            comp += ph->t;
            ph->exposed = ph->t;
            continue;
        }
        double h = ph->hidden * ph->t;
        if (ph->hide_cap > 0 && h > ph->hide_cap)
            h = ph->hide_cap;
        ph->exposed = ph->t - h;
        exposed += ph->exposed;
        hid[ph->comm_kind == SB_COMM_HOST] += h;
    }
    /* hidden time that outlasts the compute stream is on the critical
     * path: shared out over the phases of its stream */
    for (int i = 0; i < p->n; i++) {
        sb_phase *ph = &p->ph[i];
        if (strcmp(ph->stage, stage) != 0 || ph->comm_kind < 0)
            continue;
        int k = ph->comm_kind == SB_COMM_HOST;
        double h = ph->t - ph->exposed;
        if (hid[k] > comp && hid[k] > 0)
            ph->exposed += h * (hid[k] - comp) / hid[k];
    }
    return fmax(comp, fmax(hid[0], hid[1])) + exposed;
}

const char *sb_remat_name(sb_remat r)
{
    static const char *const names[] = {
        "none",          "selective", "minimal", "save_dot_except_mlpwi",
        "save_qkv_proj", "full"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

bool sb_workload_calibrated(const sb_workload *w)
{
    return w->eff_matmul > 0 || w->eff_attention > 0 || w->eff_memory > 0 ||
           w->eff_network > 0;
}

/* A training step's totals: step time, throughput, MFU (PaLM and causal),
 * HFU, cost, each phase's share, the comparison with a measurement. */
static void sb__train_totals(const sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    double chips = w->chips;
    const sb_wl_sizes *s = &p->sizes;
    p->step_s = sb_mdl_total(p, "step");
    p->tokens_per_s = p->tokens_per_step / p->step_s;
    /* PaLM (Chowdhery et al. 2022, appendix B): 6N + 12 L H Q T. */
    p->model_flops_per_token =
        6.0 * s->n_for_mfu +
        12.0 * w->layers * w->q_heads * (x->dqk + x->dv) / 2.0 * w->seq_len;
    p->mfu = p->model_flops_per_token * p->tokens_per_s / (chips * x->peak);
    /* Causal attention counts the unmasked pairs only, S(S+1)/2 of S^2
     * (MaxText's and Megatron's convention): the attention term times
     * (S+1)/2S. */
    double attn =
        12.0 * w->layers * w->q_heads * (x->dqk + x->dv) / 2.0 * w->seq_len;
    p->mfu_causal = (p->model_flops_per_token -
                     attn * (1.0 - (w->seq_len + 1.0) / (2.0 * w->seq_len))) *
                    p->tokens_per_s / (chips * x->peak);
    double hw = 0;
    for (int i = 0; i < p->n; i++)
        hw += p->ph[i].flops;
    p->hw_flops_per_token = hw * chips / p->tokens_per_step;
    p->hfu = hw / (p->step_s * x->peak);
    p->cost_per_step = p->price_chip_hour * chips * p->step_s / 3600.0;
    p->cost_per_mtok = p->cost_per_step / p->tokens_per_step * 1e6;
    for (int i = 0; i < p->n; i++)
        if (p->step_s > 0)
            p->ph[i].share = p->ph[i].exposed / p->step_s;
    p->measured_step_s = w->measured_step_s;
    if (w->measured_step_s > 0)
        p->pct_sol = 100.0 * p->step_s / w->measured_step_s;
    if (w->measured_tokens_per_s > 0)
        p->vs_measured = p->tokens_per_s / w->measured_tokens_per_s;
    else if (w->measured_step_s > 0)
        p->vs_measured = w->measured_step_s / p->step_s;
    else if (w->measured_mfu > 0)
        p->vs_measured =
            (w->measured_mfu_causal ? p->mfu_causal : p->mfu) / w->measured_mfu;
}

/* An inference request's totals: TTFT, TPOT and its bound, request time,
 * the serving model's throughput and cost, MFU, each phase's share. */
static void sb__infer_totals(sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    double chips = w->chips;
    const sb_wl_sizes *s = &p->sizes;
    double PP = w->pipeline;
    double pre = sb_mdl_total(p, "prefill"), dec = sb_mdl_total(p, "decode");
    p->ttft_s = pre * PP;
    p->tpot_s = dec * PP;
    double R = (double)w->data * w->fsdp;
    double b = p->decode_batch;
    /* Lower bound of one decode step: what it must read, once, at the
     * full memory bandwidth, stage after stage. (Not the weights held
     * per chip: those include the whole embedding table, of which a
     * step reads one row per sequence, and every expert.) */
    /* ... at the fastest stream the machine model has (a run's
     * decode-GEMM weight stream can beat its read bandwidth) */
    p->tpot_bound_s =
        sb__decode_reads(x, b / p->decode_microbatches, p->context) /
        fmax(x->bw, x->bw_gemv) * PP;
    p->decode_tokens_per_s = fmin(w->concurrency, R * b) / p->tpot_s;
    /* the first output token comes with the prompt's prefill; each of
     * the others takes a decode step */
    p->request_s = p->ttft_s + (w->output_len - 1) * p->tpot_s;
    sb_mdl_serve(x);
    sb_mdl_simulate(x);
    /* served throughput: prefill charged (the serving model) */
    p->tokens_per_s = p->serve.tokens_per_s;
    p->cost_per_mtok =
        sb_cost_per_mtok(p->price_chip_hour, chips, p->tokens_per_s);
    p->model_flops_per_token = 2.0 * s->n_for_mfu;
    p->mfu =
        p->model_flops_per_token * p->decode_tokens_per_s / (chips * x->peak);
    /* a figure served under objectives is a capacity's: compared with
     * the capacity search's (predict), not with this steady state; where
     * the simulator ran the job's requests (a benchmark's: job.requests),
     * its throughput, the arrivals scheduled as they come */
    if (w->measured_tokens_per_s > 0 && !w->measured_slo[0])
        p->vs_measured =
            (p->sim.requests > 0 ? p->sim.tokens_per_s : p->tokens_per_s) /
            w->measured_tokens_per_s;
    for (int i = 0; i < p->n; i++) {
        if (strcmp(p->ph[i].stage, "serve") == 0)
            continue; /* sb_mdl_serve's */
        double tot = strcmp(p->ph[i].stage, "prefill") == 0 ? pre : dec;
        p->ph[i].share = tot > 0 ? p->ph[i].exposed / tot : 0;
    }
}

/* The warnings the totals call for: a job that does not fit (first), a
 * machine model without a host link. */
static void sb__totals_warnings(const sb_mdl_ctx *x)
{
    sb_prediction *p = x->p;
    if (!p->mem.fits) {
        /* first: the warning that matters most */
        int n = p->n_warnings < 4 ? p->n_warnings : 3;
        memmove(p->warnings[1], p->warnings[0], sizeof p->warnings[0] * n);
        snprintf(p->warnings[0], sizeof p->warnings[0],
                 "does not fit: needs %.1f GB per chip, the chip has %.1f GB "
                 "(raise sharding, remat, or chips)",
                 p->mem.total / 1e9, p->mem.capacity / 1e9);
        p->n_warnings = n + 1;
    }
    if (!(x->host_bw > 0) && p->n_warnings < 4)
        snprintf(p->warnings[p->n_warnings++], sizeof p->warnings[0],
                 "no host-link ceiling: input transfer not timed");
    if (x->w->measured_dropped[0] && p->n_warnings < 4)
        snprintf(p->warnings[p->n_warnings++], sizeof p->warnings[0],
                 "the workload's measured figures are not compared: %.150s",
                 x->w->measured_dropped);
}

static int sb__predict_one(const sb_workload *w, const sb_ceilings *c,
                           bool calibrated, sb_sim_iter_fn on_iter,
                           void *iter_arg, sb_prediction *p, sb_err *err)
{
    memset(p, 0, sizeof *p);
    p->w = *w;
    sb_workload_sizes(w, &p->sizes);
    sb_mdl_ctx x = {0};
    x.w = &p->w;
    x.c = c;
    x.p = p;
    x.on_iter = on_iter;
    x.iter_arg = iter_arg;
    int rc = sb_mdl_ctx_setup(&x, calibrated, err);
    if (rc)
        return rc;
    /* memory first: the decode batch of inference is what fits */
    sb_mdl_memory(&x);
    if (w->kind == SB_JOB_TRAIN)
        sb__train(&x);
    else
        sb__infer(&x);

    p->price_chip_hour = w->price_chip_hour > 0
                             ? w->price_chip_hour
                             : sb_ceil_get(c, "price.chip_hour");
    if (w->kind == SB_JOB_TRAIN)
        sb__train_totals(&x);
    else
        sb__infer_totals(&x);
    sb__totals_warnings(&x);
    return 0;
}

/* A prediction; a training job over fsdp whose workload gives no ZeRO
 * stage runs the schedule with the least communication that fits in
 * memory: ZeRO-1 (weights and gradients whole: one gather and one
 * reduce-scatter a step), ZeRO-2, ZeRO-3 keeping the gathered weights
 * through the backward, ZeRO-3 gathering again (reshard_after_forward,
 * unless the workload pins it); the last when none fits. A speed of light
 * is a bound only if it does not pay for communication the job need not
 * do. */
static int sb__predict(const sb_workload *w, const sb_ceilings *c,
                       bool calibrated, sb_sim_iter_fn on_iter, void *iter_arg,
                       sb_prediction *p, sb_err *err)
{
    if (w->kind != SB_JOB_TRAIN || w->fsdp <= 1 || w->zero_given)
        return sb__predict_one(w, c, calibrated, on_iter, iter_arg, p, err);
    static const struct {
        int zero;
        bool reshard;
    } sched[] = {{1, false}, {2, false}, {3, false}, {3, true}};
    int rc = 0;
    for (size_t i = 0; i < sizeof sched / sizeof sched[0]; i++) {
        sb_workload t = *w;
        t.zero = sched[i].zero;
        if (t.zero == 3 && !w->reshard_given)
            t.reshard_after_forward = sched[i].reshard;
        else if (t.zero == 3 && sched[i].reshard != w->reshard_after_forward)
            continue; /* pinned the other way */
        rc = sb__predict_one(&t, c, calibrated, on_iter, iter_arg, p, err);
        if (rc)
            return rc;
        p->schedule_chosen = true;
        if (p->mem.fits)
            return 0;
    }
    return rc; /* none fits: the last, which shards the most */
}

int sb_predict(const sb_workload *w, const sb_ceilings *c, sb_prediction *p,
               sb_err *err)
{
    return sb__predict(w, c, false, NULL, NULL, p, err);
}

int sb_predict_timeline(const sb_workload *w, const sb_ceilings *c,
                        sb_sim_iter_fn fn, void *arg, sb_prediction *p,
                        sb_err *err)
{
    return sb__predict(w, c, false, fn, arg, p, err);
}

int sb_predict_calibrated(const sb_workload *w, const sb_ceilings *c,
                          sb_prediction *p, sb_err *err)
{
    return sb__predict(w, c, true, NULL, NULL, p, err);
}

int sb_workload_check_machine(const sb_workload *w, const sb_ceilings *c,
                              const char *where, sb_err *err)
{
    sb_wl_sizes s;
    sb_workload_sizes(w, &s);
    double cap = sb_ceil_get(c, "mem.bytes");
    if (!(cap > 0))
        return 0;
    int ep_shard = w->expert > 0 ? w->expert : 1;
    double chip =
        (s.params_dense / ((double)w->tensor * w->pipeline * w->fsdp) +
         s.params_expert / ((double)w->tensor * w->pipeline *
                            (w->fsdp > ep_shard ? w->fsdp : ep_shard))) *
        w->w_bytes;
    if (chip > SB_WL_ABSURD_FIT * cap)
        return sb_fail(err, SB_EINVAL,
                       "%s: $.topology.chips: the weights alone need %.3g GB "
                       "per chip (%.3g B parameters over %d chips) but a chip "
                       "has %.3g GB: more than %.0fx its memory; raise "
                       "topology.chips and the sharding degrees",
                       where, chip / 1e9, s.params_total, w->chips, cap / 1e9,
                       SB_WL_ABSURD_FIT);
    return 0;
}
