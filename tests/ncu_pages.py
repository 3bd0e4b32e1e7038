"""What the ncu --csv page tests share (tests/test_parse_ncu_raw.py, tests/test_parse_ncu_details.py): a
page read every way it can be read, each way's result the same."""

from __future__ import annotations

from collections.abc import Callable

import profconv
from profconv.parse.dialects import ncu_raw


def read_alike(monkeypatch, path, text: str, row_reader: Callable) -> profconv.ProfileSet:
    """`text` written to `path` and read five ways -- from the file's bytes (ncu_raw.find), from the
    text's lines (profconv.parse_text), from the file mapped a few KiB at a time, by the pure-Python
    twin of the C scan (PROFCONV_PURE_PYTHON=1), and with the column path switched off
    (`row_reader(m)`, m a monkeypatch context): the same frame, notes, unplaced lines and profiles'
    lines; the file's result."""
    path.write_text(text)
    got = [profconv.parse(str(path)), profconv.parse_text(text, label=str(path))]
    with monkeypatch.context() as m:
        m.setattr(ncu_raw, "FILE_FROM", 0)
        m.setattr(ncu_raw, "WINDOW", 4099)
        got.append(profconv.parse(str(path)))
    with monkeypatch.context() as m:
        m.setenv("PROFCONV_PURE_PYTHON", "1")
        got.append(profconv.parse(str(path)))
    with monkeypatch.context() as m:
        row_reader(m)
        got.append(profconv.parse(str(path)))
    for other in got[1:]:
        assert got[0].frame.equals(other.frame)
        assert (got[0].notes, got[0].unplaced) == (other.notes, other.unplaced)
        assert [(p.line_start, p.line_end) for p in got[0].profiles] == [(p.line_start, p.line_end) for p in other.profiles]
    return got[0]


def cut(text: str, at: int) -> str:
    """`text` cut `at` characters into its last line (an input cut while that row was written)."""
    start = text.rstrip("\n").rfind("\n") + 1
    assert 0 < at < len(text.rstrip("\n")) - start
    return text[: start + at]


def read_from_bytes(path) -> bool:
    """Whether the file's pages are read from its bytes (ncu_raw.find takes one)."""
    return ncu_raw.find(path.read_bytes()) is not None
