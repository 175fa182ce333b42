"""Test helper: print the ids of an operator's N smallest shapes, as --shape-id flags.

Keeps CPU test runs short whatever shapes an example ships: a shape's size is
the product of the integers in its Atrex input_kwargs, or of a SOL workload's
var axes. Usage: small_shapes.py OP_DIR [N]  →  "--shape-id A --shape-id B".
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [max(value, 1)]
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ints(v)]
    if isinstance(value, list):
        return [i for v in value for i in _ints(v)]
    return []


def sizes(op_dir: str) -> list[tuple[int, str]]:
    if os.path.isfile(os.path.join(op_dir, "workload.jsonl")):
        out = []
        with open(os.path.join(op_dir, "workload.jsonl"), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    w = json.loads(line)
                    out.append((math.prod(_ints(w.get("axes") or {})), w["uuid"]))
        return out
    with open(os.path.join(op_dir, "shapes.json"), encoding="utf-8") as f:
        shapes = json.load(f)
    return [(math.prod(_ints(e.get("input_kwargs") or {})), sid) for sid, e in shapes.items()]


def main() -> int:
    op_dir = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    picked = sorted(sizes(op_dir))[:n]
    print(" ".join(f"--shape-id {sid}" for _, sid in picked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
