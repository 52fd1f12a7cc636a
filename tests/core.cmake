# CLI tests of the measurement core: list, bad input, the JSON schema.
add_test(NAME cli.list COMMAND ${SOLBENCH} list)
set_tests_properties(cli.list PROPERTIES
  PASS_REGULAR_EXPRESSION "memory\\.triad.*size")
add_test(NAME cli.list_area COMMAND ${SOLBENCH} list --area compute)
set_tests_properties(cli.list_area PROPERTIES
  PASS_REGULAR_EXPRESSION "compute\\.gemm" FAIL_REGULAR_EXPRESSION "memory\\.triad")
add_test(NAME cli.help COMMAND ${SOLBENCH} --help)
set_tests_properties(cli.help PROPERTIES PASS_REGULAR_EXPRESSION "run.*list.*sysinfo")
add_test(NAME cli.bad_input COMMAND bash ${SB_TEST_DIR}/scripts/cli_errors.sh ${SOLBENCH})
add_test(NAME cli.json_schema COMMAND bash -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; \
   ${SOLBENCH} run --no-store --quiet --bench memory.triad -p size=64MiB --min-time 0.1 --json $d/r.json --csv $d/r.csv; \
   python3 ${SB_TEST_DIR}/scripts/check_schema.py $d/r.json memory.triad; \
   head -1 $d/r.csv | grep -q '^run_id,bench,area' && test $(wc -l < $d/r.csv) -eq 2")
set_tests_properties(cli.json_schema PROPERTIES TIMEOUT 120)
