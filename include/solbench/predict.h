/*
 * predict.h — what `solbench predict` does with a workload prediction: the
 * phase table and totals, the interventions that fit the dominant classes
 * (with the phase and the time at stake), JSON output, and variants for
 * sweeps (--set / --sweep with the parallelism kept consistent).
 */
#ifndef SOLBENCH_PREDICT_H
#define SOLBENCH_PREDICT_H

#include <stdio.h>

#include "solbench/json_fwd.h"

#include "solbench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Applies `n` key=value settings to a workload document. When they change
 * topology.chips or a parallel degree so that data x fsdp x tensor x
 * pipeline no longer equals chips, the outermost sharded data axis (fsdp
 * when > 1, else data) that was not set explicitly absorbs the change; a
 * mesh that no longer matches is dropped. */
int sb_workload_apply(json_t *doc, const char *const *sets, int n, sb_err *err);

#define SB_MAX_INTERVENTIONS 24
typedef struct sb_intervention {
    sb_bound cls;
    char phase[40];
    char stage[12];
    double t_s;        /* the phase's time */
    double at_stake_s; /* what reaching the next roof would save */
    double share;      /* of its stage */
    char what[512];    /* the interventions, in order of relevance */
} sb_intervention;

/* Interventions for the phases of the dominant classes, largest time at
 * stake first. Returns the count. */
int sb_interventions(const sb_prediction *p, sb_intervention *out, int max);
/* The advice of predict and trace for a phase bound by `cls`, written to
 * out: specific to what the phase is (attention, norms and elementwise,
 * weights read in decode, the collective and what it carries: FSDP
 * gathers, gradient reduce-scatters, tensor all-reduces, expert
 * all-to-alls) and to the machine `hw` ("gpu": tensor cores, NVLink;
 * "tpu": MXUs, ICI; "cpu": the GEMM libraries, AVX-512/AMX; "" or NULL:
 * no unit named). "" for an unknown class. Returns out. */
const char *sb_advice(sb_bound cls, const char *phase, bool inference,
                      const char *hw, char *out, size_t len);

void sb_predict_print(FILE *f, const sb_prediction *p);
/* One line on how communication overlaps compute ("hidden fractions fsdp
 * 1.00, dp 1.00, ..."). */
void sb_overlap_describe(const sb_workload *w, char *out, size_t len);
/* The totals of a speed-of-light and a calibrated prediction of the same
 * workload side by side, with the ratio. */
void sb_predict_print_modes(FILE *f, const sb_prediction *sol,
                            const sb_prediction *cal, const char *source);
void sb_interventions_print(FILE *f, const sb_prediction *p);
json_t *sb_predict_to_json(const sb_prediction *p);

#ifdef __cplusplus
}
#endif

#endif
