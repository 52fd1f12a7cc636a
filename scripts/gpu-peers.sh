#!/usr/bin/env bash
# gpu-peers.sh — solbench's host transfers and host latency against
# nvbandwidth's on the same GPU, in one run of each:
#   - pinned host-to-device and device-to-host copies by the copy engines
#     (nvbandwidth's host_to_device_memcpy_ce, device_to_host_memcpy_ce)
#     and by SM kernels (…_memcpy_sm), at one buffer size (default 256 MiB);
#   - the GPU's latency to host memory (host_device_latency_sm) against
#     transfer.latency;
#   - each direction of a bidirectional copy-engine pair (nvbandwidth's
#     …_bidirectional_memcpy_ce) against transfer.bidir's h2d and d2h.
# Each pair runs alternately for several rounds and the best of each tool
# is compared (work by others only slows a run). Prints one line per
# figure: solbench, nvbandwidth, the ratio, the target. Target: pinned
# copy-engine bandwidth >= 0.97 x nvbandwidth's, each bidirectional
# direction within 0.90-1.03 of nvbandwidth's (never overstated); the SM
# copies and the latency are shown beside it. Exit 0 when the targets are met, 1 when
# one is not, 2 when a tool or the GPU is missing.
#
# nvbandwidth is built from its public source, never kept in this tree:
#   scripts/gpu-peers.sh --build-peer SRC   builds SRC (an nvbandwidth
#       checkout; needs the CUDA toolkit, CMake and Boost program_options,
#       linked statically) for sm_80, sm_89, sm_90 and sm_100 into
#       .peers/bin/nvbandwidth, which the device run takes along.
# On the GPU machine:
#   scripts/gpu-peers.sh [--solbench PATH] [--peer PATH] [--size MiB]
#                        [--rounds N] [--min-time S]
#   --solbench  default: .gpu-bin/solbench (gpu-check.sh --prebuilt's
#               layout, its libraries in .gpu-bin/lib), else build/solbench
#   --peer      default: .peers/bin/nvbandwidth
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
SB=
PEER=$ROOT/.peers/bin/nvbandwidth
SIZE_MIB=256
ROUNDS=3
MINT=0.5
OUTDIR=${OUT:-$ROOT/gpu-peers-out}

if [ "${1:-}" = --build-peer ]; then
    src=$(cd "${2:?--build-peer SRC}" && pwd) || exit 2
    b=$ROOT/.peers/build-nvbandwidth
    st=$ROOT/.peers/stubs
    mkdir -p "$b" "$ROOT/.peers/bin" "$st"
    # nvbandwidth includes nvml.h and links libnvidia-ml, which a machine
    # without the driver lacks: the header from the toolkit or its PyPI
    # package, and a stub library (every function the header declares,
    # never called here) that the driver's real one replaces at run time.
    cuda_inc=$(dirname "$(command -v nvcc)")/../include
    hdr=$cuda_inc/nvml.h
    if [ ! -f "$hdr" ]; then
        hdr=$(find "$st" -name nvml.h 2>/dev/null | head -1)
        if [ -z "$hdr" ]; then
            python3 -m pip download --no-deps -d "$st" nvidia-nvml-dev-cu12 >/dev/null 2>&1 &&
                python3 -m zipfile -e "$st"/nvidia_nvml_dev*.whl "$st/whl" ||
                { echo "gpu-peers.sh: no nvml.h (toolkit or nvidia-nvml-dev-cu12)" >&2; exit 2; }
            hdr=$(find "$st/whl" -name nvml.h | head -1)
        fi
    fi
    if [ ! -e "$st/libnvidia-ml.so" ]; then
        grep DECLDIR "$hdr" | grep -oE '\bnvml[A-Za-z0-9_]+ *\(' | tr -d ' (' |
            sort -u | awk '{print "int " $1 "(void) { return 999; }"}' >"$st/nvml_stub.c"
        gcc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o "$st/libnvidia-ml.so" \
            "$st/nvml_stub.c" || exit 2
    fi
    stubs="-L$st -L$(dirname "$(command -v nvcc)")/../lib64/stubs"
    cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES="80;89;90;100" \
        -DCMAKE_CXX_FLAGS="-I$(dirname "$hdr")" -DCMAKE_CUDA_FLAGS="-I$(dirname "$hdr")" \
        -DCMAKE_EXE_LINKER_FLAGS="$stubs" >"$b.log" 2>&1 &&
        cmake --build "$b" -j"$(nproc)" >>"$b.log" 2>&1 ||
        { tail -20 "$b.log"; echo "gpu-peers.sh: nvbandwidth did not build (log: $b.log)" >&2; exit 2; }
    cp "$b/nvbandwidth" "$ROOT/.peers/bin/nvbandwidth" || exit 2
    echo "built $ROOT/.peers/bin/nvbandwidth ($(du -h "$ROOT/.peers/bin/nvbandwidth" | cut -f1))"
    exit 0
fi

while [ $# -gt 0 ]; do
    case $1 in
    --solbench) SB=$2; shift ;;
    --peer) PEER=$2; shift ;;
    --size) SIZE_MIB=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --min-time) MINT=$2; shift ;;
    *) echo "gpu-peers.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$SB" ]; then
    if [ -x "$ROOT/.gpu-bin/solbench" ]; then SB=$ROOT/.gpu-bin/solbench; else SB=$ROOT/build/solbench; fi
fi
[ -x "$SB" ] || { echo "gpu-peers.sh: no solbench at $SB" >&2; exit 2; }
# a packed solbench (gpu-check.sh --pack): its libraries, and cuBLAS and
# NCCL found on this machine, as gpu-check.sh --prebuilt finds them
if [ -d "$(dirname "$SB")/lib" ]; then
    # shellcheck source=scripts/lib/gpu-libs.sh
    . "$ROOT/scripts/lib/gpu-libs.sh"
    sb_gpu_libs "$(dirname "$SB")" ||
        { echo "gpu-peers.sh: $SB lacks libraries on this machine" >&2; exit 2; }
fi
[ -x "$PEER" ] || { echo "gpu-peers.sh: no nvbandwidth at $PEER (--build-peer SRC first)" >&2; exit 2; }
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu-peers.sh: no GPU" >&2; exit 2; }
mkdir -p "$OUTDIR"

TESTS=(host_to_device_memcpy_ce device_to_host_memcpy_ce
       host_to_device_memcpy_sm device_to_host_memcpy_sm host_device_latency_sm
       host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce)
for r in $(seq 1 "$ROUNDS"); do
    timeout 300 "$PEER" -b "$SIZE_MIB" -i 10 -j -t "${TESTS[@]}" \
        >"$OUTDIR/peer$r.json" 2>"$OUTDIR/peer$r.err" ||
        echo "nvbandwidth round $r: exit $? (see $OUTDIR/peer$r.err)" >&2
    timeout 300 "$SB" run --no-store --quiet --backend cuda \
        --bench transfer.h2d,transfer.d2h,transfer.bidir -p size="${SIZE_MIB}MiB" \
        -p host=pinned -p engine=ce,sm --min-time "$MINT" --json "$OUTDIR/sb$r.json" \
        >"$OUTDIR/sb$r.log" 2>&1 ||
        echo "solbench round $r: exit $? (see $OUTDIR/sb$r.log)" >&2
    timeout 300 "$SB" run --no-store --quiet --backend cuda \
        --bench transfer.latency -p size="${SIZE_MIB}MiB" -p pattern=random,sequential \
        --min-time "$MINT" --json "$OUTDIR/sblat$r.json" >>"$OUTDIR/sb$r.log" 2>&1 ||
        echo "solbench latency round $r: exit $?" >&2
done

python3 - "$OUTDIR" "$ROUNDS" <<'PY'
import glob, json, os, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception:
        return None

peer = {}  # test -> best value over the rounds (GB/s: max; ns: min)
for r in range(1, rounds + 1):
    doc = load(os.path.join(out, f"peer{r}.json"))
    if not doc:
        continue
    for tc in doc.get("nvbandwidth", {}).get("testcases", []):
        try:
            v = float(tc["bandwidth_matrix"][0][0])
        except Exception:
            continue
        name = tc.get("name", "")
        lat = "latency" in name
        if v > 0 and (name not in peer or (v < peer[name] if lat else v > peer[name])):
            peer[name] = v

sb = {}  # (bench, engine) -> best GB/s; ("latency", pattern) -> best ns
for r in range(1, rounds + 1):
    for doc in (load(os.path.join(out, f"sb{r}.json")),
                load(os.path.join(out, f"sblat{r}.json"))):
        for res in (doc or {}).get("results", []):
            if res.get("skipped") or not res.get("valid"):
                continue
            m, p = res.get("metrics", {}), res.get("params", {})
            if res["bench"] == "transfer.latency":
                k, v = ("latency", p.get("pattern")), m.get("latency_ns_best", {}).get("value")
                if v and (k not in sb or v < sb[k]):
                    sb[k] = v
            else:
                # transfer.bidir: each direction's rate while the other runs
                bi = res["bench"] == "transfer.bidir"
                dirs = ("h2d", "d2h") if bi else \
                    ("h2d",) if res["bench"] == "transfer.h2d" else ("d2h",)
                for d in dirs:
                    k = (d + (" bidir" if bi else ""), p.get("engine"))
                    v = m.get(d + "_GBps_best", {}).get("value")
                    if v and (k not in sb or v > sb[k]):
                        sb[k] = v

rows = [("h2d pinned, copy engine", ("h2d", "ce"), "host_to_device_memcpy_ce", 0.97),
        ("d2h pinned, copy engine", ("d2h", "ce"), "device_to_host_memcpy_ce", 0.97),
        ("h2d pinned, SM copy", ("h2d", "sm"), "host_to_device_memcpy_sm", None),
        ("d2h pinned, SM copy", ("d2h", "sm"), "device_to_host_memcpy_sm", None),
        ("h2d of bidir, copy engine", ("h2d bidir", "ce"),
         "host_to_device_bidirectional_memcpy_ce", "bidir"),
        ("d2h of bidir, copy engine", ("d2h bidir", "ce"),
         "device_to_host_bidirectional_memcpy_ce", "bidir")]
ok = True
print(f"{'figure':34} {'solbench':>10} {'nvbandwidth':>12} {'ratio':>7}  target")
for label, k, t, goal in rows:
    a, b = sb.get(k), peer.get(t)
    if not a or not b:
        print(f"{label:34} {a or '-':>10} {b or '-':>12}      -  missing")
        ok = ok and goal is None
        continue
    ratio = a / b
    if goal == "bidir":
        # a direction of the pair: not above the peer's (not overstated),
        # and not far below it
        met = 0.90 <= ratio <= 1.03
        verdict = "0.90-1.03: " + ("met" if met else "MISSED")
    else:
        met = goal is None or ratio >= goal
        verdict = "" if goal is None else (f">= {goal}: " + ("met" if met else "MISSED"))
    ok = ok and met
    print(f"{label + ' GB/s':34} {a:10.2f} {b:12.2f} {ratio:7.3f}  {verdict}")
b = peer.get("host_device_latency_sm")
for pat in ("random", "sequential"):
    a = sb.get(("latency", pat))
    print(f"{'host latency ns, ' + pat:34} {a or 0:10.1f} {b or 0:12.1f} "
          f"{(a / b if a and b else 0):7.3f}  (lower is better; nvbandwidth walks a fixed stride)")
sys.exit(0 if ok else 1)
PY
