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
    if (desc) {
        size_t l = strlen(desc);
        snprintf(desc + l, len - l, "%srun %s (%d measured ceilings)",
                 l ? " overridden by " : "", run->run_id, n);
    }
    return 0;
}
