/*
 * machine.c — what the commands that predict write: a JSON document to a
 * file or stdout, a calibration file. (The machine and the workload they
 * predict for are the library's: src/pipeline.)
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "cli/cli.h"
#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/store.h"
#include "solbench/predict.h"
#include "solbench/workload.h"

int sb_cli_write_json(const json_t *doc, const char *path, size_t flags,
                      const char *what, sb_err *err)
{
    if (!path) {
        int rc = json_dumpf(doc, stdout, flags);
        fputc('\n', stdout);
        return rc ? sb_fail(err, SB_EIO, "cannot write %s", what) : 0;
    }
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    rc = json_dumpf(doc, f, flags);
    if (fclose(f) != 0 || rc)
        return sb_fail(err, SB_EIO, "%s: cannot write %s", path, what);
    return 0;
}

/* a calibration's range: [0.01, 1], three decimals */
static json_t *sb__eff_json(double e)
{
    e = e < 0.01 ? 0.01 : e > 1 ? 1 : e;
    return json_real(round(e * 1000) / 1000);
}

int sb_cli_write_calibration(const char *path, const char *hardware,
                             const double eff[4], const sb_calib_dtypes *by,
                             const char *source, const char *notes, sb_err *err)
{
    static const char *const key[4] = {"matmul", "attention", "memory",
                                       "network"};
    json_t *doc = json_object();
    json_object_set_new(doc, "hardware", json_string(hardware));
    for (int k = 0; k < 4; k++)
        if (eff[k] > 0)
            json_object_set_new(doc, key[k], sb__eff_json(eff[k]));
    if (by && by->n > 1) {
        json_t *o = json_object();
        for (int k = 0; k < by->n; k++)
            json_object_set_new(o, by->dtype[k], sb__eff_json(by->eff[k]));
        json_object_set_new(doc, "matmul_by_dtype", o);
    }
    json_object_set_new(doc, "source", json_string(source));
    json_object_set_new(doc, "notes", json_string(notes));
    int rc =
        sb_cli_write_json(doc, path, JSON_INDENT(2) | JSON_REAL_PRECISION(6),
                          "the calibration", err);
    json_decref(doc);
    return rc;
}
