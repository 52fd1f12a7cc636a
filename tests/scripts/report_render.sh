#!/usr/bin/env bash
# report_render.sh — renders `solbench report` in headless Chromium and
# checks that it looks right: the page is self-contained (no external
# resource), its inline script ran and counted every chart, the browser
# logged no console error, and the screenshot is not blank (many distinct
# colours, a fair share of non-white pixels). The run it reports is
# synthetic so that every chart has data: compute, memory (with a sweep),
# network (with an alpha-beta fit) and a host transfer.
# Usage: report_render.sh SOLBENCH
set -u
SB=${1:?usage: $0 SOLBENCH}
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$BROWSER" ]; then
    echo "FAIL: chromium not found: this test renders the report in a real browser;"
    echo "      install the Debian package 'chromium' (scripts/install-deps.sh installs it)"
    exit 1
fi
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export HOME="$T"

python3 - "$T/run.json" <<'PY'
import json, math, sys
def res(bench, area, params, t, metrics, valid=True, notes=()):
    return {"bench": bench, "area": area, "backend": "cpu", "params": params,
            "samples_s": [t, t * 1.01, t * 0.99],
            "stats": {"n": 3, "min": t * 0.99, "p50": t, "p90": t * 1.01, "p99": t * 1.01,
                      "max": t * 1.01, "mean": t, "stddev": t * 0.01, "cv": 0.01},
            "metrics": {k: {"value": v, "unit": u} for k, (v, u) in metrics.items()},
            "valid": valid, "notes": list(notes)}
R = []
R.append(res("compute.peak", "compute", {"dtype": "fp64", "isa": "avx2", "cores": "all"}, 1e-3,
             {"GFLOPs": (95.0, "GFLOP/s"), "latency_us": (1000, "us")}))
R.append(res("compute.peak", "compute", {"dtype": "fp32", "isa": "avx2", "cores": "all"}, 1e-3,
             {"GFLOPs": (190.0, "GFLOP/s"), "latency_us": (1000, "us")}))
for n, g in ((256, 40.0), (1024, 85.0)):
    t = 2 * n**3 / (g * 1e9)
    R.append(res("compute.gemm", "compute", {"dtype": "fp64", "shape": "square", "n": n, "m": 0, "k": 0}, t,
                 {"GFLOPs": (g, "GFLOP/s"), "latency_us": (t * 1e6, "us")}))
R.append(res("memory.triad", "memory", {"size": 134217728, "dtype": "fp64"}, 0.0107,
             {"GBps": (12.5, "GB/s"), "GBps_best": (13.0, "GB/s"), "latency_us": (10700, "us")}))
def bw(size):  # a three-level curve
    return 180 if size <= 32768 else 90 if size <= 1 << 20 else 45 if size <= 32 << 20 else 12
for kern in ("read", "triad"):
    size = 8192
    while size <= 256 << 20:
        g = bw(size) * (1.0 if kern == "read" else 0.8)
        t = size / (g * 1e9)
        R.append(res("memory.sweep", "memory", {"kernel": kern, "threads": 2, "size": size}, t,
                     {"GBps": (g, "GB/s"), "latency_us": (t * 1e6, "us")}))
        size *= 2
    R.append(res("memory.sweep", "memory", {"kernel": kern, "threads": 2, "size": "summary"}, 1e-3,
                 {"L1_GBps": (180 if kern == "read" else 144, "GB/s"), "L2_GBps": (90, "GB/s"),
                  "L3_GBps": (45, "GB/s"), "DRAM_GBps": (12, "GB/s")}))
for coll in ("allreduce", "allgather"):
    size = 8
    while size <= 64 << 20:
        t = 5e-6 + size / 10e9
        f = 1.0 if coll == "allreduce" else 0.5
        R.append(res("network." + coll, "network", {"size": size, "dtype": "float"}, t,
                     {"latency_us": (t * 1e6, "us"), "algbw_GBps": (size / t / 1e9, "GB/s"),
                      "busbw_GBps": (size / t / 1e9 * f, "GB/s")}))
        size *= 4
    R.append(res("network." + coll, "network", {"size": "fit", "dtype": "float"}, 1e-3,
                 {"alpha_us": (5.0, "us"), "beta_GBps": (10.0, "GB/s")}))
R.append(res("transfer.h2d", "transfer", {"size": 67108864}, 67108864 / 20e9,
             {"GBps": (20.0, "GB/s"), "latency_us": (67108864 / 20e9 * 1e6, "us")}))
R.append(res("compute.gemm", "compute", {"dtype": "bf16", "shape": "square", "n": 256, "m": 0, "k": 0}, 1e-3,
             {"GFLOPs": (1.0, "GFLOP/s")}, valid=False, notes=["3 of 64 sampled elements wrong"]))
doc = {"schema": "solbench.run/1", "run_id": "20260101T000000Z-render", "started_at": "2026-01-01T00:00:00Z",
       "ended_at": "2026-01-01T00:01:00Z",
       "system": {"fingerprint": "feedfacecafebeef", "cpu": {"model": "Test CPU"},
                  "topology": {"cores": 2, "threads": 4, "numa_nodes": 1}, "memory": {"gib": 16.0},
                  "caches": {"L1d": {"bytes": 32768, "instances": 2}, "L2": {"bytes": 524288, "instances": 2},
                             "L3": {"bytes": 16777216, "instances": 1}}},
       "config": {"suite": "quick"}, "tags": {}, "results": R}
json.dump(doc, open(sys.argv[1], "w"))
PY

fail=0
if ! "$SB" report --results "$T/run.json" --workload moe-110b-tpu7x-4x4x4 -o "$T/report.html" >"$T/out" 2>&1; then
    echo "FAIL: solbench report exited non-zero:"; cat "$T/out"; exit 1
fi
# Self-contained: no resource is fetched from anywhere.
if grep -qiE '(src|href)=["'"'"']?(https?:|//)|@import|url\(' "$T/report.html"; then
    echo "FAIL: the report refers to an external resource"; fail=1
else
    echo "ok: self-contained"
fi
for id in profile roofline bandwidth collectives validation workload fingerprint; do
    grep -q "<section id=\"$id\"" "$T/report.html" || { echo "FAIL: section $id missing"; fail=1; }
done
grep -q 'feedfacecafebeef' "$T/report.html" || { echo "FAIL: fingerprint missing"; fail=1; }
grep -q 'INVALID' "$T/report.html" || { echo "FAIL: the invalid result is not flagged"; fail=1; }

# The DOM after scripts ran: the inline script counted the charts.
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --dump-dom \
    "file://$T/report.html" >"$T/dom.html" 2>"$T/dom.err"
charts=$(sed -n 's/.*id="sb-status"[^>]*data-charts="\([0-9]*\)".*/\1/p' "$T/dom.html" | head -1)
if grep -q 'rendered: ' "$T/dom.html" && [ "${charts:-0}" -ge 4 ]; then
    echo "ok: page rendered, $charts charts"
else
    echo "FAIL: the page's script did not run or found ${charts:-no} charts"; fail=1
fi

# Screenshot with the browser's log on stderr: no console error.
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --enable-logging=stderr --v=0 --window-size=1200,4200 \
    --screenshot="$T/report.png" "file://$T/report.html" >"$T/shot.out" 2>"$T/shot.err"
if grep -E 'CONSOLE' "$T/shot.err" | grep -qiE 'error|uncaught'; then
    echo "FAIL: console errors:"; grep -E 'CONSOLE' "$T/shot.err" | head; fail=1
else
    echo "ok: no console errors"
fi
if [ ! -s "$T/report.png" ]; then
    echo "FAIL: no screenshot written"; tail -5 "$T/shot.err"; exit 1
fi

# Not blank: decode the PNG (zlib + row filters) and count colours.
python3 - "$T/report.png" <<'PY' || fail=1
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, = struct.unpack(">I", data[pos:pos + 4]); kind = data[pos + 4:pos + 8]
    body = data[pos + 8:pos + 8 + n]; pos += 12 + n
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
assert depth == 8 and ctype in (2, 6), "unexpected PNG format"
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat); stride = w * bpp
prev = bytearray(stride); colours = set(); nonwhite = 0; total = 0; i = 0
for y in range(h):
    f = raw[i]; line = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0; b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + ((a + b) >> 1)) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 2 == 0:  # every other row is plenty
        for x in range(0, stride, bpp * 2):
            px = bytes(line[x:x + 3]); colours.add(px); total += 1
            if px[0] < 235 or px[1] < 235 or px[2] < 235: nonwhite += 1
    prev = line
share = nonwhite / total
print(f"png {w}x{h}: {len(colours)} distinct colours, {100 * share:.1f}% non-white")
ok = len(colours) >= 32 and share >= 0.03
print("ok: screenshot not blank" if ok else "FAIL: screenshot looks blank")
sys.exit(0 if ok else 1)
PY
exit $fail
