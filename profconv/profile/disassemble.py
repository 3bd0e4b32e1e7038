"""SASS and PTX of a built kernel (a cubin, an object, a shared library, an executable) from
`cuobjdump`: the I/O edge of `profconv.analysis.sass`, which reads the text.

cuobjdump ships with the CUDA toolkit and as the pip wheel `nvidia-cuda-cuobjdump` (its binary under
site-packages/nvidia/cu*/bin/). Without it, `disassemble` says so in its note and returns no kernels:
the optimisations are then unknown, never guessed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from profconv.analysis.sass import KernelSass, optimisations, parse, ptx_half_ops

TIMEOUT_S = 60.0
MISSING = ("cuobjdump not found (it comes with the CUDA toolkit, or `pip install nvidia-cuda-cuobjdump`): "
           "the optimisations are not read from the SASS")


def find_cuobjdump(environ: dict[str, str] | None = None) -> str | None:
    """cuobjdump on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin, or in a pip wheel's nvidia/cu*/bin."""
    env = os.environ if environ is None else environ
    found = shutil.which("cuobjdump", path=env.get("PATH"))
    if found:
        return found
    dirs = [Path(env[k]) / "bin" for k in ("CUDA_HOME", "CUDA_PATH") if env.get(k)] + [Path("/usr/local/cuda/bin")]
    for p in sys.path:
        if p and Path(p, "nvidia").is_dir():
            dirs += sorted(Path(p, "nvidia").glob("cu*/bin"))
    for d in dirs:
        tool = d / "cuobjdump"
        if tool.is_file() and os.access(tool, os.X_OK):
            return str(tool)
    return None


def sass_argv(tool: str, path: Path) -> list[str]:
    return [tool, "-res-usage", "-sass", str(path)]


def ptx_argv(tool: str, path: Path) -> list[str]:
    return [tool, "-ptx", str(path)]


@dataclass(frozen=True)
class Disassembly:
    """A built file's kernels read from SASS; `half_ops` from its PTX (empty when it holds none);
    `note`: why there are no kernels, or what is missing (one line)."""

    path: str
    kernels: list[KernelSass] = field(default_factory=list)
    half_ops: dict[str, dict[str, int]] = field(default_factory=dict)
    tool: str | None = None
    note: str | None = None

    def optimisations(self) -> dict[str, tuple[str, ...]]:
        """Per kernel (as printed): its optimisations (fp16 named scalar or packed when PTX says)."""
        return {k.name: optimisations(k, self.half_ops.get(k.name) if self.half_ops else None) for k in self.kernels}


def _run(argv: list[str]) -> tuple[str | None, str | None]:
    """The tool's output, or why there is none. It runs in a session of its own: a Ctrl-C sent to the terminal's
    process group does not kill it halfway (grade, stopping, still judges the jobs whose GPU part is done;
    measured: a verdict made without the SASS the signal cut off); a Python caller's own KeyboardInterrupt
    still ends it (subprocess.run kills its child on any exception)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, errors="replace",
                              start_new_session=True)
    except subprocess.TimeoutExpired:
        return None, f"{Path(argv[0]).name} took more than {TIMEOUT_S:g} s"
    except OSError as exc:
        return None, f"{Path(argv[0]).name} could not start: {exc.strerror or exc}"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return None, f"{Path(argv[0]).name} failed on {Path(argv[-1]).name}: {said}"
    return done.stdout, None


def disassemble(path: Path, tool: str | None = None) -> Disassembly:
    """cuobjdump's SASS (and PTX, for __half vs __half2) of `path`, read into per-kernel records."""
    tool = tool or find_cuobjdump()
    if tool is None:
        return Disassembly(str(path), note=MISSING)
    if not path.is_file():
        return Disassembly(str(path), tool=tool, note=f"{path}: no such file to disassemble")
    text, why = _run(sass_argv(tool, path))
    if text is None:
        return Disassembly(str(path), tool=tool, note=why)
    kernels = parse(text)
    ptx, _ = _run(ptx_argv(tool, path))  # a file without PTX (a -cubin, code=sm_XX only): fp16 stays unnamed
    note = None if kernels else f"{path.name} holds no SASS (PTX only, or no device code)"
    return Disassembly(str(path), kernels, ptx_half_ops(ptx or ""), tool, note)
