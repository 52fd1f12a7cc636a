# The PJRT backend on the CPU plugin `make deps` fetches: compute.gemm
# through a StableHLO program verifies in fp32 and bf16 (and the memory,
# transfer and collective programs verify), a planted wrong
# element fails the run, a plugin that does not load is a skipped result,
# bad input exits 2, and beside the CPU's GEMM the share of it is reported
# (tests/scripts/pjrt_cli.sh; skipped, exit 77, without a header or a
# plugin). The plugin keeps its client's memory to exit, so sanitizer
# builds check these runs for memory errors, not leaks.
add_test(NAME cli.pjrt COMMAND bash ${SB_TEST_DIR}/scripts/pjrt_cli.sh ${SOLBENCH})
set_tests_properties(cli.pjrt PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
  ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
