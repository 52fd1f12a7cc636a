#!/usr/bin/env bash
# changes-rates.sh — how well `solbench history --changes` finds a step in
# real runs of this machine, and how often it sees one that is not there.
#
#   Detection: REPS (default 10) series of 24 runs of one point, each in
#   its own store: 12 plain runs, then 12 with a steady slowdown of INJECT
#   percent (default 10) injected by scripts/lib/stretch.c (the monotonic
#   clock stretched under LD_PRELOAD: every sample slower by that much, on
#   the machine's real noise, as a code regression makes it). A repetition
#   is caught when the series has exactly one change point, at the 13th
#   run ± 1, of −15 to −5 % (for a 10 % injection).
#   False alarms: FLAT (default 10) series of 24 plain runs: every change
#   point found is false.
# Prints each series' result and the two counts; exit 0 when at least
# MINCAUGHT (default 9) repetitions were caught and at most MAXFALSE
# (default 1) false change points were seen in all the flat series.
#
# Usage: scripts/changes-rates.sh [--solbench PATH] [--reps N] [--flat N]
#                                 [--inject PCT] [--point "run args..."]
# The point (default: fp32 compute.peak on one core, --min-time 0.2: the
# FMA throughput of one core, the steadiest figure of a shared guest; 20
# runs interleaved on a 2-vCPU guest gave a run-to-run cv of 1.6 % for it
# against 4.3 % for an fp32 GEMM of n = 512 on one core, whose cache
# footprint another tenant disturbs) is given as `solbench run` arguments.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sb=$root/build/solbench
reps=10
flat=10
inject=10
mincaught=9
maxfalse=1
point=(--bench compute.peak -p dtype=fp32 -p cores=1 --threads 1 --min-time 0.2)
while [ $# -gt 0 ]; do
    case $1 in
    --solbench) sb=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --flat) flat=$2; shift 2 ;;
    --inject) inject=$2; shift 2 ;;
    --point) read -r -a point <<<"$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "changes-rates.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$sb" ] || { echo "changes-rates.sh: no solbench at $sb" >&2; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cc -O2 -shared -fPIC -o "$W/stretch.so" "$root/scripts/lib/stretch.c" -ldl ||
    { echo "changes-rates.sh: could not build the clock shim" >&2; exit 2; }
stretch=$(python3 -c "print(1 / (1 - $inject / 100))")
lo=$(python3 -c "print(-1.5 * $inject)")
hi=$(python3 -c "print(-0.5 * $inject)")
echo "changes-rates: $(nproc) cores; ${point[*]}; $reps series of 12 + 12 runs with $inject % injected (clock x $stretch), $flat flat series of 24 ($(date -u +%Y-%m-%dT%H:%MZ))"

# series DB SLOW: 24 runs into DB, the last 12 stretched when SLOW is 1.
series() {
    local db=$1 slow=$2 i
    for i in $(seq 24); do
        if [ "$slow" = 1 ] && [ "$i" -gt 12 ]; then
            LD_PRELOAD="$W/stretch.so" SB_STRETCH="$stretch" \
                "$sb" run --quiet --db "$db" "${point[@]}" >/dev/null
        else
            "$sb" run --quiet --db "$db" "${point[@]}" >/dev/null
        fi
    done
    "$sb" history --changes --db "$db" --json "$W/c.json"
}

caught=0
for r in $(seq "$reps"); do
    series "$W/step$r.db" 1
    verdict=$(python3 - "$W/c.json" "$lo" "$hi" <<'PY'
import json, sys
ch = json.load(open(sys.argv[1]))["changes"]
lo, hi = float(sys.argv[2]), float(sys.argv[3])
desc = ", ".join("run %d %+.1f%% p %.3f" % (c["index"] + 1, c["change_pct"], c["p"]) for c in ch) or "none"
ok = len(ch) == 1 and abs(ch[0]["index"] - 12) <= 1 and lo <= ch[0]["change_pct"] <= hi
print(("caught" if ok else "missed") + ": " + desc)
PY
)
    echo "step $r: $verdict"
    [[ $verdict == caught* ]] && caught=$((caught + 1))
done
false_pts=0
for r in $(seq "$flat"); do
    series "$W/flat$r.db" 0
    n=$(python3 -c "import json,sys; ch=json.load(open(sys.argv[1]))['changes']; print(len(ch)); [print('   ', 'run %d %+.1f%% p %.3f' % (c['index'] + 1, c['change_pct'], c['p']), file=sys.stderr) for c in ch]" "$W/c.json")
    echo "flat $r: $n change point(s)"
    false_pts=$((false_pts + n))
done
echo "caught $caught of $reps (want >= $mincaught); false change points $false_pts in $flat flat series (want <= $maxfalse)"
[ "$caught" -ge "$mincaught" ] && [ "$false_pts" -le "$maxfalse" ]
