/*
 * fuzz_hw.c — libFuzzer harness of the hardware-spec reader
 * (src/model/hw.c: sb_hw_load), the input being a spec file like
 * data/hw/h100-sxm.json.
 *
 * sb_hw_load takes a name or a path only, so the input is written to a
 * temporary file with a fixed name per process ($TMPDIR or /tmp,
 * solbench-fuzz-hw-PID.json). A spec read is then used as `hw show`,
 * `predict --hw` and `roofline --hw` use it: the ceilings
 * (sb_ceil_from_spec), the main bandwidth and the peaks, and a prediction
 * of every workload preset of data/models (read once at start) on it.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "solbench/hw.h"
#include "solbench/predict.h"
#include "solbench/workload.h"

#define FZ_MAX_WL 16
static sb_workload fz_wl[FZ_MAX_WL];
static int fz_nwl;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char dir[4096], models[4200];
    if (sb_datadir(dir, sizeof dir) != 0)
        return 0;
    snprintf(models, sizeof models, "%s/models", dir);
    DIR *d = opendir(models);
    if (!d)
        return 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL && fz_nwl < FZ_MAX_WL) {
        size_t l = strlen(ent->d_name);
        if (l < 6 || strcmp(ent->d_name + l - 5, ".json") != 0)
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", models, ent->d_name);
        json_t *doc = NULL;
        char where[4400];
        sb_err e = {0};
        if (sb_workload_load_doc(path, &doc, where, sizeof where, &e) == 0) {
            if (sb_workload_read_file(doc, where, NULL, 0, &fz_wl[fz_nwl],
                                      &e) == 0)
                fz_nwl++;
            json_decref(doc);
        }
    }
    closedir(d);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0; /* a spec file is small */
    const char *path = fz_write_tmp("hw", data, size);
    if (!path)
        return 0;
    sb_hw_spec hw;
    sb_err e = {0};
    if (sb_hw_load(path, &hw, &e) != 0)
        return 0;
    static const char *dtypes[] = {"fp64", "fp32", "tf32", "bf16",
                                   "fp16", "fp8",  "int8", "zz"};
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        (void)sb_hw_peak(&hw, dtypes[i]);
    sb_ceilings c;
    memset(&c, 0, sizeof c);
    sb_ceil_from_spec(&hw, &c);
    const char *name;
    (void)sb_ceil_main_bw(&c, &name);
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        (void)sb_ceil_peak(&c, dtypes[i], &name);
    sb_prediction *p = malloc(sizeof *p);
    if (!p)
        abort();
    for (int i = 0; i < fz_nwl; i++) {
        if (sb_workload_check_machine(&fz_wl[i], &c, "fuzz", &e))
            continue;
        if (sb_predict(&fz_wl[i], &c, p, &e) == 0) {
            sb_intervention iv[SB_MAX_INTERVENTIONS];
            (void)sb_interventions(p, iv, SB_MAX_INTERVENTIONS);
            sb_predict_print(fz_sink(), p);
        }
    }
    free(p);
    return 0;
}
