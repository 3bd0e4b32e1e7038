"""CUDA through CuPy: availability, run-time compilation of kernels/*.cu, event timing, NVTX.

Nothing here compiles or touches the GPU at import time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from profconv.errors import GpuUnavailable


def cupy_or_none() -> Any | None:
    """CuPy if it imports and sees a CUDA device; None otherwise (the caller says what is skipped)."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return cupy
    except Exception:  # ImportError, CUDARuntimeError (no driver), …
        return None
    return None


def why_no_gpu() -> str:
    try:
        import cupy
    except ImportError:
        return "CuPy is not installed (pip install 'profconv[cuda13]' or '[cuda12]')"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"CuPy cannot reach a CUDA driver ({type(exc).__name__})"
    return "no CUDA device" if n == 0 else "CUDA is available"


def require_cupy() -> Any:
    cp = cupy_or_none()
    if cp is None:
        raise GpuUnavailable(f"GPU variants need CUDA and CuPy: {why_no_gpu()}")
    return cp


def _kernel_file(filename: str) -> str:
    try:
        return resources.files("profconv.kernels").joinpath(filename).read_text()
    except ModuleNotFoundError:
        return (Path(__file__).resolve().parents[2] / "kernels" / filename).read_text()


def kernel_source(filename: str) -> str:
    """kernels/<filename>: a package resource once installed, the repository folder when run from source.
    `#include "x.cuh"` of a file beside it is expanded in place, so the text NVRTC compiles (and CuPy's
    kernel cache is keyed on) contains the header: editing a header recompiles its kernels."""
    lines = []
    for line in _kernel_file(filename).splitlines():
        m = re.fullmatch(r'\s*#include "([\w.]+\.cuh)"\s*', line)
        lines.append(_kernel_file(m.group(1)) if m else line)
    return "\n".join(lines) + "\n"


class KernelCompileError(Exception):
    """A .cu file failed to compile; the message names the file and NVRTC's first error line."""


@cache
def module(filename: str, defines: tuple[tuple[str, int], ...] = ()) -> Any:
    """The compiled RawModule of kernels/<filename> with -D defines; compiled once per process."""
    cp = require_cupy()
    source = kernel_source(filename)
    options = ("-std=c++17",) + tuple(f"-D{k}={v}" for k, v in defines)
    mod = cp.RawModule(code=source, options=options)
    try:
        mod.compile()
    except cp.cuda.compiler.CompileException as exc:
        first = next((ln for ln in str(exc).splitlines() if "error" in ln), str(exc).splitlines()[0])
        raise KernelCompileError(f"kernels/{filename}: {first.strip()}") from None
    record_compiled(filename, options, source)
    return mod


def record_compiled(filename: str, options, source: str) -> None:
    """Note a module this process compiled (kernels/<file> or a user's source): provenance."""
    _compiled.append({"file": filename, "options": list(options),
                      "sha256": hashlib.sha256(source.encode()).hexdigest()})


_compiled: list[dict] = []


def compiled_modules() -> list[dict]:
    """Every module this process compiled: file, NVRTC options and sha256 of the compiled source (provenance)."""
    return [dict(m, options=list(m["options"])) for m in _compiled]


_zeros: dict[tuple[int, int, str], Any] = {}


def bias_or_zeros(cp, bias, m: int, dtype=None):
    """A layer without bias still hands our kernels a pointer: a zero vector, allocated once."""
    if bias is not None:
        return bias
    dtype = dtype or cp.float32
    key = (cp.cuda.Device().id, m, cp.dtype(dtype).char)
    if key not in _zeros:
        _zeros[key] = cp.zeros(m, dtype=dtype)
    return _zeros[key]


@dataclass(frozen=True)
class Timing:
    """Seconds of each timed repeat (after warm-up), and why the repeats stopped."""

    samples: list[float]
    stopped: str = "repeats"  # repeats (the fixed count) | stable (interval within target) | budget | max-repeats
    target: float | None = None  # the interval half-width aimed at, relative to the median

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    def as_dict(self) -> dict:
        """median/min/max/samples in seconds; ci_low_s/ci_high_s: the median's 95% interval (null
        under 6 samples), ci_rel its half-width over the median; stopped/target: the repeat rule."""
        from profconv.analysis.stats import CONFIDENCE, ci_rel, median_ci

        ci = median_ci(self.samples)
        return {"median_s": self.median, "min_s": self.min, "max_s": self.max, "samples_s": self.samples,
                "ci_low_s": ci[0] if ci else None, "ci_high_s": ci[1] if ci else None,
                "ci_rel": ci_rel(self.samples), "confidence": CONFIDENCE, "stopped": self.stopped,
                "target": self.target}


@dataclass(frozen=True)
class StopRule:
    """Stop-when-stable repeats: at least `min_repeat`, then on until the median's 95% interval is
    within ±`target` of it, `budget_s` seconds of timing have passed or `max_repeat` samples exist."""

    target: float | None = 0.01
    budget_s: float = 2.0
    max_repeat: int = 200

    def done(self, samples: list[float], min_repeat: int, elapsed: float) -> str | None:
        from profconv.analysis.stats import stable

        if len(samples) < min_repeat:
            return None
        if self.target is None:
            return "repeats"
        if stable(samples, self.target):
            return "stable"
        if elapsed >= self.budget_s:
            return "budget"
        if len(samples) >= self.max_repeat:
            return "max-repeats"
        return None


def time_gpu(cp: Any, fn: Callable[[], Any], repeat: int, warmup: int, rule: StopRule | None = None) -> Timing:
    """CUDA events around `fn`, device synchronised before and after, as the course's Op Time.
    `repeat` samples, or with `rule` at least `repeat` and on until the rule says stop."""
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    samples: list[float] = []
    t0 = time.perf_counter()
    while True:
        cp.cuda.Device().synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
        why = (rule.done(samples, repeat, time.perf_counter() - t0) if rule is not None
               else ("repeats" if len(samples) >= repeat else None))
        if why:
            return Timing(samples, why, rule.target if rule else None)


class L2Flush:
    """Evicts the L2 cache between samples (as Triton's do_bench and nvbench do): a memset of a
    buffer twice the L2's size, on the current stream, before the sample's start event."""

    def __init__(self, cp: Any) -> None:
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        self.l2_bytes = int(props.get("l2CacheSize", 0)) or None  # None: unknown, flush 256 MiB
        self.nbytes = 2 * self.l2_bytes if self.l2_bytes else 256 << 20
        self.buf = cp.empty(self.nbytes, dtype=cp.uint8)
        self.cp = cp

    def __call__(self) -> None:
        rt = self.cp.cuda.runtime
        rt.memsetAsync(self.buf.data.ptr, 0, self.nbytes, self.cp.cuda.get_current_stream().ptr)


def time_cpu(fn: Callable[[], Any], repeat: int) -> Timing:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return Timing(samples)


# NVTX binds to a tool (CUPTI, Nsight) once, at the first NVTX call of the process: was one there then?
_NVTX_FIRST_CALL: dict[str, bool] = {}


def nvtx_started_without_tool() -> bool:
    """True when this process made its first NVTX call with no tool injected (NVTX_INJECTION64_PATH unset):
    a profiler started later in the same process (CUPTI in a notebook's second run) never sees the ranges."""
    return _NVTX_FIRST_CALL.get("tool") is False


@contextlib.contextmanager
def nvtx_range(path: str) -> Iterator[None]:
    """Nested NVTX push/pop ranges in the `profconv` domain, one per part of `path`
    ('ece408-high/fused/conv1'), so Nsight tools show and filter the stack as that path
    (ncu: --nvtx-include 'profconv@ece408-high/fused/conv1/')."""
    try:
        import nvtx
    except ImportError:
        yield
        return
    _NVTX_FIRST_CALL.setdefault("tool", bool(os.environ.get("NVTX_INJECTION64_PATH")))
    with contextlib.ExitStack() as stack:
        for part in path.split("/"):
            stack.enter_context(nvtx.annotate(message=part, domain="profconv"))
        yield


def environment(cp: Any | None) -> dict:
    import platform

    import numpy

    from profconv import __version__

    env: dict[str, Any] = {
        "profconv_version": __version__,
        "python": platform.python_version(),
        "numpy_version": numpy.__version__,
        "platform": platform.platform(),
        "hostname": platform.node(),
        "gpu": None,
    }
    if cp is None:
        env["gpu_unavailable"] = why_no_gpu()
        return env
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"]
    env.update(
        gpu=name.decode() if isinstance(name, bytes) else name,
        compute_capability=f"{props['major']}.{props['minor']}",
        multiprocessors=props["multiProcessorCount"],
        memory_bytes=props["totalGlobalMem"],
        driver_version=cp.cuda.runtime.driverGetVersion(),
        runtime_version=cp.cuda.runtime.runtimeGetVersion(),
        cupy_version=cp.__version__,
    )
    try:
        import torch

        env["torch_version"] = str(torch.__version__)  # a TorchVersion (str subclass): plain str for the record
        env["cudnn_version"] = int(torch.backends.cudnn.version())
    except Exception:
        pass
    return env
