#!/usr/bin/env bash
# The stability verdict end to end: with a process spinning on every core
# beside the run, its results are marked unstable, named in the warning
# with what was seen and the remedy, carried in the JSON as stable=false
# with their reasons, and --require-stable makes it exit 1; the table has
# the stable column.
# Usage: stability_cli.sh SOLBENCH
set -u
SB=$1
d=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$d"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    pids+=($!)
done
sleep 0.3
"$SB" run --no-store --bench memory.read,compute.gemm -p memory.read:size=16MiB \
    -p compute.gemm:dtype=fp32 -p compute.gemm:shape=square -p compute.gemm:n=512 \
    --min-time 0.3 --require-stable --json "$d/r.json" >"$d/out" 2>"$d/err"
rc=$?
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
pids=()
cat "$d/out" "$d/err" | grep -v 'note:'
[ $rc -eq 1 ] || fail "--require-stable beside a busy machine: exit $rc, expected 1"
grep -q 'solbench: --require-stable: [0-9]* results\? unstable' "$d/err" ||
    fail "no --require-stable line on stderr"
grep -q 'other processes took [0-9]*% of the CPUs' "$d/out" || fail "the load is not named"
grep -q 'remedy: .*quiet the machine' "$d/out" || fail "no remedy"
grep -q ' valid stable$' "$d/out" || fail "no stable column"
python3 - "$d/r.json" <<'PY' || exit 1
import json, sys
rs = [r for r in json.load(open(sys.argv[1]))["results"] if not r["skipped"]]
assert rs and all("stable" in r for r in rs), "a result without a verdict"
bad = [r for r in rs if not r["stable"]]
assert bad, "nothing marked unstable beside the spinners"
assert all(any("other processes took" in w for w in r["stability"]) for r in bad), bad
print("ok: %d of %d results unstable, with their reasons" % (len(bad), len(rs)))
PY
echo "stability: ok"
