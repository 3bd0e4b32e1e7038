"""CUDA through CuPy: availability, run-time compilation of kernels/*.cu, event timing, NVTX.

Nothing here compiles or touches the GPU at import time.
"""

from __future__ import annotations

import contextlib
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
    return mod


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
    """Seconds of each timed repeat (after warm-up)."""

    samples: list[float]

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
        return {"median_s": self.median, "min_s": self.min, "max_s": self.max, "samples_s": self.samples}


def time_gpu(cp: Any, fn: Callable[[], Any], repeat: int, warmup: int) -> Timing:
    """CUDA events around `fn`, device synchronised before and after, as the course's Op Time."""
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    samples = []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return Timing(samples)


def time_cpu(fn: Callable[[], Any], repeat: int) -> Timing:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return Timing(samples)


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

        env["torch_version"] = torch.__version__
        env["cudnn_version"] = torch.backends.cudnn.version()
    except Exception:
        pass
    return env
