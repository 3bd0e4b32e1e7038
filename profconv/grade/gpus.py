"""What GPUs this host has, from nvidia-smi (no CUDA context is opened: the jobs own the GPUs)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    index: str  # what CUDA_VISIBLE_DEVICES takes
    name: str  # "NVIDIA H100 80GB HBM3"
    driver: str | None = None


def parse_query(text: str) -> list[Gpu]:
    """`nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader` -> Gpus."""
    gpus = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0].isdigit():
            gpus.append(Gpu(parts[0], parts[1], parts[2] if len(parts) > 2 and parts[2] else None))
    return gpus


def query(ids: str | None = None, timeout: float = 15.0) -> list[Gpu]:
    """The GPUs nvidia-smi sees ([] without nvidia-smi or a driver); `ids` limits it (e.g. "0,1")."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    argv = [exe, "--query-gpu=index,name,driver_version", "--format=csv,noheader"]
    if ids:
        argv += ["-i", ids]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_query(out.stdout) if out.returncode == 0 else []


def matches(gpu_type: str | None, name: str | None) -> bool:
    """Whether a GPU called `name` is of the requested type ("H100" matches "NVIDIA H100 80GB HBM3")."""
    if not gpu_type:
        return True
    return bool(name) and gpu_type.replace("-", " ").lower() in str(name).replace("-", " ").lower()


def uuid(index: str | None, timeout: float = 15.0) -> str | None:
    """GPU `index`'s UUID from nvidia-smi (what a model bundle's times belong to), or None."""
    exe = shutil.which("nvidia-smi")
    if exe is None or not index:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=uuid", "--format=csv,noheader", "-i", index], capture_output=True,
                             text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
    return lines[0] if out.returncode == 0 and lines and lines[0].startswith("GPU-") else None


def safe_type(gpu_type: str) -> str:
    """A GPU type as a Slurm gres type (`h100`, `a100-80gb`): lower case letters, digits, '-' and '_' only."""
    import re

    from profconv.errors import InputError

    text = gpu_type.strip().lower()
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]{0,63}", text):
        raise InputError(f"GPU type {gpu_type!r} cannot be a Slurm gres type (letters, digits, '-', '_', '.')")
    return text
