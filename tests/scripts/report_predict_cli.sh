#!/usr/bin/env bash
# report_predict_cli.sh — the model's commands end to end: hw list/show,
# predict on every preset, sweeps, roofline from a results file, and bad
# workload files (missing field, wrong type, heads that do not divide,
# negative size, syntax error, a 10-TB model on one chip), each of which
# must exit 2 and name the JSON path (and line/column where there is one);
# the TPOT lower bound never above TPOT; --db: roofline, predict and
# report read the store they are given.
# Usage: report_predict_cli.sh SOLBENCH
set -u
SB=${1:?usage: $0 SOLBENCH}
. "$(dirname "$0")/expect.sh"

expect 0 'h100-sxm .*989' -- "$SB" hw list
expect 0 'tpu7x' -- "$SB" hw list
expect 0 'fp8 4614 TFLOP/s' -- "$SB" hw show tpu7x
expect 0 'Dense peaks only' -- "$SB" hw show h100-sxm
expect 2 "unknown hardware spec 'nosuch'" -- "$SB" hw show nosuch

# Hardware specs with figures no chip has, wrong types or a key twice:
# exit 2 naming the field (they printed inf, MFU over 100 % or took the
# last of two values).
hwbad() { # NAME PYTHON-EDIT
    python3 - "$(dirname "$SB")/../data/hw/h100-sxm.json" "$T/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
open(sys.argv[2], "w").write(json.dumps(d))
PY
}
hwbad peak 'd["peak_tflops"]["bf16"] = 1e300'
hwbad tiny 'd["peak_tflops"]["bf16"] = 1e-300'
hwbad dom0 'd["scaleup"]["domain_chips"] = 0'
hwbad sustr 'd["scaleup"] = "nvlink"'
hwbad lat 'd["scaleup"]["latency_us"] = 1e30'
hwbad name 'd["name"] = 7'
expect 2 'peak_tflops.bf16: must be a number in' -- "$SB" hw show "$T/peak.json"
expect 2 'peak_tflops.bf16: must be a number in' -- "$SB" hw show "$T/tiny.json"
expect 2 'scaleup.domain_chips: must be an integer in \[1,' -- "$SB" hw show "$T/dom0.json"
expect 2 '\$\.scaleup: must be an object' -- "$SB" hw show "$T/sustr.json"
expect 2 'scaleup.latency_us: must be a number in' -- "$SB" predict llama3-8b --hw "$T/lat.json"
expect 2 '\$\.name: must be a string' -- "$SB" hw show "$T/name.json"
sed 's/"fp16": 989.4/"bf16": 0.001/' "$(dirname "$SB")/../data/hw/h100-sxm.json" >"$T/dup.json"
expect 2 'duplicate object key' -- "$SB" hw show "$T/dup.json"

for c in hw roofline predict report; do
    expect 0 "usage: solbench $c" -- "$SB" $c --help
done
expect 2 '-o FILE is required' -- "$SB" report --hw h100-sxm
expect 2 'give --workload FILE too' -- "$SB" report --hw h100-sxm --set layers=0 -o "$T/r.html"

# Command-line settings: a bad value is blamed on the command line, not on
# the preset file's line; a huge number is short and says why; keys must
# be dotted names; a sweep's errors go to stderr, one per bad value.
expect 2 'layers: 0 is too small; must be >= 1 \(from layers=0 on the command line\)' -- "$SB" predict llama3-8b --set layers=0
expect 2 'layers: 1e\+300 is too large; must be <= 100000' -- "$SB" predict llama3-8b --set layers=1e300
for k in . .. model..layers; do
    expect 2 "--set $k: the key must be a name" -- "$SB" predict llama3-8b --set "$k=5"
done
expect 2 'an empty value in the list' -- "$SB" predict llama3-8b --sweep tensor=1,,2
expect 2 "mesh: '4x4x' is not a shape" -- "$SB" predict moe-110b-tpu7x-4x4x4 --set mesh=4x4x
expect 2 'hardware.spec: unknown hardware spec' -- "$SB" predict llama3-8b --set spec=nosuch
expect 2 'not a regular file' -- "$SB" predict "$T"
"$SB" predict llama3-8b --sweep tensor=1,abc >"$T/sw.out" 2>"$T/sw.err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/sw.err")" -eq 1 ] &&
    grep -q 'predict --sweep tensor=abc: .*must be an integer' "$T/sw.err" &&
    grep -q 'abc .*invalid' "$T/sw.out"; then
    ok "a sweep's bad value: one line on stderr, its row marked"
else
    bad "sweep with a bad value: exit $rc"; cat "$T/sw.err" "$T/sw.out"
fi
expect 0 'MFU +[0-9.]+%' -- "$SB" predict llama3-8b
expect 0 'TPOT +[0-9.]+ ms' -- "$SB" predict llama3-70b
expect 0 'experts' -- "$SB" predict mixtral-8x7b
expect 0 'moe dispatch all-to-all' -- "$SB" predict deepseek-v3
expect 0 'interventions' -- "$SB" predict moe-110b-tpu7x-4x4x4
expect 0 'overlap: full' -- "$SB" predict llama3-8b --overlap full
expect 0 'DOES NOT FIT' -- "$SB" predict llama3-70b --set chips=1 --set tensor=1 --hw h100-sxm

# Sweeps: one row per value, with step time, MFU and cost.
"$SB" predict llama3-8b --sweep tensor=1,2,4,8 --json "$T/sw.json" >"$T/sw" 2>&1
rows=$(grep -cE '^  [1248] +8 ' "$T/sw")
[ "$rows" -eq 4 ] && ok "sweep tensor: 4 rows" || { bad "sweep tensor: $rows rows"; cat "$T/sw"; }
python3 -c "import json,sys; d=json.load(open('$T/sw.json')); assert len(d['sweep'])==4; assert all(r['totals']['step_s']>0 for r in d['sweep'])" \
    && ok "sweep JSON" || bad "sweep JSON"
expect 0 ' 64 +1/64/1/8/1' -- "$SB" predict moe-110b-tpu7x-4x4x4 --sweep chips=16,32,64

# --json -: the document alone on stdout, the tables on stderr, no file
# named "-".
sb_abs=$(cd "$(dirname "$SB")" && pwd)/$(basename "$SB")
(cd "$T" && "$sb_abs" predict llama3-8b --json - >"$T/dash.json" 2>"$T/dash.err")
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['schema'] == 'solbench.predict/1'" "$T/dash.json" &&
    grep -q '^machine model' "$T/dash.err" && [ ! -e "$T/-" ] &&
    ok "predict --json -: JSON on stdout, the table on stderr" || bad "predict --json -"

# JSON of a prediction.
"$SB" predict llama3-8b --json "$T/p.json" >/dev/null 2>&1
python3 - "$T/p.json" <<'PY' && ok "predict JSON" || bad "predict JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "solbench.predict/1"
names = [p["name"] for p in d["phases"]]
for n in ("qkv projection", "attention core", "mlp", "fsdp all-gather", "optimizer update"):
    assert n in names, n
assert 0 < d["totals"]["mfu"] < 1 and d["totals"]["step_s"] > 0
assert d["interventions"] and d["interventions"][0]["phase"] in names
PY

# The TPOT lower bound counts what a decode step reads (one embedding row
# per sequence, not the table): never above TPOT. Llama-3-8B on one chip
# had it at 4.88 ms over 4.57 ms (H100) and 3.41 over 3.19 ms (H200).
for hw in h100-sxm h200-sxm; do
    "$SB" predict llama3-8b --hw $hw --set chips=1 --set fsdp=1 \
        --set 'job={"type":"inference","prompt_len":2048,"output_len":512}' \
        --json "$T/tpot.json" >"$T/tpot" 2>&1
    python3 - "$T/tpot.json" <<'PY' && ok "TPOT bound <= TPOT on $hw" || { bad "TPOT bound on $hw"; grep TPOT "$T/tpot"; }
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
assert 0.99 * t["tpot_s"] <= t["tpot_bound_s"] <= t["tpot_s"], t
PY
done

# ---- bad workload files ----------------------------------------------------
P=$(dirname "$0")/../../data/models/llama3-8b.json
mk() { python3 - "$P" "$T/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
}
mk missing 'del d["model"]["layers"]'
mk type 'd["model"]["d_model"] = "4096"'
mk heads 'd["model"]["kv_heads"] = 5'
mk negative 'd["job"]["seq_len"] = -8192'
mk huge 'd["model"].update(layers=1200, d_model=16384, q_heads=128, kv_heads=128, ffn=65536); d["topology"]["chips"] = 1; d["parallelism"] = {"fsdp": 1}'
mk unknown 'd["job"]["remats"] = "full"'
mk tensor 'd["parallelism"] = {"fsdp": 2, "tensor": 3}; d["topology"]["chips"] = 6'
printf '{\n  "model": {\n    "layers": 32,\n    "d_model": 4096\n  ,,\n}\n' >"$T/syntax.json"
expect 2 '\$\.model\.layers: missing' -- "$SB" predict "$T/missing.json"
expect 2 '\$\.model\.d_model: must be an integer.*line [0-9]+, column [0-9]+' -- "$SB" predict "$T/type.json"
expect 2 '\$\.model\.kv_heads: 5 does not divide' -- "$SB" predict "$T/heads.json"
expect 2 '\$\.job\.seq_len: -8192 is negative' -- "$SB" predict "$T/negative.json"
expect 2 '\$\.topology\.chips: the weights alone need' -- "$SB" predict "$T/huge.json"
expect 2 '\$\.parallelism\.tensor: 3 does not divide' -- "$SB" predict "$T/tensor.json"
expect 2 'line 5, column' -- "$SB" predict "$T/syntax.json"
expect 2 '\$\.job\.remats: unknown field' -- "$SB" predict "$T/unknown.json"
expect 2 'unknown workload preset' -- "$SB" predict nosuchpreset
expect 2 'unknown hardware spec' -- "$SB" predict llama3-8b --hw nosuch
expect 2 'unknown option' -- "$SB" predict llama3-8b --bogus

# ---- roofline from a results file ------------------------------------------
cat >"$T/run.json" <<'JSON'
{"schema":"solbench.run/1","run_id":"test-roofline","started_at":"2026-01-01T00:00:00Z",
 "ended_at":"2026-01-01T00:00:01Z","system":{"fingerprint":"0123456789abcdef"},"config":{},"tags":{},
 "results":[
  {"bench":"compute.peak","area":"compute","backend":"cpu","params":{"dtype":"fp64"},"samples_s":[0.001],
   "stats":{"n":1,"min":0.001,"p50":0.001,"p90":0.001,"p99":0.001,"max":0.001,"mean":0.001,"stddev":0,"cv":0},
   "metrics":{"GFLOPs":{"value":100,"unit":"GFLOP/s"}},"valid":true,"notes":[]},
  {"bench":"memory.triad","area":"memory","backend":"cpu","params":{"size":"1073741824"},"samples_s":[0.0716],
   "stats":{"n":1,"min":0.0716,"p50":0.0716,"p90":0.0716,"p99":0.0716,"max":0.0716,"mean":0.0716,"stddev":0,"cv":0},
   "metrics":{"GBps":{"value":15,"unit":"GB/s"},"GBps_best":{"value":20,"unit":"GB/s"},"latency_us":{"value":71600,"unit":"us"}},
   "valid":true,"notes":[]}
 ]}
JSON
# no kernel with both FLOPs and bytes: the table, but no empty chart
expect 2 'no kernel with both FLOPs and bytes to chart' -- "$SB" roofline --results "$T/run.json" --svg "$T/none.svg"
[ ! -e "$T/none.svg" ] && ok "no empty chart written" || bad "an empty chart was written"
python3 - "$T/run.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = 2 * 1024**3 / 80e9
d["results"].append({"bench": "compute.gemm", "area": "compute", "backend": "cpu",
    "params": {"dtype": "fp64", "shape": "square", "n": 1024}, "samples_s": [t],
    "stats": {"n": 1, "min": t, "p50": t, "p90": t, "p99": t, "max": t, "mean": t, "stddev": 0, "cv": 0},
    "metrics": {"GFLOPs": {"value": 80, "unit": "GFLOP/s"}, "AI": {"value": 85.3, "unit": "FLOP/B"},
                "latency_us": {"value": t * 1e6, "unit": "us"}}, "valid": True, "notes": []})
json.dump(d, open(sys.argv[1], "w"))
PY
if "$SB" roofline --results "$T/run.json" --svg "$T/roof.svg" >"$T/roof" 2>&1; then
    if grep -qE 'memory.triad .* bw\.(triad|DRAM) +memory' "$T/roof" && grep -q '<svg' "$T/roof.svg"; then
        ok "roofline --results --svg"
    else
        bad "roofline output"; cat "$T/roof"
    fi
else
    # The run reader belongs to the core; show why it refused the file.
    bad "roofline --results exit $?"; cat "$T/roof"
fi
expect 0 'peak.bf16 +989' -- "$SB" roofline --hw h100-sxm

# ---- a real (tiny) run, from a file and from the store ----------------------
export SOLBENCH_DB="$T/results.db"
if "$SB" run --bench memory.triad -p size=4MiB --min-time 0.02 --repeat 3 \
        --json "$T/real.json" >"$T/run.out" 2>&1; then
    expect 0 'memory.triad .* memory' -- "$SB" roofline --results "$T/real.json"
    expect 0 'memory.triad .* memory' -- "$SB" roofline --run last
    expect 0 'report written' -- "$SB" report --run last --workload llama3-8b -o "$T/r.html"
    grep -q 'id="sb-status"' "$T/r.html" && ok "report from the store" || bad "report from the store"
    expect 0 'overridden by run' -- "$SB" predict llama3-8b --hw h100-sxm --run last
else
    bad "solbench run failed"; tail -5 "$T/run.out"
fi
expect 2 'unknown argument' -- "$SB" roofline --bogus

# ---- --db: the analysis commands read the store they are given --------------
# A run stored in its own file is found by roofline, predict and report
# with --db, while the default store (an empty HOME, no $SOLBENCH_DB) does
# not have it; --db '' is refused as by every store command.
sbh() { env -u SOLBENCH_DB -u XDG_DATA_HOME HOME="$T/home" "$SB" "$@"; }
DB="$T/own/runs.db"
mkdir -p "$T/home" "$T/own"
if sbh run --bench memory.triad -p size=4MiB --min-time 0.02 --repeat 3 \
        --db "$DB" >"$T/own.out" 2>&1; then
    id=$(sed -n 's/^stored as run \([^ ]*\) in .*/\1/p' "$T/own.out")
    [ -n "$id" ] && [ ! -e "$T/home/.local/share/solbench/results.db" ] &&
        ok "run --db stores the run in $DB only" ||
        bad "run --db: id '$id', or the default store was written"
    expect 0 'memory.triad .* memory' -- sbh roofline --db "$DB" --run last
    expect 0 "run $id " -- sbh roofline --run last --db="$DB"
    expect 0 "overridden by run $id " -- sbh predict llama3-8b --hw h100-sxm --run last --db "$DB"
    expect 0 'report written' -- sbh report --db "$DB" --run last -o "$T/own.html"
    grep -q 'id="sb-status"' "$T/own.html" && ok "report --db from the store" ||
        bad "report --db from the store"
    expect 0 'report written' -- sbh report --run last --db "$DB" --workload llama3-8b -o "$T/own2.html"
    # The default store has no runs: the same commands without --db fail.
    expect 2 "run 'last': database .*/home/.local/share/solbench/results.db holds no runs" -- sbh roofline --run last
    expect 2 'holds no runs' -- sbh predict llama3-8b --hw h100-sxm --run last
    expect 2 'holds no runs' -- sbh report --run last -o "$T/none.html"
    expect 2 'holds no runs' -- sbh roofline --run last --db "$T/home/other.db"
else
    bad "solbench run --db failed"; tail -5 "$T/own.out"
fi
for c in "roofline --run last" "predict llama3-8b --run last" \
        "report --run last -o $T/e.html"; do
    # shellcheck disable=SC2086
    sbh $c --db '' >"$T/e.out" 2>"$T/e.err"
    rc=$?
    if [ $rc -eq 2 ] && [ ! -s "$T/e.out" ] &&
        [ "$(wc -l <"$T/e.err")" -eq 1 ] && grep -q -- '--db: empty path' "$T/e.err"; then
        ok "$c --db '': exit 2, one line on stderr"
    else
        bad "$c --db '': exit $rc"; cat "$T/e.out" "$T/e.err"
    fi
done
expect 2 "--db needs a value" -- sbh roofline --run last --db

# hw calibrate: a run's median rates over the datasheet of the machine it
# measured, as a calibration file predict reads; a CPU run against a GPU
# datasheet is refused
cat >"$T/cpu-spec.json" <<'JSON'
{"name": "test-cpu", "title": "a test CPU", "kind": "cpu",
 "peak_tflops": {"fp32": 100},
 "memory": [{"level": "DRAM", "GBps": 10000, "GB": 24}],
 "source": "a spec for the test", "notes": "far above any real CPU"}
JSON
if "$SB" run --bench memory.read,compute.gemm --backend cpu -p memory.read:size=4MiB \
        -p compute.gemm:n=256 -p compute.gemm:dtype=fp32 --min-time 0.02 --repeat 3 \
        --no-store --json "$T/cal-run.json" >"$T/cal-run.out" 2>&1; then
    expect 0 'calibration written to .*cal\.json .*compute\.gemm median .*memory\.read median' -- \
        "$SB" hw calibrate "$T/cpu-spec.json" --results "$T/cal-run.json" -o "$T/cal.json"
    python3 - "$T/cal.json" <<'PY' && ok "hw calibrate: the efficiencies of a run" || bad "hw calibrate file: $(cat "$T/cal.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["hardware"] == "test-cpu", d
# a 256^3 GEMM and a 4 MiB read against 100 TFLOP/s and 10 TB/s: far under
assert 0.01 <= d["matmul"] < 0.5 and 0.01 <= d["memory"] < 0.5, d
assert "attention" not in d and "network" not in d, d
PY
    expect 0 'speed of light vs calibrated \(efficiencies matmul' -- \
        "$SB" predict llama3-8b --hw "$T/cpu-spec.json" --calibration "$T/cal.json" \
        --set chips=1 --set fsdp=1
    expect 2 "measured the host's CPU, but h100-sxm is a gpu spec" -- \
        "$SB" hw calibrate h100-sxm --results "$T/cal-run.json"
    # GEMMs of two dtypes: each one's efficiency over its own peak
    # (matmul_by_dtype), matmul the widest-peaked one's. The spec's peaks
    # come from the run (4x its best fp32 point, 5x its best fp64 one), so
    # on any CPU the figures are 0.25 and 0.2, inside the written range
    if "$SB" run --bench compute.gemm --backend cpu -p n=256 -p dtype=fp32,fp64 \
            --min-time 0.02 --repeat 3 --no-store --json "$T/cal-run2.json" >"$T/cal-run2.out" 2>&1 &&
        python3 - "$T/cal-run2.json" "$T/cpu-spec.json" "$T/cpu-spec2.json" <<'PY'; then
import json, sys
run = json.load(open(sys.argv[1]))
res = run["runs"][0]["results"] if "runs" in run else run["results"]
g = {}  # each dtype's best point (a shape each), GFLOP/s
for r in res:
    dt = r["params"]["dtype"]
    g[dt] = max(g.get(dt, 0), r["metrics"]["GFLOPs"]["value"])
spec = json.load(open(sys.argv[2]))
spec["peak_tflops"] = {"fp32": 4 * g["fp32"] / 1e3, "fp64": 5 * g["fp64"] / 1e3}
json.dump(spec, open(sys.argv[3], "w"))
PY
        expect 0 'calibration written to .*; fp32 GEMM 0\.250, fp64 GEMM 0\.200' -- \
            "$SB" hw calibrate "$T/cpu-spec2.json" --results "$T/cal-run2.json" -o "$T/cal2.json"
        python3 - "$T/cal2.json" "$T/cpu-spec2.json" <<'PY' && ok "hw calibrate: a matmul efficiency per dtype" || bad "hw calibrate per dtype: $(cat "$T/cal2.json")"
import json, sys
d = json.load(open(sys.argv[1]))
pk = json.load(open(sys.argv[2]))["peak_tflops"]
assert d["matmul_by_dtype"] == {"fp32": 0.25, "fp64": 0.2}, d
wide = max(pk, key=pk.get)
assert d["matmul"] == d["matmul_by_dtype"][wide], (d, pk)
PY
    else
        bad "the two-dtype run for hw calibrate failed"; tail -5 "$T/cal-run2.out"
    fi
else
    bad "the run for hw calibrate failed"; tail -5 "$T/cal-run.out"
fi
expect 2 'usage: hw calibrate NAME' -- "$SB" hw calibrate h100-sxm

# A calibration's matmul efficiency for one dtype (fp8 GEMMs run further
# below their peak than bf16's): a workload whose matmuls run in it takes
# it, another the sheet's matmul; a key that is no dtype, or a value out
# of (0, 1], is refused with its path.
cat >"$T/cal-dt.json" <<'JSON'
{"hardware": "h200-sxm", "matmul": 0.7, "matmul_by_dtype": {"fp8": 0.5},
 "memory": 0.9, "source": "a test"}
JSON
expect 0 'efficiencies matmul 0\.50, attention 1\.00, memory 0\.90' -- \
    "$SB" predict llama3-70b --calibration "$T/cal-dt.json" \
    --set dtypes.weights=fp8 --set dtypes.activations=fp8
expect 0 'efficiencies matmul 0\.70, attention 1\.00, memory 0\.90' -- \
    "$SB" predict llama3-70b --calibration "$T/cal-dt.json"
sed 's/"fp8": 0.5/"fp9": 0.5/' "$T/cal-dt.json" >"$T/cal-bad.json"
expect 2 'cal-bad\.json.*matmul_by_dtype\.fp9.*not a dtype' -- \
    "$SB" predict llama3-70b --calibration "$T/cal-bad.json"
sed 's/"fp8": 0.5/"fp8": 1.5/' "$T/cal-dt.json" >"$T/cal-bad.json"
expect 2 'cal-bad\.json.*matmul_by_dtype.*fp8' -- \
    "$SB" predict llama3-70b --calibration "$T/cal-bad.json"

# ---- several --sweep make a grid, and the calibrated figures stand beside
# the speed of light (h100-sxm has a calibration in data/calib)
if "$SB" predict llama3-8b --hw h100-sxm --set batch=128 --sweep tensor=1,2 \
        --sweep chips=8,16 --json "$T/grid.json" >"$T/grid" 2>&1 &&
    [ "$(grep -cE '^  [12] (8|16) ' "$T/grid")" -eq 4 ] &&
    grep -q 'step cal' "$T/grid" &&
    python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['sweep']; assert len(d)==4 and d[3]['settings']=={'tensor':'2','chips':'16'} and d[3]['calibrated']['totals']['step_s']>d[3]['totals']['step_s'], d[3].get('settings')" "$T/grid.json"; then
    ok "predict: two sweeps make a 2x2 grid with calibrated columns"
else
    bad "predict grid"; cat "$T/grid"
fi
expect 2 'given twice' -- "$SB" predict llama3-8b --sweep tensor=1,2 --sweep tensor=4

# A hardware sweep: each chip at its own sheet's price; a chip the model
# does not fit serves nothing, printed as such rather than 0 and $0.
"$SB" predict llama3-70b --sweep hw=h200-sxm,h100-sxm,tpu-v5e --json "$T/hw.json" >"$T/hw" 2>&1
grep -qE '^  tpu-v5e .* - +- .*\(does not fit\)' "$T/hw" &&
    ok "sweep: the chip it does not fit prints - and says so" ||
    { bad "sweep: a chip it does not fit"; cat "$T/hw"; }
python3 - "$T/hw.json" <<'PY' && ok "sweep: each chip at its own price" || bad "sweep prices"
import json, sys
rows = json.load(open(sys.argv[1]))["sweep"]
price = {r["variant"]: r["totals"]["price_chip_hour"] for r in rows}
assert price == {"hw=h200-sxm": 3.5, "hw=h100-sxm": 3.0, "hw=tpu-v5e": 1.2}, price
PY

# One chip that holds no sequence: the totals and the speed-of-light
# against calibrated table say nothing is served (no 0 tokens/s, no nan).
"$SB" predict llama3-70b --set tensor=1 --set chips=1 >"$T/nofit" 2>&1
grep -q '^  served           nothing: it does not fit' "$T/nofit" &&
    grep -qE '^  served tokens/s +nothing +nothing +-$' "$T/nofit" &&
    ! grep -qE -e '(^|[ (])-?(nan|inf)(x|[ ,)%]|$)' "$T/nofit" &&
    ok "predict: a model that holds no sequence serves nothing, said in both tables" ||
    { bad "predict: nothing served"; tail -6 "$T/nofit"; }

# One output token a request: no gap between tokens under load, and the
# simulator's TPOT and inter-token are none, not 0; the request's latency
# is its TTFT (the token comes with the prefill)
"$SB" predict llama3-70b --set output_len=1 --set requests=100 >"$T/one" 2>&1
grep -q 'TPOT none (one output token a request)' "$T/one" &&
    grep -qE '^    TPOT +none \(no request has two output tokens\)' "$T/one" &&
    grep -qE '^    inter-token +none' "$T/one" &&
    grep -qE '^  request latency  59\.[0-9]+ ms \(TTFT \+ 0 x TPOT\)' "$T/one" &&
    ok "predict: one output token, no TPOT under load" ||
    { bad "predict: one output token"; grep -E 'TPOT|inter-token|latency' "$T/one"; }

# The serving simulator's timeline, read back by trace show.
expect 0 'simulated +300 requests' -- "$SB" predict llama3-70b --set requests=300 \
    --set job.request_rate=6 --timeline "$T/tl.json"
expect 0 'chrome, [0-9]+ events' -- "$SB" trace show "$T/tl.json"
python3 - "$T/tl.json" <<'PY' && ok "timeline: one event an iteration, in order" || bad "timeline events"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
assert len(ev) > 300 and {e["name"] for e in ev} <= {"prefill", "decode", "mixed"}
assert all(a["ts"] + a["dur"] <= b["ts"] + 0.01 for a, b in zip(ev, ev[1:]))  # µs, 3 decimals each
assert sum(e["args"]["prefill_tokens"] for e in ev) >= 300 * 2048
PY
expect 2 'simulates no requests' -- "$SB" predict llama3-70b --timeline "$T/tl2.json"

# A request file: its requests simulated, dealt to the replicas in turn
# (tensor 4: two replicas, each half of them); a bad line named.
python3 -c "
for i in range(40): print('{\"arrival_s\": %g, \"prompt_len\": %d, \"output_len\": %d}' % (i * 0.1, 512 + 16 * i, 64))
" >"$T/req.jsonl"
expect 0 'simulated +40 requests \(lengths as given; the arrivals of' -- \
    "$SB" predict llama3-70b --arrivals "$T/req.jsonl"
expect 0 'simulated +20 requests' -- "$SB" predict llama3-70b --arrivals "$T/req.jsonl" --set tensor=4
printf '{"arrival_s": 0, "prompt_len": 5, "output_len": 5}\n{"arrival_s": 0, "prompt": 5}\n' >"$T/bad.jsonl"
expect 2 'bad.jsonl:2: "prompt_len": missing' -- "$SB" predict llama3-70b --arrivals "$T/bad.jsonl"
expect 2 'draws its own' -- "$SB" predict llama3-70b --arrivals "$T/req.jsonl" --slo ttft_p90=1s --capacity

# SLOs and capacity: each objective against the simulation; the largest
# rate within them; per variant of a sweep with the cheapest named.
expect 0 'ttft_p90 .*\(at most 2\.000 s\) +met' -- "$SB" predict llama3-70b \
    --set requests=300 --set job.request_rate=4 --slo ttft_p90=2s,tpot_p99=1ms
expect 0 'tpot_p99 .*\(at most 1\.00 ms\) +MISSED' -- "$SB" predict llama3-70b \
    --set requests=300 --set job.request_rate=4 --slo ttft_p90=2s,tpot_p99=1ms
"$SB" predict llama3-70b --set requests=400 --slo ttft_p90=500ms,tpot_p99=50ms \
    --capacity --sweep hw=h200-sxm,b200,tpu-v5e --json "$T/cap.json" >"$T/cap" 2>&1
grep -qE '^best: b200 ' "$T/cap" && grep -qE '^  tpu-v5e +- +- +- +\(nothing is served\)' "$T/cap" &&
    ok "capacity sweep: a row a chip, the best named" || { bad "capacity sweep"; cat "$T/cap"; }
python3 - "$T/cap.json" <<'PY' && ok "capacity JSON: rate, tokens, cost, the SLOs met at it" || bad "capacity JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["best_capacity"] == "b200"
cap = {r["variant"]: r["capacity"] for r in d["sweep"]}
h, b = cap["hw=h200-sxm"], cap["hw=b200"]
assert h["found"] and b["found"] and b["requests_per_s"] > h["requests_per_s"] > 1
assert h["at_capacity"]["ttft_p90"] <= 0.5 and h["at_capacity"]["tpot_p99"] <= 0.05
assert not cap["hw=tpu-v5e"]["found"]
PY
# A published figure served under objectives (MLPerf's server scenario)
# is compared with the capacity under the same objectives, not with the
# steady state's throughput.
"$SB" predict llama2-70b-mlperf-h200-server --json "$T/srv.json" >"$T/srv" 2>&1
grep -qE '^  vs measured +[0-9.]+x the 3\.307e\+04 output tokens/s measured under the same objectives' "$T/srv" &&
    grep -qE '^  calibrated: .*x measured\)' "$T/srv" &&
    ok "measured under objectives: the capacity compared" || { bad "measured under objectives"; cat "$T/srv"; }
python3 - "$T/srv.json" <<'PY' && ok "measured under objectives: JSON" || bad "measured under objectives: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["capacity"]
assert "vs_measured" not in d["totals"]
assert c["measured_tokens_per_s"] == 33071.46
assert abs(c["vs_measured"] - c["tokens_per_s"] / 33071.46) < 1e-9 * c["vs_measured"]
assert abs(c["tokens_per_s"] / c["requests_per_s"] - 293) < 1e-6
assert d["calibrated"]["capacity"]["vs_measured"] < c["vs_measured"]
PY
# Over pipeline stages the batch runs as micro-batches, one a stage: said
# in both headings and in the JSON.
"$SB" predict llama2-70b-mlperf-h100-server --json "$T/pp.json" >"$T/pp" 2>&1
grep -qE '^decode step, .*2 micro-batches through 2 pipeline stages' "$T/pp" &&
    grep -qE '^serving iteration: .*2 micro-batches through 2 pipeline stages' "$T/pp" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["totals"]; sys.exit(0 if d["decode_microbatches"] == 2 and d["serving"]["microbatches"] == 2 else 1)' "$T/pp.json" &&
    ok "pipeline: micro-batches said" || { bad "pipeline: micro-batches said"; cat "$T/pp"; }
python3 - "$(dirname "$0")/../../data/models/llama2-70b-mlperf-h200-server.json" "$T/badslo.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["measured"]["slo"] = "ttft_p95=2s"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 2 'measured\.slo.*a percentile of p50, p90, p99, mean' -- "$SB" predict "$T/badslo.json"
expect 2 'under which objectives' -- "$SB" predict llama3-70b --capacity
expect 2 "a percentile of p50, p90, p99, mean" -- "$SB" predict llama3-70b --slo ttft_p95=2s --capacity
expect 2 "not a time" -- "$SB" predict llama3-70b --slo ttft_p90=fast --capacity
expect 2 'on a simulation' -- "$SB" predict llama3-70b --slo ttft_p90=2s
expect 2 'inference workload' -- "$SB" predict llama3-8b --slo ttft_p90=2s --capacity
expect 2 'not a --sweep' -- "$SB" predict llama3-70b --set requests=10 --sweep tensor=4,8 --timeline "$T/tl3.json"
exit $fail
