/*
 * cmd_history.c — `solbench history`: the stored runs, newest first, one
 * line a run (what it measured, what was skipped or invalid, the baselines
 * that name it); `--verbose` adds each result's headline figure, `--json`
 * writes every row for scripts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli/cli.h"
#include "solbench/changepoint.h"
#include "solbench/output.h"
#include "solbench/store.h"

static const char history_help[] =
    "usage: solbench history [--bench NAME] [--last N] [--verbose | --json "
    "FILE] [--db PATH]\n"
    "       solbench history --changes [--bench NAME] [--last N] [--json FILE]\n"
    "                        [--alpha P] [--min-change PCT] [--min-size N]\n"
    "                        [--db PATH]\n"
    "  (default)      one line a run: id, start, results measured, skipped\n"
    "                 and invalid, areas, the baselines naming it; with\n"
    "                 --bench, the figure of that benchmark's one point\n"
    "  --bench NAME   only runs holding this benchmark (a glob such as\n"
    "                 'memory.*' works), and only its results\n"
    "  --last N       the N newest runs (default 20; 0 for all)\n"
    "  --verbose, -v  also each result: benchmark, the parameters not at\n"
    "                 their default, headline figure, cv, samples, validity\n"
    "  --json FILE    every result of those runs as JSON ('-': stdout)\n"
    "  --db PATH      results database (default $SOLBENCH_DB, else\n"
    "                 $XDG_DATA_HOME/solbench/results.db)\n"
    "  --changes      the change points of each point's series on each\n"
    "                 machine (its valid runs' headline figures in time\n"
    "                 order; --last default 0, every run): E-Divisive means\n"
    "                 with a permutation test (docs/HISTORY.md); a change\n"
    "                 against the figure's direction is a REGRESSION\n"
    "  --alpha P      significance of a change point (default 0.01)\n"
    "  --min-change PCT  smallest change reported, percent (default 5)\n"
    "  --min-size N   fewest runs on each side of one (default 5)\n";

/* One run's lines gathered before it is printed. */
typedef struct hist_run {
    char id[64], started[40], tags[256], areas[160];
    long n, skipped, invalid;
    /* the one result shown on the run's line under --bench */
    char fig[96];
} hist_run;

typedef struct hist_state {
    bool verbose;
    json_t *json; /* array of runs, or NULL */
    json_t *jrun; /* its current run's results */
    hist_run cur;
    bool have;
    long runs, rows;
    const char *bench;
    /* --verbose: the current run's result lines, printed after its own */
    char *lines;
    size_t nlines, caplines;
    /* baseline names per run id, "a b" */
    char (*bl_run)[64];
    char (*bl_names)[128];
    int n_bl;
} hist_state;

static const char *baselines_of(const hist_state *hs, const char *run_id)
{
    for (int i = 0; i < hs->n_bl; i++)
        if (strcmp(hs->bl_run[i], run_id) == 0)
            return hs->bl_names[i];
    return "";
}

static int add_baseline(const sb_store_baseline *b, void *arg)
{
    hist_state *hs = arg;
    for (int i = 0; i < hs->n_bl; i++)
        if (strcmp(hs->bl_run[i], b->run_id) == 0) {
            size_t l = strlen(hs->bl_names[i]);
            snprintf(hs->bl_names[i] + l, sizeof hs->bl_names[i] - l, " %s",
                     b->name);
            return 0;
        }
    void *r = realloc(hs->bl_run, (size_t)(hs->n_bl + 1) * sizeof *hs->bl_run);
    if (!r)
        return SB_ENOMEM;
    hs->bl_run = r;
    void *nm =
        realloc(hs->bl_names, (size_t)(hs->n_bl + 1) * sizeof *hs->bl_names);
    if (!nm)
        return SB_ENOMEM;
    hs->bl_names = nm;
    snprintf(hs->bl_run[hs->n_bl], sizeof hs->bl_run[0], "%s", b->run_id);
    snprintf(hs->bl_names[hs->n_bl], sizeof hs->bl_names[0], "%s", b->name);
    hs->n_bl++;
    return 0;
}

static void flush_run(hist_state *hs)
{
    if (!hs->have || hs->json)
        return;
    const hist_run *c = &hs->cur;
    char counts[64];
    int k = snprintf(counts, sizeof counts, "%ld measured", c->n - c->skipped);
    if (c->skipped)
        k += snprintf(counts + k, sizeof counts - (size_t)k, ", %ld skipped",
                      c->skipped);
    if (c->invalid)
        snprintf(counts + k, sizeof counts - (size_t)k, ", %ld INVALID",
                 c->invalid);
    const char *bl = baselines_of(hs, c->id);
    if (hs->runs == 0)
        printf("%-26s %-20s %-34s %s\n", "run", "started (UTC)",
               hs->bench ? "figure" : "results", hs->bench ? "" : "areas");
    char when[24];
    /* 2026-12-03T13:18:02.499Z -> 2026-12-03 13:18:02 */
    snprintf(when, sizeof when, "%.19s", c->started);
    if (strlen(when) > 10 && when[10] == 'T')
        when[10] = ' ';
    printf("%-26s %-20s %-34s %s%s%s%s%s\n", c->id, when,
           hs->bench ? c->fig : counts, hs->bench ? counts : c->areas,
           bl[0] ? "  baseline: " : "", bl,
           strcmp(c->tags, "{}") ? "  tags " : "",
           strcmp(c->tags, "{}") ? c->tags : "");
    if (hs->nlines)
        fwrite(hs->lines, 1, hs->nlines, stdout);
    hs->nlines = 0;
    hs->runs++;
    hs->have = false;
}

/* Appends one --verbose line to the current run's. */
static void add_line(hist_state *hs, const char *line)
{
    size_t l = strlen(line);
    if (hs->nlines + l + 1 > hs->caplines) {
        size_t cap = (hs->caplines ? hs->caplines * 2 : 4096) + l;
        char *p = realloc(hs->lines, cap);
        if (!p)
            return; /* the line is dropped, the run's summary stays */
        hs->lines = p;
        hs->caplines = cap;
    }
    memcpy(hs->lines + hs->nlines, line, l);
    hs->nlines += l;
}

static void add_area(hist_run *c, const char *bench)
{
    char area[32];
    snprintf(area, sizeof area, "%.*s", (int)strcspn(bench, "."), bench);
    /* whole words only: "moe" is not found inside "memory" */
    const char *p = c->areas;
    size_t al = strlen(area);
    while ((p = strstr(p, area))) {
        if ((p == c->areas || p[-1] == ' ') && (p[al] == ' ' || !p[al]))
            return;
        p += al;
    }
    size_t l = strlen(c->areas);
    snprintf(c->areas + l, sizeof c->areas - l, "%s%s", l ? " " : "", area);
}

static void fmt_figure(const sb_store_hist_row *r, char *buf, size_t len)
{
    if (r->skipped)
        snprintf(buf, len, "skipped");
    else if (r->metric[0])
        snprintf(buf, len, "%.4g %s", r->value, r->unit);
    else
        snprintf(buf, len, "-");
}

static int on_row(const sb_store_hist_row *r, void *arg)
{
    hist_state *hs = arg;
    if (!hs->have || strcmp(hs->cur.id, r->run_id) != 0) {
        flush_run(hs);
        memset(&hs->cur, 0, sizeof hs->cur);
        snprintf(hs->cur.id, sizeof hs->cur.id, "%s", r->run_id);
        snprintf(hs->cur.started, sizeof hs->cur.started, "%s", r->started_at);
        snprintf(hs->cur.tags, sizeof hs->cur.tags, "%s", r->tags);
        hs->have = true;
        if (hs->json) {
            json_t *tags = json_loads(r->tags, 0, NULL);
            json_t *bl = json_array();
            char names[128];
            snprintf(names, sizeof names, "%s", baselines_of(hs, r->run_id));
            for (char *save = NULL, *t = strtok_r(names, " ", &save); t;
                 t = strtok_r(NULL, " ", &save))
                json_array_append_new(bl, json_string(t));
            hs->jrun = json_array();
            /* the host and the commit, as a dashboard lists runs */
            json_t *sys = json_loads(r->system ? r->system : "{}", 0, NULL);
            const char *host = json_string_value(
                json_object_get(json_object_get(sys, "os"), "hostname"));
            const char *commit =
                json_string_value(json_object_get(tags, "commit"));
            json_array_append_new(
                hs->json,
                json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:o, s:o, s:o}",
                          "run_id", r->run_id, "started_at", r->started_at,
                          "fingerprint", r->fingerprint, "host", host, "commit",
                          commit, "tags",
                          tags ? json_incref(tags) : json_object(), "baselines",
                          bl, "results", hs->jrun));
            json_decref(tags);
            json_decref(sys);
        }
    }
    hist_run *c = &hs->cur;
    c->n++;
    c->skipped += r->skipped;
    c->invalid += !r->skipped && !r->valid;
    add_area(c, r->bench);
    char params[400], fig[64];
    sb_params_text_compact(r->bench, r->backend, r->params, params,
                           sizeof params);
    fmt_figure(r, fig, sizeof fig);
    if (hs->bench) {
        if (c->n == 1 && r->skipped)
            snprintf(c->fig, sizeof c->fig, "%s", fig);
        else if (c->n == 1)
            snprintf(c->fig, sizeof c->fig, "%s  cv %.1f%%", fig,
                     r->cv * 100.0);
        else if (c->n == 2) {
            snprintf(c->fig, sizeof c->fig, "(several points: --verbose)");
        }
    }
    if (hs->json) {
        json_array_append_new(
            hs->jrun,
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:I, s:b, s:b}",
                      "bench", r->bench, "backend", r->backend, "params",
                      r->params, "metric", r->metric, "unit", r->unit, "value",
                      r->value, "cv", r->cv, "n", (json_int_t)r->n_samples,
                      "valid", r->valid, "skipped", r->skipped));
    } else if (hs->verbose) {
        char name[96], line[700];
        snprintf(name, sizeof name, "%s%s%s", r->bench,
                 strcmp(r->backend, "cpu") ? "@" : "",
                 strcmp(r->backend, "cpu") ? r->backend : "");
        snprintf(line, sizeof line,
                 "  %-26s %-36s %16s  cv %5.1f%%  n %-5ld %s\n", name,
                 params[0] ? params : "-", fig, r->cv * 100.0, r->n_samples,
                 r->skipped ? "" : (r->valid ? "valid" : "INVALID"));
        add_line(hs, line);
    }
    hs->rows++;
    return 0;
}

int sb_cmd_history(int argc, char **argv)
{
    const char *bench = NULL, *db = NULL, *json_path = NULL;
    int last = 20;
    bool verbose = false, changes = false, last_given = false;
    sb_cp_opts cpo;
    sb_cp_opts_default(&cpo);
    const sb_cli_val vals[] = {{"--json", &json_path},
                               {"--bench", &bench},
                               {"--db", &db},
                               {NULL, NULL}};
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m = sb_cli_vals(argc, argv, &i, vals, history_help);
        if (m > 1)
            return m == SB_CLI_HELP ? 0 : 2;
        if (m)
            continue;
        if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = true;
        } else if (strcmp(argv[i], "--changes") == 0) {
            changes = true;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--alpha", &v))) {
            if (m < 0 ||
                sb_cli_number("history", "--alpha", v,
                              1.0 / (SB_CP_PERMUTATIONS + 1), 1, &cpo.alpha))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--min-change", &v))) {
            if (m < 0 || sb_cli_number("history", "--min-change", v, 0, 1000,
                                       &cpo.min_change_pct))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--min-size", &v))) {
            if (m < 0 ||
                sb_cli_int("history", "--min-size", v, 1, 1000, &cpo.min_size))
                return 2;
        } else if ((m = sb_cli_opt(argc, argv, &i, "--last", &v))) {
            if (m < 0)
                return 2;
            if (sb_cli_int("history", "--last", v, 0, 1000000000, &last))
                return 2;
            last_given = true;
        } else {
            return sb_cli_usage("history",
                                "unknown argument '%s' (see 'solbench "
                                "history --help')",
                                argv[i]);
        }
    }
    if (changes && verbose)
        return sb_cli_usage("history", "--changes and --verbose: choose one");
    if (json_path && verbose)
        return sb_cli_usage("history",
                            "--json and --verbose: choose one (the JSON holds "
                            "every result)");
    sb_err err = {0};
    struct stat jid;
    if (json_path && strcmp(json_path, "-") != 0 &&
        sb_cli_check_out("--json", json_path, &jid, &err))
        return sb_cli_error(&err);
    sb_store *st;
    char path[4096];
    if (sb_store_open_default_mode(db, SB_STORE_RO, &st, path, sizeof path,
                                   &err))
        return sb_cli_error(&err);
    if (changes) {
        int crc = sb_cli_history_changes(st, path, bench, last_given ? last : 0,
                                         json_path, &cpo);
        sb_store_close(st);
        return crc;
    }
    hist_state hs = {0};
    hs.verbose = verbose;
    hs.bench = bench;
    if (json_path)
        hs.json = json_array();
    int rc = sb_store_baseline_list(st, add_baseline, &hs, &err);
    if (!rc)
        rc = sb_store_history(st, bench, last, on_row, &hs, &err);
    sb_store_close(st);
    if (!rc)
        flush_run(&hs); /* the last run, named with its baselines */
    free(hs.bl_run);
    free(hs.bl_names);
    free(hs.lines);
    if (rc) {
        json_decref(hs.json);
        return sb_cli_error(&err);
    }
    if (hs.json) {
        int wrc = sb_cli_write_json(
            hs.json, strcmp(json_path, "-") ? json_path : NULL,
            JSON_INDENT(2) | JSON_REAL_PRECISION(10), "the history", &err);
        json_decref(hs.json);
        if (wrc)
            return sb_cli_error(&err);
        return 0;
    }
    if (hs.rows == 0)
        printf("no runs%s%s stored in %s\n", bench ? " of " : "",
               bench ? bench : "", path);
    return 0;
}
