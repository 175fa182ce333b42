"""Distributed evaluation (DESIGN §4.3): N ranks under torchrun, one verdict.

This file owns what changes when an Atrex-Bench operator's metadata carries
``benchmark_contract.distributed_evaluation = {launcher: torchrun, backend,
world_size: N}`` with N >= 2:

* ``relaunch``: when the harness is started as a single process, it starts N
  copies of itself with torchrun's environment (the same flags), reads rank
  0's RESULT_JSON and hands it back, so callers use one command line for
  every operator. Started by torchrun itself, the harness just joins.
* ``Collective``: every decision that changes how many collective calls a rank
  makes (abort a shape, time a shape, re-time after the stream check) is
  agreed by all ranks, or ranks would wait on each other forever. A shape's
  latency is the slowest rank's median. The single-process ``Collective`` does
  nothing, so the driver has one code path.
* Rank 0 gathers every rank's failures and errors and alone prints the result.
  The backend is the contract's (NCCL) on CUDA and Gloo on the CPU.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from typing import Any, Optional

import torch


def contract_world_size(metadata: dict[str, Any]) -> int:
    """world_size from a valid distributed contract, else 1."""
    bc = metadata.get("benchmark_contract")
    de = bc.get("distributed_evaluation") if isinstance(bc, dict) else None
    if not isinstance(de, dict):
        return 1
    n = de.get("world_size")
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 2 else 1


def under_launcher() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def relaunch(argv: list[str], world_size: int) -> tuple[int, Optional[dict[str, Any]], str]:
    """Run this harness as ``world_size`` ranks; (exit code, rank 0's result, command).

    The ranks get torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
    LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and rendezvous over loopback,
    which works inside a network-less sandbox. The launcher is ours rather than
    torchrun's elastic agent: it starts faster, and some distribution builds of
    torchrun fail before starting any worker. When one rank exits, the others
    get RANK_EXIT_GRACE_S to finish before they are killed, so a rank that died
    cannot leave its peers waiting in a collective forever.
    """
    cmd = [sys.executable, "-m", "aka_harness", *argv]
    port = _free_port()
    procs = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE=str(world_size), LOCAL_WORLD_SIZE=str(world_size),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        env.setdefault("OMP_NUM_THREADS", "1")
        out = subprocess.PIPE if rank == 0 else subprocess.DEVNULL
        procs.append(subprocess.Popen(cmd, stdout=out, stderr=sys.stderr, env=env, text=True))
    stdout = _wait_ranks(procs)
    payload = None
    for line in stdout.splitlines():
        if line.startswith("RESULT_JSON="):
            payload = json.loads(line[len("RESULT_JSON="):])
    codes = [p.returncode for p in procs]
    code = codes[0] if payload is not None else next((c for c in codes if c), 1)
    return code, payload, f"{world_size} ranks of: {' '.join(cmd)}"


RANK_EXIT_GRACE_S = 60.0


def _wait_ranks(procs: list[subprocess.Popen]) -> str:
    """Wait for every rank; rank 0's stdout. Kills stragglers after a rank exits."""
    import threading

    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(procs[0].stdout.read()))  # type: ignore[union-attr]
    reader.start()
    first_exit: Optional[float] = None
    while any(p.poll() is None for p in procs):
        if first_exit is None and any(p.poll() is not None for p in procs):
            first_exit = time.monotonic()
        if first_exit is not None and time.monotonic() - first_exit > RANK_EXIT_GRACE_S:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.05)
    reader.join()
    return "".join(chunks)


class Collective:
    """Agreement between ranks; the identity when running a single process."""

    def __init__(self) -> None:
        self.world = 1
        self.rank = 0
        self._dist: Any = None

    def init(self, device_type: str, backend: str) -> torch.device:
        """Join the process group; returns this rank's device."""
        import torch.distributed as dist

        self._dist = dist
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if device_type == "cuda":
            torch.cuda.set_device(local)
            dist.init_process_group(backend=backend or "nccl")
            device = torch.device("cuda", local)
        else:
            dist.init_process_group(backend="gloo")
            device = torch.device("cpu")
        self.world = dist.get_world_size()
        self.rank = dist.get_rank()
        return device

    @property
    def active(self) -> bool:
        return self._dist is not None and self.world > 1

    def _reduce(self, value: float, op: str) -> float:
        if not self.active:
            return value
        dist = self._dist
        dev = torch.device("cuda", torch.cuda.current_device()) \
            if dist.get_backend() == "nccl" else torch.device("cpu")
        t = torch.tensor([value], dtype=torch.float64, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.MIN)
        return float(t.item())

    def all_true(self, flag: bool) -> bool:
        return self._reduce(1.0 if flag else 0.0, "min") > 0.5

    def any_true(self, flag: bool) -> bool:
        return self._reduce(1.0 if flag else 0.0, "max") > 0.5

    def max(self, value: Optional[float]) -> Optional[float]:
        """The largest value over ranks; None if any rank has none."""
        if not self.active:
            return value
        missing = self.any_true(value is None)
        worst = self._reduce(-1.0 if value is None else value, "max")
        return None if missing else worst

    def barrier(self) -> None:
        if self.active:
            self._dist.barrier()

    def gather(self, obj: Any) -> list[Any]:
        if not self.active:
            return [obj]
        out: list[Any] = [None] * self.world
        self._dist.all_gather_object(out, obj)
        return out

    def close(self) -> None:
        if self.active:
            self._dist.barrier()
            self._dist.destroy_process_group()
