"""CUPTI's activity buffers read as columns: the records' fields gathered with NumPy from the raw bytes, at the
offsets cupti-python's own record dtypes give, instead of one cupti-python object a record.

Why: a grade child whose kernel is launched once an image made ~800,000 records; cupti-python's callback builds an
object for each (a NumPy record, its fields read one by one) and the flush took 23-39 s on an H200 host
(window s11a), the longest part of a job -- and, started late, of a whole class's night. Here the buffers are
registered with libcupti through ctypes; a completed buffer's records are walked with
`cuptiActivityGetNextRecord` (libcupti's own walk: no record size is assumed) and only their offsets kept; the
fields of each kind are then read for all records of that kind at once.

`decode` is pure (bytes and offsets in, typed records out) and tested on the CPU with buffers made from the same
dtypes; `RawBuffers` is the I/O edge (libcupti, ctypes) and only runs with a GPU.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np

from profconv.profile.activity import ApiCall, GpuActivity, memcpy_name

Marker = tuple[int, int, str, str, int]  # id, timestamp, name, domain, thread id


@dataclass(frozen=True)
class Layouts:
    """Where the fields this module reads lie in each record kind (byte offset, NumPy type), from the record
    dtypes of the cupti-python that loaded this libcupti: the struct versions that CUPTI writes."""

    kinds: dict[int, str]  # ActivityKind value -> kernel | memcpy | memset | runtime | driver | marker
    fields: dict[str, dict[str, tuple[int, np.dtype]]]  # kind's name -> field -> (offset, type)


def _field(dtype: np.dtype, path: str) -> tuple[int, np.dtype]:
    """A (nested) field's byte offset in a record and its type: 'object_id.pt.thread_id'."""
    offset = 0
    for part in path.split("."):
        sub, at = dtype.fields[part][:2]
        offset, dtype = offset + at, sub
    return offset, dtype


WANTED = {  # record (cupti-python's activity_<name>N_dtype) -> the fields read
    "kernel": ("start", "end", "correlation_id", "stream_id", "name"),
    "memcpy": ("start", "end", "correlation_id", "stream_id", "bytes", "copy_kind"),
    "memset": ("start", "end", "correlation_id", "stream_id", "bytes"),
    "api": ("start", "end", "correlation_id", "thread_id", "cbid"),
    "marker": ("timestamp", "id", "name", "domain", "object_kind", "object_id.pt.thread_id"),
}


def _newest(module: Any, stem: str) -> np.dtype:
    """cupti-python's dtype of the newest struct version of a record: activity_kernel10_dtype, ..."""
    found = []
    for name in dir(module):
        m = re.fullmatch(rf"activity_{stem}(\d*)_dtype", name)
        if m:
            found.append((int(m.group(1) or 0), getattr(module, name)))
    if not found:
        raise LookupError(f"cupti-python has no activity_{stem}*_dtype")
    return max(found, key=lambda f: f[0])[1]


def layouts_of(cupti: Any) -> Layouts:
    """The layouts of this cupti-python (its `cupti` module): the kinds a CuptiCollector enables."""
    k = cupti.ActivityKind
    kinds = {int(k.CONCURRENT_KERNEL): "kernel", int(k.MEMCPY): "memcpy", int(k.MEMSET): "memset",
             int(k.RUNTIME): "runtime", int(k.DRIVER): "driver", int(k.MARKER): "marker"}
    fields = {}
    for what, names in WANTED.items():
        dtype = _newest(cupti, what)
        fields[what] = {n: _field(dtype, n) for n in names}
    return Layouts(kinds, fields)


def _column(buf: np.ndarray, offsets: np.ndarray, at: tuple[int, np.dtype]) -> np.ndarray:
    """One field of every record at `offsets`: its bytes gathered, then read as its type."""
    pos, dtype = at
    dtype = np.dtype(dtype)
    idx = (offsets + pos)[:, None] + np.arange(dtype.itemsize)
    return buf[idx].view(dtype).ravel()


def _strings(pointers: np.ndarray, read: Callable[[int], str]) -> list[str]:
    """C strings by their pointers (CUPTI shares one name across a kernel's records): each read once."""
    unique, back = np.unique(pointers, return_inverse=True)
    names = [read(int(p)) if p else "" for p in unique]
    return [names[i] for i in back.ravel().tolist()]


def c_string(pointer: int) -> str:
    return ctypes.string_at(pointer).decode("utf-8", "replace")


@dataclass
class Decoded:
    """One buffer's records: GPU work in buffer order, API calls in buffer order, NVTX markers."""

    gpu: list[GpuActivity] = field(default_factory=list)
    api: list[ApiCall] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)


def _gpu(buf: np.ndarray, offs: np.ndarray, what: str, fields: dict, read: Callable[[int], str]) -> list[GpuActivity]:
    cols = {n: _column(buf, offs, at).tolist() for n, at in fields.items() if n not in ("name", "copy_kind")}
    if what == "kernel":
        names = _strings(_column(buf, offs, fields["name"]), read)
        size: Any = repeat(0)
    else:
        names = ([memcpy_name(int(c)) for c in _column(buf, offs, fields["copy_kind"]).tolist()] if what == "memcpy"
                 else ["[CUDA memset]"] * len(offs))
        size = cols["bytes"]
    return list(map(GpuActivity, names, cols["start"], cols["end"], cols["correlation_id"], cols["stream_id"],
                    repeat(what), size))


def _api(buf: np.ndarray, offs: np.ndarray, layer: str, fields: dict, api_name: Callable[[str, int], str]
         ) -> list[ApiCall]:
    cols = {n: _column(buf, offs, at).tolist() for n, at in fields.items()}
    names = {cbid: api_name(layer, cbid) for cbid in set(cols["cbid"])}
    return list(map(ApiCall, [names[c] for c in cols["cbid"]], cols["start"], cols["end"], cols["correlation_id"],
                    cols["thread_id"], repeat(layer)))


def _markers(buf: np.ndarray, offs: np.ndarray, fields: dict, read: Callable[[int], str], thread_kind: int
             ) -> list[Marker]:
    cols = {n: _column(buf, offs, at) for n, at in fields.items()}
    threads = np.where(cols["object_kind"] == thread_kind, cols["object_id.pt.thread_id"], 0).tolist()
    return list(zip(cols["id"].tolist(), cols["timestamp"].tolist(), _strings(cols["name"], read),
                    _strings(cols["domain"], read), threads, strict=True))


def _in_order(parts: list[tuple[np.ndarray, list]]) -> list:
    """Records of several kinds back in their buffer's order (by offset)."""
    parts = [p for p in parts if len(p[0])]
    if len(parts) == 1:
        return parts[0][1]
    if not parts:
        return []
    order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable").tolist()
    rows = [r for p in parts for r in p[1]]
    return [rows[i] for i in order]


def decode(buf: np.ndarray, offsets: np.ndarray, layouts: Layouts, api_name: Callable[[str, int], str],
           thread_kind: int, read: Callable[[int], str] = c_string) -> Decoded:
    """The records at `offsets` (bytes from the buffer's start) of the raw buffer `buf` (uint8) as typed
    records. `api_name(layer, cbid)`: an API call's name; `read(pointer)`: a C string (a kernel's, a range's
    name); `thread_kind`: ActivityObjectKind.THREAD. Kinds not in `layouts` are skipped (none is enabled)."""
    out = Decoded()
    if not len(offsets):
        return out
    offsets = offsets.astype(np.int64, copy=False)
    kinds = _column(buf, offsets, (0, np.dtype("<i4")))
    gpu, api = [], []
    for value, what in layouts.kinds.items():
        offs = offsets[kinds == value]
        if not len(offs):
            continue
        if what in ("kernel", "memcpy", "memset"):
            gpu.append((offs, _gpu(buf, offs, what, layouts.fields[what], read)))
        elif what in ("runtime", "driver"):
            api.append((offs, _api(buf, offs, what, layouts.fields["api"], api_name)))
        else:
            out.markers = _markers(buf, offs, layouts.fields["marker"], read, thread_kind)
    out.gpu, out.api = _in_order(gpu), _in_order(api)
    return out


_REQUESTED = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                              ctypes.POINTER(ctypes.c_size_t))
_COMPLETED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                              ctypes.c_size_t)
_KEEP: list[Any] = []  # the callbacks libcupti holds: alive for the process (it may call them at its exit)


class RawBuffers:
    """Activity buffers given to libcupti by this process (ctypes), read by `decode` when CUPTI completes them.

    `on_records(Decoded)` is called for each completed buffer (from CUPTI's thread, with the GIL); an error
    while reading one is kept in `errors` (a ctypes callback cannot raise), never lost."""

    def __init__(self, library: str, buffer_bytes: int, layouts: Layouts, api_name: Callable[[str, int], str],
                 thread_kind: int, on_records: Callable[[Decoded], None], lib: Any = None) -> None:
        if lib is None:  # (a stand-in's in tests)
            lib = ctypes.CDLL(library)
            lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                       ctypes.POINTER(ctypes.c_void_p)]
            lib.cuptiActivityRegisterCallbacks.argtypes = [_REQUESTED, _COMPLETED]
        self.lib, self.read = lib, c_string
        self.buffer_bytes, self.layouts, self.api_name = buffer_bytes, layouts, api_name
        self.thread_kind, self.on_records = thread_kind, on_records
        self.errors: list[str] = []
        self.records = 0
        self._buffers: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def register(self) -> None:
        requested, completed = _REQUESTED(self._requested), _COMPLETED(self._completed)
        _KEEP.extend((requested, completed))
        status = self.lib.cuptiActivityRegisterCallbacks(requested, completed)
        if status != 0:
            raise RuntimeError(f"cuptiActivityRegisterCallbacks returned {status}")

    def _requested(self, buffer: Any, size: Any, max_records: Any) -> None:
        buf = np.empty(self.buffer_bytes + 8, np.uint8)  # CUPTI wants 8-byte alignment (NumPy gives 16 or more)
        start = -buf.ctypes.data % 8
        with self._lock:
            self._buffers[buf.ctypes.data + start] = buf[start:]
        buffer[0] = buf.ctypes.data + start
        size[0] = self.buffer_bytes
        max_records[0] = 0

    def _completed(self, context: Any, stream: int, buffer: Any, size: int, valid: int) -> None:
        with self._lock:
            buf = self._buffers.pop(buffer, None)
        if buf is None and valid:  # not one of ours (nothing to read it against): its records are missing
            self.errors.append(f"a buffer of {valid} bytes of records that profconv did not give to CUPTI")
        if buf is None or not valid:
            return
        try:
            offsets = self.offsets(buffer, valid)
            self.records += len(offsets)
            self.on_records(decode(buf[:valid], offsets, self.layouts, self.api_name, self.thread_kind, self.read))
        except Exception as exc:  # reported by the collector: the records of this buffer are missing
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def offsets(self, buffer: int, valid: int) -> np.ndarray:
        """Each record's offset in the buffer, by libcupti's own walk (cuptiActivityGetNextRecord)."""
        step, record = self.lib.cuptiActivityGetNextRecord, ctypes.c_void_p(None)
        out = []
        ref = ctypes.byref(record)
        while step(buffer, valid, ref) == 0:
            out.append(record.value)
        return np.asarray(out, dtype=np.int64) - buffer
