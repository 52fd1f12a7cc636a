#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz (docs/FUZZ.md), one after the
# other, each for SECONDS on a copy of its checked-in corpus (the checked-in
# corpus never grows), with its dictionary, -timeout=10 and the sanitizers'
# leak check; prints libFuzzer's final stats and a summary line per harness
# (executions, exec/s, cov, ft, corpus), and fails if any harness crashed,
# hung, leaked or ran out of memory. Reproducers are kept under
# BUILD/fuzz/<harness>/ (crash-*, leak-*, timeout-*, oom-*).
#
#   tests/fuzz/run.sh BUILD SECONDS [HARNESS...]
#
# BUILD is the folder of the SOLBENCH_FUZZ=ON build (make fuzz: build-fuzz).
# The readers that take a path get the input through a temporary file under
# $TMPDIR; unset, a tmpfs (/dev/shm) is used when there is one, /tmp else.
set -uo pipefail
cd "$(dirname "$0")/../.."

build=${1:?usage: tests/fuzz/run.sh BUILD SECONDS [HARNESS...]}
seconds=${2:?usage: tests/fuzz/run.sh BUILD SECONDS [HARNESS...]}
shift 2
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(fuzz_param fuzz_run fuzz_workload fuzz_hw fuzz_trace fuzz_plugin)

if [ -z "${TMPDIR:-}" ]; then
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then
        export TMPDIR=/dev/shm
    else
        export TMPDIR=/tmp
    fi
fi
# Leaks are errors; UBSan stops at the first report (the build has
# -fno-sanitize-recover) and prints where.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

summary=()
failed=0
for h in "${harnesses[@]}"; do
    exe="$build/tests/fuzz/$h"
    if [ ! -x "$exe" ]; then
        echo "fuzz: $exe not built (make fuzz builds it)" >&2
        exit 2
    fi
    out="$build/fuzz/$h"
    rm -rf "$out"
    mkdir -p "$out/corpus"
    cp tests/fuzz/corpus/"$h"/* "$out/corpus/" 2>/dev/null || true
    args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
          -print_final_stats=1 -artifact_prefix="$out/")
    [ -f "tests/fuzz/dict/$h.dict" ] && args+=(-dict="tests/fuzz/dict/$h.dict")
    case $h in
        fuzz_run) args+=(-max_len=16384) ;;      # run documents of a few KiB
        fuzz_workload) args+=(-max_len=8192) ;;
        *) args+=(-max_len=4096) ;;
    esac
    echo "== $h: ${seconds} s on a copy of tests/fuzz/corpus/$h ($(ls "$out/corpus" | wc -l) seeds)"
    start=$(date +%s)
    "$exe" "${args[@]}" "$out/corpus" >"$out/log" 2>&1 &
    pid=$!
    wait $pid
    rc=$?
    # its temporary files, left behind when it stopped on a finding
    rm -f "$TMPDIR/solbench-fuzz-${h#fuzz_}-$pid".*
    took=$(( $(date +%s) - start ))
    # libFuzzer's last status line and its final stats.
    done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED|NEW|REDUCE|pulse)' "$out/log" | tail -1)
    grep -E '^(stat::|Done [0-9]+ runs)' "$out/log"
    [ -n "$done_line" ] && echo "$done_line"
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -1)
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' <<<"$done_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' <<<"$done_line")
    corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\) .*/\1/p' <<<"$done_line")
    status=ok
    if [ $rc -ne 0 ]; then
        status="FAILED (exit $rc)"
        failed=1
        echo "-- $h failed; the end of $out/log:"
        tail -n 60 "$out/log"
        ls "$out" | grep -E '^(crash|leak|timeout|oom|slow-unit)-' | sed "s|^|   reproducer: $out/|"
    fi
    summary+=("$(printf '%-14s %-18s %5ss  execs %-10s exec/s %-7s cov %-6s ft %-7s corp %s' \
        "$h" "$status" "$took" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")")
done
echo "== fuzz summary ($(date -u +%Y-%m-%dT%H:%MZ), ${seconds} s each; logs in $build/fuzz/)"
printf '%s\n' "${summary[@]}"
exit $failed
