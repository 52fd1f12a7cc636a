#!/usr/bin/env bash
# Start-up cost of the commands that measure nothing: median wall time of
# 20 runs and peak resident memory of `--help`, `list`, `hw list` and
# `history`, against the targets (20 ms, 40 MB). The heavy libraries
# (cuBLAS, cuBLASLt, NCCL, oneDNN) are opened only where a benchmark needs
# them (docs/CUDA.md, docs/COMPUTE.md); this shows it stays so.
# Usage: scripts/startup.sh [SOLBENCH]   (default build/solbench)
set -u
SB=${1:-build/solbench}
export SOLBENCH_DB=$(mktemp -d)/r.db
fail=0
printf '%-14s %10s %10s\n' command "median ms" "peak MB"
for cmd in "--help" "list" "hw list" "history"; do
    out=$(python3 - "$SB" $cmd <<'PY'
import resource, statistics, subprocess, sys, time
args = sys.argv[1:]
times = []
for _ in range(20):
    t = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - t)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{statistics.median(times) * 1e3:.1f} {peak:.1f}")
PY
)
    ms=${out% *} mb=${out#* }
    verdict=ok
    awk "BEGIN {exit !($ms > 20 || $mb > 40)}" && { verdict=OVER; fail=1; }
    printf '%-14s %10s %10s  %s\n' "$cmd" "$ms" "$mb" "$verdict"
done
rm -rf "$(dirname "$SOLBENCH_DB")"
exit $fail
