"""Several big ncu --csv pages in one file (runs one after the other, each page thousands of rows):
each read from the file's bytes, none sent back to the text path, their columns joined as one
colviews.Chain a column (no list of the pages' rows: two 10 MB raw pages took 227 MiB, 11 bytes a
byte, where one took 32). Chain itself: tests/test_parse_colviews.py."""

from __future__ import annotations

import pytest

import profconv
from profconv.parse import bytescan
from profconv.parse.colviews import Chain
from profconv.render import profile_tables
from tests import test_parse_ncu_details as details
from tests import test_parse_ncu_raw as raw
from tests.conftest import assert_cli_alike, run_cli


def _no_reparse(monkeypatch) -> list:
    said: list = []
    real = bytescan.PreRead.check

    def check(self, lines):
        try:
            real(self, lines)
        except bytescan.Reparse:
            said.append(1)
            raise

    monkeypatch.setattr(bytescan.PreRead, "check", check)
    return said


@pytest.mark.parametrize("kind", ["raw", "details"])
def test_big_pages_one_after_another_are_read_from_the_bytes_and_chained(monkeypatch, tmp_path, kind):
    """Three runs' pages, the later ones past bytescan.KEEP (none of their rows kept in the text):
    read from the bytes without a Reparse (the check compared a page's header line with its first
    cell), every way alike (tests/ncu_pages.py), the columns chained."""
    monkeypatch.setattr(bytescan, "KEEP", 1 << 12)
    if kind == "raw":
        text = raw.plain_page(400) * 3
        ps = raw._four(monkeypatch, tmp_path, text)
        n = 400 * len(raw.METRICS)
    else:
        text = details.page(300) * 3
        ps = details._five(monkeypatch, tmp_path, text)
        n = 300 * len(details.METRICS)
    said = _no_reparse(monkeypatch)
    ps = profconv.parse(str(tmp_path / ("raw.log" if kind == "raw" else "details.log")))
    assert said == []
    assert len(ps.profiles) == 3
    metric = ps.rows.cols["metric"]
    assert isinstance(metric, Chain) and len(metric.parts) == 6  # each page's metric rows and its GPU rows
    assert [len(p) for p in metric.parts[::2]] == [n] * 3  # (a raw page's a Tiled, a details page's its list)
    assert sum(1 for m in ps.rows.col("section") if m == "ncu-metric") == 3 * n


def test_the_tables_of_big_pages_find_each_profiles_rows_by_the_views(monkeypatch, tmp_path):
    """The terminal tables of a file of three big pages: each profile's rows found as ranges of the
    chained views (two 10 MB raw pages' table took 519 MiB: each profile's rows copied out as lists,
    their positions as a list), the CLI's outputs those of the row reader."""
    monkeypatch.setattr(bytescan, "KEEP", 1 << 12)
    path = tmp_path / "raw.log"
    path.write_text(raw.plain_page(400) * 3)
    found = []
    real = profile_tables._where
    monkeypatch.setattr(profile_tables, "_where", lambda *a: found.append(real(*a)) or found[-1])
    assert_cli_alike(monkeypatch, path, raw._row_reader, outs=("--json", "--csv", "--all", "--threshold=0.5"))
    found.clear()
    assert run_cli("parse", str(path)).returncode == 0
    assert len(found) == 3 * 7  # each profile's six timed sections and its metrics
    assert [f for f in found if len(f) > 3] == [range(0, 2000), range(2003, 4003), range(4006, 6006)]


@pytest.mark.parametrize("kind", ["raw", "details"])
def test_one_profile_of_big_pages_is_a_window_of_the_views(monkeypatch, tmp_path, kind):
    """--profile N of a file of three big pages: that profile's rows are windows of the chained views
    (colviews.Window: two 10 MB raw pages' --profile 2 took 295 MiB as lists, 58 now), the same frame
    as the rows copied out, and the CLI's --profile outputs those of the row reader."""
    from profconv.parse import core
    from profconv.parse.colviews import Window

    monkeypatch.setattr(bytescan, "KEEP", 1 << 12)
    path = tmp_path / "pages.log"
    path.write_text(raw.plain_page(400) * 3 if kind == "raw" else details.page(300) * 3)
    ps = profconv.parse(str(path))
    rows_each = 400 * len(raw.METRICS) + 3 if kind == "raw" else 300 * len(details.METRICS) + 3  # (+ 3 kernels' GPU rows)
    for number in (1, 2, 3):
        one = ps.profile(number)
        assert isinstance(one.rows.cols["metric"], Window)
        copied = ps.rows.where(p == number for p in ps.rows.col("profile"))
        assert one.rows.to_frame().equals(copied.to_frame()) and one.rows.n == copied.n == rows_each
        assert [i.profile for i in one.profiles] == [number]
    assert isinstance(core._profile_rows(ps.rows, 2).cols["section"], Window)
    row_reader = raw._row_reader if kind == "raw" else details._row_reader
    for args in (["--profile=2"], ["--profile=3", "--json"], ["--profile=1", "--csv"]):
        a = run_cli("parse", str(path), *args)
        with monkeypatch.context() as m:
            row_reader(m)
            b = run_cli("parse", str(path), *args)
        assert a.returncode == 0 and (a.stdout, a.stderr) == (b.stdout, b.stderr) and len(a.stdout) > 50_000
