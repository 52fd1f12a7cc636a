/*
 * pipeline.c — the machine model of roofline, predict and report: reads
 * the run a user named (a run document, or a stored run by id, prefix,
 * baseline or `last` from the store at --db) and hands it with the spec
 * to sb_machine_load (the model never opens the store itself); and the
 * one pipeline from a workload file to a workload and its machine that
 * predict and report share (pipeline.h).
 */
#include "solbench/pipeline.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "solbench/hw.h"
#include "solbench/output.h"
#include "solbench/predict.h"
#include "solbench/store.h"
#include "solbench/workload.h"

int sb_machine_open(const char *hw, const char *results, const char *run_ref,
                    const char *db, sb_ceilings *c, sb_hw_spec *spec,
                    sb_run *run, int *have_run, char *desc, size_t len,
                    sb_err *err)
{
    sb_run local_run;
    if (have_run)
        *have_run = 0;
    if (results && run_ref) {
        memset(c, 0, sizeof *c);
        return sb_fail(err, SB_EINVAL,
                       "--results and --run both given: "
                       "choose one");
    }
    if (!results && !run_ref)
        return sb_machine_load(hw, NULL, c, spec, desc, len, err);
    sb_run *r = run ? run : &local_run;
    /* The readers initialise the run themselves; zeroed, it is safe to
     * free on every path. */
    memset(r, 0, sizeof *r);
    int rc;
    if (results) {
        rc = sb_run_read_json(results, r, err);
    } else {
        /* The caller names the database (--db); NULL is the default. */
        sb_store *st = NULL;
        rc = sb_store_open_default_mode(db, SB_STORE_RO, &st, NULL, 0, err);
        if (rc == 0) {
            rc = sb_store_load_run(st, run_ref, r, err);
            sb_store_close(st);
        }
    }
    if (rc == 0)
        rc = sb_machine_load(hw, r, c, spec, desc, len, err);
    if (rc == 0 && run && have_run)
        *have_run = 1;
    else
        sb_run_free(r);
    return rc;
}

int sb_workload_open(const char *file, const char *const *sets, int nsets,
                     const sb_machine_req *req, const char *db,
                     json_t **doc_out, sb_workload *w, sb_ceilings *c,
                     char *desc, size_t dlen, sb_err *err)
{
    char path[4400];
    json_t *doc;
    int rc = sb_workload_load_doc(file, &doc, path, sizeof path, err);
    if (rc)
        return rc;
    if ((rc = sb_workload_apply(doc, sets, nsets, err)) == 0 &&
        (rc = sb_workload_read_file(doc, path, sets, nsets, w, err)) == 0) {
        const char *wspec = w->hw_spec[0] ? w->hw_spec : NULL,
                   *wrun = w->hw_run[0] ? w->hw_run : NULL;
        const char *hw, *res, *run;
        sb_machine_pick(req, wspec, wrun, &hw, &res, &run);
        rc = sb_machine_open(hw, res, run, db, c, NULL, NULL, NULL, desc, dlen,
                             err);
        if (rc && ((hw && hw == wspec) || (res && res == wrun))) {
            /* the workload named it: say where */
            sb_err inner = *err;
            const bool spec = hw && hw == wspec, wr = res && res == wrun;
            rc = sb_fail(err, rc, "%s: $.hardware%s: %s", path,
                         spec && wr ? ""
                         : spec     ? ".spec"
                                    : ".run",
                         inner.msg);
        }
        if (rc == 0)
            rc = sb_workload_check_machine(w, c, path, err);
        /* From here on hw_spec names the datasheet the machine model is
         * (what a default calibration file belongs to): empty when
         * measured ceilings are in it, which are sustained already. */
        if (rc == 0) {
            char used[sizeof w->hw_spec]; /* hw may be w->hw_spec itself */
            snprintf(used, sizeof used, "%s", hw && !res && !run ? hw : "");
            memcpy(w->hw_spec, used, sizeof used);
        }
    }
    if (doc_out && rc == 0)
        *doc_out = doc;
    else
        json_decref(doc);
    return rc;
}
