/*
 * svg.c — the charts of the report as SVG text: the hierarchical roofline
 * (one roof per memory level and per dtype peak, kernels as labelled
 * points), log-log line charts (bandwidth or bus bandwidth versus size) and
 * the stacked bar of a workload's phases coloured by class. Plain SVG 1.1
 * with inline styles, so a chart reads the same inline in HTML or alone.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/fileio.h"
#include "solbench/hw.h"
#include "solbench/predict.h"
#include "solbench/report.h"

/* ---- buffer -------------------------------------------------------------- */

void sb_buf_printf(sb_buf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        size_t room = b->cap - b->n;
        va_list ap;
        va_start(ap, fmt);
        int k = b->s ? vsnprintf(b->s + b->n, room, fmt, ap) : -1;
        va_end(ap);
        if (k >= 0 && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t need = b->cap ? b->cap * 2 : 65536;
        while (k >= 0 && need < b->n + (size_t)k + 1)
            need *= 2;
        char *ns = realloc(b->s, need);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = need;
    }
}

void sb_buf_put(sb_buf *b, const char *s)
{
    sb_buf_printf(b, "%s", s);
}

void sb_buf_esc(sb_buf *b, const char *s)
{
    while (s && *s) {
        size_t run = strcspn(s, "&<>\"'");
        if (run)
            sb_buf_printf(b, "%.*s", (int)run, s);
        s += run;
        if (!*s)
            break;
        sb_buf_put(b, *s == '&'   ? "&amp;"
                      : *s == '<' ? "&lt;"
                      : *s == '>' ? "&gt;"
                      : *s == '"' ? "&quot;"
                                  : "&#39;");
        s++;
    }
}

void sb_buf_free(sb_buf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

int sb_svg_write(const char *path, const sb_buf *svg, sb_err *err)
{
    FILE *f;
    int rc = sb_file_fopen(path, "w", &f, err);
    if (rc)
        return rc;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fwrite(svg->s, 1, svg->n, f);
    if (fclose(f) != 0)
        return sb_fail(err, SB_EIO, "%s: write failed", path);
    return 0;
}

/* ---- scales
 * ------------------------------------------------------------------ */

typedef struct sb__ax {
    double lo, hi; /* data range (log10 of) */
    double p0, p1; /* pixel range */
} sb__ax;

static double sb__map(const sb__ax *a, double v)
{
    double l = log10(v);
    return a->p0 + (l - a->lo) / (a->hi - a->lo) * (a->p1 - a->p0);
}

static const char *sb__si(double v, char *buf, size_t len)
{
    const char *pre[] = {"", "K", "M", "G", "T", "P", "E"};
    int i = 0;
    if (v < 1 && v > 0) {
        snprintf(buf, len, "%g", v);
        return buf;
    }
    while (v >= 1000 && i < 6) {
        v /= 1000;
        i++;
    }
    snprintf(buf, len, "%g%s%s", round(v * 100) / 100, *pre[i] ? " " : "",
             pre[i]);
    return buf;
}

static const char *sb__bytes(double v, char *buf, size_t len)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, len, "%g %s", round(v * 10) / 10, u[i]);
    return buf;
}

/* Frame, decade grid and tick labels of a log-log chart. */
static void sb__frame(sb_buf *b, const sb__ax *x, const sb__ax *y,
                      const char *title, const char *xl, const char *yl,
                      bool x_bytes, int W, int H)
{
    char t[32];
    sb_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                  "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "font-family=\"Helvetica,Arial,sans-serif\" "
                  "font-size=\"12\">\n",
                  W, H, W, H);
    sb_buf_printf(b,
                  "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
                  "fill=\"#ffffff\"/>\n",
                  W, H);
    sb_buf_printf(b,
                  "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" "
                  "font-size=\"15\" font-weight=\"bold\">",
                  W / 2);
    sb_buf_esc(b, title);
    sb_buf_printf(b, "</text>\n");
    /* x decades (or powers of 4 for byte axes) */
    double step = x_bytes ? log10(4.0) : 1.0;
    double start =
        x_bytes ? ceil(x->lo / log10(2.0)) * log10(2.0) : ceil(x->lo);
    if (x_bytes) {
        /* align to powers of 4 (1 KiB, 4 KiB, ...) */
        double k = ceil(x->lo / step);
        start = k * step;
    }
    for (double l = start; l <= x->hi + 1e-9; l += step) {
        double px = sb__map(x, pow(10, l));
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
                      px, y->p1, px, y->p0);
        if (x_bytes)
            sb__bytes(pow(10, l), t, sizeof t);
        else
            sb__si(pow(10, l), t, sizeof t);
        sb_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                      "fill=\"#333\">%s</text>\n",
                      px, y->p0 + 19, t);
    }
    for (double l = ceil(y->lo); l <= y->hi + 1e-9; l += 1) {
        double py = sb__map(y, pow(10, l));
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n",
                      x->p0, py, x->p1, py);
        sb_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                      "fill=\"#333\">%s</text>\n",
                      x->p0 - 6, py + 4, sb__si(pow(10, l), t, sizeof t));
    }
    sb_buf_printf(b,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                  "height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n",
                  x->p0, y->p1, x->p1 - x->p0, y->p0 - y->p1);
    sb_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
                  (x->p0 + x->p1) / 2, H - 8);
    sb_buf_esc(b, xl);
    sb_buf_printf(b,
                  "</text>\n<text x=\"16\" y=\"%.1f\" "
                  "text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">",
                  (y->p0 + y->p1) / 2, (y->p0 + y->p1) / 2);
    sb_buf_esc(b, yl);
    sb_buf_printf(b, "</text>\n");
}

static const char *sb__class_color(sb_bound k)
{
    switch (k) {
    case SB_BOUND_COMPUTE:
        return "#d62728";
    case SB_BOUND_MEMORY:
        return "#1f77b4";
    case SB_BOUND_NETWORK:
        return "#2ca02c";
    case SB_BOUND_HOST:
        return "#9467bd";
    case SB_BOUND_LATENCY:
        return "#ff7f0e";
    case SB_BOUND_VECTOR:
        return "#8c564b";
    default:
        return "#7f7f7f";
    }
}

static const char *sb__palette(int i)
{
    static const char *p[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                              "#9467bd", "#8c564b", "#e377c2", "#17becf",
                              "#bcbd22", "#7f7f7f"};
    return p[i % 10];
}

/* ---- label placement ----------------------------------------------------- */

/* Text boxes are estimated from the font size (0.6 em a character, one em
 * tall): what the chart's layout and its overlap test both assume. */
#define SB__CHAR_W 0.6

typedef struct sb__box {
    double x0, y0, x1, y1;
} sb__box;

typedef struct sb__boxes {
    sb__box b[512];
    int n;
} sb__boxes;

static bool sb__hits(const sb__boxes *bx, sb__box c)
{
    for (int i = 0; i < bx->n; i++)
        if (c.x0 < bx->b[i].x1 && bx->b[i].x0 < c.x1 && c.y0 < bx->b[i].y1 &&
            bx->b[i].y0 < c.y1)
            return true;
    return false;
}

static void sb__take(sb__boxes *bx, sb__box c)
{
    if (bx->n < (int)(sizeof bx->b / sizeof bx->b[0]))
        bx->b[bx->n++] = c;
}

/* A text of `chars` characters at font size `fs` next to the point
 * (px, py): the first of the positions around it, at growing distance,
 * whose box hits nothing placed yet and stays inside `area`. Returns the
 * baseline-left corner in *tx, *ty; false (and the first candidate) when
 * every position is taken. */
static bool sb__place(sb__boxes *bx, sb__box area, double px, double py,
                      int chars, double fs, double *tx, double *ty)
{
    double w = chars * fs * SB__CHAR_W, h = fs;
    static const double dirs[8][2] = {{1, -1}, {1, 1}, {-1, -1}, {-1, 1},
                                      {0, -1}, {0, 1}, {1, 0},   {-1, 0}};
    for (int ring = 0; ring < 6; ring++) {
        double d = 6 + 7 * ring;
        for (int k = 0; k < 8; k++) {
            double cx = px + dirs[k][0] * d, cy = py + dirs[k][1] * d;
            /* the box's corner nearest the point sits at (cx, cy) */
            double x0 = dirs[k][0] > 0   ? cx
                        : dirs[k][0] < 0 ? cx - w
                                         : cx - w / 2;
            double y0 = dirs[k][1] > 0   ? cy
                        : dirs[k][1] < 0 ? cy - h
                                         : cy - h / 2;
            sb__box c = {x0, y0, x0 + w, y0 + h};
            if (c.x0 < area.x0 || c.x1 > area.x1 || c.y0 < area.y0 ||
                c.y1 > area.y1 || sb__hits(bx, c))
                continue;
            sb__take(bx, c);
            *tx = c.x0;
            *ty = c.y1 - 0.2 * fs; /* the baseline */
            return true;
        }
    }
    *tx = px + 6;
    *ty = py - 6;
    return false;
}

/* ---- roofline ------------------------------------------------------------ */

/* The short name of a point in the key: "gemm fp32 shape=llm". */
static void sb__point_name(const sb_roof_row *r, char *buf, size_t len)
{
    const char *shortn =
        strchr(r->bench, '.') ? strchr(r->bench, '.') + 1 : r->bench;
    /* the precision once: as its dtype parameter where the row shows it */
    bool shown = strstr(r->params, "dtype=") != NULL;
    snprintf(buf, len, "%s%s%s%s%s", shortn, r->dtype[0] && !shown ? " " : "",
             shown ? "" : r->dtype, r->params[0] ? " " : "", r->params);
}

/* The roofs of a roofline chart and the extent of its points: what every
 * step of drawing it reads. */
typedef struct sb__roofs {
    double pk[16], bw[16]; /* compute peaks, memory bandwidths */
    char pkn[16][64];      /* a peak's dtypes: "bf16/fp16" */
    const char *bwn[16];   /* a bandwidth's level: "L2", "HBM", "read" */
    int np, nb;
    double pmax, pmin, bmax, bmin;
    int npts; /* the points on the chart, numbered in the key */
    double amin, amax, vmin, vmax;
} sb__roofs;

/* The chart as laid out: its axes, the plot area, the key's width and
 * the boxes taken so far (what no label may cover). */
typedef struct sb__roofchart {
    sb__ax x, y;
    sb__box plot;
    int keyw; /* the key of the numbered points on the right, 0: none */
    sb__boxes taken;
} sb__roofchart;

/* Whether a row is a point of the chart. */
static bool sb__on_chart(const sb_roof_row *r)
{
    return r->on_chart && r->ai > 0 && r->achieved > 0;
}

/* The roofs from the ceilings: one per dtype peak, one per memory level. */
static void sb__roof_ceilings(const sb_ceilings *c, sb__roofs *R)
{
    for (int i = 0; i < c->n; i++) {
        const sb_ceiling *x = &c->c[i];
        if (!(x->value > 0) || !isfinite(x->value))
            continue;
        if (strncmp(x->name, "peak.", 5) == 0 && !strstr(x->name, "theor")) {
            /* Equal peaks (bf16 = fp16 on most parts) share one roof. */
            int j = 0;
            while (j < R->np && fabs(R->pk[j] - x->value) > 1e-3 * x->value)
                j++;
            if (j < R->np) {
                size_t l = strlen(R->pkn[j]);
                snprintf(R->pkn[j] + l, sizeof R->pkn[j] - l, "/%s",
                         x->name + 5);
            } else if (R->np < 16) {
                R->pk[R->np] = x->value;
                snprintf(R->pkn[R->np++], sizeof R->pkn[0], "%s", x->name + 5);
            }
        } else if (strncmp(x->name, "bw.", 3) == 0 && R->nb < 16) {
            R->bw[R->nb] = x->value;
            R->bwn[R->nb++] = x->name + 3;
        }
    }
    /* bw.read and bw.triad stand in for a memory level only where the run
     * has no level of its own (as the profile's ridge points take them). */
    bool level = false;
    for (int i = 0; i < R->nb; i++)
        level = level || strcmp(R->bwn[i], "DRAM") == 0 ||
                strcmp(R->bwn[i], "HBM") == 0 || R->bwn[i][0] == 'L';
    for (int i = 0; level && i < R->nb; i++)
        if (strcmp(R->bwn[i], "read") == 0 || strcmp(R->bwn[i], "triad") == 0) {
            memmove(&R->bw[i], &R->bw[i + 1],
                    (size_t)(R->nb - i - 1) * sizeof R->bw[0]);
            memmove(&R->bwn[i], &R->bwn[i + 1],
                    (size_t)(R->nb - i - 1) * sizeof R->bwn[0]);
            R->nb--;
            i--;
        }
}

/* The range of the roofs and of the points on the chart. */
static void sb__roof_extent(sb__roofs *R, const sb_roof_row *rows, int n)
{
    R->pmax = 0, R->pmin = INFINITY, R->bmax = 0, R->bmin = INFINITY;
    for (int i = 0; i < R->np; i++) {
        R->pmax = fmax(R->pmax, R->pk[i]);
        R->pmin = fmin(R->pmin, R->pk[i]);
    }
    for (int i = 0; i < R->nb; i++) {
        R->bmax = fmax(R->bmax, R->bw[i]);
        R->bmin = fmin(R->bmin, R->bw[i]);
    }
    R->npts = 0;
    R->amin = INFINITY, R->amax = 0, R->vmin = INFINITY, R->vmax = 0;
    for (int i = 0; i < n; i++)
        if (sb__on_chart(&rows[i])) {
            R->npts++;
            R->amin = fmin(R->amin, rows[i].ai);
            R->amax = fmax(R->amax, rows[i].ai);
            R->vmin = fmin(R->vmin, rows[i].achieved);
            R->vmax = fmax(R->vmax, rows[i].achieved);
        }
}

/* Axes: the points and the ridges with a margin, no empty decades; a key
 * of the numbered points on the right, when there are any. */
static void sb__roof_axes(const sb__roofs *R, int W, int H, sb__roofchart *ch)
{
    double xlo = INFINITY, xhi = 0;
    if (R->np && R->nb) {
        xlo = R->pmin / R->bmax / 4;
        xhi = R->pmax / R->bmin * 4;
    }
    if (R->npts) {
        xlo = fmin(xlo, R->amin / 3);
        xhi = fmax(xhi, R->amax * 3);
    }
    if (!isfinite(xlo) || !(xhi > xlo)) {
        xlo = 1.0 / 64;
        xhi = 1024;
    }
    double yhi_v = fmax(R->pmax, R->vmax) * 2.5;
    if (!(yhi_v > 0))
        yhi_v = 1e12;
    double ylo_v = R->npts ? R->vmin / 3 : INFINITY;
    if (R->nb)
        ylo_v = fmin(ylo_v, R->bmin * xlo);
    if (!isfinite(ylo_v) || ylo_v <= 0)
        ylo_v = yhi_v / 1e5;
    ylo_v = fmax(ylo_v, yhi_v / 1e7);
    ch->keyw = R->npts ? 300 : 0;
    ch->x =
        (sb__ax){floor(log10(xlo)), ceil(log10(xhi)), 70, W - 20 - ch->keyw};
    ch->y = (sb__ax){floor(log10(ylo_v)), ceil(log10(yhi_v)), H - 50, 36};
    ch->plot = (sb__box){ch->x.p0, ch->y.p1, ch->x.p1, ch->y.p0};
}

/* The roofs: memory roofs y = AI x BW up to the highest peak, compute
 * roofs horizontal from the fastest memory roof. */
static void sb__roof_lines(sb_buf *b, const sb__roofs *R,
                           const sb__roofchart *ch)
{
    const sb__ax *x = &ch->x, *y = &ch->y;
    double X0 = pow(10, x->lo), X1 = pow(10, x->hi);
    /* memory roofs: named in the legend by colour (labels along parallel
     * roofs would overlap) */
    for (int i = 0; i < R->nb; i++) {
        double xe = R->pmax > 0 ? R->pmax / R->bw[i] : X1;
        xe = fmin(xe, X1);
        double xs = fmax(X0, pow(10, y->lo) / R->bw[i]);
        if (xs >= xe)
            continue;
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                      sb__map(x, xs), sb__map(y, xs * R->bw[i]), sb__map(x, xe),
                      sb__map(y, xe * R->bw[i]), sb__palette(i));
    }
    for (int i = 0; i < R->np; i++) {
        double xs = R->bmax > 0 ? R->pk[i] / R->bmax : X0;
        xs = fmax(xs, X0);
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#444\" stroke-width=\"2\" "
                      "stroke-dasharray=\"%s\"/>\n",
                      sb__map(x, xs), sb__map(y, R->pk[i]), sb__map(x, X1),
                      sb__map(y, R->pk[i]), i == 0 ? "none" : "6,3");
    }
}

/* The legend, top left (the region above the memory roofs, where no
 * kernel can be): every roof with its value, then the classes shown. */
static void sb__roof_legend(sb_buf *b, const sb__roofs *R, sb__roofchart *ch)
{
    double lx = ch->x.p0 + 10, ly = ch->y.p1 + 8, lh = 15;
    int lines = 0;
    char t[32];
    for (int i = 0; i < R->nb; i++) {
        char label[96];
        sb__si(R->bw[i], t, sizeof t);
        snprintf(label, sizeof label, "%s %s%sB/s", R->bwn[i], t,
                 strchr(t, ' ') ? "" : " ");
        double yy = ly + lh * lines++;
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\">",
                      lx, yy + 6, lx + 18, yy + 6, sb__palette(i), lx + 24,
                      yy + 10);
        sb_buf_esc(b, label);
        sb_buf_printf(b, "</text>\n");
        sb__take(&ch->taken,
                 (sb__box){lx, yy, lx + 24 + strlen(label) * 12 * SB__CHAR_W,
                           yy + 12});
    }
    for (int i = 0; i < R->np; i++) {
        char label[96];
        sb__si(R->pk[i], t, sizeof t);
        snprintf(label, sizeof label, "%s %s%sFLOP/s", R->pkn[i], t,
                 strchr(t, ' ') ? "" : " ");
        double yy = ly + lh * lines++;
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#444\" stroke-width=\"2\" "
                      "stroke-dasharray=\"%s\"/><text x=\"%.1f\" "
                      "y=\"%.1f\">",
                      lx, yy + 6, lx + 18, yy + 6, i == 0 ? "none" : "6,3",
                      lx + 24, yy + 10);
        sb_buf_esc(b, label);
        sb_buf_printf(b, "</text>\n");
        sb__take(&ch->taken,
                 (sb__box){lx, yy, lx + 24 + strlen(label) * 12 * SB__CHAR_W,
                           yy + 12});
    }
    static const sb_bound cls[] = {SB_BOUND_COMPUTE, SB_BOUND_MEMORY};
    for (int k = 0; k < 2 && R->npts; k++) {
        double yy = ly + lh * lines++;
        sb_buf_printf(b,
                      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
                      "fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s-bound"
                      "</text>\n",
                      lx + 9, yy + 6, sb__class_color(cls[k]), lx + 24, yy + 10,
                      sb_bound_name(cls[k]));
        sb__take(&ch->taken,
                 (sb__box){lx, yy, lx + 24 + 14 * 12 * SB__CHAR_W, yy + 12});
    }
}

/* The points: their discs first (obstacles for every label), then each
 * point with its tooltip and its number placed beside it. */
static void sb__roof_points(sb_buf *b, const sb_roof_row *rows, int n,
                            sb__roofchart *ch)
{
    char t[32];
    for (int i = 0; i < n; i++) {
        const sb_roof_row *r = &rows[i];
        if (!sb__on_chart(r))
            continue;
        double px = sb__map(&ch->x, r->ai), py = sb__map(&ch->y, r->achieved);
        sb__take(&ch->taken, (sb__box){px - 5, py - 5, px + 5, py + 5});
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        const sb_roof_row *r = &rows[i];
        if (!sb__on_chart(r))
            continue;
        k++;
        double px = sb__map(&ch->x, r->ai), py = sb__map(&ch->y, r->achieved);
        sb_buf_printf(b,
                      "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
                      "fill=\"%s\" stroke=\"#000\" stroke-width=\"0.8\">"
                      "<title>%d ",
                      px, py, sb__class_color(r->bound), k);
        sb_buf_esc(b, r->bench);
        sb_buf_printf(b, " ");
        sb_buf_esc(b, r->params);
        sb_buf_printf(b,
                      ": AI %.3g, %sFLOP/s, %.0f%% of SOL (%s)</title>"
                      "</circle>\n",
                      r->ai, sb__si(r->achieved, t, sizeof t), r->pct_sol,
                      r->ceiling);
        char num[8];
        snprintf(num, sizeof num, "%d", k);
        double tx, ty;
        sb__place(&ch->taken, ch->plot, px, py, (int)strlen(num), 10, &tx, &ty);
        sb_buf_printf(b,
                      "<text class=\"pt\" x=\"%.1f\" y=\"%.1f\" "
                      "font-size=\"10\" font-weight=\"bold\">%s</text>\n",
                      tx, ty, num);
    }
}

/* A key entry's name split into at most 4 lines of `room` characters, at
 * a space where there is one; returns the number of lines. */
static int sb__key_wrap(const char *name, int room, const char *parts[4],
                        int plen[4])
{
    int np2 = 0;
    const char *p = name;
    while (*p && np2 < 4) {
        int l = (int)strlen(p);
        if (l > room) {
            int cut = room;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            l = cut > 0 ? cut : room;
        }
        parts[np2] = p;
        plen[np2++] = l;
        p += l;
        while (*p == ' ')
            p++;
    }
    return np2;
}

/* The key: number, class, kernel; a long name wraps at a space onto the
 * next line, never cut (whole also in the table and the point's
 * tooltip). Points past the column's height are counted. */
static void sb__roof_key(sb_buf *b, const sb_roof_row *rows, int n, int npts,
                         const sb__roofchart *ch, int W)
{
    double kx = W - ch->keyw + 8, ky = ch->y.p1 + 4;
    int lines = (int)((ch->y.p0 - ch->y.p1) / 13) - 2, used = 0;
    int maxc = (int)((ch->keyw - 26) / (10 * SB__CHAR_W));
    sb_buf_printf(b,
                  "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">"
                  "points</text>\n",
                  kx, ky + 8);
    int k = 0, listed = 0;
    for (int i = 0; i < n; i++) {
        const sb_roof_row *r = &rows[i];
        if (!sb__on_chart(r))
            continue;
        k++;
        char name[256], num[8];
        sb__point_name(r, name, sizeof name);
        snprintf(num, sizeof num, "%d ", k);
        const char *parts[4];
        int plen[4];
        int np2 = sb__key_wrap(name, maxc - (int)strlen(num), parts, plen);
        if (used + np2 > lines)
            break;
        for (int q = 0; q < np2; q++) {
            double yy = ky + 13.0 * (used + q + 2);
            if (q == 0)
                sb_buf_printf(b,
                              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
                              "fill=\"%s\"/>",
                              kx + 4, yy - 3.5, sb__class_color(r->bound));
            sb_buf_printf(b,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                          "xml:space=\"preserve\">%s",
                          kx + 12, yy, q == 0 ? num : "   ");
            char part[256];
            snprintf(part, sizeof part, "%.*s", plen[q], parts[q]);
            sb_buf_esc(b, part);
            sb_buf_printf(b, "</text>\n");
        }
        used += np2;
        listed++;
    }
    if (listed < npts)
        sb_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                      "fill=\"#777\">... %d more: the table</text>\n",
                      kx + 12, ky + 13.0 * (used + 2), npts - listed);
}

void sb_svg_roofline(sb_buf *b, const sb_ceilings *c, const sb_roof_row *rows,
                     int n, int W, int H)
{
    sb__roofs R = {.np = 0};
    sb__roof_ceilings(c, &R);
    sb__roof_extent(&R, rows, n);
    sb__roofchart ch = {.keyw = 0};
    sb__roof_axes(&R, W, H, &ch);
    sb__frame(b, &ch.x, &ch.y, "Hierarchical roofline",
              "Arithmetic intensity (FLOP/byte)", "Performance (FLOP/s)", false,
              W, H);
    sb_buf_printf(b, "<g class=\"roofs\">\n");
    sb__roof_lines(b, &R, &ch);
    sb_buf_printf(b, "</g>\n<g class=\"legend\">\n");
    sb__roof_legend(b, &R, &ch);
    sb_buf_printf(b, "</g>\n<g class=\"points\">\n");
    /* points first, then the numbers beside them, then the key */
    sb__roof_points(b, rows, n, &ch);
    if (R.npts)
        sb__roof_key(b, rows, n, R.npts, &ch, W);
    sb_buf_printf(b, "</g>\n</svg>\n");
}

/* ---- line charts
 * ------------------------------------------------------------- */

void sb_svg_lines(sb_buf *b, const char *title, const char *xlabel,
                  const char *ylabel, bool x_bytes, const sb_line_series *s,
                  int ns, const sb_hline *hl, int nh, int W, int H)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < s[i].n; j++)
            if (s[i].x[j] > 0 && s[i].y[j] > 0) {
                xlo = fmin(xlo, s[i].x[j]);
                xhi = fmax(xhi, s[i].x[j]);
                ylo = fmin(ylo, s[i].y[j]);
                yhi = fmax(yhi, s[i].y[j]);
            }
    for (int i = 0; i < nh; i++)
        if (hl[i].y > 0) {
            ylo = fmin(ylo, hl[i].y);
            yhi = fmax(yhi, hl[i].y);
        }
    if (!(xhi > 0)) {
        xlo = 1;
        xhi = 10;
    }
    if (!(yhi > 0)) {
        ylo = 1;
        yhi = 10;
    }
    /* the legend's column as wide as its longest name (11 px text) */
    size_t longest = 8;
    for (int i = 0; i < ns; i++)
        if (strlen(s[i].name) > longest)
            longest = strlen(s[i].name);
    double keyw = 36 + longest * 11 * SB__CHAR_W;
    if (keyw > W / 3)
        keyw = W / 3;
    sb__ax x = {floor(log10(xlo)), ceil(log10(xhi)), 70, W - keyw};
    if (x.hi <= x.lo)
        x.hi = x.lo + 1;
    sb__ax y = {floor(log10(ylo)), ceil(log10(yhi)), H - 50, 36};
    if (y.hi <= y.lo)
        y.hi = y.lo + 1;
    sb__frame(b, &x, &y, title, xlabel, ylabel, x_bytes, W, H);
    char t[32];
    for (int i = 0; i < nh; i++) {
        if (!(hl[i].y > 0))
            continue;
        double py = sb__map(&y, hl[i].y);
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"4,3\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555\" "
                      "text-anchor=\"end\" font-size=\"11\">",
                      x.p0, py, x.p1, py, x.p1 - 4, py - 4);
        sb_buf_esc(b, hl[i].name);
        sb_buf_printf(b, " plateau %s GB/s</text>\n",
                      sb__si(hl[i].y, t, sizeof t));
    }
    for (int i = 0; i < ns; i++) {
        sb_buf_printf(b,
                      "<polyline fill=\"none\" stroke=\"%s\" "
                      "stroke-width=\"2\" points=\"",
                      sb__palette(i));
        for (int j = 0; j < s[i].n; j++)
            if (s[i].x[j] > 0 && s[i].y[j] > 0)
                sb_buf_printf(b, "%.1f,%.1f ", sb__map(&x, s[i].x[j]),
                              sb__map(&y, s[i].y[j]));
        sb_buf_printf(b, "\"/>\n");
        for (int j = 0; j < s[i].n; j++)
            if (s[i].x[j] > 0 && s[i].y[j] > 0)
                sb_buf_printf(b,
                              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                              "fill=\"%s\"/>\n",
                              sb__map(&x, s[i].x[j]), sb__map(&y, s[i].y[j]),
                              sb__palette(i));
        sb_buf_printf(b,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
                      "height=\"3\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" "
                      "font-size=\"11\">",
                      x.p1 + 10, y.p1 + 60 + 15.0 * i, sb__palette(i),
                      x.p1 + 26, y.p1 + 65 + 15.0 * i);
        sb_buf_esc(b, s[i].name);
        sb_buf_printf(b, "</text>\n");
    }
    sb_buf_printf(b, "</svg>\n");
}

/* ---- phases -------------------------------------------------------------- */

void sb_svg_phases(sb_buf *b, const sb_prediction *p, int W)
{
    const char *stages[3];
    int ns = 0;
    if (p->w.kind == SB_JOB_TRAIN) {
        stages[ns++] = "step";
    } else {
        stages[ns++] = "prefill";
        stages[ns++] = "decode";
        stages[ns++] = "serve";
    }
    int H = 60 + 70 * ns + 40;
    sb_buf_printf(b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                  "height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "font-family=\"Helvetica,Arial,sans-serif\" "
                  "font-size=\"12\">\n<rect width=\"%d\" height=\"%d\" "
                  "fill=\"#ffffff\"/>\n",
                  W, H, W, H, W, H);
    sb_buf_printf(b,
                  "<text x=\"%d\" y=\"20\" text-anchor=\"middle\" "
                  "font-size=\"15\" font-weight=\"bold\">Phase breakdown of ",
                  W / 2);
    sb_buf_esc(b, p->w.name);
    sb_buf_printf(b, " by class (%s overlap)</text>\n",
                  p->w.overlap == SB_OVERLAP_FULL   ? "full"
                  : p->w.overlap == SB_OVERLAP_NONE ? "no"
                                                    : "per-kind");
    double x0 = 90, x1 = W - 20;
    for (int s = 0; s < ns; s++) {
        double tot = 0;
        for (int i = 0; i < p->n; i++)
            if (strcmp(p->ph[i].stage, stages[s]) == 0)
                tot += p->ph[i].t;
        double y0 = 45 + 70.0 * s;
        sb_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s"
                      "</text>\n",
                      x0 - 8, y0 + 26, stages[s]);
        double xc = x0;
        for (int i = 0; i < p->n && tot > 0; i++) {
            const sb_phase *ph = &p->ph[i];
            if (strcmp(ph->stage, stages[s]) != 0 || !(ph->t > 0))
                continue;
            double wpx = (x1 - x0) * ph->t / tot;
            sb_buf_printf(b,
                          "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
                          "height=\"40\" fill=\"%s\" stroke=\"#fff\" "
                          "stroke-width=\"1\"><title>",
                          xc, y0, wpx, sb__class_color(ph->bound));
            sb_buf_esc(b, ph->name);
            sb_buf_printf(b, ": %.4g ms (%.1f%%), %s-bound</title></rect>\n",
                          ph->t * 1e3, 100 * ph->t / tot,
                          sb_bound_name(ph->bound));
            if (wpx > 6.0 * (double)strlen(ph->name) + 8) {
                sb_buf_printf(b,
                              "<text x=\"%.1f\" y=\"%.1f\" fill=\"#fff\" "
                              "font-size=\"10\" text-anchor=\"middle\">",
                              xc + wpx / 2, y0 + 24);
                sb_buf_esc(b, ph->name);
                sb_buf_printf(b, "</text>\n");
            }
            xc += wpx;
        }
        sb_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" fill=\"#333\">total "
                      "%.4g ms</text>\n",
                      x0, y0 + 56, tot * 1e3);
    }
    static const sb_bound cls[] = {SB_BOUND_COMPUTE, SB_BOUND_MEMORY,
                                   SB_BOUND_NETWORK, SB_BOUND_HOST,
                                   SB_BOUND_LATENCY, SB_BOUND_VECTOR};
    for (int i = 0; i < 6; i++)
        sb_buf_printf(b,
                      "<rect x=\"%.1f\" y=\"%d\" width=\"12\" "
                      "height=\"12\" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">"
                      "%s</text>\n",
                      x0 + 110.0 * i, H - 24, sb__class_color(cls[i]),
                      x0 + 110.0 * i + 16, H - 14, sb_bound_name(cls[i]));
    sb_buf_printf(b, "</svg>\n");
}
