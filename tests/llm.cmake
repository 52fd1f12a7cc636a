# The reference decoder and solbench validate, end to end. (The unit test
# tests/unit/test_refmodel.c is registered by the glob in CMakeLists.txt.)
add_test(NAME llm.validate_cli
  COMMAND bash ${SB_TEST_DIR}/scripts/validate_cli.sh ${SOLBENCH})
set_tests_properties(llm.validate_cli PROPERTIES TIMEOUT 300)
