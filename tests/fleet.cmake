# The fleet (docs/FLEET.md): unit.test_fleet holds the diagnosis; this
# runs `solbench fleet run` on four test hosts made as network namespaces
# (root; skipped, 77, where they cannot be made). Serial: the hosts share
# this machine's CPUs.
if(SB_HAVE_MPI)
  add_test(NAME cli.fleet_netns
    COMMAND bash ${SB_TEST_DIR}/scripts/fleet_netns.sh ${SOLBENCH})
  # as the network tests: the MPI library keeps memory to exit in stacks
  # the leak checker cannot unwind, so sanitizer builds check these runs
  # for memory errors, not leaks (unit.test_fleet checks the diagnosis's)
  set_tests_properties(cli.fleet_netns PROPERTIES TIMEOUT 900
    SKIP_RETURN_CODE 77 RUN_SERIAL TRUE FAIL_REGULAR_EXPRESSION "FAIL:"
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endif()
