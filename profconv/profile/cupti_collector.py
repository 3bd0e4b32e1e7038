"""In-process collection of CUPTI activity records (cupti-python), for `profconv run --profile cupti`.

Records are copied into plain records inside the buffer callback (CUPTI reuses its buffers).
"""

from __future__ import annotations

import gc
import json
import os
import re
from typing import Any

from profconv.errors import GpuUnavailable
from profconv.profile.activity import ApiCall, GpuActivity, Range, Records, memcpy_name
from profconv.profile.cupti_buffers import Decoded, RawBuffers, layouts_of

OBJECTS_ENV = "PROFCONV_CUPTI_OBJECTS"  # set: cupti-python's record objects, not the columnar read (A/B)

_VERSION_SUFFIX = re.compile(r"_v\d+$")
# the runtime and driver calls that put work on the GPU (its kernels, copies, memsets: what a GPU record's
# correlation id points back to); every other call is noise to attribution (CuPy alone makes ~30 of them per
# array operation: cudaGetDevice, cudaGetLastError, ...)
WORK_APIS = re.compile(r"Launch|Memcpy|Memset|MemPrefetch|Graph(Exec|Upload)", re.I)
_CBIDS = range(1, 1200)  # CUPTI 13's runtime (522) and driver (806) callback ids lie below 1,200


def cupti_library() -> str | None:
    """Path of the libcupti this process loaded (cupti-python links it), from /proc/self/maps."""
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                if "libcupti" in line:
                    return line.split()[-1]
    except OSError:
        return None
    return None


def enable_nvtx_injection() -> None:
    """NVTX reaches CUPTI only through its injection hook: point NVTX at libcupti before the first
    NVTX call of the process (a profiler that already injected itself keeps its setting)."""
    path = cupti_library()
    if path and not os.environ.get("NVTX_INJECTION64_PATH"):
        os.environ["NVTX_INJECTION64_PATH"] = path


def load_cupti() -> Any:
    try:
        from cupti import cupti
    except ImportError:
        raise GpuUnavailable(
            "--profile cupti needs the cupti-python package matching the CUDA major version "
            "(pip install 'cupti-python==13.*' for CUDA 13)"
        ) from None
    return cupti


class CuptiCollector:
    """Context manager: kernels, memcpy/memset, runtime and driver API calls, NVTX ranges.

    `api_windows`: API calls only while `api_window(True)` holds (a user kernel's child: the spans of its
    calls, run/user/calls.watch_calls), the GPU activity and ranges throughout. Measured on an H200 (a
    mini-dnn file, ece408-fa20, 10,000 images): the whole child recorded 364,710 API calls, nearly all
    CuPy's own (`cudaGetDevice` on every array operation of the harness's checks), and turning them into
    records took 6 s at its end; the judge only places work launched inside the calls' ranges.
    `work_apis` (grade's children): API calls throughout, but only those that launch GPU work (WORK_APIS) --
    the records attribution reads, at a fraction of the cost of either."""

    BUFFER_BYTES = 8 << 20
    # a kernel's child: records turned into Python objects when a buffer fills hold the GIL (and the GPU's
    # shared lock) for seconds -- a file launching a kernel per image made ~400,000 of them and steps of
    # 4-8 s (s10e); in one large buffer they are read at the flush, after the GPU is given back
    CHILD_BUFFER_BYTES = 256 << 20

    def __init__(self, api_windows: bool = False, work_apis: bool = False, buffer_bytes: int = BUFFER_BYTES) -> None:
        self.cupti = load_cupti()
        self.buffer_bytes = buffer_bytes
        c = self.cupti
        self.api_kinds = [c.ActivityKind.RUNTIME, c.ActivityKind.DRIVER]
        self.kinds = [c.ActivityKind.CONCURRENT_KERNEL, c.ActivityKind.MEMCPY, c.ActivityKind.MEMSET,
                      c.ActivityKind.MARKER]
        self.api_windows = api_windows
        self.work_apis = work_apis and not api_windows
        self.api: list[ApiCall] = []
        self.gpu: list[GpuActivity] = []
        self._markers: dict[int, list] = {}
        self._names: dict[tuple[int, int], str] = {}
        self.raw: RawBuffers | None = None

    def __enter__(self) -> CuptiCollector:
        c = self.cupti
        self.raw = None if os.environ.get(OBJECTS_ENV) else self._raw_buffers()
        if self.raw is None:
            c.activity_register_callbacks(lambda: (self.buffer_bytes, 0), self._completed)
        for k in self.kinds + ([] if self.api_windows else self.api_kinds):
            c.activity_enable(k)
        if self.work_apis:
            self._only_work_apis()
        # after the first CUPTI calls: cupti-python loads libcupti on first use, so in a fresh process (a user
        # kernel's child, a run without PyTorch, which loads it too) it is only now in /proc/self/maps
        enable_nvtx_injection()
        return self

    def _raw_buffers(self) -> RawBuffers | None:
        """The buffers read as columns (cupti_buffers), registered with libcupti; None where that cannot be
        (no libcupti mapped, a cupti-python without the record dtypes): cupti-python's objects then, as before."""
        c = self.cupti
        try:
            c.get_timestamp()  # cupti-python loads libcupti on its first call
            library = cupti_library()
            if library is None:
                return None
            raw = RawBuffers(library, self.buffer_bytes, layouts_of(c), self._layer_name,
                             int(c.ActivityObjectKind.THREAD), self._decoded)
            raw.register()
        except Exception:  # noqa: BLE001 -- any failure here leaves the proven path
            return None
        return raw

    def _layer_name(self, layer: str, cbid: int) -> str:
        c = self.cupti
        return self._api_name(c.CallbackDomain.RUNTIME_API if layer == "runtime" else c.CallbackDomain.DRIVER_API,
                              cbid)

    def _decoded(self, d: Decoded) -> None:
        self.gpu.extend(d.gpu)
        self.api.extend(d.api)
        for mid, timestamp, name, domain, thread in d.markers:
            self._markers.setdefault(mid, []).append((timestamp, name, domain, thread))

    @property
    def failed(self) -> str | None:
        """Why some records are missing (a buffer that could not be read), or None: all of them are here."""
        if self.raw is None or not self.raw.errors:
            return None
        return f"{len(self.raw.errors)} CUPTI activity buffer(s) could not be read ({self.raw.errors[0]})"

    def _only_work_apis(self) -> None:
        """Records of the calls that launch GPU work only (`work_apis`), switched per call id once (~3 ms):
        what attribution needs, without a window per call. Measured on an H200 (window s4c): a window's two
        switches cost ~24 ms inside a user kernel's child, ~1.3 s a grade job; CuPy's 50 array operations
        made 4,124 API records (134 ms to flush) and 152 with this filter (42 ms)."""
        c = self.cupti
        for domain, switch in ((c.CallbackDomain.RUNTIME_API, c.activity_enable_runtime_api),
                               (c.CallbackDomain.DRIVER_API, c.activity_enable_driver_api)):
            for cbid in _CBIDS:
                try:
                    name = self._api_name(domain, cbid)
                    if name and "INVALID" not in name.upper() and not WORK_APIS.search(name):
                        switch(cbid, 0)
                except Exception:  # not a call id of this CUPTI
                    continue

    def api_window(self, on: bool) -> None:
        """API calls recorded from now on (True) or no longer (False): `api_windows` collection."""
        for k in self.api_kinds:
            (self.cupti.activity_enable if on else self.cupti.activity_disable)(k)

    def __exit__(self, *exc: object) -> None:
        c = self.cupti
        was = gc.isenabled()
        gc.disable()  # the flush makes a record object per activity, all kept: collections are pure cost
        try:  # (600,000 records' objects: 3.4-3.7 s with the collector on, 1.3-1.4 s off, on this VM)
            c.activity_flush_all(1)
        finally:
            if was:
                gc.enable()
        for k in self.kinds + self.api_kinds:
            c.activity_disable(k)

    def _api_name(self, domain: int, cbid: int) -> str:
        key = (domain, cbid)
        if key not in self._names:
            raw = self.cupti.get_callback_name(domain, cbid)
            name = raw.decode() if isinstance(raw, bytes) else str(raw)
            self._names[key] = _VERSION_SUFFIX.sub("", name)
        return self._names[key]

    def _completed(self, activities: list) -> None:
        c = self.cupti
        for a in activities:
            k = a.kind
            if k == c.ActivityKind.CONCURRENT_KERNEL:
                self.gpu.append(GpuActivity(a.name, a.start, a.end, a.correlation_id, a.stream_id, "kernel"))
            elif k == c.ActivityKind.MEMCPY:
                self.gpu.append(GpuActivity(memcpy_name(a.copy_kind), a.start, a.end, a.correlation_id,
                                            a.stream_id, "memcpy", a.bytes))
            elif k == c.ActivityKind.MEMSET:
                self.gpu.append(GpuActivity("[CUDA memset]", a.start, a.end, a.correlation_id, a.stream_id,
                                            "memset", a.bytes))
            elif k in (c.ActivityKind.RUNTIME, c.ActivityKind.DRIVER):
                domain = c.CallbackDomain.RUNTIME_API if k == c.ActivityKind.RUNTIME else c.CallbackDomain.DRIVER_API
                self.api.append(ApiCall(self._api_name(domain, a.cbid), a.start, a.end, a.correlation_id,
                                        a.thread_id, "runtime" if k == c.ActivityKind.RUNTIME else "driver"))
            elif k == c.ActivityKind.MARKER:
                thread = a.object_id.pt.thread_id if a.object_kind == c.ActivityObjectKind.THREAD else 0
                self._markers.setdefault(a.id, []).append((a.timestamp, a.name or "", a.domain or "", thread))

    def to_json(self) -> str:
        """The records as a child hands them to its parent (`activity.Records.to_dict`), or the error that
        says some are missing: a verdict never attributes work from part of them."""
        if self.failed:
            return json.dumps({"error": self.failed})
        return json.dumps(Records(self.api, self.gpu, self.ranges()).to_dict())

    def ranges(self) -> list[Range]:
        """Push/pop ranges: the two marker records of one id are its start and end."""
        out = []
        for recs in self._markers.values():
            if len(recs) < 2:
                continue
            recs.sort()
            name = next((r[1] for r in recs if r[1]), "")
            domain = next((r[2] for r in recs if r[2]), "")
            out.append(Range(name, domain, recs[0][0], recs[-1][0], recs[0][3]))
        return out
