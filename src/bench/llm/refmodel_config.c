/*
 * refmodel_config.c — the reference decoder's configuration: the phase
 * names, which layers are MoE, the checks of a configuration, its sizes
 * and the footprint of a model of it (refmodel.h).
 */
#include "bench/llm/refmodel.h"
#include "bench/llm/refmodel_int.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/attn_cpu.h"
#include "backend/cpu/cpu_gemm.h"
#include "bench/moe/moe_cpu.h"
#include "bench/ops/ops_cpu.h"
#include "solbench/moe.h"
#include "solbench/ops.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* ---- configuration ------------------------------------------------------ */

static const char *const sb__phase_names[SB_REF_NPH] = {
    "embedding", "qkv projection", "attention core", "output projection",
    "mlp",       "router",         "experts",        "norms & elementwise",
    "lm head"};

const char *sb_ref_phase_name(int ph)
{
    return ph >= 0 && ph < SB_REF_NPH ? sb__phase_names[ph] : "?";
}

bool sb_ref_layer_is_moe(const sb_ref_config *c, int l)
{
    return c->experts > 0 && l >= c->moe_first &&
           (l - c->moe_first) % (c->moe_every > 0 ? c->moe_every : 1) == 0;
}

int sb_refm_range(const char *what, long v, long lo, long hi, sb_err *err)
{
    if (v < lo || v > hi)
        return sb_fail(err, SB_EINVAL,
                       "reference model: %s = %ld: expected %ld .. %ld", what,
                       v, lo, hi);
    return 0;
}

int sb_ref_config_check(const sb_ref_config *c, sb_err *err)
{
    if (sb_refm_range("layers", c->layers, 1, SB_REF_MAX_LAYERS, err) ||
        sb_refm_range("d_model", c->d, 1, SB_REF_MAX_DIM, err) ||
        sb_refm_range("q_heads", c->hq, 1, SB_REF_MAX_HEADS, err) ||
        sb_refm_range("kv_heads", c->hkv, 1, SB_REF_MAX_HEADS, err) ||
        sb_refm_range("head_dim", c->hd, 2, 1024, err) ||
        sb_refm_range("vocab", c->vocab, 2, SB_REF_MAX_VOCAB, err) ||
        sb_refm_range("kv_page", c->page, 1, 65536, err))
        return SB_EINVAL;
    if (c->hd % 2)
        return sb_fail(err, SB_EINVAL,
                       "reference model: head_dim = %d: RoPE needs an even "
                       "head dimension",
                       c->hd);
    if (c->hq % c->hkv)
        return sb_fail(err, SB_EINVAL,
                       "reference model: kv_heads = %d does not divide "
                       "q_heads = %d",
                       c->hkv, c->hq);
    if (c->experts == 0)
        return sb_refm_range("ffn", c->ffn, 1, 4 * SB_REF_MAX_DIM, err);
    if (sb_refm_range("experts", c->experts, 1, SB_REF_MAX_EXPERTS, err) ||
        sb_refm_range("top_k", c->top_k, 1, c->experts, err) ||
        sb_refm_range("expert_ffn", c->expert_ffn, 1, 4 * SB_REF_MAX_DIM,
                      err) ||
        sb_refm_range("moe_first_layer", c->moe_first, 0, c->layers - 1, err) ||
        sb_refm_range("moe_every", c->moe_every, 1, c->layers, err))
        return SB_EINVAL;
    /* dense layers before the first MoE layer need an ffn */
    if (c->moe_first > 0 || c->moe_every > 1)
        return sb_refm_range("ffn", c->ffn, 1, 4 * SB_REF_MAX_DIM, err);
    return 0;
}

static double sb__es(const sb_ref_config *c)
{
    return c->bf16 ? 2.0 : 4.0;
}

double sb_refm_nqkv(const sb_ref_config *c)
{
    return (double)(c->hq + 2 * c->hkv) * c->hd;
}

/* Parameters of the weight matmuls of layer l, counting `experts` of a
 * MoE layer's routed experts. */
static double sb__layer_params(const sb_ref_config *c, int l, double experts)
{
    double d = c->d, p = sb_refm_nqkv(c) * d + (double)c->hq * c->hd * d;
    if (sb_ref_layer_is_moe(c, l))
        p += experts * 3.0 * d * c->expert_ffn;
    else
        p += 3.0 * d * c->ffn;
    return p;
}

double sb_ref_weight_bytes(const sb_ref_config *c)
{
    double p = 2.0 * (double)c->vocab * c->d; /* embedding, lm head */
    double f32 = (2.0 * c->layers + 1) * c->d;
    for (int l = 0; l < c->layers; l++) {
        p += sb__layer_params(c, l, c->experts);
        if (sb_ref_layer_is_moe(c, l))
            f32 += (double)c->experts * c->d;
    }
    return p * sb__es(c) + 4.0 * f32;
}

double sb_ref_read_bytes(const sb_ref_config *c, double tokens)
{
    double E = c->experts, k = c->top_k;
    double touched = E > 0 ? E * (1.0 - pow(1.0 - k / E, tokens)) : 0;
    double b = (double)c->vocab * c->d * sb__es(c); /* the LM head */
    for (int l = 0; l < c->layers; l++) {
        b += sb__layer_params(c, l, touched) * sb__es(c);
        if (sb_ref_layer_is_moe(c, l))
            b += 4.0 * E * c->d; /* the router */
    }
    return b;
}

double sb_ref_matmul_flops_per_token(const sb_ref_config *c)
{
    double p = 0;
    for (int l = 0; l < c->layers; l++)
        p += sb__layer_params(c, l, c->top_k);
    return 2.0 * p;
}

int64_t sb_refm_pages_per_seq(const sb_ref_config *c, int ctx)
{
    return ((int64_t)ctx + c->page - 1) / c->page;
}

double sb_refm_widest_ffn(const sb_ref_config *c)
{
    double f = c->experts > 0 ? (double)c->top_k * c->expert_ffn : 0;
    return f > c->ffn ? f : c->ffn;
}

double sb_ref_footprint(const sb_ref_config *c, int seqs, int ctx, int tokens)
{
    double T = tokens, d = c->d, kvrow = (double)c->hkv * c->hd;
    double kv = 2.0 * 4.0 * c->layers * (double)seqs *
                sb_refm_pages_per_seq(c, ctx) * c->page * kvrow;
    double act =
        4.0 * T *
        (3 * d + sb_refm_nqkv(c) + 2.0 * c->hq * c->hd +
         3.0 * sb_refm_widest_ffn(c) + (c->experts > 0 ? 3 * d * c->top_k : 0));
    double logits = 4.0 * (double)seqs * c->vocab * 2;
    double rope = 4.0 * (double)ctx * c->hd;
    return sb_ref_weight_bytes(c) + kv + act + logits + rope;
}
