"""SASS and PTX of a built kernel (a cubin, an object, a shared library, an executable) from
`cuobjdump`: the I/O edge of `profconv.analysis.sass`, which reads the text.

cuobjdump ships with the CUDA toolkit and as the pip wheel `nvidia-cuda-cuobjdump` (its binary under
site-packages/nvidia/cu*/bin/). Without it, `disassemble` says so in its note and returns no kernels:
the optimisations are then unknown, never guessed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
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
    """cuobjdump's SASS (and PTX, for __half vs __half2) of `path`, read into per-kernel records. Its output
    is kept beside the file, keyed by the file's bytes and the tool (`_kept`): cuobjdump -sass of a course
    library takes ~1-5 s of CPU (its disassembler's start-up), and a class's build is disassembled once on
    the build threads, ahead of the GPU, then read back by each verdict on it (grade, --runs N)."""
    tool = tool or find_cuobjdump()
    if tool is None:
        return Disassembly(str(path), note=MISSING)
    if not path.is_file():
        return Disassembly(str(path), tool=tool, note=f"{path}: no such file to disassemble")
    kept = _kept(path, tool)
    text, ptx = _read_kept(kept)
    if text is None:
        text, why = _run(sass_argv(tool, path))
        if text is None:
            return Disassembly(str(path), tool=tool, note=why)
        ptx, _ = _run(ptx_argv(tool, path))  # a file without PTX (a -cubin, code=sm_XX only): fp16 stays unnamed
        _keep(kept, text, ptx)
    kernels = parse(text)
    note = None if kernels else f"{path.name} holds no SASS (PTX only, or no device code)"
    return Disassembly(str(path), kernels, ptx_half_ops(ptx or ""), tool, note)


def _kept(path: Path, tool: str) -> Path:
    """Where the tool's output for this file's bytes is kept: beside it, named by a hash of the bytes and the
    tool (another build, or another cuobjdump, is another name)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    try:
        size = os.stat(tool).st_size
    except OSError:
        size = -1
    h.update(f"\0{tool}\0{size}".encode())
    return path.parent / f".{path.name}.{h.hexdigest()[:20]}.cuobjdump.json"


def _read_kept(kept: Path) -> tuple[str | None, str | None]:
    try:
        doc = json.loads(kept.read_text())
        return (doc["sass"], doc.get("ptx")) if isinstance(doc.get("sass"), str) else (None, None)
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def _keep(kept: Path, sass: str, ptx: str | None) -> None:
    """Written whole or not at all (a read-only build folder: the next verdict runs the tool again)."""
    tmp = kept.with_name(f"{kept.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"sass": sass, "ptx": ptx}))
        os.replace(tmp, kept)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
