# Command-line tests of the attention benchmarks (bad shapes exit 2 naming
# the parameter; a small ragged run verifies and reports every metric).
add_test(NAME cli.attention COMMAND bash ${SB_TEST_DIR}/scripts/attention_cli.sh ${SOLBENCH})
set_tests_properties(cli.attention PROPERTIES TIMEOUT 120)

# The attention kernels' other ISA paths: AVX2 without AVX-512, and the
# portable scalar micro-kernels (sb_isa_variant in tests/CMakeLists.txt).
sb_isa_variant(test_attention_avx2 test_attention.c src/backend/cpu/attn_cpu.c
  "-mno-avx512f")
sb_isa_variant(test_attention_portable test_attention.c
  src/backend/cpu/attn_cpu.c "-mno-avx2;-mno-fma;-mno-avx512f")
# The 16-lane (AVX-512) copy of the paged micro-kernels made from pairs of
# AVX2 vectors, so its loops, tails and prefetch order are verified on a
# CPU without AVX-512 (where the CPU has it, the native copy runs in
# unit.test_attention itself).
sb_isa_variant(test_attention_v16emu test_attention.c
  src/backend/cpu/attn_cpu.c "-mno-avx512f;-DSB_ATTN_EMULATE_AVX512")
