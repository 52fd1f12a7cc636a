/*
 * test_predict_output.c — what predict says, held to what it computed:
 * MFU leads with the causal count and says when PaLM's passes the FLOPs
 * executed; an MoE served one request at a time is no slower than the
 * request's own prefill and decodes; a concurrency the KV cache cannot
 * hold is decoded at what it holds; nothing served is said, not printed
 * as 0 tokens/s and $0; a chip's price is its sheet's; a measured figure
 * is not compared once the settings changed the job it describes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "workload_fixtures.h"

static sb_prediction P; /* large: static */

/* The printed prediction, into buf. */
static const char *printed(const sb_prediction *p, char *buf, size_t len)
{
    memset(buf, 0, len);
    FILE *f = fmemopen(buf, len - 1, "w");
    CHECK(f != NULL);
    if (!f)
        return "";
    sb_predict_print(f, p);
    fclose(f);
    return buf;
}

static bool warned(const sb_prediction *p, const char *what)
{
    for (int i = 0; i < p->n_warnings; i++)
        if (strstr(p->warnings[i], what))
            return true;
    return false;
}

static char out[1 << 16];

static void test_mfu(void)
{
    const char *s[] = {"chips=128", "seq=262144", "context=16",
                       "fsdp=8",    "batch=64",   "microbatches=8"};
    CHECK(predict_on("llama3-8b", s, 6, "h100-sxm", &P) == 0);
    CHECK(P.mfu > 1 && P.mfu_causal < 1); /* PaLM's count passes 100 % */
    const char *t = printed(&P, out, sizeof out);
    const char *causal = strstr(t, "counting causal attention");
    const char *palm = strstr(t, "in PaLM's count");
    CHECK(causal && palm && causal < palm);
    CHECK(strstr(t, "no utilisation") != NULL);
    /* a short sequence: PaLM's count is under the executed FLOPs (remat
     * recomputes more than the mask hides), no such note */
    CHECK(predict_on("llama3-8b", NULL, 0, "h100-sxm", &P) == 0);
    CHECK(P.mfu < 1 &&
          strstr(printed(&P, out, sizeof out), "no utilisation") == NULL);
}

/* One request at a time, an MoE's served throughput is the request's own
 * (TTFT + output x TPOT for output tokens): a prompt's experts are read
 * once for the prompt, not again for every token of it spread over the
 * iterations. */
static void test_moe_alone(void)
{
    const char *s[] = {"concurrency=1"};
    CHECK(predict_on("mixtral-8x7b", s, 1, "h100-sxm", &P) == 0);
    double alone = P.w.output_len / P.request_s;
    CHECK(P.serve.tokens_per_s > 0.97 * alone &&
          P.serve.tokens_per_s < 1.03 * alone);
}

static void test_concurrency_that_cannot_fit(void)
{
    /* the scheduler's cap raised past what the KV cache holds */
    const char *s[] = {"concurrency=100000", "max_seqs=100000"};
    CHECK(predict_on("llama3-70b", s, 2, "h200-sxm", &P) == 0);
    CHECK(P.decode_batch > 256 && P.decode_batch < 2000);
    CHECK_NEAR(P.decode_tokens_per_s, P.decode_batch / P.tpot_s, 1e-9);
    CHECK(P.mem.fits);
    const char *t = printed(&P, out, sizeof out);
    CHECK(strstr(t, "all the KV cache holds") != NULL);
    CHECK(strstr(t, "(100000 requests") == NULL);
    /* at the default cap (256 sequences, vLLM's), the cap */
    CHECK(predict_on("llama3-70b", s, 1, "h200-sxm", &P) == 0);
    CHECK(P.decode_batch == 256 && P.serve.batch == 256);
    t = printed(&P, out, sizeof out);
    CHECK(strstr(t, "as many as max_seqs runs") != NULL);
    CHECK(strstr(t, "waiting for a place: a replica runs 256 sequences") !=
          NULL);
    /* a concurrency that fits is decoded whole */
    CHECK(predict_on("llama3-70b", NULL, 0, "h200-sxm", &P) == 0);
    CHECK(P.decode_batch == 64);
}

static void test_nothing_served(void)
{
    const char *s[] = {"tensor=1", "chips=1"};
    CHECK(predict_on("llama3-70b", s, 2, "h200-sxm", &P) == 0);
    CHECK(!P.mem.fits && P.serve.tokens_per_s == 0);
    const char *t = printed(&P, out, sizeof out);
    CHECK(strstr(t, "served           nothing") != NULL);
    CHECK(strstr(t, "cost             n/a: nothing is served") != NULL);
    CHECK(strstr(t, "$0 ") == NULL && strstr(t, " 0 output tokens/s") == NULL);
}

/* The price per chip-hour is the hardware sheet's: another chip set on
 * the command line brings its own, unless a price is set with it. */
static void test_price(void)
{
    CHECK(predict_on("llama3-70b", NULL, 0, "h200-sxm", &P) == 0);
    CHECK_NEAR(P.price_chip_hour, 3.5, 1e-12);
    const char *h100[] = {"hw=h100-sxm"};
    CHECK(predict_on("llama3-70b", h100, 1, "h100-sxm", &P) == 0);
    CHECK_NEAR(P.price_chip_hour, 3.0, 1e-12);
    const char *v5e[] = {"hw=tpu-v5e"};
    CHECK(predict_on("llama3-70b", v5e, 1, "tpu-v5e", &P) == 0);
    CHECK_NEAR(P.price_chip_hour, 1.2, 1e-12);
    const char *own[] = {"hw=tpu-v5e", "price=2"};
    CHECK(predict_on("llama3-70b", own, 2, "tpu-v5e", &P) == 0);
    CHECK_NEAR(P.price_chip_hour, 2.0, 1e-12);
    /* a workload's own price for its own chip stays when other settings
     * change */
    const char *keep[] = {"price=5", "concurrency=8"};
    CHECK(predict_on("llama3-70b", keep, 2, "h200-sxm", &P) == 0);
    CHECK_NEAR(P.price_chip_hour, 5.0, 1e-12);
    sb_workload w;
    sb_err err = {0};
    const char *file_price[] = {"hardware.price_per_chip_hour=9"};
    CHECK(load("llama3-70b", file_price, 1, &w, &err) == 0);
    CHECK_NEAR(w.price_chip_hour, 9.0, 1e-12);
}

/* A published figure is compared with the job it was measured on only. */
static void test_measured(void)
{
    CHECK(predict_on("llama2-70b-mlperf-h200", NULL, 0, "h200-sxm", &P) == 0);
    CHECK(P.vs_measured > 0);
    const char *ov[] = {"overlap=\"full\""}; /* not the job */
    CHECK(predict_on("llama2-70b-mlperf-h200", ov, 1, "h200-sxm", &P) == 0);
    CHECK(P.vs_measured > 0 && !warned(&P, "not compared"));
    /* what only the simulator reads, and a number written otherwise */
    const char *sim[] = {"requests=50", "seed=2", "scheduler=vllm",
                         "job.max_batched_tokens=8192.0"};
    CHECK(predict_on("llama2-70b-mlperf-h200", sim, 4, "h200-sxm", &P) == 0);
    CHECK(P.vs_measured > 0 && !warned(&P, "not compared"));
    const char *conc[] = {"concurrency=16"};
    CHECK(predict_on("llama2-70b-mlperf-h200", conc, 1, "h200-sxm", &P) == 0);
    CHECK(P.vs_measured == 0 && warned(&P, "not compared"));
    const char *hw[] = {"hw=b200"};
    CHECK(predict_on("llama2-70b-mlperf-h200", hw, 1, "b200", &P) == 0);
    CHECK(P.vs_measured == 0 && warned(&P, "not compared"));
    /* a benchmark whose requests the job names (a closed loop of 50,
     * 500 requests): compared with the simulator's run of them, which
     * prefills each 5000-token prompt in one iteration while the others
     * wait, below the steady state that spreads every prompt evenly */
    CHECK(predict_on("llama3.3-70b-nim-h100", NULL, 0, "h100-sxm", &P) == 0);
    CHECK(P.sim.requests == 500 && P.sim_closed == 50);
    CHECK_NEAR(P.vs_measured, P.sim.tokens_per_s / 814.37, 1e-12);
    CHECK(P.sim.tokens_per_s < 0.9 * P.serve.tokens_per_s);
    const char *steady[] = {"requests=0"};
    CHECK(predict_on("llama3.3-70b-nim-h100", steady, 1, "h100-sxm", &P) == 0);
    CHECK(P.sim.requests == 0 && !warned(&P, "not compared"));
    CHECK_NEAR(P.vs_measured, P.serve.tokens_per_s / 814.37, 1e-12);
    /* vLLM's latency benchmark: one batch of 8, all at once: 8 x 128
     * tokens over the first prefill and 127 decode steps */
    CHECK(predict_on("vllm-llama3.1-8b-h200-latency", NULL, 0, "h200-sxm",
                     &P) == 0);
    CHECK(P.sim.requests == 8);
    CHECK_NEAR(P.sim.tokens_per_s, 1024 / P.sim.e2e.p50,
               1e-9 * P.sim.tokens_per_s);
    CHECK_NEAR(P.vs_measured, P.sim.tokens_per_s / 1228.67, 1e-12);
}

int main(void)
{
    test_mfu();
    test_moe_alone();
    test_concurrency_that_cannot_fit();
    test_nothing_served();
    test_price();
    test_measured();
    return sb_check_done();
}
