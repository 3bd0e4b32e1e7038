"""OpenACC timing (NV_ACC_TIME / PGI_ACC_TIME) blocks: a damaged event line is reported with its
times, which never land on the event above it (issue 26, hostile-2 D3)."""

from __future__ import annotations

from pathlib import Path

import profconv
from tests.parse_invariants import check_all

DATA = Path(__file__).parent / "data"
SINCOS = DATA / "acc-time" / "dmikushin-kernelgen-pgi2012-sincos-fortran-no-separators.log"


def _table(ps) -> list[tuple]:
    return [(r.section, r.name, float(r.total_ns), int(r.calls)) for r in ps.frame.itertuples()]


def test_the_log_as_printed():
    ps = profconv.parse_text(SINCOS.read_text())
    assert _table(ps) == [
        ("openacc", "sincos@sincos.f90:12 region", 2362577000.0, 1),
        ("gpu", "sincos@sincos.f90:15 kernel", 3575000.0, 1),
    ]
    assert ps.unplaced == []


def test_a_damaged_kernel_line_is_reported_and_the_region_keeps_its_time():
    text = SINCOS.read_text().replace("15: kernel launched 1 times", "null: kernel launched 1 times")
    ps = profconv.parse_text(text)
    check_all(ps, text)
    # the region's own time, not the kernel's 3,575 us moved onto it
    assert _table(ps) == [("openacc", "sincos@sincos.f90:12 region", 2362577000.0, 1)]
    assert [n for n, _ in ps.unplaced] == [20, 22]  # the kernel line and its time(us) line


def test_an_unreadable_count_does_not_move_the_times_either():
    text = SINCOS.read_text().replace("15: kernel launched 1 times", "15: kernel launched 1,2,3 times")
    ps = profconv.parse_text(text)
    assert _table(ps) == [("openacc", "sincos@sincos.f90:12 region", 2362577000.0, 1)]
    assert [n for n, _ in ps.unplaced] == [20, 22]
