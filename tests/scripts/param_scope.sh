#!/usr/bin/env bash
# param_scope.sh SOLBENCH — scoped parameters: -p SCOPE:key=value applies
# to one benchmark or one area only, over an unscoped setting of the same
# key whatever the order; a scope that covers no selected benchmark, or
# none that takes the key, or a malformed one exits 2 with one line.
set -u
sb=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0
die() { echo "FAIL: $*" >&2; fail=1; }

"$sb" run --no-store --quiet --bench memory.triad,ops.softmax,ops.rmsnorm \
    -p size=1MiB -p ops.softmax:dtype=bf16 -p ops:tokens=16 -p d=64 \
    -p dtype=fp32 --min-time 0.01 --repeat 2 --json "$d/r.json" >"$d/out" 2>&1 ||
    { cat "$d/out"; die "run exited $?"; }
python3 - "$d/r.json" <<'PY' || fail=1
import json, sys
res = {r["bench"]: r for r in json.load(open(sys.argv[1]))["results"]}
want = {"memory.triad": "fp32", "ops.softmax": "bf16", "ops.rmsnorm": "fp32"}
bad = []
for b, dt in want.items():
    if b not in res:
        bad.append("%s did not run" % b)
        continue
    p = res[b]["params"]
    if p.get("dtype") != dt:
        bad.append("%s dtype %s, want %s" % (b, p.get("dtype"), dt))
    if b.startswith("ops.") and str(p.get("tokens")) != "16":
        bad.append("%s tokens %s, want 16" % (b, p.get("tokens")))
    if not res[b]["valid"]:
        bad.append("%s not valid" % b)
for x in bad:
    print("FAIL:", x, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# bad scopes: exit 2, one line on stderr naming the setting
expect2() {
    local what=$1 want=$2
    shift 2
    "$sb" run --no-store --quiet --min-time 0.01 --repeat 1 "$@" >"$d/o" 2>"$d/e"
    local rc=$?
    [[ $rc -eq 2 ]] || die "$what: exit $rc, want 2"
    [[ $(wc -l <"$d/e") -eq 1 ]] || die "$what: stderr is not one line: $(cat "$d/e")"
    grep -q -- "$want" "$d/e" || die "$what: stderr lacks '$want': $(cat "$d/e")"
}
expect2 "scope selects nothing" "'ops'" --bench memory.triad -p ops:dtype=bf16
expect2 "scope lacks the key" "'tokens'" --bench memory.triad,ops.softmax -p memory:tokens=3
expect2 "empty scope" "SCOPE:key=value" --bench memory.triad -p :dtype=fp32
expect2 "empty key" "SCOPE:key=value" --bench memory.triad -p memory:=fp32
expect2 "area prefix only" "'mem'" --bench memory.triad -p mem:dtype=fp32
exit $fail
