/*
 * test_plateau.c — plateau detection on synthetic bandwidth curves with 2,
 * 3 and 4 levels, sharp and gradual transitions, multiplicative noise from
 * a fixed-seed generator and an outlier; then labelling against OS cache
 * sizes, including a reported cache that does not exist.
 */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "solbench/error.h"
#include "solbench/plateau.h"
#include "solbench/util.h"

#define MAXN 64

typedef struct curve {
    int nlev;      /* cache levels (DRAM comes after) */
    double cap[4]; /* capacity of each cache level */
    double bw[5];  /* bandwidth of each level, then DRAM */
} curve;

static int make_sizes(double step, double *sizes)
{
    int n = 0;
    for (double s = 8192; s <= 1024.0 * 1024 * 1024 * 1.0001; s *= step)
        sizes[n++] = s;
    return n;
}

/* Sharp: the level of the smallest cache that holds the working set.
 * Gradual: level l serves the share of accesses h_l = min(1, (cap_l /
 * size)^3) not served by a faster level — a transition spread over about
 * a factor 2 to 3 of size, as replacement policies and associativity give
 * on real caches. */
static double model(const curve *c, double size, bool gradual)
{
    if (!gradual) {
        for (int l = 0; l < c->nlev; l++)
            if (size <= c->cap[l])
                return c->bw[l];
        return c->bw[c->nlev];
    }
    double t = 0, served = 0;
    for (int l = 0; l < c->nlev; l++) {
        double r = c->cap[l] / size < 1 ? c->cap[l] / size : 1;
        double f = r * r * r;
        t += (f - served) / c->bw[l];
        served = f;
    }
    t += (1 - served) / c->bw[c->nlev];
    return 1 / t;
}

static int gen(const curve *c, double step, bool gradual, double noise,
               uint64_t seed, double *sizes, double *bw)
{
    int n = make_sizes(step, sizes);
    for (int i = 0; i < n; i++) {
        double u = sb_rng_unif(&seed);
        bw[i] = model(c, sizes[i], gradual) * (1 + noise * (2 * u - 1));
    }
    return n;
}

/* Index of the last size <= cap. */
static int last_inside(const double *sizes, int n, double cap)
{
    int k = -1;
    for (int i = 0; i < n; i++)
        if (sizes[i] <= cap)
            k = i;
    return k;
}

static void check_curve(const curve *c, double step, bool gradual,
                        uint64_t seed, double bw_tol)
{
    double sizes[MAXN], bw[MAXN];
    int n = gen(c, step, gradual, 0.03, seed, sizes, bw);
    /* One outlier in the middle of the first cache-level plateau of the
     * sharp curves (median smoothing must absorb it). */
    if (!gradual) {
        int lo =
            c->nlev > 1 ? last_inside(sizes, n, c->cap[c->nlev - 2]) + 1 : 0;
        int hi = last_inside(sizes, n, c->cap[c->nlev - 1]);
        if (hi - lo >= 4)
            bw[(lo + hi) / 2] *= 0.6;
    }
    sb_plateau p[SB_PLATEAU_MAX];
    int np = sb_plateau_detect(sizes, bw, n, NULL, p, SB_PLATEAU_MAX);
    CHECK(np == c->nlev + 1);
    if (np != c->nlev + 1) {
        fprintf(stderr, "  %d levels, step %g, %s: found %d\n", c->nlev + 1,
                step, gradual ? "gradual" : "sharp", np);
        for (int k = 0; k < np; k++)
            fprintf(stderr, "  [%g..%g] %g\n", p[k].start, p[k].end, p[k].bw);
        return;
    }
    for (int k = 0; k < np; k++) {
        CHECK_NEAR(p[k].bw, c->bw[k], bw_tol);
        if (k < c->nlev) {
            /* The plateau ends within one step of the capacity. */
            int want = last_inside(sizes, n, c->cap[k]);
            CHECK(p[k].last >= want - 1 && p[k].last <= want + 1);
        } else {
            CHECK(p[k].last == n - 1);
        }
        if (k > 0)
            CHECK(p[k].first > p[k - 1].last);
    }
}

static void test_levels(void)
{
    const double K = 1024, M = 1024 * 1024;
    curve c2 = {1, {1 * M}, {100, 20}};
    curve c3 = {2, {32 * K, 1 * M}, {200, 100, 20}};
    curve c4 = {3, {32 * K, 512 * K, 32 * M}, {200, 120, 60, 15}};
    const curve *cs[] = {&c2, &c3, &c4};
    for (int i = 0; i < 3; i++) {
        for (uint64_t seed = 1; seed <= 5; seed++) {
            check_curve(cs[i], 1.5, false, seed * 7919, 0.03);
            check_curve(cs[i], 2.0, false, seed * 104729, 0.03);
            check_curve(cs[i], 1.5, true, seed * 15485863, 0.06);
        }
    }
}

static void test_start_overhead_and_bad_input(void)
{
    const double K = 1024, M = 1024 * 1024;
    curve c3 = {2, {64 * K, 2 * M}, {200, 100, 20}};
    double sizes[MAXN], bw[MAXN];
    int n = gen(&c3, 1.5, false, 0.02, 42, sizes, bw);
    /* Loop overhead makes the two smallest sizes slow: not a level. */
    bw[0] *= 0.4;
    bw[1] *= 0.45;
    sb_plateau p[SB_PLATEAU_MAX];
    int np = sb_plateau_detect(sizes, bw, n, NULL, p, SB_PLATEAU_MAX);
    CHECK(np == 3);
    if (np == 3)
        CHECK_NEAR(p[0].bw, 200, 0.03);

    /* Bad inputs. */
    double s2[3] = {1, 1, 2}, b2[3] = {1, 2, 3}, b3[3] = {1, 0, 3};
    double s3[3] = {1, 2, 3};
    CHECK(sb_plateau_detect(s2, b2, 3, NULL, p, SB_PLATEAU_MAX) == SB_EINVAL);
    CHECK(sb_plateau_detect(s3, b3, 3, NULL, p, SB_PLATEAU_MAX) == SB_EINVAL);
    CHECK(sb_plateau_detect(s3, b2, 0, NULL, p, SB_PLATEAU_MAX) == SB_EINVAL);
    /* A flat curve is one plateau. */
    double flat[3] = {5, 5.1, 4.9};
    CHECK(sb_plateau_detect(s3, flat, 3, NULL, p, SB_PLATEAU_MAX) == 1);
}

static bool any_note(char (*notes)[160], int nn, const char *a, const char *b)
{
    for (int i = 0; i < nn; i++)
        if (strstr(notes[i], a) && (!b || strstr(notes[i], b)))
            return true;
    return false;
}

static void test_labels(void)
{
    const double K = 1024, M = 1024 * 1024;
    curve c4 = {3, {32 * K, 512 * K, 32 * M}, {200, 120, 60, 15}};
    double sizes[MAXN], bw[MAXN];
    int n = gen(&c4, 1.5, false, 0.02, 9, sizes, bw);
    sb_plateau p[SB_PLATEAU_MAX];
    int np = sb_plateau_detect(sizes, bw, n, NULL, p, SB_PLATEAU_MAX);
    CHECK(np == 4);
    double cache[5] = {0, 32 * K, 512 * K, 32 * M, 0};
    char notes[8][160];
    int nn = sb_plateau_label(p, np, cache, 3, sizes[n - 1], notes, 8);
    CHECK(nn == 0);
    if (np == 4) {
        CHECK(strcmp(p[0].label, "L1") == 0);
        CHECK(strcmp(p[1].label, "L2") == 0);
        CHECK(strcmp(p[2].label, "L3") == 0);
        CHECK(strcmp(p[3].label, "DRAM") == 0);
    }

    /* A virtual machine reporting a 256 MiB L3 that the curve does not
     * show: L1, L2, then DRAM from ~1 MiB. */
    curve vm = {2, {32 * K, 512 * K}, {200, 120, 15}};
    n = gen(&vm, 1.5, false, 0.02, 11, sizes, bw);
    np = sb_plateau_detect(sizes, bw, n, NULL, p, SB_PLATEAU_MAX);
    CHECK(np == 3);
    double vmcache[5] = {0, 32 * K, 512 * K, 256 * M, 0};
    nn = sb_plateau_label(p, np, vmcache, 3, sizes[n - 1], notes, 8);
    if (np == 3) {
        CHECK(strcmp(p[0].label, "L1") == 0);
        CHECK(strcmp(p[1].label, "L2") == 0);
        CHECK(strcmp(p[2].label, "DRAM") == 0);
    }
    CHECK(nn >= 2);
    CHECK(any_note(notes, nn, "L3", "no plateau"));
    CHECK(any_note(notes, nn, "DRAM-level bandwidth", "256"));

    /* Without OS sizes: in order, the last one DRAM. */
    nn = sb_plateau_label(p, np, NULL, 0, sizes[n - 1], notes, 8);
    CHECK(nn == 0);
    if (np == 3)
        CHECK(strcmp(p[1].label, "L2") == 0 && strcmp(p[2].label, "DRAM") == 0);

    /* A sweep that stops inside the last cache has no DRAM plateau. */
    int n2 = last_inside(sizes, n, 32 * M) + 1;
    curve in = {3, {32 * K, 512 * K, 64 * M}, {200, 120, 60, 15}};
    gen(&in, 1.5, false, 0.02, 13, sizes, bw);
    np = sb_plateau_detect(sizes, bw, n2, NULL, p, SB_PLATEAU_MAX);
    double incache[5] = {0, 32 * K, 512 * K, 64 * M, 0};
    nn = sb_plateau_label(p, np, incache, 3, sizes[n2 - 1], notes, 8);
    CHECK(np == 3);
    if (np == 3)
        CHECK(strcmp(p[2].label, "L3") == 0);
}

int main(void)
{
    test_levels();
    test_start_overhead_and_bad_input();
    test_labels();
    return sb_check_done();
}
