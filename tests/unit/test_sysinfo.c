/*
 * test_sysinfo.c — the machine fingerprint against independent sources:
 * ISA flags against the kernel's /proc/cpuinfo, cores and caches against
 * /proc/cpuinfo and sysfs, memory against /proc/meminfo; the OS-support
 * gate on synthetic cpuid registers; FNV-1a on published vectors; and the
 * fingerprint's stability and what it does and does not depend on.
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "core/cpuid.h"
#include "solbench/sysinfo.h"

#define GIB 1073741824.0

/* ---- independent readers ------------------------------------------------- */

/* The "flags" line of the first processor, with a space at both ends so a
 * flag is found as " name ". Empty when not on Linux/x86. */
static void cpuinfo_flags(char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char *line = NULL;
    size_t n = 0;
    while (getline(&line, &n, f) > 0) {
        if (strncmp(line, "flags", 5) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(out, cap, "%s ", colon + 1);
            }
            break;
        }
    }
    free(line);
    fclose(f);
}

static bool has_flag(const char *flags, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s ", name);
    return strstr(flags, pat) != NULL;
}

/* Physical cores among the CPUs this process may run on: distinct
 * (physical id, core id) pairs of /proc/cpuinfo. -1 when unknown. */
static int cpuinfo_cores(const cpu_set_t *allowed)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    enum { MAXC = 4096 };
    static long pairs[MAXC];
    int npairs = 0, proc = -1, phys = 0;
    bool saw_core = false;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        long v = strtol(colon + 1, NULL, 10);
        if (strncmp(line, "processor", 9) == 0) {
            proc = (int)v;
            phys = 0;
        } else if (strncmp(line, "physical id", 11) == 0) {
            phys = (int)v;
        } else if (strncmp(line, "core id", 7) == 0) {
            saw_core = true;
            if (proc < 0 || proc >= CPU_SETSIZE || !CPU_ISSET(proc, allowed))
                continue;
            long key = (long)phys * 1000000 + v;
            bool seen = false;
            for (int i = 0; i < npairs; i++)
                seen |= pairs[i] == key;
            if (!seen && npairs < MAXC)
                pairs[npairs++] = key;
        }
    }
    fclose(f);
    return saw_core ? npairs : -1;
}

/* Size in bytes of the cache of this level and kind seen by cpu, from
 * sysfs ("32K", "1024K", "32M"); 0 when absent. */
static double sysfs_cache(int cpu, int level, bool data)
{
    for (int idx = 0; idx < 16; idx++) {
        char path[160], buf[64];
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
        FILE *f = fopen(path, "r");
        if (!f)
            return 0;
        int lv = 0;
        if (fscanf(f, "%d", &lv) != 1)
            lv = 0;
        fclose(f);
        if (lv != level)
            continue;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, idx);
        f = fopen(path, "r");
        if (!f || !fgets(buf, sizeof buf, f)) {
            if (f)
                fclose(f);
            continue;
        }
        fclose(f);
        if (data && strncmp(buf, "Instruction", 11) == 0)
            continue;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
        f = fopen(path, "r");
        if (!f)
            continue;
        double size = 0;
        char unit = 0;
        if (fscanf(f, "%lf%c", &size, &unit) < 1)
            size = 0;
        fclose(f);
        if (unit == 'K')
            size *= 1024;
        else if (unit == 'M')
            size *= 1024 * 1024;
        else if (unit == 'G')
            size *= 1024.0 * 1024 * 1024;
        return size;
    }
    return 0;
}

static double meminfo_total(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    double kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %lf kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024.0;
}

/* ---- tests --------------------------------------------------------------- */

static void test_fnv(void)
{
    char h[17];
    sb_hash_hex("", h);
    CHECK(strcmp(h, "cbf29ce484222325") == 0);
    sb_hash_hex("a", h);
    CHECK(strcmp(h, "af63dc4c8601ec8c") == 0);
    sb_hash_hex("foobar", h);
    CHECK(strcmp(h, "85944171f73967e8") == 0);
}

/* A CPU with everything, under three OS configurations. */
static void test_os_gate(void)
{
    sb_cpuid_regs r = {0};
    r.l1_ecx = (1u << 20) | (1u << 28) | (1u << 12) | (1u << 27); /* +OSXSAVE */
    r.l7_ebx = (1u << 5) | (1u << 16) | (1u << 30) | (1u << 31);
    r.l7_edx = (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25);
    r.l7s1_eax = 1u << 5;
    sb_isa cpu, use;

    /* OS saves only x87/SSE/AVX state: AVX2 yes, AVX-512 and AMX no. */
    sb_isa_from_regs(&r, 0x7, &cpu, &use);
    CHECK(cpu.avx512f && cpu.avx512_bf16 && cpu.amx_tile && cpu.amx_int8);
    CHECK(use.sse42 && use.avx && use.avx2 && use.fma);
    CHECK(!use.avx512f && !use.avx512bw && !use.avx512vl);
    CHECK(!use.avx512_bf16 && !use.avx512_fp16);
    CHECK(!use.amx_tile && !use.amx_bf16 && !use.amx_int8);

    /* Full AVX-512 state, no AMX tile state. */
    sb_isa_from_regs(&r, 0xe7, NULL, &use);
    CHECK(use.avx512f && use.avx512bw && use.avx512vl && use.avx512_bf16 &&
          use.avx512_fp16);
    CHECK(!use.amx_tile && !use.amx_bf16);

    /* Everything enabled. */
    sb_isa_from_regs(&r, 0x600e7, NULL, &use);
    CHECK(use.amx_tile && use.amx_bf16 && use.amx_int8 && use.avx512f);

    /* Only part of the ZMM state (no Hi16_ZMM): AVX-512 must stay off. */
    sb_isa_from_regs(&r, 0x67, NULL, &use);
    CHECK(!use.avx512f && use.avx2);

    /* OSXSAVE clear: XCR0 cannot be trusted, no AVX at all, SSE4.2 stays. */
    r.l1_ecx &= ~(1u << 27);
    sb_isa_from_regs(&r, 0x600e7, NULL, &use);
    CHECK(!use.avx && !use.avx2 && !use.fma && !use.avx512f && !use.amx_tile);
    CHECK(use.sse42);
}

static void test_isa_vs_cpuinfo(const sb_sysinfo *si)
{
    char flags[8192];
    cpuinfo_flags(flags, sizeof flags);
    if (!flags[0]) {
        printf("no /proc/cpuinfo flags: ISA cross-check skipped\n");
        return;
    }
    sb_isa isa;
    sb_isa_detect(&isa);
    CHECK(memcmp(&isa, &si->isa, sizeof isa) == 0);
    /* The kernel lists a flag only when the CPU has it and the kernel
     * enables it: the same definition as ours. */
    CHECK(isa.sse42 == has_flag(flags, "sse4_2"));
    CHECK(isa.avx == has_flag(flags, "avx"));
    CHECK(isa.avx2 == has_flag(flags, "avx2"));
    CHECK(isa.fma == has_flag(flags, "fma"));
    CHECK(isa.avx512f == has_flag(flags, "avx512f"));
    /* Older kernels may not know the newest flag names: one direction. */
    if (has_flag(flags, "avx512bw"))
        CHECK(isa.avx512bw);
    if (has_flag(flags, "avx512vl"))
        CHECK(isa.avx512vl);
    if (has_flag(flags, "avx512_bf16"))
        CHECK(isa.avx512_bf16);
    if (has_flag(flags, "avx512_fp16"))
        CHECK(isa.avx512_fp16);
    if (has_flag(flags, "amx_tile"))
        CHECK(isa.amx_tile);
    if (has_flag(flags, "amx_bf16"))
        CHECK(isa.amx_bf16);
    if (has_flag(flags, "amx_int8"))
        CHECK(isa.amx_int8);
    if (isa.avx512bw || isa.avx512vl || isa.avx512_bf16)
        CHECK(isa.avx512f);
    if (isa.avx2)
        CHECK(isa.avx);
    printf("ISA: sse4_2=%d avx=%d avx2=%d fma=%d avx512f=%d amx_tile=%d\n",
           isa.sse42, isa.avx, isa.avx2, isa.fma, isa.avx512f, isa.amx_tile);
}

static void test_topology(const sb_sysinfo *si)
{
    /* hwloc describes the CPUs the cgroup allows, not this process's
     * affinity mask (taskset): widening the mask to every CPU gives the
     * kernel's intersection with the cgroup, the same set. */
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &allowed);
    sched_setaffinity(0, sizeof allowed, &allowed);
    CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    int nallowed = CPU_COUNT(&allowed);
    int cores = cpuinfo_cores(&allowed);
    printf("topology: sockets=%d cores=%d threads=%d numa=%d; cpuinfo cores=%d,"
           " allowed cpus=%d\n",
           si->sockets, si->cores, si->threads, si->numa_nodes, cores,
           nallowed);
    if (cores > 0)
        CHECK(si->cores == cores);
    CHECK(si->threads == nallowed);
    CHECK(si->sockets >= 1 && si->sockets <= si->cores);
    CHECK(si->cores >= 1 && si->cores <= si->threads);
    CHECK(si->numa_nodes >= 1);

    int cpu0 = 0;
    while (cpu0 < CPU_SETSIZE && !CPU_ISSET(cpu0, &allowed))
        cpu0++;
    for (int l = 1; l <= 3; l++) {
        double want = sysfs_cache(cpu0, l, l == 1);
        printf("L%d: hwloc %.0f B x%d shared by %d, sysfs %.0f B\n", l,
               si->cache_bytes[l], si->cache_instances[l],
               si->cache_shared_by[l], want);
        if (want > 0) {
            CHECK_NEAR(si->cache_bytes[l], want, 1e-9);
            CHECK(si->cache_shared_by[l] >= 1 &&
                  si->cache_shared_by[l] <= si->cores);
            CHECK(si->cache_instances[l] >= 1);
        }
    }
    if (si->cache_bytes[1] > 0 && si->cache_bytes[2] > 0)
        CHECK(si->cache_bytes[2] > si->cache_bytes[1]);

    double mt = meminfo_total();
    if (mt > 0)
        CHECK_NEAR(si->mem_bytes, mt, 0.01);
    CHECK(si->mem_bytes > 64.0 * 1024 * 1024);
}

static void test_clock(const sb_sysinfo *si)
{
    const sb_core_clock *c = &si->clock;
    printf("measured clock: %.3f GHz (add %.3f, mul %.3f, perf %.3f; %s)\n",
           si->ghz_measured, c->ghz_add, c->ghz_mul, c->ghz_perf, c->method);
    CHECK(si->ghz_measured > 0.5 && si->ghz_measured < 7.0);
    CHECK(si->ghz_measured == c->ghz);
    CHECK(!c->uncertain && c->spread <= SB_CLOCK_AGREE);
#if defined(__x86_64__)
    /* Every x86 core has both chains: two methods at least, agreeing. */
    CHECK(c->methods >= 2 && c->mul_latency == 3);
    CHECK(c->ghz_add > 0 && c->ghz_mul > 0);
    CHECK(fabs(c->ghz_add / c->ghz_mul - 1) <= SB_CLOCK_AGREE);
#endif
    double again = sb_measure_ghz();
    CHECK(again > 0.5 && again < 7.0);
}

/* The decision on given figures: agreeing methods give their mean, a
 * disagreeing pair gives no clock, one method is taken unconfirmed. */
static void test_clock_decide(void)
{
    sb_core_clock c;
    sb_core_clock_from_methods(&c, 3.0, 3.03, 0);
    CHECK(!c.uncertain && c.methods == 2);
    CHECK_NEAR(c.ghz, 3.015, 1e-12);
    CHECK_NEAR(c.spread, 0.01, 1e-9);
    /* An immediate-add chain folded at rename read 15.9 GHz on an
     * Emerald Rapids guest; the multiply chain says 3.0. */
    sb_core_clock_from_methods(&c, 15.9, 3.0, 0);
    CHECK(c.uncertain && c.ghz == 0.0 && strstr(c.method, "disagreeing"));
    sb_core_clock_from_methods(&c, 3.0, 3.0, 3.3);
    CHECK(c.uncertain && c.ghz == 0.0 && c.methods == 3);
    sb_core_clock_from_methods(&c, 3.0, 3.05, 2.98);
    CHECK(!c.uncertain && c.methods == 3 && c.ghz > 2.98 && c.ghz < 3.05);
    sb_core_clock_from_methods(&c, 2.5, 0, 0);
    CHECK(!c.uncertain && c.methods == 1 && c.ghz == 2.5 &&
          strstr(c.method, "unconfirmed"));
    sb_core_clock_from_methods(&c, 0, 0, 0);
    CHECK(c.methods == 0 && c.ghz == 0.0 && !c.uncertain);

    /* An uncertain clock in the document: no figure, the flag, every
     * method's figure and a note. */
    sb_sysinfo si;
    sb_sysinfo_collect(&si, false);
    sb_core_clock_from_methods(&si.clock, 15.9, 3.0, 0);
    si.ghz_measured = si.clock.ghz;
    json_t *doc = sb_sysinfo_json(&si);
    json_t *clk = json_object_get(doc, "clock");
    CHECK(json_is_null(json_object_get(clk, "ghz_measured")));
    CHECK(json_is_true(json_object_get(clk, "uncertain")));
    CHECK_NEAR(json_number_value(json_object_get(
                   json_object_get(clk, "methods"), "add_chain")),
               15.9, 1e-9);
    CHECK(json_is_null(
        json_object_get(json_object_get(clk, "methods"), "cycle_counter")));
    bool noted = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(doc, "notes"), i, v) noted |=
        json_string_value(v) &&
        strstr(json_string_value(v), "clock is uncertain") != NULL;
    CHECK(noted);
    json_decref(doc);

    /* The multiply latencies the chain may use; others are unknown. */
    CHECK(sb_x86_mul_latency(true, false, 6, 0xcf, 0) == 3);    /* EMR */
    CHECK(sb_x86_mul_latency(true, false, 6, 0x55, 0) == 3);    /* SKX */
    CHECK(sb_x86_mul_latency(true, false, 6, 0x97, 0x40) == 3); /* ADL P */
    CHECK(sb_x86_mul_latency(true, false, 6, 0x97, 0x20) == 5); /* ADL E */
    CHECK(sb_x86_mul_latency(true, false, 6, 0xc6, 0x20) == 4); /* ARL E */
    CHECK(sb_x86_mul_latency(true, false, 6, 0xaf, 0) == 5);    /* SRF */
    CHECK(sb_x86_mul_latency(true, false, 6, 0xdd, 0) == 0);    /* CWF */
    CHECK(sb_x86_mul_latency(true, false, 19, 0x01, 0) == 0);
    CHECK(sb_x86_mul_latency(false, true, 0x19, 0x01, 0) == 3); /* Zen 3 */
    CHECK(sb_x86_mul_latency(false, true, 0x1a, 0x02, 0) == 3); /* Zen 5 */
    CHECK(sb_x86_mul_latency(false, true, 0x15, 0x01, 0) == 0);
    CHECK(sb_x86_mul_latency(false, false, 6, 0x55, 0) == 0);
    CHECK(sb_arm_mul_latency(0x41, 0xd0c) == 4); /* Neoverse N1 */
    CHECK(sb_arm_mul_latency(0x41, 0xd4f) == 2); /* Neoverse V2 */
    CHECK(sb_arm_mul_latency(0xc0, 0xac3) == 3); /* AmpereOne */
    CHECK(sb_arm_mul_latency(0x61, 0x022) == 0); /* not Arm's design */
    CHECK(sb_arm_mul_latency(0x41, 0x123) == 0);
}

static void test_fingerprint(const sb_sysinfo *measured)
{
    sb_sysinfo a, b;
    sb_sysinfo_collect(&a, false);
    sb_sysinfo_collect(&b, false);
    CHECK(a.ghz_measured == 0.0);
    json_t *ja = sb_sysinfo_json(&a), *jb = sb_sysinfo_json(&b);
    json_t *jm = sb_sysinfo_json(measured);
    CHECK(ja && jb && jm);
    const char *fa = json_string_value(json_object_get(ja, "fingerprint"));
    const char *fb = json_string_value(json_object_get(jb, "fingerprint"));
    const char *fm = json_string_value(json_object_get(jm, "fingerprint"));
    CHECK(fa && fb && fm && strlen(fa) == 16);
    /* Stable across collections, and the measured clock does not enter. */
    CHECK(fa && fb && strcmp(fa, fb) == 0);
    CHECK(fa && fm && strcmp(fa, fm) == 0);

    /* It is the hash of the canonical string it shows. */
    char canon[1024], h[17];
    int n = sb_sysinfo_canonical(&a, canon, sizeof canon);
    CHECK(n > 0 && n < (int)sizeof canon && (int)strlen(canon) == n);
    sb_hash_hex(canon, h);
    CHECK(fa && strcmp(h, fa) == 0);
    const char *of = json_string_value(json_object_get(ja, "fingerprint_of"));
    CHECK(of && strcmp(of, canon) == 0);
    CHECK(strstr(canon, a.cpu_model) != NULL);
    CHECK(strstr(canon, a.kernel) != NULL);

    /* Truncation behaves like snprintf. */
    char small[10];
    CHECK(sb_sysinfo_canonical(&a, small, sizeof small) == n);
    CHECK(strlen(small) == sizeof small - 1);
    CHECK(sb_sysinfo_canonical(&a, NULL, 0) == n);

    /* What moves from run to run does not change it ... */
    sb_sysinfo c = a;
    char hc[17];
    snprintf(c.hostname, sizeof c.hostname, "elsewhere");
    c.ghz_measured = 1.234;
    c.openblas_threads += 7;
    /* A tenth of a GiB above the whole GiB that a.mem_bytes rounds to. */
    c.mem_bytes = (floor(a.mem_bytes / GIB + 0.5) + 0.1) * GIB;
    snprintf(c.cflags, sizeof c.cflags, "-O0");
    sb_sysinfo_canonical(&c, canon, sizeof canon);
    sb_hash_hex(canon, hc);
    CHECK(strcmp(hc, h) == 0);
    /* ... what defines the machine does. */
    const int nvariants = 6;
    for (int k = 0; k < nvariants; k++) {
        c = a;
        switch (k) {
        case 0:
            c.cores += 1;
            break;
        case 1:
            c.cache_bytes[2] =
                c.cache_bytes[2] > 0 ? 2 * c.cache_bytes[2] : 1048576;
            break;
        case 2:
            c.isa.avx512f = !c.isa.avx512f;
            break;
        case 3:
            c.mem_bytes += 4.0 * 1024 * 1024 * 1024;
            break;
        case 4:
            snprintf(c.kernel, sizeof c.kernel, "0.0.1-other");
            break;
        case 5:
            c.numa_nodes += 1;
            break;
        }
        sb_sysinfo_canonical(&c, canon, sizeof canon);
        sb_hash_hex(canon, hc);
        CHECK(strcmp(hc, h) != 0);
    }
    json_decref(ja);
    json_decref(jb);
    json_decref(jm);
}

static void test_json(const sb_sysinfo *si)
{
    setenv("OMP_NUM_THREADS", "3", 1);
    setenv("OPENBLAS_VERBOSE", "0", 1);
    setenv("SB_TEST_NOT_PERF", "x", 1);
    json_t *doc = sb_sysinfo_json(si);
    CHECK(doc != NULL);
    static const char *const groups[] = {
        "cpu", "topology", "caches",    "memory", "isa",     "clock",
        "os",  "build",    "libraries", "env",    "solbench"};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        bool ok = json_is_object(json_object_get(doc, groups[i]));
        if (!ok)
            fprintf(stderr, "missing group %s\n", groups[i]);
        CHECK(ok);
    }
    json_t *env = json_object_get(doc, "env");
    CHECK(json_is_string(json_object_get(env, "OMP_NUM_THREADS")) &&
          strcmp(json_string_value(json_object_get(env, "OMP_NUM_THREADS")),
                 "3") == 0);
    CHECK(json_object_get(env, "OPENBLAS_VERBOSE") != NULL);
    CHECK(json_object_get(env, "SB_TEST_NOT_PERF") == NULL);
    CHECK(json_object_get(env, "PATH") == NULL);

    json_t *isa = json_object_get(doc, "isa");
    CHECK(json_is_boolean(json_object_get(isa, "avx2")) &&
          json_is_true(json_object_get(isa, "avx2")) == si->isa.avx2);
    CHECK(json_is_boolean(json_object_get(isa, "amx_int8")));
    json_t *topo = json_object_get(doc, "topology");
    CHECK(json_integer_value(json_object_get(topo, "cores")) == si->cores);
    json_t *ob = json_object_get(json_object_get(doc, "libraries"), "openblas");
    CHECK(json_is_string(json_object_get(ob, "core")));
    CHECK(json_is_string(json_object_get(ob, "version")));
    CHECK(json_integer_value(json_object_get(ob, "threads")) >= 1);
    CHECK(json_is_string(
        json_object_get(json_object_get(doc, "libraries"), "hwloc")));
    json_t *sol = json_object_get(doc, "solbench");
    CHECK(strcmp(json_string_value(json_object_get(sol, "version")),
                 SB_VERSION) == 0);
    CHECK(strcmp(sb_version(), SB_VERSION) == 0);
    CHECK(strcmp(sb_git_commit(), SB_GIT_COMMIT) == 0);
    CHECK(json_is_array(json_object_get(doc, "notes")));

    /* The summary names the fingerprint and every section. */
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    CHECK(mf != NULL);
    if (mf) {
        sb_sysinfo_print(mf, doc);
        fclose(mf);
        const char *fp = json_string_value(json_object_get(doc, "fingerprint"));
        CHECK(fp && strstr(buf, fp) != NULL);
        CHECK(strstr(buf, si->cpu_model) != NULL);
        CHECK(strstr(buf, "OMP_NUM_THREADS=3") != NULL);
        CHECK(strstr(buf, "Caches") && strstr(buf, "ISA") &&
              strstr(buf, "Clock") && strstr(buf, "Libraries"));
        free(buf);
    }
    /* A document without the expected shape prints, without crashing. */
    json_t *empty = json_object();
    mf = open_memstream(&buf, &len);
    if (mf) {
        sb_sysinfo_print(mf, empty);
        sb_sysinfo_print(mf, NULL);
        fclose(mf);
        CHECK(len > 0);
        free(buf);
    }
    json_decref(empty);
    json_decref(doc);
    unsetenv("SB_TEST_NOT_PERF");
}

int main(void)
{
    test_fnv();
    test_os_gate();
    sb_sysinfo si;
    sb_sysinfo_collect(&si, true);
    test_isa_vs_cpuinfo(&si);
    test_topology(&si);
    test_clock(&si);
    test_clock_decide();
    test_fingerprint(&si);
    test_json(&si);
    return sb_check_done();
}
