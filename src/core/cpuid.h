/*
 * cpuid.h — internal interface of cpuid.c: what the processor says about
 * itself (vendor, brand string, family/model, hypervisor) and the pure
 * function that turns raw cpuid registers and XCR0 into ISA flags, kept
 * apart from the instructions themselves so tests can feed it synthetic
 * registers (a CPU with AVX-512 under an OS that does not enable it).
 */
#ifndef SOLBENCH_CORE_CPUID_H
#define SOLBENCH_CORE_CPUID_H

#include <stdbool.h>
#include <stdint.h>

#include "solbench/sysinfo.h"

/* XCR0 (XFEATURE_ENABLED_MASK) state components the OS must enable. */
#define SB_XCR0_AVX 0x6ull     /* SSE + YMM upper halves */
#define SB_XCR0_AVX512 0xe0ull /* opmask, ZMM_Hi256, Hi16_ZMM */
#define SB_XCR0_AMX 0x60000ull /* XTILECFG, XTILEDATA */

/* The cpuid words the ISA flags come from. */
typedef struct sb_cpuid_regs {
    uint32_t l1_ecx; /* leaf 1 */
    uint32_t l7_ebx; /* leaf 7 sub-leaf 0 */
    uint32_t l7_edx;
    uint32_t l7s1_eax; /* leaf 7 sub-leaf 1 (0 when absent) */
} sb_cpuid_regs;

typedef struct sb_cpu_ident {
    char vendor[16];             /* "GenuineIntel", "AuthenticAMD", ... */
    char brand[64];              /* leaves 0x80000002-4, spaces trimmed */
    int family, model, stepping; /* display values; -1 when unknown */
    char hypervisor[16]; /* leaf 0x40000000 signature; "" on bare metal */
} sb_cpu_ident;

/* Reads the registers and XCR0 (0 when the OS has not set OSXSAVE).
 * Returns false on a processor without cpuid (non-x86). */
bool sb_cpuid_read(sb_cpuid_regs *r, uint64_t *xcr0);

/* What the CPU implements (cpu) and what this process may use (usable:
 * the CPU has it and the OS saves its register state). Either may be NULL. */
void sb_isa_from_regs(const sb_cpuid_regs *r, uint64_t xcr0, sb_isa *cpu,
                      sb_isa *usable);

void sb_cpu_identify(sb_cpu_ident *id);

/* Latency in cycles of a 64-bit integer multiply, for the clock's
 * multiply chain (clock.c); 0 when not known. x86: by vendor, display
 * family and model, and on a hybrid part the core type of cpuid leaf 1Ah
 * (0x20 E-core, 0x40 P-core, 0 not hybrid). Arm: by MIDR implementer and
 * part number. */
int sb_x86_mul_latency(bool intel, bool amd, int family, int model,
                       int core_type);
int sb_arm_mul_latency(unsigned implementer, unsigned part);

/* What /proc/cpuinfo says of an Arm CPU (Linux): the MIDR's implementer
 * and part of the first CPU listed (0 when absent: another architecture,
 * or no file), and whether its Features name bf16. */
void sb_arm_cpuinfo(unsigned *implementer, unsigned *part, bool *bf16);

#endif
