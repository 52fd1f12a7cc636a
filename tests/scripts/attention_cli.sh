#!/usr/bin/env bash
# The attention benchmarks from the command line: bad shapes exit 2 with
# one line naming the parameter before anything runs, and a small ragged
# paged batch (lengths 0, 1, 17, 300; a prefill chunk) and a chunked causal
# prefill run, verify, and report FLOPs, bytes, GFLOP/s, GB/s and AI.
set -u
sb=$1
fail=0 pass=0
expect() { # expect WORD -- args...
  local word=$1; shift; shift
  local err rc lines
  err=$("$sb" "$@" 2>&1 >/dev/null); rc=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && printf '%s' "$err" | grep -q -- "$word"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: solbench $* -> rc=$rc, stderr: $err (wanted '$word' on one line)"
  fi
}
expect "kv_heads"  -- run --no-store --bench attention.prefill -p q_heads=8 -p kv_heads=3
expect "kv_heads"  -- run --no-store --bench attention.paged_decode -p q_heads=32 -p kv_heads=5
expect "page_size" -- run --no-store --bench attention.paged_decode -p page_size=0
expect "lens"      -- run --no-store --bench attention.paged_decode -p lens=uniform:9:2
expect "lens"      -- run --no-store --bench attention.paged_decode -p batch=3 -p lens=1/2
expect "dtype"     -- run --no-store --bench attention.bmm -p dtype=fp8
expect "kv_dtype"  -- run --no-store --backend cpu --bench attention.paged_decode -p kv_dtype=fp8

d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
run_ok() { # run_ok FILE -- args...
  local f=$1; shift; shift
  if "$sb" run --no-store --quiet --min-time 0.02 --repeat 2 --json "$f" "$@" \
       >/dev/null 2>"$d/err"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: solbench run $*: $(cat "$d/err")"
  fi
}
run_ok "$d/pd.json" -- --bench attention.paged_decode -p batch=0 \
  -p lens=0/1/17/300 -p chunk=4 -p chunk_every=2 -p q_heads=8 -p kv_heads=2 \
  -p head_dim=64
run_ok "$d/pdh.json" -- --backend cpu --bench attention.paged_decode -p batch=0 \
  -p lens=0/1/17/300 -p chunk=4 -p chunk_every=2 -p q_heads=8 -p kv_heads=2 \
  -p head_dim=64 -p kv_dtype=bf16
run_ok "$d/pf.json" -- --bench attention.prefill -p q_heads=8 -p kv_heads=2 \
  -p head_dim=64 -p sq=64 -p skv=200 -p causal=1
if python3 - "$d/pd.json" "$d/pf.json" "$d/pdh.json" <<'PY'
import json, sys
res = {}
for f in sys.argv[1:3]:
    for r in json.load(open(f))["results"]:
        if r.get("backend", "cpu") == "cpu":  # other backends may be skipped
            res[r["bench"]] = r
ok = True
for name in ("attention.paged_decode", "attention.prefill"):
    r = res.get(name)
    if r is None:
        print("missing", name); ok = False; continue
    m = r["metrics"]
    for k in ("flops", "bytes", "GFLOPs", "GBps", "AI", "latency_us"):
        if k not in m or not m[k]["value"] > 0:
            print(name, "lacks", k); ok = False
    if not r["valid"]:
        print(name, "not valid"); ok = False
pd = res.get("attention.paged_decode")
if pd:
    # Hand count: lens 0,1,17,300 with chunk 4 on sequences 0 and 2:
    # q = 1,1,4,1; keys seen 0 + 1 + (14+15+16+17) + 300 = 363.
    flop = 4 * 8 * 64 * 363
    byts = 4 * (2 * 2 * 64 * 318 + 2 * 8 * 64 * 7) + 4 * (0 + 1 + 2 + 19)
    if pd["metrics"]["flops"]["value"] != flop: print("flops", pd["metrics"]["flops"]["value"], flop); ok = False
    if pd["metrics"]["bytes"]["value"] != byts: print("bytes", pd["metrics"]["bytes"]["value"], byts); ok = False
# the same batch with a bf16 cache: valid, K and V at 2 bytes an element
pdh = [r for r in json.load(open(sys.argv[3]))["results"] if r["bench"] == "attention.paged_decode"]
if len(pdh) != 1 or not pdh[0]["valid"]:
    print("bf16 paged decode missing or not valid"); ok = False
else:
    byts = 2 * (2 * 2 * 64 * 318) + 4 * (2 * 8 * 64 * 7) + 4 * (0 + 1 + 2 + 19)
    if pdh[0]["metrics"]["bytes"]["value"] != byts: print("bf16 bytes", pdh[0]["metrics"]["bytes"]["value"], byts); ok = False
    if pdh[0]["params"].get("kv_dtype") != "bf16": print("kv_dtype", pdh[0]["params"]); ok = False
sys.exit(0 if ok else 1)
PY
then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: attention JSON check"; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
