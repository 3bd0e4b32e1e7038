"""A sweep's small nsys summary tables read in C (profconv/parse/_summarycells.c): the status of each
row as _bytescan.cells / nsys_batch.row_status give it, the values as Python's float() and int() of
the cells, the names numbered in order of first appearance, and the same batch (and the same CLI
output) as pyarrow's reader of the same rows (nsys_batch._read_by_pyarrow)."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from profconv.parse import native
from profconv.parse.dialects import nsys_batch
from tests.test_parse_bytescan import SMALL_CASES, _outputs, _run, _sum_rows, _sweep

C = native.load("_summarycells")
pytestmark = pytest.mark.skipif(C is None, reason="the C accelerator is not built")

ROWS = [b"1.5,2,abc", b"524.288,3,\"x,y\"", b"1,2.0,z", b"1,2,", b"1,,z", b"01.500,7,k", b"1.,2,k", b".5,2,k",
        b"1,1234567890123456789,k", b"1,123456789012345678,k", b'1,2,"a"b"', b'1,2,""', b'1,2,"a', b"1,2,a,b",
        b"999.999,1,k", b"1000.000,1,k", b"1,2", b"1e5,2,k", b"+1,2,k", b"1,2, k ", b'1,2,a"b']


def _bounds(data: bytes, cuts: list[int]) -> bytes:
    """int64 pairs (b, e): data cut at the line starts `cuts`."""
    edges = [0, *cuts, len(data)]
    return b"".join(struct.pack("<qq", a, e) for a, e in zip(edges, edges[1:]))


def test_status_as_row_status_over_several_ranges():
    data = b"".join(r + b"\n" for r in ROWS)
    starts = [k + 1 for k in range(len(data)) if data[k : k + 1] == b"\n"][:-1]
    for whole in (0, 0b10, 0b11):
        want = [nsys_batch.row_status(r, 2, whole) for r in ROWS]
        assert list(C.status(data, _bounds(data, []), 2, whole)) == want
        assert list(C.status(data, _bounds(data, starts[3:9:2]), 2, whole)) == want
    assert list(C.status(data, _bounds(data, []), 2, 0b10)) == [
        4, 2, 1, 1, 1, 4, 1, 1, 1, 0, 1, 1, 1, 1, 2, 4, 1, 1, 1, 0, 1]
    with pytest.raises(ValueError):
        C.status(data, struct.pack("<qq", 0, 5), 2, 0)  # not at a line's end
    with pytest.raises(ValueError):
        C.status(data, struct.pack("<q", 0), 2, 0)


def _grid(got: tuple, ncells: int) -> tuple[np.ndarray, list[int], list[str]]:
    cells, codes, names, status = got
    assert len(status) == len(codes) // 4 and not any(b & 1 for b in status)  # every row plain
    assert len(cells) == ncells and {len(c) for c in cells} <= {2 * len(codes)}
    grid = np.array([np.frombuffer(c, dtype=np.float64) for c in cells]).reshape(ncells, len(codes) // 4)
    return grid, np.frombuffer(codes, np.int32).tolist(), names


def test_columns_values_codes_and_names():
    data = (b'60.0,600,2,300.0,k1\n40.5,400,1,400.25,"k2, quoted"\n'
            b"0.000001,123456789012345678,3,0.1,k1\n"
            b"1234567890.123456789012,7,5,99999999999999999999999.5,k3\n")
    got = C.columns(data, _bounds(data, [20]), 4, 0b0100)
    assert got[3] == C.status(data, _bounds(data, []), 4, 0b0100) == bytes([4, 4, 4, 4])
    grid, codes, names = _grid(got, 4)
    assert names == ["k1", "k2, quoted", "k3"] and codes == [0, 1, 0, 2]
    assert grid[0].tolist() == [60.0, 40.5, 0.000001, 1234567890.123456789012]
    assert grid[1].tolist() == [600.0, 400.0, 123456789012345678.0, 7.0]
    assert grid[2].view(np.int64).tolist() == [2, 1, 3, 5]
    assert grid[3].tolist() == [300.0, 400.25, 0.1, 99999999999999999999999.5]
    assert C.columns(data + b"1,2,3,4\n", _bounds(data + b"1,2,3,4\n", []), 4, 0) is None  # no name: not plain
    assert C.columns(b"1,k\xc3\xa9\n", _bounds(b"1,k\xc3\xa9\n", []), 1, 0) is None  # not ASCII
    long = b"1" * 400 + b".5,k\n"
    assert C.columns(long, _bounds(long, []), 1, 0) is None  # a cell longer than the C reader reads
    assert _grid(C.columns(b"", b"", 3, 0), 3)[1:] == ([], [])


def test_doubles_as_float_of_the_text():
    rng = random.Random(23)
    cells = []
    for _ in range(20000):
        lead = str(rng.randint(0, 10 ** rng.randint(0, 19)))
        frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 25)))
        cells.append(lead + ("." + frac if frac else ""))
    cells += ["0", "0.0", "9007199254740993", "9007199254740993.0", "0.1", "1" * 300]
    data = "".join(f"{c},{k % 7},n{k % 5}\n" for k, c in enumerate(cells)).encode()
    grid, codes, names = _grid(C.columns(data, _bounds(data, []), 2, 0b10), 2)
    assert grid[0].tolist() == [float(c) for c in cells]
    assert grid[1].view(np.int64).tolist() == [k % 7 for k in range(len(cells))]
    assert names == [f"n{k}" for k in range(5)] and codes[:7] == [0, 1, 2, 3, 4, 0, 1]


def _spans(text: str) -> tuple[bytes, list[tuple[int, int, int, int]]]:
    """The input's bytes and its small summary tables as bytescan finds them."""
    from profconv.parse import bytescan

    data = text.encode()
    small: list[tuple[int, int, int, int]] = []
    bytescan._spans(data, bytescan.SUMMARY, small)
    return data, small


def _batch_as_lists(got) -> tuple:
    batch, firsts = got
    return ({k: list(v) for k, v in batch.numbers.items()}, batch.names, batch.text.distinct, firsts)


@pytest.mark.parametrize("case", sorted(SMALL_CASES))
def test_batch_in_c_as_by_pyarrow(monkeypatch, case):
    pytest.importorskip("pyarrow")
    data, spans = _spans(SMALL_CASES[case][0])
    in_c = nsys_batch.read(data, spans)
    real = native.load
    monkeypatch.setattr(native, "load", lambda name: None if name == "_summarycells" else real(name))
    monkeypatch.setattr(nsys_batch, "_read_in_c", None)  # not called
    by_arrow = nsys_batch.read(data, spans)
    assert in_c is not None and by_arrow is not None
    assert _batch_as_lists(in_c) == _batch_as_lists(by_arrow)


def test_batch_in_c_values():
    rows = ["60.0,600,2,300.0,300.0,200,400,10.0,k1", "40.0,400,1,400.0,400.0,400,400,0.0,\"k 2\""]
    data, spans = _spans(_sweep(3) + _run(3, rows=rows) + _run(4, rows=["12x,5,1,5.0,5.0,5,5,0.0,bad"]))
    batch, firsts = nsys_batch.read(data, spans)
    assert firsts == [0, 40, 80, 120, -1]  # the last table not plain: left to the text path
    assert len(batch.names) == 122 and batch.names[120:] == ["k1", "k 2"]
    assert list(batch.numbers["calls"][120:]) == [2, 1] and list(batch.numbers["avg_ns"][120:]) == [300.0, 400.0]
    first = _sum_rows(40, 0)[0].split(",")
    assert batch.numbers["total_ns"][0] == float(first[1]) and batch.names[0] == first[-1]
    assert batch.text.in_order() and batch.text.distinct[-2:] == ["k1", "k 2"]


@pytest.mark.parametrize("case", ["many small", "a bad number", "undecided decimal mark", "a name with blanks around"])
def test_cli_output_in_c_as_by_pyarrow(tmp_path, monkeypatch, case):
    pytest.importorskip("pyarrow")
    path = tmp_path / "log.txt"
    path.write_bytes(SMALL_CASES[case][0].encode())
    in_c = {mode: _outputs(path, monkeypatch, mode)["bytes"] for mode in ("--json", "--csv")}
    real = native.load
    monkeypatch.setattr(native, "load", lambda name: None if name == "_summarycells" else real(name))
    for mode, got in in_c.items():
        assert _outputs(path, monkeypatch, mode)["bytes"] == got


def test_sweep_rows_held_compactly(tmp_path):
    """A sweep's rows: line numbers and calls as arrays of integers, shares as arrays of doubles, one
    int object a profile for its profile and table columns (no Python object a row for any of them)."""
    from array import array

    import profconv

    path = tmp_path / "log.txt"
    path.write_text(_sweep())
    rows = profconv.parse(str(path)).rows
    assert rows.n == 2400
    for name, code in (("line_start", "q"), ("line_end", "q"), ("calls", "q"), ("share", "d"), ("cumulative", "d")):
        col = rows.col(name)
        assert type(col) is array and col.typecode == code, name
    assert rows.col("line_start")[:3].tolist() == [5, 6, 7] and rows.col("line_start")[40] == 50
    assert rows.col("calls")[0] == int(_sum_rows(40, 0)[0].split(",")[2])
    profile, table = rows.col("profile"), rows.col("table")
    assert profile[:41] == [1] * 40 + [2] and table[:41] == [5] * 40 + [50]
    assert len({id(x) for x in profile}) == 60 and len({id(x) for x in table}) == 60
    assert abs(sum(rows.col("share")[:40]) - 1.0) < 1e-12 and rows.col("cumulative")[39] == max(rows.col("cumulative")[:40])
