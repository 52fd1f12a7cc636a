#!/usr/bin/env bash
# The GPU reference runs under data/reference/ (run documents measured on a
# device, docs/REFERENCE-GPU.md) against the code as it is now, on a
# machine without a GPU:
#   import  every document imports into a new store (the schema still
#           reads them), each result measured and valid, and a second
#           import changes nothing;
#   shapes  every point's benchmark and parameters are still accepted by
#           `run --backend cuda` (a renamed benchmark or parameter fails
#           here, not at the next device run); skipped (77) where a GPU is
#           present, since the points would then run at full size.
#   usage: reference_gpu.sh SOLBENCH import|shapes
set -u
sb=$1
what=$2
ref=$(cd "$(dirname "$0")/../.." && pwd)/data/reference
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
docs=("$ref"/*/ref-*.json)
[ -e "${docs[0]}" ] || fail "no reference documents under $ref"

case $what in
import)
    out=$("$sb" import --db "$tmp/r.db" "${docs[@]}" 2>&1) || fail "import: $out"
    echo "$out" | grep -q "^${#docs[@]} of ${#docs[@]} runs imported" ||
        fail "not every document imported: $out"
    python3 - "${docs[@]}" <<'PY' || exit 1
import json, sys
n = 0
for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        n += 1
        if r.get("skipped") or r.get("valid") is not True:
            sys.exit(f"FAIL: {f}: {r['bench']} {r['params']}: not a valid measurement")
        if r.get("backend") not in (None, "cuda"):
            sys.exit(f"FAIL: {f}: {r['bench']}: backend {r.get('backend')}")
print(f"ok: {n} results in {len(sys.argv) - 1} documents, each measured and valid")
PY
    out=$("$sb" import --db "$tmp/r.db" "${docs[@]}" 2>&1) || fail "second import: $out"
    echo "$out" | grep -q "^0 of ${#docs[@]} runs imported" ||
        fail "a second import changed the store: $out"
    echo "ok: ${#docs[@]} documents imported once, a second import changes nothing"
    ;;
shapes)
    if nvidia-smi -L >/dev/null 2>&1; then
        echo "a GPU is present: the points would run at full size (gpu-check.sh does that)"
        exit 77
    fi
    python3 - "${docs[@]}" >"$tmp/points" <<'PY'
import json, sys
seen = set()
for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        ps = " ".join(f"-p {k}={str(v).lower() if isinstance(v, bool) else v}"
                      for k, v in sorted(r["params"].items()))
        line = f"{r['bench']} {ps}"
        if line not in seen:
            seen.add(line)
            print(line)
PY
    n=0
    while read -r bench params; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        out=$("$sb" run --no-store --backend cuda --bench "$bench" $params 2>&1)
        rc=$?
        [ $rc = 0 ] || fail "$bench $params: exit $rc: $out"
        echo "$out" | grep -q "$bench@cuda.*skipped: no CUDA device" ||
            fail "$bench $params: not the no-device skip: $out"
    done <"$tmp/points"
    [ $n -gt 0 ] || fail "no points read"
    echo "ok: $n reference points accepted by run --backend cuda"
    ;;
*) fail "usage: reference_gpu.sh SOLBENCH import|shapes" ;;
esac
