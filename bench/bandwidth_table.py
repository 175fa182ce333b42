"""bandwidth_table.py — issue 17 must-show 3's number for one campaign: the incumbent's
bandwidth on the operator's largest shape (bytes it must move / its latency there), as a
percentage of the device-to-device copy bandwidth measured in the same device call.

    python3 bench/bandwidth_table.py OP_DIR WORKSPACE D2D_GBPS [EVAL_JSON]

Bytes per shape, from what the operator declares: a native operator's roofline "bytes"
expression over its dims (operator.json), an Atrex-Bench operator's roofline.json
(semantic_Q_read_bytes + semantic_Q_write_bytes), a SOL-ExecBench operator's inputs and
outputs in definition.json at the workload's axes. The largest shape is the one with the
most bytes. The latency is the incumbent memory record's for that shape, as `aka status`
names the incumbent (its timing method is printed beside it); with EVAL_JSON (an `aka
eval --json` result of the incumbent's kernel, e.g. timed by kernel span), a second row
from that evaluation. Prints one table row per source.
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


def main() -> int:
    op_dir, ws, d2d = sys.argv[1], sys.argv[2], float(sys.argv[3])
    if os.path.isfile(os.path.join(op_dir, "operator.json")):
        sizes = native_bytes(op_dir)
    elif os.path.isfile(os.path.join(op_dir, "definition.json")):
        sizes = sol_bytes(op_dir)
    else:
        sizes = atrex_bytes(op_dir)
    status = json.loads(subprocess.run(["aka", "status", ws, "--json"], capture_output=True,
                                       text=True, check=True).stdout)
    version = status["incumbent"]["version"]
    rec = json.loads(subprocess.run(["aka", "memory", "show", str(version), "--workspace", ws],
                                    capture_output=True, text=True, check=True).stdout)
    perf = rec["performance"]
    sid = max(sizes, key=sizes.get)
    name = os.path.basename(op_dir.rstrip("/"))
    rows = [(f"{version} ({rec.get('status')})", perf["latency_us_by_shape"][sid],
             perf.get("timing_method"))]
    if len(sys.argv) > 4:
        ev = json.load(open(sys.argv[4]))
        ev = ev.get("result", ev)  # aka eval --json wraps the result
        rows.append((f"{version}, aka eval again", ev["latency_us_by_shape"][sid],
                     ev["timing"]["method"]))
    for who, us, method in rows:
        gbps = sizes[sid] / (us * 1e-6) / 1e9
        print(f"| {name} | {who} | {sid} | {sizes[sid] / 1e6:.1f} MB | {us:.2f} us ({method}) | "
              f"{gbps:.0f} GB/s | {100 * gbps / d2d:.1f}% of {d2d:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
