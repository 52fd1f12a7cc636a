/*
 * cmd_report.c — `solbench report [--run ID | --results FILE] [--hw NAME]
 * [--db PATH] [--workload FILE [--set k=v ...]] -o report.html`: one
 * self-contained HTML file with the machine profile, roofline, bandwidth
 * and collective curves, validation status, workload phases and
 * fingerprint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "solbench/hw.h"
#include "solbench/predict.h"
#include "solbench/report.h"
#include "solbench/trace.h"

int sb_cmd_report(int argc, char **argv)
{
    const char *run = NULL, *results = NULL, *hw = NULL, *wl = NULL,
               *out = NULL, *db = NULL, *trace = NULL, *hlo = NULL;
    const char *sets[32];
    int nsets = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf(
                "usage: solbench report [--run ID | --results FILE] "
                "[--hw NAME] [--db PATH]\n"
                "                       [--workload FILE [--set k=v ...]] "
                "[--trace NAME|FILE] -o report.html\n"
                "  one self-contained HTML file: machine profile, "
                "roofline, bandwidth and collective\n"
                "  curves, validation, workload phases, fingerprint\n"
                "  --run ID        a stored run (id, prefix, baseline, "
                "last)\n"
                "  --trace T       a profiler trace (a file, or a name "
                "stored by trace import):\n"
                "                  its ops on the machine's roofline\n"
                "  --hlo FILE      with --trace of a JAX trace: the compiled "
                "module's text\n"
                "                  (shapes and named scopes of its ops; "
                "docs/TRACE.md)\n"
                "  --db PATH       results database (default $SOLBENCH_DB, "
                "else\n"
                "                  $XDG_DATA_HOME/solbench/results.db)\n");
            return 0;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--run", &run)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--results", &results)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--hw", &hw)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--db", &db)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--workload", &wl)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--trace", &trace)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--hlo", &hlo)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "-o", &out)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--output", &out)) != 0) {
            if (r < 0)
                return 2;
            continue;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--set", &v)) != 0) {
            if (r < 0)
                return 2;
            if (nsets == 32)
                return sb_cli_usage("report", "too many --set");
            sets[nsets++] = v;
            continue;
        }
        return sb_cli_usage("report",
                            "unknown argument '%s' (usage: report "
                            "[--run ID | --results FILE] [--hw NAME] "
                            "[--db PATH] [--workload FILE] -o report.html)",
                            argv[i]);
    }
    if (!out)
        return sb_cli_usage("report", "-o FILE is required");
    if (!run && !results && !hw && !wl)
        return sb_cli_usage("report",
                            "nothing to report: give --run ID, "
                            "--results FILE, --hw NAME or --workload FILE");
    if (hlo && !trace)
        return sb_cli_usage("report", "--hlo gives a trace's ops their "
                                      "shapes: give --trace too");
    if (trace && !run && !results && !hw)
        return sb_cli_usage("report", "--trace needs the machine to hold it "
                                      "against: --run ID, --results FILE or "
                                      "--hw NAME");
    if (nsets && !wl)
        return sb_cli_usage("report", "--set changes a workload: give "
                                      "--workload FILE too");
    sb_err err = {0};
    /* The report's file is tried before anything is read or computed. */
    struct stat oid;
    if (sb_cli_check_out("-o", out, &oid, &err))
        return sb_cli_error(&err);
    sb_ceilings c = {0};
    sb_run r;
    int have = 0;
    char desc[256] = "";
    int rc;
    /* The machine of the measurements (and of the roofline). */
    if (run || results || hw) {
        if ((rc = sb_machine_open(hw, results, run, db, &c, NULL, &r, &have,
                                  desc, sizeof desc, &err)) != 0)
            return sb_cli_error(&err);
    }
    /* The workload's own machine: its spec (or --hw), or the run. */
    sb_prediction *p = NULL;
    if (wl) {
        sb_workload w;
        sb_ceilings wc;
        char wdesc[256];
        p = malloc(sizeof *p);
        const sb_machine_req req = {hw, results, run, true};
        rc = p ? sb_workload_open(wl, sets, nsets, &req, db, NULL, &w, &wc,
                                  wdesc, sizeof wdesc, &err)
               : sb_fail(&err, SB_ENOMEM, "out of memory");
        if (rc == 0)
            rc = sb_predict(&w, &wc, p, &err);
        if (rc == 0 && !desc[0]) {
            c = wc;
            snprintf(desc, sizeof desc, "%s", wdesc);
        }
        if (rc) {
            free(p);
            if (have)
                sb_run_free(&r);
            return sb_cli_error(&err);
        }
    }
    /* The trace, on the machine of the measurements. */
    sb_trace t;
    sb_tr_analysis ta;
    bool have_trace = false;
    if (trace) {
        rc = sb_cli_trace_load(db, trace, &t, &err);
        int matched = 0;
        if (rc == 0 && hlo &&
            (rc = sb_trace_add_hlo(&t, hlo, &matched, &err)) != 0)
            sb_trace_free(&t);
        else if (rc == 0 && (rc = sb_trace_analyze(&t, &c, &ta, &err)) != 0)
            sb_trace_free(&t);
        if (rc) {
            free(p);
            if (have)
                sb_run_free(&r);
            return sb_cli_error(&err);
        }
        have_trace = true;
    }
    sb_report_trace tr = {have_trace ? &t : NULL, have_trace ? &ta : NULL};
    rc = sb_report_html(out, have ? &r : NULL, &c, desc, p,
                        have_trace ? &tr : NULL, &err);
    if (have_trace) {
        sb_tr_analysis_free(&ta);
        sb_trace_free(&t);
    }
    free(p);
    if (have)
        sb_run_free(&r);
    if (rc)
        return sb_cli_error(&err);
    printf("report written to %s\n", out);
    return 0;
}
