/*
 * test_refmodel.c — the reference decoder of solbench validate: its logits
 * against the double-precision model (dense, MoE with dense layers between,
 * each GEMM library, bf16 where a library runs it), and a check that tells
 * a wrong model apart; configurations checked; a ragged batch and a chunked
 * prefill computing what one sequence at a time computes; the KV cache kept per
 * layer across decode steps; phase timers; bad input refused (configuration,
 * forward arguments, a model too large, before allocating); the weights and
 * bytes of an iteration; the serving loop's counts; and its trace read back by
 * the trace reader.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "backend/cpu/cpu_gemm.h"
#include "bench/llm/serve.h"
#include "check.h"
#include "solbench/trace.h"
#include "solbench/util.h"

static sb_ref_config tiny(bool moe)
{
    sb_ref_config c = {.layers = 3,
                       .d = 32,
                       .hq = 4,
                       .hkv = 2,
                       .hd = 8,
                       .ffn = 48,
                       .vocab = 64,
                       .page = 4,
                       .rope_theta = 10000.0,
                       .seed = 1,
                       .lib = -1};
    if (moe) {
        /* layers 1 and 2 MoE after a dense layer 0 */
        c.experts = 4;
        c.top_k = 2;
        c.expert_ffn = 24;
        c.moe_first = 1;
        c.moe_every = 1;
    }
    return c;
}

static void test_config(void)
{
    sb_err err = {0};
    /* validate-dense's sizes (llm.*'s defaults) */
    sb_ref_config c = {.layers = 12,
                       .d = 768,
                       .hq = 12,
                       .hkv = 4,
                       .hd = 64,
                       .ffn = 2048,
                       .vocab = 32000,
                       .page = 16};
    CHECK(sb_ref_config_check(&c, &err) == 0);
    /* 12 x (768 x 1280 + 768 x 768 + 3 x 768 x 2048) + 2 x 32000 x 768
     * parameters, fp32, and the norms */
    double params =
        12.0 * (768 * 1280 + 768 * 768 + 3.0 * 768 * 2048) + 2.0 * 32000 * 768;
    CHECK_NEAR(sb_ref_weight_bytes(&c), 4 * params + 4.0 * 25 * 768, 1e-12);
    CHECK_NEAR(sb_ref_matmul_flops_per_token(&c),
               2.0 * 12 * (768 * 1280 + 768 * 768 + 3.0 * 768 * 2048), 1e-12);
    /* bf16 halves the matrices, not the fp32 norms */
    c.bf16 = true;
    CHECK_NEAR(sb_ref_weight_bytes(&c), 2 * params + 4.0 * 25 * 768, 1e-12);
    /* MoE every other layer from layer 1: 1, 3, 5 of 6 */
    c = tiny(true);
    c.layers = 6;
    c.moe_every = 2;
    for (int l = 0; l < 6; l++)
        CHECK(sb_ref_layer_is_moe(&c, l) == (l % 2 == 1));
    CHECK(sb_ref_config_check(&c, &err) == 0);
    c = tiny(false);
    c.hkv = 3;
    CHECK(sb_ref_config_check(&c, &err) == SB_EINVAL &&
          strstr(err.msg, "kv_heads = 3"));
    c = tiny(false);
    c.hd = 7;
    CHECK(sb_ref_config_check(&c, &err) == SB_EINVAL &&
          strstr(err.msg, "even"));
    c = tiny(true);
    c.top_k = 5;
    CHECK(sb_ref_config_check(&c, &err) == SB_EINVAL &&
          strstr(err.msg, "top_k"));
    c = tiny(true);
    c.ffn = 0; /* layer 0 is dense and needs one */
    CHECK(sb_ref_config_check(&c, &err) == SB_EINVAL && strstr(err.msg, "ffn"));
    c = tiny(false);
    c.vocab = SB_REF_MAX_VOCAB + 1;
    CHECK(sb_ref_config_check(&c, &err) == SB_EINVAL &&
          strstr(err.msg, "vocab"));
}

/* The fast path against the double model on each library (and bf16 where
 * one runs it); a check that tells another model apart. */
static void test_logits(bool moe)
{
    for (int bf = 0; bf < 2; bf++)
        for (int lib = 0; lib < SB_GEMM_NLIBS; lib++) {
            int dt = bf ? SB_GEMM_BF16 : SB_GEMM_F32;
            if (!sb_gemm_lib_supports(lib, dt, NULL, 0)) {
                printf("note: %s does not run %s here: not checked\n",
                       sb_gemm_lib_name(lib), bf ? "bf16" : "fp32");
                continue;
            }
            sb_ref_config c = tiny(moe);
            c.lib = lib;
            c.bf16 = bf;
            sb_ref_model *m = NULL;
            sb_err err = {0};
            CHECK(sb_ref_create(&c, 3, 64, 64, 2, &m, &err) == 0);
            if (!m)
                continue;
            double rel = 1;
            /* a prompt over two pages and steps across a page boundary */
            CHECK(sb_ref_verify(m, 1, 7, 3, 42, &rel, &err) == 0);
            CHECK(rel <= sb_ref_tol(c.bf16));
            /* a prompt whose expert groups exceed decode size: the experts
             * spread over the threads */
            double rel2 = 1;
            CHECK(sb_ref_verify(m, 2, 48, 1, 43, &rel2, &err) == 0);
            CHECK(rel2 <= sb_ref_tol(c.bf16));
            rel = fmax(rel, rel2);
            CHECK(sb_ref_len(m, 1) == 0);
            if (rel > sb_ref_tol(c.bf16))
                fprintf(stderr, "%s %s %s: logits off by %g\n",
                        moe ? "moe" : "dense", sb_gemm_lib_name(lib),
                        bf ? "bf16" : "fp32", rel);
            /* phases timed: the dense model has no router or experts */
            double t[SB_REF_NPH];
            sb_ref_times(m, t);
            CHECK(t[SB_REF_QKV] > 0 && t[SB_REF_ATTN] > 0 &&
                  t[SB_REF_OPROJ] > 0 && t[SB_REF_MLP] > 0 &&
                  t[SB_REF_ELEM] > 0 && t[SB_REF_LMHEAD] > 0 &&
                  t[SB_REF_EMBED] > 0);
            CHECK(moe ? t[SB_REF_ROUTER] > 0 && t[SB_REF_EXPERTS] > 0
                      : t[SB_REF_ROUTER] == 0 && t[SB_REF_EXPERTS] == 0);
            sb_ref_times_reset(m);
            sb_ref_times(m, t);
            CHECK(t[SB_REF_MLP] == 0);

            /* another model (another seed) is told apart */
            sb_ref_config c2 = c;
            c2.seed = 2;
            sb_ref_model *m2 = NULL;
            CHECK(sb_ref_create(&c2, 1, 32, 24, 2, &m2, &err) == 0);
            int32_t tok[4] = {3, 9, 27, 50}, next;
            float lg[64];
            double ref[4 * 64];
            int slot = 0, n = 4;
            CHECK(sb_ref_forward(m, 1, &slot, &n, tok, lg, &next, &err) == 0);
            CHECK(sb_ref_forward_double(m2, 4, tok, ref, &err) == 0);
            double worst = 0;
            for (int j = 0; j < 64; j++)
                worst = fmax(worst, fabs(lg[j] - ref[3 * 64 + j]));
            CHECK(worst > 0.1);
            /* and the same model matches it */
            CHECK(sb_ref_forward_double(m, 4, tok, ref, &err) == 0);
            worst = 0;
            for (int j = 0; j < 64; j++)
                worst = fmax(worst, fabs(lg[j] - ref[3 * 64 + j]));
            CHECK(worst < 0.05);
            sb_ref_free(m2);
            sb_ref_free(m);
        }
}

/* One ragged iteration computes what each sequence alone computes, and a
 * prompt in two chunks what it computes whole. */
static void test_ragged(void)
{
    sb_ref_config c = tiny(true);
    c.lib = SB_GEMM_OPENBLAS;
    sb_ref_model *m = NULL;
    sb_err err = {0};
    CHECK(sb_ref_create(&c, 3, 32, 24, 2, &m, &err) == 0);
    if (!m)
        return;
    int32_t tok[12];
    for (int i = 0; i < 12; i++)
        tok[i] = (i * 37 + 5) % 64;
    int slots[3] = {0, 1, 2}, nt[3] = {5, 1, 6};
    float all[3 * 64], one[64];
    int32_t next[3], n1;
    CHECK(sb_ref_forward(m, 3, slots, nt, tok, all, next, &err) == 0);
    CHECK(sb_ref_len(m, 0) == 5 && sb_ref_len(m, 1) == 1 &&
          sb_ref_len(m, 2) == 6);
    int off = 0;
    double worst = 0;
    for (int i = 0; i < 3; i++) {
        sb_ref_set_len(m, 0, 0);
        CHECK(sb_ref_forward(m, 1, &slots[0], &nt[i], tok + off, one, &n1,
                             &err) == 0);
        for (int j = 0; j < 64; j++)
            worst = fmax(worst, fabs(one[j] - all[i * 64 + j]));
        CHECK(n1 == next[i]);
        off += nt[i];
    }
    CHECK(worst < 1e-4);
    /* chunked prefill: 6 tokens as 4 + 2 */
    sb_ref_set_len(m, 0, 0);
    int four = 4, two = 2;
    CHECK(sb_ref_forward(m, 1, &slots[0], &four, tok + 6, NULL, &n1, &err) ==
          0);
    CHECK(sb_ref_forward(m, 1, &slots[0], &two, tok + 10, one, &n1, &err) == 0);
    worst = 0;
    for (int j = 0; j < 64; j++)
        worst = fmax(worst, fabs(one[j] - all[2 * 64 + j]));
    CHECK(worst < 1e-4);
    /* bad arguments: nothing changes */
    int bad_slot[2] = {0, 0}, ones[2] = {1, 1};
    sb_ref_set_len(m, 0, 3);
    CHECK(sb_ref_forward(m, 2, bad_slot, ones, tok, NULL, next, &err) ==
              SB_EINVAL &&
          strstr(err.msg, "twice"));
    int s9 = 9;
    CHECK(sb_ref_forward(m, 1, &s9, ones, tok, NULL, next, &err) == SB_EINVAL &&
          strstr(err.msg, "slot 9"));
    int big = 30;
    CHECK(sb_ref_forward(m, 1, &slots[0], &big, tok, NULL, next, &err) ==
              SB_EINVAL &&
          strstr(err.msg, "more than its 32"));
    int32_t badtok = 64;
    CHECK(sb_ref_forward(m, 1, &slots[0], ones, &badtok, NULL, next, &err) ==
              SB_EINVAL &&
          strstr(err.msg, "token 0 = 64"));
    int many[3] = {10, 10, 10};
    sb_ref_set_len(m, 0, 0);
    CHECK(sb_ref_forward(m, 3, slots, many, tok, NULL, next, &err) ==
              SB_EINVAL &&
          strstr(err.msg, "more than 24 tokens"));
    CHECK(sb_ref_len(m, 0) == 0 && sb_ref_len(m, 2) == 6);
    sb_ref_free(m);
}

static void test_limits(void)
{
    sb_err err = {0};
    sb_ref_model *m = NULL;
    /* 2 x 1M x 65536 fp32 embedding and head alone: 0.5 TB, refused with
     * the size before anything is allocated */
    sb_ref_config c = tiny(false);
    c.vocab = SB_REF_MAX_VOCAB;
    c.d = 65536;
    c.hq = 1024;
    c.hkv = 1024;
    c.hd = 64;
    CHECK(sb_ref_create(&c, 1, 16, 16, 1, &m, &err) == SB_ENOMEM);
    CHECK(m == NULL && strstr(err.msg, "needs") && strstr(err.msg, "GB"));
    c = tiny(false);
    CHECK(sb_ref_create(&c, 0, 16, 16, 1, &m, &err) == SB_EINVAL &&
          strstr(err.msg, "sequences"));
    CHECK(sb_ref_create(&c, 1, 16, 0, 1, &m, &err) == SB_EINVAL);
    /* footprint: weights, the KV cache of every layer and slot */
    double kv = 2.0 * 4 * c.layers * 3 * (32 / c.page) * c.page * c.hkv * c.hd;
    CHECK(sb_ref_footprint(&c, 3, 32, 1) - sb_ref_footprint(&c, 0, 32, 1) >=
          kv - 1);
}

/* Bytes and FLOPs of one iteration, as the decode benchmark reports. */
static void test_work(void)
{
    sb_llm_shape s;
    memset(&s, 0, sizeof s);
    s.c = tiny(true);
    s.kind = 1;
    s.batch = 1;
    int len = 10;
    s.len = &len;
    s.total = 10;
    double wb, kv, fl;
    sb_llm_work(&s, &wb, &kv, &fl);
    const sb_ref_config *c = &s.c;
    double att = (double)(c->hq + 2 * c->hkv) * c->hd * c->d +
                 (double)c->hq * c->hd * c->d;
    /* one token reads top_k of the experts of each MoE layer */
    double want = 4.0 * (c->vocab * c->d + 3 * att + 3.0 * c->d * c->ffn +
                         2 * 2.0 * 3.0 * c->d * c->expert_ffn) +
                  2 * 4.0 * c->experts * c->d;
    CHECK_NEAR(wb, want, 1e-12);
    CHECK_NEAR(kv, 2.0 * 4 * c->layers * c->hkv * c->hd * 10, 1e-12);
    CHECK_NEAR(fl, sb_ref_matmul_flops_per_token(c) + 2.0 * c->d * c->vocab,
               1e-12);
    int lens[64];
    int mx = sb_llm_lengths(64, 100, true, 3, lens);
    double sum = 0;
    int lo = 1000;
    for (int i = 0; i < 64; i++) {
        sum += lens[i];
        lo = lens[i] < lo ? lens[i] : lo;
    }
    CHECK(lo >= 50 && mx <= 150 && fabs(sum / 64 - 100) < 12);
    CHECK(sb_llm_lengths(4, 7, false, 3, lens) == 7 && lens[3] == 7);
}

static void test_serve(void)
{
    sb_ref_config c = tiny(false);
    sb_ref_model *m = NULL;
    sb_err err = {0};
    CHECK(sb_ref_create(&c, 2, 40, 40, 2, &m, &err) == 0);
    if (!m)
        return;
    static sb_ref_event ev[20000];
    sb_ref_record(m, ev, 20000);
    sb_serve_opts o = {.concurrency = 2,
                       .requests = 5,
                       .prompt = 6,
                       .output = 4,
                       .ragged = true,
                       .seed = 3,
                       .max_tokens = 40,
                       .max_context = 40};
    sb_serve_stats st;
    CHECK(sb_serve_run(m, &o, &st, &err) == 0);
    int plen[5], olen[5];
    sb_llm_lengths(5, 6, true, 3, plen);
    sb_llm_lengths(5, 4, true, 8, olen);
    double want_out = 0, want_pre = 0;
    for (int i = 0; i < 5; i++)
        want_out += olen[i], want_pre += plen[i];
    CHECK(st.requests == 5 && st.tokens == want_out &&
          st.prefill_tokens == want_pre);
    CHECK(st.tpot.p50 <= st.tpot.p90 && st.tpot.p90 <= st.tpot.p99);
    CHECK(st.ttft.n == 3); /* the requests that joined a running batch */
    CHECK(st.latency.n == 5);
    CHECK(st.latency.mean >= st.ttft.mean && st.wall_s > 0 &&
          st.tokens_per_s > 0);
    CHECK(st.iterations >= 6); /* at least the longest output, twice over */
    /* every slot is empty at the end */
    CHECK(sb_ref_len(m, 0) == 0 && sb_ref_len(m, 1) == 0);
    /* the trace, read back: one step per iteration, the matmuls placed */
    int n = sb_ref_n_events(m);
    CHECK(n > st.iterations * c.layers * 5);
    json_t *tr = sb_serve_trace(m, ev, n, st.t_start, "test");
    char path[] = "/tmp/solbench-refmodel-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        CHECK(json_dump_file(tr, path, JSON_COMPACT) == 0);
        sb_trace t;
        sb_trace_init(&t);
        CHECK(sb_trace_read(path, &t, &err) == 0);
        sb_ceilings ce;
        memset(&ce, 0, sizeof ce);
        sb_ceil_set(&ce, "peak.fp32", 1e11, "test");
        sb_ceil_set(&ce, "bw.read", 1e10, "test");
        sb_tr_analysis a;
        CHECK(sb_trace_analyze(&t, &ce, &a, &err) == 0);
        CHECK(a.n_steps == st.iterations);
        double mm = 0;
        for (size_t i = 0; i < a.nrows; i++)
            if (strcmp(a.rows[i].name, "aten::mm") == 0)
                mm += a.rows[i].flops;
        CHECK(mm > 0);
        sb_tr_analysis_free(&a);
        sb_trace_free(&t);
        unlink(path);
    }
    json_decref(tr);
    /* fewer requests than slots */
    o.requests = 1;
    CHECK(sb_serve_run(m, &o, &st, &err) == SB_EINVAL);
    /* a request longer than a slot */
    o.requests = 2;
    o.prompt = 38;
    o.ragged = false;
    CHECK(sb_serve_run(m, &o, &st, &err) == SB_EINVAL &&
          strstr(err.msg, "exceeds"));
    sb_ref_record(m, NULL, 0);
    sb_ref_free(m);
}

int main(void)
{
    sb_threads_setup(2);
    test_config();
    test_logits(false);
    test_logits(true);
    test_ragged();
    test_limits();
    test_work();
    test_serve();
    return sb_check_done();
}
