/*
 * cmd_baseline.c — `solbench baseline set NAME [RUN...] | add NAME RUN... |
 * list | rm NAME | rebase NAME`: names stored runs as baselines for
 * `compare` and `check`; rebase measures a baseline again here and moves
 * its name to the new run.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solbench/store.h"

static const char baseline_help[] =
    "usage: solbench baseline set NAME [RUN...] [--db PATH]\n"
    "       solbench baseline add NAME RUN... [--db PATH]\n"
    "       solbench baseline list [--db PATH]\n"
    "       solbench baseline rm NAME [--db PATH]\n"
    "       solbench baseline rebase NAME [--db PATH] [--min-time S] "
    "[--repeat N]\n"
    "  set names one run or several (the gate judges a change against the\n"
    "  spread between a baseline's runs); add adds runs to a baseline. RUN\n"
    "  is a run id (or a unique prefix), another baseline's name or 'last'\n"
    "  (the default: the newest stored run). NAME: a letter, then letters,\n"
    "  digits, '.', '_' or '-', at most 64 characters; at most 64 runs.\n"
    "  rebase measures NAME's benchmarks again on this machine, as its\n"
    "  runs were measured (config, parameters, sampling), stores the run\n"
    "  and makes it the baseline: the way on after a new machine, kernel\n"
    "  or library that is meant to stay (check and compare name the\n"
    "  difference). Under mpirun it runs on every rank, as check does.\n";

int sb_cmd_check(int argc, char **argv);

/* `baseline rebase NAME [options]`: the gate's measurement with the
 * baseline's config, then the name carried over (cmd_check.c). */
static int rebase(int argc, char **argv)
{
    enum { MAXARG = 32 };
    char *cargv[MAXARG];
    int n = 0;
    if (argc < 3 || argv[2][0] == '-')
        return sb_cli_usage("baseline", "usage: baseline rebase NAME "
                                        "[--db PATH] [--min-time S] "
                                        "[--repeat N]");
    cargv[n++] = "check";
    cargv[n++] = "--baseline";
    cargv[n++] = argv[2];
    cargv[n++] = "--rebase";
    for (int i = 3; i < argc; i++) {
        if (n + 1 >= MAXARG)
            return sb_cli_usage("baseline", "rebase: too many arguments");
        cargv[n++] = argv[i];
    }
    cargv[n] = NULL;
    return sb_cmd_check(n, cargv);
}

static int print_baseline(const sb_store_baseline *b, void *arg)
{
    int *n = arg;
    if (*n == 0)
        printf("%-20s %-28s %-26s %5s %8s  %s\n", "name", "newest run",
               "run started", "runs", "results", "tags");
    (*n)++;
    printf("%-20s %-28s %-26s %5ld %8ld  %s\n", b->name, b->run_id,
           b->started_at, b->n_runs, b->n_results,
           strcmp(b->tags, "{}") ? b->tags : "");
    return 0;
}

int sb_cmd_baseline(int argc, char **argv)
{
    enum { MAXPOS = 2 + SB_STORE_BASELINE_RUNS_MAX };
    if (argc >= 2 && strcmp(argv[1], "rebase") == 0)
        return rebase(argc, argv);
    const char *db = NULL, *pos[MAXPOS] = {0};
    int npos = 0;
    const sb_cli_val vals[] = {{"--db", &db}, {NULL, NULL}};
    for (int i = 1; i < argc; i++) {
        int m = sb_cli_vals(argc, argv, &i, vals, baseline_help);
        if (m > 1)
            return m == SB_CLI_HELP ? 0 : 2;
        if (m)
            continue;
        if (argv[i][0] == '-' && argv[i][1]) {
            return sb_cli_usage("baseline", "unknown option '%s'", argv[i]);
        } else if (npos < MAXPOS) {
            pos[npos++] = argv[i];
        } else {
            return sb_cli_usage("baseline", "too many runs (at most %d)",
                                SB_STORE_BASELINE_RUNS_MAX);
        }
    }
    if (npos == 0)
        return sb_cli_usage("baseline",
                            "expected 'set NAME [RUN...]', "
                            "'add NAME RUN...', 'list', 'rm NAME' or "
                            "'rebase NAME'");
    const char *verb = pos[0];
    bool is_set = strcmp(verb, "set") == 0, is_rm = strcmp(verb, "rm") == 0,
         is_list = strcmp(verb, "list") == 0, is_add = strcmp(verb, "add") == 0;
    if (!is_set && !is_rm && !is_list && !is_add)
        return sb_cli_usage("baseline",
                            "unknown action '%s': expected set, "
                            "add, list, rm or rebase",
                            verb);
    if ((is_set && npos < 2) || (is_add && npos < 3) || (is_rm && npos != 2) ||
        (is_list && npos != 1))
        return sb_cli_usage("baseline", "usage: baseline set NAME [RUN...] | "
                                        "add NAME RUN... | list | rm NAME");

    sb_err err = {0};
    sb_store *st;
    char path[4096];
    if (sb_store_open_default_mode(db, is_list ? SB_STORE_RO : SB_STORE_RW, &st,
                                   path, sizeof path, &err))
        return sb_cli_error(&err);
    int rc = 0;
    if (is_set || is_add) {
        rc = sb_store_baseline_set_runs(st, pos[1], pos + 2, npos - 2, is_add,
                                        &err);
        char ids[SB_STORE_BASELINE_RUNS_MAX][64];
        int n = 0;
        if (!rc)
            rc = sb_store_baseline_runs(st, pos[1], ids,
                                        SB_STORE_BASELINE_RUNS_MAX, &n, &err);
        if (!rc) {
            printf("baseline %s = run%s", pos[1], n == 1 ? "" : "s");
            for (int i = 0; i < n; i++)
                printf(" %s", ids[i]);
            putchar('\n');
        }
    } else if (is_rm) {
        rc = sb_store_baseline_rm(st, pos[1], &err);
        if (!rc)
            printf("baseline %s removed\n", pos[1]);
    } else {
        int n = 0;
        rc = sb_store_baseline_list(st, print_baseline, &n, &err);
        if (!rc && n == 0)
            printf("no baselines in %s\n", sb_store_file(st));
    }
    sb_store_close(st);
    return rc ? sb_cli_error(&err) : 0;
}
