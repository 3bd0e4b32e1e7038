"""hostcopy: the harness's host work on large arrays in several threads gives what the one-line NumPy/CuPy
form gives (the thresholds lowered so that small arrays take the threaded path)."""

from __future__ import annotations

import numpy as np
import pytest

from profconv.run.user import hostcopy


class _DeviceArray:
    """A device array of a stand-in CuPy: host memory that only `set` (a copy from pinned memory) writes."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.sets = 0

    def reshape(self, *shape):
        view = _DeviceArray(self.data.reshape(*shape))
        view.sets = self.sets
        return view

    def __getitem__(self, key):
        return _Slice(self, key)


class _Slice:
    """CuPy's `set` from pinned memory is asynchronous: the bytes are read when the stream gets to it (here:
    at its synchronisation), so a staging buffer written again before that would send the wrong piece."""

    def __init__(self, parent: _DeviceArray, key) -> None:
        self.parent, self.key = parent, key

    def set(self, host: np.ndarray) -> None:
        _STREAM.pending.append(lambda: self.parent.data.__setitem__(self.key, host.copy()))


class _Stream:
    def __init__(self) -> None:
        self.pending: list = []

    def synchronize(self) -> None:
        for copy in self.pending:
            copy()
        self.pending.clear()


_STREAM = _Stream()


class _Cuda:
    def __init__(self) -> None:
        self.pinned: list[int] = []

    def get_current_stream(self) -> _Stream:
        return _STREAM

    def alloc_pinned_memory(self, nbytes: int) -> bytearray:
        self.pinned.append(nbytes)
        return bytearray(nbytes)


class _StandIn:
    def __init__(self) -> None:
        self.cuda = _Cuda()

    def empty(self, shape, dtype):
        return _DeviceArray(np.full(shape, -1, dtype=dtype))

    def asarray(self, a):
        return _DeviceArray(np.array(a))


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(hostcopy, "PARALLEL_FROM_BYTES", 64)
    monkeypatch.setattr(hostcopy, "STAGING_BYTES", 4096)
    monkeypatch.setattr(hostcopy, "threads", lambda: 4)
    hostcopy._staging.clear()
    yield
    hostcopy._staging.clear()


def test_fill_copy_and_equal_in_pieces(small):
    a = np.empty((7, 3, 5, 5), dtype=np.float32)
    hostcopy.fill(a, np.nan)
    assert np.isnan(a).all()
    src = np.arange(a.size, dtype=np.float32).reshape(a.shape)
    hostcopy.copy_into(a, src)
    assert np.array_equal(a, src)
    assert hostcopy.equal(a, src) and not hostcopy.equal(a, src + (np.arange(src.size) == 300).reshape(a.shape))
    b, c = a.copy(), a.copy()
    b.reshape(-1)[-1] = c.reshape(-1)[-1] = np.nan
    assert hostcopy.equal(b, c)  # NaN equal to NaN, as the determinism check counts it
    assert not hostcopy.equal(a, a[:6])


def test_to_device_goes_through_one_pinned_buffer_a_piece_at_a_time(small):
    cp = _StandIn()
    a = np.random.default_rng(1).standard_normal((10, 4, 9, 9)).astype(np.float32)  # 12,960 bytes: 4 pieces
    out = hostcopy.to_device(cp, a)
    assert np.array_equal(out.data, a) and out.data.shape == (10, 4, 9, 9)
    assert cp.cuda.pinned == [4096]  # one staging buffer, reused
    h = a.astype(np.float16)
    assert np.array_equal(hostcopy.to_device(cp, h).data, h) and cp.cuda.pinned == [4096]


def test_small_or_strided_arrays_and_a_cupy_without_pinned_memory_take_the_plain_form(small):
    cp = _StandIn()
    tiny = np.ones(4, dtype=np.float32)
    assert np.array_equal(hostcopy.to_device(cp, tiny).data, tiny) and cp.cuda.pinned == []
    strided = np.arange(400, dtype=np.float32).reshape(20, 20)[:, ::2]
    assert np.array_equal(hostcopy.to_device(cp, strided).data, strided) and cp.cuda.pinned == []
    cp.cuda = object()  # no alloc_pinned_memory
    big = np.arange(1000, dtype=np.float32)
    assert np.array_equal(hostcopy.to_device(cp, big).data, big)
