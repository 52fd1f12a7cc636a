/*
 * clock.c — how fast the core clock really runs, measured three ways that
 * must agree before a theoretical peak is built on the figure.
 *
 * The clock is not read from /proc (a nominal or last-sampled frequency,
 * and nothing at all in many virtual machines). Instead:
 *
 *  1. add chain: a loop of 16 dependent `add reg, reg` per iteration. A
 *     register-register add has a latency of one cycle on every x86 and
 *     Arm core, and no core eliminates it. (An `add $imm, reg` chain is
 *     not safe: Golden Cove and its successors fold small immediates at
 *     rename and retire several such adds per cycle, which read as a
 *     15.9 GHz clock on an Emerald Rapids guest.)
 *  2. multiply chain: 8 dependent integer multiplies per iteration, whose
 *     latency is a measured constant per core (sb_x86_mul_latency: 3
 *     cycles for `imul r64, r64` on every Intel P-core since Sandy Bridge
 *     and every AMD Zen, 4-5 on Intel's E-cores; sb_arm_mul_latency for
 *     Arm). An execution unit of another kind with another latency: a
 *     fault in one method does not repeat in the other.
 *  3. the hardware cycle counter (perf_event_open, user-mode cycles of this
 *     thread) over the add-chain runs, where the kernel offers it (many
 *     hypervisors do not).
 *
 * Each method is timed in runs of ~3 ms, interleaved (add, multiply, add,
 * ...) so a change of clock or load between them hits both; of the runs
 * the fastest counts, because interrupts, preemption and a stolen virtual
 * CPU only ever make a run slower. Runs come in rounds of eight, up to six
 * rounds, until the methods agree: a boosting core reaches its top clock in
 * only some runs (on a Zen 5 guest, eight runs each left the two chains 2-6 %
 * apart one time in five; forty brought them within 2 %). When the methods
 * still disagree by more than SB_CLOCK_AGREE, the clock is uncertain and no
 * figure is given: a theoretical peak from a wrong clock is worse than none.
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#include "core/cpuid.h"
#include "solbench/sysinfo.h"
#include "solbench/timer.h"
#include "solbench/util.h"

enum {
    SB__ADDS_PER_ITER = 16,
    SB__MULS_PER_ITER = 8,
    SB__RUNS = 8,
    SB__ROUNDS = 6
};

/* ---- the chains
 * -------------------------------------------------------------- */

/* Runs iters x 16 dependent register adds. The loop counter is a second,
 * independent chain that the core retires in parallel (sub+jnz fuse into
 * one op), so the adds set the pace: 16 cycles per iteration. */
static bool sb__add_chain(uint64_t iters)
{
    uint64_t x = 0, one = 1, n = iters;
    __asm__("" : "+r"(one)); /* a register the compiler cannot see is 1 */
#if defined(__x86_64__)
#define SB__A "add %[one], %[x]\n\t"
    __asm__ volatile(".p2align 4\n"
                     "1:\n\t" SB__A SB__A SB__A SB__A SB__A SB__A SB__A SB__A
                         SB__A SB__A SB__A SB__A SB__A SB__A SB__A SB__A
                     "sub $1, %[n]\n\t"
                     "jnz 1b\n\t"
                     : [x] "+r"(x), [n] "+r"(n)
                     : [one] "r"(one)
                     : "cc");
#undef SB__A
#elif defined(__aarch64__)
#define SB__A "add %[x], %[x], %[one]\n\t"
    __asm__ volatile(".p2align 4\n"
                     "1:\n\t" SB__A SB__A SB__A SB__A SB__A SB__A SB__A SB__A
                         SB__A SB__A SB__A SB__A SB__A SB__A SB__A SB__A
                     "subs %[n], %[n], #1\n\t"
                     "b.ne 1b\n\t"
                     : [x] "+r"(x), [n] "+r"(n)
                     : [one] "r"(one)
                     : "cc");
#undef SB__A
#else
    (void)n;
    (void)one;
    return false;
#endif
    SB_KEEP(x);
    return iters > 0;
}

/* Runs iters x 8 dependent 64-bit multiplies by an odd constant (x keeps
 * changing; no multiply is by 0 or 1). */
static bool sb__mul_chain(uint64_t iters)
{
    uint64_t x = 1, m = 0x9e3779b97f4a7c15ull, n = iters;
    __asm__("" : "+r"(m));
#if defined(__x86_64__)
#define SB__M "imul %[m], %[x]\n\t"
    __asm__ volatile(".p2align 4\n"
                     "1:\n\t" SB__M SB__M SB__M SB__M SB__M SB__M SB__M SB__M
                     "sub $1, %[n]\n\t"
                     "jnz 1b\n\t"
                     : [x] "+r"(x), [n] "+r"(n)
                     : [m] "r"(m)
                     : "cc");
#undef SB__M
#elif defined(__aarch64__)
#define SB__M "mul %[x], %[x], %[m]\n\t"
    __asm__ volatile(".p2align 4\n"
                     "1:\n\t" SB__M SB__M SB__M SB__M SB__M SB__M SB__M SB__M
                     "subs %[n], %[n], #1\n\t"
                     "b.ne 1b\n\t"
                     : [x] "+r"(x), [n] "+r"(n)
                     : [m] "r"(m)
                     : "cc");
#undef SB__M
#else
    (void)n;
    (void)m;
    return false;
#endif
    SB_KEEP(x);
    return iters > 0;
}

/* ---- latencies
 * ----------------------------------------------------------------- */

int sb_x86_mul_latency(bool intel, bool amd, int family, int model,
                       int core_type)
{
    /* imul r64, r64, measured (AIDA64 InstLat dumps): 3 cycles on every
     * Intel P-core from Sandy Bridge to Lion Cove and on AMD Zen 1-5; 5 on
     * the Tremont, Gracemont and Crestmont E-cores, 4 on Skymont. Other
     * cores: not known, the chain is not used. */
    if (amd)
        return family >= 0x17 && family <= 0x1a ? 3 : 0;
    if (!intel || family != 6)
        return 0;
    static const int gracemont_crestmont_tremont[] = {0xbe, 0xaf, 0xb6,
                                                      0x86, 0x96, 0x9c};
    static const int skymont_hybrids[] = {0xc5, 0xc6, 0xb5, 0xbd};
    static const int gracemont_crestmont_hybrids[] = {0x97, 0x9a, 0xb7, 0xba,
                                                      0xbf, 0xaa, 0xac};
    for (size_t i = 0; i < sizeof gracemont_crestmont_tremont / sizeof(int);
         i++)
        if (model == gracemont_crestmont_tremont[i])
            return 5;
    if (core_type == 0x20) { /* an E-core of a hybrid part */
        for (size_t i = 0; i < sizeof skymont_hybrids / sizeof(int); i++)
            if (model == skymont_hybrids[i])
                return 4;
        for (size_t i = 0; i < sizeof gracemont_crestmont_hybrids / sizeof(int);
             i++)
            if (model == gracemont_crestmont_hybrids[i])
                return 5;
        return 0;
    }
    if (model == 0xdd || model == 0x8a) /* Darkmont, Lakefield: unmeasured */
        return 0;
    return model >= 0x2a ? 3 : 0; /* Sandy Bridge (0x2a) and later */
}

#if defined(__aarch64__)
/* The MIDR of cpu0 on Linux/aarch64 (0 when unknown). */
static unsigned sb__arm_midr(void)
{
    unsigned implementer, part;
    bool bf16;
    sb_arm_cpuinfo(&implementer, &part, &bf16);
    return implementer << 24 | part << 4;
}
#endif

void sb_arm_cpuinfo(unsigned *implementer, unsigned *part, bool *bf16)
{
    *implementer = *part = 0;
    *bf16 = false;
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        if (strncmp(line, "CPU implementer", 15) == 0 && !*implementer)
            sscanf(colon + 1, "%x", implementer);
        else if (strncmp(line, "CPU part", 8) == 0 && !*part)
            sscanf(colon + 1, "%x", part);
        else if (strncmp(line, "Features", 8) == 0 && strstr(colon, " bf16"))
            *bf16 = true;
    }
    if (f)
        fclose(f);
}

int sb_arm_mul_latency(unsigned implementer, unsigned part)
{
    /* 64-bit MUL (chained through the multiplicand), from the scheduling
     * models that transcribe Arm's software optimisation guides:
     * Neoverse N1 4 cycles; N2, V1 and V2 2; AmpereOne 3. Other cores:
     * unknown, the method is not used. */
    if (implementer == 0x41) {
        switch (part) {
        case 0xd0c:
            return 4;
        case 0xd49:
        case 0xd40:
        case 0xd4f:
            return 2;
        default:
            return 0;
        }
    }
    if (implementer == 0xc0 && (part == 0xac3 || part == 0xac4))
        return 3;
    return 0;
}

/* Cycles of one multiply on the core this thread is pinned to; 0 when
 * not known. */
static int sb__mul_latency(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    unsigned max_leaf = a;
    bool intel = b == 0x756e6547u; /* "Genu" */
    bool amd = b == 0x68747541u;   /* "Auth" */
    __get_cpuid(1, &a, &b, &c, &d);
    int family = (int)((a >> 8) & 0xf), model = (int)((a >> 4) & 0xf);
    if (family == 0xf)
        family += (int)((a >> 20) & 0xff);
    if (family == 6 || family >= 0xf)
        model |= (int)((a >> 16) & 0xf) << 4;
    int core_type = 0;
    if (max_leaf >= 0x1a) {
        __cpuid_count(7, 0, a, b, c, d);
        if (d & (1u << 15)) { /* hybrid: which kind is this core */
            __cpuid_count(0x1a, 0, a, b, c, d);
            core_type = (int)(a >> 24);
        }
    }
    return sb_x86_mul_latency(intel, amd, family, model, core_type);
#elif defined(__aarch64__)
    unsigned midr = sb__arm_midr();
    return sb_arm_mul_latency(midr >> 24, (midr >> 4) & 0xfff);
#else
    return 0;
#endif
}

/* ---- the hardware cycle counter
 * ----------------------------------------------- */

static int sb__perf_open(void)
{
#if defined(__linux__) && defined(SYS_perf_event_open)
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.disabled = 1;
    a.exclude_kernel = 1; /* allowed at perf_event_paranoid 2 */
    a.exclude_hv = 1;
    /* With the times, a count the kernel multiplexed (shared the counter
     * with other events for part of the run) shows, and is not used. */
    a.read_format =
        PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    return fd >= 0 ? (int)fd : -1;
#else
    return -1;
#endif
}

/* The count, and the nanoseconds the counter ran and was enabled. */
typedef struct sb__perf_count {
    uint64_t value, enabled, running;
} sb__perf_count;

static bool sb__perf_read(int fd, sb__perf_count *c)
{
    return fd >= 0 && read(fd, c, sizeof *c) == (ssize_t)sizeof *c;
}

/* ---- the measurement
 * ------------------------------------------------------------ */

/* Iterations of chain that last about `seconds` (doubling from a small
 * count; the spinning also wakes the core from any idle frequency). */
static uint64_t sb__calibrate(bool (*chain)(uint64_t), double seconds)
{
    uint64_t n = 1u << 10;
    for (;;) {
        double t0 = sb_now();
        if (!chain(n))
            return 0;
        double t = sb_now() - t0;
        if (t >= 1e-3 || n >= (1ull << 36))
            return t > 0 ? (uint64_t)((double)n * (seconds / t)) + 1 : n;
        n *= 2;
    }
}

static void sb__clock_decide(sb_core_clock *c)
{
    double v[3];
    int n = 0;
    if (c->ghz_add > 0)
        v[n++] = c->ghz_add;
    if (c->ghz_mul > 0)
        v[n++] = c->ghz_mul;
    if (c->ghz_perf > 0)
        v[n++] = c->ghz_perf;
    c->methods = n;
    if (n == 0) {
        snprintf(c->method, sizeof c->method,
                 "not measured (no chain for "
                 "this architecture)");
        return;
    }
    double lo = v[0], hi = v[0], sum = 0;
    for (int i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
        sum += v[i];
    }
    c->spread = hi / lo - 1.0;
    c->uncertain = n >= 2 && c->spread > SB_CLOCK_AGREE;
    c->ghz = c->uncertain ? 0.0 : sum / n;
    snprintf(c->method, sizeof c->method, "%s%s%s (%d method%s%s)",
             c->ghz_add > 0 ? "add chain" : "",
             c->ghz_mul > 0 ? ", multiply chain" : "",
             c->ghz_perf > 0 ? ", cycle counter" : "", n, n == 1 ? "" : "s",
             n == 1         ? ", unconfirmed"
             : c->uncertain ? ", disagreeing"
                            : ", agreeing");
}

void sb_core_clock_measure(sb_core_clock *c)
{
    memset(c, 0, sizeof *c);
    /* Stay on one core for the whole measurement: a migration in the
     * middle would mix two cores' clocks. The caller's mask is restored. */
    cpu_set_t saved;
    bool pinned = false;
    int cpu = sched_getcpu();
    if (cpu >= 0 && cpu < CPU_SETSIZE &&
        sched_getaffinity(0, sizeof saved, &saved) == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    }

    int lat = sb__mul_latency(); /* of the core pinned to */
    uint64_t na = sb__calibrate(sb__add_chain, 3e-3);
    uint64_t nm = lat > 0 ? sb__calibrate(sb__mul_chain, 3e-3) : 0;
    int fd = na ? sb__perf_open() : -1;
    if (fd >= 0)
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    double best_add = 0, best_mul = 0, best_perf = 0;
    for (int run = 0; na && run < SB__RUNS * SB__ROUNDS; run++) {
        /* After each round of SB__RUNS, stop once the methods agree. A
         * boosting core reaches its top clock in only some runs, and on a
         * shared virtual CPU one method can miss it for a whole round. */
        if (run > 0 && run % SB__RUNS == 0) {
            sb_core_clock_from_methods(c, best_add / 1e9, best_mul / 1e9,
                                       best_perf / 1e9);
            if (!c->uncertain)
                break;
        }
        sb__perf_count c0 = {0}, c1 = {0};
        bool counted = sb__perf_read(fd, &c0);
        double t0 = sb_now();
        sb__add_chain(na);
        double dt = sb_now() - t0;
        /* counted the whole run: never multiplexed in between */
        counted = counted && sb__perf_read(fd, &c1) && c1.value > c0.value &&
                  c1.running - c0.running == c1.enabled - c0.enabled;
        if (dt > 0) {
            double hz = (double)na * SB__ADDS_PER_ITER / dt;
            best_add = hz > best_add ? hz : best_add;
            double hzp = (double)(c1.value - c0.value) / dt;
            if (counted && hzp > best_perf)
                best_perf = hzp;
        }
        if (nm) {
            t0 = sb_now();
            sb__mul_chain(nm);
            dt = sb_now() - t0;
            double hz = (double)nm * SB__MULS_PER_ITER * lat / dt;
            if (dt > 0 && hz > best_mul)
                best_mul = hz;
        }
    }
    if (fd >= 0)
        close(fd);
    if (pinned)
        sched_setaffinity(0, sizeof saved, &saved);

    c->ghz_add = best_add / 1e9;
    c->ghz_mul = best_mul / 1e9;
    c->ghz_perf = best_perf / 1e9;
    c->mul_latency = lat;
    sb__clock_decide(c);
}

void sb_core_clock_from_methods(sb_core_clock *c, double add, double mul,
                                double perf)
{
    memset(c, 0, sizeof *c);
    c->ghz_add = add > 0 ? add : 0;
    c->ghz_mul = mul > 0 ? mul : 0;
    c->ghz_perf = perf > 0 ? perf : 0;
    sb__clock_decide(c);
}

const sb_core_clock *sb_core_clock_once(void)
{
    static sb_core_clock c;
    static bool done;
    if (!done) {
        sb_core_clock_measure(&c);
        done = true;
    }
    return &c;
}

double sb_measure_ghz(void)
{
    sb_core_clock c;
    sb_core_clock_measure(&c);
    return c.ghz;
}
