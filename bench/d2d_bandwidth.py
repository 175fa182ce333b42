"""d2d_bandwidth.py — the device-to-device copy bandwidth of the GPU (issue 17's memory
ceiling): median of 50 event-timed copies of 1, 2 and 4 GiB, GB/s counted as read plus
written bytes. Clocks are never touched."""
import statistics

import torch

dev = torch.device("cuda")
for gib in (1, 2, 4):
    a = torch.empty(gib << 30, dtype=torch.int8, device=dev)
    b = torch.empty_like(a)
    for _ in range(5):
        b.copy_(a)
    times = []
    for _ in range(50):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1000.0)
    t = statistics.median(times)
    print(f"d2d copy {gib} GiB: median {t * 1e3:.3f} ms, {2 * a.numel() / t / 1e9:.1f} GB/s "
          f"(read + write), max {2 * a.numel() / min(times) / 1e9:.1f} GB/s")
    del a, b
