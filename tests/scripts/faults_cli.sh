#!/usr/bin/env bash
# faults_cli.sh SOLBENCH — fault paths end in one line and exit 2, or in a
# kept run and exit 0 where the measurement was good (docs/FUZZ.md, the
# fault campaign):
#   import:   a document whose figures a run could not have measured (a
#             GBps of 1e308, a sample of 1e308 s, size -5, a latency that
#             is not its samples' median) is refused, nothing stored;
#   memory:   a point above 80% of the available memory is refused with
#             the figure, --force plans it;
#   filesize: under ulimit -f the store cannot be written: the run is kept
#             beside as a file, exit 0, no SIGXFSZ;
#   readonly: a read-only mount: history and export read, run says
#             read-only (a new database: cannot be created); a folder this
#             user cannot write: reads work (as nobody, where runuser is);
#   full:     a full disk refuses before a new database is created;
#   specs:    a hardware spec of 100 KB, an unknown kind, a name with
#             markup, a workload naming /etc/passwd as its spec: one line,
#             no file content echoed; a trace with two traceEvents;
#   plugin:   an ELF shared object whose headers are sound but that
#             crashes the loader: loaded first in a child, refused.
set -u
S=$(readlink -f "$1")
W=$(mktemp -d)
trap 'umount "$W/ro" 2>/dev/null; umount "$W/tiny" 2>/dev/null; rm -rf "$W"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok: $*"; }
TINY=(--bench memory.triad -p size=64KiB --min-time 0.01 --repeat 2)

# refused WORD -- ARGS...: exit 2, one line on stderr holding WORD
refused() {
    local word=$1
    shift 2
    local err rc lines
    timeout 60 "$S" "$@" >"$W/out" 2>"$W/err"
    rc=$?
    lines=$(wc -l <"$W/err")
    if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$word" "$W/err"; then
        ok "$* -> $(head -c 160 "$W/err")"
    else
        fail "$* -> rc=$rc, $lines lines: $(head -c 300 "$W/err")"
    fi
}

# ---- import -----------------------------------------------------------------
export SOLBENCH_DB=$W/imp.db
"$S" run --no-store "${TINY[@]}" --json "$W/good.json" >/dev/null 2>&1 ||
    fail "a good run"
python3 - "$W" <<'PY'
import json, sys
w = sys.argv[1]
d = json.load(open(w + "/good.json"))
def bad(name, f):
    e = json.loads(json.dumps(d)); f(e["results"][0]); e["run_id"] += name
    json.dump(e, open(f"{w}/{name}.json", "w"))
bad("gbps", lambda r: r["metrics"]["GBps"].__setitem__("value", 1e308))
bad("sample", lambda r: r["samples_s"].__setitem__(0, 1e308))
bad("size", lambda r: r["params"].__setitem__("size", -5))
bad("latency", lambda r: r["metrics"]["latency_us"].__setitem__(
    "value", r["metrics"]["latency_us"]["value"] * 2))
PY
refused "larger than any figure" -- import "$W/gbps.json"
refused "not the time of one iteration" -- import "$W/sample.json"
refused "negative size" -- import "$W/size.json"
refused "not measured together" -- import "$W/latency.json"
"$S" history >"$W/h" 2>&1
grep -q "^no runs" "$W/h" && ok "the refused imports stored nothing" ||
    fail "history after refused imports: $(cat "$W/h")"
"$S" import "$W/good.json" >/dev/null 2>&1 && ok "the good document imports" ||
    fail "the good document was refused"

# ---- memory: one rule, 80% of what is available -------------------------------
avail=$(awk '/MemAvailable/ {print $2 * 1024}' /proc/meminfo)
big=$(python3 -c "print(int($avail * 0.9 / 1048576))")MiB
refused "of the" -- run --no-store --bench memory.triad -p size=$big
"$S" run --no-store --plan --force --bench memory.triad -p size=$big >/dev/null 2>"$W/err" &&
    ok "--force plans a point above 80%" || fail "--force: $(cat "$W/err")"

# ---- a file size limit -------------------------------------------------------
(
    # 96 KiB: room for a new store's layout (schema 7: about 80 KiB of
    # log when it is made), not for a run as well
    ulimit -f 96
    cd "$W" && "$S" run "${TINY[@]}" --db "$W/fs/new.db" >"$W/fs.out" 2>"$W/fs.err"
)
rc=$?
kept=$(ls "$W"/fs/solbench-unsaved-*.json 2>/dev/null | head -1)
if [ "$rc" -eq 0 ] && [ -n "$kept" ] && grep -q "kept in" "$W/fs.err"; then
    ok "ulimit -f: exit 0, the run kept in $(basename "$kept"): $(head -c 200 "$W/fs.err")"
else
    fail "ulimit -f: rc=$rc: $(cat "$W/fs.err" | head -c 400)"
fi
mkdir -p "$W/fs"

# ---- read-only places ---------------------------------------------------------
mkdir -p "$W/ro"
"$S" run "${TINY[@]}" --db "$W/ro/r.db" >/dev/null 2>&1 || fail "run into ro/r.db"
if unshare -m true 2>/dev/null; then
    unshare -m bash -c '
        S=$1 W=$2
        mount --bind -o ro "$W/ro" "$W/ro" || exit 99
        "$S" history --db "$W/ro/r.db" >/dev/null 2>&1 || exit 11
        "$S" export last --db "$W/ro/r.db" --json "$W/x.json" >/dev/null 2>&1 || exit 12
        "$S" run --min-time 0.01 --repeat 2 --bench memory.triad -p size=64KiB --db "$W/ro/r.db" >/dev/null 2>"$W/e1"
        [ $? -eq 2 ] && grep -q "read-only (the file system is mounted read-only)" "$W/e1" || exit 13
        "$S" run --min-time 0.01 --repeat 2 --bench memory.triad -p size=64KiB --db "$W/ro/new.db" >/dev/null 2>"$W/e2"
        [ $? -eq 2 ] && grep -q "cannot be created" "$W/e2" || exit 14
        exit 0' _ "$S" "$W"
    rc=$?
    case $rc in
    0) ok "read-only mount: reads work, writes say read-only" ;;
    99) echo "skip: no bind mount here" ;;
    *) fail "read-only mount: step $rc: $(cat "$W/e1" "$W/e2" 2>/dev/null)" ;;
    esac
else
    echo "skip: no mount namespace here"
fi
if command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
    chmod 0755 "$W"
    chmod 0555 "$W/ro"
    chmod 0644 "$W/ro/r.db"
    if runuser -u nobody -- "$S" history --db "$W/ro/r.db" >/dev/null 2>"$W/e3"; then
        ok "a folder nobody cannot write: history reads"
    else
        fail "a folder nobody cannot write: $(cat "$W/e3")"
    fi
    chmod 0755 "$W/ro"
fi

# ---- a full disk ----------------------------------------------------------------
mkdir -p "$W/tiny"
if mount -t tmpfs -o size=1m tmpfs "$W/tiny" 2>/dev/null; then
    refused "the disk is full" -- run "${TINY[@]}" --db "$W/tiny/new.db"
    [ -e "$W/tiny/new.db" ] && fail "a database was created on the full disk" ||
        ok "no database created on the full disk"
    umount "$W/tiny"
else
    echo "skip: no tmpfs mount here"
fi

# ---- specs, workloads, traces ---------------------------------------------------
head -c 100000 /dev/zero | tr '\0' ' ' >"$W/big.json"
refused "more than a hardware spec holds" -- hw show "$W/big.json"
cat >"$W/kind.json" <<'J'
{"name": "x", "kind": "fpga", "peak_tflops": {"fp32": 1}, "memory": [{"name": "HBM", "GBps": 1000, "bytes": 1e9}]}
J
refused "not one of cpu, gpu, tpu" -- hw show "$W/kind.json"
cat >"$W/markup.json" <<'J'
{"name": "<b>x</b>", "kind": "gpu", "peak_tflops": {"fp32": 1}, "memory": [{"name": "HBM", "GBps": 1000, "bytes": 1e9}]}
J
refused "not a name" -- hw show "$W/markup.json"
cat >"$W/wl.json" <<'J'
{"name": "w", "model": {"layers": 2, "d_model": 256, "q_heads": 4, "kv_heads": 4,
 "head_dim": 64, "ffn": 512, "vocab": 1000},
 "job": {"type": "training", "global_batch": 8, "seq_len": 512},
 "topology": {"chips": 1}, "hardware": {"spec": "/etc/passwd"}}
J
refused "must be a .json document" -- predict "$W/wl.json"
grep -q "root" "$W/err" && fail "the error echoes /etc/passwd" || ok "no file content echoed"
# ---- a plugin that passes the file checks but crashes the loader ---------------
# (a well-formed header, a dynamic section of zeros: ld.so dies on it)
cp "$(dirname "$0")/../fuzz/corpus/fuzz_plugin/minimal-dyn.so" "$W/dyn.so"
# (killed by SIGSEGV; under the sanitizers the crash is an exit status)
refused "a test process" -- sysinfo --pjrt-plugin "$W/dyn.so"
refused "a test process" -- run --no-store "${TINY[@]}" --pjrt-plugin "$W/dyn.so"

echo '{"traceEvents":[],"traceEvents":[]}' >"$W/two.json"
refused "traceEvents given twice" -- trace show "$W/two.json"

echo "$FAILS failed"
[ "$FAILS" -eq 0 ]
