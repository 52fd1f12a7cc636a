/*
 * cmd_baseline.c — `solbench baseline set NAME [RUN] | list | rm NAME`:
 * names stored runs as baselines for `compare` and `check`.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solbench/store.h"

static const char baseline_help[] =
    "usage: solbench baseline set NAME [RUN] [--db PATH]\n"
    "       solbench baseline list [--db PATH]\n"
    "       solbench baseline rm NAME [--db PATH]\n"
    "  RUN is a run id (or a unique prefix), another baseline's name or\n"
    "  'last' (the default: the newest stored run). NAME: a letter, then\n"
    "  letters, digits, '.', '_' or '-', at most 64 characters.\n";

static int print_baseline(const sb_store_baseline *b, void *arg)
{
    int *n = arg;
    if (*n == 0)
        printf("%-20s %-28s %-26s %8s  %s\n", "name", "run", "run started",
               "results", "tags");
    (*n)++;
    printf("%-20s %-28s %-26s %8ld  %s\n", b->name, b->run_id, b->started_at,
           b->n_results, strcmp(b->tags, "{}") ? b->tags : "");
    return 0;
}

int sb_cmd_baseline(int argc, char **argv)
{
    const char *db = NULL, *pos[4] = {0};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(baseline_help, stdout);
            return 0;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return 2;
            db = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return sb_cli_usage("baseline", "unknown option '%s'", argv[i]);
        } else if (npos < 4) {
            pos[npos++] = argv[i];
        } else {
            return sb_cli_usage("baseline", "too many arguments");
        }
    }
    if (npos == 0)
        return sb_cli_usage("baseline",
                            "expected 'set NAME [RUN]', 'list' or 'rm NAME'");
    const char *verb = pos[0];
    bool is_set = strcmp(verb, "set") == 0, is_rm = strcmp(verb, "rm") == 0,
         is_list = strcmp(verb, "list") == 0;
    if (!is_set && !is_rm && !is_list)
        return sb_cli_usage(
            "baseline", "unknown action '%s': expected set, list or rm", verb);
    if ((is_set && (npos < 2 || npos > 3)) || (is_rm && npos != 2) ||
        (is_list && npos != 1))
        return sb_cli_usage("baseline", "usage: baseline set NAME [RUN] | "
                                        "list | rm NAME");

    sb_err err = {0};
    sb_store *st;
    char path[4096];
    if (sb_store_open_default(db, &st, path, sizeof path, &err))
        return sb_cli_error(&err);
    int rc = 0;
    if (is_set) {
        rc = sb_store_baseline_set(st, pos[1], npos == 3 ? pos[2] : NULL, &err);
        char id[64];
        if (!rc)
            rc = sb_store_resolve(st, pos[1], id, sizeof id, &err);
        if (!rc)
            printf("baseline %s = run %s\n", pos[1], id);
    } else if (is_rm) {
        rc = sb_store_baseline_rm(st, pos[1], &err);
        if (!rc)
            printf("baseline %s removed\n", pos[1]);
    } else {
        int n = 0;
        rc = sb_store_baseline_list(st, print_baseline, &n, &err);
        if (!rc && n == 0)
            printf("no baselines in %s\n", path);
    }
    sb_store_close(st);
    return rc ? sb_cli_error(&err) : 0;
}
