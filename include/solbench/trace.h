/*
 * trace.h — a real workload's profiler trace held against the measured
 * ceilings (docs/TRACE.md).
 *
 * Reading: PyTorch profiler / Kineto Chrome-trace JSON, JAX / XLA profiler
 * traces (trace.json[.gz], perfetto_trace.json.gz) and any Chrome trace
 * of complete ("X") events, plain or gzip'd (zlib), told apart by content.
 * The reader streams: the file is read in 64 KiB pieces and each event is
 * parsed on its own (at most SB_TRACE_MAX_EVENT bytes), so memory grows
 * with the events kept (about 64 bytes each), not with the file.
 *
 * Analysis: every op instance (a kernel or the kernels one operator
 * launched; a CPU operator outside any other classified one) gets FLOPs
 * and bytes from its shapes and dtype (trace_rules.c), its time, its
 * place under the roofline of a machine model (sb_ceilings, hw.h) and its
 * time at stake (its time minus its time at the binding ceiling). Rows
 * group instances of one op with one shape signature; phases group rows
 * by the user's annotations and by solbench's phase names.
 */
#ifndef SOLBENCH_TRACE_H
#define SOLBENCH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "solbench/bench.h"
#include "solbench/error.h"
#include "solbench/roofline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest single event (or top-level value) the reader accepts. */
#define SB_TRACE_MAX_EVENT (16u << 20)
/* The most events one trace may hold (about 70 B each with the analysis:
 * 10 million take 0.7 GB). */
#define SB_TRACE_MAX_EVENTS 10000000u
/* The most trace text the reader takes (unpacked): about the most events
 * at 800 B each. A gzip'd file can unpack 1000-fold; this bounds it. */
#define SB_TRACE_MAX_TEXT (8ull << 30)
/* The longest run of blank space between values the reader accepts: no
 * profiler writes one; a gzip bomb of spaces is refused at once. */
#define SB_TRACE_MAX_BLANK (16u << 20)

typedef enum sb_tr_format {
    SB_TR_CHROME = 0, /* generic Chrome trace */
    SB_TR_KINETO,     /* PyTorch profiler */
    SB_TR_JAX,        /* JAX / XLA profiler */
    SB_TR_NSYS        /* Nsight Systems' SQLite export */
} sb_tr_format;

typedef enum sb_tr_kind {
    SB_TK_OTHER = 0, /* a host event of an unknown category */
    SB_TK_CPU_OP,    /* an operator on the host (cpu_op; JAX host op) */
    SB_TK_KERNEL,    /* a device kernel (kernel; JAX device op) */
    SB_TK_MEMCPY,    /* gpu_memcpy */
    SB_TK_MEMSET,    /* gpu_memset */
    SB_TK_RUNTIME,   /* cuda_runtime / cuda_driver */
    SB_TK_ANNOT,     /* user_annotation (record_function, ProfilerStep#) */
    SB_TK_GPU_ANNOT, /* gpu_user_annotation */
    SB_TK_NKINDS
} sb_tr_kind;

/* One complete event, as kept. Strings are ids into the trace's table. */
typedef struct sb_tr_event {
    double ts, dur; /* µs */
    int64_t corr;   /* args.correlation, -1 */
    int64_t ext;    /* args["External id"], -1 */
    double aux;     /* bytes (memcpy, memset); elements (collective) */
    int32_t name;   /* string id */
    int32_t sig;    /* shape signature (string id), -1 */
    int32_t track;  /* index into the trace's tracks */
    int32_t coll;   /* collective name (string id), -1 */
    int16_t group;  /* collective group size, 0 */
    uint8_t kind;   /* sb_tr_kind */
    uint8_t flags;  /* SB_TEF_* */
} sb_tr_event;

#define SB_TEF_STEP 1u /* a step: ProfilerStep#N, or args.step_num (JAX) */

typedef struct sb_tr_track {
    int64_t pid, tid;
    int32_t pname, tname; /* string ids, -1 */
    bool device;
} sb_tr_track;

typedef struct sb_trace {
    sb_tr_format format;
    char label[256]; /* the file, or the stored trace's name */
    sb_tr_event *ev;
    size_t n, cap;
    sb_tr_track *tracks;
    size_t ntracks, tcap;
    /* the string table */
    char **str;
    size_t nstr, scap;
    int32_t *hash;
    size_t hcap;
    /* what was read */
    size_t n_total; /* traceEvents entries */
    size_t n_by_kind[SB_TK_NKINDS];
    size_t n_unknown_cat; /* X events of a category not known */
    size_t n_ignored;     /* metadata, flows, counters, instants */
    size_t n_begin_end;   /* B/E events (not paired; ignored) */
    int rank, world;      /* distributedInfo; -1 when absent */
    char device_name[96]; /* deviceProperties[0].name */
    char time_unit[8];    /* displayTimeUnit */
    /* costs of XLA ops from HLO text (sb_trace_add_hlo), by string id of
     * the instruction's name; NULL when none was given */
    struct sb_tr_cost *hlo;
    int32_t *hlo_scope; /* the JAX named scope of each (string id, -1) */
    size_t nhlo;
} sb_trace;

void sb_trace_init(sb_trace *t);
void sb_trace_free(sb_trace *t);
const char *sb_trace_str(const sb_trace *t, int32_t id);
/* The id of a string, added when the trace does not hold it yet; -1 when
 * out of memory. */
int32_t sb_trace_intern(sb_trace *t, const char *s);
/* The id of a string the trace holds; -1 when it holds none. */
int32_t sb_trace_str_id(const sb_trace *t, const char *s);
const char *sb_tr_format_name(sb_tr_format f);
const char *sb_tr_kind_name(sb_tr_kind k);

/* Reads a trace file (plain or gzip'd). Errors are SB_EINVAL with one
 * line naming the file and the byte offset. */
int sb_trace_read(const char *path, sb_trace *t, sb_err *err);
/* The same from memory (a stored trace); `label` names it in errors. */
int sb_trace_read_mem(const void *buf, size_t len, const char *label,
                      sb_trace *t, sb_err *err);

/* The name `trace import` stores a file under when given none: its base
 * name up to the first '.', made a valid store name ("step-1.json.gz" ->
 * "step-1", "2024.json" -> "t2024"). */
void sb_trace_default_name(const char *path, char *out, size_t len);

/* ---- FLOP and byte rules ------------------------------------------------ */

typedef enum sb_tr_cat {
    SB_TC_UNKNOWN = 0, /* no rule: counted as unclassified */
    SB_TC_MATMUL,
    SB_TC_CONV,
    SB_TC_ATTENTION,
    SB_TC_SOFTMAX,
    SB_TC_NORM,
    SB_TC_ELEMWISE,
    SB_TC_REDUCE,
    SB_TC_EMBEDDING,
    SB_TC_COPY,     /* on the device or in host memory */
    SB_TC_TRANSFER, /* host <-> device */
    SB_TC_COLLECTIVE,
    SB_TC_FRAMEWORK, /* views, allocation, dispatch: no data moved */
    SB_TC_NCATS
} sb_tr_cat;

typedef struct sb_tr_cost {
    sb_tr_cat cat;
    double flops, bytes; /* one instance */
    char dtype[8];       /* "fp32", "bf16", ...; "" unknown */
    char coll[24];       /* collective: "allreduce", ... */
    int group;           /* collective: ranks */
} sb_tr_cost;

const char *sb_tr_cat_name(sb_tr_cat c);
/* The cost of one instance of op `name` ("aten::mm") with the signature
 * the reader keeps: the JSON text [Input Dims, Input type] (may be NULL). */
void sb_tr_cost_torch(const char *name, const char *sig, sb_tr_cost *out);
/* A collective of `nelems` elements of `dtype` ("BFloat16", "Float", "bf16")
 * over `group` ranks; coll is "allreduce", "all_gather", "_allgather_base",
 * "reduce_scatter", "all_to_all", "broadcast", ... */
void sb_tr_cost_collective(const char *coll, const char *dtype, double nelems,
                           int group, sb_tr_cost *out);
/* The cost of an XLA HLO op from its text ("%dot.3 = bf16[32,4096]{1,0}
 * dot(bf16[32,1024]{1,0} %p0, ...), lhs_contracting_dims={1}, ...") and
 * its hlo_op name. */
void sb_tr_cost_hlo(const char *hlo_op, const char *text, sb_tr_cost *out);
/* Bytes per element of a PyTorch ("float", "c10::BFloat16") or XLA
 * ("f32", "bf16") type name; 0 unknown. *dt receives solbench's name. */
int sb_tr_dtype(const char *type, char *dt, size_t len);
/* The collective an NCCL kernel's name says ("ncclDevKernel_AllReduce_
 * Sum_bf16_RING_LL" -> "allreduce"); NULL for another kernel. */
const char *sb_tr_nccl_coll(const char *kernel);
/* Cuts a UTF-8 sequence a truncation left incomplete at the end of s. */
void sb_utf8_trim(char *s);
/* Bytes per element of solbench's dtype name ("bf16": 2); 0 unknown. */
int sb_tr_dtype_size(const char *dt);

/* Reads the text of a compiled XLA module (HloModule ...; jax:
 * jit(f).lower(...).compile().as_text()) and gives the trace's XLA ops
 * their shapes: each op named after an instruction of it gets that
 * instruction's cost (a fusion: the FLOPs of the dots and convolutions it
 * calls). *matched receives how many of the trace's events got one.
 * Instructions of a later module with a name an earlier one had are
 * ignored. */
int sb_trace_add_hlo(sb_trace *t, const char *path, int *matched, sb_err *err);

/* ---- analysis ------------------------------------------------------------ */

typedef struct sb_tr_row {
    char name[128];   /* the operator (or kernel) */
    char shapes[192]; /* the shape signature, "" when none */
    char kernel[96];  /* the longest-running kernel it launched, "" */
    char annot[64];   /* innermost user annotation, "" */
    char phase[24];   /* solbench's phase */
    sb_tr_cost cost;  /* one instance */
    long count;
    double t_s; /* total time */
    double flops, bytes;
    /* on the roofline (per instance, from the totals) */
    double achieved;   /* FLOP/s, or B/s for data movers and collectives */
    double attainable; /* same unit */
    double pct_sol;
    double ai;
    double t_ceil_s;   /* time at the binding ceiling, all instances */
    double at_stake_s; /* t_s - t_ceil_s */
    double busbw;      /* collectives: B/s */
    sb_bound bound;    /* the roof that binds; SB_BOUND_UNKNOWN: none */
    char cls[16];      /* compute, memory, network, host, latency,
                          unclassified */
    char ceiling[32];  /* the ceiling's name */
} sb_tr_row;

typedef struct sb_tr_group {
    char name[64];
    long count;
    double t_s, share, flops, bytes, at_stake_s;
} sb_tr_group;

typedef struct sb_tr_analysis {
    bool device;      /* device work analysed (else host ops) */
    char hw_kind[16]; /* the ceilings' machine: "cpu", "gpu", "tpu", "" */
    int n_steps;      /* ProfilerStep# / step annotations found */
    double window_s;  /* the analysed span */
    double step_s;    /* window / steps (window when no step) */
    double busy_s;    /* union of the analysed ops' time */
    double idle_s;    /* window - busy */
    long n_gaps;      /* idle gaps of at least 1 µs on the analysed side */
    double max_gap_s;
    double comm_s;         /* union of collectives' time */
    double comm_overlap_s; /* of which overlapped with other work */
    double op_s;           /* sum of rows' time */
    /* what shares are of: the window, or op_s + idle_s where ops overlap
     * (streams, threads), so that shares sum to at most 1 */
    double share_of_s;
    long n_unclassified;
    double unclassified_s;
    long n_overlapping; /* host events that overlap a sibling partly */
    sb_tr_row *rows;    /* sorted by time at stake, then time */
    size_t nrows;
    sb_tr_group *phases; /* solbench phases, by time */
    size_t nphases;
    sb_tr_group *annots; /* user annotations, by time */
    size_t nannots;
} sb_tr_analysis;

/* Analyses `t` against the ceilings `c` (may be empty: no placement). */
int sb_trace_analyze(const sb_trace *t, const sb_ceilings *c, sb_tr_analysis *a,
                     sb_err *err);
void sb_tr_analysis_free(sb_tr_analysis *a);
/* Sustained efficiencies the trace shows against its machine model, per
 * kind of ceiling: the time its placed ops would take at their binding
 * ceilings over the time they took (an op faster than its ceiling counts
 * as at it). Matmul (matmuls, convolutions), attention, memory (softmax,
 * norms, elementwise, reductions, embeddings, device copies), network
 * (collectives); host transfers are left out. t[k] and n[k] get the time
 * and the number of op instances behind each; eff[k] = 0 where none. */
enum {
    SB_TR_EFF_MATMUL = 0,
    SB_TR_EFF_ATTENTION,
    SB_TR_EFF_MEMORY,
    SB_TR_EFF_NETWORK,
    SB_TR_EFF_N
};
void sb_tr_efficiencies(const sb_tr_analysis *a, double eff[SB_TR_EFF_N],
                        double t[SB_TR_EFF_N], long n[SB_TR_EFF_N]);

/* The table (top `top` rows, 0 all), phases, overlap and idle, and the
 * interventions for the classes with most time at stake. */
void sb_tr_print(FILE *f, const sb_trace *t, const sb_tr_analysis *a, int top);
int sb_tr_write_json(const sb_trace *t, const sb_tr_analysis *a,
                     const char *machine, const char *path, sb_err *err);
int sb_tr_write_csv(const sb_tr_analysis *a, const char *path, sb_err *err);
/* Per op and per phase, B against A (same workload): time, change, and
 * the rows that explain most of the step-time change. */
void sb_tr_print_diff(FILE *f, const sb_tr_analysis *a, const sb_tr_analysis *b,
                      int top);

#ifdef __cplusplus
}
#endif

#endif
