/*
 * serve.c — the reference decoder as a serving engine: continuous
 * batching over a fixed number of slots, a new request joining as soon as
 * one finishes (a closed loop at constant concurrency), each iteration one
 * ragged forward of the decodes and of whole prompts within the token
 * budget; and its timeline as a Chrome trace that `solbench trace show`
 * reads.
 */
#include "bench/llm/serve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "solbench/timer.h"
#include "solbench/util.h"

typedef struct sb__req {
    int prompt, output, done; /* tokens generated so far */
    double arrival, first, last;
    int32_t next; /* the token to feed */
} sb__req;

void sb_serve_lengths(const sb_serve_opts *o, int *plen, int *olen)
{
    sb_llm_lengths(o->requests, o->prompt, o->ragged, o->seed, plen);
    sb_llm_lengths(o->requests, o->output, o->ragged, o->seed + 5, olen);
}

int sb_serve_run(sb_ref_model *m, const sb_serve_opts *o, sb_serve_stats *st,
                 sb_err *err)
{
    memset(st, 0, sizeof *st);
    const sb_ref_config *c = sb_ref_config_of(m);
    int B = o->concurrency, N = o->requests;
    if (B < 1 || N < B)
        return sb_fail(err, SB_EINVAL,
                       "serve: %d requests over %d slots (at least one a "
                       "slot)",
                       N, B);
    sb__req *rq = calloc((size_t)N, sizeof *rq);
    int *plen = malloc(sizeof(int) * (size_t)N),
        *olen = malloc(sizeof(int) * (size_t)N);
    int *slot_req = malloc(sizeof(int) * (size_t)B);
    int *sl = malloc(sizeof(int) * (size_t)B),
        *nt = malloc(sizeof(int) * (size_t)B),
        *who = malloc(sizeof(int) * (size_t)B);
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)o->max_tokens),
            *next = malloc(sizeof(int32_t) * (size_t)B);
    double *gaps =
               malloc(sizeof(double) * (size_t)N * (size_t)(2 * o->output + 2)),
           *ttft = malloc(sizeof(double) * (size_t)N),
           *lat = malloc(sizeof(double) * (size_t)N);
    int rc = 0;
    if (!rq || !plen || !olen || !slot_req || !sl || !nt || !who || !tok ||
        !next || !gaps || !ttft || !lat) {
        rc = sb_fail(err, SB_ENOMEM, "serve: out of memory");
        goto out;
    }
    sb_serve_lengths(o, plen, olen);
    for (int i = 0; i < N; i++) {
        rq[i].prompt = plen[i];
        rq[i].output = olen[i];
        if (plen[i] + olen[i] > o->max_context || plen[i] > o->max_tokens) {
            rc = sb_fail(err, SB_EINVAL,
                         "serve: request %d (%d + %d tokens) exceeds the "
                         "model's context %d or its %d tokens an iteration",
                         i, plen[i], olen[i], o->max_context, o->max_tokens);
            goto out;
        }
    }
    for (int s = 0; s < B; s++) {
        slot_req[s] = s;
        sb_ref_set_len(m, s, 0);
    }
    int joined = B, finished = 0, ngap = 0, nttft = 0;
    uint64_t r = o->seed * 977 + 1;
    double t_start = sb_now();
    st->t_start = t_start;
    for (int s = 0; s < B; s++)
        rq[s].arrival = t_start;
    while (finished < N) {
        /* decodes first, then whole prompts while the budget lasts */
        int n = 0, T = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int s = 0; s < B; s++) {
                int q = slot_req[s];
                if (q < 0)
                    continue;
                bool pre = rq[q].done == 0;
                if (pre != (pass == 1))
                    continue;
                int k = pre ? rq[q].prompt : 1;
                if (T + k > o->max_tokens)
                    continue;
                if (pre)
                    for (int u = 0; u < k; u++)
                        tok[T + u] = (int32_t)(sb_rng_unif(&r) * c->vocab);
                else
                    tok[T] = rq[q].next;
                sl[n] = s;
                nt[n] = k;
                who[n] = q;
                T += k;
                n++;
                if (pre)
                    st->prefill_tokens += k;
            }
        if (n == 0) {
            rc = sb_fail(err, SB_EINVAL, "serve: an iteration with no work");
            goto out;
        }
        if ((rc = sb_ref_forward(m, n, sl, nt, tok, NULL, next, err)))
            goto out;
        double now = sb_now();
        st->iterations++;
        for (int i = 0; i < n; i++) {
            sb__req *q = &rq[who[i]];
            q->next = next[i];
            if (q->done == 0) {
                q->first = now;
                if (who[i] >= B || N == B)
                    ttft[nttft++] = now - q->arrival;
            } else {
                gaps[ngap++] = now - q->last;
            }
            q->last = now;
            q->done++;
            st->tokens++;
            if (q->done == q->output) {
                lat[finished++] = now - q->arrival;
                int s = sl[i];
                sb_ref_set_len(m, s, 0);
                if (joined < N) {
                    slot_req[s] = joined;
                    rq[joined].arrival = now;
                    joined++;
                } else {
                    slot_req[s] = -1;
                }
            }
        }
    }
    st->wall_s = sb_now() - t_start;
    st->requests = N;
    st->tokens_per_s = st->wall_s > 0 ? st->tokens / st->wall_s : 0;
    sb_stats_compute(gaps, (size_t)ngap, &st->tpot);
    sb_stats_compute(ttft, (size_t)nttft, &st->ttft);
    sb_stats_compute(lat, (size_t)N, &st->latency);
out:
    free(rq), free(plen), free(olen), free(slot_req), free(sl), free(nt),
        free(who), free(tok), free(next), free(gaps), free(ttft), free(lat);
    return rc;
}

/* ---- the timeline as a Chrome trace -------------------------------------- */

static json_t *sb__dims2(int64_t a, int64_t b, int64_t c, int64_t d)
{
    return json_pack("[[I,I],[I,I]]", (json_int_t)a, (json_int_t)b,
                     (json_int_t)c, (json_int_t)d);
}

json_t *sb_serve_trace(const sb_ref_model *m, const sb_ref_event *ev, int n,
                       double t_start, const char *label)
{
    const sb_ref_config *c = sb_ref_config_of(m);
    const char *ty = c->bf16 ? "c10::BFloat16" : "float";
    int64_t d = c->d, nq = (int64_t)(c->hq + 2 * c->hkv) * c->hd,
            ho = (int64_t)c->hq * c->hd, f = c->ffn;
    json_t *evs = json_array();
    json_array_append_new(evs, json_pack("{s:s,s:s,s:i,s:{s:s}}", "name",
                                         "process_name", "ph", "M", "pid", 1,
                                         "args", "name", label));
    /* one ProfilerStep per iteration: from its first event to its last */
    int step = 0, mlp_seen = 0, last_layer = -2;
    for (int i = 0; i < n;) {
        int j = i + 1;
        /* an iteration starts at each embedding */
        while (j < n && ev[j].ph != SB_REF_EMBED)
            j++;
        char nm[48];
        snprintf(nm, sizeof nm, "ProfilerStep#%d", step++);
        json_array_append_new(
            evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:I}}", "name", nm,
                           "cat", "user_annotation", "ph", "X", "ts",
                           (ev[i].t0 - t_start) * 1e6, "dur",
                           (ev[j - 1].t1 - ev[i].t0) * 1e6, "pid", 1, "tid", 1,
                           "args", "tokens", (json_int_t)ev[i].rows));
        for (int k = i; k < j; k++) {
            const sb_ref_event *e = &ev[k];
            if (e->layer != last_layer) {
                mlp_seen = 0;
                last_layer = e->layer;
            }
            const char *name = sb_ref_phase_name(e->ph);
            json_t *dims = NULL;
            switch (e->ph) {
            case SB_REF_QKV:
                dims = sb__dims2(e->rows, d, d, nq);
                break;
            case SB_REF_OPROJ:
                dims = sb__dims2(e->rows, ho, ho, d);
                break;
            case SB_REF_MLP:
                dims = mlp_seen++ % 2 == 0 ? sb__dims2(e->rows, d, d, 2 * f)
                                           : sb__dims2(e->rows, f, f, d);
                break;
            case SB_REF_LMHEAD:
                dims = sb__dims2(e->rows, d, d, c->vocab);
                break;
            default:
                break;
            }
            json_t *args =
                json_pack("{s:s,s:i}", "phase", name, "layer", e->layer);
            if (dims) {
                json_object_set_new(args, "Input Dims", dims);
                json_object_set_new(args, "Input type",
                                    json_pack("[s,s]", ty, ty));
            }
            json_array_append_new(
                evs, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:o}", "name",
                               dims ? "aten::mm" : name, "cat", "cpu_op", "ph",
                               "X", "ts", (e->t0 - t_start) * 1e6, "dur",
                               (e->t1 - e->t0) * 1e6, "pid", 1, "tid", 1,
                               "args", args));
        }
        i = j;
    }
    return json_pack("{s:o,s:s}", "traceEvents", evs, "displayTimeUnit", "ms");
}
