#!/usr/bin/env python3
"""Writes a synthetic PyTorch profiler (Kineto) trace of a GPU training
loop, of about the size asked for, for trace-bench.sh: per layer a
record_function range, cpu_ops with Input Dims/Input type, the runtime
launches, the kernels they start (joined by correlation and External id),
an NCCL all-reduce on a second stream, ProfilerStep# annotations, ac2g
flows. Deterministic (seeded). Usage: gen-kineto-trace.py OUT.json MB"""
import json
import random
import sys

out, mb = sys.argv[1], float(sys.argv[2])
rnd = random.Random(7)
target = int(mb * 1e6)
t0 = 1700000000000.0
ext = corr = 0
ts = t0
f = open(out, "w")
f.write('{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3",'
        '"totalGlobalMem":85029158912,"computeMajor":9,"computeMinor":0,"numSms":132}],'
        '"distributedInfo":{"backend":"nccl","rank":0,"world_size":8},"traceEvents":[\n')
first = True
written = 0


def ev(e):
    global first, written
    s = json.dumps(e, separators=(",", ":"))
    f.write(s if first else ",\n" + s)
    first = False
    written += len(s) + 2


OPS = [("aten::addmm", lambda b, d: [[4 * d], [b, d], [d, 4 * d], [], []],
        ["c10::BFloat16"] * 3 + ["Scalar", "Scalar"],
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1_execute_segment_k_off_kernel__5x_cublas"),
       ("aten::mm", lambda b, d: [[b, 4 * d], [4 * d, d]], ["c10::BFloat16"] * 2,
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1_execute_segment_k_off_kernel__5x_cublas"),
       ("aten::_scaled_dot_product_flash_attention",
        lambda b, d: [[b // 2048, 32, 2048, 128]] * 3 + [[], [], []],
        ["c10::BFloat16"] * 3 + ["Scalar", "Scalar", "Scalar"],
        "pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t> >"),
       ("aten::native_layer_norm", lambda b, d: [[b, d], [], [d], [d], []],
        ["c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16", "Scalar"],
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>"),
       ("aten::add", lambda b, d: [[b, d], [b, d], []], ["c10::BFloat16", "c10::BFloat16", "Scalar"],
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16> >"),
       ("aten::silu", lambda b, d: [[b, 4 * d]], ["c10::BFloat16"],
        "void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel>")]

# FLOPs and bytes of each op at b = 8192 tokens, d = 4096 (bf16), for
# kernel times at 55-85 % of an H100's 989 TFLOP/s and 3.35 TB/s
B, D = 8192, 4096
COST = {"aten::addmm": (2 * B * D * 4 * D, 2 * (B * D + 4 * D * D + 4 * B * D)),
        "aten::mm": (2 * B * 4 * D * D, 2 * (4 * B * D + 4 * D * D + B * D)),
        "aten::_scaled_dot_product_flash_attention": (4 * 4 * 32 * 2048 * 2048 * 128,
                                                       2 * 4 * 4 * 32 * 2048 * 128),
        "aten::native_layer_norm": (7 * B * D, 2 * 2 * B * D),
        "aten::add": (B * D, 3 * 2 * B * D),
        "aten::silu": (4 * B * D, 2 * 2 * 4 * B * D)}
step = 0
dts = ts  # the device's clock: kernels queue behind each other
while written < target:
    step += 1
    sstart = ts
    for layer in range(32):
        lstart = ts
        for name, dims, types, kname in OPS:
            ext += 1
            corr += 1
            fl, by = COST[name]
            eff = rnd.uniform(0.55, 0.85)
            kdur = round(max(fl / 989e12, by / 3.35e12) / eff * 1e6, 3)
            ev({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 9.0,
                "args": {"External id": ext, "Record function id": 0, "Sequence number": ext,
                         "Fwd thread id": 0, "Input Dims": dims(B, D), "Input type": types,
                         "Input Strides": [[D, 1]], "Ev Idx": ext}})
            ev({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                "ts": ts + 2, "dur": 6.0, "args": {"External id": ext, "cbid": 211, "correlation": corr}})
            ev({"ph": "s", "id": corr, "pid": 1, "tid": 1, "ts": ts + 2, "cat": "ac2g", "name": "ac2g"})
            dts = max(dts + rnd.uniform(1.0, 3.0), ts + 8)
            ev({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7, "ts": round(dts, 3), "dur": kdur,
                "args": {"External id": ext, "queued": 0, "device": 0, "context": 1, "stream": 7,
                         "correlation": corr, "registers per thread": 168, "shared memory": 114688,
                         "blocks per SM": 1, "warps per SM": 8, "grid": [132, 1, 1], "block": [384, 1, 1],
                         "est. achieved occupancy %": 13}})
            ev({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": round(dts, 3), "cat": "ac2g", "name": "ac2g",
                "bp": "e"})
            dts += kdur
            ts += 10
        ext += 1
        corr += 1
        ev({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": ts, "dur": 8.0,
            "args": {"External id": ext, "Collective name": "allreduce", "In msg nelems": 16777216,
                     "Out msg nelems": 16777216, "Group size": 8, "dtype": "BFloat16"}})
        ev({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts + 2,
            "dur": 5.0, "args": {"External id": ext, "correlation": corr}})
        # the all-reduce of this layer's gradients runs beside the next
        # layer's kernels, on its own stream, at 70-90 % of NVLink's busbw
        adur = round(2 * 7 / 8 * 16777216 * 2 / (450e9 * rnd.uniform(0.7, 0.9)) * 1e6, 3)
        ev({"ph": "X", "cat": "kernel",
            "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "pid": 0, "tid": 20, "ts": round(dts, 3), "dur": adur,
            "args": {"External id": ext, "device": 0, "stream": 20, "correlation": corr,
                     "Collective name": "allreduce", "In msg nelems": 16777216, "Out msg nelems": 16777216,
                     "Group size": 8, "dtype": "BFloat16"}})
        ts += 10
        ev({"ph": "X", "cat": "user_annotation", "name": f"layer{layer}", "pid": 1, "tid": 1,
            "ts": lstart - 0.5, "dur": ts - lstart + 0.5})
    ev({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
        "ts": sstart - 1, "dur": max(ts, dts) - sstart + 2})
    ts = max(ts, dts) + 100
    dts = ts
f.write('\n],"traceName":"gen","displayTimeUnit":"ms"}\n')
f.close()
