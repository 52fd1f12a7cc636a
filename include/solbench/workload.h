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

#include "solbench/json_fwd.h"

#include "solbench/bench.h"
#include "solbench/error.h"
#include "solbench/roofline.h"
#include "solbench/servesim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sb_job_kind { SB_JOB_TRAIN = 0, SB_JOB_INFER = 1 } sb_job_kind;
/* Rematerialisation policies, by what the backward pass recomputes:
 * selective (Megatron) the attention core; minimal (MaxText: every matmul
 * output saved) the attention core and the elementwise work; save_qkv_proj
 * (MaxText) everything but the q/k/v projections; save_dot_except_mlpwi
 * (MaxText) the attention core, the MLP's input matmuls and the
 * elementwise work; full the whole forward. */
typedef enum sb_remat {
    SB_REMAT_NONE = 0,
    SB_REMAT_SELECTIVE,
    SB_REMAT_MINIMAL,
    SB_REMAT_SAVE_DOT_EXCEPT_MLPWI,
    SB_REMAT_SAVE_QKV,
    SB_REMAT_FULL
} sb_remat;
/* The policy's name ("none", "selective", ...). */
const char *sb_remat_name(sb_remat r);
/* How communication is scheduled against compute: "none" (every
 * collective on the critical path), "full" (every one hidden behind the
 * compute stream while it lasts), or "auto" / an object (a hidden fraction
 * per kind of collective, SB_COMM_*). */
typedef enum sb_overlap {
    SB_OVERLAP_NONE = 0,
    SB_OVERLAP_FULL,
    SB_OVERLAP_PER_KIND
} sb_overlap;
/* Kinds of communication, each with its own hidden fraction. */
typedef enum sb_comm_kind {
    SB_COMM_FSDP = 0, /* ZeRO / FSDP all-gather and reduce-scatter */
    SB_COMM_DP,       /* data-parallel gradient all-reduce */
    SB_COMM_TP,       /* tensor-parallel all-reduce */
    SB_COMM_EP,       /* expert all-to-all */
    SB_COMM_PP,       /* pipeline send/recv */
    SB_COMM_CP,       /* context-parallel K/V all-gather (reduce-scatter) */
    SB_COMM_HOST,     /* input transfer */
    SB_COMM_N
} sb_comm_kind;
/* The hidden fraction of each kind under "auto" (docs/WORKLOAD.md). */
extern const double sb_overlap_default[SB_COMM_N];
extern const char *const sb_comm_kind_name[SB_COMM_N];

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
    char optimizer[16];     /* adam | adafactor | sgd */
    bool optimizer_offload; /* states and update in host memory
                               (ZeRO-Offload) */
    sb_remat remat;
    int prompt_len, output_len, concurrency, kv_page;
    char attention_kernel[8]; /* flash | naive */
    /* parallelism and topology */
    int data, fsdp, tensor, expert, pipeline;
    int context; /* context parallelism: a sequence split
                    over this many chips (ring/all-gather
                    attention) */
    int zero;    /* ZeRO stage over the fsdp axis: 1, 2, 3 */
    /* whether the workload gave zero and reshard_after_forward: when it
     * did not, a training prediction takes the least-communication
     * schedule that fits (sb_predict) */
    bool zero_given, reshard_given;
    bool reshard_after_forward; /* stage 3: gather again for the backward */
    int virtual_stages;         /* interleaved pipeline: chunks per stage */
    int chips, chips_per_host;
    char mesh[32];
    /* hardware and cost */
    char hw_spec[48];
    char hw_run[256];
    double price_chip_hour; /* 0: from the spec */
    sb_overlap overlap;
    double hidden[SB_COMM_N]; /* hidden fraction per kind of collective */
    /* per-phase precision: the dtype each kind of work computes in */
    char mm_dtype[8], attn_dtype[8], router_dtype[8], dispatch_dtype[8],
        combine_dtype[8];
    double dispatch_bytes, combine_bytes;
    /* serving (inference) */
    int max_batched_tokens; /* token budget of one iteration */
    double request_rate;    /* offered load (requests/s, all replicas);
                               0: the concurrency is given */
    double slo_ttft_s, slo_tpot_s;
    /* the serving simulator (servesim.h): requests simulated (0: none),
     * its scheduler (sb_sim_sched), the running sequences it allows, how
     * request lengths spread about prompt_len and output_len (sb_sim_len,
     * and its spread) and the draw's seed */
    int sim_requests, sim_sched, max_seqs, sim_len;
    double sim_spread;
    int sim_seed;
    /* requests from a file (sb_sim_read_requests; the caller owns them):
     * simulated instead of drawn when sim_file_n > 0, the deployment's
     * arrivals dealt to the replicas in turn */
    const sb_sim_req *sim_file;
    size_t sim_file_n;
    /* the file's requests in a closed loop at `concurrency` (in the
     * file's order, its arrival times ignored), not at their arrivals */
    bool sim_file_closed;
    char sim_file_name[256];
    /* calibration: efficiencies against the ceilings (0: none given) */
    double eff_matmul, eff_attention, eff_memory, eff_network;
    char calib_source[480]; /* where they come from */
    /* measured times to compare with (seconds; 0 = none) */
    double measured_step_s;
    double measured_tokens_per_s; /* throughput (inference: output tokens) */
    double measured_mfu;
    bool measured_mfu_causal; /* the MFU counts causal attention (else
                                 PaLM's full matrix) */
    /* the objectives the measured tokens/s was served under ("": none):
     * a serving benchmark's figure at the most load within them (MLPerf's
     * server scenario), compared with the capacity under the same
     * objectives, not with the steady state's throughput */
    char measured_slo[128];
    int n_measured;
    /* why the measured figures are not compared ("" when they are, or
     * there are none): the settings changed the job they describe */
    char measured_dropped[160];
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

/* Fills the efficiencies the workload's own `calibration` does not give
 * from a calibration file (docs/WORKLOAD.md, "Calibration"): `file` (a
 * path or a name in data/calib) when given, else data/calib/<spec>.json
 * when there is one for the workload's hardware spec. A file that is
 * named but missing or malformed is an error (SB_EINVAL, its path). */
int sb_workload_calibration(sb_workload *w, const char *file, sb_err *err);

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

#define SB_WL_MAX_PHASES 96

/* The kinds of work a phase computes: each runs under its own peak (the
 * dtype per phase; a measured GEMM ceiling for matmuls) and, calibrated,
 * its own efficiency. */
enum {
    SB_WORK_MATMUL = 0, /* weight matmuls */
    SB_WORK_ATTENTION,  /* the attention core */
    SB_WORK_ROUTER,     /* the MoE router */
    SB_WORK_VECTOR,     /* norms, elementwise, embedding, optimizer */
    SB_WORK_N
};

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
    double exps;         /* transcendental operations (softmax's exp, the
                            gate's sigmoid) per chip */
    double vflops;       /* the vector unit's work beside a matmul phase's
                            (the softmax's elementwise ops, one FLOP an op)
                            per chip */
    double rows;         /* weight matmuls: the rows (tokens) one product
                            multiplies, for a GEMM measured at that many
                            (gemm.<dtype>@M); 0 elsewhere */
    double calls;        /* weight matmuls: the products (kernel calls) per
                            chip, for a decode product's cost a call
                            beyond its weights' stream (gemv.call.<dtype>) */
    /* times (s) */
    double t_compute, t_memory, t_network, t_latency, t_host, t;
    int work; /* what it computes: SB_WORK_* (its peak and efficiency) */
    double peak_flops, bw_Bps; /* the ceilings it was timed against */
    int comm_kind;   /* sb_comm_kind of a communication phase, else -1 */
    double hidden;   /* fraction of t hidden behind the compute stream */
    double hide_cap; /* the most of it compute can hide (s); 0: no cap */
    double exposed;  /* what it adds to its stage's critical path (s): its
                        unhidden part, and its share of hidden time that
                        outlasts the compute stream */
    sb_bound bound;
    char ceiling[40]; /* the binding ceiling's name */
    double share;     /* of its stage's total */
    double measured_s, pct_sol;
} sb_phase;

typedef struct sb_mem_use {
    double weights, grads, optimizer, activations, kv_cache, total, capacity;
    bool fits;
} sb_mem_use;

/* serving under continuous batching (inference): the steady state of
 * `batch` live sequences per replica, each iteration one decode token
 * for each and a chunk of new prompts within max_batched_tokens */
typedef struct sb_serve {
    double batch;                /* live sequences per replica */
    double iteration_s;          /* one iteration: decode + prefill chunk */
    double prefill_tokens;       /* per iteration and replica */
    double tokens_per_s;         /* output tokens/s, all replicas, prefill
                                    charged */
    double ttft_s, tpot_s;       /* under that load (TTFT with queue_s) */
    double queue_s;              /* closed loop of more clients than run:
                                    the wait for a place */
    double max_batch;            /* sequences whose full context fits */
    double goodput_tokens_per_s; /* best throughput within the SLOs */
    double goodput_batch;
    bool slo_met;
    double max_request_rate; /* with request_rate: what the machine serves */
    bool saturated;          /* the offered load exceeds it */
    double microbatches;     /* over pipeline stages: the batch in as many
                                micro-batches, one a stage at a time
                                (1 without a pipeline) */
} sb_serve;

typedef struct sb_prediction {
    sb_workload w;
    sb_wl_sizes sizes;
    int n;
    sb_phase ph[SB_WL_MAX_PHASES];
    /* training */
    double step_s, tokens_per_step, tokens_per_s, mfu, hfu;
    double mfu_causal; /* attention FLOPs of the causal mask only (MaxText,
                          Megatron), beside PaLM's full-matrix count */
    double model_flops_per_token, hw_flops_per_token;
    /* inference */
    double ttft_s, tpot_s, tpot_bound_s, decode_tokens_per_s, request_s,
        context;
    double decode_batch;        /* sequences per replica in the decode step: the
                                   concurrency's share, or what the KV cache holds
                                   when that is fewer */
    double decode_microbatches; /* over pipeline stages, that batch in as
                                   many micro-batches (the decode phases
                                   are one's); 1 without a pipeline */
    sb_serve serve;
    /* the serving simulator's run (w.sim_requests > 0): one replica's,
     * its rates scaled to all replicas; sim.requests 0 when it did not
     * run (a warning says why) */
    sb_sim_out sim;
    long sim_kv_blocks; /* the replica's KV cache in blocks (0: unbounded) */
    int sim_closed;     /* > 0: the closed loop's sequences per replica */
    double sim_rate;    /* else Poisson arrivals per replica per second */
    /* both */
    double peak_flops, mem_bw;
    bool calibrated; /* efficiencies applied (the calibrated mode) */
    /* training over fsdp with no ZeRO stage given: the schedule taken (in
     * w.zero, w.reshard_after_forward), the least communication that
     * fits */
    bool schedule_chosen;
    double eff_matmul, eff_attention, eff_memory, eff_network;
    char peak_name[40], bw_name[40]; /* the ceilings used */
    char hw_kind[16]; /* "cpu", "gpu", "tpu" or "": the ceilings' machine,
                         whose units the interventions name */
    sb_mem_use mem;
    double cost_per_step, cost_per_mtok, price_chip_hour;
    double measured_step_s, pct_sol;
    /* predicted / measured throughput (from measured tokens/s, or from a
     * measured MFU in its convention); 0 when nothing was measured */
    double vs_measured;
    char warnings[4][200];
    int n_warnings;
} sb_prediction;

/* Predicts every phase and the totals at the speed of light: every phase at
 * its ceiling. Returns 0, or SB_EINVAL when the ceilings lack what the
 * workload needs (no peak, no memory bandwidth). */
int sb_predict(const sb_workload *w, const sb_ceilings *c, sb_prediction *p,
               sb_err *err);
/* The calibrated mode: each ceiling scaled by the sustained efficiency the
 * workload's calibration gives (w->eff_*; 1 where it gives none). */
int sb_predict_calibrated(const sb_workload *w, const sb_ceilings *c,
                          sb_prediction *p, sb_err *err);
/* sb_predict, with every iteration of the serving simulator (when the
 * workload asks for one: sim_requests > 0) given to fn as it runs (a
 * non-zero return stops the simulation, which is then not reported). */
int sb_predict_timeline(const sb_workload *w, const sb_ceilings *c,
                        sb_sim_iter_fn fn, void *arg, sb_prediction *p,
                        sb_err *err);
/* USD per million output tokens of `chips` chips at `price` per
 * chip-hour serving `tokens_per_s`; 0 without a price or a throughput. */
static inline double sb_cost_per_mtok(double price, double chips,
                                      double tokens_per_s)
{
    return price > 0 && tokens_per_s > 0
               ? price * chips / 3600.0 / tokens_per_s * 1e6
               : 0;
}
/* Whether the workload carries any calibration. */
bool sb_workload_calibrated(const sb_workload *w);

/* Bytes per element of a dtype name ("bf16" 2, "fp32" 4, "fp8" 1...); 0 for
 * an unknown name. */
double sb_dtype_bytes(const char *dtype);

#ifdef __cplusplus
}
#endif

#endif
