/*
 * cmd_history.c — `solbench history`: the stored runs and their headline
 * figures over time, newest first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "solbench/store.h"

static const char history_help[] =
    "usage: solbench history [--bench NAME] [--last N] [--db PATH]\n"
    "  --bench NAME   only runs holding this benchmark (a glob such as\n"
    "                 'memory.*' works), and only its results\n"
    "  --last N       the N newest runs (default 20; 0 for all)\n"
    "  --db PATH      results database (default $SOLBENCH_DB, else\n"
    "                 $XDG_DATA_HOME/solbench/results.db)\n";

typedef struct hist_state {
    char last_run[64];
    long rows;
} hist_state;

static int print_row(const sb_store_hist_row *r, void *arg)
{
    hist_state *hs = arg;
    if (strcmp(hs->last_run, r->run_id) != 0) {
        snprintf(hs->last_run, sizeof hs->last_run, "%s", r->run_id);
        printf("%srun %s  %s", hs->rows ? "\n" : "", r->run_id, r->started_at);
        if (strcmp(r->tags, "{}") != 0)
            printf("  tags %s", r->tags);
        putchar('\n');
    }
    hs->rows++;
    char value[48];
    if (r->skipped)
        snprintf(value, sizeof value, "skipped");
    else if (r->metric[0])
        snprintf(value, sizeof value, "%.4g %s", r->value, r->unit);
    else
        snprintf(value, sizeof value, "-");
    printf("  %-24s %-30s %-12s %16s  cv %5.1f%%  n %-4ld %s\n", r->bench,
           r->params[0] ? r->params : "-", r->metric[0] ? r->metric : "-",
           value, r->cv * 100.0, r->n_samples,
           r->skipped ? "" : (r->valid ? "valid" : "INVALID"));
    return 0;
}

int sb_cmd_history(int argc, char **argv)
{
    const char *bench = NULL, *db = NULL;
    int last = 20;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(history_help, stdout);
            return 0;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--bench", &v))) {
            if (m < 0)
                return 2;
            bench = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--last", &v))) {
            if (m < 0)
                return 2;
            if (sb_cli_int("history", "--last", v, 0, 1000000000, &last))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return 2;
            db = v;
        } else {
            return sb_cli_usage("history",
                                "unknown argument '%s' (see 'solbench "
                                "history --help')",
                                argv[i]);
        }
    }
    sb_err err = {0};
    sb_store *st;
    char path[4096];
    if (sb_store_open_default_mode(db, SB_STORE_RO, &st, path, sizeof path,
                                   &err))
        return sb_cli_error(&err);
    hist_state hs = {{0}, 0};
    int rc = sb_store_history(st, bench, last, print_row, &hs, &err);
    sb_store_close(st);
    if (rc)
        return sb_cli_error(&err);
    if (hs.rows == 0)
        printf("no runs%s%s stored in %s\n", bench ? " of " : "",
               bench ? bench : "", path);
    return 0;
}
