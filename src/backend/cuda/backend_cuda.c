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

/* Its impls: one line each (the NCCL collectives where NCCL is). */
extern const sb_impl sb_impl_cuda_attention_bmm,
    sb_impl_cuda_attention_paged_decode, sb_impl_cuda_compute_gemm,
    sb_impl_cuda_memory_copy, sb_impl_cuda_memory_latency,
    sb_impl_cuda_memory_read, sb_impl_cuda_memory_triad,
    sb_impl_cuda_memory_write, sb_impl_cuda_transfer_latency,
    sb_impl_cuda_network_allgather, sb_impl_cuda_network_allreduce,
    sb_impl_cuda_network_alltoall, sb_impl_cuda_network_bcast,
    sb_impl_cuda_network_reduce_scatter;
static const sb_impl_entry cuda_impls[] = {
    {"attention.bmm", &sb_impl_cuda_attention_bmm},
    {"attention.paged_decode", &sb_impl_cuda_attention_paged_decode},
    {"compute.gemm", &sb_impl_cuda_compute_gemm},
    {"memory.copy", &sb_impl_cuda_memory_copy},
    {"memory.latency", &sb_impl_cuda_memory_latency},
    {"memory.read", &sb_impl_cuda_memory_read},
    {"memory.triad", &sb_impl_cuda_memory_triad},
    {"memory.write", &sb_impl_cuda_memory_write},
    {"transfer.latency", &sb_impl_cuda_transfer_latency},
#ifdef SB_HAVE_NCCL
    {"network.allgather", &sb_impl_cuda_network_allgather},
    {"network.allreduce", &sb_impl_cuda_network_allreduce},
    {"network.alltoall", &sb_impl_cuda_network_alltoall},
    {"network.bcast", &sb_impl_cuda_network_bcast},
    {"network.reduce_scatter", &sb_impl_cuda_network_reduce_scatter},
#endif
    {NULL, NULL}};

const sb_backend sb_backend_cuda = {
    .name = "cuda",
    .what = "NVIDIA GPUs (CUDA runtime, cuBLASLt, NCCL)",
    .phase = 1,
    .caps = SB_BK_SELECT | SB_BK_TFLOPS,
    .devices = sb_cuda_device_count,
    .devices_json = sb_cuda_devices_json,
    .impls = cuda_impls,
};
