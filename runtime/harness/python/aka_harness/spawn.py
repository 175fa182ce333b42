"""The spawner: the first process of a runner group, inside its Landlock domain.

This file owns starting the ranks of one group. The judge starts this small
process (it imports nothing heavy, so it costs milliseconds) in the domain
confine.py prepares; the ranks it starts inherit that one domain, so ranks of a
distributed group can still reach each other (NCCL shares memory handles
between them) while none can reach the judge. Each rank dies with the spawner
(PR_SET_PDEATHSIG), the spawner with the judge, and the spawner exits with the
first failing rank's status (128 + N for signal N).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from aka_harness.confine import adopt_orphans, die_with_parent


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
