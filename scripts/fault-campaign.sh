#!/usr/bin/env bash
# fault-campaign.sh [SOLBENCH] [KILLS] [WRITERS] — a fault campaign against
# the tool as built (docs/FUZZ.md, "Fault campaign"):
#
#   kills:    KILLS runs, imports and baseline writes into one store, each
#             killed with SIGKILL at a random moment (0-400 ms in); then the
#             store must pass SQLite's integrity check, list its runs, and
#             every run it lists must export whole;
#   writers:  WRITERS processes writing into one store at once (runs,
#             imports, baseline sets), four rounds; every writer that said
#             it stored must be found stored, none may fail but on its lock
#             wait with its one line;
#   inputs:   bad inputs to every command that reads a file, a name or a
#             plugin (run documents, hardware specs, workloads, traces,
#             parameters, plugin paths), mutated from good ones with a fixed
#             seed; each must end within 30 s, without a signal, in exit 2
#             with one line on stderr, or be accepted — and an accepted
#             document must hold no impossible figure (exported again and
#             read: no infinite or NaN-as-number rate, nothing beyond 1e30,
#             no negative size or count).
#
# Prints one line per finding and a table of counts; exits 1 on any
# finding. Takes about 2-4 minutes on two cores with the defaults.
set -uo pipefail
cd "$(dirname "$0")/.."
S=$(readlink -f "${1:-build/solbench}")
KILLS=${2:-350}
WRITERS=${3:-8}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
TINY=(--bench memory.triad -p size=64KiB --min-time 0.01 --repeat 2 --quiet)
findings=0
finding() { echo "FINDING: $*"; findings=$((findings + 1)); }

"$S" run --no-store "${TINY[@]}" --json "$W/good.json" >/dev/null 2>&1 || {
    echo "fault-campaign: $S cannot run" >&2
    exit 2
}

# ---- kills ------------------------------------------------------------------
db=$W/kill.db
"$S" run "${TINY[@]}" --db "$db" >/dev/null 2>&1
RANDOM=34
for ((i = 0; i < KILLS; i++)); do
    case $((i % 3)) in
    0) "$S" run "${TINY[@]}" --db "$db" >/dev/null 2>&1 & ;;
    1) python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['run_id']+='-k$i'; json.dump(d,open(sys.argv[2],'w'))" \
        "$W/good.json" "$W/k.json" && "$S" import "$W/k.json" --db "$db" >/dev/null 2>&1 & ;;
    2) "$S" baseline set "b$((i % 5))" last --db "$db" >/dev/null 2>&1 & ;;
    esac
    pid=$!
    sleep "0.$(printf '%03d' $((RANDOM % 400)))"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
done
ok=$(python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("PRAGMA integrity_check").fetchone()[0])
PY
)
[ "$ok" = ok ] || finding "kills: integrity_check says $ok"
"$S" history --last 0 --db "$db" --json "$W/hist.json" >/dev/null 2>"$W/err" ||
    finding "kills: history fails: $(head -1 "$W/err")"
ids=$(python3 -c "import json,sys; print(' '.join(r['run_id'] for r in json.load(open(sys.argv[1]))))" "$W/hist.json" 2>/dev/null)
nstored=0
for id in $ids; do
    nstored=$((nstored + 1))
    "$S" export "$id" --db "$db" --json "$W/x.json" >/dev/null 2>"$W/err" ||
        finding "kills: run $id listed but does not export: $(head -1 "$W/err")"
done
kill_line="kills        $KILLS SIGKILLs, $nstored runs stored, integrity $ok"

# ---- concurrent writers -----------------------------------------------------------
db=$W/conc.db
said=0
lockfail=0
for round in 1 2 3 4; do
    pids=()
    for ((j = 0; j < WRITERS; j++)); do
        (
            case $((j % 3)) in
            0) "$S" run "${TINY[@]}" --db "$db" ;;
            1) python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['run_id']+=sys.argv[3]; json.dump(d,open(sys.argv[2],'w'))" \
                "$W/good.json" "$W/c$j.json" "-c$round-$j" && "$S" import "$W/c$j.json" --db "$db" ;;
            2) "$S" run "${TINY[@]}" --db "$db" && "$S" baseline set "w$j" last --db "$db" ;;
            esac
        ) >"$W/w$j.out" 2>"$W/w$j.err" &
        pids+=($!)
    done
    for ((j = 0; j < WRITERS; j++)); do
        wait "${pids[$j]}"
        rc=$?
        if [ $rc -eq 0 ]; then
            said=$((said + 1)) # each writer stores one run
        elif grep -q "locked\|lock" "$W/w$j.err" && [ $rc -eq 2 ]; then
            lockfail=$((lockfail + 1))
        else
            finding "writers: round $round writer $j: exit $rc: $(head -c 300 "$W/w$j.err")"
        fi
    done
done
"$S" history --last 0 --db "$db" --json "$W/hist.json" >/dev/null 2>&1
nruns=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$W/hist.json" 2>/dev/null || echo 0)
[ "$nruns" -eq "$said" ] || finding "writers: $said said stored, $nruns found"
conc_line="writers      $WRITERS at once x 4 rounds: $said stored and found ($nruns in the store), $lockfail lock-wait refusals"

# ---- bad inputs ---------------------------------------------------------------------
mkdir -p "$W/in"
python3 - "$W" <<'PY'
import json, os, random, sys, gzip
w = sys.argv[1]; rnd = random.Random(34); out = w + "/in"
good = json.load(open(w + "/good.json"))
spec = json.load(open("data/hw/h100-sxm.json"))
wl = json.load(open("data/models/llama3-8b.json"))
trace = {"traceEvents": [
    {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "ts": 10, "dur": 100,
     "pid": 1, "tid": 1, "args": {"Input Dims": [[64, 64], [64, 64]]}},
    {"ph": "X", "name": "aten::add", "cat": "cpu_op", "ts": 120, "dur": 20,
     "pid": 1, "tid": 1, "args": {"Input Dims": [[64], [64]]}}]}
EVIL = [1e308, -1e308, -5, 0, -0.0, 2**63, -2**63, 2**64, 1e-320, "NaN",
        "inf", "", "x" * 5000, None, [], {}, True, "1e400", "-1", "\u0000\n<b>"]
def leaves(d, path=()):
    if isinstance(d, dict):
        for k, v in d.items(): yield from leaves(v, path + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d): yield from leaves(v, path + (i,))
    yield path
def setp(d, path, v):
    try:
        for p in path[:-1]: d = d[p]
        if path: d[path[-1]] = v
    except (TypeError, KeyError, IndexError):
        pass  # an earlier mutation replaced a parent
def mutate(doc, n):
    out = []
    paths = [p for p in leaves(doc) if p]
    for i in range(n):
        d = json.loads(json.dumps(doc))
        kind = i % 4
        if kind < 2:
            for _ in range(1 + kind):
                setp(d, rnd.choice(paths), rnd.choice(EVIL))
            s = json.dumps(d)
        elif kind == 2:
            s = json.dumps(d); cut = rnd.randrange(len(s)); s = s[:cut]
        else:
            s = bytearray(json.dumps(d).encode())
            for _ in range(4):
                s[rnd.randrange(len(s))] = rnd.randrange(256)
            s = s.decode("latin-1")
        if isinstance(d, dict) and "run_id" in d and kind < 2:
            pass
        out.append(s)
    return out
def write(prefix, docs, ext="json"):
    for i, s in enumerate(docs):
        open(f"{out}/{prefix}-{i:03d}.{ext}", "w", encoding="latin-1",
             errors="replace").write(s)
docs = mutate(good, 100)
for i, s in enumerate(docs):  # distinct run ids where the id survived
    docs[i] = s.replace(good["run_id"], good["run_id"] + f"-m{i}", 1)
write("import", docs)
write("spec", mutate(spec, 60))
write("workload", mutate(wl, 60))
write("trace", mutate(trace, 50))
deep = "[" * 100000 + "]" * 100000
open(f"{out}/import-deep.json", "w").write(deep)
open(f"{out}/trace-deep.json", "w").write('{"traceEvents":' + deep + "}")
with gzip.open(f"{out}/trace-bomb.json.gz", "wb") as g:
    g.write(b'{"traceEvents":[' + b" " * (64 << 20) + b"]}")
params = ["size=-5", "size=1e400", "size=99999999TiB", "size=", "size=0",
          "threads=-1", "threads=100000000", "size=1,2,,3", "size=1..",
          "m=0", "n=-1", "dtype=fp7", "size=\x01", "size=18446744073709551616",
          "size=1:1e18:2", "size=64KiB:1GiB:x0"]
open(f"{out}/params.txt", "w").write("\n".join(params) + "\n")
PY
# plugin paths
mkfifo "$W/in/fifo.so"
head -c 1000 "$(ldconfig -p | awk '/libz.so.1 / {print $NF; exit}')" >"$W/in/trunc.so" 2>/dev/null ||
    head -c 1000 /bin/true >"$W/in/trunc.so"
echo "not a library" >"$W/in/text.so"
mkdir -p "$W/in/dir.so"
: >"$W/in/empty.so"
cp tests/fuzz/corpus/fuzz_plugin/minimal-dyn.so "$W/in/dyn.so" # sound headers, crashes ld.so

declare -A n_ok n_acc n_bad
tally() { # CMD-CLASS RC ERRFILE
    local cls=$1 rc=$2 err=$3 lines
    lines=$(wc -l <"$err")
    if [ "$rc" -eq 124 ]; then
        finding "$cls: hang (30 s): ${4:-}"
        n_bad[$cls]=$((${n_bad[$cls]:-0} + 1))
    elif [ "$rc" -ge 128 ] || grep -q "Sanitizer\|runtime error" "$err"; then
        finding "$cls: signal or sanitizer (exit $rc): ${4:-}: $(head -c 200 "$err")"
        n_bad[$cls]=$((${n_bad[$cls]:-0} + 1))
    elif [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ]; then
        n_ok[$cls]=$((${n_ok[$cls]:-0} + 1))
    elif [ "$rc" -eq 0 ]; then
        n_acc[$cls]=$((${n_acc[$cls]:-0} + 1))
    else
        finding "$cls: exit $rc with $lines lines on stderr: ${4:-}: $(head -c 200 "$err")"
        n_bad[$cls]=$((${n_bad[$cls]:-0} + 1))
    fi
}
db=$W/in.db
for f in "$W"/in/import-*.json; do
    timeout 30 "$S" import "$f" --db "$db" >/dev/null 2>"$W/err"
    rc=$?
    tally import $rc "$W/err" "$(basename "$f")"
    if [ $rc -eq 0 ]; then # an accepted document: its figures, as stored
        id=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_id'])" "$f" 2>/dev/null)
        "$S" export "$id" --db "$db" --json "$W/acc.json" >/dev/null 2>&1 &&
            python3 - "$W/acc.json" "$(basename "$f")" <<'PY' || findings=$((findings + 1))
import json, math, sys
d = json.load(open(sys.argv[1]), parse_constant=lambda c: float(c))
bad = []
for r in d.get("results", []):
    for k, m in (r.get("metrics") or {}).items():
        v = m.get("value") if isinstance(m, dict) else m
        if isinstance(v, (int, float)) and (math.isinf(v) or abs(v) > 1e30):
            bad.append(f"{k}={v}")
    for k, v in (r.get("params") or {}).items():
        if k in ("size", "threads", "m", "n", "k", "count") and isinstance(v, (int, float)) and v < 0:
            bad.append(f"{k}={v}")
    for s in r.get("samples_s") or []:
        if isinstance(s, (int, float)) and not (0 <= s <= 86400):
            bad.append(f"sample {s}")
if bad:
    print(f"FINDING: import: {sys.argv[2]} accepted with {', '.join(bad[:4])}")
    sys.exit(1)
PY
    fi
done
for f in "$W"/in/spec-*.json; do
    timeout 30 "$S" hw show "$f" >/dev/null 2>"$W/err"
    tally "hw show" $? "$W/err" "$(basename "$f")"
done
for f in "$W"/in/workload-*.json; do
    timeout 30 "$S" predict "$f" >/dev/null 2>"$W/err"
    tally predict $? "$W/err" "$(basename "$f")"
done
for f in "$W"/in/trace-*.json "$W"/in/trace-bomb.json.gz; do
    timeout 30 "$S" trace show "$f" >/dev/null 2>"$W/err"
    tally "trace show" $? "$W/err" "$(basename "$f")"
done
for f in "$W"/in/import-0[0-2]*.json; do
    timeout 30 "$S" roofline --results "$f" >/dev/null 2>"$W/err"
    tally "roofline --results" $? "$W/err" "$(basename "$f")"
done
while IFS= read -r p; do
    timeout 30 "$S" run --no-store --plan --bench memory.triad -p "$p" >/dev/null 2>"$W/err"
    tally "run -p" $? "$W/err" "$p"
done <"$W/in/params.txt"
for f in fifo text dir empty trunc dyn; do
    for cmd in "run --no-store ${TINY[*]} --pjrt-plugin" "sysinfo --pjrt-plugin"; do
        # shellcheck disable=SC2086
        timeout 30 "$S" $cmd "$W/in/$f.so" >/dev/null 2>"$W/err"
        tally "--pjrt-plugin" $? "$W/err" "${cmd%% *} $f.so"
    done
    SOLBENCH_PJRT_PLUGIN="$W/in/$f.so" timeout 30 "$S" sysinfo >/dev/null 2>"$W/err"
    tally "--pjrt-plugin" $? "$W/err" "SOLBENCH_PJRT_PLUGIN=$f.so"
done

echo "== fault campaign ($(date -u +%Y-%m-%dT%H:%MZ), $S)"
echo "$kill_line"
echo "$conc_line"
total=0
for cls in import "hw show" predict "trace show" "roofline --results" "run -p" "--pjrt-plugin"; do
    o=${n_ok[$cls]:-0} a=${n_acc[$cls]:-0} b=${n_bad[$cls]:-0}
    total=$((total + o + a + b))
    printf 'inputs       %-20s %4d refused in one line, %4d accepted, %d findings\n' "$cls" "$o" "$a" "$b"
done
echo "inputs       $total bad inputs in all; $findings findings"
[ "$findings" -eq 0 ]
