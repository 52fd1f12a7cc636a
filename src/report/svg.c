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

void sb_buf_esc(sb_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            sb_buf_printf(b, "&amp;");
            break;
        case '<':
            sb_buf_printf(b, "&lt;");
            break;
        case '>':
            sb_buf_printf(b, "&gt;");
            break;
        case '"':
            sb_buf_printf(b, "&quot;");
            break;
        default:
            sb_buf_printf(b, "%c", *s);
        }
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
                      px, y->p0 + 16, t);
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

/* ---- roofline ------------------------------------------------------------ */

void sb_svg_roofline(sb_buf *b, const sb_ceilings *c, const sb_roof_row *rows,
                     int n, int W, int H)
{
    double pk[16], bw[16];
    char pkn[16][64];
    const char *bwn[16];
    int np = 0, nb = 0;
    for (int i = 0; i < c->n; i++) {
        const sb_ceiling *x = &c->c[i];
        if (!(x->value > 0))
            continue;
        if (strncmp(x->name, "peak.", 5) == 0 && !strstr(x->name, "theor")) {
            /* Equal peaks (bf16 = fp16 on most parts) share one roof. */
            int j = 0;
            while (j < np && fabs(pk[j] - x->value) > 1e-3 * x->value)
                j++;
            if (j < np) {
                size_t l = strlen(pkn[j]);
                snprintf(pkn[j] + l, sizeof pkn[j] - l, "/%s", x->name + 5);
            } else if (np < 16) {
                pk[np] = x->value;
                snprintf(pkn[np++], sizeof pkn[0], "%s", x->name + 5);
            }
        } else if (strncmp(x->name, "bw.", 3) == 0 && nb < 16) {
            bw[nb] = x->value;
            bwn[nb++] = x->name + 3;
        }
    }
    double pmax = 0, pmin = INFINITY, bmax = 0, bmin = INFINITY;
    for (int i = 0; i < np; i++) {
        pmax = fmax(pmax, pk[i]);
        pmin = fmin(pmin, pk[i]);
    }
    for (int i = 0; i < nb; i++) {
        bmax = fmax(bmax, bw[i]);
        bmin = fmin(bmin, bw[i]);
    }
    double xlo = 1.0 / 64, xhi = 1024;
    double ylo_v = INFINITY, yhi_v = pmax > 0 ? pmax * 3 : 1e12;
    if (np && nb) {
        xhi = fmax(xhi, pmax / bmin * 8);
        xlo = fmin(xlo, pmin / bmax / 64);
    }
    for (int i = 0; i < n; i++)
        if (rows[i].on_chart && rows[i].ai > 0) {
            xlo = fmin(xlo, rows[i].ai / 2);
            xhi = fmax(xhi, rows[i].ai * 2);
            ylo_v = fmin(ylo_v, rows[i].achieved / 3);
            yhi_v = fmax(yhi_v, rows[i].achieved * 3);
        }
    if (nb)
        ylo_v = fmin(ylo_v, bmin * xlo);
    if (!isfinite(ylo_v) || ylo_v <= 0)
        ylo_v = yhi_v / 1e5;
    ylo_v = fmax(ylo_v, yhi_v / 1e7);
    sb__ax x = {floor(log10(xlo)), ceil(log10(xhi)), 70, W - 30};
    sb__ax y = {floor(log10(ylo_v)), ceil(log10(yhi_v)), H - 50, 36};
    sb__frame(b, &x, &y, "Hierarchical roofline",
              "Arithmetic intensity (FLOP/byte)", "Performance (FLOP/s)", false,
              W, H);
    double X0 = pow(10, x.lo), X1 = pow(10, x.hi);
    char t[32];
    sb_buf_printf(b, "<g class=\"roofs\">\n");
    /* Memory roofs: y = AI x BW, up to the highest peak. */
    for (int i = 0; i < nb; i++) {
        double xe = pmax > 0 ? pmax / bw[i] : X1;
        xe = fmin(xe, X1);
        double xs = fmax(X0, pow(10, y.lo) / bw[i]);
        if (xs >= xe)
            continue;
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                      sb__map(&x, xs), sb__map(&y, xs * bw[i]), sb__map(&x, xe),
                      sb__map(&y, xe * bw[i]), sb__palette(i));
        double lx = xs * 1.6;
        sb_buf_printf(
            b,
            "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" "
            "transform=\"rotate(%.1f %.1f %.1f)\">%s %s%sB/s</text>\n",
            sb__map(&x, lx) + 4, sb__map(&y, lx * bw[i]) - 5, sb__palette(i),
            -atan2(sb__map(&y, X0 * bw[i]) - sb__map(&y, X0 * 10 * bw[i]),
                   sb__map(&x, X0 * 10) - sb__map(&x, X0)) *
                180 / M_PI,
            sb__map(&x, lx) + 4, sb__map(&y, lx * bw[i]) - 5, bwn[i],
            sb__si(bw[i], t, sizeof t), strchr(t, ' ') ? "" : " ");
    }
    /* Compute roofs: horizontal from the fastest memory roof. */
    for (int i = 0; i < np; i++) {
        double xs = bmax > 0 ? pk[i] / bmax : X0;
        xs = fmax(xs, X0);
        sb_buf_printf(b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                      "y2=\"%.1f\" stroke=\"#444\" stroke-width=\"2\" "
                      "stroke-dasharray=\"%s\"/>\n",
                      sb__map(&x, xs), sb__map(&y, pk[i]), sb__map(&x, X1),
                      sb__map(&y, pk[i]), i == 0 ? "none" : "6,3");
        sb_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                      "fill=\"#222\">%s %s%sFLOP/s</text>\n",
                      sb__map(&x, X1) - 4, sb__map(&y, pk[i]) - 5, pkn[i],
                      sb__si(pk[i], t, sizeof t), strchr(t, ' ') ? "" : " ");
    }
    sb_buf_printf(b, "</g>\n<g class=\"points\">\n");
    int k = 0;
    for (int i = 0; i < n; i++) {
        const sb_roof_row *r = &rows[i];
        if (!r->on_chart || !(r->ai > 0) || !(r->achieved > 0))
            continue;
        double px = sb__map(&x, r->ai), py = sb__map(&y, r->achieved);
        sb_buf_printf(b,
                      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
                      "fill=\"%s\" stroke=\"#000\" stroke-width=\"0.8\">"
                      "<title>",
                      px, py, sb__class_color(r->bound));
        sb_buf_esc(b, r->bench);
        sb_buf_printf(b, " ");
        sb_buf_esc(b, r->params);
        sb_buf_printf(b,
                      ": AI %.3g, %sFLOP/s, %.0f%% of SOL (%s)</title>"
                      "</circle>\n",
                      r->ai, sb__si(r->achieved, t, sizeof t), r->pct_sol,
                      r->ceiling);
        const char *shortn =
            strchr(r->bench, '.') ? strchr(r->bench, '.') + 1 : r->bench;
        sb_buf_printf(b,
                      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                      "fill=\"#000\">",
                      px + 7, py + ((k % 2) ? 12 : -4));
        sb_buf_esc(b, shortn);
        sb_buf_printf(b, " %s</text>\n", r->dtype);
        k++;
    }
    /* Legend of classes. */
    static const sb_bound cls[] = {SB_BOUND_COMPUTE, SB_BOUND_MEMORY};
    for (int i = 0; i < 2; i++)
        sb_buf_printf(b,
                      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>"
                      "<text x=\"%.1f\" y=\"%.1f\">%s-bound</text>\n",
                      x.p0 + 14, y.p1 + 16 + 16.0 * i, sb__class_color(cls[i]),
                      x.p0 + 24, y.p1 + 20 + 16.0 * i, sb_bound_name(cls[i]));
    sb_buf_printf(b, "</g>\n</svg>\n");
}

/* ---- line charts
 * ------------------------------------------------------------- */

void sb_svg_lines(sb_buf *b, const char *title, const char *xlabel,
                  const char *ylabel, bool x_bytes, const sb_series *s, int ns,
                  const sb_hline *hl, int nh, int W, int H)
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
    sb__ax x = {floor(log10(xlo)), ceil(log10(xhi)), 70, W - 150};
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
