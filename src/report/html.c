/*
 * html.c — the self-contained HTML report: machine profile, roofline chart
 * and table, bandwidth versus working-set size per memory level, collective
 * bus bandwidth versus message size, validation status, the workload's
 * phase breakdown and the run's fingerprint. Everything is inline (CSS,
 * SVG, one small script that marks the page as rendered), so the file
 * opens anywhere with no network.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/predict.h"
#include "solbench/report.h"
#include "solbench/trace.h"
#include "solbench/util.h"

static const char *sb__css =
    "body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;"
    "max-width:1100px;color:#222;background:#fafafa}"
    "h1{font-size:24px;margin-bottom:4px}h2{font-size:18px;margin-top:28px;"
    "border-bottom:2px solid #ddd;padding-bottom:4px}"
    "section{background:#fff;padding:8px 18px 16px;margin:14px 0;"
    "border:1px solid #e4e4e4;border-radius:6px}"
    "table{border-collapse:collapse;font-size:12px;margin:8px 0}"
    "th,td{border:1px solid #ddd;padding:3px 7px;text-align:left}"
    "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums}.ok{color:#207020;font-weight:bold}.bad{color:#b00020;"
    "font-weight:bold}.skip{color:#888}pre{background:#f6f6f6;padding:8px;"
    "font-size:11px;overflow-x:auto;white-space:pre-wrap}.muted{color:#777}"
    ".c-compute{color:#d62728}.c-memory{color:#1f77b4}.c-network{color:"
    "#2ca02c}.c-host{color:#9467bd}.c-latency{color:#ff7f0e}";

static void sb__h(sb_buf *b, const char *s)
{
    sb_buf_esc(b, s);
}

static void sb__profile(sb_buf *b, const sb_run *run, const sb_ceilings *c,
                        const char *desc)
{
    char t[48];
    sb_buf_printf(b, "<section id=\"profile\"><h2>Machine profile</h2>\n<p>"
                     "Machine model: ");
    sb__h(b, desc ? desc : "");
    sb_buf_printf(b, "</p>\n");
    if (run && run->system) {
        json_t *cpu = json_object_get(run->system, "cpu");
        json_t *top = json_object_get(run->system, "topology");
        json_t *mem = json_object_get(run->system, "memory");
        sb_buf_printf(b, "<p>CPU: ");
        sb__h(b, json_string_value(json_object_get(cpu, "model"))
                     ? json_string_value(json_object_get(cpu, "model"))
                     : "?");
        sb_buf_printf(
            b,
            "; %d cores, %d threads, %d NUMA node(s); memory "
            "%.1f GiB</p>\n",
            (int)json_integer_value(json_object_get(top, "cores")),
            (int)json_integer_value(json_object_get(top, "threads")),
            (int)json_integer_value(json_object_get(top, "numa_nodes")),
            json_number_value(json_object_get(mem, "gib")));
    }
    sb_buf_printf(b, "<table><tr><th>ceiling</th><th>value</th><th>source"
                     "</th></tr>\n");
    for (int i = 0; i < c->n; i++) {
        sb_buf_printf(b, "<tr><td>");
        sb__h(b, c->c[i].name);
        sb_buf_printf(b, "</td><td class=\"n\">%s</td><td>",
                      sb_fmt_si(c->c[i].value, sb_ceil_unit(c->c[i].name), 4, t,
                                sizeof t));
        sb__h(b, c->c[i].source);
        sb_buf_printf(b, "</td></tr>\n");
    }
    sb_buf_printf(b, "</table>\n");
    const char *bwn;
    double bw = sb_ceil_main_bw(c, &bwn);
    sb_buf_printf(b, "<p>Ridge points (FLOP/byte) against %s: ", bwn);
    int k = 0;
    for (int i = 0; i < c->n && bw > 0; i++)
        if (strncmp(c->c[i].name, "peak.", 5) == 0 &&
            !strstr(c->c[i].name, "theor")) {
            /* The dtype part comes from the results file: escaped. */
            sb_buf_printf(b, "%s", k++ ? ", " : "");
            sb__h(b, c->c[i].name + 5);
            sb_buf_printf(b, " %.3g", c->c[i].value / bw);
        }
    sb_buf_printf(b, "%s</p></section>\n", k ? "" : "none");
}

/* The figures a reader needs first: what the machine can do (the
 * measured ceilings, one line), how close each kernel family came to its
 * roof, what was invalid, and the workload's bottleneck with its advice. */
static void sb__verdict(sb_buf *b, const sb_run *run, const sb_ceilings *c,
                        const char *desc, const sb_roof_row *rows, int n,
                        const sb_prediction *p)
{
    char t[48];
    sb_buf_printf(b, "<section id=\"verdict\"><h2>Verdict</h2>\n<p>");
    if (run && run->system) {
        json_t *cpu = json_object_get(run->system, "cpu");
        json_t *top = json_object_get(run->system, "topology");
        const char *model = json_string_value(json_object_get(cpu, "model"));
        sb__h(b, model ? model : "?");
        sb_buf_printf(b, ", %d cores: ",
                      (int)json_integer_value(json_object_get(top, "cores")));
    } else {
        sb__h(b, desc ? desc : "");
        sb_buf_printf(b, ": ");
    }
    /* the ceilings that bound everything else, in one line */
    static const char *key[] = {"peak.fp64", "peak.fp32", "peak.bf16",
                                "peak.fp16", "peak.fp8",  "bw.HBM",
                                "bw.DRAM",   "bw.L3",     "bw.L2",
                                "bw.L1",     "host.h2d"};
    int k = 0;
    for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
        double v = sb_ceil_get(c, key[i]);
        if (!(v > 0))
            continue;
        sb_buf_printf(b, "%s<b>", k++ ? ", " : "");
        sb__h(b, key[i]);
        sb_buf_printf(b, "</b> %s",
                      sb_fmt_si(v, sb_ceil_unit(key[i]), 4, t, sizeof t));
    }
    sb_buf_printf(b, "%s</p>\n", k ? "" : "no measured ceilings");
    /* each benchmark's range of %SOL, in one paragraph */
    int shown = 0;
    for (int i = 0; i < n; i++) {
        const sb_roof_row *r = &rows[i];
        if (!r->placed || strncmp(r->bench, "memory.", 7) == 0 ||
            strcmp(r->bench, "compute.peak") == 0)
            continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = rows[j].placed && strcmp(rows[j].bench, r->bench) == 0;
        if (seen)
            continue;
        double lo = INFINITY, hi = 0;
        int cc = 0, cnt = 0;
        for (int j = i; j < n; j++)
            if (rows[j].placed && strcmp(rows[j].bench, r->bench) == 0) {
                lo = fmin(lo, rows[j].pct_sol);
                hi = fmax(hi, rows[j].pct_sol);
                cc += rows[j].bound == SB_BOUND_COMPUTE;
                cnt++;
            }
        sb_buf_printf(b, "%s<span class=\"c-%s\">",
                      shown++ ? ", "
                              : "<p>"
                                "Kernels at % of their speed of light: ",
                      cc * 2 > cnt ? "compute" : "memory");
        sb__h(b, r->bench);
        if (hi - lo >= 0.5)
            sb_buf_printf(b, "</span> %.0f&ndash;%.0f", lo, hi);
        else
            sb_buf_printf(b, "</span> %.0f", hi);
    }
    if (shown)
        sb_buf_printf(b, " (<span class=\"c-compute\">compute-</span> or "
                         "<span class=\"c-memory\">memory-bound</span>; "
                         "each point in the table below the chart).</p>\n");
    if (run) {
        size_t ok = 0, bad = 0, skip = 0;
        for (size_t i = 0; i < run->results.n; i++) {
            const sb_result *r = &run->results.items[i];
            skip += r->skipped;
            ok += !r->skipped && r->valid;
            bad += !r->skipped && !r->valid;
        }
        sb_buf_printf(b,
                      "<p><span class=\"%s\">%zu valid</span>, <span "
                      "class=\"%s\">%zu failed verification</span>, <span "
                      "class=\"skip\">%zu skipped</span> of %zu results "
                      "(<a href=\"#validation\">details</a>).</p>\n",
                      "ok", ok, bad ? "bad" : "ok", bad, skip, run->results.n);
    }
    if (p) {
        sb_intervention iv[SB_MAX_INTERVENTIONS];
        int ni = sb_interventions(p, iv, SB_MAX_INTERVENTIONS);
        sb_buf_printf(b, "<p>Workload <b>");
        sb__h(b, p->w.name);
        sb_buf_printf(b, "</b>: ");
        if (p->w.kind == SB_JOB_TRAIN)
            sb_buf_printf(b, "step %s, MFU %.1f%%",
                          sb_fmt_time(p->step_s, "s", t, sizeof t),
                          100 * p->mfu);
        else {
            char t2[48];
            sb_buf_printf(b, "TTFT %s, TPOT %s",
                          sb_fmt_time(p->ttft_s, "ms", t, sizeof t),
                          sb_fmt_time(p->tpot_s, "ms", t2, sizeof t2));
        }
        sb_buf_printf(b, ".</p>\n");
        if (ni > 0) {
            sb_buf_printf(b, "<ul>\n");
            for (int i = 0; i < ni && i < 1; i++) {
                sb_buf_printf(b, "<li>Bottleneck: <b>");
                sb__h(b, iv[i].phase);
                sb_buf_printf(b,
                              "</b> (%s, <span class=\"c-%s\">%s-bound"
                              "</span>, %.0f%% of its stage, %s at "
                              "stake): ",
                              iv[i].stage, sb_bound_name(iv[i].cls),
                              sb_bound_name(iv[i].cls), 100 * iv[i].share,
                              sb_fmt_time(iv[i].at_stake_s, "ms", t, sizeof t));
                sb__h(b, iv[i].what);
                sb_buf_printf(b, "</li>\n");
            }
            sb_buf_printf(b, "</ul>\n");
        }
    }
    sb_buf_printf(b, "</section>\n");
}

static void sb__roofline(sb_buf *b, const sb_ceilings *c,
                         const sb_roof_row *rows, int n)
{
    sb_buf_printf(b, "<section id=\"roofline\"><h2>Roofline</h2>\n");
    int points = sb_roof_points(rows, n), placed = 0;
    for (int i = 0; i < n; i++)
        placed += rows[i].placed;
    if (points == 0) {
        /* no empty chart: say what the run holds instead */
        sb_buf_printf(b,
                      "<p class=\"muted\">Nothing in this run sits under a "
                      "FLOP roofline: it has no kernel with both FLOPs and "
                      "bytes (compute.gemm, attention, moe and ops have "
                      "them; memory and transfers are bandwidths; "
                      "collectives are read against the link, below).</p>\n");
    }
    if (placed == 0) {
        sb_buf_printf(b, "</section>\n");
        return;
    }
    if (points > 0)
        sb_svg_roofline(b, c, rows, n, 1060, 560);
    char a[40], d[40];
    int above = 0;
    sb_buf_printf(b,
                  "<details%s><summary>%d placed result%s: AI, achieved, "
                  "attainable, %%SOL, binding ceiling</summary>\n",
                  points ? "" : " open", placed, placed == 1 ? "" : "s");
    sb_buf_printf(b, "<table><tr><th>#</th><th>kernel</th><th>params</th>"
                     "<th>AI (FLOP/B)</th><th>achieved</th><th>attainable"
                     "</th><th>%%SOL</th><th>binding ceiling</th><th>class"
                     "</th></tr>\n");
    for (int i = 0; i < n; i++) {
        const sb_roof_row *r = &rows[i];
        if (!r->placed)
            continue;
        if (r->num > 0)
            sb_buf_printf(b, "<tr><td class=\"n\">%d</td><td>", r->num);
        else
            sb_buf_printf(b, "<tr><td class=\"n\">-</td><td>");
        sb__h(b, r->bench);
        sb_buf_printf(b, "</td><td>");
        sb__h(b, r->params);
        if (r->ai > 0)
            sb_buf_printf(b, "</td><td class=\"n\">%.3g", r->ai);
        else
            sb_buf_printf(b, "</td><td class=\"n\">-");
        sb_buf_printf(b,
                      "</td><td class=\"n\">%s</td><td class=\"n\">%s"
                      "</td><td class=\"n\">%.1f</td><td>",
                      sb_fmt_si(r->achieved, r->unit, 4, a, sizeof a),
                      sb_fmt_si(r->attainable, r->unit, 4, d, sizeof d),
                      r->pct_sol);
        sb__h(b, r->ceiling);
        sb_buf_printf(b, "</td><td class=\"c-%s\">%s%s</td></tr>\n",
                      sb_bound_name(r->bound), sb_bound_name(r->bound),
                      r->pct_sol > 100.5 ? " (!)" : "");
        above += r->pct_sol > 100.5;
    }
    sb_buf_printf(b, "</table>\n");
    if (above)
        sb_buf_printf(b,
                      "<p class=\"bad\">(!) %d result%s above its own roof: "
                      "the ceiling and the kernel were measured in different "
                      "stretches of the machine, one of the two is not its "
                      "figure (measure them together: --interleave).</p>\n",
                      above, above == 1 ? "" : "s");
    sb_buf_printf(b, "</details>\n</section>\n");
}

/* Series from a run: results of `bench` (or of an area when bench starts
 * with "area:"), grouped by `group` params, x = size, y = metric (GB/s). */
static int sb__series(const sb_run *run, bool area, const char *what,
                      const char *metric, sb_line_series *s, int max)
{
    int ns = 0;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        if (r->skipped)
            continue;
        if (area ? strcmp(r->area, what) != 0 : strcmp(r->bench, what) != 0)
            continue;
        const sb_pval *sz = sb_p_find(&r->params, "size");
        const sb_metric *m = sb_result_get(r, metric);
        if (!(sb_pval_num(sz) > 0) || !m)
            continue;
        char key[64];
        if (area) {
            snprintf(key, sizeof key, "%s", r->bench);
        } else {
            const sb_pval *k = sb_p_find(&r->params, "kernel");
            const sb_pval *th = sb_p_find(&r->params, "threads");
            snprintf(key, sizeof key, "%s, %s thread(s)", k ? k->text : "?",
                     th ? th->text : "?");
        }
        int j = 0;
        while (j < ns && strcmp(s[j].name, key) != 0)
            j++;
        if (j == ns) {
            if (ns == max)
                continue;
            memset(&s[ns], 0, sizeof s[ns]);
            snprintf(s[ns].name, sizeof s[ns].name, "%s", key);
            s[ns].x = calloc(run->results.n, sizeof(double));
            s[ns].y = calloc(run->results.n, sizeof(double));
            if (!s[ns].x || !s[ns].y) {
                free(s[ns].x);
                free(s[ns].y);
                continue;
            }
            ns++;
        }
        s[j].x[s[j].n] = sb_pval_num(sz);
        s[j].y[s[j].n] = m->value;
        s[j].n++;
    }
    return ns;
}

static void sb__free_series(sb_line_series *s, int n)
{
    for (int i = 0; i < n; i++) {
        free(s[i].x);
        free(s[i].y);
    }
}

static void sb__curves(sb_buf *b, const sb_run *run)
{
    sb_line_series s[10];
    sb_buf_printf(b, "<section id=\"bandwidth\"><h2>Bandwidth versus "
                     "working-set size</h2>\n");
    int ns = run ? sb__series(run, false, "memory.sweep", "GBps", s, 10) : 0;
    if (ns) {
        sb_hline hl[4];
        int nh = 0;
        static const char *lv[] = {"L1", "L2", "L3", "DRAM"};
        for (size_t i = 0; i < run->results.n; i++) {
            const sb_result *r = &run->results.items[i];
            if (strcmp(r->bench, "memory.sweep") != 0)
                continue;
            for (int l = 0; l < 4; l++) {
                char m[16];
                snprintf(m, sizeof m, "%s_GBps", lv[l]);
                const sb_metric *x = sb_result_get(r, m);
                if (!x || !(x->value > 0))
                    continue;
                int j = 0;
                while (j < nh && strcmp(hl[j].name, lv[l]) != 0)
                    j++;
                if (j == nh && nh < 4) {
                    snprintf(hl[nh].name, sizeof hl[nh].name, "%s", lv[l]);
                    hl[nh++].y = x->value;
                } else if (j < nh && x->value > hl[j].y) {
                    hl[j].y = x->value;
                }
            }
        }
        sb_svg_lines(b, "Memory bandwidth per level (memory.sweep)",
                     "working-set size", "bandwidth (GB/s)", true, s, ns, hl,
                     nh, 1000, 460);
        sb__free_series(s, ns);
    } else {
        sb_buf_printf(b,
                      "<p class=\"muted\">No memory.sweep results in this "
                      "run (run <code>solbench run --bench memory.sweep</code>"
                      ").</p>\n");
    }
    sb_buf_printf(b, "</section>\n<section id=\"collectives\"><h2>Collective "
                     "bus bandwidth versus message size</h2>\n");
    ns = run ? sb__series(run, true, "network", "busbw_GBps", s, 10) : 0;
    if (ns) {
        sb_svg_lines(b, "Bus bandwidth (nccl-tests definition)", "message size",
                     "bus bandwidth (GB/s)", true, s, ns, NULL, 0, 1000, 460);
        sb__free_series(s, ns);
    } else {
        sb_buf_printf(b, "<p class=\"muted\">No network results in this run "
                         "(run the network area under mpirun).</p>\n");
    }
    sb_buf_printf(b, "</section>\n");
}

static void sb__validation(sb_buf *b, const sb_run *run)
{
    sb_buf_printf(b, "<section id=\"validation\"><h2>Validation</h2>\n");
    if (!run) {
        sb_buf_printf(b, "<p class=\"muted\">No run given.</p></section>\n");
        return;
    }
    size_t ok = 0, bad = 0, skip = 0;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        if (r->skipped)
            skip++;
        else if (r->valid)
            ok++;
        else
            bad++;
    }
    sb_buf_printf(b,
                  "<p><span class=\"%s\">%zu valid</span>, <span "
                  "class=\"%s\">%zu failed verification</span>, <span "
                  "class=\"skip\">%zu skipped</span> of %zu results.</p>\n",
                  "ok", ok, bad ? "bad" : "ok", bad, skip, run->results.n);
    sb_buf_printf(b, "<table><tr><th>benchmark</th><th>params</th><th>status"
                     "</th><th>notes</th></tr>\n");
    size_t shown = 0;
    for (size_t i = 0; i < run->results.n; i++) {
        const sb_result *r = &run->results.items[i];
        /* Sweep points are many; show the failures among them only. */
        if (strcmp(r->bench, "memory.sweep") == 0 && r->valid && !r->skipped)
            continue;
        if (++shown > 200)
            break;
        char pbuf[200];
        sb_buf_printf(b, "<tr><td>");
        sb__h(b, r->bench);
        sb_buf_printf(b, "</td><td>");
        sb__h(b, sb_params_fmt(&r->params, pbuf, sizeof pbuf));
        sb_buf_printf(b, "</td><td class=\"%s\">%s</td><td>",
                      r->skipped ? "skip"
                      : r->valid ? "ok"
                                 : "bad",
                      r->skipped ? "skipped"
                      : r->valid ? "valid"
                                 : "INVALID");
        if (r->n_notes > 0)
            sb__h(b, r->notes[0]);
        sb_buf_printf(b, "</td></tr>\n");
    }
    sb_buf_printf(b, "</table></section>\n");
}

static void sb__phase_rows(sb_buf *b, const sb_prediction *p, const char *stage)
{
    char t1[40], t2[40], t3[40], t4[40], t5[40];
    sb_buf_printf(b,
                  "<table><tr><th>%s phase</th><th>FLOPs</th><th>bytes"
                  "</th><th>comm bytes</th><th>host bytes</th><th>time</th>"
                  "<th>share</th><th>class</th><th>binding ceiling</th></tr>\n",
                  stage);
    for (int i = 0; i < p->n; i++) {
        const sb_phase *ph = &p->ph[i];
        if (strcmp(ph->stage, stage) != 0)
            continue;
        sb_buf_printf(b, "<tr><td>");
        sb__h(b, ph->name);
        sb_buf_printf(b,
                      "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                      "<td class=\"n\">%s</td><td class=\"n\">%s</td>"
                      "<td class=\"n\">%s</td><td class=\"n\">%.1f%%</td>"
                      "<td class=\"c-%s\">%s</td><td>",
                      sb_fmt_si(ph->flops, "", 4, t1, sizeof t1),
                      sb_fmt_si(ph->bytes, "B", 4, t2, sizeof t2),
                      sb_fmt_si(ph->comm_bytes, "B", 4, t3, sizeof t3),
                      sb_fmt_si(ph->host_bytes, "B", 4, t4, sizeof t4),
                      sb_fmt_time(ph->t, "µs", t5, sizeof t5), 100 * ph->share,
                      sb_bound_name(ph->bound), sb_bound_name(ph->bound));
        sb__h(b, ph->ceiling);
        sb_buf_printf(b, "</td></tr>\n");
    }
    sb_buf_printf(b, "</table>\n");
}

static void sb__workload(sb_buf *b, const sb_prediction *p)
{
    sb_buf_printf(b, "<section id=\"workload\"><h2>Workload phases</h2>\n");
    if (!p) {
        sb_buf_printf(b, "<p class=\"muted\">No workload given (use "
                         "<code>--workload FILE</code>).</p></section>\n");
        return;
    }
    /* The text the command prints: its first lines (workload and machine:
     * the prediction's machine is the workload's, not necessarily the
     * run's) go above the chart, its totals and interventions below. */
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    if (f) {
        sb_predict_print(f, p);
        sb_interventions_print(f, p);
        fclose(f);
    }
    const char *gap = txt ? strstr(txt, "\n\n") : NULL;
    const char *tot = txt ? strstr(txt, "\ntotals:") : NULL;
    if (gap) {
        char *head = strndup(txt, (size_t)(gap - txt));
        sb_buf_printf(b, "<pre>");
        sb__h(b, head ? head : "");
        sb_buf_printf(b, "</pre>\n");
        free(head);
    }
    sb_svg_phases(b, p, 1000);
    if (p->w.kind == SB_JOB_TRAIN) {
        sb__phase_rows(b, p, "step");
    } else {
        sb__phase_rows(b, p, "prefill");
        sb__phase_rows(b, p, "decode");
        sb__phase_rows(b, p, "serve");
    }
    if (tot) {
        sb_buf_printf(b, "<pre>");
        sb__h(b, tot + 1);
        sb_buf_printf(b, "</pre>\n");
    }
    free(txt);
    sb_buf_printf(b, "</section>\n");
}

static void sb__fingerprint(sb_buf *b, const sb_run *run)
{
    sb_buf_printf(b, "<section id=\"fingerprint\"><h2>Fingerprint</h2>\n");
    if (!run || !run->system) {
        sb_buf_printf(b, "<p class=\"muted\">No run given.</p></section>\n");
        return;
    }
    const char *fp =
        json_string_value(json_object_get(run->system, "fingerprint"));
    sb_buf_printf(b, "<p>Machine fingerprint: <code id=\"sb-fingerprint\">");
    sb__h(b, fp ? fp : "(none)");
    sb_buf_printf(b, "</code>; run <code>");
    sb__h(b, run->run_id);
    sb_buf_printf(b, "</code>, started ");
    sb__h(b, run->started_at);
    sb_buf_printf(b, "</p>\n<details><summary>system and config</summary>"
                     "<pre>");
    char *s = json_dumps(run->system, JSON_INDENT(1) | JSON_SORT_KEYS);
    if (s) {
        sb__h(b, s);
        free(s);
    }
    if (run->config &&
        (s = json_dumps(run->config, JSON_INDENT(1) | JSON_SORT_KEYS))) {
        sb_buf_printf(b, "\n");
        sb__h(b, s);
        free(s);
    }
    sb_buf_printf(b, "</pre></details></section>\n");
}

static int cmp_time(const void *pa, const void *pb)
{
    const sb_tr_row *a = *(const sb_tr_row *const *)pa,
                    *b = *(const sb_tr_row *const *)pb;
    return (a->t_s < b->t_s) - (a->t_s > b->t_s);
}

int sb_trace_roof_rows(const sb_tr_analysis *a, int max, sb_roof_row **rows,
                       int *n)
{
    *rows = NULL;
    *n = 0;
    const sb_tr_row **ord = malloc((a->nrows + 1) * sizeof *ord);
    sb_roof_row *out = calloc((size_t)(max > 0 ? max : 1), sizeof *out);
    if (!ord || !out) {
        free(ord);
        free(out);
        return SB_ENOMEM;
    }
    for (size_t i = 0; i < a->nrows; i++)
        ord[i] = &a->rows[i];
    qsort(ord, a->nrows, sizeof *ord, cmp_time);
    int k = 0;
    for (size_t i = 0; i < a->nrows && k < max; i++) {
        const sb_tr_row *r = ord[i];
        if (!(r->cost.flops > 0 && r->cost.bytes > 0 && r->attainable > 0 &&
              r->count > 0 && r->t_s > 0))
            continue;
        sb_roof_row *o = &out[k++];
        double mean = r->t_s / r->count;
        snprintf(o->bench, sizeof o->bench, "%s", r->name);
        snprintf(o->params, sizeof o->params, "%s", r->shapes);
        snprintf(o->dtype, sizeof o->dtype, "%s", r->cost.dtype);
        o->on_chart = true;
        o->flops_s = r->cost.flops / mean;
        o->bytes_s = r->cost.bytes / mean;
        o->ai = r->ai;
        o->achieved = r->achieved;
        o->attainable = r->attainable;
        o->pct_sol = r->pct_sol;
        snprintf(o->unit, sizeof o->unit, "FLOP/s");
        snprintf(o->ceiling, sizeof o->ceiling, "%s", r->ceiling);
        o->bound = r->bound;
        o->valid = true;
    }
    free(ord);
    *rows = out;
    *n = k;
    return 0;
}

static void sb__trace(sb_buf *b, const sb_ceilings *c,
                      const sb_report_trace *tr)
{
    if (!tr || !tr->t || !tr->a)
        return;
    sb_buf_printf(b, "<section id=\"trace\"><h2>Trace</h2>\n<p>");
    sb__h(b, tr->t->label);
    sb_buf_printf(b, ": its ops on this machine's roofline (the 40 with "
                     "most time that have FLOPs and bytes)</p>\n");
    sb_roof_row *rows = NULL;
    int n = 0;
    if (sb_trace_roof_rows(tr->a, 40, &rows, &n) == 0)
        sb_svg_roofline(b, c, rows, n, 1000, 560);
    free(rows);
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    if (f) {
        sb_tr_print(f, tr->t, tr->a, 40);
        fclose(f);
    }
    sb_buf_printf(b, "<pre>");
    sb__h(b, txt ? txt : "");
    sb_buf_printf(b, "</pre>\n</section>\n");
    free(txt);
}

int sb_report_html(const char *path, const sb_run *run, const sb_ceilings *c,
                   const char *machine_desc, const sb_prediction *p,
                   const sb_report_trace *tr, sb_err *err)
{
    sb_buf b = {0};
    sb_buf_printf(&b,
                  "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                  "charset=\"utf-8\"><title>solbench report</title>\n"
                  "<style>%s</style></head>\n<body>\n<h1>solbench report</h1>"
                  "\n<p class=\"muted\">",
                  sb__css);
    if (run) {
        sb_buf_printf(&b, "run ");
        sb__h(&b, run->run_id);
        sb_buf_printf(&b, " · ");
        sb__h(&b, run->started_at);
    } else {
        sb_buf_printf(&b, "no measured run");
    }
    if (p) {
        sb_buf_printf(&b, " · workload ");
        sb__h(&b, p->w.name);
    }
    if (tr && tr->t) {
        sb_buf_printf(&b, " · trace ");
        sb__h(&b, tr->t->label);
    }
    sb_buf_printf(&b, "</p>\n");
    sb_roof_row *rows = NULL;
    int nrows = 0;
    if (run)
        sb_roof_table(run, c, &rows, &nrows);
    /* What a reader needs first, then the details folded. */
    sb__verdict(&b, run, c, machine_desc, rows, nrows, p);
    sb__roofline(&b, c, rows, nrows);
    free(rows);
    sb__workload(&b, p);
    sb__trace(&b, c, tr);
    sb_buf_printf(&b, "<section id=\"details\"><h2>Details</h2>\n");
    sb_buf_printf(&b, "<details><summary>Machine profile: every ceiling"
                      "</summary>\n");
    sb__profile(&b, run, c, machine_desc);
    sb_buf_printf(&b, "</details>\n<details><summary>Bandwidth versus "
                      "working-set size, collectives versus message size"
                      "</summary>\n");
    sb__curves(&b, run);
    sb_buf_printf(&b, "</details>\n<details><summary>Validation of every "
                      "result</summary>\n");
    sb__validation(&b, run);
    sb_buf_printf(&b, "</details>\n<details><summary>Fingerprint, system and "
                      "config</summary>\n");
    sb__fingerprint(&b, run);
    sb_buf_printf(&b, "</details>\n</section>\n");
    /* Marks the page as rendered once the charts are in the DOM, so a
     * headless browser can check it loaded. */
    /* ... and where the roofline landed: the top of its first point on
     * the page and how many pairs of its labels overlap as the browser
     * laid them out (the report's test reads both). */
    sb_buf_printf(&b,
                  "<p id=\"sb-status\" class=\"muted\" "
                  "data-charts=\"0\">static</p>\n<script>(function(){var n="
                  "document.querySelectorAll('svg').length;var s=document."
                  "getElementById('sb-status');s.setAttribute('data-charts',"
                  "String(n));s.textContent='rendered: '+n+' charts';"
                  "var r=document.querySelector('#roofline svg');if(!r)return;"
                  "var p=r.querySelectorAll('circle.pt');s.setAttribute("
                  "'data-roof-points',String(p.length));if(p.length)s."
                  "setAttribute('data-roof-first-top',String(Math.round(p[0]."
                  "getBoundingClientRect().top+window.scrollY)));var t=[]."
                  "slice.call(r.querySelectorAll('text')).map(function(e){"
                  "return e.getBoundingClientRect();});var o=0;for(var i=0;i<"
                  "t.length;i++)for(var j=i+1;j<t.length;j++){var a=t[i],c=t"
                  "[j];if(a.left<c.right-0.5&&c.left<a.right-0.5&&a.top<c."
                  "bottom-0.5&&c.top<a.bottom-0.5)o++;}s.setAttribute("
                  "'data-roof-overlaps',String(o));})();"
                  "</script>\n</body></html>\n");
    if (b.oom) {
        sb_buf_free(&b);
        return sb_fail(err, SB_ENOMEM, "report: out of memory");
    }
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc) {
        sb_buf_free(&b);
        return rc;
    }
    size_t w = fwrite(b.s, 1, b.n, f);
    int bad = fclose(f) != 0 || w != b.n;
    sb_buf_free(&b);
    if (bad)
        return sb_fail(err, SB_EIO, "%s: write failed", path);
    return 0;
}
