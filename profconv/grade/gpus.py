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
    memory_mib: int | None = None  # its memory (nvidia-smi memory.total); None when not known


JOB_MIB = 13 * 1024  # GPU memory a job at once by default: ten 10,000-image course jobs held at most 83 GB in
# all on an H200 (s12c; 8.3 GB a job), one child alone at most 19.3 GB (s7c)
# measured on one H200 of a 16-core host, the whole class of 100 real course files, builds made first, no
# --previous (docs/grade.md, twelfth session): eight 306.4 s (s12b), ten 293.8 s (s12c)
MOST_BY_DEFAULT = 10
CORES_PER_JOB = 1.5  # host cores a job at once by default (ten jobs kept 6.2 of 16 cores busy on average, s12c)


def jobs_per_gpu(gpu: Gpu, asked: int = 0, cores: int | None = None) -> int:
    """How many jobs run at once on `gpu`: `asked` (--jobs-per-gpu), else (0) one per 13 GiB of its memory and
    per 1.5 of the host's `cores` for this GPU, at most ten; one on an unknown GPU."""
    if asked > 0:
        return asked
    if gpu.memory_mib is None:
        return 1
    n = min(MOST_BY_DEFAULT, gpu.memory_mib // JOB_MIB)
    if cores is not None:
        n = min(n, int(cores / CORES_PER_JOB))
    return max(1, n)


def check_lock_folder(gpu_id: str = "check") -> None:
    """The GPU lock files can be made (the folder of `lock_path`): else one clear error before any job runs,
    not every job's child failing on it."""
    import os
    from pathlib import Path

    from profconv.errors import InputError

    path = Path(lock_path(gpu_id))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o666))
    except OSError as exc:
        raise InputError(f"cannot write the GPU lock files in {path.parent} ({exc.strerror or exc}): set "
                         "$PROFCONV_GPU_LOCKS to a writable folder on this host") from None


def lock_path(gpu_id: str) -> str:
    """The lock file through which every grade child of this user on GPU `gpu_id` (its UUID, else its index)
    shares it (run.user.gpushare): in $PROFCONV_GPU_LOCKS, else a folder of this user's in the host's
    temporary folder (another user's folder there would not be writable) -- a local folder, never a shared
    file system (flock there may not reach other hosts, nor need to)."""
    import os
    import re
    import tempfile

    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", gpu_id)[:100]
    user = os.getuid() if hasattr(os, "getuid") else 0
    folder = os.environ.get("PROFCONV_GPU_LOCKS") or f"{tempfile.gettempdir()}/profconv-gpu-locks-{user}"
    return f"{folder}/{safe}.lock"


def parse_query(text: str) -> list[Gpu]:
    """`nvidia-smi --query-gpu=index,name,driver_version[,memory.total] --format=csv,noheader` -> Gpus."""
    gpus = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0].isdigit():
            mib = parts[3].split()[0] if len(parts) > 3 and parts[3] else ""
            gpus.append(Gpu(parts[0], parts[1], parts[2] if len(parts) > 2 and parts[2] else None,
                            int(mib) if mib.isdigit() else None))
    return gpus


def query(ids: str | None = None, timeout: float = 15.0) -> list[Gpu]:
    """The GPUs nvidia-smi sees ([] without nvidia-smi or a driver); `ids` limits it (e.g. "0,1")."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    argv = [exe, "--query-gpu=index,name,driver_version,memory.total", "--format=csv,noheader"]
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
