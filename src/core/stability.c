/*
 * stability.c — the stability verdict of a result (stability.h).
 *
 * From the samples, in the order they were taken:
 *   spread     cv = stddev / mean > SB_STAB_CV;
 *   clusters   sorted, the widest relative gap between neighbours that
 *              leaves a fifth of the samples on each side, wider than
 *              SB_STAB_GAP and than 4 x the median gap (two states: boost
 *              and no boost, a neighbour there and gone), n >= 10;
 *   drift      the median of the last third against the first, beyond
 *              SB_STAB_DRIFT with a Mann-Whitney U p < 0.01 between the
 *              two thirds, n >= 9;
 *   outliers   the share beyond 3 IQR of the quartiles, above
 *              SB_STAB_OUTLIERS, n >= 8.
 * From the machine over the sampling window (/proc/stat, cpufreq):
 *   load       busy time of all CPUs less this process's own, over wall
 *              time x CPUs, above SB_STAB_LOAD (not under MPI, where the
 *              other ranks poll);
 *   steal      stolen ticks over all ticks, above SB_STAB_STEAL;
 *   clock      a core whose cpufreq clock moved more than SB_STAB_FREQ.
 */
#define _GNU_SOURCE
#include "solbench/stability.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "solbench/stats.h"
#include "solbench/timer.h"

/* ---- the machine --------------------------------------------------------- */

void sb_stab_snapshot(sb_stab_snap *s)
{
    memset(s, 0, sizeof *s);
    s->wall = sb_now();
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        s->self_cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
                      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    s->ncpu = n > 0 ? (int)n : 1;
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        unsigned long long v[10] = {0};
        int k = fscanf(
            f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
            &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
        fclose(f);
        if (k >= 8) {
            /* user nice system idle iowait irq softirq steal (guest is
             * inside user) */
            s->busy = v[0] + v[1] + v[2] + v[5] + v[6];
            s->steal = v[7];
            s->total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
            s->have_stat = true;
        }
    }
    for (int c = 0; c < s->ncpu && c < 256; c++) {
        char path[96];
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c);
        FILE *q = fopen(path, "r");
        if (!q)
            break;
        double khz = 0;
        if (fscanf(q, "%lf", &khz) == 1 && khz > 0)
            s->freq[s->nfreq++] = khz;
        fclose(q);
    }
}

void sb_stab_context(const sb_stab_snap *a, const sb_stab_snap *b,
                     int own_ranks, sb_stab_ctx *out)
{
    out->other_load = out->steal = out->freq_change = -1;
    out->freq_from = out->freq_to = 0;
    double wall = b->wall - a->wall;
    if (a->have_stat && b->have_stat && wall > 0.05 && b->total > a->total) {
        double tick = (double)sysconf(_SC_CLK_TCK);
        if (!(tick > 0))
            tick = 100;
        double busy = (double)(b->busy - a->busy) / tick;
        double self = b->self_cpu - a->self_cpu;
        double cap = wall * a->ncpu;
        if (own_ranks <= 1) {
            double other = (busy - self) / cap;
            out->other_load = other < 0 ? 0 : other;
        }
        out->steal =
            (double)(b->steal - a->steal) / (double)(b->total - a->total);
    }
    int n = a->nfreq < b->nfreq ? a->nfreq : b->nfreq;
    for (int c = 0; c < n; c++) {
        double ch = fabs(b->freq[c] / a->freq[c] - 1);
        if (ch > out->freq_change) {
            out->freq_change = ch;
            out->freq_from = a->freq[c] * 1e-6;
            out->freq_to = b->freq[c] * 1e-6;
        }
    }
}

/* ---- the samples ----------------------------------------------------------
 */

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_of(const double *x, size_t n, double *tmp)
{
    memcpy(tmp, x, n * sizeof *x);
    qsort(tmp, n, sizeof *tmp, cmp_d);
    return sb_percentile_sorted(tmp, n, 0.5);
}

static void add_why(sb_result *r, unsigned flag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_why(sb_result *r, unsigned flag, const char *fmt, ...)
{
    r->stab_flags |= flag;
    size_t l = strlen(r->stab_why);
    if (l && l + 2 < sizeof r->stab_why) {
        memcpy(r->stab_why + l, "; ", 3);
        l += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->stab_why + l, sizeof r->stab_why - l, fmt, ap);
    va_end(ap);
}

void sb_stability_judge(sb_result *r, const sb_stab_ctx *ctx)
{
    if (r->skipped || r->n_samples < 2 || !r->samples_s)
        return;
    r->stab_judged = true;
    r->stab_flags = 0;
    r->stab_why[0] = '\0';
    const size_t n = r->n_samples;
    const double *x = r->samples_s;
    double *s = malloc(n * sizeof *s), *t = malloc(n * sizeof *t);
    if (!s || !t) {
        free(s);
        free(t);
        r->stable = r->stats.cv <= SB_STAB_CV;
        return;
    }
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_d);

    if (r->stats.cv > SB_STAB_CV)
        add_why(r, SB_UNSTABLE_CV, "cv %.0f%% (> %.0f%%)", 100 * r->stats.cv,
                100 * SB_STAB_CV);

    if (n >= 10 && s[0] > 0) {
        /* gaps between sorted neighbours, relative to the lower one */
        size_t ng = n - 1, lo = (n + 4) / 5, hi = n - (n + 4) / 5;
        for (size_t i = 0; i < ng; i++)
            t[i] = s[i + 1] / s[i] - 1;
        double best = 0;
        size_t at = 0;
        for (size_t k = lo; k <= hi && k < n; k++)
            if (t[k - 1] > best) {
                best = t[k - 1];
                at = k;
            }
        double *g = malloc(ng * sizeof *g);
        double med = g ? median_of(t, ng, g) : 0;
        free(g);
        if (best > SB_STAB_GAP && best > 4 * med)
            add_why(r, SB_UNSTABLE_BIMODAL,
                    "two clusters %.0f%% apart (%zu of %zu samples in the "
                    "slower)",
                    100 * best, n - at, n);
    }

    if (n >= 9) {
        size_t third = n / 3;
        double m1 = median_of(x, third, t),
               m3 = median_of(x + n - third, third, t);
        double d = m1 > 0 ? m3 / m1 - 1 : 0;
        sb_mwu u;
        if (fabs(d) > SB_STAB_DRIFT &&
            sb_mwu_test(x, third, x + n - third, third, &u) == 0 && u.p < 0.01)
            add_why(r, SB_UNSTABLE_DRIFT,
                    "%s %.0f%% from the first third of its samples to the "
                    "last",
                    d > 0 ? "slowed" : "sped up", 100 * fabs(d));
    }

    if (n >= 8) {
        double q1 = sb_percentile_sorted(s, n, 0.25),
               q3 = sb_percentile_sorted(s, n, 0.75), iqr = q3 - q1;
        size_t far = 0;
        for (size_t i = 0; i < n; i++)
            far += s[i] < q1 - 3 * iqr || s[i] > q3 + 3 * iqr;
        if (iqr > 0 && (double)far / n > SB_STAB_OUTLIERS)
            add_why(r, SB_UNSTABLE_OUTLIERS,
                    "%zu of %zu samples far out (beyond 3 IQR)", far, n);
    }
    free(s);
    free(t);

    if (ctx) {
        if (ctx->other_load > SB_STAB_LOAD)
            add_why(r, SB_UNSTABLE_LOAD,
                    "other processes took %.0f%% of the CPUs while it was "
                    "measured",
                    100 * ctx->other_load);
        if (ctx->steal > SB_STAB_STEAL)
            add_why(r, SB_UNSTABLE_STEAL,
                    "the hypervisor stole %.0f%% of the CPU time (steal)",
                    100 * ctx->steal);
        if (ctx->freq_change > SB_STAB_FREQ)
            add_why(r, SB_UNSTABLE_FREQ,
                    "a core's clock moved from %.2f to %.2f GHz",
                    ctx->freq_from, ctx->freq_to);
    }
    r->stable = r->stab_flags == 0;
}

void sb_stability_flag(sb_result *r, unsigned flag, const char *why)
{
    if (!r->stab_judged) {
        r->stab_judged = true;
        r->stab_why[0] = '\0';
    }
    if (!strstr(r->stab_why, why))
        add_why(r, flag, "%s", why);
    r->stab_flags |= flag;
    r->stable = false;
}

const char *sb_stab_remedy(unsigned f, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t l = 0;
#define SB__ADD(s)                                                             \
    do {                                                                       \
        int w_ = snprintf(buf + l, len - l, "%s%s", l ? "; " : "", (s));       \
        if (w_ > 0 && (size_t)w_ < len - l)                                    \
            l += (size_t)w_;                                                   \
    } while (0)
    if (f & SB_UNSTABLE_LOAD)
        SB__ADD("quiet the machine (another process shared the CPUs)");
    if (f & SB_UNSTABLE_STEAL)
        SB__ADD("a dedicated host or instance (the hypervisor took time)");
    if (f & SB_UNSTABLE_FREQ)
        SB__ADD("fix the clock (cpupower frequency-set -g performance)");
    if (f & SB_UNSTABLE_BIMODAL)
        SB__ADD("pin threads or isolate the CPU (two states: OMP_PROC_BIND, "
                "isolcpus)");
    if (f & SB_UNSTABLE_DRIFT)
        SB__ADD("a longer --min-time or --warmup (the figure moved as it "
                "ran)");
    if (f & (SB_UNSTABLE_CV | SB_UNSTABLE_OUTLIERS))
        SB__ADD("more samples (--min-time, --repeat), and --interleave for "
                "figures read as ratios");
    if (f & SB_UNSTABLE_CEILING)
        SB__ADD("measure the ceiling again beside it (--interleave)");
#undef SB__ADD
    return buf;
}
