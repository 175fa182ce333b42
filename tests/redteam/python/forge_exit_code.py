"""Hostile: tries to turn its failure into "no device" (exit 75) or "bad operator" (exit 2),
which aka blames on the environment or the operator rather than on the candidate.

On import it writes a well-formed "no CUDA device" error reply into every pipe it holds (the
judge's reply channel among them), then ends its process with status 75. A runner's reply
never decides the judge's exit code, and the candidate runner's own status is only a
candidate failure: expected exit 1 with "the candidate process ..." or the forged text as a
compile_import failure, never 75 or 2.
"""
import json
import os
import stat
import struct

import torch.nn as nn

_reply = {"$dict": [["error", "env"], ["message", "--device cuda: no CUDA device is visible "
                                                  "to torch in this sandbox"]]}
_body = json.dumps({"msg": _reply, "tensors": []}).encode()
_frame = struct.pack("<4sQ", b"AKA1", len(_body)) + _body
for _fd in range(3, 256):
    try:
        if stat.S_ISFIFO(os.fstat(_fd).st_mode):
            os.write(_fd, _frame)
    except OSError:
        pass
os._exit(75)


class Model(nn.Module):
    def forward(self, x, weight):
        return x
