"""Rows of text joined from columns: the --json and --csv writers' last step (profconv.render.rows).

`join(n, pieces, rowsep)` gives n rows joined by `rowsep`, each row the concatenation of one cell of
every piece, in order; `write(n, pieces, rowsep, write)` hands the same bytes to `write` a chunk of
CHUNK rows at a time (a big output is never held whole). A piece is
  - bytes: the same text in every row (a constant column, a separator, a JSON key);
  - (TEXT, text): one cell a row, one after the other in `text` separated by ',' (msgspec's
    encoding of a list of numbers, its brackets cut off);
  - (KEYED, values, table): the cell of row i is table[values[i]] (a dict from each distinct value
    of the list `values` to its text);
  - (CELLS, cells): the cell of row i is cells[i] (a list of bytes);
  - (FLOATS, text, values): as TEXT, for a CSV column of floats: a cell msgspec writes otherwise
    than float.__repr__ (an exponent, 'null', below 1e-4: '0.0000…') is repr(values[i]) instead,
    '' for NaN (DataFrame.to_csv's empty cell);
  - (JSON_TEXTS, values): the cell of row i is values[i] as msgspec's JSON writes a str or None
    (null); any other value: TypeError;
  - (DOUBLES, column, lo, style): the cell of row i is the float column[lo + i] (a list of floats or
    a buffer of doubles: array('d'), a NumPy float64 array) as the shortest text that reads back as
    the same double: JSON (style 0) as msgspec writes it, null where not finite; CSV (style 1) as
    float.__repr__ writes it, '' for NaN;
  - (INTS, column, lo): the cell of row i is the int column[lo + i] (a list of ints of 64 bits or a
    buffer of signed integers) as int.__str__ writes it;
  - (CSV_TEXTS, values): the cell of row i is values[i] as the csv module writes a str (quoted where
    it holds , " CR or LF; UTF-8 with surrogateescape) or None (''); any other value: TypeError.
  - (CYCLE, values, times, first, inner, style): the cell of row i is
    values[((first + i) // times) % len(values)] as a piece of kind `inner` (JSON_TEXTS, DOUBLES of
    the style, INTS, CSV_TEXTS) writes it: a colviews Repeated's slice (each value `times` rows in a
    row) or a Tiled's (times 1: the values over and over), each value's text made once.
`scan(column, lo, hi)` says what rows lo:hi of a column hold -- (kind, same): kind FLOAT (floats),
INT (ints of 64 bits), TEXT (str or None) or 0 (anything else), same: every value written as the
first is -- so that a writer can hand a column to DOUBLES or INTS without a look at each value.
The C accelerator (profconv/parse/_rowjoin.c) writes the rows with no Python object per row; this
module's `join_py` is its pure-Python twin and gives the same bytes (tests/test_render_rowjoin.py);
PROFCONV_PURE_PYTHON=1 uses the twin.
"""

from __future__ import annotations

import sys
from typing import Any

from profconv.parse import native

TEXT, KEYED, CELLS, FLOATS, JSON_TEXTS, DOUBLES, INTS, CSV_TEXTS, CYCLE = 0, 1, 2, 3, 4, 5, 6, 7, 8
JSON, CSV = 0, 1  # the styles of DOUBLES
FLOAT, INT, STR = 1, 2, 3  # what scan finds (0: anything else)

Piece = Any  # bytes, or a tuple as in the module docstring


def join_py(n: int, pieces: list[Piece], rowsep: bytes) -> bytes:
    """The rows (see the module docstring), by the pure-Python path."""
    cols: list[list[bytes]] = [_cells(p, n) for p in pieces]
    if not n:
        return b""
    if not cols:
        return rowsep.join([b""] * n)
    return rowsep.join(map(b"".join, zip(*cols)))


def _cells(piece: Piece, n: int) -> list[bytes]:
    if type(piece) is bytes:
        return [piece] * n
    kind = piece[0]
    if kind == KEYED:
        values, table = piece[1], piece[2]
        _check(len(values), n)
        return list(map(table.__getitem__, values))
    if kind == JSON_TEXTS:
        _check(len(piece[1]), n)
        return list(map(_json_text, piece[1]))
    if kind == CSV_TEXTS:
        _check(len(piece[1]), n)
        return list(map(_csv_text, piece[1]))
    if kind in (DOUBLES, INTS):
        return _number_cells(piece, n)
    if kind == CYCLE:
        return _cycle_cells(piece, n)
    if kind == CELLS:
        _check(len(piece[1]), n)
        if not all(type(c) is bytes for c in piece[1]):
            raise TypeError("a cell is not bytes")
        return list(piece[1])
    text = piece[1]
    cells = text.split(b",") if n else []
    if n == 0 and text:
        _check(1, 0)
    _check(len(cells), n)
    if kind == FLOATS:
        values = piece[2]
        _check(len(values), n)
        return [_repr(values[i]) if odd_float(c) else c for i, c in enumerate(cells)]
    return cells


def _number_cells(piece: Piece, n: int) -> list[bytes]:
    column, lo = _listed(piece[1]), piece[2]
    if column is None:
        raise TypeError("a number piece's column is a list or a buffer of numbers")
    if lo < 0 or n > len(column) - lo:
        _check(-1, n)
    values = column[lo:lo + n]
    if piece[0] == DOUBLES:
        if piece[3] not in (JSON, CSV):
            raise ValueError("a float piece's style is 0 (JSON) or 1 (CSV)")
        if not all(type(v) is float for v in values):
            raise TypeError("a float cell is not a float")
        return [format_double_py(v, piece[3]) for v in values]
    if not all(type(v) is int and -(1 << 63) <= v < (1 << 63) for v in values):
        raise TypeError("an int cell is not an int of 64 bits")
    return [str(v).encode() for v in values]


def _cycle_cells(piece: Piece, n: int) -> list[bytes]:
    _, values, times, first, inner, style = piece
    if type(values) is not list:
        raise TypeError("a piece's values are a list")
    if inner not in (JSON_TEXTS, DOUBLES, INTS, CSV_TEXTS) or (inner == DOUBLES and style not in (JSON, CSV)) \
            or times < 1 or first < 0:
        raise ValueError("a cycle piece's kind is 4 to 7, its style 0 or 1, times at least 1, first not negative")
    if not values:
        _check(0, n)
        return []
    texts = _cells((DOUBLES, values, 0, style) if inner == DOUBLES else (inner, values, 0) if inner == INTS
                   else (inner, values), len(values))
    return [texts[((first + i) // times) % len(values)] for i in range(n)]


def format_double_py(x: float, style: int) -> bytes:
    """One double as a DOUBLES cell of the style (JSON or CSV)."""
    if style == JSON:
        return _json_text_any(x)
    return _repr(x)


def _json_text_any(v: Any) -> bytes:
    global _encode
    if _encode is None:
        import msgspec

        _encode = msgspec.json.Encoder().encode
    return _encode(v)


def _listed(column: Any) -> list[Any] | None:
    """A list, or the values of a 1-D buffer of doubles or signed integers; None for anything else."""
    if type(column) is list:
        return column
    try:
        view = memoryview(column)
    except TypeError:
        return None
    fmt = view.format[1:] if view.format[:1] in ("@", "=", "<") else view.format
    if view.ndim != 1 or not (fmt == "d" or (len(fmt) == 1 and fmt in "bhilq")):
        return None
    return view.cast("B").cast(fmt).tolist()  # type: ignore[call-overload]  # fmt: one of those


def _class(v: Any) -> int:
    t = type(v)
    if t is float:
        return FLOAT
    if t is int:
        return INT if -(1 << 63) <= v < (1 << 63) else 0
    return STR if t is str or v is None else 0


def _same(a: Any, b: Any) -> bool:
    if type(a) is float:
        return (a != a and b != b) or (a == b and str(a) == str(b))  # -0.0 is written otherwise than 0.0
    return a == b


def scan_py(column: Any, lo: int, hi: int) -> tuple[int, bool]:
    """What rows lo:hi of a column hold (see the module docstring), by the pure-Python path."""
    column = _listed(column)
    if column is None:
        return 0, False
    if lo < 0 or hi > len(column):
        _check(-1, 0)
    if lo >= hi:
        return 0, False
    first = column[lo]
    cls = _class(first)
    same = True
    for v in column[lo + 1:hi]:
        if not cls:
            break
        if _class(v) != cls:
            cls = 0
        elif same and not _same(first, v):
            same = False
    return cls, bool(cls and same)


def _csv_text(v: Any) -> bytes:
    if v is None:
        return b""
    if type(v) is not str:
        raise TypeError("a CSV text cell is not a str")
    if "," in v or '"' in v or "\n" in v or "\r" in v:
        v = '"' + v.replace('"', '""') + '"'
    return v.encode("utf-8", "surrogateescape")


def _json_text(v: Any) -> bytes:
    if type(v) is not str and v is not None:
        raise TypeError("a JSON text cell is not a str")
    return _json_text_any(v)


_encode: Any = None


def _check(got: int, n: int) -> None:
    if got != n:
        raise ValueError("a column piece does not hold one cell a row")


def odd_float(cell: bytes) -> bool:
    """msgspec's text of a float that float.__repr__ writes otherwise."""
    if cell[:1] == b"n" or b"e" in cell:
        return True
    return (cell[1:] if cell[:1] == b"-" else cell)[:6] == b"0.0000"


def _repr(v: float) -> bytes:
    v = float(v)
    return b"" if v != v else float.__repr__(v).encode()


CHUNK = 1000  # rows handed to `write` at a time: ~100 KB of JSON, reused by malloc chunk after chunk


def write_py(n: int, pieces: list[Piece], rowsep: bytes, write: Any, rows: int = CHUNK, lend: bool = False) -> None:
    """`write`'s chunks (see the module docstring), by the pure-Python path (bytes, lend or not)."""
    if rows < 1:
        raise ValueError("rows must be at least 1")
    cols: list[list[bytes]] = [_cells(p, n) for p in pieces]
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        chunk = [b"".join(row) for row in zip(*(c[lo:hi] for c in cols))] if cols else [b""] * (hi - lo)
        write((rowsep if lo else b"") + rowsep.join(chunk))


_NATIVE: list[Any] = []


def _native() -> Any:
    if not _NATIVE:
        mod = native.load("_rowjoin")
        if mod is not None and getattr(mod, "KINDS", 0) <= CYCLE:  # built from an older source: not used
            mod = None
        _NATIVE.append(mod if mod is not None else sys.modules[__name__])
    return _NATIVE[0]


def accelerated() -> bool:
    """The C accelerator is used (not PROFCONV_PURE_PYTHON, and built)."""
    return _native() is not _SELF


def scan(column: Any, lo: int, hi: int) -> tuple[int, bool]:
    """What rows lo:hi of a column hold (see the module docstring): by the C accelerator where it is
    built, else scan_py."""
    mod = _native()
    return mod.scan(column, lo, hi) if mod is not _SELF else scan_py(column, lo, hi)


def format_double(x: float, style: int) -> bytes:
    """One double as a DOUBLES cell of the style: by the C accelerator where it is built."""
    mod = _native()
    return mod.format_double(x, style) if mod is not _SELF else format_double_py(x, style)


def join(n: int, pieces: list[Piece], rowsep: bytes) -> bytes:
    """The rows (see the module docstring): by the C accelerator where it is built, else join_py."""
    mod = _native()
    return mod.join(n, pieces, rowsep) if mod is not _SELF else join_py(n, pieces, rowsep)


def write(n: int, pieces: list[Piece], rowsep: bytes, write: Any, rows: int = CHUNK, lend: bool = False) -> None:
    """The rows to `write`, a chunk at a time: by the C accelerator where it is built, else write_py.
    `lend`: the C accelerator hands each chunk as a memoryview of its buffer, released once `write`
    returns (no copy): for a `write` that does not keep what it is given (a file's)."""
    mod = _native()
    if mod is not _SELF:
        mod.write(n, pieces, rowsep, write, rows, lend)
    else:
        write_py(n, pieces, rowsep, write, rows)


_SELF = sys.modules[__name__]
