/*
 * mpi_ops.c — the network area's operations under MPI (mpi_ops.h): the
 * collectives (all-reduce, all-gather, reduce-scatter, all-to-all,
 * broadcast, reduce), send/recv in a ring, and the two-rank
 * point-to-point tests (ping-pong, osu_bw style windows one way and both
 * ways), one row each in mpi_netops (below) keyed by the definition's
 * sb_netop: its call, its buffers, and its validation: after timing, one
 * more operation runs on inputs whose exact result is known on every rank
 * (small integers, so float sums are exact), and wrong elements are
 * counted. A new operation is its call, fill and check here and one row.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/network/mpi_ops.h"
#include "solbench/util.h"

/* ---- data patterns ------------------------------------------------------- */

enum { K_F32, K_F64, K_I32, K_U8 };

/* Element i of the base pattern: integers in [-14, 14], exact in every
 * type; a rank adds rank_term(r) to it, so sums, maxima and minima over
 * ranks are known in closed form. */
static inline double pat(size_t i)
{
    return (double)((i * 7u) % 29u) - 14.0;
}
static double rank_term(int r)
{
    return (double)((r * 13) % 31) - 15.0;
}
/* All-to-all adds a term for the destination too. */
static double dest_term(int d)
{
    return (double)((d * 5) % 11);
}

/* buf[j] = mult * pat(off + j) + add, for j < n. */
static void fill(void *buf, int kind, size_t n, size_t off, double mult,
                 double add)
{
    switch (kind) {
    case K_F32: {
        float *x = buf;
        for (size_t j = 0; j < n; j++)
            x[j] = (float)(mult * pat(off + j) + add);
        break;
    }
    case K_F64: {
        double *x = buf;
        for (size_t j = 0; j < n; j++)
            x[j] = mult * pat(off + j) + add;
        break;
    }
    case K_I32: {
        int32_t *x = buf;
        for (size_t j = 0; j < n; j++)
            x[j] = (int32_t)(mult * pat(off + j) + add);
        break;
    }
    default: {
        uint8_t *x = buf;
        for (size_t j = 0; j < n; j++)
            x[j] = (uint8_t)(int)(mult * pat(off + j) + add);
        break;
    }
    }
}

/* A value the patterns never produce, so a missing transfer shows. */
static void fill_sentinel(void *buf, int kind, size_t n)
{
    switch (kind) {
    case K_F32:
        for (size_t j = 0; j < n; j++)
            ((float *)buf)[j] = -77777.0f;
        break;
    case K_F64:
        for (size_t j = 0; j < n; j++)
            ((double *)buf)[j] = -77777.0;
        break;
    case K_I32:
        for (size_t j = 0; j < n; j++)
            ((int32_t *)buf)[j] = -77777;
        break;
    default:
        memset(buf, 0xA5, n);
        break;
    }
}

/* Elements j < n where buf[j] != mult * pat(off + j) + add. */
static size_t count_wrong(const void *buf, int kind, size_t n, size_t off,
                          double mult, double add)
{
    size_t bad = 0;
    switch (kind) {
    case K_F32: {
        const float *x = buf;
        for (size_t j = 0; j < n; j++)
            bad += x[j] != (float)(mult * pat(off + j) + add);
        break;
    }
    case K_F64: {
        const double *x = buf;
        for (size_t j = 0; j < n; j++)
            bad += x[j] != mult * pat(off + j) + add;
        break;
    }
    case K_I32: {
        const int32_t *x = buf;
        for (size_t j = 0; j < n; j++)
            bad += x[j] != (int32_t)(mult * pat(off + j) + add);
        break;
    }
    default: {
        const uint8_t *x = buf;
        for (size_t j = 0; j < n; j++)
            bad += x[j] != (uint8_t)(int)(mult * pat(off + j) + add);
        break;
    }
    }
    return bad;
}

/* Corrupts element 0 (the plant_error test hook). */
static void corrupt(void *buf, int kind)
{
    switch (kind) {
    case K_F32:
        ((float *)buf)[0] += 1.0f;
        break;
    case K_F64:
        ((double *)buf)[0] += 1.0;
        break;
    case K_I32:
        ((int32_t *)buf)[0] += 1;
        break;
    default:
        ((uint8_t *)buf)[0] ^= 1u;
        break;
    }
}

static bool has_param(const sb_params *p, const char *name)
{
    return sb_p_find(p, name) != NULL;
}

static int dtype_kind(const sb_params *p, size_t *elem, MPI_Datatype *dt)
{
    const char *d = has_param(p, "dtype") ? sb_p_str(p, "dtype") : NULL;
    if (!d) {
        *elem = 1;
        *dt = MPI_BYTE;
        return K_U8;
    }
    if (strcmp(d, "double") == 0) {
        *elem = 8;
        *dt = MPI_DOUBLE;
        return K_F64;
    }
    if (strcmp(d, "int32") == 0) {
        *elem = 4;
        *dt = MPI_INT32_T;
        return K_I32;
    }
    *elem = 4;
    *dt = MPI_FLOAT;
    return K_F32;
}

/* ---- the calls ----------------------------------------------------------- */

static void *in_buf(const sb_mpi_coll *st)
{
    return st->inplace ? st->rbuf : st->sbuf;
}

/* What the collectives are given as their send buffer. */
static void *send_arg(const sb_mpi_coll *st)
{
    return st->inplace ? MPI_IN_PLACE : st->sbuf;
}

static void mpi_allreduce(sb_mpi_coll *st)
{
    MPI_Allreduce(send_arg(st), st->rbuf, (int)st->count, st->dt, st->mop,
                  MPI_COMM_WORLD);
}

static void mpi_allgather(sb_mpi_coll *st)
{
    int ch = (int)st->chunk;
    MPI_Allgather(send_arg(st), ch, st->dt, st->rbuf, ch, st->dt,
                  MPI_COMM_WORLD);
}

static void mpi_reduce_scatter(sb_mpi_coll *st)
{
    MPI_Reduce_scatter_block(send_arg(st), st->rbuf, (int)st->chunk, st->dt,
                             st->mop, MPI_COMM_WORLD);
}

static void mpi_alltoall(sb_mpi_coll *st)
{
    int ch = (int)st->chunk;
    MPI_Alltoall(send_arg(st), ch, st->dt, st->rbuf, ch, st->dt,
                 MPI_COMM_WORLD);
}

static void mpi_bcast(sb_mpi_coll *st)
{
    MPI_Bcast(st->rbuf, (int)st->count, st->dt, st->root, MPI_COMM_WORLD);
}

static void mpi_reduce(sb_mpi_coll *st)
{
    MPI_Reduce(st->inplace && st->rank == st->root ? MPI_IN_PLACE : st->sbuf,
               st->rbuf, (int)st->count, st->dt, st->mop, st->root,
               MPI_COMM_WORLD);
}

static void mpi_sendrecv(sb_mpi_coll *st)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int c = (int)st->count;
    int next = (st->rank + 1) % st->n, prev = (st->rank + st->n - 1) % st->n;
    if (st->inplace)
        MPI_Sendrecv_replace(st->rbuf, c, st->dt, next, NET_TAG, prev, NET_TAG,
                             w, MPI_STATUS_IGNORE);
    else
        MPI_Sendrecv(st->sbuf, c, st->dt, next, NET_TAG, st->rbuf, c, st->dt,
                     prev, NET_TAG, w, MPI_STATUS_IGNORE);
}

static void mpi_pingpong(sb_mpi_coll *st)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int c = (int)st->count;
    if (st->rank == 0) {
        MPI_Send(st->sbuf, c, MPI_BYTE, 1, NET_TAG, w);
        MPI_Recv(st->rbuf, c, MPI_BYTE, 1, NET_TAG, w, MPI_STATUS_IGNORE);
    } else if (st->rank == 1) {
        MPI_Recv(st->rbuf, c, MPI_BYTE, 0, NET_TAG, w, MPI_STATUS_IGNORE);
        MPI_Send(st->rbuf, c, MPI_BYTE, 0, NET_TAG, w);
    }
}

/* Receive k of a window lands in slot k mod nslots. */
static void *slot(const sb_mpi_coll *st, int k)
{
    return (char *)st->rbuf + (size_t)(k % st->nslots) * st->count;
}

/* osu_bw: a window of non-blocking sends, then a short ack. */
static void mpi_bw(sb_mpi_coll *st)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int c = (int)st->count;
    if (st->rank == 0) {
        for (int k = 0; k < st->window; k++)
            MPI_Isend(st->sbuf, c, MPI_BYTE, 1, NET_TAG, w, &st->reqs[k]);
        MPI_Waitall(st->window, st->reqs, st->stats);
        MPI_Recv(st->ack, 4, MPI_BYTE, 1, NET_TAG + 1, w, MPI_STATUS_IGNORE);
    } else if (st->rank == 1) {
        for (int k = 0; k < st->window; k++)
            MPI_Irecv(slot(st, k), c, MPI_BYTE, 0, NET_TAG, w, &st->reqs[k]);
        MPI_Waitall(st->window, st->reqs, st->stats);
        MPI_Send(st->ack, 4, MPI_BYTE, 0, NET_TAG + 1, w);
    }
}

/* osu_bibw: both ranks post a window of receives and of sends. */
static void mpi_bibw(sb_mpi_coll *st)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int c = (int)st->count;
    if (st->rank < 2) {
        int peer = 1 - st->rank;
        for (int k = 0; k < st->window; k++)
            MPI_Irecv(slot(st, k), c, MPI_BYTE, peer, NET_TAG, w, &st->reqs[k]);
        for (int k = 0; k < st->window; k++)
            MPI_Isend(st->sbuf, c, MPI_BYTE, peer, NET_TAG, w,
                      &st->reqs[st->window + k]);
        MPI_Waitall(2 * st->window, st->reqs, st->stats);
    }
}

/* ---- the inputs ---------------------------------------------------------- *
 * Rank r's input element i is pat(i) + rank_term(r) (all-to-all: plus the
 * destination's term), the whole buffer unless said otherwise; with
 * `sentinel` the outputs are set to a value no correct run produces. */

/* all-reduce, send/recv: the whole buffer in, the whole buffer out. */
static void fill_whole(sb_mpi_coll *st, bool sentinel)
{
    if (sentinel && !st->inplace)
        fill_sentinel(st->rbuf, st->kind, st->count);
    fill(in_buf(st), st->kind, st->count, 0, 1, rank_term(st->rank));
}

/* reduce: in place only on the root. */
static void fill_reduce(sb_mpi_coll *st, bool sentinel)
{
    if (sentinel)
        fill_sentinel(st->rbuf, st->kind, st->count);
    fill(st->inplace && st->rank == st->root ? st->rbuf : st->sbuf, st->kind,
         st->count, 0, 1, rank_term(st->rank));
}

/* all-gather: this rank's chunk of the pattern (in place: at its place in
 * the output). */
static void fill_allgather(sb_mpi_coll *st, bool sentinel)
{
    int r = st->rank;
    if (sentinel)
        fill_sentinel(st->rbuf, st->kind, st->count);
    fill(st->inplace ? (char *)st->rbuf + (size_t)r * st->chunk * st->elem
                     : st->sbuf,
         st->kind, st->chunk, (size_t)r * st->chunk, 1, rank_term(r));
}

/* reduce-scatter: the whole buffer in, one chunk out. */
static void fill_reduce_scatter(sb_mpi_coll *st, bool sentinel)
{
    if (sentinel && !st->inplace)
        fill_sentinel(st->rbuf, st->kind, st->chunk);
    fill(in_buf(st), st->kind, st->count, 0, 1, rank_term(st->rank));
}

/* all-to-all: the chunk bound for rank d carries d's term too. */
static void fill_alltoall(sb_mpi_coll *st, bool sentinel)
{
    double b = rank_term(st->rank);
    if (sentinel && !st->inplace)
        fill_sentinel(st->rbuf, st->kind, st->count);
    for (int d = 0; d < st->n; d++)
        fill((char *)in_buf(st) + (size_t)d * st->chunk * st->elem, st->kind,
             st->chunk, 0, 1, b + dest_term(d));
}

/* broadcast: the root's buffer in, every other rank's poisoned. */
static void fill_bcast(sb_mpi_coll *st, bool sentinel)
{
    (void)sentinel;
    if (st->rank == st->root)
        fill(st->rbuf, st->kind, st->count, 0, 1, rank_term(st->rank));
    else
        fill_sentinel(st->rbuf, st->kind, st->count);
}

/* point to point: ranks 0 and 1 send their pattern; every slot poisoned. */
static void fill_p2p(sb_mpi_coll *st, bool sentinel)
{
    if (st->rank < 2) {
        fill(st->sbuf, st->kind, st->count, 0, 1, rank_term(st->rank));
        if (sentinel)
            fill_sentinel(st->rbuf, st->kind, st->count * (size_t)st->nslots);
    }
}

/* ---- the checks ---------------------------------------------------------- */

/* The closed form of op over ranks of (pat(i) + rank_term(r)):
 * mult * pat(i) + add. */
static void reduced(const sb_mpi_coll *st, double *mult, double *add)
{
    double s = 0, mx = -1e300, mn = 1e300;
    for (int r = 0; r < st->n; r++) {
        double b = rank_term(r);
        s += b;
        mx = b > mx ? b : mx;
        mn = b < mn ? b : mn;
    }
    *mult = st->opkind == 0 ? (double)st->n : 1.0;
    *add = st->opkind == 0 ? s : st->opkind == 1 ? mx : mn;
}

static size_t check_allreduce(const sb_mpi_coll *st)
{
    double mult, add;
    reduced(st, &mult, &add);
    return count_wrong(st->rbuf, st->kind, st->count, 0, mult, add);
}

static size_t check_reduce(const sb_mpi_coll *st)
{
    return st->rank == st->root ? check_allreduce(st) : 0;
}

/* This rank's chunk of the reduction. */
static size_t check_reduce_scatter(const sb_mpi_coll *st)
{
    double mult, add;
    reduced(st, &mult, &add);
    return count_wrong(st->rbuf, st->kind, st->chunk,
                       (size_t)st->rank * st->chunk, mult, add);
}

/* Chunk s of the output is rank s's chunk of the pattern. */
static size_t check_allgather(const sb_mpi_coll *st)
{
    size_t bad = 0;
    for (int s = 0; s < st->n; s++)
        bad += count_wrong((char *)st->rbuf + (size_t)s * st->chunk * st->elem,
                           st->kind, st->chunk, (size_t)s * st->chunk, 1,
                           rank_term(s));
    return bad;
}

/* Chunk s of the output is what rank s sent this rank. */
static size_t check_alltoall(const sb_mpi_coll *st)
{
    size_t bad = 0;
    for (int s = 0; s < st->n; s++)
        bad += count_wrong((char *)st->rbuf + (size_t)s * st->chunk * st->elem,
                           st->kind, st->chunk, 0, 1,
                           rank_term(s) + dest_term(st->rank));
    return bad;
}

static size_t check_bcast(const sb_mpi_coll *st)
{
    return count_wrong(st->rbuf, st->kind, st->count, 0, 1,
                       rank_term(st->root));
}

/* The previous rank's buffer. */
static size_t check_sendrecv(const sb_mpi_coll *st)
{
    return count_wrong(st->rbuf, st->kind, st->count, 0, 1,
                       rank_term((st->rank + st->n - 1) % st->n));
}

/* rank 1 got rank 0's message; rank 0 got it echoed back. */
static size_t check_pingpong(const sb_mpi_coll *st)
{
    return st->rank < 2
               ? count_wrong(st->rbuf, st->kind, st->count, 0, 1, rank_term(0))
               : 0;
}

/* Every receive slot holds one whole message from the peer. */
static size_t check_slots(const sb_mpi_coll *st)
{
    size_t bad = 0;
    for (int s = 0; s < st->nslots; s++)
        bad += count_wrong((char *)st->rbuf + (size_t)s * st->count, st->kind,
                           st->count, 0, 1, rank_term(1 - st->rank));
    return bad;
}

static size_t check_bw(const sb_mpi_coll *st)
{
    return st->rank == 1 ? check_slots(st) : 0;
}

static size_t check_bibw(const sb_mpi_coll *st)
{
    return st->rank < 2 ? check_slots(st) : 0;
}

/* ---- the table -----------------------------------------------------------
 * One row an operation: its call, fill and check, what its send and receive
 * buffers hold (SB_MPI_BUF_*), and the flags of sb_mpi_netop. */

#define ROW(CALL, FILL, CHECK, SEND, RECV)                                     \
    .call = CALL, .fill = FILL, .check = CHECK, .send = SB_MPI_BUF_##SEND,     \
    .recv = SB_MPI_BUF_##RECV

static const sb_mpi_netop mpi_netops[SB_NET_NOPS] = {
    [SB_NET_ALLREDUCE] = {ROW(mpi_allreduce, fill_whole, check_allreduce, WHOLE,
                              WHOLE),
                          .inplace_shares = true},
    [SB_NET_ALLGATHER] = {ROW(mpi_allgather, fill_allgather, check_allgather,
                              CHUNK, WHOLE),
                          .inplace_shares = true},
    [SB_NET_REDUCE_SCATTER] = {ROW(mpi_reduce_scatter, fill_reduce_scatter,
                                   check_reduce_scatter, WHOLE, CHUNK),
                               .inplace_shares = true},
    [SB_NET_ALLTOALL] = {ROW(mpi_alltoall, fill_alltoall, check_alltoall, WHOLE,
                             WHOLE),
                         .inplace_shares = true},
    [SB_NET_BCAST] = {ROW(mpi_bcast, fill_bcast, check_bcast, NONE, WHOLE)},
    [SB_NET_REDUCE] = {ROW(mpi_reduce, fill_reduce, check_reduce, WHOLE, WHOLE),
                       .root_checks = true},
    [SB_NET_SENDRECV] = {ROW(mpi_sendrecv, fill_whole, check_sendrecv, WHOLE,
                             WHOLE),
                         .inplace_shares = true},
    [SB_NET_PINGPONG] = {ROW(mpi_pingpong, fill_p2p, check_pingpong, WHOLE,
                             WHOLE),
                         .half = true,
                         .note = "; latency = half the round trip, timed on "
                                 "rank 0"},
    [SB_NET_BW] = {ROW(mpi_bw, fill_p2p, check_bw, WHOLE, SLOTS),
                   .note = "; timed on rank 0 (window + ack), as osu_bw"},
    [SB_NET_BIBW] = {ROW(mpi_bibw, fill_p2p, check_bibw, WHOLE, SLOTS),
                     .note = "; timed on rank 0; S counts both directions, "
                             "as osu_bibw"},
};

#undef ROW

/* ---- state of one point -------------------------------------------------- */

static size_t buf_bytes(const sb_mpi_coll *st, int what)
{
    return what == SB_MPI_BUF_WHOLE   ? st->count * st->elem
           : what == SB_MPI_BUF_CHUNK ? st->chunk * st->elem
           : what == SB_MPI_BUF_SLOTS
               ? st->count * st->elem * (size_t)st->nslots
               : 0;
}

/* Bytes each buffer needs for a point: the same arithmetic for footprint()
 * (before anything is allocated) and setup. */
void sb_mpi_coll_buffers(const sb_mpi_coll *st, size_t *sb, size_t *rb)
{
    *sb = buf_bytes(st, st->mpi->send);
    *rb = buf_bytes(st, st->mpi->recv);
    if (st->inplace && st->mpi->inplace_shares) {
        *rb = *sb > *rb ? *sb : *rb;
        *sb = 0;
    }
}

/* Fills the parts of st that follow from the parameters alone. */
void sb_mpi_coll_describe(sb_netop op, const sb_params *p, int rank, int nranks,
                          sb_mpi_coll *st)
{
    static const sb_netop_def no_def;
    static const sb_mpi_netop no_mpi;
    const sb_netop_def *def = sb_netop_row(op);
    memset(st, 0, sizeof *st);
    st->op = op;
    st->def = def ? def : &no_def;
    st->mpi = def ? &mpi_netops[op] : &no_mpi;
    st->rank = rank;
    st->n = nranks < 2 ? 2 : nranks;
    st->kind = dtype_kind(p, &st->elem, &st->dt);
    const char *o = has_param(p, "op") ? sb_p_str(p, "op") : "sum";
    st->opkind = strcmp(o, "max") == 0 ? 1 : strcmp(o, "min") == 0 ? 2 : 0;
    st->mop = st->opkind == 1 ? MPI_MAX : st->opkind == 2 ? MPI_MIN : MPI_SUM;
    st->inplace = has_param(p, "inplace") && sb_p_bool(p, "inplace");
    st->root = has_param(p, "root") ? (int)sb_p_int(p, "root") : 0;
    st->window = has_param(p, "window") ? (int)sb_p_int(p, "window") : 1;
    st->count = sb_net_count(op, sb_p_num(p, "size"), st->elem, st->n);
    st->chunk = st->count / (size_t)st->n;
    st->nslots = 1;
    if (st->def->window) {
        int want = has_param(p, "slots") ? (int)sb_p_int(p, "slots") : 1;
        double fit = NET_SLOT_BYTES / (double)st->count;
        if (want <= 0 || want > st->window)
            want = st->window;
        st->nslots = fit >= want ? want : fit >= 1 ? (int)fit : 1;
    }
}

void sb_mpi_coll_free(sb_mpi_coll *st)
{
    sb_free_aligned(st->sbuf);
    sb_free_aligned(st->rbuf);
    free(st->reqs);
    free(st->stats);
    st->sbuf = st->rbuf = NULL;
    st->reqs = NULL;
    st->stats = NULL;
}

int sb_mpi_coll_alloc(sb_mpi_coll *st, sb_err *err)
{
    sb_mpi_coll_buffers(st, &st->sbytes, &st->rbytes);
    if (st->sbytes)
        st->sbuf = sb_alloc_aligned(st->sbytes);
    st->rbuf = sb_alloc_aligned(st->rbytes);
    st->reqs = calloc(2 * (size_t)st->window, sizeof *st->reqs);
    st->stats = calloc(2 * (size_t)st->window, sizeof *st->stats);
    if ((st->sbytes && !st->sbuf) || !st->rbuf || !st->reqs || !st->stats) {
        sb_mpi_coll_free(st);
        return sb_fail(err, SB_ENOMEM, "out of memory for %zu + %zu bytes",
                       st->sbytes, st->rbytes);
    }
    return 0;
}

/* ---- one operation, validation ------------------------------------------- */

void sb_mpi_coll_once(sb_mpi_coll *st)
{
    st->mpi->call(st);
}

void sb_mpi_coll_prepare(sb_mpi_coll *st, bool sentinel)
{
    st->mpi->fill(st, sentinel);
}

/* One untimed run on fresh inputs; the wrong elements of this rank. */
size_t sb_mpi_coll_validate(sb_mpi_coll *st, bool plant)
{
    sb_mpi_coll_prepare(st, true);
    MPI_Barrier(MPI_COMM_WORLD);
    sb_mpi_coll_once(st);
    int planted = st->mpi->root_checks ? st->root
                  : st->def->p2p       ? 1
                                       : st->n - 1;
    if (plant && st->rank == planted)
        corrupt(st->rbuf, st->kind);
    return st->mpi->check(st);
}
