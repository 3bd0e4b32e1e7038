"""The leaner per-profile and per-window steps of a parse give exactly what the plain ones gave:
the profiles' JSON written for all of a part at once, the rows gathered per window, line numbers
shifted where the rows are gathered."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profconv.parse.core import _block_notes, _rows
from profconv.parse.model import Block, RawProfile
from profconv.parse.schema import ProfileInfo, Row
from profconv.parse.table import Rows
from profconv.render.parse_output import _profile_json, _profiles_json

DATA = Path(__file__).parent / "data"
NAN = float("nan")

INFOS = st.builds(
    ProfileInfo,
    profile=st.integers(1, 10**6), tool=st.sampled_from(["nvprof", "nsys", "ncu"]),
    line_start=st.integers(1, 10**7), line_end=st.integers(1, 10**7),
    pid=st.none() | st.integers(0, 2**31),
    command=st.none() | st.text(max_size=30),
    model=st.none() | st.text(max_size=10),
    correctness=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    op_times_s=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4),
    device=st.none() | st.sampled_from(["Tesla V100-SXM2-16GB (0)", 'a "quoted"\nname', "ü"]),
)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(INFOS, max_size=6))
def test_profiles_json_is_each_profiles_json_joined(infos):
    def outcome(f):
        try:
            return f()
        except ValueError as exc:  # what the record type refuses (an infinite Op Time): the same error
            return ("raised", str(exc))

    assert outcome(lambda: _profiles_json(infos)) == outcome(lambda: ",\n".join(map(_profile_json, infos)))


def test_profiles_json_of_a_real_log():
    from profconv.parse import parse

    infos = parse(str(DATA / "seeds" / "002_b0bcac5cefbf4480.log")).profiles
    assert len(infos) == 6 and any(i.op_times_s for i in infos)
    assert _profiles_json(infos) == ",\n".join(map(_profile_json, infos))
    assert _profiles_json([]) == ""


def _raw() -> list[RawProfile]:
    """Two profiles: a block of Row objects, small bulk tables (arrays, as the bulk reader gives),
    one with a column the others lack, and a big table (a part of its own)."""
    def bulk(start: int, n: int, extra: bool = False) -> Rows:
        cols = {"section": ["gpu"] * n, "name": [f"k{i}" for i in range(n)],
                "line_start": list(range(start, start + n)), "line_end": list(range(start, start + n)),
                "time_pct": array("d", [100.0 / n] * n), "total_ns": array("d", [float(i) for i in range(n)]),
                "calls": [1] * n}
        if extra:
            cols["bytes"] = array("d", [8.0] * n)
        return Rows(cols, n)

    rows = [Row(section="api", name="cudaMalloc", line_start=3, line_end=3, time_pct=60.0, total_ns=6.0, calls=2,
                avg_ns=3.0), Row(section="api", name="cudaFree", line_start=4, line_end=4, time_pct=NAN, total_ns=4.0)]
    p1 = RawProfile(tool="nvprof", line_start=1, line_end=20, blocks=[
        Block(section="gpu", line_start=5, line_end=7, table=bulk(5, 3)),
        Block(section="api", line_start=3, line_end=4, rows=rows),
    ])
    p2 = RawProfile(tool="nvprof", line_start=21, line_end=2000, blocks=[
        Block(section="gpu", line_start=22, line_end=23, table=bulk(22, 2, extra=True)),
        Block(section="gpu-trace", line_start=30, line_end=1530, table=bulk(30, 1500)),
        Block(section="api", line_start=1600, line_end=1601, table=bulk(1600, 2)),
    ])
    return [p1, p2]


def _gather_one_by_one(raw: list[RawProfile], first: int, shift: int) -> dict[str, list]:
    """What _rows gives, built the plain way: every block's rows in order, a column missing where
    a block lacks it."""
    from profconv.parse.schema import ROW_FIELDS
    from profconv.parse.table import missing_value

    recs: list[dict] = []
    for number, prof in enumerate(raw, start=first):
        for blk in prof.blocks:
            if blk.rows:
                for r in blk.rows:
                    recs.append({**{f: getattr(r, f) for f in ROW_FIELDS}, "profile": number, "tool": prof.tool,
                                 "table": blk.line_start})
            elif blk.table is not None:
                for i in range(blk.table.n):
                    recs.append({**{c: v[i] for c, v in blk.table.cols.items()}, "profile": number,
                                 "tool": prof.tool, "table": blk.line_start})
    names = {c for r in recs for c in r}
    out = {c: [r.get(c, missing_value(c)) for r in recs] for c in names}
    for c in ("line_start", "line_end"):
        out[c] = [x + shift for x in out[c]]
    return out


@pytest.mark.parametrize("shift", [0, 1000])
def test_rows_gathered_per_window(shift):
    want = _gather_one_by_one(_raw(), 7, shift)
    got = _rows(_raw(), first=7, shift=shift)
    assert got.n == 1509
    assert {c for c in got.cols if c != "short_name"} == set(want)
    for c, values in want.items():
        col = list(got.col(c))
        assert len(col) == len(values)
        assert all(a == b or (a != a and b != b) for a, b in zip(col, values)), c
        assert [type(v) for v in col] == [type(v) for v in values], c
    assert got.col("short_name")[:3] == ["k0", "k1", "k2"]


def test_block_notes_of_tables_with_and_without_missing_shares():
    """Time(%) that does not add up is said for bulk tables (with '<0.01' rows: NaN) as for rows."""
    def table(pcts):
        n = len(pcts)
        return Rows({"section": ["gpu"] * n, "name": ["k"] * n, "line_start": [1] * n, "line_end": [1] * n,
                     "time_pct": array("d", pcts)}, n)

    raw = [RawProfile(tool="nvprof", line_start=1, line_end=9, blocks=[
        Block(section="gpu", line_start=2, line_end=4, table=table([50.0, 30.0, NAN])),
        Block(section="api", line_start=5, line_end=6, table=table([60.0, 40.0, NAN])),
        Block(section="nvtx", line_start=7, line_end=8, table=table([NAN, NAN])),
        Block(section="openacc", line_start=9, line_end=9, notes=["decimal mark unknown"],
              rows=[Row(section="openacc", name="r", line_start=9, line_end=9, time_pct=10.0)]),
    ])]
    assert _block_notes(raw, first=3) == {  # tables with a note only
        (3, "gpu"): ["lines 2-4: Time(%) adds up to 80.00%, not 100% (rows missing or cut)"],
        (3, "openacc"): ["lines 9-9: decimal mark unknown",
                         "lines 9-9: Time(%) adds up to 10.00%, not 100% (rows missing or cut)"],
    }


def test_line_starts_from_the_end():
    from profconv.parse.stream import _LineStarts

    for data in (b"a\nbb\n\nccc\n", b"\n\n\n", b"x\n", b"==1== NVPROF\r\n  # k\n\xc3\xa9\n"):
        lines = data.split(b"\n")[:-1]
        starts = _LineStarts(data, data.count(b"\n"))
        for k in [*range(len(lines), 0, -1), 1, len(lines), 2 if len(lines) > 1 else 1]:
            a, b = starts.span(k)
            assert data[a:b] == lines[k - 1]
            assert a == sum(map(len, lines[: k - 1])) + k - 1


@pytest.mark.parametrize("out", ["--json", "--csv"])
def test_spooled_output_copied_by_the_kernel_is_the_same(tmp_path, out):
    """A long log's --json/--csv goes from the temporary file to a stdout that is a file or a pipe
    by os.sendfile: the same bytes as written through Python (CliRunner's stdout has no descriptor),
    appended to a file too."""
    import os
    import subprocess
    import sys

    from tests.conftest import run_cli

    log = tmp_path / "long.log"
    log.write_text((DATA / "nvprof-new" / "tyler-cs566-reductions.log").read_text() * 1800)  # 4.4 MB: streamed
    want = run_cli("parse", str(log), out).stdout.encode()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[1]),
                                                                     os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, "-m", "profconv", "parse", str(log), out]
    piped = subprocess.run(cmd, capture_output=True, env=env)
    assert piped.returncode == 0 and piped.stdout == want
    target = tmp_path / "out.txt"
    target.write_bytes(b"before\n")
    with open(target, "ab") as f:
        assert subprocess.run(cmd, stdout=f, env=env).returncode == 0
    assert target.read_bytes() == b"before\n" + want
    with open(target, "wb") as f:
        assert subprocess.run(cmd, stdout=f, env=env).returncode == 0
    assert target.read_bytes() == want


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.sampled_from([1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 1e-5, 0.0, -0.0,
                                           5e-324, 1.5e-06, 0.877, 123456.0])), min_size=1, max_size=30))
def test_float_cells_are_repr(values):
    """A float column's CSV cells: float.__repr__ of each ('' for NaN), however msgspec writes them."""
    from profconv.render.rows import _csv_column

    assert _csv_column("total_ns", values) == ["" if v != v else repr(v) for v in values]


def test_float_cells_write_only_the_odd_cells_by_repr():
    from profconv.render import rowjoin
    from profconv.render.rows import _cells, _csv_column

    assert _csv_column("total_ns", [0.5, 1.5e-06, 0.25, float("nan"), 2e16]) == ["0.5", "1.5e-06", "0.25", "", "2e+16"]
    assert _csv_column("total_ns", [0.5, 230307.00000000003]) == ["0.5", "230307.00000000003"]
    kind, text, _ = _cells("total_ns", [0.5, 1.5e-06, 0.25])  # msgspec's text, two cells of it kept
    assert kind == rowjoin.FLOATS and text == b"0.5,1.5e-6,0.25"
    assert _cells("total_ns", [0.25] * 3) == b"0.25" and _cells("total_ns", [1.5e-06] * 3)[0] == rowjoin.FLOATS
