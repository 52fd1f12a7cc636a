/*
 * llm_bench.c — llm.prefill and llm.decode: the reference decoder of
 * refmodel.h run as benchmarks. A prefill iteration fills `batch` empty
 * slots with prompts of `prompt` tokens (one ragged iteration, the time
 * to the first token of all of them); a decode iteration is one step of
 * `batch` sequences at `context` keys each (the KV cache filled once, every
 * step at the same context). Both report the time of each phase under
 * predict's names and check the model's logits against its double-
 * precision twin. Its sizes are parameters (solbench validate passes a
 * workload's).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_gemm.h"
#include "bench/llm/llm_bench.h"
#include "solbench/bench.h"
#include "solbench/result.h"
#include "solbench/util.h"

enum { SB_LLM_PREFILL = 0, SB_LLM_DECODE = 1 };

static const char *const sb__metric_of[SB_REF_NPH] = {
    "ms_embedding", "ms_qkv",     "ms_attention",   "ms_oproj",  "ms_mlp",
    "ms_router",    "ms_experts", "ms_elementwise", "ms_lm_head"};

const char *sb_llm_phase_metric(int ph)
{
    return ph >= 0 && ph < SB_REF_NPH ? sb__metric_of[ph] : "?";
}

/* The model's sizes default to validate-dense's (data/models): solbench
 * validate passes a workload's. */
static const sb_param_def sb__llm_params[] = {
    {"layers", SB_P_INT, "12", 1, SB_REF_MAX_LAYERS, NULL, "decoder layers"},
    {"d_model", SB_P_INT, "768", 1, SB_REF_MAX_DIM, NULL, "model width"},
    {"q_heads", SB_P_INT, "12", 1, SB_REF_MAX_HEADS, NULL, "query heads"},
    {"kv_heads", SB_P_INT, "4", 1, SB_REF_MAX_HEADS, NULL,
     "key/value heads (must divide q_heads)"},
    {"head_dim", SB_P_INT, "64", 2, 1024, NULL, "head dimension (even)"},
    {"ffn", SB_P_INT, "2048", 0, 4 * SB_REF_MAX_DIM, NULL,
     "SwiGLU width of the dense layers (0: every layer MoE)"},
    {"vocab", SB_P_INT, "32000", 2, SB_REF_MAX_VOCAB, NULL, "vocabulary"},
    {"experts", SB_P_INT, "0", 0, SB_REF_MAX_EXPERTS, NULL,
     "routed experts of a MoE layer (0: dense)"},
    {"top_k", SB_P_INT, "2", 1, SB_REF_MAX_EXPERTS, NULL, "experts per token"},
    {"expert_ffn", SB_P_INT, "1024", 1, 4 * SB_REF_MAX_DIM, NULL,
     "SwiGLU width of an expert"},
    {"moe_first_layer", SB_P_INT, "0", 0, SB_REF_MAX_LAYERS, NULL,
     "first MoE layer"},
    {"moe_every", SB_P_INT, "1", 1, SB_REF_MAX_LAYERS, NULL,
     "a MoE layer every this many from the first"},
    {"kv_page", SB_P_INT, "16", 1, 65536, NULL, "tokens per KV-cache page"},
    {"dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16",
     "fp32, or bf16 weights and matmul inputs (fp32 accumulation)"},
    {"batch", SB_P_INT, "1", 1, SB_REF_MAX_SEQS, NULL, "sequences"},
    {"prompt", SB_P_INT, "128", 1, 1 << 16, NULL,
     "llm.prefill: prompt tokens per sequence (the mean when ragged)"},
    {"context", SB_P_INT, "256", 1, 1 << 20, NULL,
     "llm.decode: keys each sequence attends to (the mean when ragged)"},
    {"ragged", SB_P_BOOL, "0", 0, 0, NULL,
     "lengths uniform in [L/2, 3L/2] per sequence (mean L)"},
    {"seed", SB_P_INT, "1", 0, 2147483647.0, NULL,
     "seed of the weights, tokens and lengths"},
    {"lib", SB_P_STR, "auto", 0, 0, "auto|openblas|onednn",
     "GEMM library; auto = the faster per shape class, timed"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

int sb_llm_lengths(int batch, int mean, bool ragged, uint64_t seed, int *len)
{
    uint64_t s = seed * 31 + 7;
    int mx = 0;
    for (int i = 0; i < batch; i++) {
        int v = mean;
        if (ragged)
            v = mean / 2 + (int)(sb_rng_unif(&s) * (double)(mean + 1));
        len[i] = v < 1 ? 1 : v;
        mx = len[i] > mx ? len[i] : mx;
    }
    return mx;
}

static int sb__llm_decode(const sb_bench *b, const sb_params *p, void *shape,
                          sb_err *err)
{
    sb_llm_shape *s = shape;
    s->kind = b->kind;
    sb_ref_config *c = &s->c;
    c->layers = (int)sb_p_int(p, "layers");
    c->d = (int)sb_p_int(p, "d_model");
    c->hq = (int)sb_p_int(p, "q_heads");
    c->hkv = (int)sb_p_int(p, "kv_heads");
    c->hd = (int)sb_p_int(p, "head_dim");
    c->ffn = (int)sb_p_int(p, "ffn");
    c->vocab = (int)sb_p_int(p, "vocab");
    c->experts = (int)sb_p_int(p, "experts");
    c->top_k = (int)sb_p_int(p, "top_k");
    c->expert_ffn = (int)sb_p_int(p, "expert_ffn");
    c->moe_first = (int)sb_p_int(p, "moe_first_layer");
    c->moe_every = (int)sb_p_int(p, "moe_every");
    c->page = (int)sb_p_int(p, "kv_page");
    c->bf16 = strcmp(sb_p_str(p, "dtype"), "bf16") == 0;
    c->rope_theta = 10000.0;
    int rc = sb_ref_config_check(c, err);
    if (rc)
        return sb_fail(err, rc, "%s: %s", b->name, err->msg);
    const char *lib = sb_p_str(p, "lib");
    s->c.lib = strcmp(lib, "auto") == 0 ? -1 : sb_gemm_lib_parse(lib);
    s->c.seed = (uint64_t)sb_p_int(p, "seed");
    s->batch = (int)sb_p_int(p, "batch");
    s->mean = (int)(b->kind == SB_LLM_PREFILL ? sb_p_int(p, "prompt")
                                              : sb_p_int(p, "context"));
    s->ragged = sb_p_bool(p, "ragged");
    s->len = malloc(sizeof(int) * (size_t)s->batch);
    if (!s->len)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    int mx = sb_llm_lengths(s->batch, s->mean, s->ragged, s->c.seed, s->len);
    s->total = 0;
    for (int i = 0; i < s->batch; i++)
        s->total += s->len[i];
    /* room for the verification's 4 + 2 tokens as well */
    s->ctx = mx < 8 ? 8 : mx;
    s->tokens = b->kind == SB_LLM_PREFILL ? (int)(s->total < 8 ? 8 : s->total)
                                          : (s->batch < 8 ? 8 : s->batch);
    if (b->kind == SB_LLM_PREFILL && s->total > SB_REF_MAX_CTX)
        return sb_fail(err, SB_EINVAL,
                       "%s: batch x prompt = %lld tokens in one iteration, "
                       "more than %d",
                       b->name, (long long)s->total, SB_REF_MAX_CTX);
    return 0;
}

static void sb__llm_shape_free(void *shape)
{
    sb_llm_shape *s = shape;
    free(s->len);
    s->len = NULL;
}

static double sb__llm_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    const sb_llm_shape *s = pt->shape;
    return sb_ref_footprint(&s->c, s->batch, s->ctx, s->tokens);
}

typedef struct sb_llm_state {
    const sb_llm_shape *s;
    sb_ref_model *m;
    int *slot;
    int *ntok;
    int32_t *tok, *next;
} sb_llm_state;

static void sb__llm_teardown(void *state)
{
    sb_llm_state *st = state;
    if (!st)
        return;
    sb_ref_free(st->m);
    free(st->slot);
    free(st->ntok);
    free(st->tok);
    free(st->next);
    free(st);
}

static int sb__llm_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                         sb_err *err)
{
    const sb_llm_shape *s = pt->shape;
    sb_llm_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    st->s = s;
    st->slot = malloc(sizeof(int) * (size_t)s->batch);
    st->ntok = malloc(sizeof(int) * (size_t)s->batch);
    st->tok = malloc(sizeof(int32_t) * (size_t)s->tokens);
    st->next = malloc(sizeof(int32_t) * (size_t)s->batch);
    if (!st->slot || !st->ntok || !st->tok || !st->next) {
        sb__llm_teardown(st);
        return sb_fail(err, SB_ENOMEM, "out of memory");
    }
    int rc = sb_ref_create(&s->c, s->batch, s->ctx, s->tokens, ctx->threads,
                           &st->m, err);
    if (rc) {
        sb__llm_teardown(st);
        return rc;
    }
    uint64_t r = s->c.seed * 131 + 3;
    for (int i = 0; i < s->tokens; i++)
        st->tok[i] = (int32_t)(sb_rng_unif(&r) * (double)s->c.vocab);
    for (int i = 0; i < s->batch; i++) {
        st->slot[i] = i;
        st->ntok[i] = s->kind == SB_LLM_PREFILL ? s->len[i] : 1;
    }
    if (s->kind == SB_LLM_DECODE)
        sb_ref_fill_kv(st->m, s->c.seed + 11);
    *state = st;
    return 0;
}

static void sb__llm_run(void *state, uint64_t iters)
{
    sb_llm_state *st = state;
    const sb_llm_shape *s = st->s;
    sb_err err = {0};
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < s->batch; i++)
            sb_ref_set_len(st->m, i,
                           s->kind == SB_LLM_PREFILL ? 0 : s->len[i] - 1);
        /* the shape was checked at setup: no error is left to report */
        (void)sb_ref_forward(st->m, s->batch, st->slot, st->ntok, st->tok, NULL,
                             st->next, &err);
    }
}

static int sb__llm_verify(void *state, sb_result *r)
{
    sb_llm_state *st = state;
    double rel = 0;
    sb_err err = {0};
    /* after the timed steps: what they left does not matter, the check
     * runs the same code on slot 0 from empty */
    int rc = sb_ref_verify(st->m, 0, 4, 2, st->s->c.seed + 17, &rel, &err);
    if (rc) {
        sb_result_note(r, "verification: %s", err.msg);
        r->valid = false;
        return 0;
    }
    double tol = sb_ref_tol(st->s->c.bf16);
    r->valid = rel <= tol;
    sb_result_metric(r, "logit_err", rel, "rel");
    sb_result_note(r,
                   "logits of a 4-token prompt and 2 greedy steps against the "
                   "double-precision model: largest error %.2g of the "
                   "logits' scale (tolerance %.1e)%s",
                   rel, tol, r->valid ? "" : ": WRONG");
    return 0;
}

/* What one iteration streams and computes: the weights it reads (the
 * experts a decode batch touches, expected under uniform routing), the
 * KV cache, and the matmul FLOPs. */
void sb_llm_work(const sb_llm_shape *s, double *weight_bytes, double *kv_bytes,
                 double *mm_flops)
{
    const sb_ref_config *c = &s->c;
    double tokens = s->kind == SB_LLM_PREFILL ? (double)s->total : s->batch;
    double wb = sb_ref_read_bytes(c, tokens);
    double fl = tokens * sb_ref_matmul_flops_per_token(c) +
                2.0 * s->batch * (double)c->d * c->vocab;
    double kv = 0;
    for (int i = 0; i < s->batch; i++)
        kv += 2.0 * 4.0 * c->layers * c->hkv * c->hd * s->len[i];
    *weight_bytes = wb;
    *kv_bytes = kv;
    *mm_flops = fl;
}

static void sb__llm_report(void *state, const sb_point *pt, sb_ctx *ctx,
                           sb_result *r)
{
    (void)pt, (void)ctx;
    sb_llm_state *st = state;
    const sb_llm_shape *s = st->s;
    double t = r->stats.p50;
    if (!(t > 0))
        return;
    double ph[SB_REF_NPH], sum = 0;
    sb_ref_times(st->m, ph);
    for (int i = 0; i < SB_REF_NPH; i++)
        sum += ph[i];
    double tokens = s->kind == SB_LLM_PREFILL ? (double)s->total : s->batch;
    sb_result_metric(r, "tokens_per_s", tokens / t, "tok/s");
    sb_result_metric(r, s->kind == SB_LLM_PREFILL ? "ttft_ms" : "tpot_ms",
                     t * 1e3, "ms");
    /* each phase's share of the iterations run, times the median */
    for (int i = 0; i < SB_REF_NPH && sum > 0; i++)
        if (ph[i] > 0)
            sb_result_metric(r, sb__metric_of[i], ph[i] / sum * t * 1e3, "ms");
    double wb, kv, fl;
    sb_llm_work(s, &wb, &kv, &fl);
    double mm = 0;
    for (int i = 0; i < SB_REF_NPH; i++)
        if (i == SB_REF_QKV || i == SB_REF_OPROJ || i == SB_REF_MLP ||
            i == SB_REF_EXPERTS || i == SB_REF_LMHEAD)
            mm += ph[i];
    mm = sum > 0 ? mm / sum * t : 0;
    sb_result_metric(r, "weights_GB", wb / 1e9, "GB");
    if (s->kind == SB_LLM_DECODE)
        sb_result_metric(r, "stream_GBps", (wb + kv) / t / 1e9, "GB/s");
    if (mm > 0)
        sb_result_metric(r, "matmul_GFLOPs", fl / mm / 1e9, "GFLOP/s");
    sb_result_note(r, "kernels: %s", sb_ref_kernels(st->m));
}

static const sb_impl sb__llm_cpu = {
    .backend = "cpu",
    .setup = sb__llm_setup,
    .run = sb__llm_run,
    .verify = sb__llm_verify,
    .report = sb__llm_report,
    .teardown = sb__llm_teardown,
};

const sb_bench sb_bench_llm_prefill = {
    .name = "llm.prefill",
    .area = "llm",
    .desc = "the reference decoder's prefill: `batch` prompts of `prompt` "
            "tokens into empty KV-cache slots, one iteration (TTFT)",
    .params = sb__llm_params,
    .flags = 0, /* by name, or through solbench validate */
    .roof = SB_ROOF_NONE,
    .kind = SB_LLM_PREFILL,
    .decode = sb__llm_decode,
    .shape_free = sb__llm_shape_free,
    .shape_size = sizeof(sb_llm_shape),
    .footprint = sb__llm_footprint,
    .impls = (const sb_impl *const[]){&sb__llm_cpu, NULL},
};

const sb_bench sb_bench_llm_decode = {
    .name = "llm.decode",
    .area = "llm",
    .desc = "the reference decoder's decode step: `batch` sequences of "
            "`context` keys each over the paged KV cache (TPOT)",
    .params = sb__llm_params,
    .flags = 0,
    .roof = SB_ROOF_NONE,
    .kind = SB_LLM_DECODE,
    .decode = sb__llm_decode,
    .shape_free = sb__llm_shape_free,
    .shape_size = sizeof(sb_llm_shape),
    .footprint = sb__llm_footprint,
    .impls = (const sb_impl *const[]){&sb__llm_cpu, NULL},
};
