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
from typing import Any, TextIO

from profconv.nogc import paused
from profconv.parse.schema import COLUMNS
from profconv.parse.table import FLOAT_COLUMNS, Rows

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
    import codecs
    import os

    raw = getattr(out, "buffer", None)
    enc = getattr(out, "encoding", None)
    try:
        utf8 = enc is not None and codecs.lookup(enc).name == "utf-8"
    except LookupError:
        utf8 = False
    if raw is None or not utf8 or os.linesep != "\n" or getattr(out, "errors", "strict") != "strict":
        first = True
        for text in json_slices(sets):
            out.write(("\n" if first else ",\n") + text)
            first = False
        return
    out.flush()  # what the text layer holds goes first
    sep = b"\n"
    for body in json_chunks(sets):
        raw.write(sep)
        raw.write(body)
        sep = b",\n"


def json_chunks(sets: Sequence[tuple[str, Rows]]) -> Iterator[memoryview]:
    """json_slices' text as msgspec's UTF-8 bytes (a view without the array's brackets)."""
    import msgspec

    encode = msgspec.json.Encoder().encode
    for source, rows in sets:
        for lo in range(0, rows.n, CHUNK_ROWS):
            hi = min(rows.n, lo + CHUNK_ROWS)
            k = hi - lo
            names = ["source"]
            cols: list[list[Any]] = [[source] * k]
            for name in COLUMNS:
                c = rows.cols.get(name)
                vals = _values(c, lo, hi) if c is not None else None
                if vals is None or _missing(name, vals):
                    if name not in ALWAYS:
                        continue
                    vals = [None] * k
                names.append(name)
                cols.append(vals)
            body = encode(list(map(_row_type(tuple(names)), *cols)))
            yield memoryview(body)[1:-1]


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


def _numbers(values: list[Any]) -> list[str] | None:
    """The cells of a float or int column slice as float.__repr__ / int.__str__ writes them, through
    msgspec's encoder (twice as fast): both write the shortest text that reads back as the same
    float, and they differ only where one of them writes an exponent (1e+16 / 1e16, 1e-05 /
    0.00001) or for NaN and infinities (msgspec: null). None where the text holds any of these:
    then repr is the writer."""
    global _encode
    if _encode is None:
        import msgspec

        _encode = msgspec.json.Encoder().encode
    try:
        text = _encode(values)[1:-1].decode()
    except (OverflowError, TypeError, ValueError):  # an int beyond 64 bits: repr writes it
        return None
    if "e" in text or "n" in text or "0.0000" in text:  # exponents, null; 0.0000 covers 1e-05 > x > 0
        return None
    return text.split(",")


def _constant(values: list[Any]) -> bool:
    """One value all along (the last and middle ones tell most columns that vary without a scan)."""
    first = values[0]
    return first == values[-1] and first == values[len(values) // 2] and values.count(first) == len(values)


Keyed = tuple[list[Any], dict[Any, str]]  # a column's values and the cell text of each distinct one


def _cells(name: str, values: list[Any]) -> str | list[str] | Keyed:
    """One column of a slice: its text when it holds one value all along, else its cells, or for
    text columns (names repeat: a trace has a few kernels many times) its values and the cell of
    each distinct value."""
    first = values[0]
    if name in FLOAT_COLUMNS:
        if first != first and values.count(first) == len(values):
            return ""
        out = None
        if type(first) is float and set(map(type, values)) == {float}:
            out = _numbers(values)
        if out is None:
            out = list(map(float.__repr__, values))
            if "nan" in out:
                out = ["" if t == "nan" else t for t in out]
        return out[0] if _constant(out) else out
    if _constant(values):
        return _csv_text(first)
    if set(map(type, values)) == {int}:
        return _numbers(values) or list(map(str, values))
    return values, {v: _csv_text(v) for v in dict.fromkeys(values)}


def _csv_column(name: str, values: list[Any]) -> list[str]:
    """The cells of one column of a slice."""
    got = _cells(name, values)
    if isinstance(got, str):
        return [got] * len(values)
    if isinstance(got, tuple):
        return list(map(got[1].__getitem__, got[0]))
    return got


def _fused(segments: list[str | list[str] | Keyed]) -> list[str | list[str] | Keyed]:
    """Fewer pieces a row: a text column that is a function of the text column before it (the
    short name of the name) is written with it, and the constant text on either side of a text
    column goes into its cells once per distinct value instead of once per row."""
    out: list[str | list[str] | Keyed] = []
    for seg in segments:
        prev = out[-1] if out else None
        if isinstance(seg, tuple) and isinstance(prev, tuple):
            (k1, m1), (k2, m2) = prev, seg
            of = dict(zip(k1, k2))
            if list(map(of.__getitem__, k1)) == k2:  # one value of this column for each of the previous one
                out[-1] = (k1, {a: m1[a] + "," + m2[b] for a, b in of.items()})
                continue
        if isinstance(seg, str) and isinstance(prev, tuple):
            out[-1] = (prev[0], {a: t + "," + seg for a, t in prev[1].items()})
            continue
        if isinstance(seg, tuple) and isinstance(prev, str):
            out[-1] = (seg[0], {a: prev + "," + t for a, t in seg[1].items()})
            continue
        out.append(seg)
    return out


def write_csv(sets: Sequence[tuple[str, Rows]], out: TextIO) -> None:
    """The rows as CSV: DataFrame.to_csv's text (header once, floats by repr, missing cells empty,
    minimal quoting), written a slice at a time."""
    with paused():  # tuples of cells a row, no cycles: profconv/nogc.py
        _write_csv(sets, out)


def _write_csv(sets: Sequence[tuple[str, Rows]], out: TextIO) -> None:
    out.write(",".join(HEADER) + "\n")
    for source, rows in sets:
        src = _csv_text(source)
        for lo in range(0, rows.n, CHUNK_ROWS):
            hi = min(rows.n, lo + CHUNK_ROWS)
            k = hi - lo
            # runs of columns holding one value all along the slice are joined once, not per row
            segments: list[str | list[str] | Keyed] = []
            run: list[str] = [src]
            for name in COLUMNS:
                c = rows.cols.get(name)
                got = "" if c is None else _cells(name, _values(c, lo, hi))  # absent: empty cells
                if isinstance(got, str):
                    run.append(got)
                    continue
                if run:
                    segments.append(",".join(run))
                    run = []
                segments.append(got)
            if run:
                segments.append(",".join(run))
            cols = [[seg] * k if isinstance(seg, str) else list(map(seg[1].__getitem__, seg[0]))
                    if isinstance(seg, tuple) else seg for seg in _fused(segments)]
            out.write("\n".join(map(",".join, zip(*cols))) if len(cols) > 1 else "\n".join(cols[0]))
            out.write("\n")
