#!/usr/bin/env bash
# The report of a real run reads first what a reader needs: in headless
# Chromium at 1400x1000, the verdict and a non-empty roofline are on the
# first screen (the top of its first point above 1000 px), and no two of
# the roofline's labels overlap as the browser lays them out (the report's
# own script measures both with getBoundingClientRect and records them on
# #sb-status). Then a run with nothing to place (a network-only run) gets
# no chart and a sentence instead.
# Usage: report_first_screen.sh SOLBENCH
set -u
SB=${1:?usage: $0 SOLBENCH}
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$BROWSER" ]; then
    echo "FAIL: chromium not found (scripts/install-deps.sh installs it)"
    exit 1
fi
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export HOME="$T" SOLBENCH_DB="$T/r.db"
fail=0
# A small real run: the compute and memory ceilings and a few kernels.
"$SB" run --quiet --bench compute.peak,compute.gemm,memory.read,ops.rmsnorm,ops.softmax,moe.route,moe.combine,attention.paged_decode \
    -p compute:dtype=fp32 -p compute.gemm:shape=square,decode -p memory.read:size=64MiB \
    --min-time 0.02 --repeat 3 >"$T/run.out" 2>&1 ||
    { echo "FAIL: the run failed:"; tail -5 "$T/run.out"; exit 1; }
"$SB" report --run last --workload validate-dense -o "$T/r.html" >"$T/rep.out" 2>&1 ||
    { echo "FAIL: report failed:"; cat "$T/rep.out"; exit 1; }
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --window-size=1400,1000 \
    --dump-dom "file://$T/r.html" >"$T/dom.html" 2>/dev/null
status=$(grep -o '<p id="sb-status"[^>]*>' "$T/dom.html" | head -1)
echo "status: $status"
attr() { sed -n "s/.*$1=\"\([0-9]*\)\".*/\1/p" <<<"$status"; }
points=$(attr data-roof-points) top=$(attr data-roof-first-top) over=$(attr data-roof-overlaps)
[ "${points:-0}" -ge 4 ] && echo "ok: $points kernels on the roofline" ||
    { echo "FAIL: ${points:-no} points on the roofline"; fail=1; }
[ -n "$top" ] && [ "$top" -lt 1000 ] && echo "ok: first point at y=$top, on the first screen" ||
    { echo "FAIL: the roofline's first point at y=${top:-?}, below the first screen"; fail=1; }
[ "${over:-1}" -eq 0 ] && echo "ok: no overlapping labels" ||
    { echo "FAIL: ${over:-?} pairs of roofline labels overlap"; fail=1; }
grep -q '<section id="verdict"' "$T/r.html" && grep -q 'Kernels at % of their speed of light' "$T/r.html" &&
    echo "ok: the verdict comes first" || { echo "FAIL: no verdict"; fail=1; }
# the details are folded
grep -q '<details><summary>Validation of every result' "$T/r.html" &&
    echo "ok: validation folded" || { echo "FAIL: validation not folded"; fail=1; }
# a screenshot of the first screen, kept with KEEP=1
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1400,1000 --screenshot="$T/first.png" "file://$T/r.html" >/dev/null 2>&1
[ -s "$T/first.png" ] && echo "ok: screenshot $T/first.png" || { echo "FAIL: no screenshot"; fail=1; }

# ---- --png forks the browser: piped output comes out once
a=$("$SB" roofline --run last | wc -l)
b=$("$SB" roofline --run last --png "$T/r.png" | wc -l)
[ "$a" -eq "$b" ] && [ -s "$T/r.png" ] && echo "ok: --png: the piped table once ($b lines)" ||
    { echo "FAIL: --png changed the piped output: $a vs $b lines"; fail=1; }

# ---- nothing to place: no chart, a sentence
python3 - "$T/net.json" <<'PY'
import json, sys
t = 5e-6
r = {"bench": "network.pingpong", "area": "network", "backend": "mpi", "params": {"size": 8},
     "samples_s": [t] * 3, "stats": {"n": 3, "min": t, "p50": t, "p90": t, "p99": t, "max": t,
     "mean": t, "stddev": 0, "cv": 0}, "metrics": {"latency_us": {"value": 5, "unit": "us"}},
     "valid": True, "notes": []}
json.dump({"schema": "solbench.run/1", "run_id": "20260101T000000Z-netnet",
           "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z",
           "system": {"fingerprint": "00"}, "config": {}, "tags": {}, "results": [r]},
          open(sys.argv[1], "w"))
PY
"$SB" report --results "$T/net.json" -o "$T/n.html" >/dev/null 2>&1 || { echo "FAIL: report of a network run"; fail=1; }
if grep -q 'class="pt"' "$T/n.html" || ! grep -q 'Nothing in this run sits under a FLOP roofline' "$T/n.html"; then
    echo "FAIL: a network-only run got a chart or no sentence"; fail=1
else
    echo "ok: a network-only run: no empty chart, a sentence"
fi
"$SB" roofline --results "$T/net.json" >/dev/null 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && grep -q "nothing to place on a roofline" "$T/e" && echo "ok: roofline says so (exit 2)" ||
    { echo "FAIL: roofline of a network-only run: rc $rc $(cat "$T/e")"; fail=1; }
exit $fail
