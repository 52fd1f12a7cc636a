/*
 * fuzz_workload.c — libFuzzer harness of the workload reader
 * (src/model/workload*.c), as `solbench predict FILE --set k=v` drives it.
 *
 * The input is a workload document (docs/WORKLOAD.md), optionally followed
 * by a line "%%" and then one --set setting a line, or a --sweep key:
 *
 *   {"name": "x", "model": {...}, ...}
 *   %%
 *   tensor=2
 *   model.moe.top_k=3
 *   --sweep parallelism.tensor
 *
 * The document goes to a temporary file with a fixed name per process
 * ($TMPDIR or /tmp, solbench-fuzz-workload-PID.json), since the reader
 * takes a path (sb_workload_load_doc) and reads the file's text again for
 * line:column (sb_workload_read_file); the settings are applied with
 * sb_workload_apply (sb_workload_doc_set) first, as predict does. A
 * workload read is then predicted as predict does, on the data/hw spec it
 * names (read once at start; h100-sxm when it names another): sizes,
 * sb_workload_check_machine, sb_predict (its serving simulation when the
 * requests asked for are few and short), the interventions, the table and
 * the JSON of the prediction, and the phase chart; each --sweep key is
 * checked against the document read (sb_workload_check_key), as predict
 * does before computing the variants (each variant being one more --set).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "solbench/hw.h"
#include "solbench/predict.h"
#include "solbench/report.h"
#include "solbench/workload.h"

#define FZ_MAX_SETS 16
#define FZ_MAX_SPECS 16

static struct {
    char name[48];
    sb_ceilings c;
} fz_specs[FZ_MAX_SPECS];
static int fz_nspecs;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char **names = NULL;
    int n = 0;
    sb_err e = {0};
    if (sb_hw_list(&names, &n, &e) == 0) {
        for (int i = 0; i < n; i++) {
            sb_hw_spec spec;
            /* h100-sxm first: the fallback */
            if (fz_nspecs < FZ_MAX_SPECS &&
                sb_hw_load(names[i], &spec, &e) == 0) {
                int k = fz_nspecs++;
                if (strcmp(names[i], "h100-sxm") == 0 && k > 0) {
                    fz_specs[k] = fz_specs[0];
                    k = 0;
                }
                snprintf(fz_specs[k].name, sizeof fz_specs[k].name, "%s",
                         names[i]);
                sb_ceil_from_spec(&spec, &fz_specs[k].c);
            }
            free(names[i]);
        }
        free(names);
    }
    return 0;
}

static const sb_ceilings *fz_machine(const char *spec)
{
    if (fz_nspecs == 0)
        return NULL;
    for (int i = 0; i < fz_nspecs; i++)
        if (strcmp(fz_specs[i].name, spec) == 0)
            return &fz_specs[i].c;
    return &fz_specs[0].c;
}

static void fz_predict(const sb_workload *w0, const char *path)
{
    /* the serving simulator runs as asked, but small: an input's worth of
     * milliseconds, not the minutes 1e8 tokens may take */
    sb_workload wl = *w0;
    if ((double)wl.sim_requests * ((double)wl.prompt_len + wl.output_len) >
        20000.0)
        wl.sim_requests = 0;
    const sb_workload *w = &wl;
    sb_wl_sizes s;
    sb_workload_sizes(w, &s);
    const sb_ceilings *c = fz_machine(w->hw_spec);
    if (!c)
        return;
    sb_err e = {0};
    if (sb_workload_check_machine(w, c, path, &e))
        return;
    sb_prediction *p = malloc(sizeof *p);
    if (!p)
        abort();
    if (sb_predict(w, c, p, &e) == 0) {
        sb_intervention iv[SB_MAX_INTERVENTIONS];
        (void)sb_interventions(p, iv, SB_MAX_INTERVENTIONS);
        sb_predict_print(fz_sink(), p);
        sb_interventions_print(fz_sink(), p);
        json_t *j = sb_predict_to_json(p);
        json_decref(j);
        sb_buf b = {0};
        sb_svg_phases(&b, p, 800);
        sb_buf_free(&b);
    }
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0; /* a workload file is small (sb__slurp reads up to 64 MiB) */
    /* Split off the --set and --sweep lines. */
    size_t doc_len = size;
    const char *sets[FZ_MAX_SETS], *sweeps[FZ_MAX_SETS];
    int nsets = 0, nsweeps = 0;
    char *rest = NULL;
    for (size_t i = 0; i + 4 <= size; i++) {
        if (memcmp(data + i, "\n%%\n", 4) == 0) {
            doc_len = i;
            rest = fz_strdup(data + i + 4, size - i - 4);
            char *save = NULL;
            for (char *l = strtok_r(rest, "\n", &save); l;
                 l = strtok_r(NULL, "\n", &save)) {
                if (strncmp(l, "--sweep ", 8) == 0) {
                    if (nsweeps < FZ_MAX_SETS)
                        sweeps[nsweeps++] = l + 8;
                } else if (nsets < FZ_MAX_SETS) {
                    sets[nsets++] = l;
                }
            }
            break;
        }
    }
    const char *path = fz_write_tmp("workload", data, doc_len);
    if (!path) {
        free(rest);
        return 0;
    }
    json_t *doc = NULL;
    char where[4400];
    sb_err e = {0};
    if (sb_workload_load_doc(path, &doc, where, sizeof where, &e) == 0) {
        sb_workload w;
        if (sb_workload_apply(doc, sets, nsets, &e) == 0 &&
            sb_workload_read_file(doc, where, sets, nsets, &w, &e) == 0) {
            fz_predict(&w, where);
            for (int i = 0; i < nsweeps; i++)
                (void)sb_workload_check_key(doc, sweeps[i], &e);
        }
        /* the in-memory reader too, on the same (set) document */
        sb_workload w2;
        (void)sb_workload_from_json(doc, "fuzz", &w2, &e);
        json_decref(doc);
    }
    free(rest);
    return 0;
}
