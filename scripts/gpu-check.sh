#!/usr/bin/env bash
# gpu-check.sh — the device run of the CUDA backend, in one command and
# under six minutes on one GPU: builds solbench (Release, SOLBENCH_CUDA=ON),
# then
#   1. correctness: every CUDA kernel and every GEMM dtype at small sizes
#      must verify (exit 0), and each with plant_error=1 must fail its
#      verification (exit 1): a planted wrong element is caught;
#   2. the reference points: D2D copy (cudaMemcpy and kernel) and triad at
#      4 GiB, read at 4 GiB, bf16 and fp8 GEMM at 8192^3, pinned and
#      pageable H2D/D2H at 256 MiB, paged decode at a large batch, the
#      load-to-use latency of L1, L2, HBM and host memory;
#   3. compute-sanitizer memcheck of the hand-written kernels at tiny
#      sizes, when the tool is there;
# writing every JSON document and log to $OUT (else ./gpu-check-out) and a
# short table last.
#
# Usage: scripts/gpu-check.sh [--no-build] [--build-dir DIR]
#        scripts/gpu-check.sh --prebuilt DIR
#        scripts/gpu-check.sh --fetch-debs DIR   (on a machine with apt)
#        scripts/gpu-check.sh --pack DIR   (here: the build and its libraries
#            for --prebuilt DIR, and .gpu-carry.tar.xz holding DIR and
#            .peers/bin, what a device run carries)
# --prebuilt DIR runs DIR/solbench, built elsewhere, with the libraries it
# needs beside it in DIR/lib (the CUDA libraries too large to copy, cuBLAS
# and NCCL, are looked for on the machine); see docs/REFERENCE-GPU.md.
# A machine without the build's libraries (hwloc, jansson, sqlite,
# OpenBLAS, pkg-config) can take them as .deb files fetched elsewhere with
# --fetch-debs into .gpu-debs/ of the checkout: they are unpacked into
# .gpu-deps/ and used from there.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
OUTDIR=${OUT:-$ROOT/gpu-check-out}
BUILD=$ROOT/build-gpu-check
DO_BUILD=1
PREBUILT=
DEBS=$ROOT/.gpu-debs
PKGS="pkgconf pkgconf-bin libpkgconf3 libhwloc-dev libhwloc15 libjansson-dev libjansson4
      libsqlite3-dev libsqlite3-0 libopenblas-dev libopenblas0 libopenblas-openmp-dev
      libopenblas0-openmp libgfortran5"

while [ $# -gt 0 ]; do
    case $1 in
    --no-build) DO_BUILD=0 ;;
    --build-dir) BUILD=$2; shift ;;
    --prebuilt) PREBUILT=$(cd "$2" && pwd) || exit 2; DO_BUILD=0; shift ;;
    --pack)
        # Here, on a machine with the CUDA toolkit and no GPU: the Release
        # build and the libraries it needs that a bare GPU machine may lack
        # (not the C library, not CUDA's own: cuBLAS and NCCL are too large
        # to carry and are looked for on the GPU machine), in DIR and
        # DIR/lib, as --prebuilt DIR takes them. DIR is relative to the
        # checkout's root.
        P=$(mkdir -p "${2:?usage: gpu-check.sh --pack DIR}/lib" && cd "$2" && pwd) || exit 2
        cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_CUDA=ON \
              -DSOLBENCH_MPI=OFF -DSOLBENCH_NATIVE=OFF >"$P/pack.log" 2>&1 &&
            cmake --build "$BUILD" -j"$(nproc)" >>"$P/pack.log" 2>&1 ||
            { tail -20 "$P/pack.log"; echo "gpu-check.sh: the build failed" >&2; exit 2; }
        cp "$BUILD/solbench" "$P/" || exit 2
        while read -r lib; do
            case $(basename "$lib") in
            libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libcuda.so*|libcublas*|libnccl*) ;;
            *) cp -L "$lib" "$P/lib/" || exit 2 ;;
            esac
        done < <(ldd "$P/solbench" | awk '$3 ~ /^\// {print $3}')
        du -sh "$P"
        # The lab programs (scripts/gpu-lab/*.cu: kernel variants timed
        # side by side to choose solbench's kernels), built here for Hopper
        mkdir -p .gpu-lab
        for f in scripts/gpu-lab/*.cu; do
            nvcc -O3 -arch=sm_90a -o ".gpu-lab/$(basename "$f" .cu)" "$f" >>"$P/pack.log" 2>&1 ||
                { echo "gpu-check.sh: $f did not build" >&2; exit 2; }
        done
        # What travels to the GPU machine, compressed (OpenBLAS and oneDNN
        # alone are 76 MB): DIR, the lab programs and nvbandwidth where
        # gpu-peers.sh built it.
        # There: tar -xJf .gpu-carry.tar.xz, then --prebuilt DIR.
        peers=$(ls -d .peers/bin 2>/dev/null)
        # shellcheck disable=SC2086
        tar -cf - "$(realpath --relative-to=. "$P")" .gpu-lab $peers |
            xz -6 -T0 >.gpu-carry.tar.xz || exit 2
        du -h .gpu-carry.tar.xz
        exit 0 ;;
    --fetch-debs)
        mkdir -p "$2" && cd "$2" && apt-get download $PKGS
        exit $? ;;
    *) echo "gpu-check.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$OUTDIR"
SCRATCH=$(mktemp -d)
LOG=$OUTDIR/gpu-check.log
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }

# ---- dependencies from carried .deb files, when the machine lacks them ----
CMAKE_EXTRA=()
if ! { command -v pkg-config >/dev/null && pkg-config --exists hwloc jansson sqlite3; } &&
   ls "$DEBS"/*.deb >/dev/null 2>&1; then
    P=$ROOT/.gpu-deps
    mkdir -p "$P"
    for f in "$DEBS"/*.deb; do dpkg -x "$f" "$P"; done
    A=x86_64-linux-gnu
    export PATH=$P/usr/bin:$PATH
    export PKG_CONFIG_LIBDIR=$P/usr/lib/$A/pkgconfig:$P/usr/share/pkgconfig
    export PKG_CONFIG_SYSROOT_DIR=$P
    export LD_LIBRARY_PATH=$P/usr/lib/$A:$P/usr/lib/$A/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    [ -x "$P/usr/bin/pkg-config" ] || ln -sf pkgconf "$P/usr/bin/pkg-config"
    CMAKE_EXTRA+=("-DCBLAS_INCLUDE_DIR=$P/usr/include/$A/openblas-openmp"
                  "-DOPENBLAS_LIB=$P/usr/lib/$A/openblas-openmp/libopenblas.so")
    say "using libraries unpacked from $DEBS into $P"
fi

# ---- build ----------------------------------------------------------------------
if [ $DO_BUILD = 1 ]; then
    say "== build ($(nvcc --version 2>/dev/null | tail -1))"
    if ! cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSOLBENCH_CUDA=ON \
             -DSOLBENCH_NATIVE=OFF "${CMAKE_EXTRA[@]}" >>"$LOG" 2>&1 ||
       ! cmake --build "$BUILD" -j"$(nproc)" >>"$LOG" 2>&1; then
        tail -30 "$LOG"
        say "BUILD FAILED (log: $LOG)"
        exit 2
    fi
fi
SB=$BUILD/solbench
if [ -n "$PREBUILT" ]; then
    SB=$PREBUILT/solbench
    # its libraries, and those still missing (cuBLAS, NCCL) where CUDA
    # toolkits and Python wheels keep them
    # shellcheck source=scripts/lib/gpu-libs.sh
    . "$ROOT/scripts/lib/gpu-libs.sh"
    # (not in a pipeline: what it exports must stay in this shell)
    if ! sb_gpu_libs "$PREBUILT" >"$SCRATCH/libs.txt"; then
        tee -a "$LOG" <"$SCRATCH/libs.txt"
        say "the prebuilt solbench lacks libraries on this machine"
        exit 2
    fi
    tee -a "$LOG" <"$SCRATCH/libs.txt"
fi
[ -x "$SB" ] || { say "no $SB"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >>"$LOG" 2>&1
"$SB" sysinfo --json >"$OUTDIR/sysinfo.json" 2>>"$LOG"
say "solbench ready at $(elapsed) s"
if ! python3 -c 'import json, sys
d = json.load(open(sys.argv[1])).get("devices")
sys.exit(0 if isinstance(d, list) and d else 1)' "$OUTDIR/sysinfo.json"; then
    say "no CUDA device visible ($(python3 -c 'import json, sys
print(json.load(open(sys.argv[1])).get("devices"))' "$OUTDIR/sysinfo.json" 2>&1)): the device checks need one"
    exit 2
fi

FAILS=0
run() { # name expect_rc args...: runs solbench, checks the exit code
    local name=$1 want=$2
    shift 2
    # Only the reference points' documents go to $OUTDIR (a device run
    # brings back few files); the checks' stay in $SCRATCH.
    local doc=$SCRATCH/$name.json
    case $name in ref-*) doc=$OUTDIR/$name.json ;; esac
    timeout 90 "$SB" run --no-store --quiet --backend cuda --json "$doc" "$@" \
        >>"$LOG" 2>&1
    local rc=$?
    if [ "$rc" != "$want" ]; then
        say "FAIL $name: exit $rc, expected $want ($*)"
        FAILS=$((FAILS + 1))
        return
    fi
    # Every measured point must agree with the exit code: all valid, or
    # (planted errors) all invalid; a run where everything skipped fails.
    if ! python3 - "$doc" "$want" >>"$LOG" 2>&1 <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
ran = [r for r in res if not r.get("skipped")]
want_valid = sys.argv[2] == "0"
bad = [r["bench"] + " " + json.dumps(r["params"]) for r in ran
       if bool(r.get("valid")) != want_valid]
skipped = [r["bench"] + ": " + (r.get("notes") or ["?"])[0] for r in res
           if r.get("skipped")]
for s in skipped:
    print("skipped:", s)
for b in bad:
    print("wrong validity:", b)
sys.exit(1 if bad or not ran else 0)
PY
    then
        say "FAIL $name: a point's validity disagrees, or nothing ran (see $LOG)"
        FAILS=$((FAILS + 1))
    else
        say "ok   $name (exit $rc)"
    fi
}

# ---- 1. correctness and planted errors (small sizes, short) ----------------------
say "== correctness"
Q=(--min-time 0.02 --repeat 3)
CHECKS=(
  "memory.copy  -p size=8MiB,96MiB -p method=kernel,memcpy -p dtype=fp32,fp64"
  "memory.read  -p size=8MiB,96MiB -p dtype=fp32,fp64"
  "memory.write -p size=8MiB,96MiB -p dtype=fp32,fp64"
  "memory.triad -p size=8MiB,96MiB -p dtype=fp32,fp64"
  "compute.gemm -p dtype=fp32,tf32,fp16,bf16,fp8,fp8_f32 -p n=1024"
  "compute.gemm -p dtype=bf16,fp8 -p shape=llm -p tokens=512 -p d_model=1024"
  "attention.bmm -p batch=4 -p shape=qk,pv -p seq=512 -p head_dim=128 -p dtype=fp32,bf16"
  "attention.paged_decode -p batch=16 -p lens=uniform:1:2048 -p chunk=0,16 -p head_dim=64,128,256"
  "attention.paged_decode -p batch=16 -p lens=uniform:1:2048 -p chunk=0,16 -p head_dim=64,128,256 -p kv_dtype=bf16,fp8"
  "attention.paged_decode -p batch=8 -p lens=0/1/17/300/5000/9000/1/33 -p q_heads=32 -p kv_heads=1 -p page_size=1,16"
  "attention.paged_decode -p batch=8 -p lens=uniform:1:2048 -p q_heads=64 -p kv_heads=8 -p heads_per_block=1,2,4 -p kv_dtype=bf16"
  "memory.latency -p size=64KiB,256MiB -p pattern=random,page"
  "transfer.latency -p size=16MiB -p pattern=random,sequential"
)
i=0
for c in "${CHECKS[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    run "check$i" 0 --bench $c "${Q[@]}"
    # shellcheck disable=SC2086
    run "plant$i" 1 --bench $c -p plant_error=1 "${Q[@]}"
done
if "$SB" list 2>/dev/null | grep -q "^network.allreduce .*cuda"; then
    if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
        run collectives 0 --area network -p size=1MiB,64MiB "${Q[@]}"
        run plant-collectives 1 --area network -p size=1MiB -p plant_error=1 "${Q[@]}"
    elif "$SB" run --no-store --backend cuda --bench network.allreduce -p size=1MiB \
            2>&1 | grep -q "collectives need two or more CUDA devices (found 1)"; then
        say "ok   collectives skip on one GPU with the reason"
    else
        say "FAIL collectives: no 'need two or more CUDA devices (found 1)' on one GPU"
        FAILS=$((FAILS + 1))
    fi
fi
say "correctness done at $(elapsed) s"

# ---- 2. the reference points -----------------------------------------------------
say "== reference points"
run ref-memory 0 --bench memory.copy,memory.read,memory.triad -p size=4GiB \
    -p method=memcpy,kernel --min-time 0.5
run ref-gemm 0 --bench compute.gemm -p dtype=bf16,fp8 -p shape=square -p n=8192 --min-time 1
run ref-transfer 0 --bench transfer.h2d,transfer.d2h -p size=256MiB \
    -p host=pageable,pinned --min-time 0.5
# copy engines against SM copies, small (the gate) and large, pinned
run ref-transfer-sm 0 --bench transfer.h2d,transfer.d2h,transfer.bidir \
    -p size=4KiB,256MiB -p host=pinned -p engine=ce,sm --min-time 0.5
run ref-decode 0 --bench memory.read,attention.paged_decode -p size=4GiB \
    -p batch=256 -p lens=uniform:1024:4096 -p chunk=0 --min-time 0.5
run ref-decode-kv 0 --bench memory.read,attention.paged_decode -p size=4GiB \
    -p batch=256 -p lens=uniform:1024:4096 -p chunk=0 -p kv_dtype=bf16,fp8 \
    --min-time 0.5
# the register budget: query heads a block (registers a thread, blocks an
# SM) against the bandwidth paged decode reaches, bf16 KV, groups of 8
# and of 4 query heads per KV head
run ref-decode-budget 0 --bench attention.paged_decode -p batch=256 \
    -p lens=uniform:1024:4096 -p chunk=0 -p kv_dtype=bf16 -p q_heads=64 \
    -p kv_heads=8 -p heads_per_block=0,4,2 --min-time 0.5
run ref-decode-budget4 0 --bench attention.paged_decode -p batch=256 \
    -p lens=uniform:1024:4096 -p chunk=0 -p kv_dtype=bf16 -p q_heads=32 \
    -p kv_heads=8 -p heads_per_block=0,2 --min-time 0.5
# load-to-use latency: L1, L2 and HBM of the device, and host memory
# across the link (nvbandwidth's host_device_latency_sm)
run ref-latency 0 --bench memory.latency,transfer.latency \
    -p size=64KiB,16MiB,4GiB -p pattern=random --min-time 0.3
say "reference points done at $(elapsed) s"

# ---- 3. memcheck of the hand-written kernels ------------------------------------
if command -v compute-sanitizer >/dev/null; then
    say "== compute-sanitizer memcheck"
    for c in "memory.triad -p size=1MiB -p dtype=fp64" \
             "attention.paged_decode -p batch=4 -p lens=0/3/40/700 -p chunk=8 -p chunk_every=2"; do
        # shellcheck disable=SC2086
        if timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 \
               "$SB" run --no-store --quiet --backend cuda --bench $c \
               --min-time 0 --repeat 1 >>"$LOG" 2>&1; then
            say "ok   memcheck $c"
        else
            say "FAIL memcheck $c (exit $?)"
            FAILS=$((FAILS + 1))
        fi
    done
fi

# ---- the table -------------------------------------------------------------------
python3 - "$OUTDIR" <<'PY' | tee "$OUTDIR/table.txt" | tee -a "$LOG"
import json, os, sys
out = sys.argv[1]

def results(name):
    """The results of a reference point's document; [] (said) when none."""
    try:
        return json.load(open(os.path.join(out, name + ".json")))["results"]
    except Exception as e:
        print(name, "no results:", e)
        return []

print(f"{'bench':24} {'params':44} {'median':>10} {'best':>10} {'unit':8} valid")
for name in ("ref-memory", "ref-gemm", "ref-transfer", "ref-transfer-sm",
             "ref-decode", "ref-decode-kv", "ref-decode-budget",
             "ref-decode-budget4", "ref-latency"):
    for r in results(name):
        m = r.get("metrics", {})
        p = r.get("params", {})
        keep = ("size", "method", "dtype", "n", "host", "engine", "batch",
                "kv_dtype", "pattern", "q_heads", "heads_per_block")
        ps = " ".join(f"{k}={p[k]}" for k in keep if k in p)
        if "latency_ns" in m:
            print(f"{r['bench']:24} {ps[:44]:44} {m['latency_ns']['value']:10.1f} "
                  f"{m['latency_ns_best']['value']:10.1f} {'ns':8} {r.get('valid')}")
            continue
        # The headline rule of the result table: a rate of FLOPs at an
        # arithmetic intensity of 8 FLOP/B or more, else bytes.
        order = [("TFLOPs", "TFLOPs_best", 1, "TFLOP/s"),
                 ("GBps", "GBps_best", 1e-3, "TB/s")]
        if m.get("AI", {"value": 8})["value"] < 8:
            order.reverse()
        for key, best, scale, unit in order:
            if key in m:
                v = m[key]["value"] * scale
                b = m.get(best, {"value": 0})["value"] * scale
                print(f"{r['bench']:24} {ps[:44]:44} {v:10.3f} {b:10.3f} {unit:8} "
                      f"{r.get('valid')}")
                break
        else:
            print(f"{r['bench']:24} {ps[:44]:44} {'-':>10} {'-':>10} {'':8} "
                  f"{'skipped' if r.get('skipped') else r.get('valid')}")
print("targets (H200, PyTorch): D2D copy ~4.3 TB/s (read + written), bf16 8192^3 ~790 TFLOP/s; aim >= 95 %")
# The GEMM targets (medians, 8192^3): bf16 >= 750 TFLOP/s, fp8 with fast
# accumulation >= 1450 TFLOP/s; the note says which algorithm ran.
try:
    for r in results("ref-gemm"):
        dt = r.get("params", {}).get("dtype")
        goal = {"bf16": 750.0, "fp8": 1450.0}.get(dt)
        v = r.get("metrics", {}).get("TFLOPs", {}).get("value", 0.0)
        if goal:
            algo = [n for n in r.get("notes", []) if "cuBLASLt" in n]
            dev = [n for n in r.get("notes", []) if "while sampling" in n]
            print(f"target gemm {dt}: median {v:.0f} TFLOP/s, goal {goal:.0f}: "
                  f"{'met' if v >= goal else 'MISSED'}"
                  + (f" ({algo[0][:160]})" if algo else ""))
            if dev:
                print(f"  {dev[0]}")
except Exception as e:
    print("target gemm: no results:", e)
# Paged decode with a bf16 KV cache: >= 0.90 of memory.read's median GB/s
# in the same run.
try:
    res = results("ref-decode-kv")
    read = max((r["metrics"]["GBps"]["value"] for r in res
                if r["bench"] == "memory.read" and "GBps" in r.get("metrics", {})),
               default=0.0)
    for r in res:
        if r["bench"] != "attention.paged_decode":
            continue
        kv = r.get("params", {}).get("kv_dtype")
        v = r.get("metrics", {}).get("GBps", {}).get("value", 0.0)
        ratio = v / read if read > 0 else 0.0
        goal = " goal 0.90: " + ("met" if ratio >= 0.90 else "MISSED") if kv == "bf16" else ""
        print(f"target paged decode kv_dtype={kv}: {v:.0f} GB/s, "
              f"{ratio:.2f} of memory.read ({read:.0f} GB/s){goal}")
except Exception as e:
    print("target paged decode: no results:", e)
# The register budget: each configuration's registers, blocks an SM and
# bandwidth, so the default can be set from what the device shows.
for name in ("ref-decode-budget", "ref-decode-budget4"):
    for r in results(name):
        m, p = r.get("metrics", {}), r.get("params", {})
        print(f"budget q_heads={p.get('q_heads')} heads_per_block={p.get('heads_per_block')}: "
              f"{m.get('registers', {}).get('value', 0):.0f} registers, "
              f"{m.get('blocks_per_sm', {}).get('value', 0):.0f} blocks/SM, "
              f"{m.get('GBps', {}).get('value', 0):.0f} GB/s")
PY
say "total $(elapsed) s, $FAILS failed checks"
[ $FAILS = 0 ]
