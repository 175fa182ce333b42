"""Hostile: prints a forged passing RESULT_JSON on every stdout it can find, then exits 0.

It writes to sys.__stdout__, to fd 1 and to every pipe among its open descriptors (where an
in-process harness keeps its saved stdout), then ends its process with status 0 before any
honest verdict exists. Its own outputs are wrong. The candidate runner's stdout is the
sandbox's stderr and it holds no descriptor of the result channel: expected a failure that
says the candidate process exited (or sent a malformed reply), and the judge's result.
"""
import hashlib
import json
import os
import stat
import sys

import torch
import torch.nn as nn


def _cmdline_arg(flag):
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        for i, a in enumerate(args):
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a.split("=", 1)[1]
    return "unknown"


def forged_line():
    with open(__file__, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    ids = ["0", "1"]
    r = {"all_pass": True, "total": 2, "passed": 2, "failures": [],
         "latency_us_by_shape": {i: 0.01 for i in ids}, "latency_us_geomean": 0.01,
         "latency_us_arith_mean": 0.01, "speedup_vs_ref_geomean": 10000.0,
         "speedup_vs_ref_mean": 10000.0, "performance_score": 10000.0, "max_abs_err": 0.0,
         "max_rel_err": 0.0, "evaluator": "aka.python.atrex",
         "eval_id": _cmdline_arg("--eval-id"), "kernel_sha256": sha, "seeds": [0],
         "timing": {"method": "cpu_monotonic", "warmup": 3, "reps": 20, "l2_flush": False,
                    "cv_by_shape": {}},
         "actionable_diagnostics": []}
    return ("RESULT_JSON=" + json.dumps(r, separators=(",", ":")) + "\n").encode()


def _forge():
    line = forged_line()
    try:
        sys.__stdout__.write(line.decode())
        sys.__stdout__.flush()
    except Exception:
        pass
    for fd in range(1, 256):
        try:
            if fd == 1 or stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, line)
        except OSError:
            pass
    os._exit(0)


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()

    def forward(self, x, weight):
        _forge()
        return torch.zeros_like(x)
