"""Many small `nsys stats --format csv` summary tables read as one: one C pass (or pyarrow call) for their rows.

A sweep's logs concatenated hold thousands of `Time (%),Total Time (ns),…` tables of a few dozen
rows, one per run. Read table by table, every row is a Python object (2 s for 4,000 runs of 40
rows). Here, called by profconv.parse.bytescan on the input's bytes before it is decoded, the rows
of every table with one header are read together: straight from the input's bytes by one C pass
where it is built (profconv.parse._summarycells: no copy of the rows, no pyarrow loaded), else
joined and read by one pyarrow call (profconv.parse.columnar), the same columns either way; each
table then becomes a block that is a range of the batch's rows (`Batch.span`: no columns of its
own), made by nsys's CSV reader where it meets the table's header in the text.

A table is taken only where nsys's row reader reads it as plain rows (nsys._plain_rows) and would
give these values, which is checked here for every table (one C pass over the rows where built,
`_bytescan.cells`, else the same in Python; NumPy over the columns):
  - a plain header: every column one nsys reads as a summary field (Time (%), Total Time, the
    calls, Avg/Med/Min/Max/StdDev), each once, the name last, no quotes or blanks around cells;
  - every cell a plain number (digits, one '.'; the calls whole, up to 18 digits), the decimal
    mark decided (a '524.288' cell needs a plainly decimal cell beside it in its table), every value
    finite, no Time (%) above 100;
  - every name one cell ('"…"' only whole, nothing quoted inside), not empty, no blanks around it,
    nothing in it that the text's normalization rewrites (profconv.parse.bytescan's name marks);
  - every row's total within 1% of calls x average (a row nsys's consistency check could drop is
    reported with its line's text, which only the text path holds).
The tables not taken stay in the text, where the row reader reads them as before; what only the
text around a table decides (its report, its extent) is checked by nsys's reader when it meets it
(bytescan.Reparse where the text path could differ).
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from typing import Any

from profconv.parse import columnar, native
from profconv.parse.model import Span
from profconv.parse.table import Rows

# summary fields a plain table may hold, and the schema column each goes to (nsys._row_of)
SCHEMA = {"pct": "time_pct", "time": "total_ns", "calls": "calls", "avg": "avg_ns", "med": "med_ns",
          "min": "min_ns", "max": "max_ns", "std": "std_ns"}
NAME_MARKS = ("<br", "<BR", "<pre", "<PRE", "/*", "\t", "\x85")  # bytescan._NAME_MARKS
BAD, UNDECIDED, DOT = 1, 2, 4  # a row's status bits (profconv/parse/_bytescan.c: cells)


@dataclass
class Batch:
    """The rows of the tables taken, one after the other: numbers by schema column (array('d'),
    the calls an array('q') or a list of int), names (one str object per distinct name; `text`: the same column
    dictionary-encoded, columnar.Text). A table is a range of these rows (`span`): no columns of
    its own; the engine gathers the batch's columns once for all of them (core._rows)."""

    numbers: dict[str, Any]
    names: list[str]
    text: Any = None

    def __post_init__(self) -> None:
        self.table = Rows.trusted({**self.numbers, "name": self.names}, len(self.names))

    def span(self, first: int, n: int) -> Span:
        """The table whose rows are `first` .. first + n - 1 here. Every row's total is within 1% of
        calls x average (checked in `read`): core's consistency check need not look at them."""
        return Span(self.table, first, n, text=self.text, checked=True)


def header_fields(header: bytes) -> tuple[list[str], list[str]] | None:
    """A plain summary header's columns and their nsys fields, or None (see the module's docstring)."""
    from profconv.parse.dialects.nsys import _field_of

    cols = header.decode("ascii").split(",")
    fields = [_field_of(c) for c in cols]
    if (any(c != c.strip() or not c or '"' in c for c in cols) or fields[-1] != "name"
            or not all(f in SCHEMA for f in fields[:-1]) or len(set(fields)) != len(fields)):
        return None
    return cols, [f for f in fields if f is not None]


def read(data: bytes, spans: list[tuple[int, int, int, int]], bounds: Any = None) -> tuple[Batch, list[int]] | None:
    """The tables at `spans` (header start, rows start, rows end, rows: every header the same, each
    row ending with a newline) read as one; per span the index of its first row in the batch, or
    -1 for a table not taken. None when none is taken or the header is not a plain one. `bounds`:
    the spans' (rows start, rows end) as a NumPy int64 array where the caller has them."""
    a0, b0 = spans[0][:2]
    got = header_fields(data[a0 : b0 - 1])
    if got is None:
        return None
    cols, fields = got
    scan = native.load("_summarycells")
    table, keep = _read_in_c(scan, data, spans, cols, fields, bounds) if scan is not None else _read_by_pyarrow(
        data, spans, cols, fields)
    if table is None:
        return None
    sizes = [spans[k][3] for k in keep]
    ok = _values_ok(table, cols, fields, sizes, finite=scan is not None)
    text = table.texts[cols[-1]]
    batch = Batch({SCHEMA[f]: table.numbers[c] for c, f in zip(cols, fields) if f != "name"}, text.values, text)
    firsts = [-1] * len(spans)
    at = 0
    for k, n, good in zip(keep, sizes, ok):
        if good:
            firsts[k] = at
        at += n
    return (batch, firsts) if any(ok) else None


def _whole(fields: list[str]) -> int:
    """The cells that must be whole numbers (the calls), as bits."""
    return sum(1 << j for j, f in enumerate(fields[:-1]) if f == "calls")


def _kept(status: list[int]) -> list[int]:
    """The tables whose rows' status bits (or-ed per table) let them be read as plain rows."""
    return [k for k, s in enumerate(status) if not (s & BAD or (s & UNDECIDED and not s & DOT))]


def _read_in_c(scan: Any, data: bytes, spans: list[tuple[int, int, int, int]], cols: list[str],
               fields: list[str], bounds: Any = None) -> tuple[columnar.Columns | None, list[int]]:
    """The tables' rows checked and read straight from `data` by profconv.parse._summarycells (no
    copy of their rows joined, no pyarrow), as the pyarrow read gives them: (columns of the tables
    kept, which those are); no columns where a value is not finite or a row does not read."""
    import numpy as np

    ncells, whole, sizes = len(fields) - 1, _whole(fields), [n for *_, n in spans]
    if bounds is None:
        bounds = np.array([(b, e) for _, b, e, _ in spans], dtype=np.int64)
    got = scan.columns(data, bounds.tobytes(), ncells, whole, sum(sizes))  # every row plain (a sweep's, mostly): one pass
    keep = _kept(_per_table(got[3], sizes)) if got is not None else []
    if got is None or len(keep) < len(spans):  # the tables kept found first, then only theirs read
        keep = _kept(_per_table(scan.status(data, bounds.tobytes(), ncells, whole), sizes))
        got = scan.columns(data, bounds[keep].tobytes(), ncells, whole, sum(sizes[k] for k in keep)) if keep else None
    if got is None:
        return None, keep
    cells, codes, names, _ = got
    out = columnar.Columns(len(codes) // 4)
    for c, f in zip(cols[:-1], fields):
        col = cells.pop(0)  # each cell's bytes let go once its array holds them
        if f != "calls" and not np.isfinite(np.frombuffer(col, dtype=np.float64)).all():
            return None, keep  # as columnar.read_csv refuses the whole read
        out.numbers[c] = array("q" if f == "calls" else "d")  # the calls: no int object a row either
        out.numbers[c].frombytes(col)
        del col
    out.texts[cols[-1]] = columnar.Text(np.frombuffer(codes, dtype=np.int32).copy(), columnar.Pool(names))
    return out, keep


def _read_by_pyarrow(data: bytes, spans: list[tuple[int, int, int, int]], cols: list[str],
                     fields: list[str]) -> tuple[columnar.Columns | None, list[int]]:
    """_read_in_c's result by the row status in Python (or _bytescan.cells) and pyarrow's reader of
    the kept tables' rows joined."""
    a0, b0 = spans[0][:2]
    view = memoryview(data)  # the rows joined straight from the input (no copy of each table first)
    joined = b"".join([view[a0:b0], *(view[b:e] for _, b, e, _ in spans)])
    keep = _kept(_table_status(joined, b0 - a0, [n for *_, n in spans], fields))
    if not keep:
        return None, keep
    if len(keep) < len(spans):
        joined = b"".join([view[a0:b0], *(view[spans[k][1] : spans[k][2]] for k in keep)])
    table = columnar.read_csv(joined, floats=[c for c, f in zip(cols, fields) if f not in ("calls", "name")],
                              counts=[c for c, f in zip(cols, fields) if f == "calls"], texts=[cols[-1]])
    del joined, view
    columnar.release_unused()  # what pyarrow's pool kept of the read (~20 MiB at 20 MB)
    return table, keep


def _table_status(joined: bytes, start: int, sizes: list[int], fields: list[str]) -> list[int]:
    """The status bits of each table's rows (`sizes[k]` of them, one after the other in
    joined[start:]) or-ed together: by _bytescan.cells where built, else by `row_status`."""
    ncells, whole = len(fields) - 1, _whole(fields)
    scan = native.load("_bytescan")
    if scan is not None:
        status = scan.cells(joined, start, len(joined), ncells, whole)
    else:
        status = bytes(row_status(r, ncells, whole) for r in joined[start:].split(b"\n")[:-1])
    return _per_table(status, sizes)


def _per_table(status: bytes, sizes: list[int]) -> list[int]:
    """One status byte per row -> the bits of each table's rows (`sizes` of them in turn) or-ed."""
    import numpy as np

    if len(status) != sum(sizes):
        raise ValueError("rows counted otherwise than read")
    starts = np.cumsum([0, *sizes[:-1]])
    return np.bitwise_or.reduceat(np.frombuffer(status, dtype=np.uint8), starts).tolist()


_CELL = re.compile(rb"([0-9]+)(?:\.([0-9]+))?,")


def row_status(row: bytes, ncells: int, whole: int) -> int:
    """One row's status bits (its newline not included): what _bytescan.cells gives, in Python."""
    status, pos = 0, 0
    for j in range(ncells):
        m = _CELL.match(row, pos)
        if m is None:
            return BAD
        pos = m.end()
        lead, frac = m.group(1), m.group(2)
        if whole >> j & 1:
            if frac is not None or len(lead) > 18:
                return BAD
        elif frac is not None:
            status |= UNDECIDED if len(lead) <= 3 and lead[:1] != b"0" and len(frac) == 3 else DOT
    name = row[pos:]
    if not name:
        return BAD
    if name[:1] == b'"':
        if len(name) < 3 or name[-1:] != b'"' or b'"' in name[1:-1]:
            return BAD
    elif b'"' in name or b"," in name:
        return BAD
    return status


def odd_name(name: str) -> bool:
    """Whether a row's name is one the row reader treats otherwise (empty, blanks around it, a quote,
    a NAME_MARKS mark): its table is not read in bulk."""
    return not name or name != name.strip() or '"' in name or any(m in name for m in NAME_MARKS)


def _values_ok(table: columnar.Columns, cols: list[str], fields: list[str], sizes: list[int],
               finite: bool = False) -> list[bool]:
    """Per table (rows `sizes[k]` long, one after the other): its values what the row reader gives.
    `finite`: every value is finite already (_read_in_c's: its doubles checked, its calls int64)."""
    import numpy as np

    starts = np.cumsum([0, *sizes[:-1]])
    bad = np.zeros(table.n, dtype=bool)
    v = {f: np.asarray(table.numbers[c], dtype=np.float64) for c, f in zip(cols, fields) if f != "name"}
    for x in () if finite else v.values():
        bad |= ~np.isfinite(x)
    if "pct" in v:
        bad |= v["pct"] > 100.0
    if {"time", "calls", "avg"} <= v.keys():  # core._any_inconsistent's first test
        t = v["time"]
        bad |= ~(np.abs(t - v["calls"] * v["avg"]) <= 0.01 * t)
    names = table.texts[cols[-1]]
    pool = names.pool.to_pylist()
    odd = np.array([odd_name(k) for k in pool] or [False])
    bad |= odd[names.codes]
    return [not x for x in np.logical_or.reduceat(bad, starts).tolist()] if table.n else []
