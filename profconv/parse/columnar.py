"""Machine-written CSV tables read as columns: pyarrow's CSV reader (one thread) on the table's own bytes.

The dialects hand this module the bytes of one CSV table that a profiler wrote (nsys `--format csv`,
ncu `--csv`, nvprof `--csv`): a header line, then one line per row. It gives back whole columns
(NumPy arrays, Python strings) in the project's number semantics, or None whenever any cell is not
plainly what the column must hold -- then the dialect reads the table with its pure-Python row
reader, which reports the bad lines and decides the decimal mark. The output is the same either
way: tests compare the two paths on every test log (PROFCONV_PURE_PYTHON=1, or PROFCONV_NO_ARROW=1,
turns this module off; so does a machine without pyarrow, such as the GPU machine).

Number semantics kept here, per column kind:
  - `floats`: a finite, non-negative number as written (digits, one '.', an exponent: the double
    nearest the text, as Python's float() reads it: pyarrow parses with fast_float, correctly
    rounded); an empty cell is missing (NaN) only in a column listed in `empty`, else the whole table
    goes to the row reader. A thousands separator, a decimal comma ('"1,5"'), a unit, 'nan', 'inf',
    '-0' or any other text: None (the row reader's locale and unit rules decide those).
  - `counts`: a whole non-negative number that fits the Int64 calls column, read exactly (int64,
    never through a double: '9007199254740993' stays that number).
  - `texts`: the cell's text (quotes removed, doubled quotes undone); returned once per distinct
    value too, so that a caller checks names once each, not once a row.
A carriage return anywhere in the bytes, a row with more or fewer fields than the header, a quoted
cell that runs across lines: None.

API (for every dialect: nsys traces and summaries, ncu pages, nvprof --csv):

    cols = columnar.read_csv(data, floats=["Start (ns)", "Duration (ns)"], texts=["Name"])
    if cols is None: ...  # the row reader
    cols.n, cols.numbers["Start (ns)"] (array('d')), cols.texts["Name"].values (list of str)

`read_strings` gives every listed column as text (ncu's raw page, whose cells need the locale vote).
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from profconv.parse import native

MAX_COUNT = 2**63 - 1


def enabled() -> bool:
    """Whether the columnar reader is used: pyarrow importable, not switched off by
    PROFCONV_PURE_PYTHON or PROFCONV_NO_ARROW."""
    if native.pure_python() or os.environ.get("PROFCONV_NO_ARROW", "") not in ("", "0"):
        return False
    if not _FOUND:  # whether it is installed, without loading it (loading costs ~0.3 s)
        import importlib.util

        _FOUND.append(importlib.util.find_spec("pyarrow") is not None)
    return _FOUND[0]


_FOUND: list[bool] = []


def worth(nbytes: int, pays_from: int) -> bool:
    """Whether to read a table of `nbytes` bytes as columns: where the reader is enabled and pyarrow
    is loaded already (a process that imported pandas has it), or the table is big enough
    (`pays_from` bytes) to pay for loading it (~0.3 s of CPU and ~140 MB of RSS with NumPy, in a
    process such as the CLI's --json that loads neither otherwise)."""
    if not enabled():
        return False
    return "pyarrow" in sys.modules or nbytes >= pays_from


_MODULES: list[Any] = []


def _pyarrow() -> Any:
    """(pyarrow, pyarrow.csv), imported once; None where pyarrow is not installed."""
    if not _MODULES:
        try:
            import pyarrow
            import pyarrow.csv
        except ImportError:
            _MODULES.append(None)
        else:
            _MODULES.append((pyarrow, pyarrow.csv))
    return _MODULES[0]


def release_unused() -> None:
    """Give the memory pyarrow's pool keeps after a read back (mimalloc holds freed blocks)."""
    mods = _pyarrow()
    if mods is not None:
        mods[0].default_memory_pool().release_unused()


class Text:
    """One text column as pyarrow reads it, dictionary-encoded: `codes` (an int ndarray, one per
    row) into `pool` (a pyarrow StringArray of the distinct cells). `values` is a value per row (a
    list whose equal values are one str object), `distinct` the distinct values the rows use, in
    order of first appearance."""

    def __init__(self, codes: Any, pool: Any) -> None:
        self.codes = codes
        self.pool = pool
        self._values: list[str] | None = None
        self._distinct: list[str] | None = None

    @property
    def values(self) -> list[str]:
        if self._values is None:
            import numpy as np

            objects = np.empty(len(self.pool), dtype=object)
            objects[:] = self.pool.to_pylist()
            self._values = objects[self.codes].tolist()  # the pool's str objects, one per distinct value
        return self._values

    @property
    def distinct(self) -> list[str]:
        if self._distinct is None:
            if self.in_order():
                self._distinct = self.pool.to_pylist()
            else:
                import numpy as np

                first = np.unique(self.codes, return_index=True)
                order = first[0][np.argsort(first[1])]
                self._distinct = self.pool.take(order).to_pylist()
        return self._distinct

    def in_order(self) -> bool:
        """Whether the pool holds exactly the values the rows use, in order of first appearance
        (pyarrow builds it so: then each code is at most one above every code before it)."""
        import numpy as np

        c = self.codes
        if not len(c):
            return len(self.pool) == 0
        top = np.maximum.accumulate(c)
        return bool(c[0] == 0 and top[-1] == len(self.pool) - 1 and (c[1:] <= top[:-1] + 1).all())


class Pool(list):  # type: ignore[type-arg]
    """A Text's distinct values as a list of str, read without pyarrow (profconv.parse._summarycells):
    the StringArray calls Text and its users make (to_pylist, take)."""

    def to_pylist(self) -> list[str]:
        return list(self)

    def take(self, order: Any) -> Pool:
        return Pool(self[k] for k in order.tolist())


@dataclass
class Columns:
    n: int
    numbers: dict[str, Any] = field(default_factory=dict)  # header -> array('d') of floats / list of ints
    texts: dict[str, Text] = field(default_factory=dict)


@dataclass
class Span:
    """A table's bytes inside a bigger bytes object (the input's own: read without a copy)."""

    data: bytes
    start: int
    end: int
    lines: int | None = None  # its newlines, where the caller has counted them
    clean: bool = False  # the caller has found no carriage return in it

    def find(self, sub: bytes) -> int:
        if sub == b"\r" and self.clean:
            return -1
        k = self.data.find(sub, self.start, self.end)
        return k - self.start if k >= 0 else -1

    def count(self, sub: bytes) -> int:
        if sub == b"\n" and self.lines is not None:
            return self.lines
        return self.data.count(sub, self.start, self.end)

    def endswith(self, sub: bytes) -> bool:
        return self.data[self.end - len(sub) : self.end] == sub

    def head(self, n: int) -> bytes:
        return self.data[self.start : min(self.end, self.start + n)]

    def buffer(self) -> memoryview:
        return memoryview(self.data)[self.start : self.end]


def _table(data: bytes | Span, types: dict[str, Any], empty_null: bool) -> Any:
    """The table pyarrow reads from `data` (its header line first) with only `types`' columns, or
    None when it does not read as such a table."""
    mods = _pyarrow()
    if mods is None or data.find(b"\r") >= 0:
        return None
    pa, pacsv = mods
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data.buffer() if isinstance(data, Span) else data),
            read_options=pacsv.ReadOptions(use_threads=False, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                include_columns=list(types), column_types=types, null_values=[""] if empty_null else [],
                strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=True))
    except (pa.ArrowException, ValueError, OverflowError):  # ArrowInvalid: a cell or row that does not read
        return None
    rows = data.count(b"\n") - (1 if data.endswith(b"\n") else 0)  # one row a line after the header
    return table if table.num_rows == rows else None  # else a quoted cell ran across lines


def read_csv(data: bytes | Span, floats: Sequence[str] = (), counts: Sequence[str] = (), texts: Sequence[str] = (),
             empty: Sequence[str] = ()) -> Columns | None:
    """The listed columns of the CSV table in `data` (see the module's docstring), or None."""
    if len(set(floats) | set(counts) | set(texts)) != len(floats) + len(counts) + len(texts):
        raise ValueError("a column is listed twice")
    mods = _pyarrow()
    if mods is None:
        return None
    got = _plain_columns(data, floats, counts, texts)
    if got is not None:
        return got
    pa = mods[0]
    types = {**{c: pa.float64() for c in floats}, **{c: pa.int64() for c in counts},
             **{c: pa.dictionary(pa.int32(), pa.string()) for c in texts}}
    table = _table(data, types, empty_null=True)
    if table is None or not _unique_header(data, types):
        return None
    out = Columns(table.num_rows)
    for c in floats:
        got = _floats(table.column(c), c in empty)
        if got is None:
            return None
        out.numbers[c] = got
    for c in counts:
        got = _counts(table.column(c))
        if got is None:
            return None
        out.numbers[c] = got
    for c in texts:
        text = _text(table.column(c))
        if text is None:
            return None
        out.texts[c] = text
    return out


def _plain_columns(data: bytes | Span, floats: Sequence[str], counts: Sequence[str],
                   texts: Sequence[str]) -> Columns | None:
    """read_csv's columns by the C reader (profconv.parse._csvcols), where it is built and every row
    is plainly one (digits in the number cells, no quote inside a cell, ASCII): the values pyarrow
    reads from such rows, without its tokenizer (~3x slower on a 20 MB trace). None otherwise."""
    mod = native.load("_csvcols")
    if mod is None:
        return None
    buf, a, e = (data.data, data.start, data.end) if isinstance(data, Span) else (data, 0, len(data))
    nl = buf.find(b"\n", a, e)
    head = buf[a:nl] if nl >= 0 else b""
    if not head or b'"' in head or b"\r" in head or not head.isascii():
        return None
    names = head.decode().split(",")
    wanted = [*floats, *counts, *texts]
    if len(names) < 2 or any(names.count(c) != 1 for c in wanted):
        return None
    got = mod.columns(buf, nl + 1, e, len(names), tuple(map(names.index, floats)),
                      tuple(map(names.index, counts)), tuple(map(names.index, texts)))
    if got is None:
        return None
    return _plain_result(got, floats, counts, texts)


def _plain_result(got: tuple[Any, ...], floats: Sequence[str], counts: Sequence[str], texts: Sequence[str]) -> Columns:
    """_csvcols.columns' result as read_csv's Columns."""
    import numpy as np

    rows, numbers, whole, codes, pools, values = got
    out = Columns(rows)
    for c, raw in zip(floats, numbers):
        out.numbers[c] = array("d")
        out.numbers[c].frombytes(raw)
    for c, raw in zip(counts, whole):
        ints = array("q")
        ints.frombytes(raw)
        out.numbers[c] = ints.tolist()
    for c, raw, pool, each in zip(texts, codes, pools, values):
        text = out.texts[c] = Text(np.frombuffer(raw, dtype=np.int32).copy(), Pool(pool))
        text._values, text._distinct = each, list(pool)  # made in C; the pool is in order of first use
    return out


def read_strings(data: bytes | Span, columns: Sequence[str]) -> dict[str, Text] | None:
    """The listed columns of the CSV table in `data` as text (empty cells as ''), or None."""
    mods = _pyarrow()
    if mods is None:
        return None
    pa = mods[0]
    types = {c: pa.dictionary(pa.int32(), pa.string()) for c in columns}
    table = _table(data, types, empty_null=False)
    if table is None or not _unique_header(data, types):
        return None
    out = {}
    for c in columns:
        text = _text(table.column(c))
        if text is None:
            return None
        out[c] = text
    return out


def _unique_header(data: bytes | Span, wanted: dict[str, Any]) -> bool:
    """Each wanted column named once in the header (pyarrow would take the first of two)."""
    data = data.head(1 << 16) if isinstance(data, Span) else data
    head = data[: data.find(b"\n")] if b"\n" in data else data
    names = [c.strip('"') for c in head.decode("utf-8", "replace").split(",")]
    return all(names.count(c) == 1 for c in wanted)


def _numpy(col: Any, nan: bool = False) -> Any:
    """A ChunkedArray of plain numbers as one NumPy array (its nulls NaN where `nan`), from the
    chunks' own buffers: ChunkedArray.to_numpy imports pandas (~40 MiB and ~0.15 s in a CLI child)."""
    import numpy as np

    parts = []
    for ch in col.chunks:
        dtype = np.dtype(ch.type.to_pandas_dtype())
        v = np.frombuffer(ch.buffers()[1], dtype=dtype, count=len(ch) + ch.offset)[ch.offset :]
        if ch.null_count:
            valid = np.unpackbits(np.frombuffer(ch.buffers()[0], dtype=np.uint8), bitorder="little")
            v = np.where(valid[ch.offset : ch.offset + len(ch)].astype(bool), v, np.nan if nan else 0)
        parts.append(v)
    if not parts:
        return np.empty(0, dtype=np.dtype(col.type.to_pandas_dtype()))
    return np.concatenate(parts) if len(parts) > 1 else parts[0].copy()  # a copy: not read-only


def _floats(col: Any, empty_ok: bool) -> Any:
    import numpy as np

    if col.null_count and not empty_ok:
        return None
    v = _numpy(col, nan=True)  # nulls (empty cells) become NaN
    if v.dtype != np.float64:
        v = v.astype(np.float64)
    finite = np.isfinite(v)
    if np.signbit(v).any() or (not finite.all() and not (empty_ok and (finite | np.isnan(v)).all())):
        return None  # a negative (or '-0'), an infinity, a 'nan' written out
    if empty_ok and col.null_count != int(np.isnan(v).sum()):
        return None  # a 'nan' cell (not empty) is no missing value
    out = array("d")
    out.frombytes(v.tobytes())
    return out


def _counts(col: Any) -> Any:
    import numpy as np

    if col.null_count:
        return None
    v = _numpy(col)
    if len(v) and int(v.min()) < 0:
        return None
    return v.astype(np.int64, copy=False).tolist()


def _text(col: Any) -> Text | None:
    import numpy as np

    pa = _pyarrow()[0]
    col = col.unify_dictionaries() if col.num_chunks > 1 else col
    chunks = col.chunks
    if not chunks:
        return Text(np.empty(0, dtype=np.int32), pa.array([], pa.string()))
    codes = _numpy(pa.chunked_array([c.indices for c in chunks]))
    return Text(codes, chunks[0].dictionary)
