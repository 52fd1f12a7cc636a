/*
 * cmd_predict.c — `solbench predict WORKLOAD [--hw NAME | --run ID |
 * --results FILE] [--db PATH] [--set key=value ...] [--sweep
 * key=v1,v2,...] [--overlap none|full] [--json FILE]`: the phase table,
 * totals and interventions of a workload, or one row per variant with
 * --sweep.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "cli/cli.h"
#include "cli/predict_capacity.h"
#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/predict.h"

#define SB_MAX_SETS 32

#define SB_MAX_SWEEPS 4
#define SB_MAX_VARIANTS 256

/* Where the human-readable output goes: stdout, or stderr when --json -
 * puts the document on stdout. */
static FILE *sb__human;

typedef struct sb__popts {
    const char *file, *hw, *run, *results, *db, *json, *calib, *timeline;
    const char *arrivals; /* --arrivals FILE: requests from a file */
    sb_sim_req *reqs;     /* its requests */
    size_t n_reqs;
    const char *sweep[SB_MAX_SWEEPS]; /* several: their grid */
    int n_sweeps;
    const char *sets[SB_MAX_SETS + 2];
    int n_sets;
    char overlap_kv[32]; /* --overlap as a setting: overlap="none" */
    bool capacity;       /* --capacity: the largest rate within --slo */
    sb_slo slo;          /* --slo (slo.n 0: none) */
} sb__popts;

/* Reads the workload with the settings (and the n_extra of `extra`, a
 * sweep's variant) applied and builds its machine. */
static int sb__prepare(const sb__popts *o, const char *const *extra,
                       int n_extra, json_t **doc_out, sb_workload *w,
                       sb_ceilings *c, char *desc, size_t dlen, sb_err *err)
{
    const char *sets[SB_MAX_SETS + 2 + SB_MAX_SWEEPS];
    int n = 0;
    for (int i = 0; i < o->n_sets; i++)
        sets[n++] = o->sets[i];
    for (int i = 0; i < n_extra; i++)
        sets[n++] = extra[i];
    const sb_machine_req req = {o->hw, o->results, o->run, false};
    int rc = sb_workload_open(o->file, sets, n, &req, o->db, doc_out, w, c,
                              desc, dlen, err);
    if (rc == 0 && o->n_reqs > 0) { /* --arrivals */
        w->sim_file = o->reqs;
        w->sim_file_n = o->n_reqs;
        snprintf(w->sim_file_name, sizeof w->sim_file_name, "%s", o->arrivals);
    }
    return rc;
}

static const char *sb__dominant(const sb_prediction *p, const char *stage)
{
    double by[SB_BOUND_N] = {0};
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->ph[i].stage, stage) == 0 && p->ph[i].bound < SB_BOUND_N)
            by[p->ph[i].bound] += p->ph[i].t;
    int best = 1;
    for (int i = 2; i < SB_BOUND_N; i++)
        if (by[i] > by[best])
            best = i;
    return sb_bound_name((sb_bound)best);
}

/* The --sweep option's form: key=v1,v2,... with a key of up to 63
 * characters, values of up to 1023 and no empty value. Checked before
 * anything is read; the key's meaning is checked against the workload
 * (sb_workload_check_key) before any variant is computed. */
static int sb__sweep_parse(const char *sweep, char key[64], char vals[1024])
{
    const char *eq = strchr(sweep, '=');
    if (!eq || eq == sweep || !eq[1] || eq - sweep >= 64 ||
        strlen(eq + 1) >= 1024)
        return sb_cli_usage("predict",
                            "--sweep '%.80s': expected key=v1,v2,... "
                            "(a key of up to 63 characters, values of up to "
                            "1023)",
                            sweep);
    if (sb_list_has_empty(eq + 1, ','))
        return sb_cli_usage("predict",
                            "--sweep '%s': an empty value in the "
                            "list",
                            sweep);
    snprintf(key, 64, "%.*s", (int)(eq - sweep), sweep);
    snprintf(vals, 1024, "%s", eq + 1);
    return 0;
}

/* One sweep's values split in place: vals[] point into buf. */
static int sb__sweep_values(char *buf, char **vals, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *v = strtok_r(buf, ",", &save); v && n < max;
         v = strtok_r(NULL, ",", &save))
        vals[n++] = v;
    return n;
}

/* The sweeps' grid: each key with its values (split in place in buf), the
 * number of variants, and the first column's title and width. */
typedef struct sb__grid {
    char key[SB_MAX_SWEEPS][64], buf[SB_MAX_SWEEPS][1024];
    char *vals[SB_MAX_SWEEPS][SB_MAX_VARIANTS];
    int nv[SB_MAX_SWEEPS], total;
    char keys[300]; /* the swept keys, "tensor fsdp" */
    int kw;         /* the first column's width */
} sb__grid;

/* One variant of the grid: its settings "key=value" and its label (the
 * values, "4 2"). */
typedef struct sb__variant {
    char kv[SB_MAX_SWEEPS][1200], label[600];
    const char *extra[SB_MAX_SWEEPS];
} sb__variant;

/* Key k's value in variant v (the last key varying fastest). */
static const char *sb__grid_value(const sb__grid *g, int n_sweeps, int k, int v)
{
    int div = 1;
    for (int j = k + 1; j < n_sweeps; j++)
        div *= g->nv[j];
    return g->vals[k][(v / div) % g->nv[k]];
}

/* Splits each --sweep into its key and values; returns 0, or the exit
 * code of a sweep too large, empty or given twice (the error said). */
static int sb__grid_build(const sb__popts *o, sb__grid *g)
{
    g->total = 1;
    for (int k = 0; k < o->n_sweeps; k++) {
        if (sb__sweep_parse(o->sweep[k], g->key[k], g->buf[k]))
            return 2;
        g->nv[k] = sb__sweep_values(g->buf[k], g->vals[k], SB_MAX_VARIANTS);
        if (g->nv[k] == 0)
            return sb_cli_usage(
                "predict", "--sweep '%s': expected key=v1,v2,...", o->sweep[k]);
        g->total *= g->nv[k];
        if (g->total > SB_MAX_VARIANTS)
            return sb_cli_usage("predict",
                                "--sweep: %d variants or more (at most %d)",
                                g->total, SB_MAX_VARIANTS);
        for (int j = 0; j < k; j++)
            if (strcmp(g->key[j], g->key[k]) == 0)
                return sb_cli_usage("predict",
                                    "--sweep %s given twice (one list a "
                                    "key; several keys make a grid)",
                                    g->key[k]);
    }
    return 0;
}

/* The first column: its title (the swept keys) and its width (the widest
 * label, at least 8). */
static void sb__grid_column(const sb__popts *o, sb__grid *g)
{
    g->keys[0] = '\0';
    for (int k = 0; k < o->n_sweeps; k++)
        snprintf(g->keys + strlen(g->keys), sizeof g->keys - strlen(g->keys),
                 "%s%s", k ? " " : "", g->key[k]);
    g->kw = (int)strlen(g->keys);
    for (int v = 0; v < g->total; v++) {
        int w0 = -1;
        for (int k = 0; k < o->n_sweeps; k++)
            w0 += (int)strlen(sb__grid_value(g, o->n_sweeps, k, v)) + 1;
        if (w0 > g->kw)
            g->kw = w0;
    }
    if (g->kw < 8)
        g->kw = 8;
}

/* Variant v's settings and label. */
static void sb__variant_make(const sb__grid *g, int n_sweeps, int v,
                             sb__variant *x)
{
    x->label[0] = '\0';
    for (int k = 0; k < n_sweeps; k++) {
        const char *val = sb__grid_value(g, n_sweeps, k, v);
        snprintf(x->kv[k], sizeof x->kv[k], "%s=%s", g->key[k], val);
        x->extra[k] = x->kv[k];
        snprintf(x->label + strlen(x->label),
                 sizeof x->label - strlen(x->label), "%s%s", k ? " " : "", val);
    }
}

/* A variant's settings joined, "tensor=4 fsdp=2". */
static void sb__variant_all(const sb__variant *x, int n_sweeps, char *all,
                            size_t len)
{
    all[0] = '\0';
    for (int k = 0; k < n_sweeps; k++)
        snprintf(all + strlen(all), len - strlen(all), "%s%s", k ? " " : "",
                 x->kv[k]);
}

/* The sweep's title and column heads, for a training or a serving job as
 * the first variant (p, when rc is 0) is one. */
static void sb__sweep_header(const sb__popts *o, const sb__grid *g, int rc,
                             const sb_prediction *p, bool calibrated)
{
    fprintf(sb__human, "sweep of %s (%s)%s:\n", g->keys, o->file,
            calibrated ? "; speed of light, then calibrated" : "");
    if (rc == 0 && p->w.kind == SB_JOB_TRAIN)
        fprintf(sb__human, "  %-*s %6s %-22s %10s %8s %12s %12s %9s%s  %s\n",
                g->kw, g->keys, "chips", "data/fsdp/tp/ep/pp", "step", "MFU",
                "tokens/s", "$/Mtok", "GB/chip",
                calibrated ? "   step cal  MFU cal" : "", "dominant");
    else if (rc == 0)
        fprintf(sb__human, "  %-*s %6s %-22s %10s %10s %12s %12s %9s%s  %s\n",
                g->kw, g->keys, "chips", "data/fsdp/tp/ep/pp", "TTFT", "TPOT",
                "served tok/s", "$/Mtok", "GB/chip",
                calibrated ? "   TTFT cal   TPOT cal" : "",
                "dominant (prefill/decode)");
}

/* A variant that could not be computed: the row says which, the reason
 * goes to stderr. */
static void sb__sweep_invalid(const sb__popts *o, const sb__grid *g,
                              const sb__variant *x, int rc, const sb_err *err)
{
    fprintf(sb__human, "  %-*s invalid (see the error)\n", g->kw, x->label);
    fflush(sb__human);
    sb_err row;
    char all[600];
    sb__variant_all(x, o->n_sweeps, all, sizeof all);
    sb_fail(&row, rc, "predict --sweep %s: %s", all, err->msg);
    sb_cli_error(&row);
}

/* Prints a variant's row: the speed of light, the calibrated figures
 * where there are, the class holding most of the time per stage. */
static void sb__sweep_row(const sb__grid *g, const sb__variant *x,
                          const sb_workload *w, const sb_prediction *p,
                          const sb_prediction *cal, bool calibrated)
{
    char dom[40];
    if (w->kind == SB_JOB_TRAIN)
        snprintf(dom, sizeof dom, "%s", sb__dominant(p, "step"));
    else
        snprintf(dom, sizeof dom, "%s/%s", sb__dominant(p, "prefill"),
                 sb__dominant(p, "decode"));
    char par[40], calcols[64] = "";
    snprintf(par, sizeof par, "%d/%d/%d/%d/%d", w->data, w->fsdp, w->tensor,
             w->expert, w->pipeline);
    if (calibrated && w->kind == SB_JOB_TRAIN)
        snprintf(calcols, sizeof calcols, " %8.3f s %7.1f%%", cal->step_s,
                 100 * cal->mfu);
    else if (calibrated)
        snprintf(calcols, sizeof calcols, " %7.1f ms %7.2f ms",
                 cal->ttft_s * 1e3, cal->tpot_s * 1e3);
    if (w->kind == SB_JOB_TRAIN)
        fprintf(sb__human,
                "  %-*s %6d %-22s %8.3f s %7.1f%% %12.4g %12.4g %9.1f%s  "
                "%s%s\n",
                g->kw, x->label, w->chips, par, p->step_s, 100 * p->mfu,
                p->tokens_per_s, p->cost_per_mtok, p->mem.total / 1e9, calcols,
                dom, p->mem.fits ? "" : "  (does not fit)");
    else if (p->tokens_per_s > 0)
        fprintf(sb__human,
                "  %-*s %6d %-22s %7.1f ms %7.2f ms %12.4g %12.4g %9.1f%s  "
                "%s%s\n",
                g->kw, x->label, w->chips, par, p->ttft_s * 1e3,
                p->tpot_s * 1e3, p->tokens_per_s, p->cost_per_mtok,
                p->mem.total / 1e9, calcols, dom,
                p->mem.fits ? "" : "  (does not fit)");
    else /* nothing served: no throughput or cost to print */
        fprintf(sb__human,
                "  %-*s %6d %-22s %7.1f ms %7.2f ms %12s %12s %9.1f%s  "
                "%s  (%s)\n",
                g->kw, x->label, w->chips, par, p->ttft_s * 1e3,
                p->tpot_s * 1e3, "-", "-", p->mem.total / 1e9, calcols, dom,
                p->mem.fits ? "nothing served" : "does not fit");
}

/* A variant's JSON: its prediction, its settings and, where calibrated,
 * the calibrated prediction with its source. */
static json_t *sb__sweep_json(const sb__popts *o, const sb__grid *g,
                              const sb__variant *x, const sb_workload *w,
                              const sb_prediction *p, const sb_prediction *cal,
                              bool calibrated)
{
    json_t *j = sb_predict_to_json(p);
    json_t *variant = json_object();
    for (int k = 0; k < o->n_sweeps; k++)
        json_object_set_new(variant, g->key[k],
                            json_string(strchr(x->kv[k], '=') + 1));
    char all[600];
    sb__variant_all(x, o->n_sweeps, all, sizeof all);
    json_object_set_new(j, "variant", json_string(all));
    json_object_set_new(j, "settings", variant);
    if (calibrated) {
        json_t *cj = sb_predict_to_json(cal);
        json_object_set_new(cj, "source", json_string(w->calib_source));
        json_object_set_new(j, "calibrated", cj);
    }
    return j;
}

/* Every combination of the sweeps' values (several --sweep make a grid,
 * the last varying fastest), one row each: the speed of light and, where
 * the workload is calibrated, the calibrated figures beside it. */
static int sb__sweep(const sb__popts *o, json_t *out)
{
    sb__grid g;
    int code = sb__grid_build(o, &g);
    if (code)
        return code;
    sb__grid_column(o, &g);
    json_t *rows = json_array();
    int first = 1;
    /* --capacity: each variant's, for the table after the sweep's */
    sb_capacity *caps = o->capacity ? calloc(g.total, sizeof *caps) : NULL;
    bool *ran = o->capacity ? calloc(g.total, sizeof *ran) : NULL;
    char(*labels)[600] = o->capacity ? calloc(g.total, sizeof *labels) : NULL;
    if (o->capacity && (!caps || !ran || !labels)) {
        free(caps);
        free(ran);
        free(labels);
        json_decref(rows);
        fprintf(stderr, "solbench: predict: out of memory\n");
        return 2;
    }
    for (int v = 0; v < g.total; v++) {
        sb__variant x;
        char desc[256];
        sb__variant_make(&g, o->n_sweeps, v, &x);
        sb_workload w;
        sb_ceilings c;
        sb_err err = {0};
        sb_prediction *p = malloc(sizeof *p), *cal = malloc(sizeof *cal);
        if (!p || !cal) {
            free(p);
            free(cal);
            json_decref(rows);
            return 2;
        }
        int rc = sb__prepare(o, x.extra, o->n_sweeps, NULL, &w, &c, desc,
                             sizeof desc, &err);
        if (rc == 0)
            rc = sb_workload_calibration(&w, o->calib, &err);
        if (rc == 0)
            rc = sb_predict(&w, &c, p, &err);
        bool calibrated = rc == 0 && sb_workload_calibrated(&w) &&
                          sb_predict_calibrated(&w, &c, cal, &err) == 0;
        if (first) {
            sb__sweep_header(o, &g, rc, p, calibrated);
            first = 0;
        }
        if (rc) {
            sb__sweep_invalid(o, &g, &x, rc, &err);
            code = 2;
            free(p);
            free(cal);
            continue;
        }
        sb__sweep_row(&g, &x, &w, p, cal, calibrated);
        json_t *row = sb__sweep_json(o, &g, &x, &w, p, cal, calibrated);
        if (o->capacity) {
            snprintf(labels[v], sizeof labels[v], "%s", x.label);
            if (sb_predict_capacity(&w, &c, &o->slo, &caps[v], &err) == 0) {
                ran[v] = true;
                json_object_set_new(row, "capacity",
                                    sb_cli_capacity_json(&o->slo, &caps[v], 0));
            } else {
                fprintf(stderr, "solbench: %s: %s\n", x.label, err.msg);
                code = 2;
            }
        }
        json_array_append_new(rows, row);
        free(p);
        free(cal);
    }
    json_object_set_new(out, "sweep", rows);
    if (o->capacity) {
        int best = sb_cli_capacity_table(sb__human, &o->slo, g.keys, g.kw,
                                         labels, caps, ran, g.total);
        if (best >= 0)
            json_object_set_new(out, "best_capacity",
                                json_string(labels[best]));
        free(caps);
        free(ran);
        free(labels);
    }
    return code;
}

static const char predict_help[] =
    "usage: solbench predict WORKLOAD [--hw NAME | --run ID | "
    "--results FILE]\n"
    "                        [--db PATH] [--set key=value ...] "
    "[--sweep key=v1,v2,...]\n"
    "                        [--overlap none|full|auto] "
    "[--calibration FILE] [--json FILE|-]\n"
    "  WORKLOAD        a workload file or a preset of "
    "data/models (docs/WORKLOAD.md)\n"
    "  --run ID        a stored run (id, prefix, baseline, "
    "last): its measured ceilings\n"
    "  --db PATH       results database (default $SOLBENCH_DB, "
    "else\n"
    "                  $XDG_DATA_HOME/solbench/results.db)\n"
    "  --set k=v       change a field (JSON path or alias: "
    "chips, tensor, fsdp, batch, remat, hw...)\n"
    "  --sweep k=v,... one row per value: step time, MFU, "
    "cost per million tokens\n"
    "                  (several --sweep: one row per "
    "combination; calibrated\n"
    "                  figures beside the speed of light "
    "where there is a calibration)\n"
    "  --calibration F sustained efficiencies per ceiling (a "
    "file or a name in data/calib;\n"
    "                  default data/calib/<spec>.json when "
    "there is one): prints the\n"
    "                  calibrated totals beside the speed of "
    "light\n"
    "  --slo TERMS     objectives on the simulated requests: "
    "ttft_p90=2s,tpot_p99=200ms\n"
    "                  (ttft, tpot, itl, latency, queue; p50, p90, p99, "
    "mean; s, ms, us)\n"
    "  --capacity      the largest request rate within --slo (with "
    "--sweep: per variant,\n"
    "                  the cheapest per token named)\n"
    "  --arrivals F    simulate the requests of F (JSON Lines: arrival_s, "
    "prompt_len,\n"
    "                  output_len), dealt to the replicas in turn\n"
    "  --timeline F    with a serving simulation (--set requests=N, "
    "docs/SERVING.md):\n"
    "                  its iterations as a Chrome trace (solbench trace "
    "show F)\n";

/* Parses the options into o; returns 0, -1 after --help (printed), else
 * the exit code (the error said). */
static int sb__predict_parse(int argc, char **argv, sb__popts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(predict_help, stdout);
            return -1;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--hw", &o->hw)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--run", &o->run)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--results", &o->results)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--db", &o->db)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--json", &o->json)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--calibration", &o->calib)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--timeline", &o->timeline)) != 0 ||
            (r = sb_cli_opt(argc, argv, &i, "--arrivals", &o->arrivals)) != 0) {
            if (r < 0)
                return 2;
            continue;
        }
        if (strcmp(argv[i], "--capacity") == 0) {
            o->capacity = true;
            continue;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--slo", &v)) != 0) {
            sb_err e = {0};
            if (r < 0)
                return 2;
            if (sb_slo_parse(v, &o->slo, &e))
                return sb_cli_usage("predict", "%s", e.msg);
            continue;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--sweep", &v)) != 0) {
            if (r < 0)
                return 2;
            if (o->n_sweeps >= SB_MAX_SWEEPS)
                return sb_cli_usage("predict",
                                    "too many --sweep (at most %d: their "
                                    "grid)",
                                    SB_MAX_SWEEPS);
            o->sweep[o->n_sweeps++] = v;
            continue;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--set", &v)) != 0) {
            if (r < 0)
                return 2;
            if (o->n_sets >= SB_MAX_SETS)
                return sb_cli_usage("predict", "too many --set (at most %d)",
                                    SB_MAX_SETS);
            o->sets[o->n_sets++] = v;
            continue;
        }
        if ((r = sb_cli_opt(argc, argv, &i, "--overlap", &v)) != 0) {
            if (r < 0)
                return 2;
            if (strcmp(v, "none") != 0 && strcmp(v, "full") != 0 &&
                strcmp(v, "auto") != 0)
                return sb_cli_usage("predict",
                                    "--overlap '%s': none, full or auto", v);
            snprintf(o->overlap_kv, sizeof o->overlap_kv, "overlap=\"%s\"", v);
            if (o->n_sets >= SB_MAX_SETS)
                return sb_cli_usage("predict",
                                    "too many --set (at most %d, "
                                    "--overlap counts as one)",
                                    SB_MAX_SETS);
            o->sets[o->n_sets++] = o->overlap_kv;
            continue;
        }
        if (argv[i][0] == '-')
            return sb_cli_usage("predict", "unknown option '%s'", argv[i]);
        if (o->file)
            return sb_cli_usage("predict",
                                "one workload file only ('%s' "
                                "and '%s')",
                                o->file, argv[i]);
        o->file = argv[i];
    }
    if (!o->file)
        return sb_cli_usage("predict", "usage: predict WORKLOAD [--hw NAME | "
                                       "--run ID | --results FILE] [--db PATH] "
                                       "[--set k=v ...] [--sweep k=v1,v2] "
                                       "[--overlap none|full|auto] "
                                       "[--calibration FILE] [--json FILE]");
    return 0;
}

/* Before anything is read or printed: the --json file, the form of
 * --sweep, then (with the workload at hand) the key it sweeps; reads the
 * workload and its calibration. Returns 0, else the exit code (the error
 * said). */
static int sb__predict_open(sb__popts *o, sb_workload *w, sb_ceilings *c,
                            char *desc, size_t dlen, sb_err *err)
{
    struct stat jid = {0}, tid;
    if (o->json && strcmp(o->json, "-") != 0 &&
        sb_cli_check_out("--json", o->json, &jid, err))
        return sb_cli_error(err);
    if (o->timeline && sb_cli_check_out("--timeline", o->timeline, &tid, err))
        return sb_cli_error(err);
    if (o->timeline && o->json && strcmp(o->json, "-") != 0 &&
        sb_cli_same_out(o->json, &jid, o->timeline, &tid))
        return sb_cli_usage("predict",
                            "--json and --timeline name one file "
                            "(%s)",
                            o->json);
    if (o->timeline && o->n_sweeps)
        return sb_cli_usage("predict", "--timeline takes one workload, not "
                                       "a --sweep");
    char sweep_key[SB_MAX_SWEEPS][64], sweep_vals[1024];
    for (int k = 0; k < o->n_sweeps; k++)
        if (sb__sweep_parse(o->sweep[k], sweep_key[k], sweep_vals))
            return 2;
    if (o->arrivals && o->capacity)
        return sb_cli_usage("predict", "--arrivals and --capacity: the "
                                       "capacity search draws its own "
                                       "arrivals");
    if (o->arrivals &&
        sb_sim_read_requests(o->arrivals, &o->reqs, &o->n_reqs, err))
        return sb_cli_error(err);
    json_t *doc = NULL;
    int rc = sb__prepare(o, NULL, 0, &doc, w, c, desc, dlen, err);
    for (int k = 0; rc == 0 && k < o->n_sweeps; k++)
        rc = sb_workload_check_key(doc, sweep_key[k], err);
    json_decref(doc);
    if (rc == 0)
        rc = sb_workload_calibration(w, o->calib, err);
    if (rc)
        return sb_cli_error(err);
    if (o->arrivals && w->kind != SB_JOB_INFER)
        return sb_cli_usage("predict", "--arrivals: an inference workload is "
                                       "needed");
    if (o->timeline &&
        (w->kind != SB_JOB_INFER || (w->sim_requests <= 0 && !o->n_reqs)))
        return sb_cli_usage("predict",
                            "--timeline: the workload simulates no requests "
                            "(an inference job with --set requests=N)");
    if (o->capacity && !o->slo.n)
        return sb_cli_usage("predict", "--capacity: under which objectives? "
                                       "(--slo ttft_p90=2s,tpot_p99=200ms)");
    if ((o->capacity || o->slo.n) && w->kind != SB_JOB_INFER)
        return sb_cli_usage("predict", "--slo and --capacity: an inference "
                                       "workload is needed");
    if (o->slo.n && !o->capacity && w->sim_requests <= 0 && !o->n_reqs)
        return sb_cli_usage("predict",
                            "--slo: on a simulation (--set requests=N) or "
                            "with --capacity");
    return 0;
}

/* The Chrome trace of a serving simulation: one complete event an
 * iteration on the replica's track (its composition in args), and the
 * queue lengths as counters. */
typedef struct sb__tl {
    FILE *f;
    size_t n;
} sb__tl;

static int sb__tl_iter(const sb_sim_iter *it, void *arg)
{
    sb__tl *t = arg;
    const sb_sim_batch *b = &it->b;
    const char *kind = b->prefill_seqs && b->decode_seqs ? "mixed"
                       : b->prefill_seqs                 ? "prefill"
                                                         : "decode";
    double ts = it->start_s * 1e6;
    fprintf(t->f,
            ",\n{\"ph\":\"X\",\"cat\":\"iteration\",\"name\":\"%s\",\"pid\":1,"
            "\"tid\":1,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"decode_seqs\":%d,"
            "\"decode_ctx\":%.0f,\"prefill_seqs\":%d,\"prefill_tokens\":%.0f,"
            "\"waiting\":%d,\"running\":%d}}",
            kind, ts, it->dur_s * 1e6, b->decode_seqs, b->decode_ctx,
            b->prefill_seqs, b->prefill_tokens, it->waiting, it->running);
    fprintf(t->f,
            ",\n{\"ph\":\"C\",\"name\":\"requests\",\"pid\":1,\"ts\":%.3f,"
            "\"args\":{\"waiting\":%d,\"running\":%d}}",
            ts, it->waiting, it->running);
    t->n++;
    return ferror(t->f) ? SB_EIO : 0; /* stops the simulation */
}

/* Runs the prediction again with the simulator's iterations written to
 * o->timeline as they run. */
static int sb__timeline(const sb__popts *o, const sb_workload *w,
                        const sb_ceilings *c, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(o->timeline, "w", &f, err);
    if (rc)
        return rc;
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
               "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,"
               "\"args\":{\"name\":\"solbench serving simulation: "
               "replica 0\"}}");
    sb__tl t = {f, 0};
    sb_prediction *p = malloc(sizeof *p);
    rc = p ? sb_predict_timeline(w, c, sb__tl_iter, &t, p, err)
           : sb_fail(err, SB_ENOMEM, "predict: out of memory");
    bool simulated = rc == 0 && p->sim.requests > 0;
    free(p);
    fprintf(f, "\n]}\n");
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || (rc == 0 && bad))
        return sb_fail(err, SB_EIO, "--timeline %s: cannot write", o->timeline);
    if (rc == 0 && !simulated) /* the prediction's warning said why */
        return sb_fail(err, SB_EINVAL,
                       "--timeline %s: the serving simulation did not run",
                       o->timeline);
    if (rc == 0)
        fprintf(stderr, "timeline: %zu iterations written to %s\n", t.n,
                o->timeline);
    return rc;
}

/* Prints one workload's phase table, totals and interventions (and the
 * calibrated figures where there is a calibration); returns its JSON, or
 * NULL (err set) when the calibrated prediction fails. */
static json_t *sb__predict_one(const sb__popts *o, const sb_workload *w,
                               const sb_ceilings *c, const sb_prediction *p,
                               const char *desc, sb_err *err)
{
    fprintf(sb__human, "machine model: %s\n", desc);
    sb_predict_print(sb__human, p);
    json_t *out = sb_predict_to_json(p);
    json_object_set_new(out, "machine", json_string(desc));
    if (o->slo.n && p->sim.requests > 0)
        json_object_set_new(out, "slo",
                            sb_cli_slo_report(sb__human, &o->slo, &p->sim));
    else if (o->slo.n && !o->capacity)
        fprintf(sb__human, "\nSLOs not evaluated: the serving simulation "
                           "did not run (the warning says why)\n");
    /* the capacity: under --slo with --capacity, or, where the measured
     * tokens/s was served under objectives, under those, to compare */
    sb_slo mslo = {0};
    sb_err e = {0};
    if (w->measured_slo[0] && sb_slo_parse(w->measured_slo, &mslo, &e))
        mslo.n = 0; /* checked when the workload was read */
    const sb_slo *cs = o->capacity ? &o->slo : mslo.n ? &mslo : NULL;
    double meas = 0;
    char t1[256], t2[256];
    if (cs && mslo.n &&
        strcmp(sb_slo_text(cs, t1, sizeof t1),
               sb_slo_text(&mslo, t2, sizeof t2)) == 0)
        meas = w->measured_tokens_per_s;
    sb_capacity cap, ccap;
    bool cap_cal = cs && sb_workload_calibrated(w);
    if (cs &&
        (sb_predict_capacity(w, c, cs, &cap, err) ||
         (cap_cal && sb_predict_capacity_calibrated(w, c, cs, &ccap, err)))) {
        json_decref(out);
        return NULL;
    }
    if (cs) {
        sb_cli_capacity_print(sb__human, cs, &cap, meas);
        if (cap_cal)
            sb_cli_capacity_calibrated_print(sb__human, &ccap, meas);
        json_object_set_new(out, "capacity",
                            sb_cli_capacity_json(cs, &cap, meas));
    }
    sb_interventions_print(sb__human, p);
    if (sb_workload_calibrated(w)) {
        int rc = 0;
        sb_prediction *cal = malloc(sizeof *cal);
        if (!cal || (rc = sb_predict_calibrated(w, c, cal, err)) != 0) {
            free(cal);
            json_decref(out);
            if (!rc)
                sb_fail(err, SB_ENOMEM, "predict: out of memory");
            return NULL;
        }
        sb_predict_print_modes(sb__human, p, cal, w->calib_source);
        json_t *cj = sb_predict_to_json(cal);
        json_object_set_new(cj, "source", json_string(w->calib_source));
        if (cs)
            json_object_set_new(cj, "capacity",
                                sb_cli_capacity_json(cs, &ccap, meas));
        json_object_set_new(out, "calibrated", cj);
        free(cal);
    }
    return out;
}

/* predict after its options: the prediction, its sweep or capacity, the
 * outputs; the exit code. */
static int sb__predict_main(sb__popts *op)
{
    sb__popts o = *op;
    int code;
    sb_err err = {0};
    /* --json -: the document alone on stdout, the tables on stderr */
    sb__human = o.json && strcmp(o.json, "-") == 0 ? stderr : stdout;
    sb_workload w;
    sb_ceilings c;
    char desc[256];
    code = sb__predict_open(&o, &w, &c, desc, sizeof desc, &err);
    op->reqs = o.reqs; /* freed by the caller */
    if (code)
        return code;
    sb_prediction *p = malloc(sizeof *p);
    if (!p) {
        sb_fail(&err, SB_ENOMEM, "predict: out of memory");
        return sb_cli_error(&err);
    }
    if (sb_predict(&w, &c, p, &err) != 0) {
        free(p);
        return sb_cli_error(&err);
    }
    json_t *out;
    if (o.n_sweeps) {
        out = json_object();
        json_object_set_new(out, "schema", json_string("solbench.predict/1"));
        json_object_set_new(out, "machine", json_string(desc));
        code = sb__sweep(&o, out);
    } else if (!(out = sb__predict_one(&o, &w, &c, p, desc, &err))) {
        free(p);
        return sb_cli_error(&err);
    }
    if (o.json &&
        sb_cli_write_json(out, strcmp(o.json, "-") == 0 ? NULL : o.json,
                          JSON_INDENT(2), "the prediction", &err))
        code = sb_cli_error(&err);
    if (code == 0 && o.timeline && sb__timeline(&o, &w, &c, &err))
        code = sb_cli_error(&err);
    json_decref(out);
    free(p);
    return code;
}

int sb_cmd_predict(int argc, char **argv)
{
    sb__popts o = {0};
    int code = sb__predict_parse(argc, argv, &o);
    if (code)
        return code < 0 ? 0 : code;
    code = sb__predict_main(&o);
    free(o.reqs);
    return code;
}
