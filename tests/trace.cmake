# Profiler traces (solbench trace), end to end (tests/scripts/trace_e2e.sh):
# show, --json/--csv, import/list/show/diff/rm through the store, refusal of
# bad files and usage errors, unknown categories, against the fixtures in
# tests/data/trace.
add_test(NAME trace.e2e
  COMMAND bash ${SB_TEST_DIR}/scripts/trace_e2e.sh ${SOLBENCH}
          ${SB_TEST_DIR}/data/trace)
set_tests_properties(trace.e2e PROPERTIES TIMEOUT 120
  FAIL_REGULAR_EXPRESSION "FAIL:")
