# The moe and ops areas end to end: every benchmark validates on small
# shapes (fp32 and bf16), metrics follow the documented formulas, one-expert
# routing works, bad parameters exit 2 naming the parameter. Kernel
# verification, planted errors, the tie rule and formulas in detail are
# unit.test_moe and unit.test_ops.
add_test(NAME cli.moe_ops COMMAND bash ${SB_TEST_DIR}/scripts/moe_ops_cli.sh ${SOLBENCH})
set_tests_properties(cli.moe_ops PROPERTIES TIMEOUT 120)

# The ops' kernels for the ISAs this machine's -march=native build does not
# take: unit.test_ops again, each time linked with its own copy of
# ops_cpu.c compiled under other flags (its object comes before the
# library's, whose ops_cpu.o is then never pulled in), and checking that
# the copy runs the kernels it was built for (sb_ops_cpu_isa):
#   test_ops_portable   -mno-avx2 -mno-fma -mno-avx512f: the portable kernels,
#                       the fallback of a CPU without AVX2 and FMA;
#   test_ops_avx2       -mavx2 -mfma -mno-avx512f: the AVX2 kernels, which
#                       an AVX-512 machine (or a build without
#                       SOLBENCH_NATIVE) would otherwise not run;
#   test_ops_avx512emu  the AVX-512 kernels with AVX512_BF16 on any AVX2
#                       machine: tests/emu/avx512_emu.h force-included
#                       emulates the intrinsics (SB_OPS_EMULATE_AVX512);
#                       tests/emu/avx512_emu_check.c, run first, checks the
#                       emulation against hand-computed lanes;
#   test_ops_avx512emu_nobf16  the same without AVX512_BF16 (the stores'
#                       integer rounding, as on Skylake-SP).
# The AVX2 and emulated AVX-512 copies are built with -mavx2 -mfma whatever
# the build's own flags (sb_isa_variant's AVX2: a SOLBENCH_NATIVE=OFF
# build targets the baseline x86-64), and skip on a CPU without them.
# (sb_isa_variant: tests/CMakeLists.txt.)
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang" AND
   CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(SB_OPS TEST test_ops.c KERNEL src/bench/ops/ops_cpu.c)
  sb_isa_variant(test_ops_portable ${SB_OPS} FLAGS -mno-avx2 -mno-fma
    -mno-avx512f TEST_DEFS SB_TEST_PORTABLE_OPS)
  sb_isa_variant(test_ops_avx2 ${SB_OPS} AVX2 FLAGS -mno-avx512f
    TEST_DEFS SB_TEST_OPS_AVX2 TEST_FLAGS -mno-avx512f)
  # -Wno-psabi: the emulation passes 64-byte vectors by value without
  # AVX-512 (see avx512_emu.h)
  set(SB_OPS_EMU_FLAGS "SHELL:-include ${SB_TEST_DIR}/emu/avx512_emu.h"
    -Wno-psabi)
  sb_isa_variant(test_ops_avx512emu ${SB_OPS} AVX2 FLAGS ${SB_OPS_EMU_FLAGS}
    KERNEL_DEFS SB_OPS_EMULATE_AVX512
    TEST_DEFS SB_TEST_OPS_AVX512EMU
    SOURCES ${SB_TEST_DIR}/emu/avx512_emu_check.c)
  sb_isa_variant(test_ops_avx512emu_nobf16 ${SB_OPS} AVX2 FLAGS ${SB_OPS_EMU_FLAGS}
    KERNEL_DEFS SB_OPS_EMULATE_AVX512 SB_OPS_EMULATE_NO_BF16
    TEST_DEFS SB_TEST_OPS_AVX512EMU SB_TEST_OPS_AVX512EMU_NO_BF16
    SOURCES ${SB_TEST_DIR}/emu/avx512_emu_check.c)
  target_compile_options(test_ops_avx512emu PRIVATE -Wno-psabi)
  target_compile_options(test_ops_avx512emu_nobf16 PRIVATE -Wno-psabi)
endif()
