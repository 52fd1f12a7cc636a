#!/usr/bin/env bash
# compute_cli.sh SOLBENCH — the compute area end to end: compute.peak then
# compute.gemm in one run, checked through the JSON document (valid
# results, the metrics and ceilings they promise, MFU against the peak the
# same run measured, the BLAS note), and bad compute parameters exiting 2
# with a line that names the parameter.
set -u
sb=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
die() { echo "FAIL: $*" >&2; fail=1; }

"$sb" run --no-store --quiet --backend cpu --bench compute.peak,compute.gemm \
    -p dtype=fp64 -p shape=square -p n=192 -p cores=all \
    --min-time 0.05 --json "$d/r.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "run exited $?"; }
python3 - "$d/r.json" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
res = doc["results"]
bad = []
peak = [r for r in res if r["bench"] == "compute.peak"]
gemm = [r for r in res if r["bench"] == "compute.gemm"]
if len(peak) != 1 or len(gemm) != 1:
    bad.append("want one peak and one gemm result, got %d, %d" % (len(peak), len(gemm)))
for r in peak + gemm:
    if not r["valid"]:
        bad.append("%s not valid: %s" % (r["bench"], r["notes"]))
if peak:
    m = peak[0]["metrics"]
    # the theoretical peak needs the clock; a busy machine can leave it
    # uncertain, and then the result must say so instead
    uncertain = any(n.startswith("no theoretical peak: the core clock is "
                                 "uncertain") for n in peak[0]["notes"])
    want = ["GFLOPs", "GFLOPs_best"]
    if not uncertain:
        want += ["theoretical_GFLOPs", "pct_of_theoretical", "GHz"]
    elif "theoretical_GFLOPs" in m or "GHz" in m:
        bad.append("compute.peak: a theoretical peak although the clock is "
                   "uncertain")
    for k in want:
        if k not in m or not m[k]["value"] > 0:
            bad.append("compute.peak metric %s missing or not positive" % k)
    if "GFLOPs" in m and "GFLOPs_best" in m and m["GFLOPs_best"]["value"] < m["GFLOPs"]["value"]:
        bad.append("best below median")
if gemm and peak:
    m = gemm[0]["metrics"]
    flops = 2 * 192 ** 3
    p50 = gemm[0]["stats"]["p50"]
    if abs(m["GFLOPs"]["value"] - flops / p50 * 1e-9) > 1e-6 * m["GFLOPs"]["value"]:
        bad.append("GFLOPs is not 2MNK / median")
    best = peak[0]["metrics"]["GFLOPs_best"]["value"]
    if "MFU" not in m:
        bad.append("no MFU although compute.peak ran first")
    elif abs(m["MFU"]["value"] - m["GFLOPs"]["value"] / best) > 1e-9:
        bad.append("MFU %g != GFLOPs / peak.fp64 %g" % (m["MFU"]["value"], m["GFLOPs"]["value"] / best))
    if not any(n.startswith("library: ") and "kernel" in n for n in gemm[0]["notes"]):
        bad.append("no library note")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# Each library by name, and a decode point: valid or skipped with a
# reason; a decode point reports the weights' rate and the gemv ceiling.
"$sb" run --no-store --quiet --backend cpu --bench compute.gemm \
    -p dtype=fp32,bf16 -p lib=openblas,onednn -p shape=square -p n=128 \
    --min-time 0.02 --json "$d/l.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "lib run exited $?"; }
"$sb" run --no-store --backend cpu --bench compute.gemm \
    -p dtype=fp32 -p shape=decode -p d_model=512 -p batch=1,8 \
    --min-time 0.05 --json "$d/dec.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "decode run exited $?"; }
grep -Eq "gemv.fp32 +[0-9.]+ GB/s +\(measured\)" "$d/out" ||
    die "no gemv.fp32 ceiling in the machine profile: $(cat "$d/out")"
python3 - "$d/l.json" "$d/dec.json" <<'PY' || fail=1
import json, sys
bad = []
res = json.load(open(sys.argv[1]))["results"]
if len(res) != 4:
    bad.append("want 4 lib results, got %d" % len(res))
for r in res:
    p = {k: v for k, v in r["params"].items()}
    if r.get("skipped"):
        if not any("unsupported" in n for n in r["notes"]):
            bad.append("skipped without a reason: %r" % p)
        if p.get("lib") == "openblas" and p.get("dtype") == "fp32":
            bad.append("openblas fp32 skipped")
        continue
    if not r["valid"]:
        bad.append("not valid: %r %s" % (p, r["notes"]))
    lib = p.get("lib")
    want = {"openblas": "library: openblas, kernel OpenBLAS core",
            "onednn": "library: onednn, kernel oneDNN "}[lib]
    if not any(n.startswith(want) for n in r["notes"]):
        bad.append("%s: no note %r: %s" % (lib, want, r["notes"]))
dec = json.load(open(sys.argv[2]))
res = dec["results"]
if len(res) != 2:
    bad.append("want 2 decode results, got %d" % len(res))
for r in res:
    m = r["metrics"]
    if not r["valid"] or "weight_GBps" not in m or not m["weight_GBps"]["value"] > 0:
        bad.append("decode result without weight_GBps: %s" % r["notes"])
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# An ISA the CPU lacks is a skipped result with a reason, and exit 0.
if ! grep -q avx512f /proc/cpuinfo 2>/dev/null; then
    "$sb" run --no-store --backend cpu --bench compute.peak -p isa=avx512 \
        -p dtype=fp32 --min-time 0.01 >"$d/out" 2>&1 ||
        die "isa=avx512 on a CPU without it exited $?"
    grep -q "unsupported: avx512 not available on this CPU" "$d/out" ||
        die "no 'unsupported' line for isa=avx512: $(cat "$d/out")"
fi

# compute.noise: fixed quanta on every thread, their interruptions
"$sb" run --no-store --quiet --backend cpu --bench compute.noise \
    -p quantum=200 -p sample=0.02 --repeat 5 --json "$d/n.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "compute.noise exited $?"; }
python3 - "$d/n.json" <<'PY' || fail=1
import json, sys
r = [r for r in json.load(open(sys.argv[1]))["results"] if r["bench"] == "compute.noise"]
assert len(r) == 1 and r[0]["valid"], r
m = {k: v["value"] for k, v in r[0]["metrics"].items()}
# the shortest quantum is about the one asked for (the chain's rate was
# taken at its fastest); every figure there, the sizes in order
assert 100 <= m["quantum_us"] <= 400, m
assert 0 <= m["noise_pct"] < 100 and m["interrupts_per_s"] >= 0, m
q = [m["interrupt_%s_us" % k] for k in ("min", "p50", "p90", "p99", "max")]
assert q == sorted(q), q
assert m["interrupts_per_s"] == 0 or q[0] > 50, q  # above the threshold
# 100 quanta an iteration, the first of each call not kept
assert m["quanta"] >= 5 * 99, m
assert any("every thread ran every quantum" in n for n in r[0]["notes"]), r[0]["notes"]
PY

# rotate=1: small weights multiplied in turn, copies past 4x the LLC; the
# product's time said; a plain decode point beside it
"$sb" run --no-store --quiet --backend cpu --bench compute.gemm \
    -p dtype=fp32 -p shape=decode -p d_model=256 -p ffn=512 -p rotate=0,1 \
    --min-time 0.05 --json "$d/rot.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "rotate run exited $?"; }
python3 - "$d/rot.json" <<'PY' || fail=1
import json, os, re, sys
res = json.load(open(sys.argv[1]))["results"]
assert len(res) == 2 and all(r["valid"] for r in res), res
rot = [r for r in res if r["params"]["rotate"] == 1][0]
one = [r for r in res if r["params"]["rotate"] == 0][0]
notes = [n for n in rot["notes"] if n.startswith("rotate: ")]
assert len(notes) == 1, rot["notes"]
m = re.match(r"rotate: (\d+) copies multiplied in turn \((\d+) MiB together, "
             r"([0-9.]+)x the last-level cache\), ([0-9.]+) us a product", notes[0])
assert m, notes[0]
copies, mib, llcx, us = int(m[1]), int(m[2]), float(m[3]), float(m[4])
# 256 x 512 fp32 = 0.5 MiB a copy; together at least 4x the LLC
assert copies >= 2 and abs(mib - copies * 0.5) <= 1 and llcx >= 3.95, notes[0]
# the product's median time, as the weight rate says
gb = rot["metrics"]["weight_GBps"]["value"]
assert abs(256 * 512 * 4 / (gb * 1e9) * 1e6 - us) <= 0.05 * us + 0.1, (gb, us)
assert not any(n.startswith("rotate: ") for n in one["notes"]), one["notes"]
# split=auto (the default): the two ways of running a decode product
# timed at setup, the faster named, both times said
for r in (rot, one) if len(os.sched_getaffinity(0)) >= 2 else ():
    sp = [n for n in r["notes"] if n.startswith("split=auto: ")]
    assert len(sp) == 1, r["notes"]
    m = re.match(r"split=auto: (the weights' rows over the threads|the library's own threads) "
                 r"\(a product ([0-9.]+) us split by the weights' rows, ([0-9.]+) us on "
                 r"the library's threads", sp[0])
    assert m, sp[0]
    rows_s, lib_s = float(m[2]), float(m[3])
    assert (m[1].startswith("the weights'")) == (rows_s < lib_s), sp[0]
# the plain point's 0.5 MiB fit the caches: no DRAM figure, no gemv ceiling
assert any(n.endswith("not a DRAM figure (< 4x), no gemv ceiling")
           for n in one["notes"]), one["notes"]
PY

# split=rows: the blocks said where the product splits (2 threads, 256
# rows of weights: 2 of 128), and why not where it cannot (32 rows)
"$sb" run --no-store --quiet --backend cpu --threads 2 --bench compute.gemm \
    -p dtype=fp32 -p shape=decode -p d_model=256 -p ffn=512 -p batch=2,32 \
    -p split=rows --min-time 0.02 --json "$d/split.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "split=rows run exited $?"; }
python3 - "$d/split.json" <<'PY' || fail=1
import json, sys
res = {r["params"]["batch"]: r for r in json.load(open(sys.argv[1]))["results"]}
assert all(r["valid"] for r in res.values()), res
assert "split=rows: the weights' 256 rows in 2 blocks of 128, one a thread, " \
    "partials summed" in res[2]["notes"], res[2]["notes"]
assert any(n.startswith("split=rows: not split") for n in res[32]["notes"]), \
    res[32]["notes"]
PY

# rotate=1 on the llm shape (an expert's rows of a prompt): the copies and
# the product's time said, against its GFLOP/s
"$sb" run --no-store --quiet --backend cpu --bench compute.gemm \
    -p dtype=fp32 -p shape=llm -p tokens=8 -p d_model=256 -p ffn=512 \
    -p rotate=1 --min-time 0.05 --json "$d/rotl.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "llm rotate run exited $?"; }
python3 - "$d/rotl.json" <<'PY' || fail=1
import json, re, sys
res = json.load(open(sys.argv[1]))["results"]
assert len(res) == 1 and res[0]["valid"], res
r = res[0]
notes = [n for n in r["notes"] if n.startswith("rotate: ")]
assert len(notes) == 1, r["notes"]
m = re.match(r"rotate: (\d+) copies multiplied in turn \((\d+) MiB together, "
             r"([0-9.]+)x the last-level cache\), ([0-9.]+) us a product", notes[0])
assert m and int(m[1]) >= 2 and float(m[3]) >= 3.95, notes[0]
us = float(m[4])
gf = r["metrics"]["GFLOPs"]["value"]
assert abs(2 * 8 * 256 * 512 / (gf * 1e9) * 1e6 - us) <= 0.05 * us + 0.1, (gf, us)
assert "weight_GBps" not in r["metrics"], r["metrics"]
PY

# Bad input: exit 2, one line naming the parameter.
expect2() {
    local what=$1; shift
    "$sb" run --no-store --quiet --backend cpu "$@" >"$d/out" 2>"$d/err"
    local rc=$?
    [ $rc -eq 2 ] || die "$* exited $rc, want 2"
    grep -q "$what" "$d/err" || die "$*: stderr does not name $what: $(cat "$d/err")"
}
expect2 "isa=avx3" --bench compute.peak -p isa=avx3
expect2 "dtype=fp16" --bench compute.peak -p dtype=fp16
expect2 "cores=3" --bench compute.peak -p cores=3
expect2 "dtype=int8" --bench compute.gemm -p dtype=int8
expect2 "n=-5" --bench compute.gemm -p n=-5
expect2 "shape=square" --bench compute.gemm -p shape=llm -p m=64
expect2 "n=2000000" --bench compute.gemm -p n=2000000
expect2 "lib" --bench compute.gemm -p lib=mkl
expect2 "rotate=1 applies to shape=decode" --bench compute.gemm -p rotate=1
expect2 "rotate" --bench compute.gemm -p shape=decode -p rotate=2
expect2 "split=rows applies to shape=decode" --bench compute.gemm -p split=rows
expect2 "split" --bench compute.gemm -p shape=decode -p split=cols
expect2 "batch, d_model and ffn" --bench compute.gemm -p shape=decode -p k=5
expect2 "quantum" --bench compute.noise -p quantum=10
exit $fail
