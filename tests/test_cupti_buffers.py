"""CUPTI activity buffers read as columns (profile/cupti_buffers): raw buffers made here from record dtypes laid
out as cupti-python 13.0.1's (the struct versions CUPTI 13 writes), read back as the typed records the objects'
path made. No GPU: libcupti's walk is stood in for by one that steps by each kind's record size."""

from __future__ import annotations

import ctypes
import enum
import json
import types
from typing import Any

import numpy as np
import pytest

from profconv.profile.activity import ApiCall, GpuActivity, Records
from profconv.profile.cupti_buffers import Decoded, RawBuffers, decode, layouts_of


def _dtype(fields: list[tuple[str, str, int]], size: int) -> np.dtype:
    names, formats, offsets = zip(*fields, strict=True)
    return np.dtype({"names": list(names), "formats": list(formats), "offsets": list(offsets), "itemsize": size})


# the fields read, at cupti-python 13.0.1's offsets (its activity_*_dtype), and each record's whole size
KERNEL10 = _dtype([("kind", "<i4", 0), ("start", "<u8", 16), ("end", "<u8", 24), ("stream_id", "<u4", 48),
                   ("correlation_id", "<u4", 92), ("name", "<i8", 104)], 216)
KERNEL9 = _dtype([("kind", "<i4", 0), ("start", "<u8", 8), ("end", "<u8", 24), ("stream_id", "<u4", 40),
                  ("correlation_id", "<u4", 44), ("name", "<i8", 96)], 200)  # an older version: never chosen
MEMCPY6 = _dtype([("kind", "<i4", 0), ("copy_kind", "u1", 4), ("bytes", "<u8", 8), ("start", "<u8", 16),
                  ("end", "<u8", 24), ("stream_id", "<u4", 40), ("correlation_id", "<u4", 44)], 96)
MEMSET4 = _dtype([("kind", "<i4", 0), ("bytes", "<u8", 8), ("start", "<u8", 16), ("end", "<u8", 24),
                  ("stream_id", "<u4", 40), ("correlation_id", "<u4", 44)], 88)
API = _dtype([("kind", "<i4", 0), ("cbid", "<u4", 4), ("start", "<u8", 8), ("end", "<u8", 16),
              ("process_id", "<u4", 24), ("thread_id", "<u4", 28), ("correlation_id", "<u4", 32)], 40)
_OBJECT = np.dtype({"names": ["pt", "dcs"], "formats": [[("process_id", "<u4"), ("thread_id", "<u4")],
                                                          [("device_id", "<u4"), ("context_id", "<u4"),
                                                           ("stream_id", "<u4")]],
                    "offsets": [0, 0], "itemsize": 12})
MARKER2 = _dtype([("kind", "<i4", 0), ("timestamp", "<u8", 8), ("id", "<u4", 16), ("object_kind", "<i4", 20),
                  ("object_id", _OBJECT, 24), ("name", "<i8", 40), ("domain", "<i8", 48)], 56)


class Kind(enum.IntEnum):  # CUPTI's values
    MEMCPY = 1
    MEMSET = 2
    DRIVER = 4
    RUNTIME = 5
    CONCURRENT_KERNEL = 10
    MARKER = 12


CUPTI = types.SimpleNamespace(ActivityKind=Kind, activity_kernel10_dtype=KERNEL10, activity_kernel9_dtype=KERNEL9,
                              activity_memcpy6_dtype=MEMCPY6, activity_memset4_dtype=MEMSET4, activity_api_dtype=API,
                              activity_marker2_dtype=MARKER2, activity_marker_data_dtype=API)
SIZES = {int(Kind.CONCURRENT_KERNEL): 216, int(Kind.MEMCPY): 96, int(Kind.MEMSET): 88, int(Kind.RUNTIME): 40,
         int(Kind.DRIVER): 40, int(Kind.MARKER): 56}
STRINGS = {0x1000: "_Z4convPfS_", 0x2000: "_Z6unrollPf", 0x3000: "ece408/fused/conv1", 0x4000: "profconv"}
THREAD = 1


def _record(dtype: np.dtype, kind: Kind, **values) -> bytes:
    r = np.zeros(1, dtype)
    r["kind"] = int(kind)
    for k, v in values.items():
        if k == "thread":
            r["object_id"]["pt"]["thread_id"] = v
        else:
            r[k] = v
    return r.tobytes()


def _buffer() -> bytes:
    return b"".join([
        _record(API, Kind.RUNTIME, cbid=2, start=100, end=130, thread_id=77, correlation_id=1),
        _record(MARKER2, Kind.MARKER, timestamp=90, id=5, object_kind=THREAD, thread=77, name=0x3000, domain=0x4000),
        _record(KERNEL10, Kind.CONCURRENT_KERNEL, start=140, end=190, stream_id=7, correlation_id=1, name=0x1000),
        _record(API, Kind.DRIVER, cbid=3, start=200, end=210, thread_id=77, correlation_id=2),
        _record(MEMCPY6, Kind.MEMCPY, copy_kind=2, bytes=4096, start=215, end=220, stream_id=7, correlation_id=2),
        _record(KERNEL10, Kind.CONCURRENT_KERNEL, start=230, end=260, stream_id=7, correlation_id=3, name=0x2000),
        _record(MEMSET4, Kind.MEMSET, bytes=64, start=261, end=262, stream_id=9, correlation_id=4),
        _record(KERNEL10, Kind.CONCURRENT_KERNEL, start=270, end=290, stream_id=7, correlation_id=5, name=0x1000),
        _record(MARKER2, Kind.MARKER, timestamp=300, id=5, object_kind=2, thread=99, name=0, domain=0),
    ])


def _walk(raw: bytes) -> np.ndarray:
    offsets, at = [], 0
    while at < len(raw):
        offsets.append(at)
        at += SIZES[int.from_bytes(raw[at:at + 4], "little")]
    return np.asarray(offsets, dtype=np.int64)


def _name(layer: str, cbid: int) -> str:
    return {("runtime", 2): "cudaLaunchKernel", ("driver", 3): "cuMemcpyDtoHAsync"}[(layer, cbid)]


EXPECTED_GPU = [GpuActivity("_Z4convPfS_", 140, 190, 1, 7, "kernel", 0),
                GpuActivity("[CUDA memcpy DtoH]", 215, 220, 2, 7, "memcpy", 4096),
                GpuActivity("_Z6unrollPf", 230, 260, 3, 7, "kernel", 0),
                GpuActivity("[CUDA memset]", 261, 262, 4, 9, "memset", 64),
                GpuActivity("_Z4convPfS_", 270, 290, 5, 7, "kernel", 0)]
EXPECTED_API = [ApiCall("cudaLaunchKernel", 100, 130, 1, 77, "runtime"),
                ApiCall("cuMemcpyDtoHAsync", 200, 210, 2, 77, "driver")]
EXPECTED_MARKERS = [(5, 90, "ece408/fused/conv1", "profconv", 77), (5, 300, "", "", 0)]


def test_layouts_are_the_newest_struct_versions_of_cupti_python():
    lay = layouts_of(CUPTI)
    assert lay.fields["kernel"]["start"][0] == 16 and lay.fields["kernel"]["name"][0] == 104  # Kernel10, not 9
    assert lay.fields["marker"]["object_id.pt.thread_id"][0] == 28
    assert lay.fields["api"]["cbid"] == (4, np.dtype("<u4"))
    assert lay.kinds[10] == "kernel" and lay.kinds[4] == "driver" and lay.kinds[12] == "marker"


def test_a_buffer_reads_as_the_records_in_their_order():
    raw = _buffer()
    d = decode(np.frombuffer(raw, np.uint8), _walk(raw), layouts_of(CUPTI), _name, THREAD, STRINGS.__getitem__)
    assert d.gpu == EXPECTED_GPU
    assert d.api == EXPECTED_API
    assert d.markers == EXPECTED_MARKERS
    assert isinstance(d.gpu[0].start, int) and json.loads(json.dumps(Records(d.api, d.gpu, []).to_dict()))["gpu"][1] \
        == ["[CUDA memcpy DtoH]", 215, 220, 2, 7, "memcpy", 4096]


def test_an_empty_buffer_and_a_kernel_only_buffer():
    lay = layouts_of(CUPTI)
    assert decode(np.zeros(0, np.uint8), np.zeros(0, np.int64), lay, _name, THREAD) == Decoded()
    one = _record(KERNEL10, Kind.CONCURRENT_KERNEL, start=1, end=2, stream_id=3, correlation_id=4, name=0x2000)
    raw = one * 50_000
    d = decode(np.frombuffer(raw, np.uint8), _walk(raw), lay, _name, THREAD, STRINGS.__getitem__)
    assert len(d.gpu) == 50_000 and set(d.gpu) == {GpuActivity("_Z6unrollPf", 1, 2, 4, 3, "kernel", 0)}


class _Lib:
    """libcupti's two calls, stood in for: records walked by size; registration remembered."""

    def __init__(self) -> None:
        self.cuptiActivityGetNextRecord = self._next
        self.cuptiActivityRegisterCallbacks = self._register
        self.registered: tuple = ()

    def _register(self, requested, completed) -> int:
        self.registered = (requested, completed)
        return 0

    def _next(self, buffer: int, valid: int, ref) -> int:
        record = ref._obj
        at = 0 if record.value is None else record.value - buffer + SIZES[ctypes.c_int32.from_address(record.value).value]
        if at >= valid:
            return 12  # CUPTI_ERROR_MAX_LIMIT_REACHED
        record.value = buffer + at
        return 0


def _raw_buffers(got: list, lib: _Lib | None = None) -> RawBuffers:
    raw = RawBuffers("libcupti.so", 1 << 16, layouts_of(CUPTI), _name, THREAD, got.append, lib=lib or _Lib())
    raw.read = STRINGS.__getitem__
    return raw


def test_buffers_given_to_cupti_and_read_when_completed():
    got: list[Decoded] = []
    raw = _raw_buffers(got)
    raw.register()
    requested, completed = raw.lib.registered
    pointer, size, most = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t(7)
    requested(ctypes.byref(pointer), ctypes.byref(size), ctypes.byref(most))
    assert pointer.value % 8 == 0 and size.value == 1 << 16 and most.value == 0
    data = _buffer()
    ctypes.memmove(pointer.value, data, len(data))
    completed(None, 0, pointer.value, size.value, len(data))
    assert raw.errors == [] and raw.records == 9
    assert got[0].gpu == EXPECTED_GPU and got[0].api == EXPECTED_API and got[0].markers == EXPECTED_MARKERS
    assert raw._buffers == {}  # the buffer is let go once read


def _one_buffer_given(got: list) -> tuple[RawBuffers, Any, int, int]:
    """RawBuffers registered with the stand-in libcupti, one buffer given out: (it, CUPTI's completion
    callback, the buffer's address and size)."""
    raw = _raw_buffers(got)
    raw.register()
    requested, completed = raw.lib.registered
    pointer, size, most = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_size_t()
    requested(ctypes.byref(pointer), ctypes.byref(size), ctypes.byref(most))
    return raw, completed, pointer.value, size.value


def test_a_buffer_that_cannot_be_read_is_an_error_kept_not_records_lost_silently():
    got: list[Decoded] = []
    raw, completed, pointer, size = _one_buffer_given(got)
    ctypes.memmove(pointer, _record(API, Kind.RUNTIME, cbid=9), 40)  # a call id with no name
    completed(None, 0, pointer, size, 40)
    assert got == [] and raw.errors == ["KeyError: ('runtime', 9)"]


def test_a_completed_buffer_not_given_out_is_an_error_and_an_empty_one_is_nothing():
    got: list[Decoded] = []
    raw, completed, pointer, size = _one_buffer_given(got)
    completed(None, 0, pointer, size, 0)  # given out, completed with no record
    stray = ctypes.create_string_buffer(_buffer())
    completed(None, 0, ctypes.addressof(stray), 1 << 16, 40)
    assert got == [] and raw.records == 0 and raw._buffers == {}
    assert raw.errors == ["a buffer of 40 bytes of records that profconv did not give to CUPTI"]


def test_the_collector_writes_an_error_not_part_of_the_records(monkeypatch):
    from profconv.profile.cupti_collector import CuptiCollector

    col = CuptiCollector.__new__(CuptiCollector)
    col.api, col.gpu, col._markers = EXPECTED_API, EXPECTED_GPU, {}
    col.raw = types.SimpleNamespace(errors=[])
    assert col.failed is None
    assert json.loads(col.to_json())["gpu"][0] == ["_Z4convPfS_", 140, 190, 1, 7, "kernel", 0]
    col.raw.errors = ["KeyError: ('runtime', 9)", "MemoryError: "]
    assert col.failed == "2 CUPTI activity buffer(s) could not be read (KeyError: ('runtime', 9))"
    assert json.loads(col.to_json()) == {"error": col.failed}


@pytest.mark.parametrize("records", [1, 1000])
def test_records_round_trip_through_the_childs_file(records):
    gpu = EXPECTED_GPU * records
    back = Records.from_dict(json.loads(json.dumps(Records(EXPECTED_API, gpu, []).to_dict())))
    assert back.gpu == gpu and back.api == EXPECTED_API and back.ranges == []
    with pytest.raises(ValueError):
        Records.from_dict({"api": [[1, 2]], "gpu": [], "ranges": []})
