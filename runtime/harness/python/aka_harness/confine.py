"""Keeping the runner processes away from the judge (Linux, through ctypes).

This file owns the kernel-level part of the split between the judge and the
processes that run operator or candidate code. All of them run as the same
user inside one sandbox, so without more a candidate could open
``/proc/<judge>/mem`` or ``/proc/<pid>/fd/1`` (the pipe aka reads the result
from; the sandbox's init process holds it too), ptrace the judge, or kill it.

* ``harden_judge``: the judge marks itself non-dumpable, which makes its
  ``/proc`` entries (memory, file descriptors, environment) and ptrace closed
  to processes of the same user.
* ``Confiner``: a Landlock domain entered by each runner group between fork and
  exec (no_new_privs first, as Landlock requires). Any Landlock domain limits
  ptrace-class access (``/proc/<pid>/fd``, ``mem``, ``environ``, ptrace,
  process_vm_*) to processes inside the same domain, so a runner cannot reach
  the judge or the sandbox's init process, whatever their dumpable flag.
  From Landlock ABI 6 the domain is also scoped for signals: a runner cannot
  signal a process outside it (the judge survives to report). The handled file
  access is only device-node creation, which no kernel needs, and renames across
  directories, which a rule on / grants everywhere (a domain would refuse them
  with EXDEV otherwise); files stay governed by the sandbox.
* The runner also gets PR_SET_PDEATHSIG, so it dies with the judge.

When Landlock is unavailable (kernel < 5.13 or not enabled) ``Confiner.level``
says "none"; the judge then refuses to run candidate code unless told
otherwise (see judge.py), because the verdict would no longer be out of reach.
"""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import struct
from typing import Callable, Optional

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

# Landlock: syscall numbers are the same on x86_64 and aarch64 (the generic table).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
ACCESS_FS_MAKE_CHAR = 1 << 6
ACCESS_FS_MAKE_BLOCK = 1 << 11
ACCESS_FS_REFER = 1 << 13  # ABI 2
SCOPE_SIGNAL = 1 << 1

_libc: Optional[ctypes.CDLL] = None


def _c() -> Optional[ctypes.CDLL]:
    global _libc
    if _libc is None and platform.system() == "Linux":
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _libc = None
    return _libc


def _prctl(option: int, arg: int) -> bool:
    libc = _c()
    return libc is not None and libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0),
                                           ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0


def harden_judge() -> bool:
    """Make the judge non-dumpable; False when the kernel refused (or not Linux)."""
    return _prctl(PR_SET_DUMPABLE, 0)


def dumpable_again() -> bool:
    """For a runner forked from the (non-dumpable) judge: dumpable as an exec'd runner is,
    so that the judge can read its /proc entries in a user namespace (its CPU time and
    children, procs.py); the runner's Landlock domain still keeps every process outside
    the domain away from it and it away from them."""
    return _prctl(PR_SET_DUMPABLE, 1)


def landlock_abi() -> int:
    libc = _c()
    if libc is None:
        return 0
    abi = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                       ctypes.c_uint32(CREATE_RULESET_VERSION))
    return abi if abi > 0 else 0


class Confiner:
    """A Landlock ruleset prepared by the judge; ``preexec`` confines a child."""

    def __init__(self) -> None:
        self.abi = landlock_abi()
        self.fd = -1
        if self.abi:
            self.fd = self._ruleset()

    def _ruleset(self) -> int:
        """The ruleset: device-node creation handled (and denied), renames left free."""
        libc = _c()
        refer = ACCESS_FS_REFER if self.abi >= 2 else 0
        fs = ACCESS_FS_MAKE_CHAR | ACCESS_FS_MAKE_BLOCK | refer
        # struct landlock_ruleset_attr {u64 fs; u64 net; u64 scoped;}: the size
        # tells the kernel which fields exist, so older ABIs get a shorter one.
        attr = struct.pack("<QQQ", fs, 0, SCOPE_SIGNAL) if self.abi >= 6 else struct.pack("<Q", fs)
        buf = ctypes.create_string_buffer(attr, len(attr))
        fd = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), buf,  # type: ignore[union-attr]
                          ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
        if fd < 0:
            return -1
        os.set_inheritable(fd, False)
        if refer and not self._allow_refer(fd):
            os.close(fd)
            return -1
        return fd

    @staticmethod
    def _allow_refer(fd: int) -> bool:
        """Grant renames and links across directories everywhere. A domain denies them by
        default (EXDEV) even when not handled, and Triton's cache, like many tools, writes
        a temporary directory and renames the file into place."""
        root = os.open("/", os.O_PATH | os.O_CLOEXEC)
        try:
            # struct landlock_path_beneath_attr {u64 allowed_access; s32 parent_fd;} packed
            rule = struct.pack("<Qi", ACCESS_FS_REFER, root)
            buf = ctypes.create_string_buffer(rule, len(rule))
            return _c().syscall(ctypes.c_long(SYS_ADD_RULE),  # type: ignore[union-attr]
                                ctypes.c_int(fd), ctypes.c_int(RULE_PATH_BENEATH), buf,
                                ctypes.c_uint32(0)) == 0
        finally:
            os.close(root)

    @property
    def level(self) -> str:
        if self.fd < 0:
            return "none"
        scope = "ptrace+signal" if self.abi >= 6 else "ptrace"
        return f"landlock-abi{self.abi} ({scope})"

    @property
    def confines(self) -> bool:
        return self.fd >= 0

    def preexec(self) -> Callable[[], None]:
        """The function to run in the child between fork and exec."""
        fd = self.fd

        def confine() -> None:
            if not _prctl(PR_SET_NO_NEW_PRIVS, 1):
                raise OSError("PR_SET_NO_NEW_PRIVS failed")
            _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
            if fd >= 0:
                libc = _c()
                rc = libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF),  # type: ignore[union-attr]
                                  ctypes.c_int(fd), ctypes.c_uint32(0))
                if rc != 0:
                    raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")

        return confine

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def die_with_parent() -> None:
    """For a runner rank started by the group's spawner."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))


def adopt_orphans() -> None:
    """The spawner becomes the subreaper of its tree: a process a runner double-forks
    stays under the spawner, where the judge counts its CPU time (procs.py)."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


def cpu_clock(pid: int) -> Optional[int]:
    """The clock id of another process's CPU time (every thread, live or exited)."""
    libc = _c()
    if libc is None:
        return None
    cid = ctypes.c_int()
    if libc.clock_getcpuclockid(ctypes.c_int(pid), ctypes.byref(cid)) != 0:
        return None
    return cid.value


def clock_ns(clock: int) -> Optional[int]:
    """A CPU-time clock's reading; None when its process is gone."""
    import time

    try:
        return time.clock_gettime_ns(clock)
    except OSError:
        return None


def process_cpu_ns(pid: int) -> Optional[int]:
    """CPU time of every thread, live or exited, of another process; None when it is gone."""
    clock = cpu_clock(pid)
    return None if clock is None else clock_ns(clock)
