#!/usr/bin/env bash
# serve-sim-speed.sh — how fast the serving simulator runs (docs/SERVING.md):
# `solbench predict` of a 70B model on an H200 machine model, 10 000
# requests (lognormal lengths, Poisson at 10 requests/s, the default
# chunked-prefill scheduler), against the same prediction without the
# simulation; the difference is the simulator's time, the best of REPS
# (default 3) runs each. Then a capacity sweep of 20 configurations (5
# chips x 4 tensor degrees, TTFT p90 <= 500 ms and TPOT p99 <= 50 ms,
# 1000 requests a rate). Exit 0 when the first is under LIMIT seconds
# (default 1) and the sweep under SWEEP_LIMIT (default 30).
#
# Usage: scripts/serve-sim-speed.sh [--solbench PATH] [--requests N]
#                                   [--reps N] [--limit S] [--sweep-limit S]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sb=$root/build/solbench
requests=10000
reps=3
limit=1
sweep_limit=30
while [ $# -gt 0 ]; do
    case $1 in
    --solbench) sb=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --sweep-limit) sweep_limit=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "serve-sim-speed.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$sb" ] || { echo "serve-sim-speed.sh: no solbench at $sb" >&2; exit 2; }

# best N: the shortest wall time of REPS runs of `predict` with N requests
best() {
    python3 - "$sb" "$1" "$reps" <<'PY'
import subprocess, sys, time
sb, n, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmd = [sb, "predict", "llama3-70b", "--hw", "h200-sxm", "--set", "requests=" + n,
       "--set", "job.request_rate=10", "--set", "lengths=lognormal"]
best = None
for _ in range(reps):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    t = time.perf_counter() - t
    best = t if best is None else min(best, t)
print("%.4f" % best)
PY
}
base=$(best 0)
with=$(best "$requests")
sim=$(python3 -c "print('%.3f' % ($with - $base))")
"$sb" predict llama3-70b --hw h200-sxm --set "requests=$requests" \
    --set job.request_rate=10 --set lengths=lognormal | grep -E "simulated|throughput"
echo "serve-sim-speed: $(nproc) cores; predict without the simulation ${base} s, with $requests requests ${with} s: the simulation ${sim} s (want < $limit s)"
t0=$(date +%s.%N)
"$sb" predict llama3-70b --slo ttft_p90=500ms,tpot_p99=50ms --capacity \
    --set lengths=lognormal --sweep hw=h200-sxm,h100-sxm,b200,mi300x,a100-sxm \
    --sweep tensor=1,2,4,8 | sed -n '/^capacity under/,$p'
t1=$(date +%s.%N)
sweep=$(python3 -c "print('%.2f' % ($t1 - $t0))")
echo "serve-sim-speed: a 20-configuration capacity sweep in $sweep s (want < $sweep_limit s)"
python3 -c "import sys; sys.exit(0 if $sim < $limit and $sweep < $sweep_limit else 1)"
