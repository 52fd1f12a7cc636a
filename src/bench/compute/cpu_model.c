/*
 * cpu_model.c — what the compute area needs to know about the processor:
 * which FMA ISAs it can run, and how many FLOPs per cycle each core can
 * issue with each of them — fp64, fp32 and the bf16 dot products — from a
 * table of known microarchitectures with the source of every figure.
 *
 * A figure is per core: FMA pipes x lanes x 2 FLOPs per FMA. A bf16 dot
 * product counts 2 FLOPs per bf16 element pair it multiplies and adds
 * (vdpbf16ps on a zmm register: 16 fp32 lanes x 2 pairs x 2 = 64 FLOPs;
 * the vendors' own convention). The sources, by key in the table:
 *   IL    AIDA64 instruction latency/throughput dumps (InstLatx64), measured
 *         per CPU: the FMA throughput of each width, vdpbf16ps on Zen 4/5
 *         and Golden Cove;
 *   AMD   AMD Software Optimization Guides for families 17h, 19h, 1Ah;
 *   INTEL Intel 64 and IA-32 Architectures Optimization Reference Manual;
 *   AMX   Intel's AMX figure: TDPBF16PS, 16x16x32 per instruction every
 *         16 cycles = 1024 bf16 FLOPs per cycle per core;
 *   LLVM  the AArch64 scheduling models (AArch64Sched*.td), which
 *         transcribe Arm's software optimisation guides.
 * A figure that rests on an inference, not a measurement or a document,
 * says "inferred" or "assumed" in its source text: the theoretical peak
 * built on it is as good as that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
/* FEAT_BF16 in the kernel's hwcaps (asm/hwcap.h: HWCAP2_BF16). */
#define SB__HWCAP2_BF16 (1UL << 14)
#endif

#include "bench/compute/compute.h"
#include "core/cpuid.h"

/* ---- names --------------------------------------------------------------- */

static const char *const isa_names[SB__ISA_N] = {"scalar", "avx2", "avx512",
                                                 "neon", "sve"};
static const char *const dt_names[SB__DT_N] = {"fp64", "fp32", "bf16"};

const char *sb_isa_name(int isa)
{
    return (isa >= 0 && isa < SB__ISA_N) ? isa_names[isa] : "?";
}

const char *sb_dtype_name(int dt)
{
    return (dt >= 0 && dt < SB__DT_N) ? dt_names[dt] : "?";
}

int sb_isa_parse(const char *s)
{
    for (int i = 0; s && i < SB__ISA_N; i++)
        if (strcmp(s, isa_names[i]) == 0)
            return i;
    return -1;
}

int sb_dtype_parse(const char *s)
{
    for (int i = 0; s && i < SB__DT_N; i++)
        if (strcmp(s, dt_names[i]) == 0)
            return i;
    return -1;
}

/* ---- ISA support --------------------------------------------------------- */

unsigned sb_isa_supported_mask(void)
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
#elif defined(__aarch64__)
    /* Advanced SIMD (NEON) is part of every AArch64 core. */
    mask |= 1u << SB__ISA_SCALAR | 1u << SB__ISA_NEON;
#else
    mask |= 1u << SB__ISA_SCALAR; /* portable fma() loop */
#endif
    return mask;
}

bool sb_bf16_dot_supported(void)
{
#if defined(__aarch64__) && defined(__linux__)
    return (getauxval(AT_HWCAP2) & SB__HWCAP2_BF16) != 0;
#else
    sb_isa isa;
    sb_isa_detect(&isa);
    return isa.avx512_bf16;
#endif
}

int sb_bf16_dot_isa(void)
{
#if defined(__aarch64__)
    return SB__ISA_NEON;
#else
    return SB__ISA_AVX512;
#endif
}

int sb_isa_best(unsigned mask)
{
    /* Widest first: AVX-512 over AVX2, SVE over NEON. */
    static const int order[] = {SB__ISA_AVX512, SB__ISA_SVE, SB__ISA_AVX2,
                                SB__ISA_NEON};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (mask & (1u << order[i]))
            return order[i];
    return SB__ISA_SCALAR;
}

/* ---- the table
 * --------------------------------------------------------------- */

enum { V_INTEL = 1, V_AMD, V_ARM };

/* One microarchitecture. x86: vec = AVX2 (FMA on YMM), wide = AVX-512;
 * Arm: vec = NEON (128-bit), wide = SVE. pipes x bits per ISA; bf16 and
 * amx in FLOPs per cycle (0: no such instruction). Arm rows give the MIDR
 * implementer as family and part numbers as models. */
typedef struct sb__uarch_row {
    int vendor, family;
    int nr;
    int r[6][2]; /* model ranges, inclusive */
    const char *name;
    int scalar_pipes, vec_pipes, vec_bits, wide_pipes, wide_bits;
    int bf16, amx;
    bool hybrid; /* the figures are the P-cores'; E-cores have fewer */
    const char *src, *bf16_src;
} sb__uarch_row;

#define M1(a)                                                                  \
    1,                                                                         \
    {                                                                          \
        {                                                                      \
            a, a                                                               \
        }                                                                      \
    }
#define M2(a, b)                                                               \
    2,                                                                         \
    {                                                                          \
        {a, a},                                                                \
        {                                                                      \
            b, b                                                               \
        }                                                                      \
    }

static const sb__uarch_row rows[] = {
    /* ---- Intel, family 6 */
    {V_INTEL,
     6,
     6,
     {{0x3c, 0x3c},
      {0x3f, 0x3f},
      {0x45, 0x46},
      {0x3d, 0x3d},
      {0x47, 0x47},
      {0x4f, 0x4f}},
     "Haswell/Broadwell",
     2,
     2,
     256,
     0,
     0,
     0,
     0,
     false,
     "ports 0 and 1; IL: ymm FMA 2 per cycle",
     NULL},
    {V_INTEL,
     6,
     1,
     {{0x56, 0x56}},
     "Broadwell-DE",
     2,
     2,
     256,
     0,
     0,
     0,
     0,
     false,
     "ports 0 and 1; IL: ymm FMA 2 per cycle",
     NULL},
    {V_INTEL,
     6,
     6,
     {{0x4e, 0x4e},
      {0x5e, 0x5e},
      {0x8e, 0x8e},
      {0x9e, 0x9e},
      {0xa5, 0xa6},
      {0x66, 0x66}},
     "Skylake client",
     2,
     2,
     256,
     0,
     0,
     0,
     0,
     false,
     "ports 0 and 1; IL: ymm FMA 2 per cycle",
     NULL},
    {V_INTEL, 6, M1(0x55), "Skylake-SP/Cascade Lake", 2, 2, 256, 2, 512, 0, 0,
     false,
     "ports 0+1 fused and port 5; IL: zmm FMA 2 per cycle on "
     "Platinum/Gold 6xxx, 1 on Gold 5xxx/Silver/Bronze",
     NULL},
    {V_INTEL, 6, M2(0x6a, 0x6c), "Ice Lake-SP", 2, 2, 256, 2, 512, 0, 0, false,
     "IL (Gold 6330): zmm FMA 2 per cycle; other SKUs assumed alike", NULL},
    {V_INTEL,
     6,
     5,
     {{0x7d, 0x7e}, {0x9d, 0x9d}, {0x8c, 0x8d}, {0xa7, 0xa7}, {0x8a, 0x8a}},
     "Ice/Tiger/Rocket Lake client",
     2,
     2,
     256,
     1,
     512,
     0,
     0,
     false,
     "ports 0+1 fused; IL: zmm FMA 1 per cycle, ymm 2",
     NULL},
    {V_INTEL,
     6,
     4,
     {{0x8f, 0x8f}, {0xcf, 0xcf}, {0xad, 0xae}, {0, -1}},
     "Sapphire/Emerald/Granite Rapids",
     2,
     2,
     256,
     2,
     512,
     32,
     1024,
     false,
     "Golden Cove server core: 2 x 512-bit FMA (ports 0+1 and 5; INTEL)",
     "vdpbf16ps zmm 1 per 2 cycles, inferred from IL on the Golden Cove "
     "client core (AVX-512 enabled): half the fp32 FMA rate"},
    {V_INTEL,
     6,
     6,
     {{0x97, 0x97},
      {0x9a, 0x9a},
      {0xb7, 0xb7},
      {0xba, 0xba},
      {0xbf, 0xbf},
      {0xd7, 0xd7}},
     "Alder/Raptor Lake",
     2,
     2,
     256,
     0,
     0,
     0,
     0,
     true,
     "Golden/Raptor Cove P-core: 2 x 256-bit FMA (IL); Gracemont E-cores "
     "have half",
     NULL},
    {V_INTEL,
     6,
     6,
     {{0xaa, 0xaa},
      {0xac, 0xac},
      {0xc5, 0xc6},
      {0xb5, 0xb5},
      {0xbd, 0xbd},
      {0xcc, 0xcc}},
     "Meteor/Arrow/Lunar Lake",
     2,
     2,
     256,
     0,
     0,
     0,
     0,
     true,
     "Redwood/Lion Cove P-core: 2 x 256-bit FMA (IL); E-cores fewer",
     NULL},
    {V_INTEL,
     6,
     3,
     {{0xbe, 0xbe}, {0xaf, 0xaf}, {0xb6, 0xb6}},
     "Gracemont/Crestmont (E-core)",
     2,
     1,
     256,
     0,
     0,
     0,
     0,
     false,
     "2 x 128-bit FMA: IL, ymm FMA 1 per cycle",
     NULL},
    {V_INTEL, 6, M1(0xdd), "Clearwater Forest (Darkmont)", 4, 2, 256, 0, 0, 0,
     0, false, "4 x 128-bit FMA assumed as on Skymont (IL)", NULL},
    /* ---- AMD */
    {V_AMD,
     0x17,
     2,
     {{0x00, 0x2f}, {0x50, 0x5f}},
     "Zen/Zen+",
     2,
     2,
     128,
     0,
     0,
     0,
     0,
     false,
     "a 256-bit FMA issues as two 128-bit halves; AMD 17h, IL",
     NULL},
    {V_AMD,
     0x17,
     4,
     {{0x30, 0x4f}, {0x60, 0x7f}, {0x90, 0x91}, {0xa0, 0xaf}},
     "Zen 2",
     2,
     2,
     256,
     0,
     0,
     0,
     0,
     false,
     "FP0, FP1; AMD 17h, IL",
     NULL},
    {V_AMD,
     0x19,
     2,
     {{0x00, 0x0f}, {0x20, 0x5f}},
     "Zen 3",
     2,
     2,
     256,
     0,
     0,
     0,
     0,
     false,
     "FP0, FP1; AMD 19h, IL",
     NULL},
    {V_AMD,
     0x19,
     2,
     {{0x10, 0x1f}, {0x60, 0xaf}},
     "Zen 4",
     2,
     2,
     256,
     1,
     512,
     64,
     0,
     false,
     "512-bit ops double-pumped on the 2 x 256-bit pipes; AMD 19h, IL",
     "vdpbf16ps zmm 1 per cycle (IL: Genoa, Raphael)"},
    {V_AMD,
     0x1a,
     3,
     {{0x00, 0x2f}, {0x40, 0x4f}, {0x60, 0x7f}},
     "Zen 5",
     2,
     2,
     256,
     2,
     512,
     128,
     0,
     false,
     "2 x 512-bit FMA where cpuid 8000001Ah says FP512 (Turin, Granite "
     "Ridge), else 512-bit ops at half rate; AMD 1Ah, IL",
     "vdpbf16ps zmm 2 per cycle with the 512-bit datapath (IL)"},
    /* ---- Arm: family = MIDR implementer, model = part number */
    {V_ARM,
     0x41,
     2,
     {{0xd0b, 0xd0c}, {0, -1}},
     "Neoverse N1/Cortex-A76",
     2,
     2,
     128,
     0,
     0,
     0,
     0,
     false,
     "2 x 128-bit FP pipes (V0, V1); LLVM",
     NULL},
    {V_ARM, 0x41, M1(0xd49), "Neoverse N2", 2, 2, 128, 2, 128, 64, 0, false,
     "2 x 128-bit FP pipes, SVE at 128 bits; LLVM",
     "bfmmla 2 per cycle (32 FLOPs each); LLVM"},
    {V_ARM, 0x41, M1(0xd40), "Neoverse V1", 4, 4, 128, 2, 256, 128, 0, false,
     "4 x 128-bit NEON pipes, 2 x 256-bit SVE; LLVM",
     "bfmmla 4 per cycle (32 FLOPs each); LLVM"},
    {V_ARM, 0x41, M1(0xd4f), "Neoverse V2", 4, 4, 128, 4, 128, 128, 0, false,
     "4 x 128-bit FP pipes, SVE at 128 bits; LLVM",
     "bfmmla 4 per cycle (32 FLOPs each); LLVM"},
    {V_ARM, 0x41, M1(0xd84), "Neoverse V3", 4, 4, 128, 4, 128, 128, 0, false,
     "4 x 128-bit FP pipes assumed as on V2", "assumed as on V2"},
    {V_ARM, 0x41, M1(0xd8e), "Neoverse N3", 2, 2, 128, 2, 128, 64, 0, false,
     "2 x 128-bit FP pipes assumed as on N2", "assumed as on N2"},
    {V_ARM, 0x46, M1(0x001), "A64FX", 2, 2, 128, 2, 512, 0, 0, false,
     "2 x 512-bit SVE pipes (FLA, FLB); LLVM", NULL},
    {V_ARM,
     0xc0,
     1,
     {{0xac3, 0xac4}},
     "AmpereOne",
     2,
     2,
     128,
     0,
     0,
     0,
     0,
     false,
     "2 x 128-bit FP pipes (X, Y), inferred from LLVM",
     NULL},
};

static bool row_has(const sb__uarch_row *r, int model)
{
    for (int i = 0; i < r->nr; i++)
        if (model >= r->r[i][0] && model <= r->r[i][1])
            return true;
    return false;
}

/* Skylake-SP and Cascade Lake have one 512-bit FMA unit on Gold 5xxx,
 * Silver and Bronze (but the Gold 5122 and 5222), two elsewhere; cpuid
 * does not say, the brand string does. 0 when it does not either. */
static int skx_fma_units(const char *brand)
{
    if (!brand || !*brand)
        return 0;
    if (strstr(brand, "Gold 5122") || strstr(brand, "Gold 5222"))
        return 2;
    if (strstr(brand, "Gold 5") || strstr(brand, "Silver") ||
        strstr(brand, "Bronze"))
        return 1;
    if (strstr(brand, "Platinum") || strstr(brand, "Gold 6") ||
        strstr(brand, "Xeon(R) W-") || strstr(brand, "Core(TM) i9") ||
        strstr(brand, "Core(TM) i7"))
        return 2;
    return 0;
}

/* Sets one ISA's fp64 and fp32 figures from `pipes` FMA pipes of `bits`. */
static void set_fpc(sb_uarch *u, int isa, int pipes, int bits, const char *kind,
                    const char *why)
{
    if (pipes <= 0)
        return;
    int lanes64 = isa == SB__ISA_SCALAR ? 1 : bits / 64;
    int lanes32 = isa == SB__ISA_SCALAR ? 1 : bits / 32;
    u->fpc[isa][SB__DT_FP64] = (double)pipes * lanes64 * 2.0;
    u->fpc[isa][SB__DT_FP32] = (double)pipes * lanes32 * 2.0;
    if (isa == SB__ISA_SCALAR)
        snprintf(u->source[isa], sizeof u->source[isa],
                 "%d FMA pipe%s x 1 lane (%s)", pipes, pipes == 1 ? "" : "s",
                 why);
    else
        snprintf(u->source[isa], sizeof u->source[isa],
                 "%d %s pipe%s x %d-bit (%s)", pipes, kind,
                 pipes == 1 ? "" : "s", bits, why);
}

void sb_uarch_lookup(sb_uarch *u, const sb_cpu_facts *f)
{
    memset(u, 0, sizeof *u);
    u->family = f->family;
    u->model = f->model;
    int v = strcmp(f->vendor, "Intel") == 0 ? V_INTEL
            : strcmp(f->vendor, "AMD") == 0 ? V_AMD
            : strcmp(f->vendor, "Arm") == 0 ? V_ARM
                                            : 0;
    const sb__uarch_row *row = NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !row; i++)
        if (rows[i].vendor == v && rows[i].family == f->family &&
            row_has(&rows[i], f->model))
            row = &rows[i];

    sb__uarch_row r;
    if (row) {
        r = *row;
        snprintf(u->name, sizeof u->name, "%s", r.name);
    } else {
        /* An unknown core: two FMA pipes of the widest width, as on every
         * mainstream core since Haswell (x86) and Neoverse N1 (Arm). */
        memset(&r, 0, sizeof r);
        r.scalar_pipes = 2;
        r.vec_pipes = 2;
        r.vec_bits = v == V_ARM ? 128 : 256;
        r.wide_pipes = 2;
        r.wide_bits = v == V_ARM ? 128 : 512;
        r.src = "assumed: no table entry for this CPU";
        snprintf(u->name, sizeof u->name, "unknown (%s family 0x%x model 0x%x)",
                 f->vendor[0] ? f->vendor : "?", f->family, f->model);
        u->assumed = true;
    }
    const char *why = r.src;
    const char *why_wide = r.src;
    char buf[160];
    if (row && v == V_INTEL && f->model == 0x55) {
        /* The name by stepping, the 512-bit units by SKU. */
        snprintf(u->name, sizeof u->name, "%s",
                 f->stepping >= 10  ? "Cooper Lake"
                 : f->stepping >= 5 ? "Cascade Lake"
                                    : "Skylake-SP");
        int units = skx_fma_units(f->brand);
        if (units) {
            r.wide_pipes = units;
            snprintf(buf, sizeof buf, "%d unit%s on this SKU (%s); IL", units,
                     units == 1 ? "" : "s", f->brand);
        } else {
            snprintf(buf, sizeof buf,
                     "2 units assumed: the brand string "
                     "does not name the SKU; Gold 5xxx, Silver and Bronze "
                     "have 1 (IL)");
            u->assumed = true;
        }
        why_wide = buf;
        if (f->stepping >= 10) {
            r.bf16 = 32;
            r.bf16_src = "vdpbf16ps zmm: not measured anywhere; assumed as "
                         "on Sapphire Rapids (1 per 2 cycles)";
        }
    }
    if (row && v == V_AMD && f->family == 0x1a && !f->fp512) {
        r.wide_pipes = 1; /* 512-bit ops at half rate on the 256-bit path */
        r.bf16 = 64;
        why_wide = "256-bit datapath (cpuid 8000001Ah without FP512): "
                   "512-bit ops at half rate; IL";
        r.bf16_src = "vdpbf16ps zmm 1 per cycle on the 256-bit datapath (IL)";
    }
    u->hybrid = r.hybrid;

    if (v == V_ARM) {
        set_fpc(u, SB__ISA_SCALAR, r.scalar_pipes, 64, "", why);
        set_fpc(u, SB__ISA_NEON, r.vec_pipes, r.vec_bits, "NEON", why);
        if (r.wide_bits)
            set_fpc(u, SB__ISA_SVE, r.wide_pipes, r.wide_bits, "SVE", why_wide);
        if (r.bf16) {
            u->fpc[SB__ISA_NEON][SB__DT_BF16] = r.bf16;
            snprintf(u->bf16_source, sizeof u->bf16_source, "%s", r.bf16_src);
        }
    } else {
        set_fpc(u, SB__ISA_SCALAR, r.scalar_pipes, 64, "", why);
        set_fpc(u, SB__ISA_AVX2, r.vec_pipes, r.vec_bits, "FMA", why);
        if (r.wide_bits)
            set_fpc(u, SB__ISA_AVX512, r.wide_pipes, r.wide_bits, "FMA",
                    why_wide);
        if (r.bf16) {
            u->fpc[SB__ISA_AVX512][SB__DT_BF16] = r.bf16;
            snprintf(u->bf16_source, sizeof u->bf16_source, "%s", r.bf16_src);
        }
        if (r.amx) {
            u->amx_bf16 = r.amx;
            snprintf(u->amx_source, sizeof u->amx_source,
                     "TDPBF16PS: 16x16x32 every 16 cycles (AMX)");
        }
    }
    /* What this CPU cannot run has no figure. */
    for (int isa = 0; isa < SB__ISA_N; isa++)
        if (!(f->isa_mask & (1u << isa))) {
            for (int dt = 0; dt < SB__DT_N; dt++)
                u->fpc[isa][dt] = 0;
            u->source[isa][0] = '\0';
        }
    if (!f->bf16_dot)
        for (int isa = 0; isa < SB__ISA_N; isa++)
            u->fpc[isa][SB__DT_BF16] = 0;
    if (!f->amx_bf16)
        u->amx_bf16 = 0;
}

/* ---- this machine
 * ---------------------------------------------------------------- */

void sb_cpu_facts_detect(sb_cpu_facts *f)
{
    memset(f, 0, sizeof *f);
    f->isa_mask = sb_isa_supported_mask();
    sb_isa isa;
    sb_isa_detect(&isa);
    f->bf16_dot = isa.avx512_bf16;
    f->amx_bf16 = isa.amx_bf16;
#if defined(__x86_64__) || defined(__i386__)
    sb_cpu_ident id;
    sb_cpu_identify(&id);
    snprintf(f->vendor, sizeof f->vendor, "%s",
             strstr(id.vendor, "AMD")     ? "AMD"
             : strstr(id.vendor, "Intel") ? "Intel"
                                          : id.vendor);
    f->family = id.family;
    f->model = id.model;
    f->stepping = id.stepping;
    snprintf(f->brand, sizeof f->brand, "%s", id.brand);
    unsigned a, b, c, d;
    if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x8000001au) {
        __cpuid(0x8000001au, a, b, c, d);
        f->fp512 = (a >> 3) & 1u; /* FP512: a 512-bit FP datapath */
    }
#else
    /* Linux/AArch64: the MIDR fields /proc/cpuinfo lists per CPU. */
    unsigned implementer, part;
    bool bf16;
    sb_arm_cpuinfo(&implementer, &part, &bf16);
    f->bf16_dot = f->bf16_dot || bf16;
    if (implementer) {
        snprintf(f->vendor, sizeof f->vendor, "Arm");
        f->family = (int)implementer;
        f->model = (int)part;
    }
#endif
}

void sb_uarch_detect(sb_uarch *u)
{
    sb_cpu_facts f;
    sb_cpu_facts_detect(&f);
    sb_uarch_lookup(u, &f);
}
