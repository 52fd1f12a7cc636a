/*
 * cmd_check.c — `solbench check --baseline NAME`: the regression gate.
 * Re-runs the benchmarks a baseline holds with the baseline's config
 * (suite, selection, parameters, threads, sampling), stores the new run,
 * compares it point by point against every run the baseline holds (the
 * spread between them included) and exits 1 if any point regressed (or a
 * result failed its verification), 0 otherwise. A regressed point is
 * measured again --confirm N times (default 2, the later ones after a
 * pause) and the verdict kept only if it holds every time (--no-confirm
 * skips that). The logic is the gate (src/store/gate.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "cli/cli.h"
#include "solbench/compare.h"
#include "solbench/gate.h"
#include "solbench/runner.h"
#include "solbench/changes.h"
#include "solbench/store.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"

static const char check_help[] =
    "usage: solbench check --baseline NAME [options]\n"
    "  --baseline NAME    the baseline (a name, run id or 'last'); a\n"
    "                     baseline of several runs judges each change\n"
    "                     against the spread between them\n"
    "  --confirm [N]      re-measure each regressed point N times (default\n"
    "                     2, the second and later after --confirm-pause);\n"
    "                     it fails only if it regresses every time\n"
    "  --confirm-pause S  seconds waited before the second and later\n"
    "                     re-measurements (default 10)\n"
    "  --no-confirm       fail on a first regression (--confirm 0)\n"
    "  --update-baseline  after a pass, add the new run to the baseline\n"
    "                     (keeping its newest --keep runs, default 10)\n"
    "  --keep N           runs --update-baseline keeps (2..64)\n"
    "  --junit FILE       JUnit XML report, one testcase per point\n"
    "  --markdown FILE    Markdown summary table (for a CI comment)\n"
    "  --json FILE        the comparison (schema solbench.compare/1)\n"
    "  --alpha P          significance level (default 0.01)\n"
    "  --threshold PCT    minimal change that counts, percent (default 5)\n"
    "  --min-time S       override the baseline's seconds per point\n"
    "  --repeat N         override the baseline's samples per point\n"
    "  --allow-mismatch   compare even if config or machine differ\n"
    "  --tag key=value    label the new run\n"
    "  --commit SHA       the code's commit it measured (default: the\n"
    "                     working directory's git HEAD)\n"
    "  --history [N]      judge by each point's history instead of the\n"
    "                     baseline's runs: a change point among the last N\n"
    "                     runs of its series on this machine (default 10,\n"
    "                     at least 5: a change is called after 5 runs)\n"
    "                     against the figure's direction fails, by\n"
    "                     --alpha and --threshold\n"
    "                     (docs/HISTORY.md; no report files)\n"
    "  --no-store         do not store the new run\n"
    "  --db PATH          results database\n"
    "  --quiet            print only the verdict summary\n"
    "Exit code: 0 no regression, 1 a point regressed or failed its\n"
    "verification, 2 bad input or runs that cannot be compared.\n";

typedef struct check_opts {
    const char *baseline, *db, *junit, *markdown, *json, *commit;
    bool no_confirm, no_store, quiet, update;
    int history; /* --history N: the window of runs judged, 0 off */
    bool rebase; /* `baseline rebase`: measure as the baseline did, here,
                    and carry its name over to the new run; no verdict */
    int keep;
    sb_gate_confirm_opts confirm;
    double min_time; /* < 0: the baseline's */
    int repeat;      /* < 0: the baseline's */
    sb_cmp_opts cmp;
    json_t *tags;
} check_opts;

static int parse_args(int argc, char **argv, check_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        double d = 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(check_help, stdout);
            return 1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--baseline", &v))) {
            if (m < 0)
                return -1;
            o->baseline = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return -1;
            o->db = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--junit", &v))) {
            if (m < 0)
                return -1;
            o->junit = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--markdown", &v))) {
            if (m < 0)
                return -1;
            o->markdown = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return -1;
            o->json = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--alpha", &v))) {
            if (m < 0 ||
                sb_cli_number("check", "--alpha", v, 1e-300, 0.999999, &d))
                return -1;
            o->cmp.alpha = d;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--threshold", &v))) {
            if (m < 0 || sb_cli_number("check", "--threshold", v, 0, 1e6, &d))
                return -1;
            o->cmp.threshold_pct = d;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--min-time", &v))) {
            if (m < 0 || sb_cli_number("check", "--min-time", v, 0, 86400, &d))
                return -1;
            o->min_time = d;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--repeat", &v))) {
            if (m < 0 ||
                sb_cli_int("check", "--repeat", v, 1, 100000, &o->repeat))
                return -1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--tag", &v))) {
            if (m < 0)
                return -1;
            if (sb_cli_tag("check", v, o->tags))
                return -1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--commit", &v))) {
            if (m < 0)
                return -1;
            o->commit = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--keep", &v))) {
            if (m < 0 || sb_cli_int("check", "--keep", v, 2,
                                    SB_STORE_BASELINE_RUNS_MAX, &o->keep))
                return -1;
        } else if (strcmp(argv[i], "--confirm") == 0 &&
                   (i + 1 >= argc || !isdigit((unsigned char)argv[i + 1][0]))) {
            o->no_confirm = false; /* without a count: the default count */
            o->confirm.times = SB_GATE_CONFIRM_TIMES;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--confirm", &v))) {
            if (m < 0 ||
                sb_cli_int("check", "--confirm", v, 0, 10, &o->confirm.times))
                return -1;
            o->no_confirm = o->confirm.times == 0;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--confirm-pause", &v))) {
            if (m < 0 || sb_cli_number("check", "--confirm-pause", v, 0, 3600,
                                       &o->confirm.pause_s))
                return -1;
        } else if (strcmp(argv[i], "--no-confirm") == 0) {
            o->no_confirm = true;
        } else if (strcmp(argv[i], "--update-baseline") == 0) {
            o->update = true;
        } else if (strcmp(argv[i], "--rebase") == 0) {
            o->rebase = true; /* from `solbench baseline rebase` */
        } else if (strcmp(argv[i], "--allow-mismatch") == 0) {
            o->cmp.allow_mismatch = true;
        } else if (strcmp(argv[i], "--history") == 0) {
            o->history = 10;
            if (i + 1 < argc && argv[i + 1][0] >= '0' &&
                argv[i + 1][0] <= '9' &&
                sb_cli_int("check", "--history", argv[++i], SB_CP_MIN_SIZE,
                           100000, &o->history))
                return -1;
        } else if (strcmp(argv[i], "--no-store") == 0) {
            o->no_store = true;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            o->quiet = true;
        } else {
            sb_cli_usage("check",
                         "unknown argument '%s' (see 'solbench check "
                         "--help')",
                         argv[i]);
            return -1;
        }
    }
    if (!o->baseline) {
        sb_cli_usage("check", "--baseline NAME is required");
        return -1;
    }
    if (o->rebase &&
        (o->no_store || o->update || o->junit || o->markdown || o->json)) {
        sb_cli_usage("baseline", "rebase measures, stores and renames: it "
                                 "takes no --no-store, --update-baseline or "
                                 "report files");
        return -1;
    }
    if (sb_cli_commit_tag("check", o->commit, o->tags))
        return -1;
    if (o->history && (o->no_store || o->update || o->rebase || o->junit ||
                       o->markdown || o->json)) {
        sb_cli_usage("check", "--history judges the stored series: it takes "
                              "no --no-store, --update-baseline or report "
                              "files");
        return -1;
    }
    if (o->update && o->no_store) {
        sb_cli_usage("check", "--update-baseline needs the new run stored "
                              "(not --no-store)");
        return -1;
    }
    return 0;
}

static void say_confirming(const char *what, void *arg)
{
    if (!*(const bool *)arg)
        printf("confirming: %s ...\n", what);
    fflush(stdout);
}

/* The reports' files (--junit, --markdown, --json) writable and
 * distinct, or an error. */
static int check_outputs(const check_opts *o, sb_err *err)
{
    const char *outs[3] = {o->junit, o->markdown, o->json},
               *opts[3] = {"--junit", "--markdown", "--json"};
    struct stat ids[3];
    for (int k = 0; k < 3; k++) {
        if (!outs[k])
            continue;
        int bad = sb_cli_check_out(opts[k], outs[k], &ids[k], err);
        for (int j = 0; j < k && !bad; j++)
            if (outs[j] && sb_cli_same_out(outs[j], &ids[j], outs[k], &ids[k]))
                bad = sb_fail(err, SB_EINVAL,
                              "%s %s and %s %s name the same file", opts[j],
                              outs[j], opts[k], outs[k]);
        if (bad)
            return bad;
    }
    return 0;
}

/* Whether the baseline's newest run and this one (not yet measured)
 * were made alike; rank 0 says why not (and writes the JUnit error),
 * the other ranks decide alike in silence. */
static bool check_alike(const check_opts *o, const sb_run *newest,
                        const sb_run *now, const sb_ctx *ctx)
{
    sb_run view = *now; /* shares now's members; never freed */
    view.config = sb_gate_comparable_config(newest->config, now->config,
                                            o->min_time >= 0, o->repeat > 0);
    char pair[160];
    snprintf(pair, sizeof pair, "baseline %s and this run", o->baseline);
    int like = 0;
    if (ctx->rank == 0) {
        like = sb_cli_like_with_like("check", newest, &view, pair,
                                     "baseline vs now", o->cmp.allow_mismatch,
                                     o->baseline);
    } else {
        sb_diff_list d = {0};
        if (sb_runs_mismatch(newest, &view, &d) > 0 && !o->cmp.allow_mismatch)
            like = 2;
        sb_diff_free(&d);
    }
    json_decref(view.config);
    if (like != 2)
        return true;
    if (o->junit && ctx->rank == 0) {
        char msg[400];
        sb_err err = {0};
        snprintf(msg, sizeof msg,
                 "baseline %s (run %s) and this run were not made "
                 "alike: nothing measured (see the log)",
                 o->baseline, newest->run_id);
        if (sb_junit_write_error(o->junit, "solbench.check", "like-with-like",
                                 msg, &err))
            sb_cli_error(&err);
    }
    return false;
}

/* The new run stored (or kept beside a store that cannot take it, and
 * then an error). 0, or the exit code of the error said. */
static int check_store(const check_opts *o, sb_store *st, const sb_run *now,
                       const char *path)
{
    sb_err err = {0};
    if (sb_store_save_or_keep(st, now, path, &err))
        return sb_cli_error(&err);
    if (!o->quiet)
        printf("stored as run %s in %s\n", now->run_id, sb_store_file(st));
    return 0;
}

/* --history: each point of the new (stored) run judged by its series on
 * this machine: a change point among its last o->history runs against the
 * figure's direction is a regression. The exit code. */
static int check_history(const check_opts *o, sb_store *st, const sb_run *now)
{
    sb_err err = {0};
    sb_series_set set;
    sb_cp_opts cpo;
    sb_cp_opts_default(&cpo);
    /* the gate's own significance and smallest change */
    cpo.alpha = o->cmp.alpha;
    cpo.min_change_pct = o->cmp.threshold_pct;
    if (sb_series_load(st, NULL, 0, &set, &err))
        return sb_cli_error(&err);
    sb_series_keep_run(&set, now->run_id); /* only this run's points */
    if (sb_series_detect(&set, &cpo, &err)) {
        sb_series_free(&set);
        return sb_cli_error(&err);
    }
    int regressed = 0, improved = 0, points = 0, short_ = 0;
    for (size_t i = 0; i < set.n; i++) {
        const sb_series *s = &set.s[i];
        points++;
        short_ += !sb_series_testable(s, &cpo);
        for (size_t k = 0; k < s->n_cps; k++) {
            const sb_cp_point *cp = &s->cps[k];
            if (cp->index + (size_t)o->history < s->n)
                continue; /* judged by an earlier check */
            bool bad = sb_series_regressed(s, cp);
            regressed += bad;
            improved += !bad;
            printf("%s (history): %s %s: %s %.4g -> %.4g %s (%+.1f%%, p "
                   "%.2g) from run %s%s%s, %zu run%s ago\n",
                   bad ? "REGRESSED" : "improved", s->bench, s->params,
                   s->metric, cp->before, cp->after, s->unit, cp->change_pct,
                   cp->p, s->runs[cp->index].run_id,
                   s->runs[cp->index].commit[0] ? " commit " : "",
                   s->runs[cp->index].commit, s->n - 1 - cp->index,
                   s->n - 1 - cp->index == 1 ? "" : "s");
        }
    }
    sb_series_free(&set);
    int invalid = sb_gate_count_invalid(&now->results);
    int rc = regressed || invalid ? 1 : 0;
    printf("check --history: %s (%d point%s, %d regressed, %d improved in "
           "the last %d runs; %d with fewer than %d runs, too short to "
           "judge%s)\n",
           rc ? "FAIL" : "PASS", points, points == 1 ? "" : "s", regressed,
           improved, o->history, short_, 2 * cpo.min_size,
           invalid ? "; a result failed its verification" : "");
    return rc;
}

/* --rebase: the baseline's name moves to the new (stored) run when every
 * point verified. The exit code. */
static int check_rebase(const check_opts *o, sb_store *st, const sb_run *now,
                        const sb_run *newest, int nbase)
{
    int bad = sb_gate_count_invalid(&now->results);
    if (bad) {
        fprintf(stderr,
                "solbench baseline: rebase %s: %d result%s failed "
                "verification; the baseline is unchanged (run %s "
                "stored)\n",
                o->baseline, bad, bad == 1 ? "" : "s", now->run_id);
        return 1;
    }
    const char *ref = now->run_id;
    sb_err err = {0};
    if (sb_store_baseline_set_runs(st, o->baseline, &ref, 1, false, &err))
        return sb_cli_error(&err);
    printf("baseline %s rebased: run %s (was %s%s), measured as the "
           "baseline was on this machine\n",
           o->baseline, now->run_id, newest->run_id,
           nbase > 1 ? " and older" : "");
    return 0;
}

/* The comparison printed and written (--junit, --markdown, --json), and
 * each result that failed its verification named. The exit code: 0 pass,
 * 1 a regression or a failed verification, 2 a report not written. */
static int check_report(const check_opts *o, const sb_cmp *c,
                        const sb_result_list *results, double seconds)
{
    sb_err err = {0};
    if (!o->quiet) {
        putchar('\n');
        sb_cmp_print(stdout, c);
    }
    int rc = 0, invalid = 0;
    for (size_t i = 0; i < results->n; i++) {
        const sb_result *r = &results->items[i];
        if (!r->valid && !r->skipped) {
            char pbuf[256];
            fprintf(stderr,
                    "solbench check: %s %s failed its "
                    "verification\n",
                    r->bench, sb_params_fmt(&r->params, pbuf, sizeof pbuf));
            invalid++;
        }
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->lines[i].verdict == SB_VERDICT_REGRESSED)
            printf("REGRESSED: %s %s: %s %.4g -> %.4g %s (%+.1f%%, p %.2g)\n",
                   c->lines[i].bench, c->lines[i].params, c->lines[i].metric,
                   c->lines[i].a_value, c->lines[i].b_value, c->lines[i].unit,
                   c->lines[i].change_pct, c->lines[i].test.p);
    /* verdicts on figures that may not repeat are weak: say which */
    if (!o->quiet)
        sb_print_stability(stdout, results);
    char title[200];
    snprintf(title, sizeof title, "solbench check against baseline %s",
             o->baseline);
    if ((o->junit &&
         sb_cmp_write_junit(c, "solbench.check", seconds, o->junit, &err)) ||
        (o->markdown && sb_cmp_write_markdown(c, title, o->markdown, &err)) ||
        (o->json && sb_cmp_write_json(c, o->json, &err)))
        rc = sb_cli_error(&err);
    else if (c->count[SB_VERDICT_REGRESSED] > 0 || invalid > 0)
        rc = 1;
    printf("check: %s (%d regressed, %d improved, %d unchanged, %d not "
           "comparable)\n",
           rc == 0 ? "PASS" : (rc == 1 ? "FAIL" : "ERROR"),
           c->count[SB_VERDICT_REGRESSED], c->count[SB_VERDICT_IMPROVED],
           c->count[SB_VERDICT_UNCHANGED], c->count[SB_VERDICT_NOT_COMPARABLE]);
    return rc;
}

/* The baseline's selection and plan, made as `solbench run` makes them,
 * the session (MPI) begun between the two. 0, or the exit code of the
 * error said. */
static int check_plan(const check_opts *o, const sb_run *newest,
                      const sb_gate_sel *bc, sb_ctx *ctx, int *argc,
                      char ***argv, sb_selection *sel, sb_plan *plan,
                      bool *session)
{
    sb_err err = {0};
    if (sb_select(bc->has_areas ? bc->areas : NULL,
                  bc->has_names ? bc->names : NULL, ctx->suite,
                  bc->has_backend ? ctx->backend : NULL, sel, &err) == 0) {
        if (sb_session_begin(sel, argc, argv, ctx, &err))
            return sb_cli_error(&err);
        *session = true;
        if (sb_plan_build(sel, &bc->user, ctx, plan, &err) == 0)
            return 0;
    }
    /* what it names comes from the baseline's stored config */
    sb_err inner = err;
    sb_fail(&err, inner.code, "baseline %s (run %s), its config: %s",
            o->baseline, newest->run_id, inner.msg);
    return sb_cli_error(&err);
}

/* The new run compared with the baseline's runs (the config compared
 * as the check made it), and a regression confirmed by re-measuring
 * where confirm says so. 0 with c filled (the caller frees it), or the
 * exit code of the error said. */
static int check_compare(const check_opts *o, const sb_run *base, int nbase,
                         const sb_run *now, const sb_plan *plan,
                         const int *item_of, sb_ctx *ctx, bool confirm,
                         sb_cmp *c)
{
    sb_err err = {0};
    const sb_run *newest = &base[nbase - 1];
    sb_run view = *now; /* shares now's members; never freed */
    view.config = sb_gate_comparable_config(newest->config, now->config,
                                            o->min_time >= 0, o->repeat > 0);
    int crc = sb_compare_baseline(base, nbase, &view, &o->cmp, c, &err);
    json_decref(view.config);
    if (crc)
        return sb_cli_error(&err);
    snprintf(c->a_id, sizeof c->a_id, "%s (%s%s)", o->baseline, newest->run_id,
             nbase > 1 ? " and older" : "");
    if (confirm && c->count[SB_VERDICT_REGRESSED] > 0 &&
        sb_gate_confirm(c, base, nbase, plan, item_of, ctx, &o->cmp,
                        &o->confirm, say_confirming, (void *)&o->quiet, &err)) {
        sb_cmp_free(c);
        return sb_cli_error(&err);
    }
    return 0;
}

int sb_cmd_check(int argc, char **argv)
{
    check_opts o = {0};
    bool mpi_started = false;
    o.min_time = -1;
    o.confirm.times = SB_GATE_CONFIRM_TIMES;
    o.confirm.pause_s = SB_GATE_CONFIRM_PAUSE_S;
    o.repeat = -1;
    o.keep = 10;
    sb_cmp_opts_default(&o.cmp);
    o.tags = json_object();
    int rc = 2, pa = parse_args(argc, argv, &o);
    if (pa) {
        json_decref(o.tags);
        return pa > 0 ? 0 : 2;
    }

    sb_err err = {0};
    sb_store *st = NULL;
    sb_run *base = NULL, now;
    int nbase = 0;
    sb_run_init(&now);
    sb_selection sel = {0};
    sb_plan plan = {0};
    int *item_of = NULL;
    sb_gate_sel bc;
    memset(&bc, 0, sizeof bc);
    char path[4096];

    /* The reports' files are tried before measuring, not after. */
    if (check_outputs(&o, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    if (sb_store_open_default(o.db, &st, path, sizeof path, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    /* The baseline's runs, oldest first, made alike. */
    if (sb_gate_load_baseline(st, o.baseline, o.cmp.allow_mismatch, &base,
                              &nbase, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    const sb_run *newest = &base[nbase - 1];

    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    if (sb_gate_config(newest->config, o.baseline, &ctx, &bc, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    if (o.min_time >= 0)
        ctx.min_time = o.min_time;
    if (o.repeat > 0)
        ctx.repeat = o.repeat;
    const char *areas = bc.has_areas ? bc.areas : NULL;
    const char *names = bc.has_names ? bc.names : NULL;

    /* Selection, then MPI exactly as `solbench run` starts them, so the
     * topology part of the config comes out the same. Under mpirun every
     * rank runs this command and needs the database (a shared file
     * system); rank 0 alone stores, compares and reports. */
    int prc = check_plan(&o, newest, &bc, &ctx, &argc, &argv, &sel, &plan,
                         &mpi_started);
    if (prc) {
        rc = prc;
        goto out;
    }
    bool confirm = !o.no_confirm && ctx.nranks <= 1;
    if (!o.no_confirm && ctx.nranks > 1 && !o.quiet && ctx.rank == 0)
        printf("note: no confirmation under MPI (re-measuring one point would "
               "need every rank again): a regression fails on its first "
               "verdict; a larger --repeat steadies it\n");
    /* The store must take the new run: found now, not after measuring. */
    if (!o.no_store && ctx.rank == 0 &&
        sb_store_check_writable(st, 16.0 * 1048576.0, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }

    if (!o.quiet && ctx.rank == 0)
        printf("%s baseline %s (%d run%s, newest %s): %d point%s, "
               "%d thread%s\n",
               o.rebase ? "rebase: measuring as" : "check against", o.baseline,
               nbase, nbase == 1 ? "" : "s", newest->run_id, plan.n,
               plan.n == 1 ? "" : "s", ctx.threads,
               ctx.threads == 1 ? "" : "s");
    fflush(stdout);

    /* The new run, made exactly as `solbench run` makes one. */
    json_object_set_new(o.tags, "check_baseline", json_string(o.baseline));
    sb_run_begin(&now, &ctx, areas, names, &bc.user, o.tags);

    /* Like with like, before anything is measured: a check that cannot
     * compare measures nothing and stores nothing (an all-skipped run
     * would become 'last'). Every rank decides alike (same configs). */
    if (!o.rebase && !check_alike(&o, newest, &now, &ctx)) {
        rc = 2;
        goto out;
    }
    double t0 = sb_now();
    if (sb_gate_measure(&plan, &ctx, &now.results, &item_of, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    sb_utc_now(now.ended_at, sizeof now.ended_at);
    if (ctx.rank != 0) {
        rc = 0;
        goto out;
    }

    bool stored = !o.no_store;
    if (stored && (rc = check_store(&o, st, &now, path)))
        goto out;

    if (o.rebase) {
        rc = check_rebase(&o, st, &now, newest, nbase);
        goto out;
    }
    if (o.history) {
        rc = check_history(&o, st, &now);
        goto out;
    }
    sb_cmp c;
    rc =
        check_compare(&o, base, nbase, &now, &plan, item_of, &ctx, confirm, &c);
    if (rc)
        goto out;
    rc = check_report(&o, &c, &now.results, sb_now() - t0);
    sb_cmp_free(&c);
    /* A pass joins the baseline (never a failed run: it would widen the
     * spread that judges the next one). */
    if (rc == 0 && o.update && stored) {
        if (sb_store_baseline_update(st, o.baseline, now.run_id, o.keep, &err))
            rc = sb_cli_error(&err);
        else if (!o.quiet)
            printf("baseline %s: run %s added (its newest %d runs kept)\n",
                   o.baseline, now.run_id, o.keep);
    }
out:
    if (mpi_started)
        sb_session_end();
    free(item_of);
    sb_plan_free(&plan);
    sb_selection_free(&sel);
    sb_gate_free_baseline(base, nbase);
    sb_run_free(&now);
    sb_store_close(st);
    json_decref(o.tags);
    return rc;
}
