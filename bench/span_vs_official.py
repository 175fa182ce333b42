"""span_vs_official.py — the same call timed by SOL-ExecBench's CUPTI function and by aka's
kernel-span RunTimer, each in a plain process (no sandbox, no judge).

    PYTHONPATH=runtime/harness/python:/tmp/official python3 bench/span_vs_official.py MODE TOKENS

MODE: official (sol_execbench.core.bench.timing.bench_gpu_time_with_cupti, its defaults),
aka (RunTimer with kernel spans, one call per round as the judge's runner does, with a
synchronize and a 1 ms sleep between rounds), aka_inference (the same under
torch.inference_mode(), as the runner handles requests), aka_hot (no sleep: back to
back, as the owner's loop runs) and aka_spin (a 1 ms busy wait instead of the sleep). The call is the rope example's
PyTorch solution (examples/ops/rope/solution.json, about ten launches). Prints the median
of 100 in µs. Used to tell whether a gap between aka's and the owner's spans of
launch-bound calls comes from the method or from the evaluation's surroundings.
"""
import json
import statistics
import sys
import time

import torch


def solution_fn():
    doc = json.load(open("examples/ops/rope/solution.json"))
    scope = {}
    exec(compile(doc["sources"][0]["content"], "kernel.py", "exec"), scope)
    return scope["run"]


def main():
    mode, tokens = sys.argv[1], int(sys.argv[2])
    dev = torch.device("cuda", 0)
    run = solution_fn()
    q = torch.randn(tokens, 8, 128, device=dev, dtype=torch.bfloat16)
    cos, sin = torch.randn(tokens, 64, device=dev), torch.randn(tokens, 64, device=dev)
    out = torch.empty_like(q)
    call = lambda: run(q, cos, sin, out)  # noqa: E731
    if mode == "official":
        from sol_execbench.core.bench.timing import bench_gpu_time_with_cupti
        times = bench_gpu_time_with_cupti(call, warmup=10, rep=100)
        print(f"{mode} tokens={tokens}: {1e3 * statistics.median(times):.2f} us")
        return
    from aka_harness.timing import RunTimer
    timer = RunTimer(dev, 10)
    why = timer.start_span()
    if why:
        print(f"{mode}: no spans: {why}")
        return
    ctx = torch.inference_mode() if mode == "aka_inference" else torch.no_grad()
    lat = []
    with ctx:
        timer.warm(call)
        for _ in range(100):
            torch.cuda.synchronize()
            if mode == "aka_spin":  # the host kept busy instead of asleep
                end = time.perf_counter() + 0.001
                while time.perf_counter() < end:
                    pass
            elif mode != "aka_hot":  # aka_hot: back to back, as the owner's loop
                time.sleep(0.001)
            lat.append(timer.once(call)[1])
    print(f"{mode} tokens={tokens}: {statistics.median(lat):.2f} us")


if __name__ == "__main__":
    main()
