/*
 * fleet_report.c — a fleet run's report (fleet.h): its diagnosis, the
 * table a person reads, the JSON (schema solbench.fleet/1, docs/FLEET.md)
 * and the JUnit XML a CI job or a scheduler's prolog reads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/fleet.h"
#include "solbench/util.h"

int sb_fleet_analyse(sb_fleet_report *r, sb_err *err)
{
    free(r->flags);
    free(r->links);
    r->flags = NULL;
    r->links = NULL;
    r->nflags = r->nlinks = 0;
    int rc = sb_fleet_diagnose(r->hosts, r->nhosts, r->v, r->nv, &r->rules,
                               &r->flags, &r->nflags, err);
    if (rc == 0 && r->bw)
        rc = sb_fleet_diagnose_links(r->nhosts, r->bw, &r->rules, r->flags,
                                     r->nflags, &r->links, &r->nlinks, err);
    for (int h = 0; h < r->nhosts; h++) {
        int peers = 0;
        for (int k = 0; k < r->nhosts; k++)
            peers += !r->hosts[k].failed &&
                     strcmp(r->hosts[k].cls, r->hosts[h].cls) == 0;
        r->hosts[h].unjudged =
            !r->hosts[h].failed && peers < r->rules.min_peers;
    }
    return rc;
}

bool sb_fleet_unhealthy(const sb_fleet_report *r)
{
    if (r->nflags || r->nlinks)
        return true;
    for (size_t k = 0; k < r->ncoll; k++)
        if (!r->coll[k].valid)
            return true;
    for (int h = 0; h < r->nhosts; h++)
        if (r->hosts[h].failed || r->hosts[h].unjudged)
            return true;
    return false;
}

/* A figure with its metric's unit, readable. */
static const char *fmt_value(const char *metric, double x, char *buf,
                             size_t len)
{
    char u[32] = "";
    const char *sp = strrchr(metric, ' ');
    if (sp && strcmp(sp, " sustained") == 0) { /* the unit before it */
        const char *q = sp;
        while (q > metric && q[-1] != ' ')
            q--;
        snprintf(u, sizeof u, "%.*s", (int)(sp - q), q);
    } else {
        snprintf(u, sizeof u, "%s", sp ? sp + 1 : "");
    }
    const char *unit = u;
    if (strcmp(unit, "Bps") == 0)
        snprintf(buf, len, "%.4g GB/s", x / 1e9);
    else if (strcmp(unit, "s") == 0)
        snprintf(buf, len, "%.4g us", x * 1e6);
    else
        snprintf(buf, len, "%.4g %s", x, unit);
    return buf;
}

void sb_fleet_print(FILE *f, const sb_fleet_report *r)
{
    fprintf(f, "fleet %s: %d host%s, %d rank%s (%s); the suite %d time%s\n",
            r->id, r->nhosts, r->nhosts == 1 ? "" : "s", r->nranks,
            r->nranks == 1 ? "" : "s", r->launcher[0] ? r->launcher : "MPI",
            r->rounds, r->rounds == 1 ? "" : "s, a host's figure its median");
    fprintf(f, "  %-4s %-24s %5s  %-16s %s\n", "#", "host", "ranks", "class",
            "run");
    for (int h = 0; h < r->nhosts; h++) {
        const sb_fleet_host *x = &r->hosts[h];
        fprintf(f, "  %-4d %-24s %5d  %-16.16s %s%s%s\n", h, x->name, x->ranks,
                x->cls, x->failed ? "FAILED: " : "",
                x->failed    ? x->why
                : r->run_ids ? r->run_ids[h]
                             : "",
                "");
    }
    if (r->bw) {
        int n = r->nhosts;
        fprintf(f, "\nlinks (GB/s, row sends to column; latency us):\n  %-12s",
                "");
        for (int j = 0; j < n; j++)
            fprintf(f, " %9.9s", r->hosts[j].name);
        fputc('\n', f);
        for (int i = 0; i < n; i++) {
            fprintf(f, "  %-12.12s", r->hosts[i].name);
            for (int j = 0; j < n; j++) {
                double b = r->bw[(size_t)i * n + j];
                if (i == j || !(b > 0))
                    fprintf(f, " %9s", "-");
                else
                    fprintf(f, " %9.3g", b / 1e9);
            }
            fprintf(f, "   lat");
            for (int j = 0; j < n; j++) {
                double l = r->lat ? r->lat[(size_t)i * n + j] : 0;
                if (i == j || !(l > 0))
                    fprintf(f, " %6s", "-");
                else
                    fprintf(f, " %6.1f", l * 1e6);
            }
            fputc('\n', f);
        }
    }
    if (r->ncoll) {
        fprintf(f, "\ncollectives (median of the iterations; predicted: the "
                   "two-level model from this fleet's links):\n");
        fprintf(f, "  %-6s %-12s %5s %10s %12s %12s %7s\n", "level", "op",
                "ranks", "size", "measured", "predicted", "ratio");
        for (size_t k = 0; k < r->ncoll; k++) {
            const sb_fleet_coll *c = &r->coll[k];
            char pred[32] = "-", ratio[16] = "-";
            if (c->predicted_s > 0) {
                snprintf(pred, sizeof pred, "%.4g ms", c->predicted_s * 1e3);
                snprintf(ratio, sizeof ratio, "%.2f",
                         c->seconds / c->predicted_s);
            }
            fprintf(f, "  %-6s %-12s %5d %7.4g MiB %9.4g ms %12s %7s%s\n",
                    c->level, c->op, c->ranks, c->bytes / 1048576.0,
                    c->seconds * 1e3, pred, ratio,
                    c->valid ? "" : "  INVALID: a sum was wrong");
        }
    }
    size_t npeer = 0;
    for (size_t k = 0; k < r->nflags; k++)
        npeer += !r->flags[k].vs_baseline;
    for (int pass = 0; pass < 2; pass++) {
        size_t want = pass == 0 ? npeer : r->nflags - npeer;
        if (want == 0)
            continue;
        if (pass == 0)
            fprintf(f, "\nflagged hosts (worse than their peers by more "
                       "than the bar; like with like):\n");
        else
            fprintf(f,
                    "\nflagged against the baseline fleet %s (worse than "
                    "the host's own figure there by more than the bar):\n",
                    r->baseline);
        fprintf(f, "  %-20s %-44s %14s %14s %8s %6s\n", "host", "metric",
                "value", pass == 0 ? "median" : "baseline", "dev", "bar");
        for (size_t k = 0; k < r->nflags; k++) {
            const sb_fleet_flag *g = &r->flags[k];
            if (g->vs_baseline != (pass == 1))
                continue;
            char a[32], b[32];
            fprintf(f, "  %-20s %-44.44s %14s %14s %+7.1f%% %5.1f%%\n",
                    r->hosts[g->host].name, g->metric,
                    fmt_value(g->metric, g->value, a, sizeof a),
                    fmt_value(g->metric, g->median, b, sizeof b),
                    g->deviation_pct, g->threshold_pct);
        }
    }
    if (r->nlinks) {
        fprintf(f, "\nslow links:\n");
        for (size_t k = 0; k < r->nlinks; k++) {
            const sb_fleet_link_flag *l = &r->links[k];
            fprintf(f, "  %s -> %s  %.3g GB/s against %.3g (%+.1f%%)%s%s\n",
                    r->hosts[l->from].name, r->hosts[l->to].name,
                    l->bw_Bps / 1e9, l->reference_Bps / 1e9, l->deviation_pct,
                    l->cause >= 0 ? "; cause: " : "",
                    l->cause >= 0 ? r->hosts[l->cause].name : "");
        }
    }
    int unjudged = 0;
    for (int h = 0; h < r->nhosts; h++)
        unjudged += r->hosts[h].unjudged;
    if (unjudged) {
        fprintf(f,
                "\nnot judged (fewer than %d hosts of their fingerprint, "
                "their hardware and software, to compare with):",
                r->rules.min_peers);
        for (int h = 0; h < r->nhosts; h++)
            if (r->hosts[h].unjudged)
                fprintf(f, " %s", r->hosts[h].name);
        fputc('\n', f);
    }
    sb_fleet_print_verdict(f, r);
}

void sb_fleet_print_verdict(FILE *f, const sb_fleet_report *r)
{
    int failed = 0, unjudged = 0, invalid = 0;
    for (int h = 0; h < r->nhosts; h++) {
        failed += r->hosts[h].failed;
        unjudged += r->hosts[h].unjudged;
    }
    for (size_t k = 0; k < r->ncoll; k++)
        invalid += !r->coll[k].valid;
    if (!sb_fleet_unhealthy(r))
        fprintf(f,
                "\nverdict: healthy (no host or link worse than its peers "
                "by %.0f%% and %.0f x their spread)\n",
                r->rules.floor_pct, r->rules.k_mad);
    else
        fprintf(f,
                "\nverdict: %zu host figure%s, %zu link%s flagged, %d host%s "
                "failed, %d not judged%s\n",
                r->nflags, r->nflags == 1 ? "" : "s", r->nlinks,
                r->nlinks == 1 ? "" : "s", failed, failed == 1 ? "" : "s",
                unjudged,
                invalid ? ", a collective's sums wrong (INVALID above)" : "");
}

static json_t *matrix(const double *m, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        json_t *row = json_array();
        for (int j = 0; j < n; j++) {
            double x = m[(size_t)i * n + j];
            json_array_append_new(row, i != j && isfinite(x) && x > 0
                                           ? json_real(x)
                                           : json_null());
        }
        json_array_append_new(a, row);
    }
    return a;
}

json_t *sb_fleet_to_json(const sb_fleet_report *r)
{
    json_t *d = json_object();
    json_object_set_new(d, "schema", json_string("solbench.fleet/1"));
    json_object_set_new(d, "fleet", json_string(r->id));
    json_object_set_new(d, "started_at", json_string(r->started_at));
    json_object_set_new(d, "launcher", json_string(r->launcher));
    json_object_set_new(d, "ranks", json_integer(r->nranks));
    json_object_set_new(d, "rounds", json_integer(r->rounds));
    json_t *rules = json_object();
    json_object_set_new(rules, "floor_pct", json_real(r->rules.floor_pct));
    json_object_set_new(rules, "latency_floor_pct",
                        json_real(r->rules.latency_floor_pct));
    json_object_set_new(rules, "k_mad", json_real(r->rules.k_mad));
    json_object_set_new(rules, "min_peers", json_integer(r->rules.min_peers));
    json_object_set_new(d, "rules", rules);
    json_t *hosts = json_array();
    for (int h = 0; h < r->nhosts; h++) {
        const sb_fleet_host *x = &r->hosts[h];
        json_t *o = json_object();
        json_object_set_new(o, "host", json_string(x->name));
        json_object_set_new(o, "class", json_string(x->cls));
        json_object_set_new(o, "ranks", json_integer(x->ranks));
        if (r->run_ids && r->run_ids[h][0])
            json_object_set_new(o, "run", json_string(r->run_ids[h]));
        json_object_set_new(o, "failed", json_boolean(x->failed));
        json_object_set_new(o, "judged",
                            json_boolean(!x->failed && !x->unjudged));
        if (x->failed)
            json_object_set_new(o, "why", json_string(x->why));
        json_t *m = json_object();
        for (size_t k = 0; k < r->nv; k++)
            if (r->v[k].host == h)
                json_object_set_new(m, r->v[k].metric,
                                    json_real(r->v[k].value));
        json_object_set_new(o, "metrics", m);
        json_array_append_new(hosts, o);
    }
    json_object_set_new(d, "hosts", hosts);
    /* the figures where lower is better (every other: higher), so a
     * stored fleet is judged again as it was */
    json_t *lower = json_object(); /* a set, then its keys in order */
    for (size_t k = 0; k < r->nv; k++)
        if (!r->v[k].higher_better)
            json_object_set_new(lower, r->v[k].metric, json_true());
    json_t *la = json_array();
    const char *key;
    json_t *val;
    json_object_foreach(lower, key, val)
        json_array_append_new(la, json_string(key));
    json_decref(lower);
    json_object_set_new(d, "lower_better", la);
    if (r->baseline[0])
        json_object_set_new(d, "baseline", json_string(r->baseline));
    json_t *fl = json_array();
    for (size_t k = 0; k < r->nflags; k++) {
        const sb_fleet_flag *g = &r->flags[k];
        json_t *o = json_object();
        json_object_set_new(o, "host", json_string(r->hosts[g->host].name));
        json_object_set_new(o, "metric", json_string(g->metric));
        json_object_set_new(o, "value", json_real(g->value));
        json_object_set_new(o, "median", json_real(g->median));
        json_object_set_new(o, "deviation_pct", json_real(g->deviation_pct));
        json_object_set_new(o, "threshold_pct", json_real(g->threshold_pct));
        json_object_set_new(o, "peers", json_integer(g->peers));
        json_object_set_new(o, "against",
                            json_string(g->vs_baseline ? "baseline" : "peers"));
        json_array_append_new(fl, o);
    }
    json_object_set_new(d, "flagged", fl);
    json_t *ln = json_array();
    for (size_t k = 0; k < r->nlinks; k++) {
        const sb_fleet_link_flag *l = &r->links[k];
        json_t *o = json_object();
        json_object_set_new(o, "from", json_string(r->hosts[l->from].name));
        json_object_set_new(o, "to", json_string(r->hosts[l->to].name));
        json_object_set_new(o, "bw_Bps", json_real(l->bw_Bps));
        json_object_set_new(o, "reference_Bps", json_real(l->reference_Bps));
        json_object_set_new(o, "deviation_pct", json_real(l->deviation_pct));
        json_object_set_new(o, "threshold_pct", json_real(l->threshold_pct));
        json_object_set_new(o, "cause",
                            l->cause >= 0 ? json_string(r->hosts[l->cause].name)
                                          : json_null());
        json_array_append_new(ln, o);
    }
    json_object_set_new(d, "links", ln);
    if (r->bw) {
        json_t *m = json_object();
        json_t *names = json_array();
        for (int h = 0; h < r->nhosts; h++)
            json_array_append_new(names, json_string(r->hosts[h].name));
        json_object_set_new(m, "hosts", names);
        json_object_set_new(m, "bw_Bps", matrix(r->bw, r->nhosts));
        if (r->bibw)
            json_object_set_new(m, "bibw_Bps", matrix(r->bibw, r->nhosts));
        if (r->lat)
            json_object_set_new(m, "latency_s", matrix(r->lat, r->nhosts));
        json_object_set_new(d, "link_matrix", m);
    }
    if (r->ncoll) {
        json_t *a = json_array();
        for (size_t k = 0; k < r->ncoll; k++) {
            const sb_fleet_coll *c = &r->coll[k];
            json_t *o = json_object();
            json_object_set_new(o, "level", json_string(c->level));
            json_object_set_new(o, "op", json_string(c->op));
            json_object_set_new(o, "bytes", json_real(c->bytes));
            json_object_set_new(o, "ranks", json_integer(c->ranks));
            json_object_set_new(o, "seconds", json_real(c->seconds));
            json_object_set_new(o, "valid", json_boolean(c->valid));
            if (c->per_host > 0)
                json_object_set_new(o, "per_host", json_integer(c->per_host));
            json_object_set_new(o, "predicted_s",
                                c->predicted_s > 0 ? json_real(c->predicted_s)
                                                   : json_null());
            json_array_append_new(a, o);
        }
        json_object_set_new(d, "collectives", a);
    }
    if (r->up_Bps > 0 || r->out_Bps > 0) {
        json_t *cal = json_object();
        const char *nm[2] = {"scaleup", "scaleout"};
        double b[2] = {r->up_Bps, r->out_Bps};
        double a[2] = {r->up_alpha_s, r->out_alpha_s};
        for (int k = 0; k < 2; k++) {
            if (!(b[k] > 0))
                continue;
            json_t *o = json_object();
            json_object_set_new(o, "beta_Bps", json_real(b[k]));
            json_object_set_new(o, "alpha_s", json_real(a[k]));
            json_object_set_new(o, "from",
                                json_string(k ? "the link matrix: the median "
                                                "link one way, the median "
                                                "latency"
                                              : "the all-reduce inside the "
                                                "hosts: alpha-beta fit, "
                                                "beta as busbw"));
            json_object_set_new(cal, nm[k], o);
        }
        json_object_set_new(d, "calibration", cal);
    }
    json_object_set_new(d, "healthy", json_boolean(!sb_fleet_unhealthy(r)));
    return d;
}

int sb_fleet_write_junit(const sb_fleet_report *r, const char *path,
                         double seconds, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    int tests = r->nhosts + 1, fails = 0;
    for (int h = 0; h < r->nhosts; h++) {
        bool bad = r->hosts[h].failed || r->hosts[h].unjudged;
        for (size_t k = 0; k < r->nflags && !bad; k++)
            bad = r->flags[k].host == h;
        fails += bad;
    }
    fails += r->nlinks > 0;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<testsuites name=\"solbench\" tests=\"%d\" failures=\"%d\" "
            "errors=\"0\" time=\"%.3f\">\n  <testsuite "
            "name=\"solbench.fleet\" tests=\"%d\" failures=\"%d\" "
            "errors=\"0\" time=\"%.3f\">\n    <properties>\n      "
            "<property name=\"fleet\" value=\"",
            tests, fails, seconds, tests, fails, seconds);
    sb_xml_text(f, r->id);
    fprintf(f, "\"/>\n    </properties>\n");
    for (int h = 0; h < r->nhosts; h++) {
        fprintf(f, "    <testcase classname=\"fleet.host\" name=\"");
        sb_xml_text(f, r->hosts[h].name);
        fprintf(f, "\" time=\"0\">\n");
        if (r->hosts[h].failed) {
            fprintf(f, "      <failure type=\"failed\" message=\"");
            sb_xml_text(f, r->hosts[h].why);
            fprintf(f, "\"/>\n");
        }
        if (r->hosts[h].unjudged)
            fprintf(f,
                    "      <failure type=\"not-judged\" message=\"fewer "
                    "than %d hosts of its fingerprint to compare "
                    "with\"/>\n",
                    r->rules.min_peers);
        for (size_t k = 0; k < r->nflags; k++) {
            const sb_fleet_flag *g = &r->flags[k];
            if (g->host != h)
                continue;
            /* against the fleet's median, or the host's own figure in
             * the baseline fleet */
            char msg[480], a[32], b[32], peers[32] = "";
            if (!g->vs_baseline)
                snprintf(peers, sizeof peers, ", %d peers", g->peers);
            snprintf(msg, sizeof msg,
                     "%s: %s against %s %s%s%s (%+.1f%%, "
                     "bar %.1f%%%s)",
                     g->metric, fmt_value(g->metric, g->value, a, sizeof a),
                     g->vs_baseline ? "its" : "the median",
                     fmt_value(g->metric, g->median, b, sizeof b),
                     g->vs_baseline ? " in the baseline fleet " : "",
                     g->vs_baseline ? r->baseline : "", g->deviation_pct,
                     g->threshold_pct, peers);
            fprintf(f, "      <failure type=\"flagged\" message=\"");
            sb_xml_text(f, msg);
            fprintf(f, "\"/>\n");
        }
        fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "    <testcase classname=\"fleet.links\" name=\"links\" "
               "time=\"0\">\n");
    for (size_t k = 0; k < r->nlinks; k++) {
        const sb_fleet_link_flag *l = &r->links[k];
        char msg[400];
        snprintf(msg, sizeof msg,
                 "%s -> %s: %.3g GB/s against %.3g (%+.1f%%)%s%s",
                 r->hosts[l->from].name, r->hosts[l->to].name, l->bw_Bps / 1e9,
                 l->reference_Bps / 1e9, l->deviation_pct,
                 l->cause >= 0 ? "; cause: " : "",
                 l->cause >= 0 ? r->hosts[l->cause].name : "");
        fprintf(f, "      <failure type=\"slow-link\" message=\"");
        sb_xml_text(f, msg);
        fprintf(f, "\"/>\n");
    }
    fprintf(f, "    </testcase>\n  </testsuite>\n</testsuites>\n");
    if (fclose(f) != 0)
        return sb_fail(err, SB_EIO, "%s: cannot write the JUnit report", path);
    return 0;
}

void sb_fleet_report_free(sb_fleet_report *r)
{
    free(r->hosts);
    free(r->run_ids);
    free(r->v);
    free(r->flags);
    free(r->bw);
    free(r->bibw);
    free(r->lat);
    free(r->links);
    free(r->coll);
    memset(r, 0, sizeof *r);
}
