/*
 * fleet_sched.c — the sampled link schedule for large fleets
 * (include/solbench/fleet.h, docs/FLEET.md "Scaling (on paper)"): a
 * ring, each host with its two neighbours, and k random perfect
 * matchings, so each host is measured against about k + 2 partners in
 * k + 2 rounds (k + 3 for an odd fleet) rather than all N - 1 of the
 * round-robin tournament. No pair is measured twice; the draw is
 * deterministic for a seed (splitmix64, not rand()).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solbench/fleet.h"

/* the most random matchings sb_fleet_sampled_rounds draws */
#define SB_SCHED_MAX_K 64
/* the random pairs a repeated pair tries to swap with before its two
 * hosts are left idle for the round */
#define SB_SCHED_TRIES 64

/* splitmix64 (Steele, Lea, Flood 2014): small, self-contained, good
 * enough to shuffle hosts. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, bound), bound > 0 (rejection: no modulo
 * bias). */
static uint32_t below(uint64_t *s, uint32_t bound)
{
    uint64_t lim = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do
        x = splitmix64(s);
    while (x >= lim);
    return (uint32_t)(x % bound);
}

/* The partners each host has been scheduled with so far: adj[h*cap ..
 * h*cap + deg[h]) (at most k + 2 of them, so a scan is cheap). */
typedef struct sched {
    int n, cap;
    int *adj, *deg;
} sched;

static bool met(const sched *s, int a, int b)
{
    const int *l = s->adj + (size_t)a * s->cap;
    for (int i = 0; i < s->deg[a]; i++)
        if (l[i] == b)
            return true;
    return false;
}

/* Schedules pair a-b in row (a round) and remembers it. */
static void pair(sched *s, int *row, int a, int b)
{
    row[a] = b;
    row[b] = a;
    s->adj[(size_t)a * s->cap + s->deg[a]++] = b;
    s->adj[(size_t)b * s->cap + s->deg[b]++] = a;
}

/* One random matching into row: the hosts shuffled (perm, n of them)
 * and paired off in order, an odd n's last one idle. A pair already
 * scheduled in an earlier round is swapped with another pair of this
 * round, chosen at random, where re-pairing the four hosts crosswise
 * gives two new pairs (or, for odd n, with the idle host where that
 * gives a new pair); after SB_SCHED_TRIES draws without one, its two
 * hosts sit this round out. */
static void matching(sched *s, int *row, int *perm, uint64_t *rng)
{
    int n = s->n, np = n / 2;
    bool odd = n % 2;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)below(rng, (uint32_t)i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    /* pair i is perm[2i], perm[2i + 1]; the idle host, if any, perm[n-1] */
    int choices = np - 1 + odd;
    for (int i = 0; i < np; i++) {
        int *a = &perm[2 * i], *b = &perm[2 * i + 1];
        if (!met(s, *a, *b) || choices < 1)
            continue;
        for (int t = 0; t < SB_SCHED_TRIES; t++) {
            int j = (int)below(rng, (uint32_t)choices);
            if (j >= i)
                j++; /* another pair, or (j == np) the idle host */
            if (j == np) {
                int *z = &perm[n - 1];
                int keep = !met(s, *a, *z) ? 0 : !met(s, *z, *b) ? 1 : -1;
                if (keep < 0)
                    continue;
                int *out = keep == 0 ? b : a; /* the one going idle */
                int x = *out;
                *out = *z;
                *z = x;
                break;
            }
            int *c = &perm[2 * j], *d = &perm[2 * j + 1];
            if (!met(s, *a, *c) && !met(s, *b, *d)) {
                /* a-c, b-d */
                int x = *b;
                *b = *c;
                *c = x;
                break;
            }
            if (!met(s, *a, *d) && !met(s, *b, *c)) {
                /* a-d, b-c */
                int x = *b;
                *b = *d;
                *d = x;
                break;
            }
        }
    }
    /* a pair that a later swap made new counts; one still repeated
     * leaves its hosts idle */
    for (int i = 0; i < np; i++)
        if (!met(s, perm[2 * i], perm[2 * i + 1]))
            pair(s, row, perm[2 * i], perm[2 * i + 1]);
}

int sb_fleet_sampled_rounds(int n, int k, unsigned long long seed,
                            int **partner, int *rounds, sb_err *err)
{
    if (!partner || !rounds)
        return sb_fail(err, SB_EINVAL, "fleet schedule: no output given");
    *partner = NULL;
    *rounds = 0;
    if (n < 0 || n > SB_FLEET_MAX_HOSTS)
        return sb_fail(err, SB_EINVAL, "fleet schedule: %d hosts (0 to %d)", n,
                       SB_FLEET_MAX_HOSTS);
    if (k < 0 || k > SB_SCHED_MAX_K)
        return sb_fail(err, SB_EINVAL,
                       "fleet schedule: %d random matchings (0 to %d)", k,
                       SB_SCHED_MAX_K);
    if (n < 2)
        return 0;
    int ring = n % 2 ? 3 : 2, full = n % 2 ? n : n - 1;
    if (ring + k >= full)
        return sb_fleet_rounds(n, partner, rounds, err);

    int nr = ring + k;
    int *p = malloc((size_t)nr * n * sizeof *p);
    sched s = {.n = n, .cap = k + 2};
    s.adj = malloc((size_t)n * s.cap * sizeof *s.adj);
    s.deg = calloc((size_t)n, sizeof *s.deg);
    int *perm = malloc((size_t)n * sizeof *perm);
    if (!p || !s.adj || !s.deg || !perm) {
        free(p), free(s.adj), free(s.deg), free(perm);
        return sb_fail(err, SB_ENOMEM, "fleet schedule: out of memory");
    }
    for (size_t i = 0; i < (size_t)nr * n; i++)
        p[i] = -1;

    /* the ring, h with h + 1 (mod n): the even edges, then the odd ones;
     * an odd ring's closing edge n-1 to 0 in a round of its own */
    int *r0 = p, *r1 = p + n;
    for (int h = 0; h + 1 < n; h += 2)
        pair(&s, r0, h, h + 1);
    for (int h = 1; h + 1 < n; h += 2)
        pair(&s, r1, h, h + 1);
    if (n % 2)
        pair(&s, p + 2 * (size_t)n, n - 1, 0);
    else
        pair(&s, r1, n - 1, 0);

    uint64_t rng = (uint64_t)seed;
    for (int r = ring; r < nr; r++)
        matching(&s, p + (size_t)r * n, perm, &rng);

    free(s.adj), free(s.deg), free(perm);
    *partner = p;
    *rounds = nr;
    return 0;
}
