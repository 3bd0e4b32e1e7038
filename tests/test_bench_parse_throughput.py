"""benchmarks/parse_throughput.py's "(rows only)" input: an nsys sweep less the reports profconv does not read
(the um_* tables of an app on unified memory), the same rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from profconv import parse

pytest.importorskip("pandas")
spec = importlib.util.spec_from_file_location("parse_throughput",
                                              Path(__file__).parents[1] / "benchmarks" / "parse_throughput.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

_LINES = ["line_start", "line_end", "table"]  # (the line numbers differ)


def test_a_unified_memory_sweep_less_its_um_reports_gives_the_same_rows(tmp_path):
    path, plain = tmp_path / "um.log", tmp_path / "um.csv"
    bench.nsys_um_summaries(path, plain, 60_000)
    stripped = bench.without_unread(path)
    assert stripped is not None and (path.stat().st_size, stripped.stat().st_size) == (61_668, 49_649)
    text = stripped.read_text()
    assert "/um_" not in text and text.count("Generating SQLite") == path.read_text().count("Generating SQLite") == 15
    whole, less = parse(str(path)), parse(str(stripped))
    assert sum("um_" in n for n in whole.notes) == 45 and not [n for n in less.notes if "um_" in n]  # 3 a run
    a, b = whole.frame.drop(columns=_LINES), less.frame.drop(columns=_LINES)
    assert len(a) == len(b) == 360 and a.equals(b)


def test_a_sweep_without_such_reports_is_left_as_it_is(tmp_path):
    path, plain = tmp_path / "reports.log", tmp_path / "reports.csv"
    bench.nsys_report_summaries(path, plain, 30_000)
    assert bench.without_unread(path) is None
