/*
 * workload.h — the workload model: a training step or an inference request
 * of a transformer (dense or mixture-of-experts) on a parallel machine,
 * read from a JSON workload file (docs/WORKLOAD.md), broken into phases,
 * each with its FLOPs, bytes moved, bytes communicated and host bytes, and
 * each timed against the machine's ceilings and classified by the term that
 * dominates. Formulas and their sources: docs/METRICS.md, section "model".
 */
#ifndef SOLBENCH_WORKLOAD_H
#define SOLBENCH_WORKLOAD_H

#include <stdbool.h>

#include <jansson.h>

#include "solbench/bench.h"
#include "solbench/error.h"
#include "solbench/roofline.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sb_job_kind { SB_JOB_TRAIN = 0, SB_JOB_INFER = 1 } sb_job_kind;
typedef enum sb_remat {
    SB_REMAT_NONE = 0,
    SB_REMAT_SELECTIVE,
    SB_REMAT_FULL
} sb_remat;
typedef enum sb_overlap { SB_OVERLAP_NONE = 0, SB_OVERLAP_FULL } sb_overlap;

typedef struct sb_workload {
    char name[64];
    /* model */
    int layers, d_model, q_heads, kv_heads, head_dim, ffn, vocab;
    bool gated, tied_embeddings;
    bool mla; /* multi-head latent attention (DeepSeek) */
    int q_lora_rank, kv_lora_rank, rope_dim;
    int experts, top_k, shared_experts, expert_ffn;
    int moe_first_layer, moe_every; /* layer l is MoE when l >= first and
                                       (l - first) % every == 0 */
    double capacity_factor;
    /* dtypes, bytes per element */
    char w_dtype[8], a_dtype[8], kv_dtype[8], opt_dtype[8], g_dtype[8];
    double w_bytes, a_bytes, kv_bytes, opt_bytes, g_bytes;
    /* job */
    sb_job_kind kind;
    int global_batch, seq_len, microbatches;
    char optimizer[16]; /* adam | adafactor | sgd */
    sb_remat remat;
    int prompt_len, output_len, concurrency, kv_page;
    char attention_kernel[8]; /* flash | naive */
    /* parallelism and topology */
    int data, fsdp, tensor, expert, pipeline;
    int chips, chips_per_host;
    char mesh[32];
    /* hardware and cost */
    char hw_spec[48];
    char hw_run[256];
    double price_chip_hour; /* 0: from the spec */
    sb_overlap overlap;
    /* measured times to compare with (seconds; 0 = none) */
    double measured_step_s;
    int n_measured;
    struct {
        char phase[40];
        double s;
    } measured[16];
} sb_workload;

/* ---- reading ------------------------------------------------------------- */

/* Applies "key=value" to a workload document before it is read. Keys are
 * JSON paths ("parallelism.tensor") or short aliases (tensor, chips, hw,
 * batch, seq, concurrency, ...: docs/WORKLOAD.md). The value is read as
 * JSON when it parses, else as a string. */
int sb_workload_doc_set(json_t *doc, const char *kv, sb_err *err);
/* Checks that a --sweep key (a JSON path or an alias, as --set takes it)
 * names a field of the format, for the job type of `doc`: SB_EINVAL with
 * one line naming the key and the fields known where it goes wrong, so a
 * sweep over a misspelt key is refused once, before any variant. */
int sb_workload_check_key(const json_t *doc, const char *key, sb_err *err);
/* Loads a workload file (a path or a preset name in data/models). Errors
 * carry the file, the JSON path of the offending field, and line:column
 * when the parser gives one. The caller decrefs *doc. */
int sb_workload_load_doc(const char *file, json_t **doc, char *path_out,
                         int path_len, sb_err *err);
/* Reads and checks a workload document. `where` prefixes messages (the
 * file name). */
int sb_workload_from_json(json_t *doc, const char *where, sb_workload *w,
                          sb_err *err);
/* Same, with the file's text at hand so that errors in fields (not only
 * syntax errors) get a line and column when the key occurs once; a field
 * that one of the n `sets` (key=value, as sb_workload_apply took them)
 * gave is named as set by --set instead. */
int sb_workload_read_file(json_t *doc, const char *path,
                          const char *const *sets, int nsets, sb_workload *w,
                          sb_err *err);
/* Checks the workload against the machine: a model whose weights need more
 * than SB_WL_ABSURD_FIT x the chip's memory per chip is refused (exit 2);
 * one that merely does not fit gets a warning in the prediction. */
#define SB_WL_ABSURD_FIT 10.0
int sb_workload_check_machine(const sb_workload *w, const sb_ceilings *c,
                              const char *where, sb_err *err);

/* ---- model sizes --------------------------------------------------------- */

typedef struct sb_wl_sizes {
    double params_total;       /* every parameter */
    double params_active;      /* per token: shared + top-k experts */
    double params_embedding;   /* input embedding table */
    double params_dense;       /* non-expert parameters */
    double params_expert;      /* routed-expert parameters */
    double params_attn_layer;  /* one layer's attention projections */
    double n_for_mfu;          /* active parameters doing matmuls per token
                                  (excludes the input embedding lookup) */
    double kv_bytes_per_token; /* all layers */
    int moe_layers;
} sb_wl_sizes;

void sb_workload_sizes(const sb_workload *w, sb_wl_sizes *s);

/* ---- phases and totals --------------------------------------------------- */

#define SB_WL_MAX_PHASES 48

typedef struct sb_phase {
    char name[40];
    char stage[12];      /* "step", "prefill", "decode" */
    double flops;        /* per chip */
    double bytes;        /* main-memory bytes per chip */
    double comm_bytes;   /* bytes each chip sends (per collective as defined
                            by nccl-tests' S, summed) */
    char collective[16]; /* "allreduce", "allgather", "reduce_scatter",
                            "alltoall", or "" */
    int group;           /* chips in the collective */
    int n_coll;          /* collective calls (for alpha) */
    double host_bytes;   /* host <-> chip bytes per chip */
    /* times (s) */
    double t_compute, t_memory, t_network, t_latency, t_host, t;
    sb_bound bound;
    char ceiling[40]; /* the binding ceiling's name */
    double share;     /* of its stage's total */
    double measured_s, pct_sol;
} sb_phase;

typedef struct sb_mem_use {
    double weights, grads, optimizer, activations, kv_cache, total, capacity;
    bool fits;
} sb_mem_use;

typedef struct sb_prediction {
    sb_workload w;
    sb_wl_sizes sizes;
    int n;
    sb_phase ph[SB_WL_MAX_PHASES];
    /* training */
    double step_s, tokens_per_step, tokens_per_s, mfu, hfu;
    double model_flops_per_token, hw_flops_per_token;
    /* inference */
    double ttft_s, tpot_s, tpot_bound_s, decode_tokens_per_s, request_s,
        context;
    /* both */
    double peak_flops, mem_bw;
    char peak_name[40], bw_name[40]; /* the ceilings used */
    sb_mem_use mem;
    double cost_per_step, cost_per_mtok, price_chip_hour;
    double measured_step_s, pct_sol;
    char warnings[4][200];
    int n_warnings;
} sb_prediction;

/* Predicts every phase and the totals. Returns 0, or SB_EINVAL when the
 * ceilings lack what the workload needs (no peak, no memory bandwidth). */
int sb_predict(const sb_workload *w, const sb_ceilings *c, sb_prediction *p,
               sb_err *err);

/* Bytes per element of a dtype name ("bf16" 2, "fp32" 4, "fp8" 1...); 0 for
 * an unknown name. */
double sb_dtype_bytes(const char *dtype);

#ifdef __cplusplus
}
#endif

#endif
