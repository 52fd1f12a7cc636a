#!/usr/bin/env bash
# gate-rates.sh — how often `solbench check` cries wolf on this machine, and
# how small a slowdown it catches, measured as a CI job would meet them.
#
#   1. A baseline of RUNS runs (default 3) of the points below, one after
#      the other (`baseline set gate RUN...`).
#   2. QUIET checks (default 50) against it, the machine otherwise idle:
#      every exit 1 is a false alarm. With --update each passing check
#      joins the baseline (check --update-baseline --keep 10), as a CI job
#      that keeps its baseline current would run it.
#   3. The same checks while a competing process, pinned to one core,
#      takes DUTY percent of it (busy, then asleep, every 10 ms): first the
#      slowdown that load causes is measured (the points' medians with and
#      without it, interleaved), then SLOW checks (default 10) under it:
#      every exit 1 is a slowdown caught. With --one-core every solbench
#      runs on core 0 alone and the load is a busy loop there at the nice
#      level whose weight takes DUTY % of the core (a steady share). With
#      --inject PCT there is no load: the slow checks run with
#      scripts/lib/stretch.c preloaded, which stretches the monotonic clock
#      so every sample's throughput is PCT % lower (a steady slowdown of
#      known size on the real machine's noise, as a code regression is).
#
# The points: memory.triad at 8 MiB (in cache; the DRAM figure of a shared
# guest moves by tens of percent between runs) and fp32 compute.gemm at
# n = 1024, both on all cores, --min-time 0.3. Prints the counts and the
# slowdown; exit 0 when at most MAXFALSE (default 1) of the quiet checks
# failed and at least MINCAUGHT (default 9) of the slow ones did.
#
# Usage: scripts/gate-rates.sh [--solbench PATH] [--runs N] [--quiet N]
#                              [--slow N] [--duty PCT] [--update]
#                              [--one-core] [--inject PCT]
#                              [--check-args "..."]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sb=$root/build/solbench
runs=3
quiet=50
slow=10
duty=10
maxfalse=1
mincaught=9
extra=()
update=()
one_core=0
inject=
while [ $# -gt 0 ]; do
    case $1 in
    --solbench) sb=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --quiet) quiet=$2; shift 2 ;;
    --slow) slow=$2; shift 2 ;;
    --duty) duty=$2; shift 2 ;;
    --check-args) read -r -a extra <<<"$2"; shift 2 ;;
    --update) update=(--update-baseline --keep 10); shift ;;
    --one-core) one_core=1; shift ;;
    --inject) inject=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gate-rates.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$sb" ] || { echo "gate-rates.sh: no solbench at $sb" >&2; exit 2; }
command -v taskset >/dev/null || { echo "gate-rates.sh: taskset is needed" >&2; exit 2; }
sbx=("$sb")
[ "$one_core" = 1 ] && sbx=(taskset -c 0 "$sb")
sbslow=("${sbx[@]}")
if [ -n "$inject" ]; then
    command -v cc >/dev/null || { echo "gate-rates.sh: --inject needs cc" >&2; exit 2; }
fi

W=$(mktemp -d)
LOAD=
cleanup() { [ -n "$LOAD" ] && kill "$LOAD" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
export SOLBENCH_DB=$W/gate.db
POINTS=(--bench memory.triad,compute.gemm -p memory.triad:size=8MiB
        -p compute.gemm:dtype=fp32 -p compute.gemm:shape=square
        -p compute.gemm:n=1024 --min-time 0.3 --quiet)

# A process that takes DUTY % of core 0: busy for DUTY/10 ms of every 10.
start_load() {
    taskset -c 0 python3 -c '
import time, sys
busy = float(sys.argv[1]) / 100 * 0.010
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < busy:
        pass
    time.sleep(0.010 - busy)
' "$duty" &
    LOAD=$!
}
# With --one-core: a busy loop on core 0 at the nice level whose CFS weight
# takes the share of the core nearest DUTY % beside one thread at nice 0
# (weights of the kernel's sched_prio_to_weight; one session, so one
# autogroup): a steady share, where a sleeper's wake-ups land unevenly.
start_nice_load() {
    local w=(1024 820 655 526 423 335 272 215 172 137 110 87 70 56 45 36 29 23 18 15)
    local best=0 n
    for n in $(seq 0 19); do
        local d=$((w[n] * 1000 / (1024 + w[n]) - duty * 10))
        local b=$((w[best] * 1000 / (1024 + w[best]) - duty * 10))
        [ "${d#-}" -lt "${b#-}" ] && best=$n
    done
    LOAD_NICE=$best
    nice -n "$best" taskset -c 0 sh -c 'while :; do :; done' &
    LOAD=$!
}
stop_load() { [ -n "$LOAD" ] || return 0; kill "$LOAD" 2>/dev/null || true; wait "$LOAD" 2>/dev/null || true; LOAD=; }

if [ -n "$inject" ]; then
    cc -O2 -shared -fPIC -o "$W/stretch.so" "$root/scripts/lib/stretch.c" -ldl ||
        { echo "gate-rates.sh: could not build the clock shim" >&2; exit 2; }
    stretch=$(python3 -c "print(1 / (1 - $inject / 100))")
    sbslow=(env LD_PRELOAD="$W/stretch.so" SB_STRETCH="$stretch" "${sbx[@]}")
    what="$slow with a $inject % slowdown injected (clock x $stretch)"
else
    what="$slow under a $duty % load on core 0"
fi
echo "gate-rates: $(nproc) cores, baseline of $runs runs${update:+ (passing checks join it)}, $quiet quiet checks, $what ($(date -u +%Y-%m-%dT%H:%MZ))"
ids=()
for i in $(seq "$runs"); do
    "${sbx[@]}" run "${POINTS[@]}" --tag gate=base >/dev/null
    ids+=("$(sqlite3 "$SOLBENCH_DB" "SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1")")
done
"$sb" baseline set gate "${ids[@]}" >/dev/null

false_alarms=0
for i in $(seq "$quiet"); do
    rc=0
    if [ ${#update[@]} -gt 0 ]; then
        "${sbx[@]}" check --baseline gate "${update[@]}" "${extra[@]}" >"$W/q.out" 2>&1 || rc=$?
    else
        "${sbx[@]}" check --baseline gate --no-store "${extra[@]}" >"$W/q.out" 2>&1 || rc=$?
    fi
    if [ "$rc" -eq 1 ]; then
        false_alarms=$((false_alarms + 1))
        grep REGRESSED "$W/q.out" | sed "s/^/  quiet check $i: /"
    elif [ "$rc" -ne 0 ]; then
        cat "$W/q.out"; echo "gate-rates.sh: check exited $rc" >&2; exit 2
    fi
done

# The slowdown the load causes: both sides in one interleaved run each.
slowdown() {
    "$@" run "${POINTS[@]}" --no-store --interleave --json "$W/$run_name.json" >/dev/null
}
run_name=off slowdown "${sbx[@]}"
if [ -z "$inject" ]; then
    if [ "$one_core" = 1 ]; then start_nice_load; else start_load; fi
fi
run_name=on slowdown "${sbslow[@]}"
python3 - "$W/off.json" "$W/on.json" >"$W/slowdown" <<'PY'
import json, sys
def heads(p):
    out = {}
    for r in json.load(open(p))["results"]:
        m = r["metrics"]
        out[r["bench"]] = m["GBps"]["value"] if "GBps" in m else m["GFLOPs"]["value"]
    return out
a, b = heads(sys.argv[1]), heads(sys.argv[2])
print(", ".join("%s %+.1f%%" % (k, (b[k] - a[k]) / a[k] * 100) for k in sorted(a)))
PY
caught=0
for i in $(seq "$slow"); do
    rc=0
    "${sbslow[@]}" check --baseline gate --no-store --json "$W/s.json" "${extra[@]}" >"$W/s.out" 2>&1 || rc=$?
    [ "$rc" -eq 1 ] && caught=$((caught + 1))
    # what each point's judgement was: the change, the bar it had to pass
    python3 - "$W/s.json" "$i" "$rc" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
print("  slow check %s (exit %s): " % (sys.argv[2], sys.argv[3]) + "; ".join(
    "%s %+.1f%% %s (bar %.1f%%)" % (l["bench"], l.get("change_pct") or 0,
        l["verdict"], l.get("threshold_pct") or 0) for l in d["lines"]))
PY
    [ "$rc" -le 1 ] || { cat "$W/s.out"; echo "gate-rates.sh: check exited $rc" >&2; exit 2; }
done
stop_load

echo "false alarms: $false_alarms of $quiet quiet checks (target at most $maxfalse)"
if [ -n "$inject" ]; then how="injected"; else how="under the load"; fi
echo "slowdown $how: $(cat "$W/slowdown")"
echo "caught: $caught of $slow slowed checks (target at least $mincaught)"
[ "$false_alarms" -le "$maxfalse" ] && [ "$caught" -ge "$mincaught" ]
