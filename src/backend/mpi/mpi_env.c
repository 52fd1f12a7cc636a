/*
 * mpi_env.c — the MPI life cycle of a run (net.h): starts MPI only when the
 * network area is asked for or a launcher started the process, and records
 * the topology every network result depends on (ranks, hosts, ranks per
 * host, MPI library and version, transport) in the context, so runs on
 * different topologies are never compared as if they were alike.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

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

int sb_mpi_begin(int *argc, char ***argv, bool want, sb_ctx *ctx, sb_err *err)
{
    if (!want && !sb_mpi_launched()) {
        ctx->rank = 0;
        ctx->nranks = 1;
        return 0;
    }
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        /* FUNNELED: only the main thread calls MPI; the network area's
         * watchdog thread calls nothing but MPI_Abort, as a last resort. */
        int provided = 0;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
            MPI_SUCCESS)
            return sb_fail(err, SB_EUNSUP, "MPI could not be initialised");
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
    return topology(ctx, err);
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
