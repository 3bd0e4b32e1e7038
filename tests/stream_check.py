"""What the streamed-parse tests share (tests/test_parse_stream.py, tests/test_parse_nsys_stream.py): the check
that a file's parts, one after the other, are its whole parse (their windows: conftest's `small_windows`)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from profconv.errors import ProfconvError
from profconv.nogc import paused
from profconv.parse import stream as stream_mod
from profconv.parse.core import parse_whole
from profconv.parse.table import Rows


def same_cell(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def check_parts(path: Path, window: int) -> int:
    """Parts of `path` equal its whole parse (profiles, every row cell, unplaced lines, warnings, table
    notes); the number of parts (0: not streamable, or no profile: the whole-file reader's)."""
    with paused():
        st = stream_mod.Stream(str(path), window=window)
        try:
            whole = parse_whole(str(path))
        except ProfconvError:  # no profile: the stream leaves it to the whole-file reader
            with pytest.raises(stream_mod.NotStreamable):
                list(st)
            return 0
        try:
            parts = list(st)
        except stream_mod.NotStreamable:
            return 0
    assert [vars(i) for p in parts for i in p.profiles] == [vars(i) for i in whole.profiles]
    rows = Rows.concat([p.rows for p in parts])
    assert rows.n == whole.rows.n
    for c in set(rows.cols) | set(whole.rows.cols):
        assert all(map(same_cell, rows.col(c), whole.rows.col(c))), (path, c)
    assert [u for p in parts for u in p.unplaced] == whole.unplaced
    assert stream_mod.whole_notes([(p.notes, p.lead) for p in parts], st.warnings([])) == whole.notes
    notes: dict = {}
    for p in parts:
        notes.update(p.table_notes)
    assert notes == whole.table_notes
    return len(parts)


def split_repeated_and_mixed(files: list[str], tmp_path: Path, window: int) -> int:
    """check_parts over each file three times over and each next to another one (its 7k+3'th); how
    many of those inputs were read in more than one part."""
    split = 0
    for k, f in enumerate(files):
        text = Path(f).read_bytes()
        other = Path(files[(7 * k + 3) % len(files)]).read_bytes()
        for name, data in (("r3", text * 3), ("mix", text + other + text + other)):
            path = tmp_path / f"{name}-{k}.log"
            path.write_bytes(data)
            split += check_parts(path, window) > 1
    return split


def assert_cli_streamed_as_whole(path: Path, monkeypatch, outs: tuple[str, ...] = ("--json", "--csv", "--all")) -> None:
    """`profconv parse PATH OUT` of a long log, read part by part and read whole (STREAM_FROM past its
    size): exit 0 both ways, the same stdout and stderr, for each OUT."""
    from tests.conftest import run_cli

    for out in outs:
        streamed = run_cli("parse", str(path), out)
        with monkeypatch.context() as m:
            m.setattr(stream_mod, "STREAM_FROM", 1 << 40)
            whole = run_cli("parse", str(path), out)
        assert streamed.returncode == whole.returncode == 0, streamed.stderr
        assert (streamed.stdout, streamed.stderr) == (whole.stdout, whole.stderr)
