/*
 * test_fleet.c — the fleet's diagnosis: a host worse than its peers by
 * more than the floor and their spread is flagged, and no other; like
 * with like (a host of another class is not held against these); a
 * metric with fewer than three hosts says nothing; failed hosts are left
 * out; the link matrix names a slow host's row and column and a single
 * slow link; the round-robin rounds pair every two hosts exactly once;
 * a host's run as values (headline and sustained figure) and the median
 * over rounds; a host too unlike the rest to judge keeps the fleet from
 * being called healthy.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "solbench/fleet.h"
#include "solbench/output.h"

static sb_fleet_host H[8];
static sb_fleet_value V[64];
static size_t nv;

static void host(int i, const char *name, const char *cls)
{
    memset(&H[i], 0, sizeof H[i]);
    snprintf(H[i].name, sizeof H[i].name, "%s", name);
    snprintf(H[i].cls, sizeof H[i].cls, "%s", cls);
    H[i].ranks = 1;
}

static void value(int h, const char *metric, double x, bool higher_better)
{
    sb_fleet_value *v = &V[nv++];
    memset(v, 0, sizeof *v);
    v->host = h;
    snprintf(v->metric, sizeof v->metric, "%s", metric);
    v->value = x;
    v->higher_better = higher_better;
}

static void test_hosts(void)
{
    sb_fleet_rules r;
    sb_fleet_rules_default(&r);
    CHECK(r.floor_pct == 10 && r.latency_floor_pct == 25 && r.k_mad == 3 &&
          r.min_peers == 3);
    for (int i = 0; i < 5; i++)
        host(i, (const char *[]){"h0", "h1", "h2", "h3", "h4"}[i], "A");
    nv = 0;
    /* peak: h2 at 70 % of the others (within 2 % of each other) */
    double peak[5] = {100, 101, 70, 99, 100.5};
    /* latency, lower better: h4 30 % above (h1 20 %: under the latency
     * floor) */
    double lat[5] = {2.0, 2.4, 1.98, 2.01, 2.6};
    for (int i = 0; i < 5; i++) {
        value(i, "compute.peak GFLOPs", peak[i], true);
        value(i, "network.pingpong us", lat[i], false);
    }
    sb_fleet_flag *f = NULL;
    size_t n = 0;
    sb_err err = {0};
    CHECK(sb_fleet_diagnose(H, 5, V, nv, &r, &f, &n, &err) == 0);
    CHECK(n == 2);
    if (n == 2) {
        /* worst first */
        CHECK(f[0].host == 2 &&
              strcmp(f[0].metric, "compute.peak GFLOPs") == 0);
        CHECK_NEAR(f[0].median, 100, 1e-12);
        CHECK_NEAR(f[0].deviation_pct, -30, 1e-12);
        CHECK(f[0].peers == 5 && f[0].threshold_pct >= 10);
        CHECK(f[1].host == 4 && f[1].deviation_pct > 20);
    }
    free(f);

    /* better than the peers is not a fault; within the floor is not */
    nv = 0;
    double fast[5] = {100, 100, 140, 100, 92};
    for (int i = 0; i < 5; i++)
        value(i, "memory.read GBps", fast[i], true);
    CHECK(sb_fleet_diagnose(H, 5, V, nv, &r, &f, &n, &err) == 0);
    CHECK(n == 0 && f == NULL);

    /* a noisy fleet: the spread raises the bar above the floor */
    nv = 0;
    double noisy[5] = {100, 80, 120, 75, 125};
    for (int i = 0; i < 5; i++)
        value(i, "memory.read GBps", noisy[i], true);
    CHECK(sb_fleet_diagnose(H, 5, V, nv, &r, &f, &n, &err) == 0);
    CHECK(n == 0);

    /* like with like: h3 of class B is not held against class A, and
     * class B has too few hosts to judge anything */
    host(3, "h3", "B");
    nv = 0;
    double cls[5] = {100, 101, 99, 50, 100};
    for (int i = 0; i < 5; i++)
        value(i, "compute.peak GFLOPs", cls[i], true);
    CHECK(sb_fleet_diagnose(H, 5, V, nv, &r, &f, &n, &err) == 0);
    CHECK(n == 0);
    host(3, "h3", "A");

    /* a failed host is left out: its value (0) is neither judged nor
     * moves the median */
    H[1].failed = true;
    nv = 0;
    double fl[5] = {100, 0, 100, 60, 100};
    for (int i = 0; i < 5; i++)
        value(i, "compute.peak GFLOPs", fl[i], true);
    CHECK(sb_fleet_diagnose(H, 5, V, nv, &r, &f, &n, &err) == 0);
    CHECK(n == 1 && f && f[0].host == 3 && f[0].peers == 4);
    free(f);
    H[1].failed = false;

    /* two hosts: nothing to say which one is slow */
    nv = 0;
    value(0, "x", 100, true);
    value(1, "x", 10, true);
    CHECK(sb_fleet_diagnose(H, 2, V, nv, &r, &f, &n, &err) == 0);
    CHECK(n == 0);

    /* a value of a host that does not exist */
    nv = 0;
    value(7, "x", 1, true);
    CHECK(sb_fleet_diagnose(H, 5, V, nv, &r, &f, &n, &err) == SB_EINVAL);
}

/* 4 hosts, 1 GB/s links; host 2's links at a quarter: its row and
 * column slow, the host flagged for links.bw and named as the cause of
 * each of its links; then one slow cable between 0 and 1 alone: the two
 * links flagged, no host. */
static void test_links(void)
{
    enum { N = 4 };
    double bw[N * N], lat[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            bw[i * N + j] = i == j ? 0 : 1e9 * (1 + 0.01 * ((i + j) % 3));
            lat[i * N + j] = i == j ? 0 : 20e-6;
        }
    for (int j = 0; j < N; j++)
        if (j != 2) {
            bw[2 * N + j] = bw[j * N + 2] = 0.25e9;
            lat[2 * N + j] = lat[j * N + 2] = 80e-6;
        }
    for (int i = 0; i < N; i++)
        host(i, (const char *[]){"h0", "h1", "h2", "h3"}[i], "A");
    sb_fleet_value *v = NULL;
    size_t n = 0;
    sb_err err = {0};
    CHECK(sb_fleet_link_values(N, bw, lat, &v, &n, &err) == 0);
    CHECK(n == 2 * N);
    sb_fleet_rules r;
    sb_fleet_rules_default(&r);
    sb_fleet_flag *f = NULL;
    size_t nf = 0;
    CHECK(sb_fleet_diagnose(H, N, v, n, &r, &f, &nf, &err) == 0);
    int bw_flags = 0, lat_flags = 0;
    for (size_t k = 0; k < nf; k++) {
        CHECK(f[k].host == 2);
        bw_flags += strcmp(f[k].metric, "links.bw Bps") == 0;
        lat_flags += strcmp(f[k].metric, "links.latency s") == 0;
    }
    CHECK(bw_flags == 1 && lat_flags == 1);
    sb_fleet_link_flag *lf = NULL;
    size_t nl = 0;
    CHECK(sb_fleet_diagnose_links(N, bw, &r, f, nf, &lf, &nl, &err) == 0);
    CHECK(nl == 6); /* 2 -> 0, 1, 3 and back */
    for (size_t k = 0; k < nl; k++) {
        CHECK(lf[k].from == 2 || lf[k].to == 2);
        CHECK(lf[k].cause == 2);
        CHECK(lf[k].deviation_pct < -70);
    }
    free(lf);
    free(f);
    free(v);

    /* one slow cable: 0 <-> 1 at half; the ends' other links are fast */
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            bw[i * N + j] = i == j ? 0 : 1e9;
    bw[0 * N + 1] = bw[1 * N + 0] = 0.5e9;
    v = NULL;
    n = 0;
    CHECK(sb_fleet_link_values(N, bw, NULL, &v, &n, &err) == 0);
    CHECK(n == N);
    CHECK(sb_fleet_diagnose(H, N, v, n, &r, &f, &nf, &err) == 0);
    CHECK(nf == 0); /* each end's median: its fast links */
    CHECK(sb_fleet_diagnose_links(N, bw, &r, f, nf, &lf, &nl, &err) == 0);
    CHECK(nl == 2);
    for (size_t k = 0; k < nl; k++) {
        CHECK((lf[k].from == 0 && lf[k].to == 1) ||
              (lf[k].from == 1 && lf[k].to == 0));
        CHECK(lf[k].cause == -1);
        CHECK_NEAR(lf[k].deviation_pct, -50, 1e-9);
    }
    free(lf);
    free(f);
    free(v);
    /* unmeasured entries (0, NaN) are skipped, not slow */
    bw[0 * N + 1] = NAN;
    bw[1 * N + 0] = 0;
    CHECK(sb_fleet_diagnose_links(N, bw, &r, NULL, 0, &lf, &nl, &err) == 0);
    CHECK(nl == 0);
}

/* Every pair exactly once, disjoint pairs in a round, n - 1 rounds for
 * even n and n for odd (one idle each). */
static void test_rounds(void)
{
    for (int n = 1; n <= 17; n++) {
        int *p = NULL;
        sb_err err = {0};
        int rounds = -1;
        CHECK(sb_fleet_rounds(n, &p, &rounds, &err) == 0);
        CHECK(rounds == (n == 1 ? 0 : n % 2 ? n : n - 1));
        int *seen = calloc((size_t)n * n, sizeof *seen);
        for (int r = 0; r < rounds; r++) {
            int idle = 0;
            for (int h = 0; h < n; h++) {
                int q = p[r * n + h];
                if (q < 0) {
                    idle++;
                    continue;
                }
                CHECK(q != h && q < n && p[r * n + q] == h);
                seen[h * n + q]++;
            }
            CHECK(idle == n % 2);
        }
        bool once = true;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                once = once && seen[a * n + b] == (a != b);
        CHECK(once);
        free(seen);
        free(p);
    }
    int *p = NULL;
    sb_err err = {0};
    int rounds;
    CHECK(sb_fleet_rounds(0, &p, &rounds, &err) == SB_EINVAL);
    CHECK(sb_fleet_rounds(SB_FLEET_MAX_HOSTS + 1, &p, &rounds, &err) ==
          SB_EINVAL);
}

/* The report: a host of another fingerprint among three alike is not
 * judged, and the fleet is then not called healthy; the JSON says
 * which. */
static void test_report(void)
{
    sb_fleet_report r = {0};
    sb_fleet_rules_default(&r.rules);
    r.nhosts = 4;
    r.hosts = calloc(4, sizeof *r.hosts);
    for (int i = 0; i < 4; i++) {
        snprintf(r.hosts[i].name, sizeof r.hosts[i].name, "h%d", i);
        snprintf(r.hosts[i].cls, sizeof r.hosts[i].cls, "%s",
                 i == 3 ? "B" : "A");
    }
    r.nv = 4;
    r.v = calloc(4, sizeof *r.v);
    for (int i = 0; i < 4; i++) {
        r.v[i].host = i;
        snprintf(r.v[i].metric, sizeof r.v[i].metric, "compute.peak GFLOPs");
        r.v[i].value = 100;
        r.v[i].higher_better = true;
    }
    sb_err err = {0};
    CHECK(sb_fleet_analyse(&r, &err) == 0);
    CHECK(r.nflags == 0 && r.nlinks == 0);
    CHECK(!r.hosts[0].unjudged && r.hosts[3].unjudged);
    CHECK(sb_fleet_unhealthy(&r));
    /* the three alike alone: healthy */
    r.hosts[3].failed = true;
    CHECK(sb_fleet_analyse(&r, &err) == 0);
    CHECK(!r.hosts[3].unjudged && sb_fleet_unhealthy(&r)); /* failed */
    r.nhosts = 3;
    r.nv = 3;
    CHECK(sb_fleet_analyse(&r, &err) == 0);
    CHECK(!sb_fleet_unhealthy(&r));
    sb_fleet_report_free(&r);
}

/* A host's run as values: the headline at the median sample and the
 * sustained figure over the mean sample (a throttled run: samples of 1
 * ms with one of 21 ms, the mean twice the median); a result that failed
 * its check or was skipped gives none; the rounds' median a host and
 * metric. */
static void test_run_values(void)
{
    sb_run run;
    sb_run_init(&run);
    sb_result *r = sb_results_push(&run.results);
    sb_result_init(r, "compute.peak", "compute", "cpu");
    for (int i = 0; i < 19; i++)
        sb_result_add_sample(r, 1e-3);
    sb_result_add_sample(r, 21e-3);
    sb_result_finish_stats(r);
    sb_result_metric(r, "GFLOPs", 100, "GFLOP/s");
    r->valid = true;
    sb_result *bad = sb_results_push(&run.results);
    sb_result_init(bad, "memory.read", "memory", "cpu");
    sb_result_add_sample(bad, 1e-3);
    sb_result_finish_stats(bad);
    sb_result_metric(bad, "GBps", 50, "GB/s");
    bad->valid = false;
    sb_fleet_value *v = NULL;
    size_t n = 0, too_long = 9;
    sb_err err = {0};
    CHECK(sb_fleet_run_values(&run, 2, &v, &n, &too_long, &err) == 0);
    CHECK(n == 2 && too_long == 0);
    if (n == 2) {
        CHECK(v[0].host == 2 && v[0].higher_better);
        CHECK(strcmp(v[0].metric, "compute.peak GFLOPs") == 0);
        CHECK_NEAR(v[0].value, 100, 1e-12);
        CHECK(strcmp(v[1].metric, "compute.peak GFLOPs sustained") == 0);
        /* mean 2 ms, median 1 ms: half the rate sustained */
        CHECK_NEAR(v[1].value, 50, 1e-9);
    }
    free(v);
    /* three rounds of two hosts, interleaved: each host's median */
    sb_fleet_value r3[6];
    double x[6] = {100, 10, 70, 12, 102, 11};
    for (int k = 0; k < 6; k++) {
        memset(&r3[k], 0, sizeof r3[k]);
        r3[k].host = k % 2;
        snprintf(r3[k].metric, sizeof r3[k].metric, "compute.peak GFLOPs");
        r3[k].value = x[k];
        r3[k].higher_better = true;
    }
    n = 6;
    sb_fleet_median_rounds(r3, &n);
    CHECK(n == 2 && r3[0].host == 0 && r3[1].host == 1);
    CHECK_NEAR(r3[0].value, 100, 1e-12);
    CHECK_NEAR(r3[1].value, 11, 1e-12);
    sb_run_free(&run);
}

int main(void)
{
    test_run_values();
    test_report();
    test_hosts();
    test_links();
    test_rounds();
    return sb_check_done();
}
