/*
 * fleet_html.c — a fleet run's report (fleet.h) as one self-contained HTML
 * page: the verdict, the hosts x metrics heat map (each cell coloured by
 * its distance from the metric's median across the hosts, worse in red),
 * the link matrix as a heat map with the slow links, the latency matrix,
 * the collectives and a legend. Inline CSS, no script, no network. Every
 * string of the report (host names, classes, metrics, reasons) is escaped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/fileio.h"
#include "solbench/fleet.h"
#include "solbench/param.h"
#include "solbench/report.h"
#include "solbench/util.h"

/* columns of the heat map at most: those with the widest spread */
#define SB_FH_MAX_METRICS 40
/* hosts above which the matrices are drawn without their numbers (each
 * cell's figure stays in its title), and above which they are not drawn
 * at all (N x N cells: the slow links are listed still) */
#define SB_FH_MATRIX_NUMBERS 32
#define SB_FH_MATRIX_MAX 256
/* the deviation, in percent, at which a cell is fully red (or green) */
#define SB_FH_SCALE_PCT 30.0

static const char *sb__fleet_css =
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
    "font-weight:bold}.muted{color:#777}"
    ".scroll{overflow-x:auto}"
    "th.v{writing-mode:vertical-rl;transform:rotate(180deg);"
    "white-space:nowrap;vertical-align:bottom;font-weight:normal}"
    "td.hv,td.lk,td.lt{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}"
    "td.flag{outline:3px solid #b00020;outline-offset:-3px;"
    "font-weight:bold}"
    "td.diag{background:#d0d0d0}td.na{color:#aaa;text-align:center}"
    "table.m td.lk,table.m td.lt{padding:0;width:9px;height:9px}"
    "tr.failed td,tr.failed th{background:#f3e0e0}"
    "tr.unj th{font-style:italic}"
    ".sw{display:inline-block;width:28px;height:14px;border:1px solid #ccc;"
    "vertical-align:middle;margin-right:4px}"
    ".sw.flag{outline:3px solid #b00020;outline-offset:-3px}";

/* A figure in 4 significant digits with an SI prefix: "1.234G", "2.1µ". */
static const char *sb__compact(double v, char *buf, size_t len)
{
    static const char *pre[] = {"p", "n", "\xc2\xb5", "m", "",
                                "K", "M", "G",        "T", "P"};
    if (!isfinite(v) || v == 0) {
        snprintf(buf, len, "%g", v);
        return buf;
    }
    int e = (int)floor(log10(fabs(v)) / 3);
    if (e < -4)
        e = -4;
    if (e > 5)
        e = 5;
    snprintf(buf, len, "%.4g%s", v / pow(10, 3 * e), pre[e + 4]);
    return buf;
}

/* The background of a cell `good` percent better than its reference
 * (negative: worse): white at 0, red at -SB_FH_SCALE_PCT and below, a
 * pale green at +SB_FH_SCALE_PCT and above. "" when not finite. */
static const char *sb__heat(double good, char *buf, size_t len)
{
    if (!isfinite(good)) {
        buf[0] = 0;
        return buf;
    }
    double t = fmin(fabs(good) / SB_FH_SCALE_PCT, 1);
    int rr, gg, bb;
    if (good < 0) { /* white to #e05a5a */
        rr = (int)lround(255 - t * (255 - 224));
        gg = bb = (int)lround(255 - t * (255 - 90));
    } else { /* white to #c4ebc4 */
        rr = bb = (int)lround(255 - t * (255 - 196));
        gg = (int)lround(255 - t * (255 - 235));
    }
    snprintf(buf, len, "#%02x%02x%02x", rr, gg, bb);
    return buf;
}

static int sb__cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the n values of x (reordered); NaN when n is 0. */
static double sb__median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, sb__cmp_dbl);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

static int sb__cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool sb__host_ok(const sb_fleet_report *r, int h)
{
    return h >= 0 && h < r->nhosts;
}

static const char *sb__host_name(const sb_fleet_report *r, int h)
{
    return sb__host_ok(r, h) ? r->hosts[h].name : "?";
}

/* ---- the header and the verdict ---------------------------------------- */

static void sb__fleet_head(sb_buf *b, const sb_fleet_report *r)
{
    int failed = 0, unjudged = 0, flagged = 0;
    for (int h = 0; h < r->nhosts; h++) {
        failed += r->hosts[h].failed;
        unjudged += r->hosts[h].unjudged;
        bool f = false;
        for (size_t k = 0; k < r->nflags && !f; k++)
            f = r->flags[k].host == h;
        flagged += f;
    }
    sb_buf_printf(b, "<h1>solbench fleet ");
    sb_buf_esc(b, r->id);
    sb_buf_printf(b, "</h1>\n<p class=\"muted\">started ");
    sb_buf_esc(b, r->started_at[0] ? r->started_at : "?");
    sb_buf_printf(b, " &middot; launcher ");
    sb_buf_esc(b, r->launcher[0] ? r->launcher : "MPI");
    sb_buf_printf(b,
                  " &middot; %d host%s &middot; %d rank%s &middot; the "
                  "suite %d time%s",
                  r->nhosts, r->nhosts == 1 ? "" : "s", r->nranks,
                  r->nranks == 1 ? "" : "s", r->rounds,
                  r->rounds == 1 ? "" : "s (a host's figure its median)");
    if (r->baseline[0]) {
        sb_buf_printf(b, " &middot; baseline fleet ");
        sb_buf_esc(b, r->baseline);
    }
    sb_buf_printf(b, "</p>\n<p id=\"verdict\">Verdict: ");
    if (!sb_fleet_unhealthy(r)) {
        sb_buf_printf(b,
                      "<span class=\"ok\">healthy</span> (no host or link "
                      "worse than its peers by %.0f%% and %.0f&times; "
                      "their spread)</p>\n",
                      r->rules.floor_pct, r->rules.k_mad);
        return;
    }
    sb_buf_printf(b,
                  "<span class=\"bad\">%d flagged host%s</span> (%zu "
                  "figure%s), <span class=\"%s\">%zu slow link%s</span>, "
                  "<span class=\"%s\">%d failed</span>, <span "
                  "class=\"%s\">%d not judged</span></p>\n",
                  flagged, flagged == 1 ? "" : "s", r->nflags,
                  r->nflags == 1 ? "" : "s", r->nlinks ? "bad" : "ok",
                  r->nlinks, r->nlinks == 1 ? "" : "s", failed ? "bad" : "ok",
                  failed, unjudged ? "bad" : "ok", unjudged);
}

/* ---- the hosts x metrics heat map -------------------------------------- */

typedef struct sb__col {
    const char *name;
    bool higher_better;
    bool flagged; /* a flag names it: kept whatever its spread */
    double median, spread;
} sb__col;

static int sb__cmp_col_keep(const void *a, const void *b)
{
    const sb__col *x = a, *y = b;
    if (x->flagged != y->flagged)
        return x->flagged ? -1 : 1;
    double sx = isfinite(x->spread) ? x->spread : -1;
    double sy = isfinite(y->spread) ? y->spread : -1;
    if (sx != sy)
        return sx > sy ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int sb__cmp_col_name(const void *a, const void *b)
{
    return strcmp(((const sb__col *)a)->name, ((const sb__col *)b)->name);
}

static int sb__find_name(const char *const *names, size_t n, const char *s)
{
    const char *const *p = bsearch(&s, names, n, sizeof *names, sb__cmp_str);
    return p ? (int)(p - names) : -1;
}

/* s escaped, cut to about max bytes (at a character's start) with an
 * ellipsis: a column's heading (its title has it whole). */
static void sb__esc_short(sb_buf *b, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) {
        sb_buf_esc(b, s);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--;
    char cut[SB_FLEET_METRIC];
    if (max >= sizeof cut)
        max = sizeof cut - 1;
    memcpy(cut, s, max);
    cut[max] = 0;
    sb_buf_esc(b, cut);
    sb_buf_put(b, "&hellip;");
}

static void sb__flag_title(sb_buf *b, const sb_fleet_report *r,
                           const sb_fleet_flag *g)
{
    sb_buf_printf(b, "%+.1f %%, bar %.1f %%, %s %.4g", g->deviation_pct,
                  g->threshold_pct, g->vs_baseline ? "baseline" : "median",
                  g->median);
    if (g->vs_baseline) {
        sb_buf_printf(b, ", vs baseline");
        if (r->baseline[0]) {
            sb_buf_printf(b, " fleet ");
            sb_buf_esc(b, r->baseline);
        }
    } else {
        sb_buf_printf(b, ", %d peers", g->peers);
    }
}

static int sb__fleet_hosts(sb_buf *b, const sb_fleet_report *r)
{
    size_t nh = r->nhosts > 0 ? (size_t)r->nhosts : 0;
    sb_buf_printf(b, "<section id=\"hosts\"><h2>Hosts and their "
                     "figures</h2>\n");
    /* the distinct metrics, by name */
    const char **names = malloc((r->nv ? r->nv : 1) * sizeof *names);
    if (!names)
        return SB_ENOMEM;
    size_t nm = 0;
    for (size_t k = 0; k < r->nv; k++)
        if (sb__host_ok(r, r->v[k].host))
            names[nm++] = r->v[k].metric;
    qsort(names, nm, sizeof *names, sb__cmp_str);
    size_t u = 0;
    for (size_t k = 0; k < nm; k++)
        if (u == 0 || strcmp(names[u - 1], names[k]) != 0)
            names[u++] = names[k];
    nm = u;
    /* val[m * nh + h]: host h's figure of metric m (NaN: none); a fleet
     * whose figures differ from host to host (a document made so) could
     * ask for metrics x hosts cells far beyond its own size: refused */
    size_t cells = nm * nh;
    if (cells > (size_t)16 << 20) {
        free(names);
        return SB_EINVAL;
    }
    double *val = malloc((cells > 0 ? cells : 1) * sizeof *val);
    double *tmp = malloc((nh ? nh : 1) * sizeof *tmp);
    sb__col *col = malloc((nm ? nm : 1) * sizeof *col);
    if (!val || !tmp || !col) {
        free(names);
        free(val);
        free(tmp);
        free(col);
        return SB_ENOMEM;
    }
    for (size_t k = 0; k < cells; k++)
        val[k] = NAN;
    for (size_t m = 0; m < nm; m++)
        col[m] = (sb__col){names[m], true, false, NAN, NAN};
    for (size_t k = 0; k < r->nv; k++) {
        const sb_fleet_value *x = &r->v[k];
        if (!sb__host_ok(r, x->host))
            continue;
        int m = sb__find_name(names, nm, x->metric);
        if (m < 0)
            continue;
        size_t at = (size_t)m * nh + (size_t)x->host;
        if (isnan(val[at])) { /* one figure a host: the first */
            val[at] = x->value;
            col[m].higher_better = x->higher_better;
        }
    }
    for (size_t k = 0; k < r->nflags; k++) {
        int m = sb__find_name(names, nm, r->flags[k].metric);
        if (m >= 0)
            col[m].flagged = true;
    }
    /* each metric's median and spread over the hosts that reported */
    for (size_t m = 0; m < nm; m++) {
        size_t c = 0;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t h = 0; h < nh; h++) {
            double x = val[m * nh + h];
            if (r->hosts[h].failed || !isfinite(x))
                continue;
            tmp[c++] = x;
            lo = fmin(lo, x);
            hi = fmax(hi, x);
        }
        col[m].median = sb__median(tmp, c);
        col[m].spread =
            c > 1 && col[m].median != 0 ? (hi - lo) / fabs(col[m].median) : 0;
    }
    free(tmp);
    /* the columns shown: all of them, or the widest spreads (flagged
     * metrics first), in name order */
    size_t shown = nm;
    if (nm > SB_FH_MAX_METRICS) {
        qsort(col, nm, sizeof *col, sb__cmp_col_keep);
        shown = SB_FH_MAX_METRICS;
        qsort(col, shown, sizeof *col, sb__cmp_col_name);
    }
    sb_buf_printf(b,
                  "<p class=\"muted\">%zu metric%s; each cell coloured by its "
                  "distance from the metric's median over the hosts that "
                  "reported (worse in red, full red at %.0f %% worse; "
                  "better in green). Flagged cells have a red frame; hover "
                  "a cell for its deviation.</p>\n",
                  nm, nm == 1 ? "" : "s", SB_FH_SCALE_PCT);
    if (shown < nm)
        sb_buf_printf(b,
                      "<p class=\"muted\">Showing the %zu metrics with the "
                      "widest spread across the hosts (every flagged one "
                      "first); %zu left out.</p>\n",
                      shown, nm - shown);
    sb_buf_printf(b, "<div class=\"scroll\"><table id=\"heat\"><tr><th>#"
                     "</th><th>host</th><th>class</th><th>ranks</th>");
    for (size_t c = 0; c < shown; c++) {
        sb_buf_printf(b, "<th class=\"v\" title=\"");
        sb_buf_esc(b, col[c].name);
        sb_buf_printf(b, " (%s better)\">",
                      col[c].higher_better ? "higher" : "lower");
        sb__esc_short(b, col[c].name, 60);
        sb_buf_printf(b, "</th>");
    }
    sb_buf_printf(b, "</tr>\n");
    for (size_t h = 0; h < nh; h++) {
        const sb_fleet_host *x = &r->hosts[h];
        sb_buf_printf(b, "<tr%s><td class=\"n\">%zu</td><th>",
                      x->failed     ? " class=\"failed\""
                      : x->unjudged ? " class=\"unj\""
                                    : "",
                      h);
        sb_buf_esc(b, x->name);
        if (x->unjudged)
            sb_buf_printf(b, " <span class=\"muted\" title=\"too few "
                             "peers of its class to judge it\">(not "
                             "judged)</span>");
        sb_buf_printf(b, "</th><td>");
        sb_buf_esc(b, x->cls);
        sb_buf_printf(b, "</td><td class=\"n\">%d</td>", x->ranks);
        if (x->failed) {
            sb_buf_printf(b, "<td colspan=\"%zu\" class=\"bad\">failed: ",
                          shown ? shown : 1);
            sb_buf_esc(b, x->why);
            sb_buf_printf(b, "</td></tr>\n");
            continue;
        }
        for (size_t c = 0; c < shown; c++) {
            int m = sb__find_name(names, nm, col[c].name);
            double v = m >= 0 ? val[(size_t)m * nh + h] : NAN;
            if (!isfinite(v)) {
                sb_buf_printf(b, "<td class=\"hv na\">&ndash;</td>");
                continue;
            }
            double med = col[c].median;
            double dev =
                isfinite(med) && med != 0 ? (v - med) / fabs(med) * 100 : NAN;
            double good = col[c].higher_better ? dev : -dev;
            bool flag = false;
            for (size_t k = 0; k < r->nflags && !flag; k++)
                flag = r->flags[k].host == (int)h &&
                       strcmp(r->flags[k].metric, col[c].name) == 0;
            char bg[16], t[48];
            sb__heat(good, bg, sizeof bg);
            sb_buf_printf(b, "<td class=\"hv%s\"", flag ? " flag" : "");
            if (bg[0])
                sb_buf_printf(b, " style=\"background:%s\"", bg);
            sb_buf_printf(b, " title=\"%.6g", v);
            if (isfinite(dev))
                sb_buf_printf(b, ", %+.1f %% from the median %.4g", dev, med);
            for (size_t k = 0; k < r->nflags && flag; k++) {
                const sb_fleet_flag *g = &r->flags[k];
                if (g->host != (int)h || strcmp(g->metric, col[c].name) != 0)
                    continue;
                sb_buf_printf(b, "; flagged: ");
                sb__flag_title(b, r, g);
            }
            sb_buf_printf(b, "\">%s</td>", sb__compact(v, t, sizeof t));
        }
        sb_buf_printf(b, "</tr>\n");
    }
    sb_buf_printf(b, "</table></div>\n");
    /* the flags in words: the figures a host was flagged for */
    if (r->nflags) {
        sb_buf_printf(b, "<table id=\"flags\"><tr><th>host</th><th>metric"
                         "</th><th>value</th><th>against</th><th>reference"
                         "</th><th>deviation</th><th>bar</th></tr>\n");
        for (size_t k = 0; k < r->nflags; k++) {
            const sb_fleet_flag *g = &r->flags[k];
            sb_buf_printf(b, "<tr><td>");
            sb_buf_esc(b, sb__host_name(r, g->host));
            sb_buf_printf(b, "</td><td>");
            sb_buf_esc(b, g->metric);
            sb_buf_printf(b, "</td><td class=\"n\">%.4g</td><td>", g->value);
            if (g->vs_baseline) {
                sb_buf_printf(b, "baseline fleet ");
                sb_buf_esc(b, r->baseline);
            } else {
                sb_buf_printf(b, "median of %d peers", g->peers);
            }
            sb_buf_printf(b,
                          "</td><td class=\"n\">%.4g</td><td class=\"n "
                          "bad\">%+.1f %%</td><td class=\"n\">%.1f %%"
                          "</td></tr>\n",
                          g->median, g->deviation_pct, g->threshold_pct);
        }
        sb_buf_printf(b, "</table>\n");
    }
    sb_buf_printf(b, "</section>\n");
    free(names);
    free(val);
    free(col);
    return 0;
}

/* ---- the link matrices ------------------------------------------------- */

static bool sb__measured(double x)
{
    return isfinite(x) && x > 0;
}

/* The typical link of m (n x n, the diagonal left out): the median over
 * the hosts of each host's median measured link, both directions (its
 * "links.bw" figure, fleet.h). A slow host spoils 2 (n - 1) of the
 * n (n - 1) links, half of them with four hosts, and drags the median of
 * all the links with it; it moves one of the n host medians only. NaN
 * when nothing was measured. */
static int sb__matrix_median(const double *m, int n, double *out)
{
    size_t nn = n > 0 ? 2 * (size_t)n : 1;
    double *tmp = malloc(nn * sizeof *tmp);
    double *hm = malloc(nn * sizeof *hm);
    if (!tmp || !hm) {
        free(tmp);
        free(hm);
        return SB_ENOMEM;
    }
    size_t nhm = 0;
    for (int i = 0; i < n; i++) {
        size_t c = 0;
        for (int j = 0; j < n; j++) {
            if (i == j)
                continue;
            if (sb__measured(m[(size_t)i * n + j]))
                tmp[c++] = m[(size_t)i * n + j];
            if (sb__measured(m[(size_t)j * n + i]))
                tmp[c++] = m[(size_t)j * n + i];
        }
        if (c)
            hm[nhm++] = sb__median(tmp, c);
    }
    *out = sb__median(hm, nhm);
    free(tmp);
    free(hm);
    return 0;
}

/* One matrix: bw (MB/s, higher better, its slow links framed) or lat
 * (µs, lower better). */
static int sb__matrix(sb_buf *b, const sb_fleet_report *r, bool is_bw)
{
    int n = r->nhosts;
    const double *m = is_bw ? r->bw : r->lat;
    double med;
    if (sb__matrix_median(m, n, &med))
        return SB_ENOMEM;
    bool numbers = n <= SB_FH_MATRIX_NUMBERS;
    const char *cls = is_bw ? "lk" : "lt";
    const char *unit = is_bw ? "MB/s" : "\xc2\xb5s";
    double scale = is_bw ? 1e-6 : 1e6;
    if (isfinite(med))
        sb_buf_printf(b,
                      "<p class=\"muted\">The typical link (the median "
                      "over the hosts of each host's median link): %.4g "
                      "%s.</p>\n",
                      med * scale, unit);
    sb_buf_printf(b,
                  "<div class=\"scroll\"><table id=\"%s\"%s><tr><th>from "
                  "\\ to</th>",
                  is_bw ? "bw" : "lat", numbers ? "" : " class=\"m\"");
    for (int j = 0; j < n; j++) {
        sb_buf_printf(b, "<th title=\"");
        sb_buf_esc(b, r->hosts[j].name);
        sb_buf_printf(b, "\">%d</th>", j);
    }
    sb_buf_printf(b, "</tr>\n");
    for (int i = 0; i < n; i++) {
        sb_buf_printf(b, "<tr><th>%d ", i);
        sb_buf_esc(b, r->hosts[i].name);
        sb_buf_printf(b, "</th>");
        for (int j = 0; j < n; j++) {
            double x = m[(size_t)i * n + j];
            if (i == j) {
                sb_buf_printf(b, "<td class=\"%s diag\"></td>", cls);
                continue;
            }
            const sb_fleet_link_flag *slow = NULL;
            for (size_t k = 0; is_bw && k < r->nlinks && !slow; k++)
                if (r->links[k].from == i && r->links[k].to == j)
                    slow = &r->links[k];
            if (!sb__measured(x)) {
                sb_buf_printf(b, "<td class=\"%s na%s\"", cls,
                              slow ? " flag" : "");
                if (slow)
                    sb_buf_printf(b, " title=\"slow link: not measured\"");
                sb_buf_printf(b, ">&ndash;</td>");
                continue;
            }
            double ratio = isfinite(med) && med > 0 ? x / med : NAN;
            double good = is_bw ? (ratio - 1) * 100 : (1 - ratio) * 100;
            char bg[16];
            sb__heat(good, bg, sizeof bg);
            sb_buf_printf(b, "<td class=\"%s%s\"", cls, slow ? " flag" : "");
            if (bg[0])
                sb_buf_printf(b, " style=\"background:%s\"", bg);
            sb_buf_printf(b, " title=\"");
            sb_buf_esc(b, r->hosts[i].name);
            sb_buf_printf(b, " &rarr; ");
            sb_buf_esc(b, r->hosts[j].name);
            sb_buf_printf(b, ": %.4g %s", x * scale, unit);
            if (isfinite(ratio))
                sb_buf_printf(b, ", %.2f&times; the typical link", ratio);
            if (is_bw && r->bibw && sb__measured(r->bibw[(size_t)i * n + j]))
                sb_buf_printf(b, ", bidirectional %.4g MB/s",
                              r->bibw[(size_t)i * n + j] * 1e-6);
            if (slow) {
                sb_buf_printf(b,
                              "; slow link: %+.1f %% against %.4g MB/s, "
                              "bar %.1f %%",
                              slow->deviation_pct, slow->reference_Bps * 1e-6,
                              slow->threshold_pct);
                if (sb__host_ok(r, slow->cause)) {
                    sb_buf_printf(b, ", cause ");
                    sb_buf_esc(b, r->hosts[slow->cause].name);
                }
            }
            sb_buf_printf(b, "\">");
            if (numbers)
                sb_buf_printf(b, "%.4g", x * scale);
            sb_buf_printf(b, "</td>");
        }
        sb_buf_printf(b, "</tr>\n");
    }
    sb_buf_printf(b, "</table></div>\n");
    return 0;
}

static int sb__fleet_links(sb_buf *b, const sb_fleet_report *r)
{
    int n = r->nhosts;
    if (!r->bw && !r->nlinks)
        return 0;
    sb_buf_printf(b, "<section id=\"links\"><h2>Links</h2>\n");
    if (r->bw && n > SB_FH_MATRIX_MAX) {
        sb_buf_printf(b,
                      "<p class=\"muted\">The link matrix of %d hosts is not "
                      "drawn (more than %d); the slow links are below.</p>\n",
                      n, SB_FH_MATRIX_MAX);
    } else if (r->bw && n > 0) {
        sb_buf_printf(b,
                      "<p>Bandwidth, MB/s, the row's host sending to the "
                      "column's; coloured by the ratio to the typical link "
                      "(full red at %.0f %% below it); slow "
                      "links framed in red.</p>\n",
                      SB_FH_SCALE_PCT);
        if (sb__matrix(b, r, true))
            return SB_ENOMEM;
    }
    if (r->nlinks) {
        sb_buf_printf(b, "<h3>Slow links</h3>\n<table id=\"slow\"><tr><th>"
                         "from</th><th>to</th><th>MB/s</th><th>reference "
                         "MB/s</th><th>deviation</th><th>bar</th><th>cause"
                         "</th></tr>\n");
        for (size_t k = 0; k < r->nlinks; k++) {
            const sb_fleet_link_flag *l = &r->links[k];
            sb_buf_printf(b, "<tr><td>");
            sb_buf_esc(b, sb__host_name(r, l->from));
            sb_buf_printf(b, "</td><td>");
            sb_buf_esc(b, sb__host_name(r, l->to));
            sb_buf_printf(b,
                          "</td><td class=\"n\">%.4g</td><td class=\"n\">"
                          "%.4g</td><td class=\"n bad\">%+.1f %%</td><td "
                          "class=\"n\">%.1f %%</td><td>",
                          l->bw_Bps * 1e-6, l->reference_Bps * 1e-6,
                          l->deviation_pct, l->threshold_pct);
            if (sb__host_ok(r, l->cause)) {
                sb_buf_printf(b, "<strong>");
                sb_buf_esc(b, r->hosts[l->cause].name);
                sb_buf_printf(b, "</strong> (its links are slow)");
            } else {
                sb_buf_printf(b, "<span class=\"muted\">the link itself"
                                 "</span>");
            }
            sb_buf_printf(b, "</td></tr>\n");
        }
        sb_buf_printf(b, "</table>\n");
    }
    if (r->lat && n > 0 && n <= SB_FH_MATRIX_MAX) {
        sb_buf_printf(
            b,
            "<h3>Latency</h3>\n<p>One-way latency, &micro;s, row "
            "to column; coloured by the ratio to the typical link (full "
            "red at %.0f %% above it).</p>\n",
            SB_FH_SCALE_PCT);
        if (sb__matrix(b, r, false))
            return SB_ENOMEM;
    }
    sb_buf_printf(b, "</section>\n");
    return 0;
}

/* ---- the collectives --------------------------------------------------- */

static void sb__fleet_coll(sb_buf *b, const sb_fleet_report *r)
{
    if (!r->ncoll)
        return;
    sb_buf_printf(b, "<section id=\"collectives\"><h2>Collectives</h2>\n<p "
                     "class=\"muted\">Median time of an operation; predicted: "
                     "the two-level model from this fleet's links. Ratio: "
                     "measured over predicted, red when slower than the "
                     "model.</p>\n<table><tr><th>level</th><th>op</th><th>size"
                     "</th><th>ranks</th><th>measured ms</th><th>predicted "
                     "ms</th><th>ratio</th></tr>\n");
    for (size_t k = 0; k < r->ncoll; k++) {
        const sb_fleet_coll *c = &r->coll[k];
        char sz[32];
        sb_buf_printf(b, "<tr><td>");
        sb_buf_esc(b, c->level);
        sb_buf_printf(b, "</td><td>");
        sb_buf_esc(b, c->op);
        sb_buf_printf(b,
                      "</td><td class=\"n\">%s</td><td class=\"n\">%d</td>"
                      "<td class=\"n\">%.4g</td>",
                      sb_fmt_size(c->bytes, sz, (int)sizeof sz), c->ranks,
                      c->seconds * 1e3);
        if (c->predicted_s > 0) {
            double ratio = c->seconds / c->predicted_s;
            char bg[16];
            sb__heat((1 - ratio) * 100, bg, sizeof bg);
            sb_buf_printf(b, "<td class=\"n\">%.4g</td><td class=\"n\"",
                          c->predicted_s * 1e3);
            if (bg[0])
                sb_buf_printf(b, " style=\"background:%s\"", bg);
            sb_buf_printf(b, ">%.2f</td></tr>\n", ratio);
        } else {
            sb_buf_printf(b, "<td class=\"na\">&ndash;</td><td class=\"na\">"
                             "&ndash;</td></tr>\n");
        }
    }
    sb_buf_printf(b, "</table>\n</section>\n");
}

/* ---- the legend -------------------------------------------------------- */

static void sb__fleet_legend(sb_buf *b)
{
    char c[16];
    sb_buf_printf(b, "<section id=\"legend\"><h2>Legend</h2>\n<p>");
    static const double at[] = {-SB_FH_SCALE_PCT, -SB_FH_SCALE_PCT / 2, 0,
                                SB_FH_SCALE_PCT};
    for (int i = 0; i < 4; i++) {
        sb_buf_printf(b,
                      "<span class=\"sw\" style=\"background:%s\">"
                      "</span>",
                      sb__heat(at[i], c, sizeof c));
        if (at[i] < 0)
            sb_buf_printf(b, "%s%.0f %% worse", i == 0 ? "&ge; " : "", -at[i]);
        else if (at[i] > 0)
            sb_buf_printf(b, "&ge; %.0f %% better", at[i]);
        else
            sb_buf_printf(b, "at the reference");
        sb_buf_printf(b, " &nbsp; ");
    }
    sb_buf_printf(b, "(the reference: the metric's median over the hosts, "
                     "the typical link, the model's "
                     "prediction)");
    sb_buf_printf(
        b, "</p>\n<p><span class=\"sw flag\"></span>flagged: worse than its "
           "peers (or its baseline) by more than the bar (hover for the "
           "figures) &nbsp; <span class=\"sw\" style=\"background:#d0d0d0\">"
           "</span>a host's link to itself &nbsp; &ndash; not measured</p>\n"
           "<p>Worse is lower for a figure where higher is better (bandwidths, "
           "FLOP/s) and higher for one where lower is better (latencies, "
           "times); the column's title says which. A failed host's row gives "
           "what was seen; a host <i>(not judged)</i> had too few peers of its "
           "class to be compared (a fleet with one is not called healthy). "
           "Values are in the unit that ends the metric's name, with an SI "
           "prefix (K, M, G; m, &micro;, n).</p>\n</section>\n");
}

int sb_fleet_write_html(const struct sb_fleet_report *r, const char *path,
                        sb_err *err)
{
    if (!r || !path)
        return sb_fail(err, SB_EINVAL, "fleet html: no report or no path");
    if (r->nhosts < 0 || (r->nhosts > 0 && !r->hosts))
        return sb_fail(err, SB_EINVAL, "fleet html: the report has no hosts");
    sb_buf b = {0};
    sb_buf_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                      "charset=\"utf-8\"><title>solbench fleet ");
    sb_buf_esc(&b, r->id);
    sb_buf_printf(&b, "</title>\n<style>%s</style></head>\n<body>\n",
                  sb__fleet_css);
    sb__fleet_head(&b, r);
    int rc = sb__fleet_hosts(&b, r);
    if (rc == 0)
        rc = sb__fleet_links(&b, r);
    if (rc == 0) {
        sb__fleet_coll(&b, r);
        sb__fleet_legend(&b);
        sb_buf_printf(&b, "</body></html>\n");
    }
    if (rc == SB_EINVAL) {
        sb_buf_free(&b);
        return sb_fail(err, SB_EINVAL,
                       "fleet html: more than 16 M cells of hosts x figures "
                       "(the hosts' figures differ: not one fleet's)");
    }
    if (rc || b.oom) {
        sb_buf_free(&b);
        return sb_fail(err, SB_ENOMEM, "fleet html: out of memory");
    }
    FILE *f;
    rc = sb_file_fopen(path, "w", &f, err);
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
