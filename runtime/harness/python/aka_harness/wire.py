"""The byte protocol between the judge and its runner processes.

This file owns how whole messages cross a pipe (the values themselves are
encoded by codec.py, which never executes anything it reads). A message is

    b"AKA1" | u64 header length | header (JSON) | raw tensor bytes...

where the header is ``{"msg": <tree>, "tensors": [<descriptor>, ...]}``.
``Channel`` sends and receives whole messages; the judge side can put a
deadline on both directions (a runner that stops reading or writing cannot
hang the judge), and ``recv_many`` reads several ranks at once, noting the
moment each message was complete (the judge's clock for the timing check).
torch is imported only when a message is built or decoded, so the judge can
start its first runner before paying for its own torch import.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from dataclasses import dataclass
from typing import Any, Optional

MAGIC = b"AKA1"
_PREFIX = struct.Struct("<4sQ")
MAX_HEADER = 64 << 20
CHUNK = 1 << 20
SMALL = 256 << 10  # a message up to this size is written at once
PIPE_BYTES = 1 << 20  # asked for each pipe, so a timed run's data rarely waits for room


class ChannelError(Exception):
    """The peer closed the pipe, sent something malformed, or missed a deadline."""


class ChannelClosed(ChannelError):
    """End of file: the peer process is gone."""


class ChannelTimeout(ChannelError):
    """The deadline passed before the message was complete."""


# ---- framing ----------------------------------------------------------------------------------

class _Incoming:
    """Incremental parser of one message: prefix, header, then each tensor's bytes."""

    def __init__(self) -> None:
        self.stage = 0  # 0 prefix, 1 header, 2 tensors, 3 done
        self.buf = bytearray(_PREFIX.size)
        self.pos = 0
        self.header: Any = None
        self.descs: list[dict[str, Any]] = []
        self.plan: list[tuple[Any, list[int], int]] = []
        self.bufs: list[bytearray] = []
        self.index = 0
        self.done_ns = 0

    def view(self) -> memoryview:
        return memoryview(self.buf)[self.pos:]

    def advance(self, n: int) -> None:
        self.pos += n
        while self.stage < 3 and self.pos == len(self.buf):
            self._next()

    def _next(self) -> None:
        if self.stage == 0:
            magic, hlen = _PREFIX.unpack(bytes(self.buf))
            if magic != MAGIC or hlen > MAX_HEADER:
                raise ChannelError("malformed message prefix")
            self.stage, self.buf, self.pos = 1, bytearray(hlen), 0
            return
        if self.stage == 1:
            try:
                self.header = json.loads(self.buf.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                raise ChannelError(f"malformed message header: {exc}")
            descs = self.header.get("tensors") if isinstance(self.header, dict) else None
            if not isinstance(descs, list) or "msg" not in self.header:
                raise ChannelError("message header without msg/tensors")
            from aka_harness.codec import CodecError, check_desc

            self.descs = descs
            try:
                self.plan = [check_desc(d) for d in descs]
            except CodecError as exc:
                raise ChannelError(str(exc))
            self.bufs = [bytearray(nb) for _, _, nb in self.plan]
            self.stage, self.index = 2, -1
        self.index += 1
        while self.index < len(self.bufs) and not self.bufs[self.index]:
            self.index += 1
        if self.index >= len(self.bufs):
            self.stage, self.done_ns = 3, time.perf_counter_ns()
            self.buf, self.pos = bytearray(), 0
            return
        self.buf, self.pos = self.bufs[self.index], 0

    @property
    def done(self) -> bool:
        return self.stage == 3

    def result(self) -> "Message":
        from aka_harness.codec import tensor_from

        tensors = [tensor_from(b, dt, shape) for b, (dt, shape, _) in zip(self.bufs, self.plan)]
        return Message(self.header["msg"], self.descs, tensors, self.done_ns)


@dataclass
class Message:
    """One received message: its tree, the tensor descriptors and the decoded tensors."""

    tree: Any
    descs: list[dict[str, Any]]
    tensors: list[Any]
    arrived_ns: int

    def value(self, strict: bool = False, device: Optional[str] = None, place: Any = None) -> Any:
        """The decoded tree; a malformed one raises ChannelError."""
        from aka_harness.codec import CodecError, decode

        try:
            return decode(self.tree, self.descs, self.tensors, strict, device, place)
        except CodecError as exc:
            raise ChannelError(str(exc))


def _remaining(deadline: Optional[float]) -> Optional[int]:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise ChannelTimeout("deadline passed")
    return max(1, int(left * 1000))


class Channel:
    """One direction each way over two pipe file descriptors."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.incoming = _Incoming()

    def close(self) -> None:
        for fd in (self.rfd, self.wfd):
            try:
                os.close(fd)
            except OSError:
                pass

    def send(self, tree: Any, deadline: Optional[float] = None) -> None:
        from aka_harness.codec import encode, raw

        msg, descs, datas = encode(tree)
        header = json.dumps({"msg": msg, "tensors": descs}, separators=(",", ":")).encode()
        parts = [memoryview(_PREFIX.pack(MAGIC, len(header)) + header)]
        parts += [raw(data) for data in datas]
        if sum(p.nbytes for p in parts) <= SMALL:  # one write, so one wake-up of the reader
            parts = [memoryview(b"".join(p.cast("B") for p in parts))]
        for part in parts:
            self._write(part.cast("B"), deadline)

    def _write(self, mv: memoryview, deadline: Optional[float]) -> None:
        poller = select.poll()
        poller.register(self.wfd, select.POLLOUT)
        while mv:
            try:
                n = os.write(self.wfd, mv[:CHUNK])
            except BlockingIOError:
                # Wait for room (never spin: on a loaded machine the spin takes the CPU
                # the reader needs to make room).
                poller.poll(_remaining(deadline) if deadline is not None else None)
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise ChannelClosed("the peer closed its end")
            mv = mv[n:]

    def fill(self) -> bool:
        """Read what is available into the current message; True when it is complete."""
        inc = self.incoming
        try:
            n = os.readv(self.rfd, [inc.view()])
        except BlockingIOError:
            return False
        if n == 0:
            raise ChannelClosed("the peer closed its end")
        inc.advance(n)
        return inc.done

    def take(self) -> Message:
        msg = self.incoming.result()
        self.incoming = _Incoming()
        return msg

    def recv(self, deadline: Optional[float] = None) -> Message:
        return recv_many([self], deadline)[0]


def recv_many(chans: list[Channel], deadline: Optional[float] = None) -> list[Message]:
    """One message from each channel, read concurrently; arrival time noted per message."""
    out: list[Optional[Message]] = [None] * len(chans)
    poller = select.poll()
    by_fd = {}
    for i, c in enumerate(chans):
        poller.register(c.rfd, select.POLLIN)
        by_fd[c.rfd] = i
    pending = len(chans)
    while pending:
        for fd, _ in poller.poll(_remaining(deadline)):
            i = by_fd[fd]
            if out[i] is None and chans[i].fill():
                out[i] = chans[i].take()
                poller.unregister(fd)
                pending -= 1
    return [m for m in out if m is not None]


def nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


def widen(fd: int) -> None:
    """Ask for a larger pipe buffer (Linux; the system's limit may refuse: then as it was)."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except OSError:
        pass
