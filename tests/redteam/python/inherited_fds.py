"""Hostile: looks for descriptors the forked runner inherited from the judge, and writes
a forged passing RESULT_JSON line to every descriptor it holds but its own channel.

The runners are forked from the judge (runtime/harness/python/aka_harness/spawn.py), so
without care they would hold the judge's saved real stdout (the pipe aka reads the
result from) and the other runner's pipes. A runner must hold only its two channel
pipes, stdin (/dev/null) and stdout = stderr. Any other descriptor, or a stdout that is
not stderr, prints REDTEAM-ESCAPED; the forged line must not reach aka (the test checks
that aka's result is the judge's). Then it returns zeros: expected "elements outside atol".
"""
import gc
import os
import stat
import sys

import torch
import torch.nn as nn

LINE = (b'RESULT_JSON={"all_pass":true,"total":2,"passed":2,"failures":[],'
        b'"latency_us_by_shape":{"0":0.01,"1":0.01},"latency_us_geomean":0.01,'
        b'"speedup_vs_ref_geomean":10000.0}\n')


def _channel_fds():
    fds = set()
    for obj in gc.get_objects():
        if type(obj).__name__ == "Channel" and hasattr(obj, "rfd") and hasattr(obj, "wfd"):
            fds |= {obj.rfd, obj.wfd}
    return fds


def _inspect():
    chan = _channel_fds()
    if len(chan) != 2:
        print(f"REDTEAM-ESCAPED: holds {len(chan)} channel descriptors", file=sys.stderr)
    out, err = os.fstat(1), os.fstat(2)
    if (out.st_dev, out.st_ino) != (err.st_dev, err.st_ino):
        print("REDTEAM-ESCAPED: stdout is not stderr", file=sys.stderr)
    if os.readlink("/proc/self/fd/0") != "/dev/null":
        print("REDTEAM-ESCAPED: stdin is not /dev/null", file=sys.stderr)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            st = os.fstat(fd)
        except OSError:
            continue  # the listing's own descriptor, closed already
        if fd > 2 and fd not in chan and not stat.S_ISDIR(st.st_mode):
            print(f"REDTEAM-ESCAPED: inherited descriptor {fd} -> {target}", file=sys.stderr)
        if fd not in chan and fd != 0:
            try:
                os.write(fd, LINE)
            except OSError:
                pass
    sys.stderr.flush()


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()

    def forward(self, x, weight):
        _inspect()
        return torch.zeros_like(x)
