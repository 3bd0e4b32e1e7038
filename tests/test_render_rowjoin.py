"""The rows joiner of the --json/--csv writers (profconv.render.rowjoin): the C accelerator
(profconv/parse/_rowjoin.c) and its pure-Python twin give the same bytes, and the writers give the
same --json/--csv through either."""

from __future__ import annotations

import io
import math
import random
from array import array
from pathlib import Path

import msgspec
import pytest

import profconv
from profconv.errors import ProfconvError
from profconv.parse import native
from profconv.parse.table import Rows
from profconv.render import parse_output, rowjoin, rows

C = native.load("_rowjoin")
needs_c = pytest.mark.skipif(C is None, reason="the C accelerator _rowjoin is not built")
DATA = Path(__file__).parent / "data"
ODD_FLOATS = [1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 1e-5, 0.0, -0.0, 5e-324, 1.5e-06, 0.877,
              123456.0, -1.5e-07, -0.00001, 2e20, float("nan"), float("inf"), float("-inf"), 230307.00000000003,
              10.00001, 1 / 3, -2.5]


def _both(n, pieces, sep=b","):
    want = rowjoin.join_py(n, pieces, sep)
    if C is not None:
        assert C.join(n, pieces, sep) == want
    return want


def _floats_piece(values):
    return (rowjoin.FLOATS, msgspec.json.encode(values)[1:-1], values)


def test_each_kind_of_piece():
    names = ["a", "b,c", "a", None]
    table = {"a": b"A", "b,c": b'"b,c"', None: b""}
    got = _both(4, [b"<", (rowjoin.TEXT, b"1,2.5,null,true"), b"|", (rowjoin.KEYED, names, table), b"|",
                    (rowjoin.CELLS, [b"x", b"", b"yy", b"z"]), b">"], b"\n")
    assert got == b'<1|A|x>\n<2.5|"b,c"|>\n<null|A|yy>\n<true||z>'


def test_float_cells_are_repr():
    """A CSV float column: float.__repr__ of each value ('' for NaN) whatever msgspec writes."""
    got = _both(len(ODD_FLOATS), [_floats_piece(ODD_FLOATS)], b"\n").split(b"\n")
    assert got == [b"" if v != v else repr(v).encode() for v in ODD_FLOATS]


@pytest.mark.parametrize("seed", range(5))
def test_random_floats_of_every_magnitude(seed):
    rng = random.Random(seed)
    values = [rng.choice([1, -1]) * 10 ** rng.uniform(-12, 24) for _ in range(3000)]
    values += [round(v, rng.randint(0, 8)) for v in values[:1000]] + rng.sample(ODD_FLOATS, 5)
    got = _both(len(values), [b"[", _floats_piece(values), b"]"], b"").decode()
    assert got == "".join(f"[{'' if v != v else repr(v)}]" for v in values)


def test_no_rows_and_no_pieces():
    assert _both(0, [b"x", (rowjoin.TEXT, b""), (rowjoin.CELLS, [])]) == b""
    assert _both(3, [], b";") == b";;"
    assert _both(2, [b"k"], b",") == b"k,k"


@pytest.mark.parametrize("piece", [(rowjoin.TEXT, b"1,2,3"), (rowjoin.TEXT, b"1"), (rowjoin.CELLS, [b"a"]),
                                   (rowjoin.KEYED, ["a", "a", "a"], {"a": b"a"}), _floats_piece([1.0])])
def test_a_piece_without_one_cell_a_row_is_refused(piece):
    with pytest.raises(ValueError):
        rowjoin.join_py(2, [piece], b",")
    if C is not None:
        with pytest.raises(ValueError):
            C.join(2, [piece], b",")


def test_a_value_missing_from_its_table_and_a_cell_not_bytes():
    for f in filter(None, (rowjoin.join_py, C and C.join)):
        with pytest.raises(KeyError):
            f(2, [(rowjoin.KEYED, ["a", "b"], {"a": b"a"})], b",")
        with pytest.raises(TypeError):
            f(2, [(rowjoin.CELLS, [b"a", "b"])], b",")


def _outputs(ps):
    j, c = io.StringIO(), io.StringIO()
    parse_output.write_json([ps], j)
    parse_output.write_csv([ps], c)
    return j.getvalue(), c.getvalue()


@needs_c
@pytest.mark.parametrize("path", sorted(str(p.relative_to(DATA)) for p in DATA.glob("*/*.log"))[::7])
def test_writers_give_the_same_bytes_by_c_and_by_python(monkeypatch, path):
    try:
        ps = profconv.parse(str(DATA / path))
    except ProfconvError:
        pytest.skip("no profile in it")
    fast = _outputs(ps)
    monkeypatch.setattr(rowjoin, "_NATIVE", [rowjoin])
    assert _outputs(ps) == fast


def _frame_csv(r: Rows) -> str:
    frame = r.to_frame().assign(source="s")
    return frame[["source", *[c for c in frame.columns if c != "source"]]].to_csv(index=False)


@pytest.mark.parametrize("pure", [False, True])
def test_csv_of_odd_columns_is_to_csv(monkeypatch, pure):
    """Floats of every kind (also in an array of doubles), the biggest int64, texts with commas,
    quotes and None, a column constant in one slice and not in the next: DataFrame.to_csv's text."""
    if pure:
        monkeypatch.setattr(rowjoin, "_NATIVE", [rowjoin])
    monkeypatch.setattr(rows, "CHUNK_ROWS", 7)
    n = 3 * len(ODD_FLOATS)
    floats = ODD_FLOATS * 3
    r = Rows({"name": (["a,b", 'say "hi"', None, "k"] * n)[:n], "section": ["gpu"] * n, "profile": [1] * n,
              "total_ns": floats, "start_ns": array("d", floats), "avg_ns": [2.5] * 7 + floats[7:],
              "calls": [2**63 - 1 if i == 3 else i for i in range(n)], "line_start": range(4, 4 + n),
              "line_end": range(4, 4 + n)}, n)
    buf = io.StringIO()
    rows.write_csv([("s", r)], buf)
    assert buf.getvalue() == _frame_csv(r)


@pytest.mark.parametrize("pure", [False, True])
def test_json_rows_are_the_record_of_msgspec(monkeypatch, pure):
    """Each JSON row is what msgspec writes for the row object: numbers, null for NaN and missing
    values, a value of another type in a column (an int among floats, True among ints)."""
    if pure:
        monkeypatch.setattr(rowjoin, "_NATIVE", [rowjoin])
    n = len(ODD_FLOATS)
    r = Rows({"name": ["a,b", 'q"', None] * (n // 3), "section": ["gpu"] * n, "profile": [1] * n,
              "total_ns": ODD_FLOATS, "calls": [1, True, 1.0, None] * (n // 4) + [7] * (n % 4),
              "short_name": [1, 1.0, True] * (n // 3), "line_start": list(range(n))}, n)
    buf = io.StringIO()
    rows.write_json_rows([("s", r)], buf)
    got = msgspec.json.decode(("[" + buf.getvalue() + "]").encode())
    assert len(got) == n
    for i, row in enumerate(got):
        t = ODD_FLOATS[i]
        assert row["total_ns"] == (None if not math.isfinite(t) else t)
        assert row["name"] == r.cols["name"][i] and row["line_start"] == i and "avg_ns" not in row
    text = buf.getvalue()
    assert '"calls":1,' in text and '"calls":true' in text and '"calls":1.0' in text
    assert '"short_name":1,' in text and '"short_name":1.0' in text and '"short_name":true' in text


def _special_doubles() -> list[float]:
    """Every power of two and its neighbours (subnormals to the largest), powers of ten and their
    neighbours, the integers around 2^53 and 1e16, the bounds of repr's and msgspec's notations."""
    out = [0.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308, 1e16,
           9999999999999998.0, 9007199254740992.0, 9007199254740994.0, 2.0**54, 1e-4, 1e-5, 0.0001, 0.00012,
           9.999999999999999e-05, 1e-7, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, 1e22, 1e23, 2.0**-67, 2.0**-68, 1.5 * 2.0**-66]
    for k in range(-1074, 1024):
        x = 2.0**k
        out += [x, math.nextafter(x, 0.0), math.nextafter(x, math.inf)]
    for p in range(-323, 309):
        x = float(f"1e{p}")
        out += [x, math.nextafter(x, 0.0), math.nextafter(x, math.inf), float(f"9.999e{p}"), float(f"5e{p}")]
    out += [float(i) for i in range(1, 2000)] + [i / 10 for i in range(1, 2000)] + [i / 8 for i in range(1, 2000)]
    return out


def _want(x: float) -> tuple[bytes, bytes]:
    return msgspec.json.encode(x), b"" if x != x else float.__repr__(x).encode()


@needs_c
@pytest.mark.parametrize("seed", range(4))
def test_shortest_text_of_a_double_is_msgspecs_and_reprs(seed):
    """The C formatter's JSON text is msgspec's and its CSV text repr's (the shortest that reads
    back, the nearest of those) for any double: random bit patterns (every exponent, subnormals),
    short decimals as profilers print them, the special doubles (seed 0), both signs, NaN and
    infinities; the pure-Python twin's too."""
    rng = random.Random(seed)
    values = [struct_double(rng) for _ in range(60_000)]
    values += [round(rng.uniform(0, 1e7), rng.randint(0, 6)) for _ in range(30_000)]
    values += [rng.random() * 10.0 ** rng.randint(-30, 30) for _ in range(30_000)]
    values += _special_doubles() if seed == 0 else []
    values += [math.nan, math.inf]
    for x in values:
        for v in (x, -x):
            want = _want(v)
            assert (C.format_double(v, rowjoin.JSON), C.format_double(v, rowjoin.CSV)) == want, v
    for v in values[:2000] + [-0.0, math.nan, -math.inf]:
        assert (rowjoin.format_double_py(v, rowjoin.JSON), rowjoin.format_double_py(v, rowjoin.CSV)) == _want(v)


def struct_double(rng: random.Random) -> float:
    return array("d", rng.getrandbits(64).to_bytes(8, "little"))[0]


def test_the_notations_of_json_and_csv():
    """msgspec writes 0.00001 and 1e16, repr 1e-05 and 1e+16; both 0.0001, -0.0, 123.0."""
    cases = {1e-5: (b"0.00001", b"1e-05"), 1e16: (b"1e16", b"1e+16"), 1e-4: (b"0.0001", b"0.0001"),
             -0.0: (b"-0.0", b"-0.0"), 123.0: (b"123.0", b"123.0"), 1.5e-7: (b"1.5e-7", b"1.5e-07"),
             5e-324: (b"5e-324", b"5e-324"), 1.2345e300: (b"1.2345e300", b"1.2345e+300"), 121793.5: (b"121793.5", b"121793.5"),
             math.inf: (b"null", b"inf"), -math.inf: (b"null", b"-inf"), math.nan: (b"null", b"")}
    for x, want in cases.items():
        assert (rowjoin.format_double(x, rowjoin.JSON), rowjoin.format_double(x, rowjoin.CSV)) == want
        assert (rowjoin.format_double_py(x, rowjoin.JSON), rowjoin.format_double_py(x, rowjoin.CSV)) == want


def test_doubles_of_one_to_three_places_and_their_neighbours():
    """The quick path (below 2^40, a decimal of 1 to 3 places that reads back as x) and the values
    next to it that need more digits or lie past 2^40: msgspec's and repr's text, as written out."""
    cases = {236048.09: b"236048.09", 0.005: b"0.005", 0.015: b"0.015", 1099511627775.999: b"1099511627775.999",
             1099511627776.5: b"1099511627776.5", math.nextafter(0.1, 1): b"0.10000000000000002",
             math.nextafter(236048.09, 0): b"236048.08999999997", 2.675: b"2.675", 1e-3: b"0.001",
             0.0005: b"0.0005", 999.9995: b"999.9995", 4503599627370495.5: b"4503599627370495.5"}
    for x, want in cases.items():
        for y, text in ((x, want), (-x, b"-" + want)):
            assert rowjoin.format_double(y, rowjoin.JSON) == msgspec.json.encode(y) == text
            assert rowjoin.format_double(y, rowjoin.CSV) == float.__repr__(y).encode() == text
    rng = random.Random(5)
    for _ in range(20000):
        x = rng.randint(1, 2 ** rng.randint(1, 44)) / 10 ** rng.randint(1, 4)
        for y in (x, math.nextafter(x, 0), math.nextafter(x, math.inf)):
            assert rowjoin.format_double(y, rowjoin.JSON) == msgspec.json.encode(y)
            assert rowjoin.format_double(y, rowjoin.CSV) == float.__repr__(y).encode()


NUMBER_COLUMNS = [
    [1.5, math.nan, -0.0, 1e16, 1e-5, math.inf, 0.1, 230307.00000000003],
    array("d", [2.5, 1e-7, -3.0, math.nan, 1e22, 7.0, 0.3, 5e-324]),
    [0, -1, 2**63 - 1, -(2**63), 10, 999, 12345678901, -7],
    array("q", [1, -2, 3, 2**62, -(2**63), 6, 7, 8]), array("i", [4, -5, 6, 7, 8, 9, 10, -(2**31)]),
    array("h", [1, 2, 3, 4, 5, -6, 7, 8]), array("b", [1, -2, 3, 4, 5, 6, 127, -128]),
]


@pytest.mark.parametrize("col", NUMBER_COLUMNS)
def test_number_pieces_by_c_and_by_python(col):
    """DOUBLES (both styles) and INTS from a list or an array, from a row on: the same bytes."""
    floats = type(col) is list and type(col[0]) is float or getattr(col, "typecode", "") == "d"
    pieces = [[(rowjoin.DOUBLES, col, 2, rowjoin.JSON), b"|", (rowjoin.DOUBLES, col, 1, rowjoin.CSV)]
              if floats else [(rowjoin.INTS, col, 2), b"|", (rowjoin.INTS, col, 1)]][0]
    got = _both(6, [b"<", *pieces, b">"], b"\n").split(b"\n")
    for i, line in enumerate(got):
        a, b = col[2 + i], col[1 + i]
        want = b"<%s|%s>" % ((_want(a)[0], _want(b)[1]) if floats else (str(a).encode(), str(b).encode()))
        assert line == want


def test_ints_of_every_length_and_sign():
    """INTS as int.__str__ writes them: every number of digits, both signs, 0 and the int64 ends."""
    rng = random.Random(11)
    values = [0, 1, -1, 9, 10, -10, 99, 100, (1 << 63) - 1, -(1 << 63), -(1 << 63) + 1]
    values += [sign * (10 ** k + d) for k in range(19) for d in (-1, 0, 1) for sign in (1, -1) if 10 ** k + d < 1 << 63]
    values += [rng.randrange(-(1 << 63), 1 << 63) >> rng.randrange(64) for _ in range(20000)]
    for col in (values, array("q", values)):
        assert _both(len(values), [(rowjoin.INTS, col, 0)], b",") == ",".join(map(str, values)).encode()


def test_number_pieces_refused_before_any_row():
    """A value of another type (an int among floats, a bool or 2**63 among ints), a buffer of
    another kind, a column too short: refused before anything is written, C and twin alike."""
    bad = [((rowjoin.DOUBLES, [1.0, 2, 3.0], 0, 0), TypeError), ((rowjoin.INTS, [1, True, 3], 0), TypeError),
           ((rowjoin.INTS, [1, 2**63, 3], 0), TypeError), ((rowjoin.INTS, array("d", [1, 2, 3]), 0), TypeError),
           ((rowjoin.DOUBLES, array("q", [1, 2, 3]), 0, 0), TypeError), ((rowjoin.INTS, "abc", 0), TypeError),
           ((rowjoin.DOUBLES, [1.0, 2.0, 3.0], 1, 0), ValueError), ((rowjoin.INTS, array("q", [1, 2]), 0), ValueError),
           ((rowjoin.INTS, [1, 2, 3], -1), ValueError), ((rowjoin.DOUBLES, [1.0, 2.0, 3.0], 0, 2), ValueError)]
    for piece, err in bad:
        for f in filter(None, (rowjoin.write_py, C and C.write)):
            written: list[bytes] = []
            with pytest.raises(err):
                f(3, [b"x", piece], b",", written.append, 1)
            assert written == []


@pytest.mark.parametrize("col,want", [
    ([1.5, 2.5], (rowjoin.FLOAT, False)), ([math.nan, math.nan], (rowjoin.FLOAT, True)),
    ([0.0, -0.0], (rowjoin.FLOAT, False)), (array("d", [7.0, 7.0, 7.0]), (rowjoin.FLOAT, True)),
    ([3, 3, 3], (rowjoin.INT, True)), ([3, 4], (rowjoin.INT, False)), (array("q", [1, 2]), (rowjoin.INT, False)),
    (array("i", [5, 5]), (rowjoin.INT, True)), ([2**63, 1], (0, False)), ([True, True], (0, False)),
    ([1, 1.0], (0, False)), (["a", "a"], (rowjoin.STR, True)), (["a", None], (rowjoin.STR, False)),
    ([None, None], (rowjoin.STR, True)), (range(3), (0, False)), (array("d"), (0, False)),
    (array("B", [1, 1]), (0, False)), ("abc", (0, False)),
])
def test_scan_says_what_a_column_holds(col, want):
    for f in filter(None, (rowjoin.scan_py, C and C.scan)):
        assert f(col, 0, len(col)) == want
    for f in filter(None, (rowjoin.scan_py, C and C.scan)):  # rows from lo to hi only
        assert f([1, 1.0, 2.0, 2.0, "x"], 2, 4) == (rowjoin.FLOAT, True)
        assert f(array("q", [5, 6, 6, 7]), 1, 3) == (rowjoin.INT, True)
        with pytest.raises(ValueError):
            f([1, 2], 0, 3)


def test_csv_and_json_texts_by_c_and_by_python():
    """CSV_TEXTS as the csv module quotes (commas, quotes, line ends; NUL and non-ASCII as they are,
    surrogateescape), JSON_TEXTS as msgspec escapes; a value met again is written from what was
    kept for it; another type refused."""
    vals = ["a", "b,c", 'say "hi"', None, "x\ny", "a", "nul\x00z", "café", "r\rq", "a", 'q"'] * 3
    csv = _both(len(vals), [(rowjoin.CSV_TEXTS, vals)], b"\x01")
    assert csv.split(b"\x01")[:11] == [b"a", b'"b,c"', b'"say ""hi"""', b"", b'"x\ny"', b"a", b"nul\x00z",
                                     "café".encode(), b'"r\rq"', b"a", b'"q"""']
    assert _both(2, [(rowjoin.CSV_TEXTS, ["bad\udcff", None])], b"|") == b"bad\xff|"
    js = _both(len(vals), [(rowjoin.JSON_TEXTS, vals)], b"\x01").split(b"\x01")
    assert js == [msgspec.json.encode(v) for v in vals]
    for f in filter(None, (rowjoin.join_py, C and C.join)):
        with pytest.raises(TypeError):
            f(2, [(rowjoin.CSV_TEXTS, ["a", 1])], b",")


def test_long_texts_escaped_and_quoted_anywhere_by_c_and_by_python():
    """What JSON escapes (below 0x20, '"', '\\') and CSV quotes (',', '"', CR, LF) at every place of
    texts long enough for the 16-byte scan, many quotes in one cell; more distinct values than a piece
    tries to keep (it then writes them without keeping), then a few values over and over."""
    rng = random.Random(7)
    marks = ['"', "\\", "\x00", "\x1f", "\t", ",", "\r", "\n", "\x7f", "é", " "]
    vals = []
    for k in range(3000):
        base = [chr(rng.randrange(0x21, 0x7f)) for _ in range(rng.randrange(0, 70))]
        for _ in range(rng.randrange(0, 4)):
            base.insert(rng.randrange(len(base) + 1), rng.choice(marks))
        vals.append("".join(base) + f"[{k}]")
    vals += [rng.choice(vals[:5]) for _ in range(3000)] + ['"' * 40, 'a"' * 30]
    js = _both(len(vals), [(rowjoin.JSON_TEXTS, vals)], b"\x01")
    assert js == b"\x01".join(msgspec.json.encode(v) for v in vals)
    csv = _both(len(vals), [(rowjoin.CSV_TEXTS, vals)], b"\x01")
    assert csv == b"\x01".join(rowjoin._csv_text(v) for v in vals)


def test_lent_chunks_are_the_bytes_and_released_after_write():
    """write(..., lend=True): each chunk a view of the joiner's buffer with the same bytes as
    without; a view kept past its write reads as released (never as a later chunk)."""
    pieces = [b"<", (rowjoin.INTS, list(range(2500)), 0), b">"]
    want: list[bytes] = []
    rowjoin.write(2500, pieces, b",", want.append, 1000)
    kept: list[memoryview] = []
    copies: list[bytes] = []

    def write(chunk):
        kept.append(chunk)
        copies.append(bytes(chunk))

    rowjoin.write(2500, pieces, b",", write, 1000, lend=True)
    assert copies == want and len(want) == 3 and want[1].startswith(b",<1000>,<1001>")
    if C is not None:
        for view in kept:
            with pytest.raises(ValueError):
                bytes(view)

        def refuse(chunk):
            raise OSError("disk full")

        with pytest.raises(OSError, match="disk full"):  # the write's own error, the view released after it
            rowjoin.write(2500, pieces, b",", refuse, 1000, lend=True)


def test_an_accelerator_built_from_an_older_source_is_not_used(monkeypatch):
    """A _rowjoin without this source's piece kinds (KINDS: built before CYCLE, not rebuilt since) is
    left unused: the twin writes the rows, not a TypeError for an unknown kind."""
    import types

    monkeypatch.setattr(native, "load", lambda name: types.SimpleNamespace(join=None))
    monkeypatch.setattr(rowjoin, "_NATIVE", [])
    assert not rowjoin.accelerated()
    monkeypatch.setattr(rowjoin, "_NATIVE", [])
    monkeypatch.setattr(native, "load", lambda name: types.SimpleNamespace(KINDS=rowjoin.CYCLE + 1))
    assert rowjoin.accelerated()


def test_cycle_pieces_write_each_values_text_over_and_over():
    """CYCLE: values[((first + i) // times) % len(values)] as the inner kind writes it (a Repeated's or a
    Tiled's rows), the same bytes by C and by the twin; a bad piece refused before any row."""
    cyc = rowjoin.CYCLE
    texts = [(cyc, ["a", "b,c", None], 2, 1, rowjoin.CSV_TEXTS, 0), b"|", (cyc, ["a", 'b"c', None], 2, 1, rowjoin.JSON_TEXTS, 0)]
    assert _both(7, texts, b";") == b'a|"a";"b,c"|"b\\"c";"b,c"|"b\\"c";|null;|null;a|"a";a|"a"'
    nums = [(cyc, [1.5, 0.1, float("nan"), 1e-7], 1, 3, rowjoin.DOUBLES, rowjoin.JSON), b"|",
            (cyc, [1.5, 0.1, float("nan"), 1e-7], 1, 3, rowjoin.DOUBLES, rowjoin.CSV), b"|",
            (cyc, [1, -2, 2**63 - 1], 4, 5, rowjoin.INTS, 0)]
    assert _both(5, nums, b";") == (b"1e-7|1e-07|-2;1.5|1.5|-2;0.1|0.1|-2;null||9223372036854775807;"
                                    b"1e-7|1e-07|9223372036854775807")
    assert _both(0, [(cyc, [], 3, 0, rowjoin.INTS, 0)]) == b""
    # runs in step (the same values count, times and place) with the literals around them are one cell
    # a row to the C joiner, the others not: the same rows either way
    runs = [b"<", (cyc, ["a", "b", "c"], 2, 1, rowjoin.CSV_TEXTS, 0), b"|", (cyc, [1, 2, 3], 2, 1, rowjoin.INTS, 0), b">",
            (cyc, [7, 8, 9], 2, 0, rowjoin.INTS, 0), b"-", (cyc, [0.5, 1e-7], 1, 1, rowjoin.DOUBLES, rowjoin.CSV),
            (cyc, ["x", None], 1, 1, rowjoin.JSON_TEXTS, 0), b"!"]
    assert _both(7, runs, b";") == (b'<a|1>7-1e-07null!;<b|2>7-0.5"x"!;<b|2>8-1e-07null!;<c|3>8-0.5"x"!;'
                                    b'<c|3>9-1e-07null!;<a|1>9-0.5"x"!;<a|1>7-1e-07null!')
    if C is not None:
        chunks: list[bytes] = []
        C.write(7, runs, b";", chunks.append, 3)
        assert b"".join(chunks) == _both(7, runs, b";")
    bad = [((cyc, [], 1, 0, rowjoin.INTS, 0), ValueError), ((cyc, [1], 0, 0, rowjoin.INTS, 0), ValueError),
           ((cyc, [1], 1, -1, rowjoin.INTS, 0), ValueError), ((cyc, [1], 1, 0, rowjoin.FLOATS, 0), ValueError),
           ((cyc, [1.0], 1, 0, rowjoin.DOUBLES, 2), ValueError), ((cyc, (1,), 1, 0, rowjoin.INTS, 0), TypeError),
           ((cyc, [1.0], 1, 0, rowjoin.INTS, 0), TypeError), ((cyc, [True], 1, 0, rowjoin.INTS, 0), TypeError),
           ((cyc, [2**64], 1, 0, rowjoin.INTS, 0), TypeError), ((cyc, [1], 1, 0, rowjoin.JSON_TEXTS, 0), TypeError),
           ((cyc, [1], 1, 0, rowjoin.DOUBLES, 0), TypeError)]
    for piece, err in bad:
        for f in filter(None, (rowjoin.join_py, C and C.join)):
            with pytest.raises(err):
                f(2, [piece], b",")


@pytest.mark.parametrize("pure", [False, True])
def test_views_are_written_as_their_rows(monkeypatch, pure):
    """An ncu page's view columns (Repeated, Tiled: CYCLE pieces; Const; Floats; Sparse, its default
    alone in some slices) give the --json and --csv of the same rows held as lists, for slices that
    cut a run, hold part of a Tiled's values, or hold one value all along (a column left out of a JSON
    slice where every row is null)."""
    from profconv.parse.colviews import Const, Floats, Repeated, Sparse, Tiled

    if pure:
        monkeypatch.setattr(rowjoin, "_NATIVE", [rowjoin])
    n, m = 4 * 3, 3
    views = {"profile": Const(1, n), "tool": Const("ncu", n), "section": Const("ncu-metric", n),
             "name": Repeated(["k,1", 'k"2', "k3", "k3"], m), "line_start": Repeated(range(7, 11), m),
             "line_end": Repeated(range(7, 11), m), "metric": Tiled(["m1", "m2", "m3"], 4),
             "unit": Tiled([None, None, None], 4), "description": Tiled(["d", None, "d"], 4),
             "value": Floats(array("d", [0.5, 1e-7, 2.0, float("nan")] * 3)),
             "value_min": Repeated([float("nan"), 1.25, 3.0, 1e22], m), "value_text": Sparse(None, n, [5], ["n/a"]),
             "share": Sparse(float("nan"), n, [0, 11], [0.5, 0.25])}
    plain = {k: list(v) for k, v in views.items()}
    text = ""
    for chunk in (100, 5, 2):
        monkeypatch.setattr(rows, "CHUNK_ROWS", chunk)
        got, want = io.StringIO(), io.StringIO()
        rows.write_json_rows([("s", Rows(views, n))], got)
        rows.write_json_rows([("s", Rows(plain, n))], want)
        assert got.getvalue() == want.getvalue()
        text = text or got.getvalue()
        got, want = io.StringIO(), io.StringIO()
        rows.write_csv([("s", Rows(views, n))], got)
        rows.write_csv([("s", Rows(plain, n))], want)
        assert got.getvalue() == want.getvalue() == _frame_csv(Rows(plain, n))
    assert ('{"source":"s","profile":1,"tool":"ncu","section":"ncu-metric","name":"k\\"2","metric":"m3",'
            '"description":"d","value":1e-7,"value_min":1.25,"value_text":"n/a","share":null,"line_start":8,'
            '"line_end":8}') in text
    assert len(msgspec.json.decode(("[" + text + "]").encode())) == n


@pytest.mark.parametrize("pure", [False, True])
def test_slice_writer_joins_parts_into_slices(monkeypatch, pure):
    """Parts handed to SliceWriter (a stream's windows) give slices of CHUNK_ROWS rows across them:
    a column one part lacks is null (--json) or empty (--csv) in its rows, a column no row of a
    slice holds is left out of that slice's JSON rows; the bytes are write_json_rows' and
    write_csv's of the parts joined."""
    if pure:
        monkeypatch.setattr(rowjoin, "_NATIVE", [rowjoin])
    monkeypatch.setattr(rows, "CHUNK_ROWS", 3)
    a = Rows({"name": ["k1", "k2"], "section": ["gpu", "gpu"], "profile": [1, 1], "total_ns": array("d", [1.5, 2.0]),
              "calls": [1, 2]}, 2)
    b = Rows({"name": ["k3", "k,4"], "section": ["api", "api"], "profile": [2, 2], "calls": [3, 4],
              "avg_ns": array("d", [0.25, 4.0])}, 2)
    c = Rows({"name": ["k5"], "section": ["gpu"], "profile": [3], "calls": [5]}, 1)
    out: list[bytes] = []
    for kind in ("json", "csv"):
        out.clear()
        w = rows.SliceWriter(lambda d: out.append(bytes(d)), kind)
        for part in (a, b, c):
            w.add("s", part)
        w.end()
        got = b"".join(out).decode()
        whole = io.StringIO()
        if kind == "json":
            rows.write_json_rows([("s", Rows.concat([a, b, c]))], whole)
        else:
            rows.write_csv([("s", Rows.concat([a, b, c]))], whole)
            got = whole.getvalue().split("\n", 1)[0] + "\n" + got
        assert got == whole.getvalue()
    out.clear()
    w = rows.SliceWriter(lambda d: out.append(bytes(d)), "json")
    for part in (a, b, c):
        w.add("s", part)
    w.end()
    assert b"".join(out).decode().split(",\n") == [
        '\n{"source":"s","profile":1,"tool":null,"section":"gpu","name":"k1","total_ns":1.5,"calls":1,"avg_ns":null},'
        '{"source":"s","profile":1,"tool":null,"section":"gpu","name":"k2","total_ns":2.0,"calls":2,"avg_ns":null},'
        '{"source":"s","profile":2,"tool":null,"section":"api","name":"k3","total_ns":null,"calls":3,"avg_ns":0.25}',
        '{"source":"s","profile":2,"tool":null,"section":"api","name":"k,4","calls":4,"avg_ns":4.0},'
        '{"source":"s","profile":3,"tool":null,"section":"gpu","name":"k5","calls":5,"avg_ns":null}']


@needs_c
def test_small_doubles_by_the_wide_scale_are_msgspecs_and_reprs():
    """Doubles from 2^-124 to 2^-68 (a sweep's shares of its smallest calls: 4e-38 to 3e-21 and
    up; 192-bit products in C): every exponent's smallest and largest mantissa, a power of two's
    lower neighbour, random mantissas, and decimals as divisions make them."""
    rng = random.Random(7)
    values = [0.000003105, 1.2345e-06, 2.6e-09, 7.000000000000001e-12, 3.0517578125e-05, 1e-20, 4.9e-33]
    for e in range(-126, -66):
        values += [math.ldexp(1 << 52, e), math.ldexp((1 << 53) - 1, e), math.nextafter(math.ldexp(1 << 52, e), 0)]
        values += [math.ldexp(rng.getrandbits(52) | 1 << 52, e) for _ in range(300)]
    values += [rng.randint(1, 10**6) / rng.randint(10**6, 10**12) for _ in range(20_000)]
    for x in values:
        for v in (x, -x):
            assert (C.format_double(v, rowjoin.JSON), C.format_double(v, rowjoin.CSV)) == _want(v), v
