/*
 * test_servesim.c — the serving simulator against hand-worked timelines:
 * a linear iteration cost (10 ms + 1 ms a decode + 0.1 ms a prompt
 * token) makes every figure a sum that can be written down.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "solbench/servesim.h"

#define A 0.010
#define D 0.001
#define P 0.0001

static double linear(const sb_sim_batch *b, void *arg)
{
    (void)arg;
    return A + D * b->decode_seqs + P * b->prefill_tokens;
}

static double zero_cost(const sb_sim_batch *b, void *arg)
{
    (void)b;
    (void)arg;
    return 0;
}

static sb_sim_cfg cfg_of(sb_sim_sched s, int budget)
{
    sb_sim_cfg c = {.sched = s,
                    .max_seqs = 256,
                    .max_batched_tokens = budget,
                    .kv_blocks = 0,
                    .page = 16};
    return c;
}

/* The largest gap between two tokens: the biggest iteration a decode
 * waited through. */
static double max_gap;
static int track(const sb_sim_iter *it, void *arg)
{
    (void)arg;
    if (it->b.decode_seqs > 0 || it->b.prefill_seqs > 0)
        max_gap = fmax(max_gap, it->dur_s);
    return 0;
}

static void test_one_request(void)
{
    sb_err err = {0};
    sb_sim_req r = {0, 100, 10};
    sb_sim_out o;
    for (int s = 0; s < SB_SIM_N_SCHED; s++) {
        sb_sim_cfg c = cfg_of((sb_sim_sched)s, 8192);
        CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
        /* prefill 10 + 10 ms, then 9 decodes of 11 ms */
        CHECK_NEAR(o.ttft.p50, 0.020, 1e-12);
        CHECK_NEAR(o.tpot.p50, 0.011, 1e-12);
        CHECK_NEAR(o.e2e.p50, 0.119, 1e-12);
        CHECK_NEAR(o.queue.p50, 0, 1e-15);
        CHECK_NEAR(o.itl.p99, 0.011, 1e-12);
        CHECK(o.iterations == 10 && o.preemptions == 0 && o.requests == 1);
        CHECK_NEAR(o.tokens_per_s, 10 / 0.119, 1e-9);
        CHECK(o.tpot.n == 1 && o.itl.n == 9 && o.ttft.n == 1);
    }
    /* one output token: it comes with the prefill, and there is no gap
     * between tokens to count (none, not a TPOT of 0) */
    sb_sim_req one = {0, 100, 1};
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 8192);
    CHECK(sb_sim_run(&c, &one, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.ttft.p50, 0.020, 1e-12);
    CHECK_NEAR(o.e2e.p50, 0.020, 1e-12);
    CHECK(o.tpot.n == 0 && o.itl.n == 0 && o.e2e.n == 1);
}

/* A 1000-token prompt under a budget of 256: four chunks (256, 256, 256,
 * 232) before its first token with chunked prefill; one iteration past
 * the budget when prompts go whole. */
static void test_chunks(void)
{
    sb_err err = {0};
    sb_sim_req r = {0, 1000, 2};
    sb_sim_out o;
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 256);
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.ttft.p50, 3 * (A + 256 * P) + A + 232 * P, 1e-12);
    CHECK(o.iterations == 5);
    c = cfg_of(SB_SIM_ORCA, 256);
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.ttft.p50, A + 1000 * P, 1e-12);
    CHECK(o.iterations == 2);
    /* a round of two micro-batches' budgets (512) whose one sequence's
     * chunk is a micro-batch's (256): the same four chunks */
    c = cfg_of(SB_SIM_SARATHI, 512);
    c.max_chunk = 256;
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.ttft.p50, 3 * (A + 256 * P) + A + 232 * P, 1e-12);
    CHECK(o.iterations == 5);
    c.max_chunk = 0; /* no cap: two chunks of 512 and 488 */
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.ttft.p50, A + 512 * P + A + 488 * P, 1e-12);
    c.max_chunk = -1;
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
}

/* A long prompt arriving while another request decodes: prefill first
 * stalls the decode for the whole prompt; chunked prefill bounds every
 * gap by one chunk; Orca's whole prompt rides with the decode. */
static void test_stall(void)
{
    sb_err err = {0};
    sb_sim_req r[2] = {{0, 100, 50}, {0.1, 2000, 5}};
    sb_sim_out o;
    sb_sim_cfg c = cfg_of(SB_SIM_VLLM, 4096);
    max_gap = 0;
    CHECK(sb_sim_run(&c, r, 2, linear, NULL, track, NULL, &o, &err) == 0);
    CHECK_NEAR(max_gap, A + 2000 * P, 1e-12); /* a prefill-only iteration */
    c = cfg_of(SB_SIM_SARATHI, 256);
    max_gap = 0;
    CHECK(sb_sim_run(&c, r, 2, linear, NULL, track, NULL, &o, &err) == 0);
    CHECK_NEAR(max_gap, A + D + 255 * P, 1e-12); /* one decode, one chunk */
    CHECK(o.itl.p99 <= A + D + 255 * P + 1e-12);
    c = cfg_of(SB_SIM_ORCA, 4096);
    max_gap = 0;
    CHECK(sb_sim_run(&c, r, 2, linear, NULL, track, NULL, &o, &err) == 0);
    CHECK_NEAR(max_gap, A + D + 2000 * P, 1e-12);
}

/* A cache too small for four sequences at full length: the newest are
 * preempted and recomputed, every request still makes all its tokens. */
static void test_preemption(void)
{
    sb_err err = {0};
    sb_sim_req r[4];
    for (int i = 0; i < 4; i++)
        r[i] = (sb_sim_req){0, 64, 128};
    sb_sim_out o;
    for (int s = 0; s < SB_SIM_N_SCHED; s++) {
        sb_sim_cfg c = cfg_of((sb_sim_sched)s, 8192);
        c.kv_blocks = 20; /* 320 tokens; one sequence needs up to 192 */
        c.closed = 4;
        CHECK(sb_sim_run(&c, r, 4, linear, NULL, NULL, NULL, &o, &err) == 0);
        CHECK(o.preemptions > 0);
        CHECK(o.requests == 4);
        CHECK_NEAR(o.tokens_per_s * o.duration_s, 4 * 128, 1e-6);
        /* the same with room for all: no preemption, and sooner */
        double slow = o.duration_s;
        c.kv_blocks = 48;
        CHECK(sb_sim_run(&c, r, 4, linear, NULL, NULL, NULL, &o, &err) == 0);
        CHECK(o.preemptions == 0 && o.duration_s < slow);
    }
    /* prompt + output - 1 tokens are cached at most: 16 + 1 fits one
     * block of 16 */
    {
        sb_sim_req one = {0, 16, 1};
        sb_sim_cfg c1 = cfg_of(SB_SIM_SARATHI, 8192);
        c1.kv_blocks = 1;
        CHECK(sb_sim_run(&c1, &one, 1, linear, NULL, NULL, NULL, &o, &err) ==
              0);
        one.output = 2;
        CHECK(sb_sim_run(&c1, &one, 1, linear, NULL, NULL, NULL, &o, &err) ==
              SB_EINVAL);
    }
    /* one request the cache can never hold: refused, not hung */
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 8192);
    c.kv_blocks = 4;
    CHECK(sb_sim_run(&c, r, 4, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "can never run") != NULL);
}

/* A closed loop of 8 at fixed lengths: prefill of the 8 together, then
 * 9 decode iterations of 8; the next wave the same. */
static void test_closed(void)
{
    sb_err err = {0};
    sb_sim_req r[16];
    for (int i = 0; i < 16; i++)
        r[i] = (sb_sim_req){0, 100, 10};
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 8192);
    c.closed = 8;
    sb_sim_out o;
    CHECK(sb_sim_run(&c, r, 16, linear, NULL, NULL, NULL, &o, &err) == 0);
    double wave = (A + 800 * P) + 9 * (A + 8 * D);
    CHECK_NEAR(o.duration_s, 2 * wave, 1e-12);
    CHECK_NEAR(o.ttft.p50, A + 800 * P, 1e-12);
    CHECK_NEAR(o.tpot.p50, A + 8 * D, 1e-12);
    CHECK_NEAR(o.mean_running, 8, 1e-12);
    /* SLOs: TTFT 0.05 s is met by every request (0.09 s is not) */
    c.slo_ttft_s = 0.1;
    c.slo_tpot_s = 0.017;
    CHECK(sb_sim_run(&c, r, 16, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.slo_attained, 0.0, 1e-12); /* TPOT 18 ms > 17 */
    c.slo_tpot_s = 0.018 + 1e-9;
    CHECK(sb_sim_run(&c, r, 16, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.slo_attained, 1.0, 1e-12);
    CHECK_NEAR(o.goodput_rps, 16 / o.duration_s, 1e-9);
}

/* Poisson arrivals: at a light load a request mostly finds the machine
 * idle (its TTFT the lone prefill); far past capacity the queue grows. */
static void test_poisson(void)
{
    sb_err err = {0};
    size_t n = 2000;
    sb_sim_req *r = malloc(n * sizeof *r);
    CHECK(r != NULL);
    CHECK(sb_sim_requests(r, n, 0.5, 100, 10, SB_SIM_LEN_FIXED, 0, 7, &err) ==
          0);
    /* mean gap 2 s */
    CHECK(fabs(r[n - 1].arrival_s / (double)(n - 1) - 2.0) < 0.15);
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 8192);
    sb_sim_out o;
    CHECK(sb_sim_run(&c, r, n, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK_NEAR(o.ttft.p50, A + 100 * P, 1e-12);
    CHECK_NEAR(o.tpot.p50, A + D, 1e-12);
    CHECK(fabs(o.requests_per_s - 0.5) < 0.05);
    /* 1000 requests a second; one alone takes 119 ms */
    CHECK(sb_sim_requests(r, n, 1000, 100, 10, SB_SIM_LEN_FIXED, 0, 7, &err) ==
          0);
    CHECK(sb_sim_run(&c, r, n, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK(o.queue.p90 > 1.0 && o.requests_per_s < 1000);
    free(r);
}

static void test_requests(void)
{
    sb_err err = {0};
    size_t n = 20000;
    sb_sim_req *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    CHECK(a && b);
    CHECK(sb_sim_requests(a, n, 2, 512, 128, SB_SIM_LEN_LOGNORMAL, 0.6, 3,
                          &err) == 0);
    CHECK(sb_sim_requests(b, n, 2, 512, 128, SB_SIM_LEN_LOGNORMAL, 0.6, 3,
                          &err) == 0);
    CHECK(memcmp(a, b, n * sizeof *a) == 0); /* the seed reproduces */
    double sp = 0, so = 0;
    int lo = 1 << 30, hi = 0;
    for (size_t i = 0; i < n; i++) {
        sp += a[i].prompt;
        so += a[i].output;
        lo = a[i].prompt < lo ? a[i].prompt : lo;
        hi = a[i].prompt > hi ? a[i].prompt : hi;
    }
    CHECK(fabs(sp / n / 512 - 1) < 0.03 && fabs(so / n / 128 - 1) < 0.03);
    CHECK(lo >= 1 && hi <= 16 * 512 && hi > 2 * 512);
    CHECK(sb_sim_requests(a, n, 0, 512, 128, SB_SIM_LEN_UNIFORM, 0.5, 3,
                          &err) == 0);
    lo = 1 << 30, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = a[i].prompt < lo ? a[i].prompt : lo;
        hi = a[i].prompt > hi ? a[i].prompt : hi;
        CHECK(a[i].arrival_s == 0);
    }
    CHECK(lo >= 256 && hi <= 768 && lo < 270 && hi > 750);
    /* refusals */
    CHECK(sb_sim_requests(a, n, -1, 512, 128, SB_SIM_LEN_FIXED, 0, 3, &err) ==
          SB_EINVAL);
    CHECK(sb_sim_requests(a, n, 1, 512, 128, SB_SIM_LEN_UNIFORM, 1.5, 3,
                          &err) == SB_EINVAL);
    CHECK(sb_sim_requests(a, 0, 1, 512, 128, SB_SIM_LEN_FIXED, 0, 3, &err) ==
          SB_EINVAL);
    free(a);
    free(b);
}

static void test_refusals(void)
{
    /* long prompts in a budget of 1: each a chunk of 1 an iteration, many
     * more iterations than output tokens, and the run still ends */
    {
        sb_err e0 = {0};
        sb_sim_req lp[20];
        for (int i = 0; i < 20; i++)
            lp[i] = (sb_sim_req){0.001 * i, 2048, 1};
        sb_sim_cfg c0 = cfg_of(SB_SIM_SARATHI, 1);
        sb_sim_out o0;
        CHECK(sb_sim_run(&c0, lp, 20, linear, NULL, NULL, NULL, &o0, &e0) == 0);
        CHECK(o0.requests == 20 && o0.iterations >= 20 * 2048);
        /* a huge mean length drawn is clipped below an int's range */
        CHECK(sb_sim_requests(lp, 20, 1, 1 << 30, 4, SB_SIM_LEN_LOGNORMAL, 4.0,
                              1, &e0) == 0);
        for (int i = 0; i < 20; i++)
            CHECK(lp[i].prompt >= 1 && lp[i].prompt <= 500000000);
    }
    sb_err err = {0};
    sb_sim_req r[2] = {{1.0, 10, 10}, {0.5, 10, 10}};
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 8192);
    sb_sim_out o;
    CHECK(sb_sim_run(&c, r, 2, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL); /* arrivals out of order */
    CHECK(strstr(err.msg, "request 1") != NULL);
    r[1].arrival_s = 2.0;
    CHECK(sb_sim_run(&c, r, 2, zero_cost, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "positive time") != NULL);
    c.max_seqs = 0;
    CHECK(sb_sim_run(&c, r, 2, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
    c = cfg_of(SB_SIM_SARATHI, 8192);
    CHECK(sb_sim_run(&c, r, 0, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
    r[0].output = 0;
    CHECK(sb_sim_run(&c, r, 2, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
}

/* Writes text to a scratch file; its path into path. */
static void scratch(const char *text, char *path, size_t len)
{
    static int k;
    snprintf(path, len, "/tmp/sb_servesim_%d_%d.jsonl", (int)getpid(), k++);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A request file: read as written, blank lines skipped; each bad line
 * named by its number; the run of the file equals the run of the same
 * requests given directly. */
static void test_request_file(void)
{
    sb_err err = {0};
    char path[128];
    sb_sim_req *r = NULL;
    size_t n = 0;
    scratch("{\"arrival_s\": 0, \"prompt_len\": 100, \"output_len\": 10}\n"
            "\n"
            "{\"arrival_s\": 0.05, \"prompt_len\": 200, \"output_len\": 3}\n",
            path, sizeof path);
    CHECK(sb_sim_read_requests(path, &r, &n, &err) == 0);
    CHECK(n == 2 && r[1].arrival_s == 0.05 && r[1].prompt == 200 &&
          r[1].output == 3);
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 8192);
    sb_sim_out a, b;
    sb_sim_req same[2] = {{0, 100, 10}, {0.05, 200, 3}};
    CHECK(sb_sim_run(&c, r, n, linear, NULL, NULL, NULL, &a, &err) == 0);
    CHECK(sb_sim_run(&c, same, 2, linear, NULL, NULL, NULL, &b, &err) == 0);
    CHECK(a.duration_s == b.duration_s && a.ttft.p99 == b.ttft.p99);
    free(r);
    remove(path);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"{\"arrival_s\": 1, \"prompt_len\": 5, \"output_len\": 5}\n"
         "{\"arrival_s\": 0.5, \"prompt_len\": 5, \"output_len\": 5}\n",
         ":2: arrival 0.5 s before"},
        {"{\"arrival_s\": 0, \"prompt_len\": 5}\n",
         ":1: \"output_len\": missing"},
        {"{\"arrival_s\": 0, \"prompt_len\": 0, \"output_len\": 5}\n",
         ":1: \"prompt_len\": 0 is out of"},
        {"{\"arrival_s\": 0, \"prompt_len\": 1.5, \"output_len\": 5}\n",
         ":1: lengths are whole tokens"},
        {"[1, 2]\n", ":1: not a JSON object"},
        {"not json\n", ":1: not a JSON object"},
        {"\n\n", "no requests"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        scratch(bad[k].text, path, sizeof path);
        CHECK(sb_sim_read_requests(path, &r, &n, &err) == SB_EINVAL);
        CHECK(r == NULL && n == 0 && strstr(err.msg, bad[k].want) != NULL);
        remove(path);
    }
    CHECK(sb_sim_read_requests("/nonexistent/req.jsonl", &r, &n, &err) != 0);
}

/* The machine's interruptions: a Poisson stream on the simulated clock,
 * each adding its size to the iteration it lands in. */
static void test_noise(void)
{
    sb_err err = {0};
    sb_sim_req r = {0, 100, 2001}; /* 2000 gaps of 11 ms: 22 s */
    sb_sim_cfg c = cfg_of(SB_SIM_SARATHI, 8192);
    sb_sim_out quiet, o, again;
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &quiet, &err) == 0);
    CHECK(quiet.interrupts == 0 && quiet.noise_s == 0);
    CHECK_NEAR(quiet.itl.p99, 0.011, 1e-12);
    /* 2 a second of 5 ms each: about 44 in 22 s; about 2 % of the gaps
     * carry one, so the p99 gap is 16 ms and the median still 11 */
    c.noise_rate = 2;
    for (int i = 0; i < 5; i++)
        c.noise_q[i] = 0.005;
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK(o.interrupts >= 20 && o.interrupts <= 80);
    CHECK_NEAR(o.noise_s, 0.005 * (double)o.interrupts, 1e-12);
    CHECK_NEAR(o.e2e.p50, quiet.e2e.p50 + o.noise_s, 1e-9);
    CHECK_NEAR(o.itl.p50, 0.011, 1e-12);
    CHECK_NEAR(o.itl.p99, 0.016, 1e-12);
    CHECK(o.iterations == quiet.iterations);
    /* the same stream every run */
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &again, &err) == 0);
    CHECK(again.interrupts == o.interrupts && again.noise_s == o.noise_s);
    /* sizes from the quantile function through (0, 1 ms), (0.5, 2 ms),
     * (0.9, 3 ms), (0.99, 4 ms), (1, 100 ms): a mean of 2.585 ms */
    c.noise_rate = 50;
    const double q[5] = {0.001, 0.002, 0.003, 0.004, 0.1};
    memcpy(c.noise_q, q, sizeof q);
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) == 0);
    CHECK(o.interrupts > 800);
    double mean = o.noise_s / (double)o.interrupts;
    CHECK(mean > 0.75 * 0.002585 && mean < 1.25 * 0.002585);
    /* refused: a negative rate, sizes out of order */
    c.noise_rate = -1;
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
    CHECK(strstr(err.msg, "interruptions") != NULL);
    c.noise_rate = 1;
    c.noise_q[1] = 0.5;
    CHECK(sb_sim_run(&c, &r, 1, linear, NULL, NULL, NULL, &o, &err) ==
          SB_EINVAL);
}

int main(void)
{
    test_one_request();
    test_chunks();
    test_stall();
    test_preemption();
    test_closed();
    test_poisson();
    test_requests();
    test_refusals();
    test_request_file();
    test_noise();
    return sb_check_done();
}
