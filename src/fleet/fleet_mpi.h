/*
 * fleet_mpi.h — the fleet run's MPI side (fleet_mpi.c, built where MPI
 * is): the ranks grouped by host (MPI_Comm_split_type SHARED), one leader
 * a host, the per-host work run together or one host after another, the
 * leaders' documents gathered on rank 0, and the link matrix measured in
 * round-robin rounds of disjoint pairs.
 */
#ifndef SOLBENCH_FLEET_MPI_H
#define SOLBENCH_FLEET_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "solbench/bench.h"

typedef struct sb_fleet_world {
    int rank, nranks;     /* in the world */
    bool leader;          /* this rank leads its host (its lowest rank) */
    int host, nhosts;     /* this rank's host, in the leaders' order */
    int host_ranks;       /* ranks on this rank's host */
    void *node, *leaders; /* MPI_Comm, opaque here */
    int *host_of;         /* each world rank's host (rank 0's; else NULL) */
} sb_fleet_world;

/* MPI started (the launcher's), the ranks grouped by host; ctx's rank,
 * nranks and topology filled (sb_mpi_begin). */
int sb_fleet_mpi_begin(int *argc, char ***argv, sb_ctx *ctx, sb_fleet_world *fw,
                       sb_err *err);
void sb_fleet_mpi_end(sb_fleet_world *fw);

/* One round of the per-host suite, watched: fn(arg) on each host's
 * leader (all at once, or with stagger one host after another), then
 * *doc (what fn left) sent to rank 0, which waits for each host's at most
 * timeout_s (0: for ever) from the start of its turn (of the round
 * without stagger; with stagger rank 0 tells each leader when its turn
 * has come), then for the round's end (every rank) as long. On rank 0
 * (*all)[h] malloc'ed, nhosts of them, NULL for a host that did not
 * report. Returns 0; on rank 0, 1 when a host did not report in time or
 * the launcher is ending the job (SIGTERM, sb_fleet_mpi_watch_term):
 * *late is the first such host (nhosts: every host reported, a rank did
 * not reach the round's end), and the run
 * cannot go on (that host holds every collective: rank 0 reports what
 * it has and aborts the job); < 0 on an error. Every rank calls it. */
int sb_fleet_mpi_round(sb_fleet_world *fw, bool stagger, int (*fn)(void *arg),
                       void *arg, char **doc, double timeout_s, char ***all,
                       int *late, sb_err *err);
/* Rank 0: SIGTERM (the launcher ending the job, as it does when a rank
 * dies) noted instead of ending the process, so the hosts that reported
 * are kept; sb_fleet_mpi_ended says whether it came. */
void sb_fleet_mpi_watch_term(void);
bool sb_fleet_mpi_ended(void);
/* Ends every rank with code: after rank 0 reported a fleet with a host
 * that hung or died (`late`, -1 none), whose ranks would never finish.
 * The ranks of the other hosts are told to end (they wait asleep for
 * it), then MPI_Abort: a launcher that keeps a job going when a rank
 * ends (mpirun --enable-recovery) ends only rank 0 on it. */
void sb_fleet_mpi_abort(sb_fleet_world *fw, int late, int code);

/* Each leader's string to rank 0: (*all)[h] malloc'ed, nhosts of them
 * (rank 0 only; NULL elsewhere). Every rank calls it (non-leaders pass
 * NULL). */
int sb_fleet_mpi_gather(sb_fleet_world *fw, const char *mine, char ***all,
                        sb_err *err);

typedef struct sb_fleet_link_opts {
    size_t bytes;  /* a message (default 1 MiB) */
    int window;    /* messages in flight (default 16) */
    double time_s; /* per direction and pair, at least (default 0.2) */
    bool serial;   /* one pair at a time instead of rounds */
    int sample;    /* > 0: the sampled schedule, a ring and this many
                      random matchings (sb_fleet_sampled_rounds), not
                      every pair */
    unsigned long long seed; /* of the sample; the same on every rank */
} sb_fleet_link_opts;

/* The link matrix over the hosts' leaders, on rank 0 (n x n, malloc'ed;
 * NULL elsewhere): bw[i*n+j] bytes/s i sends to j, bibw[i*n+j] both ways
 * at once (the pair's sum), lat[i*n+j] half a round trip of 8 bytes. */
int sb_fleet_mpi_links(sb_fleet_world *fw, const sb_fleet_link_opts *o,
                       double **bw, double **bibw, double **lat, sb_err *err);

/* The all-reduce (float sums) at each size in bytes, at each level:
 * "host" (each host's ranks at once, over shared memory; the slowest
 * host's figure; only where a host has two ranks or more), "hosts" (the
 * leaders, one a host) and "all" (every rank in two levels: reduce to
 * the host's leader, all-reduce between leaders, broadcast inside; only
 * where some host has two ranks). Each size and level: a checked
 * warm-up, then iterations for time_s, each started by a barrier and
 * timed at its slowest rank; the median. On rank 0 *out (malloc'ed,
 * *nout) with seconds filled (not predicted_s); *valid false on every
 * rank where a sum was wrong. Every rank calls it. */
struct sb_fleet_coll;
int sb_fleet_mpi_collectives(sb_fleet_world *fw, const double *sizes,
                             int nsizes, double time_s,
                             struct sb_fleet_coll **out, size_t *nout,
                             bool *valid, sb_err *err);

/* rank 0's value on every rank */
int sb_fleet_mpi_bcast_int(sb_fleet_world *fw, int v);
/* the largest of every rank's v, on every rank */
int sb_fleet_mpi_max_int(sb_fleet_world *fw, int v);
/* rank 0's string (len bytes, terminated) on every rank */
void sb_fleet_mpi_bcast_str(sb_fleet_world *fw, char *s, size_t len);

#endif
