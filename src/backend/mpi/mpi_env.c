/*
 * mpi_env.c — the MPI life cycle of a run (net.h): starts MPI only when the
 * network area is asked for or a launcher started the process, and records
 * the topology every network result depends on (ranks, hosts, ranks per
 * host, MPI library and version, transport) in the context, so runs on
 * different topologies are never compared as if they were alike.
 */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <mpi.h>

#include "core/backend.h"
#include "solbench/net.h"
#include "solbench/util.h"

bool sb_mpi_launched(void)
{
    return sb_launcher_present();
}

/* First line of MPI_Get_library_version, blanks collapsed, Open MPI's
 * ", package: ..." tail dropped, and the MPI standard version added. */
static void library_name(char *out, size_t len)
{
    char raw[MPI_MAX_LIBRARY_VERSION_STRING];
    int rlen = 0;
    MPI_Get_library_version(raw, &rlen);
    char *cut = strpbrk(raw, "\r\n");
    if (cut)
        *cut = 0;
    cut = strstr(raw, ", package");
    if (cut)
        *cut = 0;
    char clean[MPI_MAX_LIBRARY_VERSION_STRING];
    size_t j = 0;
    bool blank = false;
    for (const char *s = raw; *s && j + 1 < sizeof clean; s++) {
        if (isspace((unsigned char)*s)) {
            blank = j > 0;
            continue;
        }
        if (blank)
            clean[j++] = ' ';
        blank = false;
        if (j + 1 < sizeof clean)
            clean[j++] = *s;
    }
    clean[j] = 0;
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    snprintf(out, len, "%.70s (MPI %d.%d)", clean, major, minor);
}

/* What the environment says about the transport: Open MPI's MCA choices,
 * MPICH's netmod, libfabric's or UCX's selections. */
static void transport_name(char *out, size_t len)
{
    static const struct {
        const char *var, *label;
    } vars[] = {{"OMPI_MCA_pml", "pml"},
                {"OMPI_MCA_btl", "btl"},
                {"OMPI_MCA_mtl", "mtl"},
                {"MPIR_CVAR_CH4_NETMOD", "netmod"},
                {"MPIR_CVAR_CH3_NETMOD", "netmod"},
                {"MPIR_CVAR_NOLOCAL", "nolocal"},
                {"FI_PROVIDER", "ofi"},
                {"UCX_TLS", "ucx"},
                {NULL, NULL}};
    out[0] = 0;
    size_t used = 0;
    for (int i = 0; vars[i].var; i++) {
        const char *v = getenv(vars[i].var);
        if (!v || !*v)
            continue;
        int w = snprintf(out + used, len - used, "%s%s=%s", used ? " " : "",
                         vars[i].label, v);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    if (!used)
        snprintf(out, len, "unknown");
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Gathers every rank's processor name; counts distinct hosts and the
 * most ranks on one host. */
static int topology(sb_ctx *ctx, sb_err *err)
{
    char me[MPI_MAX_PROCESSOR_NAME];
    memset(me, 0, sizeof me);
    int mlen = 0;
    MPI_Get_processor_name(me, &mlen);
    size_t n = (size_t)ctx->nranks;
    char *all = calloc(n, MPI_MAX_PROCESSOR_NAME);
    if (!all)
        return sb_fail(err, SB_ENOMEM, "out of memory gathering host names");
    MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all,
                  MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    qsort(all, n, MPI_MAX_PROCESSOR_NAME, cmp_names);
    int hosts = 0, most = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *h = all + i * MPI_MAX_PROCESSOR_NAME;
        if (i == 0 || strcmp(h, h - MPI_MAX_PROCESSOR_NAME) != 0) {
            hosts++;
            run = 0;
        }
        if (++run > most)
            most = run;
    }
    free(all);
    ctx->hosts = hosts;
    ctx->ranks_per_host = most;
    return 0;
}

/* The start-up watchdog: MPI_Init and the first collective (the host
 * names) wait for every rank, and a rank that stopped, or a host the
 * launcher cannot reach, would hold them for ever. SIGALRM ends the
 * process with one line (write and _exit only: the handler runs inside
 * MPI); mpirun then ends the other ranks. */
static char start_msg[256];

static void start_expired(int sig)
{
    (void)sig;
    ssize_t w = write(STDERR_FILENO, start_msg, strlen(start_msg));
    (void)w;
    _exit(2);
}

/* Default limit when no --timeout is given: the network area's per-point
 * default. */
#define START_DEFAULT_S 300.0

static void start_arm(double limit_s, struct sigaction *old)
{
    snprintf(start_msg, sizeof start_msg,
             "solbench: MPI did not start within %.0f s (--timeout): a rank "
             "stopped or never began, or the launcher cannot reach a host; "
             "stopping\n",
             limit_s);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = start_expired;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, old);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)limit_s;
    it.it_value.tv_usec =
        (suseconds_t)((limit_s - (double)(time_t)limit_s) * 1e6);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
        it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

static void start_disarm(const struct sigaction *old)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    sigaction(SIGALRM, old, NULL);
}

int sb_mpi_begin(int *argc, char ***argv, bool want, sb_ctx *ctx, sb_err *err)
{
    if (!want && !sb_mpi_launched()) {
        ctx->rank = 0;
        ctx->nranks = 1;
        return 0;
    }
    struct sigaction old;
    start_arm(ctx->timeout_s > 0 ? ctx->timeout_s : START_DEFAULT_S, &old);
    /* Fault injection for the tests (docs/NETWORK.md): the rank named
     * stops itself before MPI_Init, as a rank a debugger or the scheduler
     * froze would. */
    const char *stall = getenv("SOLBENCH_STALL_START_RANK");
    const char *me = getenv("OMPI_COMM_WORLD_RANK");
    if (!me)
        me = getenv("PMI_RANK");
    if (stall && me && atoi(stall) == atoi(me))
        raise(SIGSTOP);
    int rc = 0;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        /* FUNNELED: only the main thread calls MPI; the network area's
         * watchdog thread calls nothing but MPI_Abort, as a last resort. */
        int provided = 0;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
            MPI_SUCCESS) {
            start_disarm(&old);
            return sb_fail(err, SB_EUNSUP, "MPI could not be initialised");
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->nranks);
    library_name(ctx->mpi_library, sizeof ctx->mpi_library);
    transport_name(ctx->transport, sizeof ctx->transport);
    /* The launcher places the ranks (mpirun binds each to its cores); the
     * runner's per-thread binding would pin every rank's main thread to
     * core 0, so it is turned off for a multi-rank run. */
    if (ctx->nranks > 1)
        setenv("SOLBENCH_NO_BIND", "1", 0);
    rc = topology(ctx, err);
    start_disarm(&old);
    return rc;
}

void sb_mpi_end(void)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
        MPI_Finalize();
}

void sb_mpi_abort(const char *msg, int code)
{
    fprintf(stderr, "solbench: %s\n", msg);
    fflush(stderr);
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

/* The MPI runtime as the core sees it (core/backend.h): the session a run
 * spans its ranks with. Its impls are the network area's MPI ones. */
const sb_backend sb_backend_mpi = {
    .name = "mpi",
    .what = "MPI ranks on the hosts mpirun or srun started",
    .phase = 0,
    .caps = SB_BK_HOST,
    .session_begin = sb_mpi_begin,
    .session_end = sb_mpi_end,
    .session_abort = sb_mpi_abort,
};
