/*
 * refmodel.h — a reference LLM decoder built from the kernels solbench
 * measures: the GEMM provider (backend/cpu/cpu_gemm.h) for every weight
 * matmul, the ragged paged-attention kernel (backend/cpu/attn_cpu.h) over
 * a paged KV cache for prefill chunks and decode alike, and OpenMP loops
 * for the embedding, RMSNorm, RoPE, SwiGLU, the MoE router, dispatch and
 * combine, and greedy sampling. Weights are random from a seed (no files),
 * fp32 or bf16 (bf16 weights and matmul inputs, fp32 accumulation, the
 * residual stream, attention and the KV cache in fp32).
 *
 * One call of sb_ref_forward is one iteration of a serving engine: a
 * ragged batch of sequences, each with its new tokens (a whole prompt, a
 * chunk of one, or the one token of a decode step), attending to what
 * its slot of the KV cache already holds. Each part of a layer is timed
 * under the phase name `solbench predict` gives it, so the measured time
 * of a phase sits beside its prediction.
 *
 * sb_ref_forward_double is the same model in plain double precision, from
 * the same (stored) weights, rounding to bf16 exactly where the fast path
 * stores bf16: what the timed code must compute (docs/VALIDATE.md).
 */
#ifndef SOLBENCH_BENCH_LLM_REFMODEL_H
#define SOLBENCH_BENCH_LLM_REFMODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "solbench/error.h"

/* Limits on what a point may ask of the reference (checked before
 * anything is allocated). */
#define SB_REF_MAX_LAYERS 512
#define SB_REF_MAX_DIM 65536
#define SB_REF_MAX_HEADS 1024
#define SB_REF_MAX_VOCAB (1 << 20)
#define SB_REF_MAX_EXPERTS 256
#define SB_REF_MAX_SEQS 4096
#define SB_REF_MAX_CTX (1 << 20)

/* Logits of the fast path against the double reference: a logit l passes
 * when |l - ref| <= tol * max(rms(ref), 1), rms over the vocabulary.
 * fp32: what is left is fp32 accumulation order. bf16: the reference
 * rounds to bf16 where the fast path does, but a value that the fp32 and
 * the double computation put on either side of a rounding boundary moves
 * by one bf16 step (2^-8 relative) on one side only; a few such elements
 * a layer stay well inside 1.5e-2, a wrong layout or a missing rounding
 * does not. */
#define SB_REF_TOL 2e-3
#define SB_REF_TOL_BF16 1.5e-2
/* The tolerance of a configuration. */
static inline double sb_ref_tol(bool bf16)
{
    return bf16 ? SB_REF_TOL_BF16 : SB_REF_TOL;
}

typedef struct sb_ref_config {
    int layers, d, hq, hkv, hd, ffn, vocab;
    int experts, top_k, expert_ffn; /* experts = 0: dense */
    int moe_first, moe_every;       /* layer l is MoE when experts > 0,
                                       l >= moe_first and (l - first) %
                                       every == 0 */
    bool bf16;                      /* weights and matmul inputs bf16 */
    int page;                       /* KV cache tokens per page */
    double rope_theta;
    uint64_t seed;
    int lib; /* SB_GEMM_* library, or -1: the faster, timed per shape
                class (decode-sized, prefill-sized) at creation */
} sb_ref_config;

/* Checks a configuration: SB_EINVAL naming the field. */
int sb_ref_config_check(const sb_ref_config *c, sb_err *err);
bool sb_ref_layer_is_moe(const sb_ref_config *c, int l);
/* Bytes of the weights, and of everything sb_ref_create allocates for
 * `seqs` slots of up to `ctx` tokens and iterations of up to `tokens`
 * tokens. */
double sb_ref_weight_bytes(const sb_ref_config *c);
double sb_ref_footprint(const sb_ref_config *c, int seqs, int ctx, int tokens);
/* Weight bytes an iteration of `tokens` tokens reads: every dense matrix
 * and the LM head, of each MoE layer the experts those tokens touch under
 * uniform routing, E (1 - (1 - k/E)^tokens), and its fp32 router. */
double sb_ref_read_bytes(const sb_ref_config *c, double tokens);
/* FLOPs of the weight matmuls per token (2 x the parameters a token
 * multiplies, the routed experts' top_k of them), without the LM head. */
double sb_ref_matmul_flops_per_token(const sb_ref_config *c);

/* The phases a forward is timed in, named as predict names them. */
enum {
    SB_REF_EMBED = 0,
    SB_REF_QKV,
    SB_REF_ATTN,
    SB_REF_OPROJ,
    SB_REF_MLP,
    SB_REF_ROUTER,
    SB_REF_EXPERTS,
    SB_REF_ELEM,
    SB_REF_LMHEAD,
    SB_REF_NPH
};
const char *sb_ref_phase_name(int ph);

typedef struct sb_ref_model sb_ref_model;

/* Builds the model: weights from c->seed, a KV cache of `seqs` slots of up
 * to `ctx` tokens (its pages handed out shuffled, as an allocator would),
 * buffers for iterations of up to `tokens` tokens, `threads` OpenMP
 * threads. SB_ENOMEM with the bytes it needed. */
int sb_ref_create(const sb_ref_config *c, int seqs, int ctx, int tokens,
                  int threads, sb_ref_model **out, sb_err *err);
void sb_ref_free(sb_ref_model *m);
const sb_ref_config *sb_ref_config_of(const sb_ref_model *m);
/* The kernels the model runs ("OpenBLAS ... / oneDNN ..., paged avx2"). */
const char *sb_ref_kernels(const sb_ref_model *m);

/* A slot's length (tokens in its KV cache). set_len keeps what the cache
 * holds below len (a decode benchmark fills it once and starts every
 * step at the same context); 0 empties the slot. */
int sb_ref_len(const sb_ref_model *m, int slot);
void sb_ref_set_len(sb_ref_model *m, int slot, int len);
/* Fills every slot's KV cache with values uniform in [-1, 1) (what a
 * decode benchmark attends to without prefilling each context). */
void sb_ref_fill_kv(sb_ref_model *m, uint64_t seed);

/* One iteration: n sequences, sequence i in slot slot[i] with ntok[i] new
 * tokens (tokens[], concatenated). Appends their K and V to the slots and
 * writes, per sequence, the next token (greedy) to next[i] and, when
 * logits is not NULL, its last token's logits to logits[i * vocab].
 * SB_EINVAL when a slot would exceed its context or the tokens exceed the
 * iteration's buffers. */
int sb_ref_forward(sb_ref_model *m, int n, const int *slot, const int *ntok,
                   const int32_t *tokens, float *logits, int32_t *next,
                   sb_err *err);

/* Seconds spent in each phase since the last reset, and iterations. */
void sb_ref_times(const sb_ref_model *m, double t[SB_REF_NPH]);
void sb_ref_times_reset(sb_ref_model *m);

/* Events: each phase of each layer as it ran (seconds on sb_now's clock),
 * with the tokens the iteration carried (the sequences, for the LM head);
 * layer -1 outside the layers. Recorded into buf (up to cap, later ones
 * dropped) from the next forward on; NULL stops recording. */
typedef struct sb_ref_event {
    int ph, layer;
    int64_t rows;
    double t0, t1;
} sb_ref_event;
void sb_ref_record(sb_ref_model *m, sb_ref_event *buf, int cap);
int sb_ref_n_events(const sb_ref_model *m);

/* The same model in double precision for one sequence of n tokens from
 * an empty cache: the logits of every position, out[n * vocab]. Plain
 * loops: for short prompts of models that fit. */
int sb_ref_forward_double(const sb_ref_model *m, int n, const int32_t *tokens,
                          double *out, sb_err *err);

/* Runs a short prompt (n_prompt tokens from `seed`, then n_decode greedy
 * steps) through slot `slot` and checks each step's logits against
 * sb_ref_forward_double. Returns the largest error relative to the
 * logits' scale (as SB_REF_TOL is read) in *rel, and 0, or an error. The
 * slot is left empty. */
int sb_ref_verify(sb_ref_model *m, int slot, int n_prompt, int n_decode,
                  uint64_t seed, double *rel, sb_err *err);

#endif
