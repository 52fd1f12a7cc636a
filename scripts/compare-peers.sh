#!/usr/bin/env bash
# compare-peers.sh — how close solbench comes to established tools on this
# machine, from one run of each: memory bandwidth against likwid-bench
# (STREAM triad, copy, load at 2 GB over all cores), FMA peak against
# likwid-bench's peakflops kernels (AVX-512 FMA where the CPU has it, else
# AVX/FMA), and compute.gemm against a direct call of the same BLAS routine
# timed the same way (median of samples after one warm-up call).
#
# Prints one line per figure: solbench, peer, ratio solbench/peer, target.
# Each pair runs alternately for several rounds and the best of each tool
# is compared: work by others on the machine only ever slows a run.
# Targets: memory >= 0.98, peak >= 0.98, GEMM >= 0.97. Exit status 0 when
# every ratio meets its target, 1 otherwise, 2 when a tool is missing.
#
# Usage: scripts/compare-peers.sh [--solbench PATH] [--size BYTES_TEXT]
#                                 [--gemm-n N] [--min-time S] [--rounds N]
#                                 [--quick]
#   --solbench  the tool to measure (default: build/solbench, built if
#               missing with cmake)
#   --size      memory working set, likwid-bench syntax (default 2GB)
#   --gemm-n    square GEMM order (default 2048)
#   --min-time  seconds of samples per solbench point (default 1)
#   --rounds    alternating rounds of each pair; the best of each tool is
#               compared (default 3)
#   --quick     a short check: 256MB, GEMM 1024, 0.3 s (not for the record)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
sb="$root/build/solbench"
size=2GB
gemm_n=2048
min_time=1
rounds=3
while [ $# -gt 0 ]; do
    case $1 in
    --solbench) sb=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --gemm-n) gemm_n=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --quick) size=256MB; gemm_n=1024; min_time=0.3; rounds=1; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare-peers.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

# ---- tools -------------------------------------------------------------------
if ! command -v likwid-bench >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        echo "installing likwid (Debian package)..." >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y likwid >/dev/null ||
            { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y likwid >/dev/null; }
    else
        echo "compare-peers.sh: likwid-bench is missing; run: sudo apt-get install -y likwid" >&2
        exit 2
    fi
fi
command -v python3 >/dev/null || { echo "compare-peers.sh: python3 is needed" >&2; exit 2; }
if [ ! -x "$sb" ]; then
    echo "building solbench in $root/build ..." >&2
    cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$root/build" -j "$(nproc)" >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cores=$("$sb" sysinfo --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["topology"]["cores"])')
if grep -qw avx512f /proc/cpuinfo; then
    vec=avx512; fma_d=peakflops_avx512_fma; fma_s=peakflops_sp_avx512_fma
else
    vec=avx; fma_d=peakflops_avx_fma; fma_s=peakflops_sp_avx_fma
fi
sb_isa=$([ $vec = avx512 ] && echo avx512 || echo avx2)

# likwid-bench TEST WORKGROUP -> the MByte/s or MFlops/s line, in G units.
likwid() {
    local test=$1 wg=$2 what=$3
    likwid-bench -t "$test" -w "$wg" >"$tmp/likwid.$test" 2>&1 ||
        { cat "$tmp/likwid.$test" >&2; echo "likwid-bench -t $test failed" >&2; exit 2; }
    awk -v k="$what:" '$1 == k { printf "%.6f\n", $2 / 1000 }' "$tmp/likwid.$test"
}

# solbench run ... -> metric of the only result, from its JSON document.
solbench() {
    local metric=$1; shift
    "$sb" run --no-store --quiet --backend cpu --threads "$cores" --min-time "$min_time" \
        --json "$tmp/sb.json" "$@" >/dev/null
    python3 - "$tmp/sb.json" "$metric" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rs = [r for r in doc["results"] if not r.get("skipped")]
if len(rs) != 1 or not rs[0]["valid"]:
    sys.exit("solbench: expected one valid result, got %r" % [(r["bench"], r["valid"], r["notes"]) for r in rs])
print("%.6f" % rs[0]["metrics"][sys.argv[2]]["value"])
PY
}

# ---- the direct BLAS call ------------------------------------------------------
cat >"$tmp/gemm_direct.c" <<'EOF'
/* The same GEMM compute.gemm runs, called directly and timed the same way:
 * row-major C = A B with random inputs in [-1, 1), beta = 0, one warm-up
 * call, then one call per sample until MIN_TIME seconds and 5 samples;
 * prints GFLOP/s of the median sample. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv)
{
    if (argc != 5) return 2;
    int fp64 = strcmp(argv[1], "fp64") == 0;
    int n = atoi(argv[2]), threads = atoi(argv[3]);
    double min_time = atof(argv[4]);
    size_t nn = (size_t)n * n, es = fp64 ? 8 : 4;
    void *a = aligned_alloc(4096, nn * es), *b = aligned_alloc(4096, nn * es),
         *c = aligned_alloc(4096, nn * es);
    if (!a || !b || !c) return 2;
    unsigned long long s = 12345;
    for (size_t i = 0; i < nn; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = 2.0 * (double)(s >> 11) / 9007199254740992.0 - 1.0;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double w = 2.0 * (double)(s >> 11) / 9007199254740992.0 - 1.0;
        if (fp64) { ((double *)a)[i] = v; ((double *)b)[i] = w; ((double *)c)[i] = 0; }
        else { ((float *)a)[i] = (float)v; ((float *)b)[i] = (float)w; ((float *)c)[i] = 0; }
    }
    openblas_set_num_threads(threads);
    double samples[100000];
    int ns = 0;
    for (int warm = 1; ; warm = 0) {
        double t0 = now();
        if (fp64)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double t = now() - t0;
        if (warm) continue;
        samples[ns++] = t;
        double tot = 0;
        for (int i = 0; i < ns; i++) tot += samples[i];
        if ((ns >= 5 && tot >= min_time) || ns == 100000) break;
    }
    qsort(samples, ns, sizeof samples[0], cmp);
    double med = ns % 2 ? samples[ns / 2] : 0.5 * (samples[ns / 2 - 1] + samples[ns / 2]);
    printf("%.6f\n", 2.0 * n * (double)n * n / med * 1e-9);
    return 0;
}
EOF
blas_inc=$(for d in /usr/include/x86_64-linux-gnu/openblas-openmp /usr/include/aarch64-linux-gnu/openblas-openmp /usr/include/openblas; do [ -f "$d/cblas.h" ] && echo "$d" && break; done)
blas_lib=$(for d in /usr/lib/x86_64-linux-gnu/openblas-openmp /usr/lib/aarch64-linux-gnu/openblas-openmp; do [ -e "$d/libopenblas.so" ] && echo "$d" && break; done)
${CC:-cc} -O2 -fopenmp ${blas_inc:+-I"$blas_inc"} "$tmp/gemm_direct.c" -o "$tmp/gemm_direct" \
    ${blas_lib:+-L"$blas_lib" -Wl,-rpath,"$blas_lib"} -lopenblas

# ---- measure ---------------------------------------------------------------------
bytes=$(python3 - "$size" <<'PY'
import re, sys
m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(kB|MB|GB|B)?", sys.argv[1])
if not m: sys.exit("compare-peers.sh: --size wants e.g. 2GB, 512MB")
mult = {"B": 1, None: 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]
print(int(float(m.group(1)) * mult))
PY
)
rows=()
row() { rows+=("$1|$2|$3|$4|$5"); }
# Best of N alternating rounds of each tool: interference from other work
# on the machine only ever slows a run, and alternating exposes both tools
# to the same drift.
best() { python3 -c 'import sys; print(max(float(x) for x in sys.argv[1:]))' "$@"; }

echo "compare-peers: $cores cores, $size working set, ${vec} kernels, GEMM n=$gemm_n, best of $rounds rounds ($(date -u +%Y-%m-%dT%H:%MZ))" >&2
# likwid-bench -w S0:SIZE:T splits SIZE over the streams of the kernel, as
# solbench's size= does (total bytes of all arrays); both count bytes the
# STREAM way (no write-allocate), in decimal units.
for pair in "triad:stream_${vec}:memory.triad" "copy:copy_${vec}:memory.copy" "load:load_${vec}:memory.read"; do
    IFS=: read -r name test bench <<<"$pair"
    ls_=() ss_=()
    for _ in $(seq "$rounds"); do
        ls_+=("$(likwid "$test" "S0:${size}:${cores}" MByte/s)")
        ss_+=("$(solbench GBps --bench "$bench" -p size="$bytes" -p dtype=fp64)")
    done
    row "memory.$name (GB/s)" "$(best "${ss_[@]}")" "$(best "${ls_[@]}")" 0.98 "likwid-bench -t $test -w S0:${size}:${cores}"
done
# Peak FLOPs: 16 kB per thread stays in L1, so likwid's one load per update
# is served at L1 speed.
l1=$((16 * cores))
for dt in fp64 fp32; do
    test=$([ $dt = fp64 ] && echo $fma_d || echo $fma_s)
    ls_=() ss_=()
    for _ in $(seq "$rounds"); do
        ls_+=("$(likwid "$test" "S0:${l1}kB:${cores}" MFlops/s)")
        ss_+=("$(solbench GFLOPs --bench compute.peak -p dtype=$dt -p isa=$sb_isa -p cores=all)")
    done
    row "peak.$dt (GFLOP/s)" "$(best "${ss_[@]}")" "$(best "${ls_[@]}")" 0.98 "likwid-bench -t $test -w S0:${l1}kB:${cores}"
done
for dt in fp64 fp32; do
    ds_=() ss_=()
    for _ in $(seq "$rounds"); do
        ss_+=("$(solbench GFLOPs --bench compute.gemm -p dtype=$dt -p shape=square -p n="$gemm_n")")
        ds_+=("$("$tmp/gemm_direct" $dt "$gemm_n" "$cores" "$min_time")")
    done
    row "gemm.$dt n=$gemm_n (GFLOP/s)" "$(best "${ss_[@]}")" "$(best "${ds_[@]}")" 0.97 "direct cblas_$([ $dt = fp64 ] && echo d || echo s)gemm"
done

# ---- report ----------------------------------------------------------------------
printf '%s\n' "${rows[@]}" | python3 -c '
import sys
ok = True
print("| figure | solbench | peer | ratio | target | peer command |")
print("|---|---:|---:|---:|---:|---|")
for line in sys.stdin:
    name, s, p, target, cmd = line.rstrip("\n").split("|")
    s, p, target = float(s), float(p), float(target)
    ratio = s / p if p > 0 else float("nan")
    good = ratio >= target
    ok &= good
    print("| %s | %.2f | %.2f | %.3f%s | %.2f | %s |" % (name, s, p, ratio, "" if good else " (below)", target, cmd))
sys.exit(0 if ok else 1)
'
