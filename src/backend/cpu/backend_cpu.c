/*
 * backend_cpu.c — the host's backends as the core sees them
 * (core/backend.h): "cpu", the host's cores (GEMM through OpenBLAS or
 * oneDNN, the memory and primitive kernels), and "host", the host side
 * of transfers with no device (host-to-host copies).
 */
#include <stdio.h>
#include <string.h>

#include <cblas.h>
#include <jansson.h>

#include "backend/cpu/cpu_gemm.h"
#include "core/backend.h"

/* The libraries a run's configuration names: a GEMM under lib=auto may
 * come from either, so another version (or none) is another config. */
static void cpu_software(json_t *sw)
{
    json_object_set_new(sw, "blas", json_string(openblas_get_config()));
    json_object_set_new(sw, "blas_core", json_string(openblas_get_corename()));
    json_object_set_new(sw, "onednn",
                        json_string(sb_gemm_lib_version(SB_GEMM_ONEDNN)));
}

/* OpenBLAS picks its kernels by core name. A core narrower than the CPU
 * (a library older than the CPU falls back to its SSE kernels) caps every
 * GEMM, without any other sign. */
static void cpu_notes(const sb_sysinfo *si, json_t *env, json_t *notes)
{
    const char *better = sb_gemm_core_for_isa(
        &si->isa, strstr(si->vendor, "AMD") != NULL, si->openblas_core);
    if (!si->openblas_core[0] || !better)
        return;
    json_t *forced = json_object_get(env, "OPENBLAS_CORETYPE");
    char buf[512];
    snprintf(buf, sizeof buf,
             "OpenBLAS runs its %s kernels (%d-bit) on a CPU its %s "
             "kernels match%s%s: OPENBLAS_CORETYPE=%s selects them "
             "(compute.gemm lib=onednn or lib=auto does not need it)",
             si->openblas_core, sb_gemm_openblas_core_width(si->openblas_core),
             better, forced ? "; forced by OPENBLAS_CORETYPE=" : "",
             forced && json_is_string(forced) ? json_string_value(forced) : "",
             better);
    json_t *j = json_string(buf);
    if (j)
        json_array_append_new(notes, j);
}

const sb_backend sb_backend_cpu = {
    .name = "cpu",
    .what = "the host's cores",
    .phase = 0,
    .caps = SB_BK_SELECT | SB_BK_HOST,
    .software = cpu_software,
    .notes = cpu_notes,
};

const sb_backend sb_backend_host = {
    .name = "host",
    .what = "the host side of transfers without a device",
    .phase = 0,
    .caps = SB_BK_HOST,
};
