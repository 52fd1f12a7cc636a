/*
 * fleet.h — many hosts in one run (`solbench fleet`, docs/FLEET.md): each
 * host's figures compared with its peers' (like with like: hosts of one
 * fingerprint class), the links between hosts as a matrix, and the
 * diagnosis that names the slow host and the slow link. The MPI side
 * (launch, per-host suite, link rounds) is in src/fleet/fleet_mpi.c; this
 * is the logic, with its unit test (unit.test_fleet).
 */
#ifndef SOLBENCH_FLEET_H
#define SOLBENCH_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "solbench/error.h"
#include "solbench/json_fwd.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SB_FLEET_NAME 64
#define SB_FLEET_METRIC 320
/* hosts a fleet run takes at most (the link matrix is N x N doubles) */
#define SB_FLEET_MAX_HOSTS 4096

typedef struct sb_fleet_host {
    char name[SB_FLEET_NAME]; /* hostname */
    char cls[SB_FLEET_NAME];  /* like-with-like class: its fingerprint */
    int ranks;                /* MPI ranks on it */
    bool failed;              /* it did not report */
    bool unjudged;            /* too few peers of its class to judge it
                                 (sb_fleet_analyse) */
    char why[160];            /* failed: what was seen */
} sb_fleet_host;

/* One figure of one host: `metric` names the benchmark, its point and
 * the figure ("memory.read size=1GiB GBps"). */
typedef struct sb_fleet_value {
    int host;
    char metric[SB_FLEET_METRIC];
    double value;
    bool higher_better;
} sb_fleet_value;

/* When a host is worse than its peers: by at least floor_pct percent of
 * their median (latency_floor_pct for a lower-is-better figure, a
 * latency: a few microseconds of scheduling move it by more than a
 * throughput moves), and by more than k_mad times the peers' spread (the
 * MAD scaled to a standard deviation, 1.4826 x MAD, in percent of the
 * median), among at least min_peers hosts of its class that have the
 * metric (two hosts cannot say which one is slow). */
typedef struct sb_fleet_rules {
    double floor_pct;
    double latency_floor_pct;
    double k_mad;
    int min_peers;
} sb_fleet_rules;

/* The defaults: 10 %, 25 %, 3, 3 (docs/FLEET.md has their false-alarm
 * rates). */
void sb_fleet_rules_default(sb_fleet_rules *r);

/* A host worse than its peers at one metric. deviation_pct is signed
 * (value - median) / median x 100; threshold_pct the bar it passed. */
typedef struct sb_fleet_flag {
    int host;
    char metric[SB_FLEET_METRIC];
    double value, median, deviation_pct, threshold_pct;
    int peers; /* hosts of its class with the metric, itself included */
} sb_fleet_flag;

/* Each metric of each class of hosts (failed hosts left out), the hosts
 * flagged, worst deviation first; *out malloc'ed (NULL when none). */
int sb_fleet_diagnose(const sb_fleet_host *hosts, int nh,
                      const sb_fleet_value *v, size_t nv,
                      const sb_fleet_rules *r, sb_fleet_flag **out,
                      size_t *nout, sb_err *err);

/* The link matrix: bw[i*n + j] the bytes/s host i sends to host j
 * (<= 0 or NaN: not measured), lat[i*n + j] the one-way latency in
 * seconds (NULL: none). Each host's links are summarised as the median
 * of its measured links, both directions (a host's "links.bw" and
 * "links.latency" values, appended to *v by sb_fleet_link_values so the
 * host diagnosis compares them with the peers'); a link is slow when it
 * is worse than the better of its two ends' medians by floor_pct (a
 * healthy end's links are fast, so a slow link shows against it), by
 * floor_pct and k_mad times the spread of the links between hosts not
 * flagged for their links. */
typedef struct sb_fleet_link_flag {
    int from, to;
    double bw_Bps, reference_Bps, deviation_pct, threshold_pct;
    int cause; /* a host flagged for its links.bw at one end, else -1 */
} sb_fleet_link_flag;

/* Appends each host's links.bw (and links.latency where lat is given)
 * to *v (realloc'ed; *nv updated); hosts with no measured link get
 * none. */
int sb_fleet_link_values(int n, const double *bw, const double *lat,
                         sb_fleet_value **v, size_t *nv, sb_err *err);

/* The slow links, slowest first; cause filled from the host flags
 * (flags, nflags: sb_fleet_diagnose's over values that include the link
 * values). *out malloc'ed (NULL when none). */
int sb_fleet_diagnose_links(int n, const double *bw, const sb_fleet_rules *r,
                            const sb_fleet_flag *flags, size_t nflags,
                            sb_fleet_link_flag **out, size_t *nout,
                            sb_err *err);

/* The rounds of a round-robin tournament over n hosts (the circle
 * method): n - 1 rounds of n / 2 disjoint pairs (n odd: n rounds, one
 * host idle in each). partner[r*n + h] is h's partner in round r, -1
 * when idle; *rounds of them (0 for one host); *partner malloc'ed. */
int sb_fleet_rounds(int n, int **partner, int *rounds, sb_err *err);

/* ---- a host's runs as values ------------------------------------------ */

struct sb_run;
/* Each valid, measured result of run (host h) as values appended to *v
 * (realloc'ed): its headline, at the median sample, keyed "bench point
 * figure", and, where it has samples, the same figure over the mean
 * sample ("... sustained"): what the host sustains. A host whose CPU is
 * throttled (a quota, a noisy neighbour) runs its samples at full speed
 * between the pauses; the median does not see them, the mean does. A
 * point whose key would not fit SB_FLEET_METRIC is left out (a key cut
 * short could merge two points) and counted in *too_long. */
int sb_fleet_run_values(const struct sb_run *run, int h, sb_fleet_value **v,
                        size_t *nv, size_t *too_long, sb_err *err);
/* The values of several rounds as one a host and metric: the median
 * over the rounds (a host slowed for one round by something passing is
 * not flagged for it); v sorted and compacted in place. */
void sb_fleet_median_rounds(sb_fleet_value *v, size_t *nv);

/* ---- a fleet run's report -------------------------------------------- */

/* What `fleet run` measured and concluded (rank 0's). */
typedef struct sb_fleet_report {
    char id[40];         /* the fleet run's id (its hosts' runs carry it) */
    char started_at[32]; /* UTC ISO-8601 */
    char launcher[64];   /* "mpirun", "srun", ... */
    int nhosts, nranks;
    int rounds; /* of the per-host suite; a host's figure the median */
    sb_fleet_host *hosts;
    char (*run_ids)[40]; /* each host's stored run ("" none) */
    sb_fleet_value *v;   /* the hosts' figures, then their links' */
    size_t nv;
    sb_fleet_rules rules;
    sb_fleet_flag *flags;
    size_t nflags;
    double *bw, *bibw, *lat; /* nhosts x nhosts, NULL without --links */
    sb_fleet_link_flag *links;
    size_t nlinks;
} sb_fleet_report;

/* The diagnosis of r's values and link matrix (its flags and links),
 * and the hosts it could not judge: those of a class with fewer than
 * min_peers hosts that reported (a host whose hardware, or kernel,
 * differs from the rest is one). */
int sb_fleet_analyse(sb_fleet_report *r, sb_err *err);
/* The hosts, the flagged hosts and links, the verdict. */
void sb_fleet_print(FILE *f, const sb_fleet_report *r);
/* The verdict line alone (--quiet). */
void sb_fleet_print_verdict(FILE *f, const sb_fleet_report *r);
/* schema solbench.fleet/1 (docs/FLEET.md); a new reference */
json_t *sb_fleet_to_json(const sb_fleet_report *r);
/* One testcase a host (a failure naming each metric it was flagged
 * for) and one for the links. */
int sb_fleet_write_junit(const sb_fleet_report *r, const char *path,
                         double seconds, sb_err *err);
/* Whether anything was flagged, a host failed, or a host could not be
 * judged (a health check does not vouch for what it did not judge). */
bool sb_fleet_unhealthy(const sb_fleet_report *r);
void sb_fleet_report_free(sb_fleet_report *r);

#ifdef __cplusplus
}
#endif

#endif
