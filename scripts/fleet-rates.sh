#!/usr/bin/env bash
# fleet-rates.sh — how often `solbench fleet run` names the right host on
# four test hosts made on this machine (tests/scripts/fleet_hosts.sh:
# network namespaces, links shaped to 800 Mbit/s with tbf), N times each
# (default 10):
#   clean     nothing flagged (a false alarm otherwise);
#   slowlink  host 3's link at 200 Mbit/s: that host, and only it,
#             flagged for its links and named as the cause of its links;
#   slowcpu   host 2 under a 50 % CPU quota: flagged for compute, and
#             nothing for its links;
# then, once, the whole quick suite with --stagger --links, timed
# (docs/FLEET.md has the figures). Needs root, mpirun and an MPI build.
# Usage: scripts/fleet-rates.sh [-n N] [path/to/solbench]
set -u
n=10
if [ "${1:-}" = -n ]; then
    n=${2:?}
    shift 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
SB=$(realpath "${1:-$here/build/solbench}")
T=$(mktemp -d)
skip() {
    echo "fleet-rates: $*" >&2
    exit 2
}
[ "$(id -u)" -eq 0 ] || skip "needs root (test hosts are network namespaces)"
. "$here/tests/scripts/fleet_hosts.sh"

suite=(--bench compute.peak -p dtype=fp32 --threads 1 --min-time 0.3 --repeat 3
    --stagger --links --pairs serial --link-size 256KiB --link-time 0.5 --no-store)
verdict() { # FILE CASE SLOWHOST -> "ok" or what was wrong
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
case, slow = sys.argv[2], sys.argv[3]
hosts = {f["host"] for f in d["flagged"]}
if case == "clean":
    bad = [f'{f["host"]} {f["metric"]} {f["deviation_pct"]:+.1f}%' for f in d["flagged"]]
    bad += [f'{l["from"]}->{l["to"]} {l["deviation_pct"]:+.1f}%' for l in d["links"]]
    print("ok" if not bad else "false alarm: " + "; ".join(bad))
elif case == "slowlink":
    good = (hosts == {slow} and any(f["metric"] == "links.bw Bps" for f in d["flagged"])
            and len(d["links"]) == 6 and all(l["cause"] == slow for l in d["links"]))
    print("ok" if good else f"flagged {sorted(hosts)}, {len(d['links'])} links")
else:
    good = (hosts == {slow} and all(f["metric"].startswith("compute") for f in d["flagged"])
            and not d["links"])
    print("ok" if good else "flagged " + "; ".join(f'{f["host"]} {f["metric"]}' for f in d["flagged"])
          + f", {len(d['links'])} links")
PY
}
declare -A good
for case in clean slowlink slowcpu; do good[$case]=0; done
for ((k = 1; k <= n; k++)); do
    for case in clean slowlink slowcpu; do
        envs=()
        case $case in
        clean) shape 800mbit ;;
        slowlink) shape 800mbit 2 200mbit ;;
        slowcpu)
            shape 800mbit
            [ -n "$cg" ] || { echo "slowcpu: no cgroup cpu controller"; continue; }
            envs=(FLEET_SLOW_CPU="${H[1]}")
            ;;
        esac
        slow=${H[2]}
        [ "$case" = slowcpu ] && slow=${H[1]}
        env "${envs[@]}" "${mpi[@]}" --host "$hosts" "$SB" fleet run "${suite[@]}" \
            --json "$T/$case.json" >"$T/$case.out" 2>&1
        v=$(verdict "$T/$case.json" "$case" "$slow" 2>&1)
        [ "$v" = ok ] && good[$case]=$((good[$case] + 1))
        echo "run $k $case: $v"
    done
done
echo "clean: nothing flagged in ${good[clean]} of $n"
echo "slow link: the host alone, as the cause, in ${good[slowlink]} of $n"
echo "CPU quota: compute only in ${good[slowcpu]} of $n"

shape 800mbit
start=$(date +%s.%N)
"${mpi[@]}" --host "$hosts" "$SB" fleet run --suite quick --stagger --links \
    --no-store >"$T/quick.out" 2>&1
rc=$?
secs=$(awk "BEGIN {printf \"%.0f\", $(date +%s.%N) - $start}")
echo "fleet run --suite quick --stagger --links on 4 test hosts: ${secs} s (exit $rc; want < 180 s)"
