"""Long sweeps of rocprof statistics (`cat run*/results.stats.csv`: each run's tables, a profile each)
read part by part (profconv/parse/stream.py) give what the whole-file parse gives: profiles, every row
cell, unplaced lines and notes (rocprofv3's domain summary's note, of its own lines); the CLI's --json,
--csv and table of a streamed sweep are the whole file's bytes. A cut is only ever where a table opens a
profile (a table of a section the profile holds already)."""

from __future__ import annotations

from pathlib import Path

import pytest

from profconv.nogc import paused
from profconv.parse import stream as stream_mod
from profconv.parse.dialects import rocprof
from tests.stream_check import assert_cli_streamed_as_whole, check_parts, split_repeated_and_mixed
from tests.test_parse_rocprof import V1, V3


@pytest.fixture
def logs(tmp_path) -> list[str]:
    (tmp_path / "v1.csv").write_text(V1)
    # a row that does not read (unplaced) and the HIP API table of rocprof 1.x
    (tmp_path / "v1-api.csv").write_text(V1.replace("170400,42600", "170400,abc") + '"Name","Calls","TotalDurationNs",'
                                         '"AverageNs","Percentage"\n"hipMemcpy",12,9000,750,100.0\n')
    return [str(V3), str(tmp_path / "v1.csv"), str(tmp_path / "v1-api.csv")]


def test_parts_equal_the_whole_parse_of_repeated_and_mixed_sweeps(logs, tmp_path, small_windows):
    # 3 of 6 (when written): the rocprof 1.x files are 130-250 bytes, three of them under one window
    assert split_repeated_and_mixed(logs, tmp_path, small_windows) == 3


def test_a_sweep_is_read_in_parts_with_its_domain_notes(logs, tmp_path, monkeypatch):
    """A 4 MB sweep of the three in turn: read in parts, each run a profile (a v1 kernels table after
    another is a new profile), the domain summary's note said once a run; the CLI's three outputs
    are those of the file read whole."""
    path = tmp_path / "sweep.csv"
    text = "".join(Path(f).read_text() for f in logs)
    n = 4_200_000 // len(text) + 1
    path.write_text(text * n)
    with paused():
        st = stream_mod.Stream(str(path))
        parts = list(st)
    assert len(parts) > 10
    assert sum(len(p.profiles) for p in parts) == 3 * n
    assert sum(len(p.unplaced) for p in parts) == n
    notes = stream_mod.whole_notes([(p.notes, p.lead) for p in parts], st.warnings([]))
    assert sum(rocprof.DOMAIN_NOTE in note for note in notes) == n
    assert check_parts(path, 1 << 16) > 10
    assert_cli_streamed_as_whole(path, monkeypatch)
