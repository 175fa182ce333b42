#!/usr/bin/env python3
"""Cross-check aka's GPU timing against triton.testing.do_bench and Nsight Compute.

Run on a machine with a CUDA GPU (the lent H200), from the repository root:

    python3 bench/gpu_timing_agreement.py [--runs 5] [--reps 200] [--out DIR]

For each case (a Triton seed kernel of a bundled PyTorch-layout example, on a
shape large enough to run well past launch overhead) it measures the same
launch three ways:

  aka       `python3 -m aka_harness` as aka runs it: CUDA events around each
            launch, L2 flushed between launches, median of --reps; repeated
            --runs times to get the run-to-run coefficient of variation;
  do_bench  triton.testing.do_bench(fn, return_mode="median") on the same inputs;
  ncu       Nsight Compute's gpu__time_duration.sum for every launch inside a
            cudaProfilerStart/Stop window (--clock-control none: the card's
            clocks are left as they are), median over launches.

It prints a Markdown table and writes the raw numbers to OUT/gpu_timing.json.
This is measurement tooling, not part of aka; it imports the harness package
to rebuild exactly the inputs the harness times.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "runtime", "harness", "python")
OPS = os.path.join(ROOT, "examples", "ops")

# (label, layout, op, kernel, big shape): the shape is added to a private copy
# of the operator so the bundled examples stay small for CPU tests.
CASES = [
    ("rmsnorm Triton", "atrex", "rmsnorm", "seeds/Triton/kernel.py",
     {"init_kwargs": {"eps": 1e-6}, "input_kwargs": {"num_tokens": 16384, "hidden_size": 8192}}),
    ("silu_and_mul Triton", "atrex", "silu_and_mul", "seeds/Triton/kernel.py",
     {"init_kwargs": None, "input_kwargs": {"num_tokens": 8192, "intermediate_size": 14336}}),
    ("rope Triton", "sol", "rope", "seeds/Triton/kernel.py", {"tokens": 131072}),
    ("rmsnorm reference (PyTorch)", "atrex", "rmsnorm", "reference.py",
     {"init_kwargs": {"eps": 1e-6}, "input_kwargs": {"num_tokens": 16384, "hidden_size": 8192}}),
]
BIG = "big"


def private_copy(layout: str, op: str, shape: dict, tmp: str) -> str:
    dst = tempfile.mkdtemp(prefix=op + "-", dir=tmp)
    os.rmdir(dst)  # copytree creates it
    shutil.copytree(os.path.join(OPS, op), dst)
    if layout == "atrex":
        path = os.path.join(dst, "shapes.json")
        with open(path) as f:
            shapes = json.load(f)
        shapes[BIG] = shape
        with open(path, "w") as f:
            json.dump(shapes, f)
    else:
        with open(os.path.join(dst, "workload.jsonl"), "a") as f:
            f.write(json.dumps({"uuid": BIG, "axes": shape, "inputs": {}}) + "\n")
    return dst


def harness_cmd(layout: str, op_dir: str, kernel: str, reps: int) -> list[str]:
    cmd = [sys.executable, "-m", "aka_harness", "--layout", layout, "--op-dir", op_dir,
           "--kernel", kernel, "--device", "cuda", "--shape-id", BIG,
           "--timed-runs", str(reps), "--warmup", "20"]
    if layout == "sol" and kernel.endswith("reference.py"):
        cmd.append("--no-dps")  # SOL references return their outputs
    if "seeds/Triton" in kernel:
        cmd += ["--framework", "Triton"]
    return cmd


def run_aka(cmd: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=HARNESS)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT_JSON=")]
    if len(lines) != 1:
        raise RuntimeError(f"harness printed {len(lines)} result lines\n{p.stderr[-2000:]}")
    res = json.loads(lines[0][len("RESULT_JSON="):])
    if not res["all_pass"]:
        raise RuntimeError(f"candidate failed: {res['failures']}")
    return res


def launcher(layout: str, op_dir: str, kernel: str, seed: int):
    """The same launch the harness times, built the way the harness builds it."""
    sys.path.insert(0, HARNESS)
    import torch
    from aka_harness import seeds as sd
    from aka_harness.runner import clone_tree

    device = torch.device("cuda", torch.cuda.current_device())
    if layout == "atrex":
        from aka_harness.atrex import AtrexCode, AtrexPlan
        plan, code = AtrexPlan(op_dir, None, None, None), AtrexCode
        kernel_file = os.path.join(op_dir, kernel)
    else:
        from aka_harness.sol import SolCode, SolPlan
        no_dps = False if kernel.endswith("reference.py") else None
        plan = SolPlan(op_dir, None, os.path.join(op_dir, kernel), None, no_dps)
        code, kernel_file = SolCode, plan.kernel_file
    ref = code(plan.runner_config(), device, None)  # builds the inputs, as in the judge
    cand = code(plan.runner_config(), device, kernel_file)
    init = sd.derive_seed("init", seed, BIG, 0)
    ref.setup(BIG, plan.shape_spec(BIG), init)
    cand.setup(BIG, plan.shape_spec(BIG), init)
    sd.seed_everything(sd.derive_seed(sd.STAGE_PERFORMANCE, seed, BIG, 0))
    fn = cand.launch(BIG, clone_tree(ref.build_inputs(BIG)), 0).fn
    return fn


def do_bench_us(layout: str, op_dir: str, kernel: str, seed: int) -> float:
    import torch
    from triton.testing import do_bench
    with torch.inference_mode():
        fn = launcher(layout, op_dir, kernel, seed)
        return do_bench(fn, warmup=100, rep=500, return_mode="median") * 1000.0


def ncu_driver(layout: str, op_dir: str, kernel: str, seed: int, launches: int) -> None:
    """Entry point under ncu: warm up, then `launches` launches inside the profiled window."""
    import torch
    with torch.inference_mode():
        fn = launcher(layout, op_dir, kernel, seed)
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        for _ in range(launches):
            fn()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()


def ncu_us(layout: str, op_dir: str, kernel: str, seed: int, launches: int) -> dict:
    cmd = ["ncu", "--clock-control", "none", "--profile-from-start", "off",
           "--metrics", "gpu__time_duration.sum", "--csv", "--print-units", "base",
           sys.executable, os.path.abspath(__file__), "--ncu-driver", layout, op_dir, kernel,
           str(seed), str(launches)]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=HARNESS))
    text = p.stdout[p.stdout.find('"ID"'):]
    rows = [r for r in csv.DictReader(io.StringIO(text))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        raise RuntimeError(f"ncu produced no rows (rc {p.returncode})\n{p.stdout[-1500:]}"
                           f"\n{p.stderr[-1500:]}")
    ns = [float(r["Metric Value"].replace(",", "")) for r in rows]
    per_launch = len(ns) / launches
    if per_launch == 1:
        return {"median_us": statistics.median(ns) / 1000.0, "kernels_per_launch": 1}
    # Several kernels per launch (eager PyTorch): sum each launch's kernels.
    k = round(per_launch)
    sums = [sum(ns[i:i + k]) for i in range(0, len(ns) - k + 1, k)]
    return {"median_us": statistics.median(sums) / 1000.0, "kernels_per_launch": k}


def measure(case, runs: int, reps: int, tmp: str) -> dict:
    label, layout, op, kernel, shape = case
    op_dir = private_copy(layout, op, shape, tmp)
    results = [run_aka(harness_cmd(layout, op_dir, os.path.join(op_dir, kernel), reps))
               for _ in range(runs)]
    medians = [r["latency_us_by_shape"][BIG] for r in results]
    seed = results[0]["seeds"][0]
    row = {"label": label, "aka_runs_us": medians, "aka_us": statistics.median(medians),
           "aka_within_run_cv": [r["timing"]["cv_by_shape"].get(BIG) for r in results],
           "timing": results[0]["timing"]}
    row["aka_run_to_run_cv"] = statistics.stdev(medians) / statistics.mean(medians)
    row["do_bench_us"] = do_bench_us(layout, op_dir, kernel, seed)
    try:
        row["ncu"] = ncu_us(layout, op_dir, kernel, seed, 50)
    except (RuntimeError, FileNotFoundError) as e:
        row["ncu_error"] = str(e)[-800:]
    return row


def table(rows: list[dict]) -> str:
    out = ["| kernel | aka median µs | do_bench µs | Δ | ncu µs | Δ | run-to-run CV | in-run CV |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, d = r["aka_us"], r["do_bench_us"]
        n = r.get("ncu", {}).get("median_us")
        ncu_txt = f"{n:.2f} | {100 * (a - n) / n:+.1f}%" if n else "n/a | n/a"
        cvs = [c for c in r["aka_within_run_cv"] if c is not None]
        out.append(f"| {r['label']} | {a:.2f} | {d:.2f} | {100 * (a - d) / d:+.1f}% | {ncu_txt} | "
                   f"{100 * r['aka_run_to_run_cv']:.2f}% | {100 * max(cvs):.2f}% (max) |")
    return "\n".join(out)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--ncu-driver":
        layout, op_dir, kernel, seed, launches = sys.argv[2:7]
        ncu_driver(layout, op_dir, kernel, int(seed), int(launches))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            try:
                rows.append(measure(case, a.runs, a.reps, tmp))
            except Exception as e:  # one broken case must not hide the others
                print(f"{case[0]}: FAILED: {e}", file=sys.stderr)
    with open(os.path.join(a.out, "gpu_timing.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "rows": rows}, f, indent=2)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
