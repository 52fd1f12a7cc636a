/*
 * cmd_import.c — `solbench import FILE...`: merges run documents (from
 * `run --json` or `export`, possibly from other machines) into the store.
 * Every file is read and checked before anything is written, so a bad
 * file imports nothing; a run already stored is not duplicated.
 * `solbench import STORE` (a SQLite store file or a postgresql:// URL)
 * imports a whole store: its runs, baselines, traces and fleet records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "solbench/store.h"

static const char import_help[] =
    "usage: solbench import FILE... [--db PATH|URL]\n"
    "       solbench import STORE [--db PATH|URL]\n"
    "  FILE is a run document (schema solbench.run/1). Every file is\n"
    "  checked first and all are imported in one transaction, or none. A\n"
    "  run already stored as it is is skipped (a stable mark a later run\n"
    "  withdrew in either copy is carried, not a difference); a different\n"
    "  run under a stored id, the id 'last' or a baseline's name is\n"
    "  refused.\n"
    "  STORE is another store (a SQLite store file, or a postgresql:// URL):\n"
    "  every run, baseline, profiler trace and fleet record it holds, in\n"
    "  one transaction; what the store already holds as it is is skipped,\n"
    "  so importing twice changes nothing.\n";

static int import_store(const char *src_path, const char *db)
{
    sb_err err = {0};
    sb_store *src = NULL, *dst = NULL;
    char path[4096];
    if (sb_store_open_mode(src_path, SB_STORE_RO, &src, &err) ||
        sb_store_open_default(db, &dst, path, sizeof path, &err)) {
        sb_store_close(src);
        return sb_cli_error(&err);
    }
    sb_store_import_stats n;
    int rc = sb_store_import_store(dst, src, &n, &err);
    if (rc)
        rc = sb_cli_error(&err);
    else
        printf("from %s into %s: %d of %d runs imported, %d of %d "
               "baselines, %d of %d traces, %d of %d fleet runs (the rest "
               "already stored)\n",
               sb_store_file(src), sb_store_file(dst), n.runs_new, n.runs,
               n.baselines_new, n.baselines, n.traces_new, n.traces,
               n.fleets_new, n.fleets);
    sb_store_close(dst);
    sb_store_close(src);
    return rc;
}

int sb_cmd_import(int argc, char **argv)
{
    const char *db = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    int nfiles = 0, rc = 0;
    if (!files)
        return 2;
    const sb_cli_val vals[] = {{"--db", &db}, {NULL, NULL}};
    for (int i = 1; i < argc; i++) {
        int m = sb_cli_vals(argc, argv, &i, vals, import_help);
        if (m > 1) {
            free(files);
            return m == SB_CLI_HELP ? 0 : 2;
        }
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            free(files);
            return sb_cli_usage("import", "unknown option '%s'", argv[i]);
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (nfiles == 0) {
        free(files);
        return sb_cli_usage("import", "no file given (usage: import FILE...)");
    }
    for (int i = 0; i < nfiles; i++) {
        if (!sb_store_is_store(files[i]))
            continue;
        if (nfiles > 1) {
            free(files);
            return sb_cli_usage("import",
                                "%s is a store: import one store at a time, "
                                "without run documents beside it",
                                files[i]);
        }
        rc = import_store(files[0], db);
        free(files);
        return rc;
    }

    sb_err err = {0};
    sb_run *runs = calloc((size_t)nfiles, sizeof *runs);
    int loaded = 0;
    if (!runs) {
        free(files);
        return 2;
    }
    for (; loaded < nfiles; loaded++) {
        if (sb_run_read_json(files[loaded], &runs[loaded], &err)) {
            sb_run_free(&runs[loaded]);
            rc = sb_cli_error(&err);
            goto out;
        }
        if (!runs[loaded].run_id[0]) {
            sb_run_free(&runs[loaded]);
            rc = sb_cli_usage("import", "%s: the run has an empty run_id",
                              files[loaded]);
            goto out;
        }
        if (sb_run_check_figures(&runs[loaded], files[loaded], &err)) {
            sb_run_free(&runs[loaded]);
            rc = sb_cli_error(&err);
            goto out;
        }
    }

    sb_store *st;
    char path[4096];
    if (sb_store_open_default(db, &st, path, sizeof path, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    /* All or nothing, in one transaction (sb_store_import_runs). */
    bool *inserted = calloc((size_t)nfiles, sizeof *inserted);
    if (!inserted || sb_store_import_runs(st, runs, (const char *const *)files,
                                          nfiles, inserted, &err)) {
        if (!inserted)
            sb_fail(&err, SB_ENOMEM, "out of memory");
        rc = sb_cli_error(&err);
    } else {
        int added = 0;
        for (int i = 0; i < nfiles; i++) {
            added += inserted[i];
            printf("%s: run %s (%zu results) %s\n", files[i], runs[i].run_id,
                   runs[i].results.n,
                   inserted[i] ? "imported" : "already stored, skipped");
        }
        printf("%d of %d runs imported into %s\n", added, nfiles,
               sb_store_file(st));
    }
    free(inserted);
    sb_store_close(st);
out:
    for (int i = 0; i < loaded; i++)
        sb_run_free(&runs[i]);
    free(runs);
    free(files);
    return rc;
}
