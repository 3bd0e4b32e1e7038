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
from tests.fastpath_compare import cli_outputs
from tests.test_parse_bytescan import SMALL_CASES, WAYS, _run, _sum_rows, _sweep

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


def test_columns_with_the_rows_counted_by_the_caller():
    """columns(..., rows): the rows' count from the caller (not counted first): the same result where
    it is theirs, an error where the ranges hold more or fewer."""
    data = b"".join(r + b"\n" for r in ROWS)
    plain = b"".join(r + b"\n" for r in ROWS if not nsys_batch.row_status(r, 2, 0b10) & 1 and r.isascii())
    for text, cuts in ((plain, []), (plain, [plain.index(b"\n") + 1]), (data, []), (b"", [])):
        bounds = _bounds(text, cuts) if text else b""
        want = C.columns(text, bounds, 2, 0b10)
        assert C.columns(text, bounds, 2, 0b10, text.count(b"\n")) == want
        if want is not None:
            for wrong in (text.count(b"\n") - 1, text.count(b"\n") + 1):
                if wrong >= 0:
                    with pytest.raises(ValueError):
                        C.columns(text, bounds, 2, 0b10, wrong)


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
    in_c = {mode: cli_outputs(path, monkeypatch, WAYS, [[mode]])["bytes"] for mode in ("--json", "--csv")}
    real = native.load
    monkeypatch.setattr(native, "load", lambda name: None if name == "_summarycells" else real(name))
    for mode, got in in_c.items():
        assert cli_outputs(path, monkeypatch, WAYS, [[mode]])["bytes"] == got


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


# ---- nvprof --csv summary rows (C.nvprof, csv_batch.read_in_c) ----

NV_ROW = '"GPU activities",60.000000,1.200000,2,0.600000,0.500000,0.700000,"k1(float*, int)"'


def _nvprof(rows: list[str], exps: tuple[int, int, int, int] = (6, 6, 6, 6)) -> tuple:
    """C.nvprof of the rows: (pct, time, calls, avg, min, max per row, types, names per row, decimals, bad)."""
    cells, tc, types, nc, names, dec, bad = C.nvprof("".join(r + "\n" for r in rows).encode("utf-8", "surrogatepass"), exps)
    cols = [list(struct.unpack(f"<{len(rows)}{'q' if j == 2 else 'd'}", c)) for j, c in enumerate(cells)]
    tcodes, ncodes = struct.unpack(f"<{len(rows)}i", tc), struct.unpack(f"<{len(rows)}i", nc)
    return (*cols, [types[k] if k >= 0 else None for k in tcodes], [names[k] if k >= 0 else None for k in ncodes],
            list(dec), list(bad))


def test_nvprof_rows_values():
    rows = [NV_ROW, '"API calls",100.000000,3.000000,3,1.000000,0.500000,2.000000,"cudaMalloc"',
            '"GPU activities",40.0,0.8,1,0.8,0.8,0.8,"[CUDA memcpy HtoD]"', NV_ROW]
    pct, time, calls, avg, lo, hi, types, names, dec, bad = _nvprof(rows)
    assert pct == [60.0, 100.0, 40.0, 60.0]
    assert time == [1200000.0, 3000000.0, 800000.0, 1200000.0]
    assert calls == [2, 3, 1, 2]
    assert avg == [600000.0, 1000000.0, 800000.0, 600000.0]
    assert lo == [500000.0, 500000.0, 800000.0, 500000.0]
    assert hi == [700000.0, 2000000.0, 800000.0, 700000.0]
    assert types == ["GPU activities", "API calls", "GPU activities", "GPU activities"]
    assert names == ["k1(float*, int)", "cudaMalloc", "[CUDA memcpy HtoD]", "k1(float*, int)"]
    assert dec == [6, 6, 6, 6, 1, 1, 6, 6]  # Time's and Avg's decimals, row by row
    assert bad == [0, 0, 0, 0]
    # each time column its own unit: Time in s, Avg in us, Min and Max in ns
    _, time, _, avg, lo, hi, *_ = _nvprof([NV_ROW], (9, 3, 0, -3))
    assert (time, avg, lo, hi) == ([1.2e9], [600.0], [0.5], [0.0007])


ODD_ROWS = {  # rows the C reader leaves to the row reader (bad 1), and rows it reads
    NV_ROW.replace('"k1(float*, int)"', '"a"b"'): 1,  # a quote inside the name
    NV_ROW.replace('"k1(float*, int)"', '""'): 1,  # an empty name
    NV_ROW.replace('"k1(float*, int)"', '" k1"'): 1,  # a blank around it
    NV_ROW.replace('"k1(float*, int)"', "k1"): 1,  # not quoted
    NV_ROW.replace('"GPU activities"', '""'): 1,
    NV_ROW.replace('"GPU activities"', "GPU activities"): 1,
    NV_ROW.replace("0.500000", ""): 1,  # an empty cell
    NV_ROW.replace("0.500000", " 0.5"): 1,
    NV_ROW.replace("0.500000", "0.5ms"): 1,
    NV_ROW.replace("0.500000", "5e-1"): 1,
    NV_ROW.replace("0.500000", "0."): 1,
    NV_ROW.replace("0.500000", ".5"): 1,
    NV_ROW.replace("0.500000", "-0.5"): 1,
    NV_ROW.replace(",2,", ",2.0,"): 1,  # a count with a point
    NV_ROW.replace(",2,", ",1234567890123456789,"): 1,  # 19 digits
    NV_ROW.replace("1.200000", "1." + "2" * 256): 1,  # 256 decimals
    NV_ROW.replace("1.200000", "9" * 400): 1,  # longer than a cell read
    NV_ROW.replace("k1", "k1é"): 1,  # not ASCII
    NV_ROW.replace("k1", "k1\t"): 1,
    NV_ROW.replace("k1", "k1&amp;"): 1,
    NV_ROW.replace("k1", "k1|"): 1,
    NV_ROW.replace("k1", "k1\\"): 1,
    NV_ROW.replace("k1", "**k1**"): 1,
    NV_ROW.replace("k1", "<b>k1"): 1,
    NV_ROW.replace("k1", "k1</strong>"): 1,
    NV_ROW + ",": 1,  # a cell more
    NV_ROW.replace(",0.700000", ""): 1,  # a cell fewer
    ',%,ms,,ms,ms,ms,': 1,  # a units row
    NV_ROW.replace("k1", "void k1<int, 4><<<(1,1,1)>>>"): 0,  # a template: no tag
    NV_ROW.replace("k1", "k1<int>"): 0,
    NV_ROW.replace("GPU activities", "GPU, activities"): 0,  # a comma in the label
    NV_ROW.replace("1.200000", "1." + "2" * 255): 0,
    NV_ROW.replace(",2,", ",123456789012345678,"): 0,
}


def test_nvprof_rows_odd_cells():
    rows = list(ODD_ROWS)
    *_, types, names, dec, bad = _nvprof(rows)
    assert bad == list(ODD_ROWS.values())
    assert [n for n, b in zip(names, bad) if not b] == ["void k1<int, 4><<<(1,1,1)>>>(float*, int)", "k1<int>(float*, int)",
                                                        "k1(float*, int)", "k1(float*, int)", "k1(float*, int)"]
    assert [t for t, b in zip(types, bad) if b] == [None] * sum(bad)
    assert dec[2 * rows.index(NV_ROW.replace("1.200000", "1." + "2" * 255))] == 255


def test_nvprof_rows_values_as_float_of_the_text():
    rng = random.Random(11)
    cells = [f"{rng.randint(0, 10 ** rng.randint(1, 20))}.{rng.randint(0, 10 ** 9):0{rng.randint(1, 12)}d}"
             for _ in range(20000)]
    cells += ["0.1", "260.10", "0.000469", "123456789012345.5", "7", "9" * 40, "0." + "1" * 255, "9" * 300]
    rows = [f'"GPU activities",1.0,{c},1,{c},{c},{c},"k"' for c in cells]
    for exps in ((9, 9, 9, 9), (6, 3, 0, -3), (0, 0, 0, 0)):
        _, time, _, avg, lo, hi, *_, bad = _nvprof(rows, exps)
        assert bad == [0] * len(rows)
        for got, e in ((time, exps[0]), (avg, exps[1]), (lo, exps[2]), (hi, exps[3])):
            assert got == [float(f"{c}e{e}") for c in cells]


def test_nvprof_rows_refuses_bad_arguments():
    with pytest.raises(ValueError):
        C.nvprof(NV_ROW.encode(), (6, 6, 6, 6))  # no newline at the end
    with pytest.raises(ValueError):
        C.nvprof((NV_ROW + "\n").encode(), (6, 6, 6, 23))
    cells, tc, types, nc, names, dec, bad = C.nvprof(b"", (0, 0, 0, 0))
    assert (cells, tc, types, nc, names, dec, bad) == ([b""] * 6, b"", [], b"", [], b"", b"")


def test_nvprof_lines_as_nvprof_of_their_text():
    """nvprof_lines reads the rows of each table from the lines themselves: what nvprof gives for
    their text joined (odd rows, rows not ASCII, random rows, tables of one row or many)."""
    rng = random.Random(7)
    odd = [*ODD_ROWS, NV_ROW.replace("k1", "k1\udcff"), NV_ROW.replace("k1", "k1€")]
    alphabet = '"0123456789.,ab <>/*&|\\\té'
    for _ in range(300):
        lines, tables = [], []
        for _ in range(rng.randint(1, 6)):
            h = len(lines)
            lines += ["H", "U"]
            for _ in range(rng.randint(1, 5)):
                r, pct = rng.random(), f"{rng.random() * 100:.{rng.randint(0, 8)}f}"
                lines.append(rng.choice(odd) if r < 0.4 else NV_ROW.replace("60.000000", pct) if r < 0.8
                             else '"' + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) + '"')
            tables.append((h, len(lines)))
            lines += ["" for _ in range(rng.randint(0, 2))]
        exps = tuple(rng.randint(-3, 9) for _ in range(4))
        text = "".join(line + "\n" for h, e in tables for line in lines[h + 2 : e])
        assert C.nvprof_lines(lines, tables, exps) == C.nvprof(text.encode("utf-8", "surrogatepass"), exps)
    assert C.nvprof_lines([], [], (0, 0, 0, 0)) == C.nvprof(b"", (0, 0, 0, 0))
    with pytest.raises(ValueError):
        C.nvprof_lines(["H", "U", NV_ROW], [(0, 4)], (6, 6, 6, 6))  # past the lines


def test_nvprof_group_read_in_c_as_by_pyarrow():
    """csv_batch.read_in_c gives the group that csv_batch.read (pyarrow) gives: values, names,
    sections, printed steps, the tables it takes."""
    pytest.importorskip("pyarrow")
    from profconv.parse.dialects.nvprof import csv_batch

    rng = random.Random(2)
    lines, tables = [], []
    for k in range(40):
        h = len(lines)
        lines += [csv_batch.HEADER, ",%,ms,,us,us,us,"]
        for _ in range(rng.randint(1, 4)):
            calls, avg = rng.randint(1, 99), rng.randint(1, 10**6) / 1e3
            lines.append(f'"{rng.choice(["GPU activities", "API calls"])}",{rng.uniform(0, 100):.{rng.randint(0, 6)}f},'
                         f'{calls * avg / 1e3:.6f},{calls},{avg:.3f},{avg:.2f},{avg:.1f},"k{rng.randint(0, 9)}(int)"')
        if k == 7:
            lines[-1] = lines[-1].replace("(int)", "(int)\t")  # left to the row reader by C, not by pyarrow
        tables.append((h, len(lines)))
    unit = csv_batch.units_of(lines[1])
    c = csv_batch.read_in_c(C, lines, tables, unit)
    a = csv_batch.read("\n".join(line for h, e in tables for line in lines[h + 2 : e]), tables, unit)
    assert c is not None and a is not None
    assert len(c.heads) == 39 and tables[7][0] not in c.heads and a.ok.count(True) == 40
    keep = [k for k in range(40) if k != 7]
    for k_c, k_a in enumerate(keep):
        bc, ba = c.blocks(k_c), a.blocks(k_a)
        assert (bc is None) == (ba is None)  # None: a section comes back (the row reader's)
        if bc is None or ba is None:
            continue
        assert [(b.section, b.line_start, b.line_end, b.resolution) for b in bc] == [
            (b.section, b.line_start, b.line_end, b.resolution) for b in ba]
        for x, y in zip(bc, ba):
            for col in ("time_pct", "total_ns", "avg_ns", "min_ns", "max_ns", "calls", "name"):
                assert list(x.span.col(col)) == list(y.span.col(col))


def test_nvprof_tables_found_in_c_as_one_by_one():
    """nvprof_tables: every header from index i on with quoted lines two lines on (csv_batch.extent's
    loop), and csv_batch._found's tables by units row as table by table, on odd line lists."""
    from profconv.parse.dialects.nvprof import csv_batch

    h, u = csv_batch.HEADER, ",%,ms,,ms,ms,ms,"
    row = '"GPU activities",60.0,1.2,2,0.6,0.5,0.7,"k"'
    start = "==2== NVPROF is profiling process 2, command: ./a"
    lines = ["==1== x", h, u, row, row, start, h, u, row, "", h, "x", '"é"', '""', '"', h, u, "stray", h, h,
             '"a"', "==3== Profiling result:", h, u, row, "==3== z", h, ",s,ms,,ms,ms,ms,", row, row, h, u]
    heads, ends = (list(np.frombuffer(b, dtype=np.int64)) for b in C.nvprof_tables(lines, 0, h))
    # (a header is a quoted line too: 30 is a row of 26's)
    assert list(zip(heads, ends)) == [(1, 5), (6, 9), (10, 14), (18, 21), (22, 25), (26, 31)]
    assert [list(np.frombuffer(b, dtype=np.int64)) for b in C.nvprof_tables(lines, 7, h)] == [[10, 18, 22, 26],
                                                                                              [14, 21, 25, 31]]
    assert C.nvprof_tables(lines, 40, h) == (b"", b"")
    # left out: 10's (a lone quote after its rows), 22's (a stray line: no marker after the PID), 26's (a
    # units row after its rows)
    assert csv_batch._found(lines, 1) == csv_batch._found_one_by_one(lines, 1) == {u: [(1, 5), (6, 9)], h: [(18, 21)]}
    rng = random.Random(5)
    pool = [h, u, row, row, row, "==4== NVPROF is profiling process 4, command: ./a", "", "x", '"', '"ü"', "==5== e"]
    for _ in range(3000):  # (csv_batch._found: C.nvprof_found's pairs, one units row or not, lines after)
        lines = [rng.choice(pool if rng.random() < 0.5 else [h, u, u, row]) for _ in range(rng.randint(0, 40))]
        if h not in lines:
            continue
        i = lines.index(h)  # (where the reader meets its first header)
        assert csv_batch._found(lines, i) == csv_batch._found_one_by_one(lines, i), lines
        tables = [pair for pairs in csv_batch._found(lines, i).values() for pair in pairs]
        sizes = [e - h - 2 for h, e in tables]
        assert csv_batch._sizes(tables) == C.nvprof_sizes(tables) == (sizes, [sum(sizes[:k]) for k in range(len(sizes))])
    with pytest.raises(TypeError):
        C.nvprof_tables([h, u, row, 3], 0, h)
    with pytest.raises(TypeError):
        C.nvprof_found([h, u, row, 3], 0, h)
    with pytest.raises(TypeError):
        C.nvprof_tables((h, u, row), 0, h)
