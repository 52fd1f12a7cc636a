# Command-line tests of the attention benchmarks (bad shapes exit 2 naming
# the parameter; a small ragged run verifies and reports every metric).
add_test(NAME cli.attention COMMAND bash ${SB_TEST_DIR}/scripts/attention_cli.sh ${SOLBENCH})
set_tests_properties(cli.attention PROPERTIES TIMEOUT 120)
