/*
 * machine.c — the machine model of roofline, predict and report: reads
 * the run the user named (--results FILE, or --run REF from the store
 * --db names) and hands it with the spec to sb_machine_load.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solbench/hw.h"
#include "solbench/store.h"

int sb_cli_machine(const char *hw, const char *results, const char *run_ref,
                   const char *db, sb_ceilings *c, sb_hw_spec *spec,
                   sb_run *run, int *have_run, char *desc, size_t len,
                   sb_err *err)
{
    sb_run local_run;
    if (have_run)
        *have_run = 0;
    if (results && run_ref) {
        memset(c, 0, sizeof *c);
        return sb_fail(err, SB_EINVAL, "--results and --run both given: "
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
