"""An `ncu --csv` details page read as columns: one row per launch and metric (ncu's default page).

`ncu --csv` of a long run prints one such page: a row for every metric of every launch
("ID","Process ID",...,"Kernel Name",...,"Metric Name","Metric Unit","Metric Value"), tens of
megabytes for an application of a few thousand launches. The row reader (`ncu._csv`: csv_rows,
`_details_cells`, a Row a metric) holds the page's lines, their cells and a Row object each: 10-12
bytes of memory a byte of input. Here the page's rows are read from bytes in one pass by the raw
page's scan (`ncu_raw._scan`: profconv.parse._ncucells where it is built, its pure-Python twin
otherwise), with the kernel name, metric name and unit as the text columns it returns and the value
as its one metric column; the rows then are columns that hold no Python object per row beyond a
reference to one str per distinct kernel, metric and unit (profconv.parse.colviews).

The page's decimal mark is voted on every value as `ncu._vote` votes (the plain cells by the scan,
the others here; a duration in whole nanoseconds also votes as a count, so its text is read again
from the bytes). A page that is not plain is left to the row reader, which gives the same output as
ever: a header naming a column twice, rows that are not all quoted cells of the header's width (2024+
pages whose metric rows leave the rule columns off), a rule's row (no metric name), a decimal mark
other than C's, or bytes `normalize` would rewrite. Where the page is big its rows are found on the
input's bytes before it is decoded, as a raw page's are (ncu_raw.find).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from profconv.parse import units
from profconv.parse.colviews import Const, Floats, Sparse
from profconv.parse.model import Block
from profconv.parse.table import Rows

MIN_ROWS = 64  # rows (launch x metric) of a page read here; fewer go to the row reader (each gives the other's rows)


@dataclass
class Page:
    """A details page read as columns; `first_line`: the 1-based line of its first row (the others
    follow, one a line). `names` (each row's kernel), `has_units` and `blocks` as ncu_raw.Page's."""

    header: list[str]
    names: list[str]
    metrics: list[str]
    units: list[str | None]
    values: array
    texts: dict[int, str]
    first_line: int
    has_units: bool = False

    def blocks(self, line_start: int, line_end: int) -> list[Block]:
        """The ncu-metric block (columns) and the per-kernel GPU block of the page."""
        from profconv.parse.dialects import ncu

        n = len(self.names)
        lines = range(self.first_line, self.first_line + n)
        at = sorted(self.texts)
        table = Rows({"section": Const("ncu-metric", n), "name": self.names, "line_start": lines,
                      "line_end": lines, "metric": self.metrics, "unit": self.units, "value": Floats(self.values),
                      "value_text": Sparse(None, n, at, [self.texts[k] for k in at])}, n)
        blocks = [Block(section="ncu-metric", table=table, line_start=line_start, line_end=line_end)]
        summary = ncu.summarize_durations(self._durations(lines))
        if summary:
            blocks.append(Block(section="gpu", rows=summary, line_start=line_start, line_end=line_end))
        return blocks

    def _durations(self, lines: Sequence[int]) -> Iterable[tuple[str, float, str | None, int]]:
        from profconv.parse.dialects import ncu

        names, values, units_of = self.names, self.values, self.units
        return ((names[r], values[r], units_of[r], lines[r])
                for r, m in enumerate(self.metrics) if m in ncu.DURATION_METRICS)


@dataclass
class _Columns:
    """The text columns of a page's rows (one str per distinct value) and its scan's vote."""

    names: list[str]
    metrics: list[str]
    units: list[str | None]
    odd: list[tuple[int, str]]
    counts: list[str]  # the value cells of the durations in whole nanoseconds (they vote as counts too)
    dot: int = 0
    comma: int = 0
    undecided: bool = False


def read(data: Any, start: int, end: int, header: list[str], first_line: int, rows: int | None = None) -> Page | None:
    """The details page whose rows are data[start:end] (each line ending in '\\n') under `header`;
    None where the row reader must read it. `rows`: its lines, where the caller has counted them."""
    from profconv.parse.dialects import ncu_raw

    col = {h: k for k, h in enumerate(header)}
    kname = col.get("Kernel Name", col.get("Function Name"))
    at = [kname, col.get("Metric Name"), col.get("Metric Value")]
    if len(col) != len(header) or None in at:
        return None
    roles = [kname, at[1], col.get("Metric Unit")]  # the text columns: kernel, metric, unit (may be None)
    kinds = bytearray(b"i" * len(header))
    for k in roles:
        if k is not None:
            kinds[k] = ord("n")
    kinds[at[2]] = ord("m")
    rows = ncu_raw._newlines(data, start, end) if rows is None else rows
    values = array("d", [0.0]) * rows
    got = _scan(data, start, end, bytes(kinds), values, roles)
    if got is None or len(got.names) != rows or any(not m.strip() for m in set(got.metrics)):
        return None  # not plain rows, or a rule's row (no metric name): the row reader's
    texts = _odd_cells(got, values)
    if texts is None:
        return None
    return Page(header, got.names, got.metrics, got.units, values, texts, first_line)


def _scan(data: Any, start: int, end: int, kinds: bytes, values: array, roles: list[int | None]) -> _Columns | None:
    """The rows data[start:end] scanned a window of whole lines at a time (ncu_raw._scan's windows):
    each row's kernel, metric and unit (the 'n' columns of `kinds` at `roles`; the scan returns their
    texts in column order), its value in `values`."""
    from profconv.parse import native
    from profconv.parse.dialects import ncu_raw

    mod = native.load("_ncucells")
    scan = mod.rows if mod is not None else ncu_raw._scan_py
    texts_at = sorted(k for k in roles if k is not None)
    slot, k = [None if c is None else texts_at.index(c) for c in roles], len(texts_at)
    out = _Columns([], [], [], [], [])
    seen: dict[str, str] = {}
    view = memoryview(values)
    lo = start
    while lo < end:
        hi = end if end - lo <= ncu_raw.WINDOW else data.rfind(b"\n", lo, lo + ncu_raw.WINDOW) + 1
        hi = end if hi <= lo else hi
        base = len(out.names)
        got = scan(data, lo, hi, kinds, view[base:])
        if got is None:
            return None
        texts = [seen.setdefault(t, t) for t in got[4]]  # one str per distinct text
        out.names += texts[slot[0] :: k]
        out.metrics += texts[slot[1] :: k]
        out.units += [None] * got[0] if slot[2] is None else [u or None for u in texts[slot[2] :: k]]
        out.odd += [(base + r, data[a:b].decode("ascii")) for r, a, b in got[5]]
        out.dot, out.comma, out.undecided = out.dot + got[1], out.comma + got[2], out.undecided or bool(got[3])
        out.counts += _count_cells(data, lo, hi, base, out, kinds.index(b"m"))
        ncu_raw._drop(data, lo, hi)
        lo = hi
    return out


def _count_cells(data: Any, lo: int, hi: int, base: int, out: _Columns, value_at: int) -> list[str]:
    """The value cells of the window's rows that are durations in whole nanoseconds (ncu._vote adds
    them as counts), read from their lines' bytes."""
    from profconv.parse.dialects import ncu

    rows = [r for r in range(base, len(out.names))
            if out.metrics[r] in ncu.DURATION_METRICS and out.units[r] in ncu._WHOLE_NS]
    if not rows:
        return []
    starts = [lo]
    pos = lo
    for _ in range(rows[-1] - base):
        pos = data.find(b"\n", pos, hi) + 1
        starts.append(pos)
    cells = []
    for r in rows:
        a = starts[r - base]
        line = data[a : data.find(b"\n", a, hi)]
        cells.append(line[1:-1].split(b'","')[value_at].decode("ascii"))
    return cells


def _odd_cells(got: _Columns, values: array) -> dict[int, str] | None:
    """The vote of the page (ncu._vote's, of every value) and its odd cells read as the row reader
    reads them (their values set in `values`); their texts by row, or None where the page's decimal
    mark is not the C locale's."""
    from profconv.parse.dialects import ncu

    vote = units.LocaleVote()
    vote.dot, vote.comma, vote.undecided = got.dot, got.comma, got.undecided
    vote.add(ncu.voting(cell for _, cell in got.odd))
    vote.add_counts(ncu.voting(got.counts))
    if vote.locale() is not units.C_LOCALE:
        return None
    texts: dict[int, str] = {}
    for r, cell in got.odd:
        v, text = ncu._number_or_text(cell)
        values[r] = v
        if text is not None:
            texts[r] = text
    return texts
