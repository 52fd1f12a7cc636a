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

# history: one line a run by default (the results under --verbose, every
# row under --json), the baselines that name a run on its line.
add_test(NAME store.history COMMAND bash -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; export SOLBENCH_DB=$d/r.db; \
   for i in 1 2 3; do ${SOLBENCH} run --quiet --bench memory.triad,memory.read -p size=1MiB --min-time 0.01 --repeat 3 >/dev/null; done; \
   ${SOLBENCH} baseline set nightly >/dev/null; \
   ${SOLBENCH} history > $d/h; cat $d/h; \
   test $(wc -l < $d/h) -eq 4; \
   head -2 $d/h | tail -1 | grep -q '2 measured.*memory.*baseline: nightly'; \
   ! grep -q 'memory.triad' $d/h; \
   ${SOLBENCH} history --verbose --last 1 > $d/v; \
   test $(wc -l < $d/v) -eq 4; grep -q '^  memory.triad  *size=1MiB .*GB/s' $d/v; \
   ${SOLBENCH} history --bench memory.triad --last 2 | grep -c 'GB/s  cv' | grep -qx 2; \
   ${SOLBENCH} history --json $d/h.json; \
   python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); assert len(d)==3 and d[0]['baselines']==['nightly'] and len(d[0]['results'])==2, d\" $d/h.json; \
   ! ${SOLBENCH} history --json $d/x.json --verbose 2>/dev/null")

# The baseline flow as a user meets it (tests/scripts/baseline_flow.sh):
# self-comparison refused, a kernel update still compares, another machine
# refused with `baseline rebase`, a refused check stores nothing and still
# writes JUnit, a 2-rank baseline names its mpirun line.
add_test(NAME store.baseline_flow
  COMMAND bash ${SB_TEST_DIR}/scripts/baseline_flow.sh ${SOLBENCH})
set_tests_properties(store.baseline_flow PROPERTIES TIMEOUT 300
  FAIL_REGULAR_EXPRESSION "FAIL:")
# The same flow on PostgreSQL (skipped, 77, where no server starts).
add_test(NAME store.baseline_flow_pg
  COMMAND bash ${SB_TEST_DIR}/scripts/baseline_flow.sh ${SOLBENCH} pg)
set_tests_properties(store.baseline_flow_pg PROPERTIES TIMEOUT 300
  SKIP_RETURN_CODE 77 FAIL_REGULAR_EXPRESSION "FAIL:")

# history --changes (tests/scripts/history_changes.sh): stores of known
# series imported in time order — a 10 % step found at its run as a
# regression, a step up as an improvement, a flat series without one.
add_test(NAME store.history_changes
  COMMAND bash ${SB_TEST_DIR}/scripts/history_changes.sh ${SOLBENCH})
set_tests_properties(store.history_changes PROPERTIES TIMEOUT 300
  FAIL_REGULAR_EXPRESSION "FAIL:")
add_test(NAME store.history_changes_pg
  COMMAND bash ${SB_TEST_DIR}/scripts/history_changes.sh ${SOLBENCH} pg)
set_tests_properties(store.history_changes_pg PROPERTIES TIMEOUT 300
  SKIP_RETURN_CODE 77 FAIL_REGULAR_EXPRESSION "FAIL:")

# publish (tests/scripts/publish.sh): the static site of a store of known
# series — index, a page per series linked from it, the change point on
# the page's SVG and marked on the index, a commit `<b>&"` escaped,
# bad input refused with exit 2; in headless Chromium the plot and the
# marker are in the DOM.
add_test(NAME store.publish
  COMMAND bash ${SB_TEST_DIR}/scripts/publish.sh ${SOLBENCH})
set_tests_properties(store.publish PROPERTIES TIMEOUT 300
  FAIL_REGULAR_EXPRESSION "FAIL:")

# The store on each driver (tests/scripts/store_drivers.sh): one suite on
# a SQLite file and on a private PostgreSQL cluster; on PostgreSQL many
# writers at once, writers killed and the server stopped mid-commit, and
# a SQLite store imported. Skipped (77) where no server can be started.
foreach(part sqlite pg writers kill import)
  add_test(NAME store.driver_${part}
    COMMAND bash ${SB_TEST_DIR}/scripts/store_drivers.sh ${SOLBENCH} ${part})
  set_tests_properties(store.driver_${part} PROPERTIES TIMEOUT 300
    SKIP_RETURN_CODE 77 FAIL_REGULAR_EXPRESSION "FAIL:")
endforeach()
# The same unit tests of the store library on PostgreSQL (those that hold
# for every driver; SQLite's file checks stay with unit.test_store).
add_test(NAME unit.test_store_pg
  COMMAND bash ${SB_TEST_DIR}/scripts/store_pg_unit.sh $<TARGET_FILE:test_store>)
set_tests_properties(unit.test_store_pg PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
