"""Hostile: tries to read the judge's memory (where the reference outputs are) and the
stdout it keeps, and to attach to it, then returns wrong outputs.

It tries /proc/<pid>/mem, /proc/<pid>/environ and /proc/<pid>/fd/1 of every process outside
its own group, ptrace(PTRACE_SEIZE) and process_vm_readv. The judge is not dumpable and
the runner's Landlock domain denies ptrace-class access outside it: expected no
REDTEAM-ESCAPED line and "outputs do not match".
"""
import ctypes
import os
import sys

import torch
import torch.nn as nn


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _escaped(what):
    print(f"REDTEAM-ESCAPED: {what}", file=sys.stderr, flush=True)


def _try(pid):
    for name in ("mem", "environ"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as f:
                if name == "mem":
                    with open(f"/proc/{pid}/maps") as m:
                        start = int(m.readline().split("-")[0], 16)
                    f.seek(start)
                if f.read(16):
                    _escaped(f"read /proc/{pid}/{name}")
        except (OSError, ValueError):
            pass
    try:  # listing the numbers is allowed to the owner; resolving one needs ptrace access
        if os.readlink(f"/proc/{pid}/fd/1"):
            _escaped(f"resolved /proc/{pid}/fd/1")
    except OSError:
        pass
    libc = ctypes.CDLL(None, use_errno=True)
    # PTRACE_SEIZE attaches without stopping the tracee; it is released when we exit.
    if libc.ptrace(0x4206, pid, None, None) == 0:
        _escaped(f"attached to pid {pid}")


def _attack():
    pid = _ppid(os.getppid())  # the spawner's parent: the judge
    seen = set()
    while pid > 0 and pid not in seen:
        seen.add(pid)
        _try(pid)
        pid = _ppid(pid)
    _try(1)


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()

    def forward(self, x, weight):
        _attack()
        return torch.zeros_like(x)
