# Command-line tests of the attention benchmarks (bad shapes exit 2 naming
# the parameter; a small ragged run verifies and reports every metric).
add_test(NAME cli.attention COMMAND bash ${SB_TEST_DIR}/scripts/attention_cli.sh ${SOLBENCH})
set_tests_properties(cli.attention PROPERTIES TIMEOUT 120)

# The attention kernels' other ISA paths: AVX2 without AVX-512, and the
# portable scalar micro-kernels (sb_isa_variant in tests/CMakeLists.txt).
set(SB_ATTN TEST test_attention.c KERNEL src/backend/cpu/attn_cpu.c)
sb_isa_variant(test_attention_avx2 ${SB_ATTN} AVX2 FLAGS -mno-avx512f
  TEST_DEFS SB_TEST_ATTN_AVX2 TEST_FLAGS -mno-avx512f)
sb_isa_variant(test_attention_portable ${SB_ATTN}
  FLAGS -mno-avx2 -mno-fma -mno-avx512f TEST_DEFS SB_TEST_ATTN_PORTABLE)
# The 16-lane (AVX-512) copy of the paged micro-kernels made from pairs of
# AVX2 vectors, so its loops, tails and prefetch order are verified on a
# CPU without AVX-512 (where the CPU has it, the native copy runs in
# unit.test_attention itself).
sb_isa_variant(test_attention_v16emu ${SB_ATTN} AVX2 FLAGS -mno-avx512f
  KERNEL_DEFS SB_ATTN_EMULATE_AVX512 TEST_DEFS SB_TEST_ATTN_V16EMU
  TEST_FLAGS -mno-avx512f)
