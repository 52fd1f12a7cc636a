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
    /* against the host's own figure in a baseline fleet (median: that
     * figure; peers: 1) rather than against its peers */
    bool vs_baseline;
} sb_fleet_flag;

/* Each metric of each class of hosts (failed hosts left out), the hosts
 * flagged, worst deviation first; *out malloc'ed (NULL when none). */
int sb_fleet_diagnose(const sb_fleet_host *hosts, int nh,
                      const sb_fleet_value *v, size_t nv,
                      const sb_fleet_rules *r, sb_fleet_flag **out,
                      size_t *nout, sb_err *err);

/* Each host's figures against its own in a baseline fleet (bhosts,
 * bv: the same host is the one of the same name and class there; a
 * figure not in the baseline is not judged): worse by at least the bar
 * of sb_fleet_diagnose, the floor or k_mad times the baseline's spread
 * of that figure across its hosts of the class, whichever is larger.
 * Flags (vs_baseline, median = the baseline's figure) are appended to
 * *out (realloc'ed, *nout of them); all sorted worst first. */
int sb_fleet_diagnose_baseline(const sb_fleet_host *hosts, int nh,
                               const sb_fleet_value *v, size_t nv,
                               const sb_fleet_host *bhosts, int nbh,
                               const sb_fleet_value *bv, size_t nbv,
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
/* The sampled rounds for a large fleet (src/fleet/fleet_sched.c): a
 * ring, each host with h - 1 and h + 1 (mod n), in 2 rounds (n odd: 3),
 * then k random perfect matchings (0 <= k <= 64), a round each (n odd:
 * one host idle), drawn from seed (the same seed, the same schedule):
 * each host gets at most k + 2 partners, every ring pair among them.
 * No pair comes twice: a matching's pair already scheduled is swapped
 * with another of its round where that makes both pairs new, else its
 * two hosts sit the round out. Where ring + k rounds would be at least
 * the full tournament's (n - 1; n odd: n), it is the full tournament
 * (sb_fleet_rounds). Output as sb_fleet_rounds'; n of 0 or 1: no
 * rounds, *partner NULL. */
int sb_fleet_sampled_rounds(int n, int k, unsigned long long seed,
                            int **partner, int *rounds, sb_err *err);

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

/* A collective measured across the fleet (`fleet run --collectives`):
 * at one level, on `ranks` ranks, S = bytes as nccl-tests counts it,
 * the median time of an operation, and what the two-level model says
 * from the same fleet's link figures. */
typedef struct sb_fleet_coll {
    char level[16]; /* "host": inside each host (its ranks, over shared
                       memory); "hosts": between the hosts' leaders;
                       "all": every rank, in two levels */
    char op[16];    /* "allreduce", ... (sb_netop_name) */
    double bytes;
    int ranks;
    double seconds;     /* measured, median of the iterations */
    double predicted_s; /* the model's, 0 where it has none */
    bool valid;         /* every rank's sums right */
    int per_host;       /* "all": ranks on every host (0: hosts differ,
                           no two-level model); else 0 */
} sb_fleet_coll;

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
    sb_fleet_coll *coll; /* --collectives, ncoll of them */
    size_t ncoll;
    /* the fleet's figures per level (0: not measured), B/s per rank and
     * direction and seconds: scale-out from the link matrix (the median
     * link one way, the median latency), scale-up from the all-reduce
     * inside the hosts (alpha-beta fit over its sizes, the bandwidth as
     * busbw); sb_fleet_predict_colls */
    double up_Bps, up_alpha_s, out_Bps, out_alpha_s;
    char baseline[40]; /* the baseline fleet's id ("" none): flags with
                          vs_baseline are against it */
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

/* The figures per level (up_*, out_*) from the link matrix and the
 * all-reduce inside the hosts, and each collective's predicted_s from
 * them by predict's model (sb_net_coll_time): "hosts" flat across n
 * hosts, "all" in two levels, "host" inside (from its own fit: a check
 * of the fit, not a prediction). */
void sb_fleet_predict_colls(sb_fleet_report *r);

/* A fleet run's document read back (schema solbench.fleet/1: what
 * sb_fleet_to_json wrote): hosts, figures (lower_better says which are
 * lower-is-better), rules, link matrix and collectives; the flags are not
 * read but judged again (sb_fleet_analyse). Every field checked; errors
 * name the JSON path. r is overwritten, sb_fleet_report_free it after
 * success (nothing to free on failure). */
int sb_fleet_from_json(const json_t *doc, sb_fleet_report *r, sb_err *err);
/* The same from text (where: its name in messages) or from a file (at
 * most SB_RUN_MAX_DOC_BYTES). */
int sb_fleet_read_text(const char *text, const char *where, sb_fleet_report *r,
                       sb_err *err);
int sb_fleet_read_file(const char *path, sb_fleet_report *r, sb_err *err);
/* r's hosts against their own figures in the fleet base
 * (sb_fleet_diagnose_baseline, r's rules): the flags appended to r's,
 * r->baseline set to base's id. After sb_fleet_analyse. */
int sb_fleet_compare_baseline(sb_fleet_report *r, const sb_fleet_report *base,
                              sb_err *err);

#ifdef __cplusplus
}
#endif

#endif
