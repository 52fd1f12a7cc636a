# CLI tests of the measurement core: list, bad input, the JSON schema.
# (Each exits non-zero when the command fails or its output lacks the
# pattern: a pass regular expression alone would ignore the exit code.)
add_test(NAME cli.list COMMAND bash -c
  "set -o pipefail; ${SOLBENCH} list | grep -A1 '^memory\\.triad' | grep -q '^ *size '")
add_test(NAME cli.list_area COMMAND bash -c
  "set -o pipefail; out=$(${SOLBENCH} list --area compute) && \
   echo \"$out\" | grep -q 'compute\\.gemm' && ! echo \"$out\" | grep -q 'memory\\.triad'")
add_test(NAME cli.help COMMAND bash -c
  "set -o pipefail; ${SOLBENCH} --help | tr '\\n' ' ' | grep -q 'run.*list.*sysinfo'")
add_test(NAME cli.bad_input COMMAND bash ${SB_TEST_DIR}/scripts/cli_errors.sh ${SOLBENCH})
add_test(NAME cli.json_schema COMMAND bash -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; \
   ${SOLBENCH} run --no-store --quiet --bench memory.triad -p size=64MiB --min-time 0.1 --json $d/r.json --csv $d/r.csv; \
   python3 ${SB_TEST_DIR}/scripts/check_schema.py $d/r.json memory.triad; \
   head -1 $d/r.csv | grep -q '^run_id,bench,area' && test $(wc -l < $d/r.csv) -eq 2")
set_tests_properties(cli.json_schema PROPERTIES TIMEOUT 120)
