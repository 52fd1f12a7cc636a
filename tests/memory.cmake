# Memory area end to end: every kernel in fp64/fp32 with and without nt
# validates with the documented byte counts, a short sweep gives its curve
# and summary, bad parameters exit 2. Planted wrong elements, idempotence
# and the plateau rule are unit.test_memory and unit.test_plateau.
add_test(NAME cli.memory COMMAND bash ${SB_TEST_DIR}/scripts/memory_cli.sh ${SOLBENCH})
set_tests_properties(cli.memory PROPERTIES TIMEOUT 120)
