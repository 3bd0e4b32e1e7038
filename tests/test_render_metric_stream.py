"""`profconv parse --all`'s Metrics table written a slice of rows at a time
(profconv/render/metric_stream.py) is the bytes plain.Writer.table writes of metric_table's whole
table: every test log with metric rows (nvprof --metrics/--events with Min/Max/Avg and Total, ncu
console and --csv pages, values printed as text, cut ones, '—'), at three widths, in slices of a few
rows; where plain leaves the table to rich, so does it (having written nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

import profconv
from profconv.render import metric_stream, plain
from profconv.render.profile_tables import _where, metric_table
from tests.conftest import run_cli
from tests.test_render_plain import _console

DATA = Path(__file__).parent / "data"
LOGS = sorted(p for d in ("nvprof-metrics", "ncu-csv", "ncu-text", "nvprof-new", "nvprof-old")
              for p in (DATA / d).glob("*.log")
              if any(m in p.read_text(errors="replace") for m in ("Metric", "Event", "metric", "event")))
SECTIONS = ("ncu-metric", "metric")


def _metric_profiles(path: Path):
    try:
        ps = profconv.parse(str(path))
    except profconv.errors.InputError:
        return None, []
    rows = ps.rows
    return rows, sorted({p for p, s in zip(rows.col("profile"), rows.col("section")) if s in SECTIONS})


def test_the_logs():
    assert len(LOGS) == 32
    assert sum(bool(_metric_profiles(p)[1]) for p in LOGS) == 25


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[:50])
def test_same_bytes_as_the_whole_table(monkeypatch, path):
    rows, profiles = _metric_profiles(path)
    monkeypatch.setattr(metric_stream, "SLICE", 5)
    for profile in profiles:
        idx = _where(rows, profile, SECTIONS)
        for width in (40, 80, 200):
            con, fast = _console(width)
            took = metric_stream.write_all(plain.Writer(con), rows, idx, width)
            con, whole = _console(width)
            assert took == plain.Writer(con).table(metric_table(rows, profile, width, None))
            assert fast.getvalue() == (whole.getvalue() if took else "")


def test_taken_on_most(monkeypatch):
    """What plain takes of the logs' metric tables at 200 columns, and so this writer: every one (the
    tests above are not vacuous)."""
    took = 0
    for path in LOGS:
        rows, profiles = _metric_profiles(path)
        for profile in profiles:
            con, _ = _console(200)
            took += metric_stream.write_all(plain.Writer(con), rows, _where(rows, profile, SECTIONS), 200)
    assert took == 30  # every one at 200 columns


@pytest.mark.parametrize("name", ["ericreinsmidt-gameoflife-gt650m-metrics-excerpt.log",
                                  "sankarmanoj-thrust2d-gradient-metrics-text-valued-utilization.log"])
def test_cli_all_alike(monkeypatch, name):
    """`profconv parse --all` with the table written a slice at a time (from the first row) and whole."""
    path = str(DATA / "nvprof-metrics" / name)
    monkeypatch.setattr(metric_stream, "FROM", 0)
    monkeypatch.setattr(metric_stream, "SLICE", 3)
    sliced = run_cli("parse", path, "--all")
    monkeypatch.setattr(metric_stream, "FROM", 10**12)
    whole = run_cli("parse", path, "--all")
    assert sliced.returncode == whole.returncode == 0
    assert sliced.stdout == whole.stdout and "Metrics" in sliced.stdout
