#!/usr/bin/env bash
# publish-speed.sh — how fast `solbench publish` writes a large history and
# how much it writes (docs/HISTORY.md): a store of RUNS (default 1000) runs
# of 50 points (memory.read at 50 sizes, one measured run copied with
# each series' level set: flat, or a 10 % step at run 40 % or 70 % of the
# way), imported, then published once timed. Exit 0 when publishing takes
# under LIMIT seconds (default 30) and the site under MB megabytes
# (default 50).
#
# Usage: scripts/publish-speed.sh [--solbench PATH] [--runs N] [--limit S]
#                                 [--mb M]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sb=$root/build/solbench
runs=1000
limit=30
mb=50
while [ $# -gt 0 ]; do
    case $1 in
    --solbench) sb=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --mb) mb=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "publish-speed.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$sb" ] || { echo "publish-speed.sh: no solbench at $sb" >&2; exit 2; }
[ "$runs" -ge 24 ] && [ "$runs" -le 1440 ] ||
    { echo "publish-speed.sh: --runs from 24 to 1440" >&2; exit 2; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export SOLBENCH_NO_GIT=1

sizes=16KiB..408KiB:+8KiB
"$sb" run --quiet --db "$W/tpl.db" --bench memory.read -p "size=$sizes" \
    --min-time 0.002 --repeat 3 >/dev/null
"$sb" export last --db "$W/tpl.db" --json "$W/one.json" >/dev/null
python3 - "$W/one.json" "$W/docs" "$root/tests/scripts" "$runs" <<'PY'
import json, os, sys
tpl, out, here, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, here)
from series_docs import run_at, scale
os.makedirs(out, exist_ok=True)
n = len(json.load(open(tpl))["results"])
assert n == 50, n
for i in range(runs):
    d = run_at(tpl, i)
    for k, r in enumerate(d["results"]):
        step = {0: None, 1: 0.4, 2: 0.7}[k % 3]
        level = 100.0 * (0.9 if step is not None and i >= step * runs else 1.0)
        scale(r, level, i)
    json.dump(d, open(os.path.join(out, "%04d.json" % i), "w"))
PY
t0=$(date +%s.%N)
find "$W/docs" -name '*.json' -print0 | sort -z |
    xargs -0 "$sb" import --db "$W/s.db" >/dev/null
t1=$(date +%s.%N)
"$sb" publish "$W/site" --db "$W/s.db"
t2=$(date +%s.%N)
bytes=$(du -sb "$W/site" | cut -f1)
python3 - "$t0" "$t1" "$t2" "$bytes" "$runs" "$limit" "$mb" "$(nproc)" <<'PY'
import sys
t0, t1, t2, b = (float(x) for x in sys.argv[1:5])
runs, limit, mb, cores = int(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7]), sys.argv[8]
pub, size = t2 - t1, b / 1e6
print("publish-speed: %s cores; %d runs x 50 points: import %.1f s; publish %.2f s "
      "(want < %g s), %.1f MB (want < %g MB)" % (cores, runs, t1 - t0, pub, limit, size, mb))
sys.exit(0 if pub < limit and size < mb else 1)
PY
