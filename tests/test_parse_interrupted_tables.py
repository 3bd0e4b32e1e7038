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
    # (the hostile fuzz run's findings: a GPU trace; a --csv trace between its header and units row; a
    # headerless metric fragment between its 'Kernel:' line and its first row)
    ("nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log", 7),
    ("nvprof-csv/leimingyu-magus-sobolqrng-gputrace.csv.log", 4),
    ("nvprof-metrics/sarats-xgc-cabana-kokkos-metrics-fragment-sci-notation-excerpt.log", 1),
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
# 'Op Time: 12.5 ms' (the ECE408 program's line) holds a word of nvprof's headers ('Time'): it had
# ended --csv and metric tables as if it were one
@pytest.mark.parametrize("stray", ["Done.", "Warning: device 0 throttled", "Op Time: 12.5 ms"])
def test_a_stray_line_inside_a_table_loses_no_row(path, after, stray):
    whole = profconv.parse_text((DATA / path).read_text())
    text = _with_line(path, after, stray)
    cut = profconv.parse_text(text)
    check_all(cut, text)
    assert len(cut.frame) == len(whole.frame) > 0
    assert _rows(cut) == _rows(whole)
    assert [n for n, _ in cut.unplaced] == [n + (n > after) for n, _ in whole.unplaced]


@pytest.mark.parametrize(("path", "after"), CASES[:1] + CASES[3:4] + CASES[5:6])
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


def test_a_gpu_trace_goes_on_after_a_stray_line():
    """hostile fuzz stray:260006599 and 7 more: 'Done.' among --print-gpu-trace rows had ended the
    trace, its last rows listed as unplaced and its per-name summary cut (8 rows -> 3)."""
    path = "nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log"
    ps = profconv.parse_text(_with_line(path, 7, "Warning: device 0 throttled"))
    trace = ps.frame[ps.frame["section"] == "gpu-trace"]
    assert len(ps.frame) == 8
    assert trace["line_start"].tolist() == [6, 7, 9, 10, 11]
    assert trace["total_ns"].tolist() == [23298.0, 22914.0, 23650.0, 7841.0, 20738.0]
    gpu = ps.frame[ps.frame["section"] == "gpu"].set_index("name")
    assert gpu.loc["[CUDA memcpy HtoD]", "calls"] == 3
    assert gpu.loc["[CUDA memcpy HtoD]", "total_ns"] == 23298.0 + 22914.0 + 23650.0
    assert ps.unplaced == []


def test_a_trace_row_cut_short_after_a_stray_line_is_reported():
    """The trace goes on after the stray line, and a row of it that does not read is still said."""
    path = "nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log"
    lines = _with_line(path, 7, "Done.").split("\n")
    lines[9] = lines[9][:30]  # the kernel's row, cut in its grid column
    ps = profconv.parse_text("\n".join(lines))
    assert ps.frame[ps.frame["section"] == "gpu-trace"]["line_start"].tolist() == [6, 7, 9, 11]
    assert [n for n, _ in ps.unplaced] == [10]


def test_a_marker_still_ends_a_gpu_trace():
    """Program output, then the next profile's lines: the trace ends at the stray line (no trace
    row follows it before a marker), and the second profile reads its own trace."""
    one = (DATA / "nvprof-trace/sunjiabin17-vectoradd-pinned-gputrace.log").read_text()
    ps = profconv.parse_text(one + "Done.\n" + one)
    assert len(ps.profiles) == 2
    assert len(ps.frame) == 2 * 8
    assert ps.unplaced == []


def test_op_time_inside_a_csv_summary_keeps_its_13_rows():
    """hostile fuzz stray:260013647 / 260000693: 'Op Time: 12.5 ms' holds 'Time' (a header word):
    the table had ended there, its later rows lost without a word (13 -> 10)."""
    path = "nvprof-csv/floriansegard-gpgpu-stream-gpusummary.csv.log"
    ps = profconv.parse_text(_with_line(path, 15, "Op Time: 12.5 ms"))
    gpu = ps.frame[ps.frame["section"] == "gpu"]
    assert len(gpu) == 13
    assert gpu["line_start"].tolist()[-3:] == [17, 18, 19]
    assert gpu["name"].tolist()[-1] == "MemsetD2D_BL"
    assert ps.unplaced == []


def test_a_stray_line_between_a_csv_header_and_its_units_row():
    """The units row after the stray line is still the table's: times in ms, not refused."""
    path = "nvprof-csv/leimingyu-magus-sobolqrng-gputrace.csv.log"
    ps = profconv.parse_text(_with_line(path, 4, "Done."))
    trace = ps.frame[ps.frame["section"] == "gpu-trace"]
    assert trace["line_start"].tolist() == [7, 8, 9]
    assert trace["start_ns"].tolist()[0] == 648121287.0
    assert trace["total_ns"].tolist()[0] == 2048.0
    assert ps.unplaced == []


def test_a_stray_line_after_a_metric_fragments_kernel_line():
    """A headerless --metrics fragment: 'Done.' between its 'Kernel:' line and its rows had hidden
    the whole fragment (no profile found); it is read, 21 rows."""
    path = "nvprof-metrics/sarats-xgc-cabana-kokkos-metrics-fragment-sci-notation-excerpt.log"
    ps = profconv.parse_text(_with_line(path, 1, "Done."))
    assert len(ps.frame) == 21
    assert ps.frame["line_start"].tolist()[:2] == [3, 4]
    assert ps.frame["metric"].tolist()[0] == "warp_execution_efficiency"
    assert ps.unplaced == []
