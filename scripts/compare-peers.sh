#!/usr/bin/env bash
# compare-peers.sh — how close solbench comes to established tools on this
# machine, from one run of each:
#   - the core clock: solbench's add and multiply chains against each other
#     (within 3 %) and against perf's cycle counter (within 5 %, where
#     `perf stat -e cycles` works);
#   - memory bandwidth against likwid-bench (STREAM triad, copy, load at
#     2 GB over all cores);
#   - FMA peak against likwid-bench's peakflops kernels (AVX-512 FMA where
#     the CPU has it, else AVX/FMA);
#   - compute.gemm lib=openblas against a direct call of the same BLAS
#     routine timed the same way (median of samples after one warm-up
#     call), and compute.gemm lib=auto against the best of oneDNN's matmul
#     and OpenBLAS run with the OPENBLAS_CORETYPE that matches this CPU (set
#     for that peer alone), in fp64, fp32 and bf16 (where a library runs
#     bf16) at each --gemm-n;
#   - decode-shaped GEMM (one token against weights 4x the last-level
#     cache) against memory.read at --size, interleaved in one run.
#
# Prints one line per figure: solbench, peer, ratio solbench/peer, target.
# Each pair runs alternately for several rounds and the best of each tool
# is compared: work by others on the machine only ever slows a run.
# Targets: clock 0.97 (the two chains) and 0.95 (perf), memory 0.98, peak
# 0.98, GEMM against the same BLAS 0.97, GEMM against the best library
# 0.90, decode 0.75 of read. Exit status 0 when every ratio meets its
# target, 1 otherwise, 2 when a tool is missing.
#
# Usage: scripts/compare-peers.sh [--solbench PATH] [--size BYTES_TEXT]
#                                 [--gemm-n N[,N...]] [--min-time S]
#                                 [--rounds N] [--quick]
#   --solbench  the tool to measure (default: build/solbench, built if
#               missing with cmake)
#   --size      memory working set, likwid-bench syntax (default 2GB)
#   --gemm-n    square GEMM orders (default 2048,4096)
#   --min-time  seconds of samples per solbench point (default 1)
#   --rounds    alternating rounds of each pair; the best of each tool is
#               compared (default 3)
#   --quick     a short check: 256MB, GEMM 1024, 0.3 s (not for the record)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
sb="$root/build/solbench"
size=2GB
gemm_n=2048,4096
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
    -h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# ---- the direct library calls ------------------------------------------------
cat >"$tmp/gemm_direct.c" <<'EOF'
/* The GEMM compute.gemm runs, called directly on one library and timed
 * the same way: row-major C = A B with random inputs in [-1, 1) (bf16:
 * rounded), beta = 0, one warm-up call, then one call per sample until
 * MIN_TIME seconds and 5 samples; prints GFLOP/s of the median sample, and
 * the kernel on stderr; exit 3 when the library cannot run the dtype.
 * Usage: gemm_direct openblas|onednn fp64|fp32|bf16 N THREADS MIN_TIME */
#include <cblas.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *openblas_get_corename(void);
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
static uint16_t bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
int main(int argc, char **argv)
{
    if (argc != 6) return 2;
    int dnn = strcmp(argv[1], "onednn") == 0;
    int fp64 = strcmp(argv[2], "fp64") == 0, b16 = strcmp(argv[2], "bf16") == 0;
    int n = atoi(argv[3]), threads = atoi(argv[4]);
    double min_time = atof(argv[5]);
    if ((dnn && fp64) || (!dnn && b16)) return 3;
    size_t nn = (size_t)n * n, es = fp64 ? 8 : b16 ? 2 : 4;
    void *a = aligned_alloc(4096, nn * es), *b = aligned_alloc(4096, nn * es),
         *c = aligned_alloc(4096, nn * (fp64 ? 8 : 4));
    if (!a || !b || !c) return 2;
    unsigned long long s = 12345;
    for (size_t i = 0; i < nn; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = 2.0 * (double)(s >> 11) / 9007199254740992.0 - 1.0;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double w = 2.0 * (double)(s >> 11) / 9007199254740992.0 - 1.0;
        if (fp64) { ((double *)a)[i] = v; ((double *)b)[i] = w; ((double *)c)[i] = 0; }
        else if (b16) { ((uint16_t *)a)[i] = bf16((float)v); ((uint16_t *)b)[i] = bf16((float)w); ((float *)c)[i] = 0; }
        else { ((float *)a)[i] = (float)v; ((float *)b)[i] = (float)w; ((float *)c)[i] = 0; }
    }
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
    dnnl_engine_t eng;
    dnnl_stream_t st = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_exec_arg_t args[3];
    if (dnn) {
        dnnl_data_type_t t = b16 ? dnnl_bf16 : dnnl_f32;
        dnnl_memory_desc_t ma, mb, mc;
        dnnl_dims_t dims = {n, n};
        dnnl_engine_create(&eng, dnnl_cpu, 0);
        dnnl_stream_create(&st, eng, dnnl_stream_default_flags);
        dnnl_memory_desc_init_by_tag(&ma, 2, dims, t, dnnl_ab);
        dnnl_memory_desc_init_by_tag(&mb, 2, dims, t, dnnl_ab);
        dnnl_memory_desc_init_by_tag(&mc, 2, dims, dnnl_f32, dnnl_ab);
        dnnl_matmul_desc_t md;
        dnnl_primitive_desc_t pd;
        dnnl_matmul_desc_init(&md, &ma, &mb, NULL, &mc);
        if (dnnl_primitive_desc_create(&pd, &md, NULL, eng, NULL) != dnnl_success)
            return 3;
        const char *impl = "?";
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
        fprintf(stderr, "oneDNN %s\n", impl);
        dnnl_primitive_create(&prim, pd);
        dnnl_memory_t xa, xb, xc;
        dnnl_memory_create(&xa, &ma, eng, a);
        dnnl_memory_create(&xb, &mb, eng, b);
        dnnl_memory_create(&xc, &mc, eng, c);
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, xa};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, xb};
        args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, xc};
    } else {
        fprintf(stderr, "OpenBLAS %s\n", openblas_get_corename());
    }
    static double samples[100000];
    int ns = 0;
    for (int warm = 1; ; warm = 0) {
        double t0 = now();
        if (dnn) {
            dnnl_primitive_execute(prim, st, 3, args);
            dnnl_stream_wait(st);
        } else if (fp64) {
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        } else {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        }
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
    ${blas_lib:+-L"$blas_lib" -Wl,-rpath,"$blas_lib"} -lopenblas -ldnnl ||
    { echo "compare-peers.sh: the direct GEMM peer does not build (libdnnl-dev missing?)" >&2; exit 2; }

# A second of dependent adds, for perf to count its cycles.
cat >"$tmp/spin.c" <<'EOF'
#include <time.h>
int main(void)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long x = 0, one = 1;
    __asm__("" : "+r"(one));
    do {
        for (int i = 0; i < 1000000; i++)
#if defined(__aarch64__)
            __asm__ volatile("add %0, %0, %1" : "+r"(x) : "r"(one));
#else
            __asm__ volatile("add %1, %0" : "+r"(x) : "r"(one));
#endif
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + 1e-9 * (t.tv_nsec - t0.tv_nsec) < 1.0);
    return (int)(x & 1);
}
EOF
${CC:-cc} -O2 "$tmp/spin.c" -o "$tmp/spin"

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
# The clock: solbench's two chains against each other, and against perf's
# cycle counter over a second of dependent adds where the kernel has one.
read -r ghz add mul < <("$sb" sysinfo --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["clock"]
m = c["methods"]
print(c["ghz_measured"] or 0, m["add_chain"] or 0, m["mul_chain"] or 0)')
if python3 -c "import sys; sys.exit(0 if float('$mul') > 0 and float('$add') > 0 else 1)"; then
    row "clock: add vs multiply chain (GHz)" "$(python3 -c "print(min($add, $mul))")" \
        "$(python3 -c "print(max($add, $mul))")" 0.97 "solbench's own two methods (slower / faster)"
fi
if command -v perf >/dev/null && perf stat -x, -e cycles true 2>&1 | grep -q '^[0-9]'; then
    perf stat -x, -e cycles,task-clock -o "$tmp/perf" "$tmp/spin" || true
    pghz=$(python3 - "$tmp/perf" <<'PY'
import sys
cyc = ms = 0
for line in open(sys.argv[1]):
    f = line.split(",")
    if len(f) > 2 and f[2].startswith("cycles"):
        cyc = float(f[0])
    if len(f) > 2 and f[2].startswith("task-clock"):
        ms = float(f[0])
print(cyc / (ms * 1e6) if ms and cyc else 0)
PY
)
    row "clock vs perf cycles (GHz)" "$(python3 -c "print(min($ghz, $pghz))")" \
        "$(python3 -c "print(max($ghz, $pghz) or 1)")" 0.95 "perf stat -e cycles,task-clock (1 s of dependent adds; slower / faster)"
else
    echo "compare-peers: perf has no cycle counter here (perf stat -e cycles: not supported); the clock is checked by its two chains only" >&2
fi
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
gemm_ns=${gemm_n//,/ }
for n in $gemm_ns; do
    for dt in fp64 fp32; do
        ds_=() ss_=()
        for _ in $(seq "$rounds"); do
            ss_+=("$(solbench GFLOPs --bench compute.gemm -p dtype=$dt -p shape=square -p n="$n" -p lib=openblas)")
            ds_+=("$("$tmp/gemm_direct" openblas $dt "$n" "$cores" "$min_time" 2>/dev/null)")
        done
        row "gemm.$dt n=$n lib=openblas (GFLOP/s)" "$(best "${ss_[@]}")" "$(best "${ds_[@]}")" 0.97 "direct cblas_$([ $dt = fp64 ] && echo d || echo s)gemm"
    done
done
# lib=auto against the best library: oneDNN's matmul, and OpenBLAS with the
# core that matches this CPU (OPENBLAS_CORETYPE for that peer alone; the
# name is the one compute.gemm's note gives when the library runs a
# narrower core).
core=$("$sb" run --no-store --backend cpu --bench compute.gemm -p dtype=fp32 -p n=64 -p lib=openblas --min-time 0.01 2>/dev/null |
       sed -n 's/.*run with OPENBLAS_CORETYPE=\([A-Za-z0-9]*\) .*/\1/p' | head -1)
for n in $gemm_ns; do
    for dt in fp64 fp32 bf16; do
        ps_=() ss_=() peer=""
        for _ in $(seq "$rounds"); do
            v=$(solbench GFLOPs --bench compute.gemm -p dtype=$dt -p shape=square -p n="$n" -p lib=auto 2>/dev/null) || v=""
            [ -n "$v" ] || break
            ss_+=("$v")
            if [ -n "$core" ]; then
                o=$(OPENBLAS_CORETYPE=$core "$tmp/gemm_direct" openblas $dt "$n" "$cores" "$min_time" 2>/dev/null) || o=0
            else
                o=$("$tmp/gemm_direct" openblas $dt "$n" "$cores" "$min_time" 2>/dev/null) || o=0
            fi
            d=$("$tmp/gemm_direct" onednn $dt "$n" "$cores" "$min_time" 2>/dev/null) || d=0
            ps_+=("$(best "$o" "$d")")
            peer="OpenBLAS${core:+ (OPENBLAS_CORETYPE=$core)} $o, oneDNN $d"
        done
        if [ ${#ss_[@]} -eq 0 ]; then
            echo "compare-peers: gemm.$dt n=$n: no library runs it here; skipped" >&2
            continue
        fi
        row "gemm.$dt n=$n lib=auto (GFLOP/s)" "$(best "${ss_[@]}")" "$(best "${ps_[@]}")" 0.90 "best of: $peer"
    done
done
# Decode: one token against weights 4x the LLC, beside memory.read at
# --size, interleaved in one run so both see the same memory.
for dt in fp32 bf16; do
    rs_=() ds_=()
    for _ in $(seq "$rounds"); do
        "$sb" run --no-store --quiet --backend cpu --threads "$cores" --min-time "$min_time" --interleave \
            --bench compute.gemm,memory.read -p compute.gemm:dtype=$dt -p shape=decode -p d_model=4096 \
            -p batch=1 -p memory.read:size="$bytes" -p memory.read:dtype=fp32 --json "$tmp/dec.json" >/dev/null 2>&1 || continue
        read -r g r < <(python3 - "$tmp/dec.json" <<'PY'
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
g = [x for x in rs if x["bench"] == "compute.gemm" and x["valid"]]
r = [x for x in rs if x["bench"] == "memory.read" and x["valid"]]
print(g[0]["metrics"]["weight_GBps"]["value"] if g else 0, r[0]["metrics"]["GBps"]["value"] if r else 0)
PY
)
        [ "$g" != 0 ] || break
        ds_+=("$g"); rs_+=("$r")
    done
    [ ${#ds_[@]} -gt 0 ] || { echo "compare-peers: decode $dt: no library runs it here; skipped" >&2; continue; }
    row "decode $dt m=1 weights (GB/s)" "$(best "${ds_[@]}")" "$(best "${rs_[@]}")" 0.75 "solbench memory.read size=$size (same run, interleaved)"
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
