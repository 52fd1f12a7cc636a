#!/usr/bin/env bash
# The CUDA backend from the command line on a machine without a GPU: every
# CUDA benchmark is reported "skipped: no CUDA device (<driver's reason>)"
# with exit code 0 (also with plant_error set), the fingerprint carries a
# devices entry with the reason, and bad input still exits 2 before any
# device is asked for. On a machine with a GPU it says so and checks only
# the input errors and that the devices entry lists the GPUs.
#   usage: cuda_cli.sh SOLBENCH skip|sysinfo|errors
set -u
sb=$1
what=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
has_gpu=0
if nvidia-smi -L >/dev/null 2>&1; then has_gpu=1; fi

case $what in
skip)
    if [ $has_gpu = 1 ]; then echo "a GPU is present: skip path not exercised"; exit 77; fi
    # One small point per benchmark, so the test runs in seconds.
    declare -A pts=(
        [memory.copy]="-p size=1MiB -p method=kernel,memcpy"
        [memory.read]="-p size=1MiB"
        [memory.write]="-p size=1MiB"
        [memory.triad]="-p size=1MiB -p plant_error=1"
        [compute.gemm]="-p dtype=bf16,fp8 -p n=256"
        [attention.bmm]="-p batch=2 -p seq=64 -p head_dim=64"
        [attention.paged_decode]="-p batch=4 -p lens=uniform:1:64"
        [transfer.h2d]="-p size=4KiB"
        [memory.latency]="-p size=64KiB -p plant_error=1"
        [transfer.latency]="-p size=1MiB"
    )
    for b in "${!pts[@]}"; do
        # shellcheck disable=SC2086
        out=$("$sb" run --no-store --backend cuda --bench "$b" ${pts[$b]} 2>&1)
        rc=$?
        [ $rc = 0 ] || fail "$b: exit $rc: $out"
        echo "$out" | grep -q "$b@cuda.*skipped: no CUDA device (" ||
            fail "$b: no skip line with the driver's reason: $out"
        if echo "$out" | grep -q "@cpu"; then fail "$b: a cpu result under --backend cuda"; fi
    done
    if "$sb" list 2>/dev/null | grep -q "^network.allreduce.*cuda"; then
        # Naming the network area starts MPI, whose library keeps memory
        # to the end: not a leak of ours under a sanitizer build.
        out=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
              OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
              "$sb" run --no-store --backend cuda --bench network.allreduce -p size=1MiB 2>&1) ||
            fail "network.allreduce: exit $?: $out"
        echo "$out" | grep -q "skipped: no CUDA device (.*collectives need two or more CUDA devices (found 0)" ||
            fail "network.allreduce: no skip line: $out"
    fi
    # The whole quick suite of the backend skips cleanly too, and the JSON
    # document records every skip.
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$sb" run --no-store --backend cuda --json "$tmp/run.json" >"$tmp/out" 2>&1 ||
        fail "quick suite on cuda: exit $?: $(cat "$tmp/out")"
    python3 - "$tmp/run.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
res = doc["results"]
assert res, "no results"
for r in res:
    assert r.get("skipped") is True, r["bench"]
    assert any("no CUDA device (" in n for n in r.get("notes", [])), r
print(len(res), "cuda results, all skipped with the driver's reason")
PY
    ;;
sysinfo)
    "$sb" sysinfo --json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
dev = doc.get("devices")
assert dev is not None, "no devices entry"
gpu = sys.argv[1] == "1"
if gpu:
    assert isinstance(dev, list) and dev, dev
    for d in dev:
        for k in ("name", "sm_count", "compute_capability", "memory_bytes",
                  "sm_clock_max_MHz", "cuda_runtime", "cuda_driver_api", "pcie"):
            assert k in d, (k, d)
    print("devices:", [d["name"] for d in dev])
else:
    assert isinstance(dev, dict), dev
    assert dev["error"].startswith("no CUDA device ("), dev
    assert len(dev["error"]) > len("no CUDA device ()"), dev
    print("devices:", dev["error"])
' $has_gpu || fail "sysinfo devices entry"
    ;;
errors)
    # Bad input: exit 2 and one line naming the problem, device or not.
    out=$("$sb" run --no-store --backend cuda --bench compute.gemm -p dtype=fp8 -p n=100 2>&1)
    [ $? = 2 ] || fail "fp8 with n=100 should exit 2: $out"
    echo "$out" | grep -q "multiples of 16" || fail "fp8 n=100: $out"
    out=$("$sb" run --no-store --backend cuda --bench compute.gemm -p dtype=fp64 2>&1)
    [ $? = 2 ] || fail "dtype=fp64 on cuda should exit 2: $out"
    out=$("$sb" run --no-store --backend cuda --bench memory.triad -p size=40B 2>&1)
    [ $? = 2 ] || fail "memory.triad size=40B should exit 2: $out"
    echo "$out" | grep -q "16-byte vector" || fail "size=40B: $out"
    out=$("$sb" run --no-store --backend cuda --bench attention.paged_decode -p q_heads=6 -p kv_heads=4 2>&1)
    [ $? = 2 ] || fail "kv_heads not dividing q_heads should exit 2: $out"
    out=$("$sb" run --no-store --backend cuda --bench attention.paged_decode -p head_dim=66 2>&1)
    [ $? = 2 ] || fail "paged_decode head_dim=66 on cuda should exit 2: $out"
    echo "$out" | grep -q "multiple of 4" || fail "head_dim=66: $out"
    out=$("$sb" run --no-store --backend cuda --bench attention.paged_decode -p heads_per_block=3 2>&1)
    [ $? = 2 ] || fail "paged_decode heads_per_block=3 should exit 2: $out"
    echo "$out" | grep -q "heads_per_block=3 must be 0, 1, 2, 4 or 8" || fail "heads_per_block=3: $out"
    ;;
*)
    fail "unknown check $what"
    ;;
esac
echo ok
