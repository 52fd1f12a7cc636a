#!/usr/bin/env bash
# The trace reader's speed and memory on a large trace (docs/TRACE.md):
# generates a PyTorch profiler (Kineto) trace of a GPU training loop of
# about MB megabytes (scripts/lib/gen-kineto-trace.py: 32 layers of
# matmuls, flash attention, norms, elementwise ops and an NCCL all-reduce
# per step, kernel times at 55-85 % of an H100's datasheet ceilings),
# analyses it with `solbench trace show --hw h100-sxm`, and reports wall
# time and peak resident memory (GNU time), against the targets: 10 s and
# 500 MB for 100 MB. The same command with `--help` is timed too: what
# the binary costs before it reads anything (its libraries). It also
# checks the analysis: the generated kernels run at 55-85 % of their
# ceiling, so each placed op's %SOL must lie in that band.
#
#   scripts/trace-bench.sh [--solbench PATH] [--mb MB] [--gz]
set -euo pipefail
cd "$(dirname "$0")/.."
sb=build/solbench mb=100 gz=0
while [ $# -gt 0 ]; do
    case "$1" in
    --solbench) sb=$2; shift 2 ;;
    --mb) mb=$2; shift 2 ;;
    --gz) gz=1; shift ;;
    *) echo "usage: $0 [--solbench PATH] [--mb MB] [--gz]" >&2; exit 2 ;;
    esac
done
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
f=$tmp/trace.json
python3 scripts/lib/gen-kineto-trace.py "$f" "$mb"
if [ "$gz" = 1 ]; then gzip -1 "$f"; f=$f.gz; fi
bytes=$(stat -c %s "$f")
/usr/bin/time -f "%e %M" -o "$tmp/base" "$sb" --help >/dev/null
/usr/bin/time -f "%e %M" -o "$tmp/t" "$sb" trace show "$f" --hw h100-sxm \
    --top 0 --json "$tmp/a.json" >"$tmp/out"
read -r bs bk <"$tmp/base"
read -r s k <"$tmp/t"
python3 - "$tmp/a.json" "$bytes" "$s" "$k" "$bk" "$mb" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
size, s, k, bk, mb = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
placed = [o for o in a["ops"] if o["attainable"] and o["class"] in ("compute", "memory", "network")]
bad = [o for o in placed if not 50 <= o["pct_sol"] <= 90]
print(f"trace: {size / 1e6:.1f} MB, {a['events']} events ({a['events_kept']} kept), "
      f"{a['steps']} steps, {len(a['ops'])} ops")
print(f"time {s:.2f} s ({size / 1e6 / s:.0f} MB/s); peak RSS {k / 1024:.0f} MiB, "
      f"of which {bk / 1024:.0f} MiB before reading (the binary's libraries), "
      f"{(k - bk) / 1024:.0f} MiB for the trace")
for o in placed:
    print(f"  {o['op'][:44]:44s} {o['class']:8s} {o['pct_sol']:5.1f} %SOL")
ok = True
if bad:
    print(f"FAIL: {len(bad)} placed ops outside the generated 55-85 % band")
    ok = False
scale = mb / 100
if s > 10 * scale or k / 1024 > 500 * max(scale, 1):
    print(f"FAIL: over the target (10 s and 500 MB per 100 MB)")
    ok = False
print("targets met" if ok else "targets missed")
sys.exit(0 if ok else 1)
PY
