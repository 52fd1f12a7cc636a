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
} sb_fleet_world;

/* MPI started (the launcher's), the ranks grouped by host; ctx's rank,
 * nranks and topology filled (sb_mpi_begin). */
int sb_fleet_mpi_begin(int *argc, char ***argv, sb_ctx *ctx, sb_fleet_world *fw,
                       sb_err *err);
void sb_fleet_mpi_end(sb_fleet_world *fw);

/* fn(arg) on each host's leader: all at once, or with stagger one host
 * after another (the others wait); every rank calls it. Returns the
 * leader's fn result on a leader, 0 elsewhere. */
int sb_fleet_mpi_each_host(sb_fleet_world *fw, bool stagger,
                           int (*fn)(void *arg), void *arg);

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
} sb_fleet_link_opts;

/* The link matrix over the hosts' leaders, on rank 0 (n x n, malloc'ed;
 * NULL elsewhere): bw[i*n+j] bytes/s i sends to j, bibw[i*n+j] both ways
 * at once (the pair's sum), lat[i*n+j] half a round trip of 8 bytes. */
int sb_fleet_mpi_links(sb_fleet_world *fw, const sb_fleet_link_opts *o,
                       double **bw, double **bibw, double **lat, sb_err *err);

/* rank 0's value on every rank */
int sb_fleet_mpi_bcast_int(sb_fleet_world *fw, int v);
/* the largest of every rank's v, on every rank */
int sb_fleet_mpi_max_int(sb_fleet_world *fw, int v);
/* rank 0's string (len bytes, terminated) on every rank */
void sb_fleet_mpi_bcast_str(sb_fleet_world *fw, char *s, size_t len);

#endif
