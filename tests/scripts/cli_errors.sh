#!/usr/bin/env bash
# Bad input gets exit code 2 and one line on stderr naming the problem,
# before anything is allocated or measured.
set -u
sb=$1
fail=0 pass=0
expect() { # expect WORD -- args...
  local word=$1; shift; shift
  local err rc
  err=$("$sb" "$@" 2>&1 >/dev/null); rc=$?
  local lines
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && printf '%s' "$err" | grep -q -- "$word"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: solbench $* -> rc=$rc, stderr: $err (wanted '$word' on one line)"
  fi
}
expect "no.such"      -- run --no-store --bench no.such
expect "bogus"        -- run --no-store --bench memory.triad -p bogus=1
expect "12XB"         -- run --no-store --bench memory.triad -p size=12XB
expect "threads"      -- run --no-store --threads -1
expect "threads"      -- run --no-store --threads 0
expect "size"         -- run --no-store --bench memory.triad -p size=1PiB
expect "suite"        -- run --no-store --suite medium
expect "area"         -- run --no-store --area nowhere
expect "min-time"     -- run --no-store --min-time -3
expect "key=value"    -- run --no-store -p size
expect "unknown option" -- run --no-store --frobnicate
expect "unknown command" -- frobnicate
expect "unknown command" -- help frobnicate
# refused at planning (setup would prefix the benchmark's name)
expect "^solbench: parameter numa=4095: this machine has no NUMA node" -- run --no-store --bench memory.copy,transfer.h2d -p size=64KiB -p numa=-1,4095
expect "area"         -- list --area nowhere
# lists with an empty item, an empty backend, output files that cannot be
# written (refused before measuring), tags
expect "empty item"   -- run --no-store --bench memory.copy,
expect "empty item"   -- run --no-store --bench memory.copy --bench ,memory.read
expect "empty item"   -- run --no-store --area memory,,compute
expect "backend ''"   -- run --no-store --bench memory.copy --backend ''
expect "is a directory" -- run --no-store --bench memory.copy --json /tmp
expect "cannot write" -- run --no-store --bench memory.copy --json /nonexistent/dir/r.json
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
expect "same file"    -- run --no-store --bench memory.copy --json "$tmpd/same" --csv "$tmpd/same"
expect "same file"    -- run --no-store --bench memory.copy --json "$tmpd/same" --csv "$tmpd/../$(basename "$tmpd")/same"
expect "given twice"  -- run --no-store --bench memory.copy --tag a=1 --tag a=2
# check shares run's tag and output checks (before the store is opened)
expect "given twice"  -- check --baseline none --tag a=1 --tag a=2
expect "is a directory" -- check --baseline none --junit /tmp
expect "same file"    -- check --baseline none --junit "$tmpd/r" --json "$tmpd/../$(basename "$tmpd")/r"
expect "127"          -- run --no-store --bench memory.copy --tag "$(printf 'k%.0s' $(seq 200))=1"
expect "UTF-8"        -- run --no-store --bench memory.copy --tag "$(printf 'k\xff')=1"
# scoped parameters (-p SCOPE:key=value): a scope that covers no selected
# benchmark, one whose benchmarks lack the key, a malformed one
expect "'ops'"        -- run --no-store --bench memory.triad -p ops:dtype=bf16
expect "'tokens'"     -- run --no-store --bench memory.triad,ops.softmax -p memory:tokens=3
expect "SCOPE:key=value" -- run --no-store --bench memory.triad -p :dtype=fp32
expect "SCOPE:key=value" -- run --no-store --bench memory.triad -p memory:=fp32
expect "'mem'"        -- run --no-store --bench memory.triad -p mem:dtype=fp32
# --interleave: a benchmark that takes its own samples; points that fit in
# memory one at a time (0.4 of it each) but not all three together
expect "compute.peak" -- run --no-store --interleave --bench memory.triad,compute.peak
tenth=$(awk '/^MemTotal:/ {print int($2 / 10240)}' /proc/meminfo)
big="$((4 * tenth))MiB"
expect "together"     -- run --no-store --interleave --bench memory.triad -p size=$big,$big,$big
# A bad size must not have been preceded by any measurement: the whole plan
# is checked first, so a good point before a bad one runs nothing.
out=$("$sb" run --no-store --bench memory.triad -p size=1MiB,1PiB 2>&1); rc=$?
if [ $rc -eq 2 ] && ! printf '%s' "$out" | grep -q "GB/s"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: plan not checked before running: $out"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
