/*
 * util.c — aligned allocation, thread count and binding, machine size.
 *
 * Threads are bound one per physical core through hwloc from inside an
 * OpenMP parallel region: libgomp keeps the same worker threads for later
 * regions of the same size, so the binding holds for the kernels (and for
 * OpenBLAS's OpenMP build, which shares the pool).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hwloc.h>
#include <omp.h>

#include <cblas.h>

#include "solbench/error.h"
#include "solbench/param.h"
#include "solbench/util.h"

#define SB_HUGE_THRESHOLD (64ull << 20)
#define SB_HUGE_ALIGN (2ull << 20)

void *sb_alloc_aligned(size_t bytes)
{
    size_t align = bytes >= SB_HUGE_THRESHOLD ? SB_HUGE_ALIGN : 4096;
    size_t size = (bytes + align - 1) / align * align;
    if (size == 0)
        size = align;
    void *p = NULL;
    if (posix_memalign(&p, align, size) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (bytes >= SB_HUGE_THRESHOLD)
        madvise(p, size, MADV_HUGEPAGE); /* advice only: failure is fine */
#endif
    return p;
}

void sb_free_aligned(void *p)
{
    free(p);
}

/* The topology is loaded once and never changes while the process runs. */
hwloc_topology_t sb_topology(void)
{
    static hwloc_topology_t topo;
    static int loaded;
    if (!loaded) {
        loaded = 1;
        /* Only CPUs, caches and memory: no PCI or OS devices (whose
         * plugins may initialise GPU drivers, slowly). */
        if (hwloc_topology_init(&topo) != 0)
            topo = NULL;
        else if (hwloc_topology_set_io_types_filter(
                     topo, HWLOC_TYPE_FILTER_KEEP_NONE) ||
                 hwloc_topology_load(topo) != 0) {
            hwloc_topology_destroy(topo);
            topo = NULL;
        }
    }
    return topo;
}

int sb_cores(void)
{
    hwloc_topology_t t = sb_topology();
    int n = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) : 0;
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    return n;
}

double sb_phys_mem(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0)
        return (double)pages * (double)psize;
    return 0.0;
}

double sb_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    double kb = 0;
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
                break;
        fclose(f);
    }
    return kb > 0 ? kb * 1024.0 : sb_phys_mem();
}

int sb_mem_fits(double need, double have, const char *what, sb_err *err)
{
    if (!(have > 0) || !(need > SB_MEM_SHARE * have))
        return 0;
    char a[32], m[32];
    sb_fmt_size(need, a, sizeof a);
    sb_fmt_size(have, m, sizeof m);
    return sb_fail(err, SB_EINVAL,
                   "%s: needs %s of memory, more than %.0f%% of the %s "
                   "available now (--force runs it anyway)",
                   what, a, 100 * SB_MEM_SHARE, m);
}

/* The caches of the first core as hwloc's topology has them (the one the
 * fingerprint and the thread binding use): per level, the data or unified
 * cache's size and the logical CPUs that share one instance. */
void sb_mem_caches_read(sb_mem_caches *mc)
{
    memset(mc, 0, sizeof *mc);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    mc->cpus = cpus > 0 ? (int)cpus : 1;
    mc->smt = 1;
    hwloc_topology_t t = sb_topology();
    if (!t)
        return;
    hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, 0);
    if (core && core->cpuset) {
        int w = hwloc_bitmap_weight(core->cpuset);
        if (w > 0)
            mc->smt = w;
    }
    static const hwloc_obj_type_t levels[5] = {
        HWLOC_OBJ_TYPE_MAX, HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,
        HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE};
    for (int l = 1; l <= 4; l++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(t, levels[l], 0);
        if (!c || !c->attr || c->attr->cache.size == 0 ||
            c->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION)
            continue;
        mc->size[l] = (double)c->attr->cache.size;
        /* the CPUs that share it, offline and disallowed ones included,
         * as the kernel counts them */
        const struct hwloc_bitmap_s *cs =
            c->complete_cpuset ? c->complete_cpuset : c->cpuset;
        int w = cs ? hwloc_bitmap_weight(cs) : 1;
        mc->shared_cpus[l] = w > 0 ? w : 1;
        mc->nlevels = l;
    }
}

double sb_mem_cache_for_threads(const sb_mem_caches *mc, int level, int threads)
{
    if (level < 1 || level > 4 || mc->size[level] <= 0)
        return 0;
    int cores_per = mc->shared_cpus[level] / (mc->smt > 0 ? mc->smt : 1);
    if (cores_per < 1)
        cores_per = 1;
    int instances =
        (mc->cpus + mc->shared_cpus[level] - 1) / mc->shared_cpus[level];
    int used = (threads + cores_per - 1) / cores_per;
    if (used > instances)
        used = instances;
    if (used < 1)
        used = 1;
    return mc->size[level] * used;
}

double sb_mem_llc_total(const sb_mem_caches *mc)
{
    int l = mc->nlevels;
    if (l < 1)
        return 0;
    int instances = (mc->cpus + mc->shared_cpus[l] - 1) / mc->shared_cpus[l];
    return mc->size[l] * (instances > 0 ? instances : 1);
}

double sb_llc_bytes(void)
{
    hwloc_topology_t t = sb_topology();
    if (!t)
        return 0;
    const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE};
    for (int l = 0; l < 2; l++) {
        double total = 0;
        for (hwloc_obj_t o = hwloc_get_next_obj_by_type(t, levels[l], NULL); o;
             o = hwloc_get_next_obj_by_type(t, levels[l], o))
            total += (double)o->attr->cache.size;
        if (total > 0)
            return total;
    }
    return 0;
}

int sb_numa_nodes(void)
{
    hwloc_topology_t t = sb_topology();
    int n = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE) : 0;
    return n > 0 ? n : 0;
}

/* What MPI launchers put in a rank's environment: its rank (Open MPI,
 * PMIx — Open MPI 4+ and Slurm —, PMI-1/2 — MPICH's hydra, Slurm), and
 * other marks of a launch (MPICH's and Intel MPI's own). */
static const char *const sb__rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                            "PMI_RANK", NULL};
static const char *const sb__launch_vars[] = {"OMPI_COMM_WORLD_SIZE",
                                              "PMI_SIZE", "MPI_LOCALNRANKS",
                                              "HYDI_CONTROL_FD", NULL};

long sb_launcher_rank(void)
{
    for (int i = 0; sb__rank_vars[i]; i++) {
        const char *v = getenv(sb__rank_vars[i]);
        char *end;
        long r = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && r >= 0)
            return r;
    }
    return -1;
}

bool sb_launcher_present(void)
{
    if (sb_launcher_rank() >= 0)
        return true;
    for (int i = 0; sb__launch_vars[i]; i++)
        if (getenv(sb__launch_vars[i]))
            return true;
    return false;
}

bool sb_numa_node_exists(int os_index)
{
    hwloc_topology_t t = sb_topology();
    return os_index >= 0 && t &&
           hwloc_get_numanode_obj_by_os_index(t, (unsigned)os_index) != NULL;
}

int sb_threads_setup(int threads)
{
    if (threads < 1)
        threads = 1;
    omp_set_dynamic(0);
    omp_set_num_threads(threads);
    hwloc_topology_t t = sb_topology();
    int ncores = t ? hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) : 0;
    if (ncores <= 0 || getenv("SOLBENCH_NO_BIND"))
        return threads;
#pragma omp parallel num_threads(threads)
    {
        int tid = omp_get_thread_num();
        hwloc_obj_t core =
            hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, tid % ncores);
        if (core && core->cpuset)
            hwloc_set_cpubind(t, core->cpuset, HWLOC_CPUBIND_THREAD);
    }
    return threads;
}

/* A weak reference: NULL where this OpenBLAS build lacks the symbol,
 * instead of a failed link. */
#pragma weak cblas_sbgemm
int sb_dpush(double **v, size_t *n, size_t *cap, double x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        double *g = realloc(*v, c * sizeof *g);
        if (!g)
            return SB_ENOMEM;
        *v = g;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

float sb_e4m3_to_f32(uint8_t x)
{
    int sign = x >> 7, e = (x >> 3) & 0xf, m = x & 7;
    double v;
    if (e == 15 && m == 7)
        return NAN;
    if (e == 0)
        v = ldexp((double)m, -9); /* subnormal: m/8 2^-6 */
    else
        v = ldexp(1.0 + m / 8.0, e - 7);
    return (float)(sign ? -v : v);
}

uint8_t sb_e4m3_from_f32(float f)
{
    uint8_t sign = signbit(f) ? 0x80 : 0;
    if (isnan(f))
        return (uint8_t)(sign | 0x7f);
    double a = fabs((double)f);
    if (a >= 448.0)
        return (uint8_t)(sign | 0x7e);
    if (a < ldexp(1.0, -6)) {
        /* subnormal: m/8 2^-6, m = a / 2^-9 to nearest even; m = 8 is
         * the smallest normal, code 0x08, which the same sum gives */
        double m = nearbyint(ldexp(a, 9));
        return (uint8_t)(sign | (uint8_t)m);
    }
    int e;
    frexp(a, &e); /* a = f 2^e, f in [0.5, 1): the exponent is e - 1 */
    e -= 1;
    double q = nearbyint(ldexp(a, 3 - e)); /* 1.mmm x 8, in [8, 16] */
    if (q >= 16.0) {
        q = 8.0;
        e++;
    }
    if (e > 8 || (e == 8 && q > 14.0)) /* past 448 after rounding */
        return (uint8_t)(sign | 0x7e);
    return (uint8_t)(sign | (uint8_t)((e + 7) << 3) | (uint8_t)(q - 8.0));
}

bool sb_blas_have_sbgemm(void)
{
    return cblas_sbgemm != NULL;
}

const char *sb_fmt_eng(double v, char *buf, size_t len)
{
    const char *u[] = {"", "K", "M", "G", "T", "P", "E"};
    int i = 0;
    while (fabs(v) >= 1000 && i < 6) {
        v /= 1000;
        i++;
    }
    snprintf(buf, len, "%.3g%s", v, u[i]);
    return buf;
}

const char *sb_fmt_time(double s, const char *us, char *buf, size_t len)
{
    if (s <= 0)
        snprintf(buf, len, "0");
    else if (s < 1e-3)
        snprintf(buf, len, "%.1f %s", s * 1e6, us);
    else if (s < 1)
        snprintf(buf, len, "%.2f ms", s * 1e3);
    else
        snprintf(buf, len, "%.3f s", s);
    return buf;
}

void sb_xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        switch (ch) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            fputc(ch < 0x20 && ch != '\t' ? ' ' : ch, f);
        }
    }
}
