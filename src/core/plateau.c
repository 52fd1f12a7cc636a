/*
 * plateau.c — level detection on a bandwidth-versus-size curve, as a pure
 * function (no I/O, no global state), so it can be tested on synthetic
 * curves and reused by any sweep.
 *
 * Steps: (1) log of the bandwidths, smoothed by a running median of 3;
 * (2) candidate plateaus are maximal runs of consecutive points whose
 * smoothed values fit in a band of relative width `threshold`; the longest
 * (then flattest) candidate is taken first and its points removed, until
 * no candidate is left — taking long runs first keeps the points of a
 * gradual transition from forming a level of their own; a short run (fewer
 * than 4 points) must also be flat end to end (drift under half the band),
 * because the points of a steep transition form short, sloped runs;
 * (3) neighbours whose medians are within `threshold` are merged; (4) a
 * plateau slower than the next one is dropped.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/error.h"
#include "solbench/param.h"
#include "solbench/plateau.h"

#define SB_PLATEAU_MAX_POINTS 1024

static double median3(double a, double b, double c)
{
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    if (b > c) {
        double t = b;
        b = c;
        c = t;
    }
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    return b;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median of bw[first..last] (raw values). */
static double range_median(const double *bw, int first, int last)
{
    double tmp[SB_PLATEAU_MAX_POINTS];
    int m = last - first + 1;
    memcpy(tmp, bw + first, (size_t)m * sizeof *tmp);
    qsort(tmp, (size_t)m, sizeof *tmp, cmp_double);
    return m % 2 ? tmp[m / 2] : 0.5 * (tmp[m / 2 - 1] + tmp[m / 2]);
}

static int cmp_plateau(const void *x, const void *y)
{
    const sb_plateau *a = x, *b = y;
    return (a->first > b->first) - (a->first < b->first);
}

int sb_plateau_detect(const double *size, const double *bw, int n,
                      const sb_plateau_opts *opts, sb_plateau *out, int max_out)
{
    if (!size || !bw || !out || n < 1 || n > SB_PLATEAU_MAX_POINTS ||
        max_out < 1)
        return SB_EINVAL;
    for (int i = 0; i < n; i++) {
        if (!(bw[i] > 0) || !isfinite(bw[i]) || !isfinite(size[i]))
            return SB_EINVAL;
        if (i > 0 && !(size[i] > size[i - 1]))
            return SB_EINVAL;
    }
    double thr = opts && opts->threshold > 0 ? opts->threshold : 0.15;
    int min_pts = opts && opts->min_points > 0 ? opts->min_points : 2;
    double band = log1p(thr);

    /* (1) log-bandwidth, median of 3 (ends kept as measured). */
    double y[SB_PLATEAU_MAX_POINTS], s[SB_PLATEAU_MAX_POINTS];
    for (int i = 0; i < n; i++)
        y[i] = log(bw[i]);
    for (int i = 0; i < n; i++)
        s[i] =
            (i == 0 || i == n - 1) ? y[i] : median3(y[i - 1], y[i], y[i + 1]);

    /* (2) longest flat runs first. */
    unsigned char used[SB_PLATEAU_MAX_POINTS] = {0};
    sb_plateau found[SB_PLATEAU_MAX_POINTS];
    int nf = 0;
    for (;;) {
        int best_i = -1, best_len = 0;
        double best_range = 0;
        for (int i = 0; i < n; i++) {
            if (used[i])
                continue;
            double lo = s[i], hi = s[i];
            int j = i;
            while (j + 1 < n && !used[j + 1]) {
                double v = s[j + 1];
                double nlo = v < lo ? v : lo, nhi = v > hi ? v : hi;
                if (nhi - nlo > band)
                    break;
                lo = nlo;
                hi = nhi;
                j++;
            }
            int len = j - i + 1;
            if (len < min_pts)
                continue;
            if (len < 4 && fabs(s[j] - s[i]) > 0.5 * band)
                continue; /* short and sloped: part of a transition */
            double range = hi - lo;
            if (len > best_len || (len == best_len && range < best_range)) {
                best_i = i;
                best_len = len;
                best_range = range;
            }
        }
        if (best_i < 0)
            break;
        for (int k = best_i; k < best_i + best_len; k++)
            used[k] = 1;
        found[nf].first = best_i;
        found[nf].last = best_i + best_len - 1;
        nf++;
    }
    qsort(found, (size_t)nf, sizeof *found, cmp_plateau);
    for (int k = 0; k < nf; k++)
        found[k].bw = range_median(bw, found[k].first, found[k].last);

    /* (3) merge neighbours at the same level (transition points between
     * them join the merged plateau). */
    for (bool merged = true; merged && nf > 1;) {
        merged = false;
        for (int k = 0; k + 1 < nf; k++) {
            if (fabs(log(found[k].bw / found[k + 1].bw)) < band) {
                found[k].last = found[k + 1].last;
                found[k].bw = range_median(bw, found[k].first, found[k].last);
                memmove(&found[k + 1], &found[k + 2],
                        (size_t)(nf - k - 2) * sizeof *found);
                nf--;
                merged = true;
                break;
            }
        }
    }

    /* (4) bandwidth falls with size: a plateau slower than its successor
     * is start-up overhead, not a cache level. */
    for (bool dropped = true; dropped && nf > 1;) {
        dropped = false;
        for (int k = 0; k + 1 < nf; k++) {
            if (found[k].bw < found[k + 1].bw) {
                memmove(&found[k], &found[k + 1],
                        (size_t)(nf - k - 1) * sizeof *found);
                nf--;
                dropped = true;
                break;
            }
        }
    }

    int nout = nf < max_out ? nf : max_out;
    for (int k = 0; k < nout; k++) {
        out[k] = found[k];
        out[k].start = size[found[k].first];
        out[k].end = size[found[k].last];
        out[k].label[0] = '\0';
    }
    return nout;
}

/* ---- labels -------------------------------------------------------------- */

int sb_plateau_label(sb_plateau *p, int np, const double *cache, int nlevels,
                     double max_size, char (*notes)[160], int max_notes)
{
    int nn = 0;
#define SB__NOTE(...)                                                          \
    do {                                                                       \
        if (notes && nn < max_notes)                                           \
            snprintf(notes[nn++], 160, __VA_ARGS__);                           \
    } while (0)
    if (np <= 0)
        return 0;
    if (nlevels > 8)
        nlevels = 8;

    int lev[8];
    int nl = 0;
    double largest = 0;
    for (int l = 1; cache && l <= nlevels && l < 8; l++) {
        if (cache[l] > 0) {
            lev[nl++] = l;
            if (cache[l] > largest)
                largest = cache[l];
        }
    }

    bool dram = nl > 0 ? max_size >= 2.0 * largest : np >= 2;
    int nc = dram ? np - 1 : np; /* cache plateaus */
    if (dram)
        snprintf(p[np - 1].label, sizeof p[np - 1].label, "DRAM");

    if (nl == 0 || nc > nl) {
        for (int k = 0; k < nc; k++)
            snprintf(p[k].label, sizeof p[k].label, "L%d", (k + 1) % 100);
        if (nl > 0)
            SB__NOTE("the sweep shows %d cache levels, the OS reports %d", nc,
                     nl);
        return nn;
    }

    /* Monotone assignment of the nc cache plateaus to the nl levels that
     * minimises the summed |log(end / capacity)| (dynamic programming). */
    double cost[SB_PLATEAU_MAX + 1][9];
    int from[SB_PLATEAU_MAX + 1][9];
    if (nc > SB_PLATEAU_MAX)
        nc = SB_PLATEAU_MAX;
    for (int k = 0; k <= nc; k++)
        for (int j = 0; j <= nl; j++)
            cost[k][j] = INFINITY;
    for (int j = 0; j <= nl; j++)
        cost[0][j] = 0; /* nothing placed yet, levels < j skipped */
    /* cost[k][j]: first k plateaus placed on levels among the first j. */
    for (int k = 1; k <= nc; k++) {
        for (int j = k; j <= nl; j++) {
            double skip = cost[k][j - 1];
            double take = cost[k - 1][j - 1] +
                          fabs(log(p[k - 1].end / cache[lev[j - 1]]));
            if (take <= skip) {
                cost[k][j] = take;
                from[k][j] = 1;
            } else {
                cost[k][j] = skip;
                from[k][j] = 0;
            }
        }
    }
    int assigned[SB_PLATEAU_MAX];
    for (int k = nc, j = nl; k > 0 && j > 0;) {
        if (from[k][j]) {
            assigned[k - 1] = lev[j - 1];
            k--;
            j--;
        } else {
            j--;
        }
    }
    bool level_seen[9] = {0};
    for (int k = 0; k < nc; k++) {
        int l = assigned[k];
        level_seen[l] = true;
        snprintf(p[k].label, sizeof p[k].label, "L%d", l);
        double ratio = p[k].end / cache[l];
        if (ratio > 4.0 || ratio < 0.25) {
            char a[32], b[32];
            SB__NOTE("the L%d plateau ends at %s but the OS reports %s for "
                     "L%d",
                     l, sb_fmt_size(p[k].end, a, sizeof a),
                     sb_fmt_size(cache[l], b, sizeof b), l);
        }
    }
    for (int j = 0; j < nl; j++) {
        if (!level_seen[lev[j]]) {
            char a[32];
            SB__NOTE("the OS reports an L%d of %s but the sweep shows no "
                     "plateau for it",
                     lev[j], sb_fmt_size(cache[lev[j]], a, sizeof a));
        }
    }
    if (dram && np >= 1 && p[np - 1].start < 0.5 * largest) {
        char a[32], b[32];
        SB__NOTE("DRAM-level bandwidth from %s on, inside the %s cache the "
                 "OS reports: that cache may not exist as reported",
                 sb_fmt_size(p[np - 1].start, a, sizeof a),
                 sb_fmt_size(largest, b, sizeof b));
    }
#undef SB__NOTE
    return nn;
}
