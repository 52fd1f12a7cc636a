/*
 * backend_cuda.c — the CUDA backend as the core sees it (core/backend.h):
 * NVIDIA GPUs through the CUDA runtime, cuBLASLt and NCCL. Its impls run
 * in a plan that names no backend only when a device is present; its
 * rates are read in TFLOP/s; the devices join the fingerprint.
 */
#include <jansson.h>

#include "backend/cuda/cuda_common.h"
#include "core/backend.h"
#include "solbench/device.h"

const sb_backend sb_backend_cuda = {
    .name = "cuda",
    .what = "NVIDIA GPUs (CUDA runtime, cuBLASLt, NCCL)",
    .phase = 1,
    .caps = SB_BK_SELECT | SB_BK_TFLOPS,
    .devices = sb_cuda_device_count,
    .devices_json = sb_cuda_devices_json,
};
