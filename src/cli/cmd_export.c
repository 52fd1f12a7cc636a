/*
 * cmd_export.c — `solbench export RUN --json FILE --trace FILE`: writes a
 * stored run as its run document (schema solbench.run/1), e.g. to merge
 * elsewhere with `solbench import`, and/or as a Chrome trace for Perfetto
 * or chrome://tracing (docs/SCHEMA.md).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "solbench/report.h"
#include "solbench/store.h"

static const char export_help[] =
    "usage: solbench export RUN [--json FILE] [--trace FILE] [--db PATH]\n"
    "  RUN is a run id (or a unique prefix), a baseline name or 'last'.\n"
    "  --json FILE   the run document (schema solbench.run/1), for import\n"
    "  --trace FILE  a Chrome trace for Perfetto or chrome://tracing: one\n"
    "                track per benchmark, one slice per sample (a synthetic\n"
    "                timeline: samples laid end to end, in result order)\n"
    "  At least one of --json and --trace; both may be given.\n";

int sb_cmd_export(int argc, char **argv)
{
    const char *db = NULL, *json = NULL, *trace = NULL, *ref = NULL;
    const sb_cli_val vals[] = {
        {"--db", &db}, {"--json", &json}, {"--trace", &trace}, {NULL, NULL}};
    for (int i = 1; i < argc; i++) {
        int m = sb_cli_vals(argc, argv, &i, vals, export_help);
        if (m > 1)
            return m == SB_CLI_HELP ? 0 : 2;
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            return sb_cli_usage("export", "unknown option '%s'", argv[i]);
        } else if (!ref) {
            ref = argv[i];
        } else {
            return sb_cli_usage("export", "one run at a time ('%s' is extra)",
                                argv[i]);
        }
    }
    if (!ref || (!json && !trace))
        return sb_cli_usage("export",
                            "usage: export RUN [--json FILE] [--trace FILE] "
                            "(one of them at least)");
    sb_err err = {0};
    /* Both files are tried before either is written, so a bad --trace
     * does not leave a --json behind, and one file is never both. */
    struct stat jid, tid;
    if ((json && sb_cli_check_out("--json", json, &jid, &err)) ||
        (trace && sb_cli_check_out("--trace", trace, &tid, &err)) ||
        (json && trace && sb_cli_same_out(json, &jid, trace, &tid) &&
         sb_fail(&err, SB_EINVAL, "--json %s and --trace %s name the same file",
                 json, trace)))
        return sb_cli_error(&err);
    sb_store *st;
    if (sb_store_open_default_mode(db, SB_STORE_RO, &st, NULL, 0, &err))
        return sb_cli_error(&err);
    sb_run run;
    int rc = sb_store_load_run(st, ref, &run, &err);
    sb_store_close(st);
    if (!rc && json) {
        rc = sb_run_write_json(&run, json, &err);
        if (!rc)
            printf("run %s (%zu results) written to %s\n", run.run_id,
                   run.results.n, json);
    }
    if (!rc && trace) {
        rc = sb_run_write_chrome_trace(&run, trace, &err);
        if (!rc)
            printf("run %s (%zu results) written to %s as Chrome trace\n",
                   run.run_id, run.results.n, trace);
    }
    sb_run_free(&run);
    return rc ? sb_cli_error(&err) : 0;
}
