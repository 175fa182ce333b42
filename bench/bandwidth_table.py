"""bandwidth_table.py — issue 17 must-show 3's number for one campaign: the incumbent's
bandwidth on the operator's largest shape (bytes it must move / its latency there), as a
percentage of the device-to-device copy bandwidth measured in the same device call.

    python3 bench/bandwidth_table.py OP_DIR WORKSPACE D2D_GBPS [EVAL_OR_PROFILE_JSON]...
    python3 bench/bandwidth_table.py --largest OP_DIR       (prints the largest shape's id)

Bytes per shape, from what the operator declares: a native operator's roofline "bytes"
expression over its dims (operator.json), an Atrex-Bench operator's roofline.json
(semantic_Q_read_bytes + semantic_Q_write_bytes), a SOL-ExecBench operator's inputs and
outputs in definition.json at the workload's axes. The largest shape is the one with the
most bytes. The latency is the incumbent memory record's for that shape, as `aka status`
names the incumbent (its timing method is printed beside it); with EVAL_JSON (an `aka
eval --json` result of the incumbent's kernel, e.g. timed by kernel span), a row from that
evaluation; with an `aka profile --json` summary (Nsight Compute on a clean L2, the kernel
alone), a row from its kernels' durations summed (each kernel once per call), with the
profiler's own DRAM throughput beside it. Prints one table row per source.
"""
import json
import math
import os
import subprocess
import sys

_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "uint8": 1,
                "int16": 2, "int32": 4, "int64": 8, "bool": 1}


def _eval_expr(expr: str, env: dict) -> float:
    return float(eval(expr.replace("//", "/"), {"__builtins__": {}}, dict(env)))  # noqa: S307


def native_bytes(op_dir: str) -> dict:
    op = json.load(open(os.path.join(op_dir, "operator.json")))
    expr = op["roofline"]["bytes"]
    return {s["id"]: _eval_expr(expr, s["dims"]) for s in op["shapes"]}


def atrex_bytes(op_dir: str) -> dict:
    roof = json.load(open(os.path.join(op_dir, "roofline.json")))["shapes"]
    return {sid: float(r["semantic_Q_read_bytes"] + r["semantic_Q_write_bytes"])
            for sid, r in roof.items()}


def sol_bytes(op_dir: str) -> dict:
    d = json.load(open(os.path.join(op_dir, "definition.json")))
    out = {}
    for line in open(os.path.join(op_dir, "workload.jsonl")):
        if not line.strip():
            continue
        w = json.loads(line)
        axes = {k: v["value"] for k, v in d["axes"].items() if v.get("type") == "const"}
        axes.update(w["axes"])
        for k, v in d["axes"].items():
            if v.get("type") == "expr":
                axes[k] = _eval_expr(v["expression"], axes)
        total = 0.0
        for t in list(d["inputs"].values()) + list(d["outputs"].values()):
            total += math.prod(_eval_expr(str(x), axes) for x in t["shape"]) * \
                _DTYPE_BYTES[t["dtype"]]
        out[w["uuid"]] = total
    return out


def op_bytes(op_dir: str) -> dict:
    if os.path.isfile(os.path.join(op_dir, "operator.json")):
        return native_bytes(op_dir)
    if os.path.isfile(os.path.join(op_dir, "definition.json")):
        return sol_bytes(op_dir)
    return atrex_bytes(op_dir)


def extra_row(path: str, version: str, sid: str) -> tuple:
    """(who, latency us, method) from an `aka eval --json` or `aka profile --json` file."""
    doc = json.load(open(path))
    if "kernels" in doc:  # a profile: the call's kernels, each once
        us = sum(k["duration_ns"] for k in doc["kernels"]) / 1000.0
        gbps = ", ".join(f"{k['dram_gbps']:.0f}" for k in doc["kernels"]
                         if k.get("dram_gbps") is not None)
        return (f"{version}, aka profile (ncu DRAM {gbps or '?'} GB/s)", us,
                "ncu kernel duration")
    doc = doc.get("result", doc)  # aka eval --json wraps the result
    return (f"{version}, aka eval again", doc["latency_us_by_shape"][sid],
            doc["timing"]["method"])


def main() -> int:
    if sys.argv[1] == "--largest":
        sizes = op_bytes(sys.argv[2])
        print(max(sizes, key=sizes.get))
        return 0
    op_dir, ws, d2d = sys.argv[1], sys.argv[2], float(sys.argv[3])
    sizes = op_bytes(op_dir)
    status = json.loads(subprocess.run(["aka", "status", ws, "--json"], capture_output=True,
                                       text=True, check=True).stdout)
    if not status.get("incumbent"):
        print(f"bandwidth_table.py: {ws}: the campaign has no incumbent (no version passed)",
              file=sys.stderr)
        return 1
    version = status["incumbent"]["version"]
    rec = json.loads(subprocess.run(["aka", "memory", "show", str(version), "--workspace", ws],
                                    capture_output=True, text=True, check=True).stdout)
    perf = rec["performance"]
    sid = max(sizes, key=sizes.get)
    name = os.path.basename(op_dir.rstrip("/"))
    rows = [(f"{version} ({rec.get('status')})", perf["latency_us_by_shape"][sid],
             perf.get("timing_method"))]
    rows += [extra_row(path, version, sid) for path in sys.argv[4:]]
    for who, us, method in rows:
        gbps = sizes[sid] / (us * 1e-6) / 1e9
        print(f"| {name} | {who} | {sid} | {sizes[sid] / 1e6:.1f} MB | {us:.2f} us ({method}) | "
              f"{gbps:.0f} GB/s | {100 * gbps / d2d:.1f}% of {d2d:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
