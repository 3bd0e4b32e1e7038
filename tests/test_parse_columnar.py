"""The columnar reader (profconv/parse/columnar.py): machine-written CSV tables as columns through
pyarrow, the project's number semantics kept, and the same output as the pure-Python row readers:
`profconv parse FILE --json/--csv` of every test log with the reader and with PROFCONV_NO_ARROW=1,
and big generated tables (where the reader is used) against the row-by-row reader."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import profconv
from profconv.parse import columnar
from profconv.parse.dialects import nsys
from tests.conftest import run_cli

pytest.importorskip("pyarrow", reason="pyarrow is not installed: the row readers alone are used")

DATA = Path(__file__).parent / "data"
FILES = sorted(str(p.relative_to(DATA)) for p in DATA.rglob("*") if p.is_file() and p.name != "SOURCES.md"
               and p.parts[len(DATA.parts)] in ("nsys-csv", "nsys-text", "ncu-csv", "ncu-text", "pasted"))


def _cli(monkeypatch, arrow: bool, *args: str):
    with monkeypatch.context() as m:
        if arrow:
            m.delenv("PROFCONV_NO_ARROW", raising=False)
        else:
            m.setenv("PROFCONV_NO_ARROW", "1")
        assert columnar.enabled() == arrow or not arrow
        return run_cli(*args)


@pytest.mark.parametrize("out", ["--json", "--csv"])
@pytest.mark.parametrize("name", FILES)
def test_every_log_alike_with_and_without_arrow(monkeypatch, name, out):
    a = _cli(monkeypatch, True, "parse", str(DATA / name), out)
    b = _cli(monkeypatch, False, "parse", str(DATA / name), out)
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


def test_switched_off(monkeypatch):
    monkeypatch.setenv("PROFCONV_NO_ARROW", "1")
    assert not columnar.enabled()
    monkeypatch.delenv("PROFCONV_NO_ARROW")
    monkeypatch.setenv("PROFCONV_PURE_PYTHON", "1")
    assert not columnar.enabled()
    monkeypatch.delenv("PROFCONV_PURE_PYTHON")
    assert columnar.enabled()


def _read(body: str, **kw):
    return columnar.read_csv(("a,b,name\n" + body).encode(), floats=kw.pop("floats", ["a"]),
                             counts=kw.pop("counts", ["b"]), texts=["name"], **kw)


def test_reads_columns():
    got = _read('1.5,2,k\n0.1,9007199254740993,"x, y"\n2e-05,0,"a""b"\n')
    assert got is not None and got.n == 3
    assert list(got.numbers["a"]) == [1.5, 0.1, 2e-05]
    assert got.numbers["b"] == [2, 9007199254740993, 0]  # exact, never through a double
    assert got.texts["name"].values == ["k", "x, y", 'a"b']
    assert got.texts["name"].distinct == ["k", "x, y", 'a"b']


def test_equal_names_share_one_object():
    got = _read("1,1,k\n2,2,m\n3,3,k\n")
    assert got is not None
    v = got.texts["name"].values
    assert v[0] is v[2] and got.texts["name"].distinct == ["k", "m"]


@pytest.mark.parametrize("cell", ["-5", "-0", "nan", "inf", "1e400", "1_0", '"1,5"', "1.5ms", "0x10", "NA", "",
                                  "١٢"])
def test_refused_float_cells(cell):
    assert _read(f"1,1,k\n{cell},2,m\n") is None


@pytest.mark.parametrize("cell", ["-1", "1.5", "", "9223372036854775808", "1e3", "nan"])
def test_refused_count_cells(cell):
    assert _read(f"1,1,k\n2,{cell},m\n") is None


def test_empty_cells_where_allowed_are_nan():
    got = _read("1,1,k\n,2,m\n", empty=["a"])
    assert got is not None and got.numbers["a"][0] == 1.0 and math.isnan(got.numbers["a"][1])
    assert _read("1,1,k\nnan,2,m\n", empty=["a"]) is None  # 'nan' written out is no empty cell


@pytest.mark.parametrize("body", ["1,1,k\n2,2\n", "1,1,k\n2,2,m,4\n", "1,1,k\r\n2,2,m\n", '1,1,"open\n2,2,m\n',
                                  "1,1,k\n\n2,2,m\n"])
def test_refused_tables(body):
    assert _read(body) is None


def test_a_column_twice_in_the_header_is_refused():
    assert columnar.read_csv(b"a,a,name\n1,2,k\n", floats=["a"], texts=["name"]) is None


def test_not_utf8_is_refused():
    assert columnar.read_csv(b"a,name\n1,k\xff\n", floats=["a"], texts=["name"]) is None


def test_read_strings():
    got = columnar.read_strings(b'"ID","v"\n"0","1,180.50"\n"1",""\n', ["v"])
    assert got is not None and got["v"].values == ["1,180.50", ""]


def _trace(n: int) -> str:
    head = ("Processing [r.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]...\n\n"
            "Start (ns),Duration (ns),CorrId,GrdX,Bytes (MB),Device,Name\n")
    names = ["k(float*, int)", "[CUDA memcpy HtoD]", "gemm"]
    return head + "".join(f'{1000 + 7 * i},{i % 97 + 1},{i},1,,H200,"{names[i % 3]}"\n' for i in range(n))


def test_big_trace_read_as_columns_equals_rows(monkeypatch):
    """pyarrow's columns, the pure-Python bulk reader's (no pyarrow) and the row-by-row reader's."""
    n = nsys.BULK_ROWS + 100
    text = _trace(n)
    fast = profconv.parse_text(text)
    monkeypatch.setenv("PROFCONV_NO_ARROW", "1")
    split = profconv.parse_text(text)
    monkeypatch.setattr(nsys, "TEXT_BULK_ROWS", 10**9)
    slow = profconv.parse_text(text)
    assert fast.rows.n == slow.rows.n == split.rows.n == n + 3  # the trace and its summary's 3 names
    for other in (split, slow):
        assert fast.frame.equals(other.frame) and fast.notes == other.notes and fast.unplaced == other.unplaced
    trace = fast.frame[fast.frame.section == "gpu-trace"]
    assert trace["start_ns"].iloc[5] == 1035.0 and trace["total_ns"].iloc[5] == 6.0
    assert trace["name"].iloc[0] == "k(float*, int)" and trace["line_start"].iloc[0] == 4


def test_frame_missing_string_columns_as_one_block_of_nulls(monkeypatch):
    """Rows.to_frame makes a string column the rows never had as pyarrow nulls in one go: the same
    frame, dtype for dtype, as from n Nones."""
    import pandas as pd

    from profconv.parse import table

    ps = profconv.parse_text(_trace(50))
    fast = ps.rows.to_frame()
    monkeypatch.setattr(table, "_missing_column", lambda pd, n, dtype: pd.array([None] * n, dtype=dtype))
    slow = ps.rows.to_frame()
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    assert fast["metric"].isna().all() and str(fast["metric"].dtype) == "string"


def test_worth_loading_pyarrow(monkeypatch):
    """A process that has not loaded pyarrow (the CLI's --json) reads a table as columns only where
    the table pays for loading it; one that has (pandas loads it) always does."""
    import sys

    assert columnar.worth(10, 100)
    monkeypatch.delitem(sys.modules, "pyarrow")
    assert not columnar.worth(10, 100) and columnar.worth(100, 100)
    monkeypatch.setenv("PROFCONV_NO_ARROW", "1")
    assert not columnar.worth(100, 100)


def test_columns_taken_from_the_chunks_buffers_without_pandas():
    """Numbers and codes come from the chunks' own buffers (nulls NaN), as ChunkedArray.to_numpy
    gives them, across chunks and slices: and reading a table leaves pandas unloaded (to_numpy
    loads it: ~40 MiB in a CLI child)."""
    import os
    import subprocess
    import sys

    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    data = b"a,b\n" + b"1.5,2\n,3\n" * 5000
    t = pacsv.read_csv(pa.py_buffer(data), read_options=pacsv.ReadOptions(block_size=1000),
                       convert_options=pacsv.ConvertOptions(column_types={"a": pa.float64(), "b": pa.int64()}))
    a, b = t.column("a"), t.column("b")
    assert a.num_chunks > 10
    for col, nan in ((a, True), (b, False), (a.slice(3, 100), True), (b.slice(7, 0), False)):
        assert np.array_equal(columnar._numpy(col, nan=nan), col.to_numpy(), equal_nan=True)
    code = ("import sys; from profconv.parse import columnar; "
            "got = columnar.read_csv(b'x,n,k\\n' + b'1.5,2,a\\n,3,b\\n' * 100, floats=['x'], counts=['n'], texts=['k'], "
            "empty=['x']); assert got.n == 200 and got.texts['k'].values[:2] == ['a', 'b']; "
            "print('pandas' in sys.modules)")
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         env={**os.environ, "PYTHONPATH": root}).stdout
    assert out.strip() == "False"
