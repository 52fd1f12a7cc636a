#!/usr/bin/env bash
# sysinfo_cli.sh SOLBENCH MODE — end-to-end checks of `solbench sysinfo`.
#   json   --json parses and has every group and field the docs promise
#   human  the summary shows the fingerprint the JSON document has
#   bad    unknown arguments exit 2 with one line on stderr naming them
set -u
sb=$1
mode=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

case $mode in
json)
    OMP_NUM_THREADS=1 "$sb" sysinfo --json >"$tmp/out.json" 2>"$tmp/err" ||
        fail "sysinfo --json exited $?: $(cat "$tmp/err")"
    python3 - "$tmp/out.json" <<'PY' || exit 1
import json, platform, re, sys
d = json.load(open(sys.argv[1]))
need = {
    "cpu": ["model", "vendor", "family", "model_id", "stepping", "arch", "hypervisor"],
    "topology": ["sockets", "cores", "threads", "threads_per_core", "numa_nodes"],
    "caches": [],
    "memory": ["bytes", "gib", "numa_bytes"],
    "isa": ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
            "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8",
            "usable", "cpu", "xcr0"],
    "clock": ["ghz_measured", "method", "uncertain", "spread", "methods"],
    "os": ["name", "kernel", "arch", "hostname"],
    "build": ["compiler", "cflags", "target_isa"],
    "libraries": ["openblas", "hwloc", "jansson", "sqlite", "mpi"],
    "env": [],
    "solbench": ["version", "git_commit"],
}
bad = []
for g, keys in need.items():
    if not isinstance(d.get(g), dict):
        bad.append(g)
        continue
    bad += [g + "." + k for k in keys if k not in d[g]]
if not re.fullmatch(r"[0-9a-f]{16}", d.get("fingerprint", "")):
    bad.append("fingerprint")
if not isinstance(d.get("notes"), list):
    bad.append("notes")
t = d.get("topology", {})
if not (1 <= t.get("sockets", 0) <= t.get("cores", 0) <= t.get("threads", 0)):
    bad.append("topology values %r" % t)
g = d.get("clock", {}).get("ghz_measured")
if not (isinstance(g, (int, float)) and 0.5 < g < 7):
    bad.append("clock.ghz_measured=%r" % g)
c = d.get("clock", {})
m = c.get("methods", {})
if c.get("uncertain") is not False:
    bad.append("clock.uncertain=%r" % c.get("uncertain"))
# Every method that ran agrees with the clock within 5 %.
for k in ("add_chain", "mul_chain", "cycle_counter"):
    v = m.get(k, "missing")
    if v is not None and not (isinstance(v, (int, float)) and isinstance(g, (int, float))
                              and abs(v / g - 1) <= 0.05):
        bad.append("clock.methods.%s=%r" % (k, v))
if platform.machine() == "x86_64" and (m.get("add_chain") is None or m.get("mul_chain") is None):
    bad.append("clock.methods: x86-64 runs both chains")
if d.get("env", {}).get("OMP_NUM_THREADS") != "1":
    bad.append("env.OMP_NUM_THREADS")
for k in ("core", "version", "threads"):
    if k not in d.get("libraries", {}).get("openblas", {}):
        bad.append("libraries.openblas." + k)
if d.get("caches") and "L1d" not in d["caches"]:
    bad.append("caches.L1d")
if bad:
    sys.exit("FAIL: missing or wrong: " + ", ".join(bad))
print("sysinfo --json: fingerprint", d["fingerprint"], "ok")
PY
    ;;
human)
    "$sb" sysinfo >"$tmp/out.txt" 2>"$tmp/err" || fail "sysinfo exited $?"
    "$sb" sysinfo --json >"$tmp/out.json" || fail "sysinfo --json exited $?"
    fp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$tmp/out.json")
    grep -q "^Fingerprint  *$fp" "$tmp/out.txt" || fail "summary lacks fingerprint $fp"
    for section in CPU Topology Caches Memory ISA Clock OS Build Libraries Environment; do
        grep -q "^$section " "$tmp/out.txt" || fail "summary lacks $section"
    done
    [ -s "$tmp/err" ] && fail "unexpected stderr: $(cat "$tmp/err")"
    echo "sysinfo summary ok"
    ;;
bad)
    for args in "--bogus" "--json extra" "-j"; do
        # shellcheck disable=SC2086
        "$sb" sysinfo $args >"$tmp/out" 2>"$tmp/err"
        rc=$?
        [ "$rc" -eq 2 ] || fail "sysinfo $args: exit $rc, want 2"
        [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "sysinfo $args: want one stderr line, got: $(cat "$tmp/err")"
        last=${args##* }
        grep -q -- "$last" "$tmp/err" || fail "sysinfo $args: message does not name '$last'"
        [ -s "$tmp/out" ] && fail "sysinfo $args: printed on stdout"
    done
    echo "bad arguments rejected with exit 2"
    ;;
*)
    fail "unknown mode $mode"
    ;;
esac
