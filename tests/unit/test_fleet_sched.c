/*
 * test_fleet_sched.c — the sampled link schedule
 * (sb_fleet_sampled_rounds): each round disjoint pairs, partners
 * symmetric; no pair twice; every ring pair h, h + 1 scheduled; at most
 * k + 2 partners a host and few hosts short of them; ring + k rounds,
 * or the full tournament (every pair) where that is no more; the same
 * seed the same schedule, another seed another; bad arguments refused.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "solbench/fleet.h"

/* One schedule's checks (n hosts, k matchings, seed). */
static void check_schedule(int n, int k, unsigned long long seed)
{
    int *p = NULL, rounds = -1;
    sb_err err = {0};
    int rc = sb_fleet_sampled_rounds(n, k, seed, &p, &rounds, &err);
    CHECK(rc == 0);
    if (rc != 0) {
        fprintf(stderr, "n=%d k=%d: %s\n", n, k, err.msg);
        return;
    }
    int ring = n % 2 ? 3 : 2, full = n % 2 ? n : n - 1;
    bool sampled = ring + k < full;
    int want = n < 2 ? 0 : sampled ? ring + k : full;
    CHECK(rounds == want);
    if (rounds != want)
        fprintf(stderr, "n=%d k=%d: %d rounds, want %d\n", n, k, rounds, want);
    if (n < 2) {
        free(p);
        return;
    }
    CHECK(p != NULL);
    if (!p)
        return;

    /* seen: pairs a < b as a bit each */
    unsigned char *seen = calloc(((size_t)n * n + 7) / 8, 1);
    int *deg = calloc((size_t)n, sizeof *deg);
    CHECK(seen && deg);
    if (!seen || !deg) {
        free(seen), free(deg), free(p);
        return;
    }
    bool disjoint = true, twice = false;
    for (int r = 0; r < rounds; r++) {
        const int *row = p + (size_t)r * n;
        for (int h = 0; h < n; h++) {
            int q = row[h];
            if (q == -1)
                continue;
            if (q < 0 || q >= n || q == h || row[q] != h) {
                disjoint = false;
                continue;
            }
            if (h > q)
                continue; /* each pair once, from its lower end */
            size_t bit = (size_t)h * n + q;
            if (seen[bit / 8] & (1u << (bit % 8)))
                twice = true;
            seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
            deg[h]++;
            deg[q]++;
        }
    }
    CHECK(disjoint);
    CHECK(!twice);

    /* the ring: h with h + 1 (mod n), for every h */
    bool ring_ok = true;
    for (int h = 0; h < n; h++) {
        int a = h, b = (h + 1) % n;
        if (a > b) {
            int t = a;
            a = b;
            b = t;
        }
        size_t bit = (size_t)a * n + b;
        ring_ok = ring_ok && (seen[bit / 8] & (1u << (bit % 8)));
    }
    CHECK(ring_ok);

    int lo = n, hi = 0;
    long missing = 0;
    for (int h = 0; h < n; h++) {
        lo = deg[h] < lo ? deg[h] : lo;
        hi = deg[h] > hi ? deg[h] : hi;
        missing += k + 2 - deg[h];
    }
    CHECK(hi <= k + 2);
    CHECK(n < 3 || lo >= 2);
    if (!sampled) {
        /* the full tournament: every pair */
        CHECK(lo == n - 1 && hi == n - 1);
    } else if (n >= 64) {
        /* repeats are swapped away: every host but an odd fleet's idle
         * one a round gets its k + 2 (a pair or so left idle at most) */
        long allowed = (long)(n % 2) * k + 2;
        CHECK(missing >= (long)(n % 2) * k && missing <= allowed);
        if (missing > allowed)
            fprintf(stderr, "n=%d k=%d: %ld partners short\n", n, k, missing);
    }
    free(seen);
    free(deg);
    free(p);
}

static void test_shapes(void)
{
    static const int ns[] = {0, 1, 2, 3, 4, 5, 8, 9, 64, 65, 1000, 1001};
    static const int ks[] = {0, 1, 8};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        for (size_t j = 0; j < sizeof ks / sizeof *ks; j++)
            for (unsigned long long seed = 1; seed <= 3; seed++)
                check_schedule(ns[i], ks[j], seed);
    /* the largest fleet, the most matchings */
    check_schedule(SB_FLEET_MAX_HOSTS, 64, 42);
    check_schedule(SB_FLEET_MAX_HOSTS - 1, 64, 42);
}

/* Which side of the cut-over: 4 hosts, k = 0 is the ring (2 rounds, not
 * the tournament's 3); k = 1 the tournament. */
static void test_cutover(void)
{
    int *p = NULL, rounds = -1;
    sb_err err = {0};
    CHECK(sb_fleet_sampled_rounds(4, 0, 7, &p, &rounds, &err) == 0);
    CHECK(rounds == 2);
    free(p);
    p = NULL;
    CHECK(sb_fleet_sampled_rounds(4, 1, 7, &p, &rounds, &err) == 0);
    CHECK(rounds == 3);
    free(p);
    p = NULL;
    /* 13 hosts, k = 9: 12 rounds < 13, sampled; k = 10: the tournament */
    CHECK(sb_fleet_sampled_rounds(13, 9, 7, &p, &rounds, &err) == 0);
    CHECK(rounds == 12);
    free(p);
    p = NULL;
    CHECK(sb_fleet_sampled_rounds(13, 10, 7, &p, &rounds, &err) == 0);
    CHECK(rounds == 13);
    free(p);
}

static void test_seed(void)
{
    int *a = NULL, *b = NULL, *c = NULL, ra = 0, rb = 0, rc = 0;
    sb_err err = {0};
    CHECK(sb_fleet_sampled_rounds(1000, 8, 12345, &a, &ra, &err) == 0);
    CHECK(sb_fleet_sampled_rounds(1000, 8, 12345, &b, &rb, &err) == 0);
    CHECK(sb_fleet_sampled_rounds(1000, 8, 12346, &c, &rc, &err) == 0);
    CHECK(ra == 10 && rb == 10 && rc == 10);
    if (a && b && c && ra == 10 && rb == 10 && rc == 10) {
        size_t sz = (size_t)ra * 1000 * sizeof *a;
        CHECK(memcmp(a, b, sz) == 0);
        CHECK(memcmp(a, c, sz) != 0);
        /* the ring rounds are the same whatever the seed */
        CHECK(memcmp(a, c, 2 * 1000 * sizeof *a) == 0);
    }
    free(a), free(b), free(c);
}

static void test_bad(void)
{
    static const int bad[][2] = {
        {-1, 8}, {SB_FLEET_MAX_HOSTS + 1, 8}, {1000, -1}, {1000, 65}, {-5, -5}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int *p = (int *)&bad, rounds = 99;
        sb_err err = {0};
        CHECK(sb_fleet_sampled_rounds(bad[i][0], bad[i][1], 1, &p, &rounds,
                                      &err) == SB_EINVAL);
        CHECK(err.code == SB_EINVAL && err.msg[0] != '\0');
        CHECK(p == NULL && rounds == 0);
    }
    sb_err err = {0};
    int rounds;
    CHECK(sb_fleet_sampled_rounds(10, 1, 1, NULL, &rounds, &err) == SB_EINVAL);
    /* the limits themselves are fine */
    int *p = NULL;
    CHECK(sb_fleet_sampled_rounds(1000, 64, 1, &p, &rounds, &err) == 0);
    CHECK(rounds == 66);
    free(p);
    p = NULL;
    CHECK(sb_fleet_sampled_rounds(0, 0, 1, &p, &rounds, &err) == 0);
    CHECK(p == NULL && rounds == 0);
}

int main(void)
{
    test_shapes();
    test_cutover();
    test_seed();
    test_bad();
    return sb_check_done();
}
