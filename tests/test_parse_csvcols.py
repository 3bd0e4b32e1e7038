"""profconv.parse._csvcols: a CSV table's plain columns read in C give what pyarrow's reading gives
(profconv.parse.columnar.read_csv), or nothing (then pyarrow reads them, as before)."""

from __future__ import annotations

import random

import pytest

from profconv.parse import columnar, native

pytest.importorskip("pyarrow")
CSVCOLS = native.load("_csvcols")
pytestmark = pytest.mark.skipif(CSVCOLS is None, reason="the _csvcols accelerator is not built")

HEADER = ["Start (ns)", "Duration (ns)", "CorrId", "Device", "Strm", "Name"]
FLOATS, COUNTS, TEXTS = ["Start (ns)", "Duration (ns)"], ["CorrId"], ["Name", "Device"]

# cells of each kind: plain ones (read in C) and odd ones (some read by pyarrow, some by neither)
PLAIN_NUMBERS = ["0", "7", "1000000", "891298", "0.000", "12.5", "007", "3.14159", "9007199254740992", "0.1"]
ODD_NUMBERS = ["123456789012345678", "99.999999999999999999",
               "", "-1", "-0", "1e5", ".5", "5.", " 5", "5 ", "inf", "nan", "1,5", '"5"', "9007199254740993",
               "12345678901234567890", "1.5.2", "0x10", "+3", "1_000", "١"]
PLAIN_NAMES = ["[CUDA memcpy HtoD]", "sgemm_sm35_ldg_tn", '"void k<float, 16>(float const *, int)"', "a b",
               '"x"', "tab\there", " pad "]
ODD_NAMES = ["", '""', '"a""b"', 'a"b', '"a"b', '"a\nb"', "caf\u00e9", "a\rb", '"unclosed']


def _read(data: bytes, c: bool):
    real = native.load
    try:
        native.load = (lambda name: real(name)) if c else (lambda name: None if name == "_csvcols" else real(name))
        return columnar.read_csv(data, floats=FLOATS, counts=COUNTS, texts=TEXTS)
    finally:
        native.load = real


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return (a.n == b.n and all(a.numbers[c] == b.numbers[c] for c in FLOATS + COUNTS)
            and all(type(x) is int for x in a.numbers["CorrId"])
            and all(a.texts[c].values == b.texts[c].values and a.texts[c].distinct == b.texts[c].distinct
                    and (a.texts[c].codes == b.texts[c].codes).all() and a.texts[c].codes.dtype == b.texts[c].codes.dtype
                    and a.texts[c].pool.to_pylist() == b.texts[c].pool.to_pylist() for c in TEXTS))


def _row(rng: random.Random, odd: float) -> str:
    def pick(plain, odds):
        return rng.choice(odds) if rng.random() < odd else rng.choice(plain)

    cells = [pick(PLAIN_NUMBERS, ODD_NUMBERS), pick(PLAIN_NUMBERS, ODD_NUMBERS), pick(["0", "15", "42"], ODD_NUMBERS),
             pick(["NVIDIA H200 (0)", '"GPU, 0"'], ODD_NAMES), rng.choice(["7", "", '"1,2"', "x"]), pick(PLAIN_NAMES, ODD_NAMES)]
    if rng.random() < odd / 4:
        cells = cells[: rng.randrange(len(cells))] if rng.random() < 0.5 else [*cells, "extra"]
    return ",".join(cells)


def _table(rng: random.Random, odd: float) -> bytes:
    rows = [_row(rng, odd) for _ in range(rng.randrange(1, 40))]
    text = ",".join(HEADER) + "\n" + "\n".join(rows) + ("\n" if rng.random() < 0.8 else "")
    if rng.random() < odd / 4:
        text += rng.choice(["\n", "\n\n", "\r\n"])
    return text.encode("utf-8")


def test_plain_tables_read_in_c_as_by_pyarrow():
    rng = random.Random(23)
    read = 0
    for _ in range(400):
        data = _table(rng, 0.0)
        got = CSVCOLS.columns(data, data.index(b"\n") + 1, len(data), len(HEADER), (0, 1), (2,), (5, 3))
        read += got is not None
        assert _same(_read(data, True), _read(data, False))
    assert read >= 300  # the plain tables are read in C (a few fail pyarrow's way too: none of them)


@pytest.mark.parametrize("odd", [0.02, 0.1, 0.4])
def test_odd_tables_as_by_pyarrow(odd):
    rng = random.Random(int(odd * 100))
    for _ in range(600):
        data = _table(rng, odd)
        assert _same(_read(data, True), _read(data, False)), data


@pytest.mark.parametrize("cell", ODD_NUMBERS + ["1" * 20, "0." + "1" * 23])
def test_a_number_cell_not_plain_is_left_to_pyarrow(cell):
    data = f"a,b\n{cell},x\n1,y\n".encode()
    assert CSVCOLS.columns(data, 4, len(data), 2, (0,), (), (1,)) is None


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_name_cell_not_plain_is_left_to_pyarrow(name):
    data = f"a,b\n1,{name}\n1,y\n".encode()
    assert CSVCOLS.columns(data, 4, len(data), 2, (0,), (), (1,)) is None


def test_values_codes_and_pools():
    data = b'S,D,N\n1,2.5,"k<a, b>"\n10,0.1,m\n3,4,"k<a, b>"\n'
    rows, floats, counts, codes, pools, values = CSVCOLS.columns(data, 6, len(data), 3, (1,), (0,), (2,))
    assert rows == 3
    assert floats == [b"".join(__import__("struct").pack("d", x) for x in (2.5, 0.1, 4.0))]
    assert counts == [b"".join(__import__("struct").pack("q", x) for x in (1, 10, 3))]
    assert codes == [b"".join(__import__("struct").pack("i", x) for x in (0, 1, 0))]
    assert pools == [["k<a, b>", "m"]]
    assert values == [["k<a, b>", "m", "k<a, b>"]] and values[0][0] is values[0][2] is pools[0][0]


def test_doubles_as_float_of_the_text():
    rng = random.Random(5)
    # at most 15 digits (the integer they make at most 2^53): a decimal of 1 to 7 places, or an integer
    cells = [f"{rng.randrange(10 ** rng.randrange(1, 9))}.{rng.randrange(10 ** rng.randrange(1, 8))}" for _ in range(3000)]
    cells += [str(rng.randrange(1 << 53)) for _ in range(1000)] + ["9007199254740992", "0.3000000000000000", "5e-324"[:1]]
    data = ("x,n\n" + "".join(f"{c},n\n" for c in cells)).encode()
    got = CSVCOLS.columns(data, 4, len(data), 2, (0,), (), ())
    assert got is not None
    values = __import__("array").array("d")
    values.frombytes(got[1][0])
    assert values.tolist() == [float(c) for c in cells]


def test_a_table_in_a_bigger_buffer():
    data = b"junk\nS,N\n5,a\n6,b\nmore junk"
    span = columnar.Span(data, 5, data.index(b"more"))
    got = columnar.read_csv(span, floats=["S"], texts=["N"])
    assert got is not None and list(got.numbers["S"]) == [5.0, 6.0] and got.texts["N"].values == ["a", "b"]


def test_header_not_plain_or_columns_twice_is_left_to_pyarrow():
    assert columnar._plain_columns(b'"S",N\n1,a\n', ["S"], [], ["N"]) is None
    assert columnar._plain_columns(b"S,S,N\n1,2,a\n", ["S"], [], ["N"]) is None
    assert columnar._plain_columns(b"S,N\n1,a\n", ["T"], [], ["N"]) is None
    assert columnar._plain_columns(b"S\n1\n", ["S"], [], []) is None


def _nsys_trace(n: int, odd_row: int | None = None) -> str:
    head = ("Processing [r.sqlite] with [/opt/nsys/reports/cuda_gpu_trace.py]...\n\n"
            "Start (ns),Duration (ns),CorrId,GrdX,Bytes (MB),Device,Name\n")
    names = ['"k(float*, int)"', "[CUDA memcpy HtoD]", "gemm", '"void f<float, 16>(float const *, int)"']
    rows = [f"{1000 + 7 * i},{i % 97 + 1}.{i % 10},{i},1,{'' if i % 3 else '0.5'},H200,{names[i % 4]}" for i in range(n)]
    if odd_row is not None:
        rows[odd_row] = rows[odd_row].replace(",H200,", ',"H200",').replace(f"{1000 + 7 * odd_row},", "1e3,", 1)
    return head + "".join(r + "\n" for r in rows)


@pytest.mark.parametrize("odd_row", [None, 5, 2500])
def test_nsys_trace_output_with_and_without_the_c_reader(tmp_path, monkeypatch, cli, odd_row):
    """--json and --csv of an nsys trace big enough for the columnar readers: the C reader's (or, with
    a row it leaves to pyarrow, pyarrow's) and pyarrow's alone, byte for byte."""
    from profconv.parse.dialects import nsys

    path = tmp_path / "trace.log"
    path.write_text(_nsys_trace(nsys.BULK_ROWS + 700, odd_row))
    calls = []
    real = CSVCOLS.columns
    monkeypatch.setattr(CSVCOLS, "columns", lambda *a: calls.append(real(*a)) or calls[-1])
    got = {mode: cli("parse", path, mode) for mode in ("--json", "--csv")}
    assert calls and all((c is None) == (odd_row is not None) for c in calls)  # read in C where plain
    load = native.load
    monkeypatch.setattr(native, "load", lambda name: None if name == "_csvcols" else load(name))
    for mode, r in got.items():
        assert r.returncode == 0 and cli("parse", path, mode) == r
    assert '"start_ns":1007.0,' in got["--json"].stdout and ',"void f<float, 16>(float const *, int)",' in got["--csv"].stdout
