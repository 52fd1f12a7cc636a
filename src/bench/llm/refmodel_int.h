/*
 * refmodel_int.h — what the files of the reference decoder share: the
 * model's own state and the configuration's arithmetic.
 *
 *   refmodel_config.c  the configuration: checks, sizes, the footprint
 *   refmodel.c         the model: weights, the KV cache, one iteration
 *   refmodel_ref.c     the same model in double precision
 */
#ifndef SOLBENCH_REFMODEL_INT_H
#define SOLBENCH_REFMODEL_INT_H

#include <stdint.h>

#include "backend/cpu/cpu_gemm.h"
#include "bench/llm/refmodel.h"

/* Products of at most this many rows are decode-sized. */
#define SB__DECODE_M SB_GEMM_SPLIT_M

typedef struct sb_refm_plan_ent {
    int64_t m, n, k, lda, ldb, ldc;
    int slots;
    sb_gemm_plan *p;
} sb_refm_plan_ent;

struct sb_ref_model {
    sb_ref_config c;
    int seqs, ctx, tokens, threads, dt;
    int lib_small, lib_large; /* by m: decode-sized (<= 16), larger */
    /* the decode-sized library by rows: 1, 2-3, 4-7, 8-16 (sb_refm_rows):
     * the faster library at one row is not the faster at four (OpenBLAS
     * streams a 1-row product at 34 GB/s and a 4-row one at 11 here,
     * oneDNN 22 and 21) */
    int lib_rows[4];
    size_t es;
    /* weights (dt unless fp32 said); the matrices in one block */
    void *arena;
    void *emb, *lm;                    /* [vocab][d] */
    float *norm1, *norm2, *normf;      /* [L][d], [L][d], [d] fp32 */
    void **wqkv, **wo, **wgu, **wdown; /* per layer; MoE: E blocks */
    float **wr;                        /* per MoE layer [E][d] fp32 */
    /* the KV cache: pools [layers][npages][hkv][page][hd] fp32 */
    float *kpool, *vpool;
    int64_t pps, npages;
    int32_t *pages; /* [seqs][pps] */
    int *len;
    float *cos_t, *sin_t; /* [ctx][hd/2] */
    /* activations, [tokens][...] */
    float *x, *qkv, *q, *o, *proj, *gu, *xr, *logits;
    void *xn, *on, *act, *hl;
    int32_t *tpos, *tslot; /* per token: position, slot */
    /* MoE */
    int *idx;
    float *rw, *rp;
    int64_t *offsets, *pos, *row_token, *scratch;
    void *xp, *acte;
    float *gue, *ye;
    /* the iteration's paged shape */
    int64_t *plen, *cu_q, *cu_pages;
    int32_t *table;
    sb_refm_plan_ent *plans;
    int nplans, cap_plans;
    /* partial products of a decode-sized product split over the threads:
     * threads - 1 blocks of part_floats */
    float *part;
    int64_t part_floats;
    /* events, when recorded: the layer and the rows (tokens) at hand */
    sb_ref_event *ev;
    int n_ev, cap_ev, ev_layer;
    int64_t ev_m;
    double t[SB_REF_NPH];
    char kernels[200];
};

double sb_refm_nqkv(const sb_ref_config *c);

int64_t sb_refm_pages_per_seq(const sb_ref_config *c, int ctx);

int sb_refm_range(const char *what, long v, long lo, long hi, sb_err *err);

double sb_refm_widest_ffn(const sb_ref_config *c);

/* The plan of one product, made on first use: C [M][N] = A · W with W
 * [k][n] (C fp32), leading dimensions lda, ldb, ldc (0: packed); NULL
 * when no library can run it (refmodel.c). */
sb_gemm_plan *sb_refm_plan(sb_ref_model *m, int64_t M, int64_t N, int64_t K,
                           int64_t lda, int64_t ldb, int64_t ldc, int slots);
/* C [M][N] = A [M][K] · Wᵀ for W [N][K], in the model's dtype, on the
 * model's threads (refmodel.c). */
void sb_refm_mm(sb_ref_model *m, int64_t M, int64_t N, int64_t K, const void *A,
                const void *W, float *C);

#endif
