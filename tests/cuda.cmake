# The CUDA backend without a GPU (CI): every CUDA benchmark skips with the
# driver's reason and exit code 0, the fingerprint's devices entry says
# why, and bad input exits 2 before any device is asked for. The dtype
# table and the host-side arithmetic are unit.test_cuda_table.
if(SB_HAVE_CUDA)
  foreach(check skip sysinfo errors)
    add_test(NAME cli.cuda.${check}
      COMMAND bash ${SB_TEST_DIR}/scripts/cuda_cli.sh ${SOLBENCH} ${check})
    set_tests_properties(cli.cuda.${check} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
  endforeach()
endif()

# The GPU reference runs under data/reference/: they import, every result
# valid, and (with the CUDA backend built) each point's benchmark and
# parameters are still accepted.
add_test(NAME reference.gpu.import
  COMMAND bash ${SB_TEST_DIR}/scripts/reference_gpu.sh ${SOLBENCH} import)
set_tests_properties(reference.gpu.import PROPERTIES TIMEOUT 120)
if(SB_HAVE_CUDA)
  add_test(NAME reference.gpu.shapes
    COMMAND bash ${SB_TEST_DIR}/scripts/reference_gpu.sh ${SOLBENCH} shapes)
  set_tests_properties(reference.gpu.shapes PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
