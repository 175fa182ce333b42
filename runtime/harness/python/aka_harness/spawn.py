"""The group root: the first process of a runner group, inside its Landlock domain.

This file owns starting the ranks of one group. The root runs in the domain
confine.py prepares; the ranks it starts inherit that one domain, so ranks of a
distributed group can still reach each other (NCCL shares memory handles
between them) while none can reach the judge. Each rank dies with the root
(PR_SET_PDEATHSIG), the root with the judge, and the root exits with the first
failing rank's status (128 + N for signal N).

Two ways in (procs.py picks):

* ``forked_root``: the judge forks the root, and the root forks the ranks: no
  interpreter start and no second or third torch import. The child is a copy of
  the judge's memory, which is why cli.py forks both groups right after the
  judge imports torch and *before* anything secret exists: no seed has been
  drawn (judge.py draws the timed-run seeds with os.urandom later), no
  reference output computed, no operator or candidate code run, and CUDA not
  initialised. What the child keeps of the judge is then only what any runner
  could read on disk: the flags, the plan's file names, the harness's modules.
  The child closes every descriptor but its rank's two pipes, points stdin at
  /dev/null and stdout at stderr (the judge's saved real stdout is closed: only
  the judge writes RESULT_JSON), confines itself, and never returns into the
  judge's code: it ends in os._exit.
* ``spawn``: the exec path, for a group started after the secrets exist (a
  candidate runner restarted): a fresh interpreter that inherits nothing.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import traceback
from typing import Any

from aka_harness.confine import Confiner, adopt_orphans, die_with_parent, dumpable_again


def _keep_only(keep: set[int]) -> None:
    """stdin from /dev/null, stdout onto stderr, every other descriptor but ``keep`` closed."""
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the directory's own descriptor, already gone


def _clean_path() -> None:
    """No working directory on sys.path: candidate code can write there."""
    cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", cwd)]


def _rank(role: str, rank: dict[str, Any], dist_keys: tuple[str, ...]) -> int:
    from aka_harness.runner import serve
    from aka_harness.wire import Channel

    for key in dist_keys:
        os.environ.pop(key, None)
    os.environ.update(rank["env"])
    if rank["env"]:  # OpenMP read OMP_NUM_THREADS when torch loaded, before the fork
        import torch

        torch.set_num_threads(int(rank["env"]["OMP_NUM_THREADS"]))
    die_with_parent()
    return serve(role, Channel(rank["rfd"], rank["wfd"]))


def forked_root(role: str, ranks: list[dict[str, Any]], confiner: Confiner,
                dist_keys: tuple[str, ...]) -> None:
    """The root of a group forked from the judge (procs.py); never returns."""
    code = 70
    try:
        gc.freeze()  # the judge's objects: never scanned (nor copied on write) by a collection
        os.setsid()
        dumpable_again()
        confiner.preexec()()  # no_new_privs, PDEATHSIG, Landlock: before any other step
        _keep_only({fd for r in ranks for fd in (r["rfd"], r["wfd"])})
        _clean_path()
        adopt_orphans()
        pids = []
        for i, rank in enumerate(ranks):
            pid = os.fork()
            if pid == 0:
                rc = 70
                try:
                    for other in ranks[:i] + ranks[i + 1:]:
                        for fd in (other["rfd"], other["wfd"]):
                            os.close(fd)
                    rc = _rank(role, rank, dist_keys)
                except BaseException:
                    traceback.print_exc()
                finally:
                    sys.stderr.flush()
                    os._exit(rc)
            pids.append(pid)
        for rank in ranks:
            os.close(rank["rfd"])
            os.close(rank["wfd"])
        code = _wait(pids)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _wait(pids: list[int]) -> int:
    codes = []
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        codes.append(os.waitstatus_to_exitcode(status))
    code = next((c for c in codes if c), 0)
    return 128 - code if code < 0 else code


def spawn(argv: list[str]) -> int:
    """Start every rank of a group (argv[0]: JSON config from the judge); wait for them."""
    cfg = json.loads(argv[0])
    adopt_orphans()
    procs = []
    for rank in cfg["ranks"]:
        env = dict(os.environ, **rank["env"])
        fds = (rank["rfd"], rank["wfd"])
        cmd = [sys.executable, "-c", cfg["boot"], cfg["role"], *map(str, fds)]
        procs.append(subprocess.Popen(cmd, env=env, pass_fds=fds, stdin=subprocess.DEVNULL,
                                      preexec_fn=die_with_parent))
        for fd in fds:
            os.close(fd)
    codes = [p.wait() for p in procs]  # orphans it adopted are reaped with the sandbox
    code = next((c for c in codes if c), 0)
    return 128 - code if code < 0 else code  # a rank killed by signal N: 128 + N
