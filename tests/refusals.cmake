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

# The fault paths (tests/scripts/faults_cli.sh): figures an imported
# document could not have measured, the memory rule and --force, a file
# size limit, read-only mounts and folders, a full disk, oversized and
# odd specs, a workload naming another file as its spec, a trace with two
# traceEvents. Mounts and other users where the machine allows them.
add_test(NAME cli.faults
  COMMAND bash ${SB_TEST_DIR}/scripts/faults_cli.sh ${SOLBENCH})
set_tests_properties(cli.faults PROPERTIES TIMEOUT 300
  FAIL_REGULAR_EXPRESSION "FAIL:")
