/*
 * cmd_check.c — `solbench check --baseline NAME`: the regression gate.
 * Re-runs the benchmarks a baseline holds with the baseline's config
 * (suite, selection, parameters, threads, sampling), stores the new run,
 * compares it point by point and exits 1 if any point regressed (or a
 * result failed its verification), 0 otherwise. --confirm re-measures each
 * regressed point once more and keeps the verdict only if it holds again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "solbench/compare.h"
#include "solbench/runner.h"
#include "solbench/store.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"
#ifdef SB_HAVE_MPI
#include "solbench/net.h"
#endif

static const char check_help[] =
    "usage: solbench check --baseline NAME [options]\n"
    "  --baseline NAME    the baseline (a name, run id or 'last')\n"
    "  --confirm          re-measure each regressed point once more; fail\n"
    "                     only if it regresses again\n"
    "  --junit FILE       JUnit XML report, one testcase per point\n"
    "  --markdown FILE    Markdown summary table (for a CI comment)\n"
    "  --json FILE        the comparison (schema solbench.compare/1)\n"
    "  --alpha P          significance level (default 0.01)\n"
    "  --threshold PCT    minimal change that counts, percent (default 5)\n"
    "  --min-time S       override the baseline's seconds per point\n"
    "  --repeat N         override the baseline's samples per point\n"
    "  --allow-mismatch   compare even if config or machine differ\n"
    "  --tag key=value    label the new run\n"
    "  --no-store         do not store the new run\n"
    "  --db PATH          results database\n"
    "  --quiet            print only the verdict summary\n"
    "Exit code: 0 no regression, 1 a point regressed or failed its\n"
    "verification, 2 bad input or runs that cannot be compared.\n";

typedef struct check_opts {
    const char *baseline, *db, *junit, *markdown, *json;
    bool confirm, no_store, quiet;
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
            if (m < 0 || sb_cli_number("check", "--alpha", v, 1e-300, 0.999999, &d))
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
            if (m < 0 || sb_cli_int("check", "--repeat", v, 1, 100000, &o->repeat))
                return -1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--tag", &v))) {
            if (m < 0)
                return -1;
            if (sb_cli_tag("check", v, o->tags))
                return -1;
        } else if (strcmp(argv[i], "--confirm") == 0) {
            o->confirm = true;
        } else if (strcmp(argv[i], "--allow-mismatch") == 0) {
            o->cmp.allow_mismatch = true;
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
    return 0;
}

/* ---- the baseline's config ------------------------------------------------
 */

typedef struct base_cfg {
    char areas[1024], names[1024];
    bool has_areas, has_names, has_backend;
    sb_pset user;
} base_cfg;

static int cfg_get(const json_t *cfg, const char *key, json_type t,
                   json_t **out, const char *base, sb_err *err)
{
    json_t *v = json_object_get(cfg, key);
    bool ok =
        v && (json_typeof(v) == t || (t == JSON_REAL && json_is_number(v)));
    if (!ok)
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.%s is missing or of the wrong "
                       "type; this run cannot be re-run by check",
                       base, key);
    *out = v;
    return 0;
}

/* Sets ctx and the selection from the baseline's config (the fields
 * sb_run_config writes). */
static int config_to_ctx(const json_t *cfg, const char *base, sb_ctx *ctx,
                         base_cfg *bc, sb_err *err)
{
    json_t *v = NULL;
    if (cfg_get(cfg, "suite", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    ctx->suite = strcmp(json_string_value(v), "full") == 0 ? SB_SUITE_FULL
                                                           : SB_SUITE_QUICK;
    if (cfg_get(cfg, "areas", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    snprintf(bc->areas, sizeof bc->areas, "%s", json_string_value(v));
    bc->has_areas = bc->areas[0] != '\0';
    if (cfg_get(cfg, "benches", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    snprintf(bc->names, sizeof bc->names, "%s", json_string_value(v));
    bc->has_names = bc->names[0] != '\0';
    if (cfg_get(cfg, "params", JSON_OBJECT, &v, base, err))
        return SB_EINVAL;
    const char *key;
    json_t *pv;
    json_object_foreach(v, key, pv)
    {
        char kv[512];
        if (!json_is_string(pv))
            return sb_fail(err, SB_EINVAL,
                           "baseline %s: config.params.%s is not a string",
                           base, key);
        snprintf(kv, sizeof kv, "%s=%s", key, json_string_value(pv));
        if (sb_pset_add(&bc->user, kv, err))
            return SB_EINVAL;
    }
    if (cfg_get(cfg, "threads", JSON_INTEGER, &v, base, err))
        return SB_EINVAL;
    json_int_t th = json_integer_value(v);
    if (th < 1 || th > 4096)
        return sb_fail(err, SB_EINVAL,
                       "baseline %s: config.threads %lld is "
                       "out of range",
                       base, (long long)th);
    ctx->threads = (int)th;
    if (cfg_get(cfg, "min_time_s", JSON_REAL, &v, base, err))
        return SB_EINVAL;
    ctx->min_time = json_number_value(v);
    if (cfg_get(cfg, "repeat", JSON_INTEGER, &v, base, err))
        return SB_EINVAL;
    const json_int_t rep = json_integer_value(v);
    if (cfg_get(cfg, "warmup", JSON_INTEGER, &v, base, err))
        return SB_EINVAL;
    const json_int_t wu = json_integer_value(v);
    if (!(ctx->min_time >= 0 && ctx->min_time <= 86400))
        return sb_fail(err, SB_EINVAL, "baseline %s: config.min_time_s %g "
                       "is out of range [0, 86400]", base, ctx->min_time);
    if (rep < 1 || rep > 100000)
        return sb_fail(err, SB_EINVAL, "baseline %s: config.repeat %lld is "
                       "out of range [1, 100000]", base, (long long)rep);
    if (wu < 0 || wu > 1000)
        return sb_fail(err, SB_EINVAL, "baseline %s: config.warmup %lld is "
                       "out of range [0, 1000]", base, (long long)wu);
    ctx->repeat = (int)rep;
    ctx->warmup = (int)wu;
    /* Absent: one point after the other (runs from before the option). */
    json_t *smp = json_object_get(cfg, "sampling");
    if (smp && !(json_is_string(smp) &&
                 strcmp(json_string_value(smp), "interleaved") == 0))
        return sb_fail(err, SB_EINVAL, "baseline %s: config.sampling is "
                       "neither absent nor \"interleaved\"", base);
    ctx->interleave = smp != NULL;
    if (cfg_get(cfg, "backend", JSON_STRING, &v, base, err))
        return SB_EINVAL;
    const char *be = json_string_value(v);
    bc->has_backend = strcmp(be, "all") != 0 && be[0];
    snprintf(ctx->backend, sizeof ctx->backend, "%s",
             bc->has_backend ? be : "");
    return 0;
}

/* ---- measuring ------------------------------------------------------------
 */

/* Runs every plan item, remembering which item made each result (for
 * --confirm). Stops on an error that is not a failed verification. */
static int run_items(const sb_plan *plan, sb_ctx *ctx, sb_result_list *out,
                     int **item_of, sb_err *err)
{
    size_t cap = 0;
    *item_of = NULL;
    if (ctx->interleave) { /* the baseline's points were sampled in rounds */
        size_t before = out->n;
        int rc = sb_run_plan(plan, ctx, out, err);
        if (rc)
            return rc;
        /* one result per point: interleaving takes no benchmark that
         * drives several */
        *item_of = malloc((out->n + 1) * sizeof **item_of);
        if (!*item_of)
            return sb_fail(err, SB_ENOMEM, "out of memory");
        for (size_t k = before; k < out->n; k++)
            (*item_of)[k] = (int)(k - before);
        return 0;
    }
    for (int i = 0; i < plan->n; i++) {
        size_t before = out->n;
        int rc = sb_run_point(plan->items[i].bench, &plan->items[i].point, ctx,
                              out, err);
        if (rc)
            return rc;
        if (out->n > cap) {
            size_t nc = out->n * 2 + 16;
            int *p = realloc(*item_of, nc * sizeof *p);
            if (!p)
                return sb_fail(err, SB_ENOMEM, "out of memory");
            *item_of = p;
            cap = nc;
        }
        for (size_t k = before; k < out->n; k++)
            (*item_of)[k] = i;
    }
    return 0;
}

/* Re-measures each regressed point once more; the verdict stands only if
 * the new samples regress against the baseline again. */
static int confirm_regressions(sb_cmp *c, const sb_run *base,
                               const sb_plan *plan, const int *item_of,
                               sb_ctx *ctx, const check_opts *o, sb_err *err)
{
    int *done = calloc((size_t)plan->n + 1, sizeof *done);
    sb_result_list *again = calloc((size_t)plan->n + 1, sizeof *again);
    int rc = 0;
    if (!done || !again) {
        rc = sb_fail(err, SB_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < c->n; i++) {
        sb_cmp_line *L = &c->lines[i];
        if (L->verdict != SB_VERDICT_REGRESSED || L->ib < 0 || L->ia < 0)
            continue;
        /* Interleaved, a point is re-measured as it was measured: the
         * whole plan once more in rounds (alone it would run faster or
         * slower than beside the others), into again[0]. */
        int item = ctx->interleave ? 0 : item_of[L->ib];
        if (!done[item]) {
            done[item] = 1;
            if (!o->quiet && ctx->interleave)
                printf("confirming: all %d points again, interleaved ...\n",
                       plan->n);
            else if (!o->quiet)
                printf("confirming %s %s ...\n", L->bench, L->params);
            fflush(stdout);
            if ((rc = ctx->interleave
                          ? sb_run_plan(plan, ctx, &again[0], err)
                          : sb_run_point(plan->items[item].bench,
                                         &plan->items[item].point, ctx,
                                         &again[item], err)))
                goto out;
        }
        /* The re-measured result of this point. */
        const sb_result *nr = NULL;
        char key[512];
        for (size_t k = 0; k < again[item].n && !nr; k++)
            if (strcmp(sb_point_key(&again[item].items[k], key, sizeof key),
                       L->key) == 0)
                nr = &again[item].items[k];
        if (!nr) {
            snprintf(L->why, sizeof L->why,
                     "confirmation found no such point; kept");
            continue;
        }
        sb_cmp_line R = *L;
        memset(R.why, 0, sizeof R.why);
        R.a_value = R.b_value = 0;
        sb_cmp_judge_results(&R, &base->results.items[L->ia], nr, &o->cmp);
        if (R.verdict == SB_VERDICT_REGRESSED) {
            snprintf(L->why, sizeof L->why,
                     "confirmed: re-measured %+.1f%%, p %.2g", R.change_pct,
                     R.test.p);
        } else {
            snprintf(L->why, sizeof L->why,
                     "not confirmed: first %+.1f%% p %.2g, re-measured "
                     "%+.1f%% p %.2g",
                     L->change_pct, L->test.p, R.change_pct, R.test.p);
            L->verdict = R.verdict == SB_VERDICT_NOT_COMPARABLE
                             ? SB_VERDICT_NOT_COMPARABLE
                             : SB_VERDICT_UNCHANGED;
        }
    }
    sb_cmp_recount(c);
out:
    if (again)
        for (int i = 0; i < plan->n; i++)
            sb_results_free(&again[i]);
    free(again);
    free(done);
    return rc;
}

/* The new run as compare sees it: when the user overrode the sampling
 * (--min-time, --repeat), those fields are taken as the baseline's, since
 * they change how many samples are drawn, not what one sample measures. */
static json_t *comparable_config(const sb_run *base, const sb_run *now,
                                 const check_opts *o)
{
    json_t *c = json_deep_copy(now->config);
    const char *keys[2] = {o->min_time >= 0 ? "min_time_s" : NULL,
                           o->repeat > 0 ? "repeat" : NULL};
    for (int k = 0; k < 2; k++) {
        if (!keys[k])
            continue;
        json_t *bv = json_object_get(base->config, keys[k]);
        if (bv)
            json_object_set(c, keys[k], bv);
    }
    return c;
}

int sb_cmd_check(int argc, char **argv)
{
    check_opts o = {0};
    bool mpi_started = false;
    o.min_time = -1;
    o.repeat = -1;
    sb_cmp_opts_default(&o.cmp);
    o.tags = json_object();
    int rc = 2, pa = parse_args(argc, argv, &o);
    if (pa) {
        json_decref(o.tags);
        return pa > 0 ? 0 : 2;
    }

    sb_err err = {0};
    sb_store *st = NULL;
    sb_run base, now;
    sb_run_init(&now);
    sb_selection sel = {0};
    sb_plan plan = {0};
    int *item_of = NULL;
    base_cfg bc;
    memset(&bc, 0, sizeof bc);
    char path[4096];

    /* The reports' files are tried before measuring, not after. */
    const char *outs[3] = {o.junit, o.markdown, o.json},
               *opts[3] = {"--junit", "--markdown", "--json"};
    struct stat ids[3];
    for (int k = 0; k < 3; k++) {
        if (!outs[k])
            continue;
        int bad = sb_cli_check_out(opts[k], outs[k], &ids[k], &err);
        for (int j = 0; j < k && !bad; j++)
            if (outs[j] && sb_cli_same_out(outs[j], &ids[j], outs[k], &ids[k]))
                bad = sb_fail(&err, SB_EINVAL, "%s %s and %s %s name the same "
                              "file", opts[j], outs[j], opts[k], outs[k]);
        if (bad) {
            sb_run_init(&base);
            rc = sb_cli_error(&err);
            goto out;
        }
    }
    if (sb_store_open_default(o.db, &st, path, sizeof path, &err)) {
        sb_run_init(&base);
        rc = sb_cli_error(&err);
        goto out;
    }
    if (sb_store_load_run(st, o.baseline, &base, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }

    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    if (config_to_ctx(base.config, o.baseline, &ctx, &bc, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    if (o.min_time >= 0)
        ctx.min_time = o.min_time;
    if (o.repeat > 0)
        ctx.repeat = o.repeat;
    const char *areas = bc.has_areas ? bc.areas : NULL;
    const char *names = bc.has_names ? bc.names : NULL;

    /* MPI exactly as `solbench run` starts it, so the topology part of
     * the config comes out the same. Under mpirun every rank runs this
     * command and needs the database (a shared file system); rank 0 alone
     * stores, compares and reports. */
#ifdef SB_HAVE_MPI
    bool want_net = (areas && strstr(areas, "network")) ||
                    (names && strstr(names, "network."));
    if (sb_mpi_begin(&argc, &argv, want_net, &ctx, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    mpi_started = true;
#endif
    if (ctx.nranks > 1 && o.confirm) {
        rc = sb_cli_usage("check", "--confirm is not supported across MPI "
                                   "ranks");
        goto out;
    }
    if (sb_select(areas, names, ctx.suite, bc.has_backend ? ctx.backend : NULL,
                  &sel, &err) ||
        sb_plan_build(&sel, &bc.user, &ctx, &plan, &err)) {
        /* what it names comes from the baseline's stored config */
        sb_err inner = err;
        sb_fail(&err, inner.code, "baseline %s (run %s), its config: %s",
                o.baseline, base.run_id, inner.msg);
        rc = sb_cli_error(&err);
        goto out;
    }

    if (!o.quiet && ctx.rank == 0)
        printf("check against baseline %s (run %s): %d point%s, %d "
               "thread%s\n",
               o.baseline, base.run_id, plan.n, plan.n == 1 ? "" : "s",
               ctx.threads, ctx.threads == 1 ? "" : "s");
    fflush(stdout);

    /* The new run, made exactly as `solbench run` makes one. */
    json_object_set_new(o.tags, "check_baseline", json_string(o.baseline));
    sb_run_begin(&now, &ctx, areas, names, &bc.user, o.tags);
    double t0 = sb_now();
    if (run_items(&plan, &ctx, &now.results, &item_of, &err)) {
        rc = sb_cli_error(&err);
        goto out;
    }
    sb_utc_now(now.ended_at, sizeof now.ended_at);
    if (ctx.rank != 0) {
        rc = 0;
        goto out;
    }

    if (!o.no_store) {
        if (sb_store_save_run(st, &now, &err)) {
            rc = sb_cli_error(&err);
            goto out;
        }
        if (!o.quiet)
            printf("stored as run %s in %s\n", now.run_id, path);
    }

    /* Like with like. */
    sb_run view = now; /* shares now's members; never freed */
    view.config = comparable_config(&base, &now, &o);
    char pair[160];
    snprintf(pair, sizeof pair, "baseline %s and this run", o.baseline);
    if (sb_cli_like_with_like("check", &base, &view, pair, "baseline vs now",
                              o.cmp.allow_mismatch) == 2) {
        json_decref(view.config);
        rc = 2;
        goto out;
    }
    sb_cmp c;
    int crc = sb_compare_runs(&base, &view, &o.cmp, &c, &err);
    json_decref(view.config);
    if (crc) {
        rc = sb_cli_error(&err);
        goto out;
    }
    snprintf(c.a_id, sizeof c.a_id, "%s (%s)", o.baseline, base.run_id);

    if (o.confirm && c.count[SB_VERDICT_REGRESSED] > 0 &&
        confirm_regressions(&c, &base, &plan, item_of, &ctx, &o, &err)) {
        sb_cmp_free(&c);
        rc = sb_cli_error(&err);
        goto out;
    }
    double seconds = sb_now() - t0;

    if (!o.quiet) {
        putchar('\n');
        sb_cmp_print(stdout, &c);
    }
    rc = 0;
    int invalid = 0;
    for (size_t i = 0; i < now.results.n; i++) {
        const sb_result *r = &now.results.items[i];
        if (!r->valid && !r->skipped) {
            char pbuf[256];
            fprintf(stderr,
                    "solbench check: %s %s failed its "
                    "verification\n",
                    r->bench, sb_params_fmt(&r->params, pbuf, sizeof pbuf));
            invalid++;
        }
    }
    for (size_t i = 0; i < c.n; i++)
        if (c.lines[i].verdict == SB_VERDICT_REGRESSED)
            printf("REGRESSED: %s %s: %s %.4g -> %.4g %s (%+.1f%%, p %.2g)\n",
                   c.lines[i].bench, c.lines[i].params, c.lines[i].metric,
                   c.lines[i].a_value, c.lines[i].b_value, c.lines[i].unit,
                   c.lines[i].change_pct, c.lines[i].test.p);
    char title[200];
    snprintf(title, sizeof title, "solbench check against baseline %s",
             o.baseline);
    if ((o.junit &&
         sb_cmp_write_junit(&c, "solbench.check", seconds, o.junit, &err)) ||
        (o.markdown && sb_cmp_write_markdown(&c, title, o.markdown, &err)) ||
        (o.json && sb_cmp_write_json(&c, o.json, &err)))
        rc = sb_cli_error(&err);
    else if (c.count[SB_VERDICT_REGRESSED] > 0 || invalid > 0)
        rc = 1;
    printf("check: %s (%d regressed, %d improved, %d unchanged, %d not "
           "comparable)\n",
           rc == 0 ? "PASS" : (rc == 1 ? "FAIL" : "ERROR"),
           c.count[SB_VERDICT_REGRESSED], c.count[SB_VERDICT_IMPROVED],
           c.count[SB_VERDICT_UNCHANGED], c.count[SB_VERDICT_NOT_COMPARABLE]);
    sb_cmp_free(&c);
out:
#ifdef SB_HAVE_MPI
    if (mpi_started)
        sb_mpi_end();
#endif
    (void)mpi_started;
    free(item_of);
    sb_plan_free(&plan);
    sb_selection_free(&sel);
    sb_run_free(&base);
    sb_run_free(&now);
    sb_store_close(st);
    json_decref(o.tags);
    return rc;
}
