"""Canonical rows as JSON or CSV text, a slice at a time, straight from the parse's plain columns.

No DataFrame is built and pandas is not imported: the output is streamed slice by slice (memory
stays flat in the number of rows). JSON rows are encoded by msgspec: numbers as the shortest text
that reads back as the same float64 (what `ProfileSet.frame` holds, to the bit), NaN and missing
values as null, a column that no row of a slice holds left out of that slice's rows (the parse
record reads it as null). CSV is DataFrame.to_csv's text (floats by repr, missing cells empty,
minimal quoting).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Any, TextIO

from profconv.nogc import paused
from profconv.parse.colviews import Const, Floats, Repeated, Sparse, Tiled, View
from profconv.parse.schema import COLUMNS
from profconv.parse.table import FLOAT_COLUMNS, Rows
from profconv.render import rowjoin

CHUNK_ROWS = 10_000  # rows per slice: the text of one slice is all that is held at once
ALWAYS = ("source", "profile", "tool", "section", "name")  # keys every JSON row carries, null or not
HEADER = ["source", *COLUMNS]

def _values(col: Sequence[Any], lo: int, hi: int) -> list[Any]:
    part = col[lo:hi]
    if type(part) is list:  # a list's slice is a new list already
        return part
    return part.tolist() if hasattr(part, "tolist") else list(part)  # type: ignore[union-attr]


def _missing(name: str, values: list[Any]) -> bool:
    """No row of the slice holds a value in this column."""
    first = values[0]
    if name in FLOAT_COLUMNS:
        if first == first:
            return False
        return values.count(first) == len(values) or not any(v == v for v in values)
    return first is None and values.count(None) == len(values)


def write_json_rows(sets: Sequence[tuple[str, Rows]], out: TextIO) -> None:
    """The rows as the items of a JSON array, one object a line ('\n' before the first, ',\n'
    before the others), written a slice at a time. Where `out` is a UTF-8 text stream over a binary
    one (stdout, a file) the UTF-8 goes to that buffer as it is: decoding it to text only to have
    the stream encode it back cost a fifth of a big --json."""
    write = _byte_writer(out)
    sep = b"\n"
    for source, rows in sets:
        for lo in range(0, rows.n, CHUNK_ROWS):
            write(sep)
            _write_json_slice(source, [(rows, lo, min(rows.n, lo + CHUNK_ROWS))], write)
            sep = b",\n"


Segment = tuple[Rows, int, int]  # rows lo:hi of a Rows


def _write_json_slice(source: str, segments: Sequence[Segment], write: Any) -> None:
    """The rows of one slice (its segments one after the other) as JSON objects joined by ',', to
    `write` a chunk at a time: a column none of the slice's rows holds left out (but ALWAYS's), a
    column a segment lacks null in its rows. Each segment's kept columns become pieces of its rows
    (profconv.render.rowjoin): a column's JSON text where it holds one value all along the segment,
    else its values' text -- no object per row, and no copy of the segments joined (a row's text
    is its own: the same bytes as the segments' columns joined into one)."""
    enc = json_encoder()
    segments = [seg for seg in segments if seg[2] > seg[1]]
    got = [_json_columns(rows, lo, hi, enc) for rows, lo, hi in segments]
    kept = [j for j, name in enumerate(COLUMNS) if name in ALWAYS or not all(cols[j][1] for cols in got)]
    head = b'{"source":' + enc(source)
    keys = [b',"' + name.encode() + b'":' for name in COLUMNS]
    for i, ((_, lo, hi), cols) in enumerate(zip(segments, got)):
        if i:
            write(b",")
        lit = [head]
        pieces: list[Any] = []
        for j in kept:
            piece, empty = cols[j]
            if empty:
                piece = b"null"
            if type(piece) is bytes:
                lit.append(keys[j] + piece)
                continue
            lit.append(keys[j])
            pieces += [b"".join(lit), piece]
            lit = []
        lit.append(b"}")
        pieces.append(b"".join(lit))
        rowjoin.write(hi - lo, pieces, b",", write, lend=True)  # a file's write: keeps nothing it is given


def _json_columns(rows: Rows, lo: int, hi: int, enc: Any) -> list[tuple[Any, bool]]:
    """Each column (COLUMNS' order) of rows lo:hi as (a rowjoin piece of its JSON cells, or their one
    text as bytes; whether no row holds a value: then every cell is null)."""
    out: list[tuple[Any, bool]] = []
    seen: dict[int, list[Any]] = {}  # line_end is often line_start's own column
    for name in COLUMNS:
        c = rows.cols.get(name)
        if c is None:
            out.append((b"null", True))
            continue
        fast = _number_piece(name, c, lo, hi, rowjoin.JSON)
        if fast is not None:
            out.append(fast)
            continue
        vals = seen.get(id(c))
        if vals is None:
            vals = seen[id(c)] = _values(c, lo, hi)
        out.append((b"null", True) if _missing(name, vals) else (_json_piece(name, vals, enc), False))
    return out


def _number_piece(name: str, col: Sequence[Any], lo: int, hi: int, style: int) -> tuple[Any, bool] | None:
    """Rows lo:hi of a column (a list, an array, a colviews View) as rowjoin writes them from the
    column itself (the C accelerator): floats of a float column (DOUBLES: its shortest text of a
    double is msgspec's for JSON, repr's for CSV), ints of 64 bits of another (INTS), str or None
    of another (JSON_TEXTS, CSV_TEXTS). The piece, or the text of its one value where every row's
    is the same, and whether no row holds a value (all NaN or None). None where the values go the
    general way (the pure-Python path included): any other mix of types."""
    if not rowjoin.accelerated():
        return None
    cycle = None  # a Repeated's or Tiled's rows: (values, times, first) of a CYCLE piece
    if isinstance(col, View):  # an ncu page's columns
        col, lo, hi, cycle = _view_rows(col, lo, hi)
        if hi - lo == 1 and cycle is None and type(col[lo]) in _KEYED_TYPES:
            return _one_value(name, col[lo], style)
    kind, same = rowjoin.scan(col, lo, hi)
    if not kind:
        return None
    first = col[lo]
    inner = _inner(name, kind, style)
    if inner is None:
        return None
    if same:
        return rowjoin.join(1, [_piece(inner, [first], 0, 1, style)], b""), first is None or first != first
    if cycle is not None:
        return (rowjoin.CYCLE, *cycle, inner, style), False
    return _piece(inner, col, lo, hi, style), False


def _view_rows(col: View, lo: int, hi: int) -> tuple[Sequence[Any], int, int, tuple[list[Any], int, int] | None]:
    """Rows lo:hi of a view as what rowjoin looks at: a Const's value, or a Sparse's default where
    none of its own values falls in them, once; a Repeated's or Tiled's values (and the CYCLE piece's
    times and first place); a Floats' array as it is; else a list of the rows."""
    if hi <= col.n:
        if isinstance(col, Const):
            return [col.value], 0, 1, None
        if isinstance(col, Sparse) and bisect_left(col.at, lo) == bisect_left(col.at, hi):
            return [col.default], 0, 1, None
        if isinstance(col, Floats):
            return col.values, lo, hi, None
        cycle = _cycle(col, lo, hi)
        if cycle is not None:
            return cycle[0], 0, len(cycle[0]), cycle
    return col[lo:hi], 0, hi - lo, None


_KEYED_TYPES = (float, int, str, type(None))  # values whose type and repr say how they are written
_ONE_VALUE: dict[tuple[Any, ...], tuple[bytes, bool] | None] = {}


def _one_value(name: str, value: Any, style: int) -> tuple[bytes, bool] | None:
    """_number_piece of rows that all hold `value` (a Const, a Sparse's default): made once for each
    value, kind of column and style, not each slice."""
    key = (name in FLOAT_COLUMNS, style, type(value), repr(value))
    got = _ONE_VALUE.get(key, _ONE_VALUE)
    if got is _ONE_VALUE:
        if len(_ONE_VALUE) > 4096:
            _ONE_VALUE.clear()
        got = _ONE_VALUE[key] = _number_piece(name, [value], 0, 1, style)
    return got  # type: ignore[return-value]


def _piece(inner: int, col: Sequence[Any], lo: int, hi: int, style: int) -> Any:
    """Rows lo:hi of a column as a rowjoin piece of this kind."""
    if inner in (rowjoin.JSON_TEXTS, rowjoin.CSV_TEXTS):
        return (inner, _values(col, lo, hi))
    return (inner, col, lo, style) if inner == rowjoin.DOUBLES else (inner, col, lo)


def _inner(name: str, kind: int, style: int) -> int | None:
    """The rowjoin kind that writes values of this scan kind in this column (None: none does)."""
    if name in FLOAT_COLUMNS:
        return rowjoin.DOUBLES if kind == rowjoin.FLOAT else None
    if kind == rowjoin.STR:
        return rowjoin.JSON_TEXTS if style == rowjoin.JSON else rowjoin.CSV_TEXTS
    return rowjoin.INTS if kind == rowjoin.INT else None


def _cycle(col: View, lo: int, hi: int) -> tuple[list[Any], int, int] | None:
    """Rows lo:hi of a Repeated (each value `times` rows in a row) or of a Tiled whose every value
    they hold, as (the values they hold, times, the first row's place): a CYCLE piece's, with no
    list of the rows; None for another view or rows beyond the view's own."""
    if hi > col.n or lo >= hi:
        return None
    if isinstance(col, Repeated):
        t = col.times
        a, b = lo // t, (hi - 1) // t + 1
        values = col.values[a:b]
        return (values if type(values) is list else list(values)), t, lo - a * t
    if isinstance(col, Tiled) and hi - lo >= len(col.values):  # fewer rows: only some values are held
        return col.values, 1, lo % len(col.values)
    return None


_encoder: Any = None


def json_encoder() -> Any:
    """msgspec's JSON encoder, made once (the rows' and the profiles' JSON)."""
    global _encoder
    if _encoder is None:
        import msgspec

        _encoder = msgspec.json.Encoder().encode
    return _encoder


_TEXT_COLUMNS = frozenset(c for c, t in COLUMNS.items() if t == "string")
_STR_OR_NONE = {str, type(None)}


def _json_piece(name: str, values: list[Any], enc: Any) -> Any:
    """One column of a slice as msgspec writes its values in a row object: the text of its one
    value (bytes) where every row's is the same, else a rowjoin piece."""
    n = len(values)
    if name not in _TEXT_COLUMNS:
        try:
            text = enc(values)[1:-1]
        except (OverflowError, TypeError, ValueError):  # what msgspec refuses: each value says so
            text = b""
        if text and text.count(b",") == n - 1:  # numbers, null, true/false: no ',' in a cell
            first = text[: text.find(b",")] if n > 1 else text
            if len(text) == n * (len(first) + 1) - 1 and text == b",".join([first] * n):
                return first
            return (rowjoin.TEXT, text)
    first = values[0]
    if type(first) in _STR_OR_NONE and values.count(first) == n:  # count: same objects first (fast)
        return enc(first)
    if len(set(values[:256])) <= 64:  # few distinct texts (kernels, metrics, units): each encoded once
        distinct = dict.fromkeys(values)
        # no str equals a value of another type; a 1 would stand for an equal 1.0 or True
        if set(map(type, distinct)) <= _STR_OR_NONE:
            return (rowjoin.KEYED, values, dict(zip(distinct, map(enc, distinct))))
    elif set(map(type, values)) <= _STR_OR_NONE:
        return (rowjoin.JSON_TEXTS, values)  # written by the joiner as msgspec writes them
    return (rowjoin.CELLS, list(map(enc, values)))  # a value of another type: msgspec's own text


def _csv_text(v: Any) -> str:
    """One cell as the csv module writes it (QUOTE_MINIMAL): quoted when it holds , " CR or LF."""
    if v is None:
        return ""
    if not isinstance(v, str):
        return str(v)
    if "," in v or '"' in v or "\n" in v or "\r" in v:
        return '"' + v.replace('"', '""') + '"'
    return v


def _numbers(values: list[Any]) -> bytes | None:
    """The cells of an int column slice as int.__str__ writes them (UTF-8, joined by ','), through
    msgspec's encoder (twice as fast); None where msgspec cannot (an int beyond 64 bits)."""
    try:
        return json_encoder()(values)[1:-1]
    except (OverflowError, TypeError, ValueError):  # an int beyond 64 bits: str writes it
        return None


def _utf8(cells: list[str]) -> bytes:
    """Cells that hold no comma (numbers) as UTF-8, joined by ','."""
    return ",".join(cells).encode()


def _constant(values: list[Any]) -> bool:
    """One value all along (the last and middle ones tell most columns that vary without a scan)."""
    first = values[0]
    return first == values[-1] and first == values[len(values) // 2] and values.count(first) == len(values)


def _cells(name: str, values: list[Any], typed: type | None = None) -> Any:
    """One column of a slice as a rowjoin piece of CSV cells (UTF-8): its text when it holds one
    value all along (bytes), floats as msgspec's text with the cells repr writes otherwise
    rewritten (FLOATS), ints as their text (TEXT), other values by their distinct texts (KEYED:
    names repeat, a trace has a few kernels many times). `typed`: the type every value has (the
    column is an array of doubles, a range), known without a look at each."""
    first = values[0]
    if name in FLOAT_COLUMNS:
        if first != first and values.count(first) == len(values):
            return b""
        if typed is float or (type(first) is float and set(map(type, values)) == {float}):
            text = json_encoder()(values)[1:-1]
            cell = text[: text.find(b",")] if len(values) > 1 else text
            if (not rowjoin.odd_float(cell) and len(text) == len(values) * (len(cell) + 1) - 1
                    and text == b",".join([cell] * len(values))):
                return cell
            return (rowjoin.FLOATS, text, values)
        text = [float.__repr__(v) for v in values]
        return (rowjoin.TEXT, _utf8(["" if t == "nan" else t for t in text]))
    if _constant(values):
        return _csv_text(first).encode("utf-8", "surrogateescape")
    if typed is int or (type(first) is int and set(map(type, values)) == {int}):
        return (rowjoin.TEXT, _numbers(values) or _utf8(list(map(str, values))))
    return (rowjoin.KEYED, values, {v: _csv_text(v).encode("utf-8", "surrogateescape") for v in dict.fromkeys(values)})


def _typed(col: Sequence[Any]) -> type | None:
    """float for an array of doubles, int for a range or an array of integers: every value's type."""
    if isinstance(col, range):
        return int
    code = getattr(col, "typecode", None)  # array.array
    if code == "d":
        return float
    return int if code in ("b", "h", "i", "l", "q") else None


def _csv_column(name: str, values: list[Any]) -> list[str]:
    """The cells of one column of a slice (as text)."""
    return rowjoin.join(len(values), [_cells(name, values)], b"\n").decode().split("\n")


def write_csv(sets: Sequence[tuple[str, Rows]], out: TextIO) -> None:
    """The rows as CSV: DataFrame.to_csv's text (header once, floats by repr, missing cells empty,
    minimal quoting), written a slice at a time. Where `out` is a UTF-8 text stream over a binary
    one (stdout, a file) the slices' UTF-8 goes to that buffer as it is (as --json does)."""
    with paused():
        _write_csv(sets, out)


def _byte_writer(out: TextIO) -> Any:
    """`write` taking UTF-8 bytes: the binary buffer under `out` where `out` writes UTF-8 with
    strict errors or surrogateescape (what Python gives stdout under a C.UTF-8 locale: the same
    bytes for any text that is valid UTF-8, and CSV cells are encoded with it), with what the text
    layer holds flushed first; else each piece decoded and written as text."""
    import codecs
    import os

    raw = getattr(out, "buffer", None)
    enc = getattr(out, "encoding", None)
    try:
        utf8 = enc is not None and codecs.lookup(enc).name == "utf-8"
    except LookupError:
        utf8 = False
    if (raw is None or not utf8 or os.linesep != "\n"
            or getattr(out, "errors", "strict") not in ("strict", "surrogateescape")):
        return lambda data: out.write(str(data, "utf-8", "surrogateescape"))
    out.flush()
    return raw.write


def _write_csv(sets: Sequence[tuple[str, Rows]], out: TextIO) -> None:
    write = _byte_writer(out)
    write((",".join(HEADER) + "\n").encode())
    _write_csv_rows(sets, write)


def _write_csv_rows(sets: Sequence[tuple[str, Rows]], write: Any) -> None:
    """The CSV rows (no header), a slice at a time, as UTF-8 bytes to `write`."""
    for source, rows in sets:
        src = _csv_text(source).encode("utf-8", "surrogateescape")
        for lo in range(0, rows.n, CHUNK_ROWS):
            hi = min(rows.n, lo + CHUNK_ROWS)
            rowjoin.write(hi - lo, _csv_pieces(src, rows, lo, hi), b"", write, lend=True)


def _csv_pieces(src: bytes, rows: Rows, lo: int, hi: int) -> list[Any]:
    """Rows lo:hi as rowjoin pieces of CSV lines (each ending with a line end): the columns that
    hold one value all along the slice are text joined once, not per row."""
    pieces: list[Any] = []
    run: list[bytes] = [src]
    seen: dict[tuple[int, bool], Any] = {}  # line_end: often line_start's column
    for name in COLUMNS:
        c = rows.cols.get(name)
        if c is None:
            got: Any = b""  # absent: empty cells
        else:
            key = (id(c), name in FLOAT_COLUMNS)  # what _cells looks at besides the values
            got = seen.get(key)
            if got is None:
                fast = _number_piece(name, c, lo, hi, rowjoin.CSV)
                got = seen[key] = fast[0] if fast is not None else _cells(name, _values(c, lo, hi), _typed(c))
        if type(got) is bytes:
            run.append(got)
            continue
        run.append(b"")
        pieces += [b",".join(run), got]
        run = [b""]
    pieces.append(b",".join(run) + b"\n")
    return pieces


class SliceWriter:
    """Rows that arrive in parts (profconv.parse.stream) written as write_json_rows / write_csv
    write them whole: the same slices of CHUNK_ROWS rows from each input's first row (a JSON
    slice leaves out the columns none of its rows holds, so the slices must be the same), the same
    bytes, to `write` (UTF-8 bytes, maybe lent: a file's write, which keeps nothing it is given).
    `add` the parts of one input, then `end` it. JSON: the rows as write_json_rows writes them
    ('\n' before the first, ',\n' before the others); CSV: the rows without the header. A slice
    is held as segments of the parts (rows lo:hi), not copied. CSV: each part's rows written as
    they come (the same bytes: a CSV row's text does not depend on the rows around it)."""

    def __init__(self, write: Any, kind: str) -> None:
        self.write, self.kind = write, kind
        self.sep = b"\n"
        self.parts: list[Segment] = []
        self.n = 0
        self.source = ""

    def add(self, source: str, rows: Rows) -> None:
        self.source = source
        if self.kind == "csv":  # a CSV row's text is its own (no column is left out of a slice): as it comes
            _write_csv_rows([(source, rows)], self.write)
            return
        lo = 0
        if self.n:  # the slice begun by the parts before comes first
            lo = min(rows.n, CHUNK_ROWS - self.n)
            self.parts.append((rows, 0, lo))
            self.n += lo
            if self.n < CHUNK_ROWS:
                return
            self._write(self.parts)
            self.parts, self.n = [], 0
        while rows.n - lo >= CHUNK_ROWS:
            self._write([(rows, lo, lo + CHUNK_ROWS)])
            lo += CHUNK_ROWS
        if lo < rows.n:
            self.parts, self.n = [(rows, lo, rows.n)], rows.n - lo

    def end(self) -> None:
        """The input's last slice."""
        if self.n:
            self._write(self.parts)
        self.parts, self.n = [], 0

    def _write(self, segments: list[Segment]) -> None:
        # JSON only (CSV parts are written as they come): each segment's columns go to the C writer
        # as they are, the columns kept decided over the whole slice
        self.write(self.sep)
        _write_json_slice(self.source, segments, self.write)
        self.sep = b",\n"


def byte_writer(out: TextIO) -> Any:
    """`write` of UTF-8 bytes to `out` (profconv.commands.parse copies a spooled output with it)."""
    return _byte_writer(out)
