/*
 * test_serve_model.c — the serving simulator behind predict: one request
 * at a time it gives the single-request TTFT and TPOT exactly; its KV
 * cache is the memory the weights and activations leave; an offered load
 * below capacity is served at its rate and one above it queues; a
 * request the cache cannot hold, and the fields' bad values, are said.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "workload_fixtures.h"
#include "solbench/capacity.h"
#include "solbench/servesim.h"

static sb_prediction P; /* large: static */

/* Llama 3 70B on the H200 machine model, with `sets`. */
static int run(const char *const *sets, int n, sb_prediction *p)
{
    return predict_on("llama3-70b", sets, n, "h200-sxm", p);
}

static bool warned(const sb_prediction *p, const char *what)
{
    for (int i = 0; i < p->n_warnings; i++)
        if (strstr(p->warnings[i], what))
            return true;
    return false;
}

/* A closed loop of one: every request finds the machine idle; its TTFT
 * is the prefill of one prompt, its TPOT the decode step at the mean
 * context (the decode's time is linear in the context, and the mean of
 * prompt + 1 .. prompt + output - 1 is prompt + output / 2). */
static void test_alone(void)
{
    const char *s[] = {"requests=40", "concurrency=1"};
    CHECK(run(s, 2, &P) == 0);
    const sb_sim_out *o = &P.sim;
    CHECK(o->requests == 40 && P.sim_closed == 1);
    CHECK_NEAR(o->ttft.p50, P.ttft_s, 1e-9 * P.ttft_s);
    CHECK_NEAR(o->ttft.p99, P.ttft_s, 1e-9 * P.ttft_s);
    CHECK_NEAR(o->tpot.mean, P.tpot_s, 1e-6 * P.tpot_s);
    CHECK_NEAR(o->queue.p99, 0, 1e-12);
    /* one replica's figures for all of them: 8 replicas of tensor 1 */
    const char *r8[] = {"requests=40", "concurrency=8", "data=8",
                        "tensor=1",    "chips=8",       "dtypes.weights=fp8"};
    CHECK(run(r8, 6, &P) == 0);
    CHECK(P.sim_closed == 1);
    CHECK_NEAR(P.sim.tokens_per_s, 8 * 512 / (P.sim.e2e.mean),
               1e-6 * P.sim.tokens_per_s);
}

/* The cache: the blocks the memory leaves after weights and
 * activations; under a concurrency it cannot hold at full length, the
 * newest sequences are preempted and recomputed. */
static void test_cache(void)
{
    const char *s[] = {"requests=200", "concurrency=64"};
    CHECK(run(s, 2, &P) == 0);
    double kv_tok = 2.0 * 80 * 8 * 128 * 2 / 8; /* bf16 K and V, TP 8 */
    double free_b = P.mem.capacity - P.mem.weights - P.mem.activations;
    CHECK(P.sim_kv_blocks == (long)floor(free_b / (16 * kv_tok)));
    CHECK(P.sim.preemptions == 0);
    /* one chip and fp8 weights: the 70 GB left hold about 83 sequences
     * of 2560 tokens; 128 running need more */
    const char *tight[] = {"requests=300", "concurrency=128", "chips=1",
                           "tensor=1", "dtypes.weights=fp8"};
    CHECK(run(tight, 5, &P) == 0);
    CHECK(P.sim.requests == 300 && P.sim.preemptions > 0);
    CHECK(P.sim_kv_blocks > 0 && P.sim_kv_blocks * 16 < 128 * 2560);
    /* a prompt no cache holds: not simulated, and the warning says why */
    const char *huge[] = {"requests=10", "prompt_len=100000000"};
    CHECK(run(huge, 2, &P) == 0);
    CHECK(P.sim.requests == 0 && warned(&P, "can never run"));
}

/* An offered load: below what the machine serves, served at its rate;
 * far above it, the requests queue and the rate served is the machine's. */
static void test_load(void)
{
    const char *light[] = {"requests=3000", "job.request_rate=4",
                           "lengths=lognormal"};
    CHECK(run(light, 3, &P) == 0);
    CHECK(P.sim_closed == 0 && P.sim_rate == 4);
    CHECK(fabs(P.sim.requests_per_s / 4 - 1) < 0.08);
    CHECK(P.sim.ttft.p50 < 4 * P.ttft_s);
    double max_rate = P.serve.max_request_rate;
    const char *flood[] = {"requests=3000", "job.request_rate=100"};
    CHECK(run(flood, 2, &P) == 0);
    CHECK(P.sim.requests_per_s < 100 && P.sim.requests_per_s < 1.3 * max_rate);
    CHECK(P.sim.queue.p90 > 10);
    /* the SLOs: goodput counts the requests within them */
    const char *slo[] = {"requests=1000", "job.request_rate=4",
                         "job.slo_ttft_s=100", "job.slo_tpot_s=100"};
    CHECK(run(slo, 4, &P) == 0);
    CHECK_NEAR(P.sim.slo_attained, 1.0, 1e-12);
    CHECK_NEAR(P.sim.goodput_rps, P.sim.requests_per_s, 1e-9);
    const char *tight[] = {"requests=1000", "job.request_rate=4",
                           "job.slo_tpot_s=0.001"};
    CHECK(run(tight, 3, &P) == 0);
    CHECK(P.sim.slo_attained == 0 && P.sim.goodput_rps == 0);
}

/* Chunked prefill bounds the gap a decode waits through by one chunk;
 * prefill first stalls it for whole prompts. */
static void test_schedulers(void)
{
    const char *sar[] = {"requests=400", "job.request_rate=6",
                         "scheduler=sarathi", "max_batched_tokens=512"};
    CHECK(run(sar, 4, &P) == 0);
    double itl_sarathi = P.sim.itl.p99;
    const char *vl[] = {"requests=400", "job.request_rate=6", "scheduler=vllm"};
    CHECK(run(vl, 3, &P) == 0);
    CHECK(P.sim.itl.p99 > 2 * itl_sarathi);
    CHECK(P.sim.itl.p99 >= P.ttft_s); /* a whole prompt's prefill */
    const char *orca[] = {"requests=400", "job.request_rate=6",
                          "scheduler=orca"};
    CHECK(run(orca, 3, &P) == 0);
    CHECK(P.sim.requests == 400);
}

static void test_errors(void)
{
    static const struct {
        const char *set, *path;
    } bad[] = {
        {"scheduler=fifo", "$.job.scheduler"},
        {"lengths=zipf", "$.job.lengths"},
        {"length_spread=5", "$.job.length_spread"},
        {"max_seqs=0", "$.job.max_seqs"},
        {"requests=-1", "$.job.requests"},
        {"requests=2000000", "$.job.requests"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        sb_workload w;
        sb_err err = {0};
        CHECK(load("llama3-70b", &bad[k].set, 1, &w, &err) == SB_EINVAL);
        CHECK(strstr(err.msg, bad[k].path) != NULL);
    }
    const char *uni[] = {"lengths=uniform", "length_spread=1"};
    sb_workload w;
    sb_err err = {0};
    CHECK(load("llama3-70b", uni, 2, &w, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "below 1") != NULL);
}

/* Capacity: the largest rate within the objectives; a little above it
 * they fail (or the machine stops keeping up); looser objectives allow
 * more; objectives no rate meets give none. */
static void test_capacity(void)
{
    sb_workload w;
    sb_ceilings c;
    sb_err err = {0};
    machine("h200-sxm", &c);
    const char *s[] = {"requests=600", "lengths=lognormal"};
    CHECK(load("llama3-70b", s, 2, &w, &err) == 0);
    sb_slo slo;
    CHECK(sb_slo_parse("ttft_p90=200ms,tpot_p99=40ms", &slo, &err) == 0);
    sb_capacity cap, loose, none;
    CHECK(sb_predict_capacity(&w, &c, &slo, &cap, &err) == 0);
    CHECK(cap.found && cap.rate > 1 && cap.simulations > 3);
    CHECK(sb_slo_met(&slo, &cap.at));
    /* served at that rate, sustained: the rate x the mean output (the
     * finite run's own figure spans its ramp and drain) */
    CHECK_NEAR(cap.tokens_per_s,
               cap.rate * cap.at.tokens_per_s / cap.at.requests_per_s,
               1e-9 * cap.tokens_per_s);
    CHECK(cap.requests == 2560); /* 10 x max_seqs (256) over 600 */
    CHECK(cap.cost_per_mtok > 0);
    /* 3 % above: an objective missed or the arrivals outrun */
    w.request_rate = cap.rate * 1.03;
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(!sb_slo_met(&slo, &P.sim) ||
          P.sim.requests_per_s < 0.9 * w.request_rate);
    w.request_rate = 0;
    CHECK(sb_slo_parse("ttft_p90=2s", &slo, &err) == 0);
    CHECK(sb_predict_capacity(&w, &c, &slo, &loose, &err) == 0);
    CHECK(loose.found && loose.rate > cap.rate);
    CHECK(loose.rate < 1.3 * P.serve.max_request_rate);
    CHECK(sb_slo_parse("tpot_p50=1us", &slo, &err) == 0);
    CHECK(sb_predict_capacity(&w, &c, &slo, &none, &err) == 0);
    CHECK(!none.found && none.simulations > 0);
    /* A batch of many sequences takes every arrival at once until it is
     * full: a run of few requests (1000 at 896 sequences, 8 replicas)
     * is all ramp, and passed 233 requests/s, 1.38 x what the machine
     * serves. Runs of 10 x max_seqs see the queue: capacity within the
     * steady state's saturation rate. */
    sb_workload m;
    const char *ml[] = {"job.max_seqs=896"};
    CHECK(load("llama2-70b-mlperf-h200", ml, 1, &m, &err) == 0);
    CHECK(sb_slo_parse("ttft_p99=2s,tpot_p99=200ms", &slo, &err) == 0);
    sb_capacity mc;
    CHECK(sb_predict_capacity(&m, &c, &slo, &mc, &err) == 0);
    m.request_rate = 1e-6;
    CHECK(sb_predict(&m, &c, &P, &err) == 0);
    CHECK(mc.found && mc.requests == 8960);
    CHECK(mc.rate > 0.8 * P.serve.max_request_rate &&
          mc.rate < 1.02 * P.serve.max_request_rate);
    /* the objectives' syntax */
    CHECK(sb_slo_parse("ttft_p90=2s,itl_p99=150ms,latency_mean=30", &slo,
                       &err) == 0);
    CHECK(slo.n == 3 && slo.t[1].metric == SB_SLO_ITL && slo.t[1].pct == 99);
    CHECK_NEAR(slo.t[1].limit_s, 0.150, 1e-15);
    CHECK(slo.t[2].pct == 0 && slo.t[2].limit_s == 30);
    CHECK(sb_slo_parse("tpot_p99=2000000us", &slo, &err) == 0); /* 2 s */
    CHECK_NEAR(slo.t[0].limit_s, 2.0, 1e-12);
    CHECK(sb_slo_parse("latency_p99=1e7", &slo, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "more than 1e6 s") != NULL);
    /* the best of several: the cheapest per token where priced, else
     * the most requests; none found, none */
    {
        sb_capacity cs[3] = {{0}};
        bool ran[3] = {true, true, true};
        cs[0] = (sb_capacity){.found = true, .rate = 9, .cost_per_mtok = 2};
        cs[1] = (sb_capacity){.found = true, .rate = 5, .cost_per_mtok = 1};
        CHECK(sb_capacity_best(cs, ran, 3) == 1);
        ran[1] = false;
        CHECK(sb_capacity_best(cs, ran, 3) == 0);
        cs[0].cost_per_mtok = cs[1].cost_per_mtok = 0;
        ran[1] = true;
        CHECK(sb_capacity_best(cs, ran, 3) == 0); /* unpriced: the most */
        cs[0].found = cs[1].found = false;
        CHECK(sb_capacity_best(cs, ran, 3) == -1);
    }
    static const char *const bad[] = {
        "ttft=2s",     "ttft_p95=2s",  "rate_p90=2s",  "ttft_p90=",
        "ttft_p90=2h", "ttft_p90=-1s", "ttft_p90=2s,", ""};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        CHECK(sb_slo_parse(bad[k], &slo, &err) == SB_EINVAL);
}

/* A request list in a closed loop (validate's serving loads: the very
 * lengths the reference served): the same lengths drawn and given as a
 * list are the same run; other lengths of the same distribution are
 * not; at their arrivals (a file's default) the list queues at once. */
static void test_closed_list(void)
{
    const char *s[] = {"requests=24", "concurrency=4", "lengths=uniform",
                       "length_spread=0.5"};
    sb_workload w;
    sb_ceilings c;
    sb_err err = {0};
    machine("h200-sxm", &c);
    CHECK(load("llama3-70b", s, 4, &w, &err) == 0);
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    sb_sim_out drawn = P.sim;
    CHECK(drawn.requests == 24 && P.sim_closed == 4);
    sb_sim_req req[24];
    CHECK(sb_sim_requests(req, 24, 0, w.prompt_len, w.output_len,
                          (sb_sim_len)w.sim_len, w.sim_spread,
                          (uint64_t)w.sim_seed, &err) == 0);
    w.sim_file = req;
    w.sim_file_n = 24;
    w.sim_file_closed = true;
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.sim_closed == 4 && P.sim_rate == 0);
    CHECK(P.sim.requests == 24 && P.sim.iterations == drawn.iterations);
    CHECK_NEAR(P.sim.e2e.p50, drawn.e2e.p50, 1e-12);
    CHECK_NEAR(P.sim.ttft.p90, drawn.ttft.p90, 1e-12);
    CHECK_NEAR(P.sim.tokens_per_s, drawn.tokens_per_s, 1e-9);
    /* the first request's output doubled: another run */
    req[0].output *= 2;
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.sim.iterations > drawn.iterations);
    /* the list at its arrivals (all at 0): no closed loop, all queued */
    w.sim_file_closed = false;
    CHECK(sb_predict(&w, &c, &P, &err) == 0);
    CHECK(P.sim_closed == 0 && P.sim.queue.p90 > drawn.queue.p90);
}

/* Pipeline stages serve micro-batches: with a batch split one a stage,
 * every stage works while the others do, so a replica of two stages
 * (half the layers a chip) at twice the batch serves what two replicas of
 * one stage do, at the same TPOT; one batch in flight would have left
 * each stage idle half the time (half the throughput where the batch is
 * compute-bound, as here: fp8 weights, 512 sequences a micro-batch, the
 * scheduler's cap raised to them). One
 * sequence alone is one micro-batch: its TTFT and TPOT pass every stage. */
static void test_pipeline(void)
{
    const char *one[] = {
        "chips=8",          "tensor=1",           "data=8",
        "concurrency=4096", "dtypes.weights=fp8", "dtypes.kv_cache=fp8",
        "prompt_len=256",   "output_len=128",     "requests=600",
        "max_seqs=512"};
    CHECK(run(one, 10, &P) == 0);
    CHECK(P.decode_batch == 512);
    double tpot1 = P.tpot_s, dec1 = P.decode_tokens_per_s;
    double srv1 = P.serve.tokens_per_s, sim1 = P.sim.tokens_per_s;
    CHECK(sim1 > 0);
    const char *two[] = {"chips=8",
                         "tensor=1",
                         "data=4",
                         "pipeline=2",
                         "concurrency=4096",
                         "dtypes.weights=fp8",
                         "dtypes.kv_cache=fp8",
                         "prompt_len=256",
                         "output_len=128",
                         "requests=600",
                         "max_seqs=512"};
    CHECK(run(two, 11, &P) == 0);
    CHECK(P.decode_batch == 1024);
    CHECK(P.tpot_s > 0.95 * tpot1 && P.tpot_s < 1.05 * tpot1);
    CHECK(P.decode_tokens_per_s > 0.95 * dec1 &&
          P.decode_tokens_per_s < 1.05 * dec1);
    CHECK(P.serve.tokens_per_s > 0.9 * srv1 &&
          P.serve.tokens_per_s < 1.1 * srv1);
    CHECK(P.sim.tokens_per_s > 0.85 * sim1 && P.sim.tokens_per_s < 1.15 * sim1);
    /* alone: the prefill and the decode step pass both stages */
    const char *alone[] = {"chips=2",           "tensor=1",      "data=1",
                           "pipeline=2",        "concurrency=1", "requests=20",
                           "dtypes.weights=fp8"};
    CHECK(run(alone, 7, &P) == 0);
    CHECK(P.sim.requests == 20 && P.sim_closed == 1);
    CHECK_NEAR(P.sim.ttft.p50, P.ttft_s, 1e-9 * P.ttft_s);
    CHECK_NEAR(P.sim.tpot.mean, P.tpot_s, 1e-6 * P.tpot_s);
    double stage = 0;
    for (int i = 0; i < P.n; i++)
        if (strcmp(P.ph[i].stage, "decode") == 0)
            stage += P.ph[i].exposed;
    CHECK_NEAR(P.tpot_s, 2 * stage, 1e-9 * P.tpot_s);
}

/* The steady state runs no more sequences than the scheduler's cap
 * (max_seqs): a closed loop of 64 clients over 16 places serves 16 at a
 * time, the decode step is theirs, and the others wait for a place (b O
 * t_it / B in the system, O t_it of it served: Little's law); the
 * simulator's closed loop of the same clients waits as long. */
static void test_max_seqs(void)
{
    const char *all[] = {"concurrency=64"};
    CHECK(run(all, 1, &P) == 0);
    CHECK(P.serve.batch == 64 && P.decode_batch == 64);
    CHECK(P.serve.queue_s == 0);
    double ttft64 = P.serve.ttft_s, tps64 = P.serve.tokens_per_s;
    const char *cap[] = {"concurrency=64", "max_seqs=16"};
    CHECK(run(cap, 2, &P) == 0);
    CHECK(P.serve.batch == 16 && P.decode_batch == 16);
    CHECK(warned(&P, "16 of the 64 concurrent sequences") &&
          warned(&P, "max_seqs runs no more"));
    CHECK_NEAR(P.serve.queue_s, 512 * P.serve.iteration_s * (64.0 / 16 - 1),
               1e-9 * P.serve.queue_s);
    CHECK(P.serve.ttft_s > P.serve.queue_s &&
          P.serve.ttft_s < ttft64 + P.serve.queue_s);
    CHECK_NEAR(P.serve.tokens_per_s, 16 / P.serve.iteration_s,
               1e-9 * P.serve.tokens_per_s);
    CHECK(P.serve.tokens_per_s < 0.6 * tps64);
    double steady = P.serve.ttft_s;
    const char *sim[] = {"concurrency=64", "max_seqs=16", "requests=2000",
                         "lengths=lognormal"};
    CHECK(run(sim, 4, &P) == 0);
    CHECK(P.sim.requests == 2000 && P.sim.mean_running <= 16);
    CHECK(fabs(P.sim.ttft.p50 / steady - 1) < 0.25);
}

int main(void)
{
    test_alone();
    test_cache();
    test_load();
    test_schedulers();
    test_errors();
    test_capacity();
    test_closed_list();
    test_pipeline();
    test_max_seqs();
    return sb_check_done();
}
