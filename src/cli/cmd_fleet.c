/*
 * cmd_fleet.c — `solbench fleet run`: many hosts in one run under the MPI
 * launcher the cluster already has (mpirun, srun). Every host's leader
 * runs the per-host suite (together, or one host after another with
 * --stagger), the links between hosts are measured in round-robin rounds
 * (--links), each host's run is stored as that host's, tied by the fleet
 * id in its tags, and rank 0 prints the diagnosis: the hosts worse than
 * their peers, the slow links and the host behind them (docs/FLEET.md).
 * Exit 0 healthy, 1 something flagged, 2 bad usage or input.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "cli/cli.h"
#include "cli/fleet_show.h"
#include "solbench/fleet.h"
#include "solbench/output.h"
#include "solbench/param.h"
#include "solbench/runner.h"
#include "solbench/store.h"
#ifdef SB_HAVE_MPI
#include "fleet/fleet_mpi.h"
#include "solbench/net.h"
#endif

static const char fleet_help[] =
    "usage: mpirun -np N --map-by ppr:1:node solbench fleet run [options]\n"
    "       srun -N N --ntasks-per-node=1 solbench fleet run [options]\n"
    "       solbench fleet show [FLEET] [--baseline FLEET] ...  (show --help)\n"
    "       solbench fleet list | fleet baseline NAME [FLEET]\n"
    "\n"
    "Every host runs the per-host suite; the hosts are compared with\n"
    "their peers of the same hardware (median and MAD), the links between\n"
    "them measured pair by pair, and the slow host and link named.\n"
    "Exit 0 healthy, 1 a host or link flagged (or a host failed), 2 bad\n"
    "usage or input.\n"
    "\n"
    "  --suite quick|full  the per-host suite (default quick)\n"
    "  --area A[,B]        its areas (default compute,memory)\n"
    "  --bench NAME[,..]   its benchmarks instead\n"
    "  -p key=value        a parameter of the per-host benchmarks\n"
    "  --min-time S, --repeat N, --threads N   as for run\n"
    "  --stagger           the hosts' suites one after another (hosts that\n"
    "                      share hardware, e.g. test hosts on one machine)\n"
    "  --rounds N          the suite N times, the hosts in turn each round;\n"
    "                      a host's figure is its median over the rounds\n"
    "                      (default 3 with --stagger, else 1)\n"
    "  --links             the link matrix: bandwidth one way and both\n"
    "                      ways, and latency, between every two hosts\n"
    "  --pairs rounds|serial|sampled  disjoint pairs at once (default up\n"
    "                      to 64 hosts), one pair at a time, or a ring\n"
    "                      and K random matchings (default above 64)\n"
    "  --sample K          the matchings of --pairs sampled (default 8)\n"
    "  --link-size SIZE    a message of the bandwidth test (default 1MiB)\n"
    "  --link-time S       per direction and pair, at least (default 0.2)\n"
    "  --collectives       the all-reduce inside each host, between the\n"
    "                      hosts and over every rank in two levels, each\n"
    "                      against the model from this fleet's links\n"
    "                      (with --links)\n"
    "  --coll-sizes LIST   its sizes (default 1MiB,64MiB)\n"
    "  --coll-time S       per size and level, at least (default 0.5)\n"
    "  --timeout S         the watchdog: a host that has not reported S\n"
    "                      seconds after its turn began (default 1800; 0\n"
    "                      none) is failed, the others' results are kept\n"
    "                      and reported, and the job ends\n"
    "  --threshold PCT     a host flagged when worse than its peers'\n"
    "                      median by at least PCT (default 10) and 3 x\n"
    "                      their spread\n"
    "  --json FILE         the report (schema solbench.fleet/1; - stdout)\n"
    "  --junit FILE        JUnit XML: a testcase a host, one for the links\n"
    "  --html FILE         the fleet page: hosts x figures and the links as\n"
    "                      heat maps, flagged cells marked\n"
    "  --baseline FLEET    each host also against its own figures in a\n"
    "                      stored fleet run (a fleet baseline's name, an id)\n"
    "  --db PATH           the store each host's run and the fleet go to\n"
    "  --no-store          store nothing\n"
    "  --quiet             the verdict only\n";

#ifdef SB_HAVE_MPI
typedef struct fopts {
    char areas[512], names[1024];
    const char *json, *junit, *html, *baseline, *db, *backend;
    bool have_names, have_areas, links, stagger, no_store, quiet, colls;
    bool pairs_given, timeout_given;
    int sample_k; /* --sample K: random matchings beside the ring */
    double coll_sizes[16], coll_time;
    int ncoll_sizes;
    int rounds; /* the per-host suite's rounds (0: 3 with --stagger, else 1) */
    double timeout; /* the watchdog: a host's turn at most (0: none) */
    sb_fleet_link_opts lo;
    sb_fleet_rules rules;
} fopts;

static int add_list(char *buf, size_t len, const char *v, const char *opt)
{
    size_t have = strlen(buf);
    if (have + strlen(v) + 2 > len)
        return sb_cli_usage("fleet", "%s: lists longer than %zu characters",
                            opt, len - 1);
    if (have)
        strcat(buf, ",");
    strcat(buf, v);
    return 0;
}

/* The options after `fleet run`; -1 after --help, else 0 or the exit
 * code. */
static int parse(int argc, char **argv, fopts *o, sb_pset *user, sb_ctx *ctx,
                 sb_err *err)
{
    sb_fleet_rules_default(&o->rules);
    for (int i = 2; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(fleet_help, stdout);
            return -1;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--area", &v))) {
            if (m < 0 || add_list(o->areas, sizeof o->areas, v, "--area"))
                return 2;
            o->have_areas = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--bench", &v))) {
            if (m < 0 || add_list(o->names, sizeof o->names, v, "--bench"))
                return 2;
            o->have_names = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--suite", &v))) {
            if (m < 0)
                return 2;
            if (strcmp(v, "quick") == 0)
                ctx->suite = SB_SUITE_QUICK;
            else if (strcmp(v, "full") == 0)
                ctx->suite = SB_SUITE_FULL;
            else
                return sb_cli_usage("fleet", "--suite %s: quick or full", v);
        } else if ((m = sb_cli_opt(argc, argv, &i, "-p", &v))) {
            if (m < 0)
                return 2;
            if (sb_pset_add(user, v, err))
                return sb_cli_error(err);
        } else if ((m = sb_cli_opt(argc, argv, &i, "--min-time", &v))) {
            if (m < 0 || sb_cli_number("fleet", "--min-time", v, 0, 86400,
                                       &ctx->min_time))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--repeat", &v))) {
            if (m < 0 ||
                sb_cli_int("fleet", "--repeat", v, 1, 100000, &ctx->repeat))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--threads", &v))) {
            if (m < 0 ||
                sb_cli_int("fleet", "--threads", v, 1, 4096, &ctx->threads))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--rounds", &v))) {
            if (m < 0 || sb_cli_int("fleet", "--rounds", v, 1, 100, &o->rounds))
                return 2;
        } else if (strcmp(argv[i], "--stagger") == 0) {
            o->stagger = true;
        } else if (strcmp(argv[i], "--links") == 0) {
            o->links = true;
        } else if (strcmp(argv[i], "--collectives") == 0) {
            o->colls = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--coll-sizes", &v))) {
            if (m < 0)
                return 2;
            o->ncoll_sizes = 0;
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t;
                 t = strtok_r(NULL, ",", &sv)) {
                double b;
                if (o->ncoll_sizes == 16)
                    return sb_cli_usage("fleet", "--coll-sizes: 16 sizes at "
                                                 "most");
                if (sb_parse_size(t, &b, "--coll-sizes", err))
                    return sb_cli_error(err);
                if (b < 4 || b > (double)(1 << 30))
                    return sb_cli_usage("fleet",
                                        "--coll-sizes %s: 4 B to 1 GiB", t);
                o->coll_sizes[o->ncoll_sizes++] = b;
            }
            if (o->ncoll_sizes == 0)
                return sb_cli_usage("fleet", "--coll-sizes: no size given");
        } else if ((m = sb_cli_opt(argc, argv, &i, "--timeout", &v))) {
            if (m < 0 ||
                sb_cli_number("fleet", "--timeout", v, 0, 604800, &o->timeout))
                return 2;
            o->timeout_given = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--coll-time", &v))) {
            if (m < 0 || sb_cli_number("fleet", "--coll-time", v, 0.001, 600,
                                       &o->coll_time))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--pairs", &v))) {
            if (m < 0)
                return 2;
            o->pairs_given = true;
            o->lo.serial = strcmp(v, "serial") == 0;
            o->lo.sample = strcmp(v, "sampled") == 0 ? 8 : 0;
            if (strcmp(v, "serial") != 0 && strcmp(v, "sampled") != 0 &&
                strcmp(v, "rounds") != 0)
                return sb_cli_usage("fleet",
                                    "--pairs %s: rounds, serial or sampled", v);
        } else if ((m = sb_cli_opt(argc, argv, &i, "--sample", &v))) {
            if (m < 0 ||
                sb_cli_int("fleet", "--sample", v, 1, 64, &o->sample_k))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--link-size", &v))) {
            double b;
            if (m < 0)
                return 2;
            if (sb_parse_size(v, &b, "--link-size", err))
                return sb_cli_error(err);
            if (b < 8 || b > (double)(1 << 30))
                return sb_cli_usage("fleet", "--link-size %s: 8 B to 1 GiB", v);
            o->lo.bytes = (size_t)b;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--link-time", &v))) {
            if (m < 0 || sb_cli_number("fleet", "--link-time", v, 0.001, 600,
                                       &o->lo.time_s))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--threshold", &v))) {
            if (m < 0 || sb_cli_number("fleet", "--threshold", v, 0.1, 1000,
                                       &o->rules.floor_pct))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return 2;
            o->json = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--junit", &v))) {
            if (m < 0)
                return 2;
            o->junit = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--html", &v))) {
            if (m < 0)
                return 2;
            o->html = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--baseline", &v))) {
            if (m < 0)
                return 2;
            o->baseline = v;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--db", &v))) {
            if (m < 0)
                return 2;
            o->db = v;
        } else if (strcmp(argv[i], "--no-store") == 0) {
            o->no_store = true;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            o->quiet = true;
        } else {
            return sb_cli_usage(
                "fleet", "unknown option '%s' (see 'solbench fleet --help')",
                argv[i]);
        }
    }
    if (!o->have_areas && !o->have_names)
        snprintf(o->areas, sizeof o->areas, "compute,memory");
    if (o->rounds == 0)
        o->rounds = o->stagger ? 3 : 1;
    if (o->sample_k > 0 && o->pairs_given && o->lo.sample == 0)
        return sb_cli_usage("fleet", "--sample: with --pairs sampled (or "
                                     "more than 64 hosts) only");
    if (o->ncoll_sizes == 0) {
        o->coll_sizes[0] = 1 << 20;
        o->coll_sizes[1] = 64 << 20;
        o->ncoll_sizes = 2;
    }
    if (o->coll_time <= 0)
        o->coll_time = 0.5;
    if (!o->timeout_given)
        o->timeout = 1800;
    return 0;
}

/* The launcher, from what it put in the environment (Open MPI's mpirun
 * inside a Slurm job is still mpirun). */
static void launcher_name(char *out, size_t len)
{
    if (getenv("OMPI_COMM_WORLD_SIZE"))
        snprintf(out, len, "mpirun (Open MPI)");
    else if (getenv("SLURM_STEP_ID"))
        snprintf(out, len, "srun");
    else if (getenv("PMI_SIZE") || getenv("PMIX_RANK"))
        snprintf(out, len, "MPI (PMI)");
    else
        snprintf(out, len, "MPI");
}

/* A launcher that bound the host's one rank to fewer CPUs than the
 * suite's threads (mpirun binds to a core or a socket by default, srun
 * to its task's CPUs): the host's figures would be a part of it. */
static void warn_binding(const sb_ctx *ctx)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    int n = CPU_COUNT(&set);
    if (n < ctx->threads) {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        fprintf(stderr,
                "solbench: warning: %s: the launcher bound this rank to %d of "
                "the %d CPUs its suite's threads run on: run mpirun with "
                "--bind-to none (srun: --cpu-bind=none -c CORES)\n",
                host, n, ctx->threads);
    }
}

/* One host's suite, on its leader. */
typedef struct host_job {
    const sb_plan *plan;
    sb_ctx ctx; /* a plain run's: one rank, this host */
    const char *areas, *names;
    const sb_pset *user;
    char *doc; /* "OK\n" + the run's JSON, or "ERR\n" + why */
} host_job;

static int host_suite(void *arg)
{
    host_job *j = arg;
    /* the suite pins its threads, this one among them; the links are
     * measured after it, from where the launcher put the rank (test
     * hosts pinned to one core would queue their messages there) */
    cpu_set_t saved;
    bool have = sched_getaffinity(0, sizeof saved, &saved) == 0;
    sb_run run;
    sb_err err = {0};
    json_t *tags = json_object();
    sb_run_init(&run);
    sb_run_begin(&run, &j->ctx, j->areas, j->names, j->user, tags);
    json_decref(tags);
    int rc = sb_run_plan(j->plan, &j->ctx, &run.results, &err);
    sb_utc_now(run.ended_at, sizeof run.ended_at);
    char *text = NULL;
    if (rc == 0) {
        json_t *d = sb_run_to_json(&run);
        char *s = d ? json_dumps(d, JSON_COMPACT) : NULL;
        json_decref(d);
        if (s && (text = malloc(strlen(s) + 4)))
            sprintf(text, "OK\n%s", s);
        free(s);
    }
    if (!text) {
        const char *why = rc ? err.msg : "out of memory writing the run";
        if ((text = malloc(strlen(why) + 5)))
            sprintf(text, "ERR\n%s", why);
    }
    sb_run_free(&run);
    j->doc = text;
    if (have)
        sched_setaffinity(0, sizeof saved, &saved);
    return rc;
}

/* This host's name, class (filled on rank 0 from its run) and ranks. */
static char *identity(const sb_fleet_world *fw)
{
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) != 0 || !name[0])
        snprintf(name, sizeof name, "rank%d", fw->rank);
    char *s = malloc(strlen(name) + 32);
    if (s)
        sprintf(s, "%s\t%d", name, fw->host_ranks);
    return s;
}

/* Rank 0: the hosts, their runs stored, the values; r filled. */
static int collect(const fopts *o, char **ids, char ***docs, int nrounds,
                   int nhosts, int nranks, sb_fleet_report *r, sb_err *err)
{
    r->nhosts = nhosts;
    r->nranks = nranks;
    r->rounds = nrounds;
    r->rules = o->rules;
    sb_run_new_id(r->id, sizeof r->id);
    sb_utc_now(r->started_at, sizeof r->started_at);
    launcher_name(r->launcher, sizeof r->launcher);
    r->hosts = calloc((size_t)nhosts, sizeof *r->hosts);
    r->run_ids = calloc((size_t)nhosts, sizeof *r->run_ids);
    if (!r->hosts || !r->run_ids)
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    sb_store *st = NULL;
    char db_file[4096] = "";
    if (!o->no_store && (sb_store_path(o->db, db_file, sizeof db_file, err) ||
                         sb_store_open(db_file, &st, err)))
        return err->code ? err->code : SB_EIO;
    int rc = 0;
    for (int h = 0; h < nhosts; h++) {
        sb_fleet_host *x = &r->hosts[h];
        const char *tab = ids[h] ? strchr(ids[h], '\t') : NULL;
        snprintf(x->name, sizeof x->name, "%.*s", tab ? (int)(tab - ids[h]) : 0,
                 ids[h] ? ids[h] : "");
        x->ranks = tab ? atoi(tab + 1) : 0;
    }
    for (int k = 0; k < nrounds * nhosts && rc == 0; k++) {
        int h = k % nhosts, round = k / nhosts;
        sb_fleet_host *x = &r->hosts[h];
        const char *doc = docs[round] ? docs[round][h] : NULL;
        if (x->failed)
            continue;
        if (doc && strcmp(doc, "SKIP\n") == 0)
            continue; /* its turn did not come (watch_partial) */
        if (!doc || strncmp(doc, "OK\n", 3) != 0) {
            x->failed = true;
            snprintf(x->why, sizeof x->why, "%s",
                     doc && strlen(doc) > 4 ? doc + 4 : "no report");
            continue;
        }
        json_error_t je;
        json_t *d = json_loads(doc + 3, 0, &je);
        sb_run run;
        sb_run_init(&run);
        sb_err e = {0};
        if (!d || sb_run_from_json(d, &run, &e)) {
            x->failed = true;
            snprintf(x->why, sizeof x->why, "its run did not read back: %s",
                     d ? e.msg : je.text);
            json_decref(d);
            sb_run_free(&run);
            continue;
        }
        json_decref(d);
        const char *fp =
            json_string_value(json_object_get(run.system, "fingerprint"));
        snprintf(x->cls, sizeof x->cls, "%s", fp ? fp : "");
        json_object_set_new(run.tags, "fleet", json_string(r->id));
        json_object_set_new(run.tags, "fleet_host", json_string(x->name));
        char nh[16], rd[16];
        snprintf(nh, sizeof nh, "%d", nhosts);
        snprintf(rd, sizeof rd, "%d", round + 1);
        json_object_set_new(run.tags, "fleet_hosts", json_string(nh));
        json_object_set_new(run.tags, "fleet_round", json_string(rd));
        size_t long_names = 0;
        rc = sb_fleet_run_values(&run, h, &r->v, &r->nv, &long_names, err);
        if (long_names && round == 0)
            fprintf(stderr,
                    "solbench: warning: %s: %zu point%s named longer than %d "
                    "characters: not compared\n",
                    x->name, long_names, long_names == 1 ? "" : "s",
                    SB_FLEET_METRIC - 1);
        if (rc == 0 && st) {
            int saved = sb_store_save_or_keep(st, &run, db_file, &e);
            if (saved == 0 && round == 0)
                snprintf(r->run_ids[h], sizeof r->run_ids[h], "%s", run.run_id);
            else if (saved)
                fprintf(stderr, "solbench: warning: %s: %s\n", x->name, e.msg);
        }
        sb_run_free(&run);
    }
    sb_store_close(st);
    /* a failed host's values left out whole */
    size_t keep = 0;
    for (size_t i = 0; i < r->nv; i++)
        if (!r->hosts[r->v[i].host].failed)
            r->v[keep++] = r->v[i];
    r->nv = keep;
    sb_fleet_median_rounds(r->v, &r->nv);
    return rc;
}

/* The fleet's document kept in the store beside its hosts' runs (fleet
 * show reads it back); where the store cannot take it, a warning (the
 * hosts' runs are stored, the report is printed and written). */
static void store_fleet(const fopts *o, const sb_fleet_report *r)
{
    if (o->no_store)
        return;
    sb_err err = {0};
    sb_store *st = NULL;
    char db_file[4096];
    json_t *d = sb_fleet_to_json(r);
    char *text = d ? json_dumps(d, JSON_COMPACT) : NULL;
    json_decref(d);
    if (!text || sb_store_path(o->db, db_file, sizeof db_file, &err) ||
        sb_store_open(db_file, &st, &err) ||
        sb_store_fleet_put(st, r->id, r->started_at, r->launcher, r->nhosts,
                           !sb_fleet_unhealthy(r), text, &err))
        fprintf(stderr,
                "solbench: warning: the fleet record was not stored: "
                "%s\n",
                err.msg[0] ? err.msg : "out of memory");
    sb_store_close(st);
    free(text);
}

/* Rank 0, after a round the watchdog ended: the hosts that did not
 * report say why (collect reads "ERR\n" and the why), and with --stagger the
 * hosts whose turn had not come are marked not run ("SKIP"). */
static void watch_partial(const fopts *o, int n, int late, char **docs)
{
    char why[200];
    if (sb_fleet_mpi_ended())
        snprintf(why, sizeof why,
                 "ERR\nthe launcher ended the job before it reported (a "
                 "rank died)");
    else
        snprintf(why, sizeof why,
                 "ERR\nno report within %g s (--timeout): it hung or died",
                 o->timeout);
    for (int h = 0; docs && h < n; h++) {
        if (docs[h])
            continue;
        docs[h] = strdup(o->stagger && h > late ? "SKIP\n" : why);
    }
}

/* Rank 0, with --stagger: a host after `late` with no figure at all,
 * not failed, was never measured: the run stopped at `late` before its
 * turn. */
static void watch_unmeasured(sb_fleet_report *r, int late)
{
    for (int h = late + 1; h < r->nhosts; h++) {
        sb_fleet_host *x = &r->hosts[h];
        bool any = false;
        for (size_t k = 0; k < r->nv && !any; k++)
            any = r->v[k].host == h;
        if (x->failed || any)
            continue;
        x->failed = true;
        snprintf(x->why, sizeof x->why,
                 "not measured: the run stopped at %s before its turn",
                 r->hosts[late].name);
    }
}

static int fleet_run(int argc, char **argv)
{
    fopts o = {0};
    sb_pset user = {0};
    sb_err err = {0};
    sb_ctx ctx;
    sb_ctx_defaults(&ctx);
    int rc = parse(argc, argv, &o, &user, &ctx, &err);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!sb_mpi_launched())
        return sb_cli_usage(
            "fleet",
            "run: start it under the cluster's MPI launcher, one rank a "
            "host: mpirun -np N --map-by ppr:1:node solbench fleet run "
            "(or srun -N N --ntasks-per-node=1 ...)");
    sb_fleet_world fw;
    if (sb_fleet_mpi_begin(&argc, &argv, &ctx, &fw, &err))
        return sb_cli_error(&err);
    if (fw.rank == 0)
        sb_fleet_mpi_watch_term();
    /* what only rank 0 writes, checked there before anything is
     * measured (the other ranks' hosts may not have its paths), and the
     * verdict shared: every rank goes on, or every rank stops */
    int bad = 0;
    sb_cli_fleet_out out = {
        .json = o.json, .junit = o.junit, .html = o.html, .quiet = o.quiet};
    sb_fleet_report base = {0};
    bool have_base = false;
    if (fw.rank == 0) {
        char db_file[4096];
        sb_store *st = NULL;
        if (fw.nhosts < 2)
            bad = sb_cli_usage("fleet",
                               "run: all %d rank%s on one host: a fleet needs "
                               "two hosts or more (mpirun --host a,b,... or a "
                               "hostfile)",
                               fw.nranks, fw.nranks == 1 ? " is" : "s are");
        else if (fw.nhosts > SB_FLEET_MAX_HOSTS)
            bad = sb_cli_usage("fleet", "run: %d hosts: at most %d", fw.nhosts,
                               SB_FLEET_MAX_HOSTS);
        else if ((bad = sb_cli_fleet_check_outs(&out)) != 0)
            ;
        else if (!o.no_store &&
                 (sb_store_path(o.db, db_file, sizeof db_file, &err) ||
                  sb_store_open(db_file, &st, &err)))
            bad = sb_cli_error(&err);
        else if (o.baseline && o.no_store && !sb_cli_fleet_is_file(o.baseline))
            bad = sb_cli_usage("fleet",
                               "--baseline %s: a stored fleet, and "
                               "--no-store opens no store",
                               o.baseline);
        else if (o.baseline) {
            if (sb_cli_fleet_load(st, o.baseline, &base, &err))
                bad = sb_cli_error(&err);
            else
                have_base = true;
        }
        sb_store_close(st);
    }
    /* the sampled link schedule above 64 hosts, unless asked otherwise;
     * its seed rank 0's, so every leader draws the same pairs */
    if (o.links && !o.pairs_given && fw.nhosts > 64)
        o.lo.sample = 8;
    if (o.lo.sample > 0 && o.sample_k > 0)
        o.lo.sample = o.sample_k;
    o.lo.seed = (unsigned long long)sb_fleet_mpi_bcast_int(
        &fw, (int)(time(NULL) & 0x7fffffff));
    if (sb_fleet_mpi_bcast_int(&fw, bad)) {
        if (have_base)
            sb_fleet_report_free(&base);
        sb_fleet_mpi_end(&fw);
        return 2;
    }
    /* the per-host suite: the same plan on every rank, so all fail
     * together; the network area runs across hosts (--links), not in it */
    sb_selection sel = {0};
    sb_plan plan = {0};
    const char *areas = o.areas[0] ? o.areas : NULL;
    const char *names = o.names[0] ? o.names : NULL;
    rc = sb_select(areas, names, ctx.suite, "cpu", &sel, &err);
    if (rc == 0 && sb_selection_needs_mpi(&sel))
        rc = sb_fail(&err, SB_EINVAL,
                     "fleet run: the network area runs between hosts "
                     "(--links), not in the per-host suite");
    host_job job = {.ctx = ctx, .areas = areas, .names = names, .user = &user};
    job.ctx.rank = 0;
    job.ctx.nranks = 1;
    job.ctx.hosts = 1;
    job.ctx.ranks_per_host = 1;
    job.ctx.mpi_library[0] = '\0';
    job.ctx.transport[0] = '\0';
    job.ctx.progress = false;
    if (rc == 0)
        rc = sb_plan_build(&sel, &user, &job.ctx, &plan, &err);
    /* a plan can fail on one host alone (its free memory): rank 0 says
     * why, a leader whose reason differs says its own, named by its host,
     * and all stop together */
    char why0[sizeof err.msg] = "";
    if (fw.rank == 0 && rc)
        snprintf(why0, sizeof why0, "%s", err.msg);
    sb_fleet_mpi_bcast_str(&fw, why0, sizeof why0);
    if (rc && fw.rank == 0) {
        sb_cli_error(&err);
    } else if (rc && fw.leader && strcmp(err.msg, why0) != 0) {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        fprintf(stderr, "solbench: %s: %s\n", host, err.msg);
    }
    if (sb_fleet_mpi_max_int(&fw, rc != 0)) {
        if (have_base)
            sb_fleet_report_free(&base);
        sb_plan_free(&plan);
        sb_selection_free(&sel);
        sb_fleet_mpi_end(&fw);
        return 2;
    }
    /* one rank on its host: the suite pins its threads as a plain run
     * does (sb_mpi_begin turns pinning off for ranks that share a host) */
    if (fw.host_ranks == 1)
        unsetenv("SOLBENCH_NO_BIND");
    if (fw.leader)
        warn_binding(&job.ctx);
    job.plan = &plan;
    double t0 = (double)time(NULL);
    char *me = fw.leader ? identity(&fw) : NULL;
    char **ids = NULL, ***docs = calloc((size_t)o.rounds, sizeof *docs);
    rc = docs ? 0 : sb_fail(&err, SB_ENOMEM, "fleet: out of memory");
    if (rc == 0)
        rc = sb_fleet_mpi_gather(&fw, me, &ids, &err);
    free(me);
    /* round by round: each host's suite, its document to rank 0, watched:
     * a host that hangs or dies ends the run (rank 0 only learns it; the
     * others wait in a barrier until rank 0 aborts the job) */
    int late = -1, nrounds = o.rounds;
    for (int k = 0; k < o.rounds && rc == 0; k++) {
        int t = sb_fleet_mpi_round(&fw, o.stagger, host_suite, &job, &job.doc,
                                   o.timeout, &docs[k], &late, &err);
        free(job.doc);
        job.doc = NULL;
        if (t < 0) {
            rc = t;
            if (fw.rank == 0) /* the others wait at the round's end */
                late = fw.nhosts;
        } else if (t == 1) {
            nrounds = k + 1;
            watch_partial(&o, fw.nhosts, late, docs[k]);
            if (late == fw.nhosts)
                fprintf(stderr,
                        "solbench: fleet: every host reported round %d, but "
                        "%s: the job is ended after the report\n",
                        k + 1,
                        sb_fleet_mpi_ended()
                            ? "the launcher ended the job before its end"
                            : "a rank did not reach its end in --timeout");
            break;
        }
    }
    double *bw = NULL, *bibw = NULL, *lat = NULL;
    if (rc == 0 && late < 0 && o.links)
        rc = sb_fleet_mpi_links(&fw, &o.lo, &bw, &bibw, &lat, &err);
    sb_fleet_coll *coll = NULL;
    size_t ncoll = 0;
    bool coll_valid = true;
    if (rc == 0 && late < 0 && o.colls)
        rc = sb_fleet_mpi_collectives(&fw, o.coll_sizes, o.ncoll_sizes,
                                      o.coll_time, &coll, &ncoll, &coll_valid,
                                      &err);
    int code = rc ? 2 : 0;
    if (fw.rank == 0 && rc == 0) {
        sb_fleet_report r = {0};
        rc = collect(&o, ids, docs, nrounds, fw.nhosts, fw.nranks, &r, &err);
        if (rc == 0 && late >= 0 && late < r.nhosts && o.stagger)
            watch_unmeasured(&r, late);
        r.bw = bw;
        r.bibw = bibw;
        r.lat = lat;
        r.coll = coll;
        r.ncoll = ncoll;
        bw = bibw = lat = NULL;
        coll = NULL;
        sb_fleet_predict_colls(&r);
        if (rc == 0 && r.bw)
            rc = sb_fleet_link_values(r.nhosts, r.bw, r.lat, &r.v, &r.nv, &err);
        if (rc == 0)
            rc = sb_fleet_analyse(&r, &err);
        if (rc == 0 && have_base)
            rc = sb_fleet_compare_baseline(&r, &base, &err);
        if (rc == 0) {
            store_fleet(&o, &r);
            code = sb_cli_fleet_emit(&r, &out, (double)time(NULL) - t0);
        } else {
            code = sb_cli_error(&err);
        }
        sb_fleet_report_free(&r);
    } else if (fw.rank == 0 && rc) {
        sb_cli_error(&err);
    }
    for (int h = 0; ids && h < fw.nhosts; h++)
        free(ids[h]);
    for (int k = 0; docs && k < o.rounds; k++) {
        for (int h = 0; docs[k] && h < fw.nhosts; h++)
            free(docs[k][h]);
        free(docs[k]);
    }
    free(ids);
    free(docs);
    free(bw), free(bibw), free(lat), free(coll);
    if (have_base)
        sb_fleet_report_free(&base);
    sb_plan_free(&plan);
    sb_selection_free(&sel);
    if (late >= 0) /* the others wait for a host that will not come */
        sb_fleet_mpi_abort(&fw, late, code);
    code = sb_fleet_mpi_bcast_int(&fw, code);
    sb_fleet_mpi_end(&fw);
    return code;
}
#endif

int sb_cmd_fleet(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        fputs(fleet_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "show") == 0)
        return sb_cmd_fleet_show(argc, argv);
    if (strcmp(argv[1], "list") == 0)
        return sb_cmd_fleet_list(argc, argv);
    if (strcmp(argv[1], "baseline") == 0)
        return sb_cmd_fleet_baseline(argc, argv);
    if (strcmp(argv[1], "run") != 0)
        return sb_cli_usage("fleet",
                            "unknown subcommand '%s' (run, show, list, "
                            "baseline)",
                            argv[1]);
#ifdef SB_HAVE_MPI
    return fleet_run(argc, argv);
#else
    return sb_cli_usage("fleet", "run: this build has no MPI (the fleet runs "
                                 "under MPI: install an MPI and rebuild)");
#endif
}
