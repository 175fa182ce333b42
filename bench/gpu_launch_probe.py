"""gpu_launch_probe.py — how the timing of one isolated launch depends on what the GPU
was doing just before it (issue 10: the judge's per-run protocol on a GPU).

For the rmsnorm Triton seed and a PyTorch reduction, on three sizes, the median and
CV of 100 CUDA-event-timed calls under each regime:
  queued     100 x (L2 flush, start, call, end) queued, one synchronize (the harness
             before the judge);
  sync gG    per call: flush, start, call, end, synchronize, then G ms idle on the host;
  hold gG    per call: flush, a GPU spin of HOLD_US, start, call, end, synchronize,
             then G ms idle (the spin covers the host's launch of the call).
Run from the repository root on a GPU machine. Clocks are never touched.
"""
import statistics
import sys
import time

import torch

sys.path.insert(0, "examples/ops/rmsnorm/seeds/Triton")
import kernel  # noqa: E402

dev = torch.device("cuda")
flush = torch.empty(256 << 20, dtype=torch.int8, device=dev)
cycles_per_us = torch.cuda.get_device_properties(dev).clock_rate / 1000.0  # kHz -> per µs


def stats(xs):
    med = statistics.median(xs)
    return f"{med:9.2f} us  cv {statistics.pstdev(xs) / statistics.mean(xs):5.2f}"


def queued(fn, n=100):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(n)]
    for s, e in ev:
        flush.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000 for s, e in ev]


def single(fn, gap_ms, hold_us, n=100):
    out = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        flush.zero_()
        if hold_us:
            torch.cuda._sleep(int(hold_us * cycles_per_us))
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) * 1000)
        if gap_ms:
            time.sleep(gap_ms / 1000)
    return out


m = kernel.Model(1e-6).to(dev)
for n, h in [(1, 4096), (512, 4096), (8192, 8192)]:
    x = torch.randn(n, h, device=dev, dtype=torch.bfloat16)
    w = torch.randn(h, device=dev, dtype=torch.bfloat16)
    for name, fn in [("rmsnorm-triton", lambda: m(x, w)), ("torch-sum", lambda: x.sum(1))]:
        for _ in range(3):
            queued(fn)  # warm: compile, clocks
        print(f"{name} {n}x{h}")
        print(f"  queued          {stats(queued(fn))}")
        for gap in (0, 1, 10):
            print(f"  sync g{gap:<3}       {stats(single(fn, gap, 0))}")
            for hold in (50, 200):
                print(f"  hold{hold:<4}g{gap:<3}   {stats(single(fn, gap, hold))}")
        print(f"  queued again    {stats(queued(fn))}", flush=True)
