/*
 * cmd_compare.c — `solbench compare A B`: per benchmark and parameter
 * point, A's and B's headline figures, the change, the p-value of a
 * two-sided Mann–Whitney U test on the raw samples and a verdict. Runs
 * whose configs or machines differ are refused (exit 2) with the list of
 * differing fields, unless --allow-mismatch.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "solbench/compare.h"
#include "solbench/store.h"

static const char compare_help[] =
    "usage: solbench compare A B [options]\n"
    "  A, B: a run id (or a unique prefix), a baseline name, 'last', or a\n"
    "        JSON run document (a path to an existing file)\n"
    "  --alpha P          significance level of the U test (default 0.01)\n"
    "  --threshold PCT    minimal change that counts, percent (default 5)\n"
    "  --allow-mismatch   compare runs whose config or machine differ; every\n"
    "                     line is then marked 'mismatched'\n"
    "  --json FILE        write the comparison (schema solbench.compare/1)\n"
    "  --db PATH          results database\n"
    "The exit code is 0 when the comparison was made, whatever the verdicts\n"
    "(use 'solbench check' to gate), 2 on bad input or refused runs.\n";

/* Loads one side: an existing file is a JSON run document; anything else
 * is looked up in the store (opened on first need). */
static int load_side(const char *ref, const char *db, sb_store **st,
                     sb_run *run, sb_err *err)
{
    struct stat sb;
    if (stat(ref, &sb) == 0 && S_ISREG(sb.st_mode))
        return sb_run_read_json(ref, run, err);
    if (!*st) {
        int rc = sb_store_open_default_mode(db, SB_STORE_RO, st, NULL, 0, err);
        if (rc) {
            sb_run_init(run); /* so the caller can free it */
            return rc;
        }
    }
    return sb_store_load_run(*st, ref, run, err); /* initialises run */
}

int sb_cmd_compare(int argc, char **argv)
{
    const char *db = NULL, *json = NULL, *refs[2] = {NULL, NULL};
    sb_cmp_opts o;
    sb_cmp_opts_default(&o);
    const sb_cli_val vals[] = {{"--db", &db}, {"--json", &json}, {NULL, NULL}};
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m = sb_cli_vals(argc, argv, &i, vals, compare_help);
        if (m > 1)
            return m == SB_CLI_HELP ? 0 : 2;
        if (m)
            continue;
        if ((m = sb_cli_opt(argc, argv, &i, "--alpha", &v))) {
            if (m < 0 || sb_cli_number("compare", "--alpha", v, 1e-300,
                                       0.999999, &o.alpha))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--threshold", &v))) {
            if (m < 0 || sb_cli_number("compare", "--threshold", v, 0, 1e6,
                                       &o.threshold_pct))
                return 2;
        } else if (strcmp(argv[i], "--allow-mismatch") == 0) {
            o.allow_mismatch = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return sb_cli_usage("compare",
                                "unknown option '%s' (see 'solbench compare "
                                "--help')",
                                argv[i]);
        } else if (!refs[0]) {
            refs[0] = argv[i];
        } else if (!refs[1]) {
            refs[1] = argv[i];
        } else {
            return sb_cli_usage("compare", "two runs expected; '%s' is extra",
                                argv[i]);
        }
    }
    if (!refs[1])
        return sb_cli_usage("compare", "two runs expected (usage: compare A "
                                       "B)");

    sb_err err = {0};
    struct stat jid;
    /* The report file is tried before the runs are read and compared. */
    if (json && sb_cli_check_out("--json", json, &jid, &err))
        return sb_cli_error(&err);
    sb_store *st = NULL;
    sb_run a, b;
    sb_run_init(&b);
    int rc = 0;
    if (load_side(refs[0], db, &st, &a, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    sb_run_free(&b); /* load_side initialises it again */
    if (load_side(refs[1], db, &st, &b, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }

    struct stat fa, fb;
    bool from_store = stat(refs[0], &fa) != 0 && stat(refs[1], &fb) != 0;
    if (from_store && strcmp(a.run_id, b.run_id) == 0) {
        /* baseline set nightly, then compare nightly last: one run */
        sb_fail(&err, SB_EINVAL,
                "%s and %s are the same run (%s): a run compared with itself "
                "shows no change; make a new run first (solbench run, or "
                "solbench check --baseline %s)",
                refs[0], refs[1], a.run_id, refs[0]);
        rc = sb_cli_error(&err);
        goto out;
    }
    char pair[160];
    snprintf(pair, sizeof pair, "runs %s and %s", a.run_id, b.run_id);
    struct stat sa;
    bool a_named = isalpha((unsigned char)refs[0][0]) &&
                   strcmp(refs[0], "last") != 0 && stat(refs[0], &sa) != 0;
    int like =
        sb_cli_like_with_like("compare", &a, &b, pair, "A vs B",
                              o.allow_mismatch, a_named ? refs[0] : NULL);
    if (like == 2) {
        rc = 2;
        goto out;
    }
    if (like == 1)
        putchar('\n');

    sb_cmp c;
    if (sb_compare_runs(&a, &b, &o, &c, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    sb_cmp_print(stdout, &c);
    if (json && sb_cmp_write_json(&c, json, &err))
        rc = sb_cli_error(&err);
    sb_cmp_free(&c);
out:
    sb_run_free(&a);
    sb_run_free(&b);
    sb_store_close(st);
    return rc;
}
