"""Provenance of a measurement: which code, which kernels, which GPU state, which profiler settings.

Every run and bench record carries a `provenance` object (schema below) so a number can be traced
back to the commit and kernel sources that produced it and to the state of the card around it:

{
  "code": {"commit": "40 hex" | null, "dirty": bool | null, "describe": str | null, "why": str | null,
           "source": "git" | "env" | null, "changed": [paths], "tree_sha256": "64 hex" | null,
           "tree_files": int | null},
  "kernels": {"sources": {"naive.cu": sha256 of the source as compiled (headers expanded), ...},
              "compiled": [{"file", "options": [...], "sha256"}]   (modules this process compiled)},
  "gpu": {"start": GpuState | {"why": ...}, "end": GpuState | {"why": ...}},
  "profiler": {...} | null   (the profiler and every setting it ran with; null without --profile)
}
GpuState = {"source": "nvidia-smi", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz",
            "temperature_c", "power_w", "power_limit_w", "pstate", "throttle_reasons"}

Which code: `tree_sha256` is always recorded — a hash of every file under profconv/ and kernels/
as they are on disk where the measurement ran (caches left out), the same as the shell's

    find profconv kernels -type f ! -path '*/__pycache__/*' ! -name '*.py[co]' | LC_ALL=C sort \
      | xargs sha256sum | sha256sum

so a copy of the tree (a GPU machine's, a container's) is identified whatever git says there. The
git commit is recorded only when it describes that tree: the source tree must be the root of its
git checkout (a copy placed inside another repository gets that repository's HEAD, which is not
its commit: recorded as unknown, with why), and `dirty` is true when a tracked file differs from
the commit or an untracked file lies under profconv/ or kernels/ (`changed` lists the first 20).
A caller who knows the commit of a copy (a script that copied a checkout) sets PROFCONV_GIT_COMMIT
(and PROFCONV_GIT_DIRTY=0/1); it is recorded with `source: "env"`, as the caller's word, not git's.

Pure parsing (`parse_smi`) is separate from the calls to git and nvidia-smi, which never raise:
what cannot be read is recorded with the reason, never invented.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from profconv.records.provenance import summary_line  # noqa: F401 (the one-line summary lives with the record)

SMI_FIELDS = ["clocks.sm", "clocks.mem", "clocks.max.sm", "temperature.gpu", "power.draw", "power.limit",
              "pstate", "clocks_throttle_reasons.active"]
SMI_KEYS = ["sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "temperature_c", "power_w", "power_limit_w",
            "pstate", "throttle_reasons"]


@dataclass
class Provenance:
    code: dict[str, Any] = field(default_factory=dict)
    kernels: dict[str, Any] = field(default_factory=dict)
    gpu: dict[str, Any] = field(default_factory=dict)
    profiler: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _run(argv: list[str], cwd: Path | None = None, timeout: float = 10.0, strip: bool = True) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return -1, f"{type(exc).__name__}: {exc}"
    text = p.stdout if p.returncode == 0 else p.stderr
    return p.returncode, text.strip() if strip else text


def source_root() -> Path:
    """The directory holding the profconv package (the repository when run from source)."""
    return Path(__file__).resolve().parents[1]


TREE_DIRS = ("profconv", "kernels")
ENV_COMMIT, ENV_DIRTY = "PROFCONV_GIT_COMMIT", "PROFCONV_GIT_DIRTY"


def tree_files(root: Path, dirs: tuple[str, ...] = TREE_DIRS) -> list[str]:
    """The files the tree hash covers: under `dirs` of `root`, caches left out, sorted bytewise."""
    out = []
    for d in dirs:
        base = root / d
        if not base.is_dir():
            continue
        for f in base.rglob("*"):
            rel = f.relative_to(root)
            if f.is_file() and not f.is_symlink() and "__pycache__" not in rel.parts and f.suffix not in (".pyc", ".pyo"):
                out.append(rel.as_posix())
    return sorted(out, key=lambda x: x.encode())


def tree_hash(root: Path | None = None, dirs: tuple[str, ...] = TREE_DIRS) -> dict[str, Any]:
    """sha256 of `sha256sum`'s listing of the source files (see the module doc) and how many there are."""
    root = root or source_root()
    files = tree_files(root, dirs)
    if not files:
        return {"tree_sha256": None, "tree_files": 0}
    listing = "".join(f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}\n" for f in files)
    return {"tree_sha256": sha256_text(listing), "tree_files": len(files)}


def _env_commit(environ: dict[str, str]) -> dict[str, Any] | None:
    value = environ.get(ENV_COMMIT, "").strip()
    if not value:
        return None
    if not (7 <= len(value) <= 40 and all(c in "0123456789abcdef" for c in value.lower())):
        return {"commit": None, "dirty": None, "describe": None, "source": "env",
                "why": f"{ENV_COMMIT}={value[:60]!r} is not a commit hash"}
    flag = environ.get(ENV_DIRTY, "").strip().lower()
    dirty = True if flag in ("1", "true", "yes") else False if flag in ("0", "false", "no") else None
    return {"commit": value.lower(), "dirty": dirty, "describe": None, "source": "env",
            "why": f"given by the caller ({ENV_COMMIT}), not read from git here"}


def git_state(root: Path | None = None, environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Commit and dirty flag of the source tree profconv runs from, only where they describe it; the
    reason when they are unknown (see the module doc). `environ` defaults to os.environ."""
    import os

    root = (root or source_root()).resolve()
    given = _env_commit(dict(os.environ) if environ is None else environ)
    if given is not None:
        return {**given, "changed": []}
    unknown: dict[str, Any] = {"commit": None, "dirty": None, "describe": None, "source": None, "changed": []}
    if shutil.which("git") is None:
        return {**unknown, "why": "git is not installed"}
    rc, top = _run(["git", "rev-parse", "--show-toplevel"], root)
    if rc != 0:
        return {**unknown, "why": f"{root} is not a git checkout (installed package or a copy?)"}
    if Path(top).resolve() != root:
        return {**unknown, "why": f"{root} lies inside the git checkout {top}, whose commit is not this tree's "
                                  f"(a copy?); set {ENV_COMMIT} to record one"}
    rc, commit = _run(["git", "rev-parse", "HEAD"], root)
    if rc != 0:
        return {**unknown, "why": f"git rev-parse HEAD failed: {commit.splitlines()[0] if commit else rc}"}
    rc, status = _run(["git", "status", "--porcelain", "--untracked-files=all"], root, strip=False)
    changed: list[str] | None = None
    if rc == 0:
        changed = []
        for line in filter(None, status.splitlines()):
            code, path = line[:2], line[3:].split(" -> ")[-1].strip('"')
            if code == "??" and not path.startswith(tuple(d + "/" for d in TREE_DIRS)):
                continue  # an untracked file outside the source tree does not change what ran
            changed.append(path)
    rc, describe = _run(["git", "describe", "--always", "--dirty"], root)
    return {"commit": commit, "dirty": None if changed is None else bool(changed),
            "describe": describe if rc == 0 else None, "source": "git", "changed": (changed or [])[:20],
            "why": None if changed is not None else "git status failed: dirty flag unknown"}


def code_state(root: Path | None = None, environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The `code` part of provenance: the tree hash, always, and the commit where it is known."""
    root = root or source_root()
    return {**git_state(root, environ), **tree_hash(root)}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def kernel_sources() -> dict[str, str]:
    """sha256 of every kernels/*.cu as NVRTC compiles it (its #include "x.cuh" expanded)."""
    from importlib import resources

    from profconv.run.gpu import kernel_source

    try:
        names = sorted(p.name for p in resources.files("profconv.kernels").iterdir() if p.name.endswith(".cu"))
    except ModuleNotFoundError:
        names = sorted(p.name for p in (source_root() / "kernels").glob("*.cu"))
    return {n: sha256_text(kernel_source(n)) for n in names}


def kernels_state() -> dict[str, Any]:
    from profconv.run.gpu import compiled_modules

    return {"sources": kernel_sources(), "compiled": compiled_modules()}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "[N/A]", "[Not Supported]"


def parse_smi(line: str) -> dict[str, Any]:
    """One line of `nvidia-smi --query-gpu=<SMI_FIELDS> --format=csv,noheader,nounits`."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != len(SMI_FIELDS):
        return {"why": f"nvidia-smi printed {len(parts)} fields, expected {len(SMI_FIELDS)}: {line.strip()[:80]!r}"}
    out: dict[str, Any] = {"source": "nvidia-smi"}
    for key, value in zip(SMI_KEYS, parts):
        out[key] = value if key in ("pstate", "throttle_reasons") else _number(value)
    return out


def gpu_state(index: int | str = 0) -> dict[str, Any]:
    """Clocks, temperature and power of GPU `index` now (read only: nothing is changed). Drivers that
    renamed the throttle field (clocks_event_reasons) are asked again under the new name."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return {"why": "nvidia-smi is not on PATH"}
    for fields in (SMI_FIELDS, [*SMI_FIELDS[:-1], "clocks_event_reasons.active"]):
        rc, text = _run([smi, f"--id={index}", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"])
        if rc == 0 and text:
            return parse_smi(text.splitlines()[0])
    return {"why": f"nvidia-smi failed: {text.splitlines()[0] if text else f'exit {rc}'}"}


def device_index(cp: Any | None) -> int | str:
    """How nvidia-smi names the device CuPy uses: its PCI bus id (CUDA's and nvidia-smi's device
    orders can differ), else CUDA's ordinal."""
    if cp is None:
        return 0
    try:
        return str(cp.cuda.runtime.deviceGetPCIBusId(cp.cuda.Device().id))
    except Exception:
        try:
            return int(cp.cuda.Device().id)
        except Exception:
            return 0


class Recorder:
    """Start/end around a measurement: `start()` before the work, `finish(profiler)` after it."""

    def __init__(self, cp: Any | None) -> None:
        self.cp = cp
        self.index = device_index(cp)
        self.prov = Provenance(code=code_state())
        self._gpu_start: dict[str, Any] = {"why": "no GPU"} if cp is None else {}

    def start(self) -> dict[str, Any]:
        if self.cp is not None:
            self._gpu_start = gpu_state(self.index)
        self.prov.gpu = {"start": self._gpu_start, "end": None}
        return self.prov.to_dict()

    def finish(self, profiler: dict[str, Any] | None = None) -> dict[str, Any]:
        self.prov.kernels = kernels_state()
        self.prov.gpu = {"start": self._gpu_start,
                         "end": gpu_state(self.index) if self.cp is not None else {"why": "no GPU"}}
        self.prov.profiler = profiler
        return self.prov.to_dict()
