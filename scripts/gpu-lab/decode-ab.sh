#!/usr/bin/env bash
# decode-ab.sh — two builds of solbench's paged-decode kernel side by side
# on one GPU: each must verify at the correctness shapes (and fail with a
# planted error), then the reference points of gpu-check.sh (batch 256,
# 1024-4096 tokens, fp32/bf16/fp8 KV, and the bf16 register budget) run
# alternately, A B A B, so that clock and power drift fall on both.
#
# Usage (on the GPU machine, after gpu-check.sh --pack's carry is
# unpacked): scripts/gpu-lab/decode-ab.sh DIR A B [ROUNDS]
#   DIR holds lib/ (gpu-check.sh --pack); A and B are solbench binaries.
# Writes OUT (default ./decode-ab-out)/{A,B}-r*.json and prints a table.
# On an H200 the checks of two builds (memcheck most of it) took over five
# minutes of 2026-12-04's 400 s run; give it 600 s, or ROUNDS=1.
set -u
cd "$(dirname "$0")/../.." || exit 2
DIR=$(cd "${1:?DIR}" && pwd) || exit 2
A=$2 B=$3 ROUNDS=${4:-2}
O=${OUT:-$PWD/decode-ab-out}
mkdir -p "$O"
# shellcheck source=scripts/lib/gpu-libs.sh
. scripts/lib/gpu-libs.sh
sb_gpu_libs "$DIR" >/dev/null || exit 2
rc=0
for sb in "$A" "$B"; do
    n=$(basename "$sb")
    for c in "-p batch=16 -p lens=uniform:1:2048 -p chunk=0,16 -p head_dim=64,128,256 -p kv_dtype=fp32,bf16,fp8" \
             "-p batch=8 -p lens=0/1/17/300/5000/9000/1/33 -p q_heads=32 -p kv_heads=1 -p page_size=1,16 -p kv_dtype=fp32,bf16,fp8" \
             "-p batch=8 -p lens=uniform:1:2048 -p q_heads=64 -p kv_heads=8 -p heads_per_block=1,2,4,0 -p kv_dtype=bf16,fp8"; do
        # shellcheck disable=SC2086
        "$sb" run --no-store --quiet --backend cuda --bench attention.paged_decode $c \
            --min-time 0 --repeat 1 >>"$O/$n-check.log" 2>&1 || { echo "$n: FAILED $c"; rc=1; }
        # shellcheck disable=SC2086
        "$sb" run --no-store --quiet --backend cuda --bench attention.paged_decode $c \
            -p plant_error=1 --min-time 0 --repeat 1 >>"$O/$n-check.log" 2>&1
        [ $? = 1 ] || { echo "$n: planted error NOT caught: $c"; rc=1; }
    done
    if command -v compute-sanitizer >/dev/null; then
        timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$sb" run --no-store \
            --quiet --backend cuda --bench attention.paged_decode -p batch=4 \
            -p lens=0/3/40/700 -p chunk=8 -p chunk_every=2 -p kv_dtype=fp32,bf16,fp8 \
            --min-time 0 --repeat 1 >>"$O/$n-memcheck.log" 2>&1 || { echo "$n: memcheck rc=$?"; rc=1; }
    fi
    echo "$n: checks done"
done
for r in $(seq 1 "$ROUNDS"); do
    for sb in "$A" "$B"; do
        n=$(basename "$sb")
        "$sb" run --no-store --quiet --backend cuda --bench memory.read,attention.paged_decode \
            -p size=4GiB -p batch=256 -p lens=uniform:1024:4096 -p chunk=0 \
            -p kv_dtype=fp32,bf16,fp8 --min-time 0.5 --json "$O/$n-r$r.json" >/dev/null 2>&1 ||
            { echo "$n round $r: exit $?"; rc=1; }
        "$sb" run --no-store --quiet --backend cuda --bench attention.paged_decode \
            -p batch=256 -p lens=uniform:1024:4096 -p chunk=0 -p kv_dtype=bf16,fp8 \
            -p q_heads=64 -p kv_heads=8 -p heads_per_block=0,4 --min-time 0.5 \
            --json "$O/$n-b$r.json" >/dev/null 2>&1 || { echo "$n budget $r: exit $?"; rc=1; }
    done
done
python3 - "$O" <<'PY'
import glob, json, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*-[rb][0-9]*.json"))):
    n = os.path.basename(f).rsplit("-", 1)[0]
    for r in json.load(open(f)).get("results", []):
        p = r.get("params", {})
        k = (r["bench"], p.get("kv_dtype", ""), p.get("q_heads", ""), p.get("heads_per_block", ""))
        v = r.get("metrics", {}).get("GBps", {}).get("value")
        rows.setdefault(k, {}).setdefault(n, []).append((v or 0, r.get("valid")))
names = sorted({n for d in rows.values() for n in d})
print("point".ljust(44) + "".join(n.rjust(22) for n in names))
for k, d in sorted(rows.items()):
    print(" ".join(str(x) for x in k).ljust(44) +
          "".join(("/".join(f"{v:.0f}{'' if ok else '!'}" for v, ok in d.get(n, []))).rjust(22)
                  for n in names))
PY
exit $rc
