"""What a real-log case holds and how it is checked: the helpers of tests/test_parse_real_*.py.

Each real log in tests/data was copied from a public repository (tests/data/SOURCES.md). A Case's
values were checked by hand against the lines they come from: times in ns after the printed unit,
calls/avg as printed, the top row and the size of the >=90% set of each ranked section, the metric
rows' unit and value. Files holding no profiler table (a gprof listing, `nvprof --help`,
`ncu --list-sections`, a run that profiled nothing) must give 'no profile found' (exit 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd
import pytest

import profconv
from profconv.analysis.ranking import rank_profile
from profconv.errors import ExitStatus, NoProfileFound
from profconv.parse import validate

DATA = "tests/data/"


@dataclass
class Case:
    path: str
    tools: tuple[str, ...]  # the dialect of each profile, in file order
    rows: int
    unplaced: int
    sections: dict[tuple[int, str], int]  # (profile, section) -> rows
    tops: list[tuple[int, str, str, int]]  # (profile, section, top row's name prefix, rows in the >=90% set)
    # (profile, section, name prefix, total_ns, calls, avg_ns) for timed rows;
    # (profile, section, name prefix, metric, unit, value, value_text) for metric rows;
    # (profile, trace section, line, name prefix, start_ns, total_ns) for trace rows
    checks: list[tuple] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the start of every note, in order


def _num(v) -> float | None:
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return float(v)


def _eq(got, want) -> bool:
    if want is None:
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


def _row(frame: pd.DataFrame, profile: int, section: str, name: str, metric: str | None = None) -> pd.Series:
    sel = frame[(frame["profile"] == profile) & (frame["section"] == section)]
    exact = sel["name"] == name  # a whole name (cudaGetDevice) before a prefix (cudaGetDeviceProperties)
    sel = sel[exact] if exact.any() else sel[sel["name"].str.startswith(name, na=False)]
    if metric is not None:
        sel = sel[sel["metric"] == metric]
    assert len(sel) >= 1, (profile, section, name, metric)
    return sel.iloc[0]


def check_no_profile(path: str, cli) -> str:
    """A test file with no profile: NoProfileFound from the library; from the CLI exit 2, nothing on
    stdout and one line on stderr, no traceback. The line is returned."""
    with pytest.raises(NoProfileFound):
        profconv.parse(DATA + path)
    r = cli("parse", DATA + path)
    assert r.returncode == ExitStatus.BAD_INPUT
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    return lines[0]


def check_listed_once(paths: list[str]) -> None:
    """Each test file is listed once in its batch and has its provenance row in SOURCES.md."""
    assert len(set(paths)) == len(paths)
    sources = open(DATA + "SOURCES.md", encoding="utf-8").read()
    assert [p for p in paths if f"| {p} |" not in sources] == []


def parse_text_file(tmp_path, text: str, name: str = "log.txt"):
    """profconv.parse of `text` written to a UTF-8 file (the path a user's log takes)."""
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return profconv.parse(str(p))


def check_case(case: Case) -> None:
    ps = profconv.parse(DATA + case.path)
    validate(ps.frame)
    frame = ps.frame
    assert tuple(p.tool for p in ps.profiles) == case.tools
    assert len(frame) == case.rows
    assert len(ps.unplaced) == case.unplaced, ps.unplaced[:5]
    got = {(int(p), str(s)): len(g) for (p, s), g in frame.groupby(["profile", "section"])}
    assert got == case.sections
    for profile, section, top_name, top_count in case.tops:
        ranked = rank_profile(frame, profile, [section])[0]
        assert ranked.rows.iloc[0]["name"].startswith(top_name), (profile, section, ranked.rows.iloc[0]["name"])
        assert ranked.top_count == top_count, (profile, section)
    for c in case.checks:
        if c[1].endswith("-trace"):
            profile, section, line, name, start_ns, total_ns = c
            r = frame[(frame["profile"] == profile) & (frame["section"] == section) & (frame["line_start"] == line)]
            assert len(r) == 1, c
            r = r.iloc[0]
            assert r["name"].startswith(name), (c, r["name"])
            assert _eq(_num(r["start_ns"]), start_ns) and _eq(_num(r["total_ns"]), total_ns), (c, r["start_ns"], r["total_ns"])
        elif c[1] in ("metric", "ncu-metric"):
            profile, section, name, metric, unit, value, text = c
            r = _row(frame, profile, section, name, metric)
            assert (None if r["unit"] is pd.NA else r["unit"]) == unit, (c, r["unit"])
            assert _eq(_num(r["value"]), value), (c, r["value"])
            assert (None if r["value_text"] is pd.NA else r["value_text"]) == text, (c, r["value_text"])
        else:
            profile, section, name, total_ns, calls, avg_ns = c
            r = _row(frame, profile, section, name)
            assert _eq(_num(r["total_ns"]), total_ns), (c, r["total_ns"])
            assert (None if r["calls"] is pd.NA else int(r["calls"])) == calls, (c, r["calls"])
            assert _eq(_num(r["avg_ns"]), avg_ns), (c, r["avg_ns"])
    assert len(ps.notes) == len(case.notes), ps.notes
    for note, want in zip(ps.notes, case.notes):
        assert note.startswith(want), (note, want)


def check_top_row(case: tuple) -> None:
    """A first-corpus row (TOP_ROWS): file, profiles, rows, ranked section of profile 1, its top row's name
    (prefix), total ns, calls, rows in the >=90% set, unplaced lines. Values were checked against the logs."""
    path, n_profiles, n_rows, section, top_name, total_ns, calls, top_count, unplaced = case
    ps = profconv.parse(DATA + path)
    validate(ps.frame)
    assert len(ps.profiles) == n_profiles
    assert len(ps.frame) == n_rows
    ranked = rank_profile(ps.frame, 1, [section])[0]
    top = ranked.rows.iloc[0]
    assert top["name"].startswith(top_name)
    if total_ns is None:
        assert top["total_ns"] != top["total_ns"]
    else:
        assert top["total_ns"] == pytest.approx(total_ns, rel=1e-9)
    if calls is not None:
        assert top["calls"] == calls
    assert ranked.top_count == top_count
    assert len(ps.unplaced) == unplaced
