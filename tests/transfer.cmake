# The transfer area from the CLI: the host backend measures and validates;
# the CUDA backend, without a device, skips with the driver's reason and
# the run still succeeds.
add_test(NAME cli.transfer_host COMMAND bash -c
  "set -o pipefail; ${SOLBENCH} run --no-store --area transfer --backend cpu -p size=1MiB --min-time 0.02 | grep 'transfer.bidir@host.*yes' >/dev/null")
# transfer.latency on the host backend: a chase through the backend's
# device buffer validates and reports its latency in ns.
add_test(NAME cli.transfer_latency_host COMMAND bash -c
  "f=$(mktemp) && trap 'rm -f $f' EXIT && ${SOLBENCH} run --no-store --quiet --bench transfer.latency --backend cpu -p size=1MiB --min-time 0.02 --json $f && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[\"results\"]; assert len(r)==1 and r[0][\"valid\"] and r[0][\"backend\"]==\"host\" and r[0][\"metrics\"][\"latency_ns\"][\"value\"]>0, r' $f")
if(SB_HAVE_CUDA)
add_test(NAME cli.transfer_cuda_skip COMMAND bash -c
  "if nvidia-smi -L >/dev/null 2>&1; then echo 'a GPU is present: skip path not exercised'; exit 77; fi; \
   out=$(${SOLBENCH} run --no-store --backend cuda --bench transfer.h2d -p size=4KiB,1MiB) || exit 1; \
   echo \"$out\" | grep -q 'skipped: no CUDA device'")
set_tests_properties(cli.transfer_cuda_skip PROPERTIES SKIP_RETURN_CODE 77)
endif()
# engine=sm (SM-kernel copies through mapped host memory) is the CUDA
# device's alone: the host backend skips it with the reason, and so does
# any backend for pageable host memory, which no kernel can read.
add_test(NAME cli.transfer_engine_sm_skip COMMAND bash -c
  "set -o pipefail; out=$(${SOLBENCH} run --no-store --bench transfer.h2d --backend cpu -p size=1MiB -p engine=sm --min-time 0.02) || exit 1; \
   echo \"$out\" | grep -q 'skipped: engine=sm: SM-kernel copies need a CUDA device'")
