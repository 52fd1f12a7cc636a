/*
 * cpu_model.c — what the compute area needs to know about the processor:
 * which FMA ISAs it can run, how many FLOPs per cycle each core can issue
 * with each of them (a table of known microarchitectures, with the source
 * of every figure), and whether the BLAS runs kernels narrower than the CPU
 * supports — a hidden bottleneck the tool exists to expose.
 *
 * The FLOPs-per-cycle figures are the vendors' published FMA pipe counts
 * and widths (AMD Software Optimization Guides for families 17h/19h/1Ah,
 * Intel 64 and IA-32 Architectures Optimization Reference Manual). Every
 * figure is per core: FMA units x lanes x 2 FLOPs per FMA.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "bench/compute/compute.h"

/* ---- names ---------------------------------------------------------------- */

static const char *const isa_names[SB__ISA_N] = {"scalar", "avx2", "avx512"};
static const char *const dt_names[SB__DT_N] = {"fp64", "fp32", "bf16"};

const char *sb__isa_name(int isa)
{
    return (isa >= 0 && isa < SB__ISA_N) ? isa_names[isa] : "?";
}

const char *sb__dtype_name(int dt)
{
    return (dt >= 0 && dt < SB__DT_N) ? dt_names[dt] : "?";
}

int sb__isa_parse(const char *s)
{
    for (int i = 0; s && i < SB__ISA_N; i++)
        if (strcmp(s, isa_names[i]) == 0)
            return i;
    return -1;
}

int sb__dtype_parse(const char *s)
{
    for (int i = 0; s && i < SB__DT_N; i++)
        if (strcmp(s, dt_names[i]) == 0)
            return i;
    return -1;
}

/* ---- ISA support ----------------------------------------------------------- */

unsigned sb__isa_supported_mask(void)
{
    unsigned mask = 0;
#if defined(__x86_64__)
    /* __builtin_cpu_supports checks cpuid and, for AVX and AVX-512, that
     * the OS saves the wide registers (XGETBV), so a kernel that passes
     * here cannot fault on an illegal instruction. The scalar kernel uses
     * the same FMA instructions on one lane. */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("fma") && __builtin_cpu_supports("avx")) {
        mask |= 1u << SB__ISA_SCALAR;
        if (__builtin_cpu_supports("avx2"))
            mask |= 1u << SB__ISA_AVX2;
        if (__builtin_cpu_supports("avx512f"))
            mask |= 1u << SB__ISA_AVX512;
    }
#else
    mask |= 1u << SB__ISA_SCALAR; /* portable fma() loop */
#endif
    return mask;
}

int sb__isa_best(unsigned mask)
{
    for (int i = SB__ISA_N - 1; i > 0; i--)
        if (mask & (1u << i))
            return i;
    return SB__ISA_SCALAR;
}

/* ---- FLOPs per cycle ----------------------------------------------------- */

/* Sets one ISA's figure: `units` FMA pipes of `bits` width. */
static void set_fpc(sb__uarch *u, int isa, unsigned mask, int units, int bits,
                    const char *why)
{
    if (!(mask & (1u << isa)))
        return;
    int lanes64 = isa == SB__ISA_SCALAR ? 1 : bits / 64;
    int lanes32 = isa == SB__ISA_SCALAR ? 1 : bits / 32;
    u->fpc[isa][SB__DT_FP64] = (double)units * lanes64 * 2.0;
    u->fpc[isa][SB__DT_FP32] = (double)units * lanes32 * 2.0;
    if (isa == SB__ISA_SCALAR)
        snprintf(u->source[isa], sizeof u->source[isa],
                 "%d FMA pipe%s x 1 lane (%s)", units, units == 1 ? "" : "s",
                 why);
    else
        snprintf(u->source[isa], sizeof u->source[isa],
                 "%d FMA pipe%s x %d-bit (%s)", units, units == 1 ? "" : "s",
                 bits, why);
}

static bool model_in(int model, const int *list, int n)
{
    for (int i = 0; i < n; i++)
        if (list[i] == model)
            return true;
    return false;
}

void sb__uarch_lookup(sb__uarch *u, const char *vendor, int family,
                      int model, unsigned mask)
{
    memset(u, 0, sizeof *u);
    u->family = family;
    u->model = model;
    snprintf(u->name, sizeof u->name, "unknown (family 0x%x model 0x%x)",
             family, model);
    /* Default for an unknown FMA-capable x86 core: two FMA pipes of the
     * widest width, as on every mainstream core since Haswell. */
    const char *generic = "assumed: no table entry for this CPU";
    int u256 = 2, b256 = 256, u512 = 2, b512 = 512;
    const char *why = generic, *why512 = generic;

    bool amd = vendor && strstr(vendor, "AMD");
    bool intel = vendor && strstr(vendor, "Intel");
    if (amd && family == 0x17 && model < 0x30) {
        snprintf(u->name, sizeof u->name, "Zen/Zen+");
        b256 = 128; /* a 256-bit FMA issues as two 128-bit halves */
        why = "AMD family 17h optimisation guide";
    } else if (amd && family == 0x17) {
        snprintf(u->name, sizeof u->name, "Zen 2");
        why = "AMD family 17h optimisation guide";
    } else if (amd && family == 0x19) {
        bool zen4 = (model >= 0x10 && model <= 0x1f) ||
                    (model >= 0x60 && model <= 0x7f) ||
                    (model >= 0xa0 && model <= 0xaf);
        snprintf(u->name, sizeof u->name, zen4 ? "Zen 4" : "Zen 3");
        why = "AMD family 19h optimisation guide";
        /* Zen 4 runs a 512-bit FMA as two 256-bit halves. */
        b512 = 256;
        why512 = "512-bit ops double-pumped; AMD family 19h guide";
    } else if (amd && family == 0x1a) {
        snprintf(u->name, sizeof u->name, "Zen 5");
        why = "AMD family 1Ah optimisation guide";
        why512 = "desktop/server parts; mobile parts have half; AMD family "
                 "1Ah guide";
    } else if (intel && family == 6) {
        static const int sp[] = {0x55, 0x6a, 0x6c, 0x8f, 0xcf, 0xad, 0xae};
        static const int client512[] = {0x7d, 0x7e, 0x8c, 0x8d, 0xa7};
        static const int hsw[] = {0x3c, 0x3f, 0x45, 0x46, 0x3d, 0x47,
                                  0x4f, 0x56, 0x4e, 0x5e, 0x8e, 0x9e,
                                  0xa5, 0xa6, 0x97, 0x9a, 0xb7, 0xba,
                                  0xbf, 0xaa, 0xac, 0xc5, 0xc6};
        why = "ports 0 and 1; Intel optimisation reference manual";
        if (model_in(model, sp, (int)(sizeof sp / sizeof sp[0]))) {
            snprintf(u->name, sizeof u->name, "Xeon Scalable (model 0x%x)",
                     model);
            why512 = "Gold 6xxx/Platinum; 1-unit parts reach half; Intel "
                     "optimisation reference manual";
        } else if (model_in(model, client512,
                            (int)(sizeof client512 / sizeof client512[0]))) {
            snprintf(u->name, sizeof u->name, "Ice/Tiger/Rocket Lake client");
            u512 = 1;
            why512 = "ports 0+1 fused; Intel optimisation reference manual";
        } else if (model_in(model, hsw, (int)(sizeof hsw / sizeof hsw[0]))) {
            snprintf(u->name, sizeof u->name, "Intel Core (model 0x%x)",
                     model);
        }
    }
    set_fpc(u, SB__ISA_SCALAR, mask, 2, 64, why);
    set_fpc(u, SB__ISA_AVX2, mask, u256, b256, why);
    set_fpc(u, SB__ISA_AVX512, mask, u512, b512, why512);
}

void sb__uarch_detect(sb__uarch *u)
{
    char vendor[16] = "";
    int family = 0, model = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
        vendor[12] = 0;
    }
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        family = (int)((a >> 8) & 0xf);
        model = (int)((a >> 4) & 0xf);
        if (family == 0xf)
            family += (int)((a >> 20) & 0xff);
        if (family == 6 || family >= 0xf)
            model |= (int)((a >> 16) & 0xf) << 4;
    }
    /* "AuthenticAMD" / "GenuineIntel" -> the vendor words the table uses. */
    const char *v = strstr(vendor, "AMD") ? "AMD"
                    : strstr(vendor, "Intel") ? "Intel" : vendor;
    sb__uarch_lookup(u, v, family, model, sb__isa_supported_mask());
#else
    sb__uarch_lookup(u, vendor, family, model, sb__isa_supported_mask());
#endif
}

/* ---- BLAS kernel width --------------------------------------------------- */

int sb__blas_core_width(const char *core)
{
    static const char *const w512[] = {"skylakex", "cooperlake",
                                       "sapphirerapids", NULL};
    static const char *const w256[] = {"haswell", "zen", "sandybridge",
                                       "excavator", "steamroller",
                                       "piledriver", "bulldozer", NULL};
    if (!core)
        return 128;
    for (int i = 0; w512[i]; i++)
        if (strncasecmp(core, w512[i], strlen(w512[i])) == 0)
            return 512;
    for (int i = 0; w256[i]; i++)
        if (strncasecmp(core, w256[i], strlen(w256[i])) == 0)
            return 256;
    return 128;
}

int sb__cpu_vector_width(unsigned mask)
{
    if (mask & (1u << SB__ISA_AVX512))
        return 512;
    if (mask & (1u << SB__ISA_AVX2))
        return 256;
    return 128;
}

bool sb__blas_width_note(const char *core, const char *coretype_env,
                         unsigned mask, char *buf, size_t len)
{
    int have = sb__cpu_vector_width(mask);
    int used = sb__blas_core_width(core);
    if (used >= have)
        return false;
    char forced[96] = "";
    if (coretype_env && *coretype_env)
        snprintf(forced, sizeof forced, " (OPENBLAS_CORETYPE=%s)",
                 coretype_env);
    const char *cpu = have == 512 ? "AVX-512" : "AVX2/FMA";
    const char *cap = (have / used == 2) ? "half" : "a fraction of";
    snprintf(buf, len,
             "OpenBLAS runs its %s kernels%s on a CPU with %s: GEMM is "
             "capped at %s the vector width (%d of %d bits)",
             core ? core : "unknown", forced, cpu, cap, used, have);
    return true;
}
