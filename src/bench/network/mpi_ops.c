/*
 * mpi_ops.c — the network area's operations under MPI (mpi_ops.h): the
 * collectives (all-reduce, all-gather, reduce-scatter, all-to-all,
 * broadcast, reduce), send/recv in a ring, and the two-rank
 * point-to-point tests (ping-pong, osu_bw style windows one way and both
 * ways); their buffers, one operation, and the validation: after timing,
 * one more operation runs on inputs whose exact result is known on every
 * rank (small integers, so float sums are exact), and wrong elements are
 * counted.
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

/* ---- state of one point -------------------------------------------------- */

bool sb_mpi_coll_is_p2p(sb_netop op)
{
    return op == SB_NET_PINGPONG || op == SB_NET_BW || op == SB_NET_BIBW;
}

/* Bytes each buffer needs for a point: the same arithmetic for footprint()
 * (before anything is allocated) and setup. */
void sb_mpi_coll_buffers(const sb_mpi_coll *st, size_t *sb, size_t *rb)
{
    size_t all = st->count * st->elem, part = st->chunk * st->elem;
    *sb = *rb = 0;
    switch (st->op) {
    case SB_NET_ALLREDUCE:
    case SB_NET_ALLTOALL:
    case SB_NET_SENDRECV:
        *sb = st->inplace ? 0 : all;
        *rb = all;
        break;
    case SB_NET_ALLGATHER:
        *sb = st->inplace ? 0 : part;
        *rb = all;
        break;
    case SB_NET_REDUCE_SCATTER:
        *sb = st->inplace ? 0 : all;
        *rb = st->inplace ? all : part;
        break;
    case SB_NET_BCAST:
        *rb = all;
        break;
    case SB_NET_REDUCE:
        *sb = all;
        *rb = all;
        break;
    case SB_NET_PINGPONG:
        *sb = *rb = all;
        break;
    case SB_NET_BW:
    case SB_NET_BIBW:
        *sb = all;
        *rb = all * (size_t)st->nslots;
        break;
    default:
        break;
    }
}

/* Fills the parts of st that follow from the parameters alone. */
void sb_mpi_coll_describe(sb_netop op, const sb_params *p, int rank, int nranks,
                          sb_mpi_coll *st)
{
    memset(st, 0, sizeof *st);
    st->op = op;
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
    if (op == SB_NET_BW || op == SB_NET_BIBW) {
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

/* ---- the operations ------------------------------------------------------ */

static void *in_buf(sb_mpi_coll *st)
{
    return st->inplace ? st->rbuf : st->sbuf;
}

/* One iteration of the op (the timed region). */
void sb_mpi_coll_once(sb_mpi_coll *st)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int c = (int)st->count, ch = (int)st->chunk;
    void *snd = st->inplace ? MPI_IN_PLACE : st->sbuf;
    switch (st->op) {
    case SB_NET_ALLREDUCE:
        MPI_Allreduce(snd, st->rbuf, c, st->dt, st->mop, w);
        break;
    case SB_NET_ALLGATHER:
        MPI_Allgather(snd, ch, st->dt, st->rbuf, ch, st->dt, w);
        break;
    case SB_NET_REDUCE_SCATTER:
        MPI_Reduce_scatter_block(snd, st->rbuf, ch, st->dt, st->mop, w);
        break;
    case SB_NET_ALLTOALL:
        MPI_Alltoall(snd, ch, st->dt, st->rbuf, ch, st->dt, w);
        break;
    case SB_NET_BCAST:
        MPI_Bcast(st->rbuf, c, st->dt, st->root, w);
        break;
    case SB_NET_REDUCE:
        MPI_Reduce(st->inplace && st->rank == st->root ? MPI_IN_PLACE
                                                       : st->sbuf,
                   st->rbuf, c, st->dt, st->mop, st->root, w);
        break;
    case SB_NET_SENDRECV: {
        int next = (st->rank + 1) % st->n,
            prev = (st->rank + st->n - 1) % st->n;
        if (st->inplace)
            MPI_Sendrecv_replace(st->rbuf, c, st->dt, next, NET_TAG, prev,
                                 NET_TAG, w, MPI_STATUS_IGNORE);
        else
            MPI_Sendrecv(st->sbuf, c, st->dt, next, NET_TAG, st->rbuf, c,
                         st->dt, prev, NET_TAG, w, MPI_STATUS_IGNORE);
        break;
    }
    case SB_NET_PINGPONG:
        if (st->rank == 0) {
            MPI_Send(st->sbuf, c, MPI_BYTE, 1, NET_TAG, w);
            MPI_Recv(st->rbuf, c, MPI_BYTE, 1, NET_TAG, w, MPI_STATUS_IGNORE);
        } else if (st->rank == 1) {
            MPI_Recv(st->rbuf, c, MPI_BYTE, 0, NET_TAG, w, MPI_STATUS_IGNORE);
            MPI_Send(st->rbuf, c, MPI_BYTE, 0, NET_TAG, w);
        }
        break;
    case SB_NET_BW:
        /* osu_bw: a window of non-blocking sends, then a short ack. */
        if (st->rank == 0) {
            for (int k = 0; k < st->window; k++)
                MPI_Isend(st->sbuf, c, MPI_BYTE, 1, NET_TAG, w, &st->reqs[k]);
            MPI_Waitall(st->window, st->reqs, st->stats);
            MPI_Recv(st->ack, 4, MPI_BYTE, 1, NET_TAG + 1, w,
                     MPI_STATUS_IGNORE);
        } else if (st->rank == 1) {
            for (int k = 0; k < st->window; k++)
                MPI_Irecv((char *)st->rbuf +
                              (size_t)(k % st->nslots) * st->count,
                          c, MPI_BYTE, 0, NET_TAG, w, &st->reqs[k]);
            MPI_Waitall(st->window, st->reqs, st->stats);
            MPI_Send(st->ack, 4, MPI_BYTE, 0, NET_TAG + 1, w);
        }
        break;
    case SB_NET_BIBW:
        /* osu_bibw: both ranks post a window of receives and of sends. */
        if (st->rank < 2) {
            int peer = 1 - st->rank;
            for (int k = 0; k < st->window; k++)
                MPI_Irecv((char *)st->rbuf +
                              (size_t)(k % st->nslots) * st->count,
                          c, MPI_BYTE, peer, NET_TAG, w, &st->reqs[k]);
            for (int k = 0; k < st->window; k++)
                MPI_Isend(st->sbuf, c, MPI_BYTE, peer, NET_TAG, w,
                          &st->reqs[st->window + k]);
            MPI_Waitall(2 * st->window, st->reqs, st->stats);
        }
        break;
    default:
        break;
    }
}

/* ---- validation ---------------------------------------------------------- */

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

/* Builds the inputs of the timed loop and of the validation run. With
 * `sentinel` the outputs are set to a value no correct run produces. */
void sb_mpi_coll_prepare(sb_mpi_coll *st, bool sentinel)
{
    int r = st->rank, k = st->kind;
    double b = rank_term(r);
    switch (st->op) {
    case SB_NET_ALLREDUCE:
    case SB_NET_SENDRECV:
        if (sentinel && !st->inplace)
            fill_sentinel(st->rbuf, k, st->count);
        fill(in_buf(st), k, st->count, 0, 1, b);
        break;
    case SB_NET_REDUCE:
        if (sentinel)
            fill_sentinel(st->rbuf, k, st->count);
        fill(st->inplace && r == st->root ? st->rbuf : st->sbuf, k, st->count,
             0, 1, b);
        break;
    case SB_NET_ALLGATHER:
        if (sentinel)
            fill_sentinel(st->rbuf, k, st->count);
        fill(st->inplace ? (char *)st->rbuf + (size_t)r * st->chunk * st->elem
                         : st->sbuf,
             k, st->chunk, (size_t)r * st->chunk, 1, b);
        break;
    case SB_NET_REDUCE_SCATTER:
        if (sentinel && !st->inplace)
            fill_sentinel(st->rbuf, k, st->chunk);
        fill(in_buf(st), k, st->count, 0, 1, b);
        break;
    case SB_NET_ALLTOALL:
        if (sentinel && !st->inplace)
            fill_sentinel(st->rbuf, k, st->count);
        for (int d = 0; d < st->n; d++)
            fill((char *)in_buf(st) + (size_t)d * st->chunk * st->elem, k,
                 st->chunk, 0, 1, b + dest_term(d));
        break;
    case SB_NET_BCAST:
        if (r == st->root)
            fill(st->rbuf, k, st->count, 0, 1, b);
        else
            fill_sentinel(st->rbuf, k, st->count);
        break;
    case SB_NET_PINGPONG:
    case SB_NET_BW:
    case SB_NET_BIBW:
        if (st->rank < 2) {
            fill(st->sbuf, k, st->count, 0, 1, b);
            if (sentinel)
                fill_sentinel(st->rbuf, k, st->count * (size_t)st->nslots);
        }
        break;
    default:
        break;
    }
}

/* The buffer this rank checks and the rank that plants an error there. */
static int checking_rank(const sb_mpi_coll *st)
{
    if (st->op == SB_NET_REDUCE)
        return st->root;
    if (sb_mpi_coll_is_p2p(st->op))
        return 1;
    return st->n - 1;
}

/* Wrong elements of this rank's output after one validation run. */
static size_t check_output(const sb_mpi_coll *st)
{
    int r = st->rank, k = st->kind;
    double mult, add;
    reduced(st, &mult, &add);
    size_t bad = 0;
    switch (st->op) {
    case SB_NET_ALLREDUCE:
        return count_wrong(st->rbuf, k, st->count, 0, mult, add);
    case SB_NET_REDUCE:
        return r == st->root ? count_wrong(st->rbuf, k, st->count, 0, mult, add)
                             : 0;
    case SB_NET_REDUCE_SCATTER:
        return count_wrong(st->rbuf, k, st->chunk, (size_t)r * st->chunk, mult,
                           add);
    case SB_NET_ALLGATHER:
        for (int s = 0; s < st->n; s++)
            bad += count_wrong(
                (char *)st->rbuf + (size_t)s * st->chunk * st->elem, k,
                st->chunk, (size_t)s * st->chunk, 1, rank_term(s));
        return bad;
    case SB_NET_ALLTOALL:
        for (int s = 0; s < st->n; s++)
            bad +=
                count_wrong((char *)st->rbuf + (size_t)s * st->chunk * st->elem,
                            k, st->chunk, 0, 1, rank_term(s) + dest_term(r));
        return bad;
    case SB_NET_BCAST:
        return count_wrong(st->rbuf, k, st->count, 0, 1, rank_term(st->root));
    case SB_NET_SENDRECV:
        return count_wrong(st->rbuf, k, st->count, 0, 1,
                           rank_term((r + st->n - 1) % st->n));
    case SB_NET_PINGPONG:
        /* rank 1 got rank 0's message; rank 0 got it echoed back. */
        return r < 2 ? count_wrong(st->rbuf, k, st->count, 0, 1, rank_term(0))
                     : 0;
    case SB_NET_BW:
    case SB_NET_BIBW:
        /* Every receive slot holds one whole message from the peer. */
        if (r > 1 || (st->op == SB_NET_BW && r == 0))
            return 0;
        for (int s = 0; s < st->nslots; s++)
            bad += count_wrong((char *)st->rbuf + (size_t)s * st->count, k,
                               st->count, 0, 1, rank_term(1 - r));
        return bad;
    default:
        return 0;
    }
}

/* One untimed run on fresh inputs; the wrong elements of this rank. */
size_t sb_mpi_coll_validate(sb_mpi_coll *st, bool plant)
{
    sb_mpi_coll_prepare(st, true);
    MPI_Barrier(MPI_COMM_WORLD);
    sb_mpi_coll_once(st);
    if (plant && st->rank == checking_rank(st))
        corrupt(st->rbuf, st->kind);
    return check_output(st);
}
