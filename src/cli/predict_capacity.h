/*
 * predict_capacity.h — predict's --slo and --capacity output
 * (predict_capacity.c).
 */
#ifndef SOLBENCH_CLI_PREDICT_CAPACITY_H
#define SOLBENCH_CLI_PREDICT_CAPACITY_H

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "solbench/capacity.h"

/* Each objective against the simulation o, printed; the JSON array of
 * {term, limit_s, value_s, met}. */
json_t *sb_cli_slo_report(FILE *f, const sb_slo *slo, const sb_sim_out *o);
/* The capacity found, printed for one workload; measured (> 0) the
 * output tokens/s a run served under the same objectives, compared. */
void sb_cli_capacity_print(FILE *f, const sb_slo *slo, const sb_capacity *cap,
                           double measured);
/* The calibrated prediction's capacity, one line after the above. */
void sb_cli_capacity_calibrated_print(FILE *f, const sb_capacity *cap,
                                      double measured);
json_t *sb_cli_capacity_json(const sb_slo *slo, const sb_capacity *cap,
                             double measured);
/* The capacity of each of n sweep variants (ran[i]: predicted) as a
 * table, the best named (the least $ per million output tokens at its
 * capacity, or the most requests/s without prices); returns its index,
 * -1 when none meets the SLOs. */
int sb_cli_capacity_table(FILE *f, const sb_slo *slo, const char *keys, int kw,
                          char (*labels)[600], const sb_capacity *cap,
                          const bool *ran, int n);

#endif
