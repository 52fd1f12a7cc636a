# Compute area end to end: peak then GEMM with MFU, skipped ISAs, bad input.
add_test(NAME cli.compute COMMAND bash ${SB_TEST_DIR}/scripts/compute_cli.sh ${SOLBENCH})
set_tests_properties(cli.compute PROPERTIES TIMEOUT 120)
