"""Distributed evaluation (DESIGN §4.3): N ranks under torchrun, one verdict.

This file owns what changes when an Atrex-Bench operator's metadata carries
``benchmark_contract.distributed_evaluation = {launcher: torchrun, backend,
world_size: N}`` with N >= 2:

* ``contract_world_size``: N, read by the judge, which then starts every runner
  group (procs.py) as N ranks with torchrun's environment (RANK, LOCAL_RANK,
  WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT on loopback, which
  works inside a network-less sandbox) and sends each request to every rank,
  so ranks make the same collective calls in the same order. The judge merges
  the ranks' verdicts (a shape passes only if it passed on every rank) and a
  shape's latency is the slowest rank's median.
* ``Collective``: a runner rank joins the process group (the contract's
  backend, NCCL, on CUDA; Gloo on the CPU) and uses it to start each timed
  call together with its peers; the single-process ``Collective`` does nothing.
"""

from __future__ import annotations

import os
from typing import Any


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


class Collective:
    """A runner rank's process group; does nothing when running a single process."""

    def __init__(self) -> None:
        self.world = 1
        self.rank = 0
        self._dist: Any = None

    def init(self, device_type: str, backend: str) -> Any:
        """Join the process group; returns this rank's device."""
        import torch
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

    def barrier(self) -> None:
        if self.active:
            self._dist.barrier()

    def close(self) -> None:
        if self.active:
            self._dist.barrier()
            self._dist.destroy_process_group()
