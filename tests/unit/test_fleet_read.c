/*
 * test_fleet_read.c — a fleet run read back and judged again: each host
 * against its own figures in a baseline fleet (the floor, or the
 * baseline's own spread, whichever is larger; like with like by name and
 * class; a figure, host or class not in the baseline is not judged; a
 * failed host neither); a report written as JSON and read back gives
 * the same hosts, figures, links, collectives, rules and diagnosis;
 * documents that are not a fleet run's are refused with the JSON path
 * named and nothing leaked; the two-level collective model and the
 * per-level figures a fleet's links and in-host all-reduce give; fleet
 * runs in the store by id, prefix, "last" and baseline name.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "check.h"
#include "solbench/fleet.h"
#include "solbench/netmodel.h"
#include "solbench/store.h"

#define MiB 1048576.0

static void set_host(sb_fleet_host *h, const char *name, const char *cls,
                     int ranks)
{
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    snprintf(h->cls, sizeof h->cls, "%s", cls);
    h->ranks = ranks;
}

static void set_value(sb_fleet_value *v, size_t *nv, int h, const char *metric,
                      double x, bool higher_better)
{
    sb_fleet_value *e = &v[(*nv)++];
    memset(e, 0, sizeof *e);
    e->host = h;
    snprintf(e->metric, sizeof e->metric, "%s", metric);
    e->value = x;
    e->higher_better = higher_better;
}

/* The flag of host h and metric m among f[0..n), NULL when none. */
static const sb_fleet_flag *find_flag(const sb_fleet_flag *f, size_t n, int h,
                                      const char *m)
{
    for (size_t k = 0; k < n; k++)
        if (f[k].host == h && strcmp(f[k].metric, m) == 0)
            return &f[k];
    return NULL;
}

static size_t flags_of_host(const sb_fleet_flag *f, size_t n, int h)
{
    size_t c = 0;
    for (size_t k = 0; k < n; k++)
        c += f[k].host == h;
    return c;
}

/* ---- against a baseline fleet ------------------------------------------- */

/* Four hosts of class A, now and in the baseline:
 *  "a GBps": baseline 100 101 100 99 (spread 1.4826 x 0.5 %: the floor,
 *            10 %, is the bar); now host 2 at 70: -30 %, flagged.
 *  "b GBps": baseline 96 104 96 104: the MAD is 4 about the median 100,
 *            the bar 3 x 1.4826 x 4 % = 17.7912 % (above the floor);
 *            host 1 now 83.2 (-20 % of its 104: flagged), host 2 now
 *            81.6 (-15 % of its 96: under the bar, not flagged).
 *  "lat s" (lower is better): baseline 2 everywhere (latency floor
 *            25 %); host 3 now 2.8 (+40 %: flagged), host 0 now 2.4
 *            (+20 %: not flagged).
 *  "d GBps": only now (host 2 at 1 % of the others): not in the
 *            baseline, not judged. */
static const double A_BASE[4] = {100, 101, 100, 99},
                    A_NOW[4] = {100, 101, 70, 99};
static const double B_BASE[4] = {96, 104, 96, 104},
                    B_NOW[4] = {96, 104 * 0.8, 96 * 0.85, 104};
static const double L_BASE[4] = {2, 2, 2, 2}, L_NOW[4] = {2.4, 2, 2, 2.8};
static const double D_NOW[4] = {100, 100, 1, 100};
#define B_BAR (3 * 1.4826 * 4.0)

static void baseline_fleet(sb_fleet_host *bh, sb_fleet_value *bv, size_t *nbv)
{
    const char *names[4] = {"h0", "h1", "h2", "h3"};
    *nbv = 0;
    for (int i = 0; i < 4; i++)
        set_host(&bh[i], names[i], "A", 1);
    for (int i = 0; i < 4; i++) {
        set_value(bv, nbv, i, "a GBps", A_BASE[i], true);
        set_value(bv, nbv, i, "b GBps", B_BASE[i], true);
        set_value(bv, nbv, i, "lat s", L_BASE[i], false);
    }
}

static void current_fleet(sb_fleet_host *h, sb_fleet_value *v, size_t *nv)
{
    const char *names[4] = {"h0", "h1", "h2", "h3"};
    *nv = 0;
    for (int i = 0; i < 4; i++)
        set_host(&h[i], names[i], "A", 1);
    /* metric by metric, hosts interleaved the other way round from the
     * baseline's order: the look-up must not depend on the order */
    for (int i = 3; i >= 0; i--)
        set_value(v, nv, i, "lat s", L_NOW[i], false);
    for (int i = 0; i < 4; i++) {
        set_value(v, nv, i, "a GBps", A_NOW[i], true);
        set_value(v, nv, i, "b GBps", B_NOW[i], true);
        set_value(v, nv, i, "d GBps", D_NOW[i], true);
    }
}

static void test_baseline(void)
{
    sb_fleet_host H[4], BH[4];
    sb_fleet_value V[32], BV[32];
    size_t nv, nbv;
    sb_fleet_rules r;
    sb_fleet_rules_default(&r);
    sb_err err = {0};
    current_fleet(H, V, &nv);
    baseline_fleet(BH, BV, &nbv);

    /* one flag there already (a peer flag), worse than two of the new */
    sb_fleet_flag *f = malloc(sizeof *f);
    size_t n = 1;
    if (!f) {
        CHECK(f != NULL);
        return;
    }
    memset(f, 0, sizeof *f);
    f->host = 0;
    snprintf(f->metric, sizeof f->metric, "peer GBps");
    f->value = 65;
    f->median = 100;
    f->deviation_pct = -35;
    f->threshold_pct = 10;
    f->peers = 4;
    CHECK(sb_fleet_diagnose_baseline(H, 4, V, nv, BH, 4, BV, nbv, &r, &f, &n,
                                     &err) == 0);
    /* h3 lat +40, the existing -35, h2 a -30, h1 b -20: worst first */
    CHECK(n == 4);
    if (n == 4) {
        CHECK(f[0].host == 3 && strcmp(f[0].metric, "lat s") == 0);
        CHECK(f[1].host == 0 && strcmp(f[1].metric, "peer GBps") == 0 &&
              !f[1].vs_baseline && f[1].peers == 4);
        CHECK_NEAR(f[1].deviation_pct, -35, 1e-12);
        CHECK(f[2].host == 2 && strcmp(f[2].metric, "a GBps") == 0);
        CHECK(f[3].host == 1 && strcmp(f[3].metric, "b GBps") == 0);
    }
    const sb_fleet_flag *a = find_flag(f, n, 2, "a GBps");
    CHECK(a != NULL);
    if (a) {
        CHECK(a->vs_baseline && a->peers == 1);
        CHECK_NEAR(a->value, 70, 1e-12);
        CHECK_NEAR(a->median, 100, 1e-12); /* h2's own baseline figure */
        CHECK_NEAR(a->deviation_pct, -30, 1e-9);
        CHECK_NEAR(a->threshold_pct, 10, 1e-12); /* the floor */
    }
    const sb_fleet_flag *b = find_flag(f, n, 1, "b GBps");
    CHECK(b != NULL);
    if (b) {
        CHECK(b->vs_baseline && b->peers == 1);
        CHECK_NEAR(b->median, 104, 1e-12);
        CHECK_NEAR(b->deviation_pct, -20, 1e-9);
        /* the baseline's own spread: above the floor */
        CHECK_NEAR(b->threshold_pct, B_BAR, 1e-9);
        CHECK(b->threshold_pct > 15);
    }
    /* h2's -15 % in b is under that bar */
    CHECK(find_flag(f, n, 2, "b GBps") == NULL);
    const sb_fleet_flag *l = find_flag(f, n, 3, "lat s");
    CHECK(l != NULL);
    if (l) {
        CHECK(l->vs_baseline && l->peers == 1);
        CHECK_NEAR(l->median, 2, 1e-12);
        CHECK_NEAR(l->deviation_pct, 40, 1e-9);
        CHECK_NEAR(l->threshold_pct, 25, 1e-12); /* the latency floor */
    }
    /* +20 % latency is under the latency floor */
    CHECK(find_flag(f, n, 0, "lat s") == NULL);
    /* d is not in the baseline */
    CHECK(find_flag(f, n, 2, "d GBps") == NULL);
    free(f);

    /* from nothing: *out NULL, the three flags */
    f = NULL;
    n = 0;
    CHECK(sb_fleet_diagnose_baseline(H, 4, V, nv, BH, 4, BV, nbv, &r, &f, &n,
                                     &err) == 0);
    CHECK(n == 3 && f != NULL);
    free(f);

    /* the same host is the one of the same name and class: host 2 of
     * class B in the baseline is another host (and the baseline's class
     * A is 3 hosts: b's spread 96 104 104 has a MAD of 0, the bar the
     * floor, h1 still flagged) */
    set_host(&BH[2], "h2", "B", 1);
    f = NULL;
    n = 0;
    CHECK(sb_fleet_diagnose_baseline(H, 4, V, nv, BH, 4, BV, nbv, &r, &f, &n,
                                     &err) == 0);
    CHECK(flags_of_host(f, n, 2) == 0);
    CHECK(n == 2 && find_flag(f, n, 3, "lat s") &&
          find_flag(f, n, 1, "b GBps"));
    const sb_fleet_flag *b2 = find_flag(f, n, 1, "b GBps");
    if (b2)
        CHECK_NEAR(b2->threshold_pct, 10, 1e-12);
    free(f);

    /* a host absent from the baseline (another name there) */
    set_host(&BH[2], "h2-old", "A", 1);
    f = NULL;
    n = 0;
    CHECK(sb_fleet_diagnose_baseline(H, 4, V, nv, BH, 4, BV, nbv, &r, &f, &n,
                                     &err) == 0);
    CHECK(flags_of_host(f, n, 2) == 0);
    CHECK(n == 2);
    free(f);
    set_host(&BH[2], "h2", "A", 1);

    /* a host that failed now is not compared */
    H[2].failed = true;
    f = NULL;
    n = 0;
    CHECK(sb_fleet_diagnose_baseline(H, 4, V, nv, BH, 4, BV, nbv, &r, &f, &n,
                                     &err) == 0);
    CHECK(flags_of_host(f, n, 2) == 0);
    CHECK(n == 2);
    free(f);
    H[2].failed = false;

    /* nor one that failed in the baseline */
    BH[2].failed = true;
    f = NULL;
    n = 0;
    CHECK(sb_fleet_diagnose_baseline(H, 4, V, nv, BH, 4, BV, nbv, &r, &f, &n,
                                     &err) == 0);
    CHECK(flags_of_host(f, n, 2) == 0);
    free(f);
    BH[2].failed = false;

    /* a lower-is-better figure that rose by 40 % and one by 20 %: only
     * the first, and nothing more */
    {
        sb_fleet_value v2[4], b2v[4];
        size_t n2 = 0, nb2 = 0;
        for (int i = 0; i < 4; i++) {
            set_value(b2v, &nb2, i, "net.lat us", 5, false);
            set_value(v2, &n2, i, "net.lat us",
                      i == 1   ? 7
                      : i == 2 ? 6
                               : 5,
                      false);
        }
        f = NULL;
        n = 0;
        CHECK(sb_fleet_diagnose_baseline(H, 4, v2, n2, BH, 4, b2v, nb2, &r, &f,
                                         &n, &err) == 0);
        CHECK(n == 1 && f && f[0].host == 1 && f[0].vs_baseline);
        if (n == 1)
            CHECK_NEAR(f[0].deviation_pct, 40, 1e-9);
        free(f);
    }

    /* a value of a baseline host that does not exist */
    {
        sb_fleet_value bad[1];
        size_t nb = 0;
        set_value(bad, &nb, 9, "a GBps", 1, true);
        f = NULL;
        n = 0;
        CHECK(sb_fleet_diagnose_baseline(H, 4, V, nv, BH, 4, bad, nb, &r, &f,
                                         &n, &err) == SB_EINVAL);
        CHECK(n == 0);
        free(f);
    }

    /* the report's form: r's flags appended, r->baseline its id */
    {
        sb_fleet_report cur, base;
        memset(&cur, 0, sizeof cur);
        memset(&base, 0, sizeof base);
        cur.hosts = H;
        cur.nhosts = 4;
        cur.v = V;
        cur.nv = nv;
        sb_fleet_rules_default(&cur.rules);
        snprintf(base.id, sizeof base.id, "fleet-base-1");
        base.hosts = BH;
        base.nhosts = 4;
        base.v = BV;
        base.nv = nbv;
        CHECK(sb_fleet_compare_baseline(&cur, &base, &err) == 0);
        CHECK(strcmp(cur.baseline, "fleet-base-1") == 0);
        CHECK(cur.nflags == 3 && cur.flags &&
              find_flag(cur.flags, cur.nflags, 2, "a GBps"));
        free(cur.flags);
    }
}

/* ---- the JSON round trip ------------------------------------------------ */

#define RT_N 5
static const char *RT_NAMES[RT_N] = {"node-a", "node-b", "node-c", "node-d",
                                     "node-e"};
static const char *RT_METRICS[3] = {"compute.peak GFLOPs", "network.pingpong s",
                                    "memory.read size=1GiB GBps"};
static const double RT_VALUES[3][4] = {{100, 101, 70, 99},
                                       {2.0e-6, 2.01e-6, 1.99e-6, 3.0e-6},
                                       {50, 50.5, 49.5, 50}};
static const bool RT_HIGHER[3] = {true, false, true};

/* A report as fleet run builds it: 5 hosts of class A (node-e failed),
 * rules not the defaults, a 5 x 5 link matrix with one slow link
 * (node-a -> node-b at half) and node-e's unmeasured, collectives at
 * three levels. */
static int build_report(sb_fleet_report *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "fleet-20240501-rt");
    snprintf(r->started_at, sizeof r->started_at, "2024-05-01T10:00:00Z");
    snprintf(r->launcher, sizeof r->launcher, "srun");
    r->nhosts = RT_N;
    r->nranks = 10;
    r->rounds = 3;
    r->rules.floor_pct = 12;
    r->rules.latency_floor_pct = 30;
    r->rules.k_mad = 2.5;
    r->rules.min_peers = 3;
    r->hosts = calloc(RT_N, sizeof *r->hosts);
    r->run_ids = calloc(RT_N, sizeof *r->run_ids);
    r->v = calloc(16, sizeof *r->v);
    size_t nn = (size_t)RT_N * RT_N;
    r->bw = malloc(nn * sizeof *r->bw);
    r->bibw = malloc(nn * sizeof *r->bibw);
    r->lat = malloc(nn * sizeof *r->lat);
    r->coll = calloc(4, sizeof *r->coll);
    if (!r->hosts || !r->run_ids || !r->v || !r->bw || !r->bibw || !r->lat ||
        !r->coll)
        return -1;
    for (int h = 0; h < RT_N; h++) {
        set_host(&r->hosts[h], RT_NAMES[h], "A", 2);
        if (h < 4)
            snprintf(r->run_ids[h], sizeof r->run_ids[h], "run-%d-xyz", h);
    }
    r->hosts[4].failed = true;
    snprintf(r->hosts[4].why, sizeof r->hosts[4].why, "no answer in 60 s");
    for (int m = 0; m < 3; m++)
        for (int h = 0; h < 4; h++)
            set_value(r->v, &r->nv, h, RT_METRICS[m], RT_VALUES[m][h],
                      RT_HIGHER[m]);
    for (int i = 0; i < RT_N; i++)
        for (int j = 0; j < RT_N; j++) {
            size_t k = (size_t)i * RT_N + j;
            bool none = i == j || i == 4 || j == 4;
            /* distinct figures, to see each lands where it was */
            r->bw[k] = none ? (i == j ? 0 : NAN) : 1e10 + 1e6 * (double)k;
            r->bibw[k] = none ? NAN : 1.9e10 + 1e6 * (double)k;
            r->lat[k] = none ? 0 : 1e-6 + 1e-9 * (double)k;
        }
    r->bw[0 * RT_N + 1] = 5e9;
    const struct {
        const char *level, *op;
        double bytes;
        int ranks;
        double seconds;
        bool valid;
    } c[4] = {{"host", "allreduce", 1 * MiB, 2, 5e-6 + MiB / 5e9, true},
              {"host", "allreduce", 16 * MiB, 2, 5e-6 + 16 * MiB / 5e9, true},
              {"hosts", "allreduce", 4 * MiB, 4, 1.25e-3, true},
              {"all", "allgather", 64 * MiB, 10, 2.5e-2, false}};
    for (int k = 0; k < 4; k++) {
        snprintf(r->coll[k].level, sizeof r->coll[k].level, "%s", c[k].level);
        snprintf(r->coll[k].op, sizeof r->coll[k].op, "%s", c[k].op);
        r->coll[k].bytes = c[k].bytes;
        r->coll[k].ranks = c[k].ranks;
        r->coll[k].seconds = c[k].seconds;
        r->coll[k].valid = c[k].valid;
        /* two ranks on each host: the whole level's in-host part */
        r->coll[k].per_host = strcmp(c[k].level, "all") == 0 ? 2 : 0;
    }
    r->ncoll = 4;
    return 0;
}

static const sb_fleet_value *find_value(const sb_fleet_report *r, int h,
                                        const char *m)
{
    for (size_t k = 0; k < r->nv; k++)
        if (r->v[k].host == h && strcmp(r->v[k].metric, m) == 0)
            return &r->v[k];
    return NULL;
}

static void test_round_trip(const char *dir)
{
    sb_fleet_report r;
    sb_err err = {0};
    if (build_report(&r) != 0) {
        CHECK(!"out of memory");
        sb_fleet_report_free(&r);
        return;
    }
    sb_fleet_predict_colls(&r);
    CHECK(sb_fleet_analyse(&r, &err) == 0);
    /* the original's diagnosis, worked out by hand: peak median 99.5,
     * node-c at 70 (-29.65 %); pingpong median 2.005 us, node-d at 3 us
     * (+49.63 %); the bars the floors (12 %, 30 %); the link a -> b at
     * half of its ends' median */
    CHECK(r.nflags == 2);
    if (r.nflags == 2) {
        CHECK(r.flags[0].host == 3 &&
              strcmp(r.flags[0].metric, "network.pingpong s") == 0);
        CHECK_NEAR(r.flags[0].deviation_pct, 100 * (3.0 - 2.005) / 2.005, 1e-6);
        CHECK_NEAR(r.flags[0].threshold_pct, 30, 1e-12);
        CHECK(r.flags[1].host == 2 &&
              strcmp(r.flags[1].metric, "compute.peak GFLOPs") == 0);
        CHECK_NEAR(r.flags[1].deviation_pct, 100 * (70 - 99.5) / 99.5, 1e-9);
        CHECK_NEAR(r.flags[1].threshold_pct, 12, 1e-12);
    }
    CHECK(r.nlinks == 1 && r.links && r.links[0].from == 0 &&
          r.links[0].to == 1);
    for (int h = 0; h < RT_N; h++)
        CHECK(!r.hosts[h].unjudged);

    json_t *doc = sb_fleet_to_json(&r);
    CHECK(doc != NULL);
    char *text = doc ? json_dumps(doc, JSON_INDENT(1)) : NULL;
    json_decref(doc);
    CHECK(text != NULL);
    if (!text) {
        sb_fleet_report_free(&r);
        return;
    }
    sb_fleet_report b;
    CHECK(sb_fleet_read_text(text, "rt.json", &b, &err) == 0);
    if (err.msg[0])
        fprintf(stderr, "read: %s\n", err.msg);
    CHECK(strcmp(b.id, r.id) == 0);
    CHECK(strcmp(b.started_at, r.started_at) == 0);
    CHECK(strcmp(b.launcher, "srun") == 0);
    CHECK(b.nhosts == RT_N && b.nranks == 10 && b.rounds == 3);
    CHECK_NEAR(b.rules.floor_pct, 12, 0);
    CHECK_NEAR(b.rules.latency_floor_pct, 30, 0);
    CHECK_NEAR(b.rules.k_mad, 2.5, 0);
    CHECK(b.rules.min_peers == 3);
    for (int h = 0; h < RT_N && b.nhosts == RT_N && b.hosts && b.run_ids; h++) {
        CHECK(strcmp(b.hosts[h].name, RT_NAMES[h]) == 0);
        CHECK(strcmp(b.hosts[h].cls, "A") == 0);
        CHECK(b.hosts[h].ranks == 2);
        CHECK(b.hosts[h].failed == (h == 4));
        CHECK(strcmp(b.hosts[h].why, r.hosts[h].why) == 0);
        CHECK(strcmp(b.run_ids[h], r.run_ids[h]) == 0);
    }
    if (b.hosts && b.nhosts == RT_N)
        CHECK(strcmp(b.hosts[4].why, "no answer in 60 s") == 0 &&
              b.run_ids[4][0] == 0);
    /* every value, and which way is better */
    CHECK(b.nv == 12);
    for (int m = 0; m < 3; m++)
        for (int h = 0; h < 4; h++) {
            const sb_fleet_value *x = find_value(&b, h, RT_METRICS[m]);
            CHECK(x != NULL);
            if (!x)
                continue;
            CHECK(x->value == RT_VALUES[m][h]);
            CHECK(x->higher_better == RT_HIGHER[m]);
        }
    /* the link matrix: unmeasured entries (null) read as not measured,
     * every measured one as it was */
    CHECK(b.bw && b.bibw && b.lat);
    for (int i = 0; b.bw && b.bibw && b.lat && i < RT_N; i++)
        for (int j = 0; j < RT_N; j++) {
            size_t k = (size_t)i * RT_N + j;
            bool none = i == j || i == 4 || j == 4;
            if (none) {
                CHECK(!(b.bw[k] > 0) && !(b.bibw[k] > 0) && !(b.lat[k] > 0));
            } else {
                CHECK(b.bw[k] == r.bw[k]);
                CHECK(b.bibw[k] == r.bibw[k]);
                CHECK(b.lat[k] == r.lat[k]);
            }
        }
    if (b.bw)
        CHECK(b.bw[1] == 5e9);
    /* the collectives */
    CHECK(b.ncoll == 4);
    for (size_t k = 0; k < 4 && b.ncoll == 4 && b.coll; k++) {
        CHECK(strcmp(b.coll[k].level, r.coll[k].level) == 0);
        CHECK(strcmp(b.coll[k].op, r.coll[k].op) == 0);
        CHECK(b.coll[k].bytes == r.coll[k].bytes);
        CHECK(b.coll[k].ranks == r.coll[k].ranks);
        CHECK(b.coll[k].seconds == r.coll[k].seconds);
        CHECK(b.coll[k].valid == r.coll[k].valid);
        CHECK(b.coll[k].per_host == r.coll[k].per_host);
        /* worked out again from the same figures */
        CHECK_NEAR(b.coll[k].predicted_s, r.coll[k].predicted_s, 1e-9);
    }
    CHECK(r.coll[3].predicted_s > 0);
    CHECK_NEAR(b.up_Bps, r.up_Bps, 1e-9);
    CHECK_NEAR(b.out_Bps, r.out_Bps, 1e-9);
    CHECK_NEAR(b.out_alpha_s, r.out_alpha_s, 1e-9);

    /* judged again, the same diagnosis */
    CHECK(b.nflags == 0); /* the flags are not read */
    CHECK(sb_fleet_analyse(&b, &err) == 0);
    CHECK(b.nflags == r.nflags);
    for (size_t k = 0; k < b.nflags && k < r.nflags; k++) {
        CHECK(b.flags[k].host == r.flags[k].host);
        CHECK(strcmp(b.flags[k].metric, r.flags[k].metric) == 0);
        CHECK_NEAR(b.flags[k].deviation_pct, r.flags[k].deviation_pct, 1e-12);
        CHECK_NEAR(b.flags[k].threshold_pct, r.flags[k].threshold_pct, 1e-12);
    }
    CHECK(b.nlinks == r.nlinks);
    for (size_t k = 0; k < b.nlinks && k < r.nlinks; k++)
        CHECK(b.links[k].from == r.links[k].from &&
              b.links[k].to == r.links[k].to);
    CHECK(sb_fleet_unhealthy(&b) == sb_fleet_unhealthy(&r));

    /* against itself as the baseline: nothing new, its id named */
    size_t before = b.nflags;
    CHECK(sb_fleet_compare_baseline(&b, &r, &err) == 0);
    CHECK(b.nflags == before);
    CHECK(strcmp(b.baseline, r.id) == 0);
    sb_fleet_report_free(&b);

    /* the same from a file */
    char path[4200];
    snprintf(path, sizeof path, "%s/fleet.json", dir);
    FILE *fp = fopen(path, "w");
    CHECK(fp != NULL);
    if (fp) {
        fputs(text, fp);
        fclose(fp);
        CHECK(sb_fleet_read_file(path, &b, &err) == 0);
        CHECK(b.nhosts == RT_N && b.nv == 12 && b.ncoll == 4 && b.bw);
        sb_fleet_report_free(&b);
    }
    snprintf(path, sizeof path, "%s/no-such-fleet.json", dir);
    memset(&err, 0, sizeof err);
    CHECK(sb_fleet_read_file(path, &b, &err) != 0);
    CHECK(strstr(err.msg, "no-such-fleet.json") != NULL);
    CHECK(b.hosts == NULL && b.v == NULL);
    free(text);
    sb_fleet_report_free(&r);
}

/* ---- refusals ------------------------------------------------------------ */

/* text refused with SB_EINVAL, a message naming `path`, and nothing
 * left to free */
static void refused(const char *text, const char *path, int line)
{
    sb_fleet_report r;
    sb_err err = {0};
    int rc = sb_fleet_read_text(text, "doc", &r, &err);
    bool named = strstr(err.msg, path) != NULL;
    bool empty = !r.hosts && !r.run_ids && !r.v && !r.bw && !r.bibw && !r.lat &&
                 !r.coll && r.nhosts == 0 && r.nv == 0;
    if (rc != SB_EINVAL || !named || !empty)
        fprintf(stderr, "line %d: rc %d, message \"%s\" (want \"%s\")\n", line,
                rc, err.msg, path);
    CHECK(rc == SB_EINVAL);
    CHECK(named);
    CHECK(empty);
    if (rc == 0)
        sb_fleet_report_free(&r);
}
#define REFUSED(text, path) refused(text, path, __LINE__)

#define HEAD "{\"schema\":\"solbench.fleet/1\",\"fleet\":\"f1\","
#define HOST_A                                                                 \
    "{\"host\":\"a\",\"class\":\"A\",\"ranks\":1,\"metrics\":{\"x\":1}}"
#define HOST_B                                                                 \
    "{\"host\":\"b\",\"class\":\"A\",\"ranks\":1,\"metrics\":{\"x\":2}}"
#define TWO "\"hosts\":[" HOST_A "," HOST_B "]"

/* The hosts array of n hosts "h0", "h1", ... as a document (malloc'ed). */
static char *many_hosts(int n)
{
    size_t cap = 64 + (size_t)n * 80;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t o = (size_t)snprintf(s, cap, HEAD "\"hosts\":[");
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(s + o, cap - o,
                              "%s{\"host\":\"h%d\",\"class\":\"A\","
                              "\"ranks\":1,\"metrics\":{}}",
                              i ? "," : "", i);
    snprintf(s + o, cap - o, "]}");
    return s;
}

static void test_refusals(void)
{
    sb_fleet_report r;
    sb_err err = {0};
    /* the control: a small document read */
    const char *ok = HEAD TWO ",\"link_matrix\":{\"hosts\":[\"a\",\"b\"],"
                              "\"bw_Bps\":[[null,1e9],[2e9,null]]},"
                              "\"collectives\":[{\"level\":\"hosts\",\"op\":"
                              "\"allreduce\",\"bytes\":1024,\"ranks\":2,"
                              "\"seconds\":1e-5}]}";
    CHECK(sb_fleet_read_text(ok, "doc", &r, &err) == 0);
    CHECK(r.nhosts == 2 && r.nv == 2 && r.bw && r.ncoll == 1);
    if (r.bw)
        CHECK(r.bw[1] == 1e9 && r.bw[2] == 2e9);
    if (r.ncoll == 1)
        CHECK(r.coll[0].valid && r.coll[0].bytes == 1024);
    /* rules absent: the defaults */
    CHECK(r.rules.floor_pct == 10 && r.rules.min_peers == 3);
    sb_fleet_report_free(&r);

    REFUSED("{\"schema\":\"solbench.fleet/2\",\"fleet\":\"f1\"," TWO "}",
            "$.schema");
    REFUSED("{\"schema\":\"solbench.run/1\",\"fleet\":\"f1\"," TWO "}",
            "$.schema");
    REFUSED(HEAD "\"hosts\":{\"a\":1}}", "$.hosts");
    REFUSED(HEAD "\"hosts\":[]}", "$.hosts");
    REFUSED("{\"schema\":\"solbench.fleet/1\"," TWO "}", "$.fleet");

    /* SB_FLEET_MAX_HOSTS hosts read, one more refused */
    char *s = many_hosts(SB_FLEET_MAX_HOSTS);
    CHECK(s != NULL);
    if (s) {
        CHECK(sb_fleet_read_text(s, "doc", &r, &err) == 0);
        CHECK(r.nhosts == SB_FLEET_MAX_HOSTS);
        if (r.nhosts == SB_FLEET_MAX_HOSTS)
            CHECK(strcmp(r.hosts[4095].name, "h4095") == 0);
        sb_fleet_report_free(&r);
        free(s);
    }
    s = many_hosts(SB_FLEET_MAX_HOSTS + 1);
    CHECK(s != NULL);
    if (s) {
        REFUSED(s, "$.hosts");
        free(s);
    }

    /* a name of 63 characters fits, one of 64 does not */
    char name63[64], doc[512];
    memset(name63, 'n', 63);
    name63[63] = 0;
    snprintf(doc, sizeof doc,
             HEAD "\"hosts\":[{\"host\":\"%s\",\"class\":\"A\",\"ranks\":1,"
                  "\"metrics\":{}}]}",
             name63);
    CHECK(sb_fleet_read_text(doc, "doc", &r, &err) == 0);
    CHECK(r.nhosts == 1 && strlen(r.hosts[0].name) == 63);
    sb_fleet_report_free(&r);
    snprintf(doc, sizeof doc,
             HEAD "\"hosts\":[{\"host\":\"%sn\",\"class\":\"A\",\"ranks\":1,"
                  "\"metrics\":{}}]}",
             name63);
    REFUSED(doc, "$.hosts[0].host");

    /* a figure that is a string (on the second host: the first host's
     * figures, read already, are not leaked) */
    REFUSED(HEAD "\"hosts\":[" HOST_A ",{\"host\":\"b\",\"class\":\"A\","
                 "\"ranks\":1,\"metrics\":{\"x\":\"fast\"}}]}",
            "$.hosts[1].metrics.x");
    REFUSED(HEAD "\"hosts\":[" HOST_A ",{\"host\":\"b\",\"class\":\"A\","
                 "\"ranks\":0,\"metrics\":{}}]}",
            "$.hosts[1].ranks");
    /* the link matrix's hosts are not the document's */
    REFUSED(HEAD TWO ",\"link_matrix\":{\"hosts\":[\"a\",\"c\"],"
                     "\"bw_Bps\":[[null,1],[1,null]]}}",
            "$.link_matrix.hosts[1]");
    REFUSED(HEAD TWO ",\"link_matrix\":{\"hosts\":[\"a\"],"
                     "\"bw_Bps\":[[null,1],[1,null]]}}",
            "$.link_matrix.hosts");
    /* a row of the wrong length (the matrix allocated: not leaked) */
    REFUSED(HEAD TWO ",\"link_matrix\":{\"hosts\":[\"a\",\"b\"],"
                     "\"bw_Bps\":[[null,1],[1]]}}",
            "$.link_matrix.bw_Bps[1]");
    REFUSED(HEAD TWO ",\"link_matrix\":{\"hosts\":[\"a\",\"b\"],"
                     "\"bw_Bps\":[[null,1],[1,null]],"
                     "\"latency_s\":[[null,\"x\"],[1,null]]}}",
            "$.link_matrix.latency_s[0][1]");
    /* a collective without its time (the array allocated: not leaked) */
    REFUSED(HEAD TWO ",\"collectives\":[{\"level\":\"hosts\",\"op\":"
                     "\"allreduce\",\"bytes\":1024,\"ranks\":2,"
                     "\"seconds\":1e-5},{\"level\":\"hosts\",\"op\":"
                     "\"allreduce\",\"bytes\":1024,\"ranks\":2}]}",
            "$.collectives[1]");
    REFUSED(HEAD TWO ",\"rules\":{\"floor_pct\":-1}}", "$.rules.floor_pct");
    /* not JSON; a key twice */
    REFUSED(HEAD TWO, "doc:");
    REFUSED(HEAD "\"fleet\":\"f2\"," TWO "}", "doc:");
    sb_err e2 = {0};
    CHECK(sb_fleet_read_text(HEAD "\"fleet\":\"f2\"," TWO "}", "doc", &r,
                             &e2) == SB_EINVAL);
    CHECK(strstr(e2.msg, "duplicate") != NULL);
}

/* ---- the collective model ------------------------------------------------ */

static void test_coll_time(void)
{
    double S = MiB;
    /* flat across: all-reduce busbw 2 (n-1)/n = 1.5 at n = 4 */
    CHECK_NEAR(sb_net_coll_time(SB_NET_ALLREDUCE, 4, 1, S, 0, 0, 100e6, 10e-6),
               1.5 * 1048576 / 100e6 + 10e-6, 1e-12);
    /* inside: up and its alpha, out not needed */
    CHECK_NEAR(sb_net_coll_time(SB_NET_ALLREDUCE, 4, 4, S, 200e6, 2e-6, 0, 0),
               1.5 * 1048576 / 200e6 + 2e-6, 1e-12);
    /* two levels, n = 8 of 4 a domain: f_in 2 x 3/4 = 1.5, f_out
     * 2 x (2-1)/2 / 4 = 0.25 */
    double fi = -1, fo = -1;
    double spb =
        sb_net_two_level(SB_NET_ALLREDUCE, 8, 4, 200e6, 100e6, &fi, &fo);
    CHECK_NEAR(fi, 1.5, 1e-15);
    CHECK_NEAR(fo, 0.25, 1e-15);
    CHECK_NEAR(spb, fmax(1.5 / 200e6, 0.25 / 100e6), 1e-20);
    double want = S * fmax(fi / 200e6, fo / 100e6) + 3e-6 + 10e-6;
    CHECK_NEAR(want, 1048576 * 7.5e-9 + 13e-6, 1e-15);
    CHECK_NEAR(
        sb_net_coll_time(SB_NET_ALLREDUCE, 8, 4, S, 200e6, 3e-6, 100e6, 10e-6),
        want, 1e-12);
    /* out the slower level: it sets the time */
    CHECK_NEAR(
        sb_net_coll_time(SB_NET_ALLREDUCE, 8, 4, S, 200e6, 3e-6, 10e6, 10e-6),
        S * 0.25 / 10e6 + 13e-6, 1e-12);
    /* the bandwidth the case needs is 0: no time */
    CHECK(sb_net_coll_time(SB_NET_ALLREDUCE, 4, 1, S, 1e9, 1e-6, 0, 1e-6) == 0);
    CHECK(sb_net_coll_time(SB_NET_ALLREDUCE, 4, 4, S, 0, 1e-6, 1e9, 1e-6) == 0);
    CHECK(sb_net_coll_time(SB_NET_ALLREDUCE, 8, 4, S, 0, 1e-6, 1e9, 1e-6) == 0);
    CHECK(sb_net_coll_time(SB_NET_ALLREDUCE, 8, 4, S, 1e9, 1e-6, 0, 1e-6) == 0);
    /* one rank, or nothing to move: no time */
    CHECK(sb_net_coll_time(SB_NET_ALLREDUCE, 1, 1, S, 1e9, 1e-6, 1e9, 1e-6) ==
          0);
    CHECK(sb_net_coll_time(SB_NET_ALLREDUCE, 0, 1, S, 1e9, 1e-6, 1e9, 1e-6) ==
          0);
    CHECK(sb_net_coll_time(SB_NET_ALLREDUCE, 4, 1, 0, 1e9, 1e-6, 1e9, 1e-6) ==
          0);
}

static void test_predict(void)
{
    sb_fleet_report r;
    memset(&r, 0, sizeof r);
    int n = 4;
    r.nhosts = n;
    r.bw = malloc(16 * sizeof *r.bw);
    r.lat = malloc(16 * sizeof *r.lat);
    r.coll = calloc(7, sizeof *r.coll);
    if (!r.bw || !r.lat || !r.coll) {
        CHECK(!"out of memory");
        sb_fleet_report_free(&r);
        return;
    }
    /* 12 links at 1e8 but one at 5e7: the median stays 1e8; the
     * diagonal (0) is no link */
    for (int k = 0; k < 16; k++) {
        bool diag = k / n == k % n;
        r.bw[k] = diag ? 0 : 1e8;
        r.lat[k] = diag ? 0 : 1e-5;
    }
    r.bw[2 * n + 3] = 5e7;
    /* inside the hosts, 2 ranks: t = a + S / b */
    const double a = 4e-6, beta = 2e9;
    const struct {
        const char *level;
        double bytes;
        int ranks;
        double seconds;
    } c[7] = {
        {"hosts", 1 * MiB, 4, 3e-2},
        {"hosts", 64 * MiB, 4, 1.1},
        {"host", 1 * MiB, 2, a + 1 * MiB / beta},
        {"host", 32 * MiB, 2, a + 32 * MiB / beta},
        {"all", 16 * MiB, 8, 0.2},
        /* 8 ranks on 4 hosts is two a host; 10 are not the same on each */
        {"all", 16 * MiB, 10, 0.2},
        /* one rank: nothing to predict */
        {"hosts", 1 * MiB, 1, 1e-3},
    };
    for (int k = 0; k < 7; k++) {
        snprintf(r.coll[k].level, sizeof r.coll[k].level, "%s", c[k].level);
        snprintf(r.coll[k].op, sizeof r.coll[k].op, "allreduce");
        r.coll[k].bytes = c[k].bytes;
        r.coll[k].ranks = c[k].ranks;
        r.coll[k].seconds = c[k].seconds;
        r.coll[k].valid = true;
        /* the run says how many ranks each host had, where all alike */
        r.coll[k].per_host = k == 4 ? 2 : 0;
    }
    r.ncoll = 7;
    sb_fleet_predict_colls(&r);
    CHECK_NEAR(r.out_Bps, 1e8, 1e-12);
    CHECK_NEAR(r.out_alpha_s, 1e-5, 1e-15);
    /* busbw at 2 ranks is 1: up is the fit's beta */
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_ALLREDUCE, 2), 1.0, 0);
    CHECK_NEAR(r.up_Bps / beta, 1.0, 1e-9);
    CHECK_NEAR(r.up_alpha_s, a, 1e-12);
    /* across the hosts' leaders: flat, 1.5 S / out + alpha */
    CHECK_NEAR(r.coll[0].predicted_s, 1.5 * MiB / 1e8 + 1e-5, 1e-12);
    CHECK_NEAR(r.coll[1].predicted_s, 1.5 * 64 * MiB / 1e8 + 1e-5, 1e-12);
    CHECK_NEAR(r.coll[0].predicted_s,
               sb_net_coll_time(SB_NET_ALLREDUCE, 4, 1, MiB, r.up_Bps,
                                r.up_alpha_s, r.out_Bps, r.out_alpha_s),
               1e-15);
    /* inside: the fit itself, its own points again */
    CHECK_NEAR(r.coll[2].predicted_s / c[2].seconds, 1.0, 1e-9);
    CHECK_NEAR(r.coll[3].predicted_s / c[3].seconds, 1.0, 1e-9);
    /* all 8 ranks, 2 a host: f_in 2 x 1/2 = 1, f_out 2 x 3/4 / 2 = 0.75
     * over a rank's share of its host's link, 1e8 / 2;
     * S max(1 / 2e9, 0.75 / 5e7) + a + 1e-5 */
    double want = 16 * MiB * fmax(1 / beta, 0.75 / 5e7) + a + 1e-5;
    CHECK(r.coll[4].predicted_s > 0);
    CHECK_NEAR(r.coll[4].predicted_s / want, 1.0, 1e-9);
    CHECK_NEAR(r.coll[4].predicted_s,
               sb_net_coll_time(SB_NET_ALLREDUCE, 8, 2, 16 * MiB, r.up_Bps,
                                r.up_alpha_s, r.out_Bps / 2, r.out_alpha_s),
               1e-15);
    /* 10 ranks on 4 hosts: not as many on each, no two-level model (the
     * model would take 10 / 2 = 5 domains where there are 4) */
    CHECK(r.coll[5].predicted_s == 0);
    if (r.coll[5].predicted_s != 0)
        fprintf(stderr,
                "10 ranks on 4 hosts predicted %g s (5 domains of 2 "
                "assumed)\n",
                r.coll[5].predicted_s);
    CHECK(r.coll[6].predicted_s == 0);

    /* without the in-host all-reduce: no scale-up, "all" has no model,
     * "hosts" still has */
    r.ncoll = 2;
    r.up_Bps = r.up_alpha_s = 0;
    r.coll[1] = r.coll[4];
    sb_fleet_predict_colls(&r);
    CHECK(r.up_Bps == 0);
    CHECK(r.coll[0].predicted_s > 0 && r.coll[1].predicted_s == 0);
    r.ncoll = 7;
    sb_fleet_report_free(&r);
}

/* ---- the store ----------------------------------------------------------- */

typedef struct {
    int calls, hosts;
    bool healthy, baselines_null;
    char id[64], baselines[128], launcher[32];
} list_seen;

static int on_fleet(const sb_store_fleet *f, void *arg)
{
    list_seen *s = arg;
    s->calls++;
    s->hosts = f->hosts;
    s->healthy = f->healthy;
    snprintf(s->id, sizeof s->id, "%s", f->id ? f->id : "");
    s->baselines_null = f->baselines == NULL;
    snprintf(s->baselines, sizeof s->baselines, "%s",
             f->baselines ? f->baselines : "");
    snprintf(s->launcher, sizeof s->launcher, "%s",
             f->launcher ? f->launcher : "");
    return 0;
}

static void test_store(const char *dir)
{
    char db[4200];
    snprintf(db, sizeof db, "%s/fleet.db", dir);
    sb_store *st = NULL;
    sb_err err = {0};
    CHECK(sb_store_open(db, &st, &err) == 0);
    if (!st) {
        fprintf(stderr, "store: %s\n", err.msg);
        return;
    }
    const char *id1 = "fleet-20240501-aaaa";
    const char *doc1 = "{\"schema\":\"solbench.fleet/1\",\"fleet\":\"one\"}";
    char id[64], *doc = NULL;
    /* nothing stored: "last" says so */
    CHECK(sb_store_fleet_get(st, "last", id, sizeof id, &doc, &err) ==
          SB_EINVAL);
    CHECK(doc == NULL);
    CHECK(sb_store_fleet_put(st, id1, "2024-05-01T10:00:00Z", "mpirun", 4, true,
                             doc1, &err) == 0);
    /* by its id, a prefix, "last" */
    const char *refs[3] = {id1, "fleet-2024", "last"};
    for (int k = 0; k < 3; k++) {
        id[0] = 0;
        doc = NULL;
        CHECK(sb_store_fleet_get(st, refs[k], id, sizeof id, &doc, &err) == 0);
        CHECK(strcmp(id, id1) == 0);
        CHECK(doc && strcmp(doc, doc1) == 0);
        free(doc);
    }
    /* the same id again */
    memset(&err, 0, sizeof err);
    CHECK(sb_store_fleet_put(st, id1, "2024-05-02T10:00:00Z", "mpirun", 4, true,
                             doc1, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, id1) != NULL);
    /* a baseline */
    id[0] = 0;
    CHECK(sb_store_fleet_baseline_set(st, "good", "fleet-2024", id, sizeof id,
                                      &err) == 0);
    CHECK(strcmp(id, id1) == 0);
    id[0] = 0;
    doc = NULL;
    CHECK(sb_store_fleet_get(st, "good", id, sizeof id, &doc, &err) == 0);
    CHECK(strcmp(id, id1) == 0 && doc && strcmp(doc, doc1) == 0);
    free(doc);
    const char *bad[4] = {"1x", "last", "", "a b"};
    for (int k = 0; k < 4; k++) {
        memset(&err, 0, sizeof err);
        CHECK(sb_store_fleet_baseline_set(st, bad[k], id1, id, sizeof id,
                                          &err) == SB_EINVAL);
        CHECK(strstr(err.msg, "fleet baseline name") != NULL);
    }
    /* a baseline of a fleet that is not there */
    CHECK(sb_store_fleet_baseline_set(st, "other", "nope", id, sizeof id,
                                      &err) == SB_EINVAL);
    list_seen seen;
    memset(&seen, 0, sizeof seen);
    CHECK(sb_store_fleet_list(st, on_fleet, &seen, &err) == 0);
    CHECK(seen.calls == 1);
    CHECK(seen.hosts == 4 && seen.healthy);
    CHECK(strcmp(seen.id, id1) == 0 && strcmp(seen.baselines, "good") == 0);
    CHECK(strcmp(seen.launcher, "mpirun") == 0);
    /* an unknown ref */
    memset(&err, 0, sizeof err);
    doc = NULL;
    CHECK(sb_store_fleet_get(st, "zzz-unknown", id, sizeof id, &doc, &err) ==
          SB_EINVAL);
    CHECK(doc == NULL && strstr(err.msg, "zzz-unknown") != NULL);

    /* a second, later, unhealthy fleet: "last" is it, the prefix common
     * to both is ambiguous, the baseline still names the first */
    const char *id2 = "fleet-20240502-bbbb";
    CHECK(sb_store_fleet_put(st, id2, "2024-05-02T10:00:00Z", "srun", 3, false,
                             "{}", &err) == 0);
    CHECK(sb_store_fleet_get(st, "last", id, sizeof id, &doc, &err) == 0);
    CHECK(strcmp(id, id2) == 0);
    free(doc);
    memset(&err, 0, sizeof err);
    doc = NULL;
    CHECK(sb_store_fleet_get(st, "fleet-2024", id, sizeof id, &doc, &err) ==
          SB_EINVAL);
    CHECK(doc == NULL && strstr(err.msg, "ambiguous") != NULL);
    CHECK(sb_store_fleet_get(st, "good", id, sizeof id, &doc, &err) == 0);
    CHECK(strcmp(id, id1) == 0);
    free(doc);
    memset(&seen, 0, sizeof seen);
    CHECK(sb_store_fleet_list(st, on_fleet, &seen, &err) == 0);
    /* oldest first: the second's last */
    CHECK(seen.calls == 2 && strcmp(seen.id, id2) == 0 && !seen.healthy &&
          seen.hosts == 3 && seen.baselines[0] == 0);
    CHECK(!seen.baselines_null); /* "" when none */
    sb_store_close(st);
}

/* The JUnit failure of each flag: against the fleet's median with its
 * peers, or against the host's own figure in the baseline fleet. */
static void test_junit(const char *dir)
{
    sb_fleet_report r;
    memset(&r, 0, sizeof r);
    sb_fleet_rules_default(&r.rules);
    snprintf(r.id, sizeof r.id, "f-now");
    snprintf(r.baseline, sizeof r.baseline, "f-before");
    sb_fleet_host hosts[2];
    memset(hosts, 0, sizeof hosts);
    snprintf(hosts[0].name, sizeof hosts[0].name, "h0");
    snprintf(hosts[1].name, sizeof hosts[1].name, "h1");
    r.hosts = hosts;
    r.nhosts = 2;
    sb_fleet_flag fl[2];
    memset(fl, 0, sizeof fl);
    for (int k = 0; k < 2; k++) {
        fl[k].host = k;
        snprintf(fl[k].metric, sizeof fl[k].metric, "triad GBps");
        fl[k].value = 60e9;
        fl[k].median = 100e9;
        fl[k].deviation_pct = -40;
        fl[k].threshold_pct = 10;
    }
    fl[0].peers = 3;
    fl[1].vs_baseline = true;
    fl[1].peers = 1;
    r.flags = fl;
    r.nflags = 2;
    char path[4200];
    snprintf(path, sizeof path, "%s/j.xml", dir);
    sb_err err = {0};
    CHECK(sb_fleet_write_junit(&r, path, 1.0, &err) == 0);
    char text[8192] = "";
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL);
    if (fp) {
        size_t got = fread(text, 1, sizeof text - 1, fp);
        text[got] = 0;
        fclose(fp);
    }
    CHECK(strstr(text, "failures=\"2\"") != NULL);
    const char *h0 = strstr(text, "name=\"h0\""),
               *h1 = strstr(text, "name=\"h1\"");
    CHECK(h0 && h1 && h0 < h1);
    const char *p = h0 ? strstr(h0, "message=\"triad GBps: ") : NULL;
    CHECK(p && (!h1 || p < h1));
    CHECK(p && strstr(p, " against the median ") &&
          strstr(p, "(-40.0%, bar 10.0%, 3 peers)\""));
    const char *q = h1 ? strstr(h1, "message=\"triad GBps: ") : NULL;
    CHECK(q && strstr(q, " against its ") &&
          strstr(q, " in the baseline fleet f-before (-40.0%, bar 10.0%)\""));
    CHECK(q && !strstr(q, "peers"));
}

int main(void)
{
    char dir[4096];
    if (!sb_test_scratch(dir, sizeof dir, "fleet-read"))
        return 1;
    test_baseline();
    test_round_trip(dir);
    test_refusals();
    test_coll_time();
    test_predict();
    test_store(dir);
    test_junit(dir);
    return sb_test_scratch_done(dir);
}
