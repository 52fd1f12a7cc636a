/*
 * machine.c — the machine model a command works with: a hardware spec, a
 * measured run (from a JSON file or the results store the caller names),
 * or a spec overridden by the run's measurements.
 */
#include <stdio.h>
#include <string.h>

#include "solbench/hw.h"
#include "solbench/store.h"

int sb_machine_load(const char *hw, const char *results, const char *run_ref,
                    const char *db, sb_ceilings *c, sb_hw_spec *spec,
                    sb_run *run, int *have_run, char *desc, size_t len,
                    sb_err *err)
{
    sb_hw_spec local_spec;
    sb_run local_run;
    if (!spec)
        spec = &local_spec;
    memset(spec, 0, sizeof *spec);
    memset(c, 0, sizeof *c);
    if (have_run)
        *have_run = 0;
    if (desc && len)
        desc[0] = '\0';
    if (!hw && !results && !run_ref)
        return sb_fail(err, SB_EINVAL, "no machine model: give --hw NAME "
                       "(solbench hw list), --results FILE or --run ID");
    if (results && run_ref)
        return sb_fail(err, SB_EINVAL, "--results and --run both given: "
                       "choose one");
    int rc;
    if (hw) {
        if ((rc = sb_hw_load(hw, spec, err)) != 0)
            return rc;
        sb_ceil_from_spec(spec, c);
        if (desc)
            snprintf(desc, len, "%s (datasheet)", spec->name);
    }
    if (!results && !run_ref)
        return 0;
    sb_run *r = run ? run : &local_run;
    /* The readers initialise the run themselves; zeroed, it is safe to
     * free on every path. */
    memset(r, 0, sizeof *r);
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
    if (rc) {
        sb_run_free(r);
        return rc;
    }
    int n = sb_ceil_from_run(r, c);
    if (desc) {
        size_t l = strlen(desc);
        snprintf(desc + l, len - l, "%srun %s (%d measured ceilings)",
                 l ? " overridden by " : "", r->run_id, n);
    }
    if (run && have_run)
        *have_run = 1;
    else
        sb_run_free(r);
    return 0;
}
