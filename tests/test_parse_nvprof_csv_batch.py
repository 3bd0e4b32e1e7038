"""nvprof --csv summary tables read together as columns (profconv/parse/dialects/nvprof/csv_batch.py):
the same `--json`/`--csv` as the row reader (csv.read_table) and as the pure-Python readers, on
generated logs whose tables are taken and on variants whose tables must be left to the row reader."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import profconv
from profconv.parse import native
from profconv.parse.dialects.nvprof import csv_batch, sweep
from tests.conftest import run_cli
from tests.nvprof_csv_rows import summary_rows

pytest.importorskip("pyarrow", reason="pyarrow is not installed: the row reader alone is used")

HEADER = csv_batch.HEADER
UNITS = ",%,ms,,ms,ms,ms,"


def _profile(k: int, rows: list[str], units: str = UNITS, after: str = "") -> str:
    return (f"=={k}== NVPROF is profiling process {k}, command: ./a {k}\n=={k}== Profiling result:\n"
            f"{HEADER}\n{units}\n" + "\n".join(rows) + "\n" + after)


def _log(n: int = 30, seed: int = 1, odd: dict[int, str] | None = None, units: str = UNITS) -> str:
    """n profiles; profile k's table replaced by odd[k] (the text after its header) where given."""
    rng = random.Random(seed)
    parts = []
    for k in range(n):
        if odd and k in odd:
            parts.append(f"==7== NVPROF is profiling process 7, command: ./a\n==7== Profiling result:\n{HEADER}\n"
                         + odd[k])
        else:
            parts.append(_profile(k + 1, summary_rows(rng), units))
    return "".join(parts)


def _taken(monkeypatch) -> list[int]:
    """A list that counts the tables the batch gives (filled while the parse runs): one by one
    (`take`) or in one go (`model.SweptRun`, in sweep._following: a profile's start line is its header's index less one)."""
    taken: list[int] = []
    real = csv_batch.Prepared.take

    def take(self, i):
        got = real(self, i)
        if got is not None:
            taken.append(i)
        return got

    monkeypatch.setattr(csv_batch.Prepared, "take", take)
    real_run = sweep.SweptRun

    def run(group_sweep, tool, first, starts, *rest):  # the tables a sweep takes in one go
        taken.extend(a + 1 for a in starts)
        return real_run(group_sweep, tool, first, starts, *rest)

    monkeypatch.setattr(sweep, "SweptRun", run)
    return taken


def _hide_c(m) -> None:
    """The C reader of the rows (profconv.parse._summarycells) hidden: pyarrow reads them."""
    real = native.load
    m.setattr(native, "load", lambda name: None if name == "_summarycells" else real(name))


def _outputs(path: Path, monkeypatch) -> tuple[dict[str, tuple], dict[str, int]]:
    """--json and --csv of `path` by the batch (its rows read in C where built: "batch", and by
    pyarrow: "arrow"), the row reader (pyarrow on) and the pure-Python readers; how many tables the
    batch gave each way."""
    got: dict[str, tuple] = {}
    taken: dict[str, int] = {}
    for how in ("batch", "arrow", "rows", "pure"):
        with monkeypatch.context() as m:
            m.setattr(csv_batch, "MIN_ROWS", 1 if how in ("batch", "arrow") else 10**9)
            if how == "pure":
                m.setenv("PROFCONV_NO_ARROW", "1")
            if how == "arrow":
                _hide_c(m)
            counted = _taken(m)
            got[how] = tuple((r.returncode, r.stdout, r.stderr) for r in
                             (run_cli("parse", str(path), mode) for mode in ("--json", "--csv")))
            taken[how] = len(counted) // 2  # two parses: --json and --csv
    return got, taken


GOOD = '"GPU activities",50.000000,1.000000,2,0.500000,0.400000,0.600000,"k(int)"\n'
CASES = {
    # what the batch takes: every table but the odd ones
    "plain": ({}, 30),
    "a stray line after the rows": ({3: UNITS + "\n" + GOOD + "Done.\n\n"}, 29),
    "a stray line among the rows": ({3: UNITS + "\n" + GOOD + "Done.\n" + GOOD}, 29),
    "a share above 100": ({4: UNITS + "\n" + GOOD.replace("50.000000", "100.500000")}, 29),
    "a cell with a unit": ({5: UNITS + "\n" + GOOD.replace("1.000000,", "1.000000ms,")}, 29),
    "an empty cell": ({5: UNITS + "\n" + GOOD.replace(",0.400000,", ",,")}, 29),
    "an exponent": ({5: UNITS + "\n" + GOOD.replace("0.400000", "4e-1")}, 29),
    "a count with a point": ({6: UNITS + "\n" + GOOD.replace(",2,", ",2.0,")}, 29),
    "a 400-digit time": ({6: UNITS + "\n" + GOOD.replace("1.000000,", "9" * 400 + ",")}, 29),
    "sections that come back": ({7: UNITS + "\n" + GOOD + GOOD.replace("GPU activities", "API calls") + GOOD}, 29),
    "a name with an entity": ({8: UNITS + "\n" + GOOD.replace("k(int)", "k&amp;(int)")}, 29),
    "a name with bold": ({8: UNITS + "\n" + GOOD.replace("k(int)", "**k**(int)")}, 29),
    "a name with a quote": ({8: UNITS + "\n" + GOOD.replace("k(int)", 'k""x(int)')}, 29),
    "a name with commas": ({9: UNITS + "\n" + GOOD.replace("k(int)", "k(int, float, char)")}, 30),
    "an unquoted name": ({9: UNITS + "\n" + GOOD.replace('"k(int)"', "k(int)")}, 29),
    "units in seconds": ({10: ",%,s,,s,s,s,\n" + GOOD}, 30),
    "units in microseconds": ({10: ",%,us,,us,us,us,\n" + GOOD}, 30),
    "no units row": ({11: GOOD}, 29),
    "an unknown label": ({12: UNITS + "\n" + GOOD.replace("GPU activities", "Something else")}, 30),
    "OpenACC labels": ({12: UNITS + "\n" + GOOD.replace("GPU activities", "OpenACC (excl)")
                        + GOOD.replace("GPU activities", "OpenACC (incl)")}, 30),
    "damaged row": ({13: UNITS + "\n" + GOOD.replace(",2,", ",7,")}, 29),  # total not calls x avg: the row reader's
    "a total within 1%": ({13: UNITS + "\n" + GOOD.replace("1.000000,", "1.009000,")}, 30),
    "an API call among the GPU activities": ({14: UNITS + "\n" + GOOD.replace("k(int)", "cudaMalloc")}, 29),
    "the input ends in a table": ({29: UNITS + "\n" + GOOD.rstrip("\n")}, 30),
    # what the C reader of the rows leaves to the row reader where pyarrow's reading takes it (the
    # third figure: the tables pyarrow's reading gives), and what both take
    "a name with blanks around it": ({15: UNITS + "\n" + GOOD.replace("k(int)", " k(int) ")}, 29, 30),
    "a name with a tab": ({15: UNITS + "\n" + GOOD.replace("k(int)", "k(int,\tint)")}, 29, 30),
    "a non-ASCII name": ({15: UNITS + "\n" + GOOD.replace("k(int)", "noyau_é(int)")}, 29, 30),
    "an empty name": ({16: UNITS + "\n" + GOOD.replace('"k(int)"', '""')}, 29, 30),
    "an empty label": ({16: UNITS + "\n" + GOOD.replace('"GPU activities"', '""')}, 29, 30),
    "a label with a comma": ({16: UNITS + "\n" + GOOD.replace("GPU activities", "GPU, activities")}, 30),
    "a template name": ({17: UNITS + "\n" + GOOD.replace("k(int)", "void k<int, 4><<<(1,1,1)>>>(int*)")}, 30),
    "a name with an HTML tag": ({17: UNITS + "\n" + GOOD.replace("k(int)", "k<tt>(int)")}, 29),
    "a name with a closing tag": ({17: UNITS + "\n" + GOOD.replace("k(int)", "k(int)</i>")}, 29),
    "a name with a bar": ({18: UNITS + "\n" + GOOD.replace("k(int)", "k(int|int)")}, 29),
    "a name with a backslash": ({18: UNITS + "\n" + GOOD.replace("k(int)", "k(int\\n)")}, 29),
    "a carriage return": ({18: UNITS + "\n" + GOOD.replace("\n", "\r\n")}, 30),  # the line ends read as '\n'
    "a cell ending in a point": ({19: UNITS + "\n" + GOOD.replace("0.400000", "0.")}, 29),
    "a cell starting with a point": ({19: UNITS + "\n" + GOOD.replace("0.400000", ".4")}, 29),
    "a cell with a sign": ({19: UNITS + "\n" + GOOD.replace("0.400000", "+0.4")}, 29),
    "a cell with blanks": ({19: UNITS + "\n" + GOOD.replace("0.400000", " 0.4")}, 29),
    "a 19-digit count": ({20: UNITS + "\n" + GOOD.replace(",2,", ",1234567890123456789,")}, 29),
    "a time of 40 digits": ({20: UNITS + "\n" + GOOD.replace("0.600000,", "0.6000000000000000000000000000000000000001,")}, 30),
    "a time of 300 decimals": ({20: UNITS + "\n" + GOOD.replace("0.600000,", "0." + "6" * 300 + ",")}, 29, 30),
    "a units row without a unit over Max": ({21: ",%,ms,,ms,ms,KB,\n" + GOOD}, 29),
    "a units row of nanoseconds": ({21: ",%,ns,,ns,ns,ns,\n" + GOOD}, 30),
}


@pytest.mark.parametrize("case", list(CASES))
def test_batch_gives_what_the_row_reader_gives(case, tmp_path, monkeypatch):
    odd, want_taken, *by_arrow = CASES[case]
    path = tmp_path / "log.csv.txt"
    path.write_text(_log(odd=odd), encoding="utf-8")
    got, taken = _outputs(path, monkeypatch)
    assert got["batch"] == got["arrow"] == got["rows"] == got["pure"]
    assert got["batch"][0][0] == 0
    want = {"batch": want_taken if native.load("_summarycells") else (by_arrow or [want_taken])[0],
            "arrow": (by_arrow or [want_taken])[0]}
    assert {k: taken[k] for k in want} == want


def test_one_table_in_many_a_prefixed_log_is_left_to_the_row_reader(tmp_path, monkeypatch):
    text = _log(n=5).replace(HEADER, "==1== " + HEADER, 1)
    path = tmp_path / "log.txt"
    path.write_text(text)
    got, taken = _outputs(path, monkeypatch)
    assert got["batch"] == got["arrow"] == got["rows"] == got["pure"]
    assert taken["batch"] == taken["arrow"] == 4


def test_values_of_a_table_read_together(monkeypatch):
    monkeypatch.setattr(csv_batch, "MIN_ROWS", 1)
    taken = _taken(monkeypatch)
    text = _profile(1, ['"GPU activities",50.000000,0.001000,2,0.500000,0.400000,0.600000,"k(int)"',
                        '"API calls",100.000000,0.003000,3,1.000000,0.500000,2.000000,"cudaMalloc"'],
                    units=",%,ms,,us,us,us,")
    ps = profconv.parse_text(text)
    rows = ps.rows
    assert list(rows.col("section")) == ["gpu", "api"]
    assert list(rows.col("name")) == ["k(int)", "cudaMalloc"]
    assert list(rows.col("total_ns")) == [1000.0, 3000.0]
    assert list(rows.col("avg_ns")) == [500.0, 1000.0]
    assert list(rows.col("min_ns")) == [400.0, 500.0]
    assert list(rows.col("max_ns")) == [600.0, 2000.0]
    assert list(rows.col("calls")) == [2, 3]
    assert list(rows.col("time_pct")) == [50.0, 100.0]
    assert list(rows.col("line_start")) == [5, 6]
    assert taken == [2]  # the header's index: the table came from the batch


def test_the_batch_keeps_the_printed_step():
    row = '"GPU activities",50.000000,0.000001,2,0.500000,0.400000,0.600000,"k(int)"'
    lines = [HEADER, ",%,s,,us,us,us,", row, row.replace("0.000001,2", "0.0000010,2")]
    group = csv_batch.read("\n".join(lines[2:]), [(0, 4)], csv_batch.units_of(lines[1]))
    assert group is not None and group.ok == [True]
    blocks = group.blocks(0)
    assert blocks is not None and len(blocks) == 1
    assert blocks[0].resolution == (1e9 * 10.0**-6, 1e3 * 10.0**-6)  # the first row's steps
    assert (blocks[0].line_start, blocks[0].line_end) == (3, 4)


def test_times_read_as_the_row_reader_reads_them():
    rng = random.Random(5)
    cells = [f"{rng.randint(0, 10**rng.randint(1, 12))}.{rng.randint(0, 10**6):06d}" for _ in range(3000)]
    cells += ["0.1", "260.10", "0.000469", "123456789012345.5", "7"]
    rows = [f'"GPU activities",1.0,{c},1,{c},{c},{c},"k"' for c in cells]
    for unit, exp in (("s", "e9"), ("ms", "e6"), ("us", "e3"), ("ns", "")):
        group = csv_batch.read("\n".join(rows), [(0, len(rows) + 2)], csv_batch.units_of(f",%,{unit},,{unit},{unit},{unit},"))
        assert group is not None and group.ok == [True]
        assert list(group.numbers["total_ns"]) == [float(c + exp) for c in cells]


def test_units_rows():
    assert csv_batch.units_of(",%,ms,,ms,ms,ms,") == dict(zip(csv_batch.CELLS, ["", "%", "ms", "", "ms", "ms", "ms", ""]))
    assert csv_batch.units_of(",%,ms,,ms,ms,") is None  # a cell short
    assert csv_batch.units_of(",%,ms,,ms,ms,KB,") is None  # no time unit over Max
    assert csv_batch.units_of(",%,ms,1,ms,ms,ms,") is None  # a number: a row, not units


def test_a_long_log_read_part_by_part(tmp_path, monkeypatch):
    """Read in windows (profconv.parse.stream): each window's tables read together; line numbers
    shifted to the file's once (a batch's ranges carry their block's)."""
    from profconv.parse import stream

    monkeypatch.setattr(stream, "STREAM_FROM", 1 << 16)
    monkeypatch.setattr(stream, "WINDOW", 1 << 14)
    path = tmp_path / "long.log"
    path.write_text(_log(n=500, seed=4, odd={7: UNITS + "\n" + GOOD.replace(",2,", ",7,")}))
    assert stream.read_long(str(path)) is not None
    assert sum(1 for _ in stream.parts(str(path))) > 5
    got, taken = _outputs(path, monkeypatch)
    assert got["batch"] == got["arrow"] == got["rows"] == got["pure"]
    assert taken["batch"] == taken["arrow"] >= 499  # a window's tables after its cut are read again in the next window
    with monkeypatch.context() as m:
        m.setattr(csv_batch, "MIN_ROWS", 1)
        rows = profconv.parse(str(path)).rows
    assert list(rows.col("line_start"))[-3:] == [3496, 3497, 3498]  # 499 profiles of 7 lines, one of 5
    assert list(rows.col("line_start"))[:3] == [5, 6, 7]


def test_a_c_module_built_from_an_older_source_is_left_unused(tmp_path, monkeypatch):
    """A checkout whose _summarycells was built before it could read these rows (no `nvprof`): the
    batch is read by pyarrow, the output the same."""
    import types

    real = native.load
    stale = types.SimpleNamespace(columns=None, status=None)  # what an older build exports, no `nvprof`
    path = tmp_path / "log.csv.txt"
    path.write_text(_log(n=12))
    want, _ = _outputs(path, monkeypatch)
    with monkeypatch.context() as m:
        m.setattr(csv_batch, "MIN_ROWS", 1)
        m.setattr(native, "load", lambda name: stale if name == "_summarycells" else real(name))
        counted = _taken(m)
        got = tuple((r.returncode, r.stdout, r.stderr) for r in
                    (run_cli("parse", str(path), mode) for mode in ("--json", "--csv")))
    assert got == want["batch"] == want["arrow"]
    assert len(counted) // 2 == 12


def test_a_c_module_without_the_table_finder_finds_them_one_by_one(tmp_path, monkeypatch):
    """A _summarycells built before `nvprof_tables` (it reads the rows, `nvprof`, but does not find
    the tables): the tables are found one by one, the same ones, the output the same."""
    import types

    real = native.load
    c = real("_summarycells")
    if c is None:
        pytest.skip("the C accelerator is not built")
    older = types.SimpleNamespace(columns=c.columns, status=c.status, nvprof=c.nvprof)
    path = tmp_path / "log.csv.txt"
    path.write_text(_log(n=12))
    want, _ = _outputs(path, monkeypatch)
    found: list[int] = []
    one_by_one = csv_batch._found_one_by_one
    with monkeypatch.context() as m:
        m.setattr(csv_batch, "MIN_ROWS", 1)
        m.setattr(native, "load", lambda name: older if name == "_summarycells" else real(name))
        m.setattr(csv_batch, "_found_one_by_one", lambda lines, i: found.append(i) or one_by_one(lines, i))
        counted = _taken(m)
        got = tuple((r.returncode, r.stdout, r.stderr) for r in
                    (run_cli("parse", str(path), mode) for mode in ("--json", "--csv")))
    assert got == want["batch"]
    assert found == [2, 2]  # one scan a parse, from the first header
    assert len(counted) // 2 == 12
