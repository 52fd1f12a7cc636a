/*
 * attention.h — the definitions of the attention primitives, independent of
 * any backend: their shapes and memory layouts, their FLOP and byte
 * accounting, the double-precision reference and the verification. A CPU
 * kernel (src/backend/cpu/attn_cpu.c) and a later GPU kernel both compute
 * what is defined here and are checked by the same functions.
 *
 * Layouts (all fp32, row-major, dense):
 *   bmm       A [B][M][K], Bm [B][K][N], C [B][M][N].
 *   prefill   Q, O [B][Hq][Sq][D]; K, V [B][Hkv][Skv][D]. Query head h
 *             reads kv head h / (Hq / Hkv). Scores are scaled by 1/sqrt(D).
 *             Causal: query i sees keys j <= i + (Skv - Sq) (so Sq < Skv is
 *             a chunk of prefill that follows Skv - Sq cached tokens).
 *   paged     K and V pools [num_pages][Hkv][page_size][D]; sequence s
 *             owns pages page_table[cu_pages[s] .. cu_pages[s+1]) in order;
 *             token t of s lives in page page_table[cu_pages[s] + t / P]
 *             at slot t % P. Queries Q, O [total_q][Hq][D] with ragged
 *             offsets cu_q (sequence s has q_len = cu_q[s+1] - cu_q[s]
 *             query tokens, the last q_len tokens of its context): query
 *             token u of s sees keys j < len - q_len + u + 1.
 * A query that sees no key (a sequence of length 0) has output 0 by
 * definition.
 */
#ifndef SOLBENCH_ATTENTION_H
#define SOLBENCH_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "solbench/error.h"
#include "solbench/bench.h"
#include "solbench/param.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Verification tolerance of fp32 attention against the double reference:
 * an output element o passes when |o - ref| <= ATOL + RTOL * |ref| (inputs
 * are uniform in [-1, 1), so outputs are weighted means bounded by 1). */
#define SB_ATTN_RTOL 1e-3
#define SB_ATTN_ATOL 1e-4
/* Batched matmul: |c - ref| <= SB_BMM_TOL * sum_k |a_k * b_k| (fp32
 * accumulation; the bf16 reference uses the bf16-rounded inputs). */
#define SB_BMM_TOL 1e-5

/* ---- shapes -------------------------------------------------------------- */

typedef struct sb_bmm_shape {
    int64_t batch, m, n, k;
} sb_bmm_shape;

typedef struct sb_prefill_shape {
    int64_t batch, hq, hkv, sq, skv, d;
    bool causal;
} sb_prefill_shape;

typedef struct sb_paged_shape {
    int64_t batch, hq, hkv, d, page_size;
    int64_t *len;      /* [batch] context length (keys) of each sequence */
    int64_t *cu_q;     /* [batch + 1] cumulative query tokens */
    int64_t *cu_pages; /* [batch + 1] cumulative pages */
    int64_t total_q, total_pages, total_keys, max_len;
    int kv_bytes; /* bytes of a K or V element: 4 (fp32), 2 (bf16), 1
                     (fp8), from a backend's `kv_dtype` parameter */
} sb_paged_shape;

/* Number of keys query i (0-based) of a causal attention with sq queries
 * and skv keys sees: clamp(i + skv - sq + 1, 0, skv). */
static inline int64_t sb_attn_causal_keys(int64_t i, int64_t sq, int64_t skv)
{
    int64_t n = i + skv - sq + 1;
    return n < 0 ? 0 : (n > skv ? skv : n);
}

/* Sum over all queries of the keys each one sees (one head, one batch). */
double sb_attn_pairs(int64_t sq, int64_t skv, bool causal);

/* ---- FLOP and byte accounting -------------------------------------------- */

/* 2·B·M·N·K. */
/* The parameters of attention.bmm and attention.paged_decode that every
 * backend takes; a backend's table lists these, then its own, then the
 * terminator. */
#define SB_BMM_PARAMS                                                            \
    {"batch", SB_P_INT, "8", 1, 65536, NULL, "number of matrix products"},       \
        {"shape",                                                                \
         SB_P_STR,                                                               \
         "qk",                                                                   \
         0,                                                                      \
         0,                                                                      \
         "qk|pv|mnk",                                                            \
         "qk: [seq,head_dim]x[head_dim,seq]; pv: [seq,seq]x[seq,head_dim]; "     \
         "mnk: m, n, k as given"},                                               \
        {"seq", SB_P_INT, "512", 1, 1 << 20, NULL, "sequence length (qk, pv)"},  \
        {"head_dim", SB_P_INT, "128", 1, 4096, NULL, "head dimension (qk, pv)"}, \
        {"m", SB_P_INT, "256", 1, 1 << 20, NULL, "rows of A and C (mnk)"},       \
        {"n", SB_P_INT, "256", 1, 1 << 20, NULL, "columns of B and C (mnk)"},    \
        {"k", SB_P_INT, "256", 1, 1 << 20, NULL, "inner dimension (mnk)"},       \
    {                                                                            \
        "dtype", SB_P_STR, "fp32", 0, 0, "fp32|bf16",                            \
            "fp32, or bf16 inputs with fp32 accumulation and output"             \
    }

#define SB_PAGED_PARAMS                                                        \
    {"batch",                                                                  \
     SB_P_INT,                                                                 \
     "16",                                                                     \
     0,                                                                        \
     SB_PAGED_MAX_BATCH,                                                       \
     NULL,                                                                     \
     "sequences (0: as many as the lens list has)"},                           \
        {"lens",                                                               \
         SB_P_STR,                                                             \
         "uniform:1:1024",                                                     \
         0,                                                                    \
         0,                                                                    \
         NULL,                                                                 \
         "context lengths: uniform:LO:HI (random per sequence) or a list "     \
         "L1/L2/... (',' would make a sweep)"},                                \
        {"q_heads", SB_P_INT, "32", 0, 1024, NULL, "query heads"},             \
        {"kv_heads",                                                           \
         SB_P_INT,                                                             \
         "8",                                                                  \
         0,                                                                    \
         1024,                                                                 \
         NULL,                                                                 \
         "key/value heads (must divide q_heads)"},                             \
        {"head_dim",                                                           \
         SB_P_INT,                                                             \
         "128",                                                                \
         0,                                                                    \
         1024,                                                                 \
         NULL,                                                                 \
         "head dimension D (cuda: a multiple of 4, <= 256)"},                  \
        {"page_size", SB_P_INT, "16", 0, 65536, NULL, "tokens per KV page"},   \
        {"chunk",                                                              \
         SB_P_INT,                                                             \
         "0",                                                                  \
         0,                                                                    \
         1 << 20,                                                              \
         NULL,                                                                 \
         "query tokens of a prefill chunk carried by every chunk_every-th "    \
         "sequence (0: pure decode)"},                                         \
        {"chunk_every",                                                        \
         SB_P_INT,                                                             \
         "4",                                                                  \
         1,                                                                    \
         SB_PAGED_MAX_BATCH,                                                   \
         NULL,                                                                 \
         "sequences i with i % chunk_every == 0 carry the chunk"},             \
    {                                                                          \
        "seed", SB_P_INT, "1", 0, 1e15, NULL,                                  \
            "seed of the lengths and the page shuffle"                         \
    }

/* The shape a point asks for: `shape` qk ([seq, d] x [d, seq]), pv
 * ([seq, seq] x [seq, d]) or mnk (m, n, k as given), over `batch`. */
sb_bmm_shape sb_bmm_shape_of(const sb_params *p);
/* Head counts a point may have: at least one query and one KV head, KV
 * heads dividing the query heads (GQA groups), a head width of one or
 * more. SB_EINVAL naming the parameter and `bench`. */
int sb_attn_check_heads(const char *bench, int64_t hq, int64_t hkv, int64_t d,
                        sb_err *err);
/* The paged-decode shape a point asks for (q_heads, kv_heads, head_dim,
 * page_size, batch, lens, seed, chunk, chunk_every), checked: SB_EINVAL
 * naming the parameter. Free with sb_paged_shape_free. */
int sb_paged_shape_of(const sb_params *p, sb_paged_shape *s, sb_err *err);
/* Bytes a CPU point allocates: K and V pools, Q and O, the page table. */
double sb_paged_footprint(const sb_paged_shape *s);
double sb_bmm_flops(const sb_bmm_shape *s);
/* (B·M·K + B·K·N + B·M·N) · elem_bytes. */
double sb_bmm_bytes(const sb_bmm_shape *s, int elem_bytes);
/* 4·B·Hq·D·pairs (QKᵀ and PV, 2 FLOPs per multiply-add each). */
double sb_prefill_flops(const sb_prefill_shape *s);
/* 4 B per element of Q, K, V (read once) and O (written once). */
double sb_prefill_bytes(const sb_prefill_shape *s);
/* 4·Hq·D·Σ over query tokens of the keys each sees. */
double sb_paged_flops(const sb_paged_shape *s);
/* K and V of the valid tokens only (2·Σlen·Hkv·D·kv_bytes) + Q and O
 * (2·total_q·Hq·D·4) + the page table (4 B per page). */
double sb_paged_bytes(const sb_paged_shape *s);

/* ---- ragged batches ------------------------------------------------------ */

/* Parses a length spec: "uniform:LO:HI" (lengths drawn from seed) or an
 * explicit list "1,17,300" (its count must equal batch, or batch is 0 and
 * takes the list's count). Fills len[0..*batch). `what` names the
 * parameter in errors. len must hold SB_PAGED_MAX_BATCH entries. */
#define SB_PAGED_MAX_BATCH 4096
#define SB_PAGED_MAX_LEN (1 << 20)
int sb_paged_parse_lens(const char *spec, int64_t *batch, uint64_t seed,
                        int64_t *len, const char *what, sb_err *err);

/* Builds a paged shape: lengths as given; sequences with s % chunk_every
 * == 0 carry a prefill chunk of min(chunk, len) query tokens (at least 1)
 * when chunk > 0, the others one decode token. Allocates len/cu arrays
 * (free with sb_paged_shape_free). */
int sb_paged_shape_init(sb_paged_shape *s, int64_t batch, const int64_t *len,
                        int64_t hq, int64_t hkv, int64_t d, int64_t page_size,
                        int64_t chunk, int64_t chunk_every, sb_err *err);
void sb_paged_shape_free(sb_paged_shape *s);
/* The number of query tokens of sequence s and the keys its query token u
 * sees. */
static inline int64_t sb_paged_qlen(const sb_paged_shape *s, int64_t seq)
{
    return s->cu_q[seq + 1] - s->cu_q[seq];
}
static inline int64_t sb_paged_keys(const sb_paged_shape *s, int64_t seq,
                                    int64_t u)
{
    int64_t n = s->len[seq] - sb_paged_qlen(s, seq) + u + 1;
    return n < 0 ? 0 : n;
}

/* Fills a page table with a random permutation of the pool's pages, so
 * that consecutive pages of a sequence are not adjacent in memory. */
void sb_paged_shuffle_table(int32_t *table, int64_t total_pages, uint64_t seed);

/* ---- reference and verification ------------------------------------------ */

/* One output row of the double-precision reference: direct softmax over
 * the n keys rows k[j·kstride], v[j·vstride] (j < n), scaled scores. out
 * gets D values; n == 0 gives zeros. */
void sb_attn_ref_row(const float *q, const float *k, const float *v, int64_t n,
                     int64_t kstride, int64_t vstride, int64_t d, double scale,
                     double *out);

/* Verification summary. */
typedef struct sb_attn_check {
    int64_t total;     /* output elements in all */
    int64_t checked;   /* output elements compared (a sample when less) */
    int64_t bad;       /* elements outside tolerance */
    double max_abs;    /* largest |o - ref| */
    double max_rel;    /* largest |o - ref| as a fraction of its own
                          tolerance (<= 1 passes) */
    int64_t first_bad; /* flat index of the first bad element, -1 if none */
    double atol;       /* absolute tolerance when above the default's */
} sb_attn_check;

/* Records a check on a result, the same on every backend: valid, the
 * metrics max_abs_err and err_vs_tol, and a note naming the tolerance
 * `tol` (and the first bad element when there is one). */
void sb_attn_check_report(sb_result *r, const sb_attn_check *c,
                          const char *tol);

/* Checks C of a batched matmul on `samples` deterministic random elements
 * (all elements when samples >= B·M·N). Inputs are given as float (the
 * bf16 path passes the rounded values). */
void sb_bmm_verify(const sb_bmm_shape *s, const float *a, const float *b,
                   const float *c, int64_t samples, uint64_t seed,
                   sb_attn_check *out);
/* Checks prefill output rows: all rows when rows <= max_rows, otherwise
 * the first and last row of (b, h) groups spread evenly over all of them
 * for half of max_rows and random rows for the rest. */
void sb_prefill_verify(const sb_prefill_shape *s, const float *q,
                       const float *k, const float *v, const float *o,
                       int64_t max_rows, uint64_t seed, sb_attn_check *out);
/* The same with an absolute tolerance atol where it is above the
 * default (bf16 products: the rounding of P). */
void sb_prefill_verify_tol(const sb_prefill_shape *s, const float *q,
                           const float *k, const float *v, const float *o,
                           int64_t max_rows, uint64_t seed, double atol,
                           sb_attn_check *out);
/* Checks paged output rows (token, head) the same way, a group being
 * the heads of one query token (its first and last head; tokens spread
 * evenly over the batch). */
void sb_paged_verify(const sb_paged_shape *s, const float *q,
                     const float *kpool, const float *vpool,
                     const int32_t *table, const float *o, int64_t max_rows,
                     uint64_t seed, sb_attn_check *out);
/* The same with K and V pools of elem_bytes-byte elements (4: fp32, 2:
 * bf16, read exactly as fp32). */
void sb_paged_verify_kv(const sb_paged_shape *s, const float *q,
                        const void *kpool, const void *vpool, int elem_bytes,
                        const int32_t *table, const float *o, int64_t max_rows,
                        uint64_t seed, sb_attn_check *out);
/* The same with an absolute tolerance atol where it is above the default
 * (a bf16 cache attended in bf16 products: the rounding of P). */
void sb_paged_verify_kv_tol(const sb_paged_shape *s, const float *q,
                            const void *kpool, const void *vpool,
                            int elem_bytes, const int32_t *table,
                            const float *o, int64_t max_rows, uint64_t seed,
                            double atol, sb_attn_check *out);

/* Fills x[0..n) with uniform values in [-1, 1) from seed (deterministic,
 * independent of thread count); parallel over OpenMP static chunks so the
 * pages are first-touched by the threads that use them. */
void sb_attn_fill(float *x, size_t n, uint64_t seed);
/* The same values rounded to bf16. */
void sb_attn_fill_bf16(uint16_t *x, size_t n, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
