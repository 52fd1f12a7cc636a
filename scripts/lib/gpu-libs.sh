# gpu-libs.sh — sourced by gpu-check.sh and gpu-peers.sh: makes a prebuilt
# solbench runnable on a GPU machine. sb_gpu_libs DIR adds DIR/lib (the
# libraries `gpu-check.sh --pack` carried) to LD_LIBRARY_PATH, then looks
# for each library still missing (cuBLAS, NCCL: too large to carry) where
# CUDA toolkits and Python wheels keep them, and adds its folder. Prints
# one line per library found; returns 1 when one is still missing.
sb_gpu_libs() {
    local bin=$1/solbench lib hit
    export LD_LIBRARY_PATH=$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    for lib in $(ldd "$bin" 2>/dev/null | awk '/not found/ {print $1}'); do
        hit=$(find /usr/local /opt /usr/lib /usr/lib64 -name "$lib" 2>/dev/null | head -1)
        if [ -n "$hit" ]; then
            export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$hit")
            echo "found $lib at $hit"
        fi
    done
    if ldd "$bin" | grep -q "not found"; then
        ldd "$bin" | grep "not found"
        return 1
    fi
    return 0
}
