/*
 * net.h — the MPI runtime (src/backend/mpi). Without SB_HAVE_MPI these
 * are not compiled; the runner's sb_session_begin/_end/_abort call them
 * (commands never do).
 *
 * MPI is initialised only when a selected benchmark needs ranks or the
 * process was started by an MPI launcher, so a plain `solbench run` never
 * needs MPI at run time.
 */
#ifndef SOLBENCH_NET_H
#define SOLBENCH_NET_H

#include <stdbool.h>

#include "solbench/bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when the environment shows an MPI launcher (OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE, PMIX_RANK, ...). */
bool sb_mpi_launched(void);
/* Initialises MPI if `want` or launched; fills ctx->rank, ctx->nranks and
 * the topology fields of ctx. Returns 0 or a negative code. */
int sb_mpi_begin(int *argc, char ***argv, bool want, sb_ctx *ctx, sb_err *err);
/* Finalises MPI if it was initialised. */
void sb_mpi_end(void);
/* Ends every rank with a message (MPI_Abort when MPI is up). */
void sb_mpi_abort(const char *msg, int code) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif
