# CLI tests of the measurement core: list, bad input, the JSON schema.
# (Each exits non-zero when the command fails or its output lacks the
# pattern: a pass regular expression alone would ignore the exit code.
# Under pipefail a grep reading solbench's output reads all of it: grep -q
# would stop at the first match and solbench could die of SIGPIPE.)
add_test(NAME cli.list COMMAND bash -c
  "set -o pipefail; ${SOLBENCH} list | grep -A3 '^memory\\.triad' | grep '^ *size ' >/dev/null")
add_test(NAME cli.list_area COMMAND bash -c
  "set -o pipefail; out=$(${SOLBENCH} list --area compute) && \
   echo \"$out\" | grep -q 'compute\\.gemm' && ! echo \"$out\" | grep -q 'memory\\.triad'")
add_test(NAME cli.help COMMAND bash -c
  "set -o pipefail; ${SOLBENCH} --help | tr '\\n' ' ' | grep 'run.*list.*sysinfo' >/dev/null && \
   ${SOLBENCH} help run | grep '^usage: solbench run' >/dev/null && \
   ${SOLBENCH} list -h | grep '^usage: solbench list' >/dev/null")
add_test(NAME cli.bad_input COMMAND bash ${SB_TEST_DIR}/scripts/cli_errors.sh ${SOLBENCH})
add_test(NAME cli.json_schema COMMAND bash -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; \
   ${SOLBENCH} run --no-store --quiet --bench memory.triad -p size=64MiB --min-time 0.1 --json $d/r.json --csv $d/r.csv; \
   python3 ${SB_TEST_DIR}/scripts/check_schema.py $d/r.json memory.triad; \
   head -1 $d/r.csv | grep -q '^run_id,bench,area' && test $(wc -l < $d/r.csv) -eq 2")
set_tests_properties(cli.json_schema PROPERTIES TIMEOUT 120)

# --interleave: the points take their samples in rounds (every point the
# same count, at least --repeat), all verify, and the run's config says so;
# a run one point after the other has no "sampling" key (its config is as
# before the option).
add_test(NAME cli.interleave COMMAND bash -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; \
   ${SOLBENCH} run --no-store --quiet --backend cpu --interleave --bench memory.triad,memory.read,ops.rmsnorm \
     -p size=8MiB -p tokens=64 -p d=512 --repeat 7 --min-time 0.05 --json $d/i.json; \
   ${SOLBENCH} run --no-store --quiet --bench memory.read -p size=8MiB --repeat 3 \
     --min-time 0 --json $d/s.json; \
   python3 -c \"import json, sys; i = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2])); \
n = [len(r['samples_s']) for r in i['results']]; \
assert [r['bench'] for r in i['results']] == ['memory.triad', 'memory.read', 'ops.rmsnorm'], i['results']; \
assert all(r['valid'] and r['metrics']['GBps']['value'] > 0 for r in i['results']); \
assert len(set(n)) == 1 and n[0] >= 7, n; \
assert i['config']['sampling'] == 'interleaved'; \
assert 'sampling' not in s['config']\" $d/i.json $d/s.json")
set_tests_properties(cli.interleave PROPERTIES TIMEOUT 120)

# scripts/install-deps.sh finds an optional package (oneDNN) in the archive
# even when `apt-cache policy` prints more than a pipe buffer (stubs on PATH;
# nothing is installed).
add_test(NAME setup.install_deps_plan COMMAND bash ${SB_TEST_DIR}/scripts/install_deps_plan.sh)

# Light start: no heavy library linked (cuBLAS, cuBLASLt, NCCL, the shared
# CUDA runtime, oneDNN are opened where first needed), and the commands
# that measure nothing peak under 40 MB. Not in the sanitizer build, which
# links oneDNN at start by design (CMakeLists.txt) and carries the
# sanitizers' own memory.
if(NOT SOLBENCH_SANITIZE)
  add_test(NAME cli.light_start COMMAND python3 ${SB_TEST_DIR}/scripts/light_start.py ${SOLBENCH})
endif()

# run --plan: the points a run would measure and their memory, checked as
# a run checks them; nothing measured, nothing stored.
add_test(NAME cli.run_plan COMMAND bash -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; \
   ${SOLBENCH} run --suite full --plan --db $d/r.db > $d/p; \
   tail -1 $d/p | grep -q '^[0-9]* points; the largest allocates .*nothing measured'; \
   grep -q '^memory.triad  *2GiB  *size=2GiB' $d/p; test ! -e $d/r.db; \
   ! ${SOLBENCH} run --plan -p size=-5 --bench memory.triad 2>/dev/null")

# The README as a test: every command line of its usage sections, as
# written, in a scratch store (tests/scripts/readme.sh says what it
# adapts: mpirun's flags for a root CI machine, the full suite as --plan).
add_test(NAME readme.lines COMMAND bash ${SB_TEST_DIR}/scripts/readme.sh ${SOLBENCH})
set_tests_properties(readme.lines PROPERTIES TIMEOUT 900 LABELS slow
  FAIL_REGULAR_EXPRESSION "FAIL")

# --json - and --csv -: the document alone on stdout (for a pipe), the
# tables on stderr; both at once refused.
add_test(NAME cli.stdout_documents COMMAND bash -c
  "set -e -o pipefail; \
   ${SOLBENCH} run --no-store --bench memory.triad -p size=1MiB --min-time 0.01 --json - 2>/dev/null | \
     python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"results\"][0][\"bench\"]==\"memory.triad\"'; \
   test $(${SOLBENCH} run --no-store --bench memory.triad -p size=1MiB --min-time 0.01 --csv - 2>/dev/null | wc -l) -eq 2; \
   ${SOLBENCH} run --no-store --bench memory.triad -p size=1MiB --min-time 0.01 --csv - 2>&1 >/dev/null | grep '^memory.triad' >/dev/null; \
   ! ${SOLBENCH} run --no-store --bench memory.triad --json - --csv - 2>/dev/null")

# Stability beside a process spinning on every core: results unstable with
# the load named, the JSON's stable/stability, --require-stable exits 1.
add_test(NAME cli.stability COMMAND bash ${SB_TEST_DIR}/scripts/stability_cli.sh ${SOLBENCH})
set_tests_properties(cli.stability PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
  FAIL_REGULAR_EXPRESSION "FAIL:")

# The library installed and embedded: examples/embed.c built against the
# installed headers and solbench.pc, linked to libsolbench.so, run.
# Not in the sanitizer build: its shared library carries the sanitizer
# runtime of the linker that made it (nvcc's host compiler where CUDA is
# built), which a program of its own cannot match.
if(NOT SOLBENCH_SANITIZE)
  add_test(NAME lib.install_example COMMAND bash
    ${SB_TEST_DIR}/scripts/install_example.sh ${CMAKE_BINARY_DIR}
    ${CMAKE_SOURCE_DIR} ${CMAKE_C_COMPILER})
  set_tests_properties(lib.install_example PROPERTIES TIMEOUT 300
    FAIL_REGULAR_EXPRESSION "FAIL:")
endif()

# E-Divisive change points of a history: unit.test_changepoint (seeded
# series; the permutation tests take well under a second).
set_tests_properties(unit.test_changepoint PROPERTIES TIMEOUT 60)
