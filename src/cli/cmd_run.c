/*
 * cmd_run.c — `solbench run`: select, plan (every point checked before any
 * allocation), measure, print, export and store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "cli/cli.h"
#include "solbench/output.h"
#include "solbench/runner.h"
#include "solbench/stability.h"
#include "solbench/store.h"
#include "solbench/util.h"
#include "solbench/sysinfo.h"

/* Free disk a run's commit is sure to find: its rows and samples (a few
 * MiB for the largest suites) and the WAL's growth. */
#define SB_RUN_STORE_NEED (16.0 * 1048576.0)

static const char run_help[] =
    "usage: solbench run [options]\n"
    "  --area A,...        areas: compute, memory, transfer, attention, moe,\n"
    "                      ops, network\n"
    "  --bench NAME,...    benchmarks by name (see 'solbench list'); a\n"
    "                      repeated --bench or --area adds to the list\n"
    "  --suite quick|full  default parameter set and selection (quick)\n"
    "  -p key=value        a parameter; lists a,b,c and ranges lo..hi:x2;\n"
    "                      -p SCOPE:key=value for one benchmark or area\n"
    "                      (-p ops:dtype=bf16)\n"
    "  --threads N         threads for CPU kernels (default: one per core)\n"
    "  --repeat N          at least N samples per point (default 5)\n"
    "  --min-time S        at least S seconds of samples per point\n"
    "                      (default 0.2 quick, 0.5 full)\n"
    "  --warmup N          untimed runs before sampling (default 1)\n"
    "  --interleave        set up every point first, then sample them in\n"
    "                      rounds (one sample each), so points compared\n"
    "                      as a ratio see the same stretches of time\n"
    "  --backend cpu|cuda|pjrt  only this backend (default: every one\n"
    "                      present; pjrt when a plugin is named)\n"
    "  --pjrt-plugin PATH  the PJRT plugin (libtpu, a CUDA or CPU plugin;\n"
    "                      default $SOLBENCH_PJRT_PLUGIN, else one\n"
    "                      installed as a Python package (libtpu, the JAX\n"
    "                      CUDA plugin), else the one found at build time)\n"
    "  --timeout S         per-point limit for network benchmarks\n"
    "  --json FILE         write the run document (schema solbench.run/1);\n"
    "                      '-': to stdout, the tables then to stderr\n"
    "  --csv FILE          write one CSV row per result ('-': stdout)\n"
    "  --db PATH           results database (default $SOLBENCH_DB, else\n"
    "                      $XDG_DATA_HOME/solbench/results.db)\n"
    "  --no-store          do not store the run\n"
    "  --tag key=value     label the run (image=..., driver=...)\n"
    "  --commit SHA        the code's commit the run measured (tag commit;\n"
    "                      default: the working directory's git HEAD)\n"
    "  --require-stable    exit 1 when a result is unstable (its samples\n"
    "                      or the machine say it may not repeat)\n"
    "  --force             run points that need more than 80% of the\n"
    "                      memory available (refused otherwise)\n"
    "  --plan              print the points the run would measure (their\n"
    "                      parameters and memory) and stop\n"
    "  --quiet             no tables on stdout\n";

/* A repeated --bench or --area adds to the list: "a" then "b" is "a,b".
 * NULL when the joined list does not fit. */
static const char *sb__join(const char *have, const char *more, char *buf,
                            size_t len)
{
    char prev[1024];
    snprintf(prev, sizeof prev, "%s", have ? have : ""); /* have may be buf */
    int n = have ? snprintf(buf, len, "%s,%s", prev, more)
                 : snprintf(buf, len, "%s", more);
    return n < 0 || (size_t)n >= len ? NULL : buf;
}

/* The plan, one line a point: benchmark@backend, its parameters, the
 * memory it will allocate; then the count and the largest footprint. */
static void print_plan(const sb_plan *plan, const sb_ctx *ctx)
{
    double most = 0;
    for (int i = 0; i < plan->n; i++) {
        const sb_plan_item *it = &plan->items[i];
        sb_point pt;
        sb_err e = {0};
        double need = 0;
        if (sb_point_make(it->bench, it->impl, &it->point, &pt, &e) == 0) {
            need = sb_point_footprint(&pt, ctx);
            sb_point_release(&pt);
        }
        most = need > most ? need : most;
        char name[96], pbuf[400], mem[32] = "-";
        snprintf(name, sizeof name, "%s%s%s", it->bench->name,
                 strcmp(it->impl->backend, "cpu") ? "@" : "",
                 strcmp(it->impl->backend, "cpu") ? it->impl->backend : "");
        sb_params_fmt_changed(it->bench, it->impl, &it->point, pbuf,
                              sizeof pbuf);
        if (need > 0)
            sb_fmt_size(need, mem, sizeof mem);
        printf("%-30s %10s  %s\n", name, mem, pbuf);
    }
    char m[32] = "-";
    if (most > 0)
        sb_fmt_size(most, m, sizeof m);
    printf("%d point%s; the largest allocates %s; nothing measured "
           "(--plan)\n",
           plan->n, plan->n == 1 ? "" : "s", m);
}

/* What the command line asked for beyond the context's settings (those
 * go into the sb_ctx as they are parsed). */
typedef struct sb__ropts {
    const char *areas, *names, *json_path, *csv_path, *db_path, *backend;
    const char *commit; /* --commit */
    char area_buf[1024], name_buf[1024];
    bool no_store, quiet, min_time_set, plugin_flag, plan_only, require_stable;
    bool json_out, csv_out; /* --json - and --csv -: a document on stdout */
} sb__ropts;

/* Parses the options into o, user, ctx and tags; returns 0, -1 after
 * --help (printed), else the exit code (the error said). */
static int sb__run_parse(int argc, char **argv, sb__ropts *o, sb_pset *user,
                         sb_ctx *ctx, json_t *tags, sb_err *err)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(run_help, stdout);
            return -1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--area", &v))) {
            if (m < 0)
                return 2;
            if (!(o->areas =
                      sb__join(o->areas, v, o->area_buf, sizeof o->area_buf))) {
                sb_cli_usage("run",
                             "--area: lists longer than %zu "
                             "characters",
                             sizeof o->area_buf - 1);
                return 2;
            }
        } else if ((m = sb_cli_opt(argc, argv, &i, "--bench", &v))) {
            if (m < 0)
                return 2;
            if (!(o->names =
                      sb__join(o->names, v, o->name_buf, sizeof o->name_buf))) {
                sb_cli_usage("run",
                             "--bench: lists longer than %zu "
                             "characters",
                             sizeof o->name_buf - 1);
                return 2;
            }
        } else if ((m = sb_cli_opt(argc, argv, &i, "--suite", &v))) {
            if (m < 0)
                return 2;
            if (strcmp(v, "quick") == 0)
                ctx->suite = SB_SUITE_QUICK;
            else if (strcmp(v, "full") == 0)
                ctx->suite = SB_SUITE_FULL;
            else {
                sb_cli_usage("run", "--suite %s: expected quick or full", v);
                return 2;
            }
        } else if ((m = sb_cli_opt(argc, argv, &i, "-p", &v)) ||
                   (m = sb_cli_opt(argc, argv, &i, "--param", &v))) {
            if (m < 0)
                return 2;
            if (sb_pset_add(user, v, err))
                return sb_cli_error(err);
        } else if ((m = sb_cli_opt(argc, argv, &i, "--threads", &v))) {
            if (m < 0 ||
                sb_cli_int("run", "--threads", v, 1, 4096, &ctx->threads))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--repeat", &v))) {
            if (m < 0 ||
                sb_cli_int("run", "--repeat", v, 1, 100000, &ctx->repeat))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--warmup", &v))) {
            if (m < 0 ||
                sb_cli_int("run", "--warmup", v, 0, 1000, &ctx->warmup))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--min-time", &v))) {
            if (m < 0 ||
                sb_cli_number("run", "--min-time", v, 0, 86400, &ctx->min_time))
                return 2;
            o->min_time_set = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--timeout", &v))) {
            if (m < 0 ||
                sb_cli_number("run", "--timeout", v, 0, 86400, &ctx->timeout_s))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--backend", &v))) {
            if (m < 0)
                return 2;
            o->backend = v;
            snprintf(ctx->backend, sizeof ctx->backend, "%s", v);
        } else if ((m = sb_cli_opt(argc, argv, &i, "--pjrt-plugin", &v))) {
            if (m < 0)
                return 2;
            if (!*v) {
                sb_cli_usage("run", "--pjrt-plugin: an empty path");
                return 2;
            }
            setenv("SOLBENCH_PJRT_PLUGIN", v, 1);
            o->plugin_flag = true;
        } else if (strcmp(argv[i], "--plan") == 0) {
            o->plan_only = true;
        } else if (strcmp(argv[i], "--require-stable") == 0) {
            o->require_stable = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return 2;
            o->json_path = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--csv", &v))) {
            if (m < 0)
                return 2;
            o->csv_path = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return 2;
            o->db_path = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--tag", &v))) {
            if (m < 0)
                return 2;
            if (sb_cli_tag("run", v, tags))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--commit", &v))) {
            if (m < 0)
                return 2;
            o->commit = v;
        } else if (strcmp(argv[i], "--interleave") == 0) {
            ctx->interleave = true;
        } else if (strcmp(argv[i], "--force") == 0) {
            ctx->force = true;
        } else if (strcmp(argv[i], "--no-store") == 0) {
            o->no_store = true;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            o->quiet = true;
        } else {
            sb_cli_usage("run",
                         "unknown option '%s' (see 'solbench run --help')",
                         argv[i]);
            return 2;
        }
    }
    return 0;
}

/* Opens the store and tries the output files before measuring, so a bad
 * --db, --json or --csv fails in a moment, not after the whole run;
 * returns nonzero (in err, *st closed) when one fails. */
static int sb__run_check_outputs(const sb__ropts *o, sb_store **st,
                                 char *db_file, size_t db_len, sb_err *err)
{
    struct stat jid, cid;
    if ((o->json_path && !o->json_out &&
         sb_cli_check_out("--json", o->json_path, &jid, err)) ||
        (o->csv_path && !o->csv_out &&
         sb_cli_check_out("--csv", o->csv_path, &cid, err)) ||
        (o->json_out && o->csv_out &&
         sb_fail(err, SB_EINVAL,
                 "--json - and --csv -: one document on stdout")) ||
        (o->json_path && o->csv_path && !o->json_out && !o->csv_out &&
         sb_cli_same_out(o->json_path, &jid, o->csv_path, &cid) &&
         sb_fail(err, SB_EINVAL,
                 "--json %s and --csv %s name the same "
                 "file",
                 o->json_path, o->csv_path)) ||
        (!o->no_store &&
         (sb_store_path(o->db_path, db_file, db_len, err) ||
          sb_store_check_space(db_file, SB_RUN_STORE_NEED, err) ||
          sb_store_open(db_file, st, err) ||
          sb_store_check_writable(*st, SB_RUN_STORE_NEED, err)))) {
        sb_store_close(*st);
        *st = NULL;
        return 1;
    }
    return 0;
}

/* Measures the plan, with the probe of the machine's speed between
 * points (stability.h) where it opens; returns sb_run_plan's code. */
static int sb__run_measure(const sb_plan *plan, sb_ctx *ctx, sb_run *run,
                           sb_err *err)
{
    sb_probe probe;
    sb_err perr = {0};
    bool probing =
        ctx->nranks <= 1 && sb_probe_open(&probe, ctx->threads, &perr) == 0;
    if (probing)
        ctx->probe = &probe;
    int run_rc = sb_run_plan(plan, ctx, &run->results, err);
    if (probing) {
        ctx->probe = NULL;
        sb_probe_close(&probe);
    }
    sb_utc_now(run->ended_at, sizeof run->ended_at);
    return run_rc;
}

/* Judges each result against its point's history on this machine; an
 * earlier stable mark the history no longer bears is withdrawn. Returns
 * how many were. */
static int sb__run_judge_history(sb_store *st, sb_run *run)
{
    int withdrawn = 0;
    sb_err herr = {0};
    if (sb_store_judge_history(st, run, &withdrawn, &herr))
        fprintf(stderr,
                "solbench: warning: the stability history was not read "
                "(%s)\n",
                herr.msg);
    return withdrawn;
}

/* Prints the tables and the stability verdicts (rank 0); returns the exit
 * code the results and the run's error say. */
static int sb__run_report(const sb__ropts *o, const sb_ctx *ctx,
                          const sb_run *run, FILE *human, int withdrawn,
                          int run_rc, sb_err *err)
{
    int rc = 0;
    if (!o->quiet) {
        fprintf(human, "solbench %s  run %s  threads %d\n", sb_version(),
                run->run_id, ctx->threads);
        sb_print_results(human, &run->results);
        sb_print_profile(human, &ctx->ceil);
    }
    /* The unstable results, named with what was seen and the remedy
     * (--quiet: counted only; the JSON carries every verdict). */
    int unstable = 0;
    for (size_t i = 0; i < run->results.n; i++)
        unstable +=
            run->results.items[i].stab_judged && !run->results.items[i].stable;
    if (!o->quiet)
        sb_print_stability(human, &run->results);
    if (withdrawn && !o->quiet)
        fprintf(human,
                "stability: %d earlier result%s on this machine no "
                "longer marked stable (more than %.0f%% from their "
                "point's median now: solbench export RUN --json says why)\n",
                withdrawn, withdrawn == 1 ? "" : "s", 100 * SB_STAB_HISTORY);
    if (unstable && o->require_stable && !run_rc) {
        fprintf(stderr, "solbench: --require-stable: %d result%s unstable\n",
                unstable, unstable == 1 ? "" : "s");
        rc = 1;
    }
    if (run_rc) {
        rc = sb_cli_error(err);
    } else {
        for (size_t i = 0; i < run->results.n; i++)
            if (!run->results.items[i].valid &&
                !run->results.items[i].skipped) {
                fprintf(stderr, "solbench: %s failed its verification\n",
                        run->results.items[i].bench);
                rc = 1;
            }
    }
    return rc;
}

/* Writes --json and --csv and stores the run (rank 0); returns rc, or the
 * exit code of a step that failed. */
static int sb__run_save(const sb__ropts *o, const sb_run *run, sb_store *st,
                        const char *db_file, FILE *human, int run_rc, int rc,
                        sb_err *err)
{
    if (o->json_path && sb_run_write_json(run, o->json_path, err))
        rc = sb_cli_error(err);
    if (o->csv_path && sb_run_write_csv(run, o->csv_path, err))
        rc = sb_cli_error(err);
    /* A run stopped by an error is not stored: a baseline must be a
     * whole run. */
    if (st && run->results.n > 0 && run_rc == 0) {
        /* Measured is measured: a run the store cannot take is kept
         * beside it, to be imported when it can. */
        int saved = sb_store_save_or_keep(st, run, db_file, err);
        if (saved == 1) {
            /* the measurement stands: exit as it would have, with
             * one line saying where the run is */
            char line[4096];
            sb_err_escape(line, sizeof line, err->msg);
            fprintf(stderr, "solbench: warning: %s\n", line);
        } else if (saved) {
            rc = sb_cli_error(err);
        } else if (!o->quiet) {
            fprintf(human, "\nstored as run %s in %s\n", run->run_id,
                    sb_store_file(st));
        }
    }
    return rc;
}

int sb_cmd_run(int argc, char **argv)
{
    sb__ropts o = {0};
    sb_pset user = {0};
    sb_err err = {0};
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    json_t *tags = json_object();
    int rc = sb__run_parse(argc, argv, &o, &user, &ctx, tags, &err);
    if (rc < 0) { /* --help */
        json_decref(tags);
        return 0;
    }
    if (rc)
        goto out;
    rc = 2;
    if (!o.min_time_set && ctx.suite == SB_SUITE_FULL)
        ctx.min_time = 0.5;

    if (sb_cli_commit_tag("run", o.commit, tags))
        goto out;

    /* The selection first: it says whether MPI is needed. Under a
     * launcher every rank selects the same (same arguments) and fails
     * alike; the launcher's rank 0 alone says why. */
    o.json_out = o.json_path && strcmp(o.json_path, "-") == 0;
    o.csv_out = o.csv_path && strcmp(o.csv_path, "-") == 0;
    sb_selection sel;
    if (sb_select(o.areas, o.names, ctx.suite, o.backend, &sel, &err)) {
        rc = sb_launcher_rank() <= 0 ? sb_cli_error(&err)
                                     : sb_exit_code(err.code);
        goto out;
    }
    if (sb_session_begin(&sel, &argc, &argv, &ctx, &err)) {
        sb_selection_free(&sel);
        rc = sb_cli_error(&err);
        goto out;
    }

    /* The plan is the same on every rank: all fail together, and rank 0
     * alone says why. */
    sb_plan plan;
    if (sb_plan_build(&sel, &user, &ctx, &plan, &err)) {
        sb_selection_free(&sel);
        rc = ctx.rank == 0 ? sb_cli_error(&err) : sb_exit_code(err.code);
        goto out_mpi;
    }

    /* --plan: what the run would measure, checked as a run checks it,
     * then nothing more (no plugin opened, nothing allocated or stored). */
    if (o.plan_only) {
        if (ctx.rank == 0)
            print_plan(&plan, &ctx);
        sb_plan_free(&plan);
        sb_selection_free(&sel);
        rc = 0;
        goto out_mpi;
    }

    /* A plugin the user named loads now or the run stops here (exit 2):
     * after the parameters were checked, before anything is measured or
     * stored. */
    if (sb_cli_pjrt_named("run", o.plugin_flag)) {
        sb_plan_free(&plan);
        sb_selection_free(&sel);
        rc = 2;
        goto out_mpi;
    }

    sb_store *st = NULL;
    char db_file[1024] = "";
    if (ctx.rank == 0 &&
        sb__run_check_outputs(&o, &st, db_file, sizeof db_file, &err)) {
        if (ctx.nranks > 1) /* the other ranks would wait for rank 0 */
            sb_session_abort(err.msg, 2);
        sb_plan_free(&plan);
        sb_selection_free(&sel);
        rc = sb_cli_error(&err);
        goto out_mpi;
    }

    sb_run run;
    sb_run_init(&run);
    sb_run_begin(&run, &ctx, o.areas, o.names, &user, tags);
    /* A document on stdout is all stdout holds: the tables and the
     * stored line go to stderr instead (for a script's pipe). */
    FILE *human = o.json_out || o.csv_out ? stderr : stdout;
    int run_rc = sb__run_measure(&plan, &ctx, &run, &err);
    rc = 0;
    int withdrawn = 0;
    if (ctx.rank == 0 && st && run_rc == 0)
        withdrawn = sb__run_judge_history(st, &run);
    if (ctx.rank == 0) {
        rc = sb__run_report(&o, &ctx, &run, human, withdrawn, run_rc, &err);
        rc = sb__run_save(&o, &run, st, db_file, human, run_rc, rc, &err);
    } else if (run_rc) {
        rc = sb_exit_code(err.code);
    }
    if (st)
        sb_store_close(st);
    sb_run_free(&run);
    sb_plan_free(&plan);
    sb_selection_free(&sel);
out_mpi:
    sb_session_end();
out:
    json_decref(tags);
    return rc;
}
