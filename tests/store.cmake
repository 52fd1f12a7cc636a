# Results store and regression gate, end to end (tests/scripts/store_e2e.sh):
# the gate under load and quiet, crash safety and concurrency, import and
# export and refusal of bad files. The statistics and the store library are
# unit.test_mwu and unit.test_store.
foreach(part gate crash io lock multi)
  add_test(NAME store.e2e_${part}
    COMMAND bash ${SB_TEST_DIR}/scripts/store_e2e.sh ${SOLBENCH} ${part})
  set_tests_properties(store.e2e_${part} PROPERTIES TIMEOUT 120
    FAIL_REGULAR_EXPRESSION "FAIL:")
endforeach()
# The gate measures timing and must not share the cores with other tests.
set_tests_properties(store.e2e_gate PROPERTIES RUN_SERIAL TRUE)
