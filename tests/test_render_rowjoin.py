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
