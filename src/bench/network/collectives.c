/*
 * collectives.c — the network area's MPI impls: how each collective and
 * point-to-point test (mpi_ops.c) is timed, checked and summarised.
 *
 * Method (docs/NETWORK.md): buffers are allocated once per size and filled
 * before timing; after untimed warm-up iterations every iteration of a
 * collective is timed on every rank between a barrier and the end of the
 * operation, and the iteration's time is the slowest rank's (one MPI_MAX
 * reduction over all iterations after the loop, so it stays out of the
 * timed region). Point-to-point iterations synchronise themselves (reply,
 * ack) and are timed back to back on rank 0, as OSU does. Iteration counts
 * come from the size (more for small messages, as OSU does), never from
 * one rank's timing, so all ranks agree. The runner's loop takes the
 * samples; this file's timer (net_timer) supplies the barrier, the agreed
 * count and the slowest rank's reduction.
 *
 * After the last size of a sweep, the impl's summarize hook fits
 * t = alpha + S / beta over all sizes measured so far and keeps that fit
 * as one summary result (size "fit") at the end of the group, and as the
 * ceilings net.<op>.alpha_s and net.<op>.beta_Bps.
 *
 * A watchdog thread ends the whole job with one message naming the
 * benchmark and size when a point runs past --timeout (a stuck or dead
 * rank), instead of hanging.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "bench/network/mpi_ops.h"
#include "solbench/bench.h"
#include "solbench/net.h"
#include "solbench/netmodel.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* Per-point limit when --timeout is not given: generous, but never a hang. */
#define NET_DEFAULT_TIMEOUT_S 300.0

/* ---- parameters ---------------------------------------------------------- */

/* clang-format off */
#define P_DTYPE                                                              \
    {"dtype", SB_P_STR, "float", 0, 0, "float|double|int32",                 \
     "element type (MPI_FLOAT, MPI_DOUBLE, MPI_INT32_T)"}
#define P_OP                                                                 \
    {"op", SB_P_STR, "sum", 0, 0, "sum|max|min", "reduction operator"}
#define P_INPLACE                                                            \
    {"inplace", SB_P_BOOL, "false", 0, 0, NULL,                              \
     "MPI_IN_PLACE (output buffer is the input)"}
#define P_ROOT {"root", SB_P_INT, "0", 0, 1048576, NULL, "root rank"}
#define P_WINDOW                                                             \
    {"window", SB_P_INT, "64", 1, 4096, NULL,                                \
     "messages in flight per iteration (osu_bw's window)"},                  \
    {"slots", SB_P_INT, "1", 0, 4096, NULL,                                  \
     "receive buffers the window cycles through; 1: one, as osu_bw; "        \
     "0: one per message (up to 64 MiB)"}
#define P_TAIL                                                               \
    {"iters", SB_P_INT, "0", 0, 1000000, NULL,                               \
     "timed iterations; 0: from the size (256 MiB of traffic, 20..1000)"},   \
    {"warmup", SB_P_INT, "-1", -1, 100000, NULL,                             \
     "untimed iterations; -1: iters/10, at least 2"},                        \
    {"link_GBps", SB_P_FLOAT, "0", 0, 1e6, NULL,                             \
     "link peak in GB/s, for percent of peak; 0: unknown"},                  \
    {"plant_error", SB_P_BOOL, "false", 0, 0, NULL,                          \
     "testing: corrupt one element on one rank before validation"},          \
    {"stall_rank", SB_P_INT, "-1", -1, 1048576, NULL,                        \
     "testing: this rank sleeps past --timeout"},                            \
    {"size", SB_P_SIZE, "8B..64MiB:x2", 1, 1073741824.0, NULL,               \
     "message size (the op's buffer, as nccl-tests counts it)"},             \
    {NULL, 0, NULL, 0, 0, NULL, NULL}
/* clang-format on */

/* The size is declared last so that it varies fastest in a sweep: all
 * sizes of one (dtype, op, ...) group run back to back and the fit closes
 * the group. */
static const sb_param_def params_reduce_all[] = {P_DTYPE, P_OP, P_INPLACE,
                                                 P_TAIL};
static const sb_param_def params_reduce_root[] = {P_DTYPE, P_OP, P_INPLACE,
                                                  P_ROOT, P_TAIL};
static const sb_param_def params_move[] = {P_DTYPE, P_INPLACE, P_TAIL};
static const sb_param_def params_bcast[] = {P_DTYPE, P_ROOT, P_TAIL};
static const sb_param_def params_p2p[] = {P_TAIL};
static const sb_param_def params_window[] = {P_WINDOW, P_TAIL};

/* ---- watchdog ------------------------------------------------------------ */

typedef struct watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, running;
    double limit_s;
    char what[200];
    int rank;
} watchdog;

static void *watchdog_main(void *arg)
{
    watchdog *wd = arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    /* Rank 0 speaks first; the others wait 2 s more so that normally one
     * message, not one per rank, announces the abort. */
    double lim = wd->limit_s + (wd->rank == 0 ? 0.0 : 2.0);
    until.tv_sec += (time_t)lim;
    until.tv_nsec += (long)((lim - floor(lim)) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&wd->mu);
    int rc = 0;
    while (!wd->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&wd->cv, &wd->mu, &until);
    bool fire = !wd->done;
    pthread_mutex_unlock(&wd->mu);
    if (fire) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "%s: no result after %g s (--timeout) on "
                 "rank %d: a rank is stuck or has died; aborting the job",
                 wd->what, wd->limit_s, wd->rank);
        sb_mpi_abort(msg, 2);
    }
    return NULL;
}

static void watchdog_start(watchdog *wd, double limit_s, const char *what,
                           int rank)
{
    memset(wd, 0, sizeof *wd);
    wd->limit_s = limit_s;
    wd->rank = rank;
    snprintf(wd->what, sizeof wd->what, "%s", what);
    pthread_mutex_init(&wd->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wd->cv, &ca);
    pthread_condattr_destroy(&ca);
    wd->running = pthread_create(&wd->thread, NULL, watchdog_main, wd) == 0;
}

static void watchdog_stop(watchdog *wd)
{
    if (wd->running) {
        pthread_mutex_lock(&wd->mu);
        wd->done = true;
        pthread_cond_signal(&wd->cv);
        pthread_mutex_unlock(&wd->mu);
        pthread_join(wd->thread, NULL);
    }
    pthread_cond_destroy(&wd->cv);
    pthread_mutex_destroy(&wd->mu);
}

/* ---- check, footprint ---------------------------------------------------- */

static int net_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    const sb_params *p = pt->params;
    if (ctx->nranks >= 2 && sb_p_find(p, "root") &&
        sb_p_int(p, "root") >= ctx->nranks)
        return sb_fail(err, SB_EINVAL,
                       "network.%s: parameter root=%lld: must "
                       "be below the number of ranks (%d)",
                       sb_netop_name(op), (long long)sb_p_int(p, "root"),
                       ctx->nranks);
    /* MPICH 4.0 reads MPI_IN_PLACE as a buffer in MPI_Reduce when the root
     * is not rank 0 (a segmentation fault from 2 KiB up on 3 ranks): say
     * so instead of crashing. */
    if (op == SB_NET_REDUCE && sb_p_bool(p, "inplace") &&
        sb_p_int(p, "root") != 0 && strstr(ctx->mpi_library, "MPICH") &&
        strstr(ctx->mpi_library, "Version: 4.0"))
        return sb_fail(err, SB_EUNSUP,
                       "network.reduce: inplace=true with "
                       "root=%lld crashes %s; use root=0 or inplace=false",
                       (long long)sb_p_int(p, "root"), ctx->mpi_library);
    sb_mpi_coll st;
    sb_mpi_coll_describe(op, p, ctx->rank, ctx->nranks, &st);
    if (!st.mpi->call)
        return sb_fail(err, SB_EUNSUP, "network.%s: no MPI call for it",
                       sb_netop_name(op) ? sb_netop_name(op) : "?");
    if (st.count > (size_t)INT32_MAX)
        return sb_fail(err, SB_EINVAL,
                       "network.%s: size=%s: more than 2^31 "
                       "elements",
                       sb_netop_name(op), sb_p_str(p, "size"));
    /* A point that must move more than 4 TiB (its timed iterations, 20 at
     * the least, times the traffic of one: size x window for bw) would
     * run for minutes past any timeout: refused, not started. */
    const double per = sb_net_bytes(op, st.count, st.elem, st.window);
    const long long its = sb_p_int(p, "iters") > 0 ? sb_p_int(p, "iters") : 20;
    char sz[32];
    if (per * (double)its > 4398046511104.0)
        return sb_fail(
            err, SB_EINVAL,
            "network.%s: size=%s%s: %lld iterations of %.3g GB "
            "each move more than 4 TiB; lower the size%s",
            sb_netop_name(op),
            sb_fmt_size((double)st.count * (double)st.elem, sz, sizeof sz),
            st.window > 1 ? " with its window" : "", its, per / 1e9,
            st.window > 1 ? " or the window" : "");
    return 0;
}

/* Bytes this host needs for the point: every rank on it holds buffers. */
static double net_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    const sb_params *p = pt->params;
    sb_mpi_coll st;
    sb_mpi_coll_describe(op, p, ctx->rank, ctx->nranks, &st);
    size_t sb, rb;
    sb_mpi_coll_buffers(&st, &sb, &rb);
    double per_rank = (double)sb + (double)rb + 8.0 * 1e6;
    int local = ctx->ranks_per_host > 0 ? ctx->ranks_per_host : 1;
    return per_rank * local;
}

/* ---- alpha-beta fit over a sweep ----------------------------------------- */

static bool is_fit(const sb_result *r)
{
    const sb_pval *s = sb_p_find(&r->params, "size");
    return s && strcmp(s->text, "fit") == 0;
}

/* Same bench and same parameters except the size. */
static bool same_group(const sb_result *a, const sb_result *b)
{
    if (strcmp(a->bench, b->bench) != 0 || a->params.n != b->params.n)
        return false;
    for (int i = 0; i < a->params.n; i++) {
        const sb_pval *x = &a->params.v[i], *y = &b->params.v[i];
        if (strcmp(x->name, y->name) != 0)
            return false;
        if (strcmp(x->name, "size") != 0 && strcmp(x->text, y->text) != 0)
            return false;
    }
    return true;
}

/* Refits the group of the last result and moves its summary to the end of
 * the list, so that after the last size it closes the group. */
static int update_fit(const sb_point *pt, sb_ctx *ctx, sb_result_list *out,
                      sb_err *err)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    if (out->n == 0 || strcmp(out->items[out->n - 1].bench, pt->bench->name))
        return 0; /* this rank kept no result of the point */
    sb_result last = out->items[out->n - 1]; /* shallow copy: params, name */
    for (size_t i = 0; i + 1 < out->n; i++) {
        if (is_fit(&out->items[i]) && same_group(&out->items[i], &last)) {
            sb_result_free(&out->items[i]);
            memmove(&out->items[i], &out->items[i + 1],
                    (out->n - i - 1) * sizeof *out->items);
            out->n--;
            break;
        }
    }
    double S[SB_MAX_SWEEP_VALUES], t[SB_MAX_SWEEP_VALUES];
    int k = 0;
    bool all_valid = true;
    double smin = 0, smax = 0;
    for (size_t i = 0; i < out->n && k < SB_MAX_SWEEP_VALUES; i++) {
        const sb_result *r = &out->items[i];
        if (is_fit(r) || r->skipped || r->n_samples == 0 ||
            !same_group(r, &last))
            continue;
        const sb_metric *b = sb_result_get(r, "bytes");
        if (!b || !(r->stats.p50 > 0))
            continue;
        S[k] = b->value;
        t[k] = r->stats.p50;
        smin = k == 0 || S[k] < smin ? S[k] : smin;
        smax = k == 0 || S[k] > smax ? S[k] : smax;
        all_valid = all_valid && r->valid;
        k++;
    }
    if (k < 2)
        return 0;
    sb_ab_fit fit;
    sb_err ferr = {0};
    if (sb_net_fit_ab(S, t, k, true, &fit, &ferr))
        return 0; /* e.g. every size rounded to the same S: no fit */

    sb_result *f = sb_results_push(out);
    if (!f)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    sb_result_init(f, last.bench, "network", "mpi");
    f->params = last.params;
    for (int i = 0; i < f->params.n; i++) {
        sb_pval *v = &f->params.v[i];
        if (strcmp(v->name, "size") == 0) {
            snprintf(v->text, sizeof v->text, "fit");
            v->type = SB_P_STR;
            v->num = 0;
        }
    }
    f->valid = all_valid;
    sb_result_metric(f, "alpha_us", fit.alpha_s * 1e6, "us");
    if (isfinite(fit.beta_Bps))
        sb_result_metric(f, "beta_GBps", fit.beta_Bps * 1e-9, "GB/s");
    sb_result_metric(f, "fit_rel_rms", fit.rel_rms, "");
    sb_result_metric(f, "fit_points", (double)fit.n, "");
    sb_result_metric(f, "ranks", (double)ctx->nranks, "");
    char a[32], b[32];
    sb_fmt_size(smin, a, sizeof a);
    sb_fmt_size(smax, b, sizeof b);
    sb_result_note(f,
                   "alpha-beta model t = alpha + S/beta, least squares "
                   "weighted by 1/t^2 over %d sizes (S %s .. %s), median "
                   "times; relative RMS error %.3g",
                   fit.n, a, b, fit.rel_rms);
    if (!isfinite(fit.beta_Bps))
        sb_result_note(f, "time does not grow with size here: no finite beta");
    if (fit.alpha_s < 0)
        sb_result_note(f, "negative alpha: the sweep has too few small sizes "
                          "to pin the latency");

    /* Only a physical model becomes a ceiling the workload model uses. */
    if (fit.alpha_s >= 0 && isfinite(fit.beta_Bps)) {
        char key[40];
        snprintf(key, sizeof key, "net.%s.alpha_s", sb_netop_name(op));
        sb_ceil_set(&ctx->ceil, key, fit.alpha_s, "measured");
        snprintf(key, sizeof key, "net.%s.beta_Bps", sb_netop_name(op));
        sb_ceil_set(&ctx->ceil, key, fit.beta_Bps, "measured");
    } else {
        sb_result_note(f, "not recorded as a ceiling (no physical alpha and "
                          "beta)");
    }
    return 0;
}

/* ---- one point ----------------------------------------------------------- */

static void add_metrics(const sb_mpi_coll *st, const sb_params *p, int iters,
                        int warm, unsigned long long wrong, sb_result *r)
{
    double S = sb_net_bytes(st->op, st->count, st->elem, st->window);
    double med = r->stats.p50;
    sb_result_metric(r, "latency_us", med * 1e6, "us");
    sb_net_report_rates(r, st->op, st->n, S);
    double link = sb_p_num(p, "link_GBps");
    if (med > 0 && link > 0)
        sb_result_metric(
            r, "pct_link",
            100.0 * sb_net_busbw(st->op, st->n, S, med) * 1e-9 / link, "%");
    sb_result_metric(r, "wrong", (double)wrong, "");
    sb_result_metric(r, "iters", iters, "");
    sb_result_metric(r, "warmup", warm, "");

    double size = sb_p_num(p, "size");
    if (!st->def->p2p && fabs(S - size) > 0.5)
        sb_result_note(r, "S = %.0f B: the size rounded to whole elements%s", S,
                       st->def->chunked ? " and one equal chunk per rank" : "");
    if (st->def->p2p) {
        sb_result_note(r, "between ranks 0 and 1 only%s",
                       st->mpi->note ? st->mpi->note : "");
        if (st->def->window)
            sb_result_note(r,
                           "the window of %d messages lands in %d receive "
                           "buffer%s",
                           st->window, st->nslots,
                           st->nslots == 1 ? " (as osu_bw)" : "s");
    }
    if (wrong)
        sb_result_note(r, "validation: %llu wrong elements over all ranks",
                       wrong);
}

/* Waits for every rank to reach this point without spinning: under a
 * launcher rank 0 runs the node-local benchmarks alone first, and the
 * other ranks must neither steal its cores (a busy MPI_Barrier would) nor
 * start a point's watchdog while it works, however long that takes. A rank
 * that dies meanwhile is reported by the launcher. */
static void quiet_barrier(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    while (!done) {
        struct timespec ts = {0, 200000}; /* 0.2 ms */
        nanosleep(&ts, NULL);
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

/* ---- one point: setup, the timer, verify, report ---------------------------
 * The runner's loop takes the samples, as for every benchmark; what the
 * network supplies is its timer: the iteration count and warm-up every rank
 * agrees on (the parameters, or sb_net_auto_iters of the bytes), one
 * operation a sample after a barrier (one barrier in all for point to
 * point, whose reply or ack closes each iteration, as the OSU tests), the
 * local time, and at the end the slowest rank's time of each iteration. A
 * watchdog ends the job when a point outlives --timeout. */

typedef struct net_point {
    sb_mpi_coll st;
    watchdog wd;
    const sb_params *p;
    int iters, warm;
    bool plant;
    unsigned long long wrong;
} net_point;

static void net_teardown(void *state)
{
    net_point *np = state;
    if (!np)
        return;
    sb_mpi_coll_free(&np->st);
    watchdog_stop(&np->wd);
    free(np);
}

static int net_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                     sb_err *err)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    const sb_params *p = pt->params;
    char sz[32], what[160];
    sb_fmt_size(sb_p_num(p, "size"), sz, sizeof sz);
    snprintf(what, sizeof what, "%s size=%s", pt->bench->name, sz);
    quiet_barrier();
    net_point *np = calloc(1, sizeof *np);
    if (!np)
        return sb_fail(err, SB_ENOMEM, "size=%s: out of memory", sz);
    double limit = ctx->timeout_s > 0 ? ctx->timeout_s : NET_DEFAULT_TIMEOUT_S;
    watchdog_start(&np->wd, limit, what, ctx->rank);
    np->p = p;
    np->plant = sb_p_bool(p, "plant_error");
    sb_mpi_coll_describe(op, p, ctx->rank, ctx->nranks, &np->st);
    if (np->st.dt == MPI_DATATYPE_NULL) {
        /* An MPI without the type: say so rather than fail. */
        net_teardown(np);
        return sb_fail(err, SB_EUNSUP, "this MPI has no datatype for dtype=%s",
                       sb_p_str(p, "dtype"));
    }
    sb_err serr = {0};
    int rc = sb_mpi_coll_alloc(&np->st, &serr);
    int ok = rc == 0, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        net_teardown(np);
        return rc ? sb_fail(err, rc, "size=%s: %s", sz, serr.msg)
                  : sb_fail(err, SB_ENOMEM,
                            "size=%s: another rank could not "
                            "allocate its buffers",
                            sz);
    }
    int iters = (int)sb_p_int(p, "iters"), warm = (int)sb_p_int(p, "warmup");
    int auto_it, auto_wu;
    sb_net_auto_iters(
        sb_net_bytes(op, np->st.count, np->st.elem, np->st.window),
        ctx->min_time, &auto_it, &auto_wu);
    if (iters <= 0)
        iters = auto_it;
    if (warm < 0) /* a tenth of the iterations in use, at least 2 */
        warm = iters == auto_it ? auto_wu : iters / 10 < 2 ? 2 : iters / 10;
    np->iters = iters;
    np->warm = warm;

    sb_mpi_coll_prepare(&np->st, false);
    if ((int)sb_p_int(p, "stall_rank") == ctx->rank) {
        /* Test hook: this rank stops answering; the watchdogs end it. */
        struct timespec ts = {(time_t)(limit + 60.0), 0};
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
            ;
    }
    *state = np;
    return 0;
}

static int net_plan(void *state, const sb_ctx *ctx, sb_sampling *sp,
                    sb_err *err)
{
    (void)ctx, (void)err;
    const net_point *np = state;
    sp->inner = 1;
    sp->samples = np->iters;
    sp->exact = true;
    sp->warmup = np->warm;
    return 0;
}

static int net_sample(void *state, int idx, uint64_t iters, double *secs,
                      sb_err *err)
{
    (void)iters, (void)err;
    net_point *np = state;
    if (idx < 0) { /* warm-up: back to back, untimed */
        sb_mpi_coll_once(&np->st);
        *secs = 0;
        return 0;
    }
    if (!np->st.def->p2p || idx == 0)
        MPI_Barrier(MPI_COMM_WORLD);
    double t0 = sb_now();
    sb_mpi_coll_once(&np->st);
    double dt = sb_now() - t0;
    /* point to point is timed on rank 0 alone */
    *secs = np->st.def->p2p && np->st.rank != 0 ? 0.0 : dt;
    return 0;
}

/* The slowest rank's time of each iteration; a ping-pong's latency is half
 * its round trip. */
static int net_reduce(void *state, double *secs, size_t n, sb_err *err)
{
    (void)err;
    const net_point *np = state;
    MPI_Allreduce(MPI_IN_PLACE, secs, (int)n, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    if (np->st.mpi->half)
        for (size_t i = 0; i < n; i++)
            secs[i] *= 0.5;
    return 0;
}

static const sb_timer net_timer = {
    .plan = net_plan, .sample = net_sample, .reduce = net_reduce};

static int net_verify(void *state, sb_result *r)
{
    net_point *np = state;
    unsigned long long wrong = sb_mpi_coll_validate(&np->st, np->plant);
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    np->wrong = wrong;
    r->valid = wrong == 0;
    return 0;
}

static void net_report(void *state, const sb_point *pt, sb_ctx *ctx,
                       sb_result *r)
{
    const net_point *np = state;
    add_metrics(&np->st, pt->params, np->iters, np->warm, np->wrong, r);
}

/* ---- the table entries --------------------------------------------------- */

#define NET_QUICK "size=8B,64KiB,1MiB"
#define NET_FULL "size=8B..64MiB:x2"
/* bw and bibw move a window of 64 messages per iteration: their full sweep
 * stops at 4 MiB per message (256 MiB per window), OSU's default limit. */
#define NET_FULL_WINDOW "size=8B..4MiB:x2"

/* The MPI impls, one row a collective keyed by its sb_netop (network.c
 * takes &sb_impl_mpi_network[op]): its parameters, full sweep and
 * description; the hooks read the collective from the definition (its
 * kind). */
#define NET_IMPL(PARAMS, FULL, DESC)                                           \
    {                                                                          \
        .backend = "mpi", .desc = DESC, .params = PARAMS, .quick = NET_QUICK,  \
        .full = FULL, .flags = SB_BF_NEEDS_MPI, .check = net_check,            \
        .footprint = net_footprint, .setup = net_setup, .timer = &net_timer,   \
        .verify = net_verify, .report = net_report, .teardown = net_teardown,  \
        .summarize = update_fit,                                               \
    }

const sb_impl sb_impl_mpi_network[SB_NET_NOPS] = {
    [SB_NET_ALLREDUCE] = NET_IMPL(params_reduce_all, NET_FULL,
                                  "MPI_Allreduce; busbw = algbw x 2(n-1)/n"),
    [SB_NET_ALLGATHER] =
        NET_IMPL(params_move, NET_FULL,
                 "MPI_Allgather; S = output buffer; busbw = algbw x (n-1)/n"),
    [SB_NET_REDUCE_SCATTER] =
        NET_IMPL(params_reduce_all, NET_FULL,
                 "MPI_Reduce_scatter_block; S = input buffer; busbw x (n-1)/n"),
    [SB_NET_ALLTOALL] =
        NET_IMPL(params_move, NET_FULL,
                 "MPI_Alltoall; S = whole buffer; busbw = algbw x (n-1)/n"),
    [SB_NET_BCAST] =
        NET_IMPL(params_bcast, NET_FULL, "MPI_Bcast from root; busbw = algbw"),
    [SB_NET_REDUCE] = NET_IMPL(params_reduce_root, NET_FULL,
                               "MPI_Reduce to root; busbw = algbw"),
    [SB_NET_SENDRECV] =
        NET_IMPL(params_move, NET_FULL,
                 "MPI_Sendrecv in a ring: to rank+1, from rank-1"),
    [SB_NET_PINGPONG] =
        NET_IMPL(params_p2p, NET_FULL,
                 "ranks 0 and 1: latency = half the round trip (osu_latency)"),
    [SB_NET_BW] =
        NET_IMPL(params_window, NET_FULL_WINDOW,
                 "ranks 0 -> 1: a window of MPI_Isend, then an ack (osu_bw)"),
    [SB_NET_BIBW] =
        NET_IMPL(params_window, NET_FULL_WINDOW,
                 "ranks 0 <-> 1: windows both ways at once (osu_bibw)"),
};
