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
