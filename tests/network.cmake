# Network area tests: every collective and point-to-point benchmark
# validates under 2 and 4 ranks (4 oversubscribed on small machines), over
# shared memory and over TCP on loopback; a planted wrong element fails the
# run; a stalled rank ends the job at --timeout with one message; bad input
# exits 2; one rank alone gets the skip message. The formulas are
# unit.test_network_model, which builds with or without MPI.
if(SB_HAVE_MPI)
  # The MPI libraries keep memory from MPI_Init to exit, in stacks the
  # leak checker cannot unwind (no frame pointers, unloaded components):
  # sanitizer builds check these runs for memory errors, not leaks.
  set(SB_NET_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;ASAN_OPTIONS=detect_leaks=0")
  set(SB_NET_RUN bash ${SB_TEST_DIR}/scripts/net_run.sh ${MPIEXEC_EXECUTABLE})
  set(SB_NET_FAIL bash ${SB_TEST_DIR}/scripts/net_fail.sh)
  # Small sizes, a size that does not split evenly (100 B), few iterations.
  set(SB_NET_SMALL -p size=8B,100B,4KiB,64KiB -p iters=10 -p warmup=1)

  foreach(np 2 4)
    foreach(tr shm tcp)
      add_test(NAME network.np${np}.${tr}
        COMMAND ${SB_NET_RUN} ${np} ${tr} 10 ${SOLBENCH} --area network
        ${SB_NET_SMALL} -p link_GBps=10)
    endforeach()
  endforeach()

  # Three ranks (not a power of two, distinct ring neighbours), other
  # types, operators and in-place; then a non-zero root.
  add_test(NAME network.np3.variants
    COMMAND ${SB_NET_RUN} 3 shm 20 ${SOLBENCH}
      --bench network.allreduce,network.reduce_scatter,network.reduce,network.bcast,network.allgather,network.alltoall,network.sendrecv
      -p size=12B,4KiB -p iters=5 -p warmup=1 -p dtype=double,int32
      -p op=max,min -p inplace=true)
  add_test(NAME network.np3.root
    COMMAND ${SB_NET_RUN} 3 tcp 3 ${SOLBENCH}
      --bench network.reduce,network.bcast -p size=12B,4KiB -p iters=5
      -p warmup=1 -p op=sum,max -p root=2)
  # Distinct receive buffers for the bw window.
  add_test(NAME network.np2.bw_slots
    COMMAND ${SB_NET_RUN} 2 shm 2 ${SOLBENCH} --bench network.bw,network.bibw
      -p size=1KiB,256KiB -p iters=5 -p slots=0 -p window=8)

  # A planted wrong element on one rank is counted and fails the run.
  add_test(NAME network.plant_error
    COMMAND ${SB_NET_FAIL} nonzero "network.allreduce failed its verification"
      60 ${MPIEXEC_EXECUTABLE} -np 2 ${SOLBENCH} run
      --bench network.allreduce,network.alltoall --no-store
      -p size=4KiB -p iters=5 -p plant_error=1)
  # A rank that stops answering: one message naming bench and size, then
  # MPI_Abort, well before the test's own limit.
  add_test(NAME network.timeout
    COMMAND ${SB_NET_FAIL} nonzero "network.allreduce size=4KiB: no result after 2 s .--timeout."
      40 ${MPIEXEC_EXECUTABLE} -np 2 ${SOLBENCH} run
      --bench network.allreduce --no-store --timeout 2
      -p size=4KiB -p iters=5 -p stall_rank=1)
  # A rank that stops before MPI_Init (SOLBENCH_STALL_START_RANK): the
  # others wait in MPI_Init; --timeout holds from the start, one line.
  add_test(NAME network.start_timeout
    COMMAND ${SB_NET_FAIL} nonzero "MPI did not start within 3 s .--timeout."
      40 ${MPIEXEC_EXECUTABLE} -np 2 -x SOLBENCH_STALL_START_RANK=1
      ${SOLBENCH} run --bench network.allreduce --no-store --timeout 3
      -p size=4KiB -p iters=5)
  # Bad input: a root beyond the ranks, exit 2 before anything runs.
  add_test(NAME network.bad_root
    COMMAND ${SB_NET_FAIL} 2 "root=5: must be below the number of ranks .2."
      60 ${MPIEXEC_EXECUTABLE} -np 2 ${SOLBENCH} run
      --bench network.bcast --no-store -p root=5 -p size=8B)
  # A bad option under a launcher: every rank parses it the same, rank 0
  # alone says so (one solbench line, not one per rank).
  add_test(NAME network.bad_option_once
    COMMAND bash -c "out=$(${MPIEXEC_EXECUTABLE} -np 2 ${SOLBENCH} run --no-store --bench network.pingpong --threads 0 2>&1); test $(printf '%s\\n' \"$out\" | grep -c '^solbench run: --threads 0') -eq 1")
  # A point that would move more than 4 TiB is refused at planning.
  add_test(NAME network.bw_too_big
    COMMAND ${SB_NET_FAIL} 2 "more than 4 TiB; lower the size or the window"
      60 ${MPIEXEC_EXECUTABLE} -np 2 ${SOLBENCH} run
      --bench network.bw --no-store -p size=1GiB -p window=4096)
  # One rank, no launcher: skipped with the message, exit 0.
  add_test(NAME network.single_rank_skip
    COMMAND ${SB_NET_FAIL} 0 "skipped: needs 2 or more ranks — run under mpirun"
      60 ${SOLBENCH} run --bench network.allreduce --no-store -p size=8B)

  set_tests_properties(network.np2.shm network.np2.tcp network.np4.shm
    network.np4.tcp network.np3.variants network.np3.root network.np2.bw_slots
    network.plant_error network.timeout network.start_timeout network.bad_root
    network.bad_option_once network.bw_too_big
    network.single_rank_skip PROPERTIES ENVIRONMENT "${SB_NET_ENV}"
    TIMEOUT 120)
endif()
