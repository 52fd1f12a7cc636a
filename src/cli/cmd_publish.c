/*
 * cmd_publish.c — `solbench publish DIR`: the store's history as a static
 * site in DIR (publish.h, docs/HISTORY.md), then one line saying what was
 * written.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "solbench/publish.h"
#include "solbench/store.h"

static const char publish_help[] =
    "usage: solbench publish DIR [--db PATH] [--since TIME] [--bench GLOB] "
    "[--last N]\n"
    "  Writes the stored history as a static site into DIR (created when\n"
    "  absent; its pages are replaced): index.html, a table per machine of\n"
    "  every series (one point on one machine) with its latest figure, a\n"
    "  sparkline, its trend and its newest change point, and the stored\n"
    "  traces; one page per series with its timeline, change points and\n"
    "  runs; style.css. No script, nothing fetched from elsewhere: it opens\n"
    "  from file:// or from any web server.\n"
    "  --since TIME   only runs started at or after TIME (UTC: YYYY-MM-DD,\n"
    "                 YYYY-MM-DDThh:mm[:ss], or Nd / Nh ago)\n"
    "  --bench GLOB   only these benchmarks ('memory.*')\n"
    "  --last N       only the N newest runs (default 0: all)\n"
    "  --db PATH      results database (default $SOLBENCH_DB, else\n"
    "                 $XDG_DATA_HOME/solbench/results.db)\n";

int sb_cmd_publish(int argc, char **argv)
{
    const char *dir = NULL, *db = NULL;
    sb_publish_opts o = {0};
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(publish_help, stdout);
            return 0;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return 2;
            db = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--since", &v))) {
            if (m < 0)
                return 2;
            o.since = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--bench", &v))) {
            if (m < 0)
                return 2;
            o.bench = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--last", &v))) {
            if (m < 0 ||
                sb_cli_int("publish", "--last", v, 0, 1000000000, &o.last))
                return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return sb_cli_usage("publish",
                                "unknown option '%s' (see 'solbench publish "
                                "--help')",
                                argv[i]);
        } else if (dir) {
            return sb_cli_usage("publish", "one folder only: '%s' and '%s'",
                                dir, argv[i]);
        } else {
            dir = argv[i];
        }
    }
    if (!dir || !dir[0])
        return sb_cli_usage("publish", "no folder given (usage: publish DIR)");
    sb_err err = {0};
    if (sb_publish_check(dir, &o, &err))
        return sb_cli_error(&err);
    sb_store *st;
    char path[4096];
    if (sb_store_open_default_mode(db, SB_STORE_RO, &st, path, sizeof path,
                                   &err))
        return sb_cli_error(&err);
    sb_publish_stats ps;
    int rc = sb_publish(st, dir, &o, &ps, &err);
    sb_store_close(st);
    if (rc)
        return sb_cli_error(&err);
    printf("published %zu page%s to %s: %zu series, %zu change point%s, "
           "%zu trace%s; %.1f KB in %.2f s\n",
           ps.pages, ps.pages == 1 ? "" : "s", dir, ps.series, ps.change_points,
           ps.change_points == 1 ? "" : "s", ps.traces,
           ps.traces == 1 ? "" : "s", (double)ps.bytes / 1000.0, ps.seconds);
    return 0;
}
