"""profconv.parse.read_buffer: one buffer kept for the next whole-file read of its size."""

from __future__ import annotations

import pytest

from profconv.parse import read_buffer


@pytest.fixture(autouse=True)
def _none_kept(monkeypatch):
    monkeypatch.setattr(read_buffer, "_KEPT", [])


def test_a_buffer_given_back_is_taken_by_the_next_read_of_its_size_only():
    buf = read_buffer.take(64)
    assert len(buf) == 64 and not any(buf)
    buf[:5] = b"hello"
    read_buffer.give_back(buf, 64)
    assert read_buffer.take(32) is not buf  # another size: a new one, the kept one left
    again = read_buffer.take(64)
    assert again is buf and again[:5] == b"hello"  # (not zeroed: a reader uses what it read only)
    assert read_buffer.take(64) is not buf  # taken: the next read makes its own


def test_one_buffer_is_kept_and_a_grown_one_is_not():
    a, b = read_buffer.take(64), read_buffer.take(64)
    read_buffer.give_back(a, 64)
    read_buffer.give_back(b, 64)
    assert read_buffer._KEPT == [a] and read_buffer._KEPT[0] is a
    grown = read_buffer.take(64)
    grown.extend(bytes(64))
    read_buffer.give_back(grown, 64)
    assert read_buffer._KEPT == []


def test_a_new_buffer_of_a_page_or_more_starts_at_a_page():
    """A read's buffer starts at a page's first byte (CPython: `del b[:k]` moves a bytearray's start):
    the kernel's copy of a file's first pages into a buffer 1-31 bytes past them runs ~3x slower."""
    import platform

    for n in (4096, 8 << 20):
        buf = read_buffer.take(n)
        assert len(buf) == n and not any(buf[:: 4096])
        if platform.python_implementation() == "CPython":
            assert read_buffer.address(buf) % read_buffer.PAGE == 0
        buf[-1:] = b"x"  # all of it is the buffer's
        read_buffer.give_back(buf, n)
        assert read_buffer.take(n) is buf
    small = read_buffer.take(100)
    assert len(small) == 100 and not any(small)
