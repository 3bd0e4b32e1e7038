"""The harness's own work on large host arrays, spread over a few threads (and a pinned staging buffer).

A course file of the mini-dnn era takes pageable host memory: at 10,000 images on ece408-fa20 its
conv1 output is 1 GB. The student's own copies of it (their `cudaMemcpy`) are left as the course made
them; what the harness does around each call is not the student's and need not be slow. Measured on an
H200 host (16 cores; `benchmarks/NOTES.md`, grade's per-call cost): filling 1 GB with NaN takes 141 ms on
one thread and 24 ms on eight; a pageable 1 GB host-to-device copy 134 ms, the same bytes copied into a
pinned buffer by eight threads and sent from there 49 ms; touching 1 GB of new pages 334 ms on one thread.

Every function here gives the same result as its one-line NumPy/CuPy form (`a.fill(v)`, `cp.asarray(a)`,
`np.array_equal(a, b, equal_nan=True)`), which it falls back to for small arrays, for arrays that are not
C-contiguous NumPy arrays, and for a CuPy without pinned memory (the tests' stand-in).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from profconv.run.user import gpushare

PARALLEL_FROM_BYTES = 32 << 20  # below this one thread is as fast as several (start-up of the tasks)
STAGING_BYTES = 128 << 20  # the pinned buffer a host-to-device copy goes through, a piece at a time
MAX_THREADS = 8  # a host's memory bandwidth is saturated by about this many copying threads

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_staging: dict[str, Any] = {}  # "buf": the pinned bytes (NumPy view), "mem": CuPy's pinned allocation


def threads() -> int:
    """How many threads the harness's host work uses: the CPUs this process may run on, at most 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, n))


def _executor() -> ThreadPoolExecutor:
    """The process's pool, made on first use (a forked grade child makes its own: threads do not survive fork)."""
    global _pool, _pool_pid
    with _lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool, _pool_pid = ThreadPoolExecutor(max_workers=threads(), thread_name_prefix="hostcopy"), os.getpid()
        return _pool


def _parallel(a: Any) -> bool:
    return (isinstance(a, np.ndarray) and a.flags.c_contiguous and a.nbytes >= PARALLEL_FROM_BYTES
            and threads() > 1)


def _pieces(n: int, k: int) -> list[tuple[int, int]]:
    step = -(-n // k)
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def _each(n: int, fn: Callable[[int, int], Any]) -> list[Any]:
    """fn(lo, hi) over `n` flat elements cut into one piece per thread; the pieces' results in order."""
    pieces = _pieces(n, threads())
    return list(_executor().map(lambda p: fn(*p), pieces))


def fill(a: Any, value: float) -> None:
    """`a.fill(value)` (also the first touch of new pages, which the kernel then faults in on several cores)."""
    if not _parallel(a):
        a.fill(value)
        return
    flat = a.reshape(-1)
    _each(flat.size, lambda lo, hi: flat[lo:hi].fill(value))


def copy_into(dst: np.ndarray, src: np.ndarray) -> None:
    """`np.copyto(dst, src)` for two C-contiguous arrays of one size and dtype."""
    if not (_parallel(src) and isinstance(dst, np.ndarray) and dst.flags.c_contiguous and dst.dtype == src.dtype
            and dst.size == src.size):
        np.copyto(dst, src.reshape(dst.shape))
        return
    d, s = dst.reshape(-1), src.reshape(-1)
    _each(s.size, lambda lo, hi: np.copyto(d[lo:hi], s[lo:hi]))


def equal(a: Any, b: Any) -> bool:
    """`np.array_equal(a, b, equal_nan=True)` for host arrays."""
    if a.shape != b.shape:
        return False
    if not (_parallel(a) and _parallel(b)):
        return bool(np.array_equal(a, b, equal_nan=True))
    fa, fb = a.reshape(-1), b.reshape(-1)
    return all(_each(fa.size, lambda lo, hi: bool(np.array_equal(fa[lo:hi], fb[lo:hi], equal_nan=True))))


def _pinned(cp: Any, nbytes: int) -> np.ndarray | None:
    """The process's pinned staging bytes (at least `nbytes`), or None when this CuPy has no pinned memory."""
    alloc = getattr(getattr(cp, "cuda", None), "alloc_pinned_memory", None)
    if alloc is None:
        return None
    with _lock:
        buf = _staging.get("buf")
        if buf is None or buf.nbytes < nbytes or _staging.get("pid") != os.getpid():
            mem = alloc(nbytes)
            _staging.update(mem=mem, buf=np.frombuffer(mem, dtype=np.uint8, count=nbytes), pid=os.getpid())
        return _staging["buf"]


def to_device(cp: Any, a: Any) -> Any:
    """`cp.asarray(a)` of a host array, a staging buffer's worth at a time: several threads copy a piece into
    pinned memory, then one copy sends it. CuPy's `set` copies asynchronously on the current stream (from
    pinned memory it really is asynchronous): the stream is synchronised before the buffer is written again."""
    if not isinstance(a, np.ndarray) or not _parallel(a):
        return cp.asarray(a)
    staging = _pinned(cp, min(STAGING_BYTES, a.nbytes))
    if staging is None:
        return cp.asarray(a)
    out = cp.empty(a.shape, dtype=a.dtype)
    src, dst = a.reshape(-1), out.reshape(-1)
    per = max(1, staging.nbytes // a.itemsize)
    view = staging[: per * a.itemsize].view(a.dtype)
    stream = cp.cuda.get_current_stream()
    for lo in range(0, src.size, per):
        hi = min(src.size, lo + per)
        copy_into(view[: hi - lo], src[lo:hi])
        dst[lo:hi].set(view[: hi - lo])
        stream.synchronize()
        gpushare.checkpoint()  # a piece is a step: a child of another job waiting to time goes first
    return out
