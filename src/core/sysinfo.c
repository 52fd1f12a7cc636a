/*
 * sysinfo.c — the machine fingerprint: everything about the machine, the
 * build and the process environment that changes what a benchmark
 * measures, gathered into one JSON document, and a stable hash of the
 * parts that define the machine itself.
 *
 * Results are only comparable between equal machines, so the hash covers
 * what the hardware and kernel are (CPU, topology, caches, memory size, the
 * usable ISA, kernel release) and nothing that moves from run to run
 * (measured clock, load, hostname, environment). docs/SYSINFO.md lists the
 * exact canonical string. Topology and caches come from hwloc, ISA and
 * identification from cpuid (cpuid.c), the rest from the OS and from the
 * libraries themselves at run time (the version actually loaded, which can
 * differ from the headers it was built against).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <hwloc.h>
#include <jansson.h>
#include <sqlite3.h>
#ifdef SB_HAVE_MPI
#include <mpi.h>
#endif

#include "core/backend.h"
#include "solbench/runner.h"
#include "core/cpuid.h"
#include "solbench/sysinfo.h"
#include "solbench/util.h"

#ifndef SB_VERSION
#define SB_VERSION "unknown"
#endif
#ifndef SB_GIT_COMMIT
#define SB_GIT_COMMIT "unknown"
#endif
#ifndef SB_CFLAGS
#define SB_CFLAGS "unknown"
#endif

/* OpenBLAS's own queries (its cblas.h declares them too; declaring them
 * here keeps this file independent of which cblas.h is on the path). */
char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);

extern char **environ;

#define SB__GIB 1073741824.0

const char *sb_version(void)
{
    return SB_VERSION;
}
const char *sb_git_commit(void)
{
    return SB_GIT_COMMIT;
}

/* ---- FNV-1a -------------------------------------------------------------- */

void sb_hash_hex(const char *s, char out[17])
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 offset basis */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull; /* FNV 64 prime */
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- the ISA table ------------------------------------------------------- */

/* Keys are the Linux /proc/cpuinfo flag names, so the two can be compared. */
static const struct {
    const char *key, *label;
    size_t off;
} sb__isa_names[] = {
    {"sse4_2", "SSE4.2", offsetof(sb_isa, sse42)},
    {"avx", "AVX", offsetof(sb_isa, avx)},
    {"avx2", "AVX2", offsetof(sb_isa, avx2)},
    {"fma", "FMA", offsetof(sb_isa, fma)},
    {"avx512f", "AVX-512F", offsetof(sb_isa, avx512f)},
    {"avx512bw", "AVX-512BW", offsetof(sb_isa, avx512bw)},
    {"avx512vl", "AVX-512VL", offsetof(sb_isa, avx512vl)},
    {"avx512_bf16", "AVX-512-BF16", offsetof(sb_isa, avx512_bf16)},
    {"avx512_fp16", "AVX-512-FP16", offsetof(sb_isa, avx512_fp16)},
    {"amx_tile", "AMX-TILE", offsetof(sb_isa, amx_tile)},
    {"amx_bf16", "AMX-BF16", offsetof(sb_isa, amx_bf16)},
    {"amx_int8", "AMX-INT8", offsetof(sb_isa, amx_int8)},
};
#define SB__NISA (sizeof sb__isa_names / sizeof sb__isa_names[0])

static bool sb__isa_has(const sb_isa *isa, size_t i)
{
    return *(const bool *)((const char *)isa + sb__isa_names[i].off);
}

/* ---- small helpers ------------------------------------------------------- */

static void sb__copy(char *dst, size_t cap, const char *src)
{
    if (cap == 0)
        return;
    if (!src)
        src = "";
    /* Truncation is intended (fixed-size fields), so no snprintf: its
     * truncation warnings would fire for every long source. */
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* A JSON string from text that may not be UTF-8 (hostnames, environment
 * values): jansson refuses invalid UTF-8, so such bytes become '?'. */
static json_t *sb__jstr(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    char *c = strdup(s);
    if (!c)
        return json_null();
    for (char *p = c; *p; p++)
        if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
            *p = '?';
    j = json_string(c);
    free(c);
    return j ? j : json_null();
}

/* Reads the first line of a small file into out, without the newline. */
static bool sb__read_line(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(out, (int)cap, f) != NULL;
    fclose(f);
    if (ok)
        out[strcspn(out, "\n")] = '\0';
    return ok;
}

/* PRETTY_NAME from os-release(5), quotes removed. */
static void sb__os_name(char *out, size_t cap)
{
    static const char *const paths[] = {"/etc/os-release",
                                        "/usr/lib/os-release"};
    out[0] = '\0';
    for (size_t i = 0; i < 2 && !out[0]; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f)
            continue;
        char line[256];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "PRETTY_NAME=", 12) != 0)
                continue;
            char *v = line + 12;
            v[strcspn(v, "\n")] = '\0';
            size_t n = strlen(v);
            if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
                v[n - 1] = '\0';
                v++;
            }
            sb__copy(out, cap, v);
            break;
        }
        fclose(f);
    }
    if (!out[0]) {
        struct utsname u;
        sb__copy(out, cap, uname(&u) == 0 ? u.sysname : "unknown");
    }
}

static void sb__compiler(char *out, size_t cap)
{
#if defined(__clang__)
    snprintf(out, cap, "clang %s", __clang_version__);
#elif defined(__GNUC__)
    snprintf(out, cap, "gcc %s", __VERSION__);
#elif defined(__VERSION__)
    snprintf(out, cap, "%s", __VERSION__);
#else
    snprintf(out, cap, "unknown");
#endif
    /* clang's version string ends with a space before a parenthesised
     * source; keep it short and tidy. */
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == ' ')
        out[--n] = '\0';
}

/* ---- hwloc: topology, caches, NUMA memory -------------------------------- */

static void sb__topology(sb_sysinfo *si)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    si->sockets = 1;
    si->threads = si->cores = online > 0 ? (int)online : 1;
    si->numa_nodes = 1;

    hwloc_topology_t t = sb_topology(); /* shared: not destroyed here */
    if (!t)
        return;
    int n;
    if ((n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE)) > 0)
        si->sockets = n;
    if ((n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU)) > 0)
        si->threads = n;
    if ((n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE)) > 0)
        si->cores = n;
    else
        si->cores = si->threads;
    if ((n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE)) > 0)
        si->numa_nodes = n;

    static const hwloc_obj_type_t levels[5] = {
        HWLOC_OBJ_TYPE_MAX, HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,
        HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE};
    for (int l = 1; l < 5; l++) {
        /* The first instance stands for all (on hybrid CPUs the P-core
         * caches come first in hwloc's order on current Intel parts). */
        hwloc_obj_t c = hwloc_get_obj_by_type(t, levels[l], 0);
        if (!c || !c->attr || c->attr->cache.size == 0)
            continue;
        si->cache_bytes[l] = (double)c->attr->cache.size;
        si->cache_instances[l] = hwloc_get_nbobjs_by_type(t, levels[l]);
        int shared = hwloc_get_nbobjs_inside_cpuset_by_type(t, c->cpuset,
                                                            HWLOC_OBJ_CORE);
        si->cache_shared_by[l] = shared > 0 ? shared : 1;
    }

    double numa = 0.0;
    for (hwloc_obj_t node =
             hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, NULL);
         node; node = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, node))
        if (node->attr)
            numa += (double)node->attr->numanode.local_memory;
    si->numa_mem_bytes = numa;
}

static void sb__hwloc_version(char *out, size_t cap)
{
    unsigned v = hwloc_get_api_version();
#if defined(HWLOC_VERSION)
    /* The package version (2.9.0) says more than the API level (2.8.0). */
    snprintf(out, cap, "%s", HWLOC_VERSION);
    (void)v;
#else
    snprintf(out, cap, "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
#endif
}

/* ---- collect ------------------------------------------------------------- */

void sb_sysinfo_collect(sb_sysinfo *si, bool measure_clock)
{
    memset(si, 0, sizeof *si);

    sb_cpu_ident id;
    sb_cpu_identify(&id);
    sb__copy(si->vendor, sizeof si->vendor,
             id.vendor[0] ? id.vendor : "unknown");
    sb__copy(si->hypervisor, sizeof si->hypervisor, id.hypervisor);
    si->cpu_family = id.family;
    si->cpu_model_id = id.model;
    si->cpu_stepping = id.stepping;
    if (id.brand[0]) {
        sb__copy(si->cpu_model, sizeof si->cpu_model, id.brand);
    } else {
        /* No brand string (non-x86): the kernel's name for the CPU. */
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (colon && (strncmp(line, "model name", 10) == 0 ||
                          strncmp(line, "Model", 5) == 0)) {
                char *v = colon + 1;
                while (*v == ' ')
                    v++;
                v[strcspn(v, "\n")] = '\0';
                sb__copy(si->cpu_model, sizeof si->cpu_model, v);
                break;
            }
        }
        if (f)
            fclose(f);
        if (!si->cpu_model[0])
            sb__copy(si->cpu_model, sizeof si->cpu_model, "unknown");
    }

    sb_cpuid_regs regs;
    uint64_t xcr0 = 0;
    if (sb_cpuid_read(&regs, &xcr0))
        sb_isa_from_regs(&regs, xcr0, &si->isa_cpu, &si->isa);
    si->xcr0 = xcr0;

    sb__topology(si);
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    si->mem_bytes = pages > 0 && psize > 0 ? (double)pages * (double)psize
                                           : si->numa_mem_bytes;

    if (measure_clock)
        si->clock = *sb_core_clock_once();
    si->ghz_measured = si->clock.ghz;

    struct utsname u;
    if (uname(&u) == 0) {
        sb__copy(si->kernel, sizeof si->kernel, u.release);
        sb__copy(si->arch, sizeof si->arch, u.machine);
    }
    sb__os_name(si->os, sizeof si->os);
    if (gethostname(si->hostname, sizeof si->hostname - 1) != 0)
        sb__copy(si->hostname, sizeof si->hostname, "unknown");

    sb__compiler(si->compiler, sizeof si->compiler);
    const char *flags = SB_CFLAGS;
    while (*flags == ' ') /* CMake joins empty flag sets with spaces */
        flags++;
    sb__copy(si->cflags, sizeof si->cflags, flags);

    sb__copy(si->openblas_config, sizeof si->openblas_config,
             openblas_get_config());
    sb__copy(si->openblas_core, sizeof si->openblas_core,
             openblas_get_corename());
    si->openblas_threads = openblas_get_num_threads();
    sb__hwloc_version(si->hwloc_version, sizeof si->hwloc_version);
#if JANSSON_VERSION_HEX >= 0x020d00
    sb__copy(si->jansson_version, sizeof si->jansson_version,
             jansson_version_str());
#else
    sb__copy(si->jansson_version, sizeof si->jansson_version, JANSSON_VERSION);
#endif
    sb__copy(si->sqlite_version, sizeof si->sqlite_version,
             sqlite3_libversion());
#ifdef SB_HAVE_MPI
    {
        /* Legal before MPI_Init (MPI-3). */
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        if (MPI_Get_library_version(v, &len) == MPI_SUCCESS) {
            v[len < (int)sizeof v ? len : (int)sizeof v - 1] = '\0';
            v[strcspn(v, "\n,")] = '\0';
            sb__copy(si->mpi_version, sizeof si->mpi_version, v);
        }
    }
#endif
}

/* ---- the fingerprint ----------------------------------------------------- */

int sb_sysinfo_canonical(const sb_sysinfo *si, char *out, int len)
{
    int n = 0;
    /* Appends at n; counts what would have been written when out is full. */
#define SB__APP(...)                                                           \
    do {                                                                       \
        int room_ = (out && n < len) ? len - n : 0;                            \
        int w_ = snprintf(room_ ? out + n : NULL, (size_t)room_, __VA_ARGS__); \
        if (w_ > 0)                                                            \
            n += w_;                                                           \
    } while (0)

    SB__APP("solbench.fingerprint/1;arch=%s;vendor=%s;cpu=%s;family=%d;"
            "model=%d;stepping=%d",
            si->arch, si->vendor, si->cpu_model, si->cpu_family,
            si->cpu_model_id, si->cpu_stepping);
    SB__APP(";sockets=%d;cores=%d;threads=%d;numa=%d", si->sockets, si->cores,
            si->threads, si->numa_nodes);
    static const char *const cname[5] = {"", "L1d", "L2", "L3", "L4"};
    for (int l = 1; l < 5; l++)
        if (si->cache_bytes[l] > 0)
            SB__APP(";%s=%.0fx%d/%d", cname[l], si->cache_bytes[l],
                    si->cache_instances[l], si->cache_shared_by[l]);
    SB__APP(";mem_gib=%.0f", floor(si->mem_bytes / SB__GIB + 0.5));
    SB__APP(";isa=");
    bool first = true;
    for (size_t i = 0; i < SB__NISA; i++)
        if (sb__isa_has(&si->isa, i)) {
            SB__APP("%s%s", first ? "" : ",", sb__isa_names[i].key);
            first = false;
        }
    SB__APP(";kernel=%s", si->kernel);
    if (si->has_pjrt && !si->pjrt.error[0])
        SB__APP(";pjrt=%s/%s/x%d/%s", si->pjrt.platform, si->pjrt.device_kind,
                si->pjrt.devices, si->pjrt.platform_version);
#undef SB__APP
    if (out && len > 0 && n >= len)
        out[len - 1] = '\0';
    return n;
}

/* ---- JSON ---------------------------------------------------------------- */

/* Process-level settings that change performance: which variables count. */
static bool sb__perf_env(const char *name)
{
    static const char *const prefixes[] = {
        "OMP_",      "GOMP_",  "KMP_", "OPENBLAS_", "GOTO_",  "MKL_",
        "OMPI_MCA_", "I_MPI_", "UCX_", "NCCL_",     "HWLOC_", "SOLBENCH_"};
    static const char *const exact[] = {
        "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_MAX_CONNECTIONS",
        "CUDA_LAUNCH_BLOCKING", "GLIBC_TUNABLES",
        "LD_PRELOAD",           "MALLOC_ARENA_MAX"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(name, exact[i]) == 0)
            return true;
    return false;
}

static int sb__cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The performance-relevant environment, sorted by name. */
static json_t *sb__env_json(void)
{
    json_t *env = json_object();
    size_t count = 0;
    for (char **e = environ; e && *e; e++)
        count++;
    const char **sel = count ? malloc(count * sizeof *sel) : NULL;
    size_t k = 0;
    for (size_t i = 0; sel && i < count; i++) {
        const char *eq = strchr(environ[i], '=');
        if (!eq || eq == environ[i])
            continue;
        char name[128];
        size_t nl = (size_t)(eq - environ[i]);
        if (nl >= sizeof name)
            continue;
        memcpy(name, environ[i], nl);
        name[nl] = '\0';
        if (sb__perf_env(name))
            sel[k++] = environ[i];
    }
    if (sel)
        qsort(sel, k, sizeof *sel, sb__cmp_str);
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(sel[i], '=');
        char name[128];
        size_t nl = (size_t)(eq - sel[i]);
        memcpy(name, sel[i], nl);
        name[nl] = '\0';
        json_object_set_new(env, name, sb__jstr(eq + 1));
    }
    free(sel);
    return env;
}

/* The selected value in a sysfs choice list: "always [madvise] never". */
static json_t *sb__sysfs_choice(const char *path)
{
    char line[256];
    if (!sb__read_line(path, line, sizeof line))
        return json_null();
    char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (open && close) {
        *close = '\0';
        return sb__jstr(open + 1);
    }
    return sb__jstr(line);
}

static json_t *sb__isa_list(const sb_isa *isa)
{
    json_t *a = json_array();
    for (size_t i = 0; i < SB__NISA; i++)
        if (sb__isa_has(isa, i))
            json_array_append_new(a, json_string(sb__isa_names[i].key));
    return a;
}

/* What the compiler was told to target (-march), from its own macros. */
static json_t *sb__target_isa(void)
{
    json_t *a = json_array();
#ifdef __SSE4_2__
    json_array_append_new(a, json_string("sse4_2"));
#endif
#ifdef __AVX__
    json_array_append_new(a, json_string("avx"));
#endif
#ifdef __AVX2__
    json_array_append_new(a, json_string("avx2"));
#endif
#ifdef __FMA__
    json_array_append_new(a, json_string("fma"));
#endif
#ifdef __AVX512F__
    json_array_append_new(a, json_string("avx512f"));
#endif
#ifdef __AVX512BW__
    json_array_append_new(a, json_string("avx512bw"));
#endif
#ifdef __AVX512VL__
    json_array_append_new(a, json_string("avx512vl"));
#endif
#ifdef __AVX512BF16__
    json_array_append_new(a, json_string("avx512_bf16"));
#endif
#ifdef __AVX512FP16__
    json_array_append_new(a, json_string("avx512_fp16"));
#endif
#ifdef __AMX_TILE__
    json_array_append_new(a, json_string("amx_tile"));
#endif
#ifdef __AMX_BF16__
    json_array_append_new(a, json_string("amx_bf16"));
#endif
#ifdef __AMX_INT8__
    json_array_append_new(a, json_string("amx_int8"));
#endif
#ifdef __ARM_NEON
    json_array_append_new(a, json_string("neon"));
#endif
    return a;
}

/* The OpenBLAS version is the second word of its config string. */
static json_t *sb__openblas_version(const char *config)
{
    char v[32] = "";
    if (strncmp(config, "OpenBLAS ", 9) == 0) {
        size_t n = strcspn(config + 9, " ");
        if (n > 0 && n < sizeof v) {
            memcpy(v, config + 9, n);
            v[n] = '\0';
        }
    }
    return v[0] ? json_string(v) : json_null();
}

/* Facts a reader should not miss, in words. */
static json_t *sb__notes(const sb_sysinfo *si, json_t *env)
{
    json_t *notes = json_array();
    char buf[512];

    if (si->hypervisor[0]) {
        snprintf(buf, sizeof buf,
                 "virtual machine (%s): topology and cache sizes are what "
                 "the hypervisor reports, not necessarily the host's; a "
                 "neighbour on the host can take cores, cache and memory "
                 "bandwidth (steal time): compare runs of one VM, prefer "
                 "--interleave for ratios, and read a figure's cv before "
                 "trusting it",
                 si->hypervisor);
        json_array_append_new(notes, sb__jstr(buf));
    }
    for (size_t i = 0; i < SB__NISA; i++)
        if (sb__isa_has(&si->isa_cpu, i) && !sb__isa_has(&si->isa, i)) {
            snprintf(buf, sizeof buf,
                     "the CPU has %s but the OS does not enable its register "
                     "state (XCR0=0x%llx): not usable, so its kernels and "
                     "peak are left out (a kernel or hypervisor setting "
                     "enables it)",
                     sb__isa_names[i].label, (unsigned long long)si->xcr0);
            json_array_append_new(notes, sb__jstr(buf));
        }
    if (si->clock.uncertain) {
        snprintf(buf, sizeof buf,
                 "the core clock is uncertain: add chain %.3f GHz, multiply "
                 "chain %.3f GHz, cycle counter %.3f GHz (0 = not available) "
                 "disagree by %.1f %%; no theoretical peak is computed "
                 "(MFU_theoretical is absent): the clock moved while it was "
                 "measured (boost, a busy neighbour) -- run again on a quiet "
                 "machine, or fix the frequency (cpupower frequency-set)",
                 si->clock.ghz_add, si->clock.ghz_mul, si->clock.ghz_perf,
                 100 * si->clock.spread);
        json_array_append_new(notes, sb__jstr(buf));
    }
    if (si->numa_mem_bytes > 0 && si->mem_bytes > 0 &&
        fabs(si->numa_mem_bytes - si->mem_bytes) > 0.1 * si->mem_bytes) {
        snprintf(buf, sizeof buf,
                 "NUMA nodes report %.1f GiB but the OS has %.1f GiB: the "
                 "topology the hypervisor or firmware describes does not "
                 "cover all memory, so buffers bound to a node may land "
                 "where it does not say; the memory check uses the OS's "
                 "figure, and DRAM bandwidth is the OS's memory, whatever "
                 "node it is",
                 si->numa_mem_bytes / SB__GIB, si->mem_bytes / SB__GIB);
        json_array_append_new(notes, sb__jstr(buf));
    }
    for (const sb_backend *const *b = sb_backends(); *b; b++)
        if ((*b)->notes)
            (*b)->notes(si, env, notes);
    return notes;
}

void sb_sysinfo_add_backends(sb_sysinfo *si, const char *want)
{
    for (const sb_backend *const *b = sb_backends(); *b; b++)
        if ((*b)->describe && sb_backend_wanted((*b)->name, want))
            (*b)->describe(si);
}

static json_t *pjrt_json(const sb_pjrt_info *p)
{
    json_t *o = json_object();
    if (p->error[0]) {
        json_object_set_new(o, "error", sb__jstr(p->error));
        return o;
    }
    char api[32];
    snprintf(api, sizeof api, "%d.%d", p->api_major, p->api_minor);
    json_object_set_new(o, "platform", sb__jstr(p->platform));
    json_object_set_new(o, "platform_version", sb__jstr(p->platform_version));
    json_object_set_new(o, "device_kind", sb__jstr(p->device_kind));
    json_object_set_new(o, "devices", json_integer(p->devices));
    json_object_set_new(o, "device_memory_bytes",
                        p->device_mem_bytes > 0
                            ? json_integer((json_int_t)p->device_mem_bytes)
                            : json_null());
    json_object_set_new(o, "api_version", json_string(api));
    json_object_set_new(o, "xla_version",
                        p->xla_version[0] ? sb__jstr(p->xla_version)
                                          : json_null());
    json_object_set_new(o, "stablehlo_version",
                        p->stablehlo_version[0] ? sb__jstr(p->stablehlo_version)
                                                : json_null());
    json_object_set_new(o, "plugin", sb__jstr(p->plugin));
    return o;
}

static json_t *sb__cache_json(const sb_sysinfo *si, int l)
{
    return json_pack("{s:I, s:i, s:i}", "bytes", (json_int_t)si->cache_bytes[l],
                     "instances", si->cache_instances[l], "shared_by_cores",
                     si->cache_shared_by[l]);
}

json_t *sb_sysinfo_json(const sb_sysinfo *si)
{
    json_t *doc = json_object();
    if (!doc)
        return NULL;

    char canon[1024], fp[17];
    sb_sysinfo_canonical(si, canon, sizeof canon);
    sb_hash_hex(canon, fp);
    json_object_set_new(doc, "fingerprint", json_string(fp));
    json_object_set_new(doc, "fingerprint_of", sb__jstr(canon));

    json_object_set_new(doc, "solbench",
                        json_pack("{s:s, s:s}", "version", sb_version(),
                                  "git_commit", sb_git_commit()));

    json_t *cpu = json_object();
    json_object_set_new(cpu, "model", sb__jstr(si->cpu_model));
    json_object_set_new(cpu, "vendor", sb__jstr(si->vendor));
    json_object_set_new(cpu, "family", json_integer(si->cpu_family));
    json_object_set_new(cpu, "model_id", json_integer(si->cpu_model_id));
    json_object_set_new(cpu, "stepping", json_integer(si->cpu_stepping));
    json_object_set_new(cpu, "arch", sb__jstr(si->arch));
    json_object_set_new(cpu, "hypervisor",
                        si->hypervisor[0] ? sb__jstr(si->hypervisor)
                                          : json_null());
    json_object_set_new(doc, "cpu", cpu);

    json_object_set_new(doc, "topology",
                        json_pack("{s:i, s:i, s:i, s:i, s:i}", "sockets",
                                  si->sockets, "cores", si->cores, "threads",
                                  si->threads, "threads_per_core",
                                  si->cores > 0 ? si->threads / si->cores : 1,
                                  "numa_nodes", si->numa_nodes));

    json_t *caches = json_object();
    static const char *const cname[5] = {"", "L1d", "L2", "L3", "L4"};
    for (int l = 1; l < 5; l++)
        if (si->cache_bytes[l] > 0)
            json_object_set_new(caches, cname[l], sb__cache_json(si, l));
    json_object_set_new(doc, "caches", caches);

    json_t *mem = json_object();
    json_object_set_new(mem, "bytes", json_integer((json_int_t)si->mem_bytes));
    json_object_set_new(mem, "gib",
                        json_real(round(si->mem_bytes / SB__GIB * 100) / 100));
    json_object_set_new(mem, "numa_bytes",
                        si->numa_mem_bytes > 0
                            ? json_integer((json_int_t)si->numa_mem_bytes)
                            : json_null());
    json_object_set_new(doc, "memory", mem);

    json_t *isa = json_object();
    for (size_t i = 0; i < SB__NISA; i++)
        json_object_set_new(isa, sb__isa_names[i].key,
                            json_boolean(sb__isa_has(&si->isa, i)));
    json_object_set_new(isa, "usable", sb__isa_list(&si->isa));
    json_object_set_new(isa, "cpu", sb__isa_list(&si->isa_cpu));
    char xcr0[24];
    snprintf(xcr0, sizeof xcr0, "0x%llx", (unsigned long long)si->xcr0);
    json_object_set_new(isa, "xcr0", json_string(xcr0));
    json_object_set_new(doc, "isa", isa);

    json_t *clock = json_object();
    const sb_core_clock *ck = &si->clock;
    json_object_set_new(clock, "ghz_measured",
                        si->ghz_measured > 0
                            ? json_real(round(si->ghz_measured * 1000) / 1000)
                            : json_null());
    json_object_set_new(clock, "method",
                        json_string(ck->methods ? ck->method : "not measured"));
    json_object_set_new(clock, "uncertain", json_boolean(ck->uncertain));
    json_object_set_new(clock, "spread",
                        ck->methods >= 2
                            ? json_real(round(ck->spread * 1e4) / 1e4)
                            : json_null());
    json_t *methods = json_object();
    const double figs[3] = {ck->ghz_add, ck->ghz_mul, ck->ghz_perf};
    static const char *const fig_names[3] = {"add_chain", "mul_chain",
                                             "cycle_counter"};
    for (int i = 0; i < 3; i++)
        json_object_set_new(methods, fig_names[i],
                            figs[i] > 0
                                ? json_real(round(figs[i] * 1000) / 1000)
                                : json_null());
    json_object_set_new(methods, "mul_latency_cycles",
                        ck->mul_latency > 0 ? json_integer(ck->mul_latency)
                                            : json_null());
    json_object_set_new(clock, "methods", methods);
    char khz[32];
    json_object_set_new(
        clock, "ghz_max_reported",
        sb__read_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
                      khz, sizeof khz)
            ? json_real(atof(khz) / 1e6)
            : json_null());
    json_object_set_new(
        clock, "governor",
        sb__sysfs_choice(
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"));
    json_object_set_new(doc, "clock", clock);

    json_t *os = json_object();
    json_object_set_new(os, "name", sb__jstr(si->os));
    json_object_set_new(os, "kernel", sb__jstr(si->kernel));
    json_object_set_new(os, "arch", sb__jstr(si->arch));
    json_object_set_new(os, "hostname", sb__jstr(si->hostname));
    json_object_set_new(
        os, "transparent_hugepages",
        sb__sysfs_choice("/sys/kernel/mm/transparent_hugepage/enabled"));
    json_object_set_new(doc, "os", os);

    json_t *build = json_object();
    json_object_set_new(build, "compiler", sb__jstr(si->compiler));
    json_object_set_new(build, "cflags", sb__jstr(si->cflags));
    json_object_set_new(build, "target_isa", sb__target_isa());
#ifdef _OPENMP
    json_object_set_new(build, "openmp", json_integer(_OPENMP));
#endif
    json_object_set_new(doc, "build", build);

    json_t *libs = json_object();
    json_object_set_new(libs, "openblas",
                        json_pack("{s:o, s:s, s:s, s:i}", "version",
                                  sb__openblas_version(si->openblas_config),
                                  "core", si->openblas_core, "config",
                                  si->openblas_config, "threads",
                                  si->openblas_threads));
    json_object_set_new(libs, "hwloc", json_string(si->hwloc_version));
    json_object_set_new(libs, "jansson", json_string(si->jansson_version));
    json_object_set_new(libs, "sqlite", json_string(si->sqlite_version));
#ifdef __GLIBC__
    json_object_set_new(libs, "glibc", json_string(gnu_get_libc_version()));
#endif
    json_object_set_new(libs, "mpi",
                        si->mpi_version[0] ? sb__jstr(si->mpi_version)
                                           : json_null());
    json_object_set_new(doc, "libraries", libs);

    for (const sb_backend *const *b = sb_backends(); *b; b++) {
        json_t *devices = (*b)->devices_json ? (*b)->devices_json() : NULL;
        if (devices) {
            json_object_set_new(doc, "devices", devices);
            break;
        }
    }
    if (si->has_pjrt)
        json_object_set_new(doc, "pjrt", pjrt_json(&si->pjrt));

    json_t *env = sb__env_json();
    json_object_set_new(doc, "notes", sb__notes(si, env));
    json_object_set_new(doc, "env", env);
    return doc;
}

/* ---- the human summary --------------------------------------------------- */

static const char *sb__s(const json_t *o, const char *group, const char *key)
{
    const json_t *g = group ? json_object_get(o, group) : o;
    const char *v = json_string_value(json_object_get(g, key));
    return v ? v : "?";
}

static double sb__n(const json_t *o, const char *group, const char *key)
{
    return json_number_value(json_object_get(json_object_get(o, group), key));
}

static void sb__size(char *out, size_t cap, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    if (bytes == floor(bytes))
        snprintf(out, cap, "%.0f %s", bytes, unit[u]);
    else
        snprintf(out, cap, "%.1f %s", bytes, unit[u]);
}

void sb_sysinfo_print(FILE *f, const json_t *doc)
{
    if (!json_is_object(doc)) {
        fprintf(f, "(no machine fingerprint)\n");
        return;
    }
    const json_t *cpu = json_object_get(doc, "cpu");
    fprintf(f, "Fingerprint  %s   (solbench %s, commit %s)\n",
            sb__s(doc, NULL, "fingerprint"), sb__s(doc, "solbench", "version"),
            sb__s(doc, "solbench", "git_commit"));
    fprintf(f, "CPU          %s (%s family %.0f model %.0f stepping %.0f, %s)",
            sb__s(doc, "cpu", "model"), sb__s(doc, "cpu", "vendor"),
            sb__n(doc, "cpu", "family"), sb__n(doc, "cpu", "model_id"),
            sb__n(doc, "cpu", "stepping"), sb__s(doc, "cpu", "arch"));
    if (json_is_string(json_object_get(cpu, "hypervisor")))
        fprintf(f, ", %s guest", sb__s(doc, "cpu", "hypervisor"));
    fputc('\n', f);

    int sockets = (int)sb__n(doc, "topology", "sockets");
    int cores = (int)sb__n(doc, "topology", "cores");
    int threads = (int)sb__n(doc, "topology", "threads");
    int numa = (int)sb__n(doc, "topology", "numa_nodes");
    fprintf(
        f, "Topology     %d socket%s, %d core%s, %d thread%s, %d NUMA node%s\n",
        sockets, sockets == 1 ? "" : "s", cores, cores == 1 ? "" : "s", threads,
        threads == 1 ? "" : "s", numa, numa == 1 ? "" : "s");

    fprintf(f, "Caches      ");
    const char *key;
    json_t *c;
    int ncaches = 0;
    json_object_foreach((json_t *)json_object_get(doc, "caches"), key, c)
    {
        char sz[32];
        sb__size(sz, sizeof sz, json_number_value(json_object_get(c, "bytes")));
        int shared =
            (int)json_integer_value(json_object_get(c, "shared_by_cores"));
        fprintf(f, "%s %s %s x%d (%d core%s each)", ncaches ? "," : "", key, sz,
                (int)json_integer_value(json_object_get(c, "instances")),
                shared, shared == 1 ? "" : "s");
        ncaches++;
    }
    fprintf(f, "%s\n", ncaches ? "" : " unknown");

    char mem[32];
    sb__size(mem, sizeof mem, sb__n(doc, "memory", "bytes"));
    fprintf(f, "Memory       %s\n", mem);

    fprintf(f, "ISA         ");
    const json_t *usable =
        json_object_get(json_object_get(doc, "isa"), "usable");
    size_t i;
    json_t *v;
    json_array_foreach(usable, i, v)
    {
        const char *name = json_string_value(v);
        const char *label = name;
        for (size_t k = 0; k < SB__NISA; k++)
            if (name && strcmp(name, sb__isa_names[k].key) == 0)
                label = sb__isa_names[k].label;
        fprintf(f, " %s", label ? label : "?");
    }
    fprintf(f, "%s\n",
            json_array_size(usable) ? "" : " (none of those tracked)");

    double ghz = sb__n(doc, "clock", "ghz_measured");
    const json_t *clk = json_object_get(doc, "clock");
    if (ghz > 0)
        fprintf(f, "Clock        %.2f GHz measured (%s)\n", ghz,
                sb__s(clk, NULL, "method"));
    else if (json_is_true(json_object_get(clk, "uncertain")))
        fprintf(f,
                "Clock        uncertain: add chain %.2f GHz, multiply "
                "chain %.2f, cycle counter %.2f (0 = not available) "
                "disagree by %.0f %%; no theoretical peak is given\n",
                sb__n(clk, "methods", "add_chain"),
                sb__n(clk, "methods", "mul_chain"),
                sb__n(clk, "methods", "cycle_counter"),
                100 * json_number_value(json_object_get(clk, "spread")));
    else
        fprintf(f, "Clock        not measured\n");

    fprintf(f, "OS           %s, kernel %s, host %s, THP %s\n",
            sb__s(doc, "os", "name"), sb__s(doc, "os", "kernel"),
            sb__s(doc, "os", "hostname"),
            sb__s(doc, "os", "transparent_hugepages"));
    fprintf(f, "Build        %s; %s; target", sb__s(doc, "build", "compiler"),
            sb__s(doc, "build", "cflags"));
    const json_t *target =
        json_object_get(json_object_get(doc, "build"), "target_isa");
    json_array_foreach(target, i, v)
        fprintf(f, " %s", json_string_value(v) ? json_string_value(v) : "?");
    fprintf(f, "%s\n", json_array_size(target) ? "" : " baseline");

    const json_t *libs = json_object_get(doc, "libraries");
    const json_t *ob = json_object_get(libs, "openblas");
    fprintf(f,
            "Libraries    OpenBLAS %s (core %s, %d threads), hwloc %s, "
            "jansson %s, sqlite %s",
            sb__s(ob, NULL, "version"), sb__s(ob, NULL, "core"),
            (int)json_integer_value(json_object_get(ob, "threads")),
            sb__s(libs, NULL, "hwloc"), sb__s(libs, NULL, "jansson"),
            sb__s(libs, NULL, "sqlite"));
    if (json_is_string(json_object_get(libs, "mpi")))
        fprintf(f, ", %s", sb__s(libs, NULL, "mpi"));
    fputc('\n', f);

    const json_t *pj = json_object_get(doc, "pjrt");
    if (json_is_object(pj) && json_object_get(pj, "error"))
        fprintf(f, "PJRT         none: %s\n", sb__s(pj, NULL, "error"));
    else if (json_is_object(pj)) {
        const json_t *dmem = json_object_get(pj, "device_memory_bytes");
        char mbuf[40] = "memory unknown";
        if (json_is_integer(dmem)) {
            sb__size(mbuf, sizeof mbuf, (double)json_integer_value(dmem));
            strncat(mbuf, " each", sizeof mbuf - strlen(mbuf) - 1);
        }
        fprintf(f,
                "PJRT         %s %s x%d (%s), %s; API %s, XLA %s; plugin "
                "%s\n",
                sb__s(pj, NULL, "platform"), sb__s(pj, NULL, "device_kind"),
                (int)json_integer_value(json_object_get(pj, "devices")), mbuf,
                sb__s(pj, NULL, "platform_version"),
                sb__s(pj, NULL, "api_version"), sb__s(pj, NULL, "xla_version"),
                sb__s(pj, NULL, "plugin"));
    }

    fprintf(f, "Environment ");
    int nenv = 0;
    json_object_foreach((json_t *)json_object_get(doc, "env"), key, v)
    {
        fprintf(f, "%s %s=%s", nenv ? "," : "", key,
                json_string_value(v) ? json_string_value(v) : "");
        nenv++;
    }
    fprintf(f, "%s\n", nenv ? "" : " (no performance variables set)");

    json_array_foreach(json_object_get(doc, "notes"), i, v)
        fprintf(f, "Note         %s\n",
                json_string_value(v) ? json_string_value(v) : "");
}
