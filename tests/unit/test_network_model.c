/*
 * test_network_model.c — the network area's formulas against values
 * worked out by hand: the table of the operations, bus-bandwidth factors,
 * algbw/busbw, the bytes S of each op (nccl-tests' definitions), iteration
 * counts, and the alpha-beta least-squares fit on synthetic points. Builds
 * with or without MPI.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "solbench/netmodel.h"

static void test_names(void)
{
    CHECK(strcmp(sb_netop_name(SB_NET_REDUCE_SCATTER), "reduce_scatter") == 0);
    CHECK(strcmp(sb_netop_name(SB_NET_BIBW), "bibw") == 0);
    CHECK(sb_netop_name(SB_NET_NOPS) == NULL);
    CHECK(sb_netop_from_name("alltoall") == SB_NET_ALLTOALL);
    CHECK(sb_netop_from_name("pingpong") == SB_NET_PINGPONG);
    CHECK(sb_netop_from_name("allreduc") == -1);
    CHECK(sb_netop_from_name(NULL) == -1);
}

/* Every op has a whole row, found by its name; the flags agree. */
static void test_table(void)
{
    for (int op = 0; op < SB_NET_NOPS; op++) {
        const sb_netop_def *d = sb_netop_row((sb_netop)op);
        CHECK(d != NULL);
        if (!d)
            continue;
        CHECK(d->name && d->bytes && d->busbw);
        CHECK(sb_netop_from_name(d->name) == op);
        CHECK(!(d->in_chunk || d->out_chunk) || d->chunked);
        CHECK(!d->window || d->p2p);
        CHECK(!(d->p2p && d->two_level));
    }
    CHECK(sb_netop_row(SB_NET_NOPS) == NULL);
    CHECK(sb_netop_row((sb_netop)-1) == NULL);
    CHECK(sb_netop_row(SB_NET_ALLGATHER)->in_chunk);
    CHECK(sb_netop_row(SB_NET_REDUCE_SCATTER)->out_chunk);
    CHECK(!sb_netop_row(SB_NET_ALLTOALL)->in_chunk);
    CHECK(sb_netop_row(SB_NET_BIBW)->window);
    /* an unknown op: S is the buffer, the factor 1, no two levels */
    CHECK(sb_net_bytes(SB_NET_NOPS, 10, 4, 8) == 40.0);
    CHECK(sb_net_busbw_factor(SB_NET_NOPS, 4) == 1.0);
    CHECK(sb_net_two_level(SB_NET_NOPS, 16, 8, 1, 1, NULL, NULL) == 0);
}

static void test_factors(void)
{
    /* all-reduce 2(n-1)/n */
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_ALLREDUCE, 2), 1.0, 1e-15);
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_ALLREDUCE, 4), 1.5, 1e-15);
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_ALLREDUCE, 8), 1.75, 1e-15);
    /* (n-1)/n */
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_ALLGATHER, 4), 0.75, 1e-15);
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_REDUCE_SCATTER, 8), 0.875, 1e-15);
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_ALLTOALL, 2), 0.5, 1e-15);
    /* 1 */
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_BCAST, 16), 1.0, 1e-15);
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_REDUCE, 16), 1.0, 1e-15);
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_SENDRECV, 3), 1.0, 1e-15);
    CHECK_NEAR(sb_net_busbw_factor(SB_NET_PINGPONG, 2), 1.0, 1e-15);
    CHECK(sb_net_busbw_factor(SB_NET_ALLREDUCE, 0) == 0.0);

    /* Two levels: 16 ranks, 8 a domain, 450 GB/s inside, 50 across. An
     * all-reduce moves 2*7/8 of S inside and 2*(1/2)/8 across; the
     * inside binds (1.75/450e9 > 0.125/50e9). */
    double fi = -1, fo = -1;
    double spb =
        sb_net_two_level(SB_NET_ALLREDUCE, 16, 8, 450e9, 50e9, &fi, &fo);
    CHECK_NEAR(fi, 1.75, 1e-15);
    CHECK_NEAR(fo, 0.125, 1e-15);
    CHECK_NEAR(spb, 1.75 / 450e9, 1e-15);
    /* a slower scale-out binds it */
    CHECK_NEAR(
        sb_net_two_level(SB_NET_ALLREDUCE, 16, 8, 450e9, 5e9, NULL, NULL),
        0.125 / 5e9, 1e-15);
    CHECK_NEAR(sb_net_two_level(SB_NET_ALLGATHER, 16, 8, 450e9, 50e9, &fi, &fo),
               0.875 / 450e9, 1e-15);
    CHECK_NEAR(fo, 0.0625, 1e-15);
    /* all-to-all: what leaves the domain is not reduced by it */
    sb_net_two_level(SB_NET_ALLTOALL, 16, 8, 450e9, 50e9, &fi, &fo);
    CHECK_NEAR(fi, 7.0 / 16, 1e-15);
    CHECK_NEAR(fo, 8.0 / 16, 1e-15);
    /* the edges: one rank a domain is the flat collective across, all in
     * one domain the flat one inside */
    sb_net_two_level(SB_NET_REDUCE_SCATTER, 8, 1, 450e9, 50e9, &fi, &fo);
    CHECK(fi == 0);
    CHECK_NEAR(fo, sb_net_busbw_factor(SB_NET_REDUCE_SCATTER, 8), 1e-15);
    sb_net_two_level(SB_NET_ALLREDUCE, 8, 8, 450e9, 50e9, &fi, &fo);
    CHECK(fo == 0);
    CHECK_NEAR(fi, sb_net_busbw_factor(SB_NET_ALLREDUCE, 8), 1e-15);
    /* no two levels: point to point, a count that does not divide */
    CHECK(sb_net_two_level(SB_NET_SENDRECV, 16, 8, 1, 1, &fi, &fo) == 0);
    CHECK(fi == 0 && fo == 0);
    CHECK(sb_net_two_level(SB_NET_ALLREDUCE, 12, 8, 1, 1, NULL, NULL) == 0);

    /* 1 MiB in 100 us: 10.48576 GB/s; all-reduce on 4 ranks x1.5. */
    CHECK_NEAR(sb_net_algbw(1048576.0, 100e-6), 10.48576e9, 1e-12);
    CHECK_NEAR(sb_net_busbw(SB_NET_ALLREDUCE, 4, 1048576.0, 100e-6), 15.72864e9,
               1e-12);
    CHECK_NEAR(sb_net_busbw(SB_NET_ALLGATHER, 4, 1048576.0, 100e-6), 7.86432e9,
               1e-12);
    CHECK(sb_net_algbw(1000.0, 0.0) == 0.0);
}

static void test_counts(void)
{
    /* all-reduce: size / elem, at least one element. */
    CHECK(sb_net_count(SB_NET_ALLREDUCE, 100, 8, 4) == 12);
    CHECK(sb_net_count(SB_NET_ALLREDUCE, 2, 4, 2) == 1);
    CHECK(sb_net_bytes(SB_NET_ALLREDUCE, 12, 8, 0) == 96.0);
    /* chunked ops: a multiple of nranks, at least nranks. */
    CHECK(sb_net_count(SB_NET_ALLGATHER, 100, 4, 4) == 24);
    CHECK(sb_net_count(SB_NET_ALLGATHER, 8, 4, 4) == 4);
    CHECK(sb_net_count(SB_NET_REDUCE_SCATTER, 1048576, 4, 3) == 262143);
    CHECK(sb_net_count(SB_NET_ALLTOALL, 64, 8, 2) == 8);
    CHECK(sb_net_bytes(SB_NET_ALLGATHER, 24, 4, 0) == 96.0);
    /* point-to-point: bytes; bw counts the window, bibw both ways. */
    CHECK(sb_net_count(SB_NET_PINGPONG, 1000, 4, 2) == 1000);
    CHECK(sb_net_bytes(SB_NET_PINGPONG, 1000, 1, 0) == 1000.0);
    CHECK(sb_net_bytes(SB_NET_BW, 1024, 1, 64) == 65536.0);
    CHECK(sb_net_bytes(SB_NET_BIBW, 1024, 1, 64) == 131072.0);
}

static void test_iters(void)
{
    int it, wu;
    sb_net_auto_iters(8, 0.2, &it, &wu);
    CHECK(it == 1000 && wu == 100);
    sb_net_auto_iters(65536, 0.2, &it, &wu); /* 4096 -> capped */
    CHECK(it == 1000 && wu == 100);
    sb_net_auto_iters(1048576, 0.2, &it, &wu); /* 256 MiB / 1 MiB */
    CHECK(it == 256 && wu == 25);
    sb_net_auto_iters(4.0 * 1048576, 0.2, &it, &wu);
    CHECK(it == 64 && wu == 6);
    sb_net_auto_iters(64.0 * 1048576, 0.2, &it, &wu); /* 4 -> floor 20 */
    CHECK(it == 20 && wu == 2);
    sb_net_auto_iters(8, 0.05, &it, &wu); /* x0.25 */
    CHECK(it == 250 && wu == 25);
    sb_net_auto_iters(64.0 * 1048576, 1e-9, &it, &wu); /* never under 5 */
    CHECK(it == 5 && wu == 2);
}

static void test_fit(void)
{
    sb_ab_fit f;
    sb_err err = {0};

    /* Exact synthetic model: alpha 2 us, beta 10 GB/s. */
    double S[5] = {8, 1024, 65536, 1048576, 67108864};
    double t[5];
    for (int i = 0; i < 5; i++)
        t[i] = 2e-6 + S[i] / 10e9;
    CHECK(sb_net_fit_ab(S, t, 5, true, &f, &err) == 0);
    CHECK_NEAR(f.alpha_s * 1e6, 2.0, 1e-9);
    CHECK_NEAR(f.beta_Bps / 1e9, 10.0, 1e-9);
    CHECK(f.rel_rms < 1e-9);
    CHECK(f.n == 5);
    CHECK_NEAR(sb_net_ab_predict(&f, 4096) * 1e6, 2.0 + 0.4096, 1e-9);
    CHECK(sb_net_fit_ab(S, t, 5, false, &f, &err) == 0);
    CHECK_NEAR(f.beta_Bps / 1e9, 10.0, 1e-9);

    /* By hand: S = 0, 1, 2; t = 1, 2, 4. Ordinary least squares: slope
     * 3/2, alpha 5/6, relative residuals -1/6, 1/6, -1/24. */
    double S3[3] = {0, 1, 2}, t3[3] = {1, 2, 4};
    CHECK(sb_net_fit_ab(S3, t3, 3, false, &f, &err) == 0);
    CHECK_NEAR(f.alpha_s, 5.0 / 6.0, 1e-12);
    CHECK_NEAR(f.beta_Bps, 2.0 / 3.0, 1e-12);
    CHECK_NEAR(f.rel_rms, sqrt((1.0 / 36 + 1.0 / 36 + 1.0 / 576) / 3.0), 1e-12);
    /* Weighted by 1/t^2: slope 14/11, alpha 32/33. */
    CHECK(sb_net_fit_ab(S3, t3, 3, true, &f, &err) == 0);
    CHECK_NEAR(f.alpha_s, 32.0 / 33.0, 1e-12);
    CHECK_NEAR(f.beta_Bps, 11.0 / 14.0, 1e-12);
    CHECK_NEAR(f.rel_rms, 0.10050378152592121, 1e-9);

    /* Time falling with size: no finite bandwidth. */
    double tdown[2] = {2, 1}, S2[2] = {1, 2};
    CHECK(sb_net_fit_ab(S2, tdown, 2, false, &f, &err) == 0);
    CHECK(isinf(f.beta_Bps));
    CHECK_NEAR(sb_net_ab_predict(&f, 1e9), f.alpha_s, 1e-12);

    /* Refusals. */
    CHECK(sb_net_fit_ab(S, t, 1, true, &f, &err) == SB_EINVAL);
    double same[3] = {64, 64, 64};
    CHECK(sb_net_fit_ab(same, t3, 3, true, &f, &err) == SB_EINVAL);
    CHECK(strstr(err.msg, "distinct") != NULL);
    double tz[3] = {1, 0, 2};
    CHECK(sb_net_fit_ab(S3, tz, 3, true, &f, &err) == SB_EINVAL);
}

int main(void)
{
    test_names();
    test_table();
    test_factors();
    test_counts();
    test_iters();
    test_fit();
    return sb_check_done();
}
