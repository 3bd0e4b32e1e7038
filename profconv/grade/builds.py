"""Student builds compiled on the CPU cores ahead of the GPU, kept in a build cache.

nvcc takes 5-20 s per course or host submission (more under load); on the GPU that time is idle. A
grade worker asks for each submission's build as soon as the class is planned: a pool of CPU threads
runs nvcc (one per core), and a job waits for its own build only when its turn on the GPU comes
before the build is done. A failed build is kept too: the child recompiles and reports the compiler's
error as the kernel's FAILED row, exactly as `profconv run --kernel` does.

The cache: `<cache>/builds/<key>/`, key = sha256 of the submission's files (its content digest), the
kernel's declaration (contract, flavour, defines, sweep, nvcc options) and the GPU architecture. Inside,
the same layout the kernel's child uses (contracts.UserKernel with `build_dir`): `<candidate>/libcourse.so`
for course files, `libhost<N>.so` for host kernels, each with the `.key` stamp that
build.compile_library checks -- the child finds the library built by the same nvcc command from the
same bytes and does not compile again. Device (NVRTC) and Python kernels need no build here (NVRTC
takes well under a second and CuPy keeps its own cache).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profconv.run.user.manifest import Declaration

NVCC_CONTRACTS = ("host", "course")


@dataclass(frozen=True)
class Built:
    where: Path  # the build directory the child gets
    seconds: float  # nvcc's time (0 when found in the cache)
    error: str | None = None  # the compiler's first error line, when it failed (the child reports it whole)
    compiled: bool = True  # False: every library was found in the cache, built before from the same bytes


def arch_of(compute_cap: str | None) -> str | None:
    """'9.0' -> 'sm_90' (nvidia-smi's compute_cap); None when unknown."""
    if not compute_cap or "." not in compute_cap:
        return None
    major, minor = compute_cap.strip().split(".", 1)
    return f"sm_{major}{minor}" if major.isdigit() and minor.isdigit() else None


def query_arch(index: str | None) -> str | None:
    """The architecture of GPU `index` from nvidia-smi (no CUDA context), or None."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    argv = [exe, "--query-gpu=compute_cap", "--format=csv,noheader"] + (["-i", index] if index else [])
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
    return arch_of(lines[0]) if out.returncode == 0 and lines else None


def build_key(digest: str, decl: Declaration, arch: str) -> str:
    """What a submission's build depends on (pure)."""
    doc = {"digest": digest, "name": decl.name, "contract": decl.contract, "flavour": decl.flavour,
           "defines": {k: str(v) for k, v in decl.defines.items()},
           "sweep": {k: [str(v) for v in vs] for k, vs in decl.sweep.items()},
           "options": list(decl.options), "arch": arch, "source": str(decl.source)}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:24]


def prebuild(decl: Declaration, where: Path, arch: str) -> None:
    """Compile every candidate of the kernel into `where` exactly as its child would (contracts.UserKernel:
    the same build functions, directories, defines and host-library tags); raises build.CompileError."""
    from profconv.run.user import build
    from profconv.run.user.contracts import cand_label

    assert decl.source is not None
    cands = decl.candidates() if decl.sweep else [_default(decl)]
    for n, cand in enumerate(cands):
        defines = {**decl.defines, **cand}
        if decl.contract == "course":
            assert decl.flavour is not None
            build.build_course(decl.source, decl.flavour, where / cand_label(cand), arch, defines, decl.options)
        else:
            build.build_host(decl.source, where, arch, defines, decl.options, str(n))


def _default(decl: Declaration) -> dict[str, Any]:
    from profconv.run.user.contracts import UserKernel

    return UserKernel(decl).default()


def disassemble_ahead(where: Path) -> None:
    """The SASS of every library built in `where`, read now on this build thread and kept beside it
    (profile.disassemble): the verdict after the kernel's GPU turn then reads it back instead of running
    cuobjdump. Without cuobjdump nothing is kept and the verdict says so, as before."""
    from profconv.profile.disassemble import disassemble, find_cuobjdump

    tool = find_cuobjdump()
    if tool is None:
        return
    for lib in sorted(where.rglob("*.so")):
        try:
            disassemble(lib, tool)
        except OSError:  # the verdict runs the tool itself
            continue


def _libraries(where: Path) -> dict[Path, int]:
    """The build directory's libraries and their modification times (what nvcc wrote last)."""
    return {p: p.stat().st_mtime_ns for p in where.rglob("*.so")} if where.is_dir() else {}


@dataclass(frozen=True)
class ClassBuild:
    """One kernel of a class built by `BuildCache.all`."""

    submission: str
    kernel: str
    built: Built

    @property
    def cached(self) -> bool:
        return not self.built.compiled


def declarations(items: list[tuple[str, str]], paths: bool = False):
    """Each (digest, path) submission's kernel declarations, in order: (digest, declaration), or with
    `paths` (digest, declaration, path); an unusable submission is skipped (its job says why)."""
    from profconv.run.user import manifest as user_manifest
    from profconv.run.variants import VARIANTS

    builtin = {v.name for v in VARIANTS}
    for digest, path in items:
        try:
            decls = user_manifest.load_many([path], None, builtin)
        except Exception:
            continue
        for d in decls:
            yield (digest, d, path) if paths else (digest, d)


class BuildCache:
    """nvcc builds on `workers` CPU threads, ahead of the jobs; `get` waits for one."""

    def __init__(self, root: Path, arch: str | None, workers: int) -> None:
        self.root, self.arch = root / "builds", arch
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="nvcc")
        self._futures: dict[str, Future] = {}
        self._lock = threading.Lock()

    def wanted(self, decl: Declaration) -> bool:
        return self.arch is not None and decl.contract in NVCC_CONTRACTS and decl.source is not None

    def submit(self, digest: str, decl: Declaration) -> Path | None:
        """Start the build of one kernel (at most once per key); its directory, or None when it needs none."""
        if not self.wanted(decl):
            return None
        assert self.arch is not None
        key = build_key(digest, decl, self.arch)
        where = self.root / key
        with self._lock:
            if key not in self._futures:
                self._futures[key] = self.pool.submit(self._build, decl, where, self.arch)
        return where

    def get(self, digest: str, decl: Declaration) -> Built | None:
        """The kernel's build (waiting for it when it is still running), or None when it needs none."""
        where = self.submit(digest, decl)
        if where is None:
            return None
        return self._futures[build_key(digest, decl, self.arch or "")].result()

    @staticmethod
    def _build(decl: Declaration, where: Path, arch: str) -> Built:
        from profconv.errors import ProfconvError
        from profconv.grade.bundle import locked

        t0 = time.monotonic()
        with locked(where.with_suffix(".lock")):
            before = _libraries(where)
            try:
                prebuild(decl, where, arch)
            except ProfconvError as exc:  # a compile error, nvcc missing: the child says it again, whole
                return Built(where, round(time.monotonic() - t0, 3), str(exc).splitlines()[0][:300] if str(exc) else "failed")
            seconds = round(time.monotonic() - t0, 3)
            compiled = _libraries(where) != before
            disassemble_ahead(where)
        return Built(where, seconds, compiled=compiled)

    def ahead(self, items: list[tuple[str, str]]) -> None:
        """Start the builds of these submissions ((digest, path) each), in order, from a thread of its own:
        their declarations are read there, so the jobs start at once; an unusable submission is skipped
        (its job says why)."""
        if self.arch is None:
            return

        def submit_all() -> None:
            for digest, decl in declarations(items):
                self.submit(digest, decl)

        threading.Thread(target=submit_all, daemon=True, name="grade-builds").start()

    def all(self, items: list[tuple[str, str]]) -> list[ClassBuild]:
        """Build these submissions now (`grade --build-only`), each kernel once, and wait for every build."""
        wanted = [(path, decl, self.submit(digest, decl)) for digest, decl, path in declarations(items, paths=True)]
        done: list[ClassBuild] = []
        for path, decl, where in wanted:
            if where is None:
                continue
            built = self._futures[where.name].result()  # the key is the directory's name
            done.append(ClassBuild(path, decl.name, built))
        return done

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
