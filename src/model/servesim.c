/*
 * servesim.c — the serving simulator's engine (include/solbench/servesim.h):
 * one replica, its waiting queue, its running sequences and their KV
 * blocks, iteration after iteration until every request has finished.
 *
 * Each iteration: the arrivals up to now join the queue; the scheduler
 * picks decodes and prompt chunks; the cost function times the batch;
 * then every chunk is cached, every prefill that completes and every
 * decode makes a token, and a request that has made its last one frees
 * its blocks. Time jumps to the next arrival when nothing can run.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "solbench/fileio.h"
#include "solbench/servesim.h"
#include "solbench/stats.h"
#include "solbench/util.h"

const char *const sb_sim_sched_name[SB_SIM_N_SCHED] = {"sarathi", "vllm",
                                                       "orca"};
const char *const sb_sim_len_name[3] = {"fixed", "uniform", "lognormal"};

/* Gaps between tokens kept for the inter-token percentiles; past this a
 * uniform sample of them (reservoir sampling) stands for all. */
#define ITL_KEEP 4000000

enum { S_FUTURE, S_WAITING, S_RUNNING, S_DONE };

typedef struct seq {
    int prompt, output;
    int todo;   /* tokens to prefill: the prompt, and after a preemption
                   the tokens made too (recompute) */
    int filled; /* of todo, in the cache */
    int cached; /* tokens in the cache */
    int made;   /* output tokens made */
    long blocks;
    int state;
    bool seen; /* scheduled once */
    double arrival, sched, first, last, finish;
} seq;

typedef struct sim {
    const sb_sim_cfg *cfg;
    seq *s;
    size_t n;
    /* waiting: a ring of indexes, preempted ones put back at its head */
    size_t *ring, head, count;
    size_t *run, nrun; /* running, in order of admission */
    long free_blocks;
    /* the batch being built: decodes, chunks (sequence and tokens) */
    size_t *dec, ndec, *pre, npre;
    int *chunk;
    sb_sim_batch b;
    size_t preemptions;
    /* inter-token gaps */
    double *itl;
    size_t n_itl, seen_itl;
    uint64_t rng;
} sim;

static long blocks_for(const sim *m, long tokens)
{
    return (tokens + m->cfg->page - 1) / m->cfg->page;
}

static void ring_push_back(sim *m, size_t i)
{
    m->ring[(m->head + m->count++) % (m->n + 1)] = i;
}

static void ring_push_front(sim *m, size_t i)
{
    m->head = (m->head + m->n) % (m->n + 1);
    m->ring[m->head] = i;
    m->count++;
}

static size_t ring_front(const sim *m)
{
    return m->ring[m->head];
}

static void ring_pop(sim *m)
{
    m->head = (m->head + 1) % (m->n + 1);
    m->count--;
}

static void arrive(sim *m, size_t i, double t)
{
    m->s[i].state = S_WAITING;
    m->s[i].arrival = t;
    ring_push_back(m, i);
}

/* The newest running sequence gives its blocks back and waits at the
 * head of the queue to prefill everything it holds again. */
static void preempt_newest(sim *m)
{
    size_t i = m->run[--m->nrun];
    seq *q = &m->s[i];
    m->free_blocks += q->blocks;
    q->blocks = 0;
    q->cached = q->filled = 0;
    q->todo = q->prompt + q->made;
    q->state = S_WAITING;
    ring_push_front(m, i);
    m->preemptions++;
}

/* Blocks for `tokens` in the cache of sequence q: taken from the free
 * ones; false when there are not enough. */
static bool grow(sim *m, seq *q, long tokens)
{
    long need = blocks_for(m, tokens) - q->blocks;
    if (need <= 0)
        return true;
    if (need > m->free_blocks)
        return false;
    m->free_blocks -= need;
    q->blocks += need;
    return true;
}

static void add_chunk(sim *m, size_t i, int c)
{
    seq *q = &m->s[i];
    m->pre[m->npre] = i;
    m->chunk[m->npre++] = c;
    m->b.prefill_seqs++;
    m->b.prefill_tokens += c;
    m->b.prefill_ctx += (double)q->cached + c;
}

/* Every running decode, one token each, in order of admission, while the
 * budget lasts; a decode that finds no block preempts the newest
 * sequence (perhaps itself). Returns the budget left. */
static long pick_decodes(sim *m, long budget)
{
    for (size_t k = 0; k < m->nrun && budget > 0; k++) {
        size_t i = m->run[k];
        seq *q = &m->s[i];
        if (q->filled < q->todo)
            continue;
        bool self = false;
        while (!grow(m, q, (long)q->cached + 1)) {
            self = m->run[m->nrun - 1] == i;
            preempt_newest(m);
            if (self)
                break;
        }
        if (self)
            break;
        m->dec[m->ndec++] = i;
        m->b.decode_seqs++;
        m->b.decode_ctx += (double)q->cached + 1;
        budget--;
    }
    return budget;
}

/* The prompt chunk of sequence q in `budget` tokens: all that is left of
 * it when `whole`, else as much as the budget and the free blocks allow
 * (0: none). */
static int fit_chunk(const sim *m, const seq *q, long budget, bool whole)
{
    long left = q->todo - q->filled;
    if (whole)
        return blocks_for(m, (long)q->cached + left) - q->blocks <=
                       m->free_blocks
                   ? (int)left
                   : 0;
    long room = (q->blocks + m->free_blocks) * m->cfg->page - q->cached;
    long c = left < budget ? left : budget;
    if (m->cfg->max_chunk > 0 && c > m->cfg->max_chunk)
        c = m->cfg->max_chunk;
    return (int)(c < room ? c : room);
}

/* Chunks of the running prefills (chunked prefill only), then the waiting
 * requests first come first served: a chunk each in what the budget
 * leaves (whole prompts under `whole`, the first one even past the
 * budget when the batch is empty). */
static void pick_prefills(sim *m, long budget, bool whole, double now)
{
    const sb_sim_cfg *cfg = m->cfg;
    for (size_t k = 0; !whole && k < m->nrun && budget > 0; k++) {
        size_t i = m->run[k];
        seq *q = &m->s[i];
        if (q->filled >= q->todo)
            continue;
        int c = fit_chunk(m, q, budget, false);
        if (c <= 0)
            continue;
        grow(m, q, (long)q->cached + c);
        add_chunk(m, i, c);
        budget -= c;
    }
    while (m->count > 0 && m->nrun < (size_t)cfg->max_seqs) {
        size_t i = ring_front(m);
        seq *q = &m->s[i];
        bool empty = m->ndec == 0 && m->npre == 0;
        int c = fit_chunk(m, q, budget, whole);
        if (c <= 0 || (whole && c > budget && !empty) ||
            (!whole && budget <= 0))
            break;
        ring_pop(m);
        grow(m, q, (long)q->cached + c);
        q->state = S_RUNNING;
        if (!q->seen) {
            q->seen = true;
            q->sched = now;
        }
        m->run[m->nrun++] = i;
        add_chunk(m, i, c);
        budget -= c;
    }
}

/* The next iteration's batch under the scheduler. */
static void pick(sim *m, double now)
{
    const sb_sim_cfg *cfg = m->cfg;
    memset(&m->b, 0, sizeof m->b);
    m->ndec = m->npre = 0;
    long budget = cfg->max_batched_tokens;
    switch (cfg->sched) {
    case SB_SIM_VLLM:
        pick_prefills(m, budget, true, now);
        if (m->npre == 0)
            pick_decodes(m, budget);
        break;
    case SB_SIM_ORCA:
        pick_prefills(m, pick_decodes(m, budget), true, now);
        break;
    default:
        pick_prefills(m, pick_decodes(m, budget), false, now);
        break;
    }
}

static void keep_gap(sim *m, double gap)
{
    m->seen_itl++;
    if (m->n_itl < ITL_KEEP) {
        m->itl[m->n_itl++] = gap;
        return;
    }
    uint64_t j = sb_rng_next(&m->rng) % m->seen_itl;
    if (j < ITL_KEEP)
        m->itl[j] = gap;
}

/* A token of q made at t; true when it was its last. */
static bool make_token(sim *m, seq *q, double t)
{
    q->made++;
    if (q->made == 1)
        q->first = t;
    else
        keep_gap(m, t - q->last);
    q->last = t;
    if (q->made < q->output)
        return false;
    q->finish = t;
    q->state = S_DONE;
    m->free_blocks += q->blocks;
    q->blocks = 0;
    return true;
}

static void dist_of(double *x, size_t n, sb_sim_dist *d)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    if (!n)
        return;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    /* by selection: sorting the millions of gaps between tokens took
     * longer than the run */
    static const double q[3] = {0.50, 0.90, 0.99};
    double v[3];
    sb_percentiles_select(x, n, q, 3, v);
    d->p50 = v[0];
    d->p90 = v[1];
    d->p99 = v[2];
    d->mean = sum / (double)n;
}

/* The most prompt tokens of one sequence an iteration carries: the
 * budget, or max_chunk when that is less. */
static double chunk_cap(const sb_sim_cfg *cfg)
{
    return cfg->max_chunk > 0 && cfg->max_chunk < cfg->max_batched_tokens
               ? cfg->max_chunk
               : cfg->max_batched_tokens;
}

/* The figures over the finished requests. */
static int summarise(sim *m, double t0, double t_end, sb_sim_out *out,
                     sb_err *err)
{
    const sb_sim_cfg *cfg = m->cfg;
    size_t n = m->n, nt = 0;
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (!x)
        return sb_fail(err, SB_ENOMEM, "serving simulation: out of memory");
    double tokens = 0;
    size_t good = 0;
    for (size_t i = 0; i < n; i++) {
        const seq *q = &m->s[i];
        tokens += q->output;
        double ttft = q->first - q->arrival;
        double tpot =
            q->output > 1 ? (q->finish - q->first) / (q->output - 1) : 0;
        good += (!(cfg->slo_ttft_s > 0) || ttft <= cfg->slo_ttft_s) &&
                (!(cfg->slo_tpot_s > 0) || q->output < 2 ||
                 tpot <= cfg->slo_tpot_s);
    }
    /* a closed loop's first wave arrives at once, a burst no later
     * request sees: TTFT over those that joined a running batch (as a
     * serving engine's benchmark counts it) when there are any */
    size_t from =
        cfg->closed && n > (size_t)cfg->closed ? (size_t)cfg->closed : 0;
    for (size_t i = from; i < n; i++)
        x[i - from] = m->s[i].first - m->s[i].arrival;
    dist_of(x, n - from, &out->ttft);
    for (size_t i = 0; i < n; i++)
        if (m->s[i].output > 1)
            x[nt++] = (m->s[i].finish - m->s[i].first) / (m->s[i].output - 1);
    dist_of(x, nt, &out->tpot);
    for (size_t i = 0; i < n; i++)
        x[i] = m->s[i].finish - m->s[i].arrival;
    dist_of(x, n, &out->e2e);
    double sa = 0, sq = 0, saa = 0, saq = 0;
    for (size_t i = 0; i < n; i++) {
        double a = m->s[i].arrival - t0, q = m->s[i].sched - m->s[i].arrival;
        sa += a;
        sq += q;
        saa += a * a;
        saq += a * q;
    }
    double var = saa - sa * sa / (double)n;
    out->queue_slope = !cfg->closed && n > 1 && var > 0
                           ? (saq - sa * sq / (double)n) / var
                           : 0;
    for (size_t i = 0; i < n; i++)
        x[i] = m->s[i].sched - m->s[i].arrival;
    dist_of(x, n, &out->queue);
    free(x);
    dist_of(m->itl, m->n_itl, &out->itl);
    out->requests = n;
    out->duration_s = t_end - t0;
    double d = out->duration_s > 0 ? out->duration_s : NAN;
    out->tokens_per_s = tokens / d;
    out->requests_per_s = (double)n / d;
    out->slo_attained = n ? (double)good / (double)n : 0;
    out->goodput_rps = (double)good / d;
    out->preemptions = m->preemptions;
    return 0;
}

static int check_input(const sb_sim_cfg *cfg, const sb_sim_req *req, size_t n,
                       sb_err *err)
{
    bool qok = isfinite(cfg->noise_rate) && cfg->noise_rate >= 0;
    for (int i = 0; i < 5 && qok; i++)
        qok = isfinite(cfg->noise_q[i]) && cfg->noise_q[i] >= 0 &&
              (i == 0 || cfg->noise_q[i] >= cfg->noise_q[i - 1]);
    if (!qok)
        return sb_fail(err, SB_EINVAL,
                       "serving simulation: interruptions at %g a second of "
                       "%g..%g s: not a rate and ascending sizes",
                       cfg->noise_rate, cfg->noise_q[0], cfg->noise_q[4]);
    if (cfg->sched < 0 || cfg->sched >= SB_SIM_N_SCHED || cfg->max_seqs < 1 ||
        cfg->max_batched_tokens < 1 || cfg->max_chunk < 0 || cfg->page < 1 ||
        cfg->kv_blocks < 0 || cfg->kv_blocks > LONG_MAX / 4 / cfg->page ||
        cfg->closed < 0 || !(cfg->slo_ttft_s >= 0) || !(cfg->slo_tpot_s >= 0))
        return sb_fail(err, SB_EINVAL,
                       "serving simulation: scheduler %d, max_seqs %d, "
                       "max_batched_tokens %d, page %d, kv_blocks %ld, closed "
                       "%d: out of range",
                       (int)cfg->sched, cfg->max_seqs, cfg->max_batched_tokens,
                       cfg->page, cfg->kv_blocks, cfg->closed);
    if (n == 0 || n > SB_SIM_MAX_REQUESTS || !req)
        return sb_fail(err, SB_EINVAL,
                       "serving simulation: %zu requests (1 to %d)", n,
                       SB_SIM_MAX_REQUESTS);
    double prev = 0;
    for (size_t i = 0; i < n; i++) {
        const sb_sim_req *r = &req[i];
        if (r->prompt < 1 || r->output < 1 || r->prompt > SB_SIM_MAX_LEN ||
            r->output > SB_SIM_MAX_LEN ||
            (!cfg->closed && !(isfinite(r->arrival_s) && r->arrival_s >= prev)))
            return sb_fail(err, SB_EINVAL,
                           "serving simulation: request %zu: prompt %d, "
                           "output %d, arrival %g s (lengths of 1 to %.0e, "
                           "arrivals in order)",
                           i, r->prompt, r->output, r->arrival_s,
                           SB_SIM_MAX_LEN);
        prev = cfg->closed ? 0 : r->arrival_s;
        /* the cache holds the prompt and every output token but the last
         * (made, never fed back) */
        long need =
            ((long)r->prompt + r->output - 1 + cfg->page - 1) / cfg->page;
        if (cfg->kv_blocks > 0 && need > cfg->kv_blocks)
            return sb_fail(err, SB_EINVAL,
                           "serving simulation: request %zu (prompt %d, "
                           "output %d) needs %ld KV blocks of %d tokens; the "
                           "cache holds %ld: it can never run",
                           i, r->prompt, r->output, need, cfg->page,
                           cfg->kv_blocks);
    }
    /* the iterations the requests need alone: an output token each, and
     * a prompt's chunks of at most the budget (or max_chunk) */
    double chunk = chunk_cap(cfg);
    double steps = 0;
    for (size_t i = 0; i < n; i++)
        steps += req[i].output + ceil((double)req[i].prompt / chunk);
    if (steps > SB_SIM_MAX_TOKENS)
        return sb_fail(err, SB_EINVAL,
                       "serving simulation: %.3g output tokens and prompt "
                       "chunks in all, more than the %.0e simulated at most "
                       "(fewer requests, shorter outputs or a larger token "
                       "budget)",
                       steps, SB_SIM_MAX_TOKENS);
    return 0;
}

static void sim_free(sim *m)
{
    free(m->s);
    free(m->ring);
    free(m->run);
    free(m->dec);
    free(m->pre);
    free(m->chunk);
    free(m->itl);
}

/* Applies the iteration that ends at t: chunks cached, tokens made, the
 * finished out of the running (a closed loop sends the next request). */
static void apply(sim *m, double t, size_t *done, size_t *next)
{
    for (size_t k = 0; k < m->npre; k++) {
        seq *q = &m->s[m->pre[k]];
        q->filled += m->chunk[k];
        q->cached += m->chunk[k];
        if (q->filled == q->todo)
            make_token(m, q, t);
    }
    for (size_t k = 0; k < m->ndec; k++) {
        seq *q = &m->s[m->dec[k]];
        q->cached++;
        make_token(m, q, t);
    }
    size_t kept = 0;
    for (size_t k = 0; k < m->nrun; k++) {
        if (m->s[m->run[k]].state != S_DONE) {
            m->run[kept++] = m->run[k];
            continue;
        }
        (*done)++;
        if (m->cfg->closed && *next < m->n)
            arrive(m, (*next)++, t);
    }
    m->nrun = kept;
}

/* ---- the machine's interruptions ----------------------------------------- */

/* The wait to the next interruption: exponential at `rate` */
static double noise_gap(uint64_t *rng, double rate)
{
    return -log(1.0 - sb_rng_unif(rng)) / rate;
}

/* One interruption's size: the quantile function through q at 0, 0.5,
 * 0.9, 0.99 and 1, linear between */
static double noise_size(uint64_t *rng, const double q[5])
{
    static const double at[5] = {0, 0.5, 0.9, 0.99, 1};
    double u = sb_rng_unif(rng);
    for (int i = 1; i < 5; i++)
        if (u <= at[i])
            return q[i - 1] +
                   (q[i] - q[i - 1]) * (u - at[i - 1]) / (at[i] - at[i - 1]);
    return q[4];
}

int sb_sim_run(const sb_sim_cfg *cfg, const sb_sim_req *req, size_t n,
               sb_sim_cost_fn cost, void *cost_arg, sb_sim_iter_fn on_iter,
               void *iter_arg, sb_sim_out *out, sb_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_input(cfg, req, n, err);
    if (rc)
        return rc;
    sim m = {.cfg = cfg, .n = n, .rng = 0x5eed5eedULL};
    double gaps = 0;
    for (size_t i = 0; i < n; i++)
        gaps += req[i].output - 1;
    size_t keep = gaps < ITL_KEEP ? (size_t)gaps : ITL_KEEP;
    m.s = calloc(n, sizeof *m.s);
    m.ring = malloc((n + 1) * sizeof *m.ring);
    m.run = malloc(n * sizeof *m.run);
    m.dec = malloc(n * sizeof *m.dec);
    m.pre = malloc(n * sizeof *m.pre);
    m.chunk = malloc(n * sizeof *m.chunk);
    m.itl = malloc((keep ? keep : 1) * sizeof *m.itl);
    if (!m.s || !m.ring || !m.run || !m.dec || !m.pre || !m.chunk || !m.itl) {
        sim_free(&m);
        return sb_fail(err, SB_ENOMEM, "serving simulation: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        m.s[i].prompt = m.s[i].todo = req[i].prompt;
        m.s[i].output = req[i].output;
    }
    /* unbounded: more blocks than any run can take, with room for the
     * products of blocks and the page below LONG_MAX */
    m.free_blocks =
        cfg->kv_blocks > 0 ? cfg->kv_blocks : LONG_MAX / 4 / cfg->page;

    /* every iteration makes a token or caches a chunk, and a preemption
     * costs at most its sequence's tokens again: far below this */
    double work = 0;
    double chunk = chunk_cap(cfg);
    for (size_t i = 0; i < n; i++)
        work += req[i].output + ceil((double)req[i].prompt / chunk);
    double limit = 64.0 * (work + n) + 1e6, iters = 0;
    size_t done = 0, next = 0;
    double t = 0, t0 = cfg->closed ? 0 : req[0].arrival_s;
    /* the interruptions: their own stream, the same every run */
    uint64_t nrng = 0x6e6f697365ULL;
    const bool noisy = cfg->noise_rate > 0;
    double next_irq = noisy ? t0 + noise_gap(&nrng, cfg->noise_rate) : 0;
    if (cfg->closed)
        while (next < n && next < (size_t)cfg->closed)
            arrive(&m, next++, 0);
    while (done < n) {
        if (!cfg->closed)
            while (next < n && req[next].arrival_s <= t) {
                arrive(&m, next, req[next].arrival_s);
                next++;
            }
        if (m.count == 0 && m.nrun == 0) {
            if (cfg->closed || next >= n) { /* cannot happen: said, not hung */
                sim_free(&m);
                return sb_fail(err, SB_EINVAL,
                               "serving simulation: %zu of %zu requests "
                               "finished and none left to run",
                               done, n);
            }
            t = req[next].arrival_s; /* idle until the next arrival */
            continue;
        }
        pick(&m, t);
        if (m.ndec == 0 && m.npre == 0) {
            /* running prefills hold the blocks the others need: the
             * newest gives its back (one alone always fits) */
            if (m.nrun == 0 || ++iters > limit) {
                sim_free(&m);
                return sb_fail(err, SB_EINVAL,
                               "serving simulation: no request can run at "
                               "%g s (%zu waiting)",
                               t, m.count);
            }
            preempt_newest(&m);
            continue;
        }
        if (++iters > limit) {
            sim_free(&m);
            return sb_fail(err, SB_EINVAL,
                           "serving simulation: %.0f iterations with %zu of "
                           "%zu requests unfinished at %g s: preemptions "
                           "that do not end (a KV cache too small for the "
                           "load)",
                           iters, n - done, n, t);
        }
        double dt = cost(&m.b, cost_arg);
        if (!(dt > 0) || !isfinite(dt)) {
            sim_free(&m);
            return sb_fail(err, SB_EINVAL,
                           "serving simulation: an iteration of %d decodes "
                           "and %g prompt tokens costs %g s (a positive time "
                           "is needed)",
                           m.b.decode_seqs, m.b.prefill_tokens, dt);
        }
        if (noisy) {
            if (next_irq < t) /* idle meanwhile: memoryless */
                next_irq = t + noise_gap(&nrng, cfg->noise_rate);
            while (next_irq < t + dt) {
                double sz = noise_size(&nrng, cfg->noise_q);
                dt += sz;
                out->noise_s += sz;
                out->interrupts++;
                next_irq += noise_gap(&nrng, cfg->noise_rate);
            }
        }
        if (on_iter) {
            sb_sim_iter it = {.start_s = t,
                              .dur_s = dt,
                              .b = m.b,
                              .waiting = (int)m.count,
                              .running = (int)m.nrun};
            if ((rc = on_iter(&it, iter_arg)) != 0) {
                sim_free(&m);
                return rc;
            }
        }
        out->iterations++;
        out->mean_running += (double)m.nrun;
        t += dt;
        apply(&m, t, &done, &next);
    }
    out->mean_running /= (double)out->iterations;
    rc = summarise(&m, t0, t, out, err);
    sim_free(&m);
    return rc;
}

/* ---- requests ------------------------------------------------------------ */

static int draw_len(uint64_t *rng, int mean, sb_sim_len len, double spread)
{
    double v = mean;
    if (len == SB_SIM_LEN_UNIFORM) {
        v = mean * (1 - spread + 2 * spread * sb_rng_unif(rng));
    } else if (len == SB_SIM_LEN_LOGNORMAL && spread > 0) {
        /* Box-Muller; mu so that the mean is `mean` */
        double u1 = 1.0 - sb_rng_unif(rng), u2 = sb_rng_unif(rng);
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        v = mean * exp(spread * z - spread * spread / 2);
    }
    /* at most 16x the mean, and below an int's range */
    v = fmin(fmax(round(v), 1.0), fmin(16.0 * mean, SB_SIM_MAX_LEN));
    return (int)v;
}

int sb_sim_requests(sb_sim_req *out, size_t n, double rate, int prompt,
                    int output, sb_sim_len len, double spread, uint64_t seed,
                    sb_err *err)
{
    if (!out || n == 0 || n > SB_SIM_MAX_REQUESTS || prompt < 1 || output < 1 ||
        !(rate >= 0) || !isfinite(rate) || len < 0 ||
        len > SB_SIM_LEN_LOGNORMAL || !(spread >= 0) ||
        (len == SB_SIM_LEN_UNIFORM && spread >= 1) || spread > 4)
        return sb_fail(err, SB_EINVAL,
                       "serving requests: %zu requests, rate %g/s, prompt "
                       "%d, output %d, %s lengths of spread %g: out of range "
                       "(uniform spread below 1, any spread at most 4)",
                       n, rate, prompt, output,
                       len >= 0 && len <= SB_SIM_LEN_LOGNORMAL
                           ? sb_sim_len_name[len]
                           : "?",
                       spread);
    uint64_t rng = seed;
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        if (rate > 0)
            t += -log(1.0 - sb_rng_unif(&rng)) / rate;
        out[i].arrival_s = t;
        out[i].prompt = draw_len(&rng, prompt, len, spread);
        out[i].output = draw_len(&rng, output, len, spread);
    }
    return 0;
}

/* ---- a request file ------------------------------------------------------ */

/* A field of a request line: a finite number in [lo, hi]. */
static int req_field(json_t *o, const char *key, double lo, double hi,
                     const char *path, long line, double *out, sb_err *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        return sb_fail(err, SB_EINVAL,
                       "%s:%ld: \"%s\": %s (each line: {\"arrival_s\": "
                       "seconds, \"prompt_len\": tokens, \"output_len\": "
                       "tokens})",
                       path, line, key, v ? "not a number" : "missing");
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return sb_fail(err, SB_EINVAL, "%s:%ld: \"%s\": %g is out of [%g, %g]",
                       path, line, key, x, lo, hi);
    *out = x;
    return 0;
}

/* One non-blank line into r. */
static int req_line(const char *text, const char *path, long line,
                    sb_sim_req *r, sb_err *err)
{
    json_error_t je;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(o)) {
        json_decref(o);
        return sb_fail(err, SB_EINVAL, "%s:%ld: not a JSON object (%s)", path,
                       line, o ? "another value" : je.text);
    }
    double a = 0, p = 0, q = 0;
    int rc = req_field(o, "arrival_s", 0, 1e9, path, line, &a, err);
    if (!rc)
        rc = req_field(o, "prompt_len", 1, 1e8, path, line, &p, err);
    if (!rc)
        rc = req_field(o, "output_len", 1, 1e8, path, line, &q, err);
    json_decref(o);
    if (rc)
        return rc;
    if (p != floor(p) || q != floor(q))
        return sb_fail(err, SB_EINVAL, "%s:%ld: lengths are whole tokens", path,
                       line);
    *r = (sb_sim_req){a, (int)p, (int)q};
    return 0;
}

int sb_sim_read_requests(const char *path, sb_sim_req **out, size_t *n,
                         sb_err *err)
{
    *out = NULL;
    *n = 0;
    FILE *f;
    int rc = sb_file_fopen(path, "r", &f, err);
    if (rc)
        return rc;
    size_t cap = 0;
    sb_sim_req *v = NULL;
    char buf[4096];
    long line = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
            rc = sb_fail(err, SB_EINVAL, "%s:%ld: a line longer than %zu bytes",
                         path, line, sizeof buf - 2);
            break;
        }
        if (strspn(buf, " \t\r\n") == len)
            continue;
        if (*n == SB_SIM_MAX_REQUESTS) {
            rc = sb_fail(err, SB_EINVAL, "%s:%ld: more than %d requests", path,
                         line, SB_SIM_MAX_REQUESTS);
            break;
        }
        if (*n == cap) {
            size_t c = cap ? 2 * cap : 1024;
            sb_sim_req *p = realloc(v, c * sizeof *p);
            if (!p) {
                rc = sb_fail(err, SB_ENOMEM, "%s: out of memory", path);
                break;
            }
            v = p;
            cap = c;
        }
        if ((rc = req_line(buf, path, line, &v[*n], err)))
            break;
        if (*n > 0 && v[*n].arrival_s < v[*n - 1].arrival_s) {
            rc = sb_fail(err, SB_EINVAL,
                         "%s:%ld: arrival %g s before the line before's %g s "
                         "(arrivals in order)",
                         path, line, v[*n].arrival_s, v[*n - 1].arrival_s);
            break;
        }
        (*n)++;
    }
    if (!rc && ferror(f))
        rc = sb_fail(err, SB_EIO, "%s: cannot read", path);
    fclose(f);
    if (!rc && *n == 0)
        rc = sb_fail(err, SB_EINVAL, "%s: no requests", path);
    if (rc) {
        free(v);
        *n = 0;
        return rc;
    }
    *out = v;
    return 0;
}
