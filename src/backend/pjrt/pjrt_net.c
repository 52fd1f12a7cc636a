/*
 * pjrt_net.c — network.allreduce, allgather, reduce_scatter, alltoall,
 * sendrecv (a ring collective_permute) and bcast (collective_broadcast)
 * across the devices of a PJRT client: one StableHLO program replicated on
 * N devices, a while loop of `iters` collectives a launch, timed from
 * PJRT_LoadedExecutable_Execute to the last device's completion event.
 *
 * S, algbw and busbw are nccl-tests' (netmodel.h). Elements are s32: a sum
 * wraps instead of overflowing, so the program can carry what it reduces
 * from one iteration to the next (nothing loop-invariant for the compiler
 * to hoist) and the result after any count is exact. The loop carries:
 *   allreduce      x <- allreduce(x)
 *   alltoall       x <- alltoall(x)
 *   sendrecv       x <- x of the previous device (device d sends to d+1)
 *   bcast          x <- x of device 0
 *   allgather      g <- allgather(x); x <- chunk 1 of g (S/N words copied)
 *   reduce_scatter r <- reduce_scatter(x); x[chunk 0] <- r (S/N words)
 * Verification launches 3 iterations and checks every device's output
 * against the same recurrence run on the host (every element up to 64 Ki
 * words a chunk, else 4096 sampled positions of every chunk).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/pjrt/pjrt.h"
#include "solbench/bench.h"
#include "solbench/netmodel.h"

static const sb_param_def pnet_params[] = {
    {"size", SB_P_SIZE, "64MiB", 4, 17179869184.0, NULL,
     "bytes of the operation's buffer (nccl-tests' S)"},
    {"devices", SB_P_INT, "0", 0, SB_PJRT_MAXDEV, NULL,
     "devices to use (0: all the client's)"},
    {"plant_error", SB_P_BOOL, "0", 0, 0, NULL,
     "testing: corrupt one output element before verification (the run "
     "must then fail)"},
    {NULL, 0, NULL, 0, 0, NULL, NULL}};

typedef struct pnet_state {
    sb_pjrt_loop loop; /* first: sb_pjrt_timer's; one argument a device */
    sb_netop op;
    int n;          /* devices */
    size_t count;   /* elements of S */
    size_t in, out; /* elements of a device's input and output */
    double S;
    bool plant;
} pnet_state;

/* Device d's input element i: distinct, below 2^20. */
static uint32_t val(int d, size_t i)
{
    uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(d + 1) * 0x9E3779B9u;
    h ^= h >> 15;
    return (h * 0x85EBCA6Bu) >> 12;
}

static int want_devices(const sb_params *prm, int have)
{
    int n = (int)sb_p_num(prm, "devices");
    return n == 0 ? have : n;
}

static void sizes(pnet_state *st, double size)
{
    st->count = sb_net_count(st->op, size, 4, st->n);
    st->S = sb_net_bytes(st->op, st->count, 4, 1);
    const size_t chunk = st->count / (size_t)st->n;
    st->in = st->op == SB_NET_ALLGATHER ? chunk : st->count;
    st->out = st->op == SB_NET_REDUCE_SCATTER ? chunk : st->count;
}

static int pnet_check(const sb_point *pt, const sb_ctx *ctx, sb_err *err)
{
    (void)ctx;
    const double size = sb_p_num(pt->params, "size");
    if (size / 4 > 2147483647.0)
        return sb_fail(err, SB_EINVAL,
                       "%s on pjrt: parameter size=%s: more than 2^31 "
                       "elements",
                       pt->bench->name, sb_p_str(pt->params, "size"));
    return 0;
}

static double pnet_footprint(const sb_point *pt, const sb_ctx *ctx)
{
    (void)ctx;
    /* a host staging buffer; on a CPU plugin, whose devices' memory is the
     * host's, each device's input, output and the loop's copy as well */
    const double size = sb_p_num(pt->params, "size");
    sb_pjrt *p = NULL;
    sb_err ignored = {0};
    if (sb_pjrt_open(&p, &ignored) || strcmp(sb_pjrt_platform(p), "cpu") != 0)
        return size;
    return (1.0 + 3.0 * want_devices(pt->params, sb_pjrt_ndev(p))) * size;
}

static void pnet_teardown(void *state)
{
    pnet_state *st = state;
    if (!st)
        return;
    if (st->loop.p) {
        for (int d = 0; d < st->n; d++)
            sb_pjrt_buf_free(st->loop.p, st->loop.args[d][0]);
        sb_pjrt_loop_free(&st->loop);
    }
    free(st);
}

/* The collective of one iteration: from %x to the carried values. */
static int body(const pnet_state *st, const char *grp, const char *tin,
                const char *tout, char *b, size_t len)
{
    const char *sum = "({\n"
                      "        ^bb0(%u: tensor<i32>, %v: tensor<i32>):\n"
                      "          %s = stablehlo.add %u, %v : tensor<i32>\n"
                      "          stablehlo.return %s : tensor<i32>\n"
                      "      })";
    const size_t chunk = st->count / (size_t)st->n;
    char pairs[SB_PJRT_MAXDEV * 16] = "";
    size_t o = 0;
    for (int d = 0; d < st->n; d++)
        o += (size_t)snprintf(pairs + o, sizeof pairs - o, "%s[%d, %d]",
                              d ? ", " : "", d, (d + 1) % st->n);
    int w = 0;
    switch (st->op) {
    case SB_NET_ALLREDUCE:
        w = snprintf(b, len,
                     "      %%y = \"stablehlo.all_reduce\"(%%x) %s "
                     "{replica_groups = %s} : (%s) -> %s\n",
                     sum, grp, tin, tin);
        break;
    case SB_NET_ALLTOALL:
        w = snprintf(b, len,
                     "      %%y = \"stablehlo.all_to_all\"(%%x) "
                     "{split_dimension = 0 : i64, concat_dimension = 0 : i64, "
                     "split_count = %d : i64, replica_groups = %s} : (%s) -> "
                     "%s\n",
                     st->n, grp, tin, tin);
        break;
    case SB_NET_SENDRECV:
        w = snprintf(b, len,
                     "      %%y = \"stablehlo.collective_permute\"(%%x) "
                     "{source_target_pairs = dense<[%s]> : tensor<%dx2xi64>} "
                     ": (%s) -> %s\n",
                     pairs, st->n, tin, tin);
        break;
    case SB_NET_BCAST:
        w = snprintf(b, len,
                     "      %%y = \"stablehlo.collective_broadcast\"(%%x) "
                     "{replica_groups = %s} : (%s) -> %s\n",
                     grp, tin, tin);
        break;
    case SB_NET_ALLGATHER:
        w = snprintf(b, len,
                     "      %%g = \"stablehlo.all_gather\"(%%x) "
                     "{all_gather_dim = 0 : i64, replica_groups = %s} : (%s) "
                     "-> %s\n"
                     "      %%y = stablehlo.slice %%g [%zu:%zu] : (%s) -> %s\n",
                     grp, tin, tout, chunk % st->count,
                     chunk % st->count + chunk, tout, tin);
        break;
    case SB_NET_REDUCE_SCATTER:
        w = snprintf(b, len,
                     "      %%g = \"stablehlo.reduce_scatter\"(%%x) %s "
                     "{scatter_dimension = 0 : i64, replica_groups = %s} : "
                     "(%s) -> %s\n"
                     "      %%y = stablehlo.dynamic_update_slice %%x, %%g, "
                     "%%c0 : (%s, %s, tensor<i32>) -> %s\n",
                     sum, grp, tin, tout, tin, tout, tin);
        break;
    default:
        return -1;
    }
    return w > 0 && (size_t)w < len ? 0 : -1;
}

static int pnet_program(pnet_state *st, sb_err *err)
{
    char tin[48], tout[48], grp[SB_PJRT_MAXDEV * 4 + 64], b[2048];
    snprintf(tin, sizeof tin, "tensor<%zuxi32>", st->in);
    snprintf(tout, sizeof tout, "tensor<%zuxi32>", st->out);
    size_t o = (size_t)snprintf(grp, sizeof grp, "dense<[[");
    for (int d = 0; d < st->n; d++)
        o +=
            (size_t)snprintf(grp + o, sizeof grp - o, "%s%d", d ? ", " : "", d);
    snprintf(grp + o, sizeof grp - o, "]]> : tensor<1x%dxi64>", st->n);
    if (body(st, grp, tin, tout, b, sizeof b))
        return sb_fail(err, SB_EINVAL, "pjrt: no program for this collective");
    /* allgather and reduce_scatter carry their output (%g) beside x */
    const bool two = st->in != st->out;
    char carry[160], types[160], init[96] = "";
    if (two) {
        snprintf(init, sizeof init,
                 "    %%z = stablehlo.constant dense<0> : %s\n", tout);
        snprintf(carry, sizeof carry, "%%x = %%a, %%o = %%z, ");
        snprintf(types, sizeof types, "%s, %s", tin, tout);
    } else {
        snprintf(carry, sizeof carry, "%%x = %%a, ");
        snprintf(types, sizeof types, "%s", tin);
    }
    return sb_pjrt_compile_replicated(
        st->loop.p, st->n, st->loop.dev, &st->loop.exe, err,
        "module @sb_net attributes {mhlo.num_replicas = %d : i32, "
        "mhlo.num_partitions = 1 : i32} {\n"
        "  func.func public @main(%%a: %s, %%n: tensor<i32>) -> %s {\n"
        "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
        "%s"
        "    %%r:%d = stablehlo.while(%%i = %%c0, %s%%k = %%n) : "
        "tensor<i32>, %s, tensor<i32>\n"
        "     cond {\n"
        "      %%lt = stablehlo.compare LT, %%i, %%k, SIGNED : "
        "(tensor<i32>, tensor<i32>) -> tensor<i1>\n"
        "      stablehlo.return %%lt : tensor<i1>\n"
        "    } do {\n"
        "%s"
        "      %%one = stablehlo.constant dense<1> : tensor<i32>\n"
        "      %%j = stablehlo.add %%i, %%one : tensor<i32>\n"
        "      stablehlo.return %%j, %%y, %s%%k : tensor<i32>, %s, "
        "tensor<i32>\n"
        "    }\n"
        "    return %%r#%d : %s\n"
        "  }\n"
        "}\n",
        st->n, tin, tout, init, two ? 4 : 3, carry, types, b, two ? "%g, " : "",
        types, two ? 2 : 1, tout);
}

static int pnet_setup(const sb_point *pt, const sb_ctx *ctx, void **state,
                      sb_err *err)
{
    (void)ctx;
    sb_pjrt *p = NULL;
    int rc = sb_pjrt_open(&p, err);
    if (rc)
        return rc;
    const int have = sb_pjrt_ndev(p);
    const int n = want_devices(pt->params, have);
    if (n > have)
        return sb_fail(err, SB_EUNSUP,
                       "%s on pjrt: devices=%d, the client has %d",
                       pt->bench->name, n, have);
    if (n < 2)
        return sb_fail(err, SB_EUNSUP,
                       "%s on pjrt: a collective needs 2 devices or more; "
                       "the client has %d",
                       pt->bench->name, have);
    pnet_state *st = calloc(1, sizeof *st);
    if (!st)
        return sb_fail(err, SB_ENOMEM, "out of memory");
    st->loop.p = p;
    st->loop.ndev = n;
    st->op = (sb_netop)pt->bench->kind;
    st->n = n;
    st->plant = sb_p_bool(pt->params, "plant_error");
    sizes(st, sb_p_num(pt->params, "size"));
    uint32_t *h = malloc(st->in * sizeof *h);
    if (!h) {
        free(st);
        return sb_fail(err, SB_ENOMEM, "%s on pjrt: out of memory",
                       pt->bench->name);
    }
    if ((rc = pnet_program(st, err)))
        goto done;
    const int64_t dims[1] = {(int64_t)st->in};
    for (int d = 0; d < n && !rc; d++) {
        for (size_t i = 0; i < st->in; i++)
            h[i] = val(d, i);
        rc = sb_pjrt_upload_to(p, st->loop.dev[d], h, SB_PJRT_S32, dims, 1,
                               &st->loop.args[d][0], err);
    }
    st->loop.nargs = 2;
done:
    free(h);
    if (rc) {
        pnet_teardown(st);
        return rc;
    }
    *state = st;
    return 0;
}

/* The host's run of the loop for `iters` iterations at position j of
 * every chunk (or element j, for the ops without chunks): out[d][c] is
 * device d's output at chunk c, position j. */
static void simulate(const pnet_state *st, size_t j, int iters,
                     uint32_t out[SB_PJRT_MAXDEV][SB_PJRT_MAXDEV])
{
    const int n = st->n;
    const size_t m = st->count / (size_t)n;
    static uint32_t x[SB_PJRT_MAXDEV][SB_PJRT_MAXDEV];
    uint32_t t[SB_PJRT_MAXDEV], y[SB_PJRT_MAXDEV][SB_PJRT_MAXDEV];
    switch (st->op) {
    case SB_NET_ALLREDUCE:
    case SB_NET_SENDRECV:
    case SB_NET_BCAST:
        for (int d = 0; d < n; d++)
            t[d] = val(d, j);
        for (int k = 0; k < iters; k++) {
            uint32_t s = 0, u[SB_PJRT_MAXDEV];
            for (int d = 0; d < n; d++)
                s += t[d];
            for (int d = 0; d < n; d++)
                u[d] = st->op == SB_NET_ALLREDUCE ? s
                       : st->op == SB_NET_BCAST   ? t[0]
                                                  : t[(d + n - 1) % n];
            memcpy(t, u, sizeof u);
        }
        for (int d = 0; d < n; d++)
            out[d][0] = t[d];
        return;
    case SB_NET_ALLGATHER:
        for (int d = 0; d < n; d++)
            t[d] = val(d, j);
        for (int k = 0; k < iters; k++) {
            for (int d = 0; d < n; d++)
                for (int c = 0; c < n; c++)
                    out[d][c] = t[c];
            for (int d = 0; d < n; d++)
                t[d] = out[d][1 % n];
        }
        return;
    case SB_NET_ALLTOALL:
    case SB_NET_REDUCE_SCATTER:
        for (int d = 0; d < n; d++)
            for (int c = 0; c < n; c++)
                x[d][c] = val(d, (size_t)c * m + j);
        for (int k = 0; k < iters; k++) {
            if (st->op == SB_NET_ALLTOALL) {
                for (int d = 0; d < n; d++)
                    for (int c = 0; c < n; c++)
                        y[d][c] = x[c][d];
                memcpy(x, y, sizeof y);
                continue;
            }
            for (int d = 0; d < n; d++) {
                uint32_t s = 0;
                for (int q = 0; q < n; q++)
                    s += x[q][d];
                t[d] = s;
            }
            for (int d = 0; d < n; d++)
                x[d][0] = t[d];
        }
        for (int d = 0; d < n; d++)
            for (int c = 0; c < n; c++)
                out[d][c] = st->op == SB_NET_ALLTOALL ? x[d][c] : t[d];
        return;
    default:
        return;
    }
}

static int pnet_verify(void *state, sb_result *r)
{
    pnet_state *st = state;
    sb_err err = {0};
    const int iters = 3, n = st->n;
    sb_pjrt_buf *outs[SB_PJRT_MAXDEV] = {NULL};
    uint32_t *got = malloc((size_t)n * st->out * sizeof *got);
    int rc = SB_ENOMEM;
    if (!got)
        goto done;
    if ((rc = sb_pjrt_loop_run(&st->loop, iters, outs, &err)))
        goto done;
    for (int d = 0; d < n && !rc; d++)
        rc = sb_pjrt_download(st->loop.p, outs[d], got + (size_t)d * st->out,
                              st->out * sizeof *got, &err);
    if (rc)
        goto done;
    if (st->plant)
        got[st->out / 2] += 1;
    /* positions: element j (no chunks) or position j of every chunk */
    const bool chunks = st->op == SB_NET_ALLGATHER ||
                        st->op == SB_NET_ALLTOALL ||
                        st->op == SB_NET_REDUCE_SCATTER;
    const size_t span = chunks ? st->count / (size_t)n : st->count;
    const size_t npos = span <= 65536 ? span : 4096;
    const int outchunks = st->op == SB_NET_REDUCE_SCATTER ? 1 : n;
    size_t wrong = 0, checked = 0;
    static uint32_t want[SB_PJRT_MAXDEV][SB_PJRT_MAXDEV];
    for (size_t s = 0; s < npos; s++) {
        size_t j = npos == span ? s : s * (span - 1) / (npos - 1);
        if (st->plant && s == 0 && npos < span) /* the planted one too */
            j = (st->out / 2) % span;
        simulate(st, j, iters, want);
        for (int d = 0; d < n; d++)
            for (int c = 0; c < (chunks ? outchunks : 1); c++) {
                size_t e = (size_t)c * span + j;
                wrong += got[(size_t)d * st->out + e] != want[d][c];
                checked++;
            }
    }
    if (wrong)
        sb_result_note(r,
                       "verification: %zu of %zu checked elements after %d "
                       "iterations differ from the host's recurrence",
                       wrong, checked, iters);
    r->valid = wrong == 0;
    rc = 0;
done:
    if (rc && rc != SB_ENOMEM)
        sb_result_note(r, "verification could not run: %s", err.msg);
    for (int d = 0; d < n; d++)
        sb_pjrt_buf_free(st->loop.p, outs[d]);
    free(got);
    return rc;
}

static void pnet_report(void *state, const sb_point *pt, sb_ctx *ctx,
                        sb_result *r)
{
    (void)pt;
    (void)ctx;
    const pnet_state *st = state;
    sb_net_report_rates(r, st->op, st->n, st->S);
    sb_result_note(r, "%s", sb_pjrt_describe(st->loop.p));
    sb_result_note(r,
                   "one program replicated on %d devices, a while loop of "
                   "s32 collectives a launch, timed to the last device's "
                   "completion event",
                   st->n);
}

#define PNET_IMPL(NAME, DESC)                                                  \
    const sb_impl sb_impl_pjrt_network_##NAME = {                              \
        .backend = "pjrt",                                                     \
        .desc = DESC,                                                          \
        .params = pnet_params,                                                 \
        .quick = "size=1MiB,16MiB",                                            \
        .full = "size=4KiB..256MiB:x4",                                        \
        .check = pnet_check,                                                   \
        .footprint = pnet_footprint,                                           \
        .setup = pnet_setup,                                                   \
        .timer = &sb_pjrt_timer,                                               \
        .verify = pnet_verify,                                                 \
        .report = pnet_report,                                                 \
        .teardown = pnet_teardown,                                             \
    };

PNET_IMPL(allreduce, "stablehlo.all_reduce (sum) over the client's devices")
PNET_IMPL(allgather, "stablehlo.all_gather; S = output buffer")
PNET_IMPL(reduce_scatter, "stablehlo.reduce_scatter (sum); S = input buffer")
PNET_IMPL(alltoall, "stablehlo.all_to_all; S = whole buffer")
PNET_IMPL(sendrecv, "stablehlo.collective_permute, device d to d+1 in a ring")
PNET_IMPL(bcast, "stablehlo.collective_broadcast from device 0")
