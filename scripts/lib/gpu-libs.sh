# gpu-libs.sh — sourced by gpu-check.sh and gpu-peers.sh: makes a prebuilt
# solbench runnable on a GPU machine. sb_gpu_libs DIR adds DIR/lib (the
# libraries `gpu-check.sh --pack` carried) to LD_LIBRARY_PATH, then looks
# for each library still missing where CUDA toolkits and Python wheels keep
# them, and adds its folder: what the binary links that ldd cannot find,
# and the libraries it opens with dlopen when a benchmark needs them
# (cuBLAS, cuBLASLt, NCCL: src/backend/cuda/cuda_dl.c) that neither the
# loader's cache nor LD_LIBRARY_PATH has. Prints one line per library
# found; returns 1 when a linked one is still missing (a missing dlopen'd
# one only skips the benchmarks that need it, and is named).
SB_GPU_DLOPENED="libcublasLt.so.13 libcublas.so.13 libnccl.so.2"

sb_gpu_lib_visible() {
    local d
    ldconfig -p 2>/dev/null | grep -q " $1 " && return 0
    IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}"
    for d in "${dirs[@]}"; do
        [ -n "$d" ] && [ -e "$d/$1" ] && return 0
    done
    return 1
}

sb_gpu_libs() {
    local bin=$1/solbench lib hit want
    export LD_LIBRARY_PATH=$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    want=$(ldd "$bin" 2>/dev/null | awk '/not found/ {print $1}')
    for lib in $SB_GPU_DLOPENED; do
        sb_gpu_lib_visible "$lib" || want="$want $lib"
    done
    for lib in $want; do
        hit=$(find /usr/local /opt /usr/lib /usr/lib64 -name "$lib" 2>/dev/null | head -1)
        if [ -n "$hit" ]; then
            export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$hit")
            echo "found $lib at $hit"
        fi
    done
    for lib in $SB_GPU_DLOPENED; do
        sb_gpu_lib_visible "$lib" ||
            echo "$lib: not found (the benchmarks that open it are skipped)"
    done
    if ldd "$bin" | grep -q "not found"; then
        ldd "$bin" | grep "not found"
        return 1
    fi
    return 0
}
