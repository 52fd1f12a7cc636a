/*
 * fleet_mpi.c — the fleet run over MPI (fleet_mpi.h): hosts from
 * MPI_Comm_split_type(SHARED), their leaders in one communicator, the
 * per-host work together or staggered, documents gathered on rank 0,
 * and the links between leaders measured pair by pair in the rounds of
 * a round-robin tournament (sb_fleet_rounds), so each host is in one
 * pair at a time and a round's pairs share no host.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "fleet/fleet_mpi.h"
#include "solbench/fleet.h"
#include "solbench/net.h"

#define NODE(fw) (*(MPI_Comm *)(fw)->node)
#define LEAD(fw) (*(MPI_Comm *)(fw)->leaders)

/* A barrier that waits asleep: the ranks not measuring (the hosts whose
 * turn it is not, with --stagger; the leaders not in a pair) would spin
 * in MPI_Barrier, polling, and take the CPU of the host that measures
 * where hosts share one (test hosts), or its memory bandwidth. */
static void quiet_barrier(MPI_Comm c)
{
    MPI_Request rq;
    int done = 0;
    MPI_Ibarrier(c, &rq);
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    while (!done) {
        struct timespec ts = {0, 1000000}; /* 1 ms */
        nanosleep(&ts, NULL);
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    }
}

int sb_fleet_mpi_begin(int *argc, char ***argv, sb_ctx *ctx, sb_fleet_world *fw,
                       sb_err *err)
{
    memset(fw, 0, sizeof *fw);
    int rc = sb_mpi_begin(argc, argv, true, ctx, err);
    if (rc)
        return rc;
    MPI_Comm *node = malloc(sizeof *node), *lead = malloc(sizeof *lead);
    if (!node || !lead) {
        free(node), free(lead);
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    }
    fw->node = node;
    fw->leaders = lead;
    fw->rank = ctx->rank;
    fw->nranks = ctx->nranks;
    /* the host's ranks, ordered as in the world: its lowest leads */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, fw->rank,
                        MPI_INFO_NULL, node);
    int nrank = 0;
    MPI_Comm_rank(*node, &nrank);
    MPI_Comm_size(*node, &fw->host_ranks);
    fw->leader = nrank == 0;
    /* the leaders, world rank 0 first (it leads its host) */
    MPI_Comm_split(MPI_COMM_WORLD, fw->leader ? 0 : MPI_UNDEFINED, fw->rank,
                   lead);
    int host = 0;
    if (fw->leader) {
        MPI_Comm_rank(*lead, &host);
        MPI_Comm_size(*lead, &fw->nhosts);
    }
    MPI_Bcast(&host, 1, MPI_INT, 0, *node);
    fw->host = host;
    MPI_Bcast(&fw->nhosts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return 0;
}

void sb_fleet_mpi_end(sb_fleet_world *fw)
{
    if (fw->node) {
        MPI_Comm_free((MPI_Comm *)fw->node);
        free(fw->node);
    }
    if (fw->leaders) {
        if (fw->leader)
            MPI_Comm_free((MPI_Comm *)fw->leaders);
        free(fw->leaders);
    }
    fw->node = fw->leaders = NULL;
    sb_mpi_end();
}

int sb_fleet_mpi_each_host(sb_fleet_world *fw, bool stagger,
                           int (*fn)(void *arg), void *arg)
{
    int rc = 0;
    if (!stagger) {
        if (fw->leader)
            rc = fn(arg);
        quiet_barrier(MPI_COMM_WORLD);
        return rc;
    }
    for (int h = 0; h < fw->nhosts; h++) {
        if (fw->leader && fw->host == h)
            rc = fn(arg);
        quiet_barrier(MPI_COMM_WORLD);
    }
    return rc;
}

int sb_fleet_mpi_gather(sb_fleet_world *fw, const char *mine, char ***all,
                        sb_err *err)
{
    *all = NULL;
    int bad = 0;
    if (fw->leader) {
        size_t len = mine ? strlen(mine) + 1 : 1;
        int n = fw->nhosts, me = fw->host;
        if (len > INT32_MAX)
            bad = 1;
        int ilen = bad ? 1 : (int)len;
        int *lens = NULL, *offs = NULL;
        char *buf = NULL;
        if (me == 0) {
            lens = calloc((size_t)n, sizeof *lens);
            offs = calloc((size_t)n, sizeof *offs);
            if (!lens || !offs)
                bad = 1;
        }
        /* a rank 0 without room for the lengths says so first */
        int early = me == 0 ? bad : 0;
        MPI_Bcast(&early, 1, MPI_INT, 0, LEAD(fw));
        if (!early)
            MPI_Gather(&ilen, 1, MPI_INT, lens, 1, MPI_INT, 0, LEAD(fw));
        size_t total = 0;
        if (me == 0 && !bad) {
            for (int h = 0; h < n; h++) {
                offs[h] = (int)total;
                total += (size_t)lens[h];
            }
            if (total > INT32_MAX || !(buf = malloc(total ? total : 1)))
                bad = 1;
        }
        /* a rank 0 that cannot take them says so before any is sent */
        int root_bad = me == 0 ? bad : early;
        if (!early)
            MPI_Bcast(&root_bad, 1, MPI_INT, 0, LEAD(fw));
        const char *send = mine && !bad ? mine : "";
        if (!root_bad)
            MPI_Gatherv(send, ilen, MPI_CHAR, buf, lens, offs, MPI_CHAR, 0,
                        LEAD(fw));
        if (me == 0 && !bad) {
            char **out = calloc((size_t)n, sizeof *out);
            for (int h = 0; out && h < n; h++) {
                out[h] = malloc((size_t)lens[h] + 1);
                if (!out[h]) {
                    bad = 1;
                    break;
                }
                memcpy(out[h], buf + offs[h], (size_t)lens[h]);
                out[h][lens[h] ? lens[h] - 1 : 0] = '\0';
            }
            if (!out)
                bad = 1;
            if (bad && out) {
                for (int h = 0; h < n; h++)
                    free(out[h]);
                free(out);
            } else {
                *all = out;
            }
        }
        free(buf), free(lens), free(offs);
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any)
        return sb_fail(err, SB_ENOMEM,
                       "fleet: the hosts' documents could not be gathered "
                       "(out of memory or over 2 GB)");
    return 0;
}

int sb_fleet_mpi_bcast_int(sb_fleet_world *fw, int v)
{
    (void)fw;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

int sb_fleet_mpi_max_int(sb_fleet_world *fw, int v)
{
    (void)fw;
    int m = v;
    MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

void sb_fleet_mpi_bcast_str(sb_fleet_world *fw, char *s, size_t len)
{
    (void)fw;
    if (len == 0 || len > INT32_MAX)
        return;
    MPI_Bcast(s, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    s[len - 1] = '\0';
}

/* ---- links ----------------------------------------------------------------
 */

enum { TAG_CTL = 71, TAG_DATA = 72, TAG_ACK = 73, TAG_PING = 74 };

/* The control word of a pair's loop: the side that decides sends
 * *more, the other receives it. */
static void word(MPI_Comm c, int peer, bool decides, int *more)
{
    if (decides)
        MPI_Send(more, 1, MPI_INT, peer, TAG_CTL, c);
    else
        MPI_Recv(more, 1, MPI_INT, peer, TAG_CTL, c, MPI_STATUS_IGNORE);
}

/* Unidirectional: `me` sends windows of w messages to `peer` until
 * time_s has passed (a control word before each window: 1 a window
 * follows, 0 done; the peer acks each window). The sender's figure is
 * its best window's rate, a window's bytes over the time from its
 * control word to its ack: what the link carries while both ends keep
 * up. A host that stalls (a CPU quota, a noisy neighbour) slows some
 * windows and shows in its own figures; a slow link slows every window.
 * The receiver returns 0. */
static double uni(MPI_Comm c, int peer, bool sender, char *buf, size_t bytes,
                  int w, double time_s, MPI_Request *rq)
{
    int more = 1;
    char ack = 0;
    if (sender) {
        double t0 = MPI_Wtime(), t = t0, best = 0;
        do {
            double a = MPI_Wtime();
            word(c, peer, true, &more);
            for (int k = 0; k < w; k++)
                MPI_Isend(buf, (int)bytes, MPI_CHAR, peer, TAG_DATA, c, &rq[k]);
            MPI_Waitall(w, rq, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_CHAR, peer, TAG_ACK, c, MPI_STATUS_IGNORE);
            t = MPI_Wtime();
            if (t > a)
                best = fmax(best, (double)bytes * w / (t - a));
        } while (t - t0 < time_s);
        more = 0;
        word(c, peer, true, &more);
        return best;
    }
    for (;;) {
        word(c, peer, false, &more);
        if (!more)
            return 0;
        for (int k = 0; k < w; k++)
            MPI_Irecv(buf, (int)bytes, MPI_CHAR, peer, TAG_DATA, c, &rq[k]);
        MPI_Waitall(w, rq, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_CHAR, peer, TAG_ACK, c);
    }
}

/* Both ways at once, windows of w each way until the lower host's
 * time_s has passed (it decides, by the control word); the best
 * window's rate, both directions' bytes (each end's own count). */
static double bidi(MPI_Comm c, int peer, bool first, char *sbuf, char *rbuf,
                   size_t bytes, int w, double time_s, MPI_Request *rq)
{
    double t0 = MPI_Wtime(), best = 0;
    int more = 1;
    for (;;) {
        double a = MPI_Wtime();
        word(c, peer, first, &more);
        if (!more)
            break;
        if (!first)
            a = MPI_Wtime(); /* from the word, as the first counts */
        for (int k = 0; k < w; k++) {
            MPI_Irecv(rbuf, (int)bytes, MPI_CHAR, peer, TAG_DATA, c, &rq[k]);
            MPI_Isend(sbuf, (int)bytes, MPI_CHAR, peer, TAG_DATA, c,
                      &rq[w + k]);
        }
        MPI_Waitall(2 * w, rq, MPI_STATUSES_IGNORE);
        double t = MPI_Wtime();
        if (t > a)
            best = fmax(best, 2.0 * (double)bytes * w / (t - a));
        if (first && t - t0 >= time_s)
            more = 0;
    }
    return best;
}

/* Half a round trip of 8 bytes, the best of rounds of 20 (short, so
 * that some fall between an end's stalls), for time_s or 1000 rounds. */
#define PING_ROUNDS 1000
static double ping(MPI_Comm c, int peer, bool first, double time_s)
{
    char b[8] = {0};
    double best = INFINITY;
    int n = 0, more = 1;
    double t0 = MPI_Wtime();
    while (more) {
        double a = MPI_Wtime();
        for (int k = 0; k < 20; k++) {
            if (first) {
                MPI_Send(b, 8, MPI_CHAR, peer, TAG_PING, c);
                MPI_Recv(b, 8, MPI_CHAR, peer, TAG_PING, c, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(b, 8, MPI_CHAR, peer, TAG_PING, c, MPI_STATUS_IGNORE);
                MPI_Send(b, 8, MPI_CHAR, peer, TAG_PING, c);
            }
        }
        best = fmin(best, (MPI_Wtime() - a) / 40.0);
        n++;
        if (first)
            more = MPI_Wtime() - t0 < time_s && n < PING_ROUNDS;
        word(c, peer, first, &more);
    }
    /* the best round, as the bandwidth's best window: the link's, not
     * a stalled end's */
    return best;
}

int sb_fleet_mpi_links(sb_fleet_world *fw, const sb_fleet_link_opts *o,
                       double **bw, double **bibw, double **lat, sb_err *err)
{
    *bw = *bibw = *lat = NULL;
    int n = fw->nhosts, bad = 0, rounds = 0;
    int *partner = NULL;
    size_t bytes = o->bytes ? o->bytes : (size_t)1 << 20;
    int w = o->window > 0 ? o->window : 16;
    double ts = o->time_s > 0 ? o->time_s : 0.2;
    double *row = calloc(3 * (size_t)n, sizeof *row); /* bw, bibw, lat */
    char *sbuf = fw->leader ? malloc(bytes) : NULL;
    char *rbuf = fw->leader ? malloc(bytes) : NULL;
    MPI_Request *rq = malloc(2 * (size_t)w * sizeof *rq);
    sb_err e = {0};
    if (!row || !rq || (fw->leader && (!sbuf || !rbuf)) || bytes > INT32_MAX ||
        sb_fleet_rounds(n, &partner, &rounds, &e) != 0)
        bad = 1;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        free(row), free(sbuf), free(rbuf), free(rq), free(partner);
        return sb_fail(err, SB_ENOMEM,
                       "fleet --links: buffers of %zu bytes could not be "
                       "had on every host%s%s",
                       bytes, e.msg[0] ? ": " : "", e.msg);
    }
    if (fw->leader) {
        memset(sbuf, 1, bytes);
        MPI_Comm c = LEAD(fw);
        int me = fw->host;
        /* serial: every pair in its own step, the others waiting */
        for (int r = 0; r < rounds; r++) {
            for (int s = 0; s < (o->serial ? n : 1); s++) {
                int p = partner[(size_t)r * n + me];
                bool mine = p >= 0 && (!o->serial || s == (me < p ? me : p));
                if (mine) {
                    bool low = me < p;
                    /* low -> high, then high -> low */
                    double a = uni(c, p, low, sbuf, bytes, w, ts, rq);
                    double b = uni(c, p, !low, sbuf, bytes, w, ts, rq);
                    row[p] = low ? a : b;
                    row[n + p] = bidi(c, p, low, sbuf, rbuf, bytes, w, ts, rq);
                    row[2 * n + p] = ping(c, p, low, ts);
                }
                if (o->serial)
                    quiet_barrier(c);
            }
            if (!o->serial)
                quiet_barrier(c);
        }
    }
    /* the ranks that are not leaders waited here, asleep */
    quiet_barrier(MPI_COMM_WORLD);
    free(sbuf), free(rbuf), free(rq), free(partner);
    /* the leaders' rows to rank 0 */
    double *all = NULL;
    if (fw->rank == 0 && !(all = malloc(3 * (size_t)n * n * sizeof *all)))
        bad = 1;
    if (fw->leader) {
        /* a rank 0 without room for the matrix says so first */
        int root_bad = fw->rank == 0 ? bad : 0;
        MPI_Bcast(&root_bad, 1, MPI_INT, 0, LEAD(fw));
        if (!root_bad)
            MPI_Gather(row, 3 * n, MPI_DOUBLE, all, 3 * n, MPI_DOUBLE, 0,
                       LEAD(fw));
    }
    free(row);
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        free(all);
        return sb_fail(err, SB_ENOMEM, "fleet --links: out of memory");
    }
    if (fw->rank != 0)
        return 0;
    double *b = malloc((size_t)n * n * sizeof *b),
           *bb = malloc((size_t)n * n * sizeof *bb),
           *l = malloc((size_t)n * n * sizeof *l);
    if (!b || !bb || !l) {
        free(b), free(bb), free(l), free(all);
        return sb_fail(err, SB_ENOMEM, "fleet --links: out of memory");
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const double *ri = all + (size_t)i * 3 * n;
            b[(size_t)i * n + j] = ri[j];
            bb[(size_t)i * n + j] = ri[n + j];
            l[(size_t)i * n + j] = ri[2 * n + j];
        }
    free(all);
    *bw = b;
    *bibw = bb;
    *lat = l;
    return 0;
}
