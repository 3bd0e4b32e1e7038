"""Canonical rows as JSON or CSV text, a slice at a time, straight from the parse's plain columns.

No DataFrame is built and pandas is not imported: the output is streamed slice by slice (memory
stays flat in the number of rows). JSON rows are encoded by msgspec: numbers as the shortest text
that reads back as the same float64 (what `ProfileSet.frame` holds, to the bit), NaN and missing
values as null, a column that no row of a slice holds left out of that slice's rows (the parse
record reads it as null). CSV is DataFrame.to_csv's text (floats by repr, missing cells empty,
minimal quoting).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any, TextIO

from profconv.nogc import paused
from profconv.parse.schema import COLUMNS
from profconv.parse.table import FLOAT_COLUMNS, Rows, missing_value

CHUNK_ROWS = 10_000  # rows per slice: the text of one slice is all that is held at once
ALWAYS = ("source", "profile", "tool", "section", "name")  # keys every JSON row carries, null or not
HEADER = ["source", *COLUMNS]

_structs: dict[tuple[str, ...], Any] = {}


def _row_type(names: tuple[str, ...]) -> Any:
    """A msgspec Struct with these fields in this order (one per set of columns a slice holds)."""
    t = _structs.get(names)
    if t is None:
        import msgspec

        t = _structs[names] = msgspec.defstruct("Row", [(n, object) for n in names], gc=False)
    return t


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


def json_slices(sets: Sequence[tuple[str, Rows]]) -> Iterator[str]:
    """For each slice of CHUNK_ROWS rows of each input, its rows as JSON objects joined by ','."""
    for body in json_chunks(sets):
        yield bytes(body).decode()


def write_json_rows(sets: Sequence[tuple[str, Rows]], out: TextIO) -> None:
    """The rows as the items of a JSON array, one object a line ('\n' before the first, ',\n'
    before the others), written a slice at a time. Where `out` is a UTF-8 text stream over a binary
    one (stdout, a file) msgspec's UTF-8 goes to that buffer as it is: decoding it to text only to
    have the stream encode it back cost a fifth of a big --json."""
    write = _byte_writer(out)
    sep = b"\n"
    for body in json_chunks(sets):
        write(sep)
        write(body)
        sep = b",\n"


def json_chunks(sets: Sequence[tuple[str, Rows]]) -> Iterator[memoryview]:
    """json_slices' text as msgspec's UTF-8 bytes (a view without the array's brackets)."""
    for source, rows in sets:
        for lo in range(0, rows.n, CHUNK_ROWS):
            yield _json_slice(source, [(rows, lo, min(rows.n, lo + CHUNK_ROWS))])


Segment = tuple[Rows, int, int]  # rows lo:hi of a Rows


def _json_slice(source: str, segments: Sequence[Segment]) -> memoryview:
    """The rows of one slice (its segments one after the other) as JSON objects joined by ',': a
    column none of the slice's rows holds left out (but ALWAYS's), a column a segment lacks null
    in its rows. The segments' values go to the row objects as they are (no slice gathered first)."""
    global _encoder
    if _encoder is None:
        import msgspec

        _encoder = msgspec.json.Encoder()
    sizes = [hi - lo for _, lo, hi in segments]
    names = ["source"]
    kept: list[list[Any]] = []  # per kept column: the values of each segment
    seen: list[dict[int, list[Any]]] = [{} for _ in segments]  # line_end is often line_start's own column
    for name in COLUMNS:
        values: list[Any] = []
        held = False
        for (rows, lo, hi), memo in zip(segments, seen):
            c = rows.cols.get(name)
            if c is None:
                values.append(None)
                continue
            vals = memo.get(id(c))
            if vals is None:
                vals = memo[id(c)] = _values(c, lo, hi)
            values.append(vals)
            held = held or not _missing(name, vals)
        if not held:
            if name not in ALWAYS:
                continue
            values = [None] * len(segments)
            miss = None
        else:
            miss = missing_value(name)
        names.append(name)
        kept.append([v if v is not None else [miss] * k for v, k in zip(values, sizes)])
    row = _row_type(tuple(names))
    objs: list[Any] = []
    for s, k in enumerate(sizes):
        objs.extend(map(row, repeat(source, k), *[col[s] for col in kept]))
    return memoryview(_encoder.encode(objs))[1:-1]


_encoder: Any = None


def _csv_text(v: Any) -> str:
    """One cell as the csv module writes it (QUOTE_MINIMAL): quoted when it holds , " CR or LF."""
    if v is None:
        return ""
    if not isinstance(v, str):
        return str(v)
    if "," in v or '"' in v or "\n" in v or "\r" in v:
        return '"' + v.replace('"', '""') + '"'
    return v


_encode: Any = None


def _numbers(values: list[Any]) -> list[bytes] | None:
    """The cells of a float or int column slice as float.__repr__ / int.__str__ writes them (UTF-8),
    through msgspec's encoder (twice as fast): both write the shortest text that reads back as the
    same float, and they differ only where one of them writes an exponent (1e+16 / 1e16, 1e-05 /
    0.00001) or for NaN and infinities (msgspec: null). None where the text holds any of these:
    then repr is the writer."""
    global _encode
    if _encode is None:
        import msgspec

        _encode = msgspec.json.Encoder().encode
    try:
        text = _encode(values)[1:-1]
    except (OverflowError, TypeError, ValueError):  # an int beyond 64 bits: repr writes it
        return None
    if b"e" in text or b"n" in text or (b"0.0000" in text and _tiny(text)):  # exponents, null, |x| < 1e-4
        return None
    return text.split(b",")


def _float_cells(values: list[float]) -> list[bytes] | None:
    """_numbers of a column of floats, where msgspec's text may differ from repr's in some cells:
    those where repr writes an exponent (|x| < 1e-4 or >= 1e16), NaN and infinities (and negative
    numbers, for brevity) are written by repr ('' for NaN), the others kept -- a column of shares
    with a few tiny ones is not written by repr whole. None where a cell outside those differs too
    (an exponent msgspec chose): then repr writes them all."""
    global _encode
    if _encode is None:
        import msgspec

        _encode = msgspec.json.Encoder().encode
    text = _encode(values)[1:-1]
    if b"n" in text and _INF not in values and -_INF not in values:
        # msgspec's null is a NaN here (no infinities): the empty cell repr's path writes for it. A
        # column of a trace's rows and its summary's (share, Time(%)) is NaN in most rows
        text = text.replace(b"null", b"")
    cells = text.split(b",")
    if b"e" not in text and b"n" not in text and not (b"0.0000" in text and _tiny(text)):
        return cells
    bad = [i for i, v in enumerate(values) if not 1e-4 <= v < 1e16]
    marks = text.count(b"e") + text.count(b"n")  # exponents and nulls: each in a cell of its own
    if marks != sum(cells[i].count(b"e") + cells[i].count(b"n") for i in bad):
        return None
    rep = float.__repr__
    for i in bad:
        t = rep(values[i])
        cells[i] = b"" if t == "nan" else t.encode()
    return cells


_INF = float("inf")


def _tiny(text: bytes) -> bool:
    """A cell of comma-separated numbers starts with 0.0000 (|x| < 1e-4, where repr writes an
    exponent and msgspec does not); a longer number that only holds those digits (230307.00000000003,
    10.00001) is written alike by both."""
    return text.startswith((b"0.0000", b"-0.0000")) or b",0.0000" in text or b",-0.0000" in text


def _utf8(cells: list[str]) -> list[bytes]:
    """Cells that hold no comma (numbers) as UTF-8, in two C calls instead of one per cell."""
    return ",".join(cells).encode().split(b",")


def _constant(values: list[Any]) -> bool:
    """One value all along (the last and middle ones tell most columns that vary without a scan)."""
    first = values[0]
    return first == values[-1] and first == values[len(values) // 2] and values.count(first) == len(values)


Keyed = tuple[list[Any], dict[Any, bytes]]  # a column's values and the cell text of each distinct one


def _cells(name: str, values: list[Any], typed: type | None = None) -> bytes | list[bytes] | Keyed:
    """One column of a slice, as UTF-8: its text when it holds one value all along, else its cells,
    or for text columns (names repeat: a trace has a few kernels many times) its values and the cell
    of each distinct value. Bytes, not text: a non-ASCII short name ('conv<…>') made every slice's
    text two bytes a character, slower to join and to encode for the stream. `typed`: the type
    every value has (the column is an array of doubles, a range), known without a look at each."""
    first = values[0]
    if name in FLOAT_COLUMNS:
        if first != first and values.count(first) == len(values):
            return b""
        out = None
        if typed is float or (type(first) is float and set(map(type, values)) == {float}):
            out = _float_cells(values)
        if out is None:
            text = list(map(float.__repr__, values))
            if "nan" in text:
                text = ["" if t == "nan" else t for t in text]
            out = _utf8(text)
        return out[0] if _constant(out) else out
    if _constant(values):
        return _csv_text(first).encode("utf-8", "surrogateescape")
    if typed is int or (type(first) is int and set(map(type, values)) == {int}):
        return _numbers(values) or _utf8(list(map(str, values)))
    return values, {v: _csv_text(v).encode("utf-8", "surrogateescape") for v in dict.fromkeys(values)}


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
    got = _cells(name, values)
    if isinstance(got, bytes):
        return [got.decode()] * len(values)
    if isinstance(got, tuple):
        return [got[1][v].decode() for v in got[0]]
    return [c.decode() for c in got]


def _few(seg: Keyed) -> bool:
    """A text column with few distinct values in its slice (a trace's kernel names; nvprof's carry
    a correlation id each, all distinct): the ones worth merging text into once per value."""
    return len(seg[1]) * 4 <= len(seg[0])


def _fused(segments: list[bytes | list[bytes] | Keyed]) -> list[bytes | list[bytes] | Keyed]:
    """Fewer pieces a row: a text column that is a function of the text column before it (the
    short name of the name) is written with it, and the constant text on either side of a text
    column goes into its cells once per distinct value instead of once per row -- where the column
    has few distinct values (else that costs more than the pieces it saves)."""
    out: list[bytes | list[bytes] | Keyed] = []
    for seg in segments:
        prev = out[-1] if out else None
        if isinstance(seg, tuple) and isinstance(prev, tuple) and _few(prev):
            (k1, m1), (k2, m2) = prev, seg
            of = dict(zip(k1, k2))
            if list(map(of.__getitem__, k1)) == k2:  # one value of this column for each of the previous one
                out[-1] = (k1, {a: m1[a] + b"," + m2[b] for a, b in of.items()})
                continue
        if isinstance(seg, bytes) and isinstance(prev, tuple) and _few(prev):
            out[-1] = (prev[0], {a: t + b"," + seg for a, t in prev[1].items()})
            continue
        if isinstance(seg, tuple) and isinstance(prev, bytes) and _few(seg):
            out[-1] = (seg[0], {a: prev + b"," + t for a, t in seg[1].items()})
            continue
        out.append(seg)
    return out


def write_csv(sets: Sequence[tuple[str, Rows]], out: TextIO) -> None:
    """The rows as CSV: DataFrame.to_csv's text (header once, floats by repr, missing cells empty,
    minimal quoting), written a slice at a time. Where `out` is a UTF-8 text stream over a binary
    one (stdout, a file) the slices' UTF-8 goes to that buffer as it is (as --json does)."""
    with paused():  # tuples of cells a row, no cycles: profconv/nogc.py
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
            k = hi - lo
            # runs of columns holding one value all along the slice are joined once, not per row
            segments: list[bytes | list[bytes] | Keyed] = []
            run: list[bytes] = [src]
            seen: dict[tuple[int, bool], bytes | list[bytes] | Keyed] = {}  # line_end: often line_start's column
            for name in COLUMNS:
                c = rows.cols.get(name)
                if c is None:
                    got: bytes | list[bytes] | Keyed = b""  # absent: empty cells
                else:
                    key = (id(c), name in FLOAT_COLUMNS)  # what _cells looks at besides the values
                    cached = seen.get(key)
                    got = cached if cached is not None else seen.setdefault(
                        key, _cells(name, _values(c, lo, hi), _typed(c)))
                if isinstance(got, bytes):
                    run.append(got)
                    continue
                if run:
                    segments.append(b",".join(run))
                    run = []
                segments.append(got)
            if run:
                segments.append(b",".join(run))
            cols = [[seg] * k if isinstance(seg, bytes) else list(map(seg[1].__getitem__, seg[0]))
                    if isinstance(seg, tuple) else seg for seg in _fused(segments)]
            write(b"\n".join(map(b",".join, zip(*cols))) if len(cols) > 1 else b"\n".join(cols[0]))
            write(b"\n")


class SliceWriter:
    """Rows that arrive in parts (profconv.parse.stream) written as write_json_rows / write_csv
    write them whole: the same slices of CHUNK_ROWS rows from each input's first row (a JSON
    slice leaves out the columns none of its rows holds, so the slices must be the same), the same
    bytes, to `write` (UTF-8 bytes). `add` the parts of one input, then `end` it. JSON: the rows as
    write_json_rows writes them ('\n' before the first, ',\n' before the others); CSV: the rows
    without the header. A slice is held as segments of the parts (rows lo:hi), not copied."""

    def __init__(self, write: Any, kind: str) -> None:
        self.write, self.kind = write, kind
        self.sep = b"\n"
        self.parts: list[Segment] = []
        self.n = 0
        self.source = ""

    def add(self, source: str, rows: Rows) -> None:
        self.source = source
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
        if self.kind == "csv":
            rows = Rows.concat([_cut(r, lo, hi) for r, lo, hi in segments])
            _write_csv_rows([(self.source, rows)], self.write)
            return
        self.write(self.sep)
        self.write(_json_slice(self.source, [seg for seg in segments if seg[2] > seg[1]]))
        self.sep = b",\n"


def _cut(rows: Rows, lo: int, hi: int) -> Rows:
    if lo == 0 and hi == rows.n:
        return rows
    return Rows({k: v[lo:hi] for k, v in rows.cols.items()}, hi - lo)


def byte_writer(out: TextIO) -> Any:
    """`write` of UTF-8 bytes to `out` (profconv.commands.parse copies a spooled output with it)."""
    return _byte_writer(out)
