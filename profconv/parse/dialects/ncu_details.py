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

ncu 2024+ prints rule columns after the value ("Rule Name", ..., "Estimated Speedup"): a metric row
leaves them off and ends in a comma (the scan's kind 'e'), a rule's row holds every column (no metric,
its advice): the scan hands such a row back whole, and it is told here as the row reader tells it
(csv_row; once per distinct text) and left out, the metric rows' lines then kept in an array.

The page's decimal mark is voted on every value as `ncu._vote` votes (the plain cells by the scan,
the others here; a duration in whole nanoseconds also votes as a count, so its text is read again
from the bytes). A page that is not plain is left to the row reader, which gives the same output as
ever: a header naming a column twice, rows that are not quoted cells of the header's width (or, on a
2024+ page, of the value's), a row with no metric name that is no rule's, a rule's row with bytes
`normalize` may act on past the row, a decimal mark other than C's, or bytes `normalize` would
rewrite in a metric row. Where the page is big its rows are found on the input's bytes before it is
decoded, as a raw page's are (ncu_raw.find).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
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
    lines: array | None = None  # each row's line, where they do not follow one a line (a rule's row among them)
    last_line: int = 0  # the line of the page's last row (a rule's too)
    cut_row: bool = False  # the input's last line, after these rows, is one of the page cut between its cells

    def blocks(self, line_start: int, line_end: int) -> list[Block]:
        """The ncu-metric block (columns) and the per-kernel GPU block of the page."""
        from profconv.parse.dialects import ncu

        n = len(self.names)
        lines = self.lines if self.lines is not None else range(self.first_line, self.first_line + n)
        at = sorted(self.texts)
        # line_end its own array: a table joins the rows after it in place, one column at a time
        ends = lines if self.lines is None else array("q", lines)
        table = Rows({"section": Const("ncu-metric", n), "name": self.names, "line_start": lines,
                      "line_end": ends, "metric": self.metrics, "unit": self.units, "value": Floats(self.values),
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
    """The text columns of a page's metric rows (one str per distinct value), their lines where a
    rule's row falls among them (None: one a line from the page's first) and the scan's vote."""

    names: list[str]
    metrics: list[str]
    units: list[str | None]
    odd: list[tuple[int, str]]
    counts: list[str]  # the value cells of the durations in whole nanoseconds (they vote as counts too)
    lines: array | None = None  # each metric row's line in the input (1-based)
    dot: int = 0
    comma: int = 0
    undecided: bool = False


@dataclass
class _Shape:
    """What a details page's header says of its rows: the scan's kinds, where the kernel, metric and
    unit are (`roles`; the unit may be missing), whether rule columns follow the value (2024+: a
    metric row then ends in a comma after its value, a rule's row holds every column), the last
    column the row reader needs (`need`) and the header's width."""

    kinds: bytes
    roles: list[int | None]
    rules: bool
    need: int
    width: int
    value_at: int


def _shape(header: list[str]) -> _Shape | None:
    col = {h: k for k, h in enumerate(header)}
    kname = col.get("Kernel Name", col.get("Function Name"))
    name_at, value_at, unit_at = col.get("Metric Name"), col.get("Metric Value"), col.get("Metric Unit")
    if len(col) != len(header) or kname is None or name_at is None or value_at is None:
        return None
    roles = [kname, name_at, unit_at]  # the text columns: kernel, metric, unit
    need = max(k for k in (*roles, value_at) if k is not None)
    if need != value_at:
        return None  # the value before a text column: no page ncu prints
    kinds = bytearray(b"i" * (value_at + 1))
    for k in roles:
        if k is not None:
            kinds[k] = ord("n")
    kinds[value_at] = ord("m")
    rules = len(header) > value_at + 1
    return _Shape(bytes(kinds) + (b"e" if rules else b""), roles, rules, need, len(header), value_at)


def read(data: Any, start: int, end: int, header: list[str], first_line: int, rows: int | None = None) -> Page | None:
    """The details page whose rows are data[start:end] (each line ending in '\\n') under `header`;
    None where the row reader must read it. `rows`: its lines, where the caller has counted them."""
    from profconv.parse.dialects import ncu_raw

    shape = _shape(header)
    if shape is None:
        return None
    rows = ncu_raw._newlines(data, start, end) if rows is None else rows
    values = array("d", [0.0]) * rows
    got = _Scan(data, shape, values, first_line).run(start, end)
    if got is None or (got.lines is None and len(got.names) != rows) or any(not m.strip() for m in set(got.metrics)):
        return None  # not plain rows, or a row with no metric name that is no rule's: the row reader's
    del values[len(got.names) :]
    texts = _odd_cells(got, values)
    if texts is None:
        return None
    page = Page(header, got.names, got.metrics, got.units, values, texts, first_line, last_line=first_line + rows - 1)
    page.lines = got.lines
    return page


# what normalize may act on past the row itself ('<br', '<pre', a '/*' block, a LaTeX '\\%', an entity),
# or bytes not printable ASCII; a rule's advice may hold '//' and '--' (a URL, a dash: normalize only
# takes them where they start a line)
_NOT_PRINTABLE = re.compile(rb"[^\x20-\x7e\n]")
_MARKUP = re.compile(rb"<[bBpP]")


def _not_in_rules(line: bytes) -> bool:
    """Whether the row holds what a rule's row may not (above): one search of a character class and
    a few `in` tests, not one alternation tried at every byte."""
    return (b"&" in line or b"\\" in line or b"/*" in line or (b"<" in line and _MARKUP.search(line) is not None)
            or _NOT_PRINTABLE.search(line) is not None)


class _Scan:
    """A page's rows scanned a window of whole lines at a time (ncu_raw._scan's windows): each metric
    row's kernel, metric and unit (the 'n' columns of the kinds, whose texts the scan returns in
    column order) and its value (in `values`). On a 2024+ page the scan hands back the rows that hold
    every column; each is read here as the row reader reads it: a rule's (no metric name, its advice
    in the rule columns) is left out, anything else sends the page to the row reader."""

    def __init__(self, data: Any, shape: _Shape, values: array, first_line: int = 1) -> None:
        from profconv.parse import native
        from profconv.parse.dialects import ncu_raw

        mod = native.load("_ncucells")
        self.scan = mod.rows if mod is not None else ncu_raw._scan_py
        self.data, self.shape, self.values = data, shape, values
        at = sorted(k for k in shape.roles if k is not None)
        self.slot, self.k = [None if c is None else at.index(c) for c in shape.roles], len(at)
        self.out = _Columns([], [], [], [], [], array("q") if shape.rules else None)
        self.seen: dict[str, str] = {}
        self.rules: dict[bytes, bool] = {}  # a rule's row's cells from the metric's on -> whether it is one
        self.view = memoryview(values)
        self.line = 0  # the page's lines scanned so far
        self.first_line = first_line  # the input's line of the page's first row

    def run(self, start: int, end: int) -> _Columns | None:
        from profconv.parse.dialects import ncu_raw

        data, lo = self.data, start
        while lo < end:
            hi = end if end - lo <= ncu_raw.WINDOW else data.rfind(b"\n", lo, lo + ncu_raw.WINDOW) + 1
            hi = end if hi <= lo else hi
            if not self._rows(lo, hi):
                return None
            ncu_raw._drop(data, lo, hi)
            lo = hi
        if self.out.lines is not None and len(self.out.lines) == self.line:
            self.out.lines = None  # no rule's row: one metric row a line
        return self.out

    def _rows(self, a: int, b: int) -> bool:
        """The rows data[a:b] (whole lines): the metric rows read by one scan, the rows of every column it
        hands back (a 2024+ page's) read as the row reader reads them."""
        out, k, slot = self.out, self.k, self.slot
        base = len(out.names)
        got = self.scan(self.data, a, b, self.shape.kinds, self.view[base:], self.seen)  # one str per distinct text
        if got is None or not all(self._rule_row(self.data[x:y]) for _, x, y in got[6]):
            return False
        texts = got[4]
        out.names += texts[slot[0] :: k]
        out.metrics += texts[slot[1] :: k]
        out.units += [None] * got[0] if slot[2] is None else [u or None for u in texts[slot[2] :: k]]
        out.odd += [(base + r, self.data[x:y].decode("ascii")) for r, x, y in got[5]]
        out.dot, out.comma, out.undecided = out.dot + got[1], out.comma + got[2], out.undecided or bool(got[3])
        rules = [i for i, _, _ in got[6]]  # their lines' indices in data[a:b]
        out.counts += _count_cells(self.data, a, b, base, out, self.shape.value_at, rules)
        lines = got[0] + len(rules)
        if out.lines is not None:
            prev = 0
            for i in [*rules, lines]:
                out.lines.extend(range(self.first_line + self.line + prev, self.first_line + self.line + i))
                prev = i + 1
        self.line += lines
        return True

    def _rule_row(self, line: bytes) -> bool:
        """A row of every column: True where it is a rule's, as the row reader tells
        (`ncu._details_cells`): its line then left out. The answer is its cells' from the metric's on
        (the scan checked those before it: quoted, no quote inside), so it is worked out once for
        each such text (a rule fires for every launch of a kernel, with the same advice)."""
        key = line.split(b'","', self.shape.roles[1])[-1]  # type: ignore[arg-type]
        got = self.rules.get(key)
        if got is None:
            got = self.rules[key] = _is_rule(key, self.shape)
        return got


def _is_rule(cells: bytes, shape: _Shape) -> bool:
    """Whether a row whose cells from the metric name's on are `cells` (those before it plain quoted
    cells) is a rule's, as the row reader tells: no metric name, a rule column filled."""
    from profconv.parse.text import csv_row

    if _not_in_rules(cells):
        return False
    name_at = shape.roles[1]
    r = csv_row('"",' * name_at + '"' + cells[:-1].decode("ascii"))  # type: ignore[operator]
    return shape.need < len(r) <= shape.width and not r[name_at].strip() and any(x.strip() for x in r[shape.need + 1 :])  # type: ignore[index]


def _count_cells(data: Any, lo: int, hi: int, base: int, out: _Columns, value_at: int, rules: list[int]) -> list[str]:
    """The value cells of the metric rows of data[lo:hi] (out's rows from `base`; the lines at the
    indices `rules` are no metric rows) that are durations in whole nanoseconds (ncu._vote adds them as
    counts), read from their lines' bytes: by one search where the metric, unit and value end the row
    (every page ncu prints), else line by line."""
    from profconv.parse.dialects import ncu

    rows = [r for r, m, u in zip(range(base, len(out.names)), out.metrics[base:], out.units[base:])
            if m in ncu.DURATION_METRICS and u in ncu._WHOLE_NS]
    if not rows:
        return []
    found = _duration_cells(data, lo, hi, {out.metrics[r] for r in rows})
    if len(found) == len(rows):
        return found
    skip = set(rules)
    metric_lines = [line for i, line in enumerate(data[lo:hi].split(b"\n")[:-1]) if i not in skip]
    # (a 2024+ metric row ends in a comma)
    return [metric_lines[r - base].rstrip(b",")[1:-1].split(b'","')[value_at].decode("ascii") for r in rows]


def _duration_cells(data: Any, lo: int, hi: int, metrics: set[str]) -> list[str]:
    """The value cells of the rows of data[lo:hi] that end in a duration metric among `metrics` (those
    the rows name), a unit of whole nanoseconds and the value, in order: each metric's cell found by a
    search for its bytes, the rest of the row matched there. (One expression over every byte tried its
    alternation at each '","' of the page, ~20 a row: 60 ms of a 20 MB page.) A row ends in one
    metric, unit and value: no two finds share a row."""
    heads, tail = _duration_ns()
    found = []
    for head in (heads[m] for m in sorted(metrics)):
        at = data.find(head, lo, hi)
        while at >= 0:
            m = tail.match(data, at + len(head), hi)
            if m is not None:
                found.append((at, m.group(1).decode("ascii")))
            at = data.find(head, at + 1, hi)  # (the next may start in this one's '","': a section named so)
    found.sort()
    return [cell for _, cell in found]


@cache
def _duration_ns() -> tuple[dict[str, bytes], re.Pattern[bytes]]:
    """Each duration metric's cell as it starts ('","NAME","') and what ends such a row: a unit of whole
    nanoseconds and the value (its group)."""
    from profconv.parse.dialects import ncu

    units_ = b"|".join(re.escape(u.encode()) for u in sorted(ncu._WHOLE_NS))
    heads = {m: b'","' + m.encode() + b'","' for m in ncu.DURATION_METRICS}
    return heads, re.compile(rb'(?:' + units_ + rb')","([^"\n]*)",?\n')


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
