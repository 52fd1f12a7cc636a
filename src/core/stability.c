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
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "solbench/stats.h"
#include "solbench/timer.h"
#include "solbench/util.h"

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

/* ---- the probe --------------------------------------------------------------
 */

int sb_probe_open(sb_probe *p, int threads, sb_err *err)
{
    memset(p, 0, sizeof *p);
    p->threads = threads > 0 ? threads : 1;
    double llc = sb_llc_bytes();
    double bytes = fmax(64.0 * 1048576, 4 * llc);
    bytes = fmin(bytes, 512.0 * 1048576);
    double mem = sb_phys_mem();
    if (mem > 0)
        bytes = fmin(bytes, 0.05 * mem);
    p->n = (size_t)(bytes / sizeof(double));
    p->buf = sb_alloc_aligned(p->n * sizeof(double));
    if (!p->buf)
        return sb_fail(err, SB_ENOMEM, "the probe's %.0f MiB buffer",
                       bytes / 1048576);
#pragma omp parallel for num_threads(p->threads) schedule(static)
    for (size_t i = 0; i < p->n; i++)
        p->buf[i] = 1.0 + (double)(i & 7);
    return 0;
}

void sb_probe_close(sb_probe *p)
{
    sb_free_aligned(p->buf);
    p->buf = NULL;
}

/* An FMA chain of 16 independent lanes a thread, vectorised by the
 * compiler: a rate, not a peak (only its ratio to the run's best counts). */
static double probe_fma(int threads)
{
    const long reps = 200000;
    double t0 = sb_now();
#pragma omp parallel num_threads(threads)
    {
        double a[16], x = 1.0000001, y = 0.9999999;
        for (int j = 0; j < 16; j++)
            a[j] = 1.0 + j * 1e-3;
        for (long r = 0; r < reps; r++)
#pragma omp simd
            for (int j = 0; j < 16; j++)
                a[j] = a[j] * x + y;
        double s = 0;
        for (int j = 0; j < 16; j++)
            s += a[j];
        if (s == 12345.678) /* keeps the loop */
            fprintf(stderr, "%g", s);
    }
    double t = sb_now() - t0;
    return t > 0 ? 2.0 * 16 * reps * threads / t : 0;
}

static double probe_read(const sb_probe *p)
{
    double t0 = sb_now(), sum = 0;
    /* eight sums a thread, so the loop is bound by the reads, not by one
     * chain of additions */
#pragma omp parallel num_threads(p->threads) reduction(+ : sum)
    {
        int nt = omp_get_num_threads(), id = omp_get_thread_num();
        size_t per = (p->n / 8 + (size_t)nt - 1) / (size_t)nt * 8;
        size_t lo = per * (size_t)id, hi = lo + per < p->n ? lo + per : p->n;
        double s[8] = {0};
        for (size_t i = lo; i + 8 <= hi; i += 8)
            for (int j = 0; j < 8; j++)
                s[j] += p->buf[i + j];
        for (int j = 0; j < 8; j++)
            sum += s[j];
    }
    double t = sb_now() - t0;
    if (sum == -1.0) /* keeps the loop */
        fprintf(stderr, "%g", sum);
    return t > 0 ? (double)p->n * sizeof(double) / t : 0;
}

int sb_probe_take(sb_probe *p)
{
    if (!p || !p->buf || p->count >= SB_PROBE_MAX)
        return -1;
    double f = 0, b = 0;
    for (int k = 0; k < 3; k++) { /* the best of three: the least disturbed */
        f = fmax(f, probe_fma(p->threads));
        b = fmax(b, probe_read(p));
    }
    p->flops[p->count] = f;
    p->bytes[p->count] = b;
    return p->count++;
}

void sb_probe_judge(const sb_probe *p, int a, int b, sb_result_list *out,
                    size_t from, size_t to)
{
    if (!p || a < 0 || b < 0 || a >= p->count || b >= p->count)
        return;
    /* the run's typical speed: the median probe (its best would make the
     * probe's own noise a slowdown) */
    double tf[SB_PROBE_MAX], tb[SB_PROBE_MAX];
    memcpy(tf, p->flops, sizeof tf[0] * (size_t)p->count);
    memcpy(tb, p->bytes, sizeof tb[0] * (size_t)p->count);
    qsort(tf, (size_t)p->count, sizeof tf[0], cmp_d);
    qsort(tb, (size_t)p->count, sizeof tb[0], cmp_d);
    double bf = sb_percentile_sorted(tf, (size_t)p->count, 0.5),
           bb = sb_percentile_sorted(tb, (size_t)p->count, 0.5);
    if (!(bf > 0) || !(bb > 0))
        return;
    /* both probes slow: the slow stretch spans the point (one probe alone
     * may have met a blip of a few milliseconds) */
    double sf = 1 - fmax(p->flops[a], p->flops[b]) / bf,
           sm = 1 - fmax(p->bytes[a], p->bytes[b]) / bb;
    if (sf <= SB_STAB_PROBE && sm <= SB_STAB_PROBE)
        return;
    char why[200];
    snprintf(why, sizeof why,
             "the machine ran %.0f%% slower (%s) around it than it typically "
             "did in this run (probe)",
             100 * fmax(sf, sm), sf >= sm ? "compute" : "memory");
    for (size_t i = from; i < to && i < out->n; i++) {
        sb_result *r = &out->items[i];
        if (r->stab_judged && strcmp(r->backend, "cpu") == 0)
            sb_stability_flag(r, SB_UNSTABLE_PROBE, why);
    }
}

void sb_stability_history(sb_result *r, const double *p50, int n)
{
    if (!r->stab_judged || n < SB_STAB_HISTORY_MIN || !(r->stats.p50 > 0))
        return;
    double *t = malloc(sizeof *t * (size_t)n);
    if (!t)
        return;
    double m = median_of(p50, (size_t)n, t);
    free(t);
    if (!(m > 0))
        return;
    /* as a rate: time m against time p50 */
    double d = m / r->stats.p50 - 1;
    if (fabs(d) <= SB_STAB_HISTORY)
        return;
    char why[160];
    snprintf(why, sizeof why,
             "%.0f%% %s than its median over the %d earlier steady runs on "
             "this machine",
             100 * fabs(d), d > 0 ? "faster" : "slower", n);
    sb_stability_flag(r, SB_UNSTABLE_HISTORY, why);
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
    if (f & SB_UNSTABLE_PROBE)
        SB__ADD("run again when the machine is quiet (its speed moved during "
                "the run: a neighbour on the host)");
    if (f & SB_UNSTABLE_HISTORY)
        SB__ADD("compare with the machine's history before trusting it "
                "(solbench history --bench NAME): the whole run may have met "
                "a slower or faster host");
#undef SB__ADD
    return buf;
}

/* ---- the host taking freed memory back --------------------------------- */

#define SB__REPORTED_KIB "/sys/module/page_reporting/parameters/reported_kib"

double sb_mem_reported_kib(void)
{
    FILE *f = fopen(SB__REPORTED_KIB, "r");
    if (!f)
        return -1;
    unsigned long long v = 0;
    int k = fscanf(f, "%llu", &v);
    fclose(f);
    return k == 1 ? (double)v : -1;
}

bool sb_mem_settle(double quiet_s, double max_s, double *waited_s, double *kib)
{
    *waited_s = *kib = 0;
    double first = sb_mem_reported_kib();
    if (first < 0)
        return false;
    double t0 = sb_now(), last = first, since = t0;
    for (;;) {
        double now = sb_now();
        if (now - since >= quiet_s || now - t0 >= max_s)
            break;
        usleep(100000);
        double v = sb_mem_reported_kib();
        if (v != last) {
            last = v;
            since = sb_now();
        }
    }
    *waited_s = sb_now() - t0;
    *kib = last - first;
    return true;
}
