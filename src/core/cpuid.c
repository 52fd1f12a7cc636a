/*
 * cpuid.c — what the processor says about itself.
 *
 * ISA features come from cpuid, but a feature is only usable when the OS
 * also saves and restores its registers on a context switch: the OS says
 * so in XCR0, read with XGETBV. A CPU with AVX-512 under a kernel or
 * hypervisor that does not enable the ZMM state must not run AVX-512
 * kernels (they would fault), so sb_isa_detect() reports the intersection;
 * the raw CPU view is kept beside it for the fingerprint. (The core clock
 * is measured in clock.c.)
 */
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define SB__X86 1
#endif

#include "core/cpuid.h"

/* ---- cpuid registers ----------------------------------------------------- */

#ifdef SB__X86
static void sb__cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

static uint64_t sb__xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

bool sb_cpuid_read(sb_cpuid_regs *r, uint64_t *xcr0)
{
    memset(r, 0, sizeof *r);
    *xcr0 = 0;
#ifdef SB__X86
    uint32_t v[4];
    unsigned max_leaf = (unsigned)__get_cpuid_max(0, NULL);
    if (max_leaf < 1)
        return false;
    sb__cpuid(1, 0, v);
    r->l1_ecx = v[2];
    if (max_leaf >= 7) {
        sb__cpuid(7, 0, v);
        unsigned max_sub = v[0];
        r->l7_ebx = v[1];
        r->l7_edx = v[3];
        if (max_sub >= 1) {
            sb__cpuid(7, 1, v);
            r->l7s1_eax = v[0];
        }
    }
    /* XGETBV is only legal once the OS has set CR4.OSXSAVE (leaf 1 ECX 27). */
    if (r->l1_ecx & (1u << 27))
        *xcr0 = sb__xgetbv0();
    return true;
#else
    return false;
#endif
}

#define SB__BIT(word, n) ((((word) >> (n)) & 1u) != 0)

void sb_isa_from_regs(const sb_cpuid_regs *r, uint64_t xcr0, sb_isa *cpu,
                      sb_isa *usable)
{
    sb_isa c;
    memset(&c, 0, sizeof c);
    c.sse42 = SB__BIT(r->l1_ecx, 20);
    c.avx = SB__BIT(r->l1_ecx, 28);
    c.fma = SB__BIT(r->l1_ecx, 12);
    c.avx2 = SB__BIT(r->l7_ebx, 5);
    c.avx512f = SB__BIT(r->l7_ebx, 16);
    c.avx512bw = SB__BIT(r->l7_ebx, 30);
    c.avx512vl = SB__BIT(r->l7_ebx, 31);
    c.avx512_fp16 = SB__BIT(r->l7_edx, 23);
    c.amx_bf16 = SB__BIT(r->l7_edx, 22);
    c.amx_tile = SB__BIT(r->l7_edx, 24);
    c.amx_int8 = SB__BIT(r->l7_edx, 25);
    c.avx512_bf16 = SB__BIT(r->l7s1_eax, 5);
    if (cpu)
        *cpu = c;
    if (!usable)
        return;

    bool osxsave = SB__BIT(r->l1_ecx, 27);
    bool os_avx = osxsave && (xcr0 & SB_XCR0_AVX) == SB_XCR0_AVX;
    bool os_avx512 = os_avx && (xcr0 & SB_XCR0_AVX512) == SB_XCR0_AVX512;
    bool os_amx = osxsave && (xcr0 & SB_XCR0_AMX) == SB_XCR0_AMX;
    sb_isa u = c;
    /* FMA and AVX2 work on YMM registers: they need the AVX state too. */
    u.avx = c.avx && os_avx;
    u.fma = c.fma && os_avx;
    u.avx2 = c.avx2 && os_avx;
    /* Every AVX-512 extension is an extension of AVX-512F. */
    bool f = c.avx512f && os_avx512;
    u.avx512f = f;
    u.avx512bw = c.avx512bw && f;
    u.avx512vl = c.avx512vl && f;
    u.avx512_bf16 = c.avx512_bf16 && f;
    u.avx512_fp16 = c.avx512_fp16 && f;
    u.amx_tile = c.amx_tile && os_amx;
    u.amx_bf16 = c.amx_bf16 && u.amx_tile;
    u.amx_int8 = c.amx_int8 && u.amx_tile;
    *usable = u;
}

void sb_isa_detect(sb_isa *isa)
{
    sb_cpuid_regs r;
    uint64_t xcr0;
    if (!sb_cpuid_read(&r, &xcr0)) {
        memset(isa, 0, sizeof *isa);
        return;
    }
    sb_isa_from_regs(&r, xcr0, NULL, isa);
}

/* ---- identification ------------------------------------------------------ */

#ifdef SB__X86
/* Collapses runs of spaces and trims both ends (brand strings are padded). */
static void sb__squeeze(char *s)
{
    char *w = s;
    bool space = true; /* drops leading spaces */
    for (const char *p = s; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            if (!space)
                *w++ = ' ';
            space = true;
        } else {
            *w++ = *p;
            space = false;
        }
    }
    if (w > s && w[-1] == ' ')
        w--;
    *w = '\0';
}
#endif

void sb_cpu_identify(sb_cpu_ident *id)
{
    memset(id, 0, sizeof *id);
    id->family = id->model = id->stepping = -1;
#ifdef SB__X86
    uint32_t v[4];
    unsigned max_leaf = (unsigned)__get_cpuid_max(0, NULL);
    if (max_leaf < 1)
        return;
    sb__cpuid(0, 0, v);
    memcpy(id->vendor + 0, &v[1], 4); /* EBX, EDX, ECX spell the vendor */
    memcpy(id->vendor + 4, &v[3], 4);
    memcpy(id->vendor + 8, &v[2], 4);
    id->vendor[12] = '\0';

    sb__cpuid(1, 0, v);
    unsigned base_family = (v[0] >> 8) & 0xf;
    unsigned model = (v[0] >> 4) & 0xf;
    id->family = (int)base_family;
    if (base_family == 0xf)
        id->family += (int)((v[0] >> 20) & 0xff);
    if (base_family == 0x6 || base_family == 0xf)
        model |= ((v[0] >> 16) & 0xf) << 4;
    id->model = (int)model;
    id->stepping = (int)(v[0] & 0xf);
    bool under_hypervisor = (v[2] >> 31) & 1u;

    if ((unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000004u) {
        char brand[49];
        for (unsigned i = 0; i < 3; i++) {
            sb__cpuid(0x80000002u + i, 0, v);
            memcpy(brand + 16 * i, v, 16);
        }
        brand[48] = '\0';
        sb__squeeze(brand);
        strncpy(id->brand, brand, sizeof id->brand - 1);
    }
    /* Leaf 0x40000000 belongs to the hypervisor and exists only under one;
     * __get_cpuid_max cannot range-check it, so the leaf-1 bit guards it. */
    if (under_hypervisor) {
        sb__cpuid(0x40000000u, 0, v);
        char sig[13];
        memcpy(sig + 0, &v[1], 4);
        memcpy(sig + 4, &v[2], 4);
        memcpy(sig + 8, &v[3], 4);
        sig[12] = '\0';
        for (int i = 0; i < 12; i++) /* signatures are printable or NUL */
            if (sig[i] && (sig[i] < 0x20 || sig[i] > 0x7e))
                sig[i] = '?';
        sb__squeeze(sig);
        /* Signatures repeat or pad their name; say it the usual way. */
        static const char *const known[][2] = {
            {"KVMKVMKVM", "KVM"},           {"Microsoft Hv", "Hyper-V"},
            {"VMwareVMware", "VMware"},     {"XenVMMXenVMM", "Xen"},
            {"TCGTCGTCGTCG", "QEMU-TCG"},   {"bhyve bhyve", "bhyve"},
            {"ACRNACRNACRN", "ACRN"},       {"QNXQVMBSQG", "QNX"},
            {"VBoxVBoxVBox", "VirtualBox"}, {"Linux KVM Hv", "KVM-HyperV"}};
        const char *name = sig[0] ? sig : "unknown";
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (strcmp(sig, known[k][0]) == 0)
                name = known[k][1];
        strncpy(id->hypervisor, name, sizeof id->hypervisor - 1);
    }
#endif
}
