#!/usr/bin/env bash
# The PJRT backend on the CPU plugin `make deps` fetches (or the one
# $SOLBENCH_PJRT_PLUGIN names): compute.gemm runs through StableHLO and
# verifies in fp32 and bf16, so do the memory kernels, the transfers and
# the collectives across the client's devices; a planted wrong element
# fails the run (exit
# 1); a plugin that does not load is a skipped result saying why (exit 0);
# bad input exits 2 before any plugin is loaded; beside the CPU's GEMM the
# result carries pct_cpu_gemm. Exit 77 (skipped) where the build has no
# PJRT backend or no plugin loads here.
#   usage: pjrt_cli.sh SOLBENCH
set -u
sb=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$sb" list | grep -q "^compute.gemm .*pjrt" ||
    { echo "this build has no PJRT backend (no pjrt_c_api.h: make deps)"; exit 77; }

# Bad input: exit 2, before any plugin is asked for.
out=$(SOLBENCH_PJRT_PLUGIN=/nonexistent/plugin.so "$sb" run --no-store --backend pjrt \
    --bench compute.gemm -p shape=square -p n=128 -p k=70000 2>&1)
[ $? = 2 ] || fail "k=70000: expected exit 2: $out"
echo "$out" | grep -q "k=70000" || fail "k=70000: no message: $out"
out=$("$sb" run --no-store --backend pjrt \
    --bench compute.gemm -p shape=llm -p k=64 2>&1)
[ $? = 2 ] || fail "k with shape=llm: expected exit 2: $out"
echo "$out" | grep -q "k" || fail "k with shape=llm: no message: $out"
out=$("$sb" run --no-store --backend pjrt --pjrt-plugin "" --bench compute.gemm 2>&1)
[ $? = 2 ] || fail "an empty --pjrt-plugin: expected exit 2: $out"

# A plugin the user named that does not load is bad input: exit 2 and one
# line, before anything is measured (nothing stored) -- a missing file, a
# named pipe (dlopen would block on it), a truncated object (dlopen would
# map past its end), a library that is no PJRT plugin.
mkfifo "$d/fifo"
head -c 1000 "$(ldd "$sb" | awk '/libz.so/ {print $3}')" >"$d/trunc.so"
libz=$(ldd "$sb" | awk '/libz.so/ {print $3}')
for bad in "/nonexistent/plugin.so:No such file" "$d/fifo:named pipe" \
           "$d/trunc.so:truncated" "$libz:not a PJRT plugin"; do
    path=${bad%%:*} why=${bad#*:}
    out=$(timeout 20 "$sb" run --backend pjrt --pjrt-plugin "$path" --db "$d/none.db" \
        --bench compute.gemm -p n=128 -p dtype=fp32 2>&1)
    rc=$?
    [ $rc = 2 ] && echo "$out" | grep -q "run --pjrt-plugin: .*$why" &&
        [ "$(echo "$out" | wc -l)" -eq 1 ] && [ ! -e "$d/none.db" ] ||
        fail "run --pjrt-plugin $path: expected exit 2 and one line ($why): rc $rc: $out"
    out=$(SOLBENCH_PJRT_PLUGIN=$path timeout 20 "$sb" sysinfo 2>&1)
    rc=$?
    [ $rc = 2 ] && echo "$out" | grep -q "SOLBENCH_PJRT_PLUGIN: .*$why" ||
        fail "sysinfo with \$SOLBENCH_PJRT_PLUGIN=$path: expected exit 2 ($why): rc $rc: $out"
done

# Both dtypes verify on the plugin.
"$sb" run --no-store --quiet --backend pjrt --bench compute.gemm -p n=128 \
    -p shape=square --json "$d/r.json" >"$d/out" 2>&1 || fail "run: exit $?: $(cat "$d/out")"
python3 - "$d/r.json" <<'PY' || exit $?
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
if rs and all(r.get("skipped") for r in rs):
    print("no PJRT plugin loads here: %s" % rs[0]["notes"])
    sys.exit(77)
dts = sorted(r["params"]["dtype"] for r in rs)
assert dts == ["bf16", "fp32"], dts
for r in rs:
    assert r["backend"] == "pjrt" and r["valid"], r
    g = r["metrics"]["GFLOPs"]["value"]
    f = r["metrics"]["flops"]["value"]
    assert f == 2 * 128 ** 3, f
    assert g > 0.01, g
    assert any(n.startswith("pjrt: platform ") for n in r["notes"]), r["notes"]
    assert r["metrics"]["max_rel_err"]["value"] < (1.6e-2 if r["params"]["dtype"] == "bf16" else 1e-5)
print("pjrt: both dtypes valid")
PY

# LLM and decode shapes (K != N): two products an iteration, each counted
# as one run of 2 M N K FLOPs; both verify; ffn is N of both.
"$sb" run --no-store --quiet --backend pjrt --bench compute.gemm -p dtype=fp32 \
    -p shape=llm,decode -p tokens=64 -p d_model=96 -p batch=3 -p ffn=200 \
    --json "$d/l.json" >"$d/out" 2>&1 || fail "llm, decode: exit $?: $(cat "$d/out")"
python3 - "$d/l.json" <<'PY' || exit 1
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
assert sorted(r["params"]["shape"] for r in rs) == ["decode", "llm"], rs
for r in rs:
    assert r["valid"], r
    m, n = (64, 200) if r["params"]["shape"] == "llm" else (3, 200)
    assert r["metrics"]["flops"]["value"] == 2 * m * n * 96, r["metrics"]["flops"]
    assert any("two products an iteration" in x for x in r["notes"]), r["notes"]
    g = r["metrics"]["GFLOPs"]["value"]
    assert abs(g - 2 * m * n * 96 / r["stats"]["p50"] * 1e-9) <= 1e-9 * g, g
print("pjrt gemm: llm and decode shapes valid")
PY

# fp8 (E4M3FN) where the plugin takes it: valid, or skipped in the
# plugin's words.
out=$("$sb" run --no-store --backend pjrt --bench compute.gemm -p dtype=fp8 \
    -p shape=square,llm -p n=128 -p tokens=64 -p d_model=96 2>&1)
[ $? = 0 ] || fail "fp8: exit $?: $out"
echo "$out" | grep -q "compute.gemm@pjrt .*dtype=fp8 .*skipped: pjrt:\|compute.gemm@pjrt .*dtype=fp8 .* yes \+\(yes\|NO\)$" ||
    fail "fp8: neither valid nor skipped by the plugin: $out"

# The attention block and the MoE kernels as StableHLO programs: each
# verifies against the definitions' double references; a planted error
# fails the run.
"$sb" run --no-store --quiet --backend pjrt --area attention,moe \
    -p attention.prefill:sq=64 -p q_heads=4 -p kv_heads=2 -p head_dim=32 \
    -p causal=0,1 -p attention.prefill:dtype=fp32,bf16 -p tokens=64 \
    -p attention.bmm:shape=qk,pv -p seq=64 -p attention.bmm:head_dim=32 \
    -p attention.paged_decode:batch=5 -p lens=0/1/17/40/100 -p page_size=16 \
    -p attention.paged_decode:chunk=0,16 -p chunk_every=2 \
    -p d_model=32 -p experts=8 -p topk=2 -p moe.grouped_gemm:ffn=48 \
    -p moe.grouped_gemm:gated=0,1 --json "$d/a.json" >"$d/out" 2>&1 ||
    fail "attention, moe: exit $?: $(cat "$d/out")"
python3 - "$d/a.json" <<'PY' || exit 1
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
got = sorted((r["bench"], r["params"].get("causal"), r["params"].get("dtype")) for r in rs
             if r["bench"] == "attention.prefill")
assert len(got) == 4, got
bmm = sorted(r["params"]["shape"] for r in rs if r["bench"] == "attention.bmm")
assert bmm == ["pv", "qk"], bmm
paged = sorted(r["params"]["chunk"] for r in rs if r["bench"] == "attention.paged_decode")
assert paged == [0, 16], paged
assert sorted(r["bench"] for r in rs if r["bench"].startswith("moe.")) == \
    ["moe.combine", "moe.dispatch", "moe.grouped_gemm", "moe.grouped_gemm",
     "moe.route"], [r["bench"] for r in rs]
for r in rs:
    assert r["backend"] == "pjrt" and r["valid"], r
    if r["bench"] != "moe.dispatch":  # a data mover: no FLOPs
        assert r["metrics"]["flops"]["value"] > 0, r
print("pjrt attention.bmm (qk, pv), prefill (4 points), paged_decode (decode "
      "and chunks, a length 0 among them) and moe route, dispatch, combine, "
      "grouped_gemm (plain and gated) valid")
PY
out=$("$sb" run --no-store --backend pjrt --bench attention.prefill -p plant_error=1 \
    -p sq=64 -p q_heads=4 -p kv_heads=2 -p head_dim=32 2>&1)
[ $? = 1 ] || fail "attention.prefill plant_error: expected exit 1: $out"
out=$("$sb" run --no-store --backend pjrt --bench attention.paged_decode \
    -p plant_error=1 -p batch=4 -p lens=uniform:1:64 -p q_heads=4 -p kv_heads=2 \
    -p head_dim=32 2>&1)
[ $? = 1 ] || fail "attention.paged_decode plant_error: expected exit 1: $out"
out=$("$sb" run --no-store --backend pjrt --bench attention.bmm -p plant_error=1 \
    -p seq=64 -p head_dim=32 2>&1)
[ $? = 1 ] || fail "attention.bmm plant_error: expected exit 1: $out"
for b in moe.route moe.dispatch moe.combine moe.grouped_gemm; do
    out=$("$sb" run --no-store --backend pjrt --bench $b -p plant_error=1 \
        -p tokens=64 -p d_model=32 2>&1)
    [ $? = 1 ] || fail "$b plant_error: expected exit 1: $out"
    echo "$out" | grep -q "verification failed" || fail "$b plant_error: no note: $out"
done

# The memory kernels written in StableHLO: copy, scale, add, triad, read
# verify.
"$sb" run --no-store --quiet --backend pjrt --area memory -p size=1MiB \
    --json "$d/m.json" >"$d/out" 2>&1 || fail "memory: exit $?: $(cat "$d/out")"
python3 - "$d/m.json" <<'PY' || exit 1
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
names = sorted(r["bench"] for r in rs)
assert names == ["memory.add", "memory.copy", "memory.read", "memory.scale",
                 "memory.triad"], names
words = {"memory.scale": 2, "memory.add": 3, "memory.triad": 3, "memory.read": 1,
         "memory.copy": 2}
for r in rs:
    assert r["backend"] == "pjrt" and r["valid"], r
    n = 1048576 // (4 * words[r["bench"]])
    assert r["metrics"]["bytes"]["value"] == 4 * n * words[r["bench"]], r["metrics"]["bytes"]
    assert r["metrics"]["GBps"]["value"] > 0.01, r["metrics"]["GBps"]
print("pjrt memory: copy, scale, add, triad, read valid")
PY
out=$("$sb" run --no-store --backend pjrt --bench memory.triad -p size=1MiB \
    -p plant_error=1 2>&1)
[ $? = 1 ] || fail "memory plant_error: expected exit 1: $out"
echo "$out" | grep -q "1 of 87381 output elements after 3 passes differ" ||
    fail "memory plant_error: no note: $out"

# Transfers: h2d and d2h of whole words verify; what only the host
# backend takes is refused.
"$sb" run --no-store --quiet --backend pjrt --area transfer -p size=64KiB \
    --json "$d/t.json" >"$d/out" 2>&1 || fail "transfer: exit $?: $(cat "$d/out")"
python3 - "$d/t.json" <<'PY' || exit 1
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
assert sorted(r["bench"] for r in rs) == ["transfer.bidir", "transfer.d2h",
                                          "transfer.h2d"], rs
for r in rs:
    assert r["backend"] == "pjrt" and r["valid"], r
    assert r["params"]["host"] == "pageable", r["params"]
    both = r["bench"] == "transfer.bidir"
    assert r["metrics"]["bytes"]["value"] == 65536 * (2 if both else 1), r["metrics"]["bytes"]
    if both:  # each direction timed to its own event, within the pair's span
        m = r["metrics"]
        for d in ("h2d", "d2h"):
            assert m[d + "_GBps"]["value"] >= 0.5 * m["GBps"]["value"] * 0.999, m
print("pjrt transfer: h2d, d2h, bidir valid")
PY
out=$("$sb" run --no-store --backend pjrt --bench transfer.h2d -p numa=0 2>&1)
[ $? = 2 ] || fail "transfer numa: expected exit 2: $out"

# Collectives across the client's devices: each verifies (a collective the
# platform's compiler lacks is a skipped result naming it); S, busbw and
# the device count as nccl-tests define them; the run's machine document
# names the plugin's devices and its fingerprint covers them.
"$sb" run --no-store --quiet --backend pjrt --area network -p size=64KiB \
    --json "$d/n.json" >"$d/out" 2>&1 || fail "network: exit $?: $(cat "$d/out")"
python3 - "$d/n.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
pj = doc["system"]["pjrt"]
assert pj["devices"] >= 1 and pj["platform"] and pj["api_version"], pj
assert ";pjrt=%s/%s/x%d/" % (pj["platform"], pj["device_kind"], pj["devices"]) in \
    doc["system"]["fingerprint_of"], doc["system"]["fingerprint_of"]
rs = doc["results"]
names = sorted(r["bench"] for r in rs)
assert names == ["network.allgather", "network.allreduce", "network.alltoall",
                 "network.bcast", "network.reduce_scatter", "network.sendrecv"], names
if pj["devices"] < 2:
    assert all(r["skipped"] and "2 devices or more" in r["notes"][0] for r in rs), rs
    print("pjrt network: one device, every collective skipped")
    sys.exit(0)
n = pj["devices"]
factor = {"network.allreduce": 2 * (n - 1) / n, "network.bcast": 1, "network.sendrecv": 1}
ran = 0
for r in rs:
    if r["skipped"]:
        # only a collective the compiler lacks, said in its words
        assert r["bench"] == "network.bcast" and "not supported" in r["notes"][0], r
        continue
    ran += 1
    assert r["backend"] == "pjrt" and r["valid"], r
    m = r["metrics"]
    assert m["ranks"]["value"] == n, m["ranks"]
    elems = 16384 if r["bench"] in factor else 16384 // n * n
    assert m["bytes"]["value"] == 4 * elems, (r["bench"], m["bytes"])
    f = factor.get(r["bench"], (n - 1) / n)
    assert abs(m["busbw_factor"]["value"] - f) < 1e-12, (r["bench"], m["busbw_factor"])
    assert abs(m["busbw_GBps"]["value"] - f * m["algbw_GBps"]["value"]) <= \
        1e-9 * m["busbw_GBps"]["value"], m
    assert abs(m["algbw_GBps"]["value"] - 4 * elems / r["stats"]["p50"] * 1e-9) <= \
        1e-9 * m["algbw_GBps"]["value"], m
assert ran >= 5, ran
print("pjrt network: %d collectives valid on %d devices" % (ran, n))
PY
ndev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["system"]["pjrt"]["devices"])' "$d/n.json")
if [ "$ndev" -ge 2 ]; then
    out=$("$sb" run --no-store --backend pjrt --bench network.reduce_scatter \
        -p size=64KiB -p plant_error=1 2>&1)
    [ $? = 1 ] || fail "network plant_error: expected exit 1: $out"
    echo "$out" | grep -q "1 of .* checked elements after 3 iterations differ" ||
        fail "network plant_error: no note: $out"
    out=$("$sb" run --no-store --backend pjrt --bench network.allreduce \
        -p devices=$((ndev + 1)) 2>&1)
    [ $? = 0 ] || fail "more devices than the client's: expected exit 0: $out"
    echo "$out" | grep -q "skipped: network.allreduce on pjrt: devices=$((ndev + 1)), the client has $ndev" ||
        fail "more devices than the client's: no skip line: $out"
fi
out=$("$sb" run --no-store --backend pjrt --bench network.allreduce -p devices=65 2>&1)
[ $? = 2 ] || fail "devices=65: expected exit 2: $out"
out=$("$sb" sysinfo --pjrt-plugin /nonexistent/plugin.so 2>&1)
[ $? = 2 ] && echo "$out" | grep -q "sysinfo --pjrt-plugin: PJRT plugin /nonexistent/plugin.so" ||
    fail "sysinfo with a missing named plugin: expected exit 2: $out"

# Not named, a plugin installed as a Python package is found: libtpu in
# the virtual environment first (here a stand-in for it).
plugin0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["system"]["pjrt"]["plugin"])' "$d/n.json")
mkdir -p "$d/venv/lib/python3.99/site-packages/libtpu"
ln -s "$(readlink -f "$plugin0")" "$d/venv/lib/python3.99/site-packages/libtpu/libtpu.so"
out=$(env -u SOLBENCH_PJRT_PLUGIN VIRTUAL_ENV="$d/venv" "$sb" run --no-store \
    --backend pjrt --bench memory.scale -p size=64KiB 2>&1)
[ $? = 0 ] || fail "a plugin in a virtual environment: exit $?: $out"
echo "$out" | grep -q "plugin $d/venv/lib/python3.99/site-packages/libtpu/libtpu.so" ||
    fail "the plugin of the virtual environment was not found: $out"

# A planted wrong element: the run fails its verification, exit 1.
out=$("$sb" run --no-store --backend pjrt --bench compute.gemm -p n=128 \
    -p shape=square -p dtype=fp32 -p plant_error=1 2>&1)
[ $? = 1 ] || fail "plant_error: expected exit 1: $out"
echo "$out" | grep -q "1 of 16384 elements of A after 3 iterations differ" || fail "plant_error: no note: $out"

# Beside the CPU's GEMM of the same run (the plugin named, so both
# backends run): the share of it, as a metric (a CPU plugin only).
read -r platform plugin < <(python3 -c '
import json, re, sys
for n in json.load(open(sys.argv[1]))["results"][0]["notes"]:
    m = re.search(r"^pjrt: platform (\S+),.* plugin (\S+)$", n)
    if m: print(m.group(1).rstrip(","), m.group(2)); break' "$d/r.json")
[ -n "$plugin" ] || fail "no platform and plugin path in the notes"
if [ "$platform" != cpu ]; then
    echo "the plugin's platform is $platform: no CPU share to check"
    echo "ok"
    exit 0
fi
"$sb" run --no-store --quiet --bench compute.gemm -p compute.gemm:shape=square \
    -p n=256 -p dtype=fp32 --pjrt-plugin "$plugin" --json "$d/b.json" \
    >"$d/out" 2>&1 || fail "both backends: exit $?: $(cat "$d/out")"
python3 - "$d/b.json" <<'PY' || exit 1
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
be = [r["backend"] for r in rs]
assert be == ["cpu", "pjrt"], be  # the host's first, then the device's
p = rs[1]
assert rs[0]["valid"] and p["valid"], rs
share = p["metrics"]["pct_cpu_gemm"]["value"]
cpu = rs[0]["metrics"]["GFLOPs_best"]["value"]
assert abs(share - 100 * p["metrics"]["GFLOPs_best"]["value"] / cpu) < 1e-6 * share, (share, cpu)
print("pjrt fp32 n=256: %.1f %% of the CPU GEMM's best" % share)
PY
echo "ok"
