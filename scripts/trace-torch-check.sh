#!/usr/bin/env bash
# The trace path held against PyTorch itself on this machine (a peer
# check, not a test: CI installs no PyTorch). It profiles a PyTorch CPU
# step of LLM-sized operators (linear -> addmm, mm, softmax, layer_norm;
# M=1024, K=N=2048, fp32, one thread per CPU nproc counts) with
# record_shapes=True, then:
#   - FLOPs: solbench's rules from the recorded shapes against
#     torch.utils.flop_counter's count of the same step (ratio 1.000);
#   - time: solbench's per-instance mean against the profiler's own
#     key_averages (ratio 1.000: the same events, read independently);
#   - speed: PyTorch's matmuls against solbench's own GEMM ceiling,
#     measured in the same run (compute.gemm fp32, square n=2048): the
#     %SOL `trace show --results` prints.
#
#   scripts/trace-torch-check.sh [--solbench PATH] [--python PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
sb=build/solbench py=python3
while [ $# -gt 0 ]; do
    case "$1" in
    --solbench) sb=$2; shift 2 ;;
    --python) py=$2; shift 2 ;;
    *) echo "usage: $0 [--solbench PATH] [--python PATH]" >&2; exit 2 ;;
    esac
done
if ! "$py" -c "import torch" 2>/dev/null; then
    echo "skipped: $py cannot import torch (give --python with one that can)"
    exit 0
fi
threads=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" - "$tmp/t.json" "$tmp/ref.json" "$threads" <<'PY' 2>/dev/null
import json, sys, torch
from torch.profiler import profile, ProfilerActivity
from torch.utils.flop_counter import FlopCounterMode
torch.manual_seed(0)
torch.set_num_threads(int(sys.argv[3]))
M, K, N = 1024, 2048, 2048
x, w, b = torch.randn(M, K), torch.randn(N, K), torch.randn(N)
ln = torch.nn.LayerNorm(N)
def step():
    y = torch.nn.functional.linear(x, w, b)
    z = torch.mm(y, w)
    return ln(torch.softmax(z, dim=-1))
for _ in range(3):
    step()
with FlopCounterMode(display=False) as fc:
    step()
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
    for _ in range(5):
        step()
p.export_chrome_trace(sys.argv[1])
avg = {e.key: e.cpu_time_total / e.count for e in p.key_averages()}
json.dump({"torch": torch.__version__, "threads": torch.get_num_threads(),
           "flops": {str(k): v for k, v in fc.get_flop_counts()["Global"].items()},
           "avg_us": avg}, open(sys.argv[2], "w"))
PY
"$sb" run --bench compute.gemm -p dtype=fp32 -p shape=square -p n=2048 \
    -p lib=auto --threads "$threads" --no-store --json "$tmp/g.json" >/dev/null
"$sb" trace show "$tmp/t.json" --results "$tmp/g.json" --json "$tmp/a.json" \
    --top 0 >"$tmp/show.txt"
python3 - "$tmp/a.json" "$tmp/ref.json" "$tmp/g.json" <<'PY'
import json, sys
a, ref, g = (json.load(open(f)) for f in sys.argv[1:4])
gemm = max(r["metrics"].get("GFLOPs", {}).get("value") or 0 for r in g["results"]
           if r["bench"] == "compute.gemm" and r.get("metrics"))
print(f"torch {ref['torch']}, {ref['threads']} threads; solbench compute.gemm fp32 n=2048: {gemm:.1f} GFLOP/s")
ok = True
for op in ("aten::addmm", "aten::mm", "aten::_softmax", "aten::native_layer_norm"):
    rows = [o for o in a["ops"] if o["op"] == op]
    if not rows:
        print(f"FAIL: {op} not in the analysis"); ok = False; continue
    o = rows[0]
    mean_us = o["seconds"] / o["count"] * 1e6
    tr = mean_us / ref["avg_us"][op]
    line = f"{op:26s} time/instance {mean_us:9.1f} us, profiler {ref['avg_us'][op]:9.1f} us ({tr:.3f})"
    key = op.replace("::", ".")
    if key in ref["flops"]:
        fr = (o["flops"] / o["count"]) / ref["flops"][key]
        line += f"; FLOPs {o['flops'] / o['count']:.4g} vs flop_counter ({fr:.3f})"
        ok &= abs(fr - 1) < 1e-9
        line += f"; {o['achieved'] / 1e9:.1f} GFLOP/s = {o['pct_sol']:.1f} % of solbench's GEMM"
    ok &= abs(tr - 1) < 0.01
    print(line)
print("checks met" if ok else "FAIL: a ratio off 1")
sys.exit(0 if ok else 1)
PY
