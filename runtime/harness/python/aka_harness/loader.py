"""Loading Python files in isolation, and the kernel frameworks a candidate may use.

This file owns two things:

* ``import_isolated``: imports one file under a fresh, unique module name with
  ``sys.path`` limited to that file's own directory (plus the interpreter's
  library directories), so a candidate can import its sibling helpers but not
  the reference, the harness or whatever happened to be on the caller's path.
  Every failure becomes a ``LoadError`` carrying a message an agent can act on
  (the exception type, the offending line, the missing module).
* The framework table: which module each framework needs, whether it is
  installed in this runtime, and how to guess a candidate's framework from its
  imports when --framework is not given. A framework that is not installed is
  reported as such before the candidate is imported, instead of surfacing as a
  bare ModuleNotFoundError from deep inside the candidate.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import sysconfig
import traceback
import uuid
from dataclasses import dataclass
from types import ModuleType
from typing import Optional


class LoadError(Exception):
    """A file could not be loaded; ``stage`` says which step, ``message`` why."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


@dataclass(frozen=True)
class Framework:
    """A kernel framework: canonical name, modules it needs, and a note for users."""

    name: str
    modules: tuple[str, ...]
    needs_cuda: bool
    note: str = ""


# Canonical names follow DESIGN §4.1 (--framework values). "PyTorch" is the
# reference itself (V0); "Cuda" is CUDA C++ built by torch's load_inline.
FRAMEWORKS: dict[str, Framework] = {
    "PyTorch": Framework("PyTorch", ("torch",), False),
    "Triton": Framework("Triton", ("triton",), True,
                        "on --device cpu the harness sets TRITON_INTERPRET=1"),
    "Gluon": Framework("Gluon", ("triton", "triton.experimental.gluon"), True),
    "CuteDSL": Framework("CuteDSL", ("cutlass", "cutlass.cute"), True),
    "TileLang": Framework("TileLang", ("tilelang",), True),
    "FlyDSL": Framework("FlyDSL", ("flydsl",), True),
    "Cuda": Framework("Cuda", ("torch.utils.cpp_extension",), True),
}

_ALIASES = {
    "pytorch": "PyTorch", "torch": "PyTorch", "triton": "Triton", "gluon": "Gluon",
    "cutedsl": "CuteDSL", "cute_dsl": "CuteDSL", "cute": "CuteDSL", "tilelang": "TileLang",
    "flydsl": "FlyDSL", "cuda": "Cuda", "cuda_cpp": "Cuda", "cuda-inline": "Cuda",
}


def canonical_framework(name: str) -> Optional[str]:
    """The canonical framework name for a user spelling, or None if unknown."""
    if name in FRAMEWORKS:
        return name
    return _ALIASES.get(name.lower())


def _imported_modules(source: str) -> set[str]:
    """Top-level and dotted module names the source imports (AST, no execution)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def guess_framework(source: str) -> str:
    """Best guess of a candidate's framework from what it imports or calls.

    Gluon is checked before Triton because Gluon lives inside the triton
    package; load_inline marks a CUDA C++ candidate.
    """
    mods = _imported_modules(source)

    def uses(prefix: str) -> bool:
        return any(m == prefix or m.startswith(prefix + ".") for m in mods)

    if uses("triton.experimental.gluon"):
        return "Gluon"
    if uses("triton"):
        return "Triton"
    if uses("cutlass"):
        return "CuteDSL"
    if uses("tilelang"):
        return "TileLang"
    if uses("flydsl"):
        return "FlyDSL"
    if "load_inline" in source or uses("torch.utils.cpp_extension"):
        return "Cuda"
    return "PyTorch"


def _why_missing(module: str, full_path: list[str], role: str) -> str:
    """Whether a module the candidate could not import is absent from the runtime (an
    optional library nobody installed) or present but outside what a candidate may import:
    the two need different fixes, and the first must not read as the sandbox's doing."""
    top = module.split(".")[0]
    saved = list(sys.path)
    sys.path[:] = full_path
    try:
        installed = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        installed = False
    finally:
        sys.path[:] = saved
    if not installed:
        return (f"'{top}' is not installed in the sandbox runtime; install it in the runtime "
                f"image (ATREX_SANDBOX_REQUIREMENTS_FILE) if the {role} needs it")
    return (f"'{top}' is installed, but a {role} may import only the standard library, "
            f"torch, the framework packages and files beside it")


def framework_problem(fw: Framework, device: str) -> Optional[str]:
    """Why this framework cannot run here, or None when it can."""
    for mod in fw.modules:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return (f"framework {fw.name} is not installed in the sandbox runtime "
                    f"(module '{mod}' cannot be imported); install it in the runtime "
                    f"image or evaluate with another --framework")
    if fw.name == "Cuda":
        from torch.utils import cpp_extension  # imported lazily: it is slow

        home = cpp_extension.CUDA_HOME
        if not home or not os.path.exists(os.path.join(home, "bin", "nvcc")):
            return ("framework Cuda is not installed in the sandbox runtime (no nvcc "
                    "under CUDA_HOME); torch.utils.cpp_extension.load_inline cannot "
                    "build CUDA sources here")
    if fw.needs_cuda and device == "cpu" and fw.name != "Triton":
        return (f"framework {fw.name} needs a CUDA device; it cannot run with "
                f"--device cpu")
    return None


def framework_env(fw: Framework, device: str) -> dict[str, str]:
    """Environment a framework must see before its first import (the candidate runner
    sets what is not already set, before it imports the candidate)."""
    if fw.name in ("Triton", "Gluon") and device == "cpu":
        # Triton's interpreter runs @triton.jit kernels on CPU tensors: lets a
        # Triton candidate be checked for correctness on a machine with no GPU.
        return {"TRITON_INTERPRET": "1"}
    return {}


_LIBRARY_DIR_NAMES = ("site-packages", "dist-packages", "lib-dynload")


def _is_library_dir(norm: str, libs: set[str]) -> bool:
    """An installed-library entry of sys.path: the standard library, lib-dynload, a
    site/dist-packages directory, or a directory inside one. The last are what a
    package's .pth file adds at startup: nvidia-cutlass-dsl puts ``cutlass`` in
    site-packages/nvidia_cutlass_dsl/dsl_packages, so without them no CuteDSL
    candidate could import its framework."""
    if norm in libs or norm.endswith(".zip"):
        return True
    parts = norm.split(os.sep)
    return any(part in _LIBRARY_DIR_NAMES for part in parts) or any(
        norm.startswith(lib + os.sep) for lib in libs)


def _isolated_path(directory: str) -> list[str]:
    """sys.path for an isolated import: the file's dir, then library dirs only.

    Library directories are the standard library, lib-dynload and the
    site/dist-packages directories with what their .pth files added inside them
    (_is_library_dir); the current directory, PYTHONPATH entries such as the harness
    itself, and the operator directory are dropped.
    """
    libs = {os.path.normpath(p) for key, p in sysconfig.get_paths().items()
            if key in ("stdlib", "platstdlib", "purelib", "platlib")}
    keep = [directory]
    for entry in sys.path:
        if not entry:
            continue
        norm = os.path.normpath(entry)
        if _is_library_dir(norm, libs) and norm not in keep:
            keep.append(norm)
    return keep


def _short_traceback(exc: BaseException, path: str) -> str:
    """The exception and the frames inside the loaded file (the user's code)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename) == os.path.abspath(path)]
    where = ""
    if isinstance(exc, SyntaxError) and exc.lineno:
        where = f" (line {exc.lineno}: {(exc.text or '').strip()})"
    elif frames:
        last = frames[-1]
        where = f" (line {last.lineno}: {(last.line or '').strip()})"
    return f"{type(exc).__name__}: {exc}{where}"


def import_isolated(path: str, role: str) -> ModuleType:
    """Import the file at ``path`` under a fresh module name, in isolation.

    ``role`` ("candidate", "reference", "input builder") labels errors. The
    module is registered in sys.modules under its unique name, because
    dataclasses, pickling and some JIT decorators look a module up by name.
    """
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise LoadError("compile_import", f"{role} file {path} does not exist")
    name = f"aka_{role.replace(' ', '_')}_{uuid.uuid4().hex[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadError("compile_import", f"{role} file {path} is not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    saved_path = list(sys.path)
    sys.path[:] = _isolated_path(os.path.dirname(path))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or str(exc)
        raise LoadError("compile_import", f"{role} {os.path.basename(path)}: "
                        f"ModuleNotFoundError: no module named '{missing}' "
                        f"({_why_missing(missing, saved_path, role)})")
    except BaseException as exc:  # SystemExit from a stray exit() is a load failure too
        raise LoadError("compile_import",
                        f"{role} {os.path.basename(path)}: {_short_traceback(exc, path)}")
    finally:
        sys.path[:] = saved_path
    return module
