/*
 * noise.c — compute.noise: the time the machine takes from a program that
 * runs on all its threads, by fixed work quanta (the FWQ benchmark of the
 * ASC Sequoia suite; sysjitter, jHiccup). Every thread runs the same short
 * chain of dependent FMAs, the threads meet at a barrier after each quantum
 * (as a model's layers do after each kernel), and thread 0 times each
 * quantum from barrier to barrier. An undisturbed quantum lasts the chain's
 * time; one during which a thread was descheduled (a neighbour on a shared
 * host, the hypervisor, an interrupt) lasts longer by what was taken.
 *
 * Each recorded quantum's excess = its time - the shortest recorded; a
 * quantum is an interruption when its excess exceeds max(25 % of the
 * shortest, 50 us). Metrics: noise_pct (the share of the time lost, every
 * excess counted), interrupts_per_s (interruptions over the recorded
 * time) and the interruptions' excess at p50, p90, p99 and max. The
 * serving simulator adds interruptions at that rate and of those sizes to
 * a calibrated prediction (docs/METRICS.md, "compute.noise").
 *
 * Valid when every thread ran every quantum to the chain's reference value.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "bench/compute/compute.h"
#include "solbench/runner.h"
#include "solbench/stats.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* one thread's slot: a cache line of its own */
#define SB__NOISE_PAD 8
/* quanta recorded at most (about 4 minutes of 1 ms quanta) */
#define SB__NOISE_KEEP (1u << 18)

typedef struct noise_state {
    int threads;
    uint64_t steps;   /* chain steps per quantum */
    uint64_t block;   /* quanta in one iteration: a sample's length */
    double quantum_s; /* the quantum asked for */
    double want;      /* the chain's value after `steps` from its start */
    double *slot;     /* per thread: the last quantum's value */
    uint64_t *done;   /* per thread: quanta run */
    uint64_t total;   /* quanta every thread should have run */
    bool wrong;       /* a quantum ended at another value */
    double *t;        /* the recorded quanta's times */
    size_t n;
} noise_state;

static const sb_param_def noise_params[] = {
    {"quantum", SB_P_FLOAT, "1000", 50, 100000, NULL,
     "microseconds of work in one quantum (undisturbed)"},
    {"sample", SB_P_FLOAT, "0.1", 0.001, 60, NULL,
     "seconds of quanta in one iteration (the runner's sample)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

/* The work: a dependent chain (one FMA's latency a step), the same code
 * for the quanta and the reference. */
__attribute__((noinline)) static double sb__noise_chain(uint64_t steps,
                                                        double x)
{
    for (uint64_t i = 0; i < steps; i++)
        x = x * 0.9999999 + 1e-7;
    return x;
}

static int noise_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                       sb_err *err)
{
    noise_state *s = calloc(1, sizeof *s);
    if (!s)
        return sb_fail(err, SB_ENOMEM, "compute.noise: out of memory");
    s->threads = ctx->threads > 0 ? ctx->threads : 1;
    s->quantum_s = sb_p_num(pt->params, "quantum") * 1e-6;
    double q = ceil(sb_p_num(pt->params, "sample") / s->quantum_s);
    s->block = (uint64_t)(q < 2 ? 2 : q);
    size_t nt = (size_t)s->threads * SB__NOISE_PAD;
    s->slot = calloc(nt, sizeof *s->slot);
    s->done = calloc(nt, sizeof *s->done);
    s->t = malloc(SB__NOISE_KEEP * sizeof *s->t);
    if (!s->slot || !s->done || !s->t) {
        free(s->slot);
        free(s->done);
        free(s->t);
        free(s);
        return sb_fail(err, SB_ENOMEM, "compute.noise: out of memory");
    }
    /* steps per quantum: the chain's fastest rate over a few tries of at
     * least 2 ms each (a slow try is a disturbed one) */
    uint64_t steps = 1u << 14;
    double best = INFINITY;
    for (int k = 0; k < 5;) {
        double t0 = sb_now();
        volatile double x = sb__noise_chain(steps, 0.5);
        (void)x;
        double dt = sb_now() - t0;
        if (dt < 2e-3 && steps < (1ull << 40)) {
            steps *= 2;
            continue;
        }
        best = fmin(best, dt / (double)steps);
        k++;
    }
    s->steps = (uint64_t)fmax(1.0, round(s->quantum_s / best));
    s->want = sb__noise_chain(s->steps, 0.5);
    *state = s;
    return 0;
}

/* `iters` blocks of quanta on every thread, each quantum timed barrier to
 * barrier by thread 0; the first of a call carries the team's wake-up
 * and is not kept. */
static void noise_run(void *state, uint64_t blocks)
{
    noise_state *s = state;
    const uint64_t iters = blocks * s->block;
    double prev = 0;
    bool wrong = false;
#pragma omp parallel num_threads(s->threads) reduction(|| : wrong)
    {
        int me = omp_get_thread_num();
#pragma omp barrier
        if (me == 0)
            prev = sb_now();
        for (uint64_t i = 0; i < iters; i++) {
            double x = sb__noise_chain(s->steps, 0.5);
            s->slot[me * SB__NOISE_PAD] = x;
            s->done[me * SB__NOISE_PAD]++;
            wrong = wrong || x != s->want;
#pragma omp barrier
            if (me == 0) {
                double now = sb_now();
                if (i > 0 && s->n < SB__NOISE_KEEP)
                    s->t[s->n++] = now - prev;
                prev = now;
            }
        }
    }
    s->wrong = s->wrong || wrong;
    s->total += iters;
}

static int noise_verify(void *state, sb_result *r)
{
    noise_state *s = state;
    int short_threads = 0;
    for (int i = 0; i < s->threads; i++)
        short_threads += s->done[i * SB__NOISE_PAD] != s->total;
    r->valid = s->total > 0 && !s->wrong && short_threads == 0;
    sb_result_note(r,
                   "%llu quanta of %llu dependent FMAs on each of %d "
                   "thread%s: %s",
                   (unsigned long long)s->total, (unsigned long long)s->steps,
                   s->threads, s->threads == 1 ? "" : "s",
                   r->valid        ? "every thread ran every quantum to the "
                                     "chain's value"
                   : short_threads ? "a thread missed quanta"
                                   : "a quantum ended at another value");
    return 0;
}

/* The interruptions among n quantum times t (reordered): the excess over
 * the shortest of those above the threshold; *thr gets the threshold. */
size_t sb_noise_interrupts(double *t, size_t n, double *tmin, double *thr,
                           double *lost)
{
    double lo = INFINITY, sum = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, t[i]);
        sum += t[i];
    }
    *tmin = n ? lo : 0;
    *thr = fmax(0.25 * *tmin, 50e-6);
    *lost = n ? sum - (double)n * lo : 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] - lo > *thr)
            t[k++] = t[i] - lo;
    return k;
}

static void noise_report(void *state, const sb_point *pt, sb_ctx *ctx,
                         sb_result *r)
{
    (void)pt, (void)ctx;
    noise_state *s = state;
    if (s->n == 0)
        return;
    double tmin, thr, lost;
    const size_t n = s->n;
    size_t k = sb_noise_interrupts(s->t, n, &tmin, &thr, &lost);
    const double sum = lost + (double)n * tmin; /* the recorded time */
    double q[5] = {0, 0.5, 0.9, 0.99, 1.0}, v[5] = {0, 0, 0, 0, 0};
    if (k > 0)
        sb_percentiles_select(s->t, k, q, 5, v);
    sb_result_metric(r, "quantum_us", tmin * 1e6, "us");
    sb_result_metric(r, "noise_pct", 100.0 * lost / sum, "%");
    sb_result_metric(r, "interrupts_per_s", (double)k / sum, "1/s");
    sb_result_metric(r, "interrupt_min_us", v[0] * 1e6, "us");
    sb_result_metric(r, "interrupt_p50_us", v[1] * 1e6, "us");
    sb_result_metric(r, "interrupt_p90_us", v[2] * 1e6, "us");
    sb_result_metric(r, "interrupt_p99_us", v[3] * 1e6, "us");
    sb_result_metric(r, "interrupt_max_us", v[4] * 1e6, "us");
    sb_result_metric(r, "quanta", (double)n, "");
    sb_result_note(r,
                   "%zu of %zu quanta interrupted (more than %.0f us over "
                   "the shortest, %.0f us) in %.2f s",
                   k, n, thr * 1e6, tmin * 1e6, sum);
}

static void noise_teardown(void *state)
{
    noise_state *s = state;
    if (!s)
        return;
    free(s->slot);
    free(s->done);
    free(s->t);
    free(s);
}

static const sb_impl compute_noise_cpu = {
    .backend = "cpu",
    .setup = noise_setup,
    .run = noise_run,
    .verify = noise_verify,
    .report = noise_report,
    .teardown = noise_teardown,
};

const sb_bench sb_bench_compute_noise = {
    .name = "compute.noise",
    .area = "compute",
    .desc = "the machine's interruptions: fixed work quanta on every thread, "
            "each timed barrier to barrier (FWQ); lost time, rate and size "
            "of the interruptions",
    .params = noise_params,
    .quick = "quantum=1000 sample=0.1",
    .full = "quantum=1000 sample=0.2",
    .flags = SB_BF_FULL,
    .headline = "interrupts_per_s",
    .impls = (const sb_impl *const[]){&compute_noise_cpu, NULL},
};
