/*
 * machine.c — the machine model a command works with: a hardware spec,
 * the measured ceilings of a run the caller loaded, or the spec overridden
 * by them. Reading the run (a JSON file, the results store) is the
 * caller's: the model never opens the store.
 */
#include <stdio.h>
#include <string.h>

#include "solbench/hw.h"

int sb_machine_load(const char *hw, const sb_run *run, sb_ceilings *c,
                    sb_hw_spec *spec, char *desc, size_t len, sb_err *err)
{
    sb_hw_spec local_spec;
    if (!spec)
        spec = &local_spec;
    memset(spec, 0, sizeof *spec);
    memset(c, 0, sizeof *c);
    if (desc && len)
        desc[0] = '\0';
    if (!hw && !run)
        return sb_fail(err, SB_EINVAL,
                       "no machine model: give --hw NAME "
                       "(solbench hw list), --results FILE or --run ID");
    if (hw) {
        int rc = sb_hw_load(hw, spec, err);
        if (rc)
            return rc;
        sb_ceil_from_spec(spec, c);
        if (desc)
            snprintf(desc, len, "%s (datasheet)", spec->name);
    }
    if (!run)
        return 0;
    int n = sb_ceil_from_run(run, c);
    int shaky = 0;
    for (int i = 0; i < c->n; i++)
        shaky += strcmp(c->c[i].source, "measured, unstable") == 0;
    if (desc) {
        size_t l = strlen(desc);
        snprintf(desc + l, len - l, "%srun %s (%d measured ceilings%s%.0d%s)",
                 l ? " overridden by " : "", run->run_id, n, shaky ? "; " : "",
                 shaky,
                 shaky ? " only from unstable results: read them with care"
                       : "");
    }
    return 0;
}

void sb_machine_pick(const sb_machine_req *req, const char *wspec,
                     const char *wrun, const char **hw, const char **results,
                     const char **run)
{
    if (wspec && !*wspec)
        wspec = NULL;
    if (wrun && !*wrun)
        wrun = NULL;
    if (req->workload_first) {
        /* the workload's spec or run; the command's when it has none */
        *hw = req->hw ? req->hw : wspec;
        *results = wrun ? wrun : *hw ? NULL : req->results;
        *run = *hw || *results ? NULL : req->run;
    } else {
        /* --run/--results alone mean "on the measured machine"; with --hw
         * too, the spec overridden by the measurements */
        *hw = req->hw ? req->hw : (req->run || req->results) ? NULL : wspec;
        *results = req->results              ? req->results
                   : (!req->run && !req->hw) ? wrun
                                             : NULL;
        *run = req->run;
    }
}
