/*
 * predict_serve.c — the workload model's memory per chip (weights,
 * optimizer state, activations, the KV cache) and its serving model:
 * iterations of a continuous batch under a token budget, TTFT and TPOT
 * under load (docs/METRICS.md, "model").
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/predict_int.h"

/* KV-cache bytes per token of context per chip. */
static double sb__kv_token_chip(const sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    double kv_shard = w->mla ? 1.0 : fmin((double)w->tensor, w->kv_heads);
    return x->p->sizes.kv_bytes_per_token / (w->pipeline * kv_shard);
}

double sb_mdl_fit_live(const sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    const sb_prediction *p = x->p;
    if (!(p->mem.capacity > 0))
        return INFINITY;
    double free_b =
        fmax(0.0, p->mem.capacity - p->mem.weights - p->mem.activations);
    double live = ceil((w->prompt_len + w->output_len / 2.0) / w->kv_page) *
                  w->kv_page * sb__kv_token_chip(x);
    return floor(free_b / live);
}

/* Memory per chip. */
void sb_mdl_memory(sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    const sb_wl_sizes *s = &p->sizes;
    double T = w->tensor, PP = w->pipeline;
    double params_chip = (s->params_dense / (T * PP * w->fsdp) +
                          s->params_expert / (T * PP * w->expert * x->fsdp_e)) *
                         x->stage_frac;
    /* the same before the fsdp axis shards them */
    double params_whole =
        (s->params_dense / (T * PP) + s->params_expert / (T * PP * w->expert)) *
        x->stage_frac;
    bool train = w->kind == SB_JOB_TRAIN;
    sb_mem_use *m = &p->mem;
    /* ZeRO 1 and 2 keep the weights whole; 3 shards them, and without
     * resharding after the forward holds the gathered weights of the
     * stage until its backward. */
    m->weights =
        (train && w->zero < 3 ? params_whole : params_chip) * w->w_bytes;
    if (train && w->zero == 3 && !w->reshard_after_forward)
        m->weights += (params_whole - params_chip) * w->w_bytes;
    double d = w->d_model;
    if (train) {
        m->grads = (w->zero == 1 ? params_whole : params_chip) * w->g_bytes;
        double states = strcmp(w->optimizer, "adam") == 0  ? 2.0
                        : strcmp(w->optimizer, "sgd") == 0 ? 1.0
                                                           : 0.1;
        m->optimizer =
            w->optimizer_offload
                ? 0 /* in host memory */
                : params_chip * (states * w->opt_bytes +
                                 (w->w_bytes < 4 ? w->opt_bytes : 0));
        double R = (double)w->data * w->fsdp;
        /* tokens of a microbatch on this chip's context group share */
        double tok_mb = (double)w->global_batch * w->seq_len /
                        (R * w->microbatches * w->context);
        double ffn_act = 0;
        int nl = w->layers;
        double moe_frac = (double)s->moe_layers / nl;
        ffn_act = (1 - moe_frac) * w->ffn +
                  moe_frac *
                      (w->top_k * w->capacity_factor + w->shared_experts) *
                      w->expert_ffn;
        double qkv = (w->q_heads + 2.0 * w->kv_heads) * w->head_dim;
        double attn_int = qkv + w->q_heads * (double)w->head_dim;
        if (strcmp(w->attention_kernel, "naive") == 0)
            attn_int += w->q_heads * (double)w->seq_len * (1 + 4 / w->a_bytes);
        /* What the backward needs of a layer, per token, with fused norms
         * and activation functions (their outputs recomputed in the
         * backward): the inputs of the two blocks, q/k/v and the attention
         * output, the MLP's input-matmul outputs (gate and up; up alone
         * when plain), the dispatch buffers of an MoE layer. */
        double full_set = 2 * d + attn_int + (x->mats - 1) * ffn_act +
                          moe_frac * w->top_k * d * 2;
        /* what each policy keeps per layer and token: everything; all
         * but the attention core's intermediates; every weight matmul's
         * output (minimal); the q/k/v, output and MLP output projections
         * and the layer input (save_dot_except_mlpwi); q/k/v and the
         * input; the input alone (full) */
        double per_layer;
        switch (w->remat) {
        case SB_REMAT_FULL:
            per_layer = d;
            break;
        case SB_REMAT_SAVE_QKV:
            per_layer = qkv + d;
            break;
        case SB_REMAT_SAVE_DOT_EXCEPT_MLPWI:
            per_layer = qkv + 3 * d;
            break;
        case SB_REMAT_MINIMAL:
            per_layer = full_set - (attn_int - qkv);
            break;
        case SB_REMAT_SELECTIVE:
            per_layer = full_set - attn_int;
            break;
        default:
            per_layer = full_set;
        }
        /* a policy that recomputes more than the attention core holds
         * what it recomputes of one layer while it does */
        double one_layer =
            w->remat > SB_REMAT_SELECTIVE ? fmax(0.0, full_set - per_layer) : 0;
        double in_flight = fmin(PP, w->microbatches);
        m->activations = tok_mb / T * (x->Ls * per_layer + one_layer) *
                             w->a_bytes * in_flight +
                         tok_mb * w->vocab / T * 4.0 / PP; /* fp32 logits */
    } else {
        double R = (double)w->data * w->fsdp;
        double b = ceil(w->concurrency / R);
        double P = w->prompt_len, O = w->output_len;
        /* The KV cache of b sequences at the mean live context (half-way
         * through the output), in whole pages; the batch whose full
         * context fits is checked apart (serve.max_batch). */
        double len = ceil((P + O / 2.0) / w->kv_page) * w->kv_page;
        m->kv_cache = b * len * sb__kv_token_chip(x);
        /* the largest iteration in flight: a prompt, or the token budget
         * of a batch with its prefill chunk */
        double tok = fmin(w->max_batched_tokens, fmax(P, b * (1 + P / O)));
        m->activations = tok *
                         (4 * d + x->mats * fmax(w->ffn, w->expert_ffn) / T) *
                         w->a_bytes;
    }
    m->total =
        m->weights + m->grads + m->optimizer + m->activations + m->kv_cache;
    m->capacity = sb_ceil_get(x->c, "mem.bytes");
    m->fits = !(m->capacity > 0) || m->total <= m->capacity;
}

/* One iteration of `dec` decoding sequences at the mean context `ctx`
 * and a prefill of `tok` prompt tokens in `seqs` sequences of `sq`
 * tokens each against `skv` keys (those cached before and the chunk's),
 * in one batch that reads the weights once: its phases appended under
 * `stage` and timed; returns the stage's total, one pipeline stage's. */
static double sb__mixed(sb_mdl_ctx *x, const char *stage, double dec,
                        double ctx, double tok, double seqs, double sq,
                        double skv)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    x->stage = stage;
    int first = p->n;
    if (dec > 0)
        sb_mdl_pass(x, dec, dec, 1, ctx, 1, true);
    int mid = p->n;
    if (tok > 0 && dec <= 0) {
        sb_mdl_pass(x, tok, seqs, sq, skv, 1, false);
    } else if (tok > 0) {
        /* its weights are the decode's; of the routed experts, those its
         * prompts touch beyond the decode tokens': each prompt's sq tokens
         * with the B decode tokens, at most every local expert (a steady
         * state's fraction of a prompt, seqs < 1, reads its share of a
         * whole prompt's, not those of sq tokens spread one an iteration) */
        double B = dec;
        double t_b = sb_mdl_experts_touched(x, B, true);
        double moe_extra =
            fmin(sb_mdl_experts_touched(x, INFINITY, true) - t_b,
                 seqs * (sb_mdl_experts_touched(x, B + sq, true) - t_b));
        sb_mdl_pass(x, tok, seqs, sq, skv, 0, false);
        for (int i = mid; i < p->n; i++) {
            const sb_phase *q = &p->ph[i];
            for (int j = first; j < mid; j++) {
                sb_phase *d = &p->ph[j];
                if (strcmp(d->name, q->name) != 0)
                    continue;
                d->flops += q->flops;
                d->rows += q->rows;
                d->exps += q->exps;
                d->vflops += q->vflops;
                d->bytes += q->bytes;
                d->comm_bytes += q->comm_bytes;
                d->host_bytes += q->host_bytes;
                d->t_network += q->t_network;
                /* the routed experts the whole batch touches, beyond the
                 * decode tokens' */
                if (strcmp(d->name, "experts") == 0)
                    d->bytes += moe_extra * x->mats * w->d_model *
                                w->expert_ffn / w->tensor * x->moe_layers_chip *
                                w->w_bytes;
            }
        }
        p->n = mid;
    }
    for (int i = first; i < p->n; i++)
        sb_mdl_time(x, &p->ph[i]);
    return sb_mdl_total(p, stage);
}

/* One continuous-batching iteration of B live sequences per replica: a
 * decode token for each, and the prefill the steady state needs (every
 * iteration B / output_len sequences finish and as many prompts join:
 * B x prompt_len / output_len prompt tokens, within the token budget), in
 * one batch that reads the weights once. Appends the "serve" phases and
 * returns the iteration's time; *chunk gets its prefill tokens: `want`
 * when it is >= 0 (a prompt being prefilled with what the budget leaves),
 * else the steady state's. */
static double sb__serve_iter(sb_mdl_ctx *x, double B, double want,
                             double *chunk)
{
    const sb_workload *w = x->w;
    double P = w->prompt_len, O = w->output_len;
    *chunk = fmin(want >= 0 ? want : B * P / O,
                  fmax(0.0, w->max_batched_tokens - B));
    /* the chunk's share of whole prompts: its causal attention is that
     * of chunk / P prompts */
    return sb__mixed(x, "serve", B, P + O / 2.0, *chunk, *chunk / P, P, P);
}

double sb_mdl_microbatches(const sb_workload *w, double seqs)
{
    return fmax(1.0, fmin((double)w->pipeline, seqs));
}

/* One round of B live sequences per replica: each a decode token, and the
 * steady state's prefill, in sb_mdl_microbatches micro-batches of B / m
 * that follow one another through the pipeline's stages, so that every
 * stage works on one while the others work on the rest; a sequence's next
 * token waits for its micro-batch to pass every stage: the round takes PP
 * times a stage's pass of one micro-batch (PP 1: the iteration itself).
 * Appends one micro-batch's "serve" phases; *chunk gets the round's
 * prefill tokens, every micro-batch's. */
static double sb__serve_round(sb_mdl_ctx *x, double B, double *chunk)
{
    double m = sb_mdl_microbatches(x->w, B);
    double t = sb__serve_iter(x, B / m, -1, chunk);
    *chunk *= m;
    return t * x->w->pipeline;
}

/* TTFT under load: a new prompt is prefilled in chunks of what the token
 * budget leaves beside its micro-batch's decode tokens, each round
 * carrying one chunk; never sooner than on an idle machine. */
static double sb__serve_ttft(sb_mdl_ctx *x, double B)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    double P = w->prompt_len;
    double mb = B / sb_mdl_microbatches(w, B);
    double room = fmin(P, w->max_batched_tokens - mb);
    if (!(room >= 1))
        return 0;
    int first = p->n;
    double chunk, it = sb__serve_iter(x, mb, room, &chunk) * w->pipeline;
    p->n = first;
    return fmax(ceil(P / chunk) * it, p->ttft_s);
}

/* The serving model: the steady state of continuous batching at the
 * workload's concurrency (capped by what the memory holds at the mean
 * live context, and by what the token budget can keep fed), its
 * throughput with prefill charged, TTFT and TPOT under that load; with
 * SLOs, the best throughput over batch sizes that meet them (goodput).
 * Over pipeline stages, the batch runs as micro-batches (sb__serve_round),
 * each under the caps (max_batched_tokens) on its own. Runs after
 * sb_mdl_memory; sizes the KV cache for the batch it runs. */
void sb_mdl_serve(sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    sb_serve *sv = &p->serve;
    double R = (double)w->data * w->fsdp, PP = w->pipeline;
    double P = w->prompt_len, O = w->output_len;
    double b = ceil(w->concurrency / R);
    double kv_tok = sb__kv_token_chip(x);
    double page = w->kv_page;
    double free_b =
        fmax(0.0, p->mem.capacity - p->mem.weights - p->mem.activations);
    double live = ceil((P + O / 2.0) / page) * page * kv_tok;
    double full = ceil((P + O) / page) * page * kv_tok;
    bool cap = p->mem.capacity > 0;
    double cap_live = cap ? sb_mdl_fit_live(x) : 1e18;
    sv->max_batch = cap ? floor(free_b / full) : 0;
    /* the token budget feeds B sequences when B (1 + P / O) fits in it,
     * a micro-batch's in each of the pipeline's */
    double fed = floor(w->max_batched_tokens * O / (P + O)) * PP;
    /* the scheduler's cap on sequences (max_seqs), a micro-batch's, as
     * the simulator has it */
    double seqs = sb_mdl_seq_cap(w);
    double B = fmin(fmin(b, seqs), fmin(cap_live, fed));
    const char *why = NULL;
    if (cap && cap_live < 1)
        why = "the weights and activations leave no room for a sequence's "
              "KV cache";
    else if (fed < 1)
        why = "the token budget (max_batched_tokens) admits no prompt";
    sv->microbatches = 1;
    if (why) {
        /* nothing can be served: say so rather than time a batch of 0 */
        if (p->n_warnings < 4)
            snprintf(p->warnings[p->n_warnings++], sizeof p->warnings[0],
                     "serving: nothing runs: %s", why);
        return;
    }
    /* active sequences over all replicas: no more than the requests */
    double active_max = fmin((double)w->concurrency, R * B);
    int first = p->n;
    if (w->request_rate > 0) {
        /* an offered load instead of a concurrency: the live sequences per
         * replica B that serve rate / R requests a second, B / (O t(B))
         * (Little's law: B = rate x O x t), by bisection over (0, the most
         * the memory and the budget allow]; the machine saturates above */
        double rr = w->request_rate / R, chunk;
        double Bmax = fmin(seqs, fmin(cap_live, fed));
        double top = Bmax / (O * sb__serve_round(x, Bmax, &chunk));
        p->n = first;
        sv->max_request_rate = top * R;
        if (rr >= top) {
            B = Bmax;
            sv->saturated = true;
            if (p->n_warnings < 4)
                snprintf(p->warnings[p->n_warnings++], sizeof p->warnings[0],
                         "serving: %g requests/s is more than the %.4g the "
                         "machine serves: queues grow without bound",
                         w->request_rate, sv->max_request_rate);
        } else {
            double lo = 1e-6, hi = Bmax;
            for (int k = 0; k < 60 && hi - lo > 1e-6 * hi; k++) {
                double mid = 0.5 * (lo + hi);
                double r = mid / (O * sb__serve_round(x, mid, &chunk));
                p->n = first;
                if (r < rr)
                    lo = mid;
                else
                    hi = mid;
            }
            B = 0.5 * (lo + hi);
        }
        active_max = R * B;
        b = B;
    }
    bool slo = w->slo_ttft_s > 0 || w->slo_tpot_s > 0;
    for (double c = 1; slo; c = fmin(c * 2, B)) {
        double chunk, it = sb__serve_round(x, c, &chunk);
        p->n = first;
        double ttft = sb__serve_ttft(x, c);
        double tps = fmin((double)w->concurrency, R * c) / it;
        bool ok = (!(w->slo_ttft_s > 0) || ttft <= w->slo_ttft_s) &&
                  (!(w->slo_tpot_s > 0) || it <= w->slo_tpot_s);
        if (ok && tps > sv->goodput_tokens_per_s) {
            sv->goodput_tokens_per_s = tps;
            sv->goodput_batch = c;
        }
        if (c >= B)
            break;
    }
    sv->ttft_s = sb__serve_ttft(x, B);
    double chunk;
    double it = sb__serve_round(x, B, &chunk);
    /* a closed loop of more clients than run at once: the others wait for
     * a place. B in service, each O iterations, finish B / (O t_it) a
     * second; b clients with no think time spend b O t_it / B each
     * (Little's law), O t_it of it served */
    sv->queue_s = w->request_rate > 0 || !(B < b) ? 0 : O * it * (b / B - 1);
    sv->ttft_s += sv->queue_s;
    sv->batch = B;
    sv->microbatches = sb_mdl_microbatches(w, B);
    sv->prefill_tokens = chunk;
    sv->iteration_s = it;
    sv->tokens_per_s = active_max / it;
    sv->tpot_s = it;
    sv->slo_met = (!(w->slo_ttft_s > 0) || sv->ttft_s <= w->slo_ttft_s) &&
                  (!(w->slo_tpot_s > 0) || sv->tpot_s <= w->slo_tpot_s);
    if (!slo) {
        sv->goodput_tokens_per_s = sv->tokens_per_s;
        sv->goodput_batch = B;
    }
    if (w->request_rate > 0 || B < b) {
        /* the KV cache of the batch that runs */
        p->mem.kv_cache = B * live;
        p->mem.total = p->mem.weights + p->mem.activations + p->mem.kv_cache;
        p->mem.fits = !cap || p->mem.total <= p->mem.capacity;
        if (B < b && p->n_warnings < 4)
            snprintf(p->warnings[p->n_warnings++], sizeof p->warnings[0],
                     "serving: %.0f of the %.0f concurrent sequences per "
                     "replica run at once (%s)",
                     B, b,
                     B >= seqs  ? "max_seqs runs no more"
                     : B >= fed ? "the token budget feeds no more"
                                : "the KV cache holds no more");
    }
    for (int i = first; i < p->n; i++)
        p->ph[i].share = it > 0 ? p->ph[i].exposed * PP / it : 0;
}

/* The simulator's cost of one iteration: the decodes at their mean
 * context and the prompt chunks at their mean length and keys, as one
 * batch (sb__mixed); over pipeline stages a round of micro-batches, each
 * 1/m of the iteration, as the steady state has it (sb__serve_round); the
 * phases are scratch. */
static double sb__sim_cost(const sb_sim_batch *b, void *arg)
{
    sb_mdl_ctx *x = arg;
    sb_prediction *p = x->p;
    int first = p->n;
    double ds = b->decode_seqs, ps = b->prefill_seqs;
    double m = sb_mdl_microbatches(x->w, ds + ps);
    double t = sb__mixed(x, "sim", ds / m, ds > 0 ? b->decode_ctx / ds : 0,
                         b->prefill_tokens / m, ps / m,
                         ps > 0 ? b->prefill_tokens / ps : 0,
                         ps > 0 ? b->prefill_ctx / ps : 0);
    p->n = first;
    return t * x->w->pipeline;
}

void sb_mdl_simulate(sb_mdl_ctx *x)
{
    const sb_workload *w = x->w;
    sb_prediction *p = x->p;
    if (w->sim_requests <= 0 && w->sim_file_n == 0)
        return;
    double R = (double)w->data * w->fsdp;
    double free_b =
        fmax(0.0, p->mem.capacity - p->mem.weights - p->mem.activations);
    double block = w->kv_page * sb__kv_token_chip(x);
    p->sim_kv_blocks = p->mem.capacity > 0 && block > 0
                           ? (long)fmin(floor(free_b / block), 1e12)
                           : 0;
    p->sim_rate = w->request_rate > 0 ? w->request_rate / R : 0;
    p->sim_closed = p->sim_rate > 0 ? 0 : (int)ceil(w->concurrency / R);
    if (w->sim_file_n > 0 && !w->sim_file_closed)
        p->sim_closed = 0; /* the file's arrivals */
    sb_sim_cfg cfg = {
        .sched = (sb_sim_sched)w->sim_sched,
        /* the caps are a micro-batch's, and a replica
           runs one a pipeline stage; a sequence's chunk is
           in one micro-batch */
        .max_seqs = (int)fmin((double)w->max_seqs * w->pipeline, INT_MAX),
        .max_batched_tokens =
            (int)fmin((double)w->max_batched_tokens * w->pipeline, INT_MAX),
        .max_chunk = w->pipeline > 1 ? w->max_batched_tokens : 0,
        .kv_blocks = p->sim_kv_blocks,
        .page = w->kv_page,
        .closed = p->sim_closed,
        .slo_ttft_s = w->slo_ttft_s,
        .slo_tpot_s = w->slo_tpot_s};
    /* calibrated: the machine as measured, its interruptions too (a run's
     * compute.noise); the speed of light has none */
    if (x->calibrated && sb_ceil_get(x->c, "noise.rate") > 0) {
        static const char *const q[5] = {"noise.p0_s", "noise.p50_s",
                                         "noise.p90_s", "noise.p99_s",
                                         "noise.max_s"};
        cfg.noise_rate = sb_ceil_get(x->c, "noise.rate");
        for (int i = 0; i < 5; i++)
            cfg.noise_q[i] = sb_ceil_get(x->c, q[i]);
    }
    sb_err err = {0};
    size_t n = w->sim_file_n > 0 ? w->sim_file_n : (size_t)w->sim_requests;
    sb_sim_req *req = malloc(n * sizeof *req);
    int rc = 0;
    if (!req) {
        rc = sb_fail(&err, SB_ENOMEM, "out of memory");
    } else if (w->sim_file_n > 0) {
        /* replica 0's share: every R-th request of the deployment's */
        size_t k = 0, step = (size_t)R;
        for (size_t i = 0; i < w->sim_file_n; i += step)
            req[k++] = w->sim_file[i];
        n = k;
        double span = n > 1 ? req[n - 1].arrival_s - req[0].arrival_s : 0;
        p->sim_rate = span > 0 && !p->sim_closed ? (double)(n - 1) / span : 0;
    } else {
        rc = sb_sim_requests(req, n, p->sim_rate, w->prompt_len, w->output_len,
                             (sb_sim_len)w->sim_len, w->sim_spread,
                             (uint64_t)w->sim_seed, &err);
    }
    if (rc == 0 && p->mem.capacity > 0 && p->sim_kv_blocks < 1)
        rc = sb_fail(&err, SB_EINVAL,
                     "the weights and activations leave no room for a KV "
                     "block");
    if (rc == 0)
        rc = sb_sim_run(&cfg, req, n, sb__sim_cost, x, x->on_iter, x->iter_arg,
                        &p->sim, &err);
    free(req);
    if (rc) {
        memset(&p->sim, 0, sizeof p->sim);
        if (p->n_warnings < 4)
            snprintf(p->warnings[p->n_warnings++], sizeof p->warnings[0],
                     "serving simulation not run: %.150s", err.msg);
        return;
    }
    /* one replica's rates, for all of them */
    p->sim.tokens_per_s *= R;
    p->sim.requests_per_s *= R;
    p->sim.goodput_rps *= R;
}
