"""event_overhead_probe.py — what the judges' CUDA-event timing adds to a kernel's own time.

Issue 15 must-show 1 compares `aka profile` (Nsight Compute's gpu__time_duration, the
kernel alone) with `aka eval` (an event pair around one launch after the L2 flush and the
GPU hold, runtime/harness/python/aka_harness/timing.py). This probe times, with exactly
that RunTimer, (a) an empty kernel and (b) a kernel of known size launched once and twice
inside the window: the empty kernel's time is the fixed cost of the event pair and the
launch, and twice-minus-once is the kernel's own time without it. Median of N runs each.

    python3 bench/event_overhead_probe.py [N]     (PYTHONPATH: runtime/harness/python)
Run it under `ncu --kernel-name regex:reduce --launch-count 5 --metrics
gpu__time_duration.sum` as well to see the profiler's figure for (b).
"""
import statistics
import sys

import torch

from aka_harness.timing import RunTimer


def median_us(timer, fn, n):
    timer.warm(fn)
    return statistics.median(timer.once(fn)[1] for _ in range(n))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    dev = torch.device("cuda", 0)
    timer = RunTimer(dev, 10)
    x = torch.randn(4096, 4096, device=dev)
    out = torch.empty(4096, device=dev)
    empty = median_us(timer, lambda: torch.cuda._sleep(0), n)
    once = median_us(timer, lambda: torch.sum(x, 1, out=out), n)
    twice = median_us(timer, lambda: (torch.sum(x, 1, out=out), torch.sum(x, 1, out=out)), n)
    print(f"| probe | median of {n} event-timed runs (us) |")
    print("|---|---|")
    print(f"| empty kernel (torch.cuda._sleep(0)) | {empty:.2f} |")
    print(f"| x.sum(1), 4096 x 4096 fp32, once | {once:.2f} |")
    print(f"| the same, twice in the window | {twice:.2f} |")
    print(f"| twice - once (the kernel without the fixed cost) | {twice - once:.2f} |")
    print(f"| once - empty | {once - empty:.2f} |")


if __name__ == "__main__":
    main()
