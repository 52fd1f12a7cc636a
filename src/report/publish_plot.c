/*
 * publish_plot.c — the published site's numbers as text and its two
 * charts as inline SVG (publish_int.h): the sparkline of
 * a series on the index, and a series' timeline on its page (about five
 * y ticks, the p10-p90 band, each run a point with its hover title, each
 * change point a dashed line labelled with its change, labels too close
 * stacked over up to six rows).
 */
#include "report/publish_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers as text ------------------------------------------------------
 */

/* A signed percentage with a real minus sign: "+1.2 %", "−10.1 %". */
const char *sb_pub_pct(double v, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");
    else if (v < 0 && fabs(v) >= 0.05)
        snprintf(buf, len, "\u2212%.1f\u00a0%%", -v);
    else
        snprintf(buf, len, "+%.1f\u00a0%%", fabs(v));
    return buf;
}

/* A figure to 4 significant digits. */
const char *sb_pub_fig(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.4g", v);
    return buf;
}

/* "2026-01-01T00:12:00.000Z" as "2026-01-01 00:12:00". */
const char *sb_pub_time(const char *iso, char *buf, size_t len)
{
    snprintf(buf, len, "%.19s", iso);
    if (strlen(buf) > 10 && buf[10] == 'T')
        buf[10] = ' ';
    return buf;
}

/* Characters (not bytes) of UTF-8 text. */
static size_t u8len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* ---- charts ---------------------------------------------------------------
 */

/* A 1-2-5 step near span / n. */
static double nice_step(double span, int n)
{
    double raw = span / n;
    if (!(raw > 0))
        return 1;
    double p = pow(10, floor(log10(raw)));
    double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* A tick's label with as many decimals as the step needs. */
static const char *fmt_tick(double v, double step, char *buf, size_t len)
{
    if (fabs(v) < step * 1e-9)
        v = 0;
    if (fabs(v) >= 1e7 || (fabs(v) < 1e-4 && v != 0)) {
        snprintf(buf, len, "%.3g", v);
        return buf;
    }
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, len, "%.*f", dec > 9 ? 9 : dec, v);
    return buf;
}

/* The series' values as a 120 x 24 sparkline, its last point marked. */
void sb_pub_sparkline(sb_buf *b, const sb_series *s)
{
    const double w = 120, h = 24, pad = 2;
    size_t n = s->n, m = n > SPARK_POINTS ? SPARK_POINTS : n;
    double v[SPARK_POINTS], lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < m; k++) {
        size_t a = k * n / m, z = (k + 1) * n / m;
        double sum = 0;
        for (size_t i = a; i < z; i++)
            sum += s->runs[i].value;
        v[k] = sum / (double)(z - a);
        lo = fmin(lo, v[k]);
        hi = fmax(hi, v[k]);
    }
    /* at least 15 % of the level from bottom to top, so a flat series'
     * noise does not look like the 10 % step of another */
    double mid = (lo + hi) / 2, least = 0.15 * fabs(mid);
    if (hi - lo < least) {
        lo = mid - least / 2;
        hi = mid + least / 2;
    }
    if (!(hi > lo)) {
        lo -= 1;
        hi += 1;
    }
    sb_buf_printf(
        b, "<svg class=\"spark\" width=\"120\" height=\"24\" viewBox=\"0 "
           "0 120 24\" role=\"img\"><polyline class=\"ln\" points=\"");
    double x = 0, y = 0;
    for (size_t k = 0; k < m; k++) {
        x = pad + (m > 1 ? (double)k / (double)(m - 1) : 0.5) * (w - 2 * pad);
        y = pad + (hi - v[k]) / (hi - lo) * (h - 2 * pad);
        sb_buf_printf(b, "%s%.1f,%.1f", k ? " " : "", x, y);
    }
    sb_buf_printf(b,
                  "\"/><circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" "
                  "r=\"2\"/></svg>",
                  x, y);
}

/* The timeline's geometry: the plot area in px and its y axis. */
typedef struct plot {
    size_t n;               /* runs */
    double width, height;   /* of the whole SVG */
    double left, top, w, h; /* the plot area */
    double inner;           /* kept free at either end of x */
    double ylo, yhi, ystep; /* the y axis and its tick step */
} plot;

static double plot_x(const plot *p, size_t i)
{
    double f = p->n > 1 ? (double)i / (double)(p->n - 1) : 0.5;
    return p->left + p->inner + f * (p->w - 2 * p->inner);
}

static double plot_y(const plot *p, double v)
{
    return p->top + (p->yhi - v) / (p->yhi - p->ylo) * p->h;
}

/* A change point's line: between the last run before and the first
 * after. */
static double plot_cp_x(const plot *p, size_t index)
{
    return index > 0 ? (plot_x(p, index - 1) + plot_x(p, index)) / 2
                     : plot_x(p, 0);
}

/* A run's cv where it has one, else 0. */
static double run_cv(const sb_series_run *r)
{
    return r->cv > 0 && isfinite(r->cv) ? r->cv : 0;
}

/* What a band is drawn from: bits of the runs' kinds. */
enum { BAND_PCT = 1, BAND_CV = 2 };

/* A run's band in *lo..*hi: its figure's p10-p90 (changes.h) where the
 * store kept p10, else the figure · (1 ± cv) (runs stored before it);
 * returns which (BAND_PCT, BAND_CV), 0 where it has neither (lo = hi =
 * the figure). */
static int run_band(const sb_series_run *r, double *lo, double *hi)
{
    if (isfinite(r->lo) && isfinite(r->hi)) {
        *lo = r->lo;
        *hi = r->hi;
        return BAND_PCT;
    }
    double cv = run_cv(r);
    *lo = r->value * (1 - cv);
    *hi = r->value * (1 + cv);
    return cv > 0 ? BAND_CV : 0;
}

/* Where a change point's label goes: its centre and row in the top margin
 * (-1: left out, no row had room). */
typedef struct cp_label {
    double x, w;
    int row;
} cp_label;

/* Rows of change-point labels at most: six labels of about 45 px fit
 * over six change points as close as min_size allows on a timeline of
 * up to ~100 runs; closer than that a label is left out (its line, its
 * hover title and its table row stay). */
#define LABEL_ROWS 6

/* Puts each change point's label (the change in %) in the first row, left
 * to right, where it does not touch the one before; the rows used, and
 * how many labels found none in *left_out. */
static int place_labels(const sb_series *s, const plot *p, cp_label *lab,
                        size_t *left_out)
{
    int rows = 0;
    double row_end[LABEL_ROWS];
    for (int r = 0; r < LABEL_ROWS; r++)
        row_end[r] = -INFINITY;
    *left_out = 0;
    for (size_t k = 0; k < s->n_cps; k++) {
        char pct[32];
        sb_pub_pct(s->cps[k].change_pct, pct, sizeof pct);
        double w = 6.2 * (double)u8len(pct) + 4; /* 11 px Helvetica */
        double x = plot_cp_x(p, s->cps[k].index);
        lab[k].w = w;
        lab[k].x = fmin(fmax(x, w / 2 + 2), p->width - w / 2 - 2);
        lab[k].row = -1;
        for (int r = 0; r < LABEL_ROWS; r++)
            if (row_end[r] + 6 <= lab[k].x - w / 2) {
                lab[k].row = r;
                row_end[r] = lab[k].x + w / 2;
                rows = r + 1 > rows ? r + 1 : rows;
                break;
            }
        *left_out += lab[k].row < 0;
    }
    return rows;
}

/* The y axis: the values, and the band no further than their span
 * beyond them (a run spread over 60 % does not flatten the rest), in
 * about four steps of 1, 2 or 5. */
static void y_axis(const sb_series *s, int band, plot *p)
{
    double lo = INFINITY, hi = -INFINITY, blo = INFINITY, bhi = -INFINITY;
    for (size_t i = 0; i < s->n; i++) {
        const sb_series_run *r = &s->runs[i];
        double a, z;
        run_band(r, &a, &z);
        lo = fmin(lo, r->value);
        hi = fmax(hi, r->value);
        blo = fmin(blo, a);
        bhi = fmax(bhi, z);
    }
    double span = hi - lo > 0 ? hi - lo : fmax(fabs(hi) * 0.05, 1e-12);
    if (band) {
        lo = fmax(fmin(lo, blo), lo - span);
        hi = fmin(fmax(hi, bhi), hi + span);
    }
    if (!(hi - lo > 0)) {
        lo -= span;
        hi += span;
    }
    p->ystep = nice_step(hi - lo, 4);
    p->ylo = floor(lo / p->ystep) * p->ystep;
    p->yhi = ceil(hi / p->ystep) * p->ystep;
    if (p->yhi - p->ylo < p->ystep)
        p->yhi = p->ylo + p->ystep;
}

/* Grid, ticks, frame and the two axis titles. */
static void draw_axes(sb_buf *b, const sb_series *s, const plot *p)
{
    const double y0 = p->top + p->h;
    char t[48];
    for (double v = p->ylo; v <= p->yhi + p->ystep * 1e-6; v += p->ystep) {
        double y = plot_y(p, v);
        sb_buf_printf(b,
                      "<line class=\"gr\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" "
                      "y2=\"%.1f\"/><text x=\"%.0f\" y=\"%.1f\" "
                      "text-anchor=\"end\">%s</text>\n",
                      p->left, p->left + p->w, y, y, p->left - 6, y + 4,
                      fmt_tick(v, p->ystep, t, sizeof t));
    }
    /* run numbers, 1 the oldest: 1, then the multiples of the step */
    const size_t n = p->n;
    size_t xstep = n > 1 ? (size_t)fmax(1, nice_step((double)(n - 1), 8)) : 1;
    for (size_t k = 1; k <= n; k = k == 1 && xstep > 1 ? xstep : k + xstep) {
        double x = plot_x(p, k - 1);
        sb_buf_printf(b,
                      "<line class=\"ax\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
                      "y2=\"%.0f\"/><text x=\"%.1f\" y=\"%.0f\" "
                      "text-anchor=\"middle\">%zu</text>\n",
                      x, x, y0, y0 + 4, x, y0 + 16, k);
    }
    sb_buf_printf(b,
                  "<rect class=\"ax\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
                  "height=\"%.0f\"/>\n",
                  p->left, p->top, p->w, p->h);
    char when[24];
    sb_buf_printf(b,
                  "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">run, "
                  "oldest first (1: ",
                  p->left + p->w / 2, y0 + 33);
    sb_buf_esc(b, sb_pub_time(s->runs[0].started_at, when, sizeof when));
    if (n > 1) {
        sb_buf_printf(b, "; %zu: ", n);
        sb_buf_esc(b,
                   sb_pub_time(s->runs[n - 1].started_at, when, sizeof when));
    }
    sb_buf_printf(b,
                  " UTC)</text>\n<text transform=\"rotate(-90)\" x=\"%.0f\" "
                  "y=\"16\" text-anchor=\"middle\">",
                  -(p->top + p->h / 2));
    sb_buf_esc(b, s->metric);
    sb_buf_put(b, " (");
    sb_buf_esc(b, s->unit);
    sb_buf_printf(b, "), %s is better</text>\n",
                  s->higher_better == 0 ? "lower" : "higher");
}

/* The band, the line through the runs and each run's point with its
 * hover title, clipped to the plot. */
static void draw_runs(sb_buf *b, const sb_series *s, const plot *p, int band)
{
    const size_t n = s->n;
    double lo, hi;
    sb_buf_put(b, "<g clip-path=\"url(#plot)\">\n");
    if (band) {
        sb_buf_put(b, "<polygon class=\"band\" points=\"");
        for (size_t i = 0; i < n; i++) {
            run_band(&s->runs[i], &lo, &hi);
            sb_buf_printf(b, "%s%.1f,%.1f", i ? " " : "", plot_x(p, i),
                          plot_y(p, hi));
        }
        for (size_t i = n; i-- > 0;) {
            run_band(&s->runs[i], &lo, &hi);
            sb_buf_printf(b, " %.1f,%.1f", plot_x(p, i), plot_y(p, lo));
        }
        sb_buf_put(b, "\"/>\n");
    }
    sb_buf_put(b, "<polyline class=\"ln\" points=\"");
    for (size_t i = 0; i < n; i++)
        sb_buf_printf(b, "%s%.1f,%.1f", i ? " " : "", plot_x(p, i),
                      plot_y(p, s->runs[i].value));
    sb_buf_put(b, "\"/>\n");
    const double r = n > 300 ? 1.5 : n > 60 ? 2 : 3;
    char fig[32], when[24];
    for (size_t i = 0; i < n; i++) {
        const sb_series_run *run = &s->runs[i];
        sb_buf_printf(b,
                      "<circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" "
                      "r=\"%g\"><title>run %zu: ",
                      run->stable == 0 ? " u" : "", plot_x(p, i),
                      plot_y(p, run->value), r, i + 1);
        sb_buf_esc(b, run->run_id);
        sb_buf_put(b, "\n");
        sb_buf_esc(b, sb_pub_time(run->started_at, when, sizeof when));
        sb_buf_put(b, " UTC, commit ");
        sb_buf_esc(b, run->commit[0] ? run->commit : "-");
        sb_buf_printf(b, "\n%s ", sb_pub_fig(run->value, fig, sizeof fig));
        sb_buf_esc(b, s->unit);
        if (run_band(run, &lo, &hi) == BAND_PCT) {
            sb_buf_printf(b, ", p10\u2013p90 %s",
                          sb_pub_fig(lo, fig, sizeof fig));
            sb_buf_printf(b, "\u2013%s", sb_pub_fig(hi, fig, sizeof fig));
        }
        if (run_cv(run) > 0)
            sb_buf_printf(b, ", cv %.2f %%", 100 * run->cv);
        sb_buf_printf(b, "%s</title></circle>\n",
                      run->stable == 0 ? ", unstable" : "");
    }
    sb_buf_put(b, "</g>\n");
}

/* Each change point: a dashed line over the plot, its label in its row,
 * a hover title with its run, medians and p. */
static void draw_change_points(sb_buf *b, const sb_series *s, const plot *p,
                               const cp_label *lab)
{
    for (size_t k = 0; k < s->n_cps; k++) {
        const sb_cp_point *cp = &s->cps[k];
        bool reg = sb_series_regressed(s, cp);
        const char *cls = reg ? "bad" : "good";
        char pct[32], bef[32], aft[32];
        sb_pub_pct(cp->change_pct, pct, sizeof pct);
        double x = plot_cp_x(p, cp->index);
        sb_buf_printf(b,
                      "<g class=\"cpm\"><title>change point before run %zu (",
                      cp->index + 1);
        sb_buf_esc(b, s->runs[cp->index].run_id);
        sb_buf_printf(b, "): median %s to %s ",
                      sb_pub_fig(cp->before, bef, sizeof bef),
                      sb_pub_fig(cp->after, aft, sizeof aft));
        sb_buf_esc(b, s->unit);
        sb_buf_printf(b,
                      " (%s), p = %.3g, %s</title><line class=\"cp %s\" "
                      "x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\"/>",
                      pct, cp->p, reg ? "a regression" : "an improvement", cls,
                      x, x, p->top, p->top + p->h);
        if (lab[k].row >= 0)
            sb_buf_printf(b,
                          "<text class=\"%s\" x=\"%.1f\" y=\"%.0f\" "
                          "text-anchor=\"middle\">%s</text>",
                          cls, lab[k].x, p->top - 5 - 15 * lab[k].row, pct);
        sb_buf_put(b, "</g>\n");
    }
}

/* One line under the axis title naming what is drawn. */
static void draw_legend(sb_buf *b, const sb_series *s, const plot *p, int band,
                        bool unstable, size_t left_out)
{
    double lx = p->left, ly = p->top + p->h + 54;
    sb_buf_printf(b,
                  "<line class=\"ln\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" "
                  "y2=\"%.0f\"/><circle class=\"pt\" cx=\"%.0f\" cy=\"%.0f\" "
                  "r=\"3\"/><text x=\"%.0f\" y=\"%.0f\">run (hover: id, time, "
                  "commit)</text>\n",
                  lx, lx + 20, ly - 4, ly - 4, lx + 10, ly - 4, lx + 26, ly);
    lx += 210;
    if (unstable) {
        sb_buf_printf(b,
                      "<circle class=\"pt u\" cx=\"%.0f\" cy=\"%.0f\" r=\"3\"/>"
                      "<text x=\"%.0f\" y=\"%.0f\">unstable</text>\n",
                      lx + 10, ly - 4, lx + 20, ly);
        lx += 80;
    }
    if (band) {
        /* p10-p90 of the samples; ±cv for runs stored before p10 was */
        const char *what = band == BAND_PCT ? "p10\u2013p90 of the samples"
                           : band == BAND_CV
                               ? "\u00b1cv (the figure \u00b7 (1 \u00b1 cv))"
                               : "p10\u2013p90 (\u00b1cv before it was kept)";
        sb_buf_printf(b,
                      "<rect class=\"band\" x=\"%.0f\" y=\"%.0f\" width=\"20\" "
                      "height=\"10\"/><text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                      lx, ly - 9, lx + 26, ly, what);
        lx += band == BAND_PCT ? 170 : 240;
    }
    bool seen[2] = {false, false};
    for (size_t k = 0; k < s->n_cps; k++)
        seen[sb_series_regressed(s, &s->cps[k])] = true;
    for (int g = 1; g >= 0; g--) {
        if (!seen[g])
            continue;
        sb_buf_printf(b,
                      "<line class=\"cp %s\" x1=\"%.0f\" x2=\"%.0f\" "
                      "y1=\"%.0f\" y2=\"%.0f\"/><text x=\"%.0f\" y=\"%.0f\">"
                      "change point: %s</text>\n",
                      g ? "bad" : "good", lx + 10, lx + 10, ly - 11, ly + 2,
                      lx + 18, ly, g ? "regression" : "improvement");
        lx += 170;
    }
    if (left_out)
        sb_buf_printf(b,
                      "<text x=\"%.0f\" y=\"%.0f\">(%zu label%s left out: too "
                      "close; see the table)</text>\n",
                      lx, ly, left_out, left_out == 1 ? "" : "s");
}

/* The timeline of a series: x the run (oldest first), y its figure with
 * about five ticks, each run a point titled with its id, time and commit,
 * the p10-p90 band behind them, each change point a dashed line with its
 * change in % at the top (labels too close for one row stagger over
 * more, left to right). */
void sb_pub_timeline(sb_buf *b, const sb_series *s)
{
    plot p = {.n = s->n, .width = 960, .left = 74, .h = 270};
    p.w = p.width - p.left - 24;
    p.inner = s->n > 1 ? 8 : 0;
    cp_label *lab = calloc(s->n_cps ? s->n_cps : 1, sizeof *lab);
    if (!lab) {
        b->oom = true;
        return;
    }
    /* the labels' rows set the top margin */
    size_t left_out;
    int rows = place_labels(s, &p, lab, &left_out);
    p.top = 14 + 15 * rows;
    p.height = p.top + p.h + 66;
    int band = 0;
    bool unstable = false;
    for (size_t i = 0; i < s->n; i++) {
        double lo, hi;
        band |= run_band(&s->runs[i], &lo, &hi);
        unstable |= s->runs[i].stable == 0;
    }
    if (s->n < 2) /* one run has no width to show it over */
        band = 0;
    y_axis(s, band, &p);

    sb_buf_printf(b,
                  "<svg class=\"timeline\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n"
                  "<defs><clipPath id=\"plot\"><rect x=\"%.0f\" y=\"%.0f\" "
                  "width=\"%.0f\" height=\"%.0f\"/></clipPath></defs>\n",
                  p.width, p.height, p.width, p.height, p.left, p.top, p.w,
                  p.h);
    draw_axes(b, s, &p);
    draw_runs(b, s, &p, band);
    draw_change_points(b, s, &p, lab);
    draw_legend(b, s, &p, band, unstable, left_out);
    sb_buf_put(b, "</svg>\n");
    free(lab);
}
