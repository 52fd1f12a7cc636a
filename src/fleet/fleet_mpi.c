/*
 * fleet_mpi.c — the fleet run over MPI (fleet_mpi.h): hosts from
 * MPI_Comm_split_type(SHARED), their leaders in one communicator, the
 * per-host work together or staggered, documents gathered on rank 0,
 * and the links between leaders measured pair by pair in the rounds of
 * a round-robin tournament (sb_fleet_rounds), so each host is in one
 * pair at a time and a round's pairs share no host.
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
    if (fw->rank == 0 &&
        !(fw->host_of = calloc((size_t)fw->nranks, sizeof *fw->host_of))) {
        fprintf(stderr, "solbench: fleet: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Gather(&host, 1, MPI_INT, fw->host_of, 1, MPI_INT, 0, MPI_COMM_WORLD);
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
    free(fw->host_of);
    fw->host_of = NULL;
    sb_mpi_end();
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
        (o->sample > 0 ? sb_fleet_sampled_rounds(n, o->sample, o->seed,
                                                 &partner, &rounds, &e)
                       : sb_fleet_rounds(n, &partner, &rounds, &e)) != 0)
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

/* ---- collectives ---------------------------------------------------------
 */

enum { LVL_HOST = 0, LVL_HOSTS, LVL_ALL };

/* Every rank's contribution to element i: (rank mod 3 + 1)(i mod 5 + 1),
 * so every partial sum of n ranks is an integer under 10 n, exact in
 * float in any order up to 1.6 million ranks. */
static void fill(float *s, int count, int rank)
{
    for (int i = 0; i < count; i++)
        s[i] = (float)((rank % 3 + 1) * (i % 5 + 1));
}

static bool check(const float *r, int count, int n)
{
    long long k = 0;
    for (int q = 0; q < n; q++)
        k += q % 3 + 1;
    for (int i = 0; i < count; i++)
        if (r[i] != (float)(k * (i % 5 + 1)))
            return false;
    return true;
}

/* One all-reduce at a level: inside the host, between the leaders, or
 * every rank in two levels (reduce to the host's leader, all-reduce
 * between the leaders, broadcast inside the host). */
static void op(sb_fleet_world *fw, int lvl, const float *s, float *r, int count)
{
    if (lvl == LVL_HOST) {
        MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, NODE(fw));
    } else if (lvl == LVL_HOSTS) {
        MPI_Allreduce(s, r, count, MPI_FLOAT, MPI_SUM, LEAD(fw));
    } else {
        MPI_Reduce(s, r, count, MPI_FLOAT, MPI_SUM, 0, NODE(fw));
        if (fw->leader)
            MPI_Allreduce(MPI_IN_PLACE, r, count, MPI_FLOAT, MPI_SUM, LEAD(fw));
        MPI_Bcast(r, count, MPI_FLOAT, 0, NODE(fw));
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The level's all-reduce of count floats timed on its ranks (c): a
 * checked warm-up, then iterations for time_s (at least 5, at most
 * 1000), each started together (a barrier) and counted at its slowest
 * rank; the median. *ok false where a sum was wrong. */
static double time_level(sb_fleet_world *fw, int lvl, MPI_Comm c, float *s,
                         float *r, int count, int rank, int n, double time_s,
                         double *dt, bool *ok)
{
    fill(s, count, rank);
    memset(r, 0, (size_t)count * sizeof *r);
    double a = MPI_Wtime();
    op(fw, lvl, s, r, count);
    double t1 = MPI_Wtime() - a, t1max = t1;
    int good = check(r, count, n), all_good = good;
    MPI_Allreduce(&good, &all_good, 1, MPI_INT, MPI_MIN, c);
    MPI_Allreduce(&t1, &t1max, 1, MPI_DOUBLE, MPI_MAX, c);
    *ok = all_good != 0;
    double want = t1max > 0 ? time_s / t1max : 1000;
    int iters = want < 5 ? 5 : want > 1000 ? 1000 : (int)want;
    for (int k = 0; k < iters; k++) {
        MPI_Barrier(c);
        double t0 = MPI_Wtime();
        op(fw, lvl, s, r, count);
        dt[k] = MPI_Wtime() - t0;
    }
    MPI_Allreduce(MPI_IN_PLACE, dt, iters, MPI_DOUBLE, MPI_MAX, c);
    qsort(dt, (size_t)iters, sizeof *dt, cmp_d);
    return iters % 2 ? dt[iters / 2]
                     : 0.5 * (dt[iters / 2 - 1] + dt[iters / 2]);
}

int sb_fleet_mpi_collectives(sb_fleet_world *fw, const double *sizes,
                             int nsizes, double time_s, sb_fleet_coll **out,
                             size_t *nout, bool *valid, sb_err *err)
{
    *out = NULL;
    *nout = 0;
    *valid = true;
    size_t maxb = 0;
    for (int k = 0; k < nsizes; k++)
        if (sizes[k] > (double)maxb)
            maxb = (size_t)sizes[k];
    float *s = malloc(maxb ? maxb : 4), *r = malloc(maxb ? maxb : 4);
    double *dt = malloc(1000 * sizeof *dt);
    sb_fleet_coll *res = calloc((size_t)nsizes * 3, sizeof *res);
    int bad = !s || !r || !dt || !res || maxb > (size_t)INT32_MAX;
    if (sb_fleet_mpi_max_int(fw, bad)) {
        free(s), free(r), free(dt), free(res);
        return sb_fail(err, SB_ENOMEM,
                       "fleet --collectives: buffers of %zu bytes could not "
                       "be had on every rank",
                       maxb);
    }
    int most = 0, least = 0; /* ranks on the fullest and emptiest host */
    MPI_Allreduce(&fw->host_ranks, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&fw->host_ranks, &least, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    size_t n = 0;
    bool ok_all = true;
    for (int lvl = LVL_HOST; lvl <= LVL_ALL; lvl++) {
        /* inside a host only where hosts have two ranks or more; every
         * rank in two levels only where that differs from the leaders */
        if ((lvl == LVL_HOST && most < 2) ||
            (lvl == LVL_ALL && fw->nranks == fw->nhosts))
            continue;
        for (int k = 0; k < nsizes; k++) {
            int count = (int)(sizes[k] / sizeof(float));
            if (count < 1)
                count = 1;
            double t = 0;
            bool ok = true;
            if (lvl == LVL_HOST) {
                int nr = 0;
                MPI_Comm_rank(NODE(fw), &nr);
                t = time_level(fw, lvl, NODE(fw), s, r, count, nr,
                               fw->host_ranks, time_s, dt, &ok);
                /* the slowest host's */
                MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX,
                              MPI_COMM_WORLD);
            } else if (lvl == LVL_HOSTS) {
                if (fw->leader)
                    t = time_level(fw, lvl, LEAD(fw), s, r, count, fw->host,
                                   fw->nhosts, time_s, dt, &ok);
                quiet_barrier(MPI_COMM_WORLD);
            } else {
                t = time_level(fw, lvl, MPI_COMM_WORLD, s, r, count, fw->rank,
                               fw->nranks, time_s, dt, &ok);
            }
            int g = ok, all = g;
            MPI_Allreduce(&g, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            ok_all = ok_all && all;
            sb_fleet_coll *c = &res[n++];
            snprintf(c->level, sizeof c->level, "%s",
                     lvl == LVL_HOST    ? "host"
                     : lvl == LVL_HOSTS ? "hosts"
                                        : "all");
            snprintf(c->op, sizeof c->op, "allreduce");
            c->bytes = (double)count * sizeof(float);
            c->ranks = lvl == LVL_HOST    ? most
                       : lvl == LVL_HOSTS ? fw->nhosts
                                          : fw->nranks;
            c->seconds = t;
            c->valid = all != 0;
            c->per_host = lvl == LVL_ALL && least == most ? most : 0;
        }
    }
    free(s), free(r), free(dt);
    *valid = ok_all;
    if (fw->rank != 0 || n == 0) {
        free(res);
        return 0;
    }
    *out = res;
    *nout = n;
    return 0;
}

/* ---- a round of the per-host suite, watched -------------------------------
 */

enum { TAG_DOC = 75, TAG_GO = 76, TAG_END = 77 };

static volatile sig_atomic_t ended; /* the launcher's SIGTERM, on rank 0 */
static void on_term(int sig)
{
    (void)sig;
    ended = 1;
}

void sb_fleet_mpi_watch_term(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

bool sb_fleet_mpi_ended(void)
{
    return ended != 0;
}

/* Rank 0: host h's document, when it has come (MPI_Iprobe): 1 taken
 * into *out, 0 not yet, -1 out of memory. */
static int take_doc(sb_fleet_world *fw, int h, char **out)
{
    int flag = 0, len = 0;
    MPI_Status st;
    MPI_Iprobe(h, TAG_DOC, LEAD(fw), &flag, &st);
    if (!flag)
        return 0;
    MPI_Get_count(&st, MPI_CHAR, &len);
    char *b = malloc((size_t)len + 1);
    MPI_Recv(b ? b : (char[1]){0}, b ? len : 0, MPI_CHAR, h, TAG_DOC, LEAD(fw),
             MPI_STATUS_IGNORE);
    if (!b)
        return -1;
    b[len > 0 ? len - 1 : 0] = '\0';
    *out = b;
    return 1;
}

static void give_up(double deadline);

/* quiet_barrier with a deadline (0: none) and the launcher's SIGTERM:
 * false when either came first. */
static bool quiet_barrier_until(MPI_Comm c, double deadline)
{
    MPI_Request rq;
    int done = 0;
    MPI_Ibarrier(c, &rq);
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    while (!done) {
        if (ended || (deadline > 0 && MPI_Wtime() > deadline)) {
            MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
            if (done) /* it came at the last moment */
                break;
            return false; /* the request is left: the job is ending */
        }
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank != 0)
            give_up(0);                    /* rank 0 said the run ended */
        struct timespec ts = {0, 1000000}; /* 1 ms */
        nanosleep(&ts, NULL);
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    }
    return true;
}

/* A rank past the time rank 0 can wait (its watchdog ended the run and
 * aborted the job, which a launcher that keeps a job going when a rank
 * ends, mpirun --enable-recovery, does not pass on): it ends too. Rank 0
 * reported. */
static void give_up(double deadline)
{
    int told = 0;
    MPI_Iprobe(0, TAG_END, MPI_COMM_WORLD, &told, MPI_STATUS_IGNORE);
    if (told || (deadline > 0 && MPI_Wtime() > deadline)) {
        if (!told)
            fprintf(stderr, "solbench: fleet: no word from rank 0 long past "
                            "--timeout: this rank ends\n");
        _exit(1);
    }
}

/* A leader waits for rank 0's word that its turn has come, asleep. */
static void wait_turn(sb_fleet_world *fw, double deadline)
{
    MPI_Request rq;
    int go = 0, done = 0;
    MPI_Irecv(&go, 1, MPI_INT, 0, TAG_GO, LEAD(fw), &rq);
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    while (!done) {
        give_up(deadline);
        struct timespec ts = {0, 1000000}; /* 1 ms */
        nanosleep(&ts, NULL);
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    }
}

int sb_fleet_mpi_round(sb_fleet_world *fw, bool stagger, int (*fn)(void *arg),
                       void *arg, char **doc, double timeout_s, char ***all,
                       int *late, sb_err *err)
{
    *all = NULL;
    *late = -1;
    int n = fw->nhosts;
    /* the leaders: their turn (rank 0's word, with stagger), the suite,
     * its document to rank 0; then every rank at the round's end */
    if (fw->rank != 0) {
        /* rank 0 tells the others when its watchdog ended the run
         * (TAG_END); past four times the longest it waits for the hosts
         * (each turn and the round's end, its own suite untimed) and ten
         * minutes, a rank takes it that rank 0 is gone */
        double deadline =
            timeout_s > 0
                ? MPI_Wtime() + 4 * ((stagger ? n : 1) + 1) * timeout_s + 600
                : 0;
        if (fw->leader) {
            if (stagger)
                wait_turn(fw, deadline);
            fn(arg);
            /* a document of over 2 GB is not sent whole: the host fails */
            const char *d = *doc ? *doc : "";
            size_t len = strlen(d) + 1;
            MPI_Send(d, len > INT32_MAX ? 1 : (int)len, MPI_CHAR, 0, TAG_DOC,
                     LEAD(fw));
        }
        if (!quiet_barrier_until(MPI_COMM_WORLD, deadline))
            give_up(deadline);
        return 0;
    }
    /* rank 0: each turn's document awaited asleep, until it has come, the
     * watchdog's time is up, or the launcher ends the job (a rank died:
     * it sends SIGTERM to the others) */
    char **got = calloc((size_t)n, sizeof *got);
    if (!got)
        return sb_fail(err, SB_ENOMEM, "fleet: out of memory");
    int rc = 0;
    for (int turn = 0; turn < (stagger ? n : 1) && rc == 0; turn++) {
        int from = stagger ? turn : 0, to = stagger ? turn + 1 : n;
        double t0 = MPI_Wtime();
        if (stagger && turn > 0) {
            /* not waited for: a send to a host that died can block for
             * ever (its connection never made), the watchdog cannot */
            static int go = 1;
            MPI_Request rq;
            MPI_Isend(&go, 1, MPI_INT, turn, TAG_GO, LEAD(fw), &rq);
            MPI_Request_free(&rq);
        }
        if (from == 0) {
            fn(arg);
            if (!(got[0] = strdup(*doc ? *doc : "")))
                rc = sb_fail(err, SB_ENOMEM, "fleet: out of memory");
        }
        for (; rc == 0;) {
            int missing = -1;
            for (int h = from; h < to && rc == 0; h++) {
                if (got[h])
                    continue;
                int t = take_doc(fw, h, &got[h]);
                if (t < 0)
                    rc = sb_fail(err, SB_ENOMEM, "fleet: out of memory");
                else if (t == 0 && missing < 0)
                    missing = h;
            }
            if (rc || missing < 0)
                break;
            if (ended || (timeout_s > 0 && MPI_Wtime() - t0 > timeout_s)) {
                *late = missing;
                rc = 1;
                break;
            }
            struct timespec ts = {0, 2000000}; /* 2 ms */
            nanosleep(&ts, NULL);
        }
    }
    /* every document came: the round's end, which a rank that hangs now
     * (after it reported) keeps from coming */
    if (rc == 0 &&
        !quiet_barrier_until(MPI_COMM_WORLD,
                             timeout_s > 0 ? MPI_Wtime() + timeout_s : 0)) {
        *late = n; /* not a host: the round's end */
        rc = 1;
    }
    if (rc < 0) {
        for (int h = 0; h < n; h++)
            free(got[h]);
        free(got);
        return rc;
    }
    *all = got;
    return rc;
}

void sb_fleet_mpi_abort(sb_fleet_world *fw, int late, int code)
{
    static int end = 1;
    fflush(stdout);
    fflush(stderr);
    for (int r = 1; fw->host_of && r < fw->nranks; r++) {
        if (fw->host_of[r] == late)
            continue; /* a send to a dead host can hang */
        MPI_Request rq;
        MPI_Isend(&end, 1, MPI_INT, r, TAG_END, MPI_COMM_WORLD, &rq);
        MPI_Request_free(&rq);
    }
    /* a moment for the word to leave (an eager message each) */
    for (int k = 0; k < 200; k++) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_END, MPI_COMM_WORLD, &flag,
                   MPI_STATUS_IGNORE);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    MPI_Abort(MPI_COMM_WORLD, code);
}
