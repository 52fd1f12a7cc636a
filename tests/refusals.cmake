# Bad input on every path the tool reads or writes: exit code 2 and one
# line on stderr, at once (tests/scripts/refusals_cli.sh). A FIFO, a
# device or a socket named as any input or output file; a run document
# with a key given twice; control characters in arguments and an unknown
# predict --sweep key. The file helper itself is unit.test_fileio.
foreach(part special dupkeys oneline)
  add_test(NAME cli.refuse_${part}
    COMMAND bash ${SB_TEST_DIR}/scripts/refusals_cli.sh ${SOLBENCH} ${part})
  set_tests_properties(cli.refuse_${part} PROPERTIES TIMEOUT 300
    FAIL_REGULAR_EXPRESSION "FAIL:")
endforeach()
