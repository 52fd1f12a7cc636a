/*
 * config.c — the part of a run that must match for a fair comparison:
 * selection, parameters, threads, ranks and topology, backend, and the
 * software stack (compiler, flags, the GEMM libraries). Two runs whose configs
 * differ are not compared as if they were alike.
 */
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "core/backend.h"
#include "solbench/output.h"
#include "solbench/runner.h"
#include "solbench/sysinfo.h"

char *openblas_get_config(void);
char *openblas_get_corename(void);

json_t *sb_run_config(const sb_ctx *ctx, const char *areas, const char *names,
                      const sb_pset *user)
{
    json_t *c = json_object();
    json_object_set_new(
        c, "suite",
        json_string(ctx->suite == SB_SUITE_FULL ? "full" : "quick"));
    json_object_set_new(c, "areas", json_string(areas ? areas : ""));
    json_object_set_new(c, "benches", json_string(names ? names : ""));
    json_t *p = json_object();
    for (int i = 0; user && i < user->n; i++)
        json_object_set_new(p, user->kv[i].key, json_string(user->kv[i].value));
    json_object_set_new(c, "params", p);
    json_object_set_new(c, "threads", json_integer(ctx->threads));
    json_object_set_new(c, "min_time_s", json_real(ctx->min_time));
    json_object_set_new(c, "repeat", json_integer(ctx->repeat));
    json_object_set_new(c, "warmup", json_integer(ctx->warmup));
    /* Only when interleaved: runs from before the option keep their
     * config, and one by one stays comparable with them. */
    if (ctx->interleave)
        json_object_set_new(c, "sampling", json_string("interleaved"));
    json_object_set_new(c, "backend",
                        json_string(ctx->backend[0] ? ctx->backend : "all"));
    json_t *topo = json_object();
    json_object_set_new(topo, "ranks", json_integer(ctx->nranks));
    json_object_set_new(topo, "hosts", json_integer(ctx->hosts));
    json_object_set_new(topo, "ranks_per_host",
                        json_integer(ctx->ranks_per_host));
    json_object_set_new(topo, "mpi_library", json_string(ctx->mpi_library));
    json_object_set_new(topo, "transport", json_string(ctx->transport));
    json_object_set_new(c, "topology", topo);
    json_t *sw = json_object();
    json_object_set_new(sw, "solbench", json_string(sb_version()));
#if defined(__clang__)
    json_object_set_new(sw, "compiler",
                        json_string("clang " __clang_version__));
#elif defined(__GNUC__)
    json_object_set_new(sw, "compiler", json_string("gcc " __VERSION__));
#endif
#ifdef SB_CFLAGS
    json_object_set_new(sw, "cflags", json_string(SB_CFLAGS));
#endif
    /* each backend's libraries (the CPU's BLAS and oneDNN: lib=auto may
     * pick either, so another version, or none, is another configuration) */
    for (const sb_backend *const *b = sb_backends(); *b; b++)
        if ((*b)->software)
            (*b)->software(sw);
    json_object_set_new(c, "software", sw);
    return c;
}

void sb_run_begin(sb_run *run, const sb_ctx *ctx, const char *areas,
                  const char *names, const sb_pset *user, json_t *tags)
{
    sb_run_new_id(run->run_id, sizeof run->run_id);
    sb_utc_now(run->started_at, sizeof run->started_at);
    sb_sysinfo si;
    sb_sysinfo_collect(&si, true);
    sb_sysinfo_add_backends(&si, ctx->backend);
    json_decref(run->system);
    run->system = sb_sysinfo_json(&si);
    json_decref(run->config);
    run->config = sb_run_config(ctx, areas, names, user);
    json_decref(run->tags);
    run->tags = json_incref(tags);
}
