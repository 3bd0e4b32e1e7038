"""A table interrupted by a line it cannot read (program output, a warning interleaved with the
profiler's) goes on after that line: every later row is read, nothing is lost silently; the line
itself is reported where it looks like data (issue 26: 'one stray line inside a table ends it')."""

from __future__ import annotations

from pathlib import Path

import pytest

import profconv
from tests.parse_invariants import check_all

DATA = Path(__file__).parent / "data"

CASES = [
    # (test log, 1-based line after which the stray line goes: inside the table)
    ("nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log", 9),
    ("nvprof-csv/leimingyu-magus-sobolqrng-gputrace.csv.log", 8),
    ("nvprof-csv/nanzifan-rodinia-cfd-gpusummary-um.csv.log", 7),
    ("nvprof-metrics/ericreinsmidt-gameoflife-gt650m-metrics-excerpt.log", 16),
    ("nvprof-metrics/hustzhaowei-darknet19-v100-metrics-app-table-excerpt.log", 10),
]


def _num(v):
    import pandas as pd

    return None if pd.isna(v) else float(v)


def _rows(ps) -> list[tuple]:
    f = ps.frame
    return [(r.section, r.name, r.metric if isinstance(r.metric, str) else None, _num(r.total_ns), _num(r.value),
             _num(r.calls)) for r in f.itertuples()]


def _with_line(path: str, after: int, line: str) -> str:
    lines = (DATA / path).read_text().split("\n")
    return "\n".join([*lines[:after], line, *lines[after:]])


@pytest.mark.parametrize(("path", "after"), CASES)
@pytest.mark.parametrize("stray", ["Done.", "Warning: device 0 throttled"])
def test_a_stray_line_inside_a_table_loses_no_row(path, after, stray):
    whole = profconv.parse_text((DATA / path).read_text())
    text = _with_line(path, after, stray)
    cut = profconv.parse_text(text)
    check_all(cut, text)
    assert len(cut.frame) == len(whole.frame) > 0
    assert _rows(cut) == _rows(whole)
    assert [n for n, _ in cut.unplaced] == [n + (n > after) for n, _ in whole.unplaced]


@pytest.mark.parametrize(("path", "after"), CASES[:1] + CASES[3:4])
def test_a_stray_line_that_looks_like_data_is_reported_and_the_table_goes_on(path, after):
    whole = profconv.parse_text((DATA / path).read_text())
    text = _with_line(path, after, "step 3: 12.5ms 3.1us")
    cut = profconv.parse_text(text)
    assert _rows(cut) == _rows(whole)
    assert after + 1 in [n for n, _ in cut.unplaced]


def test_the_csv_reproducer_keeps_all_thirteen_rows():
    """hostile-2's nvprof-csv-junk-line.log: 'Done.' after the fourth row had cut 13 rows to 4."""
    text = _with_line("nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log", 9, "Done.")
    ps = profconv.parse_text(text)
    gpu = ps.frame[ps.frame["section"] == "gpu"]
    assert len(gpu) == 13
    assert gpu["name"].iloc[4] == "rgbtolab_converter_kernel(ImageView<rgb8>, ImageView<lab>, int, int)"
    assert int(gpu["line_start"].iloc[4]) == 11
    assert ps.unplaced == []


def test_a_marker_still_ends_a_csv_table():
    """A profile's next header after a stray line is a new table, not rows of the last one."""
    one = (DATA / "nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log").read_text()
    ps = profconv.parse_text(one + "Done.\n" + one)
    assert len(ps.profiles) == 2
    assert len(ps.frame) == 2 * len(profconv.parse_text(one).frame)
