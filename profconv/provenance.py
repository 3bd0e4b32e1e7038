"""Provenance of a measurement: which code, which kernels, which GPU state, which profiler settings.

Every run and bench record carries a `provenance` object (schema below) so a number can be traced
back to the commit and kernel sources that produced it and to the state of the card around it:

{
  "code": {"commit": "40 hex" | null, "dirty": bool | null, "describe": str | null, "why": str | null},
  "kernels": {"sources": {"naive.cu": sha256 of the source as compiled (headers expanded), ...},
              "compiled": [{"file", "options": [...], "sha256"}]   (modules this process compiled)},
  "gpu": {"start": GpuState | {"why": ...}, "end": GpuState | {"why": ...}},
  "profiler": {...} | null   (the profiler and every setting it ran with; null without --profile)
}
GpuState = {"source": "nvidia-smi", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz",
            "temperature_c", "power_w", "power_limit_w", "pstate", "throttle_reasons"}

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


def _run(argv: list[str], cwd: Path | None = None, timeout: float = 10.0) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return -1, f"{type(exc).__name__}: {exc}"
    return p.returncode, (p.stdout if p.returncode == 0 else p.stderr).strip()


def source_root() -> Path:
    """The directory holding the profconv package (the repository when run from source)."""
    return Path(__file__).resolve().parents[1]


def git_state(root: Path | None = None) -> dict[str, Any]:
    """Commit and dirty flag of the repository profconv runs from; the reason when there is none."""
    root = root or source_root()
    if shutil.which("git") is None:
        return {"commit": None, "dirty": None, "describe": None, "why": "git is not installed"}
    rc, commit = _run(["git", "rev-parse", "HEAD"], root)
    if rc != 0:
        return {"commit": None, "dirty": None, "describe": None,
                "why": f"{root} is not a git checkout (installed package?)"}
    rc, status = _run(["git", "status", "--porcelain", "--untracked-files=no"], root)
    dirty = bool(status) if rc == 0 else None
    rc, describe = _run(["git", "describe", "--always", "--dirty"], root)
    return {"commit": commit, "dirty": dirty, "describe": describe if rc == 0 else None, "why": None}


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
        self.prov = Provenance(code=git_state())
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
