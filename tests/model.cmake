# The roofline, workload model, predictions and report, end to end.
# (Unit tests tests/unit/test_roofline_classify.c and
# test_workload_presets.c are registered by the glob in CMakeLists.txt.)
add_test(NAME model.cli
  COMMAND bash ${SB_TEST_DIR}/scripts/report_predict_cli.sh ${SOLBENCH})
set_tests_properties(model.cli PROPERTIES TIMEOUT 120)
# Renders the HTML report in headless Chromium; fails with a clear message
# when chromium is not installed (scripts/install-deps.sh installs it).
add_test(NAME model.report_render
  COMMAND bash ${SB_TEST_DIR}/scripts/report_render.sh ${SOLBENCH})
set_tests_properties(model.report_render PROPERTIES TIMEOUT 240)

# The report of a real run in headless Chromium at 1400x1000: the verdict
# and a non-empty roofline on the first screen, no overlapping labels as
# the browser lays them out; no empty chart for a run with nothing to place.
add_test(NAME model.report_first_screen
  COMMAND bash ${SB_TEST_DIR}/scripts/report_first_screen.sh ${SOLBENCH})
set_tests_properties(model.report_first_screen PROPERTIES TIMEOUT 240
  FAIL_REGULAR_EXPRESSION "FAIL:")
