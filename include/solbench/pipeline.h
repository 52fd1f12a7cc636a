/*
 * pipeline.h — the machine a prediction is made for and the workload it
 * is made of, from what a user names: a datasheet spec, a run document,
 * a stored run (pipeline.c). predict, report, roofline, hw and trace
 * share these; a program of its own calls them as they do.
 */
#ifndef SOLBENCH_PIPELINE_H
#define SOLBENCH_PIPELINE_H

#include <stddef.h>

#include "solbench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sb_ceilings;
struct sb_run;
#include "solbench/json_fwd.h"

struct sb_hw_spec;
/* The machine model of roofline, predict and report (sb_machine_load):
 * the spec `hw` (NULL: none), overridden by the ceilings of a run read
 * from `results` (a JSON file) or from the database `db` by `run_ref` (id,
 * prefix, baseline name or "last"; `db` NULL: the default path, opened
 * read-only and only for `run_ref`). When `run` is non-NULL the run is
 * kept there (*have_run says whether; sb_run_free it). */
int sb_machine_open(const char *hw, const char *results, const char *run_ref,
                    const char *db, struct sb_ceilings *c,
                    struct sb_hw_spec *spec, struct sb_run *run, int *have_run,
                    char *desc, size_t len, sb_err *err);

struct sb_workload;
/* predict's and report's one pipeline: reads the workload file, applies
 * the n `sets` (key=value), reads the workload, builds its machine from
 * the sources sb_machine_pick chooses (sb_machine_open, with --db `db`;
 * naming $.hardware.spec/.run in an error it caused) and
 * checks the two fit together. *doc_out (may be NULL) gets the document
 * with the sets applied, to json_decref. */
struct sb_machine_req;
int sb_workload_open(const char *file, const char *const *sets, int nsets,
                     const struct sb_machine_req *req, const char *db,
                     json_t **doc_out, struct sb_workload *w,
                     struct sb_ceilings *c, char *desc, size_t dlen,
                     sb_err *err);

#ifdef __cplusplus
}
#endif

#endif
