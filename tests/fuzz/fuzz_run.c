/*
 * fuzz_run.c — libFuzzer harness of the run-document reader
 * (src/core/output.c), the input being a run document (docs/SCHEMA.md).
 *
 * Both entry points the tool has:
 *   - sb_run_from_json, in memory, lenient (how the store reads its rows);
 *   - sb_run_read_json, strict, from a file (import, compare, roofline,
 *     report --results): the input is written to a temporary file with a
 *     fixed name per process ($TMPDIR or /tmp, solbench-fuzz-run-PID.json),
 *     the library having no in-memory strict entry point.
 * A document read is then used as the tool uses it: measured ceilings
 * (sb_ceil_from_run, alone and over a datasheet spec), the roofline table
 * and chart, the result tables (to /dev/null), the CSV and the HTML report
 * (to temporary files beside the input's: the writers take regular files
 * only).
 *
 * Invariants checked (abort = finding), for a document the strict reader
 * takes: it goes into the store as sb_run_to_json, compact, and comes back
 * through json_loads and sb_run_from_json (sb_store_import_run /
 * sb_store_load_run); and what sb_run_write_json writes of it (export) the
 * strict reader takes again (import). Both with the same run id and number
 * of results.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "solbench/hw.h"
#include "solbench/output.h"
#include "solbench/report.h"

static sb_ceilings fz_spec_ceil; /* h100-sxm from data/hw, read once */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sb_hw_spec spec;
    sb_err e = {0};
    memset(&fz_spec_ceil, 0, sizeof fz_spec_ceil);
    if (sb_hw_load("h100-sxm", &spec, &e) == 0)
        sb_ceil_from_spec(&spec, &fz_spec_ceil);
    return 0;
}

static void fz_use(const sb_run *run, bool strict)
{
    sb_print_results(fz_sink(), &run->results);
    for (int k = 0; k < 2; k++) {
        sb_ceilings c;
        if (k == 0)
            memset(&c, 0, sizeof c);
        else
            c = fz_spec_ceil;
        (void)sb_ceil_from_run(run, &c);
        const char *name;
        (void)sb_ceil_main_bw(&c, &name);
        (void)sb_ceil_peak(&c, "bf16", &name);
        sb_roof_row *rows = NULL;
        int n = 0;
        sb_roof_table(run, &c, &rows, &n);
        sb_roof_print(fz_sink(), rows, n, &c);
        sb_buf b = {0};
        sb_svg_roofline(&b, &c, rows, n, 1000, 600);
        sb_buf_free(&b);
        if (strict && k == 1) {
            sb_err e = {0};
            (void)sb_report_html(fz_tmp_file("run", "html"), run, &c, "fuzz",
                                 NULL, NULL, &e);
        }
        free(rows);
    }
    if (strict) {
        sb_err e = {0};
        (void)sb_run_write_csv(run, fz_tmp_file("run", "csv"), &e);
    }
}

/* The store's round trip (store.c: sb_run_to_json, json_dumps compact;
 * json_loads, sb_run_from_json). */
static void fz_store_round_trip(const sb_run *run)
{
    json_t *doc = sb_run_to_json(run);
    FZ_INVARIANT(doc != NULL, "sb_run_to_json gave NULL for run %s",
                 run->run_id);
    char *s = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    FZ_INVARIANT(s != NULL, "json_dumps of run %s failed", run->run_id);
    json_error_t je;
    json_t *back = json_loads(s, 0, &je);
    FZ_INVARIANT(back != NULL,
                 "stored document of run %s does not parse: "
                 "%s (%s)",
                 run->run_id, je.text, s);
    sb_run again;
    sb_err e = {0};
    int rc = sb_run_from_json(back, &again, &e);
    json_decref(back);
    FZ_INVARIANT(rc == 0, "stored run %s does not read back: %s (%s)",
                 run->run_id, e.msg, s);
    FZ_INVARIANT(strcmp(again.run_id, run->run_id) == 0 &&
                     again.results.n == run->results.n,
                 "stored run %s reads back as %s with %zu results, not %zu",
                 run->run_id, again.run_id, again.results.n, run->results.n);
    free(s);
    sb_run_free(&again);
}

/* The export/import round trip (export RUN --json FILE; import FILE): what
 * sb_run_write_json writes of a run the strict reader took, the strict
 * reader takes again, with the same run id and number of results. */
static void fz_export_round_trip(const sb_run *run)
{
    const char *out = fz_tmp_file("run", "out.json");
    sb_err e = {0};
    if (sb_run_write_json(run, out, &e) != 0)
        return; /* a full disk, not a finding */
    sb_run again;
    int rc = sb_run_read_json(out, &again, &e);
    FZ_INVARIANT(rc == 0, "exported run %s does not import: %s", run->run_id,
                 e.msg);
    FZ_INVARIANT(strcmp(again.run_id, run->run_id) == 0 &&
                     again.results.n == run->results.n,
                 "exported run %s imports as %s with %zu results, not %zu",
                 run->run_id, again.run_id, again.results.n, run->results.n);
    sb_run_free(&again);
}

/* import's check (sb_run_check_figures): a document it accepts holds only
 * figures a run could have measured — samples that are times of 0 to a
 * day, no metric infinite or beyond 1e30, and a GBps that is its bytes
 * over its samples' median (the statistics the reader recomputed). */
static void fz_figures(const sb_run *run)
{
    sb_err e = {0};
    if (sb_run_check_figures(run, "fuzz", &e) != 0)
        return;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        for (size_t k = 0; k < r->n_samples; k++)
            FZ_INVARIANT(isfinite(r->samples_s[k]) && r->samples_s[k] >= 0 &&
                             r->samples_s[k] <= 86400,
                         "import took sample %zu = %g of result %zu", k,
                         r->samples_s[k], i);
        for (int k = 0; k < r->n_metrics; k++)
            FZ_INVARIANT(!isinf(r->metrics[k].value) &&
                             !(fabs(r->metrics[k].value) > 1e30),
                         "import took metric %s = %g of result %zu",
                         r->metrics[k].name, r->metrics[k].value, i);
        const sb_metric *gb = sb_result_get(r, "GBps");
        const sb_metric *by = sb_result_get(r, "bytes");
        if (gb && by && isfinite(gb->value) && isfinite(by->value) &&
            r->stats.p50 > 0 && by->value != 0) {
            double want = by->value / r->stats.p50 / 1e9;
            FZ_INVARIANT(fabs(gb->value / want - 1) <= 1e-6,
                         "import took GBps %g where bytes over the median "
                         "give %g (result %zu)",
                         gb->value, want, i);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sb_err e = {0};
    sb_run run;

    /* Lenient, in memory. */
    json_error_t je;
    json_t *doc = json_loadb((const char *)data, size, 0, &je);
    if (doc) {
        if (sb_run_from_json(doc, &run, &e) == 0)
            fz_use(&run, false);
        sb_run_free(&run);
        json_decref(doc);
    }

    /* Strict, from a file. */
    const char *path = fz_write_tmp("run", data, size);
    if (!path)
        return 0;
    memset(&run, 0, sizeof run);
    if (sb_run_read_json(path, &run, &e) == 0) {
        fz_use(&run, true);
        fz_figures(&run);
        fz_store_round_trip(&run);
        fz_export_round_trip(&run);
    }
    sb_run_free(&run);
    return 0;
}
