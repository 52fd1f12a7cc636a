/*
 * llm_bench.h — the shape of the llm area's points (llm.prefill,
 * llm.decode), shared with solbench validate, which runs them and holds
 * predict against what they measure.
 */
#ifndef SOLBENCH_BENCH_LLM_BENCH_H
#define SOLBENCH_BENCH_LLM_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/llm/refmodel.h"

typedef struct sb_llm_shape {
    int kind; /* 0 prefill, 1 decode */
    sb_ref_config c;
    int batch, mean;
    bool ragged;
    int *len;      /* [batch]: prompt (prefill) or context (decode) */
    int64_t total; /* sum of len */
    int ctx, tokens;
} sb_llm_shape;

/* Lengths of `batch` sequences: `mean` each, or uniform in [mean/2,
 * 3 mean/2] when ragged; returns the longest. */
int sb_llm_lengths(int batch, int mean, bool ragged, uint64_t seed, int *len);
/* The metric name of a phase's time ("ms_qkv", ...). */
const char *sb_llm_phase_metric(int ph);
/* Weights read, KV cache read (decode) and matmul FLOPs of one iteration. */
void sb_llm_work(const sb_llm_shape *s, double *weight_bytes, double *kv_bytes,
                 double *mm_flops);

#endif
