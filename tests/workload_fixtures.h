/*
 * workload_fixtures.h — what the workload-model tests share: a preset
 * loaded with --set changes applied as the CLI applies them, a phase of a
 * prediction by stage and name, and the ceilings of a data/hw spec.
 */
#ifndef SOLBENCH_TEST_WORKLOAD_FIXTURES_H
#define SOLBENCH_TEST_WORKLOAD_FIXTURES_H

#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "solbench/hw.h"
#include "solbench/predict.h"

static inline int load(const char *name, const char *const *sets, int nsets,
                       sb_workload *w, sb_err *err)
{
    json_t *doc;
    char path[4400];
    int rc = sb_workload_load_doc(name, &doc, path, sizeof path, err);
    if (rc)
        return rc;
    rc = sb_workload_apply(doc, sets, nsets, err);
    if (rc == 0)
        rc = sb_workload_read_file(doc, path, NULL, 0, w, err);
    json_decref(doc);
    return rc;
}

static inline const sb_phase *phase(const sb_prediction *p, const char *stage,
                                    const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->ph[i].name, name) == 0 &&
            strcmp(p->ph[i].stage, stage) == 0)
            return &p->ph[i];
    return NULL;
}

static inline void machine(const char *hw, sb_ceilings *c)
{
    sb_hw_spec s;
    sb_err e;
    memset(c, 0, sizeof *c);
    if (sb_hw_load(hw, &s, &e) == 0)
        sb_ceil_from_spec(&s, c);
    else
        fprintf(stderr, "%s\n", e.msg);
}

/* Predicts `preset` with `sets` on the data/hw spec `hw`; 0 on success
 * (the error on stderr otherwise). */
static inline int predict_on(const char *preset, const char *const *sets, int n,
                             const char *hw, sb_prediction *p)
{
    sb_workload w;
    sb_ceilings c;
    sb_err err = {0};
    machine(hw, &c);
    int rc = load(preset, sets, n, &w, &err);
    if (rc == 0)
        rc = sb_predict(&w, &c, p, &err);
    if (rc)
        fprintf(stderr, "%s: %s\n", preset, err.msg);
    return rc;
}

#endif
