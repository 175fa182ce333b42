"""Starting, talking to and stopping a group of runner processes (judge side).

This file owns the judge's handle on the processes that run operator or
candidate code (runner.py): one group per role, one process per rank, started
through a group root (spawn.py) inside the Landlock domain confine.py prepares,
with stdout pointed at stderr, stdin at /dev/null and nothing inherited but the
two pipes of each rank.

A group starts one of two ways. ``fork_group`` forks it from the judge itself,
which costs no interpreter start and no torch import; cli.py does this once,
for both roles, right after its own torch import and before anything secret
exists (spawn.py says why that order is the defence). A group started later
(a candidate runner restarted after it died or timed out, when the judge's
memory already holds the secret seeds and the reference's outputs) is a fresh
interpreter through exec instead, which inherits nothing of that memory. The judge sends the same kind of request to every rank
and reads all replies concurrently; a reply that does not arrive before the
deadline, a closed pipe or a malformed message is reported as RunnerLost (the
group is then killed) and never mistaken for an answer.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from typing import Any, Optional

from aka_harness.confine import Confiner, clock_ns, cpu_clock, process_cpu_ns
from aka_harness.wire import Channel, ChannelClosed, ChannelError, ChannelTimeout, Message, \
    nonblocking, recv_many, widen

_DIST_KEYS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
              "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")


_TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        pass
    return out


def _reaped_ns(pid: int) -> int:
    """CPU time of the children this process has reaped (cutime + cstime, in ticks)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[13]) + int(fields[14])) * _TICK_NS
    except (OSError, ValueError, IndexError):
        return 0


def tree_pids(root: int) -> list[int]:
    seen: list[int] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        if pid not in seen:
            seen.append(pid)
            stack += _children(pid)
    return seen


def tree_cpu_ns(root: int) -> int:
    """CPU time used so far by a process tree: every live process (all its threads, exited
    ones too) plus what each has reaped. Kernel accounting: nothing in the tree can forge it."""
    return sum((process_cpu_ns(pid) or 0) + _reaped_ns(pid) for pid in tree_pids(root))


class RunnerLost(Exception):
    """The group missed a deadline, closed its pipe or spoke garbage; it is killed."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _boot(harness: str, module: str, func: str) -> str:
    """``python3 -c`` code: no working directory on sys.path (candidate code can write
    there), the harness first; the interpreter's site and user site as for the judge."""
    return (f"import os, sys; sys.path[:] = [p for p in sys.path if p not in ('', '.', "
            f"os.getcwd())]; sys.path.insert(0, {harness!r}); "
            f"from aka_harness.{module} import {func}; sys.exit({func}(sys.argv[1:]))")


class ForkedProcess:
    """The little of subprocess.Popen the judge uses, for a group root it forked."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: Optional[int] = None

    def poll(self) -> Optional[int]:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = -9
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        pause = 0.0002
        while self.poll() is None:
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired(f"runner {self.pid}", timeout or 0)
            time.sleep(pause)
            pause = min(2 * pause, 0.02)
        assert self.returncode is not None
        return self.returncode


def can_fork() -> bool:
    """Whether a group may be forked from this process: torch is loaded and has not set
    up CUDA (a CUDA context does not survive fork)."""
    torch = sys.modules.get("torch")
    return torch is not None and not torch.cuda.is_initialized()


class RunnerGroup:
    """The ranks of one role, started together and stopped together."""

    def __init__(self, role: str, world: int, confiner: Confiner, fork: bool = False) -> None:
        self.role = role
        self.world = world
        self.chans: list[Channel] = []
        self.forked = fork and can_fork()
        port = _free_port() if world > 1 else 0
        ranks, theirs = [], []
        for rank in range(world):
            j2r_r, j2r_w = os.pipe()
            r2j_r, r2j_w = os.pipe()
            nonblocking(j2r_w)
            nonblocking(r2j_r)
            widen(j2r_w)
            widen(r2j_w)
            self.chans.append(Channel(r2j_r, j2r_w))
            rank_env = {}
            if world > 1:
                rank_env = {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(world),
                            "LOCAL_WORLD_SIZE": str(world), "MASTER_ADDR": "127.0.0.1",
                            "MASTER_PORT": str(port),
                            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
            ranks.append({"rfd": j2r_r, "wfd": r2j_w, "env": rank_env})
            theirs += [j2r_r, r2j_w]
        try:
            self.proc: Any = self._fork(ranks, confiner) if self.forked \
                else self._exec(ranks, theirs, confiner)
        finally:
            for fd in theirs:
                os.close(fd)

    def _fork(self, ranks: list[dict[str, Any]], confiner: Confiner) -> ForkedProcess:
        from aka_harness.spawn import forked_root

        pid = os.fork()
        if pid == 0:  # never returns: the child ends in os._exit
            forked_root(self.role, ranks, confiner, _DIST_KEYS)
        return ForkedProcess(pid)

    def _exec(self, ranks: list[dict[str, Any]], theirs: list[int],
              confiner: Confiner) -> subprocess.Popen:
        harness = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = {k: v for k, v in os.environ.items() if k not in _DIST_KEYS}
        cfg = {"role": self.role, "boot": _boot(harness, "runner", "main"), "ranks": ranks}
        cmd = [sys.executable, "-c", _boot(harness, "spawn", "spawn"), json.dumps(cfg)]
        return subprocess.Popen(cmd, env=env, pass_fds=theirs, stdin=subprocess.DEVNULL,
                                stdout=2, preexec_fn=confiner.preexec(), start_new_session=True)

    def send(self, msgs: list[Any], deadline: Optional[float]) -> None:
        try:
            for chan, msg in zip(self.chans, msgs):
                chan.send(msg, deadline)
        except ChannelError as exc:
            raise self._lost(exc)

    def send_some(self, ranks: list[int], msg: Any, deadline: Optional[float]) -> None:
        """The same message to the ranks listed."""
        try:
            for r in ranks:
                self.chans[r].send(msg, deadline)
        except ChannelError as exc:
            raise self._lost(exc)

    def recv(self, deadline: Optional[float], ranks: Optional[list[int]] = None) -> list[Message]:
        """One message from every rank (or from the ranks listed), read concurrently."""
        chans = self.chans if ranks is None else [self.chans[r] for r in ranks]
        try:
            return recv_many(chans, deadline)
        except ChannelError as exc:
            raise self._lost(exc)

    def request(self, msgs: list[Any], deadline: Optional[float] = None) -> list[Message]:
        """Send one request per rank (or the same to all), return every rank's reply."""
        if len(msgs) == 1 and self.world > 1:
            msgs = msgs * self.world
        self.send(msgs, deadline)
        return self.recv(deadline)

    def _lost(self, exc: ChannelError) -> RunnerLost:
        if isinstance(exc, ChannelTimeout):
            self.kill()
            return RunnerLost("timeout")
        if isinstance(exc, ChannelClosed):
            why = self._exit_text()
            self.kill()
            return RunnerLost(why)
        self.kill()
        return RunnerLost(f"sent a malformed reply ({exc})")

    def _exit_text(self) -> str:
        """How the group ended (the spawner exits with its first failing rank's status)."""
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "closed its pipe"
        if code > 128:
            return f"was killed by signal {code - 128}"
        return f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"

    def cpu_ns(self) -> int:
        """CPU time of the whole group so far (the spawner adopts orphans, confine.py)."""
        return tree_cpu_ns(self.proc.pid)

    def clocks(self) -> list[int]:
        """The CPU-time clocks of the group's processes now, for window_cpu_ns."""
        return [c for c in map(cpu_clock, tree_pids(self.proc.pid)) if c is not None]

    @staticmethod
    def window_cpu_ns(clocks: list[int]) -> int:
        """CPU time so far of the processes behind ``clocks``: a few system calls, cheap
        enough to read around a timed call (a process started since is left out here and
        counted by cpu_ns, outside the window: charged, never hidden). The kernel adds a
        running thread's time to its process's clock only when the thread sleeps or at a
        tick, so the judge reads it while the runner waits for its next word (runner.py)."""
        return sum(clock_ns(c) or 0 for c in clocks)

    def cpus(self) -> int:
        """How many CPUs the group's processes may run on (the most any of them has)."""
        n = len(os.sched_getaffinity(0))
        for pid in tree_pids(self.proc.pid):
            try:
                n = max(n, len(os.sched_getaffinity(pid)))
            except OSError:
                pass
        return n

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        for chan in self.chans:
            chan.close()

    def close(self, grace_s: float = 30.0) -> None:
        """Ask every rank to exit and wait for the group; kill it when it dawdles."""
        try:
            self.send([{"op": "exit"}] * self.world, time.monotonic() + 5)
        except RunnerLost:
            return
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
