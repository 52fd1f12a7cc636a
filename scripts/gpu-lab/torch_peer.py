"""torch_peer.py — PyTorch's device copy and matrix products on the GPU, timed
two ways: the short way the targets were set (the mean of ten after three
warm-ups) and sustained (events around each operation for SECONDS, median and
extremes), with the SM clock and the power read through NVML while it runs.
The peer that memory.copy and compute.gemm are held against
(docs/REFERENCE-GPU.md). Prints one line per figure; exit 2 without a GPU.

    python3 scripts/gpu-lab/torch_peer.py [SECONDS]
"""
import statistics
import sys
import threading
import time

try:
    import torch
except ImportError:
    print("torch_peer: no torch")
    sys.exit(2)
if not torch.cuda.is_available():
    print("torch_peer: no CUDA device")
    sys.exit(2)

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5


class Watch:
    """The SM clock (MHz) and power (W) every 50 ms while alive."""

    def __init__(self):
        self.sm, self.w, self.stop = [], [], False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv, self.h = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception as e:  # no NVML: no clocks, said
            print("torch_peer: no NVML:", e)
            self.nv = None

    def run(self):
        while not self.stop and self.nv:
            try:
                self.sm.append(self.nv.nvmlDeviceGetClockInfo(self.h, self.nv.NVML_CLOCK_SM))
                self.w.append(self.nv.nvmlDeviceGetPowerUsage(self.h) / 1000)
            except Exception:
                pass
            time.sleep(0.05)

    def __enter__(self):
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()
        return self

    def __exit__(self, *a):
        self.stop = True
        self.t.join()

    def say(self):
        if not self.sm:
            return ""
        return (f"SM {min(self.sm)}-{max(self.sm)} MHz (median {statistics.median(self.sm):.0f}), "
                f"power max {max(self.w):.0f} W")


def short(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(10):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / 10 * 1e-3


def sustained(fn):
    fn()
    torch.cuda.synchronize()
    ts, t0 = [], time.time()
    with Watch() as w:
        while time.time() - t0 < SECONDS:
            evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                   for _ in range(20)]
            for s, e in evs:
                s.record()
                fn()
                e.record()
            evs[-1][1].synchronize()
            ts += [s.elapsed_time(e) * 1e-3 for s, e in evs]
    ts.sort()
    return ts, w


def line(what, work, unit, fn):
    t_short = short(fn)
    ts, w = sustained(fn)
    med, lo, hi = ts[len(ts) // 2], ts[0], ts[-1]
    print(f"{what:34} short {work / t_short:9.1f}  sustained median {work / med:9.1f} "
          f"best {work / lo:9.1f} worst {work / hi:9.1f} {unit} ({len(ts)} ops) {w.say()}")


torch.manual_seed(1)
print("torch", torch.__version__, torch.cuda.get_device_name(0))
for mib in (256, 1024, 2048):
    n = mib * 1048576 // 4
    a = torch.rand(n, device="cuda")
    c = torch.empty_like(a)
    c.copy_(a)
    assert torch.equal(a, c)
    line(f"copy_ {mib} MiB (r+w)", 2 * n * 4 / 1e12, "TB/s", lambda: c.copy_(a))
    del a, c
N = 8192
a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
ref = (a[:64].double() @ b.double())
out = a @ b
err = ((out[:64].double() - ref).norm() / ref.norm()).item()
line(f"bf16 matmul {N}^3 (err {err:.1e})", 2 * N**3 / 1e12, "TFLOP/s", lambda: a @ b)
a8 = (a * 0.5).to(torch.float8_e4m3fn)
b8 = (b * 0.5).to(torch.float8_e4m3fn).t().contiguous().t()
one = torch.ones((), device="cuda")
try:
    def mm8():
        return torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                use_fast_accum=True)
    o8 = mm8()
    r8 = a8[:64].double() @ b8.double()
    err8 = ((o8[:64].double() - r8).norm() / r8.norm()).item()
    line(f"fp8 scaled_mm fast {N}^3 (err {err8:.1e})", 2 * N**3 / 1e12, "TFLOP/s", mm8)
except Exception as e:
    print("fp8 scaled_mm:", e)
