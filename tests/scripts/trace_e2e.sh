#!/usr/bin/env bash
# trace_e2e.sh SOLBENCH DATA_DIR — end-to-end tests of `solbench trace`
# against the fixtures in tests/data/trace (README.md there says what each
# holds and which figures are known by hand).
#   show:   every fixture exits 0 with the summary and the op table;
#           --hw h100-sxm places the GPU fixtures' ops (compute/memory rows
#           with a %SOL); the Kineto fixture: communication 34.9 %
#           overlapped, the H2D memcpy classed host, rank 0 of 2, the H100
#           spec taken from deviceProperties with an empty store; a CPU
#           trace has no machine model. show writes no database.
#   json:   --json is schema solbench.trace/1, every op with seconds >= 0
#           and a known class; the matmul FLOPs of the torch fixture per
#           step equal FlopCounterMode's count (torch_cpu_block.flops.json);
#           --csv has one record per JSON op, in the same order.
#   store:  import (default and --name), list, show NAME = show FILE, a
#           taken name refused naming it, rm, diff of two copies (+0.0%),
#           diff against a copy with every aten::mm twice as long.
#   bad:    truncated, cut and corrupt gzip, events without or with a
#           negative dur, text, empty, directory, missing file, FIFO; each
#           exit 2 with one line naming the file; usage errors exit 2 with
#           one line; failed imports store nothing.
#   nsys:   the Nsight Systems export of the Kineto step: same timeline
#           and rows, stored and read back, another SQLite refused.
#   hlo:    the JAX CPU fixture with --hlo: every op matched, the matmul
#           FLOPs per step as tests/data/trace/README.md derives them.
#   unknown: events of an unknown category and an op without a FLOP rule:
#           kept, shown as unclassified, counted in the notes line.
set -u
S=$1
D=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export SOLBENCH_DB=$W/empty/results.db
mkdir -p "$W/empty"
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
expect_rc() { # expected actual what
    if [ "$1" -eq "$2" ]; then ok "$3 (exit $2)"; else fail "$3: exit $2, expected $1"; fi
}
# has FILE ERE what: FILE has a line matching ERE
has() { if grep -Eq -- "$2" "$1"; then ok "$3"; else fail "$3: no line matching /$2/ in $1"; sed 's/^/    | /' "$1" | head -40; fi; }
# one_line FILE ERE what: FILE (stderr) is exactly one line, matching ERE
one_line() {
    local n
    n=$(wc -l <"$1")
    if [ "$n" -eq 1 ] && grep -Eq -- "$2" "$1"; then ok "$3: $(cat "$1")"
    else fail "$3: $n stderr line(s), expected one matching /$2/:"; sed 's/^/    | /' "$1" | head -10; fi
}
HEADER='^op +shapes +n +time +share +FLOP/s +B/s +AI +%SOL +class +at stake$'
FIXTURES=(torch_cpu_block.json.gz jax_cpu_block.json.gz kineto_gpu_small.json jax_gpu_small.json)

for f in "${FIXTURES[@]}"; do
    [ -f "$D/$f" ] || fail "fixture $D/$f missing"
done

# ---- show ------------------------------------------------------------------
for f in "${FIXTURES[@]}"; do
    "$S" trace show "$D/$f" >"$W/$f.out" 2>"$W/$f.err"
    rc=$?
    expect_rc 0 $rc "show $f"
    [ -s "$W/$f.err" ] && fail "show $f wrote to stderr: $(head -3 "$W/$f.err")"
    has "$W/$f.out" '^analysed: (host operators|device work)' "show $f: analysed line"
    has "$W/$f.out" "$HEADER" "show $f: op table header"
done
has "$W/kineto_gpu_small.json.out" '^machine model: h100-sxm' \
    "kineto, no --hw, empty store: the H100 spec from deviceProperties"
has "$W/torch_cpu_block.json.gz.out" '^machine model: none' "torch CPU trace: machine model none"
has "$W/jax_cpu_block.json.gz.out" '^machine model: none' "jax CPU trace: machine model none"
has "$W/torch_cpu_block.json.gz.out" '^analysed: host operators; 2 steps ' "torch CPU: host ops, 2 steps"
has "$W/jax_cpu_block.json.gz.out" '^analysed: host operators; 3 steps ' "jax CPU: host ops, 3 steps"
has "$W/jax_gpu_small.json.out" '^analysed: device work .*; 2 steps ' "jax GPU: device work, 2 steps"
# The CPU traces are not placed: no %SOL figure anywhere in their tables.
if grep -Eq ' [0-9.]+!? (compute|memory|network|host) ' "$W/torch_cpu_block.json.gz.out"; then
    fail "torch CPU trace without a machine model has %SOL figures"
else ok "torch CPU trace without a machine model: no %SOL"; fi
[ -e "$SOLBENCH_DB" ] && fail "show created the database $SOLBENCH_DB" || ok "show wrote no database"

for f in kineto_gpu_small.json jax_gpu_small.json; do
    "$S" trace show "$D/$f" --hw h100-sxm >"$W/$f.hw" 2>&1
    expect_rc 0 $? "show $f --hw h100-sxm"
    has "$W/$f.hw" '^machine model: h100-sxm' "$f --hw: machine model named"
    has "$W/$f.hw" ' [0-9]+(\.[0-9])?!? (compute|memory) +[0-9]' "$f --hw: a compute/memory row with %SOL"
done
K=$W/kineto_gpu_small.json.hw
has "$K" '^communication 45\.3 us, 34\.9% overlapped with other work \(exposed 29\.5 us\)' \
    "kineto: all-reduce 45.3 us, 15.8 us of it under the GEMM (34.9%)"
has "$K" '^Memcpy HtoD \(Pageable -> Device\) .* [0-9.]+ host ' "kineto: H2D memcpy row classed host"
has "$K" '^ncclDevKernel_AllReduce.* network ' "kineto: NCCL kernel classed network"
has "$K" '^trace .*: pytorch, 109 events .*device NVIDIA H100 80GB HBM3, rank 0 of 2$' \
    "kineto: 109 events, device and rank 0 of 2"
# ---- --calibration-out: the trace's efficiencies against the datasheet,
# read back by predict (the time at the ceilings over the time taken:
# matmuls 0.611 -- addmm 21.0 %, two mm 65.7/65.8 %, the bmm above its
# ceiling counted at 1 --, the flash attention 0.408, the all-reduce 0.411)
"$S" trace show "$D/kineto_gpu_small.json" --hw h100-sxm \
    --calibration-out "$W/cal.json" >"$W/cal.out" 2>&1
expect_rc 0 $? "show --calibration-out"
has "$W/cal.out" '^calibration written to .*cal\.json \(trace ' "--calibration-out: says where"
python3 - "$W/cal.json" <<'PY' && ok "calibration file: hardware and efficiencies" || fail "calibration file: $(cat "$W/cal.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hardware"] == "h100-sxm", d
assert abs(d["matmul"] - 0.611) < 0.005, d
assert abs(d["attention"] - 0.408) < 0.005, d
assert abs(d["network"] - 0.411) < 0.005, d
assert 0.3 < d["memory"] < 1, d
PY
"$S" predict llama3-8b --calibration "$W/cal.json" >"$W/calp.out" 2>&1
expect_rc 0 $? "predict --calibration (the trace's file)"
has "$W/calp.out" '^speed of light vs calibrated \(efficiencies matmul 0\.61, attention 0\.41,' \
    "predict reads the trace's calibration"
"$S" run --bench memory.read --backend cpu -p size=64KiB --repeat 3 --no-store \
    --min-time 0.01 --json "$W/small-run.json" >/dev/null 2>&1
expect_rc 0 $? "a small run for measured ceilings"
"$S" trace show "$D/kineto_gpu_small.json" --hw h100-sxm \
    --results "$W/small-run.json" --calibration-out "$W/cal2.json" \
    >"$W/cal2.out" 2>&1
expect_rc 2 $? "--calibration-out with measured ceilings"
has "$W/cal2.out" 'calibration-out .*needs a datasheet' "--calibration-out: a datasheet, said"
"$S" trace show "$D/kineto_gpu_small.json" --hw tpu-v5e \
    --calibration-out "$W/cal3.json" >/dev/null 2>&1
"$S" predict llama3-8b --calibration "$W/cal3.json" >"$W/cal3.out" 2>&1
expect_rc 2 $? "predict with another hardware's calibration"
has "$W/cal3.out" 'hardware.*tpu-v5e.*h100-sxm' "the mismatch is named"
"$S" trace show "$D/kineto_gpu_small.json" --top 2 --hw h100-sxm >"$W/top2.out" 2>&1
expect_rc 0 $? "show --top 2"
has "$W/top2.out" '^\.\.\. [0-9]+ more rows' "--top 2 says how many rows it left out"

# ---- --hlo: the JAX CPU fixture's ops get their shapes from the module text
"$S" trace show "$D/jax_cpu_block.json.gz" --hlo "$D/jax_cpu_block.hlo.txt" \
    --hw h100-sxm --json "$W/jaxhlo.json" >"$W/jaxhlo.out" 2>"$W/jaxhlo.err"
expect_rc 0 $? "show jax_cpu_block --hlo"
has "$W/jaxhlo.out" '^hlo: 396 op events of .* got shapes from ' "--hlo: every op event matched"
python3 - "$W/jaxhlo.json" >"$W/jaxhlo.py" 2>&1 <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
mm = sum(o["flops"] for o in a["ops"] if o["category"] == "matmul") / a["steps"]
assert mm == 14548992, mm
assert not [o for o in a["ops"] if o["class"] == "unclassified"], "unclassified ops left"
print("ok")
PY
has "$W/jaxhlo.py" '^ok$' "--hlo: 14548992 matmul FLOPs per step, nothing unclassified"
echo "not hlo" >"$W/nothlo.txt"
"$S" trace show "$D/jax_cpu_block.json.gz" --hlo "$W/nothlo.txt" >/dev/null 2>"$W/nothlo.err"
expect_rc 2 $? "--hlo of a file that is not HLO text"
one_line "$W/nothlo.err" '^solbench: .*nothlo.txt: not HLO text' "--hlo refusal names the file"

# ---- Nsight Systems: the export of the Kineto fixture's step reads to the
# same timeline; stored and shown by name; another SQLite file is refused
"$S" trace show "$D/nsys_gpu_small.sqlite" --hw h100-sxm >"$W/nsys.out" 2>"$W/nsys.err"
expect_rc 0 $? "show nsys_gpu_small.sqlite"
has "$W/nsys.out" '^trace .*: nsys, 62 events' "nsys: format and events"
has "$W/nsys.out" '^communication 45.3 us, 34.9% overlapped' "nsys: the Kineto fixture's overlap"
has "$W/nsys.out" '^aten::mm +2048x1024 1024x4096 +1 +26.4 us .* compute ' "nsys: a kernel joined to its NVTX operator, bf16 from its name"
NDB=$W/nsys/results.db
mkdir -p "$W/nsys"
SOLBENCH_DB=$NDB "$S" trace import "$D/nsys_gpu_small.sqlite" >"$W/nsysimp.out" 2>&1
expect_rc 0 $? "import nsys_gpu_small.sqlite"
SOLBENCH_DB=$NDB "$S" trace show nsys_gpu_small --hw h100-sxm >"$W/nsys2.out" 2>&1
expect_rc 0 $? "show the stored nsys export by name"
if diff <(tail -n +3 "$W/nsys.out") <(tail -n +3 "$W/nsys2.out") >/dev/null; then
    ok "nsys: stored and read back from memory: the same analysis"
else
    fail "nsys: the stored export reads differently"
fi
"$S" trace show "$NDB" >/dev/null 2>"$W/notnsys.err"
expect_rc 2 $? "show of a results database (SQLite, not Nsight Systems)"
one_line "$W/notnsys.err" 'not an Nsight Systems export' "an SQLite file that is not an export is named as such"

# ---- report --trace: the ops on the report's roofline (--hlo for JAX)
"$S" report --hw h100-sxm --trace "$D/jax_cpu_block.json.gz" \
    --hlo "$D/jax_cpu_block.hlo.txt" -o "$W/r.html" >/dev/null 2>"$W/r.err"
expect_rc 0 $? "report --trace --hlo"
has "$W/r.html" 'id="trace"' "report: a Trace section"
n=$(grep -o '<circle' "$W/r.html" | wc -l)
if [ "$n" -ge 20 ]; then ok "report: $n points on the charts"; else fail "report: $n points on the charts, expected the trace's (>= 20)"; fi
"$S" report --hw h100-sxm --hlo "$D/jax_cpu_block.hlo.txt" -o "$W/r2.html" >/dev/null 2>"$W/r2.err"
expect_rc 2 $? "report --hlo without --trace"

# ---- --json and --csv ---------------------------------------------------------
for f in "${FIXTURES[@]}"; do
    for hw in "" h100-sxm; do
        tag=$f${hw:+-$hw}
        "$S" trace show "$D/$f" ${hw:+--hw $hw} --json "$W/$tag.json" --csv "$W/$tag.csv" >/dev/null 2>"$W/e"
        rc=$?
        expect_rc 0 $rc "show $f ${hw:+--hw $hw }--json --csv"
        if python3 - "$W/$tag.json" "$W/$tag.csv" <<'PY'; then
import csv, json, math, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "solbench.trace/1", d["schema"]
ops = d["ops"]
assert ops, "no ops"
classes = {"compute", "memory", "network", "host", "latency", "unclassified", "-"}
for o in ops:
    s = o["seconds"]
    assert isinstance(s, (int, float)) and math.isfinite(s) and s >= 0, o
    assert o["class"] in classes, o
    assert o["count"] >= 1, o
with open(sys.argv[2], newline="") as fh:
    rec = list(csv.reader(fh))
assert rec[0][:2] == ["op", "shapes"] and "class" in rec[0], rec[0]
assert len(rec) == len(ops) + 1, (len(rec), len(ops))
assert [r[0] for r in rec[1:]] == [o["op"] for o in ops], "csv and json ops differ"
ci = rec[0].index("class")
assert [r[ci] for r in rec[1:]] == [o["class"] for o in ops], "csv and json classes differ"
PY
            ok "$tag: JSON schema, ops, seconds, classes; CSV one record per op"
        else fail "$tag: --json/--csv content"; fi
    done
done
python3 - "$W/kineto_gpu_small.json-h100-sxm.json" <<'PY' && ok "kineto JSON: rank, world, comm overlap, placed rows" || fail "kineto JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rank"] == 0 and d["world_size"] == 2, d
assert d["side"] == "device" and d["steps"] == 1, d
assert abs(d["comm_s"] - 45.3e-6) < 0.05e-6, d["comm_s"]
assert abs(d["comm_overlap_s"] - 15.8e-6) < 0.05e-6, d["comm_overlap_s"]
placed = [o for o in d["ops"] if o["class"] in ("compute", "memory")]
assert placed and all(o["pct_sol"] > 0 for o in placed), placed
PY
# --top 0: the table has every op of the JSON.
"$S" trace show "$D/torch_cpu_block.json.gz" --top 0 >"$W/all.out" 2>&1
expect_rc 0 $? "show --top 0"
rows=$(awk -v h="$HEADER" '$0 ~ h {t = 1; next} t && /^$/ {exit} t && !/^! / {n++} END {print n + 0}' "$W/all.out")
nops=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["ops"]))' "$W/torch_cpu_block.json.gz.json")
[ "$rows" -eq "$nops" ] && ok "--top 0 shows all $rows ops" || fail "--top 0 shows $rows rows, the JSON has $nops ops"
python3 - "$W/torch_cpu_block.json.gz.json" "$D/torch_cpu_block.flops.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ref = json.load(open(sys.argv[2]))["per_op"]
want = ref["aten.addmm"] + ref["aten.mm"]
got = sum(o["flops"] for o in d["ops"] if o["op"] in ("aten::addmm", "aten::mm"))
steps = d["steps"]
assert steps == 2, steps
print(f"matmul FLOPs per step: {got / steps:.0f}, FlopCounterMode {want}")
sys.exit(0 if abs(got / steps - want) <= 1e-9 * want else 1)
PY
[ $? -eq 0 ] && ok "torch: addmm+mm FLOPs per step = FlopCounterMode's" ||
    fail "torch: addmm+mm FLOPs per step differ from torch_cpu_block.flops.json"

# ---- import, list, show, diff, rm ---------------------------------------------
export SOLBENCH_DB=$W/store/results.db
mkdir -p "$W/store"
T=$D/torch_cpu_block.json.gz
"$S" trace import "$T" >"$W/i1.out" 2>&1
expect_rc 0 $? "import with the default name"
has "$W/i1.out" "^trace 'torch_cpu_block' stored \(pytorch, 1879 events" "default name: the base name without extensions"
"$S" trace import "$T" --name second >"$W/i2.out" 2>&1
expect_rc 0 $? "import --name second"
"$S" trace list >"$W/list.out" 2>&1
expect_rc 0 $? "list"
has "$W/list.out" '^torch_cpu_block +[0-9T:-]+ +pytorch +1879 ' "list: torch_cpu_block, 1879 events"
has "$W/list.out" '^second +[0-9T:-]+ +pytorch +1879 ' "list: second, 1879 events"
"$S" trace show torch_cpu_block >"$W/sn.out" 2>&1
expect_rc 0 $? "show NAME"
has "$W/sn.out" '^trace torch_cpu_block: pytorch, 1879 events' "show NAME labels the trace by its name"
"$S" trace show "$T" >"$W/sf.out" 2>&1
if diff <(grep -v '^trace ' "$W/sn.out") <(grep -v '^trace ' "$W/sf.out") >"$W/d.out"; then
    ok "show NAME prints what show FILE prints"
else fail "show NAME differs from show FILE:"; head -20 "$W/d.out"; fi
"$S" trace import "$D/jax_gpu_small.json" --name torch_cpu_block >"$W/dup.out" 2>"$W/dup.err"
expect_rc 2 $? "import under a taken name"
one_line "$W/dup.err" "^solbench: .*torch_cpu_block" "a taken name: one line naming the trace"
"$S" trace list >"$W/list2.out" 2>&1
[ "$(grep -c ' pytorch \| jax ' "$W/list2.out")" -eq 2 ] && ok "the refused import stored nothing" ||
    fail "list after the refused import: $(cat "$W/list2.out")"
"$S" trace diff torch_cpu_block second --top 0 >"$W/same.out" 2>&1
expect_rc 0 $? "diff of two stored copies"
has "$W/same.out" '^step time: A .*, B .*: \+0\.0%$' "diff of two copies: step time +0.0%"
# every op row and every phase row of the diff: +0.0%
awk '/^op +shapes +A +B/ || /^phase +A +B/ {t = 1; next} t && /^$/ {t = 0} t {print}' "$W/same.out" >"$W/same.rows"
nr=$(wc -l <"$W/same.rows")
nz=$(grep -cv '+0\.0%$' "$W/same.rows")
[ "$nr" -gt 100 ] && [ "$nz" -eq 0 ] && ok "diff of two copies: all $nr rows +0.0%" ||
    { fail "diff of two copies: $nz of $nr rows changed"; grep -v '+0\.0%$' "$W/same.rows" | head -5; }

# A copy of the torch trace with every aten::mm twice as long.
python3 - "$T" "$W/mm2.json.gz" <<'PY'
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
n = 0
for e in d["traceEvents"]:
    if e.get("name") == "aten::mm" and "dur" in e:
        e["dur"] *= 2
        n += 1
assert n > 0
with gzip.open(sys.argv[2], "wt") as f:
    json.dump(d, f)
PY
"$S" trace diff "$T" "$W/mm2.json.gz" >"$W/mm.out" 2>&1
expect_rc 0 $? "diff against aten::mm x2"
top=$(sed -n '/^op  *shapes  *A  *B/{n;p;q}' "$W/mm.out")
if [[ $top =~ ^aten::mm\ .*\ \+(9[5-9]|10[0-5])\.[0-9]%$ ]]; then
    ok "aten::mm x2: top changed row: $top"
else fail "aten::mm x2: top changed row is not aten::mm at about +100%: '$top'"; fi
has "$W/mm.out" '^matmul +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s +\+(9[5-9]|10[0-5])\.[0-9]%$' "aten::mm x2: matmul phase about +100%"

"$S" trace rm second >"$W/rm.out" 2>&1
expect_rc 0 $? "rm second"
"$S" trace show second >/dev/null 2>"$W/rm.err"
expect_rc 2 $? "show of a removed trace"
one_line "$W/rm.err" "^solbench: .*second.*no such trace" "a removed trace: one line, no such trace"
"$S" trace rm second >/dev/null 2>"$W/rm2.err"
expect_rc 2 $? "rm of a removed trace"
"$S" trace list >"$W/list3.out" 2>&1
grep -q '^second ' "$W/list3.out" && fail "second still listed" || ok "second no longer listed"
has "$W/list3.out" '^torch_cpu_block ' "torch_cpu_block still listed"

# ---- bad input ------------------------------------------------------------------
export SOLBENCH_DB=$W/bad/results.db
mkdir -p "$W/bad"
B=$W/in
mkdir -p "$B"
K=$D/kineto_gpu_small.json
head -c $(($(stat -c %s "$K") / 2)) "$K" >"$B/cut.json"
head -c $(($(stat -c %s "$T") / 2)) "$T" >"$B/cut.json.gz"
python3 - "$T" "$B/corrupt.json.gz" "$K" "$B/nodur.json" "$B/negdur.json" \
    "$B/negts.json" "$B/bigdims.json" <<'PY'
import json, sys
b = bytearray(open(sys.argv[1], "rb").read())
m = len(b) // 2
for i in range(m, m + 64):
    b[i] ^= 0x5A
open(sys.argv[2], "wb").write(b)
d = json.load(open(sys.argv[3]))
ev = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
k = dict(ev[0]); del k["dur"]
json.dump({"traceEvents": [k]}, open(sys.argv[4], "w"))
k = dict(ev[0]); k["dur"] = -3.5
json.dump({"traceEvents": [k]}, open(sys.argv[5], "w"))
k = dict(ev[0]); k["ts"] = -100
json.dump({"traceEvents": [k]}, open(sys.argv[6], "w"))
k = dict(ev[0]); k["args"] = {"Input Dims": [[9e14, 9e14], [9e14, 3]]}
json.dump({"traceEvents": [k]}, open(sys.argv[7], "w"))
PY
# a gzip bomb: 100 MiB of spaces in 100 KiB, refused at 16 MiB
{ printf '{"traceEvents":['; head -c 100M /dev/zero | tr '\0' ' '; printf ']}'; } |
    gzip -c >"$B/bomb.json.gz"
echo "this is not a profiler trace" >"$B/plain.txt"
: >"$B/empty.json"
mkdir "$B/adir"
mkfifo "$B/fifo.json"
for f in cut.json cut.json.gz corrupt.json.gz nodur.json negdur.json negts.json \
    bigdims.json bomb.json.gz plain.txt empty.json adir nope.json fifo.json; do
    for sub in show import; do
        timeout 10 "$S" trace $sub "$B/$f" >/dev/null 2>"$W/e"
        rc=$?
        expect_rc 2 $rc "$sub $f"
        one_line "$W/e" "^solbench: $B/$f\b" "$sub $f: one line naming the file"
    done
done
# no complete events: shown with a note, not stored
echo '{"traceEvents":[{"ph":"i","name":"mark","ts":1}]}' >"$B/noevents.json"
"$S" trace show "$B/noevents.json" >"$W/ne.out" 2>&1
expect_rc 0 $? "show of a trace without complete events"
has "$W/ne.out" 'no complete events' "show says it has nothing to analyse"
"$S" trace import "$B/noevents.json" >/dev/null 2>"$W/e"
expect_rc 2 $? "import of a trace without complete events"
one_line "$W/e" "^solbench: $B/noevents.json: no complete events" "import refusal: one line naming the file"
"$S" trace list >"$W/bl.out" 2>&1
has "$W/bl.out" '^no traces stored in ' "failed imports stored nothing"

"$S" trace show "$D/jax_gpu_small.json" --top -1 >/dev/null 2>"$W/e"
expect_rc 2 $? "--top -1"
one_line "$W/e" '^solbench trace: --top -1: ' "--top -1: one line"
"$S" trace frobnicate "$D/jax_gpu_small.json" >/dev/null 2>"$W/e"
expect_rc 2 $? "an unknown subcommand"
one_line "$W/e" "^solbench trace: unknown subcommand 'frobnicate'" "unknown subcommand: one line naming it"
"$S" trace show "$D/jax_gpu_small.json" --bogus >/dev/null 2>"$W/e"
expect_rc 2 $? "an unknown option"
one_line "$W/e" "^solbench trace: unknown option '--bogus'" "unknown option: one line naming it"

# ---- unknown categories and ops without a rule ------------------------------------
cat >"$W/unk.json" <<'EOF'
{"schemaVersion": 1, "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 100,
  "args": {"Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"]}},
 {"ph": "X", "cat": "cpu_op", "name": "mylib::frobnicate", "pid": 1, "tid": 1, "ts": 200, "dur": 300,
  "args": {"Input Dims": [[64]], "Input type": ["float"]}},
 {"ph": "X", "cat": "mystery_cat", "name": "something_odd", "pid": 1, "tid": 1, "ts": 600, "dur": 50},
 {"ph": "X", "cat": "mystery_cat", "name": "something_odd", "pid": 1, "tid": 1, "ts": 700, "dur": 50}
]}
EOF
"$S" trace show "$W/unk.json" --json "$W/unk.out.json" >"$W/unk.out" 2>&1
expect_rc 0 $? "show of a trace with an unknown category and an op without a rule"
has "$W/unk.out" '^mylib::frobnicate .* unclassified ' "the op without a rule is unclassified"
has "$W/unk.out" '^aten::mm +64x64 64x64 +1 ' "the known op beside it is kept"
has "$W/unk.out" '^unclassified: 1 instance, 300\.0 us' "unclassified line: 1 instance, 300 us"
has "$W/unk.out" '^notes: 2 events of unknown categories' "notes line counts the 2 unknown-category events"
python3 - "$W/unk.out.json" <<'PY' && ok "unknown trace JSON: unknown_categories 2, unclassified 1" || fail "unknown trace JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["unknown_categories"] == 2 and d["unclassified"] == 1, d
o = [x for x in d["ops"] if x["op"] == "mylib::frobnicate"]
assert o and o[0]["class"] == "unclassified" and o[0]["count"] == 1, o
PY

if [ $FAILS -ne 0 ]; then
    echo "$FAILS check(s) failed"
    exit 1
fi
echo "all checks passed"
