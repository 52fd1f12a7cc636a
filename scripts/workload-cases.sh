#!/usr/bin/env bash
# workload-cases.sh — holds `solbench predict` against published runs and
# prints one table: for each case of data/models that carries a
# `measured` figure (a source's tokens/s or MFU), the speed-of-light
# prediction and the calibrated one (efficiencies from data/calib or the
# workload's own calibration), each as a ratio to the published figure,
# with the issue's targets (a figure served under objectives, measured.slo
# as MLPerf's server scenario, against the capacity under the same
# objectives: predict's capacity search):
#   speed of light: 1.0 <= ratio <= 1.6 (never slower than reality, and
#     not wildly faster);
#   calibrated: 0.75 <= ratio <= 1.25;
#   a configuration that ran must fit in memory.
# The ratio compares throughputs: predicted tokens/s over the measured (the
# serving simulator's where the case names its benchmark's requests,
# job.requests; the steady state's otherwise), or
# (where the source gives an MFU) the predicted MFU in the source's
# convention over it. A case without calibration shows "-" there (no
# measured run of its hardware). Exit status 0 when every target that can
# be judged is met, 1 otherwise; docs/WORKLOAD.md has the table as of the
# last change to the model.
#
# Usage: scripts/workload-cases.sh [path/to/solbench]
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
sb=${1:-$here/build/solbench}
[ -x "$sb" ] || { echo "workload-cases: $sb is not built (make build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cases=()
for f in "$here"/data/models/*.json; do
    if python3 -c 'import json,sys; sys.exit(0 if "measured" in json.load(open(sys.argv[1])) else 1)' "$f"; then
        cases+=("$(basename "$f" .json)")
    fi
done

for c in "${cases[@]}"; do
    "$sb" predict "$c" --json "$tmp/$c.json" >/dev/null
done

python3 - "$tmp" "${cases[@]}" <<'EOF'
import json, sys
tmp, cases = sys.argv[1], sys.argv[2:]
def ratio(p):
    # a figure served under objectives (measured.slo): the capacity's
    if "vs_measured" in p.get("capacity", {}):
        return p["capacity"]["vs_measured"]
    return p.get("totals", {}).get("vs_measured", 0.0)
rows, ok = [], True
print(f"{'case':28} {'published':>22} {'SOL':>22} {'SOL/pub':>8} "
      f"{'calibrated':>22} {'cal/pub':>8}  fits  verdict")
for c in cases:
    d = json.load(open(f"{tmp}/{c}.json"))
    t = d["totals"]
    m = d.get("measured", {})
    kind = d["kind"]
    def fig(p):
        tt = p["totals"]
        if "vs_measured" in p.get("capacity", {}):
            return f"{p['capacity']['tokens_per_s']:.4g} tok/s"
        if m.get("tokens_per_s"):
            # the benchmark's requests simulated (job.requests), else
            # the steady state: the figure vs_measured compares
            sim = tt.get("serving", {}).get("simulation", {})
            tps = sim.get("tokens_per_s") if sim.get("requests") else None
            return f"{(tps or tt['tokens_per_s']):.4g} tok/s"
        conv = "mfu_causal" if m.get("mfu_convention") == "causal" else "mfu"
        return f"{100 * tt[conv]:.1f}% MFU"
    pub = (f"{m['tokens_per_s']:.4g} tok/s" if m.get("tokens_per_s")
           else f"{100 * m.get('mfu', 0):.1f}% MFU")
    r = ratio(d)
    cal = d.get("calibrated")
    rc = ratio(cal) if cal else None
    fits = t["memory_per_chip"]["fits"]
    good = 1.0 <= r <= 1.6 and fits and (rc is None or 0.75 <= rc <= 1.25)
    ok = ok and good
    print(f"{c:28} {pub:>22} {fig(d):>22} {r:8.2f} "
          f"{(fig(cal) if cal else '-'):>22} "
          f"{(f'{rc:8.2f}' if rc is not None else '       -')}  "
          f"{'yes' if fits else 'NO ':4}  {'met' if good else 'MISSED'}")
sys.exit(0 if ok else 1)
EOF
