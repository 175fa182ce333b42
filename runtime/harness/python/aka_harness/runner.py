"""A runner process: executes operator code or the candidate for the judge.

This file owns everything that happens in the processes the judge starts
(judge.py). A runner has one role:

* **reference**: imports the operator's reference and input builder, builds
  inputs from the seeds the judge sends, runs the reference, times it;
* **candidate**: imports kernel.py (untrusted) and runs it on the inputs the
  judge sends, returning outputs, the inputs as they are after the call, and
  its own timing of each timed call. A seeded timed run (judge.py) carries a
  seed instead of inputs: the runner builds them with the operator's input
  builder, so a candidate runner imports that builder too (never the reference).

A runner holds no verdict, no seed it was not given and no reference output
(a candidate runner never sees one); it only answers requests (wire.py) on
the two pipes it was given. Its stdout is the sandbox's stderr, so nothing it
prints can reach the result channel.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import os
import signal
import sys
import traceback
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import torch

from aka_harness import compare as cmp
from aka_harness import probes
from aka_harness import seeds as sd
from aka_harness.atrex import AtrexCode, CandidateError, LayoutError, Launch
from aka_harness.dist import Collective
from aka_harness.loader import LoadError
from aka_harness.sol import SolCode
from aka_harness.timing import RunTimer
from aka_harness.wire import Channel, ChannelClosed


class CaseTimeout(Exception):
    """A candidate call ran past --candidate-timeout-s."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """SIGALRM-based limit for one call (0 disables); the judge has its own deadline."""
    if seconds <= 0:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"candidate call exceeded {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def user_error(exc: BaseException, files: tuple[str, ...] = ()) -> str:
    """One line of exception text plus the innermost frame in the user's file."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if any(f.filename.endswith(p) for p in files)] if files else []
    where = ""
    pick = mine[-1] if mine else (frames[-1] if frames else None)
    if pick is not None:
        where = f" [{pick.filename.rsplit('/', 1)[-1]}:{pick.lineno}: {(pick.line or '').strip()}]"
    return f"{type(exc).__name__}: {exc}{where}"


def clone_tree(value: Any) -> Any:
    """Deep copy of nested inputs; tensors are cloned (same strides where possible)."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(clone_tree(v) for v in value)
    return copy.deepcopy(value)


def tree_bytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, dict):
        return sum(tree_bytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(tree_bytes(v) for v in value)
    return 0


def refill(dest: Any, src: Any) -> bool:
    """Copy src's tensor values into dest's tensors in place; False if the structure,
    a shape, a dtype or a non-tensor value differs (then dest must be replaced)."""
    if isinstance(dest, torch.Tensor):
        if not isinstance(src, torch.Tensor) or dest.shape != src.shape or dest.dtype != src.dtype:
            return False
        dest.copy_(src)
        return True
    if isinstance(dest, dict):
        return (isinstance(src, dict) and list(dest) == list(src)
                and all(refill(dest[k], src[k]) for k in dest))
    if isinstance(dest, (list, tuple)):
        return (type(src) is type(dest) and len(src) == len(dest)
                and all(refill(d, s) for d, s in zip(dest, src)))
    return type(dest) is type(src) and dest == src


def scrub_allocator(device: torch.device, nbytes: int) -> None:
    """Hand the caching allocator NaN-filled blocks before a candidate runs.

    torch's CUDA allocator reuses freed blocks without clearing them, so an
    output that a kernel allocates with torch.empty and never writes could
    contain an earlier result of its own. Allocating, NaN-filling and freeing
    a few blocks of the likely sizes makes such leftovers NaN instead.
    """
    if device.type != "cuda":
        return
    size = min(max(nbytes, 1 << 20), 1 << 30)
    blocks = []
    for _ in range(2):
        b = torch.empty(size // 4, dtype=torch.float32, device=device)
        b.fill_(float("nan"))
        blocks.append(b)
    del blocks


def _why_no_cuda() -> str:
    """What the driver says when torch sees no CUDA device, and which device nodes this
    sandbox shows: the difference between a machine without a GPU and a sandbox that
    does not reach it (an agent's own evaluation inside the agent sandbox)."""
    try:
        torch.cuda.init()
        why = "torch.cuda.init() raised nothing"
    except Exception as exc:  # the driver's own words: no driver, no device, a busy one
        why = " ".join(str(exc).split())[:300]
    try:
        nodes = sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))
    except OSError:
        nodes = []
    return f"{why}; device nodes: {', '.join(nodes) or 'none'}"


class Runner:
    """One runner's state: its code, its device and the shape being timed."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.code: Any = None
        self.device = torch.device("cpu")
        self.coll = Collective()
        self.timeout_s = 0.0
        self.files: tuple[str, ...] = ()
        self.timer: Optional[RunTimer] = None
        self.sid = ""
        self.staged: Any = None
        self.launch: Optional[Launch] = None
        self.timed_fn: Any = None
        self.collect: Any = None
        self.graph: Any = None

    # ---- helpers ----------------------------------------------------------------------

    def _place(self, t: torch.Tensor, desc: dict[str, Any]) -> torch.Tensor:
        """A received tensor on this runner's device, with the sender's strides."""
        stride = desc.get("stride")
        if isinstance(stride, list) and len(stride) == t.dim() and tuple(stride) != t.stride():
            try:
                out = torch.empty_strided(t.shape, stride, dtype=t.dtype, device=self.device)
                out.copy_(t)
                return out
            except RuntimeError:  # overlapping strides (expand): keep it contiguous
                pass
        return t.to(self.device) if self.device.type != "cpu" else t.clone()

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    # ---- requests ---------------------------------------------------------------------

    def init(self, req: dict[str, Any]) -> dict[str, Any]:
        want = req.get("device")
        if want == "cuda" and not torch.cuda.is_available():
            return {"error": "env", "message": "--device cuda: no CUDA device is visible to "
                    f"torch in this sandbox ({_why_no_cuda()})"}
        use_cuda = want == "cuda" or (want is None and torch.cuda.is_available())
        self.device = torch.device("cuda", torch.cuda.current_device()) if use_cuda \
            else torch.device("cpu")
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            self.device = self.coll.init(self.device.type, str(req.get("backend") or "nccl"))
        self.timeout_s = float(req.get("timeout_s") or 0)
        self.timer = RunTimer(self.device, int(req.get("warmup") or 0))
        # Before any operator or candidate code is imported: CUPTI is started by the
        # harness, and the reply says whether it did (judge.py decides from it).
        span_why = self.timer.start_span() if req.get("timing") == "kernel_span" else None
        self.timer.span_asked = req.get("timing") in ("kernel_span", "events_unheld")
        cfg = req["cfg"]
        kernel = req.get("kernel")
        for name, value in (req.get("env") or {}).items():
            os.environ.setdefault(str(name), str(value))
        self.files = (str(kernel),) if kernel else ()
        cls = AtrexCode if cfg["layout"] == "atrex" else SolCode
        self.code = cls(cfg, self.device, kernel)
        name = torch.cuda.get_device_name(self.device) if use_cuda else "cpu"
        return {"device": self.device.type, "device_name": name,
                "torch_version": torch.__version__,
                "kernel_span": self.timer.span is not None, "kernel_span_why": span_why}

    def setup(self, req: dict[str, Any]) -> dict[str, Any]:
        self.code.setup(str(req["sid"]), req["spec"], int(req["seed"]))
        return {}

    def case(self, req: dict[str, Any]) -> dict[str, Any]:
        """Reference only: build the inputs for a seed, run the reference on a copy.

        With ``seeds`` instead of ``seed``: one input set per seed; with ``outputs`` also
        the reference's outputs of each (on a copy), and with ``repeat`` whether the
        first seed gives the same set when built again (seeded timed inputs, judge.py),
        so that neither the sets nor the repeat cross the pipe more than once."""
        sid = str(req["sid"])
        if "seeds" in req:
            return self.sets(sid, [int(seed) for seed in req["seeds"]], bool(req.get("outputs")),
                             bool(req.get("repeat")))
        inputs = probes.transform(self.build(sid, int(req["seed"])), req.get("probe"))
        launch = self.code.launch(sid, clone_tree(inputs), 0)
        out = launch.collect(launch.fn())
        self._sync()
        return {"inputs": inputs, "outputs": out}

    def sets(self, sid: str, seeds: list[int], outputs: bool, repeat: bool) -> dict[str, Any]:
        sets = [self.build(sid, seed) for seed in seeds]
        reply: dict[str, Any] = {"sets": sets, "seedable": self.code.seedable(sid)}
        if repeat and seeds:
            reply["repeat_change"] = cmp.input_change(sets[0], self.build(sid, seeds[0]))
        if outputs:
            reply["outputs"] = [self.call({"sid": sid}, clone_tree(one))["outputs"]
                                for one in sets]
        return reply

    def build(self, sid: str, seed: int) -> Any:
        """The operator's input set for a seed (the same in every runner of this operator)."""
        sd.seed_everything(seed)
        return self.code.build_inputs(sid)

    def call(self, req: dict[str, Any], inputs: Any) -> dict[str, Any]:
        """One untimed call on the judge's inputs: outputs and the inputs afterwards."""
        sid = str(req["sid"])
        scrub_allocator(self.device, 2 * tree_bytes(inputs))
        with time_limit(self.timeout_s if self.role == "candidate" else 0):
            launch = self.code.launch(sid, inputs, int(req.get("variant", 0)))
            out = launch.collect(launch.fn())
            # Materialize: every stream drained before anything reads the outputs.
            self._sync()
        return {"outputs": out, "inputs": inputs}

    def prepare(self, req: dict[str, Any], inputs: Any) -> dict[str, Any]:
        """Stage the warm-up inputs, warm up, check streams, capture a graph if asked."""
        assert self.timer is not None
        self.sid, self.staged, self.graph = str(req["sid"]), inputs, None
        self.launch = self.code.launch(self.sid, inputs, 0)
        self.timed_fn, self.collect = self.launch.fn, self.launch.collect
        self._sync()
        self.timer.synced = False
        self.timer.warm(self.launch.fn)
        notes = []
        if req.get("graph") and self.device.type == "cuda":
            try:
                self.graph, static = self.timer.capture(self.launch.fn)
            except Exception as exc:
                if self.role == "candidate":
                    raise
                # An eager PyTorch reference may sync or allocate in ways a graph
                # cannot capture; it is then timed with events and the note says so.
                notes.append(f"reference not capturable in a CUDA graph "
                             f"({type(exc).__name__}); reference timed with events")
            else:
                collect = self.launch.collect
                self.timed_fn, self.collect = self.graph.replay, (lambda _r: collect(static))
        note = self.timer.stream_check(self.timed_fn)
        if note:
            notes.append(note)
        gc.collect()  # the timed runs then start from a clean heap (run)
        return {"notes": notes, "graph": self.graph is not None, "inputs": self.staged}

    def _stage(self, inputs: Any) -> None:
        """Fresh inputs into the staged buffers; destination outputs poisoned again."""
        assert self.launch is not None and self.timer is not None
        if not refill(self.staged, inputs):
            if self.graph is not None:
                raise RuntimeError("inputs of this shape change structure between calls; a "
                                   "CUDA graph cannot replay them")
            self.staged = inputs
            self.launch = self.code.launch(self.sid, inputs, 0)
            self.timed_fn, self.collect = self.launch.fn, self.launch.collect
        for t in self.launch.outs:
            cmp.poison_(t, 0)
        self._sync()
        self.timer.drain()

    def run(self, inputs: Any, chan: Channel) -> dict[str, Any]:
        """One timed run: stage the inputs and reply "ready"; on the judge's "go", time the
        call and reply its latency as soon as it is done; on the judge's "more", its
        outputs, and (returned) the inputs as the call left them. The judge's clock runs from its "go" to the
        latency's arrival, so the call lies inside it (crosscheck.py)."""
        assert self.timer is not None
        # No cyclic collection inside a timed run (prepare collected): a pass over the
        # heap would land at random in the call or in the CPU time the judge counts
        # around it (crosscheck.py).
        gc.disable()
        try:
            return self._run(inputs, chan)
        finally:
            gc.enable()

    def _run(self, inputs: Any, chan: Channel) -> dict[str, Any]:
        assert self.timer is not None
        self._stage(inputs)
        chan.send({"ready": True})
        go = chan.recv().value()
        if not isinstance(go, dict) or go.get("op") != "go":
            return {"error": "protocol", "message": "a timed run without its go"}
        self.coll.barrier()  # ranks start each call together
        ret, us = self.timer.once(self.timed_fn)
        chan.send({"us": us, "path": self.timer.last_path})
        # Wait for the judge before anything else: while this process sleeps here the
        # kernel has brought its CPU time up to date, so the judge's reading after the
        # latency's arrival covers the call (procs.py, window_cpu_ns).
        more = chan.recv().value()
        if not isinstance(more, dict) or more.get("op") != "more":
            return {"error": "protocol", "message": "a timed run without its more"}
        if not more.get("fetch", True):  # not a sampled run: the judge keeps nothing
            chan.send({"outputs": None})
            return {"inputs": None}
        chan.send({"outputs": self.collect(ret)})
        return {"inputs": self.staged}

    def handle(self, req: dict[str, Any], msg: Any, chan: Channel) -> Any:
        """One request (under inference mode, like the reply's encoding, except init)."""
        op = req.get("op")
        if op == "init":
            return self.init(req)
        if op == "setup":
            return self.setup(req)
        if op == "case" and self.role == "reference":
            return self.case(req)
        if op == "run" and "seed" in req:  # seeded: the inputs are built here (judge.py)
            return self.run(self.build(self.sid, int(req["seed"])), chan)
        if op in ("call", "prepare", "run"):
            inputs = msg.value(place=self._place)["inputs"]
            if op == "call":
                if req.get("many"):  # reference only: outputs of several input sets
                    return {"outputs": [self.call(req, one)["outputs"] for one in inputs]}
                return self.call(req, inputs)
            return self.prepare(req, inputs) if op == "prepare" else self.run(inputs, chan)
        return {"error": "protocol", "message": f"unknown request {op!r}"}


def _error_reply(exc: BaseException, runner: Runner) -> dict[str, Any]:
    if isinstance(exc, CaseTimeout):
        return {"error": "timeout", "message": str(exc)}
    if isinstance(exc, CandidateError):
        return {"error": "candidate", "message": str(exc)}
    if isinstance(exc, LayoutError):
        return {"error": "layout", "message": str(exc)}
    if isinstance(exc, LoadError):
        return {"error": "load", "stage": exc.stage, "message": exc.message}
    return {"error": "runtime", "message": user_error(exc, runner.files)}


def _answer(runner: Runner, chan: Channel, req: dict[str, Any], msg: Any) -> None:
    """Handle one request and send its reply. Everything the reply held is freed when
    this returns, before the runner waits again, so no cleanup of one request lands
    inside the judge's measurement of the next (crosscheck.py counts CPU time)."""
    with contextlib.ExitStack() as stack:
        if req.get("op") != "init":
            stack.enter_context(torch.inference_mode())
        try:
            reply = runner.handle(req, msg, chan)
            chan.send(reply)  # encoding reads outputs: candidate code may run here too
            return
        except ChannelClosed:
            raise
        except BaseException as exc:  # SystemExit from candidate code is a failure too
            if isinstance(exc, KeyboardInterrupt):
                raise
            reply = _error_reply(exc, runner)
        chan.send(reply)


def serve(role: str, chan: Channel) -> int:
    runner = Runner(role)
    while True:
        try:
            msg = chan.recv()
            req = msg.value()
            if not isinstance(req, dict) or req.get("op") == "exit":
                runner.coll.close()
                sys.stderr.flush()
                os._exit(0)  # nothing to save; torch's interpreter teardown costs a second
            _answer(runner, chan, req, msg)
        except ChannelClosed:
            return 0
        del msg, req


def main(argv: list[str]) -> int:
    role, rfd, wfd = argv[0], int(argv[1]), int(argv[2])
    return serve(role, Channel(rfd, wfd))
