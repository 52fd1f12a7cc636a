# The moe and ops areas end to end: every benchmark validates on small
# shapes (fp32 and bf16), metrics follow the documented formulas, one-expert
# routing works, bad parameters exit 2 naming the parameter. Kernel
# verification, planted errors, the tie rule and formulas in detail are
# unit.test_moe and unit.test_ops.
add_test(NAME cli.moe_ops COMMAND bash ${SB_TEST_DIR}/scripts/moe_ops_cli.sh ${SOLBENCH})
set_tests_properties(cli.moe_ops PROPERTIES TIMEOUT 120)

# The ops' portable kernels: unit.test_ops again, with ops_cpu.c compiled
# for a CPU without AVX2 and FMA, so the fallback the AVX2 kernels replace
# on this machine is built and verified too (its object comes before the
# library's, whose ops_cpu.o is then never pulled in).
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang" AND
   CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_executable(test_ops_portable ${SB_TEST_DIR}/unit/test_ops.c
    ${CMAKE_SOURCE_DIR}/src/bench/ops/ops_cpu.c)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/bench/ops/ops_cpu.c
    TARGET_DIRECTORY test_ops_portable PROPERTIES
    COMPILE_OPTIONS "-mno-avx2;-mno-fma;-mno-avx512f")
  target_include_directories(test_ops_portable PRIVATE ${CMAKE_SOURCE_DIR}/src
    ${SB_TEST_DIR})
  target_link_libraries(test_ops_portable PRIVATE solbench_lib)
  target_compile_definitions(test_ops_portable PRIVATE SB_TEST_PORTABLE_OPS)
  add_test(NAME unit.test_ops_portable COMMAND test_ops_portable)
endif()
