/*
 * collectives.c — the network area: MPI collectives (all-reduce,
 * all-gather, reduce-scatter, all-to-all, broadcast, reduce), send/recv in
 * a ring, and the two-rank point-to-point tests (ping-pong latency, osu_bw
 * style windowed bandwidth one way and both ways).
 *
 * Method (docs/NETWORK.md): buffers are allocated once per size and filled
 * before timing; after untimed warm-up iterations every iteration of a
 * collective is timed on every rank between a barrier and the end of the
 * operation, and the iteration's time is the slowest rank's (one MPI_MAX
 * reduction over all iterations after the loop, so it stays out of the
 * timed region). Point-to-point iterations synchronise themselves (reply,
 * ack) and are timed back to back on rank 0, as OSU does.
 * Iteration counts come from the size (more for small messages, as OSU
 * does), never from one rank's timing, so all ranks agree. After timing,
 * one more operation runs on inputs whose exact result is known on every
 * rank (small integers, so float sums are exact); wrong elements are
 * counted on every rank and summed.
 *
 * Each benchmark drives its own point so that, after the last size of a
 * sweep, it can fit t = alpha + S / beta over all sizes measured so far
 * and keep that fit as one summary result (size "fit") at the end of the
 * group, and as the ceilings net.<op>.alpha_s and net.<op>.beta_Bps.
 *
 * A watchdog thread ends the whole job with one message naming the
 * benchmark and size when a point runs past --timeout (a stuck or dead
 * rank), instead of hanging.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "solbench/bench.h"
#include "solbench/net.h"
#include "solbench/netmodel.h"
#include "solbench/timer.h"
#include "solbench/util.h"

/* Per-point limit when --timeout is not given: generous, but never a hang. */
#define NET_DEFAULT_TIMEOUT_S 300.0
/* bw/bibw: receive slots never take more than this many bytes; by default
 * the whole window lands in one buffer, as osu_bw and osu_bibw do, which
 * keeps it in cache; `slots=0` gives each message its own buffer. */
#define NET_SLOT_BYTES (64.0 * 1048576.0)
#define NET_TAG 2718

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

/* ---- parameters ---------------------------------------------------------- */

/* clang-format off */
#define P_DTYPE                                                              \
    {"dtype", SB_P_STR, "float", 0, 0, "float|double|int32",                 \
     "element type (MPI_FLOAT, MPI_DOUBLE, MPI_INT32_T)"}
#define P_OP                                                                 \
    {"op", SB_P_STR, "sum", 0, 0, "sum|max|min", "reduction operator"}
#define P_INPLACE                                                            \
    {"inplace", SB_P_BOOL, "false", 0, 0, NULL,                              \
     "MPI_IN_PLACE (output buffer is the input)"}
#define P_ROOT {"root", SB_P_INT, "0", 0, 1048576, NULL, "root rank"}
#define P_WINDOW                                                             \
    {"window", SB_P_INT, "64", 1, 4096, NULL,                                \
     "messages in flight per iteration (osu_bw's window)"},                  \
    {"slots", SB_P_INT, "1", 0, 4096, NULL,                                  \
     "receive buffers the window cycles through; 1: one, as osu_bw; "        \
     "0: one per message (up to 64 MiB)"}
#define P_TAIL                                                               \
    {"iters", SB_P_INT, "0", 0, 1000000, NULL,                               \
     "timed iterations; 0: from the size (256 MiB of traffic, 20..1000)"},   \
    {"warmup", SB_P_INT, "-1", -1, 100000, NULL,                             \
     "untimed iterations; -1: iters/10, at least 2"},                        \
    {"link_GBps", SB_P_FLOAT, "0", 0, 1e6, NULL,                             \
     "link peak in GB/s, for percent of peak; 0: unknown"},                  \
    {"plant_error", SB_P_BOOL, "false", 0, 0, NULL,                          \
     "testing: corrupt one element on one rank before validation"},          \
    {"stall_rank", SB_P_INT, "-1", -1, 1048576, NULL,                        \
     "testing: this rank sleeps past --timeout"},                            \
    {"size", SB_P_SIZE, "8B..64MiB:x2", 1, 1073741824.0, NULL,               \
     "message size (the op's buffer, as nccl-tests counts it)"},             \
    {NULL, 0, NULL, 0, 0, NULL, NULL}
/* clang-format on */

/* The size is declared last so that it varies fastest in a sweep: all
 * sizes of one (dtype, op, ...) group run back to back and the fit closes
 * the group. */
static const sb_param_def params_reduce_all[] = {P_DTYPE, P_OP, P_INPLACE,
                                                 P_TAIL};
static const sb_param_def params_reduce_root[] = {P_DTYPE, P_OP, P_INPLACE,
                                                  P_ROOT, P_TAIL};
static const sb_param_def params_move[] = {P_DTYPE, P_INPLACE, P_TAIL};
static const sb_param_def params_bcast[] = {P_DTYPE, P_ROOT, P_TAIL};
static const sb_param_def params_p2p[] = {P_TAIL};
static const sb_param_def params_window[] = {P_WINDOW, P_TAIL};

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

typedef struct net_state {
    sb_netop op;
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
} net_state;

static bool is_p2p(sb_netop op)
{
    return op == SB_NET_PINGPONG || op == SB_NET_BW || op == SB_NET_BIBW;
}

/* Bytes each buffer needs for a point: the same arithmetic for footprint()
 * (before anything is allocated) and setup. */
static void buffer_sizes(const net_state *st, size_t *sb, size_t *rb)
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
static void describe(sb_netop op, const sb_params *p, int rank, int nranks,
                     net_state *st)
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

static void net_free(net_state *st)
{
    sb_free_aligned(st->sbuf);
    sb_free_aligned(st->rbuf);
    free(st->reqs);
    free(st->stats);
    st->sbuf = st->rbuf = NULL;
    st->reqs = NULL;
    st->stats = NULL;
}

static int net_alloc(net_state *st, sb_err *err)
{
    buffer_sizes(st, &st->sbytes, &st->rbytes);
    if (st->sbytes)
        st->sbuf = sb_alloc_aligned(st->sbytes);
    st->rbuf = sb_alloc_aligned(st->rbytes);
    st->reqs = calloc(2 * (size_t)st->window, sizeof *st->reqs);
    st->stats = calloc(2 * (size_t)st->window, sizeof *st->stats);
    if ((st->sbytes && !st->sbuf) || !st->rbuf || !st->reqs || !st->stats) {
        net_free(st);
        return sb_fail(err, SB_ENOMEM, "out of memory for %zu + %zu bytes",
                       st->sbytes, st->rbytes);
    }
    return 0;
}

/* ---- the operations ------------------------------------------------------ */

static void *in_buf(net_state *st)
{
    return st->inplace ? st->rbuf : st->sbuf;
}

/* One iteration of the op (the timed region). */
static void op_once(net_state *st)
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
static void reduced(const net_state *st, double *mult, double *add)
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
static void prepare(net_state *st, bool sentinel)
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
static int checking_rank(const net_state *st)
{
    if (st->op == SB_NET_REDUCE)
        return st->root;
    if (is_p2p(st->op))
        return 1;
    return st->n - 1;
}

/* Wrong elements of this rank's output after one validation run. */
static size_t check_output(const net_state *st)
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
static size_t validate(net_state *st, bool plant)
{
    prepare(st, true);
    MPI_Barrier(MPI_COMM_WORLD);
    op_once(st);
    if (plant && st->rank == checking_rank(st))
        corrupt(st->rbuf, st->kind);
    return check_output(st);
}

/* ---- watchdog ------------------------------------------------------------ */

typedef struct watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, running;
    double limit_s;
    char what[200];
    int rank;
} watchdog;

static void *watchdog_main(void *arg)
{
    watchdog *wd = arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    /* Rank 0 speaks first; the others wait 2 s more so that normally one
     * message, not one per rank, announces the abort. */
    double lim = wd->limit_s + (wd->rank == 0 ? 0.0 : 2.0);
    until.tv_sec += (time_t)lim;
    until.tv_nsec += (long)((lim - floor(lim)) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&wd->mu);
    int rc = 0;
    while (!wd->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&wd->cv, &wd->mu, &until);
    bool fire = !wd->done;
    pthread_mutex_unlock(&wd->mu);
    if (fire) {
        char msg[400];
        snprintf(msg, sizeof msg,
                 "%s: no result after %g s (--timeout) on "
                 "rank %d: a rank is stuck or has died; aborting the job",
                 wd->what, wd->limit_s, wd->rank);
        sb_mpi_abort(msg, 2);
    }
    return NULL;
}

static void watchdog_start(watchdog *wd, double limit_s, const char *what,
                           int rank)
{
    memset(wd, 0, sizeof *wd);
    wd->limit_s = limit_s;
    wd->rank = rank;
    snprintf(wd->what, sizeof wd->what, "%s", what);
    pthread_mutex_init(&wd->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wd->cv, &ca);
    pthread_condattr_destroy(&ca);
    wd->running = pthread_create(&wd->thread, NULL, watchdog_main, wd) == 0;
}

static void watchdog_stop(watchdog *wd)
{
    if (wd->running) {
        pthread_mutex_lock(&wd->mu);
        wd->done = true;
        pthread_cond_signal(&wd->cv);
        pthread_mutex_unlock(&wd->mu);
        pthread_join(wd->thread, NULL);
    }
    pthread_cond_destroy(&wd->cv);
    pthread_mutex_destroy(&wd->mu);
}

/* ---- check, footprint ---------------------------------------------------- */

static int net_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    const sb_params *p = pt->params;
    if (ctx->nranks >= 2 && has_param(p, "root") &&
        sb_p_int(p, "root") >= ctx->nranks)
        return sb_fail(err, SB_EINVAL,
                       "network.%s: parameter root=%lld: must "
                       "be below the number of ranks (%d)",
                       sb_netop_name(op), (long long)sb_p_int(p, "root"),
                       ctx->nranks);
    /* MPICH 4.0 reads MPI_IN_PLACE as a buffer in MPI_Reduce when the root
     * is not rank 0 (a segmentation fault from 2 KiB up on 3 ranks): say
     * so instead of crashing. */
    if (op == SB_NET_REDUCE && sb_p_bool(p, "inplace") &&
        sb_p_int(p, "root") != 0 && strstr(ctx->mpi_library, "MPICH") &&
        strstr(ctx->mpi_library, "Version: 4.0"))
        return sb_fail(err, SB_EUNSUP,
                       "network.reduce: inplace=true with "
                       "root=%lld crashes %s; use root=0 or inplace=false",
                       (long long)sb_p_int(p, "root"), ctx->mpi_library);
    net_state st;
    describe(op, p, ctx->rank, ctx->nranks, &st);
    if (st.count > (size_t)INT32_MAX)
        return sb_fail(err, SB_EINVAL,
                       "network.%s: size=%s: more than 2^31 "
                       "elements",
                       sb_netop_name(op), sb_p_str(p, "size"));
    /* A point that must move more than 4 TiB (its timed iterations, 20 at
     * the least, times the traffic of one: size x window for bw) would
     * run for minutes past any timeout: refused, not started. */
    const double per = sb_net_bytes(op, st.count, st.elem, st.window);
    const long long its = sb_p_int(p, "iters") > 0 ? sb_p_int(p, "iters") : 20;
    char sz[32];
    if (per * (double)its > 4398046511104.0)
        return sb_fail(
            err, SB_EINVAL,
            "network.%s: size=%s%s: %lld iterations of %.3g GB "
            "each move more than 4 TiB; lower the size%s",
            sb_netop_name(op),
            sb_fmt_size((double)st.count * (double)st.elem, sz, sizeof sz),
            st.window > 1 ? " with its window" : "", its, per / 1e9,
            st.window > 1 ? " or the window" : "");
    return 0;
}

/* Bytes this host needs for the point: every rank on it holds buffers. */
static double net_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    const sb_params *p = pt->params;
    net_state st;
    describe(op, p, ctx->rank, ctx->nranks, &st);
    size_t sb, rb;
    buffer_sizes(&st, &sb, &rb);
    double per_rank = (double)sb + (double)rb + 8.0 * 1e6;
    int local = ctx->ranks_per_host > 0 ? ctx->ranks_per_host : 1;
    return per_rank * local;
}

/* ---- alpha-beta fit over a sweep ----------------------------------------- */

static bool is_fit(const sb_result *r)
{
    const sb_pval *s = sb_p_find(&r->params, "size");
    return s && strcmp(s->text, "fit") == 0;
}

/* Same bench and same parameters except the size. */
static bool same_group(const sb_result *a, const sb_result *b)
{
    if (strcmp(a->bench, b->bench) != 0 || a->params.n != b->params.n)
        return false;
    for (int i = 0; i < a->params.n; i++) {
        const sb_pval *x = &a->params.v[i], *y = &b->params.v[i];
        if (strcmp(x->name, y->name) != 0)
            return false;
        if (strcmp(x->name, "size") != 0 && strcmp(x->text, y->text) != 0)
            return false;
    }
    return true;
}

/* Refits the group of the last result and moves its summary to the end of
 * the list, so that after the last size it closes the group. */
static int update_fit(const sb_point *pt, sb_ctx *ctx, sb_result_list *out,
                      sb_err *err)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    if (out->n == 0 || strcmp(out->items[out->n - 1].bench, pt->bench->name))
        return 0; /* this rank kept no result of the point */
    sb_result last = out->items[out->n - 1]; /* shallow copy: params, name */
    for (size_t i = 0; i + 1 < out->n; i++) {
        if (is_fit(&out->items[i]) && same_group(&out->items[i], &last)) {
            sb_result_free(&out->items[i]);
            memmove(&out->items[i], &out->items[i + 1],
                    (out->n - i - 1) * sizeof *out->items);
            out->n--;
            break;
        }
    }
    double S[SB_MAX_SWEEP_VALUES], t[SB_MAX_SWEEP_VALUES];
    int k = 0;
    bool all_valid = true;
    double smin = 0, smax = 0;
    for (size_t i = 0; i < out->n && k < SB_MAX_SWEEP_VALUES; i++) {
        const sb_result *r = &out->items[i];
        if (is_fit(r) || r->skipped || r->n_samples == 0 ||
            !same_group(r, &last))
            continue;
        const sb_metric *b = sb_result_get(r, "bytes");
        if (!b || !(r->stats.p50 > 0))
            continue;
        S[k] = b->value;
        t[k] = r->stats.p50;
        smin = k == 0 || S[k] < smin ? S[k] : smin;
        smax = k == 0 || S[k] > smax ? S[k] : smax;
        all_valid = all_valid && r->valid;
        k++;
    }
    if (k < 2)
        return 0;
    sb_ab_fit fit;
    sb_err ferr = {0};
    if (sb_net_fit_ab(S, t, k, true, &fit, &ferr))
        return 0; /* e.g. every size rounded to the same S: no fit */

    sb_result *f = sb_results_push(out);
    if (!f)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    sb_result_init(f, last.bench, "network", "mpi");
    f->params = last.params;
    for (int i = 0; i < f->params.n; i++) {
        sb_pval *v = &f->params.v[i];
        if (strcmp(v->name, "size") == 0) {
            snprintf(v->text, sizeof v->text, "fit");
            v->type = SB_P_STR;
            v->num = 0;
        }
    }
    f->valid = all_valid;
    sb_result_metric(f, "alpha_us", fit.alpha_s * 1e6, "us");
    if (isfinite(fit.beta_Bps))
        sb_result_metric(f, "beta_GBps", fit.beta_Bps * 1e-9, "GB/s");
    sb_result_metric(f, "fit_rel_rms", fit.rel_rms, "");
    sb_result_metric(f, "fit_points", (double)fit.n, "");
    sb_result_metric(f, "ranks", (double)ctx->nranks, "");
    char a[32], b[32];
    sb_fmt_size(smin, a, sizeof a);
    sb_fmt_size(smax, b, sizeof b);
    sb_result_note(f,
                   "alpha-beta model t = alpha + S/beta, least squares "
                   "weighted by 1/t^2 over %d sizes (S %s .. %s), median "
                   "times; relative RMS error %.3g",
                   fit.n, a, b, fit.rel_rms);
    if (!isfinite(fit.beta_Bps))
        sb_result_note(f, "time does not grow with size here: no finite beta");
    if (fit.alpha_s < 0)
        sb_result_note(f, "negative alpha: the sweep has too few small sizes "
                          "to pin the latency");

    /* Only a physical model becomes a ceiling the workload model uses. */
    if (fit.alpha_s >= 0 && isfinite(fit.beta_Bps)) {
        char key[40];
        snprintf(key, sizeof key, "net.%s.alpha_s", sb_netop_name(op));
        sb_ceil_set(&ctx->ceil, key, fit.alpha_s, "measured");
        snprintf(key, sizeof key, "net.%s.beta_Bps", sb_netop_name(op));
        sb_ceil_set(&ctx->ceil, key, fit.beta_Bps, "measured");
    } else {
        sb_result_note(f, "not recorded as a ceiling (no physical alpha and "
                          "beta)");
    }
    return 0;
}

/* ---- one point ----------------------------------------------------------- */

static void add_metrics(const net_state *st, const sb_params *p,
                        const sb_ctx *ctx, int iters, int warm,
                        unsigned long long wrong, sb_result *r)
{
    double S = sb_net_bytes(st->op, st->count, st->elem, st->window);
    double med = r->stats.p50, best = r->stats.min;
    double f = sb_net_busbw_factor(st->op, st->n);
    sb_result_metric(r, "latency_us", med * 1e6, "us");
    sb_result_metric(r, "bytes", S, "B");
    if (med > 0) {
        sb_result_metric(r, "algbw_GBps", sb_net_algbw(S, med) * 1e-9, "GB/s");
        sb_result_metric(r, "busbw_GBps", sb_net_algbw(S, med) * f * 1e-9,
                         "GB/s");
        sb_result_metric(r, "algbw_GBps_best", sb_net_algbw(S, best) * 1e-9,
                         "GB/s");
        sb_result_metric(r, "busbw_GBps_best", sb_net_algbw(S, best) * f * 1e-9,
                         "GB/s");
        double link = sb_p_num(p, "link_GBps");
        if (link > 0)
            sb_result_metric(r, "pct_link",
                             100.0 * sb_net_algbw(S, med) * f * 1e-9 / link,
                             "%");
    }
    sb_result_metric(r, "wrong", (double)wrong, "");
    sb_result_metric(r, "iters", iters, "");
    sb_result_metric(r, "warmup", warm, "");
    sb_result_metric(r, "ranks", ctx->nranks, "");
    sb_result_metric(r, "busbw_factor", f, "");

    double size = sb_p_num(p, "size");
    if (!is_p2p(st->op) && fabs(S - size) > 0.5)
        sb_result_note(r, "S = %.0f B: the size rounded to whole elements%s", S,
                       st->op == SB_NET_ALLGATHER ||
                               st->op == SB_NET_REDUCE_SCATTER ||
                               st->op == SB_NET_ALLTOALL
                           ? " and one equal chunk per rank"
                           : "");
    if (is_p2p(st->op)) {
        sb_result_note(r, "between ranks 0 and 1 only%s",
                       st->op == SB_NET_PINGPONG ? "; latency = half the round "
                                                   "trip, timed on rank 0"
                       : st->op == SB_NET_BW
                           ? "; timed on rank 0 (window + ack), as osu_bw"
                           : "; timed on rank 0; S counts both directions, as "
                             "osu_bibw");
        if (st->op != SB_NET_PINGPONG)
            sb_result_note(r,
                           "the window of %d messages lands in %d receive "
                           "buffer%s",
                           st->window, st->nslots,
                           st->nslots == 1 ? " (as osu_bw)" : "s");
    }
    if (wrong)
        sb_result_note(r, "validation: %llu wrong elements over all ranks",
                       wrong);
}

/* Waits for every rank to reach this point without spinning: under a
 * launcher rank 0 runs the node-local benchmarks alone first, and the
 * other ranks must neither steal its cores (a busy MPI_Barrier would) nor
 * start a point's watchdog while it works, however long that takes. A rank
 * that dies meanwhile is reported by the launcher. */
static void quiet_barrier(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    while (!done) {
        struct timespec ts = {0, 200000}; /* 0.2 ms */
        nanosleep(&ts, NULL);
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

/* ---- one point: setup, the timer, verify, report ---------------------------
 * The runner's loop takes the samples, as for every benchmark; what the
 * network supplies is its timer: the iteration count and warm-up every rank
 * agrees on (the parameters, or sb_net_auto_iters of the bytes), one
 * operation a sample after a barrier (one barrier in all for point to
 * point, whose reply or ack closes each iteration, as the OSU tests), the
 * local time, and at the end the slowest rank's time of each iteration. A
 * watchdog ends the job when a point outlives --timeout. */

typedef struct net_point {
    net_state st;
    watchdog wd;
    const sb_params *p;
    int iters, warm;
    bool plant;
    unsigned long long wrong;
} net_point;

static void net_teardown(void *state)
{
    net_point *np = state;
    if (!np)
        return;
    net_free(&np->st);
    watchdog_stop(&np->wd);
    free(np);
}

static int net_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                     sb_err *err)
{
    const sb_netop op = (sb_netop)pt->bench->kind;
    const sb_params *p = pt->params;
    char sz[32], what[160];
    sb_fmt_size(sb_p_num(p, "size"), sz, sizeof sz);
    snprintf(what, sizeof what, "%s size=%s", pt->bench->name, sz);
    quiet_barrier();
    net_point *np = calloc(1, sizeof *np);
    if (!np)
        return sb_fail(err, SB_ENOMEM, "size=%s: out of memory", sz);
    double limit = ctx->timeout_s > 0 ? ctx->timeout_s : NET_DEFAULT_TIMEOUT_S;
    watchdog_start(&np->wd, limit, what, ctx->rank);
    np->p = p;
    np->plant = sb_p_bool(p, "plant_error");
    describe(op, p, ctx->rank, ctx->nranks, &np->st);
    if (np->st.dt == MPI_DATATYPE_NULL) {
        /* An MPI without the type: say so rather than fail. */
        net_teardown(np);
        return sb_fail(err, SB_EUNSUP, "this MPI has no datatype for dtype=%s",
                       sb_p_str(p, "dtype"));
    }
    sb_err serr = {0};
    int rc = net_alloc(&np->st, &serr);
    int ok = rc == 0, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        net_teardown(np);
        return rc ? sb_fail(err, rc, "size=%s: %s", sz, serr.msg)
                  : sb_fail(err, SB_ENOMEM,
                            "size=%s: another rank could not "
                            "allocate its buffers",
                            sz);
    }
    int iters = (int)sb_p_int(p, "iters"), warm = (int)sb_p_int(p, "warmup");
    int auto_it, auto_wu;
    sb_net_auto_iters(
        sb_net_bytes(op, np->st.count, np->st.elem, np->st.window),
        ctx->min_time, &auto_it, &auto_wu);
    if (iters <= 0)
        iters = auto_it;
    if (warm < 0) /* a tenth of the iterations in use, at least 2 */
        warm = iters == auto_it ? auto_wu : iters / 10 < 2 ? 2 : iters / 10;
    np->iters = iters;
    np->warm = warm;

    prepare(&np->st, false);
    if ((int)sb_p_int(p, "stall_rank") == ctx->rank) {
        /* Test hook: this rank stops answering; the watchdogs end it. */
        struct timespec ts = {(time_t)(limit + 60.0), 0};
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
            ;
    }
    *state = np;
    return 0;
}

static int net_plan(void *state, const sb_ctx *ctx, sb_sampling *sp,
                    sb_err *err)
{
    (void)ctx, (void)err;
    const net_point *np = state;
    sp->inner = 1;
    sp->samples = np->iters;
    sp->exact = true;
    sp->warmup = np->warm;
    return 0;
}

static int net_sample(void *state, int idx, uint64_t iters, double *secs,
                      sb_err *err)
{
    (void)iters, (void)err;
    net_point *np = state;
    if (idx < 0) { /* warm-up: back to back, untimed */
        op_once(&np->st);
        *secs = 0;
        return 0;
    }
    if (!is_p2p(np->st.op) || idx == 0)
        MPI_Barrier(MPI_COMM_WORLD);
    double t0 = sb_now();
    op_once(&np->st);
    double dt = sb_now() - t0;
    /* point to point is timed on rank 0 alone */
    *secs = is_p2p(np->st.op) && np->st.rank != 0 ? 0.0 : dt;
    return 0;
}

/* The slowest rank's time of each iteration; a ping-pong's latency is half
 * its round trip. */
static int net_reduce(void *state, double *secs, size_t n, sb_err *err)
{
    (void)err;
    const net_point *np = state;
    MPI_Allreduce(MPI_IN_PLACE, secs, (int)n, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    if (np->st.op == SB_NET_PINGPONG)
        for (size_t i = 0; i < n; i++)
            secs[i] *= 0.5;
    return 0;
}

static const sb_timer net_timer = {
    .plan = net_plan, .sample = net_sample, .reduce = net_reduce};

static int net_verify(void *state, sb_result *r)
{
    net_point *np = state;
    unsigned long long wrong = validate(&np->st, np->plant);
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                  MPI_COMM_WORLD);
    np->wrong = wrong;
    r->valid = wrong == 0;
    return 0;
}

static void net_report(void *state, const sb_point *pt, sb_ctx *ctx,
                       sb_result *r)
{
    const net_point *np = state;
    add_metrics(&np->st, pt->params, ctx, np->iters, np->warm, np->wrong, r);
}

/* ---- the table entries --------------------------------------------------- */

#define NET_QUICK "size=8B,64KiB,1MiB"
#define NET_FULL "size=8B..64MiB:x2"
/* bw and bibw move a window of 64 messages per iteration: their full sweep
 * stops at 4 MiB per message (256 MiB per window), OSU's default limit. */
#define NET_FULL_WINDOW "size=8B..4MiB:x2"

/* One MPI impl a collective: its parameters and full sweep; the hooks
 * read the collective from the definition (its kind). */
#define NET_IMPL(NAME, PARAMS, FULL, DESC)                                     \
    const sb_impl sb_impl_mpi_network_##NAME = {                               \
        .backend = "mpi",                                                      \
        .desc = DESC,                                                          \
        .params = PARAMS,                                                      \
        .quick = NET_QUICK,                                                    \
        .full = FULL,                                                          \
        .flags = SB_BF_NEEDS_MPI,                                              \
        .check = net_check,                                                    \
        .footprint = net_footprint,                                            \
        .setup = net_setup,                                                    \
        .timer = &net_timer,                                                   \
        .verify = net_verify,                                                  \
        .report = net_report,                                                  \
        .teardown = net_teardown,                                              \
        .summarize = update_fit,                                               \
    };

NET_IMPL(allreduce, params_reduce_all, NET_FULL,
         "MPI_Allreduce; busbw = algbw x 2(n-1)/n")
NET_IMPL(allgather, params_move, NET_FULL,
         "MPI_Allgather; S = output buffer; busbw = algbw x (n-1)/n")
NET_IMPL(reduce_scatter, params_reduce_all, NET_FULL,
         "MPI_Reduce_scatter_block; S = input buffer; busbw x (n-1)/n")
NET_IMPL(alltoall, params_move, NET_FULL,
         "MPI_Alltoall; S = whole buffer; busbw = algbw x (n-1)/n")
NET_IMPL(bcast, params_bcast, NET_FULL, "MPI_Bcast from root; busbw = algbw")
NET_IMPL(reduce, params_reduce_root, NET_FULL,
         "MPI_Reduce to root; busbw = algbw")
NET_IMPL(sendrecv, params_move, NET_FULL,
         "MPI_Sendrecv in a ring: to rank+1, from rank-1")
NET_IMPL(pingpong, params_p2p, NET_FULL,
         "ranks 0 and 1: latency = half the round trip (osu_latency)")
NET_IMPL(bw, params_window, NET_FULL_WINDOW,
         "ranks 0 -> 1: a window of MPI_Isend, then an ack (osu_bw)")
NET_IMPL(bibw, params_window, NET_FULL_WINDOW,
         "ranks 0 <-> 1: windows both ways at once (osu_bibw)")
