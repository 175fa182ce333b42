"""GPU cross-check: aka's per-shape median latency versus triton.testing.do_bench.

Used by tests/gpu/harness_python_gpu.sh. For one operator and one candidate it
reads the harness's RESULT_JSON (already produced), rebuilds the exact timing
inputs the harness used (same performance seed, same loaders), times the same
launch with ``triton.testing.do_bench(..., return_mode="median")`` and prints
one table row per shape: aka median, do_bench median, difference, aka's CV.

    bench_compare.py --layout atrex|sol --op-dir DIR --kernel FILE --result FILE
                     [--no-dps] [--label TEXT]

Exit 0 always when the comparison ran (the table is the product); 3 when
triton is missing; 1 on an internal error.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--layout", required=True, choices=("atrex", "sol"))
    p.add_argument("--op-dir", required=True)
    p.add_argument("--kernel", required=True)
    p.add_argument("--result", required=True)
    p.add_argument("--no-dps", action="store_true")
    p.add_argument("--label", default="")
    a = p.parse_args()
    try:
        from triton.testing import do_bench
    except ImportError:
        print("SKIP: triton is not installed; no do_bench comparison")
        return 3
    from aka_harness import seeds as sd
    from aka_harness.runner import clone_tree

    with open(a.result, encoding="utf-8") as f:
        line = [ln for ln in f.read().splitlines() if ln.startswith("RESULT_JSON=")][0]
    res = json.loads(line[len("RESULT_JSON="):])
    device = torch.device("cuda", torch.cuda.current_device())
    if a.layout == "atrex":
        from aka_harness.atrex import AtrexCode, AtrexPlan

        plan, code = AtrexPlan(a.op_dir, None, None, None), AtrexCode
        kernel = a.kernel
    else:
        from aka_harness.sol import SolCode, SolPlan

        plan = SolPlan(a.op_dir, None, a.kernel, None, False if a.no_dps else None)
        code, kernel = SolCode, plan.kernel_file
    # The reference's code builds the inputs, the candidate's code runs them: as in the judge.
    ref = code(plan.runner_config(), device, None)
    cand = code(plan.runner_config(), device, kernel)
    label = a.label or a.kernel
    for sid, aka_us in res.get("latency_us_by_shape", {}).items():
        with torch.inference_mode():
            init = sd.derive_seed("init", res["seeds"][0], sid, 0)
            ref.setup(sid, plan.shape_spec(sid), init)
            cand.setup(sid, plan.shape_spec(sid), init)
            sd.seed_everything(sd.derive_seed(sd.STAGE_PERFORMANCE, res["seeds"][0], sid, 0))
            fn = cand.launch(sid, clone_tree(ref.build_inputs(sid)), 0).fn
        ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
        db_us = ms * 1000.0
        diff = (aka_us - db_us) / db_us * 100.0
        cv = res["timing"]["cv_by_shape"].get(sid)
        flag = "ok" if abs(diff) <= 5.0 else ("short" if db_us < 20 else "OFF")
        if any(d.get("shape_id") == sid and "outside the current stream" in d["message"]
               for d in res.get("actionable_diagnostics", [])):
            flag += " stream-check"
        print(f"| {label} | {sid[:12]} | {aka_us:10.2f} | {db_us:10.2f} | {diff:+6.1f}% | "
              f"{(cv if cv is not None else float('nan')) * 100:5.1f}% | {flag} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
