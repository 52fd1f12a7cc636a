/*
 * mpi_ops.h — the MPI collectives and point-to-point operations of the
 * network area as one state a point (mpi_ops.c): one row an operation
 * (its MPI call, the buffers it needs, how its inputs are filled and its
 * output checked against values every rank knows exactly), keyed by the
 * same sb_netop as the definition's row (netmodel.h). collectives.c times
 * them (its timer, the watchdog, the fit) through these.
 */
#ifndef SOLBENCH_BENCH_NETWORK_MPI_OPS_H
#define SOLBENCH_BENCH_NETWORK_MPI_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>

#include "solbench/error.h"
#include "solbench/netmodel.h"
#include "solbench/param.h"

/* bw/bibw: receive slots never take more than this many bytes; by default
 * the whole window lands in one buffer, as osu_bw and osu_bibw do, which
 * keeps it in cache; `slots=0` gives each message its own buffer. */
#define NET_SLOT_BYTES (64.0 * 1048576.0)
#define NET_TAG 2718

typedef struct sb_mpi_coll sb_mpi_coll;

/* What a buffer of a row holds: nothing, the op's whole buffer (count
 * elements), one rank's chunk, or the whole buffer once a receive slot. */
enum { SB_MPI_BUF_NONE, SB_MPI_BUF_WHOLE, SB_MPI_BUF_CHUNK, SB_MPI_BUF_SLOTS };

/* One row an operation (mpi_netops in mpi_ops.c). */
typedef struct sb_mpi_netop {
    void (*call)(sb_mpi_coll *st); /* one operation */
    /* the inputs of this rank; sentinel: its outputs poisoned too */
    void (*fill)(sb_mpi_coll *st, bool sentinel);
    /* the wrong output elements on this rank */
    size_t (*check)(const sb_mpi_coll *st);
    unsigned char send, recv; /* SB_MPI_BUF_* */
    bool inplace_shares;      /* inplace: one buffer, the larger, for both */
    /* plant_error corrupts the root's output (else the last rank's; rank
     * 1's for point to point) */
    bool root_checks;
    bool half;        /* a sample is a round trip: half is reported */
    const char *note; /* point to point: how it is timed */
} sb_mpi_netop;

struct sb_mpi_coll {
    sb_netop op;
    const sb_netop_def *def; /* the definition's row */
    const sb_mpi_netop *mpi; /* this file's row */
    int rank, n;
    int kind;
    size_t elem;
    MPI_Datatype dt;
    MPI_Op mop;
    int opkind; /* 0 sum, 1 max, 2 min */
    bool inplace;
    int root;
    int window, nslots;
    size_t count; /* elements of the op's buffer (bytes for p2p) */
    size_t chunk; /* count / n for the chunked ops */
    void *sbuf, *rbuf;
    size_t sbytes, rbytes;
    MPI_Request *reqs;
    /* Real status arrays: MPICH declares MPI_Waitall's statuses with an
     * access size, and gcc warns on MPI_STATUSES_IGNORE. */
    MPI_Status *stats;
    char ack[4];
};

/* The point's operation (its rows; st->mpi->call NULL when MPI has no row
 * for it), types, counts and buffers' sizes from its parameters (nothing
 * allocated); st->dt is MPI_DATATYPE_NULL where this MPI lacks the type. */
void sb_mpi_coll_describe(sb_netop op, const sb_params *p, int rank, int nranks,
                          sb_mpi_coll *st);
/* Bytes of the send and receive buffers (for footprint and setup alike). */
void sb_mpi_coll_buffers(const sb_mpi_coll *st, size_t *sb, size_t *rb);
int sb_mpi_coll_alloc(sb_mpi_coll *st, sb_err *err);
void sb_mpi_coll_free(sb_mpi_coll *st);
/* Fills the inputs (sentinel: the outputs poisoned too, for validation). */
void sb_mpi_coll_prepare(sb_mpi_coll *st, bool sentinel);
/* One operation. */
void sb_mpi_coll_once(sb_mpi_coll *st);
/* One more operation on known inputs; the wrong output elements on this
 * rank (plant: one corrupted first, for the tests). */
size_t sb_mpi_coll_validate(sb_mpi_coll *st, bool plant);

#endif
