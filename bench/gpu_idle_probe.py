"""gpu_idle_probe.py — after how much host idle time a memory-bound kernel slows down,
and how long a GPU hold before the start event must be to undo it (issue 10: the
Python judge's timed runs on large shapes, whose fresh inputs take tens of ms to cross
the pipe). rmsnorm Triton seed on 2048x8192 bf16 (shape 3 of examples/ops/rmsnorm):
per call an H2D refill of fresh inputs (as the runner stages them), host idle G ms,
L2 flush, GPU spin HOLD us, events around the call. Median of 40 calls."""
import statistics
import sys
import time

import torch

sys.path.insert(0, "examples/ops/rmsnorm/seeds/Triton")
import kernel  # noqa: E402

dev = torch.device("cuda")
flush = torch.empty(256 << 20, dtype=torch.int8, device=dev)
khz = torch.cuda.get_device_properties(dev).clock_rate
m = kernel.Model(1e-6).to(dev)
x = torch.randn(2048, 8192, device=dev, dtype=torch.bfloat16)
w = torch.randn(8192, device=dev, dtype=torch.bfloat16)
host = torch.randn(2048, 8192, dtype=torch.bfloat16)


def run(gap_ms, hold_us, refill, n=40):
    out = []
    for _ in range(n):
        if refill:
            x.copy_(host)
            torch.cuda.synchronize()
        time.sleep(gap_ms / 1000)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        flush.zero_()
        torch.cuda._sleep(int(hold_us * khz / 1000))
        s.record()
        m(x, w)
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) * 1000)
    return statistics.median(out)


for _ in range(20):
    m(x, w)
print("gap_ms hold_us refill median_us")
for gap in (0, 10, 50):
    for hold in (200, 1000, 5000):
        for refill in (False, True):
            print(gap, hold, refill, round(run(gap, hold, refill), 2), flush=True)
