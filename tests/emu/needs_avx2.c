/*
 * needs_avx2.c — linked into a test whose kernels are built with -mavx2
 * -mfma whatever the build's own flags (sb_isa_variant's AVX2 option,
 * tests/CMakeLists.txt): on a CPU without AVX2 and FMA the test is
 * skipped (exit 77) before main, instead of dying on an illegal
 * instruction.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void sb_needs_avx2(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("skipped: this CPU lacks AVX2 or FMA, which this copy of the "
               "kernels is built for\n");
        exit(77);
    }
}
