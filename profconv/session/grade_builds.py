"""`profconv grade --build-only`: a class's nvcc builds made into the grade cache on this host's CPU cores.

A course builds its class on a login node or a CPU partition before the GPU jobs start (or the night
before): the grade workers then find every library built from the same bytes, flags and architecture
(grade.builds: the cache key) and spend no GPU time waiting for nvcc. Nothing runs on a GPU; the
architecture comes from `--arch` (sm_90) or, where there is one, this host's first GPU (nvidia-smi).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from profconv.errors import GpuUnavailable, InputError
from profconv.grade.builds import BuildCache, ClassBuild, query_arch
from profconv.grade.pool import poolable
from profconv.session.grade import GradeRequest, GradeSession, cache_dir

ARCH = re.compile(r"sm_\d{2,3}[a-z]?")


@dataclass(frozen=True)
class ClassBuilds:
    """What `grade --build-only` did: each kernel's build, the cache, the architecture and the wall time."""

    arch: str
    cache: Path
    workers: int
    seconds: float
    builds: list[ClassBuild]

    def summary(self) -> dict:
        return {"arch": self.arch, "cache": str(self.cache), "workers": self.workers, "seconds": self.seconds,
                **self.counts(), "nvcc_seconds": round(sum(b.built.seconds for b in self.builds if not b.cached), 3),
                "builds": [{"submission": b.submission, "kernel": b.kernel, "cached": b.cached,
                            "seconds": b.built.seconds, "error": b.built.error, "where": str(b.built.where)}
                           for b in self.builds]}

    def counts(self) -> dict[str, int]:
        failed = sum(b.built.error is not None for b in self.builds)
        cached = sum(b.cached for b in self.builds)
        return {"built": len(self.builds) - failed - cached, "cached": cached, "failed": failed}


def resolve_arch(given: str | None, gpus: str | None) -> str:
    """--arch (checked), else the first GPU's architecture here; a usage error when neither is known."""
    if given is not None:
        if not ARCH.fullmatch(given.strip()):
            raise InputError(f"--arch takes a GPU architecture such as sm_90 or sm_80, not {given!r}")
        return given.strip()
    found = query_arch(gpus.split(",")[0].strip() if gpus else None)
    if found is None:
        raise GpuUnavailable("grade --build-only needs the GPUs' architecture: no GPU here (nvidia-smi), "
                             "so give it, e.g. --arch sm_90 for an H100/H200")
    return found


def build_class(request: GradeRequest, arch: str | None, workers: int | None = None) -> ClassBuilds:
    """Every nvcc-built kernel of the class's jobs into the cache (each distinct one once); waits for all."""
    from profconv.run.user.build import find_nvcc

    chosen = resolve_arch(arch, request.gpus)
    find_nvcc()  # one clear line when nvcc is missing, not a failed build per kernel
    plan = GradeSession(request).plan()
    items = list(dict.fromkeys((s.digest, s.path) for s in plan.specs if poolable(s)))
    threads = workers or max(1, os.cpu_count() or 1)
    cache = BuildCache(cache_dir(request.cache), chosen, threads)
    t0 = time.monotonic()
    try:
        builds = cache.all(items)
    finally:
        cache.close()
    return ClassBuilds(chosen, cache.root, threads, round(time.monotonic() - t0, 3), builds)
